// Reads of slices of element-major records: how many bytes does DRAM move when a kernel reads
// floats [o, o+s) of each element's record of R floats?  Printed as the time in units of the
// useful bytes at the copy bandwidth of the same run, beside the byte counts at 32-, 64- and
// 128-byte granules.
#include <cstdio>
#include <cstdlib>
#include <set>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s\n", cudaGetErrorString(e_)); exit(1); } } while (0)
template <int S>
__global__ void slice_read(const float *__restrict__ in, float *__restrict__ out, long n, int R,
                           int o) {
  long first = (long)blockIdx.x * 256;
  float v[S];
#pragma unroll
  for (int k = 0; k < S; k++) {
    int j = threadIdx.x + 256 * k;
    long e = first + j / S;
    v[k] = e < n ? __ldcs(in + e * R + o + j % S) : 0.f;
  }
  float acc = 0;
#pragma unroll
  for (int k = 0; k < S; k++) acc += v[k];
  long me = first + threadIdx.x;
  if (me < n) out[me] = acc;
}
static void launch(int s, int blocks, const float *in, float *out, long n, int R, int o) {
  switch (s) {
  case 1: slice_read<1><<<blocks, 256>>>(in, out, n, R, o); break;
  case 2: slice_read<2><<<blocks, 256>>>(in, out, n, R, o); break;
  case 3: slice_read<3><<<blocks, 256>>>(in, out, n, R, o); break;
  case 4: slice_read<4><<<blocks, 256>>>(in, out, n, R, o); break;
  case 6: slice_read<6><<<blocks, 256>>>(in, out, n, R, o); break;
  case 9: slice_read<9><<<blocks, 256>>>(in, out, n, R, o); break;
  case 18: slice_read<18><<<blocks, 256>>>(in, out, n, R, o); break;
  case 36: slice_read<36><<<blocks, 256>>>(in, out, n, R, o); break;
  case 72: slice_read<72><<<blocks, 256>>>(in, out, n, R, o); break;
  default: printf("no kernel for s = %d\n", s); exit(1);
  }
}
static double lines(int R, int o, int s, int G) {
  std::set<long> a, b;
  int P = 512;
  for (long e = 0; e < 2 * P; e++)
    for (long x = (e * R + o) * 4; x < (e * R + o + s) * 4; x += 4) (e < P ? a : b).insert(x / G);
  std::set<long> all(a); all.insert(b.begin(), b.end());
  return (double)(all.size() - a.size()) * G / P;
}
int main() {
  long n = 1L << 22;
  int maxR = 144;
  float *in, *out, *c1, *c2;
  CK(cudaMalloc(&in, n * maxR * 4)); CK(cudaMalloc(&out, n * 4));
  CK(cudaMemset(in, 0, n * maxR * 4));
  size_t cb = 1L << 30; CK(cudaMalloc(&c1, cb)); CK(cudaMalloc(&c2, cb));
  cudaEvent_t t0, t1; cudaEventCreate(&t0); cudaEventCreate(&t1);
  float best = 1e30f, ms;
  for (int r = 0; r < 10; r++) {
    cudaEventRecord(t0); cudaMemcpy(c2, c1, cb, cudaMemcpyDeviceToDevice); cudaEventRecord(t1);
    cudaEventSynchronize(t1); cudaEventElapsedTime(&ms, t0, t1); if (ms < best) best = ms;
  }
  double gbs = 2.0 * cb / (best * 1e6);
  printf("copy %.1f GB/s\n", gbs);
  int cases[][3] = {{1, 0, 1}, {2, 0, 2}, {3, 0, 3}, {4, 0, 4}, {6, 0, 6}, {9, 0, 9}, {18, 0, 18}, {36, 0, 36},
                    {72, 18, 9}, {144, 9, 9}, {144, 0, 18}, {144, 36, 36},{72, 0, 9}, {72, 9, 9}, {72, 0, 18}, {72, 18, 18}, {72, 36, 18}, {72, 54, 18},
                    {72, 0, 36}, {72, 0, 72}, {8, 0, 1}, {8, 1, 1}, {8, 0, 2}, {8, 2, 2}, {8, 0, 4},
                    {12, 0, 3}, {12, 3, 3}, {12, 0, 6}, {144, 0, 9}, {144, 27, 9}, {144, 0, 36},
                    {27, 0, 9}, {36, 0, 9}, {36, 9, 9}, {9, 0, 9}};
  double base[73] = {0};
  printf("%4s %3s %3s %8s %8s %8s %8s %8s %8s %8s\n", "R", "o", "s", "useful", "ns/el", "B@copy", "B@contig",
         "B32", "B64", "B128");
  for (auto &c : cases) {
    int R = c[0], o = c[1], s = c[2];
    int blocks = (int)((n + 255) / 256);
    float b = 1e30f;
    for (int r = 0; r < 8; r++) {
      cudaEventRecord(t0); launch(s, blocks, in, out, n, R, o); cudaEventRecord(t1);
      cudaEventSynchronize(t1); cudaEventElapsedTime(&ms, t0, t1); if (ms < b) b = ms;
    }
    CK(cudaGetLastError());
    double nsel = b * 1e6 / n;
    double bytes = nsel * gbs - 4; /* minus the 4-byte write */
    if (R == s) base[s] = nsel;
    double rel = base[s] > 0 ? nsel / base[s] * s * 4 : 0; /* bytes at the contiguous read's speed */
    printf("%4d %3d %3d %8d %8.4f %8.1f %8.1f %8.1f %8.1f %8.1f\n", R, o, s, s * 4, nsel, bytes, rel,
           lines(R, o, s, 32), lines(R, o, s, 64), lines(R, o, s, 128));
  }
  return 0;
}
