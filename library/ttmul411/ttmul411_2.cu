/*
 * ttmul411_2.cu — ttmul411, implementation 2: one thread per output entry.
 * 27 threads per element, thread tx = (j*3+k)*3+l computes O[j][k][l] from T[i][j][k][l] (i < 3;
 * offsets tx, tx+27, tx+54) and all of v. Its owner load of T is coalesced across the element
 * (27 consecutive threads read 27 consecutive floats, three times), so T can go straight into
 * registers. Measured standalone on an H200: about 90% of copy bandwidth with every buffer in
 * registers (E = 8); with T staged through shared memory much less, as each thread has only 3
 * floats of T to keep in flight.
 */

/* Input 0 (tensor3x3x3x3), coalesced: the block copies its E*81 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul411_2_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL411_2_BX * ty;
  const int threads = TTMUL411_2_BX * TTMUL411_2_BY;
  const int vecs = TTMUL411_2_BY * 81 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL411_2_BY <= n) {
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
          s[APLS + k * W * threads + b] = e0 + (size_t)(f / 81) < n ? chunk[f] : 0;
        }
      }
    }
  }
}

/* Input 0 (tensor3x3x3x3), owner: each thread reads exactly T[i][tx] for i < 3 (3 reals), the
 * offsets its compute reads, so that the buffer can live in its registers; zeros for elements >=
 * n. */
KAS_DEV void d_ttmul411_2_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const int at = tx; /* its first component */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k * 27] = live ? g[GIDX(e, at + k * 27)] : 0;
}

/* Input 1 (vector3), coalesced: the block copies its E*3 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul411_2_load_2(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL411_2_BX * ty;
  const int threads = TTMUL411_2_BX * TTMUL411_2_BY;
  const int vecs = TTMUL411_2_BY * 3 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL411_2_BY <= n) {
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
KAS_DEV void d_ttmul411_2_load_3(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k] = live ? g[GIDX(e, k)] : 0;
}

/* Output (tensor3x3x3), coalesced: the block writes its E*27 contiguous floats as vectors of W reals; a
 * partial last block goes real by real and writes no element >= n (but reads its whole
 * access set, which so does not depend on n). */
KAS_DEV void d_ttmul411_2_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL411_2_BX * ty;
  const int threads = TTMUL411_2_BX * TTMUL411_2_BY;
  const int vecs = TTMUL411_2_BY * 27 / W;
  real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL411_2_BY <= n) {
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

/* Output (tensor3x3x3), owner: each thread writes entry tx of O, the offsets its compute wrote
 * (the buffer may be in its registers); nothing for elements >= n. */
KAS_DEV void d_ttmul411_2_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const int at = tx; /* its first component */
  const bool live = e < n;
  const real v = s[APLS];
  if (live) g[GIDX(e, at)] = v;
}

/* O[tx] = sum_i T[i][tx] v[i]; a is relative to T[0][tx]. */
KAS_DEV void d_ttmul411_2_compute(KAS_BUF(real) a, KAS_BUF(real) b, KAS_BUF(real) c, int tx, int ty,
                                  int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
  real acc = 0;
#pragma unroll
  for (int i = 0; i < 3; i++) acc += a[APIN0 + i * 27] * b[APIN1 + i];
  c[APOUT] = acc;
}
