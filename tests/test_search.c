/*
 * test_search.c — the search driver end to end on the seed specs: candidates are exact covers
 * of the DAG in an executable kernel order, ranked by predicted time (which is recomputed here
 * from the kernels and the launch overhead), the unfused candidate has one kernel per call, and
 * the speed targets hold (CPU time, skipped under sanitizers): stvenant top-10 < 0.5 s,
 * chain12 (12 calls) with max-fusion 8 and top-50 < 5 s.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  Library *lib;
  Spec *spec;
  Dag *dag;
  TimingDb *db;
} World;

static World load_world(const char *spec_path) {
  World w = {0};
  w.lib = library_load(TEST_LIBRARY);
  assert_non_null(w.lib);
  w.spec = spec_load(spec_path, w.lib);
  assert_non_null(w.spec);
  w.dag = dag_build(w.spec);
  assert_non_null(w.dag);
  w.db = timingdb_analytic();
  return w;
}

static void free_world(World *w) {
  dag_free(w->dag);
  spec_free(w->spec);
  timingdb_free(w->db);
  library_free(w->lib);
}

static bool sanitized(void) {
  const char *s = getenv("SAN");
  return s && !strcmp(s, "1");
}

/* Exact cover, executable order, and the predicted time recomputed. */
static void check_candidate(const Dag *dag, const TimingDb *db, const Candidate *c) {
  NodeSet done = nodeset_empty();
  double sum = 0;
  for (int k = 0; k < c->nkernels; k++) {
    const KernelPlan *p = c->kernels[k];
    assert_false(nodeset_intersects(&done, &p->nodes));
    for (int v = nodeset_next(&p->nodes, 0); v >= 0; v = nodeset_next(&p->nodes, v + 1)) {
      NodeSet unmet = nodeset_minus(nodeset_minus(dag->pred[v], p->nodes), done);
      assert_true(nodeset_is_empty(&unmet));
    }
    nodeset_unite(&done, &p->nodes);
    assert_int_equal(nodeset_count(&p->nodes), p->ncalls);
    sum += p->predicted_ns_per_elem;
  }
  NodeSet all = nodeset_range(0, dag->nnodes);
  assert_true(nodeset_equal(&done, &all));
  sum += c->nkernels * model_launch_overhead_ns(db) / 4194304.0;
  assert_true(fabs(sum - c->predicted_ns_per_elem) <= 1e-9 * (1 + sum));
}

static double run_and_check(const char *spec, int top, int maxf, int *ncands) {
  World w = load_world(spec);
  SearchOptions opt = {.top = top, .max_fusion = maxf, .progress = false};
  clock_t t0 = clock();
  SearchResult *r = search_run(w.dag, w.db, &opt);
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  assert_non_null(r);
  assert_true(r->ncands >= 1 && r->ncands <= top);
  for (int k = 0; k < r->ncands; k++) {
    assert_int_equal(r->cands[k].rank, k + 1);
    check_candidate(w.dag, w.db, &r->cands[k]);
    if (k) assert_true(r->cands[k - 1].predicted_ns_per_elem <= r->cands[k].predicted_ns_per_elem);
  }
  assert_non_null(r->unfused);
  assert_int_equal(r->unfused->nkernels, w.dag->nnodes);
  check_candidate(w.dag, w.db, r->unfused);
  /* The best candidate is no worse than the unfused one (unfused is a valid cover). */
  assert_true(r->cands[0].predicted_ns_per_elem <= r->unfused->predicted_ns_per_elem + 1e-12);
  assert_true(r->nplans >= w.dag->nnodes);
  *ncands = r->ncands;
  search_result_free(r);
  free_world(&w);
  return secs;
}

static void test_stvenant(void **state) {
  (void)state;
  int n;
  double secs = run_and_check(TEST_SPECS "/stvenant.spec", 10, 6, &n);
  assert_int_equal(n, 8); /* 4 chained calls: 2^3 contiguous partitions, all orderable */
  if (!sanitized()) assert_true(secs < 0.5);
}

static void test_chain12_speed(void **state) {
  (void)state;
  int n;
  double secs = run_and_check(TEST_SPECS "/chain12.spec", 50, 8, &n);
  assert_int_equal(n, 50);
  if (!sanitized()) assert_true(secs < 5.0);
}

static void test_other_seed_specs(void **state) {
  (void)state;
  const char *specs[] = {"bigfusion", "bigfusion_full", "synctest", "stvenant_inner"};
  for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s.spec", TEST_SPECS, specs[k]);
    int n;
    run_and_check(path, 10, 6, &n);
  }
}

/* A device on which no implementation can launch (2 threads per block, less than any E):
 * search_run reports the calls at their statements and returns NULL, no crash. */
static void test_nothing_fits(void **state) {
  (void)state;
  World w = load_world(TEST_SPECS "/stvenant.spec");
  w.db->dev.max_threads_per_block = 2;
  SearchOptions opt = {.top = 3, .max_fusion = 2};
  diag_reset();
  assert_null(search_run(w.dag, w.db, &opt));
  assert_int_equal(diag_error_count(), w.dag->nnodes);
  diag_reset();
  free_world(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stvenant),
      cmocka_unit_test(test_chain12_speed),
      cmocka_unit_test(test_other_seed_specs),
      cmocka_unit_test(test_nothing_fits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
