/*
 * mmul33_1.cu — mmul33, implementation 1: one thread per element.
 * Each thread multiplies one whole pair of 3x3 matrices: the simplest mapping, with the most
 * work per thread and 27 floats of register or shared buffer per thread. It fuses with any other
 * one-thread-per-element call without recomputing coordinates.
 */

/* Input 0 (matrix3x3), coalesced: the block copies its E*9 contiguous floats as float4s
 * (thread lin takes float4s lin, lin+T, ...); a partial last block goes float by float and
 * zero-fills elements >= n. */
KAS_DEV void d_mmul33_1_load_0(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const int lin = tx;
  const int threads = MMUL33_1_BX;
  const int quads = MMUL33_1_BX * 9 / 4;
  const float *chunk = g + e0 * 9;
  if (e0 + MMUL33_1_BX <= n) {
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

/* Input 0 (matrix3x3), owner: each thread reads exactly its element's 9 floats of A, the offsets
 * its compute reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_mmul33_1_load_1(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
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

/* Input 1 (matrix3x3), coalesced: the block copies its E*9 contiguous floats as float4s
 * (thread lin takes float4s lin, lin+T, ...); a partial last block goes float by float and
 * zero-fills elements >= n. */
KAS_DEV void d_mmul33_1_load_2(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const int lin = tx;
  const int threads = MMUL33_1_BX;
  const int quads = MMUL33_1_BX * 9 / 4;
  const float *chunk = g + e0 * 9;
  if (e0 + MMUL33_1_BX <= n) {
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

/* Input 1 (matrix3x3), owner: each thread reads exactly its element's 9 floats of B, the offsets
 * its compute reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_mmul33_1_load_3(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
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

/* Output (matrix3x3), coalesced: the block writes its E*9 contiguous floats as float4s; a
 * partial last block goes float by float and writes no element >= n (but reads its whole
 * access set, which so does not depend on n). */
KAS_DEV void d_mmul33_1_save_0(KAS_BUF s, float *KAS_RESTRICT g, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const int lin = tx;
  const int threads = MMUL33_1_BX;
  const int quads = MMUL33_1_BX * 9 / 4;
  float *chunk = g + e0 * 9;
  if (e0 + MMUL33_1_BX <= n) {
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
          if (e0 + (size_t)(f / 9) < n) chunk[f] = v;
        }
      }
    }
  }
}

/* Output (matrix3x3), owner: each thread writes its element's 9 floats of C, the offsets its
 * compute wrote (the buffer may be in its registers); nothing for elements >= n. */
KAS_DEV void d_mmul33_1_save_1(KAS_BUF s, float *KAS_RESTRICT g, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)ty;
  (void)tz;
  const size_t e = e0 + (size_t)tx; /* this thread's element */
  const size_t at = e * 9;
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 9; k++) {
    const float v = s[APLS + k];
    if (live) g[at + k] = v;
  }
}

/* C = A B for this thread's element. */
KAS_DEV void d_mmul33_1_compute(KAS_BUF a, KAS_BUF b, KAS_BUF c, int tx, int ty, int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
#pragma unroll
  for (int i = 0; i < 3; i++) {
#pragma unroll
    for (int j = 0; j < 3; j++) {
      float acc = 0.0f;
#pragma unroll
      for (int k = 0; k < 3; k++) acc += a[APIN0 + i * 3 + k] * b[APIN1 + k * 3 + j];
      c[APOUT + i * 3 + j] = acc;
    }
  }
}
