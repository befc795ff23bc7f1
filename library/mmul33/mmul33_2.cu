/*
 * mmul33_2.cu — mmul33, implementation 2: one thread per row of the result.
 * 3 threads per element, thread tx computes row tx of C from row tx of A and all of B (Lakomý 2012,
 * Kód 4.2-4.4). Row-sized register buffers for A and C; B is read whole by each of the 3
 * threads. The strided loads are the thesis's cooperative copy.
 */

/* Input 0 (matrix3x3), coalesced: the block copies its E*9 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_mmul33_2_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL33_2_BX * ty;
  const int threads = MMUL33_2_BX * MMUL33_2_BY;
  const int vecs = MMUL33_2_BY * 9 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + MMUL33_2_BY <= n) {
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

/* Input 0 (matrix3x3), owner: each thread reads exactly row tx of A (3 reals), the offsets its
 * compute reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_mmul33_2_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const int at = tx*3; /* its first component */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k] = live ? g[GIDX(e, at + k)] : 0;
}

/* Input 1 (matrix3x3), coalesced: the block copies its E*9 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_mmul33_2_load_2(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL33_2_BX * ty;
  const int threads = MMUL33_2_BX * MMUL33_2_BY;
  const int vecs = MMUL33_2_BY * 9 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + MMUL33_2_BY <= n) {
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

/* Input 1 (matrix3x3), owner: each thread reads exactly all 9 reals of B, the offsets its compute
 * reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_mmul33_2_load_3(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 9; k++)
    s[APLS + k] = live ? g[GIDX(e, k)] : 0;
}

/* Input 0 (matrix3x3), strided (Lakomý 2012, Kód 4.2): thread lin copies floats lin, lin+T, lin+2T,
 * ... of the block's contiguous chunk, one real at a time (coalesced, no shared-memory bank
 * conflicts); elements >= n are zero-filled. */
KAS_DEV void d_mmul33_2_load_4(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL33_2_BX * ty;
  const int threads = MMUL33_2_BX * MMUL33_2_BY;
  const int reals = MMUL33_2_BY * 9;
  const real *chunk = g + GIDX(e0, 0);
#pragma unroll
  for (int k = 0; k < (reals + threads - 1) / threads; k++) {
    const int f = lin + k * threads;
    if (f < reals) s[APLS + k * threads] = e0 + (size_t)(f / 9) < n ? chunk[f] : 0;
  }
}

/* Input 1 (matrix3x3), strided (Lakomý 2012, Kód 4.2): thread lin copies floats lin, lin+T, lin+2T,
 * ... of the block's contiguous chunk, one real at a time (coalesced, no shared-memory bank
 * conflicts); elements >= n are zero-filled. */
KAS_DEV void d_mmul33_2_load_5(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL33_2_BX * ty;
  const int threads = MMUL33_2_BX * MMUL33_2_BY;
  const int reals = MMUL33_2_BY * 9;
  const real *chunk = g + GIDX(e0, 0);
#pragma unroll
  for (int k = 0; k < (reals + threads - 1) / threads; k++) {
    const int f = lin + k * threads;
    if (f < reals) s[APLS + k * threads] = e0 + (size_t)(f / 9) < n ? chunk[f] : 0;
  }
}

/* Output (matrix3x3), coalesced: the block writes its E*9 contiguous floats as vectors of W reals; a
 * partial last block goes real by real and writes no element >= n (but reads its whole
 * access set, which so does not depend on n). */
KAS_DEV void d_mmul33_2_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL33_2_BX * ty;
  const int threads = MMUL33_2_BX * MMUL33_2_BY;
  const int vecs = MMUL33_2_BY * 9 / W;
  real *chunk = g + GIDX(e0, 0);
  if (e0 + MMUL33_2_BY <= n) {
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

/* Output (matrix3x3), owner: each thread writes row tx of C (3 reals), the offsets its compute
 * wrote (the buffer may be in its registers); nothing for elements >= n. */
KAS_DEV void d_mmul33_2_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const int at = tx*3; /* its first component */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++) {
    const real v = s[APLS + k];
    if (live) g[GIDX(e, at + k)] = v;
  }
}

/* Row tx of C = (row tx of A) B; a and c are indexed relative to the row, b to the element. */
KAS_DEV void d_mmul33_2_compute(KAS_BUF(real) a, KAS_BUF(real) b, KAS_BUF(real) c, int tx, int ty,
                                int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
#pragma unroll
  for (int j = 0; j < 3; j++) {
    real acc = 0;
#pragma unroll
    for (int k = 0; k < 3; k++) acc += a[APIN0 + k] * b[APIN1 + k * 3 + j];
    c[APOUT + j] = acc;
  }
}
