// Misaligned rows in kernels of few resident blocks (issue #13): the shapes of single stvenant's
// and double bigfusion's one-kernel candidates (RI rows read, RO rows written, one element per
// thread, 192 threads, every input live at once so that ~2 blocks fit an SM), called on elements
// [first, first + n) of component-major arrays whose rows are ld apart.
//   direct   each thread writes its element of every row
//   staged   rows assembled in shared memory, a block barrier, then written from sectors
//   seams    lanes inside whole sectors write straight; the few in a sector shared with the next
//            warp leave their value in shared memory, and the right-hand warp writes that sector
//            whole after its neighbour's bar.arrive (bar.sync on a barrier per warp pair)
// Printed: time per call relative to the aligned direct call, and % of copy of the same run.
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s\n", cudaGetErrorString(e_)); exit(1); } } while (0)
enum { TB = 192, W = TB / 32 };

template <typename T, int RI, int RO>
__device__ void compute(const T *__restrict__ in, size_t e, bool live, size_t ldi, T (&v)[RO]) {
  T x[RI];
#pragma unroll
  for (int i = 0; i < RI; i++) x[i] = live ? in[e + i * ldi] : T(0);
#pragma unroll
  for (int k = 0; k < RO; k++) {
    T s = 0;
#pragma unroll
    for (int i = k; i < RI; i += RO) s += x[i] * x[(i * 7 + 3) % RI];
    v[k] = s;
  }
}

template <typename T, int RI, int RO, int MODE>
__global__ void __launch_bounds__(TB) kern(const T *__restrict__ in, T *__restrict__ out, size_t n,
                                          size_t ldi, size_t ldo) {
  constexpr int S = 32 / sizeof(T);
  const size_t e0 = (size_t)blockIdx.x * TB;
  const int tx = threadIdx.x, lane = tx & 31, w = tx >> 5;
  const int count = n - e0 < TB ? (int)(n - e0) : TB;
  T v[RO];
  compute<T, RI, RO>(in, e0 + tx, tx < count, ldi, v);
  if (MODE == 0) {
#pragma unroll
    for (int k = 0; k < RO; k++)
      if (tx < count) out[e0 + tx + k * ldo] = v[k];
  } else if (MODE == 1) {
    __shared__ T tile[RO][TB];
#pragma unroll
    for (int k = 0; k < RO; k++) tile[k][tx] = v[k];
    __syncthreads();
    for (int k = 0; k < RO; k++) {
      T *row = out + k * ldo + e0;
      int shift = (int)(((size_t)row / sizeof(T)) % S);
      for (int i = tx; i < count + shift; i += TB) {
        int j = i - shift;
        if (j >= 0) row[j] = tile[k][j];
      }
    }
  } else {
    __shared__ T seam[RO][W][S]; /* [k][b]: the sector between warps b - 1 and b */
#pragma unroll
    for (int k = 0; k < RO; k++) {
      T *row = out + k * ldo + e0;
      const int p = (int)(((size_t)row / sizeof(T)) % S); /* the same for every warp */
      if (p && w > 0 && lane < S - p) seam[k][w][p + lane] = v[k];
      else if (p && w < W - 1 && lane >= 32 - p) seam[k][w + 1][lane - (32 - p)] = v[k];
      else if (tx < count) row[tx] = v[k];
    }
    if (w < W - 1) asm volatile("bar.arrive %0, 64;" ::"r"(w + 1) : "memory");
    if (w > 0) {
      asm volatile("bar.sync %0, 64;" ::"r"(w) : "memory");
      for (int k = 0; k < RO; k++) {
        T *row = out + k * ldo + e0;
        const int p = (int)(((size_t)row / sizeof(T)) % S);
        const int j = 32 * w - p + lane;
        if (p && lane < S && j < count) row[j] = seam[k][w][lane];
      }
    }
  }
}

static float time_ms(void (*go)(void *), void *arg) {
  cudaEvent_t t0, t1; cudaEventCreate(&t0); cudaEventCreate(&t1);
  std::vector<float> v;
  for (int r = 0; r < 9; r++) {
    go(arg);
    cudaEventRecord(t0);
    for (int i = 0; i < 20; i++) go(arg);
    cudaEventRecord(t1); cudaEventSynchronize(t1);
    float ms; cudaEventElapsedTime(&ms, t0, t1); v.push_back(ms / 20);
  }
  std::sort(v.begin(), v.end());
  return v[4];
}
template <typename T, int RI, int RO>
struct Call { int mode; const T *in; T *out; size_t n, ldi, ldo; };
template <typename T, int RI, int RO> static void run_call(void *p) {
  auto *c = (Call<T, RI, RO> *)p;
  unsigned blocks = (unsigned)((c->n + TB - 1) / TB);
  if (c->mode == 0) kern<T, RI, RO, 0><<<blocks, TB>>>(c->in, c->out, c->n, c->ldi, c->ldo);
  else if (c->mode == 1) kern<T, RI, RO, 1><<<blocks, TB>>>(c->in, c->out, c->n, c->ldi, c->ldo);
  else kern<T, RI, RO, 2><<<blocks, TB>>>(c->in, c->out, c->n, c->ldi, c->ldo);
}
struct Copy { char *a, *b; size_t bytes; };
static void run_copy(void *p) { Copy *c = (Copy *)p; cudaMemcpyAsync(c->b, c->a, c->bytes, cudaMemcpyDeviceToDevice); }

static bool quick; /* under the sanitizers: small checks only */
template <typename T, int RI, int RO> static void shape(const char *title, double copy_gbs) {
  size_t n = 1 << 22, ld_max = n + 64;
  T *in, *out;
  CK(cudaMalloc(&in, RI * ld_max * sizeof(T))); CK(cudaMalloc(&out, RO * ld_max * sizeof(T)));
  std::vector<T> h(RI * ld_max);
  for (size_t i = 0; i < h.size(); i++) h[i] = (T)((i * 2654435761u) % 1000) * T(0.001);
  CK(cudaMemcpy(in, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  int regs = 0;
  { cudaFuncAttributes a; CK(cudaFuncGetAttributes(&a, kern<T, RI, RO, 0>)); regs = a.numRegs; }
  int occ[3];
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ[0], kern<T, RI, RO, 0>, TB, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ[1], kern<T, RI, RO, 1>, TB, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ[2], kern<T, RI, RO, 2>, TB, 0));
  printf("\n%s: %d rows in, %d out, %zu-byte reals, %d registers, blocks/SM direct %d staged %d "
         "seams %d\n", title, RI, RO, sizeof(T), regs, occ[0], occ[1], occ[2]);
  struct { const char *name; int mode; size_t fi, ldi, fo, ldo; } v[] = {
      {"direct, aligned", 0, 0, n, 0, n},
      {"direct, odd ld", 0, 1, n + 1, 1, n + 1},
      {"direct, loads odd", 0, 1, n + 1, 0, n},
      {"direct, stores odd", 0, 0, n, 1, n + 1},
      {"staged, aligned", 1, 0, n, 0, n},
      {"staged, odd ld", 1, 1, n + 1, 1, n + 1},
      {"seams, aligned", 2, 0, n, 0, n},
      {"seams, odd ld", 2, 1, n + 1, 1, n + 1},
      {"seams, stores odd", 2, 0, n, 1, n + 1},
      {"direct, aligned again", 0, 0, n, 0, n},
      {"direct, odd ld again", 0, 1, n + 1, 1, n + 1},
      {"seams, odd ld again", 2, 1, n + 1, 1, n + 1},
  };
  float base = 0;
  double bytes = (double)(RI + RO) * n * sizeof(T);
  for (auto &c : v) {
    if (quick) break;
    Call<T, RI, RO> call = {c.mode, in + c.fi, out + c.fo, n, c.ldi, c.ldo};
    float ms = time_ms(run_call<T, RI, RO>, &call);
    CK(cudaGetLastError());
    if (!base) base = ms;
    printf("  %-24s %.4f ms  %6.1f%% of aligned  %6.1f%% of copy\n", c.name, ms, 100 * ms / base,
           100 * (bytes / copy_gbs / 1e6) / ms);
  }
  std::vector<T> a(RO * ld_max), b(RO * ld_max);
  for (size_t nn : {(size_t)1, (size_t)7, (size_t)200, (size_t)1000003, n})
    if (!quick || nn <= 200)
    for (size_t first : {(size_t)0, (size_t)1, (size_t)3}) {
      size_t ld = nn + first;
      CK(cudaMemset(out, 0, RO * ld_max * sizeof(T)));
      Call<T, RI, RO> d = {0, in + first, out + first, nn, ld, ld}; run_call<T, RI, RO>(&d);
      CK(cudaMemcpy(a.data(), out, a.size() * sizeof(T), cudaMemcpyDeviceToHost));
      bool same = true;
      for (int mode = 1; mode <= 2; mode++) {
        CK(cudaMemset(out, 0, RO * ld_max * sizeof(T)));
        Call<T, RI, RO> s = {mode, in + first, out + first, nn, ld, ld}; run_call<T, RI, RO>(&s);
        CK(cudaMemcpy(b.data(), out, b.size() * sizeof(T), cudaMemcpyDeviceToHost));
        same &= a == b;
      }
      if (!same) printf("  MISMATCH at n = %zu, first %zu\n", nn, first);
    }
  printf("  staged and seams == direct at n = 1, 7, 200, 1000003, %zu, first 0, 1, 3: checked\n", n);
  cudaFree(in); cudaFree(out);
}

int main(int argc, char **argv) {
  (void)argv;
  Copy cp; cp.bytes = (size_t)256 << 20;
  CK(cudaMalloc(&cp.a, cp.bytes)); CK(cudaMalloc(&cp.b, cp.bytes));
  double copy_gbs = 2.0 * cp.bytes / time_ms(run_copy, &cp) / 1e6;
  printf("copy %.1f GB/s (cudaMemcpy of %zu MB)\n", copy_gbs, cp.bytes >> 20);
  quick = argc > 1;
  shape<float, 103, 30>("stvenant-like, single", copy_gbs);
  shape<double, 71, 25>("bigfusion-like, double", copy_gbs);
  shape<double, 9, 9>("synctest-like, double", copy_gbs);
  shape<float, 9, 9>("synctest-like, single", copy_gbs);
  return 0;
}
