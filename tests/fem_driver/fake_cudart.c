/*
 * fake_cudart.c — the CUDA runtime calls that an embed's object makes (nm -u), faked on the CPU so
 * that a test without a GPU can run the embed's host side against CUDA's error model
 * (tests/integration/embed_errors.sh; fem_driver/embed_errors_fake.c drives it):
 *   - each host thread has a last error: a call that fails sets it, cudaGetLastError returns
 *     and clears it, cudaPeekAtLastError returns it; a call that succeeds leaves it;
 *   - an error the context keeps (a kernel faulted) fails every later launch and call, and
 *     cudaGetLastError cannot clear it;
 *   - cudaMalloc of more than 1 TiB fails (cudaErrorMemoryAllocation), as a too-large request
 *     does on a GPU: the caller's error that it leaves pending.
 * Launches run nothing: they are counted, and fail as the test asks (fake_cuda_fail_launches).
 * Both ways of launching are here: cudaLaunchKernelEx (cudaLaunchKernelExC) and nvcc's <<<...>>>
 * stubs (__cudaPushCallConfiguration, __cudaPopCallConfiguration, __cudaGetKernel,
 * __cudaLaunchKernel, which the embed's object holds for every kernel even when it launches
 * them otherwise), so that the test also runs an embed of the generator before (which fails it).
 * Linked instead of -lcudart; plain C.
 */
#include <cuda_runtime_api.h>
#include <stdlib.h>

#include "fake_cudart.h"

static _Thread_local cudaError_t last_error; /* per host thread, as CUDA's */
static cudaError_t context_error;            /* kept by the context: sticky */
static cudaError_t launch_error;             /* launches from the launch_fail_from'th on fail */
static int launch_fail_from;
static int launches;                         /* launches that succeeded */

/* A call's result: a failure is also the thread's last error. */
static cudaError_t result(cudaError_t e) {
  if (e != cudaSuccess) last_error = e;
  return e;
}

void fake_cuda_fail_launches(cudaError_t e, int after) {
  launch_error = e;
  launch_fail_from = launches + after;
}

void fake_cuda_corrupt_context(cudaError_t e) { context_error = e; }

int fake_cuda_launches(void) { return launches; }

static cudaError_t launch(dim3 grid, dim3 block) {
  if (context_error != cudaSuccess) return result(context_error);
  if (launch_error != cudaSuccess && launches >= launch_fail_from) return result(launch_error);
  if (grid.x == 0 || block.x == 0) return result(cudaErrorInvalidConfiguration);
  launches++;
  return cudaSuccess;
}

/* ---- the runtime API ---------------------------------------------------------------------- */

cudaError_t cudaGetLastError(void) {
  cudaError_t e = last_error != cudaSuccess ? last_error : context_error;
  last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError(void) {
  return last_error != cudaSuccess ? last_error : context_error;
}

cudaError_t cudaMalloc(void **p, size_t bytes) {
  if (context_error != cudaSuccess) return result(context_error);
  if (bytes > ((size_t)1 << 40)) return result(cudaErrorMemoryAllocation);
  *p = malloc(bytes ? bytes : 1);
  return result(*p ? cudaSuccess : cudaErrorMemoryAllocation);
}

cudaError_t cudaFree(void *p) {
  free(p);
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value) {
  (void)func, (void)attr, (void)value;
  return result(context_error);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args) {
  (void)func, (void)args;
  return launch(config->gridDim, config->blockDim);
}

const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "no error";
  case cudaErrorMemoryAllocation: return "out of memory";
  case cudaErrorInvalidConfiguration: return "invalid configuration argument";
  case cudaErrorNoKernelImageForDevice: return "no kernel image is available for execution on "
                                               "the device";
  case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
  default: return "(fake_cudart: some error)";
  }
}

/* ---- what nvcc's generated code calls ---------------------------------------------------- */

static char fat_binary_handle;
static dim3 pushed_grid, pushed_block;
static size_t pushed_shared;
static cudaStream_t pushed_stream;

void **__cudaRegisterFatBinary(void *fat_cubin) {
  (void)fat_cubin;
  return (void **)&fat_binary_handle;
}

void __cudaRegisterFatBinaryEnd(void **handle) { (void)handle; }

void __cudaUnregisterFatBinary(void **handle) { (void)handle; }

void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
                            const char *device_name, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *block, dim3 *grid, int *warp_size) {
  (void)handle, (void)host_fun, (void)device_fun, (void)device_name, (void)thread_limit;
  (void)tid, (void)bid, (void)block, (void)grid, (void)warp_size;
}

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared,
                                     struct CUstream_st *stream) {
  pushed_grid = grid, pushed_block = block, pushed_shared = shared, pushed_stream = stream;
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream) {
  *grid = pushed_grid, *block = pushed_block, *shared = pushed_shared;
  *(cudaStream_t *)stream = pushed_stream;
  return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func) {
  *kernel = (cudaKernel_t)func;
  return cudaSuccess;
}

/* The <<<...>>> stub ignores what this returns: the error reaches the caller only as the thread's
 * last error (cudaGetLastError). */
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                               size_t shared, cudaStream_t stream) {
  (void)kernel, (void)args, (void)shared, (void)stream;
  return launch(grid, block);
}
