/*
 * mvmul33_1.cu — mvmul33 (w[i] = sum_j M[i][j] * v[j]), implementation 1:
 * one thread per element; block BX = E.
 * The simplest mapping: with coalesced loads and saves through shared memory it streams at
 * copy bandwidth, and it fuses (registers, no recomputed coordinates) with every other
 * one-thread-per-element implementation.
 * Loads: for every input a coalesced vector copy of the block's batch (the fast path from
 * global memory) and an owner copy whose offsets equal the compute's (a register buffer).
 * Saves: coalesced (vectors) and owner.  Layout, placeholders and tails: docs/library-format.md.
 */

/* Input 0 (matrix3x3), coalesced: the block's threads copy its E*9 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_mvmul33_1_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  const int threads = MVMUL33_1_BX * MVMUL33_1_BY * MVMUL33_1_BZ;
  const int lin = tx + MVMUL33_1_BX * (ty + MVMUL33_1_BY * tz);
  const int vecs = MVMUL33_1_BX * 9 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + MVMUL33_1_BX <= n) {
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
        /* e0 * 9 is a multiple of W reals: the vector is aligned where g is */
        real v[W];
        KAS_LOADV(v, g, GIDX(e0, 0) / W + (size_t)q);
#pragma unroll
        for (int b = 0; b < W; b++) s[APLS + r * W * threads + b] = v[b];
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 9 : 0; /* reals of the chunk that exist */
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
#pragma unroll
        for (int k = 0; k < W; k++) {
          const size_t off = W * (size_t)q + k;
          s[APLS + r * W * threads + k] = off < valid ? g[GIDX(e0, 0) + off] : 0;
        }
      }
    }
  }
}

/* Input 0 (matrix3x3), owner: each thread copies its own element.
 * The same offsets as the compute reads, so the buffer may live in registers; elements >= n
 * read as 0. */
KAS_DEV void d_mvmul33_1_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const bool valid = e0 + tx < n;
#pragma unroll
  for (int k = 0; k < 9; k++)
    s[APLS + k] = valid ? g[GIDX(e0 + tx, k)] : 0;
}

/* Input 1 (vector3), coalesced: the block's threads copy its E*3 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_mvmul33_1_load_2(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  const int threads = MVMUL33_1_BX * MVMUL33_1_BY * MVMUL33_1_BZ;
  const int lin = tx + MVMUL33_1_BX * (ty + MVMUL33_1_BY * tz);
  const int vecs = MVMUL33_1_BX * 3 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + MVMUL33_1_BX <= n) {
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
        /* e0 * 3 is a multiple of W reals: the vector is aligned where g is */
        real v[W];
        KAS_LOADV(v, g, GIDX(e0, 0) / W + (size_t)q);
#pragma unroll
        for (int b = 0; b < W; b++) s[APLS + r * W * threads + b] = v[b];
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 3 : 0; /* reals of the chunk that exist */
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
#pragma unroll
        for (int k = 0; k < W; k++) {
          const size_t off = W * (size_t)q + k;
          s[APLS + r * W * threads + k] = off < valid ? g[GIDX(e0, 0) + off] : 0;
        }
      }
    }
  }
}

/* Input 1 (vector3), owner: each thread copies its own element.
 * The same offsets as the compute reads, so the buffer may live in registers; elements >= n
 * read as 0. */
KAS_DEV void d_mvmul33_1_load_3(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const bool valid = e0 + tx < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k] = valid ? g[GIDX(e0 + tx, k)] : 0;
}

/* w[i] = sum_j M[i][j] * v[j], one thread per element. */
KAS_DEV void d_mvmul33_1_compute(KAS_BUF(real) a, KAS_BUF(real) b, KAS_BUF(real) c, int tx, int ty,
                                 int tz) {
  (void)tx; /* the placeholders use the coordinates only in shared placement */
  (void)ty;
  (void)tz;
#pragma unroll
  for (int i = 0; i < 3; i++) {
    real acc = 0;
#pragma unroll
    for (int j = 0; j < 3; j++)
      acc += a[APIN0 + i * 3 + j] * b[APIN1 + j];
    c[APOUT + i] = acc;
  }
}

/* Result (vector3), coalesced: the block's threads write its E*3 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block writes scalars of elements < n only. */
KAS_DEV void d_mvmul33_1_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  const int threads = MVMUL33_1_BX * MVMUL33_1_BY * MVMUL33_1_BZ;
  const int lin = tx + MVMUL33_1_BX * (ty + MVMUL33_1_BY * tz);
  const int vecs = MVMUL33_1_BX * 3 / W;
  if (e0 + MVMUL33_1_BX <= n) {
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
        real v[W];
#pragma unroll
        for (int b = 0; b < W; b++) v[b] = s[APLS + r * W * threads + b];
        KAS_STOREV(g, GIDX(e0, 0) / W + (size_t)q, v);
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 3 : 0;
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
#pragma unroll
        for (int k = 0; k < W; k++) {
          /* read unconditionally, so the read set does not depend on n */
          const real v = s[APLS + r * W * threads + k];
          const size_t off = W * (size_t)q + k;
          if (off < valid) g[GIDX(e0, 0) + off] = v;
        }
      }
    }
  }
}

/* Result (vector3), owner: each thread writes the entries it computed, straight from
 * the compute's output (registers or shared); elements >= n are not written. */
KAS_DEV void d_mvmul33_1_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  if (e0 + tx < n) {
#pragma unroll
    for (int k = 0; k < 3; k++)
      g[GIDX(e0 + tx, k)] = s[APLS + k];
  }
}
