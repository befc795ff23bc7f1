/*
 * select.c — choosing kernels: the top-N partitions of the DAG's calls into fused kernels with
 * minimal total predicted time (docs/design.md §6 step 9, seed 004 §3.6.5).
 *
 * A 0/1 program solved with lp_solve: one binary x_i per item (a fusion with its best plan), each
 * node covered exactly once (Σ_{i ∋ v} x_i = 1), minimize Σ cost_i x_i.  After each solution S the
 * cut Σ_{i∈S} x_i ≤ |S| − 1 excludes it, so the next solve gives the next best.  Two convex
 * fusions may still depend on each other both ways (a→b and c→d with kernels {a,d} and {b,c}):
 * such a partition has a cyclic quotient graph and cannot be launched in any order, so it is cut
 * and not returned.
 *
 * Items with the same node set are reduced to the cheapest: a partition is a set of node sets,
 * and returning the same partition twice with a worse implementation would waste a candidate.
 */
#include "kasgen.h"

#include <lp_lib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Upper bound on solves spent on cyclic partitions before giving up on finding more. */
#define MAX_CYCLIC_CUTS 10000

/* The distinct node sets that can take part in a cover, each with its cheapest item. */
typedef struct {
  int *item;   /* index into the caller's items */
  NodeSet *nodes;
  double *cost;
  int n;
} Columns;

static NodeSet all_nodes(const Dag *dag) {
  return dag->nnodes >= 64 ? ~(NodeSet)0 : (((NodeSet)1 << dag->nnodes) - 1);
}

/* Keeps usable items (non-empty, inside the DAG, finite cost), cheapest per node set. */
static Columns make_columns(const Dag *dag, const SelectItem *items, int nitems) {
  Columns c = {xmalloc(sizeof(int) * (size_t)nitems), xmalloc(sizeof(NodeSet) * (size_t)nitems),
               xmalloc(sizeof(double) * (size_t)nitems), 0};
  NodeSet valid = all_nodes(dag);
  for (int i = 0; i < nitems; i++) {
    const SelectItem *it = &items[i];
    if (!it->nodes || (it->nodes & ~valid) || !isfinite(it->cost)) continue;
    int k = 0;
    while (k < c.n && c.nodes[k] != it->nodes) k++;
    if (k == c.n) {
      c.n++;
    } else if (c.cost[k] <= it->cost) {
      continue;
    }
    c.item[k] = i;
    c.nodes[k] = it->nodes;
    c.cost[k] = it->cost;
  }
  return c;
}

static void free_columns(Columns *c) {
  free(c->item);
  free(c->nodes);
  free(c->cost);
}

/* ---- the quotient graph ----------------------------------------------------------------- */

/* True when the kernels (node sets) of a partition can be ordered: the graph with one vertex per
 * kernel and an edge a→b for every DAG edge from a node of a to a node of b (a ≠ b) is acyclic. */
bool select_partition_orderable(const Dag *dag, const NodeSet *kernels, int nkernels) {
  int kernel_of[KAS_MAX_NODES];
  for (int v = 0; v < dag->nnodes; v++) kernel_of[v] = -1;
  for (int k = 0; k < nkernels; k++)
    for (int v = 0; v < dag->nnodes; v++)
      if (kernels[k] >> v & 1) kernel_of[v] = k;
  uint64_t *succ = xcalloc((size_t)nkernels, sizeof *succ); /* nkernels <= 64 */
  int *indeg = xcalloc((size_t)nkernels, sizeof *indeg);
  for (int u = 0; u < dag->nnodes; u++)
    for (int v = 0; v < dag->nnodes; v++) {
      if (!(dag->succ[u] >> v & 1)) continue;
      int a = kernel_of[u], b = kernel_of[v];
      if (a < 0 || b < 0 || a == b || (succ[a] >> b & 1)) continue;
      succ[a] |= (uint64_t)1 << b;
      indeg[b]++;
    }
  /* Kahn: repeatedly remove a kernel with no remaining predecessor. */
  int removed = 0;
  bool progress = true;
  uint64_t done = 0;
  while (progress) {
    progress = false;
    for (int k = 0; k < nkernels; k++) {
      if ((done >> k & 1) || indeg[k]) continue;
      done |= (uint64_t)1 << k;
      removed++;
      progress = true;
      for (int b = 0; b < nkernels; b++)
        if (succ[k] >> b & 1) indeg[b]--;
    }
  }
  free(succ);
  free(indeg);
  return removed == nkernels;
}

/* ---- the 0/1 program -------------------------------------------------------------------- */

/* Builds min Σ cost x, Σ_{i∋v} x_i = 1 for every node v.  Columns are 1-based in lp_solve. */
static lprec *build_program(const Dag *dag, const Columns *c) {
  lprec *lp = make_lp(0, c->n);
  if (!lp) return NULL;
  set_verbose(lp, NEUTRAL);
  set_add_rowmode(lp, TRUE);
  REAL *row = xmalloc(sizeof(REAL) * (size_t)(c->n + 1));
  int *col = xmalloc(sizeof(int) * (size_t)(c->n + 1));
  for (int j = 0; j < c->n; j++) row[j + 1] = c->cost[j];
  set_obj_fn(lp, row);
  for (int v = 0; v < dag->nnodes; v++) {
    int m = 0;
    for (int j = 0; j < c->n; j++)
      if (c->nodes[j] >> v & 1) {
        col[m] = j + 1;
        row[m++] = 1.0;
      }
    add_constraintex(lp, m, row, col, EQ, 1.0);
  }
  set_add_rowmode(lp, FALSE);
  for (int j = 0; j < c->n; j++) set_binary(lp, j + 1, TRUE);
  set_minim(lp);
  /* Exact optimality: each solve must return the true next-best partition. */
  set_mip_gap(lp, TRUE, 0);
  set_mip_gap(lp, FALSE, 0);
  free(row);
  free(col);
  return lp;
}

/* Adds Σ_{j∈S} x_j ≤ |S| − 1. */
static void add_cut(lprec *lp, const int *chosen, int nchosen) {
  REAL *row = xmalloc(sizeof(REAL) * (size_t)(nchosen + 1));
  int *col = xmalloc(sizeof(int) * (size_t)(nchosen + 1));
  for (int k = 0; k < nchosen; k++) {
    row[k] = 1.0;
    col[k] = chosen[k] + 1;
  }
  add_constraintex(lp, nchosen, row, col, LE, nchosen - 1);
  free(row);
  free(col);
}

/* Reads the chosen columns of the last solution; returns how many. */
static int chosen_columns(lprec *lp, const Columns *c, int *chosen) {
  REAL *x = xmalloc(sizeof(REAL) * (size_t)c->n);
  get_variables(lp, x);
  int m = 0;
  for (int j = 0; j < c->n; j++)
    if (x[j] > 0.5) chosen[m++] = j;
  free(x);
  return m;
}

/* The solution as the caller's item indices, -1-terminated. */
static int *solution_items(const Columns *c, const int *chosen, int nchosen) {
  int *out = xmalloc(sizeof(int) * (size_t)(nchosen + 1));
  for (int k = 0; k < nchosen; k++) out[k] = c->item[chosen[k]];
  out[nchosen] = -1;
  return out;
}

/* Checks the solver's answer: an exact cover of every node (guards against solver tolerance). */
static bool exact_cover(const Dag *dag, const Columns *c, const int *chosen, int nchosen) {
  NodeSet seen = 0;
  for (int k = 0; k < nchosen; k++) {
    if (seen & c->nodes[chosen[k]]) return false;
    seen |= c->nodes[chosen[k]];
  }
  return seen == all_nodes(dag);
}

int select_top_partitions(const Dag *dag, const SelectItem *items, int nitems, int top,
                          int ***solutions_out) {
  *solutions_out = NULL;
  if (top <= 0 || dag->nnodes == 0) return 0;
  Columns c = make_columns(dag, items, nitems);
  lprec *lp = c.n ? build_program(dag, &c) : NULL;
  int **sols = xcalloc((size_t)top, sizeof *sols);
  int nsols = 0, cyclic = 0;
  int *chosen = xmalloc(sizeof(int) * (size_t)(c.n + 1));
  NodeSet kernels[KAS_MAX_NODES];
  while (lp && nsols < top && cyclic < MAX_CYCLIC_CUTS) {
    int rc = solve(lp);
    if (rc != OPTIMAL && rc != SUBOPTIMAL) break; /* INFEASIBLE: no cover left */
    int m = chosen_columns(lp, &c, chosen);
    if (m == 0 || m > KAS_MAX_NODES || !exact_cover(dag, &c, chosen, m)) break;
    for (int k = 0; k < m; k++) kernels[k] = c.nodes[chosen[k]];
    if (select_partition_orderable(dag, kernels, m))
      sols[nsols++] = solution_items(&c, chosen, m);
    else
      cyclic++;
    add_cut(lp, chosen, m);
  }
  if (lp) delete_lp(lp);
  free(chosen);
  free_columns(&c);
  if (nsols == 0) {
    free(sols);
    return 0;
  }
  *solutions_out = sols;
  return nsols;
}
