/*
 * vvdot3_2.cu — vvdot3 (d = a . b), implementation 2:
 * three threads per element, thread tx == 0 computes; block BX = 3, BY = E.
 * It shares the 3 x E block of the per-row implementations (mmul33_2, mvmul33_2, ...), so that it
 * fuses with them without recomputing thread coordinates; threads tx = 1, 2 idle (empty access
 * sets).
 * Loads: for every input a coalesced vector copy of the block's batch (the fast path from global
 * memory) and an owner copy whose offsets equal the compute's (a register buffer).
 * Saves: coalesced (vectors) and owner.  Layout, placeholders and tails: docs/library-format.md.
 */

/* Input 0 (vector3), coalesced: the block's threads copy its E*3 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_vvdot3_2_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  const int threads = VVDOT3_2_BX * VVDOT3_2_BY * VVDOT3_2_BZ;
  const int lin = tx + VVDOT3_2_BX * (ty + VVDOT3_2_BY * tz);
  const int vecs = VVDOT3_2_BY * 3 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + VVDOT3_2_BY <= n) {
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

/* Input 0 (vector3), owner: thread tx == 0 copies the element it computes. The same offsets as the
 * compute reads, so the buffer may live in registers; elements >= n read as 0. */
KAS_DEV void d_vvdot3_2_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  if (tx==0) {
    const bool valid = e0 + ty < n;
#pragma unroll
    for (int k = 0; k < 3; k++)
      s[APLS + k] = valid ? g[GIDX(e0 + ty, k)] : 0;
  }
}

/* Input 1 (vector3), coalesced: the block's threads copy its E*3 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_vvdot3_2_load_2(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  const int threads = VVDOT3_2_BX * VVDOT3_2_BY * VVDOT3_2_BZ;
  const int lin = tx + VVDOT3_2_BX * (ty + VVDOT3_2_BY * tz);
  const int vecs = VVDOT3_2_BY * 3 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + VVDOT3_2_BY <= n) {
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

/* Input 1 (vector3), owner: thread tx == 0 copies the element it computes. The same offsets as the
 * compute reads, so the buffer may live in registers; elements >= n read as 0. */
KAS_DEV void d_vvdot3_2_load_3(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  if (tx==0) {
    const bool valid = e0 + ty < n;
#pragma unroll
    for (int k = 0; k < 3; k++)
      s[APLS + k] = valid ? g[GIDX(e0 + ty, k)] : 0;
  }
}

/* d = a . b, three threads per element, thread tx == 0 computes. */
KAS_DEV void d_vvdot3_2_compute(KAS_BUF(real) a, KAS_BUF(real) b, KAS_BUF(real) d, int tx, int ty,
                                int tz) {
  (void)ty; /* tx picks this thread's part; ty, tz enter only through the placeholders */
  (void)tz;
  if (tx == 0) {
    real acc = 0;
#pragma unroll
    for (int k = 0; k < 3; k++)
      acc += a[APIN0 + k] * b[APIN1 + k];
    d[APOUT] = acc;
  }
}

/* Result (scalar), coalesced: the block's threads write its E*1 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block writes scalars of elements < n only. */
KAS_DEV void d_vvdot3_2_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  const int threads = VVDOT3_2_BX * VVDOT3_2_BY * VVDOT3_2_BZ;
  const int lin = tx + VVDOT3_2_BX * (ty + VVDOT3_2_BY * tz);
  const int vecs = VVDOT3_2_BY * 1 / W;
  if (e0 + VVDOT3_2_BY <= n) {
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
    const size_t valid = n > e0 ? (n - e0) * 1 : 0;
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

/* Result (scalar), owner: thread tx == 0 writes the value it computed, straight from the compute's
 * output (registers or shared); elements >= n are not written. */
KAS_DEV void d_vvdot3_2_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  if (tx==0 && e0 + ty < n)
    g[GIDX(e0 + ty, 0)] = s[APLS];
}
