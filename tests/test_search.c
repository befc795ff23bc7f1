/*
 * test_search.c — the search driver end to end (src/search.c): candidates are exact covers of
 * the DAG in an executable kernel order, ranked by predicted time (recomputed here from the
 * kernels and the launch overhead), the unfused candidate has one kernel per call; the default
 * search's top 10 is the exhaustive search's top 10 (same partitions, same predicted times to
 * the printed precision) on every seed spec and on random specs of up to 10 calls written by the
 * test (mixed functions, branches, reused values, reassigned variables, several outputs); a
 * tiny time budget still ranks candidates and says it was cut; --variants adds block shapes of
 * the #1's costliest kernel in place of the last partitions; --n drives the predictions (the
 * default at 2^22, fewer kernels first at 4096); a device nothing fits on is reported per
 * call.  Speed is measured by benchmarks/search_times.sh, not here.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define H100_DB "benchmarks/nvidia-h100-80gb-hbm3.xml"

typedef struct {
  Library *lib;
  Spec *spec;
  Dag *dag;
  TimingDb *db;
} World;

static TimingDb *load_db(bool analytic) {
  if (analytic) return timingdb_analytic();
  TimingDb *db = timingdb_load(H100_DB);
  assert_non_null(db);
  return db;
}

static World world_from_spec(Spec *spec, Library *lib, bool analytic) {
  World w = {.lib = lib, .spec = spec};
  assert_non_null(w.spec);
  w.dag = dag_build(w.spec);
  assert_non_null(w.dag);
  w.db = load_db(analytic);
  return w;
}

static World load_world(const char *spec_path, bool analytic) {
  Library *lib = library_load(TEST_LIBRARY);
  assert_non_null(lib);
  return world_from_spec(spec_load(spec_path, lib), lib, analytic);
}

static void free_world(World *w) {
  dag_free(w->dag);
  spec_free(w->spec);
  timingdb_free(w->db);
  library_free(w->lib);
}

/* Exact cover, executable order, and the predicted time recomputed (each launch shared among
 * the n elements the search predicted for). */
static void check_candidate_at(const Dag *dag, const TimingDb *db, const Candidate *c, long n) {
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
  sum += c->nkernels * model_launch_overhead_ns(db) / (double)n;
  assert_true(fabs(sum - c->predicted_ns_per_elem) <= 1e-9 * (1 + sum));
}

static void check_candidate(const Dag *dag, const TimingDb *db, const Candidate *c) {
  check_candidate_at(dag, db, c, 4194304);
}

static SearchResult *search(const World *w, int top, int max_fusion, bool exhaustive) {
  SearchOptions opt = {.top = top, .max_fusion = max_fusion, .exhaustive = exhaustive};
  SearchResult *r = search_run(w->dag, w->db, &opt);
  assert_non_null(r);
  return r;
}

static void check_result(const World *w, const SearchResult *r, int top) {
  assert_true(r->ncands >= 1 && r->ncands <= top);
  for (int k = 0; k < r->ncands; k++) {
    assert_int_equal(r->cands[k].rank, k + 1);
    check_candidate(w->dag, w->db, &r->cands[k]);
    if (k) assert_true(r->cands[k - 1].predicted_ns_per_elem <= r->cands[k].predicted_ns_per_elem);
    for (int j = 0; j < k; j++) { /* distinct partitions */
      bool same = r->cands[j].nkernels == r->cands[k].nkernels;
      for (int a = 0; a < r->cands[k].nkernels && same; a++)
        same = nodeset_equal(&r->cands[j].kernels[a]->nodes, &r->cands[k].kernels[a]->nodes);
      assert_false(same);
    }
  }
  assert_non_null(r->unfused);
  assert_int_equal(r->unfused->nkernels, w->dag->nnodes);
  check_candidate(w->dag, w->db, r->unfused);
  /* The best candidate is no worse than the unfused one (unfused is a valid cover), and no
   * partition beats the compulsory-traffic bound. */
  assert_true(r->cands[0].predicted_ns_per_elem <= r->unfused->predicted_ns_per_elem + 1e-12);
  assert_true(r->cands[0].predicted_ns_per_elem >= r->stats.bound_ns);
  assert_true(r->nplans >= w->dag->nnodes);
}

/* The same ranking: the same partitions (kernels in execution order) with the same predicted
 * times as `kasgen plan` prints them. */
static void assert_same_ranking(const SearchResult *a, const SearchResult *b, const char *what) {
  if (a->ncands != b->ncands) fail_msg("%s: %d against %d candidates", what, a->ncands, b->ncands);
  for (int k = 0; k < a->ncands; k++) {
    const Candidate *x = &a->cands[k], *y = &b->cands[k];
    char px[32], py[32];
    snprintf(px, sizeof px, "%.6g", x->predicted_ns_per_elem);
    snprintf(py, sizeof py, "%.6g", y->predicted_ns_per_elem);
    if (strcmp(px, py)) fail_msg("%s: rank %d predicted %s against %s", what, k + 1, px, py);
    bool same = x->nkernels == y->nkernels;
    for (int j = 0; j < x->nkernels && same; j++)
      same = nodeset_equal(&x->kernels[j]->nodes, &y->kernels[j]->nodes);
    if (!same) fail_msg("%s: rank %d is another partition", what, k + 1);
  }
}

static void check_against_exhaustive(const World *w, const char *what) {
  double t0 = clock_seconds();
  SearchResult *def = search(w, 10, 0, false);
  double t1 = clock_seconds();
  SearchResult *ex = search(w, 10, 0, true);
  print_message("%d calls: default %.2f s (%ld combined), exhaustive %.2f s (%ld combined)\n",
                w->dag->nnodes, t1 - t0, def->stats.combined, clock_seconds() - t1,
                ex->stats.combined);
  check_result(w, def, 10);
  assert_int_equal(ex->stats.mode, SEARCH_EXHAUSTIVE);
  if (def->stats.mode != SEARCH_EXACT) fail_msg("%s: the default search was not exact", what);
  assert_same_ranking(def, ex, what);
  assert_true(def->stats.combined <= ex->stats.combined);
  search_result_free(def);
  search_result_free(ex);
}

static void test_seed_specs_match_exhaustive(void **state) {
  (void)state;
  const char *specs[] = {"stvenant", "stvenant_inner", "bigfusion", "bigfusion_full",
                         "synctest", "chain12"};
  for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s.spec", TEST_SPECS, specs[k]);
    for (int analytic = 0; analytic < 2; analytic++) {
      if (sanitized() && analytic) continue;
      World w = load_world(path, analytic);
      check_against_exhaustive(&w, specs[k]);
      free_world(&w);
    }
  }
}

/* ---- random specs --------------------------------------------------------------------------- */

/* Functions of the timing database, by signature; types: m matrix3x3, v vector3, s scalar,
 * t tensor3x3x3. */
typedef struct {
  const char *fn;
  char result;
  const char *params;
} Signature;

static const Signature SIGNATURES[] = {
    {"mmul33", 'm', "mm"},  {"madd33", 'm', "mm"},    {"mvmul33", 'v', "mv"},
    {"venorm3", 's', "v"},  {"smmul33", 'm', "ms"},   {"svmul3", 'v', "vs"},
    {"smimul33", 'm', "s"}, {"vvmulabs3", 's', "vv"}, {"ttmul311", 'm', "tv"},
    {"ttmul3212", 't', "tm"},
};
enum { NSIGNATURES = sizeof SIGNATURES / sizeof *SIGNATURES, MAXVARS = 64 };

static const char *type_name(char t) {
  return t == 'm' ? "matrix3x3" : t == 'v' ? "vector3" : t == 's' ? "scalar" : "tensor3x3x3";
}

/* The spec's variables while it is written: each with its type, whether it is an input,
 * whether its current version has been read, whether it is used at all. */
typedef struct {
  char name[8];
  char type;
  bool input, read, used;
} Var;

typedef struct {
  Var v[MAXVARS];
  int n;
} Vars;

static int add_var(Vars *vs, char type, bool input) {
  int k = vs->n++;
  vs->v[k] = (Var){.type = type, .input = input};
  snprintf(vs->v[k].name, sizeof vs->v[k].name, "%c%d", input ? 'i' : 'r', k);
  return k;
}

/* An argument of type t: mostly a recent result of that type (a branch or a reuse), else an
 * input. */
static int pick_argument(Vars *vs, char t) {
  int recent[MAXVARS], n = 0;
  for (int k = vs->n - 1; k >= 0 && n < 3; k--)
    if (!vs->v[k].input && vs->v[k].type == t) recent[n++] = k;
  if (n > 0 && rand() % 4 != 0) return recent[rand() % n];
  for (int k = 0; k < vs->n; k++)
    if (vs->v[k].input && vs->v[k].type == t && rand() % 2) return k;
  for (int k = 0; k < vs->n; k++)
    if (vs->v[k].input && vs->v[k].type == t) return k;
  return -1;
}

/* A random spec of ncalls calls: every unread result is returned, and now and then one that is
 * also read (an output feeding later calls); a variable whose value was read may be
 * reassigned (SSA). */
static char *random_spec(int ncalls) {
  Vars vs = {0};
  const char inputs[] = "mmvvst";
  for (int k = 0; inputs[k]; k++) add_var(&vs, inputs[k], true);
  StrBuf body;
  sb_init(&body);
  for (int c = 0; c < ncalls; c++) {
    const Signature *sig = &SIGNATURES[rand() % NSIGNATURES];
    int args[4], nargs = (int)strlen(sig->params);
    for (int a = 0; a < nargs; a++) {
      args[a] = pick_argument(&vs, sig->params[a]);
      vs.v[args[a]].read = vs.v[args[a]].used = true;
    }
    int result = -1;
    for (int k = 0; k < vs.n && rand() % 5 == 0; k++) /* reassign a read variable */
      if (!vs.v[k].input && vs.v[k].type == sig->result && vs.v[k].read) result = k;
    if (result < 0) result = add_var(&vs, sig->result, false);
    vs.v[result].read = false;
    vs.v[result].used = true;
    sb_printf(&body, "%s = %s(", vs.v[result].name, sig->fn);
    for (int a = 0; a < nargs; a++) sb_printf(&body, "%s%s", a ? ", " : "", vs.v[args[a]].name);
    sb_puts(&body, ");\n");
  }
  StrBuf text;
  sb_init(&text);
  for (int k = 0; k < vs.n; k++)
    if (vs.v[k].used) sb_printf(&text, "%s %s;\n", type_name(vs.v[k].type), vs.v[k].name);
  sb_puts(&text, "input");
  int first = 1;
  for (int k = 0; k < vs.n; k++)
    if (vs.v[k].input && vs.v[k].used) {
      sb_printf(&text, "%s %s", first ? "" : ",", vs.v[k].name);
      first = 0;
    }
  sb_printf(&text, ";\n%s", body.data);
  sb_puts(&text, "return");
  first = 1;
  bool extra = false;
  for (int k = 0; k < vs.n; k++) {
    bool ret = !vs.v[k].input && vs.v[k].used && (!vs.v[k].read || (!extra && rand() % 3 == 0));
    if (!vs.v[k].input && vs.v[k].read && ret) extra = true;
    if (ret) sb_printf(&text, "%s %s", first ? "" : ",", vs.v[k].name), first = 0;
  }
  sb_puts(&text, ";\n");
  sb_free(&body);
  return sb_take(&text);
}

static void test_random_specs_match_exhaustive(void **state) {
  (void)state;
  Library *lib = library_load(TEST_LIBRARY);
  assert_non_null(lib);
  srand(20261123);
  int nspecs = sanitized() ? 6 : 30, checked = 0, outputs = 0;
  for (int s = 0; s < nspecs; s++) {
    int ncalls = 3 + s % 8; /* 3..10 */
    char *text = random_spec(ncalls);
    char name[32];
    snprintf(name, sizeof name, "random%d.spec", s);
    diag_reset();
    Spec *spec = spec_parse(name, text, lib);
    if (!spec) fail_msg("the generated spec does not parse:\n%s", text);
    World w = world_from_spec(spec, NULL, s % 3 == 2);
    outputs += w.dag->noutputs;
    check_against_exhaustive(&w, text);
    checked++;
    w.lib = NULL;
    free_world(&w);
    free(text);
  }
  library_free(lib);
  assert_int_equal(checked, nspecs);
  assert_true(outputs > nspecs); /* several outputs on some */
}

/* ---- limits ------------------------------------------------------------------------------- */

/* A time budget too small for the search still ranks candidates (the singles are always
 * planned), and says it was cut. */
static void test_time_limit(void **state) {
  (void)state;
  World w = load_world("tests/specs/big40.spec", false);
  SearchOptions opt = {.top = 5, .time_limit = 1e-6};
  SearchResult *r = search_run(w.dag, w.db, &opt);
  assert_non_null(r);
  assert_true(r->stats.timed_out);
  assert_true(r->ncands >= 1);
  check_result(&w, r, 5);
  search_result_free(r);
  free_world(&w);
}

/* --max-fusion caps kernels and says so; without it a kernel as large as the spec is found
 * (chain12's best is one kernel of its 12 calls). */
static void test_max_fusion(void **state) {
  (void)state;
  World w = load_world(TEST_SPECS "/chain12.spec", false);
  SearchResult *capped = search(&w, 10, 4, false), *free_ = search(&w, 10, 0, false);
  check_result(&w, capped, 10);
  check_result(&w, free_, 10);
  assert_true(capped->stats.capped);
  assert_false(free_->stats.capped);
  for (int k = 0; k < capped->ncands; k++)
    for (int j = 0; j < capped->cands[k].nkernels; j++)
      assert_true(capped->cands[k].kernels[j]->ncalls <= 4);
  assert_int_equal(free_->cands[0].nkernels, 1);
  assert_true(free_->cands[0].predicted_ns_per_elem < capped->cands[0].predicted_ns_per_elem);
  search_result_free(capped);
  search_result_free(free_);
  free_world(&w);
}

/* A spec with more convex fusions than the exact search takes is ranked by intervals of node
 * order, and says so. */
static void test_intervals_beyond_the_exact_limit(void **state) {
  (void)state;
  World w = load_world("tests/specs/big40.spec", false);
  SearchResult *r = search(&w, 3, 0, false);
  check_result(&w, r, 3);
  assert_int_equal(r->stats.mode, SEARCH_INTERVALS);
  assert_true(r->stats.too_many);
  for (int k = 0; k < r->ncands; k++) /* intervals: every kernel a run of consecutive calls */
    for (int j = 0; j < r->cands[k].nkernels; j++) {
      const NodeSet *s = &r->cands[k].kernels[j]->nodes;
      int lo = nodeset_next(s, 0), hi = nodeset_last(s);
      assert_int_equal(hi - lo + 1, nodeset_count(s));
    }
  search_result_free(r);
  free_world(&w);
}

/* ---- other block shapes (--variants) -------------------------------------------------- */

static bool same_shape(const KernelPlan *a, const KernelPlan *b) {
  return a->e == b->e && a->threads == b->threads;
}

/* The best plan of shape (e, threads) among every plan of the fusion, or NULL. */
static const KernelPlan *best_of_shape(KernelPlan **all, int n, const KernelPlan *shape) {
  const KernelPlan *best = NULL;
  for (int i = 0; i < n; i++)
    if (same_shape(all[i], shape) &&
        (!best || all[i]->predicted_ns_per_elem < best->predicted_ns_per_elem))
      best = all[i];
  return best;
}

/* --variants K: up to K of the top N are the #1 with its costliest kernel in other block
 * shapes, each a distinct shape other than the #1's, the rest of the #1 unchanged, no faster
 * than the #1 (its plan is the beam's best of every shape); they take the places of the last
 * partitions of the ranking without them, which keeps its order.  On stvenant (the #1 one
 * kernel of 4 calls) each variant is the best plan of its shape that any choice gives
 * (combine_fusion with keep_all, the brute-force oracle). */
static void check_variants(const char *spec, int top, int k, bool oracle) {
  World w = load_world(spec, false);
  SearchOptions plain = {.top = top}, with = {.top = top, .variants = k};
  SearchResult *r0 = search_run(w.dag, w.db, &plain), *r = search_run(w.dag, w.db, &with);
  assert_non_null(r0);
  assert_non_null(r);
  int nv = r->stats.variants, costliest = 0;
  assert_true(nv >= 1 && nv <= k);
  assert_int_equal(r->stats.variants_asked, k);
  assert_true(r->ncands <= top);
  const Candidate *best = &r->cands[0]; /* the #1: its plans are the variants' own */
  assert_int_equal(best->shape_of, 0);
  for (int i = 1; i < best->nkernels; i++)
    if (best->kernels[i]->predicted_ns_per_elem > best->kernels[costliest]->predicted_ns_per_elem)
      costliest = i;
  SearchContext *ctx = search_context_new(w.dag, w.db, NULL);
  int nall = 0;
  KernelPlan **all = oracle ? combine_fusion(ctx, best->kernels[costliest]->nodes, true, &nall)
                            : NULL;
  int partitions = 0, seen = 0;
  for (int c = 0; c < r->ncands; c++) {
    const Candidate *x = &r->cands[c];
    check_candidate(w.dag, w.db, x);
    assert_int_equal(x->rank, c + 1);
    if (c) assert_true(r->cands[c - 1].predicted_ns_per_elem <= x->predicted_ns_per_elem);
    if (!x->shape_of) { /* the ranking without variants, in order */
      const Candidate *y = &r0->cands[partitions++];
      assert_int_equal(x->nkernels, y->nkernels);
      for (int j = 0; j < x->nkernels; j++)
        assert_true(nodeset_equal(&x->kernels[j]->nodes, &y->kernels[j]->nodes));
      assert_true(x->predicted_ns_per_elem == y->predicted_ns_per_elem);
      continue;
    }
    seen++;
    assert_int_equal(x->shape_of, costliest + 1);
    assert_int_equal(x->nkernels, best->nkernels);
    for (int j = 0; j < x->nkernels; j++) {
      assert_true(nodeset_equal(&x->kernels[j]->nodes, &best->kernels[j]->nodes));
      if (j != costliest) assert_ptr_equal(x->kernels[j], best->kernels[j]);
    }
    const KernelPlan *p = x->kernels[costliest];
    assert_false(same_shape(p, best->kernels[costliest]));
    for (int d = 0; d < c; d++)
      if (r->cands[d].shape_of) assert_false(same_shape(p, r->cands[d].kernels[costliest]));
    assert_true(x->predicted_ns_per_elem >= best->predicted_ns_per_elem);
    if (oracle) {
      const KernelPlan *o = best_of_shape(all, nall, p);
      assert_non_null(o);
      if (fabs(o->predicted_ns_per_elem - p->predicted_ns_per_elem) > 1e-12)
        fail_msg("a variant E=%d, %d threads: %.6g, the best of its shape %.6g", p->e, p->threads,
                 p->predicted_ns_per_elem, o->predicted_ns_per_elem);
    }
  }
  assert_int_equal(seen, nv);
  assert_int_equal(partitions + nv, r->ncands);
  assert_int_equal(r->stats.partitions_out, r0->ncands - partitions);
  for (int i = 0; i < nall; i++) kernel_plan_free(all[i]);
  free(all);
  search_context_free(ctx);
  search_result_free(r0);
  search_result_free(r);
  free_world(&w);
}

static void test_shape_variants(void **state) {
  (void)state;
  check_variants(TEST_SPECS "/stvenant.spec", 10, 5, true);
  check_variants(TEST_SPECS "/chain12.spec", 10, 3, false);
  check_variants(TEST_SPECS "/stvenant.spec", 2, 5, false); /* at most N - 1 */
}

/* Whether r's candidates come in order of their kernel counts. */
static bool by_kernel_count(const SearchResult *r) {
  for (int c = 1; c < r->ncands; c++)
    if (r->cands[c].nkernels < r->cands[c - 1].nkernels) return false;
  return true;
}

/* --n drives the model (docs/model.md, "The element count"): n = 2^22 is the default's ranking,
 * the same partitions at the same predicted times; at n = 4096 each launch weighs 1024 times as
 * much, and stvenant's candidates of more kernels, which at 2^22 rank among fewer-kernel ones
 * (a three-kernel candidate before a two-kernel one), fall behind every candidate of fewer
 * kernels (the H200's n sweep, benchmarks/RESULTS.md, session 45: about 4.5 us a kernel at
 * n = 4096).  Every candidate's prediction grows as n shrinks. */
static void test_element_count(void **state) {
  (void)state;
  World w = load_world(TEST_SPECS "/stvenant.spec", false);
  SearchOptions dflt = {.top = 10}, same = {.top = 10, .n = 4194304},
                small = {.top = 10, .n = 4096};
  SearchResult *r0 = search_run(w.dag, w.db, &dflt), *r1 = search_run(w.dag, w.db, &same),
               *r2 = search_run(w.dag, w.db, &small);
  assert_non_null(r0), assert_non_null(r1), assert_non_null(r2);
  assert_int_equal(r0->n, 4194304);
  assert_int_equal(r2->n, 4096);
  assert_int_equal(r0->ncands, r1->ncands);
  for (int c = 0; c < r0->ncands; c++) {
    const Candidate *x = &r0->cands[c], *y = &r1->cands[c];
    assert_true(x->predicted_ns_per_elem == y->predicted_ns_per_elem);
    assert_int_equal(x->nkernels, y->nkernels);
    for (int k = 0; k < x->nkernels; k++)
      assert_true(nodeset_equal(&x->kernels[k]->nodes, &y->kernels[k]->nodes));
  }
  assert_false(by_kernel_count(r0));
  assert_true(by_kernel_count(r2));
  for (int c = 0; c < r2->ncands; c++) check_candidate_at(w.dag, w.db, &r2->cands[c], 4096);
  check_candidate_at(w.dag, w.db, r2->unfused, 4096);
  assert_true(r2->cands[0].predicted_ns_per_elem > r0->cands[0].predicted_ns_per_elem +
                                                       model_launch_share_ns(w.db, 4096) / 2);
  search_result_free(r0);
  search_result_free(r1);
  search_result_free(r2);
  free_world(&w);
}

/* A device on which no implementation can launch (2 threads per block, less than any E):
 * search_run reports the calls at their statements and returns NULL, no crash. */
static void test_nothing_fits(void **state) {
  (void)state;
  World w = load_world(TEST_SPECS "/stvenant.spec", true);
  w.db->dev.max_threads_per_block = 2;
  SearchOptions opt = {.top = 3, .max_fusion = 2};
  diag_reset();
  capture_start();
  SearchResult *r = search_run(w.dag, w.db, &opt);
  free(capture_end());
  assert_null(r);
  assert_int_equal(diag_error_count(), w.dag->nnodes);
  diag_reset();
  free_world(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_seed_specs_match_exhaustive),
      cmocka_unit_test(test_random_specs_match_exhaustive),
      cmocka_unit_test(test_time_limit),
      cmocka_unit_test(test_max_fusion),
      cmocka_unit_test(test_intervals_beyond_the_exact_limit),
      cmocka_unit_test(test_shape_variants),
      cmocka_unit_test(test_element_count),
      cmocka_unit_test(test_nothing_fits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
