/*
 * fem_driver.c — a small C program standing for a FEM code that embeds a kasgen-generated spec
 * through its plain C API (embed/kas_<stem>.h; docs/design.md §7).  It is written once for every spec:
 * the header's KAS_EMBED_GENERIC names give it the spec's inputs and outputs.  It allocates with
 * cudaMalloc, fills random inputs (never zero), runs the API for n = 0, 1, 7, 1000003, checks
 * every output against the CPU graph (float64; normwise relative error < 1e-5), checks that
 * nothing beyond element n is written and that bad arguments are refused, and prints PASS/FAIL.
 *
 *   make -C tests/fem_driver GEN=generated/stvenant STEM=stvenant && tests/fem_driver/build/...
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KAS_EMBED_GENERIC
#include KAS_EMBED_HEADER

void kas_cpu_graph(const double *const *in, double *const *out, size_t n);

#define NIN (KAS_EMBED_NINPUTS > 0 ? KAS_EMBED_NINPUTS : 1)
#define NOUT KAS_EMBED_NOUTPUTS
#define GUARD 8 /* elements past n that must stay untouched */

static const int in_floats[NIN] = KAS_EMBED_INPUT_FLOATS;
static const int out_floats[NOUT] = KAS_EMBED_OUTPUT_FLOATS;
static const char *const out_names[NOUT] = KAS_EMBED_OUTPUT_NAMES;

static int failures;

static void expect(int ok, const char *what) {
  if (!ok) {
    printf("FAIL: %s\n", what);
    failures++;
  }
}

static void cuda_or_die(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    printf("FAIL: %s: %s\n", what, cudaGetErrorString(e));
    exit(1);
  }
}

static void *host(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    printf("FAIL: out of host memory\n");
    exit(1);
  }
  return p;
}

static uint64_t rng = 88172645463325252ull;
static float random_value(void) { /* +-[0.5, 1.5): never zero */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  float v = 0.5f + (float)((rng >> 11) * (1.0 / 9007199254740992.0));
  return (rng & 1) ? -v : v;
}

/* One run at n: returns the worst normwise relative error over the outputs. */
static double run_and_check(size_t n, float *const *d_in, float *const *d_out, void *d_work) {
  float *h_in[NIN];
  double *d_in_cpu[NIN], *ref[NOUT];
  for (int i = 0; i < KAS_EMBED_NINPUTS; i++) {
    size_t count = n * in_floats[i];
    h_in[i] = host(count * sizeof(float));
    d_in_cpu[i] = host(count * sizeof(double));
    for (size_t k = 0; k < count; k++) d_in_cpu[i][k] = h_in[i][k] = random_value();
    cuda_or_die(cudaMemcpy(d_in[i], h_in[i], count * sizeof(float), cudaMemcpyHostToDevice),
                "copy input");
  }
  for (int o = 0; o < NOUT; o++) {
    ref[o] = host(n * out_floats[o] * sizeof(double));
    /* NaN everywhere, the guard past n included */
    cuda_or_die(cudaMemset(d_out[o], 0xFF, (n + GUARD) * out_floats[o] * sizeof(float)), "poison");
  }
  kas_cpu_graph((const double *const *)d_in_cpu, ref, n);
  kas_status st = kas_embed_arrays((const float *const *)d_in, d_out, n, d_work, NULL);
  cuda_or_die(cudaDeviceSynchronize(), "kernel");
  if (st != KAS_OK) {
    printf("FAIL: n=%zu: %s\n", n, kas_embed_status_string(st));
    failures++;
  }
  double worst = 0;
  for (int o = 0; o < NOUT; o++) {
    size_t s = out_floats[o], count = (n + GUARD) * s;
    float *h = host(count * sizeof(float));
    cuda_or_die(cudaMemcpy(h, d_out[o], count * sizeof(float), cudaMemcpyDeviceToHost), "copy");
    double diff2 = 0, ref2 = 0;
    for (size_t k = 0; k < n * s; k++) {
      double d = h[k] - ref[o][k];
      diff2 += isfinite(h[k]) ? d * d : INFINITY;
      ref2 += ref[o][k] * ref[o][k];
    }
    double err = n ? sqrt(diff2 / ref2) : 0;
    if (err > worst) worst = err;
    int guard_ok = 1;
    for (size_t k = n * s; k < count; k++) guard_ok &= isnan(h[k]);
    if (!guard_ok) {
      printf("FAIL: n=%zu: output %s written past element n\n", n, out_names[o]);
      failures++;
    }
    free(h);
    free(ref[o]);
  }
  for (int i = 0; i < KAS_EMBED_NINPUTS; i++) {
    free(h_in[i]);
    free(d_in_cpu[i]);
  }
  return worst;
}

/* Argument checks need no data: NULL pointers, misalignment, and n = 0 with no pointers at all. */
static void check_arguments(float *const *d_in, float *const *d_out, void *d_work) {
  expect(kas_embed_arrays(NULL, NULL, 0, NULL, NULL) == KAS_OK, "n = 0 with NULL pointers is a no-op");
  float *bad_out[NOUT];
  for (int o = 0; o < NOUT; o++) bad_out[o] = d_out[o];
  bad_out[NOUT - 1] = NULL;
  expect(kas_embed_arrays((const float *const *)d_in, bad_out, 7, d_work, NULL) == KAS_ERR_INVALID,
         "a NULL output is refused");
  bad_out[NOUT - 1] = d_out[NOUT - 1] + 1; /* 4 bytes off: not 16-byte aligned */
  expect(kas_embed_arrays((const float *const *)d_in, bad_out, 7, d_work, NULL) == KAS_ERR_ALIGN,
         "a misaligned output is refused");
  if (kas_embed_workspace_bytes(7) > 0)
    expect(kas_embed_arrays((const float *const *)d_in, d_out, 7, NULL, NULL) == KAS_ERR_INVALID,
           "a missing workspace is refused");
}

int main(void) {
  static const size_t sizes[] = {0, 1, 7, 1000003};
  const size_t nmax = 1000003;
  float *d_in[NIN], *d_out[NOUT];
  void *d_work = NULL;
  for (int i = 0; i < KAS_EMBED_NINPUTS; i++)
    cuda_or_die(cudaMalloc((void **)&d_in[i], nmax * in_floats[i] * sizeof(float)), "cudaMalloc");
  for (int o = 0; o < NOUT; o++)
    cuda_or_die(cudaMalloc((void **)&d_out[o], (nmax + GUARD) * out_floats[o] * sizeof(float)),
                "cudaMalloc");
  size_t wbytes = kas_embed_workspace_bytes(nmax);
  if (wbytes) cuda_or_die(cudaMalloc(&d_work, wbytes), "cudaMalloc workspace");
  check_arguments(d_in, d_out, d_work);
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    double err = run_and_check(sizes[s], d_in, d_out, d_work);
    int ok = err < 1e-5;
    printf("%s n=%-8zu normwise relative error %.3g %s\n", KAS_EMBED_NAME, sizes[s], err,
           ok ? "ok" : "WRONG");
    failures += !ok;
  }
  for (int i = 0; i < KAS_EMBED_NINPUTS; i++) cudaFree(d_in[i]);
  for (int o = 0; o < NOUT; o++) cudaFree(d_out[o]);
  cudaFree(d_work);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
