/*
 * test_fusion.c — fusion enumeration against a brute-force oracle.  The oracle shares no code
 * with fusion.c: it tries every subset of the nodes and decides convexity by searching paths in
 * an adjacency matrix (no reachability bitsets); it orders its answer by sorting index arrays.
 * On 300 random DAGs of up to 14 nodes and every k, fusion_enumerate must return exactly the
 * oracle's list, in the same order.  Also: the seed chains' counts, and the speed on 40 calls.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "front_fake_library.h"

enum { MAXN = 14 };

typedef struct {
  int n;
  bool adj[MAXN][MAXN]; /* adj[u][v]: edge u -> v, only u < v */
} Graph;

/* ---- the oracle ---------------------------------------------------------------------------- */

/* Can `from` reach any node of `set` by a path of one or more edges? Plain DFS. */
static bool reaches_set(const Graph *g, int from, unsigned set) {
  bool seen[MAXN] = {0};
  int stack[MAXN], top = 0;
  stack[top++] = from;
  seen[from] = true;
  while (top) {
    int u = stack[--top];
    for (int v = 0; v < g->n; v++) {
      if (!g->adj[u][v] || seen[v]) continue;
      if (set & (1u << v)) return true;
      seen[v] = true;
      stack[top++] = v;
    }
  }
  return false;
}

/* docs/design.md §6.1 literally: for every edge (u, v) with u in F and v not in F, no path from v
 * leads back into F. */
static bool oracle_convex(const Graph *g, unsigned set) {
  for (int u = 0; u < g->n; u++) {
    if (!(set & (1u << u))) continue;
    for (int v = 0; v < g->n; v++)
      if (g->adj[u][v] && !(set & (1u << v)) && reaches_set(g, v, set)) return false;
  }
  return true;
}

typedef struct {
  int size;
  int idx[MAXN];
} IndexList;

static int cmp_index_lists(const void *pa, const void *pb) {
  const IndexList *a = pa, *b = pb;
  if (a->size != b->size) return a->size - b->size;
  for (int i = 0; i < a->size; i++)
    if (a->idx[i] != b->idx[i]) return a->idx[i] - b->idx[i];
  return 0;
}

/* Every convex subset of size 1..k, sorted by size then lexicographically by node indices. */
static IndexList *oracle_enumerate(const Graph *g, int k, int *count) {
  IndexList *out = xmalloc(sizeof(IndexList) << g->n);
  int m = 0;
  for (unsigned set = 1; set < (1u << g->n); set++) {
    IndexList l = {0};
    for (int i = 0; i < g->n; i++)
      if (set & (1u << i)) l.idx[l.size++] = i;
    if (l.size <= k && oracle_convex(g, set)) out[m++] = l;
  }
  qsort(out, (size_t)m, sizeof *out, cmp_index_lists);
  *count = m;
  return out;
}

/* ---- graphs as Dags ------------------------------------------------------------------------- */

/* The Dag fields fusion.c reads: nnodes, succ, pred, reach (closure by Warshall's algorithm). */
static Dag *dag_from_graph(const Graph *g) {
  Dag *d = xcalloc(1, sizeof *d);
  d->nnodes = g->n;
  d->succ = xcalloc((size_t)g->n, sizeof(NodeSet));
  d->pred = xcalloc((size_t)g->n, sizeof(NodeSet));
  d->reach = xcalloc((size_t)g->n, sizeof(NodeSet));
  bool r[MAXN][MAXN];
  memcpy(r, g->adj, sizeof r);
  for (int w = 0; w < g->n; w++)
    for (int u = 0; u < g->n; u++)
      for (int v = 0; v < g->n; v++) r[u][v] = r[u][v] || (r[u][w] && r[w][v]);
  for (int u = 0; u < g->n; u++)
    for (int v = 0; v < g->n; v++) {
      if (g->adj[u][v]) {
        nodeset_add(&d->succ[u], v);
        nodeset_add(&d->pred[v], u);
      }
      if (r[u][v]) nodeset_add(&d->reach[u], v);
    }
  return d;
}

static void free_graph_dag(Dag *d) {
  free(d->succ);
  free(d->pred);
  free(d->reach);
  free(d);
}

static Graph random_graph(int n, double p) {
  Graph g = {.n = n};
  for (int u = 0; u < n; u++)
    for (int v = u + 1; v < n; v++) g.adj[u][v] = rand() < p * RAND_MAX;
  return g;
}

static NodeSet list_to_set(const IndexList *l) {
  NodeSet s = nodeset_empty();
  for (int i = 0; i < l->size; i++) nodeset_add(&s, l->idx[i]);
  return s;
}

/* ---- tests ------------------------------------------------------------------------------------ */

static void test_against_oracle(void **state) {
  (void)state;
  srand(20261121);
  const double densities[] = {0.0, 0.1, 0.2, 0.35, 0.6, 1.0};
  long compared = 0;
  int graphs = 300;
  for (int t = 0; t < graphs; t++) {
    int n = 1 + t % MAXN;
    Graph g = random_graph(n, densities[(t / MAXN) % 6]);
    Dag *d = dag_from_graph(&g);
    for (int k = 1; k <= n; k++) {
      int m;
      IndexList *want = oracle_enumerate(&g, k, &m);
      FusionSet got = fusion_enumerate(d, k);
      assert_false(got.truncated);
      if (got.n != m) fail_msg("graph %d (n=%d) k=%d: %d fusions, oracle %d", t, n, k, got.n, m);
      long counted = fusion_count_until(d, k, KAS_MAX_FUSIONS, 0);
      if (counted != m)
        fail_msg("graph %d (n=%d) k=%d: %ld counted, oracle %d", t, n, k, counted, m);
      if (m > 1) /* one over the limit: limit + 1, whatever the true count */
        assert_int_equal(fusion_count_until(d, k, m - 1, 0), m);
      for (int i = 0; i < m; i++)
        if (set_mask(fusion_set_get(&got, i)) != set_mask(list_to_set(&want[i])))
          fail_msg("graph %d (n=%d) k=%d: fusion %d differs from the oracle", t, n, k, i);
      compared += m;
      fusion_set_free(&got);
      free(want);
    }
    /* fusion_is_convex agrees with the oracle on every subset, convex or not. */
    for (unsigned set = 1; set < (1u << n); set++)
      assert_int_equal(fusion_is_convex(d, mask_set(set)), oracle_convex(&g, set));
    free_graph_dag(d);
  }
  print_message("%d random DAGs, every k: %ld fusions identical to the oracle\n", graphs,
                compared);
}

/* Disconnected sets count (horizontal fusion), and sizes above n are clamped. */
static void test_edgeless_and_chain(void **state) {
  (void)state;
  Graph g = {.n = 5};
  Dag *d = dag_from_graph(&g);
  FusionSet fs = fusion_enumerate(d, 10);
  assert_int_equal(fs.n, 31); /* every non-empty subset */
  fusion_set_free(&fs);
  fs = fusion_enumerate(d, 2);
  assert_int_equal(fs.n, 5 + 10);
  assert_int_equal(set_mask(fusion_set_get(&fs, 5)), 0x3); /* {0,1} is the first pair */
  assert_int_equal(set_mask(fusion_set_get(&fs, 14)), 0x18); /* {3,4} the last */
  fusion_set_free(&fs);
  free_graph_dag(d);

  for (int u = 0; u + 1 < 5; u++) g.adj[u][u + 1] = true; /* chain: intervals only */
  d = dag_from_graph(&g);
  fs = fusion_enumerate(d, 5);
  assert_int_equal(fs.n, 15);
  assert_false(fusion_is_convex(d, mask_set(0x5))); /* {0,2} skips 1 */
  fusion_set_free(&fs);
  fs = fusion_enumerate(d, 0);
  assert_int_equal(fs.n, 0);
  fusion_set_free(&fs);
  free_graph_dag(d);
}

/* The deadline (--exhaustive's count under --time-limit): one already past stops the count of
 * 40 independent calls' 2^40 - 1 sets at its first look at the clock, flagged as timed out, not
 * truncated; one far ahead changes nothing. */
static void test_enumerate_until(void **state) {
  (void)state;
  enum { N = 40 };
  Dag *d = xcalloc(1, sizeof *d); /* no edges: succ, pred and reach empty */
  d->nnodes = N;
  d->succ = xcalloc(N, sizeof(NodeSet));
  d->pred = xcalloc(N, sizeof(NodeSet));
  d->reach = xcalloc(N, sizeof(NodeSet));
  FusionSet fs = fusion_enumerate_until(d, N, KAS_MAX_FUSIONS, clock_seconds() - 1);
  assert_true(fs.timed_out);
  assert_false(fs.truncated);
  assert_true(fs.n > 0 && fs.n <= 1 << 16); /* the clock is read every 2^16 extensions */
  fusion_set_free(&fs);
  assert_int_equal(fusion_count_until(d, N, KAS_MAX_FUSIONS, clock_seconds() - 1), -1);
  /* 2^40 - 1 sets: past the limit, counted without keeping them (no 320 MB of sets) */
  assert_int_equal(fusion_count_until(d, N, KAS_MAX_FUSIONS, 0), KAS_MAX_FUSIONS + 1L);
  free_graph_dag(d);
  Graph g = {.n = 5};
  d = dag_from_graph(&g);
  fs = fusion_enumerate_until(d, 5, KAS_MAX_FUSIONS, clock_seconds() + 3600);
  assert_false(fs.timed_out);
  assert_int_equal(fs.n, 31);
  fusion_set_free(&fs);
  free_graph_dag(d);
}

static Dag *load_dag(const char *path, const Library *lib, Spec **sp_out) {
  Spec *sp = spec_load(path, lib);
  assert_non_null(sp);
  *sp_out = sp;
  return dag_build(sp);
}

/* SyncTest is a chain of 4 calls: 4 + 3 + 2 + 1 intervals.  StVenant is a chain too.
 * BigFusion: chain 0-1-2 feeding 4, and 3 feeding 4; counted by hand. */
static void test_seed_counts(void **state) {
  (void)state;
  Library *lib = fake_library();
  Spec *sp;
  Dag *d = load_dag(TEST_SPECS "/synctest.spec", lib, &sp);
  FusionSet fs = fusion_enumerate(d, 6);
  assert_int_equal(fs.n, 10);
  fusion_set_free(&fs);
  fs = fusion_enumerate(d, 2);
  assert_int_equal(fs.n, 7);
  fusion_set_free(&fs);
  dag_free(d);
  spec_free(sp);

  /* BigFusion: edges 0->1->2->4 and 3->4.  Node 3 has no predecessor and 4 no successor, so
   * neither can lie between two nodes of a set: a set is convex iff its part of the chain
   * 0-1-2-4 is an interval (10 non-empty + the empty one), with 3 in or out: 11 * 2 - 1 = 21. */
  d = load_dag(TEST_SPECS "/bigfusion.spec", lib, &sp);
  fs = fusion_enumerate(d, 5);
  assert_int_equal(fs.n, 21);
  assert_false(fusion_is_convex(d, mask_set(0x1 | 0x4))); /* {mmul33, venorm3} skips mvmul33 */
  assert_true(fusion_is_convex(d, mask_set(0x1 | 0x8)));  /* {mmul33, mmul55}: horizontal */
  fusion_set_free(&fs);
  dag_free(d);
  spec_free(sp);
  fake_library_free(lib);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* 40 calls, k = 6: must take well under 2 s; the result is sorted, unique and convex. */
static void test_big40_speed(void **state) {
  (void)state;
  Library *lib = fake_library();
  Spec *sp;
  Dag *d = load_dag("tests/specs/big40.spec", lib, &sp);
  assert_int_equal(d->nnodes, 40);
  double t0 = now_s();
  FusionSet fs = fusion_enumerate(d, 6);
  double dt = now_s() - t0;
  print_message("big40, k=6: %d valid fusions in %.3f s\n", fs.n, dt);
  assert_true(dt < 2.0);
  assert_true(fs.n > 40);
  for (int i = 0; i < fs.n; i++) {
    NodeSet set = fusion_set_get(&fs, i);
    if (i % 97 == 0) assert_true(fusion_is_convex(d, set));
    if (i) {
      uint64_t a = set_mask(fusion_set_get(&fs, i - 1)), b = set_mask(set);
      int pa = __builtin_popcountll(a), pb = __builtin_popcountll(b);
      uint64_t diff = a ^ b;
      assert_true(diff != 0);
      /* same size: the earlier set holds the lowest node where they differ */
      assert_true(pa < pb || (pa == pb && (a & diff & -diff)));
    }
  }
  fusion_set_free(&fs);
  dag_free(d);
  spec_free(sp);
  fake_library_free(lib);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_against_oracle),
      cmocka_unit_test(test_edgeless_and_chain),
      cmocka_unit_test(test_enumerate_until),
      cmocka_unit_test(test_seed_counts),
      cmocka_unit_test(test_big40_speed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
