/*
 * kas_device.h — the few macros that let one copy of an elementary function's device code be
 * compiled three ways: by nvcc into fused kernels, by g++ into the CPU shim that runs generated
 * kernels thread by thread (KAS_HOST), and by g++ into the metadata tracer (KAS_TRACE, which
 * defines KAS_BUF as a recording type before including this file).
 */
#ifndef KAS_DEVICE_H
#define KAS_DEVICE_H

#include <stddef.h>
#include <math.h>

#if defined(__CUDACC__) && !defined(KAS_HOST)
#define KAS_DEV __device__ __forceinline__
#define KAS_RESTRICT __restrict__
#else
/* Host build: device qualifiers vanish; float4 is a plain struct of the same layout. */
#define KAS_DEV static inline
#define KAS_RESTRICT
#ifndef __CUDACC__
#define __device__
#define __global__
#define __forceinline__ inline
typedef struct { float x, y, z, w; } float4;
#endif
#endif

/* A buffer argument (shared memory or registers); the tracer replaces it by a recording type. */
#ifndef KAS_BUF
#define KAS_BUF float *
#endif

/* Reads float4 number q of g (16-byte aligned by the caller's contract). */
#define KAS_LOAD4(g, q) (((const float4 *)(g))[(q)])
#define KAS_STORE4(g, q, v) (((float4 *)(g))[(q)] = (v))

#endif
