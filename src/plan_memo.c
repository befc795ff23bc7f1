/*
 * plan_memo.c — the best plan of every fusion the search asks about, combined once per
 * canonical signature (docs/search.md, "The memo").
 *
 * An unrolled loop repeats the same sub-DAG: the 16 vertex pairs of a tetrahedron's St. Venant
 * element run the same seven calls on other values.  combine.c decides a fusion's plan from its
 * structure alone: the calls in node order with their functions, where each argument comes from
 * (a call of the fusion, or the k-th distinct value from outside it), and which results escape
 * (returned, or read outside).  Types follow from the functions, and the values are numbered by
 * that structure too (combine.c numbers them by first appearance).  So two fusions with the same
 * signature have the same plans with the same predictions, and a recipe made for one rebuilds
 * the other's plan with its own nodes, values and labels (combine_build).
 *
 * The memo keeps, per signature, the best plan's recipe (or the fact that there is none), in a
 * hash table that lives in the search's context.  A fusion the time budget cut off is not
 * remembered: it has no plan in this search, but not because of its structure.
 */
#include "kasgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* External values get codes above every call index (KAS_MAX_NODES calls). */
#define EXTERNAL_CODE ((uint64_t)1 << 32)

typedef struct {
  uint64_t hash;
  uint64_t *sig;
  int nsig;
  bool planned;      /* a plan exists */
  PlanRecipe recipe; /* its recipe, when planned */
  NodeSet first;     /* the fusion it was combined for */
} MemoEntry;

struct PlanMemo {
  MemoEntry *v;
  int n, cap;
  int *slot; /* hash table of entry indices + 1 (0 = free), 2 * cap slots */
  long isomorphic, combined; /* lookups answered for another fusion; combines done */
};

PlanMemo *plan_memo_new(void) { return xcalloc(1, sizeof(PlanMemo)); }

void plan_memo_free(PlanMemo *m) {
  if (!m) return;
  for (int k = 0; k < m->n; k++) {
    free(m->v[k].sig);
    plan_recipe_free(&m->v[k].recipe);
  }
  free(m->v);
  free(m->slot);
  free(m);
}

/* ---- the signature ------------------------------------------------------------------------ */

typedef struct {
  uint64_t *v;
  int n, cap;
} Words;

static void put(Words *w, uint64_t x) {
  if (w->n == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 64;
    w->v = xrealloc(w->v, sizeof *w->v * (size_t)w->cap);
  }
  w->v[w->n++] = x;
}

static bool escapes(const Dag *dag, const NodeSet *nodes, int value) {
  const Value *val = &dag->values[value];
  if (val->is_output) return true;
  for (int k = 0; k < val->nconsumers; k++)
    if (!nodeset_has(nodes, val->consumers[k])) return true;
  return false;
}

/* How value v lies in global memory (layout, record, offset): twins must agree on it, because
 * the routines that may load or save a value depend on it (a contiguous one needs an
 * element-major array). */
static uint64_t binding_word(const Target *t, const Dag *dag, int v) {
  GlobalBinding b = target_binding(t, dag, v);
  return (uint64_t)b.layout << 60 | (uint64_t)(uint32_t)b.size << 40 |
         (uint64_t)(uint32_t)b.record << 20 | (uint64_t)(uint32_t)b.offset;
}

/* Per call in node order: its function, whether its result escapes (and then how it lies in
 * global memory), its arguments' sources (the local index of the producing call, or
 * EXTERNAL_CODE + k for the k-th distinct outside value in order of first use, followed at that
 * first use by the value's binding). */
static Words signature(const Target *t, const Dag *dag, const NodeSet *nodes) {
  Words w = {0};
  int *local_call = xmalloc(sizeof(int) * (size_t)dag->nnodes);
  int *external = xmalloc(sizeof(int) * (size_t)dag->nvalues); /* value -> k + 1, 0 = none */
  memset(external, 0, sizeof(int) * (size_t)dag->nvalues);
  int ncalls = 0, nexternal = 0;
  for (int n = nodeset_next(nodes, 0); n >= 0; n = nodeset_next(nodes, n + 1)) {
    const DagNode *nd = &dag->nodes[n];
    local_call[n] = ncalls++;
    put(&w, (uint64_t)(uintptr_t)nd->fn);
    bool escaping = escapes(dag, nodes, nd->result);
    put(&w, (uint64_t)nd->nargs << 1 | escaping);
    if (escaping) put(&w, binding_word(t, dag, nd->result));
    for (int a = 0; a < nd->nargs; a++) {
      int v = nd->args[a], producer = dag->values[v].producer;
      if (producer >= 0 && nodeset_has(nodes, producer)) {
        put(&w, (uint64_t)local_call[producer]);
      } else {
        bool first_use = !external[v];
        if (first_use) external[v] = ++nexternal;
        put(&w, EXTERNAL_CODE + (uint64_t)external[v]);
        if (first_use) put(&w, binding_word(t, dag, v));
      }
    }
  }
  free(local_call);
  free(external);
  return w;
}

static uint64_t hash_words(const uint64_t *v, int n) {
  uint64_t h = 0x84222325cbf29ce4ull;
  for (int k = 0; k < n; k++) h = (h ^ v[k]) * 0x100000001b3ull ^ (h >> 27);
  return h;
}

/* ---- the table ---------------------------------------------------------------------------- */

static void rehash(PlanMemo *m) {
  size_t nslots = (size_t)m->cap * 2;
  free(m->slot);
  m->slot = xcalloc(nslots, sizeof(int));
  for (int k = 0; k < m->n; k++) {
    size_t i = m->v[k].hash & (nslots - 1);
    while (m->slot[i]) i = (i + 1) & (nslots - 1);
    m->slot[i] = k + 1;
  }
}

static MemoEntry *find(PlanMemo *m, uint64_t hash, const Words *sig) {
  if (m->cap == 0) return NULL;
  size_t nslots = (size_t)m->cap * 2;
  for (size_t i = hash & (nslots - 1); m->slot[i]; i = (i + 1) & (nslots - 1)) {
    MemoEntry *e = &m->v[m->slot[i] - 1];
    if (e->hash == hash && e->nsig == sig->n &&
        !memcmp(e->sig, sig->v, sizeof(uint64_t) * (size_t)sig->n))
      return e;
  }
  return NULL;
}

static MemoEntry *insert(PlanMemo *m, uint64_t hash, Words *sig) {
  if (m->n == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 64;
    m->v = xrealloc(m->v, sizeof *m->v * (size_t)m->cap);
    rehash(m);
  }
  MemoEntry *e = &m->v[m->n++];
  *e = (MemoEntry){.hash = hash, .sig = sig->v, .nsig = sig->n};
  sig->v = NULL;
  size_t nslots = (size_t)m->cap * 2, i = hash & (nslots - 1);
  while (m->slot[i]) i = (i + 1) & (nslots - 1);
  m->slot[i] = m->n;
  return e;
}

/* The entry of the fusion's signature, combining it on a miss; NULL when the time budget cut
 * its beam short (nothing is remembered then). */
static const MemoEntry *lookup(SearchContext *ctx, NodeSet nodes) {
  PlanMemo *m = ctx->plans;
  Words sig = signature(ctx->target, ctx->dag, &nodes);
  uint64_t hash = hash_words(sig.v, sig.n);
  MemoEntry *e = find(m, hash, &sig);
  if (e) {
    if (!nodeset_equal(&e->first, &nodes)) m->isomorphic++;
    free(sig.v);
    return e;
  }
  m->combined++;
  PlanRecipe recipe;
  bool planned = combine_best_recipe(ctx, nodes, &recipe);
  if (!planned && nodeset_count(&nodes) > 1 && search_expired(ctx)) {
    free(sig.v);
    return NULL;
  }
  e = insert(m, hash, &sig);
  e->first = nodes;
  e->planned = planned;
  if (planned) e->recipe = recipe;
  return e;
}

double plan_memo_cost(SearchContext *ctx, NodeSet nodes) {
  const MemoEntry *e = lookup(ctx, nodes);
  return e && e->planned ? e->recipe.predicted_ns_per_elem : INFINITY;
}

bool plan_memo_known(SearchContext *ctx, NodeSet nodes) {
  Words sig = signature(ctx->target, ctx->dag, &nodes);
  bool known = find(ctx->plans, hash_words(sig.v, sig.n), &sig) != NULL;
  free(sig.v);
  return known;
}

const PlanRecipe *plan_memo_recipe(SearchContext *ctx, NodeSet nodes) {
  const MemoEntry *e = lookup(ctx, nodes);
  return e && e->planned ? &e->recipe : NULL;
}

KernelPlan *plan_memo_build(SearchContext *ctx, NodeSet nodes) {
  const PlanRecipe *r = plan_memo_recipe(ctx, nodes);
  return r ? combine_build(ctx, nodes, r) : NULL;
}

void plan_memo_stats(const SearchContext *ctx, long *combined, long *isomorphic) {
  *combined = ctx->plans ? ctx->plans->combined : 0;
  *isomorphic = ctx->plans ? ctx->plans->isomorphic : 0;
}
