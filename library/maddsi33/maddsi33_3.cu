/*
 * maddsi33_3.cu — maddsi33 (C = A + s I), implementation 3:
 * one thread per row; block BX = 3, BY = E.
 * It shares the 3 x E block and the per-thread patterns of mmul33_2, madd33_3 and mvmul33_2 (rows
 * of a 3x3 matrix), so that fusions with them need no recomputed coordinates and may keep buffers
 * in registers. With vmvdot3 it adds the geometric part (dN . S dM) I to a stiffness block.
 * Loads: for every input a coalesced float4 copy of the block's batch (the fast path from global
 * memory) and an owner copy whose offsets equal the compute's (a register buffer).
 * Saves: coalesced (float4) and owner.  Layout, placeholders and tails: docs/library-format.md.
 */

/* Input 0 (matrix3x3), coalesced: the block's threads copy its E*9 floats as float4
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_maddsi33_3_load_0(const float *KAS_RESTRICT g, KAS_BUF s,
                                 int tx, int ty, int tz, size_t e0, size_t n)
{
  const int threads = MADDSI33_3_BX * MADDSI33_3_BY * MADDSI33_3_BZ;
  const int lin = tx + MADDSI33_3_BX * (ty + MADDSI33_3_BY * tz);
  const int quads = MADDSI33_3_BY * 9 / 4; /* E is a multiple of 4, so this is exact */
  if (e0 + MADDSI33_3_BY <= n) {
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

/* Input 0 (matrix3x3), owner: each thread copies the row it computes. The same offsets as the
 * compute reads, so the buffer may live in registers; elements >= n read as 0. */
KAS_DEV void d_maddsi33_3_load_1(const float *KAS_RESTRICT g, KAS_BUF s,
                                 int tx, int ty, int tz, size_t e0, size_t n)
{
  (void)tz;
  const bool valid = e0 + ty < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k] = valid ? g[(e0 + ty) * 9 + tx*3 + k] : 0.0f;
}

/* Input 1 (scalar), coalesced: the block's threads copy its E*1 floats as float4
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_maddsi33_3_load_2(const float *KAS_RESTRICT g, KAS_BUF s,
                                 int tx, int ty, int tz, size_t e0, size_t n)
{
  const int threads = MADDSI33_3_BX * MADDSI33_3_BY * MADDSI33_3_BZ;
  const int lin = tx + MADDSI33_3_BX * (ty + MADDSI33_3_BY * tz);
  const int quads = MADDSI33_3_BY * 1 / 4; /* E is a multiple of 4, so this is exact */
  if (e0 + MADDSI33_3_BY <= n) {
#pragma unroll
    for (int r = 0; r < (quads + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < quads) {
        /* e0 * 1 is a multiple of 4 floats: the float4 is 16-byte aligned */
        const float4 v = KAS_LOAD4(g, e0 * 1 / 4 + (size_t)q);
        s[APLS + r * 4 * threads + 0] = v.x;
        s[APLS + r * 4 * threads + 1] = v.y;
        s[APLS + r * 4 * threads + 2] = v.z;
        s[APLS + r * 4 * threads + 3] = v.w;
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 1 : 0; /* floats of the chunk that exist */
#pragma unroll
    for (int r = 0; r < (quads + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < quads) {
#pragma unroll
        for (int k = 0; k < 4; k++) {
          const size_t off = 4 * (size_t)q + k;
          s[APLS + r * 4 * threads + k] = off < valid ? g[e0 * 1 + off] : 0.0f;
        }
      }
    }
  }
}

/* Input 1 (scalar), owner: each of the element's threads copies its scalar. The same offsets as
 * the compute reads, so the buffer may live in registers; elements >= n read as 0. */
KAS_DEV void d_maddsi33_3_load_3(const float *KAS_RESTRICT g, KAS_BUF s,
                                 int tx, int ty, int tz, size_t e0, size_t n)
{
  (void)tx;
  (void)tz;
  s[APLS] = e0 + ty < n ? g[e0 + ty] : 0.0f;
}

/* C = A + s I, one thread per row; row tx holds the diagonal entry k == tx. */
KAS_DEV void d_maddsi33_3_compute(KAS_BUF a, KAS_BUF s, KAS_BUF c, int tx, int ty, int tz)
{
  (void)ty; /* tx picks this thread's part; ty, tz enter only through the placeholders */
  (void)tz;
  const float shift = s[APIN1];
#pragma unroll
  for (int k = 0; k < 3; k++)
    c[APOUT + k] = k == tx ? a[APIN0 + k] + shift : a[APIN0 + k];
}

/* Result (matrix3x3), coalesced: the block's threads write its E*9 floats as float4
 * number q = lin + r*threads; the last, partial block writes scalars of elements < n only. */
KAS_DEV void d_maddsi33_3_save_0(KAS_BUF s, float *KAS_RESTRICT g,
                                 int tx, int ty, int tz, size_t e0, size_t n)
{
  const int threads = MADDSI33_3_BX * MADDSI33_3_BY * MADDSI33_3_BZ;
  const int lin = tx + MADDSI33_3_BX * (ty + MADDSI33_3_BY * tz);
  const int quads = MADDSI33_3_BY * 9 / 4;
  if (e0 + MADDSI33_3_BY <= n) {
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
KAS_DEV void d_maddsi33_3_save_1(KAS_BUF s, float *KAS_RESTRICT g,
                                 int tx, int ty, int tz, size_t e0, size_t n)
{
  (void)tz;
  if (e0 + ty < n) {
#pragma unroll
    for (int k = 0; k < 3; k++)
      g[(e0 + ty) * 9 + tx*3 + k] = s[APLS + k];
  }
}
