/*
 * csr.c — builds the CSR pattern of the hyperelastic example's stiffness matrix from the mesh,
 * once, on the host (csr.h).  First the node graph: for every node, the sorted set of nodes that
 * share an element with it (itself included); each neighbour b of node a then gives the three
 * columns 3b, 3b+1, 3b+2 in each of the rows 3a, 3a+1, 3a+2, which are therefore equally long.
 */
#include "csr.h"

#include <stdio.h>
#include <stdlib.h>

/* Node graph: the neighbours of node a are adj[start[a] .. start[a] + degree[a]), ascending. */
typedef struct {
  size_t *start;
  int32_t *degree;
  int32_t *adj;
} NodeGraph;

static int compare_int32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Sorts one node's list (with repeats) in place and keeps each neighbour once. */
static int32_t sort_unique(int32_t *list, size_t count) {
  qsort(list, count, sizeof *list, compare_int32);
  int32_t kept = 0;
  for (size_t k = 0; k < count; k++)
    if (kept == 0 || list[kept - 1] != list[k]) list[kept++] = list[k];
  return kept;
}

/* Every element adds its 4 nodes to the list of each of its 4 nodes; repeats are then removed
 * (the lists keep their room: start[] is the offset of the list with repeats). */
static int node_graph_build(NodeGraph *g, const Mesh *m) {
  g->start = calloc(m->nnodes + 1, sizeof *g->start);
  g->degree = calloc(m->nnodes, sizeof *g->degree);
  g->adj = malloc(16 * m->nelems * sizeof *g->adj);
  if (!g->start || !g->degree || !g->adj) return -1;
  for (size_t e = 0; e < 4 * m->nelems; e++) g->start[m->tets[e] + 1] += 4;
  for (size_t a = 0; a < m->nnodes; a++) g->start[a + 1] += g->start[a];
  for (size_t e = 0; e < m->nelems; e++)
    for (int n = 0; n < 4; n++) {
      int32_t a = m->tets[4 * e + n];
      for (int k = 0; k < 4; k++) g->adj[g->start[a] + (size_t)g->degree[a]++] = m->tets[4 * e + k];
    }
  for (size_t a = 0; a < m->nnodes; a++)
    g->degree[a] = sort_unique(g->adj + g->start[a], g->degree[a]);
  return 0;
}

static void node_graph_free(NodeGraph *g) {
  free(g->start);
  free(g->degree);
  free(g->adj);
}

static void fill_rows(Csr *csr, const NodeGraph *g, size_t nnodes) {
  csr->row_ptr[0] = 0;
  for (size_t a = 0; a < nnodes; a++)
    for (int i = 0; i < 3; i++)
      csr->row_ptr[3 * a + i + 1] = csr->row_ptr[3 * a + i] + 3 * g->degree[a];
  for (size_t a = 0; a < nnodes; a++)
    for (int i = 0; i < 3; i++) {
      int32_t *col = csr->col + csr->row_ptr[3 * a + i];
      for (int32_t b = 0; b < g->degree[a]; b++)
        for (int k = 0; k < 3; k++) col[3 * b + k] = 3 * g->adj[g->start[a] + b] + k;
    }
}

/* Position of node b in node a's sorted neighbour list (it is there: they share an element). */
static int32_t neighbour_position(const NodeGraph *g, int32_t a, int32_t b) {
  const int32_t *list = g->adj + g->start[a];
  int32_t lo = 0, hi = g->degree[a] - 1;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (list[mid] < b) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void fill_block_slots(Csr *csr, const NodeGraph *g, const Mesh *m) {
  for (size_t e = 0; e < m->nelems; e++)
    for (int n = 0; n < 4; n++)
      for (int k = 0; k < 4; k++) {
        int32_t a = m->tets[4 * e + n], b = m->tets[4 * e + k];
        int64_t first_of_row = csr->row_ptr[3 * (size_t)a];
        csr->block_slot[16 * e + 4 * n + k] = first_of_row + 3 * neighbour_position(g, a, b);
      }
}

int csr_build(Csr *csr, const Mesh *m) {
  *csr = (Csr){0};
  NodeGraph g = {0};
  if (node_graph_build(&g, m) != 0) goto out_of_memory;
  csr->nrows = 3 * m->nnodes;
  for (size_t a = 0; a < m->nnodes; a++) csr->nnz += 9 * (size_t)g.degree[a];
  csr->row_ptr = malloc((csr->nrows + 1) * sizeof *csr->row_ptr);
  csr->col = malloc(csr->nnz * sizeof *csr->col);
  csr->block_slot = malloc(16 * m->nelems * sizeof *csr->block_slot);
  if (!csr->row_ptr || !csr->col || !csr->block_slot) goto out_of_memory;
  fill_rows(csr, &g, m->nnodes);
  fill_block_slots(csr, &g, m);
  node_graph_free(&g);
  return 0;
out_of_memory:
  fprintf(stderr, "out of memory for the stiffness pattern of %zu elements\n", m->nelems);
  node_graph_free(&g);
  csr_free(csr);
  return -1;
}

void csr_free(Csr *csr) {
  free(csr->row_ptr);
  free(csr->col);
  free(csr->block_slot);
  *csr = (Csr){0};
}
