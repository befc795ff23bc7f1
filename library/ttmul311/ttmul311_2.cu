/*
 * ttmul311_2.cu — ttmul311, implementation 2: one thread per output entry.
 * 9 threads per element, thread tx = j*3+k computes O[j][k] from T[i][j][k] (i < 3; offsets tx,
 * tx+9, tx+18) and v: T's owner load is coalesced across the element and the owner save writes
 * the 9 entries with 9 consecutive threads.
 */

/* Input 0 (tensor3x3x3), coalesced: the block copies its E*27 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul311_2_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL311_2_BX * ty;
  const int threads = TTMUL311_2_BX * TTMUL311_2_BY;
  const int vecs = TTMUL311_2_BY * 27 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL311_2_BY <= n) {
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
          s[APLS + k * W * threads + b] = e0 + (size_t)(f / 27) < n ? chunk[f] : 0;
        }
      }
    }
  }
}

/* Input 0 (tensor3x3x3), owner: each thread reads exactly T[i][tx] for i < 3 (3 reals), the
 * offsets its compute reads, so that the buffer can live in its registers; zeros for elements >=
 * n. */
KAS_DEV void d_ttmul311_2_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const int at = tx; /* its first component */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k * 9] = live ? g[GIDX(e, at + k * 9)] : 0;
}

/* Input 1 (vector3), coalesced: the block copies its E*3 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul311_2_load_2(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL311_2_BX * ty;
  const int threads = TTMUL311_2_BX * TTMUL311_2_BY;
  const int vecs = TTMUL311_2_BY * 3 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL311_2_BY <= n) {
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
          s[APLS + k * W * threads + b] = e0 + (size_t)(f / 3) < n ? chunk[f] : 0;
        }
      }
    }
  }
}

/* Input 1 (vector3), owner: each thread reads exactly all 3 reals of v, the offsets its compute
 * reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_ttmul311_2_load_3(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k] = live ? g[GIDX(e, k)] : 0;
}

/* Output (matrix3x3), coalesced: the block writes its E*9 contiguous floats as vectors of W reals; a
 * partial last block goes real by real and writes no element >= n (but reads its whole
 * access set, which so does not depend on n). */
KAS_DEV void d_ttmul311_2_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL311_2_BX * ty;
  const int threads = TTMUL311_2_BX * TTMUL311_2_BY;
  const int vecs = TTMUL311_2_BY * 9 / W;
  real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL311_2_BY <= n) {
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

/* Output (matrix3x3), owner: each thread writes entry tx of O, the offsets its compute wrote (the
 * buffer may be in its registers); nothing for elements >= n. */
KAS_DEV void d_ttmul311_2_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const int at = tx; /* its first component */
  const bool live = e < n;
  const real v = s[APLS];
  if (live) g[GIDX(e, at)] = v;
}

/* O[tx] = sum_i T[i][tx] v[i]; a is relative to T[0][tx]. */
KAS_DEV void d_ttmul311_2_compute(KAS_BUF(real) a, KAS_BUF(real) b, KAS_BUF(real) c, int tx, int ty,
                                  int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
  real acc = 0;
#pragma unroll
  for (int i = 0; i < 3; i++) acc += a[APIN0 + i * 9] * b[APIN1 + i];
  c[APOUT] = acc;
}
