/*
 * check_gpu.cu — the GPU check of the standalone unit kernels (common/check_gpu.cu of every
 * function folder `kasgen units` writes; kept as src/runtime/check_gpu.cu in kasgen's sources).
 * It runs every unit at n = 1, 7, 1000003, 4194304 (or the sizes given as arguments) against the
 * CPU reference (kas_check.h), checks that nothing is written beyond element n, and times the
 * largest size against the copy bandwidth measured in the same run (kas_gpu.h, shared with the
 * candidates' harness).  The inputs are drawn well-conditioned and each output's tolerance
 * follows the data (kas_random.h).
 * The units' arrays are element-major, of kas_real (kas_candidates.h).
 * Depends on CUDA and libc.
 *
 *   check_gpu [N...]
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KAS_CANDIDATES_DEVICE
#include "kas_candidates.h"
#include "kas_gpu.h"
#include "kas_random.h"

extern "C" void kas_cpu_graph_rounded(const double *const *in, double *const *out, size_t n,
                                      double u, const size_t *at);

#define GUARD 4096        /* floats after each output that must stay poisoned */
#define TIMED_RUNS 20     /* the median of as many runs */
#define COPY_BYTES ((size_t)512 << 20)
#define MAX_SIZES 16

/* Array lengths that stay positive when a spec has no inputs (C++ has no empty arrays). */
#define KAS_NIN1 (KAS_NINPUTS > 0 ? KAS_NINPUTS : 1)

/* One unit at one n: inputs on both sides, outputs with a poisoned guard zone behind them. */
typedef struct {
  size_t n;
  kas_real *h_in[KAS_NIN1], *d_in[KAS_NIN1], *h_out[KAS_NOUTPUTS], *d_out[KAS_NOUTPUTS];
  double *in_d[KAS_NIN1], *ref[KAS_NOUTPUTS];
  KasTolerance tol[KAS_NOUTPUTS]; /* each output's on this data (kas_random.h) */
  void *ws;
  double bytes; /* compulsory bytes moved: inputs read once, outputs written once */
} Run;

static void run_init(Run *r, const KasCandidate *c, size_t n) {
  const size_t rb = sizeof(kas_real);
  memset(r, 0, sizeof *r);
  r->n = n;
  for (int i = 0; i < KAS_NINPUTS; i++) {
    size_t len = n * kas_input_floats[i];
    r->bytes += (double)(rb * len);
    r->h_in[i] = (kas_real *)kas_host_alloc(len * rb);
    r->in_d[i] = (double *)kas_host_alloc(len * 8);
  }
  char what[64];
  snprintf(what, sizeof what, "%s: n=%zu", c->name, n);
  double *rounded[KAS_NOUTPUTS]; /* the outputs under the tolerance model's rounding */
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    r->ref[o] = (double *)kas_host_alloc((n * kas_output_floats[o] + GUARD) * 8);
    rounded[o] = (double *)kas_host_alloc(n * kas_output_floats[o] * 8);
  }
  kas_report_screen(what, kas_draw_inputs(r->in_d, n, 1, kas_cpu_graph_rounded, r->ref, rounded),
                    n);
  for (int i = 0; i < KAS_NINPUTS; i++) {
    size_t len = n * kas_input_floats[i];
    for (size_t k = 0; k < len; k++) r->h_in[i][k] = (kas_real)r->in_d[i][k];
    kas_cuda_check(cudaMalloc(&r->d_in[i], len * rb + 16), "cudaMalloc input");
    kas_cuda_check(cudaMemcpy(r->d_in[i], r->h_in[i], len * rb, cudaMemcpyHostToDevice),
                   "copy input");
  }
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    size_t len = n * kas_output_floats[o] + GUARD;
    r->bytes += (double)(rb * n * kas_output_floats[o]);
    r->h_out[o] = (kas_real *)kas_host_alloc(len * rb);
    kas_cuda_check(cudaMalloc(&r->d_out[o], len * rb), "cudaMalloc output");
    kas_cuda_check(cudaMemset(r->d_out[o], 0xFF, len * rb), "poison output"); /* NaN */
  }
  kas_tolerances(what, r->ref, rounded, n, r->tol);
  for (int o = 0; o < KAS_NOUTPUTS; o++) free(rounded[o]);
  size_t ws = c->workspace_bytes(n);
  if (ws) kas_cuda_check(cudaMalloc(&r->ws, ws), "cudaMalloc workspace");
}

static void run_free(Run *r) {
  for (int i = 0; i < KAS_NINPUTS; i++) free(r->h_in[i]), free(r->in_d[i]), cudaFree(r->d_in[i]);
  for (int o = 0; o < KAS_NOUTPUTS; o++) free(r->h_out[o]), free(r->ref[o]), cudaFree(r->d_out[o]);
  cudaFree(r->ws);
}

/* Output o is right up to element n and untouched behind it. */
static bool check_output(const KasCandidate *c, Run *r, int o) {
  size_t len = r->n * kas_output_floats[o];
  kas_cuda_check(cudaMemcpy(r->h_out[o], r->d_out[o], (len + GUARD) * sizeof(kas_real),
                            cudaMemcpyDeviceToHost),
                 "copy output");
  char what[96];
  snprintf(what, sizeof what, "%s: n=%zu", c->name, r->n);
  double err;
  if (!kas_check_output(what, kas_output_names[o], r->h_out[o], r->ref[o], len,
                        kas_output_floats[o], r->tol[o], &err))
    return false;
  for (size_t k = len; k < len + GUARD; k++)
    if (!isnan(r->h_out[o][k])) {
      printf("%s: output %s written beyond element n (float %zu)\n", what, kas_output_names[o], k);
      return false;
    }
  return true;
}

typedef struct {
  const KasCandidate *c;
  Run *r;
} TimedRun;

static void run_unit(void *arg, int run) {
  const TimedRun *t = (const TimedRun *)arg;
  (void)run; /* every run is the same */
  int rc = t->c->launch((const kas_real *const *)t->r->d_in, t->r->d_out, t->r->ws, t->r->n, 0,
                        0);
  if (rc) kas_cuda_check((cudaError_t)rc, t->c->name);
}

static bool check_unit(const KasCandidate *c, size_t n, bool timed, double copy_gbs) {
  Run r;
  run_init(&r, c, n);
  int err = c->launch((const kas_real *const *)r.d_in, r.d_out, r.ws, n, 0, 0);
  if (!err) err = (int)cudaDeviceSynchronize();
  bool ok = err == 0;
  if (!ok)
    printf("%s: n=%zu: launch failed: %s\n", c->name, n, cudaGetErrorString((cudaError_t)err));
  for (int o = 0; ok && o < KAS_NOUTPUTS; o++) ok = check_output(c, &r, o);
  if (ok && timed) {
    TimedRun t = {c, &r};
    float ms = kas_time_ms(TIMED_RUNS, run_unit, &t);
    double gbs = r.bytes / (ms * 1e-3) / 1e9;
    printf("%-24s n=%zu  %.4f ns/elem  %.0f GB/s  %5.1f%% of copy  (%s)\n", c->name, n,
           ms * 1e6 / (double)n, gbs, 100.0 * gbs / copy_gbs, c->kernels);
  }
  run_free(&r);
  return ok;
}

int main(int argc, char **argv) {
  size_t sizes[MAX_SIZES] = {1, 7, 1000003, 4194304};
  int nsizes = 4;
  if (argc > 1) {
    nsizes = 0;
    for (int a = 1; a < argc && nsizes < MAX_SIZES; a++)
      sizes[nsizes++] = strtoull(argv[a], NULL, 10);
  }
  kas_require_gpu("check_gpu");
  cudaDeviceProp prop;
  kas_cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  double copy_gbs = kas_copy_gbs(COPY_BYTES, TIMED_RUNS);
  printf("%s: %s, copy bandwidth %.1f GB/s (read + write)\n", KAS_SPEC_NAME, prop.name, copy_gbs);
  int failures = 0;
  for (int c = 0; c < KAS_NCANDIDATES; c++) {
    bool ok = true;
    for (int s = 0; s < nsizes; s++)
      ok &= check_unit(&kas_candidates[c], sizes[s], s == nsizes - 1, copy_gbs);
    printf("%-24s %s\n", kas_candidates[c].name, ok ? "PASS" : "FAIL");
    failures += !ok;
  }
  printf("%s: %d of %d units passed on the GPU\n", KAS_SPEC_NAME, KAS_NCANDIDATES - failures,
         KAS_NCANDIDATES);
  return failures ? 1 : 0;
}
