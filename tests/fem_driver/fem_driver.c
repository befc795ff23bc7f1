/*
 * fem_driver.c — a small C program standing for a FEM code that embeds a kasgen-generated spec
 * through its plain C API (embed/kas_<stem>.h; docs/design.md §7).  It is written once for every
 * spec, precision and layout: the header's KAS_EMBED_GENERIC names give it the spec's inputs and
 * outputs, their real type, their layouts and whether the API takes a leading dimension.  Like a
 * FEM code it keeps whole arrays of NTOTAL elements (component-major ones NTOTAL apart) and calls
 * the API on sub-ranges of them: elements [0, n) and [1, 1 + n) (pointers then aligned to their
 * type only), for n = 0, 1, 7, 1000003; it checks every output against the CPU graph (float64;
 * normwise relative error < 1e-5 in single precision, 1e-12 in double, or more where the data
 * are ill-conditioned), that nothing outside the range is written, and that bad arguments are
 * refused and nothing else is; it prints PASS/FAIL.  Its inputs are the checks' (the folder's
 * common/kas_random.h: square matrices near the identity, elements too sensitive to rounding
 * drawn again, each output's tolerance following the data; docs/generated.md).
 *
 *   make -C tests/fem_driver GEN=generated/stvenant STEM=stvenant && tests/fem_driver/build/...
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed_test.h"
#include "kas_random.h" /* the folder's common/: with kas_candidates.h and kas_check.h */

void kas_cpu_graph_rounded(const double *const *in, double *const *out, size_t n, double u,
                           const size_t *at);

#define NTOTAL 1000013 /* elements of every array; the largest call uses 1 + 1000003 of them */

static const int in_floats[NIN] = KAS_EMBED_INPUT_FLOATS;
static const int in_layouts[NIN] = KAS_EMBED_INPUT_LAYOUTS;
static const int out_floats[NOUT] = KAS_EMBED_OUTPUT_FLOATS;
static const int out_layouts[NOUT] = KAS_EMBED_OUTPUT_LAYOUTS;
static const char *const out_names[NOUT] = KAS_EMBED_OUTPUT_NAMES;

/* Reals from an array's start to component c of element e, in its layout (1: component-major,
 * rows NTOTAL apart). */
static size_t at(int component, int size, size_t e, int c) {
  return component ? (size_t)c * NTOTAL + e : e * (size_t)size + (size_t)c;
}

static size_t array_reals(int size) { return (size_t)size * NTOTAL; }

/* The pointer a FEM code passes for the sub-range starting at element first. */
static real *range(real *array, int component, int size, size_t first) {
  return array + at(component, size, first, 0);
}

static kas_status call(real *const *d_in, real *const *d_out, size_t first, size_t n,
                       void *d_work) {
  const real *in[NIN];
  real *out[NOUT];
  for (int i = 0; i < KAS_EMBED_NINPUTS; i++)
    in[i] = range(d_in[i], in_layouts[i], in_floats[i], first);
  for (int o = 0; o < NOUT; o++) out[o] = range(d_out[o], out_layouts[o], out_floats[o], first);
#if KAS_EMBED_LD
  return kas_embed_arrays(in, out, n, NTOTAL, d_work, NULL);
#else
  return kas_embed_arrays(in, out, n, d_work, NULL);
#endif
}

/* Fills the inputs (all of their NTOTAL elements: what lies outside the range must not matter)
 * and the CPU graph's element-major copy of the range, drawn as the checks draw it, with the
 * graph's outputs on it into ref and each output's tolerance on them into tol. */
static void fill_inputs(real *const *d_in, double **cpu_in, double **ref, KasTolerance *tol,
                        size_t first, size_t n) {
  double *rounded[NOUT]; /* the outputs under the tolerance model's rounding */
  for (int i = 0; i < KAS_EMBED_NINPUTS; i++)
    cpu_in[i] = host(n * in_floats[i] * sizeof(double));
  for (int o = 0; o < NOUT; o++) {
    ref[o] = host(n * out_floats[o] * sizeof(double));
    rounded[o] = host(n * out_floats[o] * sizeof(double));
  }
  kas_report_screen("fem_driver",
                    kas_draw_inputs(cpu_in, n, 1, kas_cpu_graph_rounded, ref, rounded), n);
  kas_tolerances("fem_driver", (const double *const *)ref, (const double *const *)rounded, n,
                 tol);
  for (int o = 0; o < NOUT; o++) free(rounded[o]);
  for (int i = 0; i < KAS_EMBED_NINPUTS; i++) {
    int s = in_floats[i];
    real *h = host(array_reals(s) * sizeof(real));
    kas_fill_input(h, array_reals(s), i, NTOTAL, 1);
    for (size_t e = 0; e < n; e++)
      for (int c = 0; c < s; c++)
        h[at(in_layouts[i], s, first + e, c)] = (real)cpu_in[i][e * s + c];
    cuda_or_die(cudaMemcpy(d_in[i], h, array_reals(s) * sizeof(real), cudaMemcpyHostToDevice),
                "copy input");
    free(h);
  }
}

/* Output o against the reference; *outside: whether anything outside the range was written. */
static double check_output(real *d_out, int o, const double *ref, size_t first, size_t n,
                           int *outside) {
  int s = out_floats[o], comp = out_layouts[o];
  real *h = host(array_reals(s) * sizeof(real));
  cuda_or_die(cudaMemcpy(h, d_out, array_reals(s) * sizeof(real), cudaMemcpyDeviceToHost), "copy");
  double diff2 = 0, ref2 = 0;
  size_t written = 0;
  for (size_t k = 0; k < array_reals(s); k++) written += !isnan(h[k]);
  for (size_t e = 0; e < n; e++)
    for (int c = 0; c < s; c++) {
      real got = h[at(comp, s, first + e, c)];
      double d = got - ref[e * s + c];
      diff2 += isfinite(got) ? d * d : INFINITY;
      ref2 += ref[e * s + c] * ref[e * s + c];
      written -= !isnan(got);
    }
  *outside = written != 0;
  free(h);
  return n ? sqrt(diff2 / ref2) : 0;
}

/* One call on [first, first + n): returns the worst normwise relative error over the outputs;
 * *ok: whether every output is within its tolerance on this data (kas_random.h). */
static double run_and_check(size_t first, size_t n, real *const *d_in, real *const *d_out,
                            void *d_work, int *ok) {
  double *cpu_in[NIN], *ref[NOUT];
  KasTolerance tol[NOUT];
  fill_inputs(d_in, cpu_in, ref, tol, first, n);
  for (int o = 0; o < NOUT; o++) {
    /* NaN everywhere, outside the range included */
    cuda_or_die(cudaMemset(d_out[o], 0xFF, array_reals(out_floats[o]) * sizeof(real)), "poison");
  }
  *ok = 1;
  kas_status st = call(d_in, d_out, first, n, d_work);
  cuda_or_die(cudaDeviceSynchronize(), "kernel");
  if (st != KAS_OK) {
    printf("FAIL: n=%zu from element %zu: %s%s%s\n", n, first, kas_embed_status_string(st),
           st == KAS_ERR_CUDA ? ": " : "",
           st == KAS_ERR_CUDA ? cudaGetErrorString((cudaError_t)kas_embed_last_cuda_error()) : "");
    failures++;
  }
  double worst = 0;
  for (int o = 0; o < NOUT; o++) {
    int outside;
    double err = check_output(d_out[o], o, ref[o], first, n, &outside);
    if (err > worst) worst = err;
    *ok &= err < tol[o].error;
    if (outside) {
      printf("FAIL: n=%zu from element %zu: output %s written outside the range\n", n, first,
             out_names[o]);
      failures++;
    }
    free(ref[o]);
  }
  for (int i = 0; i < KAS_EMBED_NINPUTS; i++) free(cpu_in[i]);
  return worst;
}

/* Argument checks need no data: NULL pointers, a pointer not aligned to its type, a leading
 * dimension below n, and n = 0 with no pointers at all; a pointer aligned to its type only is
 * accepted. */
static void check_arguments(real *const *d_in, real *const *d_out, void *d_work) {
#if KAS_EMBED_LD
  expect(kas_embed_arrays(NULL, NULL, 0, 0, NULL, NULL) == KAS_OK,
         "n = 0 with NULL pointers is a no-op");
  expect(kas_embed_arrays((const real *const *)d_in, d_out, 7, 6, d_work, NULL) ==
             KAS_ERR_INVALID, "a leading dimension below n is refused");
#define CALL(in, out, n, work) kas_embed_arrays(in, out, n, NTOTAL, work, NULL)
#else
  expect(kas_embed_arrays(NULL, NULL, 0, NULL, NULL) == KAS_OK,
         "n = 0 with NULL pointers is a no-op");
#define CALL(in, out, n, work) kas_embed_arrays(in, out, n, work, NULL)
#endif
  real *bad_out[NOUT];
  for (int o = 0; o < NOUT; o++) bad_out[o] = d_out[o];
  bad_out[NOUT - 1] = NULL;
  expect(CALL((const real *const *)d_in, bad_out, 7, d_work) == KAS_ERR_INVALID,
         "a NULL output is refused");
  bad_out[NOUT - 1] = (real *)((char *)d_out[NOUT - 1] + 1); /* not aligned to its type */
  expect(CALL((const real *const *)d_in, bad_out, 7, d_work) == KAS_ERR_ALIGN,
         "an output not aligned to its type is refused");
  bad_out[NOUT - 1] = d_out[NOUT - 1] + 1; /* aligned to its type only: fine */
  expect(CALL((const real *const *)d_in, bad_out, 7, d_work) == KAS_OK,
         "an output aligned to its type only is accepted");
  if (kas_embed_workspace_bytes(7) > 0)
    expect(CALL((const real *const *)d_in, d_out, 7, NULL) == KAS_ERR_INVALID,
           "a missing workspace is refused");
  cuda_or_die(cudaDeviceSynchronize(), "argument checks");
}

int main(void) {
  static const size_t sizes[] = {0, 1, 7, 1000003}, firsts[] = {0, 1};
  real *d_in[NIN], *d_out[NOUT];
  void *d_work = NULL;
  for (int i = 0; i < KAS_EMBED_NINPUTS; i++)
    cuda_or_die(cudaMalloc((void **)&d_in[i], array_reals(in_floats[i]) * sizeof(real)),
                "cudaMalloc");
  for (int o = 0; o < NOUT; o++)
    cuda_or_die(cudaMalloc((void **)&d_out[o], array_reals(out_floats[o]) * sizeof(real)),
                "cudaMalloc");
  for (int i = 0; i < KAS_EMBED_NINPUTS; i++) /* the checks' tables describe these inputs */
    expect(in_floats[i] == kas_input_floats[i] && in_layouts[i] == kas_input_layouts[i],
           "the embed's inputs are kas_candidates.h's");
  size_t wbytes = kas_embed_workspace_bytes(NTOTAL);
  if (wbytes) cuda_or_die(cudaMalloc(&d_work, wbytes), "cudaMalloc workspace");
  check_arguments(d_in, d_out, d_work);
  for (size_t f = 0; f < sizeof firsts / sizeof *firsts; f++)
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
      int ok;
      double err = run_and_check(firsts[f], sizes[s], d_in, d_out, d_work, &ok);
      printf("%s n=%-8zu from element %zu: normwise relative error %.3g %s\n", KAS_EMBED_NAME,
             sizes[s], firsts[f], err, ok ? "ok" : "WRONG");
      failures += !ok;
    }
  for (int i = 0; i < KAS_EMBED_NINPUTS; i++) cudaFree(d_in[i]);
  for (int o = 0; o < NOUT; o++) cudaFree(d_out[o]);
  cudaFree(d_work);
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
