/*
 * roll.c — which loops of the spec a kernel keeps as loops (issue #11; docs/loops.md, "Loops
 * kept in kernels").
 *
 * The parser unrolls every loop, and a kernel plan is a list of steps (routine calls).  A run of
 * steps that holds consecutive iterations of one loop, alike, can be written back as
 *
 *     for (int q = first; q < first + count; q++) { the first iteration's steps }
 *
 * "Alike" means, step by step: the same routine of the same implementation, buffers of the same
 * size and place, the same array addressed at offsets that grow by one stride per iteration, and
 * values handed from one iteration to the next only as loop-carried variables (a register buffer
 * defined before the run that the first iteration reads, where every later iteration reads what
 * the one before made: `acc = madd33(acc, FS)`).  In the loop those are one buffer, refreshed at
 * the end of each iteration.  An array element that the plan loaded before the run into a
 * register buffer of its own, a different one per iteration, is loaded again by each iteration
 * from the kernel's staged copy (a reload).  Barriers keep their places in the body (RollRun's
 * end_barrier where iterations would overwrite each other's shared buffers).  Nested loops roll
 * one level: the outermost loop that forms a run claims its steps.
 *
 * Whether a kernel keeps its runs is the model's choice (model.c, model_keep_loops), which asks
 * roll.c what a kept run changes: one iteration's global loads in flight at a time where unrolled
 * code can have them all, and the barriers it adds.
 */
#include <stdlib.h>

#include "kasgen.h"

static const Statement *stmt_of(const Dag *dag, const KernelPlan *p, int step) {
  return &dag->spec->stmts[dag->nodes[p->order[p->steps[step].call]].stmt];
}

/* Whether statements a and b have the same values of the variables of their `depth` outermost
 * loops (with depth = loop l's depth + 1: the same iteration of l, in the same instance of it). */
static bool same_outer(const Statement *a, const Statement *b, int depth) {
  for (int d = 0; d < depth; d++)
    if (a->iter[d] != b->iter[d]) return false;
  return true;
}

/* A maximal range of steps of one iteration of loop l. */
typedef struct {
  int start, len, iter;
} Chunk;

static int chunks_of_loop(const Dag *dag, const KernelPlan *p, int l, const bool *claimed,
                          Chunk *out) {
  const Spec *sp = dag->spec;
  int depth = sp->loops[l].depth, n = 0;
  for (int s = 0; s < p->nsteps;) {
    int st = dag->nodes[p->order[p->steps[s].call]].stmt;
    if (claimed[s] || !spec_statement_in_loop(sp, st, l)) {
      s++;
      continue;
    }
    const Statement *a = &sp->stmts[st];
    int e = s + 1;
    while (e < p->nsteps && !claimed[e]) {
      int se = dag->nodes[p->order[p->steps[e].call]].stmt;
      const Statement *b = &sp->stmts[se];
      if (!spec_statement_in_loop(sp, se, l) || !same_outer(a, b, depth + 1)) break;
      e++;
    }
    out[n++] = (Chunk){s, e - s, a->iter[depth]};
    s = e;
  }
  return n;
}

/* How a step's buffer relates to the iterations: defined in this chunk (at a position), in the
 * previous one, or before the run (the buffer itself). */
typedef enum { CLASS_LOCAL, CLASS_PREV, CLASS_OUTSIDE } BufferClass;

typedef struct {
  BufferClass kind;
  int at; /* LOCAL, PREV: step position in the iteration; OUTSIDE: the buffer */
} Role;

static Role role_of(const KernelPlan *p, int b, int prev, int cur, int len) {
  int f = p->buffers[b].first_use;
  if (f >= cur && f < cur + len) return (Role){CLASS_LOCAL, f - cur};
  if (prev >= 0 && f >= prev && f < prev + len) return (Role){CLASS_PREV, f - prev};
  return (Role){CLASS_OUTSIDE, b};
}

/* Per position of the body and buffer slot (SLOTS per position: the routine's buffers, then the
 * array a load or save moves): how the slot's array element moves from one iteration to the
 * next (the offset's growth), once the first pair of iterations set it. */
#define SLOTS (KAS_MAX_ARGS + 2)
enum { SLOT_UNSET, SLOT_STRIDED, SLOT_SAME };

typedef struct {
  const Dag *dag;
  const Target *target;
  const KernelPlan *p;
  Staging staging; /* computed when a reload is first considered */
  bool staged;
} Finder;

typedef struct {
  int *stride;
  unsigned char *mode;
  RollRun run;
} RunBuild;

static bool add_carry(RunBuild *rb, int in, int out) {
  for (int c = 0; c < rb->run.ncarry; c++)
    if (rb->run.carry_out[c] == out || rb->run.carry_in[c] == in)
      return rb->run.carry_out[c] == out && rb->run.carry_in[c] == in;
  rb->run.carry_in[rb->run.ncarry] = in;
  rb->run.carry_out[rb->run.ncarry++] = out;
  return true;
}

/* Whether steps sa and sb (the same position of chunks a and b = a + 1) do the same thing. */
static bool same_routine(const Dag *dag, const KernelPlan *p, int sa, int sb) {
  const Step *x = &p->steps[sa], *y = &p->steps[sb];
  return x->kind == y->kind && x->impl == y->impl && x->io == y->io && x->nbuf == y->nbuf &&
         x->recompute_coords == y->recompute_coords &&
         stmt_of(dag, p, sa)->source == stmt_of(dag, p, sb)->source;
}

/* The array element a load or save moves, as (API argument, offset in its record); false for
 * an intermediate (its own workspace array, which no stride reaches). */
static bool array_place(const Dag *dag, int value, int *arg, int *offset) {
  const Value *v = &dag->values[value];
  if (v->arg < 0) return false;
  *arg = v->producer < 0 ? v->arg : dag->nin_args + v->arg;
  *offset = v->arg_offset;
  return true;
}

/* Whether values va and vb (slot `slot` of two consecutive iterations) are elements of one array
 * at offsets that grow by the slot's stride. */
static bool strided(const Dag *dag, int va, int vb, int slot, RunBuild *rb) {
  int arg_a, arg_b, off_a, off_b;
  if (!array_place(dag, va, &arg_a, &off_a) || !array_place(dag, vb, &arg_b, &off_b) ||
      arg_a != arg_b || rb->mode[slot] == SLOT_SAME)
    return false;
  if (rb->mode[slot] == SLOT_UNSET) {
    rb->mode[slot] = SLOT_STRIDED;
    rb->stride[slot] = off_b - off_a;
  }
  return rb->stride[slot] == off_b - off_a;
}

static const Staging *staging(Finder *f) {
  if (!f->staged) f->staging = staging_of(f->dag, f->target, f->p);
  f->staged = true;
  return &f->staging;
}

/* Buffers x and y, defined before the run and read at the same place of two iterations, can be
 * one loop-local buffer loaded again in every iteration: elements of one array at a stride, each
 * loaded into registers by the same routine from the kernel's staged copy of the array (a load
 * from shared memory, which costs no global traffic). */
static bool reloadable(Finder *f, int x, int y, int slot, RunBuild *rb) {
  const KernelPlan *p = f->p;
  const Buffer *a = &p->buffers[x], *b = &p->buffers[y];
  return a->place == PLACE_REGISTER && a->load && a->load == b->load &&
         p->impl[a->load_call] == p->impl[b->load_call] &&
         p->steps[a->first_use].recompute_coords == p->steps[b->first_use].recompute_coords &&
         strided(f->dag, a->value, b->value, slot, rb) &&
         staging_find(staging(f), f->dag, a->value) != NULL;
}

/* Chunk b (starting at cb) is chunk a (starting at ca) one iteration on.  first: a is the run's
 * first chunk, whose carried-in values are defined before the run. */
static bool alike(Finder *f, int ca, int cb, int len, bool first, RunBuild *rb) {
  const Dag *dag = f->dag;
  const KernelPlan *p = f->p;
  for (int i = 0; i < len; i++) {
    int sa = ca + i, sb = cb + i;
    if (!same_routine(dag, p, sa, sb)) return false;
    /* The loop runs the later iterations' barriers; one only the first iteration has at its
     * start goes before the loop. */
    if (p->steps[sa].barrier_before != p->steps[sb].barrier_before && !(first && i == 0))
      return false;
    if (p->steps[sa].kind != ROUTINE_COMPUTE &&
        !strided(dag, p->buffers[p->steps[sa].buf[0]].value,
                 p->buffers[p->steps[sb].buf[0]].value, i * SLOTS + SLOTS - 1, rb))
      return false;
    for (int k = 0; k < p->steps[sa].nbuf; k++) {
      int ba = p->steps[sa].buf[k], bb = p->steps[sb].buf[k];
      const Buffer *x = &p->buffers[ba], *y = &p->buffers[bb];
      if (x->place != y->place || x->reg_floats != y->reg_floats || x->bytes != y->bytes)
        return false;
      Role ra = role_of(p, ba, first ? -1 : ca - len, ca, len);
      Role rbb = role_of(p, bb, ca, cb, len);
      if (rbb.kind == CLASS_PREV && first) { /* carried: copied, so in registers */
        if (ra.kind != CLASS_OUTSIDE || x->place != PLACE_REGISTER || !add_carry(rb, ba, bb))
          return false;
      } else if (ra.kind == CLASS_OUTSIDE && rbb.kind == CLASS_OUTSIDE) {
        int slot = i * SLOTS + k; /* the same buffer in every iteration, or reloaded in each */
        if (ra.at == rbb.at && rb->mode[slot] == SLOT_STRIDED) return false;
        if (ra.at == rbb.at) rb->mode[slot] = SLOT_SAME;
        if (ra.at != rbb.at && !reloadable(f, ba, bb, slot, rb)) return false;
      } else if (ra.kind != rbb.kind || ra.at != rbb.at) {
        return false;
      }
    }
  }
  return true;
}

/* Nothing an iteration defines outlives the next iteration (the last one's values live on in
 * the loop's buffers, those in registers: the first iteration's shared bytes may hold other
 * buffers after the run), and no carried-in buffer is read after the first iteration. */
static bool contained(const KernelPlan *p, const RollRun *r) {
  int end = r->from + r->count * r->body, last = end - r->body;
  for (int b = 0; b < p->nbuffers; b++) {
    int f = p->buffers[b].first_use;
    if (f < r->from || f >= end) continue;
    if (p->buffers[b].place == PLACE_SHARED && p->buffers[b].last_use >= end) return false;
    if (f >= last) continue;
    int chunk = (f - r->from) / r->body;
    if (p->buffers[b].last_use >= r->from + (chunk + 2) * r->body) return false;
  }
  for (int c = 0; c < r->ncarry; c++)
    if (p->buffers[r->carry_in[c]].last_use >= r->from + r->body) return false;
  return true;
}

/* Whether an iteration of run r writes shared memory (a buffer of its own there): the next
 * iteration writes the same bytes, so without a barrier at the start of the body the loop ends
 * each iteration with one.  Staged arrays are not at issue: each iteration moves other slices. */
static bool writes_shared(const KernelPlan *p, const RollRun *r) {
  for (int s = r->from; s < r->from + r->body; s++)
    for (int k = 0; k < p->steps[s].nbuf; k++) {
      const Buffer *b = &p->buffers[p->steps[s].buf[k]];
      if (b->place == PLACE_SHARED && b->first_use == s) return true;
    }
  return false;
}

static void run_build_free(RunBuild *rb) {
  free(rb->stride);
  free(rb->mode);
  free(rb->run.carry_in);
  free(rb->run.carry_out);
  free(rb->run.reloads);
}

/* The run's reloads, from the slots whose buffers differ from iteration to iteration; slots
 * reading the same element share the first one's load. */
static void list_reloads(const KernelPlan *p, RunBuild *rb) {
  RollRun *r = &rb->run;
  r->reloads = xcalloc((size_t)r->body * SLOTS + 1, sizeof *r->reloads);
  for (int i = 0; i < r->body; i++)
    for (int k = 0; k < p->steps[r->from + i].nbuf; k++) {
      int slot = i * SLOTS + k;
      if (rb->mode[slot] != SLOT_STRIDED) continue;
      RollReload rl = {i, k, p->steps[r->from + i].buf[k], rb->stride[slot], r->nreload};
      for (int j = 0; j < r->nreload; j++)
        if (r->reloads[j].buffer == rl.buffer && r->reloads[j].stride == rl.stride) {
          rl.shares = r->reloads[j].shares;
          break;
        }
      r->reloads[r->nreload++] = rl;
    }
}

/* The longest run from chunk i of the adjacent chunks ch[i..m], as many chunks as it holds
 * (0 when chunk i does not start one). */
static int run_from(Finder *f, int l, const Chunk *ch, int i, int m, RollRun *out) {
  const KernelPlan *p = f->p;
  int len = ch[i].len, best = 0;
  RunBuild rb = {xcalloc((size_t)len * SLOTS, sizeof(int)),
                 xcalloc((size_t)len * SLOTS, sizeof(unsigned char)),
                 {.loop = l, .first = ch[i].iter, .from = ch[i].start, .body = len,
                  .carry_in = xcalloc((size_t)len * KAS_MAX_ARGS + 1, sizeof(int)),
                  .carry_out = xcalloc((size_t)len * KAS_MAX_ARGS + 1, sizeof(int))}};
  int j = i;
  while (j < m && ch[j + 1].len == len && alike(f, ch[j].start, ch[j + 1].start, len, j == i, &rb))
    j++;
  /* The longest prefix whose values stay inside (a shorter run may pass where a longer fails). */
  for (int count = j - i + 1; count >= 2 && !best; count--) {
    rb.run.count = count;
    if (contained(p, &rb.run)) best = count;
  }
  if (best) {
    list_reloads(p, &rb);
    *out = rb.run;
    out->end_barrier = writes_shared(p, out) && !p->steps[out->from + out->body].barrier_before;
    free(rb.stride);
    free(rb.mode);
    return best;
  }
  run_build_free(&rb);
  return 0;
}

static bool adjacent(const Chunk *a, const Chunk *b, const Dag *dag, const KernelPlan *p,
                     int depth) {
  return b->start == a->start + a->len && b->iter == a->iter + 1 &&
         same_outer(stmt_of(dag, p, a->start), stmt_of(dag, p, b->start), depth);
}

int roll_find(const Dag *dag, const Target *t, const KernelPlan *p, RollRun **runs_out) {
  const Spec *sp = dag->spec;
  *runs_out = NULL;
  /* A kernel of threads.c's groups runs one iteration per group: it keeps no loop (yet). */
  if (!sp || sp->nloops == 0 || p->nsteps < 2 || dag_groups(dag) > 1) return 0;
  Finder f = {dag, t, p, {0}, false};
  bool *claimed = xcalloc((size_t)p->nsteps, sizeof(bool));
  Chunk *ch = xmalloc(sizeof *ch * (size_t)p->nsteps);
  RollRun *runs = NULL;
  int nruns = 0;
  for (int l = 0; l < sp->nloops && nruns < ROLL_MAX_RUNS; l++) {
    int n = chunks_of_loop(dag, p, l, claimed, ch);

    for (int i = 0; i < n;) {
      int m = i; /* ch[i..m] adjacent */
      while (m + 1 < n && adjacent(&ch[m], &ch[m + 1], dag, p, sp->loops[l].depth)) m++;
      RollRun r;
      int got = m > i ? run_from(&f, l, ch, i, m, &r) : 0;
      if (!got) {
        i++;
        continue;
      }
      if (nruns == ROLL_MAX_RUNS) { /* the rest stays unrolled */
        free(r.carry_in), free(r.carry_out), free(r.reloads);
        break;
      }
      runs = xrealloc(runs, sizeof *runs * (size_t)(nruns + 1));
      runs[nruns++] = r;
      for (int s = r.from; s < r.from + r.count * r.body; s++) claimed[s] = true;
      i += got;
    }
  }
  free(claimed);
  free(ch);
  if (f.staged) staging_free(&f.staging);
  /* In step order, for the emitter. */
  for (int a = 1; a < nruns; a++)
    for (int b = a; b > 0 && runs[b - 1].from > runs[b].from; b--) {
      RollRun t = runs[b];
      runs[b] = runs[b - 1];
      runs[b - 1] = t;
    }
  *runs_out = runs;
  return nruns;
}

int roll_kept(const Dag *dag, const Target *t, const KernelPlan *p, RollRun **runs_out) {
  *runs_out = NULL;
  if (!p->keep_runs) return 0;
  RollRun *runs;
  int n = roll_find(dag, t, p, &runs), kept = 0;
  for (int r = 0; r < n; r++) {
    if (p->keep_runs >> r & 1)
      runs[kept++] = runs[r];
    else
      free(runs[r].carry_in), free(runs[r].carry_out), free(runs[r].reloads);
  }
  *runs_out = runs;
  return kept;
}

void roll_runs_free(RollRun *runs, int n) {
  for (int i = 0; i < n; i++)
    free(runs[i].carry_in), free(runs[i].carry_out), free(runs[i].reloads);
  free(runs);
}

int *roll_aliases(const KernelPlan *p, const RollRun *runs, int nruns) {
  int *alias = xmalloc(sizeof *alias * (size_t)(p->nbuffers ? p->nbuffers : 1));
  for (int b = 0; b < p->nbuffers; b++) alias[b] = b;
  for (int r = 0; r < nruns; r++) {
    const RollRun *run = &runs[r];
    int end = run->from + run->count * run->body;
    for (int s = run->from + run->body; s < end; s++) {
      int twin = s - (s - run->from) / run->body * run->body; /* the first iteration's step */
      for (int k = 0; k < p->steps[s].nbuf; k++) {
        int b = p->steps[s].buf[k];
        if (p->buffers[b].first_use == s) alias[b] = p->steps[twin].buf[k];
      }
    }
  }
  return alias;
}

RollCosts roll_costs(const Dag *dag, const Target *t, const KernelPlan *p, const Staging *staging,
                     int real_bytes) {
  RollRun *runs;
  int n = roll_kept(dag, t, p, &runs);
  RollCosts c = {0, 0};
  for (int r = 0; r < n; r++) {
    const RollRun *run = &runs[r];
    c.barriers += run->end_barrier ? run->count : 0;
    /* the later iterations' first barrier, which the first did not have */
    c.barriers += !p->steps[run->from].barrier_before &&
                  p->steps[run->from + run->body].barrier_before;
    /* one iteration's global loads at a time: those of the later ones are not in flight with
     * the rest */
    for (int s = run->from + run->body; s < run->from + run->count * run->body; s++) {
      const Step *st = &p->steps[s];
      if (st->kind != ROUTINE_LOAD) continue;
      const Buffer *b = &p->buffers[st->buf[0]];
      if (staging_find(staging, dag, b->value)) continue; /* copied before the loop */
      c.loads_apart += (double)real_bytes * dag_value_floats(dag, b->value) * p->e /
                       impl_threads(p->impl[b->load_call], p->e);
    }
  }
  roll_runs_free(runs, n);
  return c;
}

/* A kept run's place: its loop's line, which tells apart sibling loops of one variable, and the
 * enclosing loops' values, which tell apart the runs of one inner loop ("line 12, q = 1"). */
static void put_run_place(StrBuf *sb, const Dag *dag, const KernelPlan *p, const RollRun *run) {
  const Spec *sp = dag->spec;
  const SpecLoop *l = &sp->loops[run->loop];
  const Statement *first = stmt_of(dag, p, run->from);
  sb_printf(sb, " (line %d", l->loc.line);
  for (int outer = l->parent; outer >= 0; outer = sp->loops[outer].parent)
    sb_printf(sb, ", %s = %d", sp->loops[outer].var, first->iter[sp->loops[outer].depth]);
  sb_puts(sb, ")");
}

char *roll_summary(const Dag *dag, const Target *t, const KernelPlan *p) {
  RollRun *runs;
  int n = roll_kept(dag, t, p, &runs);
  StrBuf sb;
  sb_init(&sb);
  for (int r = 0; r < n; r++) { /* iterations first..last, both kept */
    const SpecLoop *l = &dag->spec->loops[runs[r].loop];
    sb_printf(&sb, "%s%s = %d..%d", r ? ", " : "loops kept: ", l->var, runs[r].first,
              runs[r].first + runs[r].count - 1);
    put_run_place(&sb, dag, p, &runs[r]);
  }
  roll_runs_free(runs, n);
  if (n == 0) sb_free(&sb);
  return n ? sb_take(&sb) : NULL;
}
