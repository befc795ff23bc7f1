/*
 * ttmul411_3.cu — ttmul411, implementation 3: one thread per output row.
 * 9 threads per element, thread tx = j*3+k computes the row O[j][k][0..2] from T[i][j][k][0..2]
 * (i < 3) and v: a middle ground between the per-element and the per-entry mappings, with 9
 * floats of T per thread in three runs of 3. With T in registers (owner load) it is the fastest
 * ttmul411 measured standalone (about 100% of copy bandwidth on an H200), and its output pattern
 * is ttmul3212_3's input pattern.
 */

/* Input 0 (tensor3x3x3x3), coalesced: the block copies its E*81 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul411_3_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL411_3_BX * ty;
  const int threads = TTMUL411_3_BX * TTMUL411_3_BY;
  const int vecs = TTMUL411_3_BY * 81 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL411_3_BY <= n) {
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

/* Input 0 (tensor3x3x3x3), owner: each thread reads exactly T[i][tx*3..tx*3+2] for i < 3 (9
 * floats), the offsets its compute reads, so that the buffer can live in its registers; zeros for
 * elements >= n. */
KAS_DEV void d_ttmul411_3_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const int at = tx*3; /* its first component */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++) {
#pragma unroll
    for (int b = 0; b < 3; b++)
      s[APLS + k * 27 + b] = live ? g[GIDX(e, at + k * 27 + b)] : 0;
  }
}

/* Input 1 (vector3), coalesced: the block copies its E*3 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul411_3_load_2(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                 int tz, size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL411_3_BX * ty;
  const int threads = TTMUL411_3_BX * TTMUL411_3_BY;
  const int vecs = TTMUL411_3_BY * 3 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL411_3_BY <= n) {
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
KAS_DEV void d_ttmul411_3_load_3(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
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
KAS_DEV void d_ttmul411_3_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL411_3_BX * ty;
  const int threads = TTMUL411_3_BX * TTMUL411_3_BY;
  const int vecs = TTMUL411_3_BY * 27 / W;
  real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL411_3_BY <= n) {
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

/* Output (tensor3x3x3), owner: each thread writes row tx of O (3 reals), the offsets its compute
 * wrote (the buffer may be in its registers); nothing for elements >= n. */
KAS_DEV void d_ttmul411_3_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
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

/* O[j][k][l] = sum_i T[i][j][k][l] v[i] for this thread's row tx = j*3+k; a is relative to
 * T[0][j][k][0], c to O[j][k][0]. */
KAS_DEV void d_ttmul411_3_compute(KAS_BUF(real) a, KAS_BUF(real) b, KAS_BUF(real) c, int tx, int ty,
                                  int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
#pragma unroll
  for (int l = 0; l < 3; l++) {
    real acc = 0;
#pragma unroll
    for (int i = 0; i < 3; i++) acc += a[APIN0 + i * 27 + l] * b[APIN1 + i];
    c[APOUT + l] = acc;
  }
}
