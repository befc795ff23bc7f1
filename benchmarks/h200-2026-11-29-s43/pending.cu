// Session 43, call 2: which CUDA runtime calls clear an error the caller left pending (a failed
// cudaMalloc), as the embed's launch of a kernel of more than 48 KB of shared memory did in
// call 1.  nvcc -arch=sm_90 pending.cu -o pending -lcuda && ./pending
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void k(float *x) {
  extern __shared__ float s[];
  s[threadIdx.x] = 1;
  __syncthreads();
  if (x) x[threadIdx.x] = s[threadIdx.x];
}

static void pend() {
  void *p;
  cudaMalloc(&p, (size_t)1 << 62);
}

static void show(const char *what) {
  cudaError_t e = cudaPeekAtLastError();
  printf("%-60s pending after: %s\n", what, cudaGetErrorName(e));
  cudaGetLastError();
}

int main() {
  cudaFree(0);
  pend();
  show("nothing");
  pend();
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
  show("cudaFuncSetAttribute 64 KB (first)");
  pend();
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
  show("cudaFuncSetAttribute 64 KB (again)");
  pend();
  cudaFuncAttributes a;
  cudaFuncGetAttributes(&a, k);
  show("cudaFuncGetAttributes");
  pend();
  cudaLaunchConfig_t c = {dim3(1), dim3(32), 65536, 0, NULL, 0};
  cudaLaunchKernelEx(&c, k, (float *)NULL);
  show("cudaLaunchKernelEx 64 KB (attribute set before)");
  pend();
  cudaLaunchConfig_t c2 = {dim3(1), dim3(32), 1024, 0, NULL, 0};
  cudaLaunchKernelEx(&c2, k, (float *)NULL);
  show("cudaLaunchKernelEx 1 KB");
  pend();
  cudaFunction_t f;
  cudaGetFuncBySymbol(&f, (const void *)k);
  show("cudaGetFuncBySymbol");
  pend();
  cuFuncSetAttribute((CUfunction)f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536);
  show("cuFuncSetAttribute (driver API)");
  cudaDeviceSynchronize();
  show("sync");
  return 0;
}
