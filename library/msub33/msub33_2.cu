/*
 * msub33_2.cu — msub33 (C = A - B), implementation 2:
 * one thread per entry; block BX = 9, BY = E.
 * It shares the 9 x E block and the per-thread patterns of mmul33_3 and madd33_2 (entries of a 3x3
 * matrix), so that fusions with them need no recomputed coordinates and may keep buffers in
 * registers. Each thread touches single floats, so its owner loads and saves are coalesced as they
 * are.
 * Loads: for every input a coalesced float4 copy of the block's batch (the fast path from global
 * memory) and an owner copy whose offsets equal the compute's (a register buffer).
 * Saves: coalesced (float4) and owner.  Layout, placeholders and tails: docs/library-format.md.
 */

/* Input 0 (matrix3x3), coalesced: the block's threads copy its E*9 floats as float4
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_msub33_2_load_0(const float *KAS_RESTRICT g, KAS_BUF s,
                               int tx, int ty, int tz, size_t e0, size_t n)
{
  const int threads = MSUB33_2_BX * MSUB33_2_BY * MSUB33_2_BZ;
  const int lin = tx + MSUB33_2_BX * (ty + MSUB33_2_BY * tz);
  const int quads = MSUB33_2_BY * 9 / 4; /* E is a multiple of 4, so this is exact */
  if (e0 + MSUB33_2_BY <= n) {
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

/* Input 0 (matrix3x3), owner: each thread copies the entry it computes (naturally coalesced). The
 * same offsets as the compute reads, so the buffer may live in registers; elements >= n read as 0.
 * */
KAS_DEV void d_msub33_2_load_1(const float *KAS_RESTRICT g, KAS_BUF s,
                               int tx, int ty, int tz, size_t e0, size_t n)
{
  (void)tz;
  s[APLS] = e0 + ty < n ? g[(e0 + ty) * 9 + tx] : 0.0f;
}

/* Input 1 (matrix3x3), coalesced: the block's threads copy its E*9 floats as float4
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_msub33_2_load_2(const float *KAS_RESTRICT g, KAS_BUF s,
                               int tx, int ty, int tz, size_t e0, size_t n)
{
  const int threads = MSUB33_2_BX * MSUB33_2_BY * MSUB33_2_BZ;
  const int lin = tx + MSUB33_2_BX * (ty + MSUB33_2_BY * tz);
  const int quads = MSUB33_2_BY * 9 / 4; /* E is a multiple of 4, so this is exact */
  if (e0 + MSUB33_2_BY <= n) {
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

/* Input 1 (matrix3x3), owner: each thread copies the entry it computes (naturally coalesced). The
 * same offsets as the compute reads, so the buffer may live in registers; elements >= n read as 0.
 * */
KAS_DEV void d_msub33_2_load_3(const float *KAS_RESTRICT g, KAS_BUF s,
                               int tx, int ty, int tz, size_t e0, size_t n)
{
  (void)tz;
  s[APLS] = e0 + ty < n ? g[(e0 + ty) * 9 + tx] : 0.0f;
}

/* C = A - B, one thread per entry. */
KAS_DEV void d_msub33_2_compute(KAS_BUF a, KAS_BUF b, KAS_BUF c, int tx, int ty, int tz)
{
  (void)tx; /* the placeholders use the coordinates only in shared placement */
  (void)ty;
  (void)tz;
  c[APOUT] = a[APIN0] - b[APIN1];
}

/* Result (matrix3x3), coalesced: the block's threads write its E*9 floats as float4
 * number q = lin + r*threads; the last, partial block writes scalars of elements < n only. */
KAS_DEV void d_msub33_2_save_0(KAS_BUF s, float *KAS_RESTRICT g,
                               int tx, int ty, int tz, size_t e0, size_t n)
{
  const int threads = MSUB33_2_BX * MSUB33_2_BY * MSUB33_2_BZ;
  const int lin = tx + MSUB33_2_BX * (ty + MSUB33_2_BY * tz);
  const int quads = MSUB33_2_BY * 9 / 4;
  if (e0 + MSUB33_2_BY <= n) {
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

/* Result (matrix3x3), owner: each thread writes the entry it computed (naturally coalesced),
 * straight from the compute's output (registers or shared); elements >= n are not written. */
KAS_DEV void d_msub33_2_save_1(KAS_BUF s, float *KAS_RESTRICT g,
                               int tx, int ty, int tz, size_t e0, size_t n)
{
  (void)tz;
  if (e0 + ty < n)
    g[(e0 + ty) * 9 + tx] = s[APLS];
}
