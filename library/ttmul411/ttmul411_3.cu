/*
 * ttmul411_3.cu — ttmul411, implementation 3: one thread per output row.
 * 9 threads per element, thread tx = j*3+k computes the row O[j][k][0..2] from T[i][j][k][0..2]
 * (i < 3) and v: a middle ground between the per-element and the per-entry mappings, with 9
 * floats of T per thread in three runs of 3. With T in registers (owner load) it is the fastest
 * ttmul411 measured standalone (about 100% of copy bandwidth on an H200), and its output pattern
 * is ttmul3212_3's input pattern.
 */

/* Input 0 (tensor3x3x3x3), coalesced: the block copies its E*81 contiguous floats as float4s
 * (thread lin takes float4s lin, lin+T, ...); a partial last block goes float by float and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul411_3_load_0(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL411_3_BX * ty;
  const int threads = TTMUL411_3_BX * TTMUL411_3_BY;
  const int quads = TTMUL411_3_BY * 81 / 4;
  const float *chunk = g + e0 * 81;
  if (e0 + TTMUL411_3_BY <= n) {
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
          s[APLS + k * 4 * threads + b] = e0 + (size_t)(f / 81) < n ? chunk[f] : 0.0f;
        }
      }
    }
  }
}

/* Input 0 (tensor3x3x3x3), owner: each thread reads exactly T[i][tx*3..tx*3+2] for i < 3 (9
 * floats), the offsets its compute reads, so that the buffer can live in its registers; zeros for
 * elements >= n. */
KAS_DEV void d_ttmul411_3_load_1(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const size_t at = e * 81 + (size_t)(tx*3); /* its first offset */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++) {
#pragma unroll
    for (int b = 0; b < 3; b++)
      s[APLS + k * 27 + b] = live ? g[at + k * 27 + b] : 0.0f;
  }
}

/* Input 1 (vector3), coalesced: the block copies its E*3 contiguous floats as float4s
 * (thread lin takes float4s lin, lin+T, ...); a partial last block goes float by float and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul411_3_load_2(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL411_3_BX * ty;
  const int threads = TTMUL411_3_BX * TTMUL411_3_BY;
  const int quads = TTMUL411_3_BY * 3 / 4;
  const float *chunk = g + e0 * 3;
  if (e0 + TTMUL411_3_BY <= n) {
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
          s[APLS + k * 4 * threads + b] = e0 + (size_t)(f / 3) < n ? chunk[f] : 0.0f;
        }
      }
    }
  }
}

/* Input 1 (vector3), owner: each thread reads exactly all 3 floats of v, the offsets its compute
 * reads, so that the buffer can live in its registers; zeros for elements >= n. */
KAS_DEV void d_ttmul411_3_load_3(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const size_t at = e * 3;
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k] = live ? g[at + k] : 0.0f;
}

/* Output (tensor3x3x3), coalesced: the block writes its E*27 contiguous floats as float4s; a
 * partial last block goes float by float and writes no element >= n (but reads its whole
 * access set, which so does not depend on n). */
KAS_DEV void d_ttmul411_3_save_0(KAS_BUF s, float *KAS_RESTRICT g, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL411_3_BX * ty;
  const int threads = TTMUL411_3_BX * TTMUL411_3_BY;
  const int quads = TTMUL411_3_BY * 27 / 4;
  float *chunk = g + e0 * 27;
  if (e0 + TTMUL411_3_BY <= n) {
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

/* Output (tensor3x3x3), owner: each thread writes row tx of O (3 floats), the offsets its compute
 * wrote (the buffer may be in its registers); nothing for elements >= n. */
KAS_DEV void d_ttmul411_3_save_1(KAS_BUF s, float *KAS_RESTRICT g, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const size_t at = e * 27 + (size_t)(tx*3); /* its first offset */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++) {
    const float v = s[APLS + k];
    if (live) g[at + k] = v;
  }
}

/* O[j][k][l] = sum_i T[i][j][k][l] v[i] for this thread's row tx = j*3+k; a is relative to
 * T[0][j][k][0], c to O[j][k][0]. */
KAS_DEV void d_ttmul411_3_compute(KAS_BUF a, KAS_BUF b, KAS_BUF c, int tx, int ty, int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
#pragma unroll
  for (int l = 0; l < 3; l++) {
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < 3; i++) acc += a[APIN0 + i * 27 + l] * b[APIN1 + i];
    c[APOUT + l] = acc;
  }
}
