/*
 * stvk_kmat33_2.cu — stvk_kmat33 (K = lambda a (x) b + mu b (x) a + mu (dN . dM) F F^T),
 * implementation 2:
 * one thread per row of the result; block BX = 3, BY = E.
 * Thread tx computes row tx of K; each thread forms a = F dN and b = F dM whole (all of F). It
 * shares the 3 x E block and the per-thread patterns of mmul33_2, madd33_3 and mvmul33_2 (rows of
 * a 3x3 matrix), so that fusions with them need no recomputed coordinates and may keep buffers in
 * registers. K_NM = d f_N / d u_M of a total-Lagrangian St. Venant-Kirchhoff element, f_N = V F S
 * dN, is V (this + (dN . S dM) I): the geometric part is vmvdot3 + maddsi33.
 * Loads: for every input a coalesced vector copy of the block's batch (the fast path from global
 * memory) and an owner copy whose offsets equal the compute's (a register buffer).
 * Saves: coalesced (vectors) and owner.  Layout, placeholders and tails: docs/library-format.md.
 */

/* Input 0 (matrix3x3), coalesced: the block's threads copy its E*9 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_stvk_kmat33_2_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                    int tz, size_t e0, size_t n) {
  const int threads = STVK_KMAT33_2_BX * STVK_KMAT33_2_BY * STVK_KMAT33_2_BZ;
  const int lin = tx + STVK_KMAT33_2_BX * (ty + STVK_KMAT33_2_BY * tz);
  const int vecs = STVK_KMAT33_2_BY * 9 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + STVK_KMAT33_2_BY <= n) {
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
        /* e0 * 9 is a multiple of W reals: the vector is aligned where g is */
        real v[W];
        KAS_LOADV(v, g, GIDX(e0, 0) / W + (size_t)q);
#pragma unroll
        for (int b = 0; b < W; b++) s[APLS + r * W * threads + b] = v[b];
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 9 : 0; /* reals of the chunk that exist */
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
#pragma unroll
        for (int k = 0; k < W; k++) {
          const size_t off = W * (size_t)q + k;
          s[APLS + r * W * threads + k] = off < valid ? g[GIDX(e0, 0) + off] : 0;
        }
      }
    }
  }
}

/* Input 0 (matrix3x3), owner: each of the element's threads copies all of it (every one of them
 * needs it whole). The same offsets as the compute reads, so the buffer may live in registers;
 * elements >= n read as 0. */
KAS_DEV void d_stvk_kmat33_2_load_1(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                    int tz, size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  const bool valid = e0 + ty < n;
#pragma unroll
  for (int k = 0; k < 9; k++)
    s[APLS + k] = valid ? g[GIDX(e0 + ty, k)] : 0;
}

/* Input 1 (vector3), coalesced: the block's threads copy its E*3 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_stvk_kmat33_2_load_2(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                    int tz, size_t e0, size_t n) {
  const int threads = STVK_KMAT33_2_BX * STVK_KMAT33_2_BY * STVK_KMAT33_2_BZ;
  const int lin = tx + STVK_KMAT33_2_BX * (ty + STVK_KMAT33_2_BY * tz);
  const int vecs = STVK_KMAT33_2_BY * 3 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + STVK_KMAT33_2_BY <= n) {
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
        /* e0 * 3 is a multiple of W reals: the vector is aligned where g is */
        real v[W];
        KAS_LOADV(v, g, GIDX(e0, 0) / W + (size_t)q);
#pragma unroll
        for (int b = 0; b < W; b++) s[APLS + r * W * threads + b] = v[b];
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 3 : 0; /* reals of the chunk that exist */
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
#pragma unroll
        for (int k = 0; k < W; k++) {
          const size_t off = W * (size_t)q + k;
          s[APLS + r * W * threads + k] = off < valid ? g[GIDX(e0, 0) + off] : 0;
        }
      }
    }
  }
}

/* Input 1 (vector3), owner: each of the element's threads copies all of it (every one of them
 * needs it whole). The same offsets as the compute reads, so the buffer may live in registers;
 * elements >= n read as 0. */
KAS_DEV void d_stvk_kmat33_2_load_3(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                    int tz, size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  const bool valid = e0 + ty < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k] = valid ? g[GIDX(e0 + ty, k)] : 0;
}

/* Input 2 (vector3), coalesced: the block's threads copy its E*3 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_stvk_kmat33_2_load_4(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                    int tz, size_t e0, size_t n) {
  const int threads = STVK_KMAT33_2_BX * STVK_KMAT33_2_BY * STVK_KMAT33_2_BZ;
  const int lin = tx + STVK_KMAT33_2_BX * (ty + STVK_KMAT33_2_BY * tz);
  const int vecs = STVK_KMAT33_2_BY * 3 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + STVK_KMAT33_2_BY <= n) {
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
        /* e0 * 3 is a multiple of W reals: the vector is aligned where g is */
        real v[W];
        KAS_LOADV(v, g, GIDX(e0, 0) / W + (size_t)q);
#pragma unroll
        for (int b = 0; b < W; b++) s[APLS + r * W * threads + b] = v[b];
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 3 : 0; /* reals of the chunk that exist */
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
#pragma unroll
        for (int k = 0; k < W; k++) {
          const size_t off = W * (size_t)q + k;
          s[APLS + r * W * threads + k] = off < valid ? g[GIDX(e0, 0) + off] : 0;
        }
      }
    }
  }
}

/* Input 2 (vector3), owner: each of the element's threads copies all of it (every one of them
 * needs it whole). The same offsets as the compute reads, so the buffer may live in registers;
 * elements >= n read as 0. */
KAS_DEV void d_stvk_kmat33_2_load_5(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                    int tz, size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  const bool valid = e0 + ty < n;
#pragma unroll
  for (int k = 0; k < 3; k++)
    s[APLS + k] = valid ? g[GIDX(e0 + ty, k)] : 0;
}

/* Input 3 (scalar), coalesced: the block's threads copy its E*1 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_stvk_kmat33_2_load_6(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                    int tz, size_t e0, size_t n) {
  const int threads = STVK_KMAT33_2_BX * STVK_KMAT33_2_BY * STVK_KMAT33_2_BZ;
  const int lin = tx + STVK_KMAT33_2_BX * (ty + STVK_KMAT33_2_BY * tz);
  const int vecs = STVK_KMAT33_2_BY * 1 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + STVK_KMAT33_2_BY <= n) {
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
        /* e0 * 1 is a multiple of W reals: the vector is aligned where g is */
        real v[W];
        KAS_LOADV(v, g, GIDX(e0, 0) / W + (size_t)q);
#pragma unroll
        for (int b = 0; b < W; b++) s[APLS + r * W * threads + b] = v[b];
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 1 : 0; /* reals of the chunk that exist */
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
#pragma unroll
        for (int k = 0; k < W; k++) {
          const size_t off = W * (size_t)q + k;
          s[APLS + r * W * threads + k] = off < valid ? g[GIDX(e0, 0) + off] : 0;
        }
      }
    }
  }
}

/* Input 3 (scalar), owner: each of the element's threads copies its scalar. The same offsets as
 * the compute reads, so the buffer may live in registers; elements >= n read as 0. */
KAS_DEV void d_stvk_kmat33_2_load_7(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                    int tz, size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  s[APLS] = e0 + ty < n ? g[GIDX(e0 + ty, 0)] : 0;
}

/* Input 4 (scalar), coalesced: the block's threads copy its E*1 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block takes the scalar path, zero-filling
 * elements >= n.  Shared memory only (noreg 1): the pattern is no compute's. */
KAS_DEV void d_stvk_kmat33_2_load_8(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                    int tz, size_t e0, size_t n) {
  const int threads = STVK_KMAT33_2_BX * STVK_KMAT33_2_BY * STVK_KMAT33_2_BZ;
  const int lin = tx + STVK_KMAT33_2_BX * (ty + STVK_KMAT33_2_BY * tz);
  const int vecs = STVK_KMAT33_2_BY * 1 / W; /* E is a multiple of 4, so this is exact */
  if (e0 + STVK_KMAT33_2_BY <= n) {
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
        /* e0 * 1 is a multiple of W reals: the vector is aligned where g is */
        real v[W];
        KAS_LOADV(v, g, GIDX(e0, 0) / W + (size_t)q);
#pragma unroll
        for (int b = 0; b < W; b++) s[APLS + r * W * threads + b] = v[b];
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 1 : 0; /* reals of the chunk that exist */
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
#pragma unroll
        for (int k = 0; k < W; k++) {
          const size_t off = W * (size_t)q + k;
          s[APLS + r * W * threads + k] = off < valid ? g[GIDX(e0, 0) + off] : 0;
        }
      }
    }
  }
}

/* Input 4 (scalar), owner: each of the element's threads copies its scalar. The same offsets as
 * the compute reads, so the buffer may live in registers; elements >= n read as 0. */
KAS_DEV void d_stvk_kmat33_2_load_9(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,
                                    int tz, size_t e0, size_t n) {
  (void)tx;
  (void)tz;
  s[APLS] = e0 + ty < n ? g[GIDX(e0 + ty, 0)] : 0;
}

/* Row tx of K = lambda a (x) b + mu b (x) a + mu (dN . dM) F F^T; f, dn, dm are relative to the
 * element, kmat to the row. */
KAS_DEV void d_stvk_kmat33_2_compute(KAS_BUF(real) f, KAS_BUF(real) dn, KAS_BUF(real) dm,
                                     KAS_BUF(real) lambda, KAS_BUF(real) mu, KAS_BUF(real) kmat,
                                     int tx, int ty, int tz) {
  (void)ty; /* tx picks this thread's part; ty, tz enter only through the placeholders */
  (void)tz;
  real fv[9];
#pragma unroll
  for (int k = 0; k < 9; k++) fv[k] = f[APIN0 + k];
  real a[3], b[3]; /* a = F dN, b = F dM */
  real dd = 0;   /* dN . dM */
#pragma unroll
  for (int i = 0; i < 3; i++) {
    a[i] = 0;
    b[i] = 0;
#pragma unroll
    for (int k = 0; k < 3; k++) {
      a[i] += fv[i * 3 + k] * dn[APIN1 + k];
      b[i] += fv[i * 3 + k] * dm[APIN2 + k];
    }
    dd += dn[APIN1 + i] * dm[APIN2 + i];
  }
  const real lam = lambda[APIN3], shear = mu[APIN4], mudd = shear * dd;
  /* Row tx of F, a[tx] and b[tx], picked by selects (constant buffer indices: registers). */
  real fi[3];
#pragma unroll
  for (int q = 0; q < 3; q++) fi[q] = tx == 0 ? fv[q] : tx == 1 ? fv[3 + q] : fv[6 + q];
  const real ai = tx == 0 ? a[0] : tx == 1 ? a[1] : a[2];
  const real bi = tx == 0 ? b[0] : tx == 1 ? b[1] : b[2];
#pragma unroll
  for (int j = 0; j < 3; j++) {
    real fft = 0; /* (F F^T)[tx][j] */
#pragma unroll
    for (int q = 0; q < 3; q++) fft += fi[q] * fv[j * 3 + q];
    kmat[APOUT + j] = lam * ai * b[j] + shear * bi * a[j] + mudd * fft;
  }
}

/* Result (matrix3x3), coalesced: the block's threads write its E*9 reals as vectors of W reals
 * number q = lin + r*threads; the last, partial block writes scalars of elements < n only. */
KAS_DEV void d_stvk_kmat33_2_save_0(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                    size_t e0, size_t n) {
  const int threads = STVK_KMAT33_2_BX * STVK_KMAT33_2_BY * STVK_KMAT33_2_BZ;
  const int lin = tx + STVK_KMAT33_2_BX * (ty + STVK_KMAT33_2_BY * tz);
  const int vecs = STVK_KMAT33_2_BY * 9 / W;
  if (e0 + STVK_KMAT33_2_BY <= n) {
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
        real v[W];
#pragma unroll
        for (int b = 0; b < W; b++) v[b] = s[APLS + r * W * threads + b];
        KAS_STOREV(g, GIDX(e0, 0) / W + (size_t)q, v);
      }
    }
  } else {
    const size_t valid = n > e0 ? (n - e0) * 9 : 0;
#pragma unroll
    for (int r = 0; r < (vecs + threads - 1) / threads; r++) {
      const int q = lin + r * threads;
      if (q < vecs) {
#pragma unroll
        for (int k = 0; k < W; k++) {
          /* read unconditionally, so the read set does not depend on n */
          const real v = s[APLS + r * W * threads + k];
          const size_t off = W * (size_t)q + k;
          if (off < valid) g[GIDX(e0, 0) + off] = v;
        }
      }
    }
  }
}

/* Result (matrix3x3), owner: each thread writes the row it computed, straight from the compute's
 * output (registers or shared); elements >= n are not written. */
KAS_DEV void d_stvk_kmat33_2_save_1(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,
                                    size_t e0, size_t n) {
  (void)tz;
  if (e0 + ty < n) {
#pragma unroll
    for (int k = 0; k < 3; k++)
      g[GIDX(e0 + ty, tx*3 + k)] = s[APLS + k];
  }
}
