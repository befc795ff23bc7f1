/*
 * test_roll.c — the loops a kernel keeps (src/roll.c), against a brute-force oracle: the kernel
 * is run as the emitter writes it (each kept run a loop over its first iteration's steps, buffer
 * names through roll_aliases, the carried values copied at each iteration's end, each reloaded
 * array element loaded into the loop's own buffer before the step that reads it), tracking which
 * DAG value every register buffer and every word of shared memory holds, and every step must
 * read exactly what the same step of the unrolled plan reads, and move the array element it
 * moves.  Over every plan of the ranked candidates of the loop specs, with every run the plan has
 * kept (not only those the model chose).  Also: the model keeps a run only where it predicts no
 * loss and the kernel's occupancy is not low, --loops keep keeps every run and --loops unroll none,
 * quadrature's winner keeps its loop-carried sum, and the summary names an inner loop's runs by
 * the enclosing loop's value.  That the
 * generated loops compute the same on the CPU and compile is tests/integration/loops.sh's.
 */
#include "testutil.h"

#include <math.h>
#include <string.h>

#define H100_DB "benchmarks/nvidia-h100-80gb-hbm3.xml"

static const char *const loop_specs[] = {
    "specs/quadrature.spec",
    "specs/stvenant_element.spec",
    "benchmarks/specs/gradients_loop20.spec",
    "benchmarks/specs/pair_blocks18.spec",
    "benchmarks/specs/vertex_forces10.spec",
    "benchmarks/specs/strain_sum17.spec",
    "tests/specs/loop_plain.spec",
};
enum { NSPECS = sizeof loop_specs / sizeof loop_specs[0] };

typedef struct {
  Library *lib;
  TimingDb *db;
} Fixture;

static int setup(void **state) {
  Fixture *f = xcalloc(1, sizeof *f);
  f->lib = library_load(TEST_LIBRARY);
  f->db = timingdb_load(H100_DB);
  if (!f->lib || !f->db) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  Fixture *f = *state;
  timingdb_free(f->db);
  library_free(f->lib);
  free(f);
  return 0;
}

/* ---- the oracle --------------------------------------------------------------------------- */

typedef struct {
  const Dag *dag;
  const KernelPlan *p;
  const int *alias;
  int *reg;  /* per buffer name, then per loop-local buffer of a reload (at nbuffers + its
                index): the value its registers hold (-1: none) */
  int *smem; /* per 4-byte word of shared memory: the value written there (-1: none) */
} Machine;

static void array_place(const Dag *dag, int value, int *arg, int *offset) {
  const Value *v = &dag->values[value];
  assert_true(v->arg >= 0);
  *arg = v->producer < 0 ? v->arg : dag->nin_args + v->arg;
  *offset = v->arg_offset;
}

static void define(Machine *m, int name, int value) {
  const Buffer *b = &m->p->buffers[name];
  if (b->place == PLACE_REGISTER) {
    m->reg[name] = value;
    return;
  }
  for (int w = b->offset / 4; w < (b->offset + b->bytes) / 4; w++) m->smem[w] = value;
}

static void expect_holds(const Machine *m, int name, int value) {
  const Buffer *b = &m->p->buffers[name];
  if (b->place == PLACE_REGISTER) {
    assert_int_equal(m->reg[name], value);
    return;
  }
  for (int w = b->offset / 4; w < (b->offset + b->bytes) / 4; w++)
    assert_int_equal(m->smem[w], value);
}

/* Step `shown` of the code (the first iteration's, in a kept loop) standing for step `actual`
 * of the unrolled plan, in iteration t of run (NULL: outside any). */
static void execute(Machine *m, int shown, int actual, int t, const RollRun *run) {
  const KernelPlan *p = m->p;
  const Step *e = &p->steps[shown], *a = &p->steps[actual];
  assert_int_equal(e->kind, a->kind);
  assert_ptr_equal(e->impl, a->impl);
  assert_ptr_equal(e->io, a->io);
  assert_int_equal(e->nbuf, a->nbuf);
  if (run && e->kind != ROUTINE_COMPUTE) { /* the array element, moved by the loop variable */
    int arg_e, off_e, arg_a, off_a, arg2, off2;
    array_place(m->dag, p->buffers[e->buf[0]].value, &arg_e, &off_e);
    array_place(m->dag, p->buffers[a->buf[0]].value, &arg_a, &off_a);
    array_place(m->dag, p->buffers[p->steps[shown + run->body].buf[0]].value, &arg2, &off2);
    assert_int_equal(arg_e, arg_a);
    assert_int_equal(off_e + t * (off2 - off_e), off_a);
  }
  /* a reload loads this iteration's element into the loop's buffer before the step reads it */
  for (int r = 0; run && r < run->nreload; r++) {
    const RollReload *rl = &run->reloads[r];
    if (run->from + rl->at != shown || rl->shares != r) continue;
    int arg0, off0, arg, off;
    int value = p->buffers[a->buf[rl->slot]].value; /* what the unrolled step reads */
    array_place(m->dag, p->buffers[rl->buffer].value, &arg0, &off0);
    array_place(m->dag, value, &arg, &off);
    assert_int_equal(arg0, arg);
    assert_int_equal(off0 + t * rl->stride, off);
    m->reg[p->nbuffers + r] = value;
  }
  /* reads first, then the one buffer the step defines */
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < e->nbuf; k++) {
      int name = m->alias[e->buf[k]], b = a->buf[k];
      for (int r = 0; run && r < run->nreload; r++)
        if (run->from + run->reloads[r].at == shown && run->reloads[r].slot == k)
          name = p->nbuffers + run->reloads[r].shares;
      bool defines = p->buffers[b].first_use == actual && e->kind != ROUTINE_SAVE;
      if (pass == 0 && !defines) {
        if (name >= p->nbuffers)
          assert_int_equal(m->reg[name], p->buffers[b].value);
        else
          expect_holds(m, name, p->buffers[b].value);
      }
      if (pass == 1 && defines) define(m, name, p->buffers[b].value);
    }
}

static void run_as_written(const Dag *dag, const KernelPlan *p, const RollRun *runs, int n) {
  int *alias = roll_aliases(p, runs, n);
  size_t regs = (size_t)p->nbuffers + (size_t)p->nsteps * (KAS_MAX_ARGS + 2) + 1;
  Machine m = {dag, p, alias, xmalloc(sizeof(int) * regs),
               xmalloc(sizeof(int) * (size_t)(p->smem_bytes / 4 + 1))};
  memset(m.reg, -1, sizeof(int) * regs);
  memset(m.smem, -1, sizeof(int) * (size_t)(p->smem_bytes / 4 + 1));
  int r = 0;
  for (int s = 0; s < p->nsteps;) {
    if (r < n && runs[r].from == s) {
      const RollRun *run = &runs[r++];
      for (int t = 0; t < run->count; t++) {
        for (int i = 0; i < run->body; i++)
          execute(&m, run->from + i, run->from + t * run->body + i, t, run);
        for (int c = 0; c < run->ncarry; c++)
          m.reg[alias[run->carry_in[c]]] = m.reg[alias[run->carry_out[c]]];
      }
      s = run->from + run->count * run->body;
      continue;
    }
    execute(&m, s, s, 0, NULL);
    s++;
  }
  free(m.reg);
  free(m.smem);
  free(alias);
}

/* Comments wrap where their lines fill: each run of blanks and comment stars becomes one blank. */
static void flatten(char *text) {
  char *w = text;
  for (const char *r = text; *r;) {
    if (*r == ' ' || *r == '\n' || *r == '*') {
      while (*r == ' ' || *r == '\n' || *r == '*') r++;
      *w++ = ' ';
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
}

/* The text of a one-kernel candidate of plan p with all of its runs kept: on the GPU one loop
 * per run, `#pragma unroll 1` above it and, where the run ends its iterations with a barrier, that
 * barrier inside; on the CPU the same loops (a run with barriers around its phases). */
static void check_text(const Dag *dag, KernelPlan *p, const RollRun *runs, int n) {
  Target *t = target_new(dag, p->precision, NULL);
  assert_non_null(t);
  Candidate c = {.kernels = &p, .nkernels = 1, .rank = 1};
  char *gpu = emit_cuda_kernels(dag, t, &c, NULL, "cand01", "cand01", false);
  char *cpu = emit_cuda_host_kernels(dag, t, &c, NULL, "cand01", "cand01");
  assert_non_null(gpu);
  assert_non_null(cpu);
  flatten(gpu);
  flatten(cpu);
  int loops = 0, ends = 0, host_loops = 0;
  for (const char *q = gpu; (q = strstr(q, "#pragma unroll 1 ")); q++) loops++;
  for (const char *q = gpu; (q = strstr(q, "the next iteration writes this one's")); q++) ends++;
  for (const char *q = cpu; (q = strstr(q, "kept as a loop (roll.c)")); q++) host_loops++;
  int want_ends = 0;
  for (int r = 0; r < n; r++) want_ends += runs[r].end_barrier;
  assert_int_equal(loops, n);
  assert_int_equal(ends, want_ends);
  assert_int_equal(host_loops, n);
  free(gpu);
  free(cpu);
  target_free(t);
}

/* Every plan of the ranking of `path`, unrolled and with all of its runs kept: the number of runs
 * found (*ends: of those, how many end their iterations with a barrier; *reloads: how many
 * reload array elements). */
static int check_spec(const Fixture *f, const char *path, int *ends, int *reloads,
                      unsigned *kept) {
  Spec *spec = spec_load(path, f->lib);
  assert_non_null(spec);
  Dag *dag = dag_build(spec);
  assert_non_null(dag);
  SearchOptions opt = {.top = 10};
  SearchResult *res = search_run(dag, f->db, &opt);
  assert_non_null(res);
  int found = 0;
  for (int i = 0; i < res->nplans; i++) {
    KernelPlan *p = res->plans[i];
    RollRun *runs;
    int n = roll_find(dag, target_default(), p, &runs);
    found += n;
    run_as_written(dag, p, NULL, 0);
    run_as_written(dag, p, runs, n);
    unsigned chosen = p->keep_runs;
    *kept |= chosen;
    p->keep_runs = n ? (n >= 32 ? ~0u : (1u << n) - 1) : 0;
    if (n) check_text(dag, p, runs, n);
    p->keep_runs = chosen;
    for (int r = 0; r < n; r++) {
      *ends += runs[r].end_barrier;
      *reloads += runs[r].nreload > 0;
      assert_true(runs[r].count >= 2);
      const RollRun *before = r ? &runs[r - 1] : NULL;
      assert_true(!before || runs[r].from >= before->from + before->count * before->body);
    }
    roll_runs_free(runs, n);
  }
  search_result_free(res);
  dag_free(dag);
  spec_free(spec);
  return found;
}

static void test_oracle(void **state) {
  Fixture *f = *state;
  int found[NSPECS], ends = 0, reloads[NSPECS] = {0};
  unsigned kept[NSPECS] = {0};
  for (int s = 0; s < NSPECS; s++)
    found[s] = check_spec(f, loop_specs[s], &ends, &reloads[s], &kept[s]);
  assert_true(found[0] > 0);   /* quadrature's sum */
  assert_true(reloads[1] > 0); /* the element's loops, which read vec3DPhi[N] and [M] */
  assert_int_equal(kept[1], 0u); /* and which its kernels, at 9-11% occupancy, do not keep */
  assert_true(ends > 0);       /* and runs that write shared memory in every iteration */
}

/* ---- the choice ----------------------------------------------------------------------------- */

static void test_model_choice(void **state) {
  Fixture *f = *state;
  Spec *spec = spec_load("specs/quadrature.spec", f->lib);
  Dag *dag = dag_build(spec);
  SearchOptions opt = {.top = 10};
  SearchResult *res = search_run(dag, f->db, &opt);
  assert_non_null(res);
  SearchContext *ctx = search_context_new(dag, f->db, NULL);
  int kept = 0;
  for (int i = 0; i < res->nplans; i++) {
    KernelPlan *p = res->plans[i];
    unsigned chosen = p->keep_runs;
    kept += chosen != 0;
    double as_chosen = model_predict_kernel(ctx, p);
    assert_true(fabs(as_chosen - p->predicted_ns_per_elem) <= 1e-12 * as_chosen);
    p->keep_runs = 0;
    assert_true(as_chosen <= model_predict_kernel(ctx, p));
    p->keep_runs = chosen;
  }
  assert_true(kept > 0);
  /* the winner keeps the sum over q as a loop, acc carried from one iteration to the next */
  const KernelPlan *best = res->cands[0].kernels[0];
  RollRun *runs;
  int n = roll_kept(dag, target_default(), best, &runs);
  assert_true(n >= 1);
  assert_true(runs[0].count >= 3);
  assert_int_equal(runs[0].ncarry, 1);
  assert_int_equal(dag->values[best->buffers[runs[0].carry_out[0]].value].var,
                   spec->stmts[0].result.var); /* acc */
  /* iterations first..last, both included, and the loop's line */
  char *want = xasprintf("loops kept: q = %d..%d (line %d)", runs[0].first,
                         runs[0].first + runs[0].count - 1, spec->loops[runs[0].loop].loc.line);
  roll_runs_free(runs, n);
  char *summary = roll_summary(dag, target_default(), best);
  assert_non_null(summary);
  assert_contains(summary, want);
  free(want);
  free(summary);
  search_context_free(ctx);
  search_result_free(res);
  /* --loops unroll: none kept; --loops keep: every run */
  for (LoopChoice c = LOOPS_KEEP; c <= LOOPS_UNROLL; c++) {
    opt.loops = c;
    res = search_run(dag, f->db, &opt);
    assert_non_null(res);
    for (int i = 0; i < res->nplans; i++) {
      int n = roll_find(dag, target_default(), res->plans[i], &runs);
      roll_runs_free(runs, n);
      unsigned all = n ? (1u << n) - 1 : 0;
      assert_int_equal(res->plans[i]->keep_runs, c == LOOPS_KEEP ? all : 0u);
      char *said = roll_summary(dag, target_default(), res->plans[i]);
      assert_true((said != NULL) == (c == LOOPS_KEEP && n > 0));
      free(said);
    }
    search_result_free(res);
  }
  dag_free(dag);
  spec_free(spec);
}

/* The kept runs of an inner loop are told apart by the enclosing loop's value: stvenant_element's
 * M loop (line 22) kept in several iterations of N once read "M = 0..3 (line 22), M = 0..3
 * (line 22)", the same text twice. */
static void test_summary_names_outer_iteration(void **state) {
  Fixture *f = *state;
  Spec *spec = spec_load("specs/stvenant_element.spec", f->lib);
  Dag *dag = dag_build(spec);
  SearchOptions opt = {.top = 10, .loops = LOOPS_KEEP};
  SearchResult *res = search_run(dag, f->db, &opt);
  assert_non_null(res);
  int inner_runs = 0;
  for (int i = 0; i < res->nplans; i++) {
    RollRun *runs;
    int n = roll_kept(dag, target_default(), res->plans[i], &runs);
    char *said = roll_summary(dag, target_default(), res->plans[i]);
    for (int r = 0; r < n; r++) {
      const SpecLoop *l = &spec->loops[runs[r].loop];
      if (l->parent < 0) continue;
      inner_runs++;
      int outer_value = spec->stmts[dag->nodes[res->plans[i]->order[
          res->plans[i]->steps[runs[r].from].call]].stmt].iter[0];
      char *item = xasprintf("%s = %d..%d (line %d, %s = %d)", l->var, runs[r].first,
                             runs[r].first + runs[r].count - 1, l->loc.line,
                             spec->loops[l->parent].var, outer_value);
      assert_contains(said, item);
      assert_true(strstr(strstr(said, item) + 1, item) == NULL); /* said once */
      free(item);
    }
    roll_runs_free(runs, n);
    free(said);
  }
  assert_true(inner_runs >= 2);
  search_result_free(res);
  dag_free(dag);
  spec_free(spec);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_oracle),
      cmocka_unit_test(test_model_choice),
      cmocka_unit_test(test_summary_names_outer_iteration),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
