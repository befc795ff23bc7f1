/*
 * ttmul411_1.cu — ttmul411, implementation 1: one thread per element.
 * Each thread contracts one whole 81-float tensor with its vector: 81 reals of input per
 * thread, so its owner load is badly coalesced; it exists for fusions whose other calls run one
 * thread per element, with the coalesced load staging T through shared memory.
 */

/* Input 0 (tensor3x3x3x3), coalesced: the block copies its E*81 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul411_1_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const int lin = tx;
  const int threads = TTMUL411_1_BX;
  const int vecs = TTMUL411_1_BX * 81 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL411_1_BX <= n) {
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

/* Input 0 (tensor3x3x3x3), owner: each thread reads exactly its element's 81 reals of T, the
 * offsets its compute reads, so that the buffer can live in its registers; zeros for elements >=
 * n. */
KAS_DEV void d_ttmul411_1_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const size_t e = e0 + (size_t)tx; /* this thread's element */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 81; k++)
    s[APLS + k] = live ? g[GIDX(e, k)] : 0;
}

/* Input 1 (vector3), coalesced: the block copies its E*3 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul411_1_load_2(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const int lin = tx;
  const int threads = TTMUL411_1_BX;
  const int vecs = TTMUL411_1_BX * 3 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL411_1_BX <= n) {
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

/* Input 1 (vector3), owner: each thread reads exactly its element's 3 reals of v, the offsets its
 * compute reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_ttmul411_1_load_3(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const size_t e = e0 + (size_t)tx; /* this thread's element */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k] = live ? g[GIDX(e, k)] : 0;
}

/* Output (tensor3x3x3), coalesced: the block writes its E*27 contiguous floats as vectors of W reals; a
 * partial last block goes real by real and writes no element >= n (but reads its whole
 * access set, which so does not depend on n). */
KAS_DEV void d_ttmul411_1_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const int lin = tx;
  const int threads = TTMUL411_1_BX;
  const int vecs = TTMUL411_1_BX * 27 / W;
  real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL411_1_BX <= n) {
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

/* Output (tensor3x3x3), owner: each thread writes its element's 27 reals of O, the offsets its
 * compute wrote (the buffer may be in its registers); nothing for elements >= n. */
KAS_DEV void d_ttmul411_1_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const size_t e = e0 + (size_t)tx; /* this thread's element */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 27; k++) {
    const real v = s[APLS + k];
    if (live) g[GIDX(e, k)] = v;
  }
}

/* O[r] = sum_i T[i][r] v[i] for this thread's element (r = (j*3+k)*3+l). */
KAS_DEV void d_ttmul411_1_compute(KAS_BUF(real) a, KAS_BUF(real) b, KAS_BUF(real) c, int tx, int ty,
                                  int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
#pragma unroll
  for (int r = 0; r < 27; r++) {
    real acc = 0;
#pragma unroll
    for (int i = 0; i < 3; i++) acc += a[APIN0 + i * 27 + r] * b[APIN1 + i];
    c[APOUT + r] = acc;
  }
}
