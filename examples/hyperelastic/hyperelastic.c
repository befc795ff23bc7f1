/*
 * hyperelastic.c — a small FEM program that embeds kasgen: a St. Venant-Kirchhoff cube on a
 * structured tetrahedral mesh, from nodal displacements to the assembled internal-force vector
 * and tangent stiffness matrix (CSR).  The element computation is kasgen's winner of
 * specs/stvk_tet.spec, called through its embed API; the mesh, the element geometry, the gather
 * and the assembly are this program's.  The same driver builds in a GPU mode (assemble_gpu.cu)
 * and a CPU mode (assemble_cpu.c); README.md says how, and what it prints and writes.
 *
 *   hyperelastic [--hexes N] [--passes R] [--out DIR] [--lambda L] [--mu M]
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "csr.h"
#include "mesh.h"
#include "output.h"
#include "pipeline.h"

typedef struct {
  int hexes, passes;
  const char *out;
  double lambda, mu;
} Options;

static void usage(FILE *to) {
  fprintf(to, "usage: hyperelastic [--hexes N] [--passes R] [--out DIR] [--lambda L] [--mu M]\n"
              "  --hexes N   hexahedra per edge of the unit cube, 6 N^3 tetrahedra (default 12)\n"
              "  --passes R  timed passes of gather, element and assembly; medians are printed "
              "(default 5)\n"
              "  --out DIR   write problem.txt, nodes.txt, elements.txt, force.mtx and "
              "stiffness.mtx there\n"
              "  --lambda L, --mu M   Lame parameters (default: Young's modulus 1, Poisson 0.3)\n");
}

/* A whole-string number within [lo, hi], or exit with a message. */
static double number_arg(const char *name, const char *text, double lo, double hi) {
  char *end;
  double v = strtod(text, &end);
  if (end == text || *end || !(v >= lo && v <= hi)) {
    fprintf(stderr, "%s: expected a number in [%g, %g], got '%s'\n", name, lo, hi, text);
    exit(2);
  }
  return v;
}

static Options parse_options(int argc, char **argv) {
  Options o = {12, 5, NULL, 0.5769230769230769, 0.38461538461538464};
  for (int k = 1; k < argc; k++) {
    const char *a = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) usage(stdout), exit(0);
    if (!v) usage(stderr), exit(2);
    if (!strcmp(a, "--hexes")) o.hexes = (int)number_arg(a, v, 1, MESH_MAX_HEXES_PER_EDGE);
    else if (!strcmp(a, "--passes")) o.passes = (int)number_arg(a, v, 1, 1000);
    else if (!strcmp(a, "--out")) o.out = v;
    else if (!strcmp(a, "--lambda")) o.lambda = number_arg(a, v, 0, 1e30);
    else if (!strcmp(a, "--mu")) o.mu = number_arg(a, v, 0, 1e30);
    else usage(stderr), exit(2);
    k++;
  }
  return o;
}

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void report(const Problem *p, int passes, const StageTimes *t, double setup_s) {
  double total = t->gather + t->element + t->assembly;
  printf("mesh: %d^3 hexahedra, %zu nodes, %zu tetrahedra; stiffness %zu x %zu, %zu nonzeros\n",
         p->mesh->n, p->mesh->nnodes, p->mesh->nelems, p->csr->nrows, p->csr->nrows, p->csr->nnz);
  printf("host setup (mesh, stiffness pattern, displacements): %.2f s\n", setup_s);
  printf("run: %s\n", pipeline_description());
  printf("median of %d passes: gather %.3f ms, element %.3f ms, assembly %.3f ms, total %.3f ms\n",
         passes, t->gather, t->element, t->assembly, total);
  printf("elements per second: %.4g\n", p->mesh->nelems / (total * 1e-3));
  printf("element kernel share of the total time: %.1f %%\n", 100 * t->element / total);
}

int main(int argc, char **argv) {
  Options o = parse_options(argc, argv);
  Mesh mesh;
  Csr csr;
  double start = seconds();
  if (mesh_build(&mesh, o.hexes) != 0) return 1;
  if (csr_build(&csr, &mesh) != 0) return 1;
  double *u = malloc(3 * mesh.nnodes * sizeof *u);
  double *force = malloc(csr.nrows * sizeof *force), *values = malloc(csr.nnz * sizeof *values);
  if (!u || !force || !values) {
    fprintf(stderr, "out of memory for the displacements and the assembled system\n");
    return 1;
  }
  mesh_displacements(&mesh, u);
  double setup_s = seconds() - start;
  Problem p = {&mesh, &csr, u, (float)o.lambda, (float)o.mu};
  StageTimes t;
  int status = pipeline_run(&p, o.passes, force, values, &t);
  if (status == 0) report(&p, o.passes, &t, setup_s);
  if (status == 0 && o.out) status = output_write(o.out, &p, force, values) != 0;
  free(u), free(force), free(values);
  csr_free(&csr);
  mesh_free(&mesh);
  return status;
}
