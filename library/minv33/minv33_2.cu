/*
 * minv33_2.cu — minv33 (A^-1 = adj(A) / det A), implementation 2:
 * one thread per row of the result; block BX = 3, BY = E.
 * Thread tx computes row tx of A^-1: the cofactors of column tx of A over det A, which it expands
 * along row 0 itself (no thread waits for another), as minv33_1, mdet33 and the CPU reference do:
 * every row is then divided by the same det A (rows divided by different roundings of it, as an
 * expansion along column tx gave, are no inverse of a matrix near A, and det(A) A^-1 lost the
 * cancellation a hyperelastic stress relies on: 1e-9 off in double).  It shares the 3 x E block
 * and the per-thread patterns of mmul33_2, madd33_3 and mvmul33_2 (rows of a 3x3 matrix), so that
 * fusions with them need no recomputed coordinates and may keep buffers in registers. The
 * cofactors and the determinant are formed in double (products of two floats are exact there), so
 * every entry of the inverse is accurate to a few float ulps unless A is ill-conditioned beyond
 * ~1e8; in float the error grows with cond(A) and a random matrix misses a 1e-5 relative check
 * for about one random matrix in 50.  A singular A (det A == 0) gives +-inf or NaN entries (adj(A) / 0 in IEEE
 * arithmetic), as the CPU reference does: test det A first where elements can degenerate.
 * Loads: for every input a coalesced vector copy of the block's batch (the fast path from global
 * memory) and an owner copy whose offsets equal the compute's (a register buffer).
 * Saves: coalesced (vectors) and owner.  Layout, placeholders and tails: docs/library-format.md.
 */

/* Input 0 (matrix3x3), coalesced: the block's threads copy its E*9 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_minv33_2_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  const int threads = MINV33_2_BX * MINV33_2_BY * MINV33_2_BZ;
  const int lin = tx + MINV33_2_BX * (ty + MINV33_2_BY * tz);
  const int vecs = MINV33_2_BY * 9 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + MINV33_2_BY <= n) {
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
KAS_DEV void d_minv33_2_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  const bool valid = e0 + ty < n;
#pragma unroll
  for (int k = 0; k < 9; k++)
    s[APLS + k] = valid ? g[GIDX(e0 + ty, k)] : 0;
}

/* Row tx of A^-1 = (cofactors of column tx of A) / det A, in double (see the top of the file); a
 * is relative to the element, inv to the row. */
KAS_DEV void d_minv33_2_compute(KAS_BUF(real) a, KAS_BUF(real) inv, int tx, int ty, int tz) {
  (void)ty; /* tx picks this thread's part; ty, tz enter only through the placeholders */
  (void)tz;
  /* Columns tx+1, tx+2 (mod 3) of A, picked by selects from the whole matrix, so that every
   * buffer index stays a constant (registers, not local memory). */
  double c1[3], c2[3];
#pragma unroll
  for (int r = 0; r < 3; r++) {
    const double x = a[APIN0 + r * 3 + 0], y = a[APIN0 + r * 3 + 1], z = a[APIN0 + r * 3 + 2];
    c1[r] = tx == 0 ? y : tx == 1 ? z : x;
    c2[r] = tx == 0 ? z : tx == 1 ? x : y;
  }
  /* cof[j]: the cofactor of A[j][tx] (the cyclic order carries its sign), i.e. adj(A)[tx][j]. */
  double cof[3];
#pragma unroll
  for (int j = 0; j < 3; j++)
    cof[j] = c1[(j + 1) % 3] * c2[(j + 2) % 3] - c2[(j + 1) % 3] * c1[(j + 2) % 3];
  /* det A along row 0, in the reference's order: the same value in all three threads */
  double m[9];
#pragma unroll
  for (int k = 0; k < 9; k++) m[k] = a[APIN0 + k];
  const double det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
                     m[2] * (m[3] * m[7] - m[4] * m[6]);
  const double rdet = 1.0 / det;
#pragma unroll
  for (int j = 0; j < 3; j++) inv[APOUT + j] = (real)(cof[j] * rdet);
}

/* Result (matrix3x3), coalesced: the block's threads write its E*9 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block writes scalars of elements < n only. */
KAS_DEV void d_minv33_2_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  const int threads = MINV33_2_BX * MINV33_2_BY * MINV33_2_BZ;
  const int lin = tx + MINV33_2_BX * (ty + MINV33_2_BY * tz);
  const int vecs = MINV33_2_BY * 9 / W;
  if (e0 + MINV33_2_BY <= n) {
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
KAS_DEV void d_minv33_2_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  if (e0 + ty < n) {
#pragma unroll
    for (int k = 0; k < 3; k++)
      g[GIDX(e0 + ty, tx*3 + k)] = s[APLS + k];
  }
}
