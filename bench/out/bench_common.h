/* bench_common.h — what the generated micro-benchmark files share (kasgen bench). */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H
#include <stddef.h>
#include <cuda_runtime.h>
#include "kas_device.h"
/* A value no sum of the benchmark's data equals: the test that keeps work alive. */
#define KB_NEVER (-3.0e38f)
typedef struct {
  const char *impl, *kind; int index; const char *placement;
  int e, bx, by, bz;  /* elements per block, block shape */
  int own_smem;       /* bytes of the routine's own shared buffers */
  const void *kernel; /* __global__ (const float*, float*, size_t, float) */
} BenchEntry;
#endif
