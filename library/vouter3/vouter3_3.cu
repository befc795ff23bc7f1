/*
 * vouter3_3.cu — vouter3 (M = a (x) b), implementation 3:
 * one thread per entry of the result; block BX = 9, BY = E.
 * Thread tx = i*3+j writes a[i]*b[j]. It shares the 9 x E block and the per-thread patterns of
 * mmul33_3 and madd33_2 (entries of a 3x3 matrix), so that fusions with them need no recomputed
 * coordinates and may keep buffers in registers. Each thread touches single reals, so its owner
 * loads and saves are coalesced as they are.
 * Loads: for every input a coalesced vector copy of the block's batch (the fast path from global
 * memory) and an owner copy whose offsets equal the compute's (a register buffer).
 * Saves: coalesced (vectors) and owner.  Layout, placeholders and tails: docs/library-format.md.
 */

/* Input 0 (vector3), coalesced: the block's threads copy its E*3 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_vouter3_3_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  const int threads = VOUTER3_3_BX * VOUTER3_3_BY * VOUTER3_3_BZ;
  const int lin = tx + VOUTER3_3_BX * (ty + VOUTER3_3_BY * tz);
  const int vecs = VOUTER3_3_BY * 3 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + VOUTER3_3_BY <= n) {
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

/* Input 0 (vector3), owner: each thread copies the entry a[i] of its M[i][j]. The same offsets as
 * the compute reads, so the buffer may live in registers; elements >= n read as 0. */
KAS_DEV void d_vouter3_3_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)tz;
  s[APLS] = e0 + ty < n ? g[GIDX(e0 + ty, tx/3)] : 0;
}

/* Input 1 (vector3), coalesced: the block's threads copy its E*3 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_vouter3_3_load_2(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  const int threads = VOUTER3_3_BX * VOUTER3_3_BY * VOUTER3_3_BZ;
  const int lin = tx + VOUTER3_3_BX * (ty + VOUTER3_3_BY * tz);
  const int vecs = VOUTER3_3_BY * 3 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + VOUTER3_3_BY <= n) {
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

/* Input 1 (vector3), owner: each thread copies the entry b[j] of its M[i][j]. The same offsets as
 * the compute reads, so the buffer may live in registers; elements >= n read as 0. */
KAS_DEV void d_vouter3_3_load_3(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)tz;
  s[APLS] = e0 + ty < n ? g[GIDX(e0 + ty, tx%3)] : 0;
}

/* M[i][j] = a[i] b[j] for this thread's entry tx = i*3+j. */
KAS_DEV void d_vouter3_3_compute(KAS_BUF(real) a, KAS_BUF(real) b, KAS_BUF(real) m, int tx, int ty,
                                 int tz) {
  (void)tx; /* the placeholders use the coordinates only in shared placement */
  (void)ty;
  (void)tz;
  m[APOUT] = a[APIN0] * b[APIN1];
}

/* Result (matrix3x3), coalesced: the block's threads write its E*9 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block writes scalars of elements < n only. */
KAS_DEV void d_vouter3_3_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  const int threads = VOUTER3_3_BX * VOUTER3_3_BY * VOUTER3_3_BZ;
  const int lin = tx + VOUTER3_3_BX * (ty + VOUTER3_3_BY * tz);
  const int vecs = VOUTER3_3_BY * 9 / W;
  if (e0 + VOUTER3_3_BY <= n) {
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
    const size_t valid = n > e0 ? (n - e0) * 9 : 0;
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

/* Result (matrix3x3), owner: each thread writes the entry it computed (naturally coalesced),
 * straight from the compute's output (registers or shared); elements >= n are not written. */
KAS_DEV void d_vouter3_3_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)tz;
  if (e0 + ty < n)
    g[GIDX(e0 + ty, tx)] = s[APLS];
}
