/*
 * search.c — the search driver (docs/search.md; docs/design.md §6, seed 004 §3.6): which
 * partitions of the calls into fused kernels to predict, and the top N of them as candidates in
 * predicted order, plus the unfused candidate (one kernel per call, its best plan), which KAS used
 * as the fallback and the harness measures.
 *
 * A partition's predicted time is the sum of its kernels' plans plus each kernel's launch
 * overhead shared among the elements the search predicts for (SearchOptions.n, --n); every
 * fusion's cost below carries that share, so the cheapest cover is exactly the candidate with
 * the lowest predicted time.
 *
 *  - exact (the default while the convex fusions of at most --max-fusion calls number at most
 *    the exact limit): the interval search (intervals.c) gives N partitions and so an upper
 *    bound U of the N-th best; a fusion F can be in a partition costing at most U only if its
 *    compulsory-traffic bound plus the rest's (bounds.c) is at most U, so only those fusions are
 *    combined, and lp_solve selects among them (select.c).  The result is the exhaustive top N.
 *  - exhaustive (--exhaustive): every convex fusion combined, lp_solve selects.
 *  - intervals (too many convex fusions): the top N partitions into intervals of node order.
 *
 * Plans come from the plan memo (plan_memo.c): isomorphic fusions are combined once, and only
 * the candidates' kernels are built as plans.  The time budget (SearchOptions.time_limit) stops
 * the long loops; what was combined by then is ranked.  SearchStats says what limited the
 * search.
 */
#include "kasgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double per_kernel_overhead(const SearchContext *ctx) {
  return model_launch_share_ns(ctx->db, ctx->n);
}

SearchContext *search_context_new(const Dag *dag, const TimingDb *db, const Target *target) {
  SearchContext *ctx = xmalloc(sizeof *ctx);
  if (!target) target = target_default();
  *ctx = (SearchContext){.dag = dag, .db = db, .target = target,
                         .access = access_cache_new(target->w),
                         .model = model_memo_new(), .plans = plan_memo_new(),
                         .orders = linearize_cache_new(),
                         .beam_width = SEARCH_BEAM_WIDTH, .n = DEFAULT_ELEMENTS};
  return ctx;
}

void search_context_free(SearchContext *ctx) {
  if (!ctx) return;
  access_cache_free(ctx->access);
  model_memo_free(ctx->model);
  plan_memo_free(ctx->plans);
  linearize_cache_free(ctx->orders);
  free(ctx);
}

SearchContext *search_context_own(const SearchContext *ctx, const Candidate *c) {
  if (!c->dag) return NULL;
  SearchContext *own = search_context_new(c->dag, ctx->db, ctx->target);
  own->n = ctx->n;
  model_memo_quiet(own->model);
  return own;
}

bool search_candidate_terms(SearchContext *ctx, const Candidate *c, ModelTerms *terms,
                            double *launch) {
  SearchContext *own = search_context_own(ctx, c);
  bool launches = true;
  *launch = c->nkernels * per_kernel_overhead(ctx);
  for (int k = 0; k < c->nkernels && launches; k++)
    launches = model_kernel_terms(own ? own : ctx, c->kernels[k], &terms[k]);
  search_context_free(own);
  return launches;
}

/* ---- partitions -------------------------------------------------------------------------- */

/* A partition found by a search phase: its kernels' node sets. */
typedef struct {
  NodeSet *kernels;
  int nkernels;
} Partition;

typedef struct {
  Partition *v;
  int n, cap;
} Partitions;

static void partitions_push(Partitions *ps, NodeSet *kernels, int nkernels) {
  if (ps->n == ps->cap) {
    ps->cap = ps->cap ? 2 * ps->cap : 16;
    ps->v = xrealloc(ps->v, sizeof *ps->v * (size_t)ps->cap);
  }
  ps->v[ps->n++] = (Partition){kernels, nkernels};
}

static void partitions_free(Partitions *ps) {
  for (int k = 0; k < ps->n; k++) free(ps->v[k].kernels);
  free(ps->v);
  *ps = (Partitions){0};
}

static void push_intervals(Partitions *ps, const IntervalPartition *ip) {
  NodeSet *k = xmalloc(sizeof *k * (size_t)ip->nkernels);
  for (int i = 0; i < ip->nkernels; i++) k[i] = nodeset_range(ip->starts[i], ip->starts[i + 1]);
  partitions_push(ps, k, ip->nkernels);
}

/* ---- fusion costs -------------------------------------------------------------------------- */

/* A fusion's cost as a selection item: its best plan plus one launch; INFINITY without plan. */
static double fusion_cost(SearchContext *ctx, NodeSet nodes) {
  return plan_memo_cost(ctx, nodes) + per_kernel_overhead(ctx);
}

/* Every call alone, first: the unfused cover needs them, and a call no implementation of which
 * fits the device is an error, said at its statement. */
static bool singles_plan(SearchContext *ctx) {
  const Dag *dag = ctx->dag;
  bool ok = true;
  for (int v = 0; v < dag->nnodes; v++)
    if (!isfinite(fusion_cost(ctx, nodeset_of(v)))) {
      diag_error(dag->spec->stmts[dag->nodes[v].stmt].loc,
                 "no implementation of %s fits the device (threads, shared memory)",
                 dag->nodes[v].fn->name);
      ok = false;
    }
  return ok;
}

typedef struct {
  SelectItem *v;
  int n, cap;
} Items;

static void items_push(Items *it, NodeSet nodes, double cost) {
  if (it->n == it->cap) {
    it->cap = it->cap ? 2 * it->cap : 256;
    it->v = xrealloc(it->v, sizeof *it->v * (size_t)it->cap);
  }
  it->v[it->n++] = (SelectItem){nodes, cost};
}

/* lp_solve's top N among the items, as partitions. */
static void select_items(SearchContext *ctx, const Items *items, int top, Partitions *out) {
  int **sols = NULL;
  int n = select_top_partitions_until(ctx->dag, items->v, items->n, top, ctx->deadline, &sols);
  for (int s = 0; s < n; s++) {
    int m = 0;
    while (sols[s][m] >= 0) m++;
    NodeSet *k = xmalloc(sizeof *k * (size_t)(m ? m : 1));
    for (int i = 0; i < m; i++) k[i] = items->v[sols[s][i]].nodes;
    partitions_push(out, k, m);
    free(sols[s]);
  }
  free(sols);
}

/* ---- the estimating interval search, in passes of growing kernels ---------------------------- */

/* The passes' longest kernels are --max-fusion (or the spec's calls) divided by 4, 16, ..., down
 * to this (docs/search.md, "Long specs"): a spec of fewer than 4 times this many calls has one. */
enum { SHORTEST_PASS_CALLS = 64 };

/* By cost, then by kernels and starts: one order for equal costs. */
static int by_cost_then_starts(const void *a, const void *b) {
  const IntervalPartition *x = a, *y = b;
  if (x->cost != y->cost) return x->cost < y->cost ? -1 : 1;
  if (x->nkernels != y->nkernels) return x->nkernels - y->nkernels;
  for (int k = 0; k < x->nkernels; k++)
    if (x->starts[k] != y->starts[k]) return x->starts[k] - y->starts[k];
  return 0;
}

/* The best `top` distinct partitions of *a (na of them) and b (nb), into *a; b is consumed. */
static int merge_intervals(IntervalPartition **a, int na, IntervalPartition *b, int nb, int top) {
  int n = na + nb, kept = 0;
  IntervalPartition *all = xmalloc(sizeof *all * (size_t)(n ? n : 1));
  if (na) memcpy(all, *a, sizeof *all * (size_t)na);
  if (nb) memcpy(all + na, b, sizeof *all * (size_t)nb);
  free(*a);
  free(b);
  qsort(all, (size_t)n, sizeof *all, by_cost_then_starts);
  for (int k = 0; k < n; k++) {
    if (kept == top || (kept && !by_cost_then_starts(&all[kept - 1], &all[k])))
      free(all[k].starts);
    else
      all[kept++] = all[k];
  }
  *a = all;
  return kept;
}

/* The estimating interval search (intervals.c) with kernels of at most max_len calls, in
 * passes of kernels of at most max_len / 4^k calls, k descending to 0 (docs/search.md, "Long
 * specs").  A segment's combine costs time growing with the square of its calls (each beam
 * level plans all the calls before it), and the estimates try the longest, cheapest-looking
 * segment first: a chain of 1024 `madd33(B, A)` spent 17 s of CPU (45 s on a loaded machine)
 * on its one-kernel segment before anything else, so a --time-limit of 20 s cut it with nothing
 * found but the single calls, 27 times slower than one kernel.  The passes find kernels of 64
 * and 256 calls first, each pass's segments in a sixteenth of the next one's time; when the
 * budget cuts a pass, the best of what every pass found is the result.  Uncut, the last pass's
 * result is the result, as it was with that pass alone (the earlier passes only fill the
 * memo), so a search that is not cut ranks as before. */
static int estimated_intervals(SearchContext *ctx, const SearchOptions *opt, int max_len,
                               IntervalPartition **out) {
  double overhead = per_kernel_overhead(ctx);
  int found = 0;
  *out = NULL;
  int shift = 0;
  while ((max_len >> (shift + 2)) >= SHORTEST_PASS_CALLS) shift += 2;
  for (;; shift -= 2) {
    bool last = shift == 0;
    IntervalPartition *ip = NULL;
    int nip = intervals_top(ctx, max_len >> shift, opt->top, overhead, true, opt->progress, &ip,
                            NULL);
    if (last && !ctx->expired) {
      intervals_free(*out, found);
      *out = ip;
      return nip;
    }
    found = merge_intervals(out, found, ip, nip, opt->top);
    if (last || ctx->expired) return found;
  }
}

/* ---- the three searches ---------------------------------------------------------------------- */

/* Every fusion combined until the time budget is spent; the singles come first in fs (by size)
 * and are planned already (singles_plan), so they are items even when the budget is spent before
 * the loop reaches them: there is always a candidate. */
static void exhaustive_search(SearchContext *ctx, const SearchOptions *opt, const FusionSet *fs,
                              SearchStats *st, Partitions *out) {
  Items items = {0};
  for (int f = 0; f < fs->n; f++) {
    if (opt->progress) progress("combining implementations", f, fs->n);
    NodeSet set = fusion_set_get(fs, f);
    if (f >= ctx->dag->nnodes && search_expired(ctx)) {
      st->unplanned = fs->n - f;
      break;
    }
    double cost = fusion_cost(ctx, set);
    if (isfinite(cost)) items_push(&items, set, cost);
  }
  if (opt->progress) progress_done();
  select_items(ctx, &items, opt->top, out);
  free(items.v);
}

/* A fusion's bound with the rest's (treated as one kernel), launches included. */
typedef struct {
  int index;
  double bound;
} Bounded;

static int by_bound(const void *a, const void *b) {
  const Bounded *x = a, *y = b;
  if (x->bound != y->bound) return x->bound < y->bound ? -1 : 1;
  return x->index - y->index;
}

/* The fusions whose bound lets them into a partition costing at most u, by ascending bound. */
static Bounded *bounded_fusions(SearchContext *ctx, const FusionSet *fs, double u, int *n_out) {
  double overhead = per_kernel_overhead(ctx);
  NodeSet all = nodeset_range(0, ctx->dag->nnodes);
  Bounded *b = xmalloc(sizeof *b * (size_t)(fs->n ? fs->n : 1));
  int n = 0;
  for (int f = 0; f < fs->n; f++) {
    NodeSet set = fusion_set_get(fs, f), rest = nodeset_minus(all, set);
    double bound = bound_kernel_ns(ctx, &set) + overhead;
    if (!nodeset_is_empty(&rest)) bound += bound_kernel_ns(ctx, &rest) + overhead;
    if (bound <= u) b[n++] = (Bounded){f, bound};
  }
  qsort(b, (size_t)n, sizeof *b, by_bound);
  *n_out = n;
  return b;
}

/* The N-th partition of ip, a hair more (sums in another order), bounds the N-th best partition
 * from above; with fewer than N there is no bound. */
static double nth_cost_bound(const IntervalPartition *ip, int nip, int top) {
  return nip >= top ? ip[top - 1].cost * (1 + 1e-9) : INFINITY;
}

/* Exact: returns false, after filling parts with the interval partitions, when more fusions
 * than the exact search may combine could be in the top N (the caller says intervals).
 * The estimating interval search runs first: it combines few segments, and its N-th partition
 * is an upper bound as good as any.  Where even under it too many fusions could be in the top
 * N, the exact interval search is not run: on a chain of 128 `madd33(B, A)` the bounds (72
 * compulsory bytes, against a cost growing with the calls) prune no segment, and it combined
 * 239 segments of up to 128 calls (13 s of CPU) only for the exact mode to be given up after. */
static bool exact_search(SearchContext *ctx, const SearchOptions *opt, const FusionSet *fs,
                         SearchStats *st, Partitions *out) {
  IntervalPartition *ip = NULL;
  long evaluated = 0;
  double overhead = per_kernel_overhead(ctx);
  int nip = estimated_intervals(ctx, opt, st->max_fusion, &ip), n;
  Bounded *b = bounded_fusions(ctx, fs, nth_cost_bound(ip, nip, opt->top), &n);
  if (n <= st->combine_limit) { /* the exact interval search's bound is tighter: fewer combines */
    intervals_free(ip, nip);
    free(b);
    nip = intervals_top(ctx, st->max_fusion, opt->top, overhead, false, opt->progress, &ip,
                        &evaluated);
    b = bounded_fusions(ctx, fs, nth_cost_bound(ip, nip, opt->top), &n);
  }
  st->candidates = n;
  if (n > st->combine_limit) {
    for (int k = 0; k < nip; k++) push_intervals(out, &ip[k]);
    intervals_free(ip, nip);
    free(b);
    return false;
  }
  intervals_free(ip, nip);
  st->skipped = fs->n - n;
  Items items = {0};
  for (int k = 0; k < n; k++) {
    if (opt->progress) progress("combining implementations", k, n);
    if (search_expired(ctx)) {
      st->unplanned = n - k;
      break;
    }
    NodeSet set = fusion_set_get(fs, b[k].index);
    double cost = fusion_cost(ctx, set);
    if (isfinite(cost)) items_push(&items, set, cost);
  }
  if (opt->progress) progress_done();
  for (int v = 0; v < ctx->dag->nnodes; v++) /* the singles, bounded out or not */
    items_push(&items, nodeset_of(v), fusion_cost(ctx, nodeset_of(v)));
  select_items(ctx, &items, opt->top, out);
  free(items.v);
  free(b);
  return true;
}

static void interval_search(SearchContext *ctx, const SearchOptions *opt, SearchStats *st,
                            Partitions *out) {
  IntervalPartition *ip = NULL;
  int nip = estimated_intervals(ctx, opt, st->max_fusion, &ip);
  for (int k = 0; k < nip; k++) push_intervals(out, &ip[k]);
  intervals_free(ip, nip);
}

/* ---- candidates ------------------------------------------------------------------------------ */

/* The plans built for the candidates, one per distinct kernel (candidates share kernels). */
typedef struct {
  NodeSet *nodes;
  KernelPlan **plan;
  int n, cap;
} PlanCache;

static KernelPlan *plan_for(SearchContext *ctx, PlanCache *pc, NodeSet nodes) {
  for (int k = 0; k < pc->n; k++)
    if (nodeset_equal(&pc->nodes[k], &nodes)) return pc->plan[k];
  KernelPlan *p = plan_memo_build(ctx, nodes);
  if (!p) return NULL;
  model_keep_loops(ctx, p); /* a final plan: whether it keeps its loops */
  if (pc->n == pc->cap) {
    pc->cap = pc->cap ? 2 * pc->cap : 32;
    pc->nodes = xrealloc(pc->nodes, sizeof *pc->nodes * (size_t)pc->cap);
    pc->plan = xrealloc(pc->plan, sizeof *pc->plan * (size_t)pc->cap);
  }
  pc->nodes[pc->n] = nodes;
  pc->plan[pc->n++] = p;
  return p;
}

/* Kernels in an executable order: repeatedly the first kernel whose external predecessors all
 * ran.  Partitions are orderable by construction; false if this one is not (defensive). */
static bool order_kernels(const Dag *dag, KernelPlan **k, int n) {
  NodeSet done = nodeset_empty();
  for (int placed = 0; placed < n; placed++) {
    int pick = -1;
    for (int i = placed; i < n && pick < 0; i++) {
      NodeSet needs = nodeset_empty();
      for (int v = nodeset_next(&k[i]->nodes, 0); v >= 0; v = nodeset_next(&k[i]->nodes, v + 1))
        nodeset_unite(&needs, &dag->pred[v]);
      needs = nodeset_minus(nodeset_minus(needs, k[i]->nodes), done);
      if (nodeset_is_empty(&needs)) pick = i;
    }
    if (pick < 0) return false;
    KernelPlan *t = k[placed];
    k[placed] = k[pick];
    k[pick] = t;
    nodeset_unite(&done, &k[placed]->nodes);
  }
  return true;
}

/* share: one launch's, per element (per_kernel_overhead). */
static void finish_candidate(Candidate *c, double share) {
  c->predicted_ns_per_elem = 0;
  for (int i = 0; i < c->nkernels; i++)
    c->predicted_ns_per_elem += c->kernels[i]->predicted_ns_per_elem;
  c->predicted_ns_per_elem += c->nkernels * share;
}

/* By predicted time, then canonically (fewer kernels, then the kernels' node sets in the order
 * of their lowest calls, which is their execution order's): deterministic among equals. */
int candidate_compare(const void *a, const void *b) {
  const Candidate *x = a, *y = b;
  double p = x->predicted_ns_per_elem, q = y->predicted_ns_per_elem;
  if (p != q) return p < q ? -1 : 1;
  if (x->dag != y->dag) /* the spec's DAG first, then the groups of one loop, then of two */
    return !x->dag ? -1 : !y->dag ? 1 : x->dag->groups2 - y->dag->groups2;
  if (x->nkernels != y->nkernels) return x->nkernels - y->nkernels;
  for (int k = 0; k < x->nkernels; k++) {
    int c = nodeset_compare(&x->kernels[k]->nodes, &y->kernels[k]->nodes);
    if (c) return c;
  }
  if (x->shape_of != y->shape_of) return x->shape_of - y->shape_of; /* the #1 before its shapes */
  for (int k = 0; k < x->nkernels; k++) {
    const KernelPlan *p = x->kernels[k], *q = y->kernels[k];
    if (p->e != q->e) return p->e - q->e;
    if (p->threads != q->threads) return p->threads - q->threads;
  }
  return 0;
}

/* Fusions as fusion.c lists them: by size, then lexicographically by their calls. */
static int by_enumeration_order(const void *a, const void *b) {
  const NodeSet *x = a, *y = b;
  int nx = nodeset_count(x), ny = nodeset_count(y);
  if (nx != ny) return nx - ny;
  for (int i = nodeset_next(x, 0), j = nodeset_next(y, 0); i >= 0;
       i = nodeset_next(x, i + 1), j = nodeset_next(y, j + 1))
    if (i != j) return i - j;
  return 0;
}

/* A candidate from a partition: its kernels' plans, in an executable order that depends on the
 * partition only (kernels in enumeration order, then the first executable each time). */
static bool make_candidate(SearchContext *ctx, PlanCache *pc, const Partition *part,
                           Candidate *c) {
  qsort(part->kernels, (size_t)part->nkernels, sizeof *part->kernels, by_enumeration_order);
  *c = (Candidate){.kernels = xmalloc(sizeof *c->kernels * (size_t)part->nkernels),
                   .nkernels = part->nkernels};
  bool ok = true;
  for (int k = 0; k < part->nkernels && ok; k++)
    ok = (c->kernels[k] = plan_for(ctx, pc, part->kernels[k])) != NULL;
  ok = ok && order_kernels(ctx->dag, c->kernels, c->nkernels);
  if (!ok) {
    free(c->kernels);
    return false;
  }
  finish_candidate(c, per_kernel_overhead(ctx));
  return true;
}

static void build_candidates(SearchContext *ctx, PlanCache *pc, const Partitions *parts,
                             SearchResult *r) {
  r->cands = xcalloc((size_t)(parts->n ? parts->n : 1), sizeof *r->cands);
  for (int s = 0; s < parts->n; s++)
    if (make_candidate(ctx, pc, &parts->v[s], &r->cands[r->ncands])) r->ncands++;
  qsort(r->cands, (size_t)r->ncands, sizeof *r->cands, candidate_compare);
  for (int k = 0; k < r->ncands; k++) r->cands[k].rank = k + 1;
}

/* One candidate per call, in node order (already executable). */
static Candidate *make_unfused(SearchContext *ctx, PlanCache *pc) {
  int n = ctx->dag->nnodes;
  Candidate *c = xcalloc(1, sizeof *c);
  c->kernels = xmalloc(sizeof *c->kernels * (size_t)n);
  c->nkernels = n;
  for (int v = 0; v < n; v++) c->kernels[v] = plan_for(ctx, pc, nodeset_of(v));
  finish_candidate(c, per_kernel_overhead(ctx));
  return c;
}

/* Kernels of the ranked candidates whose beam dropped children (the width limited them). */
static int beam_limited_kernels(SearchContext *ctx, const PlanCache *pc) {
  int n = 0;
  for (int k = 0; k < pc->n; k++) {
    const PlanRecipe *r = plan_memo_recipe(ctx, pc->nodes[k]);
    n += r && r->pruned;
  }
  return n;
}

/* ---- the driver ------------------------------------------------------------------------------ */

static SearchStats initial_stats(const SearchContext *ctx, const SearchOptions *opt) {
  int n = ctx->dag->nnodes;
  SearchStats st = {.max_fusion = opt->max_fusion > 0 && opt->max_fusion < n ? opt->max_fusion : n,
                    .exact_limit = opt->exact_limit > 0 ? opt->exact_limit : SEARCH_EXACT_LIMIT,
                    .combine_limit = SEARCH_COMBINE_LIMIT,
                    .time_limit = opt->time_limit, .beam_width = ctx->beam_width};
  st.capped = st.max_fusion < n;
  NodeSet all = nodeset_range(0, n);
  st.bound_bytes = bound_bytes(ctx->dag, &all, target_real_bytes(ctx->target->precision));
  st.bound_ns = bound_kernel_ns(ctx, &all) + per_kernel_overhead(ctx);
  st.bound_plain_ns = st.bound_bytes / ctx->db->dev.copy_gbs + per_kernel_overhead(ctx);
  return st;
}

/* --exhaustive past KAS_MAX_FUSIONS: the one error, at the spec (no search follows, so neither
 * an empty ranking nor the device is blamed after it). */
static void too_many_to_combine(const SearchContext *ctx, const SearchStats *st) {
  diag_error((SrcLoc){.file = ctx->dag->spec->path},
             "--exhaustive: more than %d convex fusions of at most %d calls, too many to "
             "combine; use a smaller --max-fusion, or leave out --exhaustive", KAS_MAX_FUSIONS,
             st->max_fusion);
}

/* Chooses the search, runs it, and fills parts; false after an error. */
static bool run_search(SearchContext *ctx, const SearchOptions *opt, SearchStats *st,
                       Partitions *parts) {
  if (opt->exhaustive) {
    st->mode = SEARCH_EXHAUSTIVE;
    FusionSet fs = fusion_enumerate_until(ctx->dag, st->max_fusion, KAS_MAX_FUSIONS,
                                          ctx->deadline);
    st->fusions = fs.n;
    if (fs.timed_out) { /* the budget is spent: the singles, which are planned, are the items */
      st->count_cut = ctx->expired = true;
      fusion_set_free(&fs);
      fs = fusion_enumerate_limited(ctx->dag, 1, KAS_MAX_FUSIONS);
    }
    bool ok = !fs.truncated;
    if (ok) exhaustive_search(ctx, opt, &fs, st, parts);
    else too_many_to_combine(ctx, st);
    fusion_set_free(&fs);
    return ok;
  }
  FusionSet fs = fusion_enumerate_limited(ctx->dag, st->max_fusion, st->exact_limit);
  st->fusions = fs.n;
  st->too_many = fs.truncated;
  if (!fs.truncated) {
    st->mode = SEARCH_EXACT;
    if (!exact_search(ctx, opt, &fs, st, parts)) st->mode = SEARCH_INTERVALS;
  } else {
    st->mode = SEARCH_INTERVALS;
    interval_search(ctx, opt, st, parts);
    /* for the note that offers --exhaustive: whether it would take this spec or refuse it */
    st->exhaustive_fusions = fusion_count_until(ctx->dag, st->max_fusion, KAS_MAX_FUSIONS,
                                                ctx->deadline);
  }
  fusion_set_free(&fs);
  return true;
}

const Dag *candidate_dag(const Dag *spec_dag, const Candidate *c) {
  return c->dag ? c->dag : spec_dag;
}

char *candidate_group_loops(const Dag *d) {
  const Spec *sp = d->spec;
  int inner = d->groups2 > 1 ? d->groups2 : 1, outer = d->groups / inner;
  char *s = xasprintf("%s = %d..%d", sp->loops[d->group_loop].var, d->group_first,
                      d->group_first + outer - 1);
  if (inner == 1) return s;
  char *t = xasprintf("%s, %s = %d..%d", s, sp->loops[d->group_loop2].var, d->group_first2,
                      d->group_first2 + inner - 1);
  free(s);
  return t;
}

void sb_kernel_calls(StrBuf *sb, const Dag *dag, const KernelPlan *p) {
  sb_putc(sb, '{');
  for (int c = 0; c < p->ncalls; c++)
    sb_printf(sb, "%s%s#%d", c ? " " : "", p->impl[c]->fn->name, dag->nodes[p->order[c]].stmt);
  sb_putc(sb, '}');
}

char *candidate_calls(const Dag *spec_dag, const Candidate *c) {
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, "");
  for (int k = 0; k < c->nkernels; k++) {
    if (k) sb_putc(&sb, ' ');
    sb_kernel_calls(&sb, candidate_dag(spec_dag, c), c->kernels[k]);
  }
  if (c->dag) { /* one group's calls, run by every group (threads.c) */
    char *loops = candidate_group_loops(c->dag);
    sb_printf(&sb, " in %d groups (%s)", c->dag->groups, loops);
    free(loops);
  }
  return sb_take(&sb);
}

char *candidate_shapes(const Candidate *c) {
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, "");
  for (int k = 0; k < c->nkernels; k++) /* threads.c: a block holds all its groups */
    sb_printf(&sb, "%s{E=%d threads=%d}", k ? " " : "", c->kernels[k]->e,
              threads_in_block(c->dag, c->kernels[k]));
  return sb_take(&sb);
}

char *candidate_kernels(const Candidate *c) {
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, "");
  for (int k = 0; k < c->nkernels; k++) {
    const KernelPlan *p = c->kernels[k];
    if (k) sb_puts(&sb, " | ");
    for (int i = 0; i < p->ncalls; i++) sb_printf(&sb, "%s%s", i ? "+" : "", p->impl[i]->name);
  }
  if (c->dag) { /* one group's calls, run by every group (threads.c) */
    char *loops = candidate_group_loops(c->dag);
    sb_printf(&sb, " (%s in %d groups)", loops, c->dag->groups);
    free(loops);
  }
  return sb_take(&sb);
}

/* A context for dag planned as opt asks (its beam width and loops; no deadline). */
static SearchContext *options_context(const Dag *dag, const TimingDb *db,
                                      const SearchOptions *opt) {
  SearchContext *ctx = search_context_new(dag, db, opt->target);
  if (opt->n > 0) ctx->n = opt->n;
  if (opt->beam_width > 0) ctx->beam_width = opt->beam_width;
  ctx->loops = opt->loops;
  ctx->progress = opt->progress;
  return ctx;
}

/* The best plan of all of d's calls in one kernel (a kernel of groups: its intermediates would
 * need a workspace per group across kernels), or NULL where none can launch or the search's
 * deadline came first (*cut is then set). */
static KernelPlan *whole_kernel(const Dag *d, const TimingDb *db, const SearchOptions *opt,
                                double deadline, bool *cut) {
  SearchContext *ctx = options_context(d, db, opt);
  ctx->deadline = deadline;
  KernelPlan *p = plan_memo_build(ctx, nodeset_range(0, d->nnodes));
  *cut |= ctx->expired;
  search_context_free(ctx);
  if (p && isfinite(p->predicted_ns_per_elem)) return p;
  kernel_plan_free(p);
  return NULL;
}

/* The search proper, on dag alone, until deadline (clock_seconds(); 0: none). */
static SearchResult *search_dag(const Dag *dag, const TimingDb *db, const SearchOptions *opt,
                                double deadline) {
  double start = clock_seconds();
  SearchContext *ctx = options_context(dag, db, opt);
  ctx->deadline = deadline;
  SearchResult *r = xcalloc(1, sizeof *r);
  r->loops = opt->loops;
  r->n = ctx->n;
  r->stats = initial_stats(ctx, opt);
  bool ok = singles_plan(ctx);
  Partitions parts = {0};
  PlanCache pc = {0};
  ok = ok && run_search(ctx, opt, &r->stats, &parts);
  if (ok) {
    build_candidates(ctx, &pc, &parts, r);
    r->unfused = make_unfused(ctx, &pc);
    r->stats.beam_kernels = beam_limited_kernels(ctx, &pc);
    r->stats.timed_out = ctx->expired;
    plan_memo_stats(ctx, &r->stats.combined, &r->stats.memo_hits);
  }
  partitions_free(&parts);
  r->plans = pc.plan;
  r->nplans = pc.n;
  free(pc.nodes);
  search_context_free(ctx);
  r->stats.seconds = clock_seconds() - start;
  if (!ok) {
    search_result_free(r);
    return NULL;
  }
  return r;
}

/* Whether every value of group DAG d has a name of its own in generated code: a value that
 * moves with the groups is named after its reference ("f_N_0" for f[N]), which a plain variable
 * f_N would share.  If not, the loop's groups are not offered, and a note says why. */
static bool group_names_unique(const Dag *d, const ThreadLoop *t) {
  int a, b;
  char *id = dag_duplicate_ident(d, &a, &b);
  if (!id) return true;
  const SpecLoop *l = &d->spec->loops[t->loop];
  diag_note(l->loc, "loop %s's iterations are not run in groups of threads: %s and %s would both "
            "be named %s in their kernel; rename one", l->var, dag_value_label(d, a),
            dag_value_label(d, b), id);
  free(id);
  return false;
}

/* --loops groups ranks only kernels of groups; where there is none it ranks the others as
 * --loops model would, and says so and why (the first reason that applies: --max-fusion, the
 * layout, each loop's, no plan of a loop that qualifies; names refused were said already). */
static void note_no_groups(const Dag *dag, const SearchOptions *opt, const Target *target,
                           int nt, bool no_plan) {
  SrcLoc spec = {.file = dag->spec->path};
  diag_note(spec, "--loops groups: no kernel runs a loop's iterations in groups of threads; "
            "the ranking holds the other candidates");
  if (opt->max_fusion > 0 && opt->max_fusion < dag->nnodes)
    diag_note(spec, "a kernel of groups holds every call (%d), more than --max-fusion %d",
              dag->nnodes, opt->max_fusion);
  else if (target_has_component(target))
    diag_note(spec, "kernels of groups are not made for component-major arrays (--layout)");
  else if (!nt)
    threads_note_none(dag);
  else if (no_plan)
    diag_note(spec, "no plan of one group's calls fits a block (threads, shared memory)");
}

/* The one-kernel candidates of the ways the spec's loops run in groups of threads (threads.c),
 * each planned as one kernel on the DAG of one group's calls and ranked with r's own: the
 * model's choice (docs/loops.md, "Iterations over threads"), or under --loops groups in their
 * place where there are any.  Not under --loops keep or unroll (which ask for the loops' other
 * forms), a --max-fusion below the whole spec, or component-major arrays (not built yet).  They
 * are planned within the search's deadline: a beam that it cut offers none (stats.groups_cut). */
static void add_group_candidates(const Dag *dag, const TimingDb *db, const SearchOptions *opt,
                                 double deadline, SearchResult *r) {
  ThreadLoop t[2];
  const Target *target = opt->target ? opt->target : target_default();
  if ((opt->loops != LOOPS_MODEL && opt->loops != LOOPS_GROUPS) ||
      (opt->max_fusion > 0 && opt->max_fusion < dag->nnodes) || target_has_component(target)) {
    if (opt->loops == LOOPS_GROUPS) note_no_groups(dag, opt, target, 0, false);
    return;
  }
  int nt = threads_loops(dag, t), found = 0;
  bool no_plan = false;
  Candidate groups[2];
  for (int i = 0; i < nt; i++) {
    Dag *d = threads_dag(dag, &t[i]);
    if (!group_names_unique(d, &t[i])) {
      dag_free(d);
      continue;
    }
    KernelPlan *p = whole_kernel(d, db, opt, deadline, &r->stats.groups_cut);
    if (!p) {
      dag_free(d);
      no_plan |= !r->stats.groups_cut;
      continue;
    }
    r->group_dags[i] = d;
    groups[found] = (Candidate){.kernels = xmalloc(sizeof *groups[found].kernels),
                                .nkernels = 1, .dag = d};
    groups[found].kernels[0] = p;
    finish_candidate(&groups[found++], model_launch_share_ns(db, opt->n));
    r->plans = xrealloc(r->plans, sizeof *r->plans * (size_t)(r->nplans + 1));
    r->plans[r->nplans++] = p;
  }
  if (!found && opt->loops == LOOPS_GROUPS) note_no_groups(dag, opt, target, nt, no_plan);
  if (found && opt->loops == LOOPS_GROUPS) { /* only the groups' candidates */
    for (int c = 0; c < r->ncands; c++) free(r->cands[c].kernels);
    r->ncands = 0;
  }
  r->cands = xrealloc(r->cands, sizeof *r->cands * (size_t)(r->ncands + found + 1));
  for (int i = 0; i < found; i++) r->cands[r->ncands++] = groups[i];
  qsort(r->cands, (size_t)r->ncands, sizeof *r->cands, candidate_compare);
  for (; r->ncands > opt->top && opt->top > 0; r->ncands--) free(r->cands[r->ncands - 1].kernels);
  for (int k = 0; k < r->ncands; k++) r->cands[k].rank = k + 1;
}

const Candidate *candidate_shape_base(const SearchResult *r, const Candidate *v) {
  for (int c = 0; c < r->ncands; c++) {
    const Candidate *x = &r->cands[c];
    bool same = !x->shape_of && x->dag == v->dag && x->nkernels == v->nkernels;
    for (int k = 0; k < x->nkernels && same; k++)
      same = nodeset_equal(&x->kernels[k]->nodes, &v->kernels[k]->nodes);
    if (same) return x;
  }
  return NULL;
}

/* The kernel of c predicted slowest: the one whose block shape matters most. */
static int costliest_kernel(const Candidate *c) {
  int k = 0;
  for (int i = 1; i < c->nkernels; i++)
    if (c->kernels[i]->predicted_ns_per_elem > c->kernels[k]->predicted_ns_per_elem) k = i;
  return k;
}

/* --variants K: up to K of the top N are the predicted #1 with its costliest kernel in another
 * block shape (E and threads per block), the best plan of each shape (combine_shapes), in place
 * of the partitions ranked last.  On an H200 another shape than the model's ran in up to 44% less
 * time where the partitions' order was right (docs/search.md, "Other block shapes"): a GPU run
 * measures them, and `kasgen tune` ships the fastest. */
static void add_shape_variants(const Dag *dag, const TimingDb *db, const SearchOptions *opt,
                               double deadline, SearchResult *r) {
  int want = opt->top > 1 && opt->variants < opt->top ? opt->variants : opt->top - 1;
  r->stats.variants_asked = opt->variants;
  if (want <= 0 || r->ncands == 0) return;
  const Candidate best = r->cands[0];
  int k = costliest_kernel(&best), nshapes;
  const KernelPlan *own = best.kernels[k];
  SearchContext *ctx = options_context(candidate_dag(dag, &best), db, opt);
  /* the search's budget: the shapes are a second beam over the #1's kernel, as long as its first
   * (a chain of 1001 calls: 50 s past a 60 s limit); a beam the budget cut holds no shape */
  ctx->deadline = deadline;
  /* a budget spent before: none, even of a kernel of one call (whose beam is never cut) */
  KernelPlan **shapes = search_expired(ctx) ? NULL : combine_shapes(ctx, own->nodes, &nshapes);
  if (!shapes) nshapes = 0;
  r->stats.variants_cut = ctx->expired;
  Candidate *v = xcalloc((size_t)want, sizeof *v);
  int nv = 0;
  for (int s = 0; s < nshapes; s++) {
    KernelPlan *p = shapes[s];
    if (nv == want || (p->e == own->e && p->threads == own->threads)) {
      kernel_plan_free(p);
      continue;
    }
    model_keep_loops(ctx, p); /* a final plan, as plan_for's */
    v[nv] = best;
    v[nv].kernels = xmalloc(sizeof *v[nv].kernels * (size_t)best.nkernels);
    memcpy(v[nv].kernels, best.kernels, sizeof *v[nv].kernels * (size_t)best.nkernels);
    v[nv].kernels[k] = p;
    v[nv].shape_of = k + 1;
    finish_candidate(&v[nv++], per_kernel_overhead(ctx));
    r->plans = xrealloc(r->plans, sizeof *r->plans * (size_t)(r->nplans + 1));
    r->plans[r->nplans++] = p;
  }
  free(shapes);
  search_context_free(ctx);
  for (; r->ncands + nv > opt->top && r->ncands > 1; r->ncands--) {
    free(r->cands[r->ncands - 1].kernels);
    r->stats.partitions_out++;
  }
  r->cands = xrealloc(r->cands, sizeof *r->cands * (size_t)(r->ncands + nv));
  memcpy(r->cands + r->ncands, v, sizeof *v * (size_t)nv);
  r->ncands += nv;
  r->stats.variants = nv;
  free(v);
  qsort(r->cands, (size_t)r->ncands, sizeof *r->cands, candidate_compare);
  for (int c = 0; c < r->ncands; c++) r->cands[c].rank = c + 1;
}

/* One deadline for every part: the search, the kernels of groups, the variants. */
SearchResult *search_run(const Dag *dag, const TimingDb *db, const SearchOptions *opt) {
  double start = clock_seconds(), deadline = opt->time_limit > 0 ? start + opt->time_limit : 0;
  SearchResult *r = search_dag(dag, db, opt, deadline);
  if (r) {
    add_group_candidates(dag, db, opt, deadline, r);
    add_shape_variants(dag, db, opt, deadline, r);
    r->stats.seconds = clock_seconds() - start;
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
  dag_free(r->group_dags[0]);
  dag_free(r->group_dags[1]);
  free(r);
}
