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

static NodeSet all_nodes(const Dag *dag) { return nodeset_range(0, dag->nnodes); }

/* Keeps usable items (non-empty, inside the DAG, finite cost), cheapest per node set (the first
 * of equally cheap ones); a hash of the sets finds equal ones. */
static Columns make_columns(const Dag *dag, const SelectItem *items, int nitems) {
  Columns c = {xmalloc(sizeof(int) * (size_t)(nitems ? nitems : 1)),
               xmalloc(sizeof(NodeSet) * (size_t)(nitems ? nitems : 1)),
               xmalloc(sizeof(double) * (size_t)(nitems ? nitems : 1)), 0};
  size_t nslots = 16;
  while (nslots < 2 * (size_t)nitems) nslots *= 2;
  int *slot = xmalloc(sizeof(int) * nslots); /* column index + 1, 0 = free */
  memset(slot, 0, sizeof(int) * nslots);
  NodeSet valid = all_nodes(dag);
  for (int i = 0; i < nitems; i++) {
    const SelectItem *it = &items[i];
    if (nodeset_is_empty(&it->nodes) || !nodeset_subset(&it->nodes, &valid) || !isfinite(it->cost))
      continue;
    size_t h = (size_t)nodeset_hash(&it->nodes) & (nslots - 1);
    while (slot[h] && !nodeset_equal(&c.nodes[slot[h] - 1], &it->nodes)) h = (h + 1) & (nslots - 1);
    int k = slot[h] - 1;
    if (k < 0) {
      k = c.n++;
      slot[h] = k + 1;
    } else if (c.cost[k] <= it->cost) {
      continue;
    }
    c.item[k] = i;
    c.nodes[k] = it->nodes;
    c.cost[k] = it->cost;
  }
  free(slot);
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
  if (nkernels < 0 || nkernels > KAS_MAX_NODES) return false;
  int *kernel_of = xmalloc(sizeof(int) * (size_t)(dag->nnodes ? dag->nnodes : 1));
  for (int v = 0; v < dag->nnodes; v++) kernel_of[v] = -1;
  for (int k = 0; k < nkernels; k++)
    for (int v = nodeset_next(&kernels[k], 0); v >= 0 && v < dag->nnodes;
         v = nodeset_next(&kernels[k], v + 1))
      kernel_of[v] = k;
  /* nkernels <= the number of nodes <= KAS_MAX_NODES, so a NodeSet holds a set of kernels */
  NodeSet *succ = xcalloc((size_t)(nkernels ? nkernels : 1), sizeof *succ);
  int *indeg = xcalloc((size_t)(nkernels ? nkernels : 1), sizeof *indeg);
  for (int u = 0; u < dag->nnodes; u++)
    for (int v = nodeset_next(&dag->succ[u], 0); v >= 0; v = nodeset_next(&dag->succ[u], v + 1)) {
      int a = kernel_of[u], b = kernel_of[v];
      if (a < 0 || b < 0 || a == b || nodeset_has(&succ[a], b)) continue;
      nodeset_add(&succ[a], b);
      indeg[b]++;
    }
  /* Kahn: repeatedly remove a kernel with no remaining predecessor. */
  int *ready = xmalloc(sizeof(int) * (size_t)(nkernels ? nkernels : 1));
  int nready = 0, removed = 0;
  for (int k = 0; k < nkernels; k++)
    if (!indeg[k]) ready[nready++] = k;
  while (nready > 0) {
    int k = ready[--nready];
    removed++;
    for (int b = nodeset_next(&succ[k], 0); b >= 0; b = nodeset_next(&succ[k], b + 1))
      if (--indeg[b] == 0) ready[nready++] = b;
  }
  free(ready);
  free(kernel_of);
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
      if (nodeset_has(&c->nodes[j], v)) {
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
  NodeSet seen = nodeset_empty();
  for (int k = 0; k < nchosen; k++) {
    if (nodeset_intersects(&seen, &c->nodes[chosen[k]])) return false;
    nodeset_unite(&seen, &c->nodes[chosen[k]]);
  }
  NodeSet all = all_nodes(dag);
  return nodeset_equal(&seen, &all);
}

/* ---- ties ---------------------------------------------------------------------------------- */

/* A solution with what orders it: its cost summed over its kernels in canonical order (sorted
 * node sets), so that the same partition always sums to the same number. */
typedef struct {
  int *items; /* -1-terminated */
  NodeSet *sets; /* sorted */
  int nsets;
  double cost;
} Solution;

static int cmp_sets(const void *a, const void *b) { return nodeset_compare(a, b); }

static Solution make_solution(const SelectItem *items, int *sol) {
  Solution s = {.items = sol};
  while (sol[s.nsets] >= 0) s.nsets++;
  s.sets = xmalloc(sizeof(NodeSet) * (size_t)(s.nsets ? s.nsets : 1));
  for (int k = 0; k < s.nsets; k++) s.sets[k] = items[sol[k]].nodes;
  qsort(s.sets, (size_t)s.nsets, sizeof(NodeSet), cmp_sets);
  /* sum in the sorted order: find each set's cost */
  for (int k = 0; k < s.nsets; k++)
    for (int i = 0; i < s.nsets; i++)
      if (nodeset_equal(&items[sol[i]].nodes, &s.sets[k])) {
        s.cost += items[sol[i]].cost;
        break;
      }
  return s;
}

/* By cost, then by the partition itself (fewer kernels, then the sorted sets): a total order,
 * so that equally cheap partitions come out the same whichever items the solver saw. */
static int cmp_solutions(const void *a, const void *b) {
  const Solution *x = a, *y = b;
  if (x->cost != y->cost) return x->cost < y->cost ? -1 : 1;
  if (x->nsets != y->nsets) return x->nsets - y->nsets;
  for (int k = 0; k < x->nsets; k++) {
    int c = nodeset_compare(&x->sets[k], &y->sets[k]);
    if (c) return c;
  }
  return 0;
}

/* Costs within this relative distance of the N-th are ties the solver may return in any
 * order; those found are all kept until the canonical sort picks among them. */
#define TIE_TOLERANCE 1e-9

int select_top_partitions(const Dag *dag, const SelectItem *items, int nitems, int top,
                          int ***solutions_out) {
  return select_top_partitions_until(dag, items, nitems, top, 0, solutions_out);
}

int select_top_partitions_until(const Dag *dag, const SelectItem *items, int nitems, int top,
                                double deadline, int ***solutions_out) {
  *solutions_out = NULL;
  if (top <= 0 || dag->nnodes == 0) return 0;
  Columns c = make_columns(dag, items, nitems);
  lprec *lp = c.n ? build_program(dag, &c) : NULL;
  int cap = 2 * top; /* the top N and as many ties beyond the N-th */
  Solution *sols = xcalloc((size_t)cap, sizeof *sols);
  int nsols = 0, cyclic = 0;
  double cutoff = INFINITY;
  int *chosen = xmalloc(sizeof(int) * (size_t)(c.n + 1));
  NodeSet *kernels = xmalloc(sizeof(NodeSet) * (size_t)(dag->nnodes + 1));
  while (lp && nsols < cap && cyclic < MAX_CYCLIC_CUTS) {
    if (deadline > 0) {
      double left = deadline - clock_seconds();
      if (left <= 0 && nsols > 0) break;
      set_timeout(lp, left > 1 ? (long)left : 1);
    }
    int rc = solve(lp);
    if (rc != OPTIMAL && rc != SUBOPTIMAL) break; /* INFEASIBLE: no cover left */
    int m = chosen_columns(lp, &c, chosen);
    if (m == 0 || m > dag->nnodes || !exact_cover(dag, &c, chosen, m)) break;
    for (int k = 0; k < m; k++) kernels[k] = c.nodes[chosen[k]];
    if (select_partition_orderable(dag, kernels, m)) {
      Solution s = make_solution(items, solution_items(&c, chosen, m));
      if (nsols >= top && s.cost > cutoff) {
        free(s.items);
        free(s.sets);
        break;
      }
      sols[nsols++] = s;
      if (nsols == top) cutoff = s.cost + TIE_TOLERANCE * (s.cost > 0 ? s.cost : 1);
    } else {
      cyclic++;
    }
    add_cut(lp, chosen, m);
  }
  if (lp) delete_lp(lp);
  free(kernels);
  free(chosen);
  free_columns(&c);
  qsort(sols, (size_t)nsols, sizeof *sols, cmp_solutions);
  int kept = nsols < top ? nsols : top;
  int **out = kept ? xmalloc(sizeof *out * (size_t)kept) : NULL;
  for (int k = 0; k < nsols; k++) {
    if (k < kept) out[k] = sols[k].items;
    else free(sols[k].items);
    free(sols[k].sets);
  }
  free(sols);
  *solutions_out = out;
  return kept;
}
