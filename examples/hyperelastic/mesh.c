/*
 * mesh.c — builds the structured tetrahedral mesh of the unit cube and evaluates the
 * displacement field of the hyperelastic example (docs/stvk.md §5 is the definition; keep the two
 * in step, tests/fem_reference/ checks this file's output against the Python twin).
 */
#include "mesh.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The 6 axis orders (p, q, r) of the Kuhn split, in element order, and whether each is odd. */
static const int kuhn_axes[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                    {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
static const int kuhn_odd[6] = {0, 1, 1, 0, 0, 1};

static size_t node_index(int n, int i, int j, int k) {
  return (size_t)i + (size_t)(n + 1) * ((size_t)j + (size_t)(n + 1) * (size_t)k);
}

static void place_nodes(Mesh *m) {
  int n = m->n;
  for (int k = 0; k <= n; k++)
    for (int j = 0; j <= n; j++)
      for (int i = 0; i <= n; i++) {
        double *x = m->x + 3 * node_index(n, i, j, k);
        x[0] = (double)i / n, x[1] = (double)j / n, x[2] = (double)k / n;
      }
}

/* The 4 nodes of tetrahedron t of the hexahedron whose corner c(0,0,0) is node (i, j, k). */
static void kuhn_tet(int n, const int corner[3], int t, int32_t out[4]) {
  int c[3] = {corner[0], corner[1], corner[2]};
  out[0] = (int32_t)node_index(n, c[0], c[1], c[2]);
  c[kuhn_axes[t][0]]++;
  out[1] = (int32_t)node_index(n, c[0], c[1], c[2]);
  c[kuhn_axes[t][1]]++;
  out[2] = (int32_t)node_index(n, c[0], c[1], c[2]);
  out[3] = (int32_t)node_index(n, corner[0] + 1, corner[1] + 1, corner[2] + 1);
  if (kuhn_odd[t]) { /* an odd axis order would give negative volume */
    int32_t swap = out[1];
    out[1] = out[2], out[2] = swap;
  }
}

static void split_hexahedra(Mesh *m) {
  int n = m->n;
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        size_t hex = (size_t)i + (size_t)n * ((size_t)j + (size_t)n * (size_t)k);
        const int corner[3] = {i, j, k};
        for (int t = 0; t < 6; t++) kuhn_tet(n, corner, t, m->tets + 4 * (6 * hex + (size_t)t));
      }
}

int mesh_build(Mesh *m, int n) {
  *m = (Mesh){0};
  if (n < 1 || n > MESH_MAX_HEXES_PER_EDGE) {
    fprintf(stderr, "hexahedra per edge must be 1..%d, not %d\n", MESH_MAX_HEXES_PER_EDGE, n);
    return -1;
  }
  m->n = n;
  m->nnodes = (size_t)(n + 1) * (n + 1) * (n + 1);
  m->nelems = 6 * (size_t)n * n * n;
  m->x = malloc(3 * m->nnodes * sizeof *m->x);
  m->tets = malloc(4 * m->nelems * sizeof *m->tets);
  if (!m->x || !m->tets) {
    fprintf(stderr, "out of memory for a mesh of %zu elements\n", m->nelems);
    mesh_free(m);
    return -1;
  }
  place_nodes(m);
  split_hexahedra(m);
  return 0;
}

void mesh_free(Mesh *m) {
  free(m->x);
  free(m->tets);
  *m = (Mesh){0};
}

void displacement_field(const double X[3], double u[3]) {
  const double pi = 3.14159265358979323846;
  double theta = 0.3 * X[2], xc = X[0] - 0.5, yc = X[1] - 0.5;
  u[0] = xc * cos(theta) - yc * sin(theta) - xc + 0.05 * sin(pi * X[2]);
  u[1] = xc * sin(theta) + yc * cos(theta) - yc;
  u[2] = 0.04 * sin(pi * X[0]) * sin(pi * X[1]) + 0.02 * X[2] * X[2];
}

void mesh_displacements(const Mesh *m, double *u) {
  for (size_t a = 0; a < m->nnodes; a++) displacement_field(m->x + 3 * a, u + 3 * a);
}
