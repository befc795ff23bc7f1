/*
 * kas_device.h — the few definitions that let one copy of an elementary function's device code be
 * compiled three ways: by nvcc into fused kernels, by g++ into the CPU shim that runs generated
 * kernels thread by thread (KAS_HOST), and by g++ into the metadata tracer (KAS_TRACE, which
 * defines KAS_BUF and the vector accesses as recording versions before including this file).
 * The library's placeholders (real, W, GIDX, APLS, ...) are gone by then: kasgen substitutes them
 * when it instantiates a routine (docs/library-format.md).
 */
#ifndef KAS_DEVICE_H
#define KAS_DEVICE_H

#include <stddef.h>
#include <math.h>

#if defined(__CUDACC__) && !defined(KAS_HOST)
#ifndef KAS_DEV /* a file that runs the routines on the host as well defines it __host__ too */
#define KAS_DEV __device__ __forceinline__
#endif
#define KAS_RESTRICT __restrict__
#define KAS_VECTOR_ALIGNED(p) ((void)0)
#else
/* Host build: device qualifiers vanish; the vector types are plain structs of the same layout.
 * A vector access at an address a GPU would fault on stops the CPU forms too, so that their
 * check catches what a GPU run would. */
#include <stdio.h>
#include <stdlib.h>
#define KAS_DEV static inline
#define KAS_RESTRICT
#ifndef __CUDACC__
#define __device__
#define __global__
#define __forceinline__ inline
typedef struct { float x, y, z, w; } float4;
typedef struct { double x, y; } double2;
#endif
static inline void KAS_VECTOR_ALIGNED(const void *p) {
  if ((size_t)p % 16) {
    fprintf(stderr, "kas: 16-byte vector access at %p, which is not 16-byte aligned\n", p);
    abort();
  }
}
#endif

/* A buffer argument holding reals of type T (shared memory or registers); the tracer replaces it
 * by a recording type. */
#ifndef KAS_BUF
#define KAS_BUF(T) T *
#endif

/* The vector accesses of contiguous routines: v[0..W) = reals W*q .. W*q+W-1 of g in one access
 * (a float4 or a double2: 16 bytes, so g + W*q must be 16-byte aligned), or one real at W = 1,
 * which any alignment allows.  kasgen picks W per array (docs/design.md §5.4). */
KAS_DEV void kas_loadv(float (&v)[4], const float *g, size_t q) {
  KAS_VECTOR_ALIGNED(g + 4 * q);
  const float4 t = ((const float4 *)g)[q];
  v[0] = t.x;
  v[1] = t.y;
  v[2] = t.z;
  v[3] = t.w;
}

KAS_DEV void kas_loadv(double (&v)[2], const double *g, size_t q) {
  KAS_VECTOR_ALIGNED(g + 2 * q);
  const double2 t = ((const double2 *)g)[q];
  v[0] = t.x;
  v[1] = t.y;
}

template <class T> KAS_DEV void kas_loadv(T (&v)[1], const T *g, size_t q) { v[0] = g[q]; }

KAS_DEV void kas_storev(float *g, size_t q, const float (&v)[4]) {
  KAS_VECTOR_ALIGNED(g + 4 * q);
  float4 t;
  t.x = v[0];
  t.y = v[1];
  t.z = v[2];
  t.w = v[3];
  ((float4 *)g)[q] = t;
}

KAS_DEV void kas_storev(double *g, size_t q, const double (&v)[2]) {
  KAS_VECTOR_ALIGNED(g + 2 * q);
  double2 t;
  t.x = v[0];
  t.y = v[1];
  ((double2 *)g)[q] = t;
}

template <class T> KAS_DEV void kas_storev(T *g, size_t q, const T (&v)[1]) { g[q] = v[0]; }

/* One real of a component-major row in the plan for arrays of any alignment.  A row that starts
 * mid-sector makes each warp's load touch one sector more than it uses, shared with the next
 * warp; asking L2 for the whole 256-byte block (ld.global.nc.L2::256B) cut that cost from 5.0%
 * to 2.3% in kernels of 2 resident blocks, but cost 0.3-0.7% on rows that start on sectors,
 * which therefore load plainly (benchmarks/RESULTS.md, session 28, call 2).  The read-only path
 * (.nc) is what nvcc picks for the plain loads of a kernel's const __restrict__ arrays; the hint
 * without it made that 2-block kernel slower still (107.1%). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(KAS_HOST) /* PTX's .L2::256B */
KAS_DEV float kas_row_load(const float *p) {
  float v;
  asm("ld.global.nc.L2::256B.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}
KAS_DEV double kas_row_load(const double *p) {
  double v;
  asm("ld.global.nc.L2::256B.f64 %0, [%1];" : "=d"(v) : "l"(p));
  return v;
}
#else /* the host forms, and GPUs older than sm_80: a plain read */
template <class T> KAS_DEV T kas_row_load(const T *p) { return *p; }
#endif

#ifndef KAS_LOADV
#define KAS_LOADV(v, g, q) kas_loadv(v, g, q)
#define KAS_STOREV(g, q, v) kas_storev(g, q, v)
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(KAS_HOST)
/* One asynchronous copy of BYTES (4, 8 or 16) from global g to shared s: the PTX instruction
 * itself (cp.async, sm_80 and later) as cuda_pipeline.h's __pipeline_memcpy_async issues it
 * (.cg, past L1, for 16 bytes; .ca, the only form of the smaller sizes, otherwise), without
 * that header's dependence on CCCL, which the PyPI compiler lacks. */
template <int BYTES> __device__ __forceinline__ void kas_copy_async(void *s, const void *g) {
  const unsigned shared = (unsigned)__cvta_generic_to_shared(s);
  if (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared), "l"(g) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(shared), "l"(g),
                 "n"(BYTES)
                 : "memory");
}
#endif

/* Staging (kasgen's staging.c): a kernel that moves most elements of an array copies the
 * block's chunk of whole element records between global memory g (at the block's first record)
 * and its shared copy s in one run, thread lin of `threads` taking W-real vectors lin,
 * lin + threads, ...; `reals` is the whole block's chunk, `valid` the part inside the n elements
 * (a partial last block goes real by real). */
template <int W, class T>
KAS_DEV void kas_stage_in(T *s, const T *KAS_RESTRICT g, int reals, int valid, int lin,
                          int threads) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(KAS_HOST)
  /* Asynchronous copies (cp.async, sm_80 and later): every copy of the thread is in flight at
   * once and none passes through registers.  A staging kernel's blocks are few per SM (their
   * shared memory is large), so what each thread keeps in flight sets the bandwidth; the loop
   * of the host and of older GPUs (below) waits for about one load at a time. */
  if (W > 1 && valid == reals) {
    for (int q = lin; q < reals / W; q += threads)
      kas_copy_async<sizeof(T) * W>(s + W * q, g + (size_t)W * q);
  } else {
    for (int f = lin; f < valid; f += threads) kas_copy_async<sizeof(T)>(s + f, g + f);
  }
  /* kas_stage_wait waits for the group, after every staged array is under way */
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#else
  if (W > 1 && valid == reals) {
    for (int q = lin; q < reals / W; q += threads) {
      T v[W];
      KAS_LOADV(v, g, (size_t)q);
#pragma unroll
      for (int b = 0; b < W; b++) s[W * q + b] = v[b];
    }
  } else {
    for (int f = lin; f < valid; f += threads) s[f] = g[f];
  }
#endif
}

/* Waits for this thread's copies of kas_stage_in (nothing to wait for on the host); the
 * barrier after it makes every thread's copies visible to the block. */
KAS_DEV void kas_stage_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(KAS_HOST)
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
}

template <int W, class T>
KAS_DEV void kas_stage_out(const T *s, T *KAS_RESTRICT g, int reals, int valid, int lin,
                           int threads) {
  if (W > 1 && valid == reals) {
    for (int q = lin; q < reals / W; q += threads) {
      T v[W];
#pragma unroll
      for (int b = 0; b < W; b++) v[b] = s[W * q + b];
      KAS_STOREV(g, (size_t)q, v);
    }
  } else {
    for (int f = lin; f < valid; f += threads) g[f] = s[f];
  }
}

/* The block's `valid` elements of `rows` component-major rows, from a copy whose rows are `e`
 * apart, to g (element e0 of row 0) whose rows are ld apart.  Each row is written from the 32-byte
 * sector boundary at or before its start, so that a warp's run covers whole sectors and only the
 * block's two ends write part of one (src/staging.c says why). */
template <class T>
KAS_DEV void kas_stage_out_rows(const T *s, T *KAS_RESTRICT g, int e, int rows, int valid,
                                size_t ld, int lin, int threads) {
  const int per_sector = 32 / (int)sizeof(T);
  for (int c = 0; c < rows; c++) {
    T *row = g + (size_t)c * ld;
    const int shift = (int)(((size_t)row / sizeof(T)) % (size_t)per_sector);
    for (int i = lin; i < valid + shift; i += threads) {
      const int j = i - shift; /* element j of the block */
      if (j >= 0) row[j] = s[c * e + j];
    }
  }
}

#endif
