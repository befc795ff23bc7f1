/*
 * linearize.c — execution order of a fusion's calls (docs/design.md §6 step 2, seed 004 §3.6.2).
 *
 * KAS tried every topological order (O(n!)).  The shared memory live while call c runs depends
 * only on which calls ran before it (the set S), not on their order, so the minimal peak is a
 * bottleneck path over subsets: best[S | c] = min(max(best[S], mem(S, c))), O(2^n n) states
 * times the values.  Among the orders achieving that peak we then minimize barriers under a
 * conservative rule (a call that reads a shared value produced since the last barrier needs
 * one); that count depends on the calls since the last barrier T ⊆ S too, so the second pass
 * runs over (S, T) pairs, restricted to transitions within the optimal peak (exact, lexicographic).
 * The subset DP is exact up to LIN_EXACT_CALLS calls; a longer fusion (a long interval of a big
 * spec) gets a greedy order instead: repeatedly the ready call whose run adds the least live
 * memory, then frees the most, kept only when its peak beats the node order's (heuristic,
 * O(n^2) with the live memory tracked incrementally).
 *
 * Memory model (matches combine.c's steps): a loaded value is loaded just before its first
 * reader; a produced value lives from its compute; both die after their last reader (or save,
 * which follows the compute at once).  So while c computes, live = values started by S and still
 * wanted outside S, plus c's arguments and result.
 */
#include "kasgen.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- the exact DP (at most LIN_EXACT_CALLS calls, sets as 32-bit masks) ------------------ */

/* The problem with only its shared values (a value in registers takes no shared memory and
 * needs no barrier), and what each call adds to the memory live while it runs. */
typedef struct {
  int ncalls;
  uint32_t pred[LIN_EXACT_CALLS];
  int nvals;
  int *size, *producer;
  uint32_t *consumers;
  int result_size[LIN_EXACT_CALLS];       /* floats of the values the call produces */
  uint32_t barrier_mask[LIN_EXACT_CALLS]; /* producers of the shared values the call reads */
  int *loaded_of[LIN_EXACT_CALLS];        /* loaded values the call reads */
  int nloaded_of[LIN_EXACT_CALLS];
} SmallProblem;

/* Values started (loaded or produced) once the calls in S have run. */
static bool value_started(const SmallProblem *p, int v, uint32_t s) {
  if (p->producer[v] >= 0) return (s >> p->producer[v]) & 1u;
  return (p->consumers[v] & s) != 0;
}

/* Live shared floats between calls once the set s has run: started and still wanted. */
static int live_after(const SmallProblem *p, uint32_t s) {
  int total = 0;
  for (int v = 0; v < p->nvals; v++)
    if (value_started(p, v, s) && (p->consumers[v] & ~s) != 0) total += p->size[v];
  return total;
}

/* Live shared floats per element while call c runs after the set s (base = live_after(s)):
 * what is live between calls, plus c's results and the loaded values c reads first.  (A value
 * c reads that was started is live already: c has not run, so it is still wanted.) */
static int transition_memory(const SmallProblem *p, int base, uint32_t s, int c) {
  int total = base + p->result_size[c];
  for (int k = 0; k < p->nloaded_of[c]; k++) {
    int v = p->loaded_of[c][k];
    if ((p->consumers[v] & s) == 0) total += p->size[v];
  }
  return total;
}

/* Conservative barrier rule: c reads a shared value produced by a call since the last barrier. */
static bool needs_barrier(const SmallProblem *p, uint32_t since_barrier, int c) {
  return (since_barrier & p->barrier_mask[c]) != 0;
}

static bool ready(const SmallProblem *p, uint32_t s, int c) {
  return !((s >> c) & 1u) && (p->pred[c] & ~s) == 0;
}

static void small_evaluate(const SmallProblem *p, const int *order, int *peak_out,
                           int *barriers_out) {
  uint32_t s = 0, since = 0;
  int peak = 0, barriers = 0;
  for (int k = 0; k < p->ncalls; k++) {
    int c = order[k];
    int m = transition_memory(p, live_after(p, s), s, c);
    if (m > peak) peak = m;
    if (needs_barrier(p, since, c)) {
      barriers++;
      since = 0;
    }
    since |= 1u << c;
    s |= 1u << c;
  }
  *peak_out = peak;
  *barriers_out = barriers;
}

/* The shared values of lp, as 32-bit sets, with each call's additions. */
static SmallProblem small_problem(const LinearizeProblem *lp) {
  SmallProblem p = {.ncalls = lp->ncalls};
  int cap = lp->nvals ? lp->nvals : 1;
  p.size = xmalloc(sizeof(int) * (size_t)cap);
  p.producer = xmalloc(sizeof(int) * (size_t)cap);
  p.consumers = xmalloc(sizeof(uint32_t) * (size_t)cap);
  for (int c = 0; c < lp->ncalls; c++) {
    p.pred[c] = (uint32_t)lp->pred[c].w[0];
    p.loaded_of[c] = xmalloc(sizeof(int) * (size_t)cap);
  }
  for (int v = 0; v < lp->nvals; v++) {
    if (lp->size[v] <= 0) continue;
    int k = p.nvals++;
    p.size[k] = lp->size[v];
    p.producer[k] = lp->producer[v];
    p.consumers[k] = (uint32_t)lp->consumers[v].w[0];
    if (p.producer[k] >= 0) p.result_size[p.producer[k]] += p.size[k];
    for (int c = 0; c < lp->ncalls; c++) {
      if (!((p.consumers[k] >> c) & 1u)) continue;
      if (p.producer[k] >= 0) p.barrier_mask[c] |= 1u << p.producer[k];
      else p.loaded_of[c][p.nloaded_of[c]++] = k;
    }
  }
  return p;
}

static void small_problem_free(SmallProblem *p) {
  for (int c = 0; c < p->ncalls; c++) free(p->loaded_of[c]);
  free(p->size);
  free(p->producer);
  free(p->consumers);
}

/* Phase 1: minimal peak to reach every subset; parent[S] = last call of a best path to S. */
static int minimal_peak(const SmallProblem *p, int *best, signed char *parent) {
  uint32_t full = (1u << p->ncalls) - 1;
  for (uint32_t s = 0; s <= full; s++) best[s] = INT_MAX, parent[s] = -1;
  best[0] = 0;
  for (uint32_t s = 0; s < full; s++) {
    if (best[s] == INT_MAX) continue;
    int base = live_after(p, s);
    for (int c = 0; c < p->ncalls; c++) {
      if (!ready(p, s, c)) continue;
      int m = transition_memory(p, base, s, c);
      int peak = m > best[s] ? m : best[s];
      uint32_t t = s | (1u << c);
      if (peak < best[t]) best[t] = peak, parent[t] = (signed char)c;
    }
  }
  return best[full];
}

static void order_from_parents(const SmallProblem *p, const signed char *parent, int *order) {
  uint32_t s = (1u << p->ncalls) - 1;
  for (int k = p->ncalls - 1; k >= 0; k--) {
    order[k] = parent[s];
    s &= ~(1u << parent[s]);
  }
}

/* Phase 2 over (S, T): fewest barriers among orders whose every transition stays <= peak.
 * State index = S << n | T.  Returns false if no order was found (cannot happen when phase 1
 * succeeded, since its order is admissible). */
static bool fewest_barriers(const SmallProblem *p, int peak, int *order) {
  int n = p->ncalls;
  size_t nstates = (size_t)1 << (2 * n), block = (size_t)1 << n;
  unsigned char *cost = xmalloc(nstates);
  int *from = xmalloc(sizeof(int) * nstates); /* previous state index */
  /* Only the sets S that an order reaches (the DAG's down-sets: few for a chain, all for
   * independent calls) have states, so S's block of 2^n costs is cleared when S is first
   * reached, not all 4^n up front: that clearing was a tenth of a small spec's search. */
  bool *reached = xcalloc(block, sizeof(bool));
  memset(cost, 0xff, block);
  reached[0] = true;
  uint32_t full = (1u << n) - 1;
  cost[0] = 0;
  for (uint32_t s = 0; s < full; s++) {
    if (!reached[s]) continue;
    int base = live_after(p, s);
    for (uint32_t t = s;; t = (t - 1) & s) { /* every T ⊆ S */
      size_t st = ((size_t)s << n) | t;
      if (cost[st] != 0xff) {
        for (int c = 0; c < n; c++) {
          if (!ready(p, s, c) || transition_memory(p, base, s, c) > peak) continue;
          bool bar = needs_barrier(p, t, c);
          uint32_t t2 = (bar ? 0 : t) | (1u << c), s2 = s | (1u << c);
          if (!reached[s2]) memset(cost + ((size_t)s2 << n), 0xff, block), reached[s2] = true;
          size_t st2 = ((size_t)s2 << n) | t2;
          unsigned char c2 = (unsigned char)(cost[st] + (bar ? 1 : 0));
          if (c2 < cost[st2]) cost[st2] = c2, from[st2] = (int)st;
        }
      }
      if (t == 0) break;
    }
  }
  size_t best_state = 0;
  unsigned best_cost = 0xff;
  for (uint32_t t = full; reached[full]; t = (t - 1) & full) {
    size_t st = ((size_t)full << n) | t;
    if (cost[st] < best_cost) best_cost = cost[st], best_state = st;
    if (t == 0) break;
  }
  bool ok = best_cost != 0xff;
  for (int k = n - 1; ok && k >= 0; k--) {
    size_t prev = (size_t)from[best_state];
    uint32_t s_now = (uint32_t)(best_state >> n), s_prev = (uint32_t)(prev >> n);
    order[k] = __builtin_ctz(s_now & ~s_prev);
    best_state = prev;
  }
  free(reached);
  free(cost);
  free(from);
  return ok;
}

/* ---- any size: evaluation and the greedy order ------------------------------------------- */

/* Peak and barriers of a given order by the same rules as the DP, for any number of calls:
 * every value's first start and last use positions, then one pass over the positions. */
void linearize_evaluate(const LinearizeProblem *p, const int *order, int *peak_out,
                        int *barriers_out) {
  int n = p->ncalls;
  int *pos = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
  for (int k = 0; k < n; k++) pos[order[k]] = k;
  int *delta = xcalloc((size_t)n + 1, sizeof(int)); /* live floats change at each position */
  int *last_producer_pos = xmalloc(sizeof(int) * (size_t)(n ? n : 1)); /* latest shared value */
  for (int k = 0; k < n; k++) last_producer_pos[k] = -1;
  for (int v = 0; v < p->nvals; v++) {
    if (p->size[v] <= 0) continue;
    int start = p->producer[v] >= 0 ? pos[p->producer[v]] : n, end = -1;
    for (int c = nodeset_next(&p->consumers[v], 0); c >= 0 && c < n;
         c = nodeset_next(&p->consumers[v], c + 1)) {
      if (p->producer[v] < 0 && pos[c] < start) start = pos[c];
      if (pos[c] > end) end = pos[c];
      /* a consumer needs a barrier when the producer ran since the last one: remember the
       * latest producer position per consumer position */
      if (p->producer[v] >= 0 && pos[p->producer[v]] > last_producer_pos[pos[c]])
        last_producer_pos[pos[c]] = pos[p->producer[v]];
    }
    if (start >= n) continue; /* never used */
    if (end < start) end = start;
    delta[start] += p->size[v];
    delta[end + 1] -= p->size[v];
  }
  int peak = 0, live = 0, barriers = 0, last_barrier = 0;
  for (int k = 0; k < n; k++) {
    live += delta[k];
    if (live > peak) peak = live;
    if (last_producer_pos[k] >= last_barrier) barriers++, last_barrier = k;
  }
  *peak_out = peak;
  *barriers_out = barriers;
  free(pos);
  free(delta);
  free(last_producer_pos);
}

/* The greedy order: live memory tracked per value (started, consumers still to run). */
static bool greedy_order(const LinearizeProblem *p, int *order) {
  int n = p->ncalls;
  int *remaining = xmalloc(sizeof(int) * (size_t)(p->nvals ? p->nvals : 1));
  bool *started = xcalloc((size_t)(p->nvals ? p->nvals : 1), sizeof(bool));
  bool *done = xcalloc((size_t)n, sizeof(bool));
  int *npred = xcalloc((size_t)n, sizeof(int));  /* predecessors not yet run */
  int *nargs = xcalloc((size_t)n, sizeof(int));  /* values each call reads or writes */
  int **vals = xcalloc((size_t)n, sizeof(int *));
  for (int c = 0; c < n; c++) vals[c] = xmalloc(sizeof(int) * (size_t)(p->nvals ? p->nvals : 1));
  for (int v = 0; v < p->nvals; v++) {
    remaining[v] = 0;
    for (int c = nodeset_next(&p->consumers[v], 0); c >= 0 && c < n;
         c = nodeset_next(&p->consumers[v], c + 1)) {
      remaining[v]++;
      vals[c][nargs[c]++] = v;
    }
    if (p->producer[v] >= 0) vals[p->producer[v]][nargs[p->producer[v]]++] = v;
  }
  for (int c = 0; c < n; c++) npred[c] = nodeset_count(&p->pred[c]);
  long base = 0; /* floats live between calls */
  bool ok = true;
  for (int k = 0; k < n && ok; k++) {
    int pick = -1;
    long pick_mem = 0, pick_freed = 0;
    for (int c = 0; c < n; c++) {
      if (done[c] || npred[c] > 0) continue;
      long mem = base, freed = 0;
      for (int a = 0; a < nargs[c]; a++) {
        int v = vals[c][a];
        if (!started[v]) mem += p->size[v];                 /* loaded now, or c's result */
        else if (remaining[v] == 1) freed += p->size[v];    /* c is its last reader */
      }
      if (pick < 0 || mem < pick_mem || (mem == pick_mem && freed > pick_freed))
        pick = c, pick_mem = mem, pick_freed = freed;
    }
    if (pick < 0) {
      ok = false; /* a cycle */
      break;
    }
    order[k] = pick;
    done[pick] = true;
    for (int a = 0; a < nargs[pick]; a++) {
      int v = vals[pick][a];
      bool reads = p->producer[v] != pick;
      if (!started[v]) started[v] = true, base += remaining[v] > 0 ? p->size[v] : 0;
      if (reads && --remaining[v] == 0) base -= p->size[v];
    }
    for (int c = 0; c < n; c++)
      if (!done[c] && nodeset_has(&p->pred[c], pick)) npred[c]--;
  }
  for (int c = 0; c < n; c++) free(vals[c]);
  free(vals);
  free(nargs);
  free(npred);
  free(done);
  free(started);
  free(remaining);
  return ok;
}

static bool is_order_topological(const LinearizeProblem *p, const int *order) {
  NodeSet ran = nodeset_empty();
  for (int k = 0; k < p->ncalls; k++) {
    if (!nodeset_subset(&p->pred[order[k]], &ran)) return false;
    nodeset_add(&ran, order[k]);
  }
  return true;
}

/* Greedy against the node order (topological when the calls are numbered so, as combine.c's
 * are): the lower peak, then the fewer barriers. */
static bool heuristic_order(const LinearizeProblem *p, int *order_out, int *peak_out,
                            int *barriers_out) {
  int n = p->ncalls;
  int *identity = xmalloc(sizeof(int) * (size_t)n);
  for (int k = 0; k < n; k++) identity[k] = k;
  bool ok = greedy_order(p, order_out);
  if (ok) {
    linearize_evaluate(p, order_out, peak_out, barriers_out);
    int peak, bars;
    if (is_order_topological(p, identity)) {
      linearize_evaluate(p, identity, &peak, &bars);
      if (peak < *peak_out || (peak == *peak_out && bars < *barriers_out)) {
        memcpy(order_out, identity, sizeof(int) * (size_t)n);
        *peak_out = peak, *barriers_out = bars;
      }
    }
  }
  free(identity);
  return ok;
}

static bool exact_order(const LinearizeProblem *lp, int *order_out, int *peak_out,
                        int *barriers_out) {
  SmallProblem small = small_problem(lp);
  const SmallProblem *p = &small;
  size_t nsets = (size_t)1 << p->ncalls;
  int *best = xmalloc(sizeof(int) * nsets);
  signed char *parent = xmalloc(nsets);
  int peak = minimal_peak(p, best, parent);
  bool ok = peak != INT_MAX;
  if (ok) {
    order_from_parents(p, parent, order_out);
    if (p->ncalls <= 10) fewest_barriers(p, peak, order_out);
    small_evaluate(p, order_out, peak_out, barriers_out);
  }
  free(best);
  free(parent);
  small_problem_free(&small);
  return ok;
}

bool linearize_order(const LinearizeProblem *p, int *order_out, int *peak_out,
                     int *barriers_out) {
  if (p->ncalls <= 0 || p->ncalls > KAS_MAX_NODES) return false;
  if (p->ncalls <= LIN_EXACT_CALLS) return exact_order(p, order_out, peak_out, barriers_out);
  return heuristic_order(p, order_out, peak_out, barriers_out);
}

/* ---- the cache ------------------------------------------------------------------------------ */

/* The exact orders a search computed, by the problem they solve: the partial plans of fusions
 * that share calls pose the same small problems again and again.  The key is the problem with
 * only its shared values (the others change nothing): the calls' predecessor sets, then per
 * shared value its size, producer and readers. */
typedef struct {
  uint64_t hash;
  uint32_t *key;
  int nkey;
  int *order; /* NULL: no order (a cycle) */
  int ncalls;
} CachedOrder;

struct LinearizeCache {
  CachedOrder *v;
  int n, cap;
  int *slot; /* hash table of indices + 1, 2 * cap slots */
};

LinearizeCache *linearize_cache_new(void) { return xcalloc(1, sizeof(LinearizeCache)); }

void linearize_cache_free(LinearizeCache *c) {
  if (!c) return;
  for (int k = 0; k < c->n; k++) {
    free(c->v[k].key);
    free(c->v[k].order);
  }
  free(c->v);
  free(c->slot);
  free(c);
}

static uint32_t *problem_key(const LinearizeProblem *p, int *nkey) {
  uint32_t *key = xmalloc(sizeof(uint32_t) * (size_t)(1 + p->ncalls + 3 * p->nvals));
  int n = 0;
  key[n++] = (uint32_t)p->ncalls;
  for (int c = 0; c < p->ncalls; c++) key[n++] = (uint32_t)p->pred[c].w[0];
  for (int v = 0; v < p->nvals; v++) {
    if (p->size[v] <= 0) continue;
    key[n++] = (uint32_t)p->size[v];
    key[n++] = (uint32_t)p->producer[v];
    key[n++] = (uint32_t)p->consumers[v].w[0];
  }
  *nkey = n;
  return key;
}

static uint64_t key_hash(const uint32_t *key, int n) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int k = 0; k < n; k++) h = (h ^ key[k]) * 0xff51afd7ed558ccdull ^ (h >> 31);
  return h;
}

static void cache_rehash(LinearizeCache *c) {
  size_t nslots = (size_t)c->cap * 2;
  free(c->slot);
  c->slot = xcalloc(nslots, sizeof(int));
  for (int k = 0; k < c->n; k++) {
    size_t i = c->v[k].hash & (nslots - 1);
    while (c->slot[i]) i = (i + 1) & (nslots - 1);
    c->slot[i] = k + 1;
  }
}

bool linearize_order_cached(LinearizeCache *c, const LinearizeProblem *p, int *order_out) {
  if (!c || p->ncalls <= 0 || p->ncalls > LIN_EXACT_CALLS) {
    int peak, bars;
    return linearize_order(p, order_out, &peak, &bars);
  }
  int nkey;
  uint32_t *key = problem_key(p, &nkey);
  uint64_t h = key_hash(key, nkey);
  size_t nslots = (size_t)c->cap * 2;
  for (size_t i = nslots ? h & (nslots - 1) : 0; nslots && c->slot[i]; i = (i + 1) & (nslots - 1)) {
    const CachedOrder *e = &c->v[c->slot[i] - 1];
    if (e->hash == h && e->nkey == nkey && !memcmp(e->key, key, sizeof(uint32_t) * (size_t)nkey)) {
      free(key);
      if (e->order) memcpy(order_out, e->order, sizeof(int) * (size_t)e->ncalls);
      return e->order != NULL;
    }
  }
  int peak, bars;
  bool ok = linearize_order(p, order_out, &peak, &bars);
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 256;
    c->v = xrealloc(c->v, sizeof *c->v * (size_t)c->cap);
    cache_rehash(c);
  }
  CachedOrder *e = &c->v[c->n];
  *e = (CachedOrder){.hash = h, .key = key, .nkey = nkey, .ncalls = p->ncalls};
  if (ok) {
    e->order = xmalloc(sizeof(int) * (size_t)p->ncalls);
    memcpy(e->order, order_out, sizeof(int) * (size_t)p->ncalls);
  }
  nslots = (size_t)c->cap * 2;
  size_t i = h & (nslots - 1);
  while (c->slot[i]) i = (i + 1) & (nslots - 1);
  c->slot[i] = ++c->n;
  return ok;
}
