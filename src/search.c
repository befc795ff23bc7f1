/*
 * search.c — the search driver (docs/design.md §6, seed 004 §3.6): valid fusions (fusion.c) ->
 * implementation combinations per fusion (combine.c) -> best plan per fusion as a selection item
 * -> top-N exact covers (select.c) -> candidates in predicted order; plus the unfused candidate
 * (one kernel per call, its best plan), which KAS used as the fallback and the harness measures.
 *
 * A candidate's predicted time per element is the sum of its kernels' times plus the launch
 * overhead of each kernel amortized over the default problem size, so the selection items carry
 * that amortized overhead too: the cover minimizing Σ item costs is then exactly the candidate
 * with the lowest predicted time.
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>

#define AMORTIZE_ELEMENTS 4194304.0

typedef struct {
  SelectItem *items;
  KernelPlan **best; /* per item */
  int n, cap;
} ItemList;

static void item_push(ItemList *l, NodeSet nodes, double cost, KernelPlan *best) {
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 64;
    l->items = xrealloc(l->items, sizeof *l->items * (size_t)l->cap);
    l->best = xrealloc(l->best, sizeof *l->best * (size_t)l->cap);
  }
  l->items[l->n] = (SelectItem){nodes, cost};
  l->best[l->n++] = best;
}

static void keep_plans(SearchResult *r, KernelPlan **plans, int n) {
  r->plans = xrealloc(r->plans, sizeof *r->plans * (size_t)(r->nplans + n));
  memcpy(r->plans + r->nplans, plans, sizeof *plans * (size_t)n);
  r->nplans += n;
}

static double per_kernel_overhead(const TimingDb *db) {
  return model_launch_overhead_ns(db) / AMORTIZE_ELEMENTS;
}

/* Kernels in an executable order: repeatedly the first kernel whose external predecessors all
 * ran.  select.c returns only orderable partitions; false if this one is not (defensive). */
static bool order_kernels(const Dag *dag, KernelPlan **k, int n) {
  NodeSet done = 0;
  for (int placed = 0; placed < n; placed++) {
    int pick = -1;
    for (int i = placed; i < n && pick < 0; i++) {
      NodeSet needs = 0;
      for (int v = 0; v < dag->nnodes; v++)
        if ((k[i]->nodes >> v) & 1) needs |= dag->pred[v];
      if ((needs & ~k[i]->nodes & ~done) == 0) pick = i;
    }
    if (pick < 0) return false;
    KernelPlan *t = k[placed];
    k[placed] = k[pick];
    k[pick] = t;
    done |= k[placed]->nodes;
  }
  return true;
}

static void finish_candidate(Candidate *c, const TimingDb *db) {
  c->predicted_ns_per_elem = 0;
  for (int i = 0; i < c->nkernels; i++)
    c->predicted_ns_per_elem += c->kernels[i]->predicted_ns_per_elem;
  c->predicted_ns_per_elem += c->nkernels * per_kernel_overhead(db);
}

static int by_predicted(const void *a, const void *b) {
  double x = ((const Candidate *)a)->predicted_ns_per_elem;
  double y = ((const Candidate *)b)->predicted_ns_per_elem;
  return (x > y) - (x < y);
}

/* One candidate per call, in node order (already executable). */
static Candidate *make_unfused(const Dag *dag, KernelPlan **single, const TimingDb *db) {
  Candidate *c = xcalloc(1, sizeof *c);
  c->kernels = xmalloc(sizeof *c->kernels * (size_t)dag->nnodes);
  c->nkernels = dag->nnodes;
  memcpy(c->kernels, single, sizeof *single * (size_t)dag->nnodes);
  finish_candidate(c, db);
  return c;
}

SearchContext *search_context_new(const Dag *dag, const TimingDb *db, const Target *target) {
  SearchContext *ctx = xmalloc(sizeof *ctx);
  if (!target) target = target_default();
  *ctx = (SearchContext){dag, db, target, access_cache_new(target->w), model_memo_new()};
  return ctx;
}

void search_context_free(SearchContext *ctx) {
  if (!ctx) return;
  access_cache_free(ctx->access);
  model_memo_free(ctx->model);
  free(ctx);
}

/* Combines every fusion; fills items and single[node] (best single-call plan). */
static void combine_all(SearchContext *ctx, const SearchOptions *opt, const FusionSet *fs,
                        SearchResult *r, ItemList *items, KernelPlan **single) {
  const TimingDb *db = ctx->db;
  for (int f = 0; f < fs->n; f++) {
    if (opt->progress) progress("combining implementations", f, fs->n);
    int n;
    KernelPlan **plans = combine_fusion(ctx, fs->sets[f], false, &n);
    if (n == 0) continue;
    keep_plans(r, plans, n);
    item_push(items, fs->sets[f], plans[0]->predicted_ns_per_elem + per_kernel_overhead(db),
              plans[0]);
    if (__builtin_popcountll(fs->sets[f]) == 1) single[__builtin_ctzll(fs->sets[f])] = plans[0];
    free(plans);
  }
  if (opt->progress) progress_done();
}

/* Every call must have a plan of its own, or no cover exists: say which call. */
static bool every_call_has_a_plan(const Dag *dag, KernelPlan **single) {
  bool ok = true;
  for (int v = 0; v < dag->nnodes; v++)
    if (!single[v]) {
      const Statement *st = &dag->spec->stmts[v];
      diag_error(st->loc, "no implementation of %s fits the device (threads, shared memory)",
                 dag->nodes[v].fn->name);
      ok = false;
    }
  return ok;
}

static void build_candidates(const Dag *dag, const TimingDb *db, const ItemList *items,
                             int **sols, int nsols, SearchResult *r) {
  r->cands = xcalloc((size_t)(nsols ? nsols : 1), sizeof *r->cands);
  for (int s = 0; s < nsols; s++) {
    Candidate c = {0};
    for (int k = 0; sols[s][k] >= 0; k++) c.nkernels++;
    c.kernels = xmalloc(sizeof *c.kernels * (size_t)(c.nkernels ? c.nkernels : 1));
    for (int k = 0; k < c.nkernels; k++) c.kernels[k] = items->best[sols[s][k]];
    if (!order_kernels(dag, c.kernels, c.nkernels)) {
      free(c.kernels);
      continue;
    }
    finish_candidate(&c, db);
    r->cands[r->ncands++] = c;
  }
  qsort(r->cands, (size_t)r->ncands, sizeof *r->cands, by_predicted);
  for (int k = 0; k < r->ncands; k++) r->cands[k].rank = k + 1;
}

SearchResult *search_run(const Dag *dag, const TimingDb *db, const SearchOptions *opt) {
  SearchContext *ctx = search_context_new(dag, db, opt->target);
  SearchResult *r = xcalloc(1, sizeof *r);
  FusionSet fs = fusion_enumerate(dag, opt->max_fusion > 0 ? opt->max_fusion : 1);
  ItemList items = {0};
  KernelPlan **single = xcalloc((size_t)(dag->nnodes ? dag->nnodes : 1), sizeof *single);
  combine_all(ctx, opt, &fs, r, &items, single);
  bool ok = every_call_has_a_plan(dag, single);
  if (ok) {
    int **sols = NULL;
    int nsols = select_top_partitions(dag, items.items, items.n, opt->top, &sols);
    build_candidates(dag, db, &items, sols, nsols, r);
    for (int s = 0; s < nsols; s++) free(sols[s]);
    free(sols);
    r->unfused = make_unfused(dag, single, db);
  }
  free(single);
  free(items.items);
  free(items.best);
  fusion_set_free(&fs);
  search_context_free(ctx);
  if (!ok) {
    search_result_free(r);
    return NULL;
  }
  return r;
}

void search_result_free(SearchResult *r) {
  if (!r) return;
  for (int c = 0; c < r->ncands; c++) free(r->cands[c].kernels);
  free(r->cands);
  if (r->unfused) free(r->unfused->kernels);
  free(r->unfused);
  for (int p = 0; p < r->nplans; p++) kernel_plan_free(r->plans[p]);
  free(r->plans);
  free(r);
}
