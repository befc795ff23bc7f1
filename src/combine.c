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
 * calls -- plus the best others up to the context's beam width (10 by default; a wider beam
 * runs the default one too, whose plans join its own).  The best FINAL_BUILDS complete choices
 * are built exactly (once with overlapping shared buffers and, if bytes were reused, once with
 * disjoint ones: reuse can force write-after-read barriers) and the best KEEP_PLANS returned.
 *
 * Sizes are the fusion's: every table is allocated for its calls and values, so a fusion of any
 * size up to a whole spec gets a plan (linearize.c orders up to LIN_EXACT_CALLS calls exactly,
 * longer ones greedily).  Each value's uses (call, argument) are listed once, so a partial plan
 * costs time in proportion to what it holds, not to the fusion.  A beam state keeps where its
 * partial plan placed each value (Choice.place), and its children take that for every value their
 * last call does not touch; the other placements and the linearizations are remembered per fusion
 * (PlaceMemo, LinMemo), as partial plans ask for the same ones again.
 */
#include "kasgen.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KEEP_PLANS 4
#define FINAL_BUILDS 12 /* complete plans (exact barriers) built from the final beam */

/* Elements per block tried: multiples of 4 (16-byte coalesced routines need them). */
static const int E_CANDIDATES[] = {4, 8, 16, 32, 64, 96, 128, 192, 256};
#define N_E_CANDIDATES ((int)(sizeof E_CANDIDATES / sizeof E_CANDIDATES[0]))

/* A linearization, remembered per (active calls, which values sit in registers): partial plans
 * of the beam ask for the same ones again and again. */
typedef struct {
  int nactive;
  uint64_t hash;
  uint64_t *regmask; /* FusionInfo.regwords words */
  int *order;        /* local calls in execution order (nactive), NULL when none exists */
} LinMemo;

/* A value's placement decided before: placement_decide and the coverage check depend only on the
 * value's uses (each a pattern at a shape) and its floats, and the beam's partial plans ask about
 * the same uses again and again (a child repeats its parent's values but those of its last call).
 * Remembered for values of at most PLACE_MEMO_USES uses: hashing a longer list costs about what
 * deciding it does. */
enum { PLACE_MEMO_USES = 16 };

typedef struct {
  const Pattern *pat;
  BlockShape shape;
} UseKey;

typedef struct {
  uint64_t hash;
  int nfloats, nuses;
  int first; /* its uses: PlaceMemo.keys[first .. first + nuses) */
  bool reg, covered;
  int reg_floats;
} PlaceEntry;

typedef struct {
  PlaceEntry *v;
  int n, cap;
  UseKey *keys;
  int nkeys, capkeys;
  int *slot; /* hash table of entry indices + 1 (0 = free), cap * 2 slots */
} PlaceMemo;

/* One use of a value by a call of the fusion: local call c reads it as argument a. */
typedef struct {
  int call, arg;
} ValueUse;

typedef struct {
  SearchContext *ctx;
  const Dag *dag; /* ctx->dag */
  NodeSet nodes;
  int ncalls;
  int *node;      /* node index of local call c, ascending (topological) */
  NodeSet *pred;  /* per local call: the local calls it reads from */
  int nvals;
  int *value;     /* dag value index */
  int *producer;  /* local call, -1 = loaded */
  NodeSet *consumers; /* per value: the local calls reading it */
  int *first_consumer; /* per value: the lowest local call reading it, INT_MAX if none */
  ValueUse **uses;     /* per value: its reads, by call then argument */
  int *nuses;
  bool *saved;
  int *owner;     /* loaded: local call whose load routine fills it */
  int *owner_arg; /* its argument position there */
  int (*arg_value)[KAS_MAX_ARGS]; /* local value of each argument of local call c */
  int *result_value;              /* local value call c produces */
  int *floats;
  int *local_of_value; /* dag value -> local value, -1 */
  int smem_limit, thread_limit;
  PatternUse *scratch_uses; /* room for every use of one value */
  int regwords;             /* words of a register mask over the values */
  LinMemo *memo;
  int nmemo, capmemo;
  int *memo_slot; /* hash table of memo indices + 1 (0 = free), capmemo * 2 slots */
  PlaceMemo places;
} FusionInfo;

/* A choice of E and of an implementation, load and save variant per call and value. */
typedef struct {
  int e;
  const Impl **impl; /* per local call */
  int *load;         /* per local value: index into the owner impl's loads[] */
  int *save;         /* per local value: index into the producer impl's saves[] */
  /* per local value, in the beam's states: where the state's partial plan put it (PLACE_*
   * below), which its children keep for every value their last call does not touch */
  int *place;
} Choice;

/* Choice.place: not decided (a value the partial plan did not hold), shared, or registers of
 * reg_floats floats (PLACE_REGS + reg_floats). */
enum { PLACE_UNKNOWN = 0, PLACE_SHARED_KNOWN = 1, PLACE_REGS = 2 };

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
  if (fi->local_of_value[value] >= 0) return fi->local_of_value[value];
  int v = fi->nvals++;
  fi->local_of_value[value] = v;
  fi->value[v] = value;
  fi->producer[v] = -1;
  fi->owner[v] = -1;
  fi->first_consumer[v] = INT_MAX;
  const KType *t = fi->dag->values[value].type;
  fi->floats[v] = t ? t->size : 1;
  return v;
}

/* Whether the value is needed outside the fusion: returned, or read by a node not in it. */
static bool escapes(const FusionInfo *fi, int value) {
  const Value *val = &fi->dag->values[value];
  if (val->is_output) return true;
  for (int k = 0; k < val->nconsumers; k++)
    if (!nodeset_has(&fi->nodes, val->consumers[k])) return true;
  return false;
}

/* The tables, sized for the fusion: at most ncalls * (KAS_MAX_ARGS + 1) values. */
static void allocate_tables(FusionInfo *fi) {
  int n = fi->ncalls, maxv = n * (KAS_MAX_ARGS + 1);
  fi->pred = xcalloc((size_t)n, sizeof *fi->pred);
  fi->arg_value = xcalloc((size_t)n, sizeof *fi->arg_value);
  fi->result_value = xcalloc((size_t)n, sizeof(int));
  fi->value = xcalloc((size_t)maxv, sizeof(int));
  fi->producer = xcalloc((size_t)maxv, sizeof(int));
  fi->consumers = xcalloc((size_t)maxv, sizeof *fi->consumers);
  fi->first_consumer = xcalloc((size_t)maxv, sizeof(int));
  fi->uses = xcalloc((size_t)maxv, sizeof *fi->uses);
  fi->nuses = xcalloc((size_t)maxv, sizeof(int));
  fi->saved = xcalloc((size_t)maxv, sizeof(bool));
  fi->owner = xcalloc((size_t)maxv, sizeof(int));
  fi->owner_arg = xcalloc((size_t)maxv, sizeof(int));
  fi->floats = xcalloc((size_t)maxv, sizeof(int));
  fi->local_of_value = xmalloc(sizeof(int) * (size_t)fi->dag->nvalues);
  for (int v = 0; v < fi->dag->nvalues; v++) fi->local_of_value[v] = -1;
  fi->scratch_uses = xcalloc((size_t)(n * KAS_MAX_ARGS + 2), sizeof *fi->scratch_uses);
}

static void add_use(FusionInfo *fi, int v, int c, int a) {
  fi->uses[v] = xrealloc(fi->uses[v], sizeof(ValueUse) * (size_t)(fi->nuses[v] + 1));
  fi->uses[v][fi->nuses[v]++] = (ValueUse){c, a};
  nodeset_add(&fi->consumers[v], c);
  if (c < fi->first_consumer[v]) fi->first_consumer[v] = c;
}

static void classify(FusionInfo *fi) {
  const Dag *dag = fi->dag;
  fi->ncalls = nodeset_count(&fi->nodes);
  fi->node = xmalloc(sizeof(int) * (size_t)fi->ncalls);
  int *local_call = xmalloc(sizeof(int) * (size_t)dag->nnodes);
  fi->ncalls = 0;
  for (int n = 0; n < dag->nnodes; n++) {
    local_call[n] = -1;
    if (nodeset_has(&fi->nodes, n)) local_call[n] = fi->ncalls, fi->node[fi->ncalls++] = n;
  }
  allocate_tables(fi);
  for (int c = 0; c < fi->ncalls; c++) {
    const DagNode *nd = &dag->nodes[fi->node[c]];
    for (int a = 0; a < nd->nargs; a++) {
      int v = local_value(fi, nd->args[a]);
      fi->arg_value[c][a] = v;
      add_use(fi, v, c, a);
      int producer = dag->values[nd->args[a]].producer;
      int p = producer >= 0 ? local_call[producer] : -1;
      if (p >= 0) nodeset_add(&fi->pred[c], p);
      if (p < 0 && fi->owner[v] < 0) fi->owner[v] = c, fi->owner_arg[v] = a;
    }
    int r = local_value(fi, nd->result);
    fi->result_value[c] = r;
    fi->producer[r] = c;
  }
  for (int v = 0; v < fi->nvals; v++)
    fi->saved[v] = fi->producer[v] >= 0 && escapes(fi, fi->value[v]);
  fi->regwords = (fi->nvals + 63) / 64;
  free(local_call);
}

static void fusion_info_free(FusionInfo *fi) {
  for (int v = 0; v < fi->nvals; v++) free(fi->uses[v]);
  for (int k = 0; k < fi->nmemo; k++) {
    free(fi->memo[k].regmask);
    free(fi->memo[k].order);
  }
  free(fi->memo);
  free(fi->memo_slot);
  free(fi->places.v);
  free(fi->places.keys);
  free(fi->places.slot);
  free(fi->node);
  free(fi->pred);
  free(fi->arg_value);
  free(fi->result_value);
  free(fi->value);
  free(fi->producer);
  free(fi->consumers);
  free(fi->first_consumer);
  free(fi->uses);
  free(fi->nuses);
  free(fi->saved);
  free(fi->owner);
  free(fi->owner_arg);
  free(fi->floats);
  free(fi->local_of_value);
  free(fi->scratch_uses);
  free(fi);
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

/* Labels live in a pool per build (freed at the end). */
typedef struct {
  char **s;
  int n, cap;
} LabelPool;

static const char *pool_add(LabelPool *lp, char *s) {
  if (lp->n == lp->cap) {
    lp->cap = lp->cap ? 2 * lp->cap : 32;
    lp->s = xrealloc(lp->s, sizeof *lp->s * (size_t)lp->cap);
  }
  lp->s[lp->n++] = s;
  return s;
}

/* Labels of pattern uses, only when the plan is built to be kept (why strings). */
#define USE_LABEL(lp, ...) ((lp) ? pool_add((lp), xasprintf(__VA_ARGS__)) : "")

static void pool_free(LabelPool *lp) {
  for (int k = 0; k < lp->n; k++) free(lp->s[k]);
  free(lp->s);
  *lp = (LabelPool){0};
}

/* Every routine use of local value v by the active calls (for coverage and register
 * placement: a routine's set of offsets is the same at any vector width, so the loads and
 * saves are taken at the plan's). */
static int value_uses(const FusionInfo *fi, const Choice *ch, int nactive, int v, PatternUse *uses,
                      LabelPool *lp) {
  int n = 0;
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
  for (int u = 0; u < fi->nuses[v] && fi->uses[v][u].call < nactive; u++) {
    int c = fi->uses[v][u].call, a = fi->uses[v][u].arg;
    uses[n++] = (PatternUse){&ch->impl[c]->in[a], impl_shape(ch->impl[c], ch->e),
                             USE_LABEL(lp, "%s#%d INPATTERN %d", fn_name(fi, c), fi->node[c], a)};
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
  return (fi->producer[v] >= 0 && fi->producer[v] < nactive) || fi->first_consumer[v] < nactive;
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

static uint64_t regmask_hash(const uint64_t *mask, int words, int nactive) {
  uint64_t h = (uint64_t)nactive * 0x9e3779b97f4a7c15ull;
  for (int k = 0; k < words; k++) h = (h ^ mask[k]) * 0xff51afd7ed558ccdull;
  return h ^ (h >> 31);
}

static void memo_rehash(FusionInfo *fi) {
  size_t nslots = (size_t)fi->capmemo * 2;
  free(fi->memo_slot);
  fi->memo_slot = xcalloc(nslots, sizeof(int));
  for (int k = 0; k < fi->nmemo; k++) {
    size_t i = fi->memo[k].hash & (nslots - 1);
    while (fi->memo_slot[i]) i = (i + 1) & (nslots - 1);
    fi->memo_slot[i] = k + 1;
  }
}

/* The problem of the first nactive calls with the register values' sizes zeroed. */
static bool linearize_active(const FusionInfo *fi, int nactive, const uint64_t *regmask,
                             int *order) {
  LinearizeProblem lp = {.ncalls = nactive, .pred = fi->pred, .nvals = fi->nvals};
  int *size = xmalloc(sizeof(int) * (size_t)fi->nvals);
  int *producer = xmalloc(sizeof(int) * (size_t)fi->nvals);
  NodeSet *consumers = xmalloc(sizeof(NodeSet) * (size_t)fi->nvals);
  NodeSet active = nodeset_range(0, nactive);
  for (int v = 0; v < fi->nvals; v++) {
    bool reg = (regmask[v / 64] >> (v % 64)) & 1;
    bool in_plan = value_active(fi, v, nactive);
    size[v] = !in_plan || reg ? 0 : fi->floats[v];
    producer[v] = fi->producer[v] < nactive ? fi->producer[v] : -1;
    consumers[v] = nodeset_inter(fi->consumers[v], active);
  }
  lp.size = size;
  lp.producer = producer;
  lp.consumers = consumers;
  bool ok = linearize_order_cached(fi->ctx->orders, &lp, order);
  free(size);
  free(producer);
  free(consumers);
  return ok;
}

/* The order of the first nactive calls with the values of regmask in registers, linearized once
 * per (nactive, regmask). */
static const int *memo_order(FusionInfo *fi, int nactive, const uint64_t *regmask) {
  uint64_t h = regmask_hash(regmask, fi->regwords, nactive);
  size_t nslots = (size_t)fi->capmemo * 2;
  size_t i = nslots ? h & (nslots - 1) : 0;
  for (; nslots && fi->memo_slot[i]; i = (i + 1) & (nslots - 1)) {
    const LinMemo *m = &fi->memo[fi->memo_slot[i] - 1];
    if (m->hash == h && m->nactive == nactive &&
        !memcmp(m->regmask, regmask, sizeof(uint64_t) * (size_t)fi->regwords))
      return m->order;
  }
  if (fi->nmemo == fi->capmemo) {
    fi->capmemo = fi->capmemo ? fi->capmemo * 2 : 16;
    fi->memo = xrealloc(fi->memo, sizeof *fi->memo * (size_t)fi->capmemo);
  }
  LinMemo *m = &fi->memo[fi->nmemo++];
  m->nactive = nactive;
  m->hash = h;
  m->regmask = xmalloc(sizeof(uint64_t) * (size_t)(fi->regwords ? fi->regwords : 1));
  memcpy(m->regmask, regmask, sizeof(uint64_t) * (size_t)fi->regwords);
  m->order = xmalloc(sizeof(int) * (size_t)nactive);
  if (!linearize_active(fi, nactive, regmask, m->order)) {
    free(m->order);
    m->order = NULL;
  }
  memo_rehash(fi);
  return m->order;
}

/* Everything decided about one plan while it is being built. */
typedef struct {
  int *buf_of;      /* local value -> buffer, -1 if not in the plan */
  int *val_of;      /* buffer -> local value */
  int *pos_of;      /* local call -> position in order */
  int *local_order; /* position -> local call */
  LabelPool labels;
} BuildState;

static BuildState build_state_new(const FusionInfo *fi) {
  int nv = fi->nvals ? fi->nvals : 1, nc = fi->ncalls ? fi->ncalls : 1;
  int *ints = xmalloc(sizeof(int) * (size_t)(2 * nv + 2 * nc));
  return (BuildState){.buf_of = ints, .val_of = ints + nv, .pos_of = ints + 2 * nv,
                      .local_order = ints + 2 * nv + nc};
}

static void build_state_free(BuildState *bs) {
  free(bs->buf_of);
  pool_free(&bs->labels);
}

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
  bool *loaded = xcalloc((size_t)(fi->nvals ? fi->nvals : 1), sizeof(bool));
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
  free(loaded);
}

static uint64_t place_hash(const PatternUse *uses, int nuses, int nfloats) {
  uint64_t h = (uint64_t)nfloats * 0x9e3779b97f4a7c15ull ^ (uint64_t)nuses;
  for (int u = 0; u < nuses; u++) {
    const BlockShape *s = &uses[u].shape;
    uint64_t words[] = {(uint64_t)(uintptr_t)uses[u].pat,
                        (uint64_t)(uint32_t)s->bx << 32 | (uint32_t)s->by,
                        (uint64_t)(uint32_t)s->bz << 32 | (uint32_t)s->w};
    for (int k = 0; k < 3; k++) h = (h ^ words[k]) * 0xff51afd7ed558ccdull;
  }
  return h ^ (h >> 31);
}

static bool same_shape(BlockShape a, BlockShape b) {
  return a.bx == b.bx && a.by == b.by && a.bz == b.bz && a.w == b.w;
}

static bool place_entry_is(const PlaceMemo *m, const PlaceEntry *e, uint64_t hash,
                           const PatternUse *uses, int nuses, int nfloats) {
  if (e->hash != hash || e->nuses != nuses || e->nfloats != nfloats) return false;
  for (int u = 0; u < nuses; u++) {
    const UseKey *k = &m->keys[e->first + u];
    if (k->pat != uses[u].pat || !same_shape(k->shape, uses[u].shape)) return false;
  }
  return true;
}

static void place_rehash(PlaceMemo *m) {
  size_t nslots = (size_t)m->cap * 2;
  free(m->slot);
  m->slot = xcalloc(nslots, sizeof(int));
  for (int k = 0; k < m->n; k++) {
    size_t i = m->v[k].hash & (nslots - 1);
    while (m->slot[i]) i = (i + 1) & (nslots - 1);
    m->slot[i] = k + 1;
  }
}

/* A new entry for the uses (its decision still to be filled in). */
static PlaceEntry *place_insert(PlaceMemo *m, uint64_t hash, const PatternUse *uses, int nuses,
                                int nfloats) {
  if (m->n == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 256;
    m->v = xrealloc(m->v, sizeof *m->v * (size_t)m->cap);
    place_rehash(m);
  }
  if (m->nkeys + nuses > m->capkeys) {
    m->capkeys = m->capkeys ? 2 * m->capkeys : 1024;
    m->keys = xrealloc(m->keys, sizeof *m->keys * (size_t)m->capkeys);
  }
  PlaceEntry *e = &m->v[m->n++];
  *e = (PlaceEntry){.hash = hash, .nfloats = nfloats, .nuses = nuses, .first = m->nkeys};
  for (int u = 0; u < nuses; u++) m->keys[m->nkeys++] = (UseKey){uses[u].pat, uses[u].shape};
  size_t nslots = (size_t)m->cap * 2, i = hash & (nslots - 1);
  while (m->slot[i]) i = (i + 1) & (nslots - 1);
  m->slot[i] = m->n;
  return e;
}

/* Whether a value of these uses and floats goes in registers (*reg_floats of them), and whether
 * its writers cover its readers where it does not (*covered_ok); decided once per uses. */
static bool decide_placement(FusionInfo *fi, const PatternUse *uses, int nuses, int nfloats,
                             int *reg_floats, bool *covered_ok) {
  PlaceMemo *m = &fi->places;
  uint64_t h = nuses <= PLACE_MEMO_USES ? place_hash(uses, nuses, nfloats) : 0;
  size_t nslots = (size_t)m->cap * 2;
  for (size_t i = h & (nslots - 1); nuses <= PLACE_MEMO_USES && nslots && m->slot[i];
       i = (i + 1) & (nslots - 1)) {
    const PlaceEntry *e = &m->v[m->slot[i] - 1];
    if (!place_entry_is(m, e, h, uses, nuses, nfloats)) continue;
    *reg_floats = e->reg_floats;
    *covered_ok = e->covered;
    return e->reg;
  }
  bool reg = placement_decide(fi->ctx->access, uses, nuses, reg_floats, NULL);
  *covered_ok = reg || covered(fi->ctx->access, uses, nuses, nfloats);
  if (nuses <= PLACE_MEMO_USES) {
    PlaceEntry *e = place_insert(m, h, uses, nuses, nfloats);
    e->reg = reg;
    e->reg_floats = *reg_floats;
    e->covered = *covered_ok;
  }
  return reg;
}

/* Whether local call c reads or produces local value v (its uses then change with c). */
static bool touched_by(const FusionInfo *fi, int v, int c) {
  return fi->producer[v] == c || nodeset_has(&fi->consumers[v], c);
}

/* Where value v goes in the plan of the first nactive calls: *reg_floats floats of registers
 * when true, else shared (*covered_ok: its writers cover its readers).  A partial plan of the
 * beam takes its parent's decision for every value its last call does not touch (the same uses,
 * hence the same decision) and records its own in ch->place for its children; explain: decided
 * afresh, with the reasons. */
static bool value_placement(FusionInfo *fi, const Choice *ch, int nactive, int v, Buffer *buf,
                            LabelPool *labels, bool explain, bool *covered_ok) {
  int known = ch->place[v];
  *covered_ok = true; /* a parent's plan was valid: its values were covered */
  if (!explain && known != PLACE_UNKNOWN && !touched_by(fi, v, nactive - 1)) {
    buf->reg_floats = known >= PLACE_REGS ? known - PLACE_REGS : 0;
    return known >= PLACE_REGS;
  }
  PatternUse *uses = fi->scratch_uses;
  int nuses = value_uses(fi, ch, nactive, v, uses, explain ? labels : NULL);
  int nfloats = ch->e * fi->floats[v];
  bool reg;
  if (explain) {
    reg = placement_decide(fi->ctx->access, uses, nuses, &buf->reg_floats, &buf->why);
    *covered_ok = reg || covered(fi->ctx->access, uses, nuses, nfloats);
    return reg;
  }
  reg = decide_placement(fi, uses, nuses, nfloats, &buf->reg_floats, covered_ok);
  ch->place[v] = reg ? PLACE_REGS + buf->reg_floats : PLACE_SHARED_KNOWN;
  return reg;
}

/* Placement of every active value; fills the buffers (not yet ordered or allocated).  Returns
 * false when a shared buffer's writers do not cover its readers (the combination is invalid). */
static bool place_buffers(FusionInfo *fi, const Choice *ch, int nactive, KernelPlan *p,
                          BuildState *bs, bool explain) {
  p->buffers = xcalloc((size_t)fi->nvals, sizeof *p->buffers);
  p->nbuffers = 0;
  for (int v = 0; v < fi->nvals; v++) {
    bs->buf_of[v] = -1;
    if (!value_active(fi, v, nactive)) continue;
    int b = p->nbuffers++;
    bs->buf_of[v] = b;
    bs->val_of[b] = v;
    Buffer *buf = &p->buffers[b];
    *buf = (Buffer){.value = fi->value[v], .offset = -1, .load_call = -1, .producer = -1,
                    .first_use = -1, .last_use = -1};
    bool covered_ok;
    bool reg = value_placement(fi, ch, nactive, v, buf, &bs->labels, explain, &covered_ok);
    buf->place = reg ? PLACE_REGISTER : PLACE_SHARED;
    if (!reg) buf->bytes = ch->e * fi->floats[v] * real_bytes(fi);
    if (fi->producer[v] < 0) buf->load = load_routine(fi, ch, v);
    if (fi->saved[v] && fi->producer[v] < nactive) buf->save = save_routine(fi, ch, v);
    if (!covered_ok) return false;
  }
  return true;
}

/* The order of the first nactive calls.  Up to LIN_EXACT_CALLS calls it depends on which values
 * sit in registers (they take no shared memory); above, the greedy order counts every value as
 * shared, so that a long fusion is ordered once per number of active calls instead of once per
 * register placement of each partial plan of its beam. */
static bool order_calls(FusionInfo *fi, int nactive, KernelPlan *p, BuildState *bs) {
  uint64_t stack_mask[4] = {0};
  uint64_t *regmask = fi->regwords <= 4 ? stack_mask
                                        : xcalloc((size_t)fi->regwords, sizeof(uint64_t));
  for (int v = 0; v < fi->nvals && nactive <= LIN_EXACT_CALLS; v++) {
    int b = bs->buf_of[v];
    if (b >= 0 && p->buffers[b].place == PLACE_REGISTER) regmask[v / 64] |= 1ull << (v % 64);
  }
  const int *order = memo_order(fi, nactive, regmask);
  if (regmask != stack_mask) free(regmask);
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
  Staging staging = staging_of(fi->dag, fi->ctx->target, p); /* as emitted: io widths */
  for (int s = 0; s < p->nsteps; s++) {
    const Step *st = &p->steps[s];
    const Buffer *moved = &p->buffers[st->buf[0]]; /* a load's or save's array */
    BlockShape shape = impl_shape(st->impl, p->e);
    if (st->io)
      shape.w = staging_io_width(&staging, fi->dag, fi->ctx->target, st->io, moved->value, p->w);
    const char *fn = st->impl->fn->name;
    int node = p->order[st->call];
    if (st->kind == ROUTINE_COMPUTE)
      sa[s].label = USE_LABEL(lp, "%s#%d", fn, node);
    else
      sa[s].label = USE_LABEL(lp, "%s %s (%s#%d)", st->kind == ROUTINE_LOAD ? "load" : "save",
                              dag_value_label(fi->dag, moved->value), fn, node);
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
  staging_free(&staging);
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

/* A copy of p that owns its own arrays and strings (what kernel_plan_free releases). */
static void *copy_of(const void *p, size_t bytes) {
  return p && bytes ? memcpy(xmalloc(bytes), p, bytes) : NULL;
}

KernelPlan *kernel_plan_clone(const KernelPlan *p) {
  KernelPlan *c = copy_of(p, sizeof *p);
  c->order = copy_of(p->order, sizeof *p->order * (size_t)p->ncalls);
  c->impl = copy_of(p->impl, sizeof *p->impl * (size_t)p->ncalls);
  c->buffers = copy_of(p->buffers, sizeof *p->buffers * (size_t)p->nbuffers);
  c->steps = copy_of(p->steps, sizeof *p->steps * (size_t)p->nsteps);
  for (int b = 0; b < p->nbuffers; b++)
    if (p->buffers[b].why) c->buffers[b].why = xstrdup(p->buffers[b].why);
  for (int s = 0; s < p->nsteps; s++)
    if (p->steps[s].barrier_why) c->steps[s].barrier_why = xstrdup(p->steps[s].barrier_why);
  return c;
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
  BuildState bs = build_state_new(fi);
  p->e = ch->e;
  p->partial = nactive < fi->ncalls;
  p->precision = fi->ctx->target->precision;
  p->w = fi->ctx->target->w;
  bool ok = place_buffers(fi, ch, nactive, p, &bs, full) && order_calls(fi, nactive, p, &bs);
  if (ok) {
    p->impl = xmalloc(sizeof(Impl *) * (size_t)nactive);
    for (int k = 0; k < nactive; k++) {
      nodeset_add(&p->nodes, p->order[k]);
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
  build_state_free(&bs);
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
static KernelPlan *build_best_full(FusionInfo *fi, const Choice *ch, bool *disjoint) {
  *disjoint = false;
  KernelPlan *p = build_plan(fi, ch, fi->ncalls, true, false);
  if (!p || !reuses_bytes(p)) return p;
  KernelPlan *q = build_plan(fi, ch, fi->ncalls, true, true);
  if (q && q->predicted_ns_per_elem < p->predicted_ns_per_elem) {
    kernel_plan_free(p);
    *disjoint = true;
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

/* The complete plans of a fusion with the recipe of each (what rebuilds it). */
typedef struct {
  KernelPlan *plan;
  PlanRecipe recipe;
} Built;

typedef struct {
  Built *v;
  int n, cap;
  bool pruned; /* the beam dropped children on the way */
} PlanList;

/* The recipe of a choice: the implementation's index per call, the variants per value. */
static PlanRecipe recipe_of(const FusionInfo *fi, const Choice *ch, bool disjoint,
                            double predicted, bool pruned) {
  PlanRecipe r = {.e = ch->e, .disjoint = disjoint, .pruned = pruned,
                  .predicted_ns_per_elem = predicted, .ncalls = fi->ncalls, .nvals = fi->nvals};
  r.impl = xmalloc(sizeof(int) * (size_t)(fi->ncalls + 2 * fi->nvals));
  r.load = r.impl + fi->ncalls;
  r.save = r.load + fi->nvals;
  for (int c = 0; c < fi->ncalls; c++)
    r.impl[c] = ch->impl[c] ? (int)(ch->impl[c] - fi->dag->nodes[fi->node[c]].fn->impls) : 0;
  memcpy(r.load, ch->load, sizeof(int) * (size_t)fi->nvals);
  memcpy(r.save, ch->save, sizeof(int) * (size_t)fi->nvals);
  return r;
}

void plan_recipe_free(PlanRecipe *r) {
  free(r->impl);
  *r = (PlanRecipe){0};
}

/* The complete plan of choice ch and its recipe, when it is valid. */
static void plan_push(PlanList *l, FusionInfo *fi, const Choice *ch) {
  bool disjoint;
  KernelPlan *p = build_best_full(fi, ch, &disjoint);
  if (!p) return;
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 16;
    l->v = xrealloc(l->v, sizeof *l->v * (size_t)l->cap);
  }
  l->v[l->n++] = (Built){p, recipe_of(fi, ch, disjoint, p->predicted_ns_per_elem, l->pruned)};
}

/* ---- choices and their storage --------------------------------------------------------- */

/* The beam copies choices by the hundred per level: each lives in one block of a Choices pool
 * (implementations, then loads, saves and places), so that a copy is one memcpy and a level's
 * children are one allocation. */
typedef struct {
  size_t block; /* bytes of one choice's arrays */
  char *mem;
  int n, cap;
} Choices;

/* Rounded up to a pointer's alignment: the next block starts with implementation pointers, and
 * three int arrays of an odd number of values would leave it 4 bytes off (UBSan's misaligned
 * store in apply_option). */
static size_t choice_bytes(const FusionInfo *fi) {
  size_t bytes = sizeof(const Impl *) * (size_t)fi->ncalls + 3 * sizeof(int) * (size_t)fi->nvals;
  size_t align = _Alignof(const Impl *);
  return (bytes + align - 1) / align * align;
}

/* The choice stored in block k (valid until the pool grows). */
static Choice choice_at(const FusionInfo *fi, const Choices *pool, int k, int e) {
  char *m = pool->mem + pool->block * (size_t)k;
  Choice ch = {.e = e, .impl = (const Impl **)(void *)m};
  ch.load = (int *)(void *)(m + sizeof(const Impl *) * (size_t)fi->ncalls);
  ch.save = ch.load + fi->nvals;
  ch.place = ch.save + fi->nvals;
  return ch;
}

/* A new block holding a copy of src (or zeros when src is NULL). */
static int choice_add(const FusionInfo *fi, Choices *pool, const Choice *src) {
  if (pool->n == pool->cap) {
    pool->cap = pool->cap ? 2 * pool->cap : 64;
    pool->mem = xrealloc(pool->mem, pool->block * (size_t)pool->cap);
  }
  int k = pool->n++;
  Choice dst = choice_at(fi, pool, k, 0);
  if (src) {
    memcpy(dst.impl, src->impl, sizeof(const Impl *) * (size_t)fi->ncalls);
    memcpy(dst.load, src->load, sizeof(int) * (size_t)fi->nvals);
    memcpy(dst.save, src->save, sizeof(int) * (size_t)fi->nvals);
    memcpy(dst.place, src->place, sizeof(int) * (size_t)fi->nvals);
  } else {
    memset(pool->mem + pool->block * (size_t)k, 0, pool->block);
  }
  return k;
}

/* keep_all: every combination, depth first over the calls. */
static void enumerate_all(FusionInfo *fi, Choice *ch, int c, PlanList *out) {
  if (c == fi->ncalls) {
    plan_push(out, fi, ch);
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
  int e;
  int slot; /* its choice's block in the level's pool */
  double cost;
} BeamState;

static int by_cost(const void *a, const void *b) {
  double x = ((const BeamState *)a)->cost, y = ((const BeamState *)b)->cost;
  return (x > y) - (x < y);
}

/* Children differing only in load/save variants that did not change the prediction are
 * duplicates for the beam's purpose: they would crowd out other implementations. */
static bool same_kind(const FusionInfo *fi, const Choices *pool, const BeamState *a,
                      const BeamState *b, int ndecided) {
  if (a->e != b->e || a->cost != b->cost) return false;
  Choice x = choice_at(fi, pool, a->slot, a->e), y = choice_at(fi, pool, b->slot, b->e);
  for (int c = 0; c < ndecided; c++)
    if (x.impl[c] != y.impl[c]) return false;
  return true;
}

static const Impl *decided_impl(const FusionInfo *fi, const Choices *pool, const BeamState *st,
                                int call) {
  return choice_at(fi, pool, st->slot, st->e).impl[call];
}

/* Moves the survivors to the front of the sorted children: first the best child of every
 * (E, implementation of the call just decided) -- a block size or an implementation that looks
 * worse alone may pay off with later calls (thread counts, compatible patterns) -- then
 * the beam width more of the best, skipping duplicates.  Returns how many survive. */
static int diverse_survivors(const FusionInfo *fi, const Choices *pool, BeamState *v, int n,
                             int ndecided, int width) {
  bool *take = xcalloc((size_t)(n ? n : 1), sizeof *take);
  for (int i = 0; i < n; i++) {
    bool first = true;
    const Impl *mine = decided_impl(fi, pool, &v[i], ndecided - 1);
    for (int j = 0; j < i && first; j++)
      first = v[j].e != v[i].e || decided_impl(fi, pool, &v[j], ndecided - 1) != mine;
    take[i] = first;
  }
  for (int i = 0, kept = 0; i < n && kept < width; i++) {
    if (take[i]) continue;
    bool dup = false;
    for (int j = 0; j < i && !dup; j++) dup = take[j] && same_kind(fi, pool, &v[i], &v[j], ndecided);
    if (!dup) take[i] = true, kept++;
  }
  int w = 0;
  for (int i = 0; i < n; i++)
    if (take[i]) v[w++] = v[i];
  free(take);
  return w;
}

/* A level of the beam: its states and the pool holding their choices. */
typedef struct {
  BeamState *v;
  int n, cap;
  Choices pool;
  bool pruned; /* children were dropped to make this level */
} Beam;

static void beam_free(Beam *b) {
  free(b->v);
  free(b->pool.mem);
}

/* Expands every state by every option of call c into the next level's children, sorted, and
 * keeps the diverse ones and width more. */
static Beam beam_step(FusionInfo *fi, const Beam *beam, int c, int width) {
  Beam next = {.pool = {.block = beam->pool.block}};
  for (int s = 0; s < beam->n; s++) {
    OptionList opts = call_options(fi, c, beam->v[s].e);
    for (int k = 0; k < opts.n; k++) {
      Choice parent = choice_at(fi, &beam->pool, beam->v[s].slot, beam->v[s].e);
      int slot = choice_add(fi, &next.pool, &parent);
      Choice ch = choice_at(fi, &next.pool, slot, beam->v[s].e);
      apply_option(&ch, c, &opts.v[k]);
      KernelPlan *p = build_plan(fi, &ch, c + 1, false, false);
      if (!p) {
        next.pool.n--; /* the block is reused by the next child */
        continue;
      }
      if (next.n == next.cap) {
        next.cap = next.cap ? next.cap * 2 : 64;
        next.v = xrealloc(next.v, sizeof *next.v * (size_t)next.cap);
      }
      next.v[next.n++] = (BeamState){ch.e, slot, p->predicted_ns_per_elem};
      kernel_plan_free(p);
    }
    free(opts.v);
  }
  if (next.n > 1) qsort(next.v, (size_t)next.n, sizeof *next.v, by_cost);
  int children = next.n;
  next.n = diverse_survivors(fi, &next.pool, next.v, next.n, c + 1, width);
  next.pruned = next.n < children;
  return next;
}

/* Kernels of at least this many calls show their beam's progress: a level costs time growing
 * with the calls before it, and a chain of 1001 calls took 50 s (a loaded 2-core machine) with
 * nothing on the terminal. */
enum { PROGRESS_CALLS = 32 };

/* The beam of the given width over the calls; the best `builds` complete choices of its last
 * level are built exactly into out. */
static void beam_search(FusionInfo *fi, PlanList *out, int builds, int width) {
  Beam beam = {.pool = {.block = choice_bytes(fi)}};
  beam.v = xcalloc(N_E_CANDIDATES, sizeof *beam.v);
  for (int k = 0; k < N_E_CANDIDATES; k++)
    beam.v[beam.n++] = (BeamState){E_CANDIDATES[k], choice_add(fi, &beam.pool, NULL), 0};
  bool shown = fi->ctx->progress && fi->ncalls >= PROGRESS_CALLS;
  char what[64];
  snprintf(what, sizeof what, "planning a kernel of %d calls", fi->ncalls);
  for (int c = 0; c < fi->ncalls && beam.n > 0; c++) {
    if (shown) progress(what, c, fi->ncalls);
    /* a fusion of one call is always planned: the unfused cover needs every call */
    if (c > 0 && search_expired(fi->ctx)) beam.n = 0;
    Beam next = beam_step(fi, &beam, c, width);
    out->pruned |= next.pruned;
    beam_free(&beam);
    beam = next;
  }
  if (shown) progress_done();
  if (beam.n > 1) qsort(beam.v, (size_t)beam.n, sizeof *beam.v, by_cost);
  out->pruned |= beam.n > builds;
  for (int s = 0; s < beam.n && s < builds; s++) {
    Choice ch = choice_at(fi, &beam.pool, beam.v[s].slot, beam.v[s].e);
    plan_push(out, fi, &ch);
  }
  fi->ctx->beam_pruned |= out->pruned;
  beam_free(&beam);
}

static int by_prediction(const void *a, const void *b) {
  double x = ((const Built *)a)->plan->predicted_ns_per_elem;
  double y = ((const Built *)b)->plan->predicted_ns_per_elem;
  return (x > y) - (x < y);
}

static FusionInfo *fusion_info_new(SearchContext *ctx, NodeSet nodes) {
  const TimingDb *db = ctx->db;
  FusionInfo *fi = xcalloc(1, sizeof *fi);
  fi->ctx = ctx;
  fi->dag = ctx->dag;
  fi->nodes = nodes;
  fi->smem_limit = db && db->dev.smem_per_block_optin > 0 ? db->dev.smem_per_block_optin
                                                          : KAS_SMEM_OPTIN_FALLBACK;
  fi->thread_limit = db && db->dev.max_threads_per_block > 0 &&
                             db->dev.max_threads_per_block < KAS_MAX_THREADS
                         ? db->dev.max_threads_per_block
                         : KAS_MAX_THREADS;
  classify(fi);
  return fi;
}

static void built_free(Built *b) {
  kernel_plan_free(b->plan);
  plan_recipe_free(&b->recipe);
}

/* Every valid plan of the fusion (keep_all), or the plans of the best `builds` choices of the
 * beam's last level; best first (a stable sort keeps the order of equal predictions). */
static PlanList combine(SearchContext *ctx, NodeSet nodes, bool keep_all, int builds) {
  PlanList out = {0};
  NodeSet outside = nodeset_minus(nodes, nodeset_range(0, ctx->dag->nnodes));
  if (!nodeset_is_empty(&nodes) && nodeset_is_empty(&outside)) {
    FusionInfo *fi = fusion_info_new(ctx, nodes);
    if (keep_all) {
      Choices pool = {.block = choice_bytes(fi)};
      for (int k = 0; k < N_E_CANDIDATES; k++) {
        pool.n = 0;
        Choice ch = choice_at(fi, &pool, choice_add(fi, &pool, NULL), E_CANDIDATES[k]);
        enumerate_all(fi, &ch, 0, &out);
      }
      free(pool.mem);
    } else {
      beam_search(fi, &out, builds, ctx->beam_width);
      /* a wider beam is no superset of the default one: a level keeps the best child of each
       * (E, implementation) and `width` more, and the extra parents' children can take both
       * places from a state of the default beam.  In a 65-call kernel (docs/search.md, "Inside
       * a kernel") the default beam's best was 23rd of 192 children at call 21, kept as its
       * group's best; at width 40 it was 49th of 372, its group's place taken by a better
       * child, and the kernel came out at 0.3587 ns/elem against 0.3516.  So the default beam
       * runs too, and its plans join the wider one's: never worse than the default. */
      if (ctx->beam_width > SEARCH_BEAM_WIDTH)
        beam_search(fi, &out, builds, SEARCH_BEAM_WIDTH);
    }
    fusion_info_free(fi);
  }
  if (out.n > 1) qsort(out.v, (size_t)out.n, sizeof *out.v, by_prediction);
  return out;
}

/* The plans of l (malloc'ed array; NULL when none), their recipes freed; l is emptied. */
static KernelPlan **take_plans(PlanList *l, int *nplans_out) {
  KernelPlan **plans = l->n ? xmalloc(sizeof *plans * (size_t)l->n) : NULL;
  for (int k = 0; k < l->n; k++) {
    plans[k] = l->v[k].plan;
    plan_recipe_free(&l->v[k].recipe);
  }
  *nplans_out = l->n;
  free(l->v);
  *l = (PlanList){0};
  return plans;
}

KernelPlan **combine_fusion(SearchContext *ctx, NodeSet nodes, bool keep_all, int *nplans_out) {
  PlanList out = combine(ctx, nodes, keep_all, FINAL_BUILDS);
  if (!keep_all)
    while (out.n > KEEP_PLANS) built_free(&out.v[--out.n]);
  return take_plans(&out, nplans_out);
}

KernelPlan **combine_shapes(SearchContext *ctx, NodeSet nodes, int *nplans_out) {
  /* every state of the last level: it keeps the best of each E (diverse_survivors) */
  PlanList out = combine(ctx, nodes, false, INT_MAX);
  int n = 0; /* the first (best) of each shape moves to the front */
  for (int k = 0; k < out.n; k++) {
    const KernelPlan *p = out.v[k].plan;
    bool seen = false;
    for (int j = 0; j < n && !seen; j++)
      seen = out.v[j].plan->e == p->e && out.v[j].plan->threads == p->threads;
    if (seen)
      built_free(&out.v[k]);
    else
      out.v[n++] = out.v[k];
  }
  out.n = n;
  return take_plans(&out, nplans_out);
}

bool combine_best_recipe(SearchContext *ctx, NodeSet nodes, PlanRecipe *best) {
  PlanList out = combine(ctx, nodes, false, FINAL_BUILDS);
  *best = (PlanRecipe){0};
  for (int k = 0; k < out.n; k++) {
    kernel_plan_free(out.v[k].plan);
    if (k == 0) *best = out.v[k].recipe;
    else plan_recipe_free(&out.v[k].recipe);
  }
  free(out.v);
  return out.n > 0;
}

/* The position in p's execution order of DAG node n, or -1. */
static int order_position(const KernelPlan *p, int n) {
  for (int k = 0; k < p->ncalls; k++)
    if (p->order[k] == n) return k;
  return -1;
}

/* Whether p's shared buffers never share bytes (how its shared memory was allocated). */
static bool buffers_disjoint(const KernelPlan *p) {
  for (int a = 0; a < p->nbuffers; a++)
    for (int b = a + 1; b < p->nbuffers; b++) {
      const Buffer *x = &p->buffers[a], *y = &p->buffers[b];
      if (x->place == PLACE_SHARED && y->place == PLACE_SHARED &&
          x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes)
        return false;
    }
  return true;
}

bool combine_recipe_of(SearchContext *ctx, const KernelPlan *p, PlanRecipe *out) {
  FusionInfo *fi = fusion_info_new(ctx, p->nodes);
  Choices pool = {.block = choice_bytes(fi)};
  Choice ch = choice_at(fi, &pool, choice_add(fi, &pool, NULL), p->e);
  bool ok = fi->ncalls == p->ncalls;
  for (int c = 0; c < fi->ncalls && ok; c++) {
    int k = order_position(p, fi->node[c]);
    ok = k >= 0;
    if (ok) ch.impl[c] = p->impl[k];
  }
  for (int b = 0; b < p->nbuffers && ok; b++) {
    const Buffer *buf = &p->buffers[b];
    int v = fi->local_of_value[buf->value];
    if (v < 0) continue;
    if (buf->load && fi->owner[v] >= 0)
      ch.load[v] = (int)(buf->load - ch.impl[fi->owner[v]]->loads);
    if (buf->save && fi->producer[v] >= 0)
      ch.save[v] = (int)(buf->save - ch.impl[fi->producer[v]]->saves);
  }
  if (ok) *out = recipe_of(fi, &ch, buffers_disjoint(p), p->predicted_ns_per_elem, false);
  free(pool.mem);
  fusion_info_free(fi);
  return ok;
}

KernelPlan *combine_build(SearchContext *ctx, NodeSet nodes, const PlanRecipe *r) {
  NodeSet outside = nodeset_minus(nodes, nodeset_range(0, ctx->dag->nnodes));
  if (nodeset_is_empty(&nodes) || !nodeset_is_empty(&outside)) return NULL;
  FusionInfo *fi = fusion_info_new(ctx, nodes);
  KernelPlan *p = NULL;
  if (fi->ncalls == r->ncalls && fi->nvals == r->nvals) {
    Choices pool = {.block = choice_bytes(fi)};
    Choice ch = choice_at(fi, &pool, choice_add(fi, &pool, NULL), r->e);
    bool ok = true;
    for (int c = 0; c < fi->ncalls; c++) {
      const Function *fn = fi->dag->nodes[fi->node[c]].fn;
      ok &= r->impl[c] >= 0 && r->impl[c] < fn->nimpls;
      if (ok) ch.impl[c] = &fn->impls[r->impl[c]];
    }
    memcpy(ch.load, r->load, sizeof(int) * (size_t)fi->nvals);
    memcpy(ch.save, r->save, sizeof(int) * (size_t)fi->nvals);
    if (ok) p = build_plan(fi, &ch, fi->ncalls, true, r->disjoint);
    free(pool.mem);
  }
  fusion_info_free(fi);
  return p;
}
