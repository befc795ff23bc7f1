/*
 * csr.h — the sparsity pattern of the global stiffness matrix of the hyperelastic example, built
 * once on the host: compressed sparse rows (CSR) over the degrees of freedom 3*node + i, column
 * indices sorted in each row, and for every element the slot of each of its 16 node-pair blocks,
 * so that the assembly adds K[N][M][i][k] without searching (element_io.h: stiffness_slot).
 */
#ifndef HYPERELASTIC_CSR_H
#define HYPERELASTIC_CSR_H

#include <stddef.h>
#include <stdint.h>

#include "mesh.h"

typedef struct {
  size_t nrows;        /* 3 * nnodes (square matrix) */
  size_t nnz;
  int64_t *row_ptr;    /* nrows + 1 entries; row r is [row_ptr[r], row_ptr[r+1]) */
  int32_t *col;        /* nnz column indices, ascending within a row */
  int64_t *block_slot; /* 16 per element: the slot of (row 3 node_N, column 3 node_M), 4N + M */
} Csr;

/* Builds the pattern of the mesh (two nodes are coupled when an element holds both); returns 0
 * or -1 (message printed) when memory runs out. */
int csr_build(Csr *csr, const Mesh *m);
void csr_free(Csr *csr);

#endif
