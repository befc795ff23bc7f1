/*
 * test_dag.c — the call DAG built from specs: values (inputs first, then one per call), SSA
 * labels, consumers, edges, reachability (against a closure computed here from the consumer
 * lists), outputs in return order, and the Graphviz file (checked by `dot` when installed).
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "front_fake_library.h"

static Dag *load(const char *name, const Library *lib, Spec **sp_out) {
  char *path = xasprintf("%s/%s.spec", TEST_SPECS, name);
  Spec *sp = spec_load(path, lib);
  free(path);
  assert_non_null(sp);
  *sp_out = sp;
  return dag_build(sp);
}

static int value_named(const Dag *d, const char *label) {
  for (int v = 0; v < d->nvalues; v++)
    if (!strcmp(d->values[v].label, label)) return v;
  fail_msg("no value %s", label);
  return -1;
}

static uint64_t bit(int i) { return (uint64_t)1 << i; }

static void test_stvenant_structure(void **state) {
  (void)state;
  Library *lib = fake_library();
  Spec *sp;
  Dag *d = load("stvenant", lib, &sp);
  assert_int_equal(d->nnodes, 4);
  assert_int_equal(d->nvalues, 5 + 4);
  assert_int_equal(d->ninputs, 5);
  /* inputs in input-line order, producer -1 */
  assert_string_equal(d->values[d->inputs[0]].label, "ten4Help1");
  assert_string_equal(d->values[d->inputs[3]].label, "mat33Help1");
  assert_int_equal(d->values[d->inputs[3]].producer, -1);
  /* the reassigned variable gets versioned labels, the others plain names */
  int s0 = value_named(d, "vec3NodeStiff.0"), s1 = value_named(d, "vec3NodeStiff.1");
  assert_int_equal(d->values[s0].producer, 0);
  assert_int_equal(d->values[s1].producer, 1);
  assert_int_equal(d->values[s1].nconsumers, 1);
  assert_int_equal(d->values[s1].consumers[0], 2);
  assert_string_equal(d->values[d->nodes[3].result].label, "ten3Help2");
  assert_int_equal(d->nodes[2].args[1], s1);
  assert_int_equal(d->values[s1].type->size, 3);
  /* a chain 0 -> 1 -> 2 -> 3 */
  assert_int_equal(set_mask(d->succ[0]), bit(1));
  assert_int_equal(set_mask(d->succ[2]), bit(3));
  assert_int_equal(set_mask(d->pred[3]), bit(2));
  assert_int_equal(set_mask(d->reach[0]), bit(1) | bit(2) | bit(3));
  assert_int_equal(set_mask(d->reach[3]), 0);
  /* outputs in return order; the intermediate is not one */
  assert_int_equal(d->noutputs, 2);
  assert_int_equal(d->outputs[0], d->nodes[3].result);
  assert_int_equal(d->outputs[1], s1);
  assert_true(d->values[s1].is_output);
  assert_false(d->values[s0].is_output);
  assert_false(d->values[value_named(d, "ten3Help1")].is_output);
  dag_free(d);
  spec_free(sp);
  fake_library_free(lib);
}

/* Shared inputs fan out; consumers are ascending and unique even for f(x, x). */
static void test_consumers(void **state) {
  (void)state;
  Library *lib = fake_library();
  Spec *sp;
  Dag *d = load("synctest", lib, &sp);
  int a = d->inputs[0];
  assert_int_equal(d->values[a].nconsumers, 4);
  for (int c = 0; c < 4; c++) assert_int_equal(d->values[a].consumers[c], c);
  assert_int_equal(d->nodes[0].args[0], a);
  assert_int_equal(d->nodes[0].args[1], a);
  dag_free(d);
  spec_free(sp);

  d = load("stvenant_inner", lib, &sp);
  int psi = value_named(d, "vec3DPsi");
  assert_int_equal(d->values[psi].nconsumers, 2);
  assert_int_equal(d->values[psi].consumers[0], 0);
  assert_int_equal(d->values[psi].consumers[1], 2);
  /* smimul33 (node 3) reads only an input: no predecessor */
  assert_int_equal(set_mask(d->pred[3]), 0);
  assert_int_equal(set_mask(d->succ[3]), bit(4));
  dag_free(d);
  spec_free(sp);
  fake_library_free(lib);
}

/* reach must be the transitive closure of the producer -> consumer edges. */
static void check_closure(const Dag *d) {
  int n = d->nnodes;
  enum { MAXN = 64 }; /* the specs checked here are small */
  assert_true(n <= MAXN);
  bool r[MAXN][MAXN] = {{0}};
  for (int v = 0; v < d->nvalues; v++)
    for (int c = 0; c < d->values[v].nconsumers; c++)
      if (d->values[v].producer >= 0) r[d->values[v].producer][d->values[v].consumers[c]] = true;
  for (int w = 0; w < n; w++)
    for (int u = 0; u < n; u++)
      for (int v = 0; v < n; v++) r[u][v] = r[u][v] || (r[u][w] && r[w][v]);
  for (int u = 0; u < n; u++)
    for (int v = 0; v < n; v++) {
      assert_int_equal(nodeset_has(&d->reach[u], v), r[u][v]);
      if (nodeset_has(&d->succ[u], v)) assert_true(nodeset_has(&d->pred[v], u));
      if (nodeset_has(&d->succ[u], v)) assert_true(u < v); /* topological numbering */
    }
}

static void test_reach_is_closure(void **state) {
  (void)state;
  Library *lib = fake_library();
  const char *names[] = {"stvenant", "stvenant_inner", "bigfusion", "bigfusion_full",
                         "synctest", "chain12"};
  for (int i = 0; i < 6; i++) {
    Spec *sp;
    Dag *d = load(names[i], lib, &sp);
    assert_int_equal(d->nnodes, sp->nstmts);
    check_closure(d);
    dag_free(d);
    spec_free(sp);
  }
  Spec *sp = spec_load("tests/specs/big40.spec", lib);
  assert_non_null(sp);
  Dag *d = dag_build(sp);
  check_closure(d);
  dag_free(d);
  spec_free(sp);
  fake_library_free(lib);
}

static void test_dot(void **state) {
  (void)state;
  Library *lib = fake_library();
  Spec *sp;
  Dag *d = load("stvenant", lib, &sp);
  char path[] = "/tmp/kasgen_h1_dotXXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  dag_write_dot(d, f);
  fclose(f);
  char *text = read_text_file(path, NULL);
  assert_non_null(text);
  assert_non_null(strstr(text, "digraph \"stvenant\" {"));
  assert_non_null(strstr(text, "n3 [shape=box, label=\"ttmul3212#3\"];"));
  assert_non_null(strstr(text, "n0 -> n1 [label=\"vec3NodeStiff.0\"];"));
  assert_non_null(strstr(text, "n1 -> out1;"));
  assert_non_null(strstr(text, "in0 -> n2 [label=\"ten4Help1\"];"));
  free(text);
  if (system("command -v dot >/dev/null 2>&1") == 0) {
    char *cmd = xasprintf("dot -Tsvg %s -o /dev/null", path);
    assert_int_equal(system(cmd), 0);
    free(cmd);
  } else {
    print_message("graphviz not installed: DOT syntax not checked by dot\n");
  }
  unlink(path);
  dag_free(d);
  spec_free(sp);
  fake_library_free(lib);
}

/* A chosen partition: each kernel's calls sit in its own cluster, every call is drawn exactly
 * once, and Graphviz accepts the result. */
static void test_dot_kernels(void **state) {
  (void)state;
  Library *lib = fake_library();
  Spec *sp;
  Dag *d = load("stvenant", lib, &sp);
  DotKernel kernels[] = {{mask_set(0x3), "kernel A"}, {mask_set(0xC), "kernel B"}};
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  dag_write_dot_kernels(d, kernels, 2, f);
  fclose(f);
  const char *a = strstr(text, "subgraph cluster_k0 {"), *b = strstr(text, "subgraph cluster_k1 {");
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(strstr(a, "label=\"kernel A\""));
  /* calls 0 and 1 between the first and second cluster headers, 2 and 3 after the second */
  const char *n0 = strstr(text, "n0 [shape=box"), *n1 = strstr(text, "n1 [shape=box");
  const char *n2 = strstr(text, "n2 [shape=box"), *n3 = strstr(text, "n3 [shape=box");
  assert_true(n0 > a && n0 < b && n1 > a && n1 < b);
  assert_true(n2 > b && n3 > b);
  for (int i = 0; i < 4; i++) {
    char key[32];
    snprintf(key, sizeof key, "n%d [shape=box", i);
    const char *first = strstr(text, key);
    assert_non_null(first);
    assert_null(strstr(first + 1, key));
  }
  if (system("command -v dot >/dev/null 2>&1") == 0) {
    FILE *p = popen("dot -Tsvg -o /dev/null", "w");
    assert_non_null(p);
    fputs(text, p);
    assert_int_equal(pclose(p), 0);
  }
  free(text);
  dag_free(d);
  spec_free(sp);
  fake_library_free(lib);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dot_kernels),
      cmocka_unit_test(test_stvenant_structure),
      cmocka_unit_test(test_consumers),
      cmocka_unit_test(test_reach_is_closure),
      cmocka_unit_test(test_dot),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
