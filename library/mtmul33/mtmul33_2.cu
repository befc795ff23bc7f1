/*
 * mtmul33_2.cu — mtmul33 (C = A^T B), implementation 2:
 * one thread per row of the result; block BX = 3, BY = E.
 * Thread tx computes row tx of C from column tx of A and all of B, as mmul33_2 computes a row of
 * AB: its 3 x E block and output rows are those of mmul33_2, madd33_3 and msub33_3, so that a
 * chain such as F^T F - I keeps the product in registers. The strided loads are the thesis's
 * cooperative copy, as in mmul33_2.
 * Loads: for every input a coalesced float4 copy of the block's batch, an owner copy whose offsets
 * equal the compute's (a register buffer) and a strided copy.
 * Saves: coalesced (float4) and owner.  Layout, placeholders and tails: docs/library-format.md.
 */

/* Input 0 (matrix3x3), coalesced: the block's threads copy its E*9 floats as float4
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_mtmul33_2_load_0(const float *KAS_RESTRICT g, KAS_BUF s,
                                int tx, int ty, int tz, size_t e0, size_t n)
{
  const int threads = MTMUL33_2_BX * MTMUL33_2_BY * MTMUL33_2_BZ;
  const int lin = tx + MTMUL33_2_BX * (ty + MTMUL33_2_BY * tz);
  const int quads = MTMUL33_2_BY * 9 / 4; /* E is a multiple of 4, so this is exact */
  if (e0 + MTMUL33_2_BY <= n) {
#pragma unroll
    for (int r = 0; r < (quads + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < quads) {
        /* e0 * 9 is a multiple of 4 floats: the float4 is 16-byte aligned */
        const float4 v = KAS_LOAD4(g, e0 * 9 / 4 + (size_t)q);
        s[APLS + r * 4 * threads + 0] = v.x;
        s[APLS + r * 4 * threads + 1] = v.y;
        s[APLS + r * 4 * threads + 2] = v.z;
        s[APLS + r * 4 * threads + 3] = v.w;
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 9 : 0; /* floats of the chunk that exist */
#pragma unroll
    for (int r = 0; r < (quads + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < quads) {
#pragma unroll
        for (int k = 0; k < 4; k++) {
          const size_t off = 4 * (size_t)q + k;
          s[APLS + r * 4 * threads + k] = off < valid ? g[e0 * 9 + off] : 0.0f;
        }
      }
    }
  }
}

/* Input 0 (matrix3x3), owner: each thread copies column tx of A, the row tx of A^T it multiplies.
 * The same offsets as the compute reads, so the buffer may live in registers; elements >= n read
 * as 0. */
KAS_DEV void d_mtmul33_2_load_1(const float *KAS_RESTRICT g, KAS_BUF s,
                                int tx, int ty, int tz, size_t e0, size_t n)
{
  (void)tz;
  const bool valid = e0 + ty < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k * 3] = valid ? g[(e0 + ty) * 9 + tx + k * 3] : 0.0f;
}

/* Input 1 (matrix3x3), coalesced: the block's threads copy its E*9 floats as float4
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_mtmul33_2_load_2(const float *KAS_RESTRICT g, KAS_BUF s,
                                int tx, int ty, int tz, size_t e0, size_t n)
{
  const int threads = MTMUL33_2_BX * MTMUL33_2_BY * MTMUL33_2_BZ;
  const int lin = tx + MTMUL33_2_BX * (ty + MTMUL33_2_BY * tz);
  const int quads = MTMUL33_2_BY * 9 / 4; /* E is a multiple of 4, so this is exact */
  if (e0 + MTMUL33_2_BY <= n) {
#pragma unroll
    for (int r = 0; r < (quads + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < quads) {
        /* e0 * 9 is a multiple of 4 floats: the float4 is 16-byte aligned */
        const float4 v = KAS_LOAD4(g, e0 * 9 / 4 + (size_t)q);
        s[APLS + r * 4 * threads + 0] = v.x;
        s[APLS + r * 4 * threads + 1] = v.y;
        s[APLS + r * 4 * threads + 2] = v.z;
        s[APLS + r * 4 * threads + 3] = v.w;
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 9 : 0; /* floats of the chunk that exist */
#pragma unroll
    for (int r = 0; r < (quads + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < quads) {
#pragma unroll
        for (int k = 0; k < 4; k++) {
          const size_t off = 4 * (size_t)q + k;
          s[APLS + r * 4 * threads + k] = off < valid ? g[e0 * 9 + off] : 0.0f;
        }
      }
    }
  }
}

/* Input 1 (matrix3x3), owner: each of the element's threads copies all of it (every one of them
 * needs it whole). The same offsets as the compute reads, so the buffer may live in registers;
 * elements >= n read as 0. */
KAS_DEV void d_mtmul33_2_load_3(const float *KAS_RESTRICT g, KAS_BUF s,
                                int tx, int ty, int tz, size_t e0, size_t n)
{
  (void)tx;
  (void)tz;
  const bool valid = e0 + ty < n;
#pragma unroll
  for (int k = 0; k < 9; k++)
    s[APLS + k] = valid ? g[(e0 + ty) * 9 + k] : 0.0f;
}

/* Input 0 (matrix3x3), strided (Lakomý 2012, Kód 4.2): thread lin copies floats lin, lin+T,
 * lin+2T, ... of the block's contiguous chunk, one float at a time (coalesced, no
 * shared-memory bank conflicts); elements >= n are zero-filled. */
KAS_DEV void d_mtmul33_2_load_4(const float *KAS_RESTRICT g, KAS_BUF s,
                                int tx, int ty, int tz, size_t e0, size_t n)
{
  (void)tz;
  const int lin = tx + MTMUL33_2_BX * ty;
  const int threads = MTMUL33_2_BX * MTMUL33_2_BY;
  const int floats = MTMUL33_2_BY * 9;
  const float *chunk = g + e0 * 9;
#pragma unroll
  for (int k = 0; k < (floats + threads - 1) / threads; k++) {
    const int f = lin + k * threads;
    if (f < floats) s[APLS + k * threads] = e0 + (size_t)(f / 9) < n ? chunk[f] : 0.0f;
  }
}

/* Input 1 (matrix3x3), strided (Lakomý 2012, Kód 4.2): thread lin copies floats lin, lin+T,
 * lin+2T, ... of the block's contiguous chunk, one float at a time (coalesced, no
 * shared-memory bank conflicts); elements >= n are zero-filled. */
KAS_DEV void d_mtmul33_2_load_5(const float *KAS_RESTRICT g, KAS_BUF s,
                                int tx, int ty, int tz, size_t e0, size_t n)
{
  (void)tz;
  const int lin = tx + MTMUL33_2_BX * ty;
  const int threads = MTMUL33_2_BX * MTMUL33_2_BY;
  const int floats = MTMUL33_2_BY * 9;
  const float *chunk = g + e0 * 9;
#pragma unroll
  for (int k = 0; k < (floats + threads - 1) / threads; k++) {
    const int f = lin + k * threads;
    if (f < floats) s[APLS + k * threads] = e0 + (size_t)(f / 9) < n ? chunk[f] : 0.0f;
  }
}

/* Row tx of C = (column tx of A)^T B; a is relative to the column, b to the element. */
KAS_DEV void d_mtmul33_2_compute(KAS_BUF a, KAS_BUF b, KAS_BUF c, int tx, int ty, int tz)
{
  (void)tx; /* the placeholders use the coordinates only in shared placement */
  (void)ty;
  (void)tz;
#pragma unroll
  for (int j = 0; j < 3; j++) {
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 3; k++) acc += a[APIN0 + k * 3] * b[APIN1 + k * 3 + j];
    c[APOUT + j] = acc;
  }
}

/* Result (matrix3x3), coalesced: the block's threads write its E*9 floats as float4
 * number q = lin + r*threads; the last, partial block writes scalars of elements < n only. */
KAS_DEV void d_mtmul33_2_save_0(KAS_BUF s, float *KAS_RESTRICT g,
                                int tx, int ty, int tz, size_t e0, size_t n)
{
  const int threads = MTMUL33_2_BX * MTMUL33_2_BY * MTMUL33_2_BZ;
  const int lin = tx + MTMUL33_2_BX * (ty + MTMUL33_2_BY * tz);
  const int quads = MTMUL33_2_BY * 9 / 4;
  if (e0 + MTMUL33_2_BY <= n) {
#pragma unroll
    for (int r = 0; r < (quads + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < quads) {
        float4 v;
        v.x = s[APLS + r * 4 * threads + 0];
        v.y = s[APLS + r * 4 * threads + 1];
        v.z = s[APLS + r * 4 * threads + 2];
        v.w = s[APLS + r * 4 * threads + 3];
        KAS_STORE4(g, e0 * 9 / 4 + (size_t)q, v);
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 9 : 0;
#pragma unroll
    for (int r = 0; r < (quads + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < quads) {
#pragma unroll
        for (int k = 0; k < 4; k++) {
          /* read unconditionally, so the read set does not depend on n */
          const float v = s[APLS + r * 4 * threads + k];
          const size_t off = 4 * (size_t)q + k;
          if (off < valid) g[e0 * 9 + off] = v;
        }
      }
    }
  }
}

/* Result (matrix3x3), owner: each thread writes the row it computed, straight from the compute's
 * output (registers or shared); elements >= n are not written. */
KAS_DEV void d_mtmul33_2_save_1(KAS_BUF s, float *KAS_RESTRICT g,
                                int tx, int ty, int tz, size_t e0, size_t n)
{
  (void)tz;
  if (e0 + ty < n) {
#pragma unroll
    for (int k = 0; k < 3; k++)
      g[(e0 + ty) * 9 + tx*3 + k] = s[APLS + k];
  }
}
