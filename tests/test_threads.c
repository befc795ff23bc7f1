/*
 * test_threads.c — a loop's iterations run by groups of threads (src/threads.c), against the
 * unrolled DAG: for every group g, the DAG of one iteration moved by its strides (each value
 * at arg_offset + group_stride * g of its argument) must be, call by call and argument by
 * argument, iteration first + g of the spec's DAG.  Also which loops qualify: the element's
 * vertex loop and gradients_loop20's; not a loop-carried sum (quadrature, strain_sum17), not a
 * spec with calls outside its loop (stress_rows14), not one whose outputs the loop's variable
 * does not address (loop_plain), not a spec without loops.  That the groups' kernels compute
 * the same on the CPU and compile is tests/integration/loops.sh's.
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

/* Value v of the iteration DAG d as group g sees it is value u of the spec's DAG, produced by
 * the call `shift` nodes on where d's value is an intermediate or an output. */
static void assert_same_value(const Dag *d, int v, const Dag *dag, int u, int g, int shift) {
  const Value *a = &d->values[v], *b = &dag->values[u];
  assert_int_equal(a->producer < 0, b->producer < 0);
  if (a->producer >= 0) assert_int_equal(b->producer, a->producer + shift);
  assert_int_equal(a->arg, b->arg);
  if (a->arg >= 0) {
    assert_int_equal(b->arg_offset, a->arg_offset + a->group_stride * g);
    assert_int_equal(a->arg_record, b->arg_record);
  } else {
    assert_int_equal(a->group_stride, 0);
  }
  assert_ptr_equal(a->type, b->type);
}

static void check_spec(Fixture *f, const char *path, bool expected) {
  Spec *spec = spec_load(path, f->lib);
  assert_non_null(spec);
  Dag *dag = dag_build(spec);
  assert_non_null(dag);
  ThreadLoop t;
  bool found = threads_loop(dag, &t);
  if (found != expected) fail_msg("%s: threads_loop %d, expected %d", path, found, expected);
  if (found) {
    Dag *d = threads_dag(dag, &t);
    assert_int_equal(d->groups, t.count);
    assert_int_equal(d->nnodes * t.count, dag->nnodes);
    assert_int_equal(d->nin_args, dag->nin_args);
    assert_int_equal(d->nout_args, dag->nout_args);
    int strided = 0;
    for (int g = 0; g < t.count; g++)
      for (int j = 0; j < d->nnodes; j++) {
        const DagNode *a = &d->nodes[j], *b = &dag->nodes[g * t.len + j];
        assert_ptr_equal(a->fn, b->fn);
        assert_int_equal(a->nargs, b->nargs);
        assert_int_equal(spec->stmts[b->stmt].iter[0], t.first + g);
        for (int k = 0; k < a->nargs; k++)
          assert_same_value(d, a->args[k], dag, b->args[k], g, g * t.len);
        assert_same_value(d, a->result, dag, b->result, g, g * t.len);
      }
    for (int v = 0; v < d->nvalues; v++) strided += d->values[v].group_stride != 0;
    assert_true(strided > 0);
    /* every output of the spec is one group's output of the iteration */
    int outputs = 0;
    for (int v = 0; v < d->nvalues; v++) outputs += d->values[v].is_output;
    assert_int_equal(outputs * t.count, dag->noutputs);
    /* edges: a call's predecessors are the producers of what it reads */
    for (int j = 0; j < d->nnodes; j++)
      for (int k = 0; k < d->nodes[j].nargs; k++) {
        int p = d->values[d->nodes[j].args[k]].producer;
        if (p >= 0) assert_true(nodeset_has(&d->pred[j], p) && nodeset_has(&d->reach[p], j));
      }
    dag_free(d);
  }
  dag_free(dag);
  spec_free(spec);
}

static void test_iterations(void **state) {
  Fixture *f = *state;
  check_spec(f, "specs/stvenant_element.spec", true);
  check_spec(f, "benchmarks/specs/gradients_loop20.spec", true);
  check_spec(f, "specs/quadrature.spec", false);          /* a loop-carried sum */
  check_spec(f, "benchmarks/specs/strain_sum17.spec", false);
  check_spec(f, "benchmarks/specs/stress_rows14.spec", false); /* calls before the loop */
  check_spec(f, "tests/specs/loop_plain.spec", false);    /* outputs not addressed by the loop */
  check_spec(f, "specs/stvenant.spec", false);            /* no loop */
}

/* The element: vec3DPhi[0] of the first iteration is two values, vec3DPhi[N] (moving 3 reals
 * per group) and vec3DPhi[M] at M = 0 (shared); matTangent[N][M] moves 36 reals per group. */
static void test_element_roles(void **state) {
  Fixture *f = *state;
  Spec *spec = spec_load("specs/stvenant_element.spec", f->lib);
  Dag *dag = dag_build(spec);
  ThreadLoop t;
  assert_true(threads_loop(dag, &t));
  assert_int_equal(t.count, 4);
  assert_int_equal(t.len, 32);
  Dag *d = threads_dag(dag, &t);
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
