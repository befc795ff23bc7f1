/*
 * mtmul33_2.cu — mtmul33 (C = A^T B), implementation 2:
 * one thread per row of the result; block BX = 3, BY = E.
 * Thread tx computes row tx of C from column tx of A and all of B, as mmul33_2 computes a row of
 * AB: its 3 x E block and output rows are those of mmul33_2, madd33_3 and msub33_3, so that a
 * chain such as F^T F - I keeps the product in registers. The strided loads are the thesis's
 * cooperative copy, as in mmul33_2.
 * Loads: for every input a coalesced vector copy of the block's batch, an owner copy whose offsets
 * equal the compute's (a register buffer) and a strided copy.
 * Saves: coalesced (vectors) and owner.  Layout, placeholders and tails: docs/library-format.md.
 */

/* Input 0 (matrix3x3), coalesced: the block's threads copy its E*9 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_mtmul33_2_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  const int threads = MTMUL33_2_BX * MTMUL33_2_BY * MTMUL33_2_BZ;
  const int lin = tx + MTMUL33_2_BX * (ty + MTMUL33_2_BY * tz);
  const int vecs = MTMUL33_2_BY * 9 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + MTMUL33_2_BY <= n) {
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

/* Input 0 (matrix3x3), owner: each thread copies column tx of A, the row tx of A^T it multiplies.
 * The same offsets as the compute reads, so the buffer may live in registers; elements >= n read
 * as 0. */
KAS_DEV void d_mtmul33_2_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)tz;
  const bool valid = e0 + ty < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k * 3] = valid ? g[GIDX(e0 + ty, tx + k * 3)] : 0;
}

/* Input 1 (matrix3x3), coalesced: the block's threads copy its E*9 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_mtmul33_2_load_2(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  const int threads = MTMUL33_2_BX * MTMUL33_2_BY * MTMUL33_2_BZ;
  const int lin = tx + MTMUL33_2_BX * (ty + MTMUL33_2_BY * tz);
  const int vecs = MTMUL33_2_BY * 9 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + MTMUL33_2_BY <= n) {
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

/* Input 1 (matrix3x3), owner: each of the element's threads copies all of it (every one of them
 * needs it whole). The same offsets as the compute reads, so the buffer may live in registers;
 * elements >= n read as 0. */
KAS_DEV void d_mtmul33_2_load_3(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  const bool valid = e0 + ty < n;
#pragma unroll
  for (int k = 0; k < 9; k++)
    s[APLS + k] = valid ? g[GIDX(e0 + ty, k)] : 0;
}

/* Input 0 (matrix3x3), strided (Lakomý 2012, Kód 4.2): thread lin copies floats lin, lin+T,
 * lin+2T, ... of the block's contiguous chunk, one real at a time (coalesced, no
 * shared-memory bank conflicts); elements >= n are zero-filled. */
KAS_DEV void d_mtmul33_2_load_4(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MTMUL33_2_BX * ty;
  const int threads = MTMUL33_2_BX * MTMUL33_2_BY;
  const int reals = MTMUL33_2_BY * 9;
  const real *chunk = g + GIDX(e0, 0);
#pragma unroll
  for (int k = 0; k < (reals + threads - 1) / threads; k++) {
    const int f = lin + k * threads;
    if (f < reals) s[APLS + k * threads] = e0 + (size_t)(f / 9) < n ? chunk[f] : 0;
  }
}

/* Input 1 (matrix3x3), strided (Lakomý 2012, Kód 4.2): thread lin copies floats lin, lin+T,
 * lin+2T, ... of the block's contiguous chunk, one real at a time (coalesced, no
 * shared-memory bank conflicts); elements >= n are zero-filled. */
KAS_DEV void d_mtmul33_2_load_5(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MTMUL33_2_BX * ty;
  const int threads = MTMUL33_2_BX * MTMUL33_2_BY;
  const int reals = MTMUL33_2_BY * 9;
  const real *chunk = g + GIDX(e0, 0);
#pragma unroll
  for (int k = 0; k < (reals + threads - 1) / threads; k++) {
    const int f = lin + k * threads;
    if (f < reals) s[APLS + k * threads] = e0 + (size_t)(f / 9) < n ? chunk[f] : 0;
  }
}

/* Row tx of C = (column tx of A)^T B; a is relative to the column, b to the element. */
KAS_DEV void d_mtmul33_2_compute(KAS_BUF(real) a, KAS_BUF(real) b, KAS_BUF(real) c, int tx, int ty,
                                 int tz) {
  (void)tx; /* the placeholders use the coordinates only in shared placement */
  (void)ty;
  (void)tz;
#pragma unroll
  for (int j = 0; j < 3; j++) {
    real acc = 0;
#pragma unroll
    for (int k = 0; k < 3; k++) acc += a[APIN0 + k * 3] * b[APIN1 + k * 3 + j];
    c[APOUT + j] = acc;
  }
}

/* Result (matrix3x3), coalesced: the block's threads write its E*9 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block writes scalars of elements < n only. */
KAS_DEV void d_mtmul33_2_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  const int threads = MTMUL33_2_BX * MTMUL33_2_BY * MTMUL33_2_BZ;
  const int lin = tx + MTMUL33_2_BX * (ty + MTMUL33_2_BY * tz);
  const int vecs = MTMUL33_2_BY * 9 / W;
  if (e0 + MTMUL33_2_BY <= n) {
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
KAS_DEV void d_mtmul33_2_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                size_t e0, size_t n) {
  (void)tz;
  if (e0 + ty < n) {
#pragma unroll
    for (int k = 0; k < 3; k++)
      g[GIDX(e0 + ty, tx*3 + k)] = s[APLS + k];
  }
}
