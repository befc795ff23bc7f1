/*
 * threads.c — a spec loop's iterations over threads of a block (issue #11; docs/loops.md,
 * "Iterations over threads").
 *
 * A kernel that runs the whole StVenant element in one thread per element holds about 1 KB of
 * shared memory per element, so that few threads are resident and the memory latencies stay
 * exposed (benchmarks/RESULTS.md, session 23).  Where a loop's iterations are independent, K of
 * them can run side by side instead, in K groups of threads of one block: group g runs
 * iteration lo + g of every element of the block, and the element's staged arrays serve all K.
 *
 * The kernel of such a candidate is planned on the DAG of one iteration (threads_dag): the
 * calls of iteration lo, whose values are the element's values as that iteration reads and
 * writes them.  An array element the iteration addresses through the loop's variable
 * (`vec3DPhi[N]`, `matTangent[N][M]`) becomes a value with a group stride: group g finds it
 * stride * g reals further into its array's record.  Anything else it reads is the same for
 * every group.  Since the DAG's values are SSA versions, a value that iteration lo reads in
 * both ways (vec3DPhi[0] as vec3DPhi[N] and as vec3DPhi[M]) is two values here.
 *
 * Each group has its own copy of the plan's shared memory, except where every shared buffer
 * holds an input all groups read (the element's 81-real ten4Help1): then group 0 loads the one
 * copy that all read (threads_one_copy).  The staged copies of arrays always serve every group.
 *
 * The loop qualifies (threads_loop) when it is at top level and holds every call of the spec,
 * no iteration reads what another one made, every output is an array element that the loop's
 * variable addresses, and every iteration is iteration lo moved by the strides: checked call by
 * call and argument by argument against the unrolled DAG, so that the kernel of one iteration
 * is, for each group, exactly what the spec says.
 */
#include <stdlib.h>
#include <string.h>

#include "kasgen.h"

static const Statement *stmt_of_node(const Dag *dag, int node) {
  return &dag->spec->stmts[dag->nodes[node].stmt];
}

/* Reals per iteration that reference r moves through its array when loop l's variable grows
 * by one (0: r does not use it; a plain variable never does). */
static int ref_stride(const Spec *sp, const SourceRef *r, int l) {
  const SpecVar *var = &sp->vars[r->var];
  int stride = 0, inner = var->type->size;
  for (int d = r->nidx - 1; d >= 0; d--) {
    if (r->idx[d].loop == l) stride += inner;
    inner *= var->dims[d];
  }
  return stride;
}

/* The reference behind argument a of node n (a = -1: its result). */
static const SourceRef *node_ref(const Dag *dag, int n, int a) {
  const Spec *sp = dag->spec;
  const SourceCall *sc = &sp->sources[stmt_of_node(dag, n)->source];
  return a < 0 ? &sc->result : &sc->args[a];
}

/* Whether value u of the iteration `steps` after lo is value u0 of iteration lo moved by the
 * loop: an input or output at an offset stride * steps further into the same API argument, and
 * a value a call made, made by the call at the same place of its iteration (shift nodes on). */
static bool moved_by(const Dag *dag, int u0, int u, int stride, int steps, int shift) {
  const Value *a = &dag->values[u0], *b = &dag->values[u];
  if ((a->producer < 0) != (b->producer < 0)) return false;
  if (a->producer >= 0 && b->producer != a->producer + shift) return false;
  /* an intermediate array element (g[N]) lives in no API argument: only its producer counts */
  return a->arg == b->arg && (a->arg < 0 || b->arg_offset == a->arg_offset + stride * steps);
}

/* Iteration `iter` (its nodes from `first`) is iteration lo (from first0) moved: the same
 * functions, and every argument and result moved by its reference's stride. */
static bool iteration_alike(const Dag *dag, int l, int first0, int first, int len, int steps) {
  const Spec *sp = dag->spec;
  int shift = first - first0;
  for (int j = 0; j < len; j++) {
    const DagNode *n0 = &dag->nodes[first0 + j], *n = &dag->nodes[first + j];
    if (n0->fn != n->fn || n0->nargs != n->nargs ||
        stmt_of_node(dag, first0 + j)->source != stmt_of_node(dag, first + j)->source)
      return false;
    for (int a = -1; a < n->nargs; a++) {
      int u0 = a < 0 ? n0->result : n0->args[a], u = a < 0 ? n->result : n->args[a];
      if (!moved_by(dag, u0, u, ref_stride(sp, node_ref(dag, first0 + j, a), l), steps, shift))
        return false;
    }
  }
  return true;
}

/* Nothing an iteration reads comes from another iteration. */
static bool iterations_independent(const Dag *dag) {
  for (int n = 0; n < dag->nnodes; n++)
    for (int a = 0; a < dag->nodes[n].nargs; a++) {
      int p = dag->values[dag->nodes[n].args[a]].producer;
      if (p >= 0 && stmt_of_node(dag, p)->iter[0] != stmt_of_node(dag, n)->iter[0]) return false;
    }
  return true;
}

/* Every output is written by one iteration through the loop's variable. */
static bool outputs_strided(const Dag *dag, int l) {
  for (int o = 0; o < dag->noutputs; o++) {
    const Value *v = &dag->values[dag->outputs[o]];
    if (v->producer < 0 || v->arg < 0 || ref_stride(dag->spec, node_ref(dag, v->producer, -1), l) == 0)
      return false;
  }
  return true;
}

bool threads_loop(const Dag *dag, ThreadLoop *out) {
  const Spec *sp = dag->spec;
  if (!sp || sp->nloops == 0 || dag->nnodes == 0) return false;
  for (int l = 0; l < sp->nloops; l++) {
    const SpecLoop *loop = &sp->loops[l];
    int count = loop->hi - loop->lo, len = loop->calls_per_iteration;
    if (loop->depth != 0 || count < 2 || len * count != dag->nnodes) continue;
    bool ok = true;
    for (int n = 0; n < dag->nnodes && ok; n++) ok = spec_statement_in_loop(sp, dag->nodes[n].stmt, l);
    ok = ok && iterations_independent(dag) && outputs_strided(dag, l);
    for (int i = 1; i < count && ok; i++) ok = iteration_alike(dag, l, 0, i * len, len, i);
    if (!ok) continue;
    *out = (ThreadLoop){l, loop->lo, count, len};
    return true;
  }
  return false;
}

/* ---- the DAG of one iteration -------------------------------------------------------------- */

typedef struct {
  Dag *d;
  const Dag *dag;
  int *input_of;  /* per (original input value, stride slot): derived value + 1, 0 = none */
  int nslots;
} Builder;

/* "vec3DPhi[N]" as an identifier-safe label keeps its brackets; emit_value_ident turns it into
 * "vec3DPhi_N_0". */
static char *strided_label(const Dag *dag, int node, int a, int l) {
  return spec_ref_text(dag->spec, node_ref(dag, node, a), dag->nodes[node].stmt, l);
}

/* The derived value that argument a of node n (iteration lo) reads. */
static int derived_input(Builder *b, int n, int a, int l) {
  const Dag *dag = b->dag;
  int u = dag->nodes[n].args[a];
  int stride = dag->values[u].arg >= 0 ? ref_stride(dag->spec, node_ref(dag, n, a), l) : 0;
  int slot = u * 2 + (stride != 0); /* one value per original input and role */
  if (b->input_of[slot]) return b->input_of[slot] - 1;
  Dag *d = b->d;
  int v = d->ninputs++;
  d->values[v] = dag->values[u];
  d->values[v].consumers = NULL;
  d->values[v].nconsumers = 0;
  d->values[v].group_stride = stride;
  d->values[v].label = stride ? strided_label(dag, n, a, l) : xstrdup(dag_value_label(dag, u));
  b->input_of[slot] = v + 1;
  return v;
}

static void add_consumer_once(Value *v, int node) {
  if (v->nconsumers && v->consumers[v->nconsumers - 1] == node) return;
  v->consumers = xrealloc(v->consumers, sizeof(int) * (size_t)(v->nconsumers + 1));
  v->consumers[v->nconsumers++] = node;
}

/* The API arguments as the original DAG has them (the generated API is the spec's), each
 * listing the derived values that live in it; nvalues stays the argument's element count, the
 * list padded with its first value, so that a strided value stands for the elements the groups
 * reach together. */
static DagArg *copy_args(const Dag *d, const DagArg *args, int n, bool outputs) {
  DagArg *out = xcalloc((size_t)(n ? n : 1), sizeof *out);
  for (int a = 0; a < n; a++) {
    out[a] = args[a];
    out[a].values = xcalloc((size_t)args[a].nvalues, sizeof(int));
    int k = 0;
    for (int v = 0; v < d->nvalues && k < args[a].nvalues; v++) {
      const Value *val = &d->values[v];
      if (val->arg == a && (val->producer >= 0) == outputs) out[a].values[k++] = v;
    }
    for (int j = k; j < args[a].nvalues; j++) out[a].values[j] = k ? out[a].values[0] : -1;
  }
  return out;
}

Dag *threads_dag(const Dag *dag, const ThreadLoop *t) {
  Dag *d = xcalloc(1, sizeof *d);
  d->spec = dag->spec;
  d->groups = t->count;
  d->group_loop = t->loop;
  d->group_first = t->first;
  d->nnodes = t->len;
  /* at most one value per argument and role, plus one per call */
  int cap = 2 * dag->nvalues + t->len;
  d->values = xcalloc((size_t)cap, sizeof *d->values);
  Builder b = {d, dag, xcalloc((size_t)dag->nvalues * 2 + 1, sizeof(int)), dag->nvalues * 2};
  /* Inputs first, in order of first use. */
  for (int j = 0; j < t->len; j++)
    for (int a = 0; a < dag->nodes[j].nargs; a++)
      if (dag->values[dag->nodes[j].args[a]].producer < 0) derived_input(&b, j, a, t->loop);
  d->inputs = xcalloc((size_t)d->ninputs + 1, sizeof(int));
  for (int k = 0; k < d->ninputs; k++) d->inputs[k] = k;
  d->nvalues = d->ninputs + t->len;
  d->nodes = xcalloc((size_t)t->len, sizeof *d->nodes);
  d->succ = xcalloc((size_t)t->len, sizeof(NodeSet));
  d->pred = xcalloc((size_t)t->len, sizeof(NodeSet));
  d->reach = xcalloc((size_t)t->len, sizeof(NodeSet));
  d->outputs = xcalloc((size_t)t->len + 1, sizeof(int));
  for (int j = 0; j < t->len; j++) {
    const DagNode *n = &dag->nodes[j];
    int r = d->ninputs + j;
    d->values[r] = dag->values[n->result];
    d->values[r].producer = j;
    d->values[r].consumers = NULL;
    d->values[r].nconsumers = 0;
    d->values[r].group_stride =
        d->values[r].arg >= 0 ? ref_stride(dag->spec, node_ref(dag, j, -1), t->loop) : 0;
    d->values[r].label = d->values[r].group_stride ? strided_label(dag, j, -1, t->loop)
                                                   : xstrdup(dag_value_label(dag, n->result));
    if (d->values[r].is_output) d->outputs[d->noutputs++] = r;
    d->nodes[j] = (DagNode){.fn = n->fn, .stmt = n->stmt, .nargs = n->nargs, .result = r};
    for (int a = 0; a < n->nargs; a++) {
      int u = n->args[a], p = dag->values[u].producer;
      int v = p >= 0 ? d->ninputs + p : derived_input(&b, j, a, t->loop);
      d->nodes[j].args[a] = v;
      add_consumer_once(&d->values[v], j);
      if (p >= 0) nodeset_add(&d->succ[p], j), nodeset_add(&d->pred[j], p);
    }
  }
  free(b.input_of);
  dag_close_reach(d);
  d->nin_args = dag->nin_args;
  d->nout_args = dag->nout_args;
  d->in_args = copy_args(d, dag->in_args, dag->nin_args, false);
  d->out_args = copy_args(d, dag->out_args, dag->nout_args, true);
  return d;
}

/* ---- one copy of the shared inputs ----------------------------------------------------------- */

/* The step that loads buffer b, or -1. */
static int load_step(const KernelPlan *p, int b) {
  for (int s = 0; s < p->nsteps; s++)
    if (p->steps[s].kind == ROUTINE_LOAD && p->steps[s].buf[0] == b) return s;
  return -1;
}

/* Whether a barrier stands between step `from` and the first later step that reads buffer b. */
static bool barrier_before_read(const KernelPlan *p, int from, int b) {
  for (int s = from + 1; s < p->nsteps; s++) {
    if (p->steps[s].barrier_before) return true;
    for (int k = 0; k < p->steps[s].nbuf; k++)
      if (p->steps[s].buf[k] == b) return false;
  }
  return true; /* never read */
}

bool threads_one_copy(const Dag *dag, const KernelPlan *p) {
  if (dag->groups <= 1) return false;
  int nshared = 0;
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *buf = &p->buffers[b];
    if (buf->place != PLACE_SHARED) continue;
    nshared++;
    const Value *v = &dag->values[buf->value];
    int s = load_step(p, b);
    if (!buf->load || v->producer >= 0 || v->group_stride || s < 0 || !barrier_before_read(p, s, b))
      return false;
    for (int o = 0; o < b; o++) { /* no bytes shared with another buffer over time */
      const Buffer *other = &p->buffers[o];
      if (other->place == PLACE_SHARED && other->offset < buf->offset + buf->bytes &&
          buf->offset < other->offset + other->bytes)
        return false;
    }
  }
  return nshared > 0;
}
