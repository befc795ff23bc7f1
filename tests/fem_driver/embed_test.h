/*
 * embed_test.h — what the C programs that call a generated embed through its KAS_EMBED_GENERIC
 * names share (fem_driver.c, embed_errors_gpu.c, embed_errors_fake.c): the embed's header
 * (KAS_EMBED_HEADER, given by the Makefile), its real type and argument counts, the count of
 * failed checks with expect(), and host memory and CUDA calls that end the program when they
 * fail.  Static inline: a program that calls none of them (the fake has no CUDA runtime behind
 * cuda_or_die) compiles them to nothing, warning-free.
 */
#ifndef EMBED_TEST_H
#define EMBED_TEST_H
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define KAS_EMBED_GENERIC
#include KAS_EMBED_HEADER

typedef KAS_EMBED_REAL real;
#define NIN (KAS_EMBED_NINPUTS > 0 ? KAS_EMBED_NINPUTS : 1) /* a C array holds one at least */
#define NOUT KAS_EMBED_NOUTPUTS
/* An output's normwise relative error against its reference, at most. */
#define TOLERANCE (sizeof(real) == sizeof(double) ? 1e-12 : 1e-5)

static int failures; /* checks that failed: the program ends with FAIL and exit status 1 */

/* A check: "FAIL: what" and one more failure where it does not hold. */
static inline void expect(int ok, const char *what) {
  if (!ok) {
    printf("FAIL: %s\n", what);
    failures++;
  }
}

/* A CUDA call the check needs (a copy, an allocation): "FAIL: what: why" and exit 1 if it fails. */
static inline void cuda_or_die(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    printf("FAIL: %s: %s\n", what, cudaGetErrorString(e));
    exit(1);
  }
}

/* malloc of at least one byte, or "FAIL: out of host memory" and exit 1. */
static inline void *host(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    printf("FAIL: out of host memory\n");
    exit(1);
  }
  return p;
}
#endif
