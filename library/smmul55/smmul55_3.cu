/*
 * smmul55_3.cu — smmul55 (C = M * s), implementation 3:
 * one thread per entry; block BX = 25, BY = E.
 * It shares the 25 x E block and the per-thread patterns of mmul55_3 (entries of a 5x5
 * matrix), so that fusions with them need no recomputed coordinates and may keep buffers in
 * registers. Each thread touches single reals, so its owner loads and saves are coalesced as
 * they are.
 * Loads: for every input a coalesced vector copy of the block's batch (the fast path from
 * global memory) and an owner copy whose offsets equal the compute's (a register buffer).
 * Saves: coalesced (vectors) and owner.  Layout, placeholders and tails: docs/library-format.md.
 */

/* Input 0 (matrix5x5), coalesced: the block's threads copy its E*25 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_smmul55_3_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  const int threads = SMMUL55_3_BX * SMMUL55_3_BY * SMMUL55_3_BZ;
  const int lin = tx + SMMUL55_3_BX * (ty + SMMUL55_3_BY * tz);
  const int vecs = SMMUL55_3_BY * 25 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + SMMUL55_3_BY <= n) {
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
        /* e0 * 25 is a multiple of W reals: the vector is aligned where g is */
        real v[W];
        KAS_LOADV(v, g, GIDX(e0, 0) / W + (size_t)q);
#pragma unroll
        for (int b = 0; b < W; b++) s[APLS + r * W * threads + b] = v[b];
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 25 : 0; /* reals of the chunk that exist */
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

/* Input 0 (matrix5x5), owner: each thread copies the entry it computes (naturally coalesced).
 * The same offsets as the compute reads, so the buffer may live in registers; elements >= n
 * read as 0. */
KAS_DEV void d_smmul55_3_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)tz;
  s[APLS] = e0 + ty < n ? g[GIDX(e0 + ty, tx)] : 0;
}

/* Input 1 (scalar), coalesced: the block's threads copy its E*1 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_smmul55_3_load_2(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  const int threads = SMMUL55_3_BX * SMMUL55_3_BY * SMMUL55_3_BZ;
  const int lin = tx + SMMUL55_3_BX * (ty + SMMUL55_3_BY * tz);
  const int vecs = SMMUL55_3_BY * 1 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + SMMUL55_3_BY <= n) {
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
        /* e0 * 1 is a multiple of W reals: the vector is aligned where g is */
        real v[W];
        KAS_LOADV(v, g, GIDX(e0, 0) / W + (size_t)q);
#pragma unroll
        for (int b = 0; b < W; b++) s[APLS + r * W * threads + b] = v[b];
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 1 : 0; /* reals of the chunk that exist */
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

/* Input 1 (scalar), owner: each thread copies the entry it computes (naturally coalesced).
 * The same offsets as the compute reads, so the buffer may live in registers; elements >= n
 * read as 0. */
KAS_DEV void d_smmul55_3_load_3(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  s[APLS] = e0 + ty < n ? g[GIDX(e0 + ty, 0)] : 0;
}

/* C = M * s, one thread per entry. */
KAS_DEV void d_smmul55_3_compute(KAS_BUF(real) a, KAS_BUF(real) b, KAS_BUF(real) c, int tx, int ty,
                                 int tz) {
  (void)tx; /* the placeholders use the coordinates only in shared placement */
  (void)ty;
  (void)tz;
  c[APOUT] = a[APIN0] * b[APIN1];
}

/* Result (matrix5x5), coalesced: the block's threads write its E*25 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block writes scalars of elements < n only. */
KAS_DEV void d_smmul55_3_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  const int threads = SMMUL55_3_BX * SMMUL55_3_BY * SMMUL55_3_BZ;
  const int lin = tx + SMMUL55_3_BX * (ty + SMMUL55_3_BY * tz);
  const int vecs = SMMUL55_3_BY * 25 / W;
  if (e0 + SMMUL55_3_BY <= n) {
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
    const size_t valid = n > e0 ? (n - e0) * 25 : 0;
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

/* Result (matrix5x5), owner: each thread writes the entries it computed, straight from
 * the compute's output (registers or shared); elements >= n are not written. */
KAS_DEV void d_smmul55_3_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)tz;
  if (e0 + ty < n)
    g[GIDX(e0 + ty, tx)] = s[APLS];
}
