/*
 * test_sync.c — barrier planning checked against an independent recomputation.  For plans of
 * random fusions over the real library (and every keep_all plan of single calls), the shared
 * accesses of every step are enumerated here from the plan's fields with pattern.c's
 * pattern_access_set (not sync.c's cache), per kernel thread and absolute float; then:
 *   - safety: for every pair of steps with no barrier between them, no thread touches a float
 *     that another thread wrote (RAW/WAW), nor writes one another thread read (WAR);
 *   - exactness: every barrier is needed, i.e. its step conflicts with some step since the
 *     previous barrier;
 *   - the beam's estimate (sync_estimate, which keeps each distinct access since the last
 *     barrier once) counts what seed 004's per-buffer rule counts over every access, recomputed
 *     here, on the same plans and on their steps repeated three times (the repeats it skips).
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

enum { NOBODY = -1, SEVERAL = -2 };

typedef struct {
  int *f, *t;
  bool *w;
  int n, cap;
} Accesses;

static void acc_push(Accesses *a, int f, int t, bool w) {
  if (a->n == a->cap) {
    a->cap = a->cap ? a->cap * 2 : 1024;
    a->f = realloc(a->f, sizeof(int) * (size_t)a->cap);
    a->t = realloc(a->t, sizeof(int) * (size_t)a->cap);
    a->w = realloc(a->w, sizeof(bool) * (size_t)a->cap);
  }
  a->f[a->n] = f, a->t[a->n] = t, a->w[a->n++] = w;
}

static void add_pattern(Accesses *a, const Pattern *p, BlockShape sh, const Buffer *b, bool w) {
  if (b->place != PLACE_SHARED) return;
  int threads = sh.bx * sh.by * sh.bz;
  for (int t = 0; t < threads; t++) {
    AccessSet s;
    assert_true(pattern_access_set(p, sh, t, &s));
    for (int k = 0; k < s.n; k++) {
      assert_true(s.offsets[k] >= 0 && s.offsets[k] < b->bytes / 4);
      acc_push(a, b->offset / 4 + (int)s.offsets[k], t, w);
    }
    access_set_free(&s);
  }
}

static const Buffer *buffer_of(const KernelPlan *p, int value) {
  for (int b = 0; b < p->nbuffers; b++)
    if (p->buffers[b].value == value) return &p->buffers[b];
  fail();
  return NULL;
}

/* The step's routine, which must be one of the implementation's of that kind. */
static const IoRoutine *io_of(const Impl *im, const Step *st) {
  const IoRoutine *l = st->kind == ROUTINE_LOAD ? im->loads : im->saves;
  int n = st->kind == ROUTINE_LOAD ? im->nloads : im->nsaves;
  for (int k = 0; k < n; k++)
    if (&l[k] == st->io) return st->io;
  fail();
  return NULL;
}

static Accesses step_accesses(const Dag *dag, const KernelPlan *p, int s) {
  Accesses a = {0};
  const Step *st = &p->steps[s];
  const Impl *im = p->impl[st->call];
  BlockShape sh = impl_shape(im, p->e);
  sh.w = p->w; /* the plan's vector width */
  if (st->kind == ROUTINE_COMPUTE) {
    const DagNode *nd = &dag->nodes[p->order[st->call]];
    for (int k = 0; k < nd->nargs; k++)
      add_pattern(&a, &im->in[k], sh, buffer_of(p, nd->args[k]), false);
    add_pattern(&a, &im->out, sh, buffer_of(p, nd->result), true);
  } else {
    add_pattern(&a, &io_of(im, st)->ls, sh, &p->buffers[st->buf[0]], st->kind == ROUTINE_LOAD);
  }
  return a;
}

static bool other(int who, int t) { return who == SEVERAL || (who >= 0 && who != t); }

/* Does step j conflict with step i (i earlier, no barrier between)? */
static bool conflict(const Accesses *i, const Accesses *j, int nfloats) {
  int *writer = malloc(sizeof(int) * (size_t)(nfloats + 1));
  int *reader = malloc(sizeof(int) * (size_t)(nfloats + 1));
  for (int f = 0; f < nfloats; f++) writer[f] = reader[f] = NOBODY;
  for (int k = 0; k < i->n; k++) {
    int *who = i->w[k] ? &writer[i->f[k]] : &reader[i->f[k]];
    *who = (*who == NOBODY || *who == i->t[k]) ? i->t[k] : SEVERAL;
  }
  bool c = false;
  for (int k = 0; k < j->n && !c; k++)
    c = other(writer[j->f[k]], j->t[k]) || (j->w[k] && other(reader[j->f[k]], j->t[k]));
  free(writer);
  free(reader);
  return c;
}

static int checked_plans, checked_barriers, checked_estimates;

/* The shared accesses of every step, as sync.c takes them (patterns at the plan's width). */
static StepAccesses *shared_accesses(const Dag *dag, const KernelPlan *p) {
  StepAccesses *sa = calloc((size_t)p->nsteps, sizeof *sa);
  for (int s = 0; s < p->nsteps; s++) {
    const Step *st = &p->steps[s];
    BlockShape sh = impl_shape(st->impl, p->e);
    sh.w = p->w;
    for (int a = 0; a < st->nbuf; a++) {
      const Buffer *b = &p->buffers[st->buf[a]];
      bool output = st->kind == ROUTINE_COMPUTE && a + 1 == st->nbuf;
      if (b->place != PLACE_SHARED) continue;
      const Pattern *pat = st->io ? &st->io->ls : output ? &st->impl->out : &st->impl->in[a];
      sa[s].acc[sa[s].n++] = (SharedAccess){pat, sh, b->offset / 4, b->bytes / 4,
                                            st->kind == ROUTINE_LOAD || output,
                                            dag_value_label(dag, b->value)};
    }
  }
  return sa;
}

/* Seed 004's rule over every access since the last barrier, repeats included: a barrier before
 * a step that touches a buffer's bytes another access touched, one of them writing, unless both
 * are the same buffer through compatible patterns. */
static int estimate_reference(AccessCache *ac, const StepAccesses *sa, int nsteps) {
  int barriers = 0, since = 0;
  for (int j = 0; j < nsteps; j++) {
    bool conflict_found = false;
    for (int i = since; i < j && !conflict_found; i++)
      for (int x = 0; x < sa[j].n && !conflict_found; x++)
        for (int y = 0; y < sa[i].n && !conflict_found; y++) {
          const SharedAccess *a = &sa[j].acc[x], *r = &sa[i].acc[y];
          bool overlap = a->base_float < r->base_float + r->nfloats &&
                         r->base_float < a->base_float + a->nfloats;
          bool same = a->base_float == r->base_float && a->nfloats == r->nfloats;
          conflict_found = overlap && (a->write || r->write) &&
                           (!same || !access_compatible(ac, a->pat, a->shape, r->pat, r->shape));
        }
    if (conflict_found) barriers++, since = j;
  }
  return barriers;
}

static void verify_estimate(SearchContext *ctx, const KernelPlan *p) {
  StepAccesses *sa = shared_accesses(ctx->dag, p);
  assert_int_equal(sync_estimate(ctx->access, p, sa),
                   estimate_reference(ctx->access, sa, p->nsteps));
  KernelPlan thrice = *p;
  thrice.nsteps = 3 * p->nsteps;
  StepAccesses *sa3 = calloc((size_t)thrice.nsteps, sizeof *sa3);
  for (int s = 0; s < thrice.nsteps; s++) sa3[s] = sa[s % p->nsteps];
  assert_int_equal(sync_estimate(ctx->access, &thrice, sa3),
                   estimate_reference(ctx->access, sa3, thrice.nsteps));
  free(sa3);
  free(sa);
  checked_estimates++;
}

static void verify_plan(const Dag *dag, const KernelPlan *p) {
  Accesses *acc = calloc((size_t)p->nsteps, sizeof *acc);
  for (int s = 0; s < p->nsteps; s++) acc[s] = step_accesses(dag, p, s);
  int nfloats = p->smem_bytes / 4, last_barrier = 0;
  for (int j = 0; j < p->nsteps; j++) {
    if (p->steps[j].barrier_before) {
      bool needed = false;
      for (int i = last_barrier; i < j && !needed; i++)
        needed = conflict(&acc[i], &acc[j], nfloats);
      assert_true(needed);
      last_barrier = j;
      checked_barriers++;
    }
    for (int i = last_barrier; i < j; i++)
      if (!p->steps[j].barrier_before) assert_false(conflict(&acc[i], &acc[j], nfloats));
  }
  for (int s = 0; s < p->nsteps; s++) free(acc[s].f), free(acc[s].t), free(acc[s].w);
  free(acc);
  checked_plans++;
}

typedef struct {
  Library *lib;
  Spec *spec;
  Dag *dag;
  TimingDb *db;
  SearchContext *ctx;
} World;

static World load_world(const char *name) {
  World w = {0};
  char path[256];
  snprintf(path, sizeof path, "%s/%s.spec", TEST_SPECS, name);
  w.lib = library_load(TEST_LIBRARY);
  assert_non_null(w.lib);
  w.spec = spec_load(path, w.lib);
  assert_non_null(w.spec);
  w.dag = dag_build(w.spec);
  w.db = timingdb_analytic();
  w.ctx = search_context_new(w.dag, w.db, NULL);
  return w;
}

static void free_world(World *w) {
  search_context_free(w->ctx);
  dag_free(w->dag);
  spec_free(w->spec);
  timingdb_free(w->db);
  library_free(w->lib);
}

static void verify_fusion(World *w, NodeSet nodes, bool keep_all) {
  int n;
  KernelPlan **ps = combine_fusion(w->ctx, nodes, keep_all, &n);
  assert_true(n >= 1);
  for (int k = 0; k < n; k++) {
    verify_plan(w->dag, ps[k]);
    verify_estimate(w->ctx, ps[k]);
    kernel_plan_free(ps[k]);
  }
  free(ps);
}

static void test_random_fusions(void **state) {
  (void)state;
  const char *specs[] = {"stvenant", "synctest", "bigfusion", "bigfusion_full", "chain12"};
  srand(4242);
  for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
    World w = load_world(specs[k]);
    FusionSet fs = fusion_enumerate(w.dag, 5);
    for (int f = 0; f < fs.n; f++) {
      NodeSet set = fusion_set_get(&fs, f);
      if (rand() % 4 == 0 || nodeset_count(&set) == 5) verify_fusion(&w, set, false);
    }
    fusion_set_free(&fs);
    free_world(&w);
  }
  assert_true(checked_barriers > 0);
}

static void test_every_single_call_plan(void **state) {
  (void)state;
  World w = load_world("stvenant");
  for (int node = 0; node < w.dag->nnodes; node++) verify_fusion(&w, nodeset_of(node), true);
  free_world(&w);
  w = load_world("synctest");
  for (int node = 0; node < w.dag->nnodes; node++) verify_fusion(&w, nodeset_of(node), true);
  free_world(&w);
  print_message("verified %d plans, %d barriers, %d estimates\n", checked_plans,
                checked_barriers, checked_estimates);
}

/* A read and a write of one value through patterns that are not compatible, from the single-call
 * plans of stvenant; false when none has both. */
static bool incompatible_pair(World *w, SharedAccess *read, SharedAccess *write) {
  for (int node = 0; node < w->dag->nnodes; node++) {
    int n;
    KernelPlan **ps = combine_fusion(w->ctx, nodeset_of(node), true, &n);
    bool found = false;
    for (int k = 0; k < n; k++) {
      StepAccesses *sa = shared_accesses(w->dag, ps[k]);
      for (int i = 0; i < ps[k]->nsteps && !found; i++)
        for (int j = 0; j < ps[k]->nsteps && !found; j++)
          for (int x = 0; x < sa[i].n && !found; x++)
            for (int y = 0; y < sa[j].n && !found; y++) {
              *read = sa[i].acc[x], *write = sa[j].acc[y];
              found = !read->write && write->write && read->nfloats == write->nfloats &&
                      read->base_float == write->base_float &&
                      !access_compatible(w->ctx->access, read->pat, read->shape, write->pat,
                                         write->shape);
            }
      free(sa);
      kernel_plan_free(ps[k]);
    }
    free(ps);
    if (found) return true;
  }
  return false;
}

/* The estimate keeps an access once since the last barrier, but the same pattern on another
 * buffer is another access: a read of X, the same read of Y, then a write of Y that the read does
 * not allow is one barrier (before the write), whatever X's read was. */
static void test_estimate_tells_buffers_apart(void **state) {
  (void)state;
  World w = load_world("stvenant");
  SharedAccess read, write;
  assert_true(incompatible_pair(&w, &read, &write));
  StepAccesses sa[3] = {{.n = 1}, {.n = 1}, {.n = 1}};
  sa[0].acc[0] = read, sa[1].acc[0] = read, sa[2].acc[0] = write;
  sa[0].acc[0].base_float = 0;
  sa[1].acc[0].base_float = sa[2].acc[0].base_float = read.nfloats;
  KernelPlan p = {.nsteps = 3};
  assert_int_equal(estimate_reference(w.ctx->access, sa, 3), 1);
  assert_int_equal(sync_estimate(w.ctx->access, &p, sa), 1);
  free_world(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_fusions),
      cmocka_unit_test(test_every_single_call_plan),
      cmocka_unit_test(test_estimate_tells_buffers_apart),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
