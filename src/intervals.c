/*
 * intervals.c — the best partitions of a spec's calls into intervals of node order (statement
 * order, which is topological), each interval one kernel (docs/search.md, "Three modes").
 *
 * An interval [i, j) of a topological order is always a valid fusion (a path between two of its
 * calls only visits calls between them) and any sequence of intervals runs in order, so these
 * partitions are paths from position 0 to n over segments.  Their number is 2^(n-1), and a
 * segment's exact cost is a combine (plan_memo.c), so the search evaluates as few segments as
 * it can, with the compulsory-traffic bound lb(i, j) of each (bounds.c) to skip the others:
 *
 *  1. best[i], the cheapest cost of the calls i..n-1 as intervals, from i = n - 1 down to 0:
 *     the segments [i, j) are tried in ascending lb(i, j) + best[j], and the first whose bound
 *     reaches the best total found so far ends the scan (no later one can beat it).  Exact.
 *  2. The top N paths from 0 by best-first search with best[] as the remaining cost (an exact
 *     heuristic): a queue of partial paths, each either waiting for its last segment's cost (its
 *     key is then the bound) or complete up to a position; complete paths leave the queue in
 *     order of cost.  Only segments that can still lie on a top-N path are evaluated.
 *
 * lb is computed incrementally for all segments from each start (O(n^2) argument visits).
 * Ties in the queue go to the earlier pushed entry, so the result is deterministic.
 */
#include "kasgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  SearchContext *ctx;
  int n, max_len;
  double overhead;
  double *lb;   /* lb[i * max_len + (j - i - 1)]: segment [i, j)'s bound with its launch */
  double *cost; /* its exact cost with its launch; NAN until evaluated, INFINITY without plan */
  long evaluated;
  bool estimate;    /* order and stop by estimated costs (heuristic) instead of bounds */
  double *minratio; /* per length: the least cost / bound seen (INFINITY: none yet) */
  double *envelope; /* per length: the ratio estimates use (update_envelope) */
  bool envelope_moved; /* since the completions were last estimated: every guess may change */
  int *known_end;    /* per start i: the largest j whose [i, j) has a cost stored (i: none) */
} Segments;

static size_t seg_index(const Segments *s, int i, int j) {
  return (size_t)i * (size_t)s->max_len + (size_t)(j - i - 1);
}

/* The bounds of [i, j) for every j, adding call j - 1 to [i, j - 1): the bytes read from outside
 * (a value counted at its first reader) and the bytes that escape (a result counted when
 * produced, uncounted once every reader is inside and it is not returned). */
static void bounds_from(Segments *s, int i, int *inside_readers, bool *read) {
  const Dag *dag = s->ctx->dag;
  const double real_bytes = target_real_bytes(s->ctx->target->precision);
  memset(inside_readers, 0, sizeof(int) * (size_t)dag->nvalues);
  memset(read, 0, sizeof(bool) * (size_t)dag->nvalues);
  CompulsoryBytes bytes = {0, 0};
  for (int j = i + 1; j <= s->n && j - i <= s->max_len; j++) {
    const DagNode *nd = &dag->nodes[j - 1];
    for (int a = 0; a < nd->nargs; a++) {
      int v = nd->args[a];
      bool repeated = false;
      for (int b = 0; b < a; b++) repeated |= nd->args[b] == v;
      if (repeated) continue;
      const Value *val = &dag->values[v];
      double size = real_bytes * dag_value_floats(dag, v);
      if (val->producer >= i) {
        if (++inside_readers[v] == val->nconsumers && !val->is_output) bytes.saves -= size;
      } else if (!read[v]) {
        read[v] = true;
        bytes.loads += size;
      }
    }
    const Value *res = &dag->values[nd->result];
    if (res->is_output || res->nconsumers > 0)
      bytes.saves += real_bytes * dag_value_floats(dag, nd->result);
    s->lb[seg_index(s, i, j)] = bound_ns_of_traffic(s->ctx->db, bytes) + s->overhead;
  }
}

static double lb_of(const Segments *s, int i, int j) { return s->lb[seg_index(s, i, j)]; }

/* What a segment of len calls costs over its bound, as far as the search has seen
 * (envelope[len]): the least ratio among the segments of that length evaluated so far,
 * interpolated linearly between the lengths seen (from ratio 1 at length 0: a short kernel is
 * close to its bound, a long one loses occupancy) and flat beyond the longest.  Recomputed after
 * each combine, O(max_len). */
static void update_envelope(Segments *s) {
  int below = 0;
  double below_ratio = 1.0;
  for (int l = 1; l <= s->max_len; l++) {
    if (!isfinite(s->minratio[l])) continue;
    for (int m = below + 1; m <= l; m++)
      s->envelope[m] = below_ratio + (s->minratio[l] - below_ratio) * (m - below) / (l - below);
    below = l;
    below_ratio = s->minratio[l];
  }
  for (int m = below + 1; m <= s->max_len; m++) s->envelope[m] = below_ratio;
}

static double ratio_of(const Segments *s, int len) { return s->envelope[len]; }

/* The ratio of an evaluated segment [i, j) (cost over bound), NAN for one not evaluated, out of
 * range, or without plan. */
static double known_ratio(const Segments *s, int i, int j) {
  if (i < 0 || j > s->n || j <= i || j - i > s->max_len) return NAN;
  double c = s->cost[seg_index(s, i, j)];
  return isfinite(c) ? c / lb_of(s, i, j) : NAN;
}

/* How far guess_of looks for an evaluated neighbour (calls moved at one end). */
enum { NEIGHBOUR_REACH = 8 };

/* The bound of [i, j), or with estimate an estimate of its cost, to decide which segments to
 * combine (heuristic): its bound times the ratio of its nearest evaluated neighbour (the same
 * segment with one end moved by at most NEIGHBOUR_REACH calls) where that is lower than its
 * length's envelope.  The envelope alone let badly cut segments of a length (cuts through an
 * unrolled loop, at 6 to 13 times their bound) set the guess of every segment of that length:
 * good long segments were never combined (with one model change stvk_tet's [8, 83) was guessed
 * at 7.9 times its bound, while [0, 83) costs 1.07 times its own), and stvk_tet's ranks 7-10
 * went to partitions predicted at 2.1 ns where ones at 0.35-0.37 ns exist (docs/search.md,
 * "Intervals"). */
static double guess_of(const Segments *s, int i, int j) {
  if (!s->estimate) return lb_of(s, i, j);
  double ratio = ratio_of(s, j - i);
  for (int d = 1; d <= NEIGHBOUR_REACH; d++) {
    double near = INFINITY;
    const double r[4] = {known_ratio(s, i - d, j), known_ratio(s, i + d, j),
                         known_ratio(s, i, j - d), known_ratio(s, i, j + d)};
    for (int k = 0; k < 4; k++)
      if (r[k] < near) near = r[k]; /* NAN never compares lower */
    if (isfinite(near)) {
      if (near < ratio) ratio = near;
      break;
    }
  }
  return lb_of(s, i, j) * ratio;
}

static double cost_of(Segments *s, int i, int j) {
  double *c = &s->cost[seg_index(s, i, j)];
  if (isnan(*c)) {
    if (!plan_memo_known(s->ctx, nodeset_range(i, j))) s->evaluated++;
    double ns = plan_memo_cost(s->ctx, nodeset_range(i, j));
    /* a segment the time budget cut off stays unevaluated (it may not be asked again) */
    if (isfinite(ns) || !s->ctx->expired || j - i == 1) *c = ns + s->overhead;
    else return INFINITY;
    if (j > s->known_end[i]) s->known_end[i] = j;
    double ratio = *c / lb_of(s, i, j);
    if (isfinite(*c) && ratio < s->minratio[j - i]) {
      s->minratio[j - i] = ratio;
      update_envelope(s);
      s->envelope_moved = true;
    }
  }
  return *c;
}

/* ---- phase 1: the best completion from every position -------------------------------------- */

typedef struct {
  int j;
  double key;
} Try;

static int by_key(const void *a, const void *b) {
  const Try *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->j - y->j;
}

static void best_completions(Segments *s, double *best, bool show_progress) {
  int n = s->n;
  Try *tries = xmalloc(sizeof *tries * (size_t)(s->max_len + 1));
  best[n] = 0;
  for (int i = n - 1; i >= 0; i--) {
    if (show_progress) progress("searching intervals", n - i, n);
    int m = 0;
    for (int j = i + 1; j <= n && j - i <= s->max_len; j++)
      if (isfinite(best[j])) tries[m++] = (Try){j, guess_of(s, i, j) + best[j]};
    qsort(tries, (size_t)m, sizeof *tries, by_key);
    best[i] = INFINITY;
    for (int k = 0; k < m && tries[k].key < best[i]; k++) {
      double total = cost_of(s, i, tries[k].j) + best[tries[k].j];
      if (total < best[i]) best[i] = total;
    }
  }
  free(tries);
}

/* ---- phase 2: the top N paths, best first ----------------------------------------------------- */

typedef struct PathNode {
  int start, end;
  const struct PathNode *parent; /* the segments before; NULL at position 0 */
} PathNode;

typedef struct {
  double key;  /* a bound of every completion (exact once the last segment is evaluated) */
  long order;  /* push order: ties go to the earlier (key and order first: a QueueKey) */
  double g;    /* cost of the evaluated segments */
  int start, end;
  bool pending; /* segment [start, end) not yet evaluated */
  const PathNode *path; /* the segments before start */
} Entry;

/* Path nodes live until the search ends. */
typedef struct {
  PathNode **blocks;
  int nblocks, used;
} PathPool;

enum { PATH_BLOCK = 4096 };

static const PathNode *path_add(PathPool *pp, const PathNode *parent, int start, int end) {
  if (pp->nblocks == 0 || pp->used == PATH_BLOCK) {
    pp->blocks = xrealloc(pp->blocks, sizeof *pp->blocks * (size_t)(pp->nblocks + 1));
    pp->blocks[pp->nblocks++] = xmalloc(sizeof(PathNode) * PATH_BLOCK);
    pp->used = 0;
  }
  PathNode *p = &pp->blocks[pp->nblocks - 1][pp->used++];
  *p = (PathNode){start, end, parent};
  return p;
}

/* A segment's value in keys: its exact cost once known, else its guess (bound or estimate);
 * INFINITY when it has no plan, or cannot be combined any more (time is up). */
static double value_of(const Segments *s, int i, int j) {
  double c = s->cost[seg_index(s, i, j)];
  if (!isnan(c)) return c;
  if (s->ctx->expired && j - i > 1) return INFINITY;
  return guess_of(s, i, j);
}

/* With estimate: the best completion from every position by the values above (exact costs where
 * known, estimates elsewhere), recomputed as costs become known, from position from down to 0.
 * O(from max_len). */
static void estimate_completions(const Segments *s, double *best, int from) {
  best[s->n] = 0;
  for (int i = from; i >= 0; i--) {
    best[i] = INFINITY;
    /* once the time is up, a segment of several calls without a cost has none (value_of):
     * only the few with one are looked at, not max_len of them from every position */
    int last = i + s->max_len < s->n ? i + s->max_len : s->n;
    if (s->ctx->expired && last > i + 1) last = s->known_end[i] > i + 1 ? s->known_end[i] : i + 1;
    for (int j = i + 1; j <= last; j++) {
      double t = value_of(s, i, j) + best[j];
      if (t < best[i]) best[i] = t;
    }
  }
}

/* After segment [start, ...) got its cost: the guesses it can change are its own and its
 * neighbours' (starts up to NEIGHBOUR_REACH later), or every one when the envelope moved, so the
 * completions are estimated again from the last start that can differ.  Recomputing all of them
 * after every combine kept a chain of 1001 calls busy for seconds past its time limit, as its
 * single calls' costs became known one by one from position 0. */
static void reestimate(Segments *s, double *best, int start) {
  int from = s->envelope_moved ? s->n - 1 : start + NEIGHBOUR_REACH;
  estimate_completions(s, best, from < s->n - 1 ? from : s->n - 1);
  s->envelope_moved = false;
}

/* The key of an entry with the current values: a pending one has its segment's value still to
 * add. */
static double key_of(const Segments *s, const double *best, const Entry *e) {
  return e->g + (e->pending ? value_of(s, e->start, e->end) : 0) + best[e->end];
}

static void push_children(Segments *s, BestFirstQueue *q, const double *best, const Entry *from) {
  for (int j = from->end + 1; j <= s->n && j - from->end <= s->max_len; j++) {
    Entry e = {.g = from->g, .start = from->end, .end = j, .pending = true, .path = from->path};
    e.key = key_of(s, best, &e);
    if (isfinite(e.key)) queue_push(q, &e);
  }
}

static IntervalPartition partition_of(const PathNode *p, double cost) {
  int nk = 0;
  for (const PathNode *x = p; x; x = x->parent) nk++;
  IntervalPartition out = {.starts = xmalloc(sizeof(int) * (size_t)(nk + 1)), .nkernels = nk,
                           .cost = cost};
  out.starts[nk] = p ? p->end : 0;
  for (const PathNode *x = p; x; x = x->parent) out.starts[--nk] = x->start;
  return out;
}

/* Pops past which the search gives up (only known segments are left to combine cheaply, and
 * a pathological spec could make the paths among them many). */
enum { MAX_POPS = 4000000 };

/* The top paths, best first.  Exact, the keys are bounds (best[] exact, pending segments at their
 * bound): complete paths leave the queue in order of cost.  With estimate, best[] and the
 * guesses change as segments are evaluated, so a popped entry whose key grew goes back (lazy
 * re-keying); the paths found are then sorted by cost (heuristic). */
static int top_paths(Segments *s, double *best, int top, IntervalPartition *out) {
  BestFirstQueue q = {.size = sizeof(Entry)};
  PathPool pp = {0};
  int found = 0;
  Entry root = {.g = 0, .end = 0, .path = NULL};
  push_children(s, &q, best, &root);
  for (long pops = 0; q.n > 0 && found < top && pops < MAX_POPS; pops++) {
    Entry e;
    queue_pop(&q, &e);
    if (s->estimate) {
      double now = key_of(s, best, &e);
      if (!isfinite(now)) continue;
      if (now > e.key && q.n > 0 && now > queue_least_key(&q)) {
        e.key = now;
        queue_push(&q, &e);
        continue;
      }
    }
    if (e.pending) {
      bool known = !isnan(s->cost[seg_index(s, e.start, e.end)]);
      double c = cost_of(s, e.start, e.end);
      if (!known && s->estimate) reestimate(s, best, e.start);
      if (!known && s->ctx->progress) progress("searching intervals: segments", s->evaluated, 0);
      if (!isfinite(c)) continue;
      Entry done = {.g = e.g + c, .start = e.start, .end = e.end,
                    .path = path_add(&pp, e.path, e.start, e.end)};
      done.key = key_of(s, best, &done);
      if (isfinite(done.key)) queue_push(&q, &done);
    } else if (e.end == s->n) {
      out[found++] = partition_of(e.path, e.g);
    } else {
      push_children(s, &q, best, &e);
    }
  }
  for (int b = 0; b < pp.nblocks; b++) free(pp.blocks[b]);
  free(pp.blocks);
  queue_free(&q);
  return found;
}

static int by_cost(const void *a, const void *b) {
  double x = ((const IntervalPartition *)a)->cost, y = ((const IntervalPartition *)b)->cost;
  return (x > y) - (x < y);
}

int intervals_top(SearchContext *ctx, int max_len, int top, double overhead, bool estimate,
                  bool show_progress, IntervalPartition **out, long *evaluated) {
  int n = ctx->dag->nnodes;
  *out = NULL;
  if (n == 0 || top <= 0) return 0;
  if (max_len <= 0 || max_len > n) max_len = n;
  Segments s = {.ctx = ctx, .n = n, .max_len = max_len, .overhead = overhead,
                .estimate = estimate};
  s.minratio = xmalloc(sizeof(double) * (size_t)(max_len + 1));
  s.envelope = xmalloc(sizeof(double) * (size_t)(max_len + 1));
  for (int l = 0; l <= max_len; l++) s.minratio[l] = INFINITY, s.envelope[l] = 1.0;
  size_t nseg = (size_t)n * (size_t)max_len;
  s.lb = xmalloc(sizeof(double) * nseg);
  s.cost = xmalloc(sizeof(double) * nseg);
  for (size_t k = 0; k < nseg; k++) s.cost[k] = NAN;
  s.known_end = xmalloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; i++) s.known_end[i] = i;
  int *inside_readers = xmalloc(sizeof(int) * (size_t)ctx->dag->nvalues);
  bool *read = xmalloc(sizeof(bool) * (size_t)ctx->dag->nvalues);
  for (int i = 0; i < n; i++) bounds_from(&s, i, inside_readers, read);
  free(inside_readers);
  free(read);
  double *best = xmalloc(sizeof(double) * (size_t)(n + 1));
  if (estimate) estimate_completions(&s, best, n - 1);
  else best_completions(&s, best, show_progress);
  if (show_progress) progress_done();
  IntervalPartition *parts = xcalloc((size_t)top, sizeof *parts);
  int found = isfinite(best[0]) ? top_paths(&s, best, top, parts) : 0;
  if (estimate) qsort(parts, (size_t)found, sizeof *parts, by_cost);
  free(best);
  free(s.lb);
  free(s.cost);
  free(s.minratio);
  free(s.envelope);
  free(s.known_end);
  if (evaluated) *evaluated = s.evaluated;
  if (found == 0) {
    free(parts);
    return 0;
  }
  *out = parts;
  return found;
}

void intervals_free(IntervalPartition *parts, int n) {
  for (int k = 0; k < n; k++) free(parts[k].starts);
  free(parts);
}
