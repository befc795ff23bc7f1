// Misaligned rows' loads (issue #13), session 28, call 2: which load instruction reads a
// component-major row that starts mid-sector best, in the shapes of session 24's seams.cu (RI rows
// read, RO rows written straight, one element per thread, 192 threads, every input live at once).
//   plain     g[e + k * ld] through a const __restrict__ pointer (what kasgen generates)
//   nc        ld.global.nc (the read-only path, said explicitly)
//   l2_256    ld.global.L2::256B (L2 fetches the whole 256-byte block)
//   nc_256    ld.global.nc.L2::256B
//   l2_128    ld.global.L2::128B
// Printed: time per call relative to the aligned plain call, and % of copy of the same run.
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s\n", cudaGetErrorString(e_)); exit(1); } } while (0)
enum { TB = 192 };
enum { PLAIN, NC, L2_256, NC_256, L2_128, NKINDS };
static const char *kind_name[NKINDS] = {"plain", "nc", "l2_256", "nc_256", "l2_128"};

#define LOADER(SUFFIX, PTX)                                                                     \
  __device__ inline float load_##SUFFIX(const float *p) {                                      \
    float v; asm volatile(PTX ".f32 %0, [%1];" : "=f"(v) : "l"(p)); return v;                  \
  }                                                                                             \
  __device__ inline double load_##SUFFIX(const double *p) {                                    \
    double v; asm volatile(PTX ".f64 %0, [%1];" : "=d"(v) : "l"(p)); return v;                 \
  }
LOADER(nc, "ld.global.nc")
LOADER(l2_256, "ld.global.L2::256B")
LOADER(nc_256, "ld.global.nc.L2::256B")
LOADER(l2_128, "ld.global.L2::128B")

template <int KIND, typename T> __device__ inline T load(const T *__restrict__ p) {
  if (KIND == NC) return load_nc(p);
  if (KIND == L2_256) return load_l2_256(p);
  if (KIND == NC_256) return load_nc_256(p);
  if (KIND == L2_128) return load_l2_128(p);
  return *p;
}

template <typename T, int RI, int RO, int KIND>
__global__ void __launch_bounds__(TB) kern(const T *__restrict__ in, T *__restrict__ out, size_t n,
                                          size_t ldi, size_t ldo) {
  const size_t e = (size_t)blockIdx.x * TB + threadIdx.x;
  const bool live = e < n;
  T x[RI];
#pragma unroll
  for (int i = 0; i < RI; i++) x[i] = live ? load<KIND>(in + e + i * ldi) : T(0);
#pragma unroll
  for (int k = 0; k < RO; k++) {
    T s = 0;
#pragma unroll
    for (int i = k; i < RI; i += RO) s += x[i] * x[(i * 7 + 3) % RI];
    if (live) out[e + k * ldo] = s;
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
struct Call { int kind; const T *in; T *out; size_t n, ldi, ldo; };
template <typename T, int RI, int RO> static void run_call(void *p) {
  auto *c = (Call<T, RI, RO> *)p;
  unsigned blocks = (unsigned)((c->n + TB - 1) / TB);
  switch (c->kind) {
  case PLAIN: kern<T, RI, RO, PLAIN><<<blocks, TB>>>(c->in, c->out, c->n, c->ldi, c->ldo); break;
  case NC: kern<T, RI, RO, NC><<<blocks, TB>>>(c->in, c->out, c->n, c->ldi, c->ldo); break;
  case L2_256: kern<T, RI, RO, L2_256><<<blocks, TB>>>(c->in, c->out, c->n, c->ldi, c->ldo); break;
  case NC_256: kern<T, RI, RO, NC_256><<<blocks, TB>>>(c->in, c->out, c->n, c->ldi, c->ldo); break;
  default: kern<T, RI, RO, L2_128><<<blocks, TB>>>(c->in, c->out, c->n, c->ldi, c->ldo);
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
  cudaFuncAttributes a; CK(cudaFuncGetAttributes(&a, kern<T, RI, RO, PLAIN>));
  int occ; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern<T, RI, RO, PLAIN>, TB, 0));
  printf("\n%s: %d rows in, %d out, %zu-byte reals, %d registers, %d blocks/SM\n", title, RI, RO,
         sizeof(T), a.numRegs, occ);
  double bytes = (double)(RI + RO) * n * sizeof(T);
  float base = 0;
  /* two passes, interleaved, so that drift shows */
  for (int pass = 0; pass < 2 && !quick; pass++)
    for (int kind = 0; kind < NKINDS; kind++)
      for (int odd = 0; odd < 2; odd++) {
        Call<T, RI, RO> call = {kind, in + odd, out + odd, n, n + odd, n + odd};
        float ms = time_ms(run_call<T, RI, RO>, &call);
        CK(cudaGetLastError());
        if (!base) base = ms;
        printf("  pass %d %-7s %-8s %.4f ms  %6.1f%% of aligned plain  %6.1f%% of copy\n", pass + 1,
               kind_name[kind], odd ? "odd ld" : "aligned", ms, 100 * ms / base,
               100 * (bytes / copy_gbs / 1e6) / ms);
      }
  std::vector<T> ref(RO * ld_max), got(RO * ld_max);
  int wrong = 0;
  for (size_t nn : {(size_t)1, (size_t)7, (size_t)200, (size_t)1000003, n})
    if (!quick || nn <= 200)
      for (size_t first : {(size_t)0, (size_t)1, (size_t)3}) {
        size_t ld = nn + first;
        for (int kind = 0; kind < NKINDS; kind++) {
          CK(cudaMemset(out, 0, RO * ld_max * sizeof(T)));
          Call<T, RI, RO> c = {kind, in + first, out + first, nn, ld, ld}; run_call<T, RI, RO>(&c);
          CK(cudaMemcpy((kind ? got : ref).data(), out, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
          if (kind && got != ref) { wrong++; printf("  MISMATCH %s at n = %zu, first %zu\n", kind_name[kind], nn, first); }
        }
      }
  printf("  every load kind == plain at n = 1, 7, 200%s, first 0, 1, 3: %s\n",
         quick ? "" : ", 1000003, 4194304", wrong ? "WRONG" : "equal");
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
