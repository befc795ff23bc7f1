/*
 * ttmul3212_3.cu — ttmul3212, implementation 3: one thread per output row.
 * 9 threads per element, thread tx = a*3+b computes O[a][b][0..2] from the row T[a][b][*] and
 * all of M: fewer threads than the per-entry mapping, and its input pattern of T matches
 * ttmul411_3's output pattern (row tx*3 of each element).
 */

/* Input 0 (tensor3x3x3), coalesced: the block copies its E*27 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul3212_3_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                  int tz, size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL3212_3_BX * ty;
  const int threads = TTMUL3212_3_BX * TTMUL3212_3_BY;
  const int vecs = TTMUL3212_3_BY * 27 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL3212_3_BY <= n) {
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

/* Input 0 (tensor3x3x3), owner: each thread reads exactly the row T[a][b][0..2] (3 reals), the
 * offsets its compute reads, so that the buffer can live in its registers; zeros for elements >=
 * n. */
KAS_DEV void d_ttmul3212_3_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                  int tz, size_t e0, size_t n) {
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
KAS_DEV void d_ttmul3212_3_load_2(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                  int tz, size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL3212_3_BX * ty;
  const int threads = TTMUL3212_3_BX * TTMUL3212_3_BY;
  const int vecs = TTMUL3212_3_BY * 9 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL3212_3_BY <= n) {
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

/* Input 1 (matrix3x3), owner: each thread reads exactly all 9 reals of M, the offsets its compute
 * reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_ttmul3212_3_load_3(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                  int tz, size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 9; k++)
    s[APLS + k] = live ? g[GIDX(e, k)] : 0;
}

/* Output (tensor3x3x3), coalesced: the block writes its E*27 contiguous floats as vectors of W reals; a
 * partial last block goes real by real and writes no element >= n (but reads its whole
 * access set, which so does not depend on n). */
KAS_DEV void d_ttmul3212_3_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                  size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL3212_3_BX * ty;
  const int threads = TTMUL3212_3_BX * TTMUL3212_3_BY;
  const int vecs = TTMUL3212_3_BY * 27 / W;
  real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL3212_3_BY <= n) {
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
          if (e0 + (size_t)(f / 27) < n) chunk[f] = v;
        }
      }
    }
  }
}

/* Output (tensor3x3x3), owner: each thread writes the row O[a][b][0..2] (3 reals), the offsets
 * its compute wrote (the buffer may be in its registers); nothing for elements >= n. */
KAS_DEV void d_ttmul3212_3_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
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

/* O[a][b][c] = sum_x T[a][b][x] M[x][c] for this thread's row tx = a*3+b; a and c are relative to
 * the row, b to the element. */
KAS_DEV void d_ttmul3212_3_compute(KAS_BUF(real) a, KAS_BUF(real) b, KAS_BUF(real) c, int tx,
                                   int ty, int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
#pragma unroll
  for (int cc = 0; cc < 3; cc++) {
    real acc = 0;
#pragma unroll
    for (int x = 0; x < 3; x++) acc += a[APIN0 + x] * b[APIN1 + x * 3 + cc];
    c[APOUT + cc] = acc;
  }
}
