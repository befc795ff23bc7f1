/*
 * unaligned.c — the plan a candidate runs when the caller's arrays are not 16-byte aligned
 * (docs/design.md §5.4): a FEM code calls kernels on sub-ranges of its arrays (a colour of a mesh
 * colouring, a batch), whose pointers are aligned only to their element type.  The contiguous
 * routines move the block's chunk W reals at a time; at W = 1 (one real per access) they need
 * no more than that alignment.  So each kernel of the candidate is rebuilt at W = 1 from its
 * recipe (the same implementations, E and routine variants; combine.c re-derives the buffers
 * and barriers and predicts it anew), and planned by a narrow search only where that cannot be
 * built.  A kernel shared by several candidates is rebuilt once.  emit_cuda.c puts both plans
 * behind one launch that picks by the pointers (and peels sub-ranges: docs/generated.md).
 *
 * One planner serves every candidate of an emission, so that what the model says about the
 * database (no timings at W = 1) is said once; it does not warn about single routines missing
 * from the database, which the search already did.
 */
#include "kasgen.h"

#include <stdlib.h>

#define UNALIGNED_BEAM_WIDTH 2

struct UnalignedPlanner {
  Target *target; /* the search's, at W = 1 */
  SearchContext *ctx;
  const TimingDb *db;
  /* The kernels planned so far: candidates of one ranking share most of their kernels, and a
   * kernel's plan at W = 1 depends on its calls alone. */
  KernelPlan **planned;
  int nplanned, cap;
};

UnalignedPlanner *unaligned_planner_new(const Dag *dag, const TimingDb *db, const Target *t,
                                        LoopChoice loops) {
  UnalignedPlanner *u = xcalloc(1, sizeof *u);
  u->target = target_unaligned(t ? t : target_default());
  u->ctx = search_context_new(dag, db, u->target);
  u->ctx->loops = loops;
  /* Searched only for a kernel its recipe cannot rebuild, and run only where a pointer cannot
   * be aligned even by peeling: a narrow beam finds a good enough plan at a fraction of the
   * main search's time, which the default `kasgen SPEC` must not double. */
  u->ctx->beam_width = UNALIGNED_BEAM_WIDTH;
  model_memo_quiet(u->ctx->model);
  u->db = db;
  return u;
}

void unaligned_planner_free(UnalignedPlanner *u) {
  if (!u) return;
  for (int i = 0; i < u->nplanned; i++) kernel_plan_free(u->planned[i]);
  free(u->planned);
  search_context_free(u->ctx);
  target_free(u->target);
  free(u);
}

/* Whether a plan moves one of its arrays W reals at a time with W > 1. */
static bool moves_vectors(const KernelPlan *p) {
  for (int b = 0; b < p->nbuffers && p->w > 1; b++) {
    const Buffer *buf = &p->buffers[b];
    if ((buf->load && buf->load->ls.uses_w) || (buf->save && buf->save->ls.uses_w)) return true;
  }
  return false;
}

/* The best plan of kernel k's calls at W = 1; NULL + diagnostic when none exists. */
static KernelPlan *replan(SearchContext *ctx, const KernelPlan *k) {
  int n = 0;
  KernelPlan **plans = combine_fusion(ctx, k->nodes, false, &n);
  KernelPlan *best = n > 0 ? plans[0] : NULL;
  for (int i = 1; i < n; i++) kernel_plan_free(plans[i]);
  free(plans);
  if (!best)
    diag_error((SrcLoc){.file = ctx->dag->spec->path}, "no plan for a kernel of %d calls with "
               "arrays of any alignment", k->ncalls);
  return best;
}

/* A staged kernel ends in a barrier and the copy-out of its rows: that phase overlaps other
 * blocks' work only where several are resident.  Measured on the H100 (benchmarks/RESULTS.md,
 * session 23, call H; sub-range against whole arrays, every output staged): kernels of 4 to 8
 * resident blocks ran at 103.1-104.7%, kernels of 2 or 3 at 112-147% (stvenant's single kernel,
 * 174 registers, 146.7%), where the model predicted staging 1% faster. */
#define ROW_STAGING_MIN_BLOCKS 4

/* Where rows may start mid-sector: the plan with its component-major outputs staged (written
 * out from sectors) when the model predicts that faster than writing them straight, the
 * sectors they share charged, and enough blocks stay resident (staging.c says what the copy
 * costs and saves). */
static KernelPlan *choose_row_staging(UnalignedPlanner *u, KernelPlan *p) {
  if (!u->target->misaligned_rows) return p;
  KernelPlan *staged = kernel_plan_clone(p);
  staged->stage_rows = true;
  Staging s = staging_of(u->ctx->dag, u->target, staged);
  if (staging_holds_rows(&s) &&
      model_resident_blocks(u->db, staged, s.smem_bytes) >= ROW_STAGING_MIN_BLOCKS) {
    staged->predicted_ns_per_elem = model_predict_kernel(u->ctx, staged);
    if (staged->predicted_ns_per_elem < p->predicted_ns_per_elem) {
      staging_free(&s);
      kernel_plan_free(p);
      return staged;
    }
  }
  staging_free(&s);
  kernel_plan_free(staged);
  return p;
}

bool unaligned_reads_rows(const Dag *dag, const Target *t, const Buffer *b) {
  return b->load && target_value_layout(t, dag, b->value) == LAYOUT_COMPONENT;
}

/* Whether plan p loads component-major rows from global memory: the plan for any alignment reads
 * them through kas_row_load (library/kas_device.h says what that saves and costs). */
static bool loads_rows(const Dag *dag, const Target *t, const KernelPlan *p) {
  for (int b = 0; b < p->nbuffers && t->misaligned_rows; b++)
    if (unaligned_reads_rows(dag, t, &p->buffers[b])) return true;
  return false;
}

/* replan, remembered per set of calls: a copy of the plan found the first time. */
static KernelPlan *replan_once(UnalignedPlanner *u, const KernelPlan *k) {
  for (int i = 0; i < u->nplanned; i++)
    if (nodeset_equal(&u->planned[i]->nodes, &k->nodes)) return kernel_plan_clone(u->planned[i]);
  /* The same plan at W = 1 (every routine exists at any width), which needs no search; a
   * search only where it cannot be built. */
  PlanRecipe r;
  KernelPlan *p = NULL;
  if (combine_recipe_of(u->ctx, k, &r)) {
    p = combine_build(u->ctx, k->nodes, &r);
    plan_recipe_free(&r);
  }
  if (!p) p = replan(u->ctx, k);
  if (!p) return NULL;
  p = choose_row_staging(u, p);
  p->hint_rows = loads_rows(u->ctx->dag, u->target, p);
  /* loops where the search's plan kept some (the model asks again), or every one (--loops keep) */
  if (k->keep_runs || u->ctx->loops == LOOPS_KEEP) model_keep_loops(u->ctx, p);
  if (u->nplanned == u->cap) {
    u->cap = u->cap ? 2 * u->cap : 16;
    u->planned = xrealloc(u->planned, sizeof *u->planned * (size_t)u->cap);
  }
  u->planned[u->nplanned++] = p;
  return kernel_plan_clone(p);
}

Candidate *unaligned_candidate(UnalignedPlanner *u, const Candidate *c, bool *failed) {
  bool needed = false;
  for (int k = 0; k < c->nkernels; k++)
    needed |= moves_vectors(c->kernels[k]) ||
              staging_moves_vectors(u->ctx->dag, u->ctx->target, c->kernels[k]);
  /* Rows of any alignment: a kernel may be faster with its outputs' rows staged, and reads its
   * input rows with a hint. */
  if (!needed && !u->target->misaligned_rows) return NULL;
  Candidate *any = xcalloc(1, sizeof *any);
  any->kernels = xcalloc((size_t)c->nkernels, sizeof *any->kernels);
  any->rank = c->rank;
  any->dag = c->dag;
  bool ok = true;
  for (int k = 0; k < c->nkernels && ok; k++) {
    any->kernels[k] = replan_once(u, c->kernels[k]);
    ok = any->kernels[k] != NULL;
    any->nkernels += ok;
    if (ok) any->predicted_ns_per_elem += any->kernels[k]->predicted_ns_per_elem;
  }
  /* each launch's share, as search.c counts it */
  any->predicted_ns_per_elem += any->nkernels * model_launch_share_ns(u->db, u->ctx->n);
  for (int k = 0; k < any->nkernels && !needed; k++)
    needed = any->kernels[k]->stage_rows || any->kernels[k]->hint_rows;
  if (ok && needed) return any;
  if (ok) { /* the same plan as the fast one: no second plan */
    unaligned_candidate_free(any);
    return NULL;
  }
  unaligned_candidate_free(any);
  *failed = true;
  return NULL;
}

void unaligned_planner_elements(UnalignedPlanner *u, long n) {
  if (n > 0) u->ctx->n = n;
}

void unaligned_candidate_free(Candidate *c) {
  if (!c) return;
  for (int k = 0; k < c->nkernels; k++) kernel_plan_free(c->kernels[k]);
  free(c->kernels);
  free(c);
}
