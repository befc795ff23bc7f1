/*
 * combine.c — every implementation choice for one fusion, each turned into a complete
 * KernelPlan (docs/design.md §6 steps 2-7, seed 004 §3.6.2-3.6.4 and §4.1-4.5).
 *
 * A fusion's values are classified once (FusionInfo): loaded (read inside, produced outside or a
 * spec input; loaded once for all its readers, by a load routine of its first reader in node
 * order), internal, or saved (produced inside and read outside or returned).  A Choice fixes E,
 * an implementation per call, a load variant per loaded value and a save variant per saved one.
 * build_plan turns a Choice into a plan: placement (placement.c) -> order (linearize.c) -> steps
 * and live ranges -> shared offsets (smem.c) -> block shape and coordinates -> barriers
 * (sync.c) -> prediction (model.c).
 *
 * The choices multiply (impls^calls x variants x E), so unless keep_all is set we search them
 * with a beam over the calls in node order.  A partial Choice (the first k calls decided) is
 * built as the plan of those calls alone, with an estimated barrier count (sync_estimate, per
 * buffer, instead of the exact per-thread planning that would dominate the time), and predicted;
 * adding calls only adds routines, shared memory and barriers, so this is a cheap, optimistic
 * estimate of every completion.  Each level keeps the best child of every (E, implementation of
 * the call just decided) -- a block size or mapping that looks worse alone may pay off with later
 * calls -- plus the BEAM_WIDTH best others.  The best FINAL_BUILDS complete choices are built
 * exactly (once with overlapping shared buffers and, if bytes were reused, once with disjoint
 * ones: reuse can force write-after-read barriers) and the best KEEP_PLANS returned.
 *
 * Limits: a fusion of more than LIN_MAX_CALLS calls gets no plan (the subset DP of linearize.c);
 * fusions come from fusion.c with at most --max-fusion calls (default 6).
 */
#include "kasgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BEAM_WIDTH 10
#define KEEP_PLANS 4
#define FINAL_BUILDS 12 /* complete plans (exact barriers) built from the final beam */

/* Elements per block tried: multiples of 4 (16-byte coalesced routines need them). */
static const int E_CANDIDATES[] = {4, 8, 16, 32, 64, 96, 128, 192, 256};
#define N_E_CANDIDATES ((int)(sizeof E_CANDIDATES / sizeof E_CANDIDATES[0]))

typedef struct {
  int nactive;
  uint64_t regmask[2];
  int order[LIN_MAX_CALLS];
  bool ok;
} LinMemo;

typedef struct {
  SearchContext *ctx;
  const Dag *dag; /* ctx->dag */
  NodeSet nodes;
  int ncalls;
  int node[LIN_MAX_CALLS]; /* node index of local call c, ascending (topological) */
  uint32_t pred[LIN_MAX_CALLS];
  int nvals;
  int value[LIN_MAX_VALUES];    /* dag value index */
  int producer[LIN_MAX_VALUES]; /* local call, -1 = loaded */
  uint32_t consumers[LIN_MAX_VALUES];
  bool saved[LIN_MAX_VALUES];
  int owner[LIN_MAX_VALUES];     /* loaded: local call whose load routine fills it */
  int owner_arg[LIN_MAX_VALUES]; /* its argument position there */
  int arg_value[LIN_MAX_CALLS][KAS_MAX_ARGS]; /* local value of each argument of local call c */
  int result_value[LIN_MAX_CALLS];           /* local value call c produces */
  int floats[LIN_MAX_VALUES];
  int smem_limit, thread_limit;
  LinMemo *memo;
  int nmemo, capmemo;
} FusionInfo;

typedef struct {
  int e;
  const Impl *impl[LIN_MAX_CALLS];
  int load[LIN_MAX_VALUES]; /* index into the owner impl's loads[] */
  int save[LIN_MAX_VALUES]; /* index into the producer impl's saves[] */
} Choice;

/* ---- the target (precision, layouts) ------------------------------------------------------- */

/* Bytes of one real of the search's target: shared buffers hold E * size of them. */
static int real_bytes(const FusionInfo *fi) {
  return target_real_bytes(fi->ctx->target->precision);
}

/* Whether load or save routine io may move local value v: a contiguous routine needs an array
 * whose elements lie back to back (not a component-major one). */
static bool routine_allowed(const FusionInfo *fi, int v, const IoRoutine *io) {
  return target_allows(fi->ctx->target, fi->dag, fi->value[v], io);
}

/* ---- classification ------------------------------------------------------------------------ */

static int local_value(FusionInfo *fi, int value) {
  for (int v = 0; v < fi->nvals; v++)
    if (fi->value[v] == value) return v;
  if (fi->nvals == LIN_MAX_VALUES) return -1;
  int v = fi->nvals++;
  fi->value[v] = value;
  fi->producer[v] = -1;
  fi->consumers[v] = 0;
  fi->owner[v] = -1;
  const KType *t = fi->dag->values[value].type;
  fi->floats[v] = t ? t->size : 1;
  return v;
}

static int local_call(const FusionInfo *fi, int node) {
  for (int c = 0; c < fi->ncalls; c++)
    if (fi->node[c] == node) return c;
  return -1;
}

/* Whether the value is needed outside the fusion: returned, or read by a node not in it. */
static bool escapes(const FusionInfo *fi, int value) {
  const Value *val = &fi->dag->values[value];
  if (val->is_output) return true;
  for (int k = 0; k < val->nconsumers; k++)
    if (!((fi->nodes >> val->consumers[k]) & 1)) return true;
  return false;
}

static bool classify(FusionInfo *fi) {
  const Dag *dag = fi->dag;
  fi->ncalls = fi->nvals = 0;
  for (int n = 0; n < dag->nnodes; n++)
    if ((fi->nodes >> n) & 1) {
      if (fi->ncalls == LIN_MAX_CALLS) return false;
      fi->node[fi->ncalls++] = n;
    }
  for (int c = 0; c < fi->ncalls; c++) {
    const DagNode *nd = &dag->nodes[fi->node[c]];
    fi->pred[c] = 0;
    for (int a = 0; a < nd->nargs; a++) {
      int v = local_value(fi, nd->args[a]);
      if (v < 0) return false;
      fi->arg_value[c][a] = v;
      fi->consumers[v] |= 1u << c;
      int p = local_call(fi, dag->values[nd->args[a]].producer);
      if (p >= 0) fi->pred[c] |= 1u << p;
      if (p < 0 && fi->owner[v] < 0) fi->owner[v] = c, fi->owner_arg[v] = a;
    }
    int r = local_value(fi, nd->result);
    if (r < 0) return false;
    fi->result_value[c] = r;
    fi->producer[r] = c;
  }
  for (int v = 0; v < fi->nvals; v++)
    fi->saved[v] = fi->producer[v] >= 0 && escapes(fi, fi->value[v]);
  return true;
}

/* ---- plan construction --------------------------------------------------------------------- */

static const char *fn_name(const FusionInfo *fi, int c) {
  return fi->dag->nodes[fi->node[c]].fn->name;
}

static const IoRoutine *load_routine(const FusionInfo *fi, const Choice *ch, int v) {
  return &ch->impl[fi->owner[v]]->loads[ch->load[v]];
}

static const IoRoutine *save_routine(const FusionInfo *fi, const Choice *ch, int v) {
  return &ch->impl[fi->producer[v]]->saves[ch->save[v]];
}

/* Labels live in a fixed pool per build (freed at the end). */
typedef struct {
  char *s[LIN_MAX_VALUES * 8 + LIN_MAX_CALLS * 8];
  int n;
} LabelPool;

static const char *pool_add(LabelPool *lp, char *s) {
  lp->s[lp->n++] = s;
  return s;
}

/* Labels of pattern uses, only when the plan is built to be kept (why strings). */
#define USE_LABEL(lp, ...) ((lp) ? pool_add((lp), xasprintf(__VA_ARGS__)) : "")

static void pool_free(LabelPool *lp) {
  for (int k = 0; k < lp->n; k++) free(lp->s[k]);
  lp->n = 0;
}

/* Every routine use of local value v by the active calls. */
static int value_uses(const FusionInfo *fi, const Choice *ch, int nactive, int v, PatternUse *uses,
                      LabelPool *lp) {
  int n = 0;
  const DagNode *nodes = fi->dag->nodes;
  if (fi->producer[v] < 0) {
    const IoRoutine *ld = load_routine(fi, ch, v);
    int o = fi->owner[v];
    uses[n++] = (PatternUse){&ld->ls, impl_shape(ch->impl[o], ch->e),
                             USE_LABEL(lp, "%s#%d load_%d LSPATTERN", fn_name(fi, o),
                                       fi->node[o], ld->index)};
  } else if (fi->producer[v] < nactive) {
    int p = fi->producer[v];
    uses[n++] = (PatternUse){&ch->impl[p]->out, impl_shape(ch->impl[p], ch->e),
                             USE_LABEL(lp, "%s#%d OUTPATTERN", fn_name(fi, p), fi->node[p])};
  }
  for (int c = 0; c < nactive; c++) {
    const DagNode *nd = &nodes[fi->node[c]];
    for (int a = 0; a < nd->nargs; a++)
      if (nd->args[a] == fi->value[v])
        uses[n++] = (PatternUse){&ch->impl[c]->in[a], impl_shape(ch->impl[c], ch->e),
                                 USE_LABEL(lp, "%s#%d INPATTERN %d", fn_name(fi, c),
                                           fi->node[c], a)};
  }
  if (fi->saved[v] && fi->producer[v] < nactive) {
    const IoRoutine *sv = save_routine(fi, ch, v);
    int p = fi->producer[v];
    uses[n++] = (PatternUse){&sv->ls, impl_shape(ch->impl[p], ch->e),
                             USE_LABEL(lp, "%s#%d save_%d LSPATTERN", fn_name(fi, p),
                                       fi->node[p], sv->index)};
  }
  return n;
}

static bool value_active(const FusionInfo *fi, int v, int nactive) {
  return (fi->producer[v] >= 0 && fi->producer[v] < nactive) ||
         (fi->consumers[v] & ((1u << nactive) - 1)) != 0;
}

/* Writers (the load or the producer's compute, uses[0]) must cover every offset the readers
 * touch, and everything must lie inside the buffer; otherwise the combination is not valid. */
static bool covered(AccessCache *ac, const PatternUse *uses, int nuses, int nfloats) {
  for (int u = 1; u < nuses; u++)
    if (!access_covers(ac, uses[0].pat, uses[0].shape, uses[u].pat, uses[u].shape, nfloats))
      return false;
  return nuses > 1 ||
         access_covers(ac, uses[0].pat, uses[0].shape, uses[0].pat, uses[0].shape, nfloats);
}

static const int *memo_order(FusionInfo *fi, const LinearizeProblem *lp, int nactive,
                             const uint64_t regmask[2]) {
  for (int k = 0; k < fi->nmemo; k++) {
    LinMemo *m = &fi->memo[k];
    if (m->nactive == nactive && m->regmask[0] == regmask[0] && m->regmask[1] == regmask[1])
      return m->ok ? m->order : NULL;
  }
  if (fi->nmemo == fi->capmemo) {
    fi->capmemo = fi->capmemo ? fi->capmemo * 2 : 16;
    fi->memo = xrealloc(fi->memo, sizeof *fi->memo * (size_t)fi->capmemo);
  }
  LinMemo *m = &fi->memo[fi->nmemo++];
  m->nactive = nactive;
  m->regmask[0] = regmask[0];
  m->regmask[1] = regmask[1];
  int peak, bars;
  m->ok = linearize_order(lp, m->order, &peak, &bars);
  return m->ok ? m->order : NULL;
}

/* Everything decided about one plan while it is being built. */
typedef struct {
  int buf_of[LIN_MAX_VALUES]; /* local value -> buffer, -1 if not in the plan */
  int val_of[LIN_MAX_VALUES]; /* buffer -> local value */
  int pos_of[LIN_MAX_CALLS];  /* local call -> position in order */
  int local_order[LIN_MAX_CALLS]; /* position -> local call */
  LabelPool labels;
} BuildState;

static Step *add_step(KernelPlan *p, RoutineKind kind, int call, const IoRoutine *io) {
  Step *s = &p->steps[p->nsteps++];
  *s = (Step){.kind = kind, .call = call, .impl = p->impl[call], .io = io};
  return s;
}

static void touch(Buffer *b, int step) {
  if (b->first_use < 0) b->first_use = step;
  b->last_use = step;
}

/* The step moving buffer b to or from global memory. */
static void add_io_step(KernelPlan *p, RoutineKind kind, int b) {
  Buffer *buf = &p->buffers[b];
  bool load = kind == ROUTINE_LOAD;
  Step *s = add_step(p, kind, load ? buf->load_call : buf->producer, load ? buf->load : buf->save);
  s->buf[s->nbuf++] = b;
  touch(buf, p->nsteps - 1);
}

/* Steps in order: loads of a call's not-yet-loaded arguments, its compute, its saves. */
static void make_steps(const FusionInfo *fi, KernelPlan *p, BuildState *bs) {
  bool loaded[LIN_MAX_VALUES] = {0};
  p->steps = xcalloc((size_t)(p->nbuffers * 2 + p->ncalls), sizeof *p->steps);
  for (int k = 0; k < p->ncalls; k++) {
    int c = bs->local_order[k];
    int nargs = fi->dag->nodes[fi->node[c]].nargs;
    for (int a = 0; a < nargs; a++) {
      int v = fi->arg_value[c][a];
      if (fi->producer[v] >= 0 || loaded[v]) continue;
      loaded[v] = true;
      add_io_step(p, ROUTINE_LOAD, bs->buf_of[v]);
    }
    Step *compute = add_step(p, ROUTINE_COMPUTE, k, NULL);
    for (int a = 0; a < nargs; a++) compute->buf[compute->nbuf++] = bs->buf_of[fi->arg_value[c][a]];
    int result = bs->buf_of[fi->result_value[c]];
    compute->buf[compute->nbuf++] = result;
    for (int a = 0; a < compute->nbuf; a++) touch(&p->buffers[compute->buf[a]], p->nsteps - 1);
    if (p->buffers[result].save) add_io_step(p, ROUTINE_SAVE, result);
  }
}

/* Placement of every active value; fills the buffers (not yet ordered or allocated).  Returns
 * false when a shared buffer's writers do not cover its readers (the combination is invalid). */
static bool place_buffers(const FusionInfo *fi, const Choice *ch, int nactive, KernelPlan *p,
                          BuildState *bs, bool explain) {
  p->buffers = xcalloc((size_t)fi->nvals, sizeof *p->buffers);
  p->nbuffers = 0;
  for (int v = 0; v < fi->nvals; v++) {
    bs->buf_of[v] = -1;
    if (!value_active(fi, v, nactive)) continue;
    PatternUse uses[KAS_MAX_ARGS * LIN_MAX_CALLS + 2];
    int nuses = value_uses(fi, ch, nactive, v, uses, explain ? &bs->labels : NULL);
    int b = p->nbuffers++;
    bs->buf_of[v] = b;
    bs->val_of[b] = v;
    Buffer *buf = &p->buffers[b];
    *buf = (Buffer){.value = fi->value[v], .offset = -1, .load_call = -1, .producer = -1,
                    .first_use = -1, .last_use = -1};
    bool reg = placement_decide(fi->ctx->access, uses, nuses, &buf->reg_floats,
                                explain ? &buf->why : NULL);
    buf->place = reg ? PLACE_REGISTER : PLACE_SHARED;
    if (!reg) buf->bytes = ch->e * fi->floats[v] * real_bytes(fi);
    if (fi->producer[v] < 0) buf->load = load_routine(fi, ch, v);
    if (fi->saved[v] && fi->producer[v] < nactive) buf->save = save_routine(fi, ch, v);
    if (!reg && !covered(fi->ctx->access, uses, nuses, ch->e * fi->floats[v])) return false;
  }
  return true;
}

static bool order_calls(FusionInfo *fi, int nactive, KernelPlan *p, BuildState *bs) {
  LinearizeProblem lp = {.ncalls = nactive, .nvals = fi->nvals};
  uint64_t regmask[2] = {0, 0};
  for (int c = 0; c < nactive; c++) lp.pred[c] = fi->pred[c];
  for (int v = 0; v < fi->nvals; v++) {
    int b = bs->buf_of[v];
    bool reg = b >= 0 && p->buffers[b].place == PLACE_REGISTER;
    if (reg) regmask[v / 64] |= 1ull << (v % 64);
    lp.size[v] = b < 0 || reg ? 0 : fi->floats[v];
    lp.producer[v] = fi->producer[v] < nactive ? fi->producer[v] : -1;
    lp.consumers[v] = fi->consumers[v] & ((1u << nactive) - 1);
  }
  const int *order = memo_order(fi, &lp, nactive, regmask);
  if (!order) return false;
  p->ncalls = nactive;
  p->order = xmalloc(sizeof(int) * (size_t)nactive);
  for (int k = 0; k < nactive; k++) {
    p->order[k] = fi->node[order[k]];
    bs->pos_of[order[k]] = k;
    bs->local_order[k] = order[k];
  }
  return true;
}

/* The kernel block is the shape of the call with the most threads (first in order on ties). */
static void choose_block(KernelPlan *p) {
  int best = 0;
  for (int k = 1; k < p->ncalls; k++)
    if (impl_threads(p->impl[k], p->e) > impl_threads(p->impl[best], p->e)) best = k;
  p->block = impl_shape(p->impl[best], p->e);
  p->threads = impl_threads(p->impl[best], p->e);
  for (int s = 0; s < p->nsteps; s++) {
    BlockShape c = impl_shape(p->impl[p->steps[s].call], p->e);
    p->steps[s].recompute_coords =
        c.bx != p->block.bx || c.by != p->block.by || c.bz != p->block.bz;
  }
}

/* Offsets of the shared buffers.  disjoint: no two buffers share a byte even when their live
 * ranges allow it (reusing bytes can force a write-after-read barrier; more shared memory can
 * cost occupancy instead -- the prediction decides, see build_best_full). */
static void allocate_shared(KernelPlan *p, bool disjoint) {
  int n = p->nbuffers;
  int *bytes = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
  int *first = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
  int *last = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
  int *off = xmalloc(sizeof(int) * (size_t)(n ? n : 1));
  for (int b = 0; b < n; b++) {
    bytes[b] = p->buffers[b].place == PLACE_SHARED ? p->buffers[b].bytes : 0;
    first[b] = disjoint ? 0 : p->buffers[b].first_use;
    last[b] = disjoint ? p->nsteps : p->buffers[b].last_use;
  }
  p->smem_bytes = smem_allocate(bytes, first, last, n, off);
  for (int b = 0; b < n; b++) p->buffers[b].offset = off[b];
  free(bytes);
  free(first);
  free(last);
  free(off);
}

/* The shared accesses of every step, for sync.c (labels only when explaining). */
static StepAccesses *step_accesses(const FusionInfo *fi, const KernelPlan *p, BuildState *bs,
                                   bool explain) {
  LabelPool *lp = explain ? &bs->labels : NULL;
  StepAccesses *sa = xcalloc((size_t)p->nsteps, sizeof *sa);
  for (int s = 0; s < p->nsteps; s++) {
    const Step *st = &p->steps[s];
    BlockShape shape = impl_shape(st->impl, p->e);
    const char *fn = st->impl->fn->name;
    int node = p->order[st->call];
    if (st->kind == ROUTINE_COMPUTE)
      sa[s].label = USE_LABEL(lp, "%s#%d", fn, node);
    else
      sa[s].label = USE_LABEL(lp, "%s %s (%s#%d)", st->kind == ROUTINE_LOAD ? "load" : "save",
                              dag_value_label(fi->dag, p->buffers[st->buf[0]].value), fn, node);
    for (int a = 0; a < st->nbuf; a++) {
      const Buffer *buf = &p->buffers[st->buf[a]];
      if (buf->place != PLACE_SHARED) continue;
      bool output = st->kind == ROUTINE_COMPUTE && a + 1 == st->nbuf;
      const Pattern *pat = st->io ? &st->io->ls : output ? &st->impl->out : &st->impl->in[a];
      bool write = st->kind == ROUTINE_LOAD || output;
      int rb = real_bytes(fi); /* patterns count reals */
      sa[s].acc[sa[s].n++] = (SharedAccess){pat, shape, buf->offset / rb, buf->bytes / rb, write,
                                            dag_value_label(fi->dag, buf->value)};
    }
  }
  return sa;
}

void kernel_plan_free(KernelPlan *p) {
  if (!p) return;
  for (int b = 0; b < p->nbuffers; b++) free(p->buffers[b].why);
  for (int s = 0; s < p->nsteps; s++) free(p->steps[s].barrier_why);
  free(p->buffers);
  free(p->steps);
  free(p->order);
  free(p->impl);
  free(p);
}

/* Barriers from exact access sets (full plans; false after a diagnostic), or estimated per
 * buffer (partial plans of the beam, where the exact planning would dominate the time). */
static bool plan_barriers(const FusionInfo *fi, KernelPlan *p, BuildState *bs, bool full) {
  StepAccesses *sa = step_accesses(fi, p, bs, full);
  bool ok = true;
  if (full)
    ok = sync_plan(fi->ctx->access, p, sa);
  else
    p->barriers = sync_estimate(fi->ctx->access, p, sa);
  free(sa);
  return ok;
}

/* Builds the plan of the first nactive calls of the choice; NULL when the combination is not
 * valid (coverage, shared-memory limit, cannot launch).  full: all calls, with barriers. */
static KernelPlan *build_plan(FusionInfo *fi, const Choice *ch, int nactive, bool full,
                              bool disjoint) {
  KernelPlan *p = xcalloc(1, sizeof *p);
  BuildState bs = {0};
  p->e = ch->e;
  p->precision = fi->ctx->target->precision;
  p->w = fi->ctx->target->w;
  bool ok = place_buffers(fi, ch, nactive, p, &bs, full) && order_calls(fi, nactive, p, &bs);
  if (ok) {
    p->impl = xmalloc(sizeof(Impl *) * (size_t)nactive);
    for (int k = 0; k < nactive; k++) {
      p->nodes |= (NodeSet)1 << p->order[k];
      p->impl[k] = (Impl *)ch->impl[bs.local_order[k]];
    }
    for (int v = 0; v < fi->nvals; v++) {
      if (bs.buf_of[v] < 0) continue;
      Buffer *b = &p->buffers[bs.buf_of[v]];
      if (fi->producer[v] < 0)
        b->load_call = bs.pos_of[fi->owner[v]];
      else
        b->producer = bs.pos_of[fi->producer[v]];
    }
    make_steps(fi, p, &bs);
    allocate_shared(p, disjoint);
    choose_block(p);
    ok = p->smem_bytes <= fi->smem_limit && p->threads <= fi->thread_limit;
  }
  if (ok) ok = plan_barriers(fi, p, &bs, full);
  if (ok) {
    p->regs_estimate = model_estimate_registers(p);
    p->predicted_ns_per_elem = model_predict_kernel(fi->ctx, p);
    ok = isfinite(p->predicted_ns_per_elem);
  }
  pool_free(&bs.labels);
  if (!ok) {
    kernel_plan_free(p);
    return NULL;
  }
  return p;
}

/* Whether two shared buffers of the plan share a byte (smem.c reused one for the other). */
static bool reuses_bytes(const KernelPlan *p) {
  for (int a = 0; a < p->nbuffers; a++)
    for (int b = 0; b < a; b++) {
      const Buffer *x = &p->buffers[a], *y = &p->buffers[b];
      if (x->place == PLACE_SHARED && y->place == PLACE_SHARED &&
          x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes)
        return true;
    }
  return false;
}

/* The complete plan of a choice, with overlapping shared buffers or, when that reuse happened,
 * with disjoint ones if predicted faster (fewer barriers against lower occupancy). */
static KernelPlan *build_best_full(FusionInfo *fi, const Choice *ch) {
  KernelPlan *p = build_plan(fi, ch, fi->ncalls, true, false);
  if (!p || !reuses_bytes(p)) return p;
  KernelPlan *q = build_plan(fi, ch, fi->ncalls, true, true);
  if (q && q->predicted_ns_per_elem < p->predicted_ns_per_elem) {
    kernel_plan_free(p);
    return q;
  }
  kernel_plan_free(q);
  return p;
}

/* ---- the combinations ---------------------------------------------------------------------- */

/* One way to run call c: its implementation, the load variant of each value it owns (loads),
 * and the save variant of its result when saved. */
typedef struct {
  const Impl *impl;
  int nowned;
  int owned[KAS_MAX_ARGS];
  int load[KAS_MAX_ARGS];
  int saved_value; /* -1 if its result is not saved */
  int save;
} CallOption;

typedef struct {
  CallOption *v;
  int n, cap;
} OptionList;

static void option_push(OptionList *l, const CallOption *o) {
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 16;
    l->v = xrealloc(l->v, sizeof *l->v * (size_t)l->cap);
  }
  l->v[l->n++] = *o;
}

/* Load routines of impl filling argument arg with local value v, by index into impl->loads. */
static int loads_for_arg(const FusionInfo *fi, const Impl *impl, int arg, int v, int *out) {
  int n = 0;
  for (int k = 0; k < impl->nloads && n < 16; k++)
    if (impl->loads[k].arg == arg && routine_allowed(fi, v, &impl->loads[k])) out[n++] = k;
  return n;
}

/* Save routines of impl that may write local value v, by index into impl->saves. */
static int saves_for_value(const FusionInfo *fi, const Impl *impl, int v, int *out) {
  int n = 0;
  for (int k = 0; k < impl->nsaves && n < 16; k++)
    if (routine_allowed(fi, v, &impl->saves[k])) out[n++] = k;
  return n;
}

/* Every option of call c at E (mixed-radix count over the owned values' load variants and the
 * save variant, per implementation that fits the thread limit). */
static OptionList call_options(const FusionInfo *fi, int c, int e) {
  OptionList list = {0};
  const Function *fn = fi->dag->nodes[fi->node[c]].fn;
  CallOption base = {.saved_value = -1};
  for (int v = 0; v < fi->nvals; v++) {
    if (fi->producer[v] < 0 && fi->owner[v] == c) base.owned[base.nowned++] = v;
    if (fi->producer[v] == c && fi->saved[v]) base.saved_value = v;
  }
  for (int i = 0; i < fn->nimpls; i++) {
    const Impl *im = &fn->impls[i];
    if (impl_threads(im, e) > fi->thread_limit) continue;
    int choices[KAS_MAX_ARGS][16], nchoice[KAS_MAX_ARGS], total = 1, saves[16];
    for (int k = 0; k < base.nowned; k++) {
      int v = base.owned[k];
      nchoice[k] = loads_for_arg(fi, im, fi->owner_arg[v], v, choices[k]);
      total *= nchoice[k];
    }
    int nsave = base.saved_value >= 0 ? saves_for_value(fi, im, base.saved_value, saves) : 1;
    total *= nsave;
    for (int idx = 0; idx < total; idx++) {
      CallOption o = base;
      o.impl = im;
      int rest = idx;
      for (int k = 0; k < base.nowned; k++) {
        o.load[k] = choices[k][rest % nchoice[k]];
        rest /= nchoice[k];
      }
      o.save = base.saved_value >= 0 ? saves[rest % nsave] : 0;
      option_push(&list, &o);
    }
  }
  return list;
}

static void apply_option(Choice *ch, int c, const CallOption *o) {
  ch->impl[c] = o->impl;
  for (int k = 0; k < o->nowned; k++) ch->load[o->owned[k]] = o->load[k];
  if (o->saved_value >= 0) ch->save[o->saved_value] = o->save;
}

typedef struct {
  KernelPlan **v;
  int n, cap;
} PlanList;

static void plan_push(PlanList *l, KernelPlan *p) {
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 16;
    l->v = xrealloc(l->v, sizeof *l->v * (size_t)l->cap);
  }
  l->v[l->n++] = p;
}

/* keep_all: every combination, depth first over the calls. */
static void enumerate_all(FusionInfo *fi, Choice *ch, int c, PlanList *out) {
  if (c == fi->ncalls) {
    KernelPlan *p = build_best_full(fi, ch);
    if (p) plan_push(out, p);
    return;
  }
  OptionList opts = call_options(fi, c, ch->e);
  for (int k = 0; k < opts.n; k++) {
    apply_option(ch, c, &opts.v[k]);
    enumerate_all(fi, ch, c + 1, out);
  }
  free(opts.v);
}

typedef struct {
  Choice ch;
  double cost;
} BeamState;

static int by_cost(const void *a, const void *b) {
  double x = ((const BeamState *)a)->cost, y = ((const BeamState *)b)->cost;
  return (x > y) - (x < y);
}

/* Children differing only in load/save variants that did not change the prediction are
 * duplicates for the beam's purpose: they would crowd out other implementations. */
static bool same_kind(const BeamState *a, const BeamState *b, int ndecided) {
  if (a->ch.e != b->ch.e || a->cost != b->cost) return false;
  for (int c = 0; c < ndecided; c++)
    if (a->ch.impl[c] != b->ch.impl[c]) return false;
  return true;
}

/* Moves the survivors to the front of the sorted children: first the best child of every
 * (E, implementation of the call just decided) -- a block size or an implementation that looks
 * worse alone may pay off with later calls (thread counts, compatible patterns) -- then
 * BEAM_WIDTH more of the best, skipping duplicates.  Returns how many survive. */
static int diverse_survivors(BeamState *v, int n, int ndecided) {
  bool *take = xcalloc((size_t)(n ? n : 1), sizeof *take);
  for (int i = 0; i < n; i++) {
    bool first = true;
    for (int j = 0; j < i && first; j++)
      first = v[j].ch.e != v[i].ch.e || v[j].ch.impl[ndecided - 1] != v[i].ch.impl[ndecided - 1];
    take[i] = first;
  }
  for (int i = 0, kept = 0; i < n && kept < BEAM_WIDTH; i++) {
    if (take[i]) continue;
    bool dup = false;
    for (int j = 0; j < i && !dup; j++) dup = take[j] && same_kind(&v[i], &v[j], ndecided);
    if (!dup) take[i] = true, kept++;
  }
  int w = 0;
  for (int i = 0; i < n; i++)
    if (take[i]) v[w++] = v[i];
  free(take);
  return w;
}

/* Expands every state by every option of call c; keeps the best BEAM_WIDTH (sorted). */
static int beam_step(FusionInfo *fi, BeamState *beam, int nbeam, int c, BeamState **next_out) {
  BeamState *next = NULL;
  int n = 0, cap = 0;
  for (int s = 0; s < nbeam; s++) {
    OptionList opts = call_options(fi, c, beam[s].ch.e);
    for (int k = 0; k < opts.n; k++) {
      Choice ch = beam[s].ch;
      apply_option(&ch, c, &opts.v[k]);
      KernelPlan *p = build_plan(fi, &ch, c + 1, false, false);
      if (!p) continue;
      if (n == cap) {
        cap = cap ? cap * 2 : 64;
        next = xrealloc(next, sizeof *next * (size_t)cap);
      }
      next[n++] = (BeamState){ch, p->predicted_ns_per_elem};
      kernel_plan_free(p);
    }
    free(opts.v);
  }
  if (n > 1) qsort(next, (size_t)n, sizeof *next, by_cost);
  *next_out = next;
  return diverse_survivors(next, n, c + 1);
}

static void beam_search(FusionInfo *fi, PlanList *out) {
  BeamState *beam = xcalloc(N_E_CANDIDATES, sizeof *beam);
  int nbeam = 0;
  for (int k = 0; k < N_E_CANDIDATES; k++) beam[nbeam++].ch.e = E_CANDIDATES[k];
  for (int c = 0; c < fi->ncalls && nbeam > 0; c++) {
    BeamState *next;
    nbeam = beam_step(fi, beam, nbeam, c, &next);
    free(beam);
    beam = next;
  }
  if (nbeam > 1) qsort(beam, (size_t)nbeam, sizeof *beam, by_cost);
  for (int s = 0; s < nbeam && s < FINAL_BUILDS; s++) {
    KernelPlan *p = build_best_full(fi, &beam[s].ch);
    if (p) plan_push(out, p);
  }
  free(beam);
}

static int by_prediction(const void *a, const void *b) {
  double x = (*(KernelPlan *const *)a)->predicted_ns_per_elem;
  double y = (*(KernelPlan *const *)b)->predicted_ns_per_elem;
  return (x > y) - (x < y);
}

static void fusion_info_init(FusionInfo *fi, SearchContext *ctx, NodeSet nodes) {
  const TimingDb *db = ctx->db;
  memset(fi, 0, sizeof *fi);
  fi->ctx = ctx;
  fi->dag = ctx->dag;
  fi->nodes = nodes;
  fi->smem_limit = db && db->dev.smem_per_block_optin > 0 ? db->dev.smem_per_block_optin
                                                          : KAS_SMEM_OPTIN_FALLBACK;
  fi->thread_limit = db && db->dev.max_threads_per_block > 0 &&
                             db->dev.max_threads_per_block < KAS_MAX_THREADS
                         ? db->dev.max_threads_per_block
                         : KAS_MAX_THREADS;
}

KernelPlan **combine_fusion(SearchContext *ctx, NodeSet nodes, bool keep_all, int *nplans_out) {
  FusionInfo *fi = xmalloc(sizeof *fi);
  fusion_info_init(fi, ctx, nodes);
  PlanList out = {0};
  if (nodes != 0 && classify(fi)) {
    if (keep_all) {
      for (int k = 0; k < N_E_CANDIDATES; k++) {
        Choice ch = {.e = E_CANDIDATES[k]};
        enumerate_all(fi, &ch, 0, &out);
      }
    } else {
      beam_search(fi, &out);
    }
  }
  if (out.n > 1) qsort(out.v, (size_t)out.n, sizeof *out.v, by_prediction);
  if (!keep_all)
    while (out.n > KEEP_PLANS) kernel_plan_free(out.v[--out.n]);
  free(fi->memo);
  free(fi);
  *nplans_out = out.n;
  if (out.n == 0) {
    free(out.v);
    return NULL;
  }
  return out.v;
}
