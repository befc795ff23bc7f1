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

/* Values started (loaded or produced) once the calls in S have run. */
static bool value_started(const LinearizeProblem *p, int v, uint32_t s) {
  if (p->producer[v] >= 0) return (s >> p->producer[v]) & 1u;
  return (p->consumers[v] & s) != 0;
}

/* Live shared floats per element while call c runs after the set s. */
static int transition_memory(const LinearizeProblem *p, uint32_t s, int c) {
  int total = 0;
  for (int v = 0; v < p->nvals; v++) {
    if (p->size[v] <= 0) continue;
    bool live = p->producer[v] == c || ((p->consumers[v] >> c) & 1u) ||
                (value_started(p, v, s) && (p->consumers[v] & ~s) != 0);
    if (live) total += p->size[v];
  }
  return total;
}

/* Conservative barrier rule: c reads a shared value produced by a call since the last barrier. */
static bool needs_barrier(const LinearizeProblem *p, uint32_t since_barrier, int c) {
  for (int v = 0; v < p->nvals; v++)
    if (p->size[v] > 0 && p->producer[v] >= 0 && ((since_barrier >> p->producer[v]) & 1u) &&
        ((p->consumers[v] >> c) & 1u))
      return true;
  return false;
}

static bool ready(const LinearizeProblem *p, uint32_t s, int c) {
  return !((s >> c) & 1u) && (p->pred[c] & ~s) == 0;
}

void linearize_evaluate(const LinearizeProblem *p, const int *order, int *peak_out,
                        int *barriers_out) {
  uint32_t s = 0, since = 0;
  int peak = 0, barriers = 0;
  for (int k = 0; k < p->ncalls; k++) {
    int c = order[k];
    int m = transition_memory(p, s, c);
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

/* Phase 1: minimal peak to reach every subset; parent[S] = last call of a best path to S. */
static int minimal_peak(const LinearizeProblem *p, int *best, signed char *parent) {
  uint32_t full = (1u << p->ncalls) - 1;
  for (uint32_t s = 0; s <= full; s++) best[s] = INT_MAX, parent[s] = -1;
  best[0] = 0;
  for (uint32_t s = 0; s < full; s++) {
    if (best[s] == INT_MAX) continue;
    for (int c = 0; c < p->ncalls; c++) {
      if (!ready(p, s, c)) continue;
      int m = transition_memory(p, s, c);
      int peak = m > best[s] ? m : best[s];
      uint32_t t = s | (1u << c);
      if (peak < best[t]) best[t] = peak, parent[t] = (signed char)c;
    }
  }
  return best[full];
}

static void order_from_parents(const LinearizeProblem *p, const signed char *parent, int *order) {
  uint32_t s = (1u << p->ncalls) - 1;
  for (int k = p->ncalls - 1; k >= 0; k--) {
    order[k] = parent[s];
    s &= ~(1u << parent[s]);
  }
}

/* Phase 2 over (S, T): fewest barriers among orders whose every transition stays <= peak.
 * State index = S << n | T.  Returns false if no order was found (cannot happen when phase 1
 * succeeded, since its order is admissible). */
static bool fewest_barriers(const LinearizeProblem *p, int peak, int *order) {
  int n = p->ncalls;
  size_t nstates = (size_t)1 << (2 * n);
  unsigned char *cost = xmalloc(nstates);
  int *from = xmalloc(sizeof(int) * nstates); /* previous state index */
  memset(cost, 0xff, nstates);
  uint32_t full = (1u << n) - 1;
  cost[0] = 0;
  for (uint32_t s = 0; s < full; s++) {
    for (uint32_t t = s;; t = (t - 1) & s) { /* every T ⊆ S */
      size_t st = ((size_t)s << n) | t;
      if (cost[st] != 0xff) {
        for (int c = 0; c < n; c++) {
          if (!ready(p, s, c) || transition_memory(p, s, c) > peak) continue;
          bool bar = needs_barrier(p, t, c);
          uint32_t t2 = (bar ? 0 : t) | (1u << c);
          size_t st2 = ((size_t)(s | (1u << c)) << n) | t2;
          unsigned char c2 = (unsigned char)(cost[st] + (bar ? 1 : 0));
          if (c2 < cost[st2]) cost[st2] = c2, from[st2] = (int)st;
        }
      }
      if (t == 0) break;
    }
  }
  size_t best_state = 0;
  unsigned best_cost = 0xff;
  for (uint32_t t = full;; t = (t - 1) & full) {
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
  free(cost);
  free(from);
  return ok;
}

bool linearize_order(const LinearizeProblem *p, int *order_out, int *peak_out,
                     int *barriers_out) {
  if (p->ncalls <= 0 || p->ncalls > LIN_MAX_CALLS) return false;
  size_t nsets = (size_t)1 << p->ncalls;
  int *best = xmalloc(sizeof(int) * nsets);
  signed char *parent = xmalloc(nsets);
  int peak = minimal_peak(p, best, parent);
  bool ok = peak != INT_MAX;
  if (ok) {
    order_from_parents(p, parent, order_out);
    if (p->ncalls <= 10) fewest_barriers(p, peak, order_out);
    linearize_evaluate(p, order_out, peak_out, barriers_out);
  }
  free(best);
  free(parent);
  return ok;
}
