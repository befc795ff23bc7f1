/*
 * mesh.h — the test problem of the hyperelastic example: the structured tetrahedral mesh of the
 * unit cube (each hexahedron split into 6 tetrahedra) and its smooth displacement field, exactly
 * as docs/stvk.md §5 defines them (tests/fem_reference/problem.py is the Python twin, and a test
 * compares the two node by node and element by element).
 */
#ifndef HYPERELASTIC_MESH_H
#define HYPERELASTIC_MESH_H

#include <stddef.h>
#include <stdint.h>

/* Node indices and CSR columns (3 per node) are int32: n is limited so that 3 (n+1)^3 fits
 * (memory runs out long before). */
#define MESH_MAX_HEXES_PER_EDGE 800

typedef struct {
  int n;          /* hexahedra per edge */
  size_t nnodes;  /* (n+1)^3 */
  size_t nelems;  /* 6 n^3 */
  double *x;      /* reference coordinates, 3 per node */
  int32_t *tets;  /* node indices, 4 per element, positive orientation */
} Mesh;

/* Builds the mesh of n hexahedra per edge; returns 0, or -1 (message printed) when n is out of
 * range or memory runs out. */
int mesh_build(Mesh *m, int n);
void mesh_free(Mesh *m);

/* The displacement field u(X) of docs/stvk.md §5 at one point. */
void displacement_field(const double X[3], double u[3]);

/* u at every node: 3 doubles per node, node-major (the global degree of freedom 3*node + i). */
void mesh_displacements(const Mesh *m, double *u);

#endif
