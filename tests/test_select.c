/*
 * test_select.c — selection of partitions with lp_solve (src/select.c): against a brute-force
 * enumeration of every exact cover on random small instances, the cyclic-pair case (two convex
 * fusions that depend on each other both ways), duplicates, infeasibility, and ignored items.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The test's own sets are 64-bit masks (bit i = node i); the selector's are NodeSets. */
typedef uint64_t Mask;

/* A DAG with only what selection reads: nnodes and succ (plus pred and reach, for convexity);
 * succm and reachm keep the same relations as masks for the brute force. */
static Mask succm[64], reachm[64];

static Dag *make_dag(int n, const int (*edges)[2], int nedges) {
  Dag *d = calloc(1, sizeof *d);
  d->nnodes = n;
  d->succ = calloc((size_t)n, sizeof(NodeSet));
  d->pred = calloc((size_t)n, sizeof(NodeSet));
  d->reach = calloc((size_t)n, sizeof(NodeSet));
  memset(succm, 0, sizeof succm);
  memset(reachm, 0, sizeof reachm);
  for (int e = 0; e < nedges; e++) {
    nodeset_add(&d->succ[edges[e][0]], edges[e][1]);
    nodeset_add(&d->pred[edges[e][1]], edges[e][0]);
    succm[edges[e][0]] |= (Mask)1 << edges[e][1];
  }
  for (int u = n - 1; u >= 0; u--) /* edges go from lower to higher indices */
    for (int v = 0; v < n; v++)
      if (succm[u] >> v & 1) reachm[u] |= ((Mask)1 << v) | reachm[v];
  for (int u = 0; u < n; u++) d->reach[u] = mask_set(reachm[u]);
  return d;
}

static void free_dag(Dag *d) {
  free(d->succ);
  free(d->pred);
  free(d->reach);
  free(d);
}

static bool convex(const Dag *d, Mask s) {
  for (int u = 0; u < d->nnodes; u++) {
    if (!(s >> u & 1)) continue;
    for (int v = 0; v < d->nnodes; v++)
      if ((succm[u] >> v & 1) && !(s >> v & 1) && (reachm[v] & s)) return false;
  }
  return true;
}

static SelectItem item(Mask nodes, double cost) { return (SelectItem){mask_set(nodes), cost}; }

static bool orderable(const Dag *d, const Mask *parts, int nparts) {
  NodeSet sets[64];
  for (int k = 0; k < nparts; k++) sets[k] = mask_set(parts[k]);
  return select_partition_orderable(d, sets, nparts);
}

static void free_solutions(int **sols, int n) {
  for (int i = 0; i < n; i++) free(sols[i]);
  free(sols);
}

static double solution_cost(const SelectItem *items, const int *sol, Mask *cover) {
  double c = 0;
  *cover = 0;
  for (int k = 0; sol[k] >= 0; k++) {
    Mask m = set_mask(items[sol[k]].nodes);
    assert_int_equal(*cover & m, 0); /* disjoint */
    *cover |= m;
    c += items[sol[k]].cost;
  }
  return c;
}

/* ---- brute force ------------------------------------------------------------------------ */

typedef struct {
  double cost;
  Mask parts[64];
  int nparts;
} Cover;

typedef struct {
  Cover *v;
  int n, cap;
} Covers;

static void enumerate(const Dag *d, const SelectItem *it, int nit, Mask covered, Cover *cur,
                      Covers *out) {
  Mask all = ((Mask)1 << d->nnodes) - 1;
  if (covered == all) {
    if (!orderable(d, cur->parts, cur->nparts)) return;
    /* the same partition through another item of equal node set: keep the cheaper one */
    for (int i = 0; i < out->n; i++) {
      Cover *o = &out->v[i];
      if (o->nparts != cur->nparts) continue;
      int same = 0;
      for (int a = 0; a < o->nparts; a++)
        for (int b = 0; b < cur->nparts; b++) same += o->parts[a] == cur->parts[b];
      if (same == o->nparts) {
        if (cur->cost < o->cost) o->cost = cur->cost;
        return;
      }
    }
    if (out->n == out->cap) {
      out->cap = out->cap ? 2 * out->cap : 64;
      out->v = realloc(out->v, sizeof *out->v * (size_t)out->cap);
    }
    out->v[out->n++] = *cur;
    return;
  }
  int low = __builtin_ctzll(~covered & all);
  for (int i = 0; i < nit; i++) {
    Mask m = set_mask(it[i].nodes);
    if (!(m >> low & 1) || (m & covered) || !isfinite(it[i].cost)) continue;
    cur->parts[cur->nparts++] = m;
    cur->cost += it[i].cost;
    enumerate(d, it, nit, covered | m, cur, out);
    cur->cost -= it[i].cost;
    cur->nparts--;
  }
}

static int cmp_cover(const void *a, const void *b) {
  double x = ((const Cover *)a)->cost, y = ((const Cover *)b)->cost;
  return (x > y) - (x < y);
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_random_vs_brute_force(void **state) {
  (void)state;
  srand(12345);
  int checked_solutions = 0;
  for (int round = 0; round < 60; round++) {
    int n = 2 + rand() % 7; /* 2..8 nodes */
    int edges[64][2], ne = 0;
    for (int u = 0; u < n; u++)
      for (int v = u + 1; v < n; v++)
        if (rand() % 3 == 0 && ne < 64) {
          edges[ne][0] = u;
          edges[ne][1] = v;
          ne++;
        }
    Dag *d = make_dag(n, edges, ne);
    /* items: every convex set of size <= 3, some twice with another cost */
    SelectItem items[600];
    int nit = 0;
    for (Mask s = 1; s < ((Mask)1 << n) && nit < 590; s++) {
      if (__builtin_popcountll(s) > 3 || !convex(d, s)) continue;
      items[nit++] = item(s, 1 + rand() % 1000 / 100.0);
      if (rand() % 5 == 0) items[nit++] = item(s, 1 + rand() % 1000 / 100.0);
    }
    Covers all = {0};
    Cover cur = {0};
    enumerate(d, items, nit, 0, &cur, &all);
    qsort(all.v, (size_t)all.n, sizeof *all.v, cmp_cover);
    int top = 1 + rand() % 8;
    int **sols;
    int ns = select_top_partitions(d, items, nit, top, &sols);
    assert_int_equal(ns, all.n < top ? all.n : top);
    double prev = -1;
    for (int r = 0; r < ns; r++) {
      Mask cover;
      double c = solution_cost(items, sols[r], &cover);
      assert_int_equal(cover, ((Mask)1 << n) - 1);
      assert_true(c >= prev - 1e-9); /* non-decreasing */
      assert_float_equal(c, all.v[r].cost, 1e-6); /* the r-th best cost */
      Mask parts[64];
      int np = 0;
      for (int k = 0; sols[r][k] >= 0; k++) parts[np++] = set_mask(items[sols[r][k]].nodes);
      assert_true(orderable(d, parts, np));
      /* distinct partitions */
      for (int q = 0; q < r; q++) {
        int same = 0, nq = 0;
        for (int k = 0; sols[q][k] >= 0; k++, nq++)
          for (int m = 0; m < np; m++) same += set_mask(items[sols[q][k]].nodes) == parts[m];
        assert_false(same == nq && nq == np);
      }
      prev = c;
      checked_solutions++;
    }
    free_solutions(sols, ns);
    free(all.v);
    free_dag(d);
  }
  assert_true(checked_solutions > 100);
}

/* a→b, c→d.  {a,d} and {b,c} are both convex, but kernel {a,d} must run before {b,c} (a→b) and
 * after it (c→d): the cheapest cover is cyclic and must not be returned. */
static void test_cyclic_pair(void **state) {
  (void)state;
  enum { A, B, C, D };
  const int edges[][2] = {{A, B}, {C, D}};
  Dag *d = make_dag(4, edges, 2);
  Mask ad = 1 << A | 1 << D, bc = 1 << B | 1 << C;
  assert_true(convex(d, ad));
  assert_true(convex(d, bc));
  Mask pair[2] = {ad, bc};
  assert_false(orderable(d, pair, 2));
  SelectItem items[] = {item(ad, 1),      item(bc, 1),      item(1 << A, 1.5),
                        item(1 << B, 1.5), item(1 << C, 1.5), item(1 << D, 1.6)};
  int **sols;
  int ns = select_top_partitions(d, items, 6, 10, &sols);
  assert_int_equal(ns, 3); /* {ad,b,c} 4.0, {bc,a,d} 4.1, singletons 6.1 */
  Mask cover;
  assert_float_equal(solution_cost(items, sols[0], &cover), 4.0, 1e-9);
  assert_float_equal(solution_cost(items, sols[1], &cover), 4.1, 1e-9);
  assert_float_equal(solution_cost(items, sols[2], &cover), 6.1, 1e-9);
  for (int r = 0; r < ns; r++) {
    bool has_ad = false, has_bc = false;
    for (int k = 0; sols[r][k] >= 0; k++) {
      has_ad |= sols[r][k] == 0;
      has_bc |= sols[r][k] == 1;
    }
    assert_false(has_ad && has_bc);
  }
  free_solutions(sols, ns);
  free_dag(d);
}

static void test_duplicates_and_ignored_items(void **state) {
  (void)state;
  const int edges[][2] = {{0, 1}};
  Dag *d = make_dag(2, edges, 1);
  SelectItem items[] = {
      item(3, 5.0),      /* {0,1}, worse twin */
      item(3, 2.0),      /* {0,1}, best */
      item(1, INFINITY), /* cannot launch: ignored */
      item(1, 1.5),      item(2, 1.5),
      item(4, 0.1),      /* node 2 does not exist: ignored */
      item(0, 0.0),      /* empty: ignored */
  };
  int **sols;
  int ns = select_top_partitions(d, items, 7, 5, &sols);
  assert_int_equal(ns, 2); /* the worse twin is the same partition: not returned */
  assert_int_equal(sols[0][0], 1);
  assert_int_equal(sols[0][1], -1);
  Mask cover;
  assert_float_equal(solution_cost(items, sols[1], &cover), 3.0, 1e-9);
  free_solutions(sols, ns);
  free_dag(d);
}

static void test_infeasible_and_empty(void **state) {
  (void)state;
  Dag *d = make_dag(3, NULL, 0);
  SelectItem items[] = {item(1, 1), item(2, 1)}; /* node 2 uncovered */
  int **sols = (int **)1;
  assert_int_equal(select_top_partitions(d, items, 2, 3, &sols), 0);
  assert_null(sols);
  assert_int_equal(select_top_partitions(d, NULL, 0, 3, &sols), 0);
  assert_int_equal(select_top_partitions(d, items, 2, 0, &sols), 0);
  free_dag(d);
}

/* A larger instance: 20 independent nodes, pairs and singles; the best is all pairs. */
static void test_larger(void **state) {
  (void)state;
  Dag *d = make_dag(20, NULL, 0);
  SelectItem items[40];
  int n = 0;
  for (int v = 0; v < 20; v++) items[n++] = item((Mask)1 << v, 1.0);
  for (int v = 0; v < 20; v += 2) items[n++] = item((Mask)3 << v, 1.5);
  int **sols;
  int ns = select_top_partitions(d, items, n, 12, &sols);
  assert_int_equal(ns, 12);
  Mask cover;
  assert_float_equal(solution_cost(items, sols[0], &cover), 15.0, 1e-9);
  for (int r = 1; r <= 10; r++) /* one pair split: 10 ways of cost 15.5 */
    assert_float_equal(solution_cost(items, sols[r], &cover), 15.5, 1e-9);
  assert_float_equal(solution_cost(items, sols[11], &cover), 16.0, 1e-9);
  free_solutions(sols, ns);
  free_dag(d);
}


/* The best-first queue both searches use (util.c), against sorting: random keys with many ties
 * and pops interleaved with pushes come out least key first, ties in push order. */
typedef struct {
  double key;
  long order;
  int id;
  char pad[37]; /* an entry larger than its key, of an odd size */
} QueuedItem;

static void test_best_first_queue(void **state) {
  (void)state;
  srand(7);
  BestFirstQueue q = {.size = sizeof(QueuedItem)};
  QueuedItem all[3000];
  int n = 0, live[3000], nlive = 0;
  double last_key = -1;
  long last_order = -1;
  for (int step = 0; step < 6000; step++) {
    bool push = nlive == 0 || (n < 3000 && rand() % 3 != 0);
    if (push) {
      QueuedItem it = {.key = rand() % 50, .id = n};
      memset(it.pad, n & 0x7f, sizeof it.pad);
      all[n] = it;
      live[nlive++] = n++;
      queue_push(&q, &it);
      last_key = -1; /* a push may bring a smaller key: ordering restarts */
      continue;
    }
    /* the expected entry: least key among the live ones, then the earliest pushed */
    int best = 0;
    for (int k = 1; k < nlive; k++)
      if (all[live[k]].key < all[live[best]].key ||
          (all[live[k]].key == all[live[best]].key && live[k] < live[best]))
        best = k;
    assert_true(queue_least_key(&q) == all[live[best]].key);
    QueuedItem got;
    queue_pop(&q, &got);
    assert_int_equal(got.id, live[best]);
    assert_true(got.key >= last_key);
    if (got.key == last_key) assert_true(got.order > last_order);
    for (size_t b = 0; b < sizeof got.pad; b++) assert_int_equal(got.pad[b], got.id & 0x7f);
    last_key = got.key;
    last_order = got.order;
    live[best] = live[--nlive];
  }
  assert_int_equal(q.n, nlive);
  queue_free(&q);
  assert_null(q.v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_best_first_queue), cmocka_unit_test(test_random_vs_brute_force), cmocka_unit_test(test_cyclic_pair),
      cmocka_unit_test(test_duplicates_and_ignored_items),
      cmocka_unit_test(test_infeasible_and_empty), cmocka_unit_test(test_larger),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
