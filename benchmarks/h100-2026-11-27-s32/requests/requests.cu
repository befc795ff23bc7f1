// requests.cu — session 32, issue #14: how fast slices saved straight run, by who writes them.
// Write-only kernels store slices of 9 floats (slice s of 4 = Kd[s] of gradients_loop20's
// 36-float records) for n elements, in three ways the generated kernels do:
//   owner: one thread per element, each lane its 9 floats one by one (stride 144 bytes);
//   chunk: one thread per element's block (E = 128), the block's E*9 floats of a slice moved
//          one per thread, consecutive floats in consecutive threads (binding_io_width's W = 1);
//   three: three threads per element (E = 64, 192 threads), each 3 consecutive floats.
// Each is run for the slice sets {0}, {3}, {0,1}, {0,1,2}, {0..3}.  `requests --once` launches
// each once, untimed (for Nsight Compute: session 33, call 3).  The L2 write requests are
// counted on the host by emulating each warp's store instructions as docs/model.md counts them
// (one per partly written sector, one per line of wholly written sectors).  Prints ns per
// element, useful GB/s and requests per ns, beside the copy bandwidth of the same run.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#define CHECK(x)                                                         \
  do {                                                                   \
    cudaError_t e_ = (x);                                                \
    if (e_ != cudaSuccess) {                                             \
      printf("CUDA error %s at %d\n", cudaGetErrorString(e_), __LINE__); \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

constexpr int R = 36, S = 9;

__global__ void owner(float *p, size_t n, unsigned mask) {
  size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (e >= n) return;
  for (int s = 0; s < 4; s++)
    if (mask >> s & 1)
      for (int k = 0; k < S; k++) p[e * R + s * S + k] = (float)(e + k);
}

__global__ void chunk(float *p, size_t n, unsigned mask) {  // blockDim 128 = E
  const int E = 128;
  size_t e0 = blockIdx.x * (size_t)E;
  for (int s = 0; s < 4; s++)
    if (mask >> s & 1)
      for (int q = threadIdx.x; q < E * S; q += blockDim.x) {
        size_t e = e0 + q / S;
        if (e < n) p[e * R + s * S + q % S] = (float)(e + q);
      }
}

__global__ void three(float *p, size_t n, unsigned mask) {  // blockDim 192: 3 x E=64
  int r = threadIdx.x % 3, le = threadIdx.x / 3;
  size_t e = blockIdx.x * (size_t)64 + le;
  if (e >= n) return;
  for (int s = 0; s < 4; s++)
    if (mask >> s & 1)
      for (int k = 3 * r; k < 3 * r + 3; k++) p[e * R + s * S + k] = (float)(e + k);
}

// Requests of one warp instruction: lanes' byte addresses (4 bytes each).
static long requests_of(const std::vector<long> &addr) {
  std::map<long, int> bytes;  // sector -> bytes written
  for (long a : addr) bytes[a / 32] += 4;
  long req = 0;
  std::set<long> lines;
  for (auto &sb : bytes) {
    if (sb.second < 32)
      req++;
    else
      lines.insert(sb.first / 4);
  }
  return req + (long)lines.size();
}

// Requests per element of a kernel's stores, emulated over `blocks` blocks.
static double count_requests(int kind, unsigned mask, int blocks) {
  long req = 0, elems = 0;
  for (int b = 0; b < blocks; b++) {
    if (kind == 0) {  // owner: warps of 32 elements
      for (int w = 0; w < 4; w++)
        for (int s = 0; s < 4; s++)
          if (mask >> s & 1)
            for (int k = 0; k < S; k++) {
              std::vector<long> a;
              for (int l = 0; l < 32; l++)
                a.push_back(((long)(b * 128 + w * 32 + l) * R + s * S + k) * 4);
              req += requests_of(a);
            }
      elems += 128;
    } else if (kind == 1) {  // chunk
      for (int s = 0; s < 4; s++)
        if (mask >> s & 1)
          for (int it = 0; it < S; it++)
            for (int w = 0; w < 4; w++) {
              std::vector<long> a;
              for (int l = 0; l < 32; l++) {
                int q = it * 128 + w * 32 + l;
                a.push_back(((long)(b * 128 + q / S) * R + s * S + q % S) * 4);
              }
              req += requests_of(a);
            }
      elems += 128;
    } else {  // three
      for (int w = 0; w < 6; w++)
        for (int s = 0; s < 4; s++)
          if (mask >> s & 1)
            for (int j = 0; j < 3; j++) {
              std::vector<long> a;
              for (int l = 0; l < 32; l++) {
                int t = w * 32 + l, r = t % 3, le = t / 3;
                a.push_back(((long)(b * 64 + le) * R + s * S + 3 * r + j) * 4);
              }
              req += requests_of(a);
            }
      elems += 64;
    }
  }
  return (double)req / elems;
}

int main(int argc, char **argv) {
  const size_t n = 4194304;
  const bool once = argc > 1 && !strcmp(argv[1], "--once");
  float *p, *q;
  CHECK(cudaMalloc(&p, n * R * sizeof(float)));
  CHECK(cudaMalloc(&q, n * R * sizeof(float)));
  CHECK(cudaMemset(p, 0, n * R * sizeof(float)));
  cudaEvent_t t0, t1;
  cudaEventCreate(&t0);
  cudaEventCreate(&t1);
  auto timed = [&](auto launch) {
    std::vector<float> ms;
    for (int r = 0; r < (once ? 1 : 25); r++) {
      cudaEventRecord(t0);
      launch();
      cudaEventRecord(t1);
      CHECK(cudaEventSynchronize(t1));
      float x;
      cudaEventElapsedTime(&x, t0, t1);
      if (once || r >= 5) ms.push_back(x);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  float copy_ms =
      timed([&] { cudaMemcpyAsync(q, p, n * R * sizeof(float), cudaMemcpyDeviceToDevice); });
  double copy_gbs = 2.0 * n * R * sizeof(float) / (copy_ms * 1e6);
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf("device %s, copy %.1f GB/s\n", prop.name, copy_gbs);
  printf("%-6s %-5s %8s %9s %9s %10s %9s\n", "kind", "mask", "ns/elem", "useful", "req/elem",
         "req/ns", "% copy");
  const char *names[3] = {"owner", "chunk", "three"};
  unsigned masks[5] = {0x1, 0x8, 0x3, 0x7, 0xf};
  for (int kind = 0; kind < 3; kind++)
    for (unsigned mask : masks) {
      float ms = timed([&] {
        if (kind == 0)
          owner<<<(n + 127) / 128, 128>>>(p, n, mask);
        else if (kind == 1)
          chunk<<<(n + 127) / 128, 128>>>(p, n, mask);
        else
          three<<<(n + 63) / 64, 192>>>(p, n, mask);
      });
      CHECK(cudaGetLastError());
      double ns = ms * 1e6 / n;
      int slices = __builtin_popcount(mask);
      double useful = slices * S * 4.0 / ns;  // GB/s
      double req = count_requests(kind, mask, 64);
      printf("%-6s 0x%-3x %8.4f %8.1f %9.2f %10.1f %8.1f%%\n", names[kind], mask, ns, useful, req,
             req / ns, 100 * useful / copy_gbs);
    }
  return 0;
}
