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
/* Up to this many partitions lp_solve finds them, one solve and one cut each; beyond, the cuts
 * make every solve slower (a thousand took a minute on chain12), and a best-first enumeration
 * of the covers finds them in cost order instead. */
#define SELECT_ILP_TOP 50

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

/* The solutions found so far: the top N and the ties beyond the N-th (cost within the
 * tolerance of it), at most 2N. */
typedef struct {
  const SelectItem *items;
  int top;
  Solution *v;
  int n;
  double cutoff; /* INFINITY until N solutions are in */
} Found;

/* Adds a solution (an item list, -1-terminated, taken over); false when it costs more than the
 * N-th plus the tolerance (a search in cost order can stop then) or the list is full. */
static bool found_add(Found *f, int *sol) {
  Solution s = make_solution(f->items, sol);
  if (f->n >= 2 * f->top || (f->n >= f->top && s.cost > f->cutoff)) {
    free(s.items);
    free(s.sets);
    return false;
  }
  f->v[f->n++] = s;
  if (f->n == f->top) f->cutoff = s.cost + TIE_TOLERANCE * (s.cost > 0 ? s.cost : 1);
  return true;
}

static bool found_full(const Found *f) { return f->n >= 2 * f->top; }

/* The top N in canonical order, as the callers' item lists. */
static int found_finish(Found *f, int ***solutions_out) {
  qsort(f->v, (size_t)f->n, sizeof *f->v, cmp_solutions);
  int kept = f->n < f->top ? f->n : f->top;
  int **out = kept ? xmalloc(sizeof *out * (size_t)kept) : NULL;
  for (int k = 0; k < f->n; k++) {
    if (k < kept) out[k] = f->v[k].items;
    else free(f->v[k].items);
    free(f->v[k].sets);
  }
  free(f->v);
  *solutions_out = out;
  return kept;
}

/* lp_solve: the optimum, then a cut excluding it, again. */
static void solve_with_cuts(const Dag *dag, const Columns *c, double deadline, Found *f) {
  lprec *lp = c->n ? build_program(dag, c) : NULL;
  int *chosen = xmalloc(sizeof(int) * (size_t)(c->n + 1));
  NodeSet *kernels = xmalloc(sizeof(NodeSet) * (size_t)(dag->nnodes + 1));
  int cyclic = 0;
  while (lp && !found_full(f) && cyclic < MAX_CYCLIC_CUTS) {
    if (deadline > 0) {
      double left = deadline - clock_seconds();
      if (left <= 0 && f->n > 0) break;
      set_timeout(lp, left > 1 ? (long)left : 1);
    }
    int rc = solve(lp);
    if (rc != OPTIMAL && rc != SUBOPTIMAL) break; /* INFEASIBLE: no cover left */
    int m = chosen_columns(lp, c, chosen);
    if (m == 0 || m > dag->nnodes || !exact_cover(dag, c, chosen, m)) break;
    for (int k = 0; k < m; k++) kernels[k] = c->nodes[chosen[k]];
    if (select_partition_orderable(dag, kernels, m)) {
      if (!found_add(f, solution_items(c, chosen, m))) break;
    } else {
      cyclic++;
    }
    add_cut(lp, chosen, m);
  }
  if (lp) delete_lp(lp);
  free(kernels);
  free(chosen);
}

/* ---- many solutions: best-first enumeration of the covers ---------------------------------- */

/* A cover is built by always covering the lowest uncovered node, so only columns whose lowest
 * node it is can extend a partial cover, and every cover has exactly one path: the partial
 * covers form a tree, searched best first with an admissible remainder (each uncovered node at
 * the least cost per node of a column holding it).  Covers leave the queue in cost order. */
typedef struct PartialCover {
  int column;
  const struct PartialCover *parent;
} PartialCover;

typedef struct {
  double key; /* key and order first: a QueueKey */
  long order;
  double g;
  NodeSet covered;
  const PartialCover *cover;
} CoverEntry;

/* Partial covers live until the enumeration ends. */
typedef struct {
  PartialCover **blocks;
  int nblocks, used;
} CoverPool;

enum { COVER_BLOCK = 4096 };

static const PartialCover *cover_add(CoverPool *pool, const PartialCover *parent, int column) {
  if (pool->nblocks == 0 || pool->used == COVER_BLOCK) {
    pool->blocks = xrealloc(pool->blocks, sizeof *pool->blocks * (size_t)(pool->nblocks + 1));
    pool->blocks[pool->nblocks++] = xmalloc(sizeof(PartialCover) * COVER_BLOCK);
    pool->used = 0;
  }
  PartialCover *p = &pool->blocks[pool->nblocks - 1][pool->used++];
  *p = (PartialCover){column, parent};
  return p;
}

/* Entries past which the enumeration gives up (with what it found). */
enum { MAX_COVER_POPS = 20000000 };

static void enumerate_covers(const Dag *dag, const Columns *c, double deadline, Found *f) {
  int n = dag->nnodes;
  int **by_low = xcalloc((size_t)n, sizeof *by_low), *nlow = xcalloc((size_t)n, sizeof *nlow);
  double *share = xmalloc(sizeof(double) * (size_t)n); /* least cost per node of a column */
  for (int v = 0; v < n; v++) share[v] = INFINITY;
  for (int j = 0; j < c->n; j++) {
    int low = nodeset_next(&c->nodes[j], 0), size = nodeset_count(&c->nodes[j]);
    by_low[low] = xrealloc(by_low[low], sizeof(int) * (size_t)(nlow[low] + 1));
    by_low[low][nlow[low]++] = j;
    for (int v = low; v >= 0; v = nodeset_next(&c->nodes[j], v + 1))
      if (c->cost[j] / size < share[v]) share[v] = c->cost[j] / size;
  }
  double rest_all = 0;
  for (int v = 0; v < n; v++) rest_all += share[v];
  NodeSet all = nodeset_range(0, n);
  BestFirstQueue q = {.size = sizeof(CoverEntry)};
  CoverPool pool = {0};
  int *chosen = xmalloc(sizeof(int) * (size_t)(n + 1));
  NodeSet *kernels = xmalloc(sizeof(NodeSet) * (size_t)(n + 1));
  if (isfinite(rest_all)) {
    CoverEntry first = {.key = rest_all, .covered = nodeset_empty()};
    queue_push(&q, &first);
  }
  for (long pops = 0; q.n > 0 && !found_full(f) && pops < MAX_COVER_POPS; pops++) {
    if (deadline > 0 && (pops & 1023) == 0 && clock_seconds() > deadline && f->n > 0) break;
    CoverEntry e;
    queue_pop(&q, &e);
    if (f->n >= f->top && e.key > f->cutoff) break;
    NodeSet open = nodeset_minus(all, e.covered);
    int low = nodeset_next(&open, 0);
    if (low < 0) { /* a complete cover */
      int m = 0;
      for (const PartialCover *p = e.cover; p; p = p->parent) chosen[m++] = p->column;
      for (int k = 0; k < m; k++) kernels[k] = c->nodes[chosen[k]];
      if (select_partition_orderable(dag, kernels, m) && !found_add(f, solution_items(c, chosen, m)))
        break;
      continue;
    }
    for (int k = 0; k < nlow[low]; k++) {
      int j = by_low[low][k];
      if (nodeset_intersects(&c->nodes[j], &e.covered)) continue;
      CoverEntry next = {.g = e.g + c->cost[j], .covered = nodeset_union(e.covered, c->nodes[j])};
      double rest = 0; /* the remainder: each node still open at its least share */
      NodeSet left = nodeset_minus(all, next.covered);
      for (int v = nodeset_next(&left, 0); v >= 0; v = nodeset_next(&left, v + 1)) rest += share[v];
      next.key = next.g + rest;
      next.cover = cover_add(&pool, e.cover, j);
      queue_push(&q, &next);
    }
  }
  for (int b = 0; b < pool.nblocks; b++) free(pool.blocks[b]);
  free(pool.blocks);
  queue_free(&q);
  for (int v = 0; v < n; v++) free(by_low[v]);
  free(by_low);
  free(nlow);
  free(share);
  free(chosen);
  free(kernels);
}

int select_top_partitions(const Dag *dag, const SelectItem *items, int nitems, int top,
                          int ***solutions_out) {
  return select_top_partitions_until(dag, items, nitems, top, 0, solutions_out);
}

int select_top_partitions_until(const Dag *dag, const SelectItem *items, int nitems, int top,
                                double deadline, int ***solutions_out) {
  *solutions_out = NULL;
  if (top <= 0 || dag->nnodes == 0) return 0;
  Columns c = make_columns(dag, items, nitems);
  Found f = {.items = items, .top = top, .v = xcalloc((size_t)2 * top, sizeof(Solution)),
             .cutoff = INFINITY};
  if (top <= SELECT_ILP_TOP) solve_with_cuts(dag, &c, deadline, &f);
  else enumerate_covers(dag, &c, deadline, &f);
  free_columns(&c);
  return found_finish(&f, solutions_out);
}
