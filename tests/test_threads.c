/*
 * test_threads.c — a loop's iterations run by groups of threads (src/threads.c), against the
 * unrolled DAG: for every group (i, j), the DAG of one group's calls moved by its strides (each
 * value at arg_offset + group_stride * i + group_stride2 * j of its argument) must be, call by
 * call and argument by argument, the calls of iteration (first + i, first2 + j) of the spec's
 * DAG, found by their provenance; and the groups together make every call.  Also which loops
 * qualify: the element's vertex loop, and with its pair loop inside; gradients_loop20's,
 * pair_blocks18's, quad_stress15's; not a loop-carried sum (quadrature, strain_sum17), not a
 * spec with calls outside its loop (stress_rows14, vertex_stiffness15), not one whose outputs the
 * loop's variable does not address (loop_plain), not a spec without loops.  That the groups'
 * kernels compute the same on the CPU and compile is tests/integration/loops.sh's.
 */
#include "testutil.h"

typedef struct {
  Library *lib;
} Fixture;

static int setup(void **state) {
  Fixture *f = xcalloc(1, sizeof *f);
  f->lib = library_load(TEST_LIBRARY);
  if (!f->lib) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  Fixture *f = *state;
  library_free(f->lib);
  free(f);
  return 0;
}

/* The node of the spec's DAG that derived node j is in group (i, g2): the call of the same
 * source, in iteration first + i of the loop and, inside the inner loop, first2 + g2 of it.
 * Found by search over the statements' provenance, not by threads.c's positions. */
static int spec_node(const Dag *dag, const Dag *d, const ThreadLoop *t, int j, int i, int g2) {
  const Spec *sp = dag->spec;
  const Statement *a = &sp->stmts[d->nodes[j].stmt];
  bool inner = t->count2 > 1 && spec_statement_in_loop(sp, d->nodes[j].stmt, t->loop2);
  int found = -1;
  for (int n = 0; n < dag->nnodes; n++) {
    const Statement *b = &sp->stmts[dag->nodes[n].stmt];
    if (b->source != a->source || b->iter[0] != t->first + i) continue;
    if (inner && b->iter[sp->loops[t->loop2].depth] != t->first2 + g2) continue;
    if (!inner && t->count2 > 1 && spec_statement_in_loop(sp, dag->nodes[n].stmt, t->loop2))
      continue;
    /* a call outside the inner loop but inside another loop of the iteration: same place */
    bool same = true;
    for (int dd = 1; dd < a->depth && same; dd++)
      if (!inner || dd != sp->loops[t->loop2].depth) same = b->iter[dd] == a->iter[dd];
    if (!same) continue;
    assert_int_equal(found, -1); /* one node only */
    found = n;
  }
  assert_true(found >= 0);
  return found;
}

/* Value v of the iteration DAG d as group (i, g2) sees it is value u of the spec's DAG. */
static void assert_same_value(const Dag *d, int v, const Dag *dag, int u, const ThreadLoop *t,
                              int i, int g2) {
  const Value *a = &d->values[v], *b = &dag->values[u];
  assert_int_equal(a->producer < 0, b->producer < 0);
  if (a->producer >= 0) assert_int_equal(b->producer, spec_node(dag, d, t, a->producer, i, g2));
  assert_int_equal(a->arg, b->arg);
  if (a->arg >= 0) {
    assert_int_equal(b->arg_offset, a->arg_offset + a->group_stride * i + a->group_stride2 * g2);
    assert_int_equal(a->arg_record, b->arg_record);
  } else {
    assert_int_equal(a->group_stride, 0);
    assert_int_equal(a->group_stride2, 0);
  }
  assert_ptr_equal(a->type, b->type);
}

/* Every group of t reproduces its iteration of the spec's DAG; every call of the spec is some
 * group's, and every output some group's output. */
static void check_groups(const Dag *dag, const ThreadLoop *t) {
  Dag *d = threads_dag(dag, t);
  assert_int_equal(d->groups, t->count * t->count2);
  assert_int_equal(d->nin_args, dag->nin_args);
  assert_int_equal(d->nout_args, dag->nout_args);
  bool *covered = xcalloc((size_t)dag->nnodes, sizeof *covered);
  for (int i = 0; i < t->count; i++)
    for (int g2 = 0; g2 < t->count2; g2++)
      for (int j = 0; j < d->nnodes; j++) {
        int n = spec_node(dag, d, t, j, i, g2);
        const DagNode *a = &d->nodes[j], *b = &dag->nodes[n];
        covered[n] = true;
        assert_ptr_equal(a->fn, b->fn);
        assert_int_equal(a->nargs, b->nargs);
        for (int k = 0; k < a->nargs; k++)
          assert_same_value(d, a->args[k], dag, b->args[k], t, i, g2);
        assert_same_value(d, a->result, dag, b->result, t, i, g2);
      }
  for (int n = 0; n < dag->nnodes; n++) assert_true(covered[n]);
  free(covered);
  /* edges: a call's predecessors are the producers of what it reads */
  for (int j = 0; j < d->nnodes; j++)
    for (int k = 0; k < d->nodes[j].nargs; k++) {
      int p = d->values[d->nodes[j].args[k]].producer;
      if (p >= 0) assert_true(nodeset_has(&d->pred[j], p) && nodeset_has(&d->reach[p], j));
    }
  dag_free(d);
}

/* How many ways spec path's loops run in groups (threads_loops), each checked. */
static int check_spec(Fixture *f, const char *path) {
  Spec *spec = spec_load(path, f->lib);
  assert_non_null(spec);
  Dag *dag = dag_build(spec);
  assert_non_null(dag);
  ThreadLoop t[2];
  int n = threads_loops(dag, t);
  for (int k = 0; k < n; k++) check_groups(dag, &t[k]);
  dag_free(dag);
  spec_free(spec);
  return n;
}

static void test_iterations(void **state) {
  Fixture *f = *state;
  assert_int_equal(check_spec(f, "specs/stvenant_element.spec"), 2); /* N; N and M */
  assert_int_equal(check_spec(f, "benchmarks/specs/pair_blocks18.spec"), 2);
  assert_int_equal(check_spec(f, "benchmarks/specs/gradients_loop20.spec"), 1);
  assert_int_equal(check_spec(f, "benchmarks/specs/quad_stress15.spec"), 1);
  assert_int_equal(check_spec(f, "specs/quadrature.spec"), 0);           /* a loop-carried sum */
  assert_int_equal(check_spec(f, "benchmarks/specs/strain_sum17.spec"), 0);
  assert_int_equal(check_spec(f, "benchmarks/specs/stress_rows14.spec"), 0); /* calls before it */
  assert_int_equal(check_spec(f, "benchmarks/specs/vertex_stiffness15.spec"), 0); /* two loops */
  assert_int_equal(check_spec(f, "tests/specs/loop_plain.spec"), 0);     /* plain outputs */
  assert_int_equal(check_spec(f, "specs/stvenant.spec"), 0);             /* no loop */
}

/* The element: vec3DPhi[0] of the first iteration is two values, vec3DPhi[N] (moving 3 reals
 * per group) and vec3DPhi[M] at M = 0 (shared); matTangent[N][M] moves 36 reals per group. */
static void test_element_roles(void **state) {
  Fixture *f = *state;
  Spec *spec = spec_load("specs/stvenant_element.spec", f->lib);
  Dag *dag = dag_build(spec);
  ThreadLoop t[2];
  assert_int_equal(threads_loops(dag, t), 2);
  assert_int_equal(t[0].count, 4);
  assert_int_equal(t[0].len, 32);
  Dag *d = threads_dag(dag, &t[0]);
  int phi_n = -1, phi_0 = -1, tangent = 0;
  for (int v = 0; v < d->nvalues; v++) {
    const char *label = dag_value_label(d, v);
    if (!strcmp(label, "vec3DPhi[N]")) phi_n = v;
    if (!strcmp(label, "vec3DPhi[0]")) phi_0 = v;
    if (!strncmp(label, "matTangent[N]", 13)) {
      tangent++;
      assert_int_equal(d->values[v].group_stride, 36);
    }
  }
  assert_true(phi_n >= 0 && phi_0 >= 0);
  assert_int_equal(d->values[phi_n].group_stride, 3);
  assert_int_equal(d->values[phi_0].group_stride, 0);
  assert_int_equal(d->values[phi_n].arg_offset, 0);
  assert_int_equal(tangent, 4);
  dag_free(d);
  /* with M in groups too: vec3DPhi[M] moves 3 reals per M, matTangent[N][M] 36 per N, 9 per M,
   * and a group holds N's 4 calls and one M iteration's 7 */
  d = threads_dag(dag, &t[1]);
  assert_int_equal(d->nnodes, 11);
  assert_int_equal(d->groups, 16);
  int seen = 0;
  for (int v = 0; v < d->nvalues; v++) {
    const char *label = dag_value_label(d, v);
    const Value *val = &d->values[v];
    if (!strcmp(label, "vec3DPhi[M]"))
      seen++, assert_true(val->group_stride == 0 && val->group_stride2 == 3);
    if (!strcmp(label, "matTangent[N][M]"))
      seen++, assert_true(val->group_stride == 36 && val->group_stride2 == 9);
    if (!strcmp(label, "vec3NodeStiff[N]"))
      seen++, assert_true(val->group_stride == 3 && val->group_stride2 == 0);
  }
  assert_int_equal(seen, 3);
  dag_free(d);
  dag_free(dag);
  spec_free(spec);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_iterations),
      cmocka_unit_test(test_element_roles),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
