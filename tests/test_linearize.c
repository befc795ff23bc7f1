/*
 * test_linearize.c — the subset DP of linearize.c against brute force over every permutation of
 * random small fusions: the order is topological, its peak equals the minimal peak over all
 * topological orders, and its barrier count is the fewest among the orders with that peak.  The
 * brute force computes live intervals per position, independently of the DP's subset formula.
 * Above LIN_EXACT_CALLS calls the order is heuristic: topological, evaluated as the brute force
 * evaluates it, and never worse than the node order.
 */
#include "testutil.h"

#include <stdlib.h>

enum { MAXC = 64, MAXV = 256 };

/* A problem with its own storage. */
typedef struct {
  LinearizeProblem p;
  NodeSet pred[MAXC], consumers[MAXV];
  int size[MAXV], producer[MAXV];
} Problem;

static void problem_init(Problem *pr, int ncalls) {
  memset(pr, 0, sizeof *pr);
  pr->p = (LinearizeProblem){.ncalls = ncalls, .pred = pr->pred, .size = pr->size,
                             .producer = pr->producer, .consumers = pr->consumers};
}

static bool is_topological(const LinearizeProblem *p, const int *order) {
  NodeSet done = nodeset_empty();
  for (int k = 0; k < p->ncalls; k++) {
    if (!nodeset_subset(&p->pred[order[k]], &done) || nodeset_has(&done, order[k])) return false;
    nodeset_add(&done, order[k]);
  }
  return true;
}

/* Peak from live intervals [start, end] over positions. */
static int brute_peak(const LinearizeProblem *p, const int *order) {
  int pos[MAXC];
  for (int k = 0; k < p->ncalls; k++) pos[order[k]] = k;
  int peak = 0;
  for (int k = 0; k < p->ncalls; k++) {
    int live = 0;
    for (int v = 0; v < p->nvals; v++) {
      int start = 1 << 20, end = -1;
      if (p->producer[v] >= 0) start = pos[p->producer[v]];
      for (int c = 0; c < p->ncalls; c++)
        if (nodeset_has(&p->consumers[v], c)) {
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
  int pos[MAXC], last_barrier = 0, n = 0;
  for (int k = 0; k < p->ncalls; k++) pos[order[k]] = k;
  for (int k = 0; k < p->ncalls; k++) {
    bool need = false;
    for (int v = 0; v < p->nvals; v++)
      if (p->size[v] > 0 && p->producer[v] >= 0 && pos[p->producer[v]] >= last_barrier &&
          nodeset_has(&p->consumers[v], order[k]))
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
static void random_problem(Problem *pr, int ncalls) {
  problem_init(pr, ncalls);
  int nloaded = 1 + rand() % 4;
  for (int v = 0; v < nloaded; v++) {
    pr->producer[v] = -1;
    pr->size[v] = rand() % 6 == 0 ? 0 : 1 + rand() % 81;
  }
  int nvals = nloaded;
  for (int c = 0; c < ncalls; c++) {
    int nargs = 1 + rand() % 3;
    for (int a = 0; a < nargs; a++) {
      int v = rand() % nvals;
      nodeset_add(&pr->consumers[v], c);
      if (pr->producer[v] >= 0) nodeset_add(&pr->pred[c], pr->producer[v]);
    }
    int r = nvals++;
    pr->producer[r] = c;
    pr->size[r] = rand() % 6 == 0 ? 0 : 1 + rand() % 81;
  }
  pr->p.nvals = nvals;
}

static void test_against_permutations(void **state) {
  (void)state;
  srand(777);
  for (int iter = 0; iter < 400; iter++) {
    Problem pr;
    random_problem(&pr, 1 + rand() % 7);
    const LinearizeProblem *p = &pr.p;
    int order[MAXC], peak, bars;
    assert_true(linearize_order(p, order, &peak, &bars));
    assert_true(is_topological(p, order));
    assert_int_equal(peak, brute_peak(p, order));
    assert_int_equal(bars, brute_barriers(p, order));
    int evaluated_peak, evaluated_bars; /* the evaluation of any size agrees */
    linearize_evaluate(p, order, &evaluated_peak, &evaluated_bars);
    assert_int_equal(evaluated_peak, peak);
    assert_int_equal(evaluated_bars, bars);
    int perm[MAXC], best_peak = 1 << 30, best_bar = 1 << 30;
    bool used[MAXC] = {0};
    next_perms(p, perm, 0, used, &best_peak, &best_bar);
    assert_int_equal(peak, best_peak);
    assert_int_equal(bars, best_bar);
  }
}

/* Two independent chains a->b and c->d with big intermediates: finishing one chain before
 * starting the other keeps only one big value live. */
static void test_chains_not_interleaved(void **state) {
  (void)state;
  Problem pr;
  problem_init(&pr, 4);
  pr.p.nvals = 6;
  int prod[6] = {-1, -1, 0, 1, 2, 3}, size[6] = {1, 1, 81, 1, 81, 1}, cons[6] = {0, 2, 1, -1, 3, -1};
  for (int v = 0; v < 6; v++) {
    pr.producer[v] = prod[v], pr.size[v] = size[v];
    if (cons[v] >= 0) pr.consumers[v] = nodeset_of(cons[v]);
  }
  pr.pred[1] = nodeset_of(0);
  pr.pred[3] = nodeset_of(2);
  int order[4], peak, bars;
  assert_true(linearize_order(&pr.p, order, &peak, &bars));
  assert_int_equal(peak, 81 + 1); /* one big value and one result at a time */
  int interleaved[4] = {0, 2, 1, 3}, pk2, b2;
  linearize_evaluate(&pr.p, interleaved, &pk2, &b2);
  assert_true(pk2 > peak);
}

static void test_cycle_rejected(void **state) {
  (void)state;
  Problem pr;
  problem_init(&pr, 2);
  pr.pred[0] = nodeset_of(1);
  pr.pred[1] = nodeset_of(0);
  int order[2], peak, bars;
  assert_false(linearize_order(&pr.p, order, &peak, &bars));
  problem_init(&pr, 30); /* the greedy path finds the cycle too */
  pr.pred[0] = nodeset_of(29);
  for (int c = 1; c < 30; c++) pr.pred[c] = nodeset_of(c - 1);
  int long_order[30];
  assert_false(linearize_order(&pr.p, long_order, &peak, &bars));
}

/* Above LIN_EXACT_CALLS calls: a topological order whose peak and barriers are what the brute
 * force counts, never above the node order's peak; and on independent chains with big
 * intermediates (a value live only inside its chain) the greedy order finishes a chain before
 * it starts the next, so one big value is live at a time. */
static void test_heuristic_above_the_dp(void **state) {
  (void)state;
  srand(99);
  for (int iter = 0; iter < 200; iter++) {
    Problem pr;
    random_problem(&pr, LIN_EXACT_CALLS + 1 + rand() % 40);
    const LinearizeProblem *p = &pr.p;
    int order[MAXC], identity[MAXC], peak, bars;
    assert_true(linearize_order(p, order, &peak, &bars));
    assert_true(is_topological(p, order));
    assert_int_equal(peak, brute_peak(p, order));
    assert_int_equal(bars, brute_barriers(p, order));
    for (int k = 0; k < p->ncalls; k++) identity[k] = k;
    assert_true(peak <= brute_peak(p, identity));
  }
  Problem pr;
  int nchains = 10;
  problem_init(&pr, 2 * nchains); /* chain i: load x_i -> call 2i -> big -> call 2i+1 -> out */
  int v = 0;
  for (int i = 0; i < nchains; i++) {
    pr.producer[v] = -1, pr.size[v] = 1, pr.consumers[v] = nodeset_of(i);
    v++;
  }
  for (int i = 0; i < nchains; i++) { /* calls i (first halves) then nchains + i (second) */
    pr.producer[v] = i, pr.size[v] = 81, pr.consumers[v] = nodeset_of(nchains + i);
    pr.pred[nchains + i] = nodeset_of(i);
    v++;
    pr.producer[v] = nchains + i, pr.size[v] = 1;
    v++;
  }
  pr.p.nvals = v;
  int order[MAXC], peak, bars;
  assert_true(linearize_order(&pr.p, order, &peak, &bars));
  assert_int_equal(peak, 81 + 1); /* the big value with its chain's input, or with its output */
  int identity[MAXC];
  for (int k = 0; k < pr.p.ncalls; k++) identity[k] = k;
  assert_true(brute_peak(&pr.p, identity) >= nchains * 81); /* node order: all bigs at once */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_against_permutations),
      cmocka_unit_test(test_chains_not_interleaved),
      cmocka_unit_test(test_cycle_rejected),
      cmocka_unit_test(test_heuristic_above_the_dp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
