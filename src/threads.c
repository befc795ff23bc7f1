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
 * The kernel of such a candidate is planned on the DAG of one group's calls (threads_dag): the
 * calls of iteration lo, whose values are the element's values as that iteration reads and
 * writes them.  An array element the iteration addresses through the loop's variable
 * (`vec3DPhi[N]`, `matTangent[N][M]`) becomes a value with a group stride: group g finds it
 * stride * g reals further into its array's record.  Anything else it reads is the same for
 * every group.  Since the DAG's values are SSA versions, a value that iteration lo reads in
 * both ways (vec3DPhi[0] as vec3DPhi[N] and as vec3DPhi[M]) is two values here.  Where a loop
 * directly inside qualifies too, its iterations get groups of their own (group (i, j): the
 * element's pair N, M), each also running the calls of its outer iteration outside the inner
 * loop, and values move with a second stride per inner iteration.
 *
 * Each group has its own copy of the plan's shared memory, except where every shared buffer
 * holds an input all groups read (the element's 81-real ten4Help1): then the groups share one
 * copy (threads_one_copy), which every thread of the block copies in where its routine moves the
 * block's chunk (staging.c), else group 0 loads.  The staged copies of arrays serve every group.
 *
 * A loop qualifies (threads_loops) when it is at top level and holds every call of the spec, no
 * iteration reads what another one made, every output is an array element that the loop's
 * variable addresses, and every group's calls are group 0's moved by the strides: checked call
 * by call and argument by argument against the unrolled DAG, so that the kernel of one group is,
 * for each group, exactly what the spec says.
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

/* Whether position pos of an iteration of the loop is in the inner loop's first iteration (its
 * iterations sit at pos0 .. pos0 + count2 * len2 - 1 of it, len2 calls each). */
static bool in_inner(const ThreadLoop *t, int pos) {
  return t->count2 > 1 && pos >= t->pos0 && pos < t->pos0 + t->len2;
}

/* The node of group (i, j) (iteration first + i of the loop, first2 + j of the inner one) at
 * position `pos` of an iteration of the loop: a position of the inner loop's first iteration
 * stands for the same place of iteration j. */
static int group_node(const ThreadLoop *t, int i, int j, int pos) {
  return i * t->len + pos + (in_inner(t, pos) ? j * t->len2 : 0);
}

/* The positions of group (0, 0)'s calls in an iteration of the loop, in order: all of it for
 * one loop; with an inner loop, its calls outside the inner loop and the inner loop's first
 * iteration.  Returns their count. */
static int group_positions(const ThreadLoop *t, int *pos) {
  int n = 0;
  for (int p = 0; p < t->len; p++)
    if (t->count2 <= 1 || p < t->pos0 || p >= t->pos0 + t->count2 * t->len2 || in_inner(t, p))
      pos[n++] = p;
  return n;
}

/* Reals the element of argument a of node `node` (-1: its result) moves per iteration of loop
 * l (0 for a value of no API argument: an intermediate has no place to move). */
static int value_stride(const Dag *dag, int u, int node, int a, int l) {
  return l >= 0 && dag->values[u].arg >= 0 ? ref_stride(dag->spec, node_ref(dag, node, a), l) : 0;
}

/* Every group (i, j) runs group (0, 0)'s calls moved: the same functions; every argument and
 * result in the same API argument, stride * i + stride2 * j further, or made by the call at
 * the same place of the group's own iteration.  A call outside the inner loop reads nothing the
 * inner loop makes (each group runs those calls for its own inner iteration alone). */
static bool groups_alike(const Dag *dag, const ThreadLoop *t, const int *pos, int n) {
  int *index_of = xmalloc(sizeof(int) * (size_t)(t->len + 1)); /* position -> k, or -1 */
  for (int p = 0; p < t->len; p++) index_of[p] = -1;
  for (int k = 0; k < n; k++) index_of[pos[k]] = k;
  bool ok = true;
  for (int i = 0; i < t->count && ok; i++)
    for (int j = 0; j < t->count2 && ok; j++)
      for (int k = 0; k < n && ok; k++) {
        int x = group_node(t, 0, 0, pos[k]), y = group_node(t, i, j, pos[k]);
        const DagNode *a = &dag->nodes[x], *b = &dag->nodes[y];
        ok = a->fn == b->fn && a->nargs == b->nargs &&
             stmt_of_node(dag, x)->source == stmt_of_node(dag, y)->source;
        for (int r = -1; r < a->nargs && ok; r++) {
          int u0 = r < 0 ? a->result : a->args[r], u = r < 0 ? b->result : b->args[r];
          const Value *va = &dag->values[u0], *vb = &dag->values[u];
          if ((va->producer < 0) != (vb->producer < 0) || va->arg != vb->arg) {
            ok = false;
          } else if (va->producer >= 0) {
            int q = va->producer < t->len ? index_of[va->producer] : -1;
            ok = q >= 0 && vb->producer == group_node(t, i, j, pos[q]) &&
                 (in_inner(t, pos[k]) || !in_inner(t, pos[q]));
          }
          if (ok && va->arg >= 0)
            ok = vb->arg_offset == va->arg_offset + value_stride(dag, u0, x, r, t->loop) * i +
                                       value_stride(dag, u0, x, r, t->loop2) * j;
        }
      }
  free(index_of);
  return ok;
}

/* Every output moves with the loop; with an inner loop, one made inside it moves with both. */
static bool outputs_strided(const Dag *dag, const ThreadLoop *t) {
  for (int o = 0; o < dag->noutputs; o++) {
    const Value *v = &dag->values[dag->outputs[o]];
    if (v->producer < 0 || v->arg < 0) return false;
    const SourceRef *r = node_ref(dag, v->producer, -1);
    if (ref_stride(dag->spec, r, t->loop) == 0) return false;
    bool inner = t->count2 > 1 &&
                 spec_statement_in_loop(dag->spec, dag->nodes[v->producer].stmt, t->loop2);
    if (inner && ref_stride(dag->spec, r, t->loop2) == 0)
      return false;
  }
  return true;
}

/* Nothing an iteration of the loop reads comes from another iteration. */
static bool iterations_independent(const Dag *dag) {
  for (int n = 0; n < dag->nnodes; n++)
    for (int a = 0; a < dag->nodes[n].nargs; a++) {
      int p = dag->values[dag->nodes[n].args[a]].producer;
      if (p >= 0 && stmt_of_node(dag, p)->iter[0] != stmt_of_node(dag, n)->iter[0]) return false;
    }
  return true;
}

/* Why t (its loop and, where count2 > 1, its inner loop) cannot run in groups, or NULL where
 * it can. */
static const char *refusal(const Dag *dag, const ThreadLoop *t) {
  if (!outputs_strided(dag, t))
    return "an output is not an array element that the loop's variable addresses";
  int *pos = xmalloc(sizeof(int) * (size_t)(t->len + 1));
  int n = group_positions(t, pos);
  bool ok = groups_alike(dag, t, pos, n);
  free(pos);
  return ok ? NULL : "its iterations are not the first one moved by the loop's variable (the "
                     "same calls, each argument its reference's stride further)";
}

static bool qualifies(const Dag *dag, const ThreadLoop *t) { return !refusal(dag, t); }

/* The inner loop directly in loop t->loop, if one can run in groups too (t with it), else
 * false.  The first that qualifies. */
static bool inner_groups(const Dag *dag, ThreadLoop *t) {
  const Spec *sp = dag->spec;
  for (int m = 0; m < sp->nloops; m++) {
    const SpecLoop *in = &sp->loops[m];
    if (in->parent != t->loop || in->hi - in->lo < 2) continue;
    int first_call = -1; /* its first call's position in the loop's first iteration */
    for (int k = 0; k < t->len && first_call < 0; k++)
      if (spec_statement_in_loop(sp, dag->nodes[k].stmt, m)) first_call = k;
    ThreadLoop t2 = *t;
    t2.loop2 = m, t2.first2 = in->lo, t2.count2 = in->hi - in->lo;
    t2.len2 = in->calls_per_iteration, t2.pos0 = first_call;
    if (first_call >= 0 && qualifies(dag, &t2)) {
      *t = t2;
      return true;
    }
  }
  return false;
}

/* Why top-level loop l cannot run its iterations in groups (threads_loops' conditions, in its
 * order), or NULL where it can, *t then the loop alone. */
static const char *loop_refusal(const Dag *dag, int l, ThreadLoop *t) {
  const Spec *sp = dag->spec;
  const SpecLoop *loop = &sp->loops[l];
  int count = loop->hi - loop->lo, len = loop->calls_per_iteration;
  if (count < 2) return "it has fewer than 2 iterations";
  bool ok = len * count == dag->nnodes;
  for (int n = 0; n < dag->nnodes && ok; n++)
    ok = spec_statement_in_loop(sp, dag->nodes[n].stmt, l);
  if (!ok) return "calls of the spec are outside it (a kernel of groups runs all in the loop)";
  if (!iterations_independent(dag)) return "an iteration reads a value that another one made";
  *t = (ThreadLoop){.loop = l, .first = loop->lo, .count = count, .len = len, .loop2 = -1,
                    .count2 = 1};
  return refusal(dag, t);
}

int threads_loops(const Dag *dag, ThreadLoop *out) {
  const Spec *sp = dag->spec;
  if (!sp || sp->nloops == 0 || dag->nnodes == 0 || dag->groups) return 0;
  for (int l = 0; l < sp->nloops; l++) {
    ThreadLoop t;
    if (sp->loops[l].depth != 0 || loop_refusal(dag, l, &t)) continue;
    out[0] = t;
    return inner_groups(dag, &t) ? (out[1] = t, 2) : 1;
  }
  return 0;
}

void threads_note_none(const Dag *dag) {
  const Spec *sp = dag->spec;
  int top = 0;
  for (int l = 0; sp && l < sp->nloops; l++) {
    ThreadLoop t;
    const char *why = sp->loops[l].depth == 0 ? loop_refusal(dag, l, &t) : NULL;
    if (why)
      diag_note(sp->loops[l].loc, "loop %s cannot run its iterations in groups of threads: %s",
                sp->loops[l].var, why);
    top += sp->loops[l].depth == 0;
  }
  if (!top)
    diag_note((SrcLoc){.file = sp ? sp->path : NULL}, "the spec has no loop: groups of threads "
              "run a loop's iterations side by side");
}

/* ---- the DAG of one iteration -------------------------------------------------------------- */

typedef struct {
  Dag *d;
  const Dag *dag;
  const ThreadLoop *t;
  int *input_of; /* per original input value and role (its strides zero or not): value + 1 */
} Builder;

/* A reference as group (0, 0) makes it, the groups' loop variables kept ("vec3DPhi[N]",
 * "matTangent[N][M]"): dag_value_ident turns it into an identifier ("vec3DPhi_N_0"). */
static char *group_label(const Dag *dag, const ThreadLoop *t, int node, int a) {
  const Spec *sp = dag->spec;
  const SourceRef *r = node_ref(dag, node, a);
  const Statement *st = stmt_of_node(dag, node);
  const SpecVar *var = &sp->vars[r->var];
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, var->name);
  for (int d = 0; d < r->nidx; d++) {
    const SpecIndex *x = &r->idx[d];
    if (x->loop >= 0 && (x->loop == t->loop || x->loop == t->loop2)) {
      sb_printf(&sb, "[%s", sp->loops[x->loop].var);
      if (x->offset) sb_printf(&sb, "%+d", x->offset);
      sb_putc(&sb, ']');
    } else {
      sb_printf(&sb, "[%d", x->loop >= 0 ? st->iter[sp->loops[x->loop].depth] + x->offset
                                         : x->offset);
      sb_putc(&sb, ']');
    }
  }
  return sb_take(&sb);
}

/* Gives value v (of the iteration DAG) the strides and label of argument a of node `node` of
 * the spec's DAG. */
static void set_place(Builder *b, int v, int node, int a) {
  const Dag *dag = b->dag;
  Value *val = &b->d->values[v];
  int u = a < 0 ? dag->nodes[node].result : dag->nodes[node].args[a];
  val->group_stride = value_stride(dag, u, node, a, b->t->loop);
  val->group_stride2 = value_stride(dag, u, node, a, b->t->loop2);
  val->label = val->group_stride || val->group_stride2 ? group_label(dag, b->t, node, a)
                                                        : xstrdup(dag_value_label(dag, u));
}

/* The iteration DAG's value that argument a of node `node` reads, an input: one per original
 * input and role. */
static int derived_input(Builder *b, int node, int a) {
  const Dag *dag = b->dag;
  int u = dag->nodes[node].args[a];
  int s1 = value_stride(dag, u, node, a, b->t->loop);
  int s2 = value_stride(dag, u, node, a, b->t->loop2);
  int slot = u * 4 + (s1 != 0) + 2 * (s2 != 0);
  if (b->input_of[slot]) return b->input_of[slot] - 1;
  Dag *d = b->d;
  int v = d->ninputs++;
  d->values[v] = dag->values[u];
  d->values[v].consumers = NULL;
  d->values[v].nconsumers = 0;
  set_place(b, v, node, a);
  b->input_of[slot] = v + 1;
  return v;
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
  int *pos = xmalloc(sizeof(int) * (size_t)(t->len + 1));
  int n = group_positions(t, pos); /* group (0, 0)'s calls: nodes pos[0..n) of the spec's DAG */
  int *index_of = xmalloc(sizeof(int) * (size_t)(t->len + 1));
  for (int j = 0; j < n; j++) index_of[pos[j]] = j;
  Dag *d = xcalloc(1, sizeof *d);
  d->spec = dag->spec;
  d->groups = t->count * t->count2;
  d->groups2 = t->count2;
  d->group_loop = t->loop, d->group_first = t->first;
  d->group_loop2 = t->loop2, d->group_first2 = t->first2;
  d->nnodes = n;
  d->values = xcalloc((size_t)(4 * dag->nvalues + n), sizeof *d->values);
  Builder b = {d, dag, t, xcalloc((size_t)dag->nvalues * 4 + 1, sizeof(int))};
  /* Inputs first, in order of first use. */
  for (int j = 0; j < n; j++)
    for (int a = 0; a < dag->nodes[pos[j]].nargs; a++)
      if (dag->values[dag->nodes[pos[j]].args[a]].producer < 0) derived_input(&b, pos[j], a);
  d->inputs = xcalloc((size_t)d->ninputs + 1, sizeof(int));
  for (int k = 0; k < d->ninputs; k++) d->inputs[k] = k;
  d->nvalues = d->ninputs + n;
  d->nodes = xcalloc((size_t)n, sizeof *d->nodes);
  d->succ = xcalloc((size_t)n, sizeof(NodeSet));
  d->pred = xcalloc((size_t)n, sizeof(NodeSet));
  d->reach = xcalloc((size_t)n, sizeof(NodeSet));
  d->outputs = xcalloc((size_t)n + 1, sizeof(int));
  for (int j = 0; j < n; j++) {
    const DagNode *nd = &dag->nodes[pos[j]];
    int r = d->ninputs + j;
    d->values[r] = dag->values[nd->result];
    d->values[r].producer = j;
    d->values[r].consumers = NULL;
    d->values[r].nconsumers = 0;
    set_place(&b, r, pos[j], -1);
    if (d->values[r].is_output) d->outputs[d->noutputs++] = r;
    d->nodes[j] = (DagNode){.fn = nd->fn, .stmt = nd->stmt, .nargs = nd->nargs, .result = r};
    for (int a = 0; a < nd->nargs; a++) {
      int p = dag->values[nd->args[a]].producer; /* a node of group (0, 0): groups_alike */
      int v = p >= 0 ? d->ninputs + index_of[p] : derived_input(&b, pos[j], a);
      d->nodes[j].args[a] = v;
      dag_add_consumer(&d->values[v], j);
      if (p >= 0) nodeset_add(&d->succ[index_of[p]], j), nodeset_add(&d->pred[j], index_of[p]);
    }
  }
  free(b.input_of);
  free(pos);
  free(index_of);
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

int threads_in_block(const Dag *dag, const KernelPlan *p) {
  return dag ? p->threads * dag_groups(dag) : p->threads;
}

int threads_smem_copies(const Dag *dag, const KernelPlan *p) {
  return threads_one_copy(dag, p) ? 1 : dag_groups(dag);
}

bool threads_one_copy(const Dag *dag, const KernelPlan *p) {
  if (dag_groups(dag) == 1) return false;
  int nshared = 0;
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *buf = &p->buffers[b];
    if (buf->place != PLACE_SHARED) continue;
    nshared++;
    const Value *v = &dag->values[buf->value];
    int s = load_step(p, b);
    if (!buf->load || v->producer >= 0 || v->group_stride || v->group_stride2 || s < 0 ||
        !barrier_before_read(p, s, b))
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
