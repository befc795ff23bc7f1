/*
 * mtrace33_1.cu — mtrace33 (t = tr A), implementation 1:
 * one thread per element; block BX = E.
 * The simplest mapping: with coalesced loads and saves through shared memory it streams at copy
 * bandwidth, and it fuses (registers, no recomputed coordinates) with every other
 * one-thread-per-element implementation.
 * Loads: a coalesced vector copy of the block's batch only.  The compute reads the diagonal (3 of
 * 9 reals) and a load must fill the whole buffer, so no load can match the compute's pattern: the
 * input never sits in registers, and an owner copy into shared memory would only be a slower
 * coalesced one.
 * Saves: coalesced (vectors) and owner.  Layout, placeholders and tails: docs/library-format.md.
 */

/* Input 0 (matrix3x3), coalesced: the block's threads copy its E*9 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_mtrace33_1_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  const int threads = MTRACE33_1_BX * MTRACE33_1_BY * MTRACE33_1_BZ;
  const int lin = tx + MTRACE33_1_BX * (ty + MTRACE33_1_BY * tz);
  const int vecs = MTRACE33_1_BX * 9 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + MTRACE33_1_BX <= n) {
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

/* t = A[0][0] + A[1][1] + A[2][2], one thread per element. */
KAS_DEV void d_mtrace33_1_compute(KAS_BUF(real) a, KAS_BUF(real) t, int tx, int ty, int tz) {
  (void)tx; /* the placeholders use the coordinates only in shared placement */
  (void)ty;
  (void)tz;
  t[APOUT] = a[APIN0 + 0] + a[APIN0 + 4] + a[APIN0 + 8];
}

/* Result (scalar), coalesced: the block's threads write its E*1 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block writes scalars of elements < n only. */
KAS_DEV void d_mtrace33_1_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  const int threads = MTRACE33_1_BX * MTRACE33_1_BY * MTRACE33_1_BZ;
  const int lin = tx + MTRACE33_1_BX * (ty + MTRACE33_1_BY * tz);
  const int vecs = MTRACE33_1_BX * 1 / W;
  if (e0 + MTRACE33_1_BX <= n) {
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

/* Result (scalar), owner: each thread writes the entries it computed, straight from the compute's
 * output (registers or shared); elements >= n are not written. */
KAS_DEV void d_mtrace33_1_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  if (e0 + tx < n)
    g[GIDX(e0 + tx, 0)] = s[APLS];
}
