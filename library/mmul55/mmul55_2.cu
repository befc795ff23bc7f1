/*
 * mmul55_2.cu — mmul55, implementation 2: one thread per row of the result.
 * 5 threads per element, thread tx computes row tx of C from row tx of A and all of B (Lakomý 2012,
 * Kód 4.2-4.4). Row-sized register buffers for A and C; B is read whole by each of the 5
 * threads. The strided loads are the thesis's cooperative copy.
 */

/* Input 0 (matrix5x5), coalesced: the block copies its E*25 contiguous floats as float4s
 * (thread lin takes float4s lin, lin+T, ...); a partial last block goes float by float and
 * zero-fills elements >= n. */
KAS_DEV void d_mmul55_2_load_0(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL55_2_BX * ty;
  const int threads = MMUL55_2_BX * MMUL55_2_BY;
  const int quads = MMUL55_2_BY * 25 / 4;
  const float *chunk = g + e0 * 25;
  if (e0 + MMUL55_2_BY <= n) {
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
          s[APLS + k * 4 * threads + b] = e0 + (size_t)(f / 25) < n ? chunk[f] : 0.0f;
        }
      }
    }
  }
}

/* Input 0 (matrix5x5), owner: each thread reads exactly row tx of A (5 floats), the offsets its
 * compute reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_mmul55_2_load_1(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const size_t at = e * 25 + (size_t)(tx*5); /* its first offset */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 5; k++)
    s[APLS + k] = live ? g[at + k] : 0.0f;
}

/* Input 1 (matrix5x5), coalesced: the block copies its E*25 contiguous floats as float4s
 * (thread lin takes float4s lin, lin+T, ...); a partial last block goes float by float and
 * zero-fills elements >= n. */
KAS_DEV void d_mmul55_2_load_2(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL55_2_BX * ty;
  const int threads = MMUL55_2_BX * MMUL55_2_BY;
  const int quads = MMUL55_2_BY * 25 / 4;
  const float *chunk = g + e0 * 25;
  if (e0 + MMUL55_2_BY <= n) {
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
          s[APLS + k * 4 * threads + b] = e0 + (size_t)(f / 25) < n ? chunk[f] : 0.0f;
        }
      }
    }
  }
}

/* Input 1 (matrix5x5), owner: each thread reads exactly all 25 floats of B, the offsets its
 * compute reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_mmul55_2_load_3(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const size_t at = e * 25;
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 25; k++)
    s[APLS + k] = live ? g[at + k] : 0.0f;
}

/* Output (matrix5x5), coalesced: the block writes its E*25 contiguous floats as float4s; a
 * partial last block goes float by float and writes no element >= n (but reads its whole
 * access set, which so does not depend on n). */
KAS_DEV void d_mmul55_2_save_0(KAS_BUF s, float *KAS_RESTRICT g, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + MMUL55_2_BX * ty;
  const int threads = MMUL55_2_BX * MMUL55_2_BY;
  const int quads = MMUL55_2_BY * 25 / 4;
  float *chunk = g + e0 * 25;
  if (e0 + MMUL55_2_BY <= n) {
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
          if (e0 + (size_t)(f / 25) < n) chunk[f] = v;
        }
      }
    }
  }
}

/* Output (matrix5x5), owner: each thread writes row tx of C (5 floats), the offsets its compute
 * wrote (the buffer may be in its registers); nothing for elements >= n. */
KAS_DEV void d_mmul55_2_save_1(KAS_BUF s, float *KAS_RESTRICT g, int tx, int ty, int tz,
                               size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const size_t at = e * 25 + (size_t)(tx*5); /* its first offset */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 5; k++) {
    const float v = s[APLS + k];
    if (live) g[at + k] = v;
  }
}

/* Row tx of C = (row tx of A) B; a and c are indexed relative to the row, b to the element. */
KAS_DEV void d_mmul55_2_compute(KAS_BUF a, KAS_BUF b, KAS_BUF c, int tx, int ty, int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
#pragma unroll
  for (int j = 0; j < 5; j++) {
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 5; k++) acc += a[APIN0 + k] * b[APIN1 + k * 5 + j];
    c[APOUT + j] = acc;
  }
}
