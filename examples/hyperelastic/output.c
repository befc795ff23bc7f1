/*
 * output.c — writes the hyperelastic example's results in the plain formats of README.md
 * ("Output"); every number with 17 significant digits, so that a double reads back exactly.
 */
#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pipeline.h"

typedef int (*WriteBody)(FILE *out, const Problem *p, const double *force, const double *values);

static int write_problem(FILE *out, const Problem *p, const double *force, const double *values) {
  (void)force, (void)values;
  return fprintf(out,
                 "# hyperelastic example: the problem (docs/stvk.md section 5) and what ran\n"
                 "hexes_per_edge %d\nnodes %zu\nelements %zu\ndofs %zu\nnonzeros %zu\n"
                 "lambda %.17g\nmu %.17g\nrun %s\n",
                 p->mesh->n, p->mesh->nnodes, p->mesh->nelems, p->csr->nrows, p->csr->nnz,
                 (double)p->lambda, (double)p->mu, pipeline_description()) < 0;
}

static int write_nodes(FILE *out, const Problem *p, const double *force, const double *values) {
  (void)force, (void)values;
  int bad = fprintf(out, "# one line per node: X Y Z (reference) ux uy uz (displacement)\n") < 0;
  for (size_t a = 0; a < p->mesh->nnodes && !bad; a++) {
    const double *x = p->mesh->x + 3 * a, *u = p->u + 3 * a;
    bad = fprintf(out, "%.17g %.17g %.17g %.17g %.17g %.17g\n", x[0], x[1], x[2], u[0], u[1],
                  u[2]) < 0;
  }
  return bad;
}

static int write_elements(FILE *out, const Problem *p, const double *force, const double *values) {
  (void)force, (void)values;
  int bad = fprintf(out, "# one line per tetrahedron: its 4 node indices (from 0)\n") < 0;
  for (size_t e = 0; e < p->mesh->nelems && !bad; e++) {
    const int32_t *t = p->mesh->tets + 4 * e;
    bad = fprintf(out, "%d %d %d %d\n", (int)t[0], (int)t[1], (int)t[2], (int)t[3]) < 0;
  }
  return bad;
}

static int write_force(FILE *out, const Problem *p, const double *force, const double *values) {
  (void)values;
  int bad = fprintf(out, "%%%%MatrixMarket matrix array real general\n"
                         "%% internal force, entry 3*node + i (node from 0, i = x, y, z)\n"
                         "%zu 1\n", p->csr->nrows) < 0;
  for (size_t r = 0; r < p->csr->nrows && !bad; r++) bad = fprintf(out, "%.17g\n", force[r]) < 0;
  return bad;
}

static int write_stiffness(FILE *out, const Problem *p, const double *force, const double *values) {
  (void)force;
  const Csr *c = p->csr;
  int bad = fprintf(out, "%%%%MatrixMarket matrix coordinate real general\n"
                         "%% tangent stiffness d force / d u, in CSR order (row by row, columns "
                         "ascending); indices from 1\n"
                         "%zu %zu %zu\n", c->nrows, c->nrows, c->nnz) < 0;
  for (size_t r = 0; r < c->nrows && !bad; r++)
    for (int64_t s = c->row_ptr[r]; s < c->row_ptr[r + 1] && !bad; s++)
      bad = fprintf(out, "%zu %d %.17g\n", r + 1, (int)c->col[s] + 1, values[s]) < 0;
  return bad;
}

static int write_file(const char *dir, const char *name, WriteBody body, const Problem *p,
                      const double *force, const double *values) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
    fprintf(stderr, "output folder name too long: %s\n", dir);
    return -1;
  }
  FILE *out = fopen(path, "w");
  if (!out) {
    fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
    return -1;
  }
  static char buffer[1 << 20];
  setvbuf(out, buffer, _IOFBF, sizeof buffer);
  int bad = body(out, p, force, values);
  if (fclose(out) != 0) bad = 1;
  if (bad) fprintf(stderr, "writing %s failed\n", path);
  return bad ? -1 : 0;
}

int output_write(const char *dir, const Problem *p, const double *force, const double *values) {
  static const struct {
    const char *name;
    WriteBody body;
  } files[] = {{"problem.txt", write_problem},     {"nodes.txt", write_nodes},
               {"elements.txt", write_elements},   {"force.mtx", write_force},
               {"stiffness.mtx", write_stiffness}};
  for (size_t k = 0; k < sizeof files / sizeof *files; k++)
    if (write_file(dir, files[k].name, files[k].body, p, force, values) != 0) return -1;
  return 0;
}
