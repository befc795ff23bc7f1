/*
 * mmul33_3.cu — mmul33, implementation 3: one thread per entry of the result.
 * 9 threads per element, thread tx = i*3+j computes C[i][j] from row i of A and column j of B.
 * The most parallel mapping: tiny per-thread buffers, and the owner save writes the 9 entries of
 * an element with 9 consecutive threads (coalesced).
 */

/* Input 0 (matrix3x3), coalesced: the block copies its E*9 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_mmul33_3_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL33_3_BX * ty;
  const int threads = MMUL33_3_BX * MMUL33_3_BY;
  const int vecs = MMUL33_3_BY * 9 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + MMUL33_3_BY <= n) {
#pragma unroll
    for (int k = 0; k < (vecs + threads - 1) / threads; k++) {
      const int q = lin + k * threads;
      if (q < vecs) {
        real v[W];
        KAS_LOADV(v, chunk, q);
#pragma unroll
        for (int b = 0; b < W; b++) s[APLS + k * W * threads + b] = v[b];
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < (vecs + threads - 1) / threads; k++) {
      const int q = lin + k * threads;
      if (q < vecs) {
#pragma unroll
        for (int b = 0; b < W; b++) {
          const int f = W * q + b; /* real index in the chunk */
          s[APLS + k * W * threads + b] = e0 + (size_t)(f / 9) < n ? chunk[f] : 0;
        }
      }
    }
  }
}

/* Input 0 (matrix3x3), owner: each thread reads exactly row tx/3 of A (3 reals), the offsets its
 * compute reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_mmul33_3_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const int at = tx/3*3; /* its first component */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k] = live ? g[GIDX(e, at + k)] : 0;
}

/* Input 1 (matrix3x3), coalesced: the block copies its E*9 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_mmul33_3_load_2(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL33_3_BX * ty;
  const int threads = MMUL33_3_BX * MMUL33_3_BY;
  const int vecs = MMUL33_3_BY * 9 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + MMUL33_3_BY <= n) {
#pragma unroll
    for (int k = 0; k < (vecs + threads - 1) / threads; k++) {
      const int q = lin + k * threads;
      if (q < vecs) {
        real v[W];
        KAS_LOADV(v, chunk, q);
#pragma unroll
        for (int b = 0; b < W; b++) s[APLS + k * W * threads + b] = v[b];
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < (vecs + threads - 1) / threads; k++) {
      const int q = lin + k * threads;
      if (q < vecs) {
#pragma unroll
        for (int b = 0; b < W; b++) {
          const int f = W * q + b; /* real index in the chunk */
          s[APLS + k * W * threads + b] = e0 + (size_t)(f / 9) < n ? chunk[f] : 0;
        }
      }
    }
  }
}

/* Input 1 (matrix3x3), owner: each thread reads exactly column tx%3 of B (3 reals), the offsets
 * its compute reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_mmul33_3_load_3(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const int at = tx%3; /* its first component */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k * 3] = live ? g[GIDX(e, at + k * 3)] : 0;
}

/* Output (matrix3x3), coalesced: the block writes its E*9 contiguous floats as vectors of W reals; a
 * partial last block goes real by real and writes no element >= n (but reads its whole
 * access set, which so does not depend on n). */
KAS_DEV void d_mmul33_3_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL33_3_BX * ty;
  const int threads = MMUL33_3_BX * MMUL33_3_BY;
  const int vecs = MMUL33_3_BY * 9 / W;
  real *chunk = g + GIDX(e0, 0);
  if (e0 + MMUL33_3_BY <= n) {
#pragma unroll
    for (int k = 0; k < (vecs + threads - 1) / threads; k++) {
      const int q = lin + k * threads;
      if (q < vecs) {
        real v[W];
#pragma unroll
        for (int b = 0; b < W; b++) v[b] = s[APLS + k * W * threads + b];
        KAS_STOREV(chunk, q, v);
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < (vecs + threads - 1) / threads; k++) {
      const int q = lin + k * threads;
      if (q < vecs) {
#pragma unroll
        for (int b = 0; b < W; b++) {
          const int f = W * q + b; /* real index in the chunk */
          const real v = s[APLS + k * W * threads + b];
          if (e0 + (size_t)(f / 9) < n) chunk[f] = v;
        }
      }
    }
  }
}

/* Output (matrix3x3), owner: each thread writes entry tx of C, the offsets its compute wrote (the
 * buffer may be in its registers); nothing for elements >= n. */
KAS_DEV void d_mmul33_3_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const int at = tx; /* its first component */
  const bool live = e < n;
  const real v = s[APLS];
  if (live) g[GIDX(e, at)] = v;
}

/* C[i][j] = sum_k A[i][k] B[k][j] for this thread's entry tx = i*3+j; a is relative to row i, b to
 * column j. */
KAS_DEV void d_mmul33_3_compute(KAS_BUF(real) a, KAS_BUF(real) b, KAS_BUF(real) c, int tx, int ty,
                                int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
  real acc = 0;
#pragma unroll
  for (int k = 0; k < 3; k++) acc += a[APIN0 + k] * b[APIN1 + k * 3];
  c[APOUT] = acc;
}
