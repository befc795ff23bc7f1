/* fake_cudart.h — what a test tells the fake CUDA runtime (fake_cudart.c). */
#ifndef FAKE_CUDART_H
#define FAKE_CUDART_H
#include <cuda_runtime_api.h>

/* Launches fail with e (cudaSuccess: none does) from the after'th launch from now on (0: the
 * next). */
void fake_cuda_fail_launches(cudaError_t e, int after);
/* The context keeps e, as after a kernel's fault: every later launch and call fails with it. */
void fake_cuda_corrupt_context(cudaError_t e);
/* Launches that succeeded so far. */
int fake_cuda_launches(void);
#endif
