/*
 * test_staging.c — which array arguments a kernel moves whole through shared memory
 * (src/staging.c), against a brute-force oracle: for every subset of an input array's elements
 * a plan loads and every subset of an output array's elements it saves, the input is staged
 * exactly when at least half of its elements are loaded, the output exactly when all are saved,
 * each copy sits after the plan's own shared memory at a 16-byte boundary, and component-major
 * arrays are staged only by a plan that stages rows (the plan for rows of any alignment chooses
 * it, unaligned.c): an output written whole, while the copies stay within 48 KB.  What the staged code computes is checked by running every
 * candidate of the array specs on the CPU (tests/integration/loops.sh), and of the component-major
 * seed specs on sub-ranges whose rows no peel aligns (tests/integration/targets.sh).
 */
#include "testutil.h"

/* v[4] in, r[2] out, a plain s in: r[0] = v0 + v1, r[1] = v2 + v3 (madd33 on 3x3 values). */
static const char spec_text[] = "matrix3x3 v[4], r[2];\nscalar s;\ninput v, s;\n"
                                "r[0] = madd33(v[0], v[1]);\nr[1] = madd33(v[2], v[3]);\n"
                                "return r;\n";

typedef struct {
  Library *lib;
  Spec *spec;
  Dag *dag;
} Fixture;

static int setup(void **state) {
  Fixture *f = xcalloc(1, sizeof *f);
  f->lib = library_load(TEST_LIBRARY);
  if (!f->lib) return -1;
  f->spec = spec_parse("staging.spec", spec_text, f->lib);
  if (!f->spec) return -1;
  f->dag = dag_build(f->spec);
  if (!f->dag) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  Fixture *f = *state;
  dag_free(f->dag);
  spec_free(f->spec);
  library_free(f->lib);
  free(f);
  return 0;
}

/* A plan of E = 32 whose buffers load the inputs in `loads` (bit k: v[k]) and save the outputs
 * in `saves` (bit k: r[k]); only the buffers' values and routines matter to staging. */
static KernelPlan plan_moving(const Dag *dag, unsigned loads, unsigned saves, Buffer *bufs) {
  static const IoRoutine some_routine;
  KernelPlan p = {.e = 32, .threads = 32, .precision = PREC_SINGLE, .smem_bytes = 1000,
                  .buffers = bufs};
  const DagArg *v = &dag->in_args[0], *r = &dag->out_args[0];
  for (int k = 0; k < 4; k++)
    if (loads >> k & 1)
      bufs[p.nbuffers++] = (Buffer){.value = v->values[k], .load = &some_routine, .producer = -1};
  for (int k = 0; k < 2; k++)
    if (saves >> k & 1)
      bufs[p.nbuffers++] = (Buffer){.value = r->values[k], .save = &some_routine};
  return p;
}

static int bits(unsigned x) { return __builtin_popcount(x); }

static void test_against_oracle(void **state) {
  Fixture *f = *state;
  Target *t = target_new(f->dag, PREC_SINGLE, NULL);
  assert_non_null(t);
  assert_int_equal(f->dag->in_args[0].record, 36);
  for (unsigned loads = 0; loads < 16; loads++)
    for (unsigned saves = 0; saves < 4; saves++) {
      Buffer bufs[8];
      KernelPlan p = plan_moving(f->dag, loads, saves, bufs);
      Staging s = staging_of(f->dag, t, &p);
      bool in = 2 * bits(loads) >= 4, out = saves == 3;
      assert_int_equal(s.n, in + out);
      int at = 1008; /* 1000 rounded up to 16 */
      if (in) {
        const StagedArray *a = staging_find(&s, f->dag, f->dag->in_args[0].values[0]);
        assert_non_null(a);
        assert_false(a->output);
        assert_int_equal(a->record, 36);
        assert_int_equal(a->offset, at);
        assert_int_equal(a->moved, bits(loads));
        at += 32 * 36 * 4;
      }
      if (out) {
        const StagedArray *a = staging_find(&s, f->dag, f->dag->out_args[0].values[1]);
        assert_non_null(a);
        assert_true(a->output);
        assert_int_equal(a->record, 18);
        assert_int_equal(a->offset, at);
        at += 32 * 18 * 4;
      }
      assert_int_equal(s.smem_bytes, s.n ? at : 1000);
      /* The plain scalar is never staged, whatever the plan moves. */
      assert_null(staging_find(&s, f->dag, f->dag->in_args[1].values[0]));
      staging_free(&s);
    }
  target_free(t);
}

static void test_component_major_not_staged_when_aligned(void **state) {
  Fixture *f = *state;
  Target *t = target_new(f->dag, PREC_DOUBLE, "component");
  assert_non_null(t);
  Buffer bufs[8];
  KernelPlan p = plan_moving(f->dag, 15, 3, bufs);
  p.precision = PREC_DOUBLE;
  Staging s = staging_of(f->dag, t, &p);
  assert_int_equal(s.n, 0);
  assert_int_equal(s.smem_bytes, 1000);
  staging_free(&s);
  target_free(t);
}

/* A plan that stages rows (plan.stage_rows) stages a component-major output written whole as
 * rows, E * record reals after the plan's shared memory, and an input never; the same against
 * an oracle over every subset of saved elements, and the 48 KB bound on the copies.  The target
 * for any alignment says rows may be misaligned; the aligned one does not. */
static void test_rows_staged_by_the_plan(void **state) {
  Fixture *f = *state;
  Target *t = target_new(f->dag, PREC_DOUBLE, "component");
  assert_non_null(t);
  Target *any = target_unaligned(t);
  assert_false(t->misaligned_rows);
  assert_true(any->misaligned_rows);
  for (unsigned saves = 0; saves < 4; saves++) {
    Buffer bufs[8];
    KernelPlan p = plan_moving(f->dag, 15, saves, bufs);
    p.precision = PREC_DOUBLE;
    assert_false(staging_has_rows(f->dag, any, &p));
    p.stage_rows = true;
    Staging s = staging_of(f->dag, any, &p);
    bool out = saves == 3;
    assert_int_equal(s.n, out);
    assert_int_equal(staging_has_rows(f->dag, t, &p), out);
    if (out) {
      const StagedArray *a = &s.v[0];
      assert_true(a->rows && a->output);
      assert_int_equal(a->record, 18);
      assert_int_equal(a->offset, 1008);
      assert_int_equal(s.smem_bytes, 1008 + 32 * 18 * 8);
      assert_int_equal(staging_copy_width(&p, a), 1);
    }
    staging_free(&s);
  }
  /* 48 KB: 1008 + E * 144 bytes fits at E = 320, not at E = 336 */
  for (int e = 320; e <= 336; e += 16) {
    Buffer bufs[8];
    KernelPlan p = plan_moving(f->dag, 0, 3, bufs);
    p.precision = PREC_DOUBLE;
    p.e = p.threads = e;
    p.stage_rows = true;
    Staging s = staging_of(f->dag, any, &p);
    assert_int_equal(s.n, 1008 + e * 144 <= 48 * 1024);
    staging_free(&s);
  }
  target_free(any);
  target_free(t);
}

static int count_of(const char *text, const char *what) {
  int n = 0;
  for (const char *at = strstr(text, what); at; at = strstr(at + 1, what)) n++;
  return n;
}

/* The element's kernel of 4 groups sharing one copy of ten4Help1 (threads_one_copy): every
 * thread of the block copies the records straight into the plan's buffer (StagedArray.buffer,
 * at the buffer's offset, no shared memory added), first of the kernel's copies; the first
 * group's load is not made, and with no step writing shared memory, neither is the plan's
 * barrier: the GPU kernel has the staging's two barriers only, the host form one phase.  That the kernel computes the element is checked
 * on the CPU in both thread orders by tests/integration/loops.sh. */
static void test_one_copy_filled(void **state) {
  (void)state;
  Library *lib = library_load(TEST_LIBRARY);
  assert_non_null(lib);
  Spec *spec = spec_load(TEST_SPECS "/stvenant_element.spec", lib);
  assert_non_null(spec);
  Dag *dag = dag_build(spec);
  TimingDb *db = timingdb_load("benchmarks/nvidia-h100-80gb-hbm3.xml");
  assert_non_null(db);
  SearchOptions opt = {.top = 1, .loops = LOOPS_GROUPS};
  SearchResult *r = search_run(dag, db, &opt);
  assert_non_null(r);
  assert_int_equal(r->ncands, 1);
  const Candidate *c = &r->cands[0];
  const Dag *d = candidate_dag(dag, c);
  const KernelPlan *p = c->kernels[0];
  assert_int_equal(c->nkernels, 1);
  assert_int_equal(dag_groups(d), 4);
  assert_true(threads_one_copy(d, p));
  Staging s = staging_of(d, target_default(), p);
  assert_true(s.fills_buffers);
  int shared = 0;
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *buf = &p->buffers[b];
    if (buf->place != PLACE_SHARED) continue;
    shared++;
    assert_string_equal(dag_value_label(d, buf->value), "ten4Help1");
    const StagedArray *a = staging_find(&s, d, buf->value);
    assert_non_null(a);
    assert_int_equal(a->buffer, b);
    assert_ptr_equal(a, &s.v[0]); /* copied first: see staging.c */
    assert_int_equal(a->offset, buf->offset);
    assert_int_equal(a->record, 81);
    assert_false(a->output);
  }
  assert_int_equal(shared, 1);
  /* the plan's memory, then vec3DPhi's, vec3NodeStiff's and matTangent's records */
  assert_int_equal(s.smem_bytes, (p->smem_bytes + 15) / 16 * 16 + p->e * (12 + 12 + 144) * 4);
  staging_free(&s);
  char *text = emit_cuda_kernels(dag, NULL, c, NULL, "cand01", "cand01", false);
  assert_non_null(text);
  char *copy = xasprintf("kas_stage_in<4>(s_ten4Help1_0, g_ten4Help1 + e0 * 81, %d, (int)ne * 81, "
                         "lin_block, %d);", p->e * 81, p->threads * 4);
  /* issued before vec3DPhi's copy */
  const char *filled = strstr(text, copy), *array = strstr(text, "kas_stage_in<4>(st_vec3DPhi");
  assert_true(filled && array && filled < array);
  assert_null(strstr(text, "one group loads"));
  assert_int_equal(count_of(text, "__syncthreads();"), 2);
  char *host = emit_cuda_host_kernels(dag, NULL, c, NULL, "cand01", "cand01");
  assert_non_null(host);
  assert_non_null(strstr(host, "1 phase between barriers"));
  free(host);
  free(copy);
  free(text);
  search_result_free(r);
  timingdb_free(db);
  dag_free(dag);
  spec_free(spec);
  library_free(lib);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_against_oracle),
      cmocka_unit_test(test_component_major_not_staged_when_aligned),
      cmocka_unit_test(test_rows_staged_by_the_plan),
      cmocka_unit_test(test_one_copy_filled),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
