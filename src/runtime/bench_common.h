/*
 * bench_common.h — what the files of the micro-benchmark program share (`kasgen bench` writes
 * it with the program; kept as src/runtime/bench_common.h in kasgen's sources): the entry that
 * describes one benchmark kernel, and the table of one function's entries.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H
#include <stddef.h>
#include <cuda_runtime.h>
#include "kas_device.h"
/* A value no sum of the benchmark's data equals: the test that keeps work alive. */
#define KB_NEVER (-3.0e38f)
typedef struct {
  const char *impl, *kind; int index; const char *placement;
  const char *precision; /* "single", "double": the real type of the kernel's arrays */
  const char *layout;    /* "element", "component": of the array a load or save moves */
  int width;             /* W: reals per vector access the routine was made with */
  int e, bx, by, bz;  /* elements per block, block shape */
  int own_smem;       /* bytes of the routine's own shared buffers */
  const void *kernel; /* __global__ (const real *, real *, size_t n, size_t ld, float seed) */
} BenchEntry;

/* The entries of one function's bench_<f>.cu. */
typedef struct {
  const BenchEntry *entries;
  int count;
} BenchTable;
#endif
