/*
 * partial.cu — what writing part of a record's sectors costs (issue #14, session 25).
 *
 * Session 24 (calls E, F) found candidates whose kernels write some slices of an element-major
 * output's records while another kernel writes the rest (Kd[N] of gradients_loop20) running 2-3x
 * slower than the model says, with ~80 bytes per element more read from DRAM.  This measures a
 * kernel that writes floats [O, O + W) of every R-float record (the rest written by a kernel
 * launched just before it, as a fused candidate's other kernel would), against the sectors it
 * leaves partly written.  Single precision, n = 4194304 records, 256 threads per block; "low"
 * runs hold 2 blocks per SM (100 KB of dynamic shared memory), as fused kernels often do.
 * Writes are per thread (owner: thread e writes its record's slice) or staged (the block's
 * slices written by consecutive threads, as kasgen's staging does).  Median of 9 x 10 calls,
 * CUDA events around the slice kernel only; the copy bandwidth of the same run alongside.
 */
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

/* Thread e writes floats [o, o + w) of record e. */
__global__ void owner_write(float *p, size_t n, int r, int o, int w) {
  extern __shared__ float pad[];
  size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  for (int k = 0; k < w; k++) p[e * r + o + k] = (float)(e + k);
  if (w < 0) pad[0] = 0; /* keeps the dynamic shared memory */
}

/* The same with the record's shape known at compile time and the stores unrolled, as kasgen's
 * owner saves are written (d_<impl>_save_<i>_e<E>_r_rec<R>). */
template <int R, int O, int W>
__global__ void owner_fixed(float *p, size_t n) {
  extern __shared__ float pad[];
  size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
#pragma unroll
  for (int k = 0; k < W; k++) p[e * R + O + k] = (float)(e + k);
  if (n == 0) pad[0] = 0;
}

/* The block's slices written by consecutive threads: thread t writes value t, t + 256, ... of
 * the block's 256 * w slice values (as a staged copy-out does). */
__global__ void staged_write(float *p, size_t n, int r, int o, int w) {
  extern __shared__ float pad[];
  size_t e0 = (size_t)blockIdx.x * blockDim.x;
  for (int i = threadIdx.x; i < 256 * w; i += blockDim.x) {
    size_t e = e0 + i / w;
    if (e < n) p[e * r + o + i % w] = (float)(e + i % w);
  }
  if (w < 0) pad[0] = 0;
}

/* The other kernel: floats outside [o, o + w) of every record. */
__global__ void complement_write(float *p, size_t n, int r, int o, int w) {
  size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  for (int k = 0; k < r; k++)
    if (k < o || k >= o + w) p[e * r + k] = -1.0f;
}

static const size_t N = 4194304;

/* Sectors of 32 bytes that the slices of records [0, 8) touch without covering, per record
 * (records of r floats repeat their alignment to sectors every 8 records at most). */
static double partial_sectors(int r, int o, int w) {
  int partial = 0;
  long first = 0, last = (long)8 * r * 4;
  for (long s = first; s < last; s += 32) {
    int covered = 0;
    for (long b = s; b < s + 32; b += 4) {
      long k = b / 4 % r; /* the float's place in its record */
      covered += k >= o && k < o + w;
    }
    partial += covered > 0 && covered < 8;
  }
  return partial / 8.0;
}

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static cudaEvent_t ev_a, ev_b;

/* Times owner_fixed<R, O, W> after the complement kernel, at full and low occupancy. */
template <int R, int O, int W>
static void fixed_case(float *p, double copy_gbs) {
  CHECK(cudaFuncSetAttribute(owner_fixed<R, O, W>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             102400));
  unsigned blocks = (unsigned)((N + 255) / 256);
  for (int low = 0; low < 2; low++) {
    std::vector<float> t;
    for (int i = 0; i < 9; i++) {
      float total = 0;
      for (int j = 0; j < 10; j++) {
        if (W < R) complement_write<<<blocks, 256>>>(p, N, R, O, W);
        CHECK(cudaEventRecord(ev_a));
        owner_fixed<R, O, W><<<blocks, 256, low ? 102400 : 0>>>(p, N);
        CHECK(cudaEventRecord(ev_b));
        CHECK(cudaEventSynchronize(ev_b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, ev_a, ev_b));
        total += ms;
      }
      t.push_back(total / 10);
    }
    CHECK(cudaGetLastError());
    double ns = median(t) * 1e6 / N, bytes = 4.0 * W;
    printf("%3d/%3d/%3d owner-unrolled %-4s partial %6.3f  %8.4f ns/elem  %6.2f x copy of its bytes\n",
           R, O, W, low ? "low" : "full", partial_sectors(R, O, W), ns,
           ns / (bytes / copy_gbs));
  }
}

int main() {
  float *p, *q;
  CHECK(cudaMalloc(&p, N * 144 * sizeof(float)));
  CHECK(cudaMalloc(&q, N * 40 * sizeof(float)));
  CHECK(cudaFuncSetAttribute(owner_write, cudaFuncAttributeMaxDynamicSharedMemorySize, 102400));
  CHECK(cudaFuncSetAttribute(staged_write, cudaFuncAttributeMaxDynamicSharedMemorySize, 102400));
  CHECK(cudaEventCreate(&ev_a));
  CHECK(cudaEventCreate(&ev_b));
  cudaEvent_t a = ev_a, b = ev_b;
  /* copy bandwidth: bytes read plus written per second of a 640 MB device-to-device copy */
  std::vector<float> ct;
  for (int i = 0; i < 9; i++) {
    CHECK(cudaEventRecord(a));
    for (int j = 0; j < 10; j++)
      CHECK(cudaMemcpyAsync(q, p, N * 40 * sizeof(float), cudaMemcpyDeviceToDevice));
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    ct.push_back(ms / 10);
  }
  double copy_gbs = 2.0 * N * 40 * 4 / (median(ct) * 1e6);
  printf("copy bandwidth %.1f GB/s\n", copy_gbs);
  struct { int r, o, w; } cases[] = {
      {36, 0, 36}, {36, 0, 27}, {36, 27, 9}, {36, 0, 9}, {36, 9, 18}, {36, 0, 18},
      {32, 0, 32}, {32, 0, 8},  {32, 0, 16}, {32, 8, 8}, {32, 0, 12}, {32, 2, 12},
      {32, 0, 4},  {32, 2, 4},  {32, 0, 2},  {32, 1, 6}, {12, 0, 3},  {12, 3, 9},
      {12, 0, 9},  {16, 0, 8},  {16, 0, 4},  {16, 2, 4}, {9, 0, 3},   {9, 3, 6}};
  printf("%-10s %-7s %-4s %8s %8s %10s %10s %8s\n", "R/O/W", "writes", "occ", "partial",
         "sectors", "ns/elem", "copy ns", "ratio");
  for (auto c : cases)
    for (int staged = 0; staged < 2; staged++)
      for (int low = 0; low < 2; low++) {
        size_t smem = low ? 102400 : 0;
        unsigned blocks = (unsigned)((N + 255) / 256);
        std::vector<float> t;
        for (int i = 0; i < 9; i++) {
          float total = 0;
          for (int j = 0; j < 10; j++) {
            if (c.w < c.r) complement_write<<<blocks, 256>>>(p, N, c.r, c.o, c.w);
            CHECK(cudaEventRecord(a));
            if (staged)
              staged_write<<<blocks, 256, smem>>>(p, N, c.r, c.o, c.w);
            else
              owner_write<<<blocks, 256, smem>>>(p, N, c.r, c.o, c.w);
            CHECK(cudaEventRecord(b));
            CHECK(cudaEventSynchronize(b));
            float ms;
            CHECK(cudaEventElapsedTime(&ms, a, b));
            total += ms;
          }
          t.push_back(total / 10);
        }
        CHECK(cudaGetLastError());
        double ns = median(t) * 1e6 / N;
        /* whole sectors touched per record, written at the copy bandwidth */
        double touched = 0;
        for (long s = 0; s < (long)8 * c.r * 4; s += 32) {
          int covered = 0;
          for (long bb = s; bb < s + 32; bb += 4) covered += bb / 4 % c.r >= c.o && bb / 4 % c.r < c.o + c.w;
          touched += covered > 0;
        }
        touched /= 8;
        double copy_ns = touched * 32 / copy_gbs;
        char name[32];
        snprintf(name, sizeof name, "%d/%d/%d", c.r, c.o, c.w);
        printf("%-10s %-7s %-4s %8.3f %8.3f %10.4f %10.4f %8.2f\n", name,
               staged ? "staged" : "owner", low ? "low" : "full", partial_sectors(c.r, c.o, c.w),
               touched, ns, copy_ns, ns / copy_ns);
      }
  printf("\nunrolled owner saves (compile-time R, O, W):\n");
  fixed_case<9, 0, 9>(p, copy_gbs);
  fixed_case<12, 0, 12>(p, copy_gbs);
  fixed_case<27, 0, 27>(p, copy_gbs);
  fixed_case<36, 0, 36>(p, copy_gbs);
  fixed_case<36, 0, 27>(p, copy_gbs);
  fixed_case<36, 27, 9>(p, copy_gbs);
  fixed_case<36, 0, 9>(p, copy_gbs);
  fixed_case<36, 9, 9>(p, copy_gbs);
  fixed_case<32, 0, 8>(p, copy_gbs);
  fixed_case<32, 0, 16>(p, copy_gbs);
  fixed_case<32, 0, 12>(p, copy_gbs);
  fixed_case<72, 0, 9>(p, copy_gbs);
  fixed_case<144, 0, 9>(p, copy_gbs);
  fixed_case<12, 0, 3>(p, copy_gbs);
  fixed_case<12, 3, 9>(p, copy_gbs);
  fixed_case<9, 0, 3>(p, copy_gbs);
  return 0;
}
