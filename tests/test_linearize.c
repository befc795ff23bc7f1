/*
 * test_linearize.c — the subset DP of linearize.c against brute force over every permutation of
 * random small fusions: the order is topological, its peak equals the minimal peak over all
 * topological orders, and its barrier count is the fewest among the orders with that peak.  The
 * brute force computes live intervals per position, independently of the DP's subset formula.
 */
#include "testutil.h"

#include <stdlib.h>

static bool is_topological(const LinearizeProblem *p, const int *order) {
  uint32_t done = 0;
  for (int k = 0; k < p->ncalls; k++) {
    if ((p->pred[order[k]] & ~done) != 0 || ((done >> order[k]) & 1u)) return false;
    done |= 1u << order[k];
  }
  return true;
}

/* Peak from live intervals [start, end] over positions. */
static int brute_peak(const LinearizeProblem *p, const int *order) {
  int pos[LIN_MAX_CALLS];
  for (int k = 0; k < p->ncalls; k++) pos[order[k]] = k;
  int peak = 0;
  for (int k = 0; k < p->ncalls; k++) {
    int live = 0;
    for (int v = 0; v < p->nvals; v++) {
      int start = 1 << 20, end = -1;
      if (p->producer[v] >= 0) start = pos[p->producer[v]];
      for (int c = 0; c < p->ncalls; c++)
        if ((p->consumers[v] >> c) & 1u) {
          if (p->producer[v] < 0 && pos[c] < start) start = pos[c];
          if (pos[c] > end) end = pos[c];
        }
      if (end < start) end = start;
      if (start <= k && k <= end) live += p->size[v];
    }
    if (live > peak) peak = live;
  }
  return peak;
}

static int brute_barriers(const LinearizeProblem *p, const int *order) {
  int pos[LIN_MAX_CALLS], last_barrier = 0, n = 0;
  for (int k = 0; k < p->ncalls; k++) pos[order[k]] = k;
  for (int k = 0; k < p->ncalls; k++) {
    bool need = false;
    for (int v = 0; v < p->nvals; v++)
      if (p->size[v] > 0 && p->producer[v] >= 0 && pos[p->producer[v]] >= last_barrier &&
          ((p->consumers[v] >> order[k]) & 1u))
        need = true;
    if (need) n++, last_barrier = k;
  }
  return n;
}

static void next_perms(const LinearizeProblem *p, int *perm, int k, bool *used, int *best_peak,
                       int *best_bar) {
  if (k == p->ncalls) {
    if (!is_topological(p, perm)) return;
    int pk = brute_peak(p, perm), br = brute_barriers(p, perm);
    if (pk < *best_peak || (pk == *best_peak && br < *best_bar)) *best_peak = pk, *best_bar = br;
    return;
  }
  for (int c = 0; c < p->ncalls; c++) {
    if (used[c]) continue;
    used[c] = true;
    perm[k] = c;
    next_perms(p, perm, k + 1, used, best_peak, best_bar);
    used[c] = false;
  }
}

/* A random fusion: each call reads 1-3 earlier results or loaded values and produces one. */
static void random_problem(LinearizeProblem *p, int ncalls) {
  p->ncalls = ncalls;
  p->nvals = 0;
  int nloaded = 1 + rand() % 4;
  for (int v = 0; v < nloaded; v++) {
    p->producer[v] = -1;
    p->consumers[v] = 0;
    p->size[v] = rand() % 6 == 0 ? 0 : 1 + rand() % 81;
  }
  p->nvals = nloaded;
  for (int c = 0; c < ncalls; c++) {
    p->pred[c] = 0;
    int nargs = 1 + rand() % 3;
    for (int a = 0; a < nargs; a++) {
      int v = rand() % p->nvals;
      p->consumers[v] |= 1u << c;
      if (p->producer[v] >= 0) p->pred[c] |= 1u << p->producer[v];
    }
    int r = p->nvals++;
    p->producer[r] = c;
    p->consumers[r] = 0;
    p->size[r] = rand() % 6 == 0 ? 0 : 1 + rand() % 81;
  }
}

static void test_against_permutations(void **state) {
  (void)state;
  srand(777);
  for (int iter = 0; iter < 400; iter++) {
    LinearizeProblem p;
    random_problem(&p, 1 + rand() % 7);
    int order[LIN_MAX_CALLS], peak, bars;
    assert_true(linearize_order(&p, order, &peak, &bars));
    assert_true(is_topological(&p, order));
    assert_int_equal(peak, brute_peak(&p, order));
    assert_int_equal(bars, brute_barriers(&p, order));
    int perm[LIN_MAX_CALLS], best_peak = 1 << 30, best_bar = 1 << 30;
    bool used[LIN_MAX_CALLS] = {0};
    next_perms(&p, perm, 0, used, &best_peak, &best_bar);
    assert_int_equal(peak, best_peak);
    assert_int_equal(bars, best_bar);
  }
}

/* Two independent chains a->b and c->d with big intermediates: finishing one chain before
 * starting the other keeps only one big value live. */
static void test_chains_not_interleaved(void **state) {
  (void)state;
  LinearizeProblem p = {.ncalls = 4, .nvals = 6};
  int prod[6] = {-1, -1, 0, 1, 2, 3}, size[6] = {1, 1, 81, 1, 81, 1};
  uint32_t cons[6] = {1u << 0, 1u << 2, 1u << 1, 0, 1u << 3, 0};
  for (int v = 0; v < 6; v++)
    p.producer[v] = prod[v], p.size[v] = size[v], p.consumers[v] = cons[v];
  p.pred[1] = 1u << 0;
  p.pred[3] = 1u << 2;
  int order[4], peak, bars;
  assert_true(linearize_order(&p, order, &peak, &bars));
  assert_int_equal(peak, 81 + 1); /* one big value and one result at a time */
  int interleaved[4] = {0, 2, 1, 3}, pk2, b2;
  linearize_evaluate(&p, interleaved, &pk2, &b2);
  assert_true(pk2 > peak);
}

static void test_cycle_rejected(void **state) {
  (void)state;
  LinearizeProblem p = {.ncalls = 2, .nvals = 0};
  p.pred[0] = 2;
  p.pred[1] = 1;
  int order[2], peak, bars;
  assert_false(linearize_order(&p, order, &peak, &bars));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_against_permutations),
      cmocka_unit_test(test_chains_not_interleaved),
      cmocka_unit_test(test_cycle_rejected),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
