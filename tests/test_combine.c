/*
 * test_combine.c — combine_fusion on the seed specs over the real library: every plan is checked
 * field by field against facts recomputed here (value classification, topological order, steps,
 * live ranges, shared-memory layout, register placement re-decided with pattern.c's
 * patterns_compatible rather than combine's cache, block shape and coordinate recomputation), and
 * keep_all on single calls is compared with a brute-force count of the combinations.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static bool in_set(NodeSet s, int n) { return n >= 0 && nodeset_has(&s, n); }

static bool escapes(const Dag *dag, NodeSet nodes, int value) {
  const Value *v = &dag->values[value];
  if (v->is_output) return true;
  for (int k = 0; k < v->nconsumers; k++)
    if (!in_set(nodes, v->consumers[k])) return true;
  return false;
}

static int buffer_of(const KernelPlan *p, int value) {
  int found = -1;
  for (int b = 0; b < p->nbuffers; b++)
    if (p->buffers[b].value == value) {
      assert_int_equal(found, -1); /* one buffer per value */
      found = b;
    }
  return found;
}

/* Whether io is one of im's routines of that kind. */
static bool routine_of(const Impl *im, RoutineKind kind, const IoRoutine *io) {
  const IoRoutine *l = kind == ROUTINE_LOAD ? im->loads : im->saves;
  int n = kind == ROUTINE_LOAD ? im->nloads : im->nsaves;
  for (int k = 0; k < n; k++)
    if (&l[k] == io) return io->kind == kind;
  return false;
}

static bool same_shape(BlockShape a, BlockShape b) {
  return a.bx == b.bx && a.by == b.by && a.bz == b.bz;
}

static void check_order(const Dag *dag, const KernelPlan *p, NodeSet nodes) {
  NodeSet seen = nodeset_empty();
  assert_int_equal(p->ncalls, nodeset_count(&nodes));
  for (int k = 0; k < p->ncalls; k++) {
    int n = p->order[k];
    assert_true(in_set(nodes, n) && !in_set(seen, n));
    NodeSet unmet = nodeset_minus(nodeset_inter(dag->pred[n], nodes), seen);
    assert_true(nodeset_is_empty(&unmet));
    assert_ptr_equal(p->impl[k]->fn, dag->nodes[n].fn);
    nodeset_add(&seen, n);
  }
  assert_true(nodeset_equal(&p->nodes, &nodes));
}

/* Buffers: one per value touched; loaded/saved classification. */
static void check_classification(const Dag *dag, const KernelPlan *p, NodeSet nodes) {
  int expected = 0;
  for (int v = 0; v < dag->nvalues; v++) {
    const Value *val = &dag->values[v];
    bool touched = in_set(nodes, val->producer);
    for (int k = 0; k < val->nconsumers; k++) touched |= in_set(nodes, val->consumers[k]);
    int b = buffer_of(p, v);
    assert_int_equal(b >= 0, touched);
    if (!touched) continue;
    expected++;
    assert_int_equal(p->buffers[b].load != NULL, !in_set(nodes, val->producer));
    assert_int_equal(p->buffers[b].save != NULL,
                     in_set(nodes, val->producer) && escapes(dag, nodes, v));
    if (in_set(nodes, val->producer))
      assert_int_equal(p->order[p->buffers[b].producer], val->producer);
    else
      assert_int_equal(p->buffers[b].producer, -1);
  }
  assert_int_equal(p->nbuffers, expected);
}

static bool step_touches(const Dag *dag, const KernelPlan *p, int s, int b) {
  const Step *st = &p->steps[s];
  if (st->kind != ROUTINE_COMPUTE) return st->buf[0] == b;
  const DagNode *nd = &dag->nodes[p->order[st->call]];
  if (nd->result == p->buffers[b].value) return true;
  for (int a = 0; a < nd->nargs; a++)
    if (nd->args[a] == p->buffers[b].value) return true;
  return false;
}

/* A compute step passes the buffers of its call's arguments, then of its result (the DAG says
 * which values those are). */
static void check_compute_buffers(const Dag *dag, const KernelPlan *p, const Step *st) {
  const DagNode *nd = &dag->nodes[p->order[st->call]];
  assert_null(st->io);
  assert_int_equal(st->nbuf, nd->nargs + 1);
  for (int a = 0; a < nd->nargs; a++) assert_int_equal(p->buffers[st->buf[a]].value, nd->args[a]);
  assert_int_equal(p->buffers[st->buf[nd->nargs]].value, nd->result);
}

/* Steps: computes in order; one load per loaded buffer, right before its first reader's
 * compute (only other loads between); saves right after the producer's compute. */
static void check_steps(const Dag *dag, const KernelPlan *p) {
  int next_call = 0;
  int loads[64] = {0}, saves[64] = {0};
  for (int s = 0; s < p->nsteps; s++) {
    const Step *st = &p->steps[s];
    assert_ptr_equal(st->impl, p->impl[st->call]);
    if (st->kind == ROUTINE_COMPUTE) {
      assert_int_equal(st->call, next_call++);
      check_compute_buffers(dag, p, st);
      continue;
    }
    assert_int_equal(st->nbuf, 1);
    const Buffer *b = &p->buffers[st->buf[0]];
    assert_true(routine_of(st->impl, st->kind, st->io));
    if (st->kind == ROUTINE_LOAD) {
      loads[st->buf[0]]++;
      assert_ptr_equal(st->io, b->load);
      assert_int_equal(st->call, b->load_call);
      int k = s + 1;
      while (p->steps[k].kind == ROUTINE_LOAD) k++;
      assert_int_equal(p->steps[k].kind, ROUTINE_COMPUTE);
      assert_true(step_touches(dag, p, k, st->buf[0]));
      for (int e = 0; e < s; e++) assert_false(step_touches(dag, p, e, st->buf[0]));
      const DagNode *owner = &dag->nodes[p->order[st->call]];
      assert_int_equal(owner->args[st->io->arg], b->value);
    } else {
      saves[st->buf[0]]++;
      assert_ptr_equal(st->io, b->save);
      assert_int_equal(st->call, b->producer);
      assert_int_equal(p->steps[s - 1].kind, ROUTINE_COMPUTE);
      assert_int_equal(p->steps[s - 1].call, st->call);
      assert_int_equal(dag->nodes[p->order[st->call]].result, b->value);
    }
  }
  assert_int_equal(next_call, p->ncalls);
  for (int b = 0; b < p->nbuffers; b++) {
    assert_int_equal(loads[b], p->buffers[b].load ? 1 : 0);
    assert_int_equal(saves[b], p->buffers[b].save ? 1 : 0);
    int first = -1, last = -1;
    for (int s = 0; s < p->nsteps; s++)
      if (step_touches(dag, p, s, b)) {
        if (first < 0) first = s;
        last = s;
      }
    assert_int_equal(p->buffers[b].first_use, first);
    assert_int_equal(p->buffers[b].last_use, last);
  }
}

static void check_shared_layout(const Dag *dag, const TimingDb *db, const KernelPlan *p) {
  assert_true(p->smem_bytes <= db->dev.smem_per_block_optin);
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *x = &p->buffers[b];
    if (x->place != PLACE_SHARED) {
      assert_int_equal(x->offset, -1);
      assert_true(x->reg_floats > 0);
      continue;
    }
    assert_int_equal(x->bytes, p->e * dag->values[x->value].type->size * 4);
    assert_int_equal(x->offset % 16, 0);
    assert_true(x->offset >= 0 && x->offset + x->bytes <= p->smem_bytes);
    for (int c = 0; c < b; c++) {
      const Buffer *y = &p->buffers[c];
      if (y->place != PLACE_SHARED) continue;
      bool live_together = x->first_use <= y->last_use && y->first_use <= x->last_use;
      bool bytes_overlap = x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes;
      assert_false(live_together && bytes_overlap);
    }
  }
}

/* Re-decides register placement with pattern.c directly. */
static void check_placement(const Dag *dag, const KernelPlan *p) {
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *buf = &p->buffers[b];
    const Pattern *pats[32];
    BlockShape shapes[32];
    int n = 0;
    for (int s = 0; s < p->nsteps; s++) {
      const Step *st = &p->steps[s];
      const Impl *im = p->impl[st->call];
      BlockShape sh = impl_shape(im, p->e);
      sh.w = p->w; /* the plan's vector width */
      if (st->kind != ROUTINE_COMPUTE && st->buf[0] == b) {
        pats[n] = &st->io->ls, shapes[n++] = sh;
      } else if (st->kind == ROUTINE_COMPUTE) {
        const DagNode *nd = &dag->nodes[p->order[st->call]];
        for (int a = 0; a < nd->nargs; a++)
          if (nd->args[a] == buf->value) pats[n] = &im->in[a], shapes[n++] = sh;
        if (nd->result == buf->value) pats[n] = &im->out, shapes[n++] = sh;
      }
    }
    bool reg = true;
    for (int i = 0; i < n; i++) {
      reg &= !pats[i]->noreg;
      for (int j = i + 1; j < n; j++)
        reg &= patterns_compatible(pats[i], shapes[i], pats[j], shapes[j]);
    }
    assert_int_equal(buf->place == PLACE_REGISTER, reg);
    if (reg) assert_int_equal(buf->reg_floats, pattern_register_extent(pats[0], shapes[0]));
    assert_non_null(buf->why);
    assert_true(!strncmp(buf->why, reg ? "registers:" : "shared:", reg ? 10 : 7));
  }
}

static void check_block(const KernelPlan *p) {
  assert_int_equal(p->e % 4, 0);
  assert_true(p->threads <= KAS_MAX_THREADS);
  assert_int_equal(p->block.bx * p->block.by * p->block.bz, p->threads);
  bool block_is_a_call = false;
  for (int k = 0; k < p->ncalls; k++) {
    assert_true(impl_threads(p->impl[k], p->e) <= p->threads);
    block_is_a_call |= impl_threads(p->impl[k], p->e) == p->threads &&
                       same_shape(impl_shape(p->impl[k], p->e), p->block);
  }
  assert_true(block_is_a_call);
  int bars = 0;
  for (int s = 0; s < p->nsteps; s++) {
    const Step *st = &p->steps[s];
    bool differs = !same_shape(impl_shape(p->impl[st->call], p->e), p->block);
    assert_int_equal(st->recompute_coords, differs);
    bars += st->barrier_before;
    assert_int_equal(st->barrier_why != NULL, st->barrier_before);
  }
  assert_int_equal(bars, p->barriers);
  assert_true(p->barriers <= p->barriers_possible);
  assert_true(isfinite(p->predicted_ns_per_elem) && p->predicted_ns_per_elem > 0);
}

static void check_plan(const World *w, const KernelPlan *p, NodeSet nodes) {
  check_order(w->dag, p, nodes);
  check_classification(w->dag, p, nodes);
  check_steps(w->dag, p);
  check_shared_layout(w->dag, w->db, p);
  check_placement(w->dag, p);
  check_block(p);
}

static void check_spec(const char *name, int maxf) {
  World w = load_world(name);
  FusionSet fs = fusion_enumerate(w.dag, maxf);
  for (int f = 0; f < fs.n; f++) {
    int n;
    NodeSet set = fusion_set_get(&fs, f);
    KernelPlan **ps = combine_fusion(w.ctx, set, false, &n);
    assert_true(n >= 1);
    for (int k = 0; k < n; k++) {
      check_plan(&w, ps[k], set);
      if (k) assert_true(ps[k - 1]->predicted_ns_per_elem <= ps[k]->predicted_ns_per_elem);
    }
    for (int k = 0; k < n; k++) kernel_plan_free(ps[k]);
    free(ps);
  }
  fusion_set_free(&fs);
  free_world(&w);
}

static void test_stvenant_plans(void **state) {
  (void)state;
  check_spec("stvenant", 4);
}

static void test_seed_specs_plans(void **state) {
  (void)state;
  check_spec("bigfusion", 4);
  check_spec("synctest", 4);
  check_spec("stvenant_inner", 3);
  check_spec("chain12", 3);
}

/* The full StVenant kernel keeps the ttmul411 -> ttmul3212 tensor in registers in its best plan
 * when their one-thread-per-element forms are compatible; at least some plan must use a
 * register for an internal value (that is the point of fusing). */
static void test_stvenant_full_fusion(void **state) {
  (void)state;
  World w = load_world("stvenant");
  int n;
  KernelPlan **ps = combine_fusion(w.ctx, mask_set(0xf), false, &n);
  assert_true(n >= 1);
  bool some_register = false;
  for (int k = 0; k < n; k++)
    for (int b = 0; b < ps[k]->nbuffers; b++)
      some_register |= ps[k]->buffers[b].place == PLACE_REGISTER && !ps[k]->buffers[b].load &&
                       !ps[k]->buffers[b].save;
  assert_true(some_register);
  for (int k = 0; k < n; k++) kernel_plan_free(ps[k]);
  free(ps);
  free_world(&w);
}

/* Component-major rows of any alignment (issue #13): the model charges the sectors that rows
 * moved straight share (a prediction above the aligned target's, by less than the stores'
 * share), and the plan for any alignment stages a kernel's output rows exactly when the oracle
 * says so: staged predicted faster and at least 4 blocks resident per SM; under the analytic
 * model and the H100's database (whose best whole-spec plans are large: 2 blocks per SM).  It
 * reads component-major rows with the L2 hint (hint_rows), element-major arrays never. */
static void test_misaligned_rows(void **state) {
  (void)state;
  static const char *const specs[] = {"synctest", "stvenant", "stvenant_inner"};
  int staged_count = 0, straight_count = 0;
  for (int i = 0; i < 6; i++) {
    for (int prec = 0; prec < 2; prec++) {
      World w = load_world(specs[i % 3]);
      if (i >= 3) { /* the H100's database: plans of 2 resident blocks, which stage nothing */
        timingdb_free(w.db);
        w.db = timingdb_load("benchmarks/nvidia-h100-80gb-hbm3.xml");
        assert_non_null(w.db);
      }
      Precision precision = prec ? PREC_DOUBLE : PREC_SINGLE;
      Target *t = target_new(w.dag, precision, "component");
      Target *any = target_unaligned(t);
      SearchContext *aligned = search_context_new(w.dag, w.db, t);
      SearchContext *rows = search_context_new(w.dag, w.db, any);
      int n;
      KernelPlan **ps = combine_fusion(rows, mask_set((1u << w.dag->nnodes) - 1), false, &n);
      assert_true(n >= 1);
      KernelPlan *p = ps[0];
      double straight = model_predict_kernel(rows, p), plain = model_predict_kernel(aligned, p);
      assert_true(straight > plain);
      assert_true(straight < plain * 1.145);
      KernelPlan *staged = kernel_plan_clone(p);
      staged->stage_rows = true;
      Staging s = staging_of(w.dag, any, staged);
      bool expect = s.n > 0 &&
                    model_resident_blocks(w.db, staged, s.smem_bytes) >= 4 &&
                    model_predict_kernel(rows, staged) < straight;
      staging_free(&s);
      /* the same kernel as the fast plan's only kernel */
      KernelPlan *fast_kernel = p;
      Candidate c = {.kernels = &fast_kernel, .nkernels = 1};
      UnalignedPlanner *u = unaligned_planner_new(w.dag, w.db, t, LOOPS_MODEL);
      bool failed = false;
      Candidate *got = unaligned_candidate(u, &c, &failed);
      assert_false(failed);
      /* it loads component-major rows, which the plan for any alignment reads with the hint */
      assert_non_null(got);
      assert_true(got->kernels[0]->hint_rows);
      assert_int_equal(got->kernels[0]->stage_rows, expect);
      staged_count += expect, straight_count += !expect;
      unaligned_candidate_free(got);
      unaligned_planner_free(u);
      /* element-major arrays: no row of them is read with the hint */
      Target *em = target_new(w.dag, precision, "element");
      SearchContext *em_ctx = search_context_new(w.dag, w.db, em);
      int nem;
      KernelPlan **pem = combine_fusion(em_ctx, mask_set((1u << w.dag->nnodes) - 1), false, &nem);
      assert_true(nem >= 1);
      Candidate cem = {.kernels = &pem[0], .nkernels = 1};
      u = unaligned_planner_new(w.dag, w.db, em, LOOPS_MODEL);
      got = unaligned_candidate(u, &cem, &failed);
      assert_false(failed);
      assert_true(!got || !got->kernels[0]->hint_rows);
      unaligned_candidate_free(got);
      unaligned_planner_free(u);
      for (int k = 0; k < nem; k++) kernel_plan_free(pem[k]);
      free(pem);
      search_context_free(em_ctx);
      target_free(em);
      kernel_plan_free(staged);
      for (int k = 0; k < n; k++) kernel_plan_free(ps[k]);
      free(ps);
      search_context_free(rows);
      search_context_free(aligned);
      target_free(any);
      target_free(t);
      free_world(&w);
    }
  }
  assert_true(staged_count > 0 && straight_count > 0); /* both ways were checked */
}

/* keep_all on every single call: every plan distinct, none more than the brute-force count of
 * (E, impl, load variants, save variant), the pruned best no better than the exhaustive best. */
static void test_keep_all_single_calls(void **state) {
  (void)state;
  World w = load_world("stvenant");
  static const int es[] = {4, 8, 16, 32, 64, 96, 128, 192, 256};
  for (int node = 0; node < w.dag->nnodes; node++) {
    const DagNode *nd = &w.dag->nodes[node];
    NodeSet one = nodeset_of(node);
    bool saved = escapes(w.dag, one, nd->result);
    long brute = 0;
    for (size_t k = 0; k < sizeof es / sizeof *es; k++)
      for (int i = 0; i < nd->fn->nimpls; i++) {
        const Impl *im = &nd->fn->impls[i];
        if (impl_threads(im, es[k]) > KAS_MAX_THREADS) continue;
        long c = saved ? im->nsaves : 1;
        for (int a = 0; a < nd->nargs; a++) {
          int nl = 0;
          for (int j = 0; j < im->nloads; j++) nl += im->loads[j].arg == a;
          c *= nl;
        }
        brute += c;
      }
    int n, np;
    KernelPlan **all = combine_fusion(w.ctx, one, true, &n);
    KernelPlan **pruned = combine_fusion(w.ctx, one, false, &np);
    assert_true(n >= 1 && n <= brute && np >= 1 && np <= n);
    assert_true(pruned[0]->predicted_ns_per_elem >= all[0]->predicted_ns_per_elem - 1e-12);
    for (int a = 0; a < n; a++) {
      check_plan(&w, all[a], one);
      for (int b = 0; b < a; b++) {
        bool same = all[a]->e == all[b]->e && all[a]->impl[0] == all[b]->impl[0];
        for (int x = 0; x < all[a]->nbuffers && same; x++)
          same = all[a]->buffers[x].load == all[b]->buffers[x].load &&
                 all[a]->buffers[x].save == all[b]->buffers[x].save;
        assert_false(same);
      }
    }
    for (int a = 0; a < n; a++) kernel_plan_free(all[a]);
    for (int a = 0; a < np; a++) kernel_plan_free(pruned[a]);
    free(all);
    free(pruned);
  }
  free_world(&w);
}

/* The beam search's best plan is close to the exhaustive best on every two-call fusion of
 * StVenant and bigfusion (it searched well; 3% slack for the beam's pruning). */
static void test_beam_close_to_exhaustive(void **state) {
  (void)state;
  const char *specs[] = {"stvenant", "bigfusion"};
  for (size_t k = 0; k < 2; k++) {
    World w = load_world(specs[k]);
    FusionSet fs = fusion_enumerate(w.dag, 2);
    for (int f = 0; f < fs.n; f++) {
      NodeSet set = fusion_set_get(&fs, f);
      if (nodeset_count(&set) != 2) continue;
      int n, m;
      KernelPlan **all = combine_fusion(w.ctx, set, true, &n);
      KernelPlan **beam = combine_fusion(w.ctx, set, false, &m);
      assert_true(n >= 1 && m >= 1);
      assert_true(beam[0]->predicted_ns_per_elem >= all[0]->predicted_ns_per_elem - 1e-12);
      assert_true(beam[0]->predicted_ns_per_elem <= 1.03 * all[0]->predicted_ns_per_elem);
      for (int i = 0; i < n; i++) kernel_plan_free(all[i]);
      for (int i = 0; i < m; i++) kernel_plan_free(beam[i]);
      free(all);
      free(beam);
    }
    fusion_set_free(&fs);
    free_world(&w);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stvenant_plans),
      cmocka_unit_test(test_seed_specs_plans),
      cmocka_unit_test(test_stvenant_full_fusion),
      cmocka_unit_test(test_misaligned_rows),
      cmocka_unit_test(test_keep_all_single_calls),
      cmocka_unit_test(test_beam_close_to_exhaustive),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
