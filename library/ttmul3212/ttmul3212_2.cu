/*
 * ttmul3212_2.cu — ttmul3212, implementation 2: one thread per output entry.
 * 27 threads per element, thread tx = (a*3+b)*3+c computes O[a][b][c] from the row T[a][b][*]
 * and the column M[*][c]; the owner save writes an element's 27 entries with 27 consecutive
 * threads (coalesced). Its 27 threads per element fit ttmul411_2 in one block, but T is read by
 * rows, so ttmul411_2's output reaches it through shared memory.
 */

/* Input 0 (tensor3x3x3), coalesced: the block copies its E*27 contiguous floats as float4s
 * (thread lin takes float4s lin, lin+T, ...); a partial last block goes float by float and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul3212_2_load_0(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                  size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL3212_2_BX * ty;
  const int threads = TTMUL3212_2_BX * TTMUL3212_2_BY;
  const int quads = TTMUL3212_2_BY * 27 / 4;
  const float *chunk = g + e0 * 27;
  if (e0 + TTMUL3212_2_BY <= n) {
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

/* Input 0 (tensor3x3x3), owner: each thread reads exactly the row T[a][b][0..2] (3 floats), the
 * offsets its compute reads, so that the buffer can live in its registers; zeros for elements >=
 * n. */
KAS_DEV void d_ttmul3212_2_load_1(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                  size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const size_t at = e * 27 + (size_t)(tx/3*3); /* its first offset */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k] = live ? g[at + k] : 0.0f;
}

/* Input 1 (matrix3x3), coalesced: the block copies its E*9 contiguous floats as float4s
 * (thread lin takes float4s lin, lin+T, ...); a partial last block goes float by float and
 * zero-fills elements >= n. */
KAS_DEV void d_ttmul3212_2_load_2(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                  size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL3212_2_BX * ty;
  const int threads = TTMUL3212_2_BX * TTMUL3212_2_BY;
  const int quads = TTMUL3212_2_BY * 9 / 4;
  const float *chunk = g + e0 * 9;
  if (e0 + TTMUL3212_2_BY <= n) {
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

/* Input 1 (matrix3x3), owner: each thread reads exactly the column M[0..2][c] (3 floats), the
 * offsets its compute reads, so that the buffer can live in its registers; zeros for elements >=
 * n. */
KAS_DEV void d_ttmul3212_2_load_3(const float *KAS_RESTRICT g, KAS_BUF s, int tx, int ty, int tz,
                                  size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const size_t at = e * 9 + (size_t)(tx%3); /* its first offset */
  const bool live = e < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k * 3] = live ? g[at + k * 3] : 0.0f;
}

/* Output (tensor3x3x3), coalesced: the block writes its E*27 contiguous floats as float4s; a
 * partial last block goes float by float and writes no element >= n (but reads its whole
 * access set, which so does not depend on n). */
KAS_DEV void d_ttmul3212_2_save_0(KAS_BUF s, float *KAS_RESTRICT g, int tx, int ty, int tz,
                                  size_t e0, size_t n) {
  (void)tz;
  const int lin = tx + TTMUL3212_2_BX * ty;
  const int threads = TTMUL3212_2_BX * TTMUL3212_2_BY;
  const int quads = TTMUL3212_2_BY * 27 / 4;
  float *chunk = g + e0 * 27;
  if (e0 + TTMUL3212_2_BY <= n) {
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
KAS_DEV void d_ttmul3212_2_save_1(KAS_BUF s, float *KAS_RESTRICT g, int tx, int ty, int tz,
                                  size_t e0, size_t n) {
  (void)tz;
  const size_t e = e0 + (size_t)ty; /* this thread's element */
  const size_t at = e * 27 + (size_t)tx; /* its first offset */
  const bool live = e < n;
  const float v = s[APLS];
  if (live) g[at] = v;
}

/* O[a][b][c] = sum_x T[a][b][x] M[x][c] for tx = (a*3+b)*3+c; a is relative to T[a][b][0], b to
 * M[0][c]. */
KAS_DEV void d_ttmul3212_2_compute(KAS_BUF a, KAS_BUF b, KAS_BUF c, int tx, int ty, int tz) {
  (void)tx; /* the thread's position enters only through APIN0/APIN1/APOUT */
  (void)ty;
  (void)tz;
  float acc = 0.0f;
#pragma unroll
  for (int x = 0; x < 3; x++) acc += a[APIN0 + x] * b[APIN1 + x * 3];
  c[APOUT] = acc;
}
