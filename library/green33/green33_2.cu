/*
 * green33_2.cu — green33 (E = (F^T F - I) / 2), implementation 2:
 * one thread per row of the result; block BX = 3, BY = E.
 * Thread tx computes row tx of E from all of F. It shares the 3 x E block and the per-thread
 * patterns of mmul33_2, madd33_3 and mvmul33_2 (rows of a 3x3 matrix), so that fusions with them
 * need no recomputed coordinates and may keep buffers in registers. E is formed through H = F - I
 * as (H + H^T + H^T H) / 2, which equals (F^T F - I) / 2: F[i][i] - 1 is exact in float for 0.5 <=
 * F[i][i] <= 2, so small strains keep their digits where F^T F - I would cancel against I.
 * Loads: for every input a coalesced vector copy of the block's batch (the fast path from global
 * memory) and an owner copy whose offsets equal the compute's (a register buffer).
 * Saves: coalesced (vectors) and owner.  Layout, placeholders and tails: docs/library-format.md.
 */

/* Input 0 (matrix3x3), coalesced: the block's threads copy its E*9 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_green33_2_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  const int threads = GREEN33_2_BX * GREEN33_2_BY * GREEN33_2_BZ;
  const int lin = tx + GREEN33_2_BX * (ty + GREEN33_2_BY * tz);
  const int vecs = GREEN33_2_BY * 9 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + GREEN33_2_BY <= n) {
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

/* Input 0 (matrix3x3), owner: each of the element's threads copies all of it (every one of them
 * needs it whole). The same offsets as the compute reads, so the buffer may live in registers;
 * elements >= n read as 0. */
KAS_DEV void d_green33_2_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  const bool valid = e0 + ty < n;
#pragma unroll
  for (int k = 0; k < 9; k++)
    s[APLS + k] = valid ? g[GIDX(e0 + ty, k)] : 0;
}

/* Row tx of E = (H + H^T + H^T H) / 2 with H = F - I; f is relative to the element, e to the row.
 * */
KAS_DEV void d_green33_2_compute(KAS_BUF(real) f, KAS_BUF(real) e, int tx, int ty, int tz) {
  (void)ty; /* tx picks this thread's part; ty, tz enter only through the placeholders */
  (void)tz;
  /* H = F - I (see the top of the file) */
  real h[9];
#pragma unroll
  for (int k = 0; k < 9; k++) h[k] = k % 4 == 0 ? f[APIN0 + k] - 1 : f[APIN0 + k];
  /* Row tx and column tx of H, picked by selects (constant buffer indices: registers). */
  real row[3], col[3];
#pragma unroll
  for (int k = 0; k < 3; k++) {
    row[k] = tx == 0 ? h[k] : tx == 1 ? h[3 + k] : h[6 + k];
    col[k] = tx == 0 ? h[k * 3] : tx == 1 ? h[k * 3 + 1] : h[k * 3 + 2];
  }
#pragma unroll
  for (int j = 0; j < 3; j++) {
    real hth = 0;
#pragma unroll
    for (int k = 0; k < 3; k++) hth += col[k] * h[k * 3 + j];
    e[APOUT + j] = (real)0.5 * (row[j] + col[j] + hth);
  }
}

/* Result (matrix3x3), coalesced: the block's threads write its E*9 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block writes scalars of elements < n only. */
KAS_DEV void d_green33_2_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  const int threads = GREEN33_2_BX * GREEN33_2_BY * GREEN33_2_BZ;
  const int lin = tx + GREEN33_2_BX * (ty + GREEN33_2_BY * tz);
  const int vecs = GREEN33_2_BY * 9 / W;
  if (e0 + GREEN33_2_BY <= n) {
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

/* Result (matrix3x3), owner: each thread writes the row it computed, straight from the compute's
 * output (registers or shared); elements >= n are not written. */
KAS_DEV void d_green33_2_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)tz;
  if (e0 + ty < n) {
#pragma unroll
    for (int k = 0; k < 3; k++)
      g[GIDX(e0 + ty, tx*3 + k)] = s[APLS + k];
  }
}
