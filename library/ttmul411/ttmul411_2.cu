/*
 * ttmul411_2.cu — ttmul411, implementation 2: one thread per output entry.
 * 27 threads per element, thread tx = (j*3+k)*3+l computes O[j][k][l] from T[i][j][k][l] (i < 3;
 * offsets tx, tx+27, tx+54) and all of v. Its owner load of T is coalesced across the element
 * (27 consecutive threads read 27 consecutive floats, three times), so T can go straight into
 * registers. Measured standalone on an H200: about 90% of copy bandwidth with every buffer in
 * registers (E = 8); with T staged through shared memory much less, as each thread has only 3
 * floats of T to keep in flight.
 */

/* Input 0 (tensor3x3x3x3), coalesced: the block copies its E*81 contiguous floats as float4s
 * (thread lin takes float4s lin, lin+T, ...); a partial last block goes float by float and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul411_2_load_0(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL411_2_BX * ty;
  const int threads = TTMUL411_2_BX * TTMUL411_2_BY;
  const int quads = TTMUL411_2_BY * 81 / 4;
  const float *chunk = g + e0 * 81;
  if (e0 + TTMUL411_2_BY <= n) {
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

/* Input 0 (tensor3x3x3x3), owner: each thread reads exactly T[i][tx] for i < 3 (3 floats), the
 * offsets its compute reads, so that the buffer can live in its registers; zeros for elements >=
 * n. */
KAS_DEV void d_ttmul411_2_load_1(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const size_t at = e * 81 + (size_t)tx; /* its first offset */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k * 27] = live ? g[at + k * 27] : 0.0f;
}

/* Input 1 (vector3), coalesced: the block copies its E*3 contiguous floats as float4s
 * (thread lin takes float4s lin, lin+T, ...); a partial last block goes float by float and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul411_2_load_2(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL411_2_BX * ty;
  const int threads = TTMUL411_2_BX * TTMUL411_2_BY;
  const int quads = TTMUL411_2_BY * 3 / 4;
  const float *chunk = g + e0 * 3;
  if (e0 + TTMUL411_2_BY <= n) {
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
KAS_DEV void d_ttmul411_2_load_3(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
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
KAS_DEV void d_ttmul411_2_save_0(KAS_BUF s, float *KAS_RESTRICT g, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL411_2_BX * ty;
  const int threads = TTMUL411_2_BX * TTMUL411_2_BY;
  const int quads = TTMUL411_2_BY * 27 / 4;
  float *chunk = g + e0 * 27;
  if (e0 + TTMUL411_2_BY <= n) {
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

/* Output (tensor3x3x3), owner: each thread writes entry tx of O, the offsets its compute wrote
 * (the buffer may be in its registers); nothing for elements >= n. */
KAS_DEV void d_ttmul411_2_save_1(KAS_BUF s, float *KAS_RESTRICT g, int tx, int ty, int tz,
                                 size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const size_t at = e * 27 + (size_t)tx; /* its first offset */
  const bool live = e < n;
  const float v = s[APLS];
  if (live) g[at] = v;
}

/* O[tx] = sum_i T[i][tx] v[i]; a is relative to T[0][tx]. */
KAS_DEV void d_ttmul411_2_compute(KAS_BUF a, KAS_BUF b, KAS_BUF c, int tx, int ty, int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
  float acc = 0.0f;
#pragma unroll
  for (int i = 0; i < 3; i++) acc += a[APIN0 + i * 27] * b[APIN1 + i];
  c[APOUT] = acc;
}
