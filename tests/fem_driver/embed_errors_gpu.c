/*
 * embed_errors_gpu.c — an embed's CUDA errors on a GPU, as its header and docs/generated.md
 * ("CUDA errors") say: what embed_errors_fake.c checks on the CPU, against the CUDA runtime.
 *
 *   embed_errors             the embed built for this GPU (ARCH):
 *     1. 8 host threads call at once, 10 times each on a stream of their own, before anything
 *        else is launched: every call KAS_OK, every output the host form's;
 *     2. after the caller's own cudaMalloc failed (its error left pending), a call returns KAS_OK
 *        and no cause, computes the same outputs, and the caller's error is still pending;
 *     3. a call given input pointers to no memory faults on the GPU; the context keeps that
 *        error, and the next valid call returns KAS_ERR_CUDA with it as the cause, also after
 *        cudaGetLastError (last: the process can launch nothing more).
 *   embed_errors wrong-arch  the embed built for another GPU (WRONG_ARCH, machine code only):
 *     4. a call returns KAS_ERR_CUDA and the cause cudaErrorNoKernelImageForDevice, in the
 *        calling thread only (another thread's cause is 0), which CUDA also recorded as the
 *        thread's last error; the context is not lost: a cudaMalloc works, and a call refused
 *        for its arguments sets the cause back to 0.
 *
 *   make -C tests/fem_driver GEN=/abs/path/generated/stvenant errors   (on the GPU machine)
 *
 * Written once for every spec, precision and layout (KAS_EMBED_GENERIC); outputs are compared
 * with the embed's own host form (normwise relative error below 1e-5 in single precision,
 * 1e-12 in double).  Prints each FAIL, then PASS or FAIL; exit status 1 on a failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed_test.h"

#define N 100003 /* elements: no multiple of a block */
#define THREADS 8
#define CALLS 10 /* per thread */

static const int in_reals[NIN] = KAS_EMBED_INPUT_REALS;
static const int out_reals[NOUT] = KAS_EMBED_OUTPUT_REALS;

static const char *cause_text(int e) { return cudaGetErrorName((cudaError_t)e); }

static void *device(size_t bytes) {
  void *p = NULL;
  cuda_or_die(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
  return p;
}

/* Either layout holds N * size reals (ld = N). */
static size_t bytes_of(int size) { return sizeof(real) * (size_t)N * (size_t)size; }

static kas_status call(const real *const *in, real *const *out, void *workspace,
                       cudaStream_t stream) {
#if KAS_EMBED_LD
  return kas_embed_arrays(in, out, N, N, workspace, stream);
#else
  return kas_embed_arrays(in, out, N, workspace, stream);
#endif
}

/* The inputs (device and host copies) and the host form's outputs. */
static const real *d_in[NIN];
static real *h_in[NIN];
static real *ref[NOUT];

static void prepare(void) {
  uint64_t rng = 88172645463325252ull;
  for (int i = 0; i < KAS_EMBED_NINPUTS; i++) {
    size_t reals = (size_t)N * in_reals[i];
    h_in[i] = host(bytes_of(in_reals[i]));
    for (size_t k = 0; k < reals; k++) { /* [0.5, 1.5): never zero */
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      h_in[i][k] = (real)(0.5 + (double)(rng >> 11) * (1.0 / 9007199254740992.0));
    }
    void *d = device(bytes_of(in_reals[i]));
    cuda_or_die(cudaMemcpy(d, h_in[i], bytes_of(in_reals[i]), cudaMemcpyHostToDevice), "copy");
    d_in[i] = d;
  }
  for (int o = 0; o < NOUT; o++) ref[o] = host(bytes_of(out_reals[o]));
  void *ws = host(kas_embed_host_workspace_bytes(N));
#if KAS_EMBED_LD
  kas_status s = kas_embed_host_arrays((const real *const *)h_in, ref, N, N, ws, NULL);
#else
  kas_status s = kas_embed_host_arrays((const real *const *)h_in, ref, N, ws, NULL);
#endif
  expect(s == KAS_OK, "the host form");
  free(ws);
}

/* Whether the device outputs are the host form's; what names the check. */
static int same_outputs(real *const *d_out, const char *what) {
  int same = 1;
  for (int o = 0; o < NOUT; o++) {
    size_t reals = (size_t)N * out_reals[o];
    real *h = host(bytes_of(out_reals[o]));
    cuda_or_die(cudaMemcpy(h, d_out[o], bytes_of(out_reals[o]), cudaMemcpyDeviceToHost), what);
    double diff2 = 0, ref2 = 0;
    for (size_t k = 0; k < reals; k++) {
      double d = (double)h[k] - (double)ref[o][k];
      diff2 += isfinite(h[k]) ? d * d : INFINITY;
      ref2 += (double)ref[o][k] * ref[o][k];
    }
    if (!(sqrt(diff2 / ref2) < TOLERANCE)) {
      printf("FAIL: %s: output %d differs from the host form (%.3g)\n", what, o,
             sqrt(diff2 / ref2));
      same = 0;
    }
    free(h);
  }
  return same;
}

/* ---- 1: threads at once ------------------------------------------------------------------- */

typedef struct {
  pthread_barrier_t *start;
  real *out[NOUT];
  void *workspace;
  int bad_calls;
} Worker;

static void *work(void *arg) {
  Worker *w = arg;
  cudaStream_t stream;
  cuda_or_die(cudaStreamCreate(&stream), "cudaStreamCreate");
  pthread_barrier_wait(w->start);
  for (int k = 0; k < CALLS; k++)
    if (call(d_in, w->out, w->workspace, stream) != KAS_OK) w->bad_calls++;
  cuda_or_die(cudaStreamSynchronize(stream), "a thread's calls");
  cudaStreamDestroy(stream);
  return NULL;
}

static void threads_at_once(void) {
  Worker w[THREADS];
  pthread_t thread[THREADS];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, THREADS);
  for (int t = 0; t < THREADS; t++) {
    w[t] = (Worker){.start = &start};
    for (int o = 0; o < NOUT; o++) w[t].out[o] = device(bytes_of(out_reals[o]));
    w[t].workspace = device(kas_embed_workspace_bytes(N));
  }
  for (int t = 0; t < THREADS; t++) pthread_create(&thread[t], NULL, work, &w[t]);
  for (int t = 0; t < THREADS; t++) pthread_join(thread[t], NULL);
  pthread_barrier_destroy(&start);
  int bad = 0, wrong = 0;
  for (int t = 0; t < THREADS; t++) {
    bad += w[t].bad_calls;
    wrong += !same_outputs(w[t].out, "a thread's outputs");
    for (int o = 0; o < NOUT; o++) cudaFree(w[t].out[o]);
    cudaFree(w[t].workspace);
  }
  expect(bad == 0, "1: calls of 8 threads at once return KAS_OK");
  expect(wrong == 0, "1: calls of 8 threads at once compute the host form's outputs");
}

/* ---- 2: the caller's pending error -------------------------------------------------------- */

static void pending_error(real *const *out, void *workspace) {
  void *big = NULL;
  cudaError_t mine = cudaMalloc(&big, (size_t)1 << 62); /* fails: out of memory */
  expect(mine != cudaSuccess, "2: a cudaMalloc of 2^62 bytes fails");
  for (int o = 0; o < NOUT; o++) cuda_or_die(cudaMemset(out[o], 0xFF, bytes_of(out_reals[o])), "");
  kas_status s = call(d_in, out, workspace, NULL);
  int cause = kas_embed_last_cuda_error();
  if (s != KAS_OK)
    printf("  2: the call returned %s, cause %s\n", kas_embed_status_string(s), cause_text(cause));
  expect(s == KAS_OK && cause == 0,
         "2: a valid call after the caller's failed cudaMalloc returns KAS_OK, no cause");
  cudaError_t sync = cudaDeviceSynchronize();
  expect(sync == cudaSuccess, "2: ... and runs");
  expect(same_outputs(out, "2: the call after the failed cudaMalloc"), "2: ... correctly");
  cudaError_t left = cudaGetLastError();
  if (left != mine) printf("  2: cudaGetLastError() after the call: %s\n", cause_text(left));
  expect(left == mine, "2: the caller's pending error is still pending after the call");
}

/* ---- 3: a fault, kept by the context ------------------------------------------------------ */

static void fault(real *const *out, void *workspace) {
  const real *nowhere[NIN];
  for (int i = 0; i < NIN; i++) nowhere[i] = (const real *)(uintptr_t)0x10000; /* no memory */
  kas_status s = call(nowhere, out, workspace, NULL);
  cudaError_t kept = cudaDeviceSynchronize();
  printf("  3: inputs at 0x10000: call %s, then cudaDeviceSynchronize: %s\n",
         kas_embed_status_string(s), cause_text(kept));
  expect(kept != cudaSuccess, "3: inputs at no memory fault");
  s = call(d_in, out, workspace, NULL);
  int cause = kas_embed_last_cuda_error();
  printf("  3: the next call: %s, cause %s\n", kas_embed_status_string(s), cause_text(cause));
  expect(s == KAS_ERR_CUDA && cause == (int)kept,
         "3: after a fault a call returns KAS_ERR_CUDA, the fault's error the cause");
  (void)cudaGetLastError();
  s = call(d_in, out, workspace, NULL);
  expect(s == KAS_ERR_CUDA && kas_embed_last_cuda_error() == (int)kept,
         "3: ... also after cudaGetLastError (the context keeps it)");
}

/* ---- 4: no kernel for this GPU ------------------------------------------------------------ */

static void *cause_in_thread(void *arg) {
  *(int *)arg = kas_embed_last_cuda_error();
  return NULL;
}

static void wrong_arch(real *const *out, void *workspace) {
  kas_status s = call(d_in, out, workspace, NULL);
  int cause = kas_embed_last_cuda_error();
  printf("  4: the embed built for another GPU: %s, cause %s (%d)\n",
         kas_embed_status_string(s), cause_text(cause), cause);
  expect(s == KAS_ERR_CUDA, "4: a call of an embed built for another GPU returns KAS_ERR_CUDA");
  expect(cause == cudaErrorNoKernelImageForDevice,
         "4: ... and the cause cudaErrorNoKernelImageForDevice");
  int other = -1;
  pthread_t thread;
  pthread_create(&thread, NULL, cause_in_thread, &other);
  pthread_join(thread, NULL);
  expect(other == 0, "4: another thread's cause is 0");
  cudaError_t recorded = cudaGetLastError();
  expect(recorded == (cudaError_t)cause, "4: CUDA recorded the cause as the thread's last error");
  void *p = NULL;
  expect(cudaMalloc(&p, 1024) == cudaSuccess, "4: the context is not lost: cudaMalloc works");
  cudaFree(p);
#if KAS_EMBED_LD
  s = kas_embed_arrays(NULL, out, N, N, workspace, NULL);
#else
  s = kas_embed_arrays(NULL, out, N, workspace, NULL);
#endif
  expect(s == KAS_ERR_INVALID && kas_embed_last_cuda_error() == 0,
         "4: a call refused for its arguments sets the cause back to 0");
}

int main(int argc, char **argv) {
  int wrong = argc > 1 && !strcmp(argv[1], "wrong-arch");
  if (argc > 1 && !wrong) {
    fprintf(stderr, "usage: embed_errors [wrong-arch]\n");
    return 2;
  }
  prepare();
  real *out[NOUT];
  for (int o = 0; o < NOUT; o++) out[o] = device(bytes_of(out_reals[o]));
  void *workspace = device(kas_embed_workspace_bytes(N));
  if (wrong) {
    wrong_arch(out, workspace);
  } else {
    threads_at_once();
    pending_error(out, workspace);
    fault(out, workspace); /* last: the context is lost */
  }
  printf("embed_errors%s %s (%s, %s): %s\n", wrong ? " wrong-arch" : "", KAS_EMBED_NAME,
         sizeof(real) == sizeof(double) ? "double" : "single",
         KAS_EMBED_LD ? "with ld" : "element-major", failures ? "FAIL" : "PASS");
  return failures != 0;
}
