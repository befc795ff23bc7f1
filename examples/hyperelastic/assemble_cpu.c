/*
 * assemble_cpu.c — the CPU mode of the hyperelastic example: geometry, gather and assembly as
 * plain loops in element order, so that the result is deterministic (the same bits on every
 * run), around the element computation of element_cpu.h.  Timed with the monotonic clock.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "element_cpu.h"
#include "element_io.h"
#include "pipeline.h"

/* Element records: inputs and outputs of the spec, element-major. */
typedef struct {
  float *u, *dphi, *volume, *lambda, *mu, *f, *K;
} Records;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int records_alloc(Records *r, size_t n) {
  r->u = malloc(n * REC_U * sizeof(float));
  r->dphi = malloc(n * REC_DPHI * sizeof(float));
  r->volume = malloc(n * sizeof(float));
  r->lambda = malloc(n * sizeof(float));
  r->mu = malloc(n * sizeof(float));
  r->f = malloc(n * REC_F * sizeof(float));
  r->K = malloc(n * REC_K * sizeof(float));
  return r->u && r->dphi && r->volume && r->lambda && r->mu && r->f && r->K ? 0 : -1;
}

static void records_free(Records *r) {
  free(r->u), free(r->dphi), free(r->volume), free(r->lambda), free(r->mu), free(r->f), free(r->K);
}

/* Once per mesh: dphi and V from the reference nodes; the material in every element. */
static void setup_elements(const Problem *p, Records *r) {
  const Mesh *m = p->mesh;
  for (size_t e = 0; e < m->nelems; e++) {
    const int32_t *t = m->tets + 4 * e;
    tet_geometry(m->x + 3 * (size_t)t[0], m->x + 3 * (size_t)t[1], m->x + 3 * (size_t)t[2],
                 m->x + 3 * (size_t)t[3], r->dphi + REC_DPHI * e, r->volume + e);
    r->lambda[e] = p->lambda, r->mu[e] = p->mu;
  }
}

static void gather(const Problem *p, Records *r) {
  for (size_t e = 0; e < p->mesh->nelems; e++)
    for (int q = 0; q < REC_U; q++)
      r->u[REC_U * e + q] = gather_entry(p->u, p->mesh->tets + 4 * e, q);
}

static void assemble(const Problem *p, const Records *r, double *force, double *values) {
  const Mesh *m = p->mesh;
  memset(force, 0, p->csr->nrows * sizeof *force);
  memset(values, 0, p->csr->nnz * sizeof *values);
  for (size_t e = 0; e < m->nelems; e++) {
    const int32_t *t = m->tets + 4 * e;
    const int64_t *block_slot = p->csr->block_slot + 16 * e;
    for (int q = 0; q < REC_F; q++) force[3 * (size_t)t[q / 3] + q % 3] += r->f[REC_F * e + q];
    for (int q = 0; q < REC_K; q++)
      values[stiffness_slot(block_slot, p->csr->row_ptr, t, q)] += r->K[REC_K * e + q];
  }
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int count) {
  qsort(v, count, sizeof *v, compare_double);
  return count % 2 ? v[count / 2] : 0.5 * (v[count / 2 - 1] + v[count / 2]);
}

/* One timed pass; its stage times go to ms[0], ms[stride], ms[2 stride]. */
static int one_pass(const Problem *p, Records *r, double *force, double *values, double *ms,
                    int stride) {
  size_t n = p->mesh->nelems;
  double t0 = now_ms();
  gather(p, r);
  double t1 = now_ms();
  if (cpu_element.run(r->u, r->dphi, r->volume, r->lambda, r->mu, r->f, r->K, n) != 0) return 1;
  double t2 = now_ms();
  assemble(p, r, force, values);
  double t3 = now_ms();
  ms[0] = t1 - t0, ms[stride] = t2 - t1, ms[2 * stride] = t3 - t2;
  return 0;
}

int pipeline_run(const Problem *p, int passes, double *force, double *values, StageTimes *t) {
  Records r = {0};
  double *ms = malloc(3 * (size_t)passes * sizeof *ms);
  int failed = records_alloc(&r, p->mesh->nelems) != 0 || !ms;
  if (failed) fprintf(stderr, "out of memory for the element records\n");
  if (!failed) setup_elements(p, &r);
  for (int k = 0; k < passes && !failed; k++)
    failed = one_pass(p, &r, force, values, ms + k, passes);
  if (!failed)
    *t = (StageTimes){median(ms, passes), median(ms + passes, passes),
                      median(ms + 2 * passes, passes)};
  records_free(&r);
  free(ms);
  return failed;
}

const char *pipeline_description(void) {
  static char text[512];
  snprintf(text, sizeof text, "CPU (plain loops, deterministic); element: %s", cpu_element.name);
  return text;
}
