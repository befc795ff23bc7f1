/*
 * check_cpu.cpp — the CPU check of generated candidates (common/check_cpu.cpp of every folder
 * kasgen writes; kept as src/runtime/check_cpu.cpp in kasgen's sources).  It runs every
 * candidate's host form (the kernels executed thread by thread on the CPU) with threads in
 * ascending and in descending order, compares both with the double-precision CPU graph
 * (kas_check.h) and with each other (any difference means a barrier is missing).  The inputs
 * are drawn well-conditioned and each output's tolerance follows the data (kas_random.h).  The
 * arrays are laid out as the candidates were generated for (kas_layout.h): whole arrays of n
 * elements, and sub-ranges starting at elements 1, 2 and 3 of larger arrays (pointers aligned to
 * their type only, a leading dimension above n), where nothing outside the range may be written.
 * Needs no GPU.
 *
 *   check_cpu [N]    default 1003, a tail case for every E that is a multiple of 4; it also runs
 *                    n = 1, the sub-range and n = 0
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define KAS_CANDIDATES_HOST
#include "kas_candidates.h"
#include "kas_check.h"
#include "kas_layout.h"
#include "kas_random.h"

extern "C" void kas_cpu_graph_rounded(const double *const *in, double *const *out, size_t n,
                                      double u, const size_t *at);

#define NIN (KAS_NINPUTS > 0 ? KAS_NINPUTS : 1)
#define SUBRANGE_PAD 3 /* elements of the sub-range's arrays past its end (ld > first + n) */

static void *alloc_or_die(size_t bytes) {
  void *p = aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  if (!p) {
    fprintf(stderr, "check_cpu: out of memory (%zu bytes)\n", bytes);
    exit(2);
  }
  return p;
}

/* One run's data: elements [first, first + n) of arrays of `total` elements (component-major
 * rows ld apart), the CPU graph's element-major doubles, and each thread order's outputs. */
typedef struct {
  size_t n, first, total, ld;
  kas_real *in_array[NIN];    /* the arrays, laid out */
  const kas_real *in[NIN];    /* what the candidates get: the first element's place */
  double *in_d[NIN];          /* element-major, for the CPU graph */
  double *ref[KAS_NOUTPUTS];
  KasTolerance tol[KAS_NOUTPUTS]; /* each output's on this data (kas_random.h) */
  kas_real *out_array[2][KAS_NOUTPUTS]; /* per thread order (+1, -1), laid out */
  kas_real *got[2][KAS_NOUTPUTS];       /* the range, gathered element-major */
} Problem;

static size_t array_reals(const Problem *p, int layout, int size) {
  return kas_array_reals(layout == KAS_COMPONENT, size, p->total, p->ld);
}

/* The range's inputs: drawn well-conditioned (kas_random.h), into in_d and the arrays; their
 * CPU graph outputs into ref and each output's tolerance on them into tol. */
static void draw_range(Problem *p, const char *what) {
  double *rounded[KAS_NOUTPUTS]; /* the outputs under the tolerance model's rounding */
  for (int o = 0; o < KAS_NOUTPUTS; o++)
    rounded[o] = (double *)alloc_or_die(p->n * kas_output_floats[o] * sizeof(double));
  kas_report_screen(what, kas_draw_inputs(p->in_d, p->n, 1, kas_cpu_graph_rounded, p->ref,
                                          rounded),
                    p->n);
  for (int i = 0; i < KAS_NINPUTS; i++) {
    int s = kas_input_floats[i], comp = kas_input_layouts[i] == KAS_COMPONENT;
    KAS_SCATTER(p->in_array[i], p->in_d[i], comp, s, p->first, p->n, p->ld);
  }
  kas_tolerances(what, p->ref, rounded, p->n, p->tol);
  for (int o = 0; o < KAS_NOUTPUTS; o++) free(rounded[o]);
}

static void problem_init(Problem *p, size_t n, size_t first) {
  memset(p, 0, sizeof *p);
  p->n = n;
  p->first = first;
  p->total = first + n + (first ? SUBRANGE_PAD : 0);
  p->ld = p->total;
  for (int i = 0; i < KAS_NINPUTS; i++) {
    int s = kas_input_floats[i], comp = kas_input_layouts[i] == KAS_COMPONENT;
    size_t reals = array_reals(p, kas_input_layouts[i], s);
    p->in_array[i] = (kas_real *)alloc_or_die(reals * sizeof(kas_real));
    kas_fill_input(p->in_array[i], reals, i, p->ld, 1); /* outside the range too */
    p->in_d[i] = (double *)alloc_or_die(n * s * sizeof(double));
    p->in[i] = p->in_array[i] + kas_array_index(comp, s, first, 0, p->ld);
  }
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    int s = kas_output_floats[o];
    p->ref[o] = (double *)alloc_or_die(n * s * sizeof(double));
    for (int r = 0; r < 2; r++) {
      p->out_array[r][o] = (kas_real *)alloc_or_die(array_reals(p, kas_output_layouts[o], s) *
                                                    sizeof(kas_real));
      p->got[r][o] = (kas_real *)alloc_or_die(n * s * sizeof(kas_real));
    }
  }
  char what[64];
  snprintf(what, sizeof what, "n=%zu from element %zu", n, first);
  draw_range(p, what);
}

static void problem_free(Problem *p) {
  for (int i = 0; i < KAS_NINPUTS; i++) free(p->in_array[i]), free(p->in_d[i]);
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    free(p->ref[o]);
    for (int r = 0; r < 2; r++) free(p->out_array[r][o]), free(p->got[r][o]);
  }
}

/* Runs one candidate's host form in one thread order (run 0: +1, run 1: -1) into poisoned
 * arrays; false when it wrote outside the range. */
static bool run_host(const KasCandidate *c, Problem *p, int run) {
  kas_real *outs[KAS_NOUTPUTS];
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    int s = kas_output_floats[o], comp = kas_output_layouts[o] == KAS_COMPONENT;
    size_t reals = array_reals(p, kas_output_layouts[o], s);
    for (size_t k = 0; k < reals; k++) p->out_array[run][o][k] = NAN;
    outs[o] = p->out_array[run][o] + kas_array_index(comp, s, p->first, 0, p->ld);
  }
  void *ws = alloc_or_die(c->host_workspace_bytes(p->n));
  c->launch_host(p->in, outs, ws, p->n, p->ld, run ? -1 : 1);
  free(ws);
  bool ok = true;
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    int s = kas_output_floats[o], comp = kas_output_layouts[o] == KAS_COMPONENT;
    KAS_GATHER(p->got[run][o], p->out_array[run][o], comp, s, p->first, p->n, p->ld);
    size_t inside = 0, reals = array_reals(p, kas_output_layouts[o], s), written = 0;
    for (size_t k = 0; k < reals; k++) written += !isnan(p->out_array[run][o][k]);
    for (size_t k = 0; k < p->n * s; k++) inside += !isnan(p->got[run][o][k]);
    if (written > inside) {
      printf("%s: n=%zu from element %zu: output %s written outside the range\n", c->name, p->n,
             p->first, kas_output_names[o]);
      ok = false;
    }
  }
  return ok;
}

/* Output o of one thread order's run against the CPU graph. */
static bool check_output(const char *cand, const Problem *p, int o, int run, double *err_out) {
  char what[128];
  snprintf(what, sizeof what, "%s: n=%zu from element %zu order %s", cand, p->n, p->first,
           run ? "-1" : "+1");
  return kas_check_output(what, kas_output_names[o], p->got[run][o], p->ref[o],
                          p->n * kas_output_floats[o], kas_output_floats[o], p->tol[o],
                          err_out);
}

/* Both orders must agree bit for bit: the CUDA model promises nothing about thread order. */
static bool check_orders(const char *cand, const Problem *p) {
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    size_t len = p->n * kas_output_floats[o];
    for (size_t k = 0; k < len; k++)
      if (memcmp(&p->got[0][o][k], &p->got[1][o][k], sizeof(kas_real))) {
        size_t f = (size_t)kas_output_floats[o];
        printf("%s: n=%zu: output %s element %zu [%zu] differs between thread orders "
               "(%.17g vs %.17g): a barrier is missing\n", cand, p->n, kas_output_names[o],
               k / f, k % f, (double)p->got[0][o][k], (double)p->got[1][o][k]);
        return false;
      }
  }
  return true;
}

static bool check_candidate(const KasCandidate *c, Problem *p, double *worst) {
  bool ok = run_host(c, p, 0) && run_host(c, p, 1);
  for (int o = 0; o < KAS_NOUTPUTS; o++)
    for (int run = 0; run < 2; run++) {
      double e;
      ok &= check_output(c->name, p, o, run, &e);
      if (e > *worst) *worst = e;
    }
  return ok && check_orders(c->name, p);
}

/* n = 0 must write nothing: the poisoned sentinel stays. */
static bool check_empty(const KasCandidate *c) {
  kas_real sentinel[KAS_NOUTPUTS][1];
  kas_real *outs[KAS_NOUTPUTS];
  for (int o = 0; o < KAS_NOUTPUTS; o++) sentinel[o][0] = 42, outs[o] = sentinel[o];
  kas_real dummy = 1;
  const kas_real *ins[NIN];
  for (int i = 0; i < KAS_NINPUTS; i++) ins[i] = &dummy;
  c->launch_host(ins, outs, NULL, 0, 0, 1);
  for (int o = 0; o < KAS_NOUTPUTS; o++)
    if (sentinel[o][0] != 42) {
      printf("%s: n=0 wrote output %s\n", c->name, kas_output_names[o]);
      return false;
    }
  return true;
}

int main(int argc, char **argv) {
  size_t n = 1003;
  if (argc > 1) {
    char *end;
    unsigned long long v = strtoull(argv[1], &end, 10);
    if (*end || end == argv[1]) {
      fprintf(stderr, "usage: %s [N]\n", argv[0]);
      return 2;
    }
    n = (size_t)v;
  }
  /* n elements, one, and sub-ranges of n elements from elements 1, 2 and 3: pointers aligned
   * to their type only, which the choosing launch peels differently (docs/generated.md) */
  enum { NPROBLEMS = 5 };
  const size_t sizes[NPROBLEMS] = {n, 1, n, n, n}, firsts[NPROBLEMS] = {0, 0, 1, 2, 3};
  Problem problems[NPROBLEMS];
  for (int s = 0; s < NPROBLEMS; s++) problem_init(&problems[s], sizes[s], firsts[s]);
  int failures = 0;
  for (int c = 0; c < KAS_NCANDIDATES; c++) {
    const KasCandidate *cand = &kas_candidates[c];
    double worst = 0;
    bool ok = check_empty(cand);
    for (int s = 0; s < NPROBLEMS; s++) ok &= check_candidate(cand, &problems[s], &worst);
    printf("%-10s %s  max relative error %.3g  (n = %zu and 1, sub-ranges from elements 1-3, "
           "thread orders +1/-1)  %s\n",
           cand->name, ok ? "PASS" : "FAIL", worst, n, cand->kernels);
    failures += !ok;
    if (!ok && !strcmp(cand->name, "unfused")) kas_note_unfused_failed();
  }
  for (int s = 0; s < NPROBLEMS; s++) problem_free(&problems[s]);
  printf("%s: %d of %d candidates passed\n", KAS_SPEC_NAME, KAS_NCANDIDATES - failures,
         KAS_NCANDIDATES);
  return failures ? 1 : 0;
}
