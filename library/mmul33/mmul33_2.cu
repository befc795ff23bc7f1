/*
 * mmul33_2.cu — mmul33, implementation 2: one thread per row of the result.
 * 3 threads per element, thread tx computes row tx of C from row tx of A and all of B (Lakomý 2012,
 * Kód 4.2-4.4). Row-sized register buffers for A and C; B is read whole by each of the 3
 * threads. The strided loads are the thesis's cooperative copy.
 */

/* Input 0 (matrix3x3), coalesced: the block copies its E*9 contiguous floats as float4s
 * (thread lin takes float4s lin, lin+T, ...); a partial last block goes float by float and
 * zero-fills elements >= n. */
KAS_DEV void d_mmul33_2_load_0(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL33_2_BX * ty;
  const int threads = MMUL33_2_BX * MMUL33_2_BY;
  const int quads = MMUL33_2_BY * 9 / 4;
  const float *chunk = g + e0 * 9;
  if (e0 + MMUL33_2_BY <= n) {
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

/* Input 0 (matrix3x3), owner: each thread reads exactly row tx of A (3 floats), the offsets its
 * compute reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_mmul33_2_load_1(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const size_t at = e * 9 + (size_t)(tx*3); /* its first offset */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k] = live ? g[at + k] : 0.0f;
}

/* Input 1 (matrix3x3), coalesced: the block copies its E*9 contiguous floats as float4s
 * (thread lin takes float4s lin, lin+T, ...); a partial last block goes float by float and
 * zero-fills elements >= n. */
KAS_DEV void d_mmul33_2_load_2(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL33_2_BX * ty;
  const int threads = MMUL33_2_BX * MMUL33_2_BY;
  const int quads = MMUL33_2_BY * 9 / 4;
  const float *chunk = g + e0 * 9;
  if (e0 + MMUL33_2_BY <= n) {
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

/* Input 1 (matrix3x3), owner: each thread reads exactly all 9 floats of B, the offsets its compute
 * reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_mmul33_2_load_3(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const size_t at = e * 9;
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 9; k++)
    s[APLS + k] = live ? g[at + k] : 0.0f;
}

/* Input 0 (matrix3x3), strided (Lakomý 2012, Kód 4.2): thread lin copies floats lin, lin+T, lin+2T,
 * ... of the block's contiguous chunk, one float at a time (coalesced, no shared-memory bank
 * conflicts); elements >= n are zero-filled. */
KAS_DEV void d_mmul33_2_load_4(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL33_2_BX * ty;
  const int threads = MMUL33_2_BX * MMUL33_2_BY;
  const int floats = MMUL33_2_BY * 9;
  const float *chunk = g + e0 * 9;
#pragma unroll
  for (int k = 0; k < (floats + threads - 1) / threads; k++) {
    const int f = lin + k * threads;
    if (f < floats) s[APLS + k * threads] = e0 + (size_t)(f / 9) < n ? chunk[f] : 0.0f;
  }
}

/* Input 1 (matrix3x3), strided (Lakomý 2012, Kód 4.2): thread lin copies floats lin, lin+T, lin+2T,
 * ... of the block's contiguous chunk, one float at a time (coalesced, no shared-memory bank
 * conflicts); elements >= n are zero-filled. */
KAS_DEV void d_mmul33_2_load_5(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL33_2_BX * ty;
  const int threads = MMUL33_2_BX * MMUL33_2_BY;
  const int floats = MMUL33_2_BY * 9;
  const float *chunk = g + e0 * 9;
#pragma unroll
  for (int k = 0; k < (floats + threads - 1) / threads; k++) {
    const int f = lin + k * threads;
    if (f < floats) s[APLS + k * threads] = e0 + (size_t)(f / 9) < n ? chunk[f] : 0.0f;
  }
}

/* Output (matrix3x3), coalesced: the block writes its E*9 contiguous floats as float4s; a
 * partial last block goes float by float and writes no element >= n (but reads its whole
 * access set, which so does not depend on n). */
KAS_DEV void d_mmul33_2_save_0(KAS_BUF s, float *KAS_RESTRICT g, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL33_2_BX * ty;
  const int threads = MMUL33_2_BX * MMUL33_2_BY;
  const int quads = MMUL33_2_BY * 9 / 4;
  float *chunk = g + e0 * 9;
  if (e0 + MMUL33_2_BY <= n) {
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

/* Output (matrix3x3), owner: each thread writes row tx of C (3 floats), the offsets its compute
 * wrote (the buffer may be in its registers); nothing for elements >= n. */
KAS_DEV void d_mmul33_2_save_1(KAS_BUF s, float *KAS_RESTRICT g, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const size_t at = e * 9 + (size_t)(tx*3); /* its first offset */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++) {
    const float v = s[APLS + k];
    if (live) g[at + k] = v;
  }
}

/* Row tx of C = (row tx of A) B; a and c are indexed relative to the row, b to the element. */
KAS_DEV void d_mmul33_2_compute(KAS_BUF a, KAS_BUF b, KAS_BUF c, int tx, int ty, int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
#pragma unroll
  for (int j = 0; j < 3; j++) {
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 3; k++) acc += a[APIN0 + k] * b[APIN1 + k * 3 + j];
    c[APOUT + j] = acc;
  }
}
