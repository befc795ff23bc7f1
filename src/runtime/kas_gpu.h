/*
 * kas_gpu.h — what the two GPU programs kasgen generates share, harness.cu (the candidates of a
 * spec) and check_gpu.cu (the standalone unit kernels): the check of a result against the CPU
 * graph (kas_check.h), CUDA error handling, and timing — the median of runs timed one by one
 * with CUDA events after three warm-up runs, and the device-to-device copy bandwidth measured
 * the same way, the yardstick every kernel is given against.  CUDA and libc only; copied into
 * common/ of every generated folder from kasgen's src/runtime/.
 */
#ifndef KAS_GPU_H
#define KAS_GPU_H
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "kas_check.h"

#define KAS_WARMUP_RUNS 3

/* Exits (status 2) on a CUDA error, naming what failed. */
static inline void kas_cuda_check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    exit(2);
  }
}

/* Exits (status 2) with a plain sentence when this machine cannot run the kernels: no driver
 * (the runtime then reports cudaErrorInsufficientDriver, whose own text, "CUDA driver version is
 * insufficient", sends a user without a GPU looking for a driver update), a driver older than
 * the runtime, or no device (cudaErrorNoDevice, also under CUDA_VISIBLE_DEVICES=-1). */
static inline void kas_require_gpu(const char *program) {
  int devices = 0, driver = 0, runtime = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e == cudaSuccess && devices > 0) return;
  cudaDriverGetVersion(&driver); /* 0: no driver installed */
  cudaRuntimeGetVersion(&runtime);
  const char *name = e == cudaSuccess ? "no device" : cudaGetErrorName(e);
  if (e == cudaErrorInsufficientDriver && driver > 0)
    fprintf(stderr, "%s: the CUDA driver on this machine (%d.%d) is older than the CUDA runtime "
                    "the kernels were built with (%d.%d) (%s): update the driver\n",
            program, driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, name);
  else if (e == cudaSuccess || e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
    fprintf(stderr, "%s: no CUDA GPU on this machine (%s%s).\n"
                    "%s: the kernels were built but cannot run here: run this on a GPU machine\n"
                    "    (`make check-cpu` runs every candidate on the CPU, without a GPU)\n",
            program, name, driver ? "" : ": no CUDA driver installed", program);
  else
    fprintf(stderr, "%s: no usable CUDA GPU: cudaGetDeviceCount: %s (%s)\n", program,
            cudaGetErrorString(e), name);
  exit(2);
}

static inline void *kas_host_alloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
    exit(2);
  }
  return p;
}

static inline int kas_compare_floats(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

static inline float kas_median(float *v, int count) {
  qsort(v, (size_t)count, sizeof *v, kas_compare_floats);
  return count % 2 ? v[count / 2] : 0.5f * (v[count / 2 - 1] + v[count / 2]);
}

/* One run of what is timed; run is its number, warm-up runs included (0, 1, 2, ...). */
typedef void (*KasRun)(void *arg, int run);

/* Median milliseconds of reps runs, each timed alone, after KAS_WARMUP_RUNS untimed ones. */
static inline float kas_time_ms(int reps, KasRun run, void *arg) {
  cudaEvent_t t0, t1;
  kas_cuda_check(cudaEventCreate(&t0), "cudaEventCreate");
  kas_cuda_check(cudaEventCreate(&t1), "cudaEventCreate");
  float *ms = (float *)kas_host_alloc(sizeof(float) * (size_t)reps);
  for (int r = -KAS_WARMUP_RUNS; r < reps; r++) {
    kas_cuda_check(cudaEventRecord(t0), "cudaEventRecord");
    run(arg, r + KAS_WARMUP_RUNS);
    kas_cuda_check(cudaEventRecord(t1), "cudaEventRecord");
    kas_cuda_check(cudaEventSynchronize(t1), "timed run");
    if (r >= 0) kas_cuda_check(cudaEventElapsedTime(&ms[r], t0, t1), "cudaEventElapsedTime");
  }
  float median = kas_median(ms, reps);
  free(ms);
  cudaEventDestroy(t0);
  cudaEventDestroy(t1);
  return median;
}

typedef struct {
  void *from, *to;
  size_t bytes;
} KasCopy;

static inline void kas_run_copy(void *arg, int run) {
  const KasCopy *c = (const KasCopy *)arg;
  (void)run; /* every copy is the same */
  kas_cuda_check(cudaMemcpyAsync(c->to, c->from, c->bytes, cudaMemcpyDeviceToDevice, 0), "copy");
}

/* Device-to-device copy bandwidth of `bytes`, (bytes read + bytes written) / median time, GB/s. */
static inline double kas_copy_gbs(size_t bytes, int reps) {
  KasCopy c = {NULL, NULL, bytes};
  kas_cuda_check(cudaMalloc(&c.from, bytes), "cudaMalloc copy buffer");
  kas_cuda_check(cudaMalloc(&c.to, bytes), "cudaMalloc copy buffer");
  kas_cuda_check(cudaMemset(c.from, 1, bytes), "cudaMemset");
  double gbs = 2.0 * (double)bytes / (kas_time_ms(reps, kas_run_copy, &c) * 1e-3) / 1e9;
  cudaFree(c.from);
  cudaFree(c.to);
  return gbs;
}
#endif
