// Misaligned rows in kernels of few resident blocks (issue #13), session 28: the shapes of
// session 24's seams.cu (RI rows read, RO rows written, one element per thread, 192 threads,
// every input live at once), called on elements [first, first + n) of component-major arrays
// whose rows are ld apart.
//   direct   each thread writes its element of every row
//   pairs    a sector shared by two warps of a block is written whole, by whichever of the two
//            finishes second: both leave their part of it in shared memory and count themselves
//            in with a shared atomic; nobody waits (session 24's seams waited on a named barrier)
//   hinted   direct, with loads asking L2 for the whole 256-byte block (ld.global.L2::256B)
// Printed: time per call relative to the aligned direct call, and % of copy of the same run.
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s\n", cudaGetErrorString(e_)); exit(1); } } while (0)
enum { TB = 192, W = TB / 32 };
enum { DIRECT, PAIRS, HINTED, PAIRS_HINTED };

__device__ inline float load_hinted(const float *p) {
  float v; asm volatile("ld.global.L2::256B.f32 %0, [%1];" : "=f"(v) : "l"(p)); return v;
}
__device__ inline double load_hinted(const double *p) {
  double v; asm volatile("ld.global.L2::256B.f64 %0, [%1];" : "=d"(v) : "l"(p)); return v;
}

template <typename T, int RI, int RO, bool HINT>
__device__ void compute(const T *__restrict__ in, size_t e, bool live, size_t ldi, T (&v)[RO]) {
  T x[RI];
#pragma unroll
  for (int i = 0; i < RI; i++)
    x[i] = live ? (HINT ? load_hinted(in + e + i * ldi) : in[e + i * ldi]) : T(0);
#pragma unroll
  for (int k = 0; k < RO; k++) {
    T s = 0;
#pragma unroll
    for (int i = k; i < RI; i += RO) s += x[i] * x[(i * 7 + 3) % RI];
    v[k] = s;
  }
}

/* Rows k whose sector grid is p elements off the block's start: warp w's first S - p lanes share
   a sector with warp w - 1, its last p lanes one with warp w + 1. Those of a block's inner seams
   go to seam[k][b] (b = the right-hand warp); the second warp to count itself in at seam b writes
   its sectors. The block's outer seams are written straight. */
template <typename T, int RO>
__device__ void store_pairs(T *out, size_t ldo, int count, const T (&v)[RO], int *arrived) {
  constexpr int S = 32 / sizeof(T);
  __shared__ T seam[RO][W][S];
  const int tx = threadIdx.x, lane = tx & 31, w = tx >> 5;
#pragma unroll
  for (int k = 0; k < RO; k++) {
    const int pk = (int)(((size_t)(out + k * ldo) / sizeof(T)) % S);
    if (pk && w > 0 && lane < S - pk) seam[k][w][pk + lane] = v[k];
    else if (pk && w < W - 1 && lane >= 32 - pk) seam[k][w + 1][lane - (32 - pk)] = v[k];
    else if (tx < count) out[k * ldo + tx] = v[k];
  }
  __threadfence_block();
  __syncwarp();
  int second_left = 0, second_right = 0;
  if (lane == 0) {
    if (w > 0) second_left = atomicAdd(&arrived[w], 1);
    if (w < W - 1) second_right = atomicAdd(&arrived[w + 1], 1);
  }
  second_left = __shfl_sync(~0u, second_left, 0);
  second_right = __shfl_sync(~0u, second_right, 0);
  __threadfence_block();
  for (int side = 0; side < 2; side++) {
    const int b = side ? w + 1 : w;
    if (!(side ? second_right : second_left)) continue;
    /* 32 / S rows per pass, S lanes per row */
    for (int k0 = 0; k0 < RO; k0 += 32 / S) {
      const int k = k0 + lane / S, i = lane % S;
      if (k >= RO) break;
      const int pk = (int)(((size_t)(out + k * ldo) / sizeof(T)) % S);
      const int j = 32 * b - pk + i;
      if (pk && j < count) out[k * ldo + j] = seam[k][b][i];
    }
  }
}

template <typename T, int RI, int RO, int MODE>
__global__ void __launch_bounds__(TB) kern(const T *__restrict__ in, T *__restrict__ out, size_t n,
                                          size_t ldi, size_t ldo) {
  const size_t e0 = (size_t)blockIdx.x * TB;
  const int tx = threadIdx.x;
  const int count = n - e0 < TB ? (int)(n - e0) : TB;
  __shared__ int arrived[W]; /* warps counted in at each inner seam */
  if (MODE == PAIRS || MODE == PAIRS_HINTED) {
    if (tx < W) arrived[tx] = 0;
    __syncthreads();
  }
  T v[RO];
  compute<T, RI, RO, MODE == HINTED || MODE == PAIRS_HINTED>(in, e0 + tx, tx < count, ldi, v);
  if (MODE == DIRECT || MODE == HINTED) {
#pragma unroll
    for (int k = 0; k < RO; k++)
      if (tx < count) out[e0 + tx + k * ldo] = v[k];
  } else {
    store_pairs<T, RO>(out + e0, ldo, count, v, arrived);
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
  switch (c->mode) {
  case DIRECT: kern<T, RI, RO, DIRECT><<<blocks, TB>>>(c->in, c->out, c->n, c->ldi, c->ldo); break;
  case PAIRS: kern<T, RI, RO, PAIRS><<<blocks, TB>>>(c->in, c->out, c->n, c->ldi, c->ldo); break;
  case HINTED: kern<T, RI, RO, HINTED><<<blocks, TB>>>(c->in, c->out, c->n, c->ldi, c->ldo); break;
  default: kern<T, RI, RO, PAIRS_HINTED><<<blocks, TB>>>(c->in, c->out, c->n, c->ldi, c->ldo);
  }
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
  int regs[4], occ[4];
  void *fn[4] = {(void *)kern<T, RI, RO, DIRECT>, (void *)kern<T, RI, RO, PAIRS>,
                 (void *)kern<T, RI, RO, HINTED>, (void *)kern<T, RI, RO, PAIRS_HINTED>};
  for (int m = 0; m < 4; m++) {
    cudaFuncAttributes a; CK(cudaFuncGetAttributes(&a, fn[m])); regs[m] = a.numRegs;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ[m], fn[m], TB, 0));
  }
  printf("\n%s: %d rows in, %d out, %zu-byte reals; registers (blocks/SM): direct %d (%d), "
         "pairs %d (%d), hinted %d (%d), pairs hinted %d (%d)\n", title, RI, RO, sizeof(T),
         regs[0], occ[0], regs[1], occ[1], regs[2], occ[2], regs[3], occ[3]);
  struct { const char *name; int mode; size_t fi, ldi, fo, ldo; } v[] = {
      {"direct, aligned", DIRECT, 0, n, 0, n},
      {"direct, odd ld", DIRECT, 1, n + 1, 1, n + 1},
      {"direct, loads odd", DIRECT, 1, n + 1, 0, n},
      {"direct, stores odd", DIRECT, 0, n, 1, n + 1},
      {"pairs, aligned", PAIRS, 0, n, 0, n},
      {"pairs, odd ld", PAIRS, 1, n + 1, 1, n + 1},
      {"pairs, stores odd", PAIRS, 0, n, 1, n + 1},
      {"hinted, aligned", HINTED, 0, n, 0, n},
      {"hinted, odd ld", HINTED, 1, n + 1, 1, n + 1},
      {"pairs hinted, odd ld", PAIRS_HINTED, 1, n + 1, 1, n + 1},
      {"direct, aligned again", DIRECT, 0, n, 0, n},
      {"direct, odd ld again", DIRECT, 1, n + 1, 1, n + 1},
      {"pairs, odd ld again", PAIRS, 1, n + 1, 1, n + 1},
      {"pairs, aligned again", PAIRS, 0, n, 0, n},
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
  int wrong = 0;
  for (size_t nn : {(size_t)1, (size_t)7, (size_t)200, (size_t)1000003, n})
    if (!quick || nn <= 200)
    for (size_t first : {(size_t)0, (size_t)1, (size_t)3})
    for (size_t pad : {(size_t)0, (size_t)5}) {
      size_t ld = nn + first + pad;
      CK(cudaMemset(out, 0, RO * ld_max * sizeof(T)));
      Call<T, RI, RO> d = {DIRECT, in + first, out + first, nn, ld, ld}; run_call<T, RI, RO>(&d);
      CK(cudaMemcpy(a.data(), out, a.size() * sizeof(T), cudaMemcpyDeviceToHost));
      for (int mode = PAIRS; mode <= PAIRS_HINTED; mode++) {
        CK(cudaMemset(out, 0, RO * ld_max * sizeof(T)));
        Call<T, RI, RO> s = {mode, in + first, out + first, nn, ld, ld}; run_call<T, RI, RO>(&s);
        CK(cudaMemcpy(b.data(), out, b.size() * sizeof(T), cudaMemcpyDeviceToHost));
        if (a != b) { wrong++; printf("  MISMATCH mode %d at n = %zu, first %zu, ld %zu\n", mode, nn, first, ld); }
      }
    }
  printf("  pairs, hinted, pairs hinted == direct at n = 1, 7, 200%s, first 0, 1, 3, ld n + first "
         "(+ 5): %s\n", quick ? "" : ", 1000003, 4194304", wrong ? "WRONG" : "equal");
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
