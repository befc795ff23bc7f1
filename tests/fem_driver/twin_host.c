/*
 * twin_host.c — two generated embeds of one computation give the same results for the same
 * data: a spec with loops and its unrolled twin (specs/X.spec and specs/X_unrolled.spec, the
 * same arrays at the API), each run through its embed's host entry (kas_<stem>_host_arrays: the
 * winner's kernels run thread by thread on the CPU) on the same random inputs of n elements.
 * Also: n = 0 writes nothing, and a NULL input is refused.  Prints PASS/FAIL; exit 1 on FAIL.
 *
 *   cc -DA_HEADER='"kas_x.h"' -DA=x -DA_UP=X -DB_HEADER='"kas_x_unrolled.h"' -DB=x_unrolled
 *      -DB_UP=X_UNROLLED twin_host.c kas_x.o kas_x_unrolled.o -lcudart -lm
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include A_HEADER
#include B_HEADER

#define STR_(x) #x
#define STR(x) STR_(x)
#define CAT3(a, b, c) a##b##c
#define NAME(pre, stem, post) CAT3(pre, stem, post)
#define A_FN(post) NAME(kas_, A, post)
#define B_FN(post) NAME(kas_, B, post)
#define A_MACRO(post) NAME(KAS_, A_UP, post)
#define B_MACRO(post) NAME(KAS_, B_UP, post)

typedef A_MACRO(_REAL) real;
#define NIN A_MACRO(_NINPUTS)
#define NOUT A_MACRO(_NOUTPUTS)

static const int in_floats[NIN] = A_MACRO(_INPUT_FLOATS), twin_in[NIN] = B_MACRO(_INPUT_FLOATS);
static const int out_floats[NOUT] = A_MACRO(_OUTPUT_FLOATS);
static const int twin_out[NOUT] = B_MACRO(_OUTPUT_FLOATS);
static const char *const out_names[NOUT] = A_MACRO(_OUTPUT_NAMES);

static void *alloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    printf("FAIL: out of memory\n");
    exit(1);
  }
  return p;
}

/* Runs one embed's host entry; its workspace is its own. */
typedef kas_status (*HostArrays)(const real *const *, real *const *, size_t, void *, void *);
static kas_status run(HostArrays fn, size_t (*bytes)(size_t), const real *const *in,
                      real *const *out, size_t n) {
  void *ws = bytes(n) ? alloc(bytes(n)) : NULL;
  kas_status st = fn(in, out, n, ws, NULL);
  free(ws);
  return st;
}

int main(void) {
  const size_t n = 1003;
  int fails = 0;
  if (NIN != B_MACRO(_NINPUTS) || NOUT != B_MACRO(_NOUTPUTS) ||
      memcmp(in_floats, twin_in, sizeof in_floats) || memcmp(out_floats, twin_out, sizeof twin_out)) {
    printf("FAIL: the two embeds take different arguments\n");
    return 1;
  }
  real *in[NIN], *out[2][NOUT];
  srand(11);
  for (int i = 0; i < NIN; i++) {
    in[i] = alloc(n * in_floats[i] * sizeof(real));
    for (size_t k = 0; k < n * in_floats[i]; k++) in[i][k] = (real)(0.5 + rand() / (double)RAND_MAX);
  }
  for (int r = 0; r < 2; r++)
    for (int o = 0; o < NOUT; o++) {
      out[r][o] = alloc(n * out_floats[o] * sizeof(real));
      for (size_t k = 0; k < n * out_floats[o]; k++) out[r][o][k] = NAN;
    }
  const real *const *cin = (const real *const *)in;
  if (run(A_FN(_host_arrays), A_FN(_host_workspace_bytes), cin, out[0], n) != KAS_OK ||
      run(B_FN(_host_arrays), B_FN(_host_workspace_bytes), cin, out[1], n) != KAS_OK) {
    printf("FAIL: a host entry refused valid arguments\n");
    return 1;
  }
  for (int o = 0; o < NOUT; o++) {
    double d2 = 0, r2 = 0;
    size_t same = 0, count = n * out_floats[o];
    for (size_t k = 0; k < count; k++) {
      double a = out[0][o][k], b = out[1][o][k];
      d2 += (a - b) * (a - b), r2 += b * b;
      same += memcmp(&out[0][o][k], &out[1][o][k], sizeof(real)) == 0;
    }
    double rel = sqrt(d2 / (r2 > 0 ? r2 : 1));
    int ok = isfinite(rel) && rel < (sizeof(real) == 8 ? 1e-12 : 1e-6);
    printf("%s: output %s: %zu of %zu reals identical, relative difference %.3g\n",
           ok ? "PASS" : "FAIL", out_names[o], same, count, rel);
    fails += !ok;
  }
  real sentinel = 42, *none[NOUT];
  for (int o = 0; o < NOUT; o++) none[o] = &sentinel;
  fails += A_FN(_host_arrays)(cin, none, 0, NULL, NULL) != KAS_OK || sentinel != 42;
  real *first = in[0];
  in[0] = NULL;
  fails += A_FN(_host_arrays)(cin, out[0], n, NULL, NULL) != KAS_ERR_INVALID;
  in[0] = first;
  printf("%s: %s and %s on %zu elements\n", fails ? "FAIL" : "PASS", STR(A), STR(B), n);
  for (int i = 0; i < NIN; i++) free(in[i]);
  for (int r = 0; r < 2; r++)
    for (int o = 0; o < NOUT; o++) free(out[r][o]);
  return fails ? 1 : 0;
}
