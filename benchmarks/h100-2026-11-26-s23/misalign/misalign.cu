// Misaligned sub-ranges of component-major arrays (issue #13): the shape of synctest's kernel in
// double precision (9 rows read, 9 rows written, one element per thread, 256 threads), called on
// elements [first, first + n) of arrays whose rows are ld apart.  Printed: time per call as a
// ratio to the aligned call (first = 0, ld = n) and to the copy bandwidth of the same run.
//   A aligned            first 0, ld n
//   B odd ld             first 1, ld n + 1     (the harness's sub-range: rows misaligned unequally)
//   C equal offsets      first 1, ld n + 16    (every row 8 bytes past a 128-byte line)
//   D loads only         input as B, output as A
//   E stores only        input as A, output as B
//   F, G                 stores whose rows start 32 or 16 bytes past a line (sector-aligned or not)
//   S staged             as B, each row read and written through shared memory in warp-sized
//                        chunks that start on 256-byte boundaries
//   T, U store-staged    direct loads, stores through shared memory from sector boundaries
//                        (blocks of 256 or 512 threads)
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s\n", cudaGetErrorString(e_)); exit(1); } } while (0)
enum { R = 9, T = 256 };

__global__ void __launch_bounds__(T) direct(const double *__restrict__ in, double *__restrict__ out,
                                            size_t n, size_t ldi, size_t ldo) {
  size_t e = (size_t)blockIdx.x * T + threadIdx.x;
  double v[R];
#pragma unroll
  for (int k = 0; k < R; k++) v[k] = e < n ? in[e + k * ldi] : 0;
#pragma unroll
  for (int k = 0; k < R; k++) v[k] = 4 * v[k] + v[(k + 1) % R];
  if (e < n) {
#pragma unroll
    for (int k = 0; k < R; k++) out[e + k * ldo] = v[k];
  }
}

// Row k's elements [e0, e0 + T) through shared memory: chunks of 32 doubles on 256-byte
// boundaries (T + 32 reals cover any offset), so every warp request is two whole lines.
__global__ void __launch_bounds__(T) staged(const double *__restrict__ in, double *__restrict__ out,
                                            size_t n, size_t ldi, size_t ldo) {
  __shared__ double tile[R][T];
  size_t e0 = (size_t)blockIdx.x * T;
  int tx = threadIdx.x;
  size_t count = n - e0 < T ? n - e0 : T;
#pragma unroll
  for (int k = 0; k < R; k++) {
    const double *row = in + k * ldi + e0;
    int shift = (int)(((size_t)row / 8) % 32);
    for (int i = tx; i < T + 32; i += T) {
      int j = i - shift; /* element j of the block */
      if (j >= 0 && j < (int)count) tile[k][j] = row[j];
    }
  }
  __syncthreads();
  double v[R];
#pragma unroll
  for (int k = 0; k < R; k++) v[k] = tile[k][tx];
#pragma unroll
  for (int k = 0; k < R; k++) v[k] = 4 * v[k] + v[(k + 1) % R];
  __syncthreads();
#pragma unroll
  for (int k = 0; k < R; k++) tile[k][tx] = v[k];
  __syncthreads();
#pragma unroll
  for (int k = 0; k < R; k++) {
    double *row = out + k * ldo + e0;
    int shift = (int)(((size_t)row / 8) % 32);
    for (int i = tx; i < T + 32; i += T) {
      int j = i - shift;
      if (j >= 0 && j < (int)count) row[j] = tile[k][j];
    }
  }
}


// Direct loads; the stores of row k through shared memory, each warp writing 32 doubles that
// start on a 32-byte sector (a shift of 0..3 reals), so that only the block's two ends write part
// of a sector.
template <int TB>
__global__ void __launch_bounds__(TB) store_staged(const double *__restrict__ in,
                                                  double *__restrict__ out, size_t n, size_t ldi,
                                                  size_t ldo) {
  __shared__ double tile[R][TB];
  size_t e0 = (size_t)blockIdx.x * TB;
  int tx = threadIdx.x;
  size_t e = e0 + tx;
  double v[R];
#pragma unroll
  for (int k = 0; k < R; k++) v[k] = e < n ? in[e + k * ldi] : 0;
#pragma unroll
  for (int k = 0; k < R; k++) v[k] = 4 * v[k] + v[(k + 1) % R]; /* as direct computes it */
#pragma unroll
  for (int k = 0; k < R; k++) tile[k][tx] = v[k];
  __syncthreads();
  int count = n - e0 < TB ? (int)(n - e0) : TB;
#pragma unroll
  for (int k = 0; k < R; k++) {
    double *row = out + k * ldo + e0;
    int shift = (int)(((size_t)row / 8) % 4);
    int j = tx - shift;
    if (j >= 0 && j < count) row[j] = tile[k][j];
    if (tx < shift && TB + j < count) row[TB + j] = tile[k][TB + j];
  }
}

static float time_ms(void (*go)(void *), void *arg) {
  cudaEvent_t t0, t1; cudaEventCreate(&t0); cudaEventCreate(&t1);
  std::vector<float> v;
  for (int r = 0; r < 7; r++) {
    go(arg);
    cudaEventRecord(t0);
    for (int i = 0; i < 20; i++) go(arg);
    cudaEventRecord(t1); cudaEventSynchronize(t1);
    float ms; cudaEventElapsedTime(&ms, t0, t1); v.push_back(ms / 20);
  }
  std::sort(v.begin(), v.end());
  return v[3];
}
struct Call { int stage; const double *in; double *out; size_t n, ldi, ldo; };
static void run_call(void *p) {
  Call *c = (Call *)p;
  unsigned blocks = (unsigned)((c->n + T - 1) / T);
  if (c->stage == 1) staged<<<blocks, T>>>(c->in, c->out, c->n, c->ldi, c->ldo);
  else if (c->stage == 2) store_staged<T><<<blocks, T>>>(c->in, c->out, c->n, c->ldi, c->ldo);
  else if (c->stage == 3)
    store_staged<512><<<(unsigned)((c->n + 511) / 512), 512>>>(c->in, c->out, c->n, c->ldi, c->ldo);
  else direct<<<blocks, T>>>(c->in, c->out, c->n, c->ldi, c->ldo);
}
struct Copy { double *a, *b; size_t bytes; };
static void run_copy(void *p) { Copy *c = (Copy *)p; cudaMemcpyAsync(c->b, c->a, c->bytes, cudaMemcpyDeviceToDevice); }

int main() {
  size_t n = 1 << 22, ld_max = n + 64;
  double *in, *out;
  CK(cudaMalloc(&in, R * ld_max * 8)); CK(cudaMalloc(&out, R * ld_max * 8));
  CK(cudaMemset(in, 0, R * ld_max * 8));
  Copy cp; cp.bytes = 2 * R * n * 8 / 2; CK(cudaMalloc(&cp.a, cp.bytes)); CK(cudaMalloc(&cp.b, cp.bytes));
  float copy_ms = time_ms(run_copy, &cp);
  double copy_gbs = 2.0 * cp.bytes / copy_ms / 1e6;
  printf("copy %.1f GB/s (cudaMemcpy of %zu MB)\n", copy_gbs, cp.bytes >> 20);
  struct { const char *name; int stage; size_t fi, ldi, fo, ldo; } v[] = {
      {"A aligned", 0, 0, n, 0, n},
      {"B odd ld", 0, 1, n + 1, 1, n + 1},
      {"C equal offsets", 0, 1, n + 16, 1, n + 16},
      {"D loads only", 0, 1, n + 1, 0, n},
      {"E stores only", 0, 0, n, 1, n + 1},
      {"F stores 32-byte aligned", 0, 0, n, 4, n + 4},
      {"G stores 16-byte aligned", 0, 0, n, 2, n + 2},
      {"S staged, aligned", 1, 0, n, 0, n},
      {"S staged, odd ld", 1, 1, n + 1, 1, n + 1},
      {"T store-staged, aligned", 2, 0, n, 0, n},
      {"T store-staged, odd ld", 2, 1, n + 1, 1, n + 1},
      {"T store-staged, equal", 2, 1, n + 16, 1, n + 16},
      {"U store-staged 512, aligned", 3, 0, n, 0, n},
      {"U store-staged 512, odd ld", 3, 1, n + 1, 1, n + 1},
  };
  float base = 0;
  for (auto &c : v) {
    Call call = {c.stage, in + c.fi, out + c.fo, n, c.ldi, c.ldo};
    float ms = time_ms(run_call, &call);
    CK(cudaGetLastError());
    if (!base) base = ms;
    double bytes = 2.0 * R * n * 8;
    printf("%-26s %.4f ms  %6.1f%% of aligned  %6.1f%% of copy\n", c.name, ms, 100 * ms / base,
           100 * (bytes / copy_gbs / 1e6) / ms);
  }
  // correctness of the staged kernel against the direct one (odd ld)
  std::vector<double> h(R * ld_max), a(R * ld_max), b(R * ld_max);
  for (size_t i = 0; i < h.size(); i++) h[i] = (double)(i % 1000) * 0.5;
  CK(cudaMemcpy(in, h.data(), h.size() * 8, cudaMemcpyHostToDevice));
  for (size_t nn : {(size_t)1, (size_t)7, (size_t)1000003, n}) {
    CK(cudaMemset(out, 0, R * ld_max * 8));
    Call d = {0, in + 1, out + 1, nn, nn + 1, nn + 1}; run_call(&d);
    CK(cudaMemcpy(a.data(), out, a.size() * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemset(out, 0, R * ld_max * 8));
    for (int stage = 1; stage <= 3; stage++) {
      CK(cudaMemset(out, 0, R * ld_max * 8));
      Call s = {stage, in + 1, out + 1, nn, nn + 1, nn + 1}; run_call(&s);
      CK(cudaMemcpy(b.data(), out, b.size() * 8, cudaMemcpyDeviceToHost));
      printf("staged %d == direct at n = %zu: %s\n", stage, nn, a == b ? "yes" : "NO");
    }
  }
  return 0;
}
