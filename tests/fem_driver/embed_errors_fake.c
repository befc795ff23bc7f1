/*
 * embed_errors_fake.c — an embed's CUDA errors as its header and docs/generated.md ("CUDA errors")
 * say, checked on the CPU: the embed's object (nvcc, -DKAS_EMBED_CHUNK_LOG2=10) is linked with
 * fake_cudart.c instead of the CUDA runtime, whose launches fail when this program asks.
 *   - a call after the caller's own failed cudaMalloc (its error left pending) returns KAS_OK,
 *     and that error is still the caller's to take with cudaGetLastError;
 *   - a launch that fails, the first or one of a later chunk, makes the call return KAS_ERR_CUDA
 *     and kas_<stem>_last_cuda_error() its cudaError_t; the next call that returns anything
 *     else sets it back to 0; it is per host thread;
 *   - an error the context keeps fails every later call, with that cause.
 * Written once for every spec (KAS_EMBED_GENERIC).  tests/integration/embed_errors.sh builds and
 * runs it; it prints PASS or each FAIL.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "embed_test.h"
#include "fake_cudart.h"

#define N 4000 /* elements: 4 chunks of 2^10 */

static const int in_reals[NIN] = KAS_EMBED_INPUT_REALS;
static const int out_reals[NOUT] = KAS_EMBED_OUTPUT_REALS;
static const real *in[NIN];
static real *out[NOUT];
static void *workspace;

static void *device(size_t bytes) {
  void *p = NULL;
  if (cudaMalloc(&p, bytes) != cudaSuccess) {
    printf("FAIL: fake cudaMalloc of %zu bytes\n", bytes);
    failures++;
  }
  return p;
}

/* A valid call on elements [0, N). */
static kas_status call(void) {
#if KAS_EMBED_LD
  return kas_embed_arrays(in, out, N, 0, workspace, NULL);
#else
  return kas_embed_arrays(in, out, N, workspace, NULL);
#endif
}

/* A call and its cause, by another host thread. */
typedef struct {
  kas_status status;
  int cause;
} Outcome;

static void *call_in_thread(void *arg) {
  Outcome *o = arg;
  o->status = call();
  o->cause = kas_embed_last_cuda_error();
  return NULL;
}

int main(void) {
  for (int i = 0; i < KAS_EMBED_NINPUTS; i++) in[i] = device(sizeof(real) * N * in_reals[i]);
  for (int o = 0; o < NOUT; o++) out[o] = device(sizeof(real) * N * out_reals[o]);
  if (kas_embed_workspace_bytes(N)) workspace = device(kas_embed_workspace_bytes(N));

  int before = fake_cuda_launches();
  expect(call() == KAS_OK && kas_embed_last_cuda_error() == 0, "a valid call");
  expect(fake_cuda_launches() >= before + 4, "a call launches every chunk");

  /* The caller's error, left pending: not the embed's, and still the caller's after it. */
  void *big = NULL;
  expect(cudaMalloc(&big, (size_t)1 << 50) == cudaErrorMemoryAllocation, "a huge fake cudaMalloc");
  kas_status s = call();
  expect(s == KAS_OK, "a valid call after the caller's failed cudaMalloc returns KAS_OK");
  expect(kas_embed_last_cuda_error() == 0, "... and no cause");
  expect(cudaGetLastError() == cudaErrorMemoryAllocation,
         "the caller's pending error is still pending after the call");
  expect(cudaGetLastError() == cudaSuccess, "cudaGetLastError cleared it");

  /* A launch that fails: the call says so and keeps the cause. */
  fake_cuda_fail_launches(cudaErrorNoKernelImageForDevice, 0);
  s = call();
  expect(s == KAS_ERR_CUDA, "a failed launch returns KAS_ERR_CUDA");
  expect(kas_embed_last_cuda_error() == cudaErrorNoKernelImageForDevice,
         "kas_<stem>_last_cuda_error() is the failed launch's cudaError_t");
  expect(strstr(kas_embed_status_string(s), "last_cuda_error") != NULL,
         "KAS_ERR_CUDA's text names where the cause is");
  expect(kas_embed_last_cuda_error() == cudaErrorNoKernelImageForDevice,
         "reading the cause leaves it");
  fake_cuda_fail_launches(cudaErrorLaunchOutOfResources, 2);
  s = call();
  expect(s == KAS_ERR_CUDA && kas_embed_last_cuda_error() == cudaErrorLaunchOutOfResources,
         "a launch of a later chunk that fails: KAS_ERR_CUDA and its cause");

  /* The next call that returns anything else: no cause. */
  fake_cuda_fail_launches(cudaSuccess, 0);
  (void)cudaGetLastError(); /* the runtime's record of the failed launch */
  expect(call() == KAS_OK && kas_embed_last_cuda_error() == 0,
         "a valid call after a failed one: KAS_OK and no cause");
  fake_cuda_fail_launches(cudaErrorNoKernelImageForDevice, 0);
  expect(call() == KAS_ERR_CUDA, "failing again");
#if KAS_EMBED_LD
  s = kas_embed_arrays(NULL, out, N, 0, workspace, NULL);
#else
  s = kas_embed_arrays(NULL, out, N, workspace, NULL);
#endif
  expect(s == KAS_ERR_INVALID && kas_embed_last_cuda_error() == 0,
         "a call refused for its arguments: no cause");
  expect(call() == KAS_ERR_CUDA, "failing again");
#if KAS_EMBED_LD
  s = kas_embed_arrays(in, out, 0, 0, workspace, NULL);
#else
  s = kas_embed_arrays(in, out, 0, workspace, NULL);
#endif
  expect(s == KAS_OK && kas_embed_last_cuda_error() == 0, "n = 0: KAS_OK and no cause");

  /* Per host thread: another thread's failure is not this thread's cause. */
  fake_cuda_fail_launches(cudaSuccess, 0);
  expect(call() == KAS_OK, "a valid call");
  fake_cuda_fail_launches(cudaErrorNoKernelImageForDevice, 0);
  Outcome other = {KAS_OK, 0};
  pthread_t thread;
  if (pthread_create(&thread, NULL, call_in_thread, &other) == 0) {
    pthread_join(thread, NULL);
    expect(other.status == KAS_ERR_CUDA && other.cause == cudaErrorNoKernelImageForDevice,
           "another thread's failed call: KAS_ERR_CUDA and its cause there");
    expect(kas_embed_last_cuda_error() == 0, "this thread's cause is its own last call's (none)");
  } else {
    expect(0, "pthread_create");
  }
  fake_cuda_fail_launches(cudaSuccess, 0);

  /* An error the context keeps fails every later call, with that cause. */
  fake_cuda_corrupt_context(cudaErrorIllegalAddress);
  expect(call() == KAS_ERR_CUDA && kas_embed_last_cuda_error() == cudaErrorIllegalAddress,
         "a corrupted context: KAS_ERR_CUDA, cause cudaErrorIllegalAddress");
  (void)cudaGetLastError(); /* cannot clear it */
  expect(call() == KAS_ERR_CUDA && kas_embed_last_cuda_error() == cudaErrorIllegalAddress,
         "... and again on the next call");

  printf("embed_errors_fake %s: %s\n", KAS_EMBED_NAME, failures ? "FAIL" : "PASS");
  return failures != 0;
}
