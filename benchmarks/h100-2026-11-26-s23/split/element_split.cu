// A hand-written prototype, not kasgen's output: seed 004's StVenant element (Algorithm 5.1, lines
// 5-20; specs/stvenant_element.spec) with the pair loop's 16 iterations spread over 16 threads of
// an element, to measure what issue #11's "iterations split across threads" can reach before the
// generator learns it.  Call K found kasgen's one-thread-per-element kernels at 9.4% occupancy:
// about 1 KB of shared memory per element.  Here one element's staged inputs and outputs (1.1 KB)
// serve 16 threads: 16 elements per block of 256 threads, 8 blocks per SM.
//   per block: the 16 elements' inputs copied into shared memory (16-byte cp.async); thread
//   (N, M) of element el computes A_N = w inv1 dphi_N, then B_NM = |S dphi_N . dphi_M| w I +
//   w ((ten4 . A_N) . F) . dphi_M, contracted over ten4's first two indices first (9 values
//   live, not 27), into the block's output copy; thread (N, 0) writes vec3NodeStiff[N]; the
//   copy goes out as float4.  (Call L's first version, 27-value T1 and T2 per thread and
//   synchronous float4 loads, ran at 46.3% of copy.)
// Checked against a float64 CPU reference of the library's functions (library/*/*.c); timed
// against cudaMemcpy's bandwidth of the same run on the spec's compulsory bytes (1108 per
// element).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

#ifndef EL
#define EL 16 /* elements per block (-DEL=4, 8, 16: a multiple of 4, so that every array's chunk
                 is whole 16-byte copies), 16 threads each */
#endif
enum { THREADS = EL * 16 };
enum { R_T4 = 81, R_F = 9, R_I1 = 9, R_S = 9, R_W = 1, R_DPHI = 12, R_NS = 12, R_MT = 144 };

/* The block's `reals` floats from g into s: 16-byte asynchronous copies (cp.async), every one
 * of the thread's in flight at once; kas_stage_in's way (library/kas_device.h). */
__device__ void stage_in(float *s, const float *__restrict__ g, int reals, int tid) {
  for (int q = tid; q < reals / 4; q += THREADS) {
    unsigned dst = (unsigned)__cvta_generic_to_shared(s + 4 * q);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(g + 4 * q) : "memory");
  }
}
__device__ void stage_out(const float *s, float *__restrict__ g, int reals, int tid) {
  if (reals % 4 == 0) {
    float4 *g4 = reinterpret_cast<float4 *>(g);
    const float4 *s4 = reinterpret_cast<const float4 *>(s);
    for (int q = tid; q < reals / 4; q += THREADS) g4[q] = s4[q];
  } else {
    for (int f = tid; f < reals; f += THREADS) g[f] = s[f];
  }
}

__global__ void __launch_bounds__(THREADS) element_split(
    const float *__restrict__ t4, const float *__restrict__ F, const float *__restrict__ inv1,
    const float *__restrict__ S, const float *__restrict__ W, const float *__restrict__ dphi,
    float *__restrict__ ns, float *__restrict__ mt, long n) {
  __shared__ __align__(16) float s_t4[EL * R_T4], s_F[EL * R_F], s_i1[EL * R_I1], s_S[EL * R_S],
      s_w[EL], s_dphi[EL * R_DPHI], s_ns[EL * R_NS], s_mt[EL * R_MT];
  const long e0 = (long)blockIdx.x * EL;
  const int tid = threadIdx.x;
  const int count = (int)(n - e0 < EL ? n - e0 : EL);
  if (count == EL) {
    stage_in(s_t4, t4 + e0 * R_T4, EL * R_T4, tid);
    stage_in(s_F, F + e0 * R_F, EL * R_F, tid);
    stage_in(s_i1, inv1 + e0 * R_I1, EL * R_I1, tid);
    stage_in(s_S, S + e0 * R_S, EL * R_S, tid);
    stage_in(s_w, W + e0, EL, tid);
    stage_in(s_dphi, dphi + e0 * R_DPHI, EL * R_DPHI, tid);
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
  } else { /* the last block: scalar copies of what exists */
    for (int f = tid; f < count * R_T4; f += THREADS) s_t4[f] = t4[e0 * R_T4 + f];
    for (int f = tid; f < count * R_F; f += THREADS) s_F[f] = F[e0 * R_F + f];
    for (int f = tid; f < count * R_I1; f += THREADS) s_i1[f] = inv1[e0 * R_I1 + f];
    for (int f = tid; f < count * R_S; f += THREADS) s_S[f] = S[e0 * R_S + f];
    for (int f = tid; f < count; f += THREADS) s_w[f] = W[e0 + f];
    for (int f = tid; f < count * R_DPHI; f += THREADS) s_dphi[f] = dphi[e0 * R_DPHI + f];
  }
  __syncthreads();
  const int el = tid / 16, N = tid % 16 / 4, M = tid % 4;
  if (el < count) {
    const float *t = s_t4 + el * R_T4, *f = s_F + el * R_F, *i1 = s_i1 + el * R_I1;
    const float *s = s_S + el * R_S, *dN = s_dphi + el * R_DPHI + 3 * N;
    const float *dM = s_dphi + el * R_DPHI + 3 * M;
    const float w = s_w[el];
    float a[3]; /* (7), (8): A_N = (inv1 . dphi_N) w */
    for (int i = 0; i < 3; i++) a[i] = (i1[3 * i] * dN[0] + i1[3 * i + 1] * dN[1] + i1[3 * i + 2] * dN[2]) * w;
    if (M == 0)
      for (int i = 0; i < 3; i++) s_ns[el * R_NS + 3 * N + i] = a[i];
    /* (9), (10), (12) contracted in the order that keeps 9 values live:
     * h[j][k] = sum_x (sum_{a,i} a[a] dphi_M[i] t4[a][i][j][x]) F[x][k] */
    float c[9];
#pragma unroll
    for (int q = 0; q < 9; q++) c[q] = a[q / 3] * dM[q % 3];
    float u[9];
#pragma unroll
    for (int jx = 0; jx < 9; jx++) {
      float sum = 0;
#pragma unroll
      for (int q = 0; q < 9; q++) sum += c[q] * t[9 * q + jx]; /* t4[a][i][j][x]: 27a + 9i + jx */
      u[jx] = sum;
    }
    /* (14), (15): |(S . dphi_N) . dphi_M| */
    float sc = 0;
    for (int i = 0; i < 3; i++) sc += (s[3 * i] * dN[0] + s[3 * i + 1] * dN[1] + s[3 * i + 2] * dN[2]) * dM[i];
    sc = fabsf(sc);
    float *out = s_mt + el * R_MT + 9 * (4 * N + M);
#pragma unroll
    for (int jk = 0; jk < 9; jk++) { /* (12), (13), (16)-(18) */
      const int j = jk / 3, k = jk % 3;
      const float h = u[3 * j] * f[k] + u[3 * j + 1] * f[3 + k] + u[3 * j + 2] * f[6 + k];
      out[jk] = (jk % 4 == 0 ? w * sc : 0.f) + h * w;
    }
  }
  __syncthreads();
  if (count == EL) {
    stage_out(s_ns, ns + e0 * R_NS, EL * R_NS, tid);
    stage_out(s_mt, mt + e0 * R_MT, EL * R_MT, tid);
  } else {
    for (int f = tid; f < count * R_NS; f += THREADS) ns[e0 * R_NS + f] = s_ns[f];
    for (int f = tid; f < count * R_MT; f += THREADS) mt[e0 * R_MT + f] = s_mt[f];
  }
}

/* The spec's computation in float64, as the library's references compute it. */
static void reference(const float *t, const float *f, const float *i1, const float *s, float w,
                      const float *dphi, double *ns, double *mt) {
  for (int N = 0; N < 4; N++) {
    double a[3], t1[27], t2[27];
    for (int i = 0; i < 3; i++) {
      a[i] = 0;
      for (int j = 0; j < 3; j++) a[i] += (double)i1[3 * i + j] * dphi[3 * N + j];
      a[i] *= w;
      ns[3 * N + i] = a[i];
    }
    for (int q = 0; q < 27; q++) {
      t1[q] = 0;
      for (int i = 0; i < 3; i++) t1[q] += (double)t[27 * i + q] * a[i];
    }
    for (int ab = 0; ab < 9; ab++)
      for (int c = 0; c < 3; c++) {
        t2[3 * ab + c] = 0;
        for (int x = 0; x < 3; x++) t2[3 * ab + c] += t1[3 * ab + x] * f[3 * x + c];
      }
    for (int M = 0; M < 4; M++) {
      double v[3], sc = 0;
      for (int i = 0; i < 3; i++) {
        v[i] = 0;
        for (int j = 0; j < 3; j++) v[i] += (double)s[3 * i + j] * dphi[3 * N + j];
        sc += v[i] * dphi[3 * M + i];
      }
      sc = fabs(sc);
      for (int jk = 0; jk < 9; jk++) {
        double h = 0;
        for (int i = 0; i < 3; i++) h += t2[9 * i + jk] * dphi[3 * M + i];
        mt[9 * (4 * N + M) + jk] = (jk % 4 == 0 ? w * sc : 0.0) + h * w;
      }
    }
  }
}

struct Arrays { float *t4, *F, *i1, *S, *W, *dphi, *ns, *mt; };
static void launch(const Arrays &a, long n) {
  element_split<<<(unsigned)((n + EL - 1) / EL), THREADS>>>(a.t4, a.F, a.i1, a.S, a.W, a.dphi,
                                                            a.ns, a.mt, n);
}

int main(int argc, char **argv) {
  long nmax = 4194304;
  bool check_only = argc > 1 && !strcmp(argv[1], "--check-only");
  const int recs[8] = {R_T4, R_F, R_I1, R_S, R_W, R_DPHI, R_NS, R_MT};
  float *dev[8];
  std::vector<std::vector<float>> host(8);
  srand(7);
  for (int k = 0; k < 8; k++) {
    CK(cudaMalloc(&dev[k], sizeof(float) * nmax * recs[k]));
    host[k].resize((size_t)nmax * recs[k]);
    if (k < 6)
      for (auto &x : host[k]) x = (float)rand() / RAND_MAX * 2 - 1;
    if (k < 6) CK(cudaMemcpy(dev[k], host[k].data(), sizeof(float) * host[k].size(), cudaMemcpyHostToDevice));
  }
  Arrays a = {dev[0], dev[1], dev[2], dev[3], dev[4], dev[5], dev[6], dev[7]};
  int wrong = 0;
  for (long n : {1L, 7L, 1000003L, nmax}) {
    CK(cudaMemset(dev[6], 0, sizeof(float) * nmax * R_NS));
    CK(cudaMemset(dev[7], 0, sizeof(float) * nmax * R_MT));
    launch(a, n);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(host[6].data(), dev[6], sizeof(float) * n * R_NS, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(host[7].data(), dev[7], sizeof(float) * n * R_MT, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    long step = n > 100000 ? 97 : 1; /* a sample of the large sizes; every element of the small */
    for (long e = 0; e < n; e += step) {
      double ns[12], mt[144];
      reference(&host[0][e * R_T4], &host[1][e * R_F], &host[2][e * R_I1], &host[3][e * R_S],
                host[4][e], &host[5][e * R_DPHI], ns, mt);
      for (int q = 0; q < 12; q++) num += pow(host[6][e * R_NS + q] - ns[q], 2), den += ns[q] * ns[q];
      for (int q = 0; q < 144; q++) num += pow(host[7][e * R_MT + q] - mt[q], 2), den += mt[q] * mt[q];
    }
    double err = sqrt(num / (den > 0 ? den : 1));
    printf("n = %ld: normwise relative error %.2e (%s)\n", n, err, err < 1e-5 ? "ok" : "WRONG");
    wrong += !(err < 1e-5);
  }
  if (check_only) return wrong != 0;
  cudaEvent_t t0, t1;
  cudaEventCreate(&t0);
  cudaEventCreate(&t1);
  auto median_ms = [&](auto go) {
    std::vector<float> v;
    for (int r = 0; r < 9; r++) {
      go();
      cudaEventRecord(t0);
      for (int i = 0; i < 10; i++) go();
      cudaEventRecord(t1);
      cudaEventSynchronize(t1);
      float ms;
      cudaEventElapsedTime(&ms, t0, t1);
      v.push_back(ms / 10);
    }
    std::sort(v.begin(), v.end());
    return v[4];
  };
  size_t bytes = (size_t)1108 * nmax / 2;
  float *c1, *c2;
  CK(cudaMalloc(&c1, bytes));
  CK(cudaMalloc(&c2, bytes));
  float copy_ms = median_ms([&] { cudaMemcpyAsync(c2, c1, bytes, cudaMemcpyDeviceToDevice); });
  double copy_gbs = 2.0 * bytes / copy_ms / 1e6;
  float ms = median_ms([&] { launch(a, nmax); });
  double ns_per = ms * 1e6 / nmax;
  printf("copy %.1f GB/s; element_split (EL = %d) %.4f ns per element, %.1f%% of copy (1108 bytes)\n",
         copy_gbs, EL, ns_per, 100.0 * 1108 / copy_gbs / ns_per);
  return wrong != 0;
}
