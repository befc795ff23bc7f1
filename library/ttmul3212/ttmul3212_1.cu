/*
 * ttmul3212_1.cu — ttmul3212, implementation 1: one thread per element.
 * Each thread multiplies one whole tensor by its matrix along the last index; fuses with other
 * one-thread-per-element calls.
 */

/* Input 0 (tensor3x3x3), coalesced: the block copies its E*27 contiguous floats as float4s
 * (thread lin takes float4s lin, lin+T, ...); a partial last block goes float by float and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul3212_1_load_0(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                  size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const int lin = tx;
  const int threads = TTMUL3212_1_BX;
  const int quads = TTMUL3212_1_BX * 27 / 4;
  const float *chunk = g + e0 * 27;
  if (e0 + TTMUL3212_1_BX <= n) {
#pragma unroll
    for (int k = 0; k < (quads + threads - 1) / threads; k++) {
      const int q = lin + k * threads;
      if (q < quads) {
        const float4 v = KAS_LOAD4(chunk, q);
        s[APLS + k * 4 * threads + 0] = v.x;
        s[APLS + k * 4 * threads + 1] = v.y;
        s[APLS + k * 4 * threads + 2] = v.z;
        s[APLS + k * 4 * threads + 3] = v.w;
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < (quads + threads - 1) / threads; k++) {
      const int q = lin + k * threads;
      if (q < quads) {
#pragma unroll
        for (int b = 0; b < 4; b++) {
          const int f = 4 * q + b; /* float index in the chunk */
          s[APLS + k * 4 * threads + b] = e0 + (size_t)(f / 27) < n ? chunk[f] : 0.0f;
        }
      }
    }
  }
}

/* Input 0 (tensor3x3x3), owner: each thread reads exactly its element's 27 floats of T, the
 * offsets its compute reads, so that the buffer can live in its registers; zeros for elements >=
 * n. */
KAS_DEV void d_ttmul3212_1_load_1(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                  size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const size_t e = e0 + (size_t)tx; /* this thread's element */
  const size_t at = e * 27;
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 27; k++)
    s[APLS + k] = live ? g[at + k] : 0.0f;
}

/* Input 1 (matrix3x3), coalesced: the block copies its E*9 contiguous floats as float4s
 * (thread lin takes float4s lin, lin+T, ...); a partial last block goes float by float and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul3212_1_load_2(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                  size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const int lin = tx;
  const int threads = TTMUL3212_1_BX;
  const int quads = TTMUL3212_1_BX * 9 / 4;
  const float *chunk = g + e0 * 9;
  if (e0 + TTMUL3212_1_BX <= n) {
#pragma unroll
    for (int k = 0; k < (quads + threads - 1) / threads; k++) {
      const int q = lin + k * threads;
      if (q < quads) {
        const float4 v = KAS_LOAD4(chunk, q);
        s[APLS + k * 4 * threads + 0] = v.x;
        s[APLS + k * 4 * threads + 1] = v.y;
        s[APLS + k * 4 * threads + 2] = v.z;
        s[APLS + k * 4 * threads + 3] = v.w;
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < (quads + threads - 1) / threads; k++) {
      const int q = lin + k * threads;
      if (q < quads) {
#pragma unroll
        for (int b = 0; b < 4; b++) {
          const int f = 4 * q + b; /* float index in the chunk */
          s[APLS + k * 4 * threads + b] = e0 + (size_t)(f / 9) < n ? chunk[f] : 0.0f;
        }
      }
    }
  }
}

/* Input 1 (matrix3x3), owner: each thread reads exactly its element's 9 floats of M, the offsets
 * its compute reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_ttmul3212_1_load_3(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                  size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const size_t e = e0 + (size_t)tx; /* this thread's element */
  const size_t at = e * 9;
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 9; k++)
    s[APLS + k] = live ? g[at + k] : 0.0f;
}

/* Output (tensor3x3x3), coalesced: the block writes its E*27 contiguous floats as float4s; a
 * partial last block goes float by float and writes no element >= n (but reads its whole
 * access set, which so does not depend on n). */
KAS_DEV void d_ttmul3212_1_save_0(KAS_BUF s, float *KAS_RESTRICT g, int tx, int ty, int tz,
                                  size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const int lin = tx;
  const int threads = TTMUL3212_1_BX;
  const int quads = TTMUL3212_1_BX * 27 / 4;
  float *chunk = g + e0 * 27;
  if (e0 + TTMUL3212_1_BX <= n) {
#pragma unroll
    for (int k = 0; k < (quads + threads - 1) / threads; k++) {
      const int q = lin + k * threads;
      if (q < quads) {
        float4 v;
        v.x = s[APLS + k * 4 * threads + 0];
        v.y = s[APLS + k * 4 * threads + 1];
        v.z = s[APLS + k * 4 * threads + 2];
        v.w = s[APLS + k * 4 * threads + 3];
        KAS_STORE4(chunk, q, v);
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < (quads + threads - 1) / threads; k++) {
      const int q = lin + k * threads;
      if (q < quads) {
#pragma unroll
        for (int b = 0; b < 4; b++) {
          const int f = 4 * q + b; /* float index in the chunk */
          const float v = s[APLS + k * 4 * threads + b];
          if (e0 + (size_t)(f / 27) < n) chunk[f] = v;
        }
      }
    }
  }
}

/* Output (tensor3x3x3), owner: each thread writes its element's 27 floats of O, the offsets its
 * compute wrote (the buffer may be in its registers); nothing for elements >= n. */
KAS_DEV void d_ttmul3212_1_save_1(KAS_BUF s, float *KAS_RESTRICT g, int tx, int ty, int tz,
                                  size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const size_t e = e0 + (size_t)tx; /* this thread's element */
  const size_t at = e * 27;
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 27; k++) {
    const float v = s[APLS + k];
    if (live) g[at + k] = v;
  }
}

/* O[a][b][c] = sum_x T[a][b][x] M[x][c] for this thread's element (ab = a*3+b). */
KAS_DEV void d_ttmul3212_1_compute(KAS_BUF a, KAS_BUF b, KAS_BUF c, int tx, int ty, int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
#pragma unroll
  for (int ab = 0; ab < 9; ab++) {
#pragma unroll
    for (int cc = 0; cc < 3; cc++) {
      float acc = 0.0f;
#pragma unroll
      for (int x = 0; x < 3; x++) acc += a[APIN0 + ab * 3 + x] * b[APIN1 + x * 3 + cc];
      c[APOUT + ab * 3 + cc] = acc;
    }
  }
}
