/*
 * ttmul3212_1.cu — ttmul3212, implementation 1: one thread per element.
 * Each thread multiplies one whole tensor by its matrix along the last index; fuses with other
 * one-thread-per-element calls.
 */

/* Input 0 (tensor3x3x3), coalesced: the block copies its E*27 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul3212_1_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                  int tz, size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const int lin = tx;
  const int threads = TTMUL3212_1_BX;
  const int vecs = TTMUL3212_1_BX * 27 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL3212_1_BX <= n) {
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

/* Input 0 (tensor3x3x3), owner: each thread reads exactly its element's 27 reals of T, the
 * offsets its compute reads, so that the buffer can live in its registers; zeros for elements >=
 * n. */
KAS_DEV void d_ttmul3212_1_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                  int tz, size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const size_t e = e0 + (size_t)tx; /* this thread's element */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 27; k++)
    s[APLS + k] = live ? g[GIDX(e, k)] : 0;
}

/* Input 1 (matrix3x3), coalesced: the block copies its E*9 contiguous floats as vectors of W reals
 * (thread lin takes vectors of W reals lin, lin+T, ...); a partial last block goes real by real and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul3212_1_load_2(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                  int tz, size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const int lin = tx;
  const int threads = TTMUL3212_1_BX;
  const int vecs = TTMUL3212_1_BX * 9 / W;
  const real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL3212_1_BX <= n) {
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

/* Input 1 (matrix3x3), owner: each thread reads exactly its element's 9 reals of M, the offsets
 * its compute reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_ttmul3212_1_load_3(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                  int tz, size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const size_t e = e0 + (size_t)tx; /* this thread's element */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 9; k++)
    s[APLS + k] = live ? g[GIDX(e, k)] : 0;
}

/* Output (tensor3x3x3), coalesced: the block writes its E*27 contiguous floats as vectors of W reals; a
 * partial last block goes real by real and writes no element >= n (but reads its whole
 * access set, which so does not depend on n). */
KAS_DEV void d_ttmul3212_1_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                  size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const int lin = tx;
  const int threads = TTMUL3212_1_BX;
  const int vecs = TTMUL3212_1_BX * 27 / W;
  real *chunk = g + GIDX(e0, 0);
  if (e0 + TTMUL3212_1_BX <= n) {
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
KAS_DEV void d_ttmul3212_1_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
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

/* O[a][b][c] = sum_x T[a][b][x] M[x][c] for this thread's element (ab = a*3+b). */
KAS_DEV void d_ttmul3212_1_compute(KAS_BUF(real) a, KAS_BUF(real) b, KAS_BUF(real) c, int tx,
                                   int ty, int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
#pragma unroll
  for (int ab = 0; ab < 9; ab++) {
#pragma unroll
    for (int cc = 0; cc < 3; cc++) {
      real acc = 0;
#pragma unroll
      for (int x = 0; x < 3; x++) acc += a[APIN0 + ab * 3 + x] * b[APIN1 + x * 3 + cc];
      c[APOUT + ab * 3 + cc] = acc;
    }
  }
}
