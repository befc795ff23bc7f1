/*
 * test_results.c — the order in which tune's and report's tables list a results file's rows
 * (src/results.c): results_rank_order against a brute force (the least rank not yet taken,
 * first in the file among equals, unranked rows last), on random files with ties and unranked
 * rows, and results_sort_by_rank moving the rows into that order.
 */
#include "testutil.h"

#include <limits.h>

/* A deterministic pseudo-random rank in [0, most]: 0 (unranked) about one row in six. */
static long random_rank(unsigned *state, long most) {
  *state = *state * 1103515245u + 12345u;
  unsigned v = (*state >> 8) & 0xffff;
  return v % 6 == 0 ? 0 : 1 + (long)(v / 6) % most;
}

/* The brute force: each place gets the first row in the file of the least rank left. */
static int *oracle_order(const Results *r) {
  int *order = xmalloc(sizeof *order * (size_t)r->nrows);
  bool *taken = xcalloc((size_t)r->nrows, sizeof *taken);
  for (int place = 0; place < r->nrows; place++) {
    int best = -1;
    long best_rank = 0;
    for (int i = 0; i < r->nrows; i++) {
      long rank = r->rows[i].predicted_rank ? r->rows[i].predicted_rank : LONG_MAX;
      if (!taken[i] && (best < 0 || rank < best_rank)) best = i, best_rank = rank;
    }
    taken[best] = true;
    order[place] = best;
  }
  free(taken);
  return order;
}

static Results random_results(unsigned *state, int nrows) {
  Results r = {.nrows = nrows, .rows = xcalloc((size_t)nrows, sizeof(ResultRow))};
  for (int i = 0; i < nrows; i++) {
    r.rows[i].predicted_rank = random_rank(state, nrows / 3 + 1); /* many ties */
    r.rows[i].measured_ns = i; /* which row it was in the file */
  }
  return r;
}

static void test_rank_order_is_the_brute_force(void **state) {
  (void)state;
  unsigned seed = 7;
  for (int trial = 0; trial < 200; trial++) {
    Results r = random_results(&seed, 1 + trial % 40);
    int *got = results_rank_order(&r), *want = oracle_order(&r);
    for (int i = 0; i < r.nrows; i++) assert_int_equal(got[i], want[i]);
    results_sort_by_rank(&r);
    for (int i = 0; i < r.nrows; i++) assert_int_equal((int)r.rows[i].measured_ns, want[i]);
    free(got), free(want), free(r.rows);
  }
}

/* Unranked rows go last even when the file gives them first, as "unfused" is listed. */
static void test_unranked_last(void **state) {
  (void)state;
  ResultRow rows[3] = {{.predicted_rank = 0}, {.predicted_rank = 2}, {.predicted_rank = 1}};
  Results r = {.nrows = 3, .rows = rows};
  int *order = results_rank_order(&r);
  assert_int_equal(order[0], 2);
  assert_int_equal(order[1], 1);
  assert_int_equal(order[2], 0);
  free(order);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rank_order_is_the_brute_force),
      cmocka_unit_test(test_unranked_last),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
