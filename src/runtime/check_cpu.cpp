/*
 * check_cpu.cpp — the CPU check of generated candidates (common/check_cpu.cpp of every folder
 * kasgen writes; kept as src/runtime/check_cpu.cpp in kasgen's sources).  It runs every
 * candidate's host form (the kernels executed thread by thread on the CPU) with threads in
 * ascending and in descending order, compares both with the double-precision CPU graph
 * (kas_check.h) and with each other (any difference means a barrier is missing).  Needs no GPU.
 *
 *   check_cpu [N]    default 1003, a tail case for every E that is a multiple of 4; it also runs
 *                    n = 1 and n = 0
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define KAS_CANDIDATES_HOST
#include "kas_candidates.h"
#include "kas_check.h"
#include "kas_random.h"

extern "C" void kas_cpu_graph(const double *const *in, double *const *out, size_t n);

static void *alloc_or_die(size_t bytes) {
  void *p = aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  if (!p) {
    fprintf(stderr, "check_cpu: out of memory (%zu bytes)\n", bytes);
    exit(2);
  }
  return p;
}

typedef struct {
  size_t n;
  float *in[KAS_NINPUTS > 0 ? KAS_NINPUTS : 1];
  double *in_d[KAS_NINPUTS > 0 ? KAS_NINPUTS : 1];
  double *ref[KAS_NOUTPUTS];
  float *up[KAS_NOUTPUTS], *down[KAS_NOUTPUTS]; /* results of order +1 and -1 */
} Problem;

/* Inputs: magnitudes in [0.5, 1.5) with random signs, never zero. */
static void problem_init(Problem *p, size_t n) {
  p->n = n;
  for (int i = 0; i < KAS_NINPUTS; i++) {
    size_t len = n * kas_input_floats[i];
    p->in[i] = (float *)alloc_or_die(len * sizeof(float));
    p->in_d[i] = (double *)alloc_or_die(len * sizeof(double));
    for (size_t k = 0; k < len; k++) {
      p->in[i][k] = kas_random_value(1);
      p->in_d[i][k] = p->in[i][k];
    }
  }
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    size_t len = n * kas_output_floats[o];
    p->ref[o] = (double *)alloc_or_die(len * sizeof(double));
    p->up[o] = (float *)alloc_or_die(len * sizeof(float));
    p->down[o] = (float *)alloc_or_die(len * sizeof(float));
  }
  kas_cpu_graph(p->in_d, p->ref, n);
}

static void problem_free(Problem *p) {
  for (int i = 0; i < KAS_NINPUTS; i++) free(p->in[i]), free(p->in_d[i]);
  for (int o = 0; o < KAS_NOUTPUTS; o++) free(p->ref[o]), free(p->up[o]), free(p->down[o]);
}

/* Runs one candidate's host form in one thread order into outs (poisoned first). */
static void run_host(const KasCandidate *c, const Problem *p, int order, float **outs) {
  for (int o = 0; o < KAS_NOUTPUTS; o++)
    for (size_t k = 0; k < p->n * kas_output_floats[o]; k++) outs[o][k] = NAN;
  void *ws = alloc_or_die(c->host_workspace_bytes(p->n));
  c->launch_host(p->in, outs, ws, p->n, order);
  free(ws);
}

/* Output o of the run in one thread order against the CPU graph. */
static bool check_output(const char *cand, const Problem *p, int o, const float *got,
                         const char *order, double *err_out) {
  char what[96];
  snprintf(what, sizeof what, "%s: n=%zu order %s", cand, p->n, order);
  return kas_check_output(what, kas_output_names[o], got, p->ref[o],
                          p->n * kas_output_floats[o], kas_output_floats[o], err_out);
}

/* Both orders must agree bit for bit: the CUDA model promises nothing about thread order. */
static bool check_orders(const char *cand, const Problem *p) {
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    size_t len = p->n * kas_output_floats[o];
    for (size_t k = 0; k < len; k++)
      if (memcmp(&p->up[o][k], &p->down[o][k], sizeof(float))) {
        size_t f = (size_t)kas_output_floats[o];
        printf("%s: n=%zu: output %s element %zu [%zu] differs between thread orders "
               "(%.9g vs %.9g): a barrier is missing\n", cand, p->n, kas_output_names[o],
               k / f, k % f, (double)p->up[o][k], (double)p->down[o][k]);
        return false;
      }
  }
  return true;
}

static bool check_candidate(const KasCandidate *c, Problem *p, double *worst) {
  run_host(c, p, +1, p->up);
  run_host(c, p, -1, p->down);
  bool ok = true;
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    double e1, e2;
    ok &= check_output(c->name, p, o, p->up[o], "+1", &e1);
    ok &= check_output(c->name, p, o, p->down[o], "-1", &e2);
    if (e1 > *worst) *worst = e1;
    if (e2 > *worst) *worst = e2;
  }
  return ok && check_orders(c->name, p);
}

/* n = 0 must write nothing: the poisoned sentinel stays. */
static bool check_empty(const KasCandidate *c) {
  float sentinel[KAS_NOUTPUTS][1];
  float *outs[KAS_NOUTPUTS];
  for (int o = 0; o < KAS_NOUTPUTS; o++) sentinel[o][0] = 42.0f, outs[o] = sentinel[o];
  float dummy = 1.0f;
  const float *ins[KAS_NINPUTS > 0 ? KAS_NINPUTS : 1];
  for (int i = 0; i < KAS_NINPUTS; i++) ins[i] = &dummy;
  c->launch_host(ins, outs, NULL, 0, 1);
  for (int o = 0; o < KAS_NOUTPUTS; o++)
    if (sentinel[o][0] != 42.0f) {
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
  const size_t sizes[] = {n, 1};
  Problem problems[2];
  for (int s = 0; s < 2; s++) problem_init(&problems[s], sizes[s]);
  int failures = 0;
  for (int c = 0; c < KAS_NCANDIDATES; c++) {
    const KasCandidate *cand = &kas_candidates[c];
    double worst = 0;
    bool ok = check_empty(cand);
    for (int s = 0; s < 2; s++) ok &= check_candidate(cand, &problems[s], &worst);
    printf("%-10s %s  max relative error %.3g  (n = %zu and 1, thread orders +1/-1)  %s\n",
           cand->name, ok ? "PASS" : "FAIL", worst, n, cand->kernels);
    failures += !ok;
  }
  for (int s = 0; s < 2; s++) problem_free(&problems[s]);
  printf("%s: %d of %d candidates passed\n", KAS_SPEC_NAME, KAS_NCANDIDATES - failures,
         KAS_NCANDIDATES);
  return failures ? 1 : 0;
}
