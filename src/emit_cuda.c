/*
 * emit_cuda.c — turns a candidate's kernel plans into CUDA source (docs/design.md §7, seed 004
 * §3.7 and §4.4):
 *
 *   kernels.cu        the instantiated routines, one __global__ kernel per plan and the launch
 *                     sequence kas_<prefix>_launch.  emit_cuda_kernels gives this text for any
 *                     symbol prefix, as the whole file (candNN/kernels.cu) or as definitions for
 *                     a file that has its own banner and includes; emit_cuda_embed_kernels as
 *                     the latter with launches that return their own error (the embed,
 *                     emit_embed.c: below);
 *   kernels_host.cpp  the same kernels as barrier-delimited phases that a CPU runs thread by
 *                     thread in ascending or descending order (kas_<prefix>_launch_host), so that
 *                     a missing barrier shows up as an order-dependent result.
 *
 * The kernel body is generated once as a list of "step groups" (consecutive routine calls that
 * share thread coordinates and have no barrier between them); the GPU form emits barriers as
 * __syncthreads() and the host form as phase boundaries, so both forms run the same calls.
 * Everything comes from the plan, which names the routine and the buffers of every step.
 * Kernels are numbered from 1, as everywhere kasgen shows them; launch functions name the spec's
 * variables; lines stay within 100 columns.  docs/generated.md is the contract for file names
 * and signatures.
 *
 * A launch function returns 0 or a cudaError_t.  candNN/kernels.cu launches with <<<...>>> and
 * takes each launch's error with cudaGetLastError(), which also takes an error that an earlier
 * CUDA call of the thread left pending: the harness leaves none.  The embed runs in a FEM code
 * that may: there each launch is cudaLaunchKernelEx, which returns that launch's own error and
 * leaves the thread's pending one alone.  (The kernels and the rest are the same text; the code
 * digest is of the first form, as results files have recorded it.)
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>

#define MAX_GRID_X 2147483647L /* gridDim.x limit of every GPU since compute capability 3.0 */
#define MAX_LINE 100

/* ------------------------------------------------------------------------------------------ */
/* Text                                                                                        */
/* ------------------------------------------------------------------------------------------ */

static void indent(StrBuf *sb, int level) {
  for (int i = 0; i < level; i++) sb_puts(sb, "  ");
}

/* The column the next character of sb goes to. */
static size_t column(const StrBuf *sb) {
  size_t k = sb->len;
  while (k > 0 && sb->data[k - 1] != '\n') k--;
  return sb->len - k;
}

/* Appends text word by word to a comment, made safe for it (no comment end, no newline), and
 * breaks before a word that would pass MAX_LINE - 3 columns (room for the comment's end); a
 * broken line continues with cont. */
static void put_words(StrBuf *sb, const char *text, const char *cont) {
  for (const char *s = text ? text : ""; *s;) {
    while (*s == ' ' || *s == '\n') s++;
    size_t len = 0;
    while (s[len] && s[len] != ' ' && s[len] != '\n') len++;
    if (!len) break;
    bool first = sb->len && sb->data[sb->len - 1] == ' ';
    if (!first && column(sb) + 1 + len > MAX_LINE - 3) sb_printf(sb, "\n%s", cont);
    else if (!first) sb_putc(sb, ' ');
    for (size_t k = 0; k < len; k++) {
      sb_putc(sb, s[k]);
      if (s[k] == '*' && k + 1 < len && s[k + 1] == '/') sb_putc(sb, ' ');
    }
    s += len;
  }
}

/* A comment of its own at the given indentation, wrapped. */
static void put_comment(StrBuf *sb, int level, const char *text) {
  indent(sb, level);
  sb_puts(sb, "/* ");
  char cont[64];
  snprintf(cont, sizeof cont, "%*s * ", 2 * level, "");
  put_words(sb, text, cont);
  sb_puts(sb, " */\n");
}

void emit_list(StrBuf *sb, int level, const char *open, char *const *items, int n,
               const char *close) {
  indent(sb, level);
  sb_puts(sb, open);
  size_t under = column(sb), deep = (size_t)(2 * level + 4), longest = 0;
  for (int i = 0; i < n; i++)
    if (strlen(items[i]) > longest) longest = strlen(items[i]);
  /* Under the open parenthesis while the longest item fits there, else a deeper indent. */
  if (under > 60 || under + longest + 2 > MAX_LINE) under = deep;
  size_t close_len = strcspn(close, "\n");
  for (int i = 0; i < n; i++) {
    size_t need = (i ? 2 : 0) + strlen(items[i]) + (i + 1 < n ? 1 : close_len);
    if (column(sb) + need > MAX_LINE && column(sb) > under)
      sb_printf(sb, "%s\n%*s", i ? "," : "", (int)under, "");
    else if (i)
      sb_puts(sb, ", ");
    sb_puts(sb, items[i]);
  }
  sb_puts(sb, close);
}

/* head(args...)tail, wrapped as emit_list does. */
static void put_call(StrBuf *sb, int level, const char *head, char *const *args, int nargs,
                     const char *tail) {
  char *open = xasprintf("%s(", head), *close = xasprintf(")%s", tail);
  emit_list(sb, level, open, args, nargs, close);
  free(open);
  free(close);
}

static void free_strings(char **v, int n) {
  for (int i = 0; i < n; i++) free(v[i]);
  free(v);
}

/* ------------------------------------------------------------------------------------------ */
/* Names                                                                                       */
/* ------------------------------------------------------------------------------------------ */

int emit_input_slot(const Dag *dag, int value) {
  const Value *v = &dag->values[value];
  return v->producer < 0 ? v->arg : -1;
}

int emit_output_slot(const Dag *dag, int value) {
  const Value *v = &dag->values[value];
  return v->is_output ? v->arg : -1;
}

/* Whether generated code may not give a spec variable's name to a variable of its own, as it
 * is: a C, C++ or CUDA keyword, type or built-in variable, a name of the standard headers the
 * generated code includes that a macro or a type may hold, or a name the launch and API
 * functions use.  Names with a prefix of the generated code's own (reserved_prefix) are not
 * here: appending to them never makes them free. */
static bool reserved_word(const char *name) {
  static const char *const words[] = {
      "n", "in", "out", "workspace", "stream", "err", "ws", "order", "start", "m", "ld", "cin",
      "cout", "auto", "break", "case", "char", "const", "continue", "default", "do", "double",
      "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
      "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
      "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "class",
      "delete", "new", "namespace", "template", "this", "private", "public", "protected",
      "try", "catch", "throw", "virtual", "operator", "friend", "using", "true", "false",
      "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "compl", "concept",
      "consteval", "constexpr", "constinit", "const_cast", "decltype", "dynamic_cast",
      "explicit", "export", "mutable", "noexcept", "not", "not_eq", "nullptr", "or", "or_eq",
      "reinterpret_cast", "requires", "static_assert", "static_cast", "thread_local",
      "typeid", "typename", "wchar_t", "char8_t", "char16_t", "char32_t", "xor", "xor_eq",
      "std", "main", "dim3", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize",
      "size_t", "ptrdiff_t", "NULL", "errno", "assert", "half", "stdin", "stdout", "stderr",
      "FILE", "EOF", "INFINITY", "NAN", "HUGE_VAL", "min", "max", "abs", "exit", "free",
      "malloc", "calloc", "memcpy", "memset", "printf", "fprintf", "sqrt", "fabs", "offsetof",
      NULL};
  for (int i = 0; words[i]; i++)
    if (!strcmp(name, words[i])) return true;
  /* stdint.h's types and limits, CUDA's vector types (float3, uint4, ...) and runtime API
   * (cudaStream_t, cudaMemcpy) */
  static const char *const families[] = {"int", "uint", "INT", "UINT", "cuda", "CUDA", "char",
                                         "uchar", "short", "ushort", "long", "ulong", "float",
                                         "double", "longlong", "ulonglong", NULL};
  for (int i = 0; families[i]; i++) {
    size_t len = strlen(families[i]);
    const char *rest = name + len;
    if (strncmp(name, families[i], len)) continue;
    if (!strcmp(families[i], "cuda") || !strcmp(families[i], "CUDA")) return true;
    if (rest[0] >= '1' && rest[0] <= '9' && (!rest[1] || !strcmp(rest + 1, "_t"))) return true;
    if (!strncmp(rest, "ptr_t", 5) || !strncmp(rest, "max_t", 5) || !strcmp(rest, "_MAX") ||
        !strcmp(rest, "_MIN"))
      return true;
    if (rest[0] >= '0' && rest[0] <= '9' && strchr(rest, '_')) return true; /* int32_t, INT8_C */
  }
  return false;
}

/* Whether the name starts as names of the generated code's own do (kas_..., w_<workspace>,
 * blocks<k>), or as C and C++ reserve for the implementation: "_" first, "__" anywhere. */
static bool reserved_prefix(const char *name) {
  static const char *const prefixes[] = {"kas_", "KAS_", "w_", "blocks", "_", NULL};
  for (int i = 0; prefixes[i]; i++)
    if (!strncmp(name, prefixes[i], strlen(prefixes[i]))) return true;
  return strstr(name, "__") != NULL;
}

static bool reserved_name(const char *name) {
  return reserved_word(name) || reserved_prefix(name);
}

static bool name_taken(char *const *names, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], name)) return true;
  return false;
}

/* The variable's own name where it is free.  Else, reserved by a prefix: "v_" and its letters,
 * digits and single underscores (w_q -> v_w_q, __F -> v_F); then a reserved word gets "_"
 * appended (n -> n_), and a name already taken a number (F_2).  Neither step can make a name
 * reserved again, so this ends (it used to append "_" to w_q for ever). */
static char *io_name(const char *var, char *const *taken, int ntaken) {
  char *base;
  if (reserved_prefix(var)) {
    base = xcalloc(strlen(var) + 3, 1);
    char *q = stpcpy(base, "v_");
    for (const char *p = var; *p; p++)
      if (*p != '_' || (q[-1] != '_' && p[1])) *q++ = *p; /* no "__", no trailing "_" added */
  } else {
    base = xstrdup(var);
  }
  if (reserved_word(base)) {
    char *longer = xasprintf("%s_", base);
    free(base);
    base = longer;
  }
  char *name = xstrdup(base);
  for (int k = 2; name_taken(taken, ntaken, name); k++) {
    free(name);
    name = xasprintf(base[strlen(base) - 1] == '_' ? "%s%d" : "%s_%d", base, k);
  }
  free(base);
  return name;
}

IoNames emit_io_names(const Dag *dag) {
  int n = dag->nin_args + dag->nout_args;
  char **all = xcalloc((size_t)n + 1, sizeof *all);
  for (int k = 0; k < n; k++) all[k] = io_name(dag_arg_name(dag, dag_api_arg(dag, k)), all, k);
  IoNames io = {xcalloc((size_t)dag->nin_args + 1, sizeof(char *)),
                xcalloc((size_t)dag->nout_args + 1, sizeof(char *)), dag->nin_args,
                dag->nout_args};
  memcpy(io.input, all, sizeof *all * (size_t)dag->nin_args);
  memcpy(io.output, all + dag->nin_args, sizeof *all * (size_t)dag->nout_args);
  free(all);
  return io;
}

void emit_io_names_free(IoNames *io) {
  free_strings(io->input, io->ninputs);
  free_strings(io->output, io->noutputs);
  *io = (IoNames){0};
}

/* ------------------------------------------------------------------------------------------ */
/* Routine instantiation: each (routine, E, placement) once per candidate                      */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
  char **names; /* instantiated names, for deduplication */
  int n, cap;
  StrBuf text; /* the instantiated definitions, each after its comment */
} RoutineSet;

/* The routine a step calls: its instantiated name, the coordinates it takes and whether it
 * takes the leading dimension (a component-major array). */
typedef struct {
  char *name;
  unsigned coords; /* COORD_* */
  bool takes_ld;
} StepRoutine;

static bool routine_set_has(const RoutineSet *rs, const char *name) {
  for (int i = 0; i < rs->n; i++)
    if (!strcmp(rs->names[i], name)) return true;
  return false;
}

static void routine_set_free(RoutineSet *rs) {
  free_strings(rs->names, rs->n);
  sb_free(&rs->text);
}

static const char *kind_name(RoutineKind k) {
  return k == ROUTINE_LOAD ? "load" : k == ROUTINE_SAVE ? "save" : "compute";
}

static const char *place_name(Placement p) {
  return p == PLACE_REGISTER ? "registers" : "shared";
}

/* "mvmul33_1, load 1 (owner); its buffer in registers" or
 * "ttmul411_1, compute; in0 shared, in1 registers, out registers". */
static void routine_comment(StrBuf *sb, const Step *s, const Placement *pl) {
  StrBuf text;
  sb_init(&text);
  sb_printf(&text, "%s, %s", s->impl->name, kind_name(s->kind));
  if (s->io) {
    char *variant = c_safe_text(s->io->variant ? s->io->variant : ""); /* INI free text */
    sb_printf(&text, " %d (%s); its buffer in %s", s->io->index, variant, place_name(pl[0]));
    free(variant);
  }
  for (int k = 0; !s->io && k < s->nbuf; k++) {
    sb_puts(&text, k ? ", " : "; ");
    if (k + 1 == s->nbuf) sb_printf(&text, "out %s", place_name(pl[k]));
    else sb_printf(&text, "in%d %s", k, place_name(pl[k]));
  }
  put_comment(sb, 0, text.data);
  sb_free(&text);
}

/* Whether step s is a load that a staged copy makes in its stead (staging.c's fill_one_copy). */
static bool filled_by_copy(const Staging *st, const Step *s) {
  return s->kind == ROUTINE_LOAD && staging_fills(st, s->buf[0]);
}

/* Instantiates the routine of step s (if not yet done) and says which it is in *out: at the
 * plan's precision and vector width (1 for an unstaged chunk of a slice: binding_io_width), its
 * array addressed as the target binds it. */
static bool instantiate_step(RoutineSet *rs, const Dag *dag, const Target *t, const KernelPlan *p,
                             const Staging *staging, const Step *s, StepRoutine *out) {
  RoutineRequest rq = {.kind = s->kind, .io_index = s->io ? s->io->index : 0, .e = p->e,
                       .shape = impl_shape(s->impl, p->e), .precision = p->precision};
  rq.shape.w = p->w;
  for (int k = 0; k < s->nbuf; k++) rq.place[k] = p->buffers[s->buf[k]].place;
  if (s->io) {
    int value = p->buffers[s->buf[0]].value;
    rq.global = target_binding(t, dag, value);
    rq.shape.w = staging_io_width(staging, dag, t, s->io, value, p->w);
    rq.hint_rows = p->hint_rows; /* instantiate.c applies it to component-major loads */
  }
  RoutineInstance ri;
  if (!instantiate_routine(s->impl, &rq, &ri)) return false;
  if (!routine_set_has(rs, ri.name)) {
    if (rs->n == rs->cap) {
      rs->cap = rs->cap ? 2 * rs->cap : 16;
      rs->names = xrealloc(rs->names, (size_t)rs->cap * sizeof *rs->names);
    }
    rs->names[rs->n++] = xstrdup(ri.name);
    routine_comment(&rs->text, s, rq.place);
    sb_puts(&rs->text, ri.text);
    sb_puts(&rs->text, ri.text[0] && ri.text[strlen(ri.text) - 1] == '\n' ? "\n" : "\n\n");
  }
  *out = (StepRoutine){xstrdup(ri.name), ri.coords, ri.takes_ld};
  routine_instance_free(&ri);
  return true;
}

/* ------------------------------------------------------------------------------------------ */
/* The emitter of one candidate                                                                */
/* ------------------------------------------------------------------------------------------ */

/* The runs of a kernel written as loops, and per buffer the buffer whose name it takes there
 * (NULL when it keeps none). */
typedef struct {
  RollRun *runs;
  int n;
  int *alias;
} KeptLoops;

/* One plan of a candidate.  A candidate whose plan moves the caller's arrays 16 bytes at a time
 * has two (docs/generated.md): that plan (entry "cand01_aligned", kernels kas_cand01_k1, ...)
 * and the same partition planned for arrays of any alignment (prefix and entry "cand01_any"),
 * behind one launch that picks by the pointers it is given; the two share one routine set. */
typedef struct {
  const Dag *dag;
  const Candidate *cand;
  const Target *target; /* the plans' precision and the layout of every array */
  const char *name;   /* the candidate: "cand01", "unfused" (comments, file names) */
  const char *prefix; /* of its kernels: kas_<prefix>_k1, ... */
  const char *entry;  /* of its launch and workspace functions: kas_<entry>_launch, ... */
  const char *linkage; /* of its entry points: "extern \"C\" ", "" when embedded, "static " for
                          the two plans behind a choosing launch */
  const char *real;    /* "float" or "double" */
  bool launch_ex;      /* launches by cudaLaunchKernelEx, each returning its own error (embed) */
  IoNames io;          /* the launch functions' names of the spec's inputs and outputs */
  int *ws_values;      /* intermediates crossing kernels, in workspace order */
  int nws;
  StepRoutine **routines_of; /* [kernel][step]: the instantiated routine the step calls */
  RoutineSet *routines;      /* the candidate's: both plans' routines, each once */
  Staging *staging;          /* [kernel]: arrays moved whole through shared memory */
  KeptLoops *loops;          /* [kernel]: the loops it keeps (roll.c) */
} Emitter;

/* Which global array a value lives in: its API argument (dag_api_arg numbering: an array
 * element lives in its whole array's), or for an intermediate its own workspace array. */
static int global_key(const Dag *dag, int value) {
  const Value *v = &dag->values[value];
  if (v->arg < 0) return dag->nin_args + dag->nout_args + value;
  return v->producer < 0 ? v->arg : dag->nin_args + v->arg;
}

/* The pointer to a value's global array inside a launch function: the caller's array (a whole
 * array for an array element) or the workspace's. */
static char *global_array(const Emitter *em, int value) {
  int key = global_key(em->dag, value);
  if (key < em->io.ninputs) return xstrdup(em->io.input[key]);
  if (key < em->io.ninputs + em->io.noutputs) return xstrdup(em->io.output[key - em->io.ninputs]);
  char *id = dag_value_ident(em->dag, value);
  char *s = xasprintf("w_%s", id);
  free(id);
  return s;
}

static bool is_workspace_value(const Emitter *em, int value) {
  return emit_input_slot(em->dag, value) < 0 && emit_output_slot(em->dag, value) < 0;
}

/* Values saved by one kernel for a later one that are neither inputs nor outputs of the spec,
 * in value order. */
static void collect_workspace(Emitter *em) {
  bool *saved = xcalloc((size_t)em->dag->nvalues, sizeof *saved);
  for (int k = 0; k < em->cand->nkernels; k++) {
    const KernelPlan *p = em->cand->kernels[k];
    for (int b = 0; b < p->nbuffers; b++) saved[p->buffers[b].value] |= p->buffers[b].save != NULL;
  }
  em->ws_values = xcalloc((size_t)em->dag->nvalues, sizeof(int));
  for (int v = 0; v < em->dag->nvalues; v++)
    if (saved[v] && is_workspace_value(em, v)) em->ws_values[em->nws++] = v;
  free(saved);
}

/* The global arrays of a kernel's parameters, one per array, in parameter order (the loaded
 * ones first), each as the first of its buffers that is loaded or saved.  Returns the count. */
static int kernel_params(const Dag *dag, const KernelPlan *p, int *params) {
  int n = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int b = 0; b < p->nbuffers; b++) {
      const Buffer *buf = &p->buffers[b];
      if (pass == 0 ? buf->load == NULL : !buf->save || buf->load) continue;
      int key = global_key(dag, buf->value), k = 0;
      while (k < n && global_key(dag, p->buffers[params[k]].value) != key) k++;
      if (k == n) params[n++] = b;
    }
  return n;
}

/* Whether the kernel only reads the global array of buffer b's value (a const parameter). */
static bool param_read_only(const Dag *dag, const KernelPlan *p, int b) {
  int key = global_key(dag, p->buffers[b].value);
  for (int i = 0; i < p->nbuffers; i++)
    if (p->buffers[i].save && global_key(dag, p->buffers[i].value) == key) return false;
  return true;
}

static bool prepare_routines(Emitter *em) {
  const Candidate *c = em->cand;
  em->routines_of = xcalloc((size_t)c->nkernels, sizeof *em->routines_of);
  em->staging = xcalloc((size_t)c->nkernels, sizeof *em->staging);
  em->loops = xcalloc((size_t)c->nkernels, sizeof *em->loops);
  for (int k = 0; k < c->nkernels; k++) {
    const KernelPlan *p = c->kernels[k];
    em->staging[k] = staging_of(em->dag, em->target, p);
    KeptLoops *kl = &em->loops[k];
    kl->n = roll_kept(em->dag, em->target, p, &kl->runs);
    kl->alias = kl->n ? roll_aliases(p, kl->runs, kl->n) : NULL;
    em->routines_of[k] = xcalloc((size_t)p->nsteps, sizeof(StepRoutine));
    for (int s = 0; s < p->nsteps; s++)
      if (!filled_by_copy(&em->staging[k], &p->steps[s]) &&
          !instantiate_step(em->routines, em->dag, em->target, p, &em->staging[k], &p->steps[s],
                            &em->routines_of[k][s]))
        return false;
  }
  return true;
}

static void emitter_free(Emitter *em) {
  if (em->routines_of)
    for (int k = 0; k < em->cand->nkernels; k++) {
      if (!em->routines_of[k]) continue; /* instantiation stopped at an earlier kernel */
      for (int s = 0; s < em->cand->kernels[k]->nsteps; s++) free(em->routines_of[k][s].name);
      free(em->routines_of[k]);
    }
  free(em->routines_of);
  if (em->staging)
    for (int k = 0; k < em->cand->nkernels; k++) staging_free(&em->staging[k]);
  free(em->staging);
  if (em->loops)
    for (int k = 0; k < em->cand->nkernels; k++) {
      roll_runs_free(em->loops[k].runs, em->loops[k].n);
      free(em->loops[k].alias);
    }
  free(em->loops);
  free(em->ws_values);
  emit_io_names_free(&em->io);
}

/* ------------------------------------------------------------------------------------------ */
/* Step groups and thread coordinates                                                          */
/* ------------------------------------------------------------------------------------------ */

static BlockShape call_shape(const KernelPlan *p, int call) {
  return impl_shape(p->impl[call], p->e);
}

static bool same_shape(BlockShape a, BlockShape b) {
  return a.bx == b.bx && a.by == b.by && a.bz == b.bz;
}

/* Which coordinates a call with shape c can take from the kernel's block shape: tx when the x
 * extents agree; ty and tz when x and y agree (then lin / (cx*cy) = threadIdx.z as well). */
typedef struct {
  bool reuse_x, reuse_yz, same, guard;
  int count;
} CoordPlan;

static CoordPlan coord_plan(BlockShape kernel, BlockShape c, int threads) {
  CoordPlan cp;
  cp.same = same_shape(kernel, c);
  cp.reuse_x = c.bx == kernel.bx;
  cp.reuse_yz = cp.reuse_x && c.by == kernel.by;
  cp.count = c.bx * c.by * c.bz;
  cp.guard = cp.count < threads;
  return cp;
}

/* Steps [from, to) that share a call's coordinates with no barrier inside. */
static int group_end(const KernelPlan *p, int from) {
  int to = from + 1;
  BlockShape s = call_shape(p, p->steps[from].call);
  while (to < p->nsteps && !p->steps[to].barrier_before &&
         same_shape(call_shape(p, p->steps[to].call), s))
    to++;
  return to;
}

/* The coordinates (COORD_*) that the routines of steps [from, to) of kernel k take. */
static unsigned routine_coords(const Emitter *em, int k, int from, int to) {
  unsigned c = 0;
  for (int s = from; s < to; s++) c |= em->routines_of[k][s].coords;
  return c;
}

#define USES_LIN 8u

/* Kernel coordinates used by steps [from, to) of kernel k: COORD_* and USES_LIN. */
static unsigned coords_used(const Emitter *em, int k, int from, int to) {
  const KernelPlan *p = em->cand->kernels[k];
  unsigned used = 0;
  for (int s = from; s < to; s++) {
    unsigned want = em->routines_of[k][s].coords;
    CoordPlan cp = coord_plan(p->block, call_shape(p, p->steps[s].call), p->threads);
    if (cp.same) {
      used |= want;
      continue;
    }
    unsigned reused = (cp.reuse_x ? COORD_TX : 0) | (cp.reuse_yz ? COORD_TY | COORD_TZ : 0);
    used |= want & reused;
    if (cp.guard || (want & ~reused)) used |= USES_LIN;
  }
  return used;
}

/* Coordinate c of shape s from lin < its thread count: "lin % 3", "lin / 3 % 32", "lin / 96",
 * with the trivial factors left out ("lin" alone in a 1-D shape). */
static void coord_expr(StrBuf *sb, int c, BlockShape s) {
  int below = c == 0 ? 1 : c == 1 ? s.bx : s.bx * s.by;
  int extent = c == 0 ? s.bx : c == 1 ? s.by : s.bz;
  if (extent == 1) {
    sb_puts(sb, "0");
    return;
  }
  sb_puts(sb, "lin");
  if (below > 1) sb_printf(sb, " / %d", below);
  if (below * extent < s.bx * s.by * s.bz) sb_printf(sb, " %% %d", extent);
}

/* "const int <name> = <coordinate c of shape s from lin>;" */
static void declare_coord(StrBuf *sb, int level, const char *name, int c, BlockShape s) {
  indent(sb, level);
  sb_printf(sb, "const int %s = ", name);
  coord_expr(sb, c, s);
  sb_puts(sb, ";\n");
}

/* Declares the call's own coordinates (ctx, cty, ctz) that its routines take (want, COORD_*)
 * and that differ from the kernel's; names[c] receives what to pass for each. */
static void declare_call_coords(StrBuf *sb, int level, const CoordPlan *cp, BlockShape c,
                                unsigned want, const char **names) {
  static const char *const own[3] = {"ctx", "cty", "ctz"}, *const kernel[3] = {"tx", "ty", "tz"};
  for (int k = 0; k < 3; k++) {
    bool reused = k == 0 ? cp->reuse_x : cp->reuse_yz;
    names[k] = reused ? kernel[k] : own[k];
    if (!reused && (want >> k & 1)) declare_coord(sb, level, own[k], k, c);
  }
}

/* The name of a buffer in kernel code: s_<ident> (shared) or r_<ident> (registers). */
static char *buffer_name(const Dag *dag, const Buffer *b) {
  char *id = dag_value_ident(dag, b->value);
  char *s = xasprintf("%s_%s", b->place == PLACE_REGISTER ? "r" : "s", id);
  free(id);
  return s;
}

/* The kernel parameter of a value's global array: g_<argument> for the caller's arrays (an
 * array element's is its whole array's), g_<ident> for the workspace's. */
static char *param_name(const Emitter *em, int value) {
  bool caller = global_key(em->dag, value) < em->io.ninputs + em->io.noutputs;
  char *array = caller ? global_array(em, value) : dag_value_ident(em->dag, value);
  char *s = xasprintf("g_%s", array);
  free(array);
  return s;
}

/* A loop's iterations in groups of threads (threads.c): below, with the kept loops'. */
static int groups_of(const Emitter *em);
static bool moves_with_group(const Emitter *em, int v);
static char *group_offset(const Emitter *em, int v, int offset);
static char *group_smem_offset(const Emitter *em, const KernelPlan *p, int reals);

/* What a load or save routine gets for its array: the parameter, moved to an array element's
 * place in the array's record ("g_vec3DPhi + 3", component-major "g_vec3DPhi + 3 * ld"). */
static char *routine_array(const Emitter *em, int value) {
  char *g = param_name(em, value);
  GlobalBinding b = target_binding(em->target, em->dag, value);
  if (moves_with_group(em, value)) { /* element-major: groups need no component rows */
    char *off = group_offset(em, value, b.offset);
    char *s = xasprintf("%s + %s", g, off);
    free(g), free(off);
    return s;
  }
  if (b.offset == 0) return g;
  char *s = b.layout == LAYOUT_COMPONENT ? xasprintf("%s + %d * ld", g, b.offset)
                                         : xasprintf("%s + %d", g, b.offset);
  free(g);
  return s;
}

/* The name of a staged array's shared copy: "st_F". */
static char *staged_name(const Emitter *em, int arg) {
  return xasprintf("st_%s", dag_arg_name(em->dag, dag_api_arg(em->dag, arg)));
}

/* Where a routine finds an element of a staged array: its slice in the copy ("st_F + 9"), or
 * for rows (component-major, E apart) its first row ("st_F + 3 * 256"). */
static char *staged_slice(const Emitter *em, const KernelPlan *p, const StagedArray *a,
                          int value) {
  const Value *v = &em->dag->values[value];
  char *st = staged_name(em, a->arg);
  if (moves_with_group(em, value) && !a->rows) {
    char *off = group_offset(em, value, v->arg_offset);
    char *s = xasprintf("%s + %s", st, off);
    free(st), free(off);
    return s;
  }
  if (v->arg_offset == 0) return st;
  char *s = a->rows ? xasprintf("%s + %d * %d", st, v->arg_offset, p->e)
                    : xasprintf("%s + %d", st, v->arg_offset);
  free(st);
  return s;
}

/* The copies of a kernel's staged arrays, in (output false) before its first step or out
 * (output true) after its last: the block's ne records of each, W reals at a time where the
 * block is whole.  On the host one "thread" copies everything. */
static void emit_staging_copies(StrBuf *sb, int level, const Emitter *em, int k, bool output,
                                bool device) {
  const KernelPlan *p = em->cand->kernels[k];
  const Staging *st = &em->staging[k];
  for (int i = 0; i < st->n; i++) {
    const StagedArray *a = &st->v[i];
    if (a->output != output) continue;
    const DagArg *arg = dag_api_arg(em->dag, a->arg);
    char *name = a->buffer >= 0 ? buffer_name(em->dag, &p->buffers[a->buffer])
                                : staged_name(em, a->arg);
    char *g = param_name(em, arg->values[0]);
    int reals = p->e * a->record;
    int w = device ? staging_copy_width(p, a) : 1;
    indent(sb, level);
    if (a->rows) {
      sb_printf(sb, "/* %s: the block's %d rows, copied out of shared memory from sectors */\n",
                dag_arg_name(em->dag, arg), a->record);
      indent(sb, level);
      sb_printf(sb, "kas_stage_out_rows(%s, %s + e0, %d, %d, (int)ne, ld, %s, %d);\n", name, g,
                p->e, a->record, device ? "lin" : "0", device ? p->threads : 1);
      free(g);
      free(name);
      continue;
    }
    if (a->buffer >= 0)
      sb_printf(sb, "/* %s: the block's %d-real records, into the buffer every group reads */\n",
                dag_arg_name(em->dag, arg), a->record);
    else
      sb_printf(sb, "/* %s: the block's %d-real records, %s shared memory in one run */\n",
                dag_arg_name(em->dag, arg), a->record, output ? "copied out of" : "copied into");
    indent(sb, level);
    /* every thread of the block copies, the groups' (threads.c) too */
    int threads = device ? threads_in_block(em->dag, p) : 1;
    const char *who = !device ? "0" : groups_of(em) > 1 ? "lin_block" : "lin";
    if (output)
      sb_printf(sb, "kas_stage_out<%d>(%s, %s + e0 * %d, %d, (int)ne * %d, %s, %d);\n", w, name,
                g, a->record, reals, a->record, who, threads);
    else
      sb_printf(sb, "kas_stage_in<%d>(%s, %s + e0 * %d, %d, (int)ne * %d, %s, %d);\n", w, name,
                g, a->record, reals, a->record, who, threads);
    free(g);
    free(name);
  }
}

/* Whether kernel k stages an input (output false) or output array. */
static bool stages(const Emitter *em, int k, bool output) {
  for (int i = 0; i < em->staging[k].n; i++)
    if (em->staging[k].v[i].output == output) return true;
  return false;
}

/* ------------------------------------------------------------------------------------------ */
/* Loops kept in the kernel (roll.c)                                                           */
/* ------------------------------------------------------------------------------------------ */

/* Whether buffer b of kernel k has a name of its own (in a kept loop, only the first
 * iteration's buffers have). */
static bool named(const Emitter *em, int k, int b) {
  return !em->loops[k].alias || em->loops[k].alias[b] == b;
}

/* The name of buffer b of kernel k in code: in a kept loop, its first iteration's twin's. */
static char *kept_name(const Emitter *em, int k, int b) {
  const int *alias = em->loops[k].alias;
  return buffer_name(em->dag, &em->cand->kernels[k]->buffers[alias ? alias[b] : b]);
}

/* The kernel's variable of spec loop l: the spec's name where no name of the generated code
 * can take it, else "iter<l>". */
static char *loop_var(const Spec *sp, int l) {
  static const char *const taken[] = {"tx", "ty", "tz", "lin", "e0", "ne", "ld", "c",
                                      "t", "block", "blocks", "smem", NULL};
  const char *v = sp->loops[l].var;
  bool ok = v && !reserved_name(v);
  for (const char *q = v; ok && *q; q++)
    ok = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9');
  for (int i = 0; ok && taken[i]; i++) ok = strcmp(v, taken[i]) != 0;
  return ok ? xstrdup(v) : xasprintf("iter%d", l);
}

/* stride * var + base, without the trivial parts: "9 * q + 3", "q - 1", "4". */
static char *affine_text(int stride, int base, const char *var) {
  if (stride == 0) return xasprintf("%d", base);
  char *term = stride == 1 ? xstrdup(var) : xasprintf("%d * %s", stride, var);
  if (base == 0) return term;
  char *s = xasprintf("%s %c %d", term, base > 0 ? '+' : '-', base > 0 ? base : -base);
  free(term);
  return s;
}

/* ---- a loop's iterations in groups of threads (threads.c) --------------------------------- */

/* The groups kernel k's block holds (1 unless the candidate's DAG is threads.c's). */
static int groups_of(const Emitter *em) { return dag_groups(em->dag); }

/* The variables of the groups' loops as the kernel names them: each group's iterations. */
static char *group_var(const Emitter *em) { return loop_var(em->dag->spec, em->dag->group_loop); }
static char *group_var2(const Emitter *em) {
  return loop_var(em->dag->spec, em->dag->group_loop2);
}

/* Whether value v's element differs from group to group. */
static bool moves_with_group(const Emitter *em, int v) {
  return em->dag->values[v].group_stride || em->dag->values[v].group_stride2;
}

/* stride * var + stride2 * var2 + base ("36 * N + 9 * M + 3"), base being the first group's. */
static char *group_affine(const Emitter *em, int stride, int stride2, int base) {
  const Dag *d = em->dag;
  char *var = group_var(em);
  char *s = affine_text(stride, base - stride * d->group_first - stride2 * d->group_first2, var);
  if (stride2) {
    char *var2 = group_var2(em), *inner = affine_text(stride2, 0, var2);
    char *t = !strcmp(s, "0") ? xstrdup(inner)
              : s[0] == '-'   ? xasprintf("%s - %s", inner, s + 1)
                              : xasprintf("%s + %s", inner, s);
    free(s), free(var2), free(inner);
    s = t;
  }
  free(var);
  return s;
}

/* Where a shared buffer at `reals` into the plan's shared memory is for this thread's group:
 * each group has the plan's (16-byte aligned) after the one before ("2304 * N + 96"). */
static char *group_smem_offset(const Emitter *em, const KernelPlan *p, int reals) {
  int per_group = (p->smem_bytes + 15) / 16 * 16 / target_real_bytes(p->precision);
  int groups2 = em->dag->groups2 > 1 ? em->dag->groups2 : 1;
  return group_affine(em, per_group * groups2, groups2 > 1 ? per_group : 0, reals);
}

/* The groups' variables, declared first in a kernel of groups ("const int N = threadIdx.z;"):
 * group g of the block (threadIdx.z / its plan's bz) runs iteration first + g of the loop, or
 * with an inner loop first + g / count2 of the loop and first2 + g % count2 of the inner one. */
static void declare_group(StrBuf *sb, const Emitter *em, const KernelPlan *p) {
  const Dag *d = em->dag;
  const Spec *sp = d->spec;
  int groups2 = d->groups2 > 1 ? d->groups2 : 1;
  char *g = p->block.bz > 1 ? xasprintf("(int)threadIdx.z / %d", p->block.bz)
                            : xstrdup("(int)threadIdx.z");
  for (int level = 0; level < (groups2 > 1 ? 2 : 1); level++) {
    const SpecLoop *l = &sp->loops[level ? d->group_loop2 : d->group_loop];
    int first = level ? d->group_first2 : d->group_first;
    char *var = level ? group_var2(em) : group_var(em);
    sb_printf(sb, "  /* loop %s of line %d (%s = %d..%d): one iteration per ", l->var,
              l->loc.line, l->var, l->lo, l->hi - 1);
    if (level || groups2 == 1) sb_printf(sb, "group of %d threads */\n", p->threads);
    else sb_printf(sb, "%d groups of %d threads */\n", groups2, p->threads);
    sb_printf(sb, "  const int %s = ", var);
    if (first) sb_printf(sb, "%d + ", first);
    bool paren = groups2 > 1 && p->block.bz > 1;
    if (groups2 == 1) sb_puts(sb, g);
    else sb_printf(sb, "%s%s%s %s %d", paren ? "(" : "", g, paren ? ")" : "", level ? "%" : "/",
                   groups2);
    sb_puts(sb, ";\n");
    free(var);
  }
  free(g);
}

/* Where value v's element is for this thread's group, as an offset into its argument's record
 * ("3 * N", "9 * M + 36 * N"; the first group's place where v does not move). */
static char *group_offset(const Emitter *em, int v, int offset) {
  const Value *val = &em->dag->values[v];
  if (!moves_with_group(em, v)) return xasprintf("%d", offset);
  return group_affine(em, val->group_stride, val->group_stride2, offset);
}

/* The condition under which a step runs in a kernel of groups (NULL: in every group): a load
 * into the one copy of shared memory that all groups read, in the first group; with an inner
 * loop, a save of what the loop's iteration makes outside the inner loop (the same in each
 * inner iteration), in the first inner iteration's groups. */
static char *group_condition(const Emitter *em, const KernelPlan *p, const Step *s) {
  const Dag *d = em->dag;
  if (groups_of(em) <= 1 || s->kind == ROUTINE_COMPUTE) return NULL;
  const Buffer *b = &p->buffers[s->buf[0]];
  bool first_group = s->kind == ROUTINE_LOAD && b->place == PLACE_SHARED && threads_one_copy(d, p);
  bool first_inner = s->kind == ROUTINE_SAVE && d->groups2 > 1 &&
                     d->values[b->value].group_stride2 == 0;
  if (!first_group && !first_inner) return NULL;
  char *var = group_var(em), *var2 = d->groups2 > 1 ? group_var2(em) : NULL;
  char *c = !first_group ? xasprintf("%s == %d", var2, d->group_first2)
            : var2       ? xasprintf("%s == %d && %s == %d", var, d->group_first, var2,
                                     d->group_first2)
                         : xasprintf("%s == %d", var, d->group_first);
  free(var), free(var2);
  return c;
}

/* "base + index", or "base + (index) * scale" (scale NULL: none); the base alone at index 0. */
static char *offset_by(const char *base, const char *index, const char *scale) {
  if (!strcmp(index, "0")) return xstrdup(base);
  if (!scale) return xasprintf("%s + %s", base, index);
  bool sum = strstr(index, " + ") || strstr(index, " - ");
  return xasprintf(sum ? "%s + (%s) * %s" : "%s + %s * %s", base, index, scale);
}

/* What a routine in a kept loop gets for its array: value v's element (the first iteration's)
 * moved `stride` reals of its record per iteration by the loop variable ("st_F + 9 * q",
 * "g_A + 3 * N", component-major "g_A + 3 * N * ld"), in the kernel's staged copy where it has
 * one. */
static char *indexed_array(const Emitter *em, const KernelPlan *p, const RollRun *run, int v,
                           int stride, const StagedArray *staged) {
  GlobalBinding b = target_binding(em->target, em->dag, v);
  char *var = loop_var(em->dag->spec, run->loop);
  char *index = affine_text(stride, b.offset - stride * run->first, var);
  char *base = staged ? staged_name(em, staged->arg) : param_name(em, v);
  char *e = xasprintf("%d", p->e);
  char *s = staged ? offset_by(base, index, staged->rows ? e : NULL)
                   : offset_by(base, index, b.layout == LAYOUT_COMPONENT ? "ld" : NULL);
  free(var), free(index), free(base), free(e);
  return s;
}

/* The array of load or save `step` of run's body: its element in the first iteration, moved by
 * the distance to its twin in the second. */
static char *loop_array(const Emitter *em, const KernelPlan *p, int step, const RollRun *run,
                        const StagedArray *staged) {
  int v1 = p->buffers[p->steps[step].buf[0]].value;
  int v2 = p->buffers[p->steps[step + run->body].buf[0]].value;
  return indexed_array(em, p, run, v1,
                       em->dag->values[v2].arg_offset - em->dag->values[v1].arg_offset, staged);
}

/* The loop's own buffer of reload r of run: "r_vec3DPhi_M" (a second distinct one of the same
 * array "r_vec3DPhi_M_2"). */
static char *reload_name(const Emitter *em, const KernelPlan *p, const RollRun *run, int r) {
  const RollReload *rl = &run->reloads[run->reloads[r].shares];
  int value = p->buffers[rl->buffer].value;
  int arg = global_key(em->dag, value), nth = 1;
  for (int j = 0; j < rl - run->reloads; j++)
    nth += run->reloads[j].shares == j &&
           global_key(em->dag, p->buffers[run->reloads[j].buffer].value) == arg;
  char *var = loop_var(em->dag->spec, run->loop);
  const char *array = dag_arg_name(em->dag, dag_api_arg(em->dag, arg));
  char *s = nth > 1 ? xasprintf("r_%s_%s_%d", array, var, nth) : xasprintf("r_%s_%s", array, var);
  free(var);
  return s;
}

/* The reload of run whose buffer is read at body position `at`, slot `slot` (NULL: none). */
static const RollReload *reload_at(const RollRun *run, int at, int slot) {
  for (int r = 0; run && r < run->nreload; r++)
    if (run->reloads[r].at == at && run->reloads[r].slot == slot) return &run->reloads[r];
  return NULL;
}

/* What a step of a kept loop does, as the spec says it: "line 15: FS = mmul33(F[q], S[q])",
 * "line 15: mmul33 load F[q] (owner)". */
static char *loop_step_text(const Emitter *em, const KernelPlan *p, const Step *s, int loop) {
  const Spec *sp = em->dag->spec;
  const DagNode *node = &em->dag->nodes[p->order[s->call]];
  const SourceCall *sc = &sp->sources[sp->stmts[node->stmt].source];
  if (s->kind == ROUTINE_COMPUTE) {
    char *call = spec_source_text(sp, node->stmt, loop);
    char *t = xasprintf("line %d: %s", sc->loc.line, call);
    free(call);
    return t;
  }
  int value = p->buffers[s->buf[0]].value;
  const SourceRef *ref = &sc->result;
  for (int a = 0; a < node->nargs && s->kind == ROUTINE_LOAD; a++)
    if (node->args[a] == value) {
      ref = &sc->args[a];
      break;
    }
  char *what = spec_ref_text(sp, ref, node->stmt, loop);
  char *variant = c_safe_text(s->io && s->io->variant ? s->io->variant : ""); /* INI text */
  char *t = xasprintf("line %d: %s %s %s (%s)", sc->loc.line, node->fn->name, kind_name(s->kind),
                      what, variant);
  free(what), free(variant);
  return t;
}

/* "line 24: load vec3DPhi[M] (owner) for this iteration", the reading call's line and reference
 * (its element sits in a register of its own before the loop, which the loop cannot index). */
static char *loop_reload_text(const Emitter *em, const KernelPlan *p, const RollRun *run,
                              const RollReload *rl) {
  const Spec *sp = em->dag->spec;
  const DagNode *node = &em->dag->nodes[p->order[p->steps[run->from + rl->at].call]];
  const SourceCall *sc = &sp->sources[sp->stmts[node->stmt].source];
  char *ref = rl->slot < sc->nargs ? spec_ref_text(sp, &sc->args[rl->slot], node->stmt, run->loop)
                                    : xstrdup("?");
  const Step *ls = &p->steps[p->buffers[rl->buffer].first_use];
  char *variant = c_safe_text(ls->io && ls->io->variant ? ls->io->variant : ""); /* INI text */
  char *t = xasprintf("line %d: load %s (%s) for this iteration", sc->loc.line, ref, variant);
  free(ref), free(variant);
  return t;
}

/* One routine call, "d_..._e32_ss(g_a_0, s_a_0, tx, e0, n);", under a comment that says what
 * it does; run: the kept loop whose body it is in (NULL: none); reload: run's reload this call
 * is (the load of the reloaded buffer, into the loop's buffer; NULL: none). */
static void emit_call(StrBuf *sb, int level, const Emitter *em, const KernelPlan *p, int k,
                      int step, const char *const *coord_names, const RollRun *run,
                      const RollReload *reload) {
  const Step *s = &p->steps[step];
  if (filled_by_copy(&em->staging[k], s)) return; /* copied in before the first step */
  const StepRoutine *r = &em->routines_of[k][step];
  char *args[KAS_MAX_ARGS + 8];
  int n = 0;
  const Buffer *b0 = &p->buffers[s->buf[0]];
  const StagedArray *staged =
      s->kind == ROUTINE_COMPUTE ? NULL : staging_find(&em->staging[k], em->dag, b0->value);
  char *array = s->kind == ROUTINE_COMPUTE ? NULL
                : reload ? indexed_array(em, p, run, b0->value, reload->stride, staged)
                : run    ? loop_array(em, p, step, run, staged)
                : staged ? staged_slice(em, p, staged, b0->value)
                         : routine_array(em, b0->value);
  if (s->kind == ROUTINE_LOAD) args[n++] = array;
  for (int i = 0; i < s->nbuf; i++) {
    const RollReload *rl = reload ? reload : reload_at(run, step - (run ? run->from : 0), i);
    args[n++] = rl ? reload_name(em, p, run, (int)(rl - run->reloads))
                   : kept_name(em, k, s->buf[i]);
  }
  if (s->kind == ROUTINE_SAVE) args[n++] = array;
  for (int c = 0; c < 3; c++)
    if (r->coords >> c & 1) args[n++] = xstrdup(coord_names[c]);
  /* A staged slice is addressed in the block's copy: its element 0 is e0, and ne are valid. */
  if (s->kind != ROUTINE_COMPUTE)
    args[n++] = xstrdup(staged ? "0" : "e0"), args[n++] = xstrdup(staged ? "ne" : "n");
  /* rows of a staged copy are E apart */
  if (r->takes_ld) args[n++] = staged && staged->rows ? xasprintf("%d", p->e) : xstrdup("ld");
  const DagNode *node = &em->dag->nodes[p->order[s->call]];
  char *variant = c_safe_text(s->io && s->io->variant ? s->io->variant : ""); /* INI text */
  char *what = reload ? loop_reload_text(em, p, run, reload)
               : run    ? loop_step_text(em, p, s, run->loop)
               : s->kind == ROUTINE_COMPUTE ? xasprintf("%s#%d compute", node->fn->name, node->stmt)
                                            : xasprintf("%s#%d %s %s (%s)", node->fn->name,
                                                        node->stmt, kind_name(s->kind),
                                                        dag_value_label(em->dag, b0->value),
                                                        variant);
  free(variant);
  put_comment(sb, level, what);
  char *only = group_condition(em, p, s);
  if (only) {
    indent(sb, level);
    sb_printf(sb, "if (%s) /* %s */\n", only,
              s->kind == ROUTINE_LOAD ? "one group loads the copy that every group reads"
                                      : "the same in every inner group: one saves it");
    put_call(sb, level + 1, r->name, args, n, ";\n");
    free(only);
  } else {
    put_call(sb, level, r->name, args, n, ";\n");
  }
  free(what);
  for (int i = 0; i < n; i++) free(args[i]);
}

/* Steps [from, to) of one group: directly when the call runs in the kernel's block shape,
 * otherwise inside a block that recomputes the differing coordinates and idles extra threads. */
static void emit_group(StrBuf *sb, int level, const Emitter *em, const KernelPlan *p, int k,
                       int from, int to, const RollRun *run, const RollReload *reload) {
  BlockShape c = call_shape(p, p->steps[from].call);
  CoordPlan cp = coord_plan(p->block, c, p->threads);
  if (cp.same) {
    static const char *const own[3] = {"tx", "ty", "tz"};
    for (int s = from; s < to; s++) emit_call(sb, level, em, p, k, s, own, run, reload);
    return;
  }
  int made = 0; /* steps that a staged copy does not make */
  for (int s = from; s < to; s++) made += !filled_by_copy(&em->staging[k], &p->steps[s]);
  if (!made) return;
  indent(sb, level);
  const Impl *im = p->impl[p->steps[from].call];
  if (cp.guard)
    sb_printf(sb, "if (lin < %d) { /* %s runs %d x %d x %d threads; the rest idle */\n",
              cp.count, im->name, c.bx, c.by, c.bz);
  else
    sb_printf(sb, "{ /* %s runs as %d x %d x %d threads */\n", im->name, c.bx, c.by, c.bz);
  const char *names[3];
  declare_call_coords(sb, level + 1, &cp, c, routine_coords(em, k, from, to), names);
  for (int s = from; s < to; s++) emit_call(sb, level + 1, em, p, k, s, names, run, reload);
  indent(sb, level);
  sb_puts(sb, "}\n");
}

/* Whether the plan's barrier before step s of kernel k is made: not where the staged copies
 * fill every shared buffer before the first step, and no step writes one (Staging.fills_buffers;
 * on the GPU, and in the host form's phases alike). */
static bool barrier_at(const Emitter *em, int k, const Step *s) {
  return s->barrier_before && !em->staging[k].fills_buffers;
}

/* A barrier under the reason it stays (in the host form, the reason alone: the phase ends). */
static void emit_barrier(StrBuf *sb, int level, const Step *s, bool device) {
  const char *why = s->barrier_why ? s->barrier_why : "planned barrier";
  char *text = xasprintf("Barrier: %s", why);
  put_comment(sb, level, text);
  free(text);
  if (device) {
    indent(sb, level);
    sb_puts(sb, "__syncthreads();\n");
  }
}

/* "for q in 1..8 (specs/quadrature.spec:14), iterations 3 to 7 of calls #8 to #22" */
static char *run_text(const Emitter *em, const KernelPlan *p, const RollRun *run) {
  const Spec *sp = em->dag->spec;
  const SpecLoop *l = &sp->loops[run->loop];
  int last = run->from + run->count * run->body - 1;
  return xasprintf("for %s in %d..%d (%s:%d), iterations %d to %d of calls #%d to #%d", l->var,
                   l->lo, l->hi, sp->path, l->loc.line, run->first, run->first + run->count - 1,
                   em->dag->nodes[p->order[p->steps[run->from].call]].stmt,
                   em->dag->nodes[p->order[p->steps[last].call]].stmt);
}

static void emit_steps(StrBuf *sb, int level, const Emitter *em, const KernelPlan *p, int k,
                       int from, int to, bool barriers, const RollRun *run);

/* Whether a reload of run loads its buffer before body position `at`. */
static bool reload_loads_at(const RollRun *run, int at) {
  for (int r = 0; r < run->nreload; r++)
    if (run->reloads[r].at == at && run->reloads[r].shares == r) return true;
  return false;
}

/* The copies that hand a run's loop-carried values to the next iteration. */
static void emit_carries(StrBuf *sb, int level, const Emitter *em, const KernelPlan *p, int k,
                         const RollRun *run) {
  for (int c = 0; c < run->ncarry; c++) {
    char *in = kept_name(em, k, run->carry_in[c]), *out = kept_name(em, k, run->carry_out[c]);
    char *why = xasprintf("%s carries to the next iteration",
                          dag_value_label(em->dag, p->buffers[run->carry_out[c]].value));
    put_comment(sb, level, why);
    indent(sb, level);
    int reals = p->buffers[run->carry_in[c]].reg_floats;
    if (reals == 1)
      sb_printf(sb, "%s[0] = %s[0];\n", in, out);
    else
      sb_printf(sb, "for (int c = 0; c < %d; c++) %s[c] = %s[c];\n", reals, in, out);
    free(in), free(out), free(why);
  }
}

/* The run of kernel k that starts at step s (NULL: none). */
static const RollRun *run_at(const Emitter *em, int k, int s) {
  for (int r = 0; r < em->loops[k].n; r++)
    if (em->loops[k].runs[r].from == s) return &em->loops[k].runs[r];
  return NULL;
}

/* The step whose barrier step s has where it is emitted: in a kept loop's body the first step
 * takes the later iterations' (the first iteration's own goes before the loop). */
static const Step *barrier_step(const KernelPlan *p, int s, const RollRun *run) {
  return run && s == run->from ? &p->steps[s + run->body] : &p->steps[s];
}

/* Whether step s, a run's first, has a barrier of the first iteration alone (before the loop). */
static bool barrier_before_loop(const KernelPlan *p, const RollRun *run) {
  return p->steps[run->from].barrier_before && !p->steps[run->from + run->body].barrier_before;
}

/* Whether a run has no barrier inside: on the host it then runs inside one phase. */
static bool run_in_phase(const KernelPlan *p, const RollRun *run) {
  for (int s = run->from + run->body; s < run->from + 2 * run->body; s++)
    if (p->steps[s].barrier_before) return false;
  return !run->end_barrier;
}

static void loop_head(StrBuf *sb, int level, const Emitter *em, const KernelPlan *p,
                      const RollRun *run, bool device) {
  char *var = loop_var(em->dag->spec, run->loop), *what = run_text(em, p, run);
  char *text = xasprintf("%s, kept as a loop (roll.c)", what);
  put_comment(sb, level, text);
  if (device) {
    indent(sb, level);
    sb_puts(sb, "#pragma unroll 1\n");
  }
  indent(sb, level);
  sb_printf(sb, "for (int %s = %d; %s < %d; %s++) {\n", var, run->first, var,
            run->first + run->count, var);
  free(text), free(what), free(var);
}

/* A run of alike iterations as a loop over the first one's steps; the values one iteration
 * hands to the next are copied into the buffers the first one read them from.  On the GPU it
 * stays a loop (unroll 1): that is the form the model chose. */
static void emit_kept_loop(StrBuf *sb, int level, const Emitter *em, const KernelPlan *p, int k,
                           const RollRun *run, bool device) {
  loop_head(sb, level, em, p, run, device);
  for (int r = 0; device && r < run->nreload; r++) { /* on the host: views (host_reload_views) */
    if (run->reloads[r].shares != r) continue;
    char *name = reload_name(em, p, run, r);
    indent(sb, level + 1);
    sb_printf(sb, "%s %s[%d];\n", em->real, name, p->buffers[run->reloads[r].buffer].reg_floats);
    free(name);
  }
  emit_steps(sb, level + 1, em, p, k, run->from, run->from + run->body, device, run);
  emit_carries(sb, level + 1, em, p, k, run);
  if (device && run->end_barrier) {
    put_comment(sb, level + 1, "Barrier: the next iteration writes this one's shared buffers");
    indent(sb, level + 1);
    sb_puts(sb, "__syncthreads();\n");
  }
  indent(sb, level);
  sb_puts(sb, "}\n");
}

/* Steps [from, to) of kernel k: groups of calls, kept loops where a run starts (run: inside
 * one's body, where none starts), and barriers where the plan has them (barriers: the GPU form;
 * the host form's phases end at them instead). */
static void emit_steps(StrBuf *sb, int level, const Emitter *em, const KernelPlan *p, int k,
                       int from, int to, bool barriers, const RollRun *run) {
  for (int s = from; s < to;) {
    const RollRun *starts = run ? NULL : run_at(em, k, s);
    if (starts) {
      if (barriers && barrier_before_loop(p, starts)) emit_barrier(sb, level, &p->steps[s], true);
      emit_kept_loop(sb, level, em, p, k, starts, barriers);
      s = starts->from + starts->count * starts->body;
      continue;
    }
    const Step *bs = barrier_step(p, s, run);
    if (barriers && barrier_at(em, k, bs)) emit_barrier(sb, level, bs, true);
    for (int r = 0; run && r < run->nreload; r++) {
      const RollReload *rl = &run->reloads[r];
      int ls = p->buffers[rl->buffer].first_use;
      if (rl->shares == r && run->from + rl->at == s) emit_group(sb, level, em, p, k, ls, ls + 1,
                                                                 run, rl);
    }
    int end = group_end(p, s);
    for (int e = s + 1; e < end; e++)
      if ((!run && run_at(em, k, e)) || (run && reload_loads_at(run, e - run->from))) end = e;
    if (end > to) end = to;
    emit_group(sb, level, em, p, k, s, end, run, NULL);
    s = end;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* kernels.cu                                                                                  */
/* ------------------------------------------------------------------------------------------ */

static void describe_call(StrBuf *sb, const Emitter *em, const KernelPlan *p, int c) {
  const DagNode *node = &em->dag->nodes[p->order[c]];
  StrBuf d;
  sb_init(&d);
  sb_printf(&d, "%s#%d: %s = %s(", node->fn->name, node->stmt,
            dag_value_label(em->dag, node->result), node->fn->name);
  for (int a = 0; a < node->nargs; a++)
    sb_printf(&d, "%s%s", a ? ", " : "", dag_value_label(em->dag, node->args[a]));
  BlockShape s = call_shape(p, c);
  sb_printf(&d, ") by %s (%d x %d x %d threads)", p->impl[c]->name, s.bx, s.by, s.bz);
  for (int st = 0; st < p->nsteps; st++) {
    const Step *step = &p->steps[st];
    if (step->call == c && step->io) {
      char *variant = c_safe_text(step->io->variant ? step->io->variant : ""); /* INI text */
      sb_printf(&d, ", %s %d %s", kind_name(step->kind), step->io->index, variant);
      free(variant);
    }
  }
  sb_puts(sb, " *   ");
  put_words(sb, d.data, " *     ");
  sb_putc(sb, '\n');
  sb_free(&d);
}

static void describe_buffer(StrBuf *sb, const Emitter *em, const KernelPlan *p, int b) {
  const Buffer *buf = &p->buffers[b];
  char *name = buffer_name(em->dag, buf);
  StrBuf d;
  sb_init(&d);
  sb_printf(&d, "%s: %s, ", name, dag_value_label(em->dag, buf->value));
  if (buf->place == PLACE_REGISTER)
    sb_printf(&d, "registers, %d %s%s per thread", buf->reg_floats, em->real,
              buf->reg_floats == 1 ? "" : "s");
  else
    sb_printf(&d, "shared, bytes %d..%d", buf->offset, buf->offset + buf->bytes - 1);
  sb_printf(&d, ", steps %d..%d%s%s", buf->first_use, buf->last_use, buf->load ? ", loaded" : "",
            buf->save ? ", saved" : "");
  if (buf->why) sb_printf(&d, "; %s", buf->why);
  sb_puts(sb, " *   ");
  put_words(sb, d.data, " *     ");
  sb_putc(sb, '\n');
  sb_free(&d);
  free(name);
}

static void kernel_header(StrBuf *sb, const Emitter *em, const KernelPlan *p, int k) {
  char *summary = xasprintf("Kernel %d of %s: %d call%s, E = %d elements per block, %d threads "
                            "(%d x %d x %d), %d bytes of shared memory, %d of %d possible "
                            "barriers.",
                            k + 1, em->name, p->ncalls, p->ncalls == 1 ? "" : "s", p->e,
                            p->threads, p->block.bx, p->block.by, p->block.bz,
                            em->staging[k].smem_bytes, staging_plan_barriers(&em->staging[k], p),
                            p->barriers_possible);
  sb_puts(sb, "/* ");
  put_words(sb, summary, " * ");
  sb_putc(sb, '\n');
  free(summary);
  if (groups_of(em) > 1) { /* threads.c */
    char *text = xasprintf("Its block holds %d groups of these threads, each running its own "
                           "iteration of the calls below (declared first in the kernel).",
                           groups_of(em));
    sb_puts(sb, " * ");
    put_words(sb, text, " * ");
    sb_putc(sb, '\n');
    free(text);
  }
  for (int c = 0; c < p->ncalls; c++) describe_call(sb, em, p, c);
  for (int r = 0; r < em->loops[k].n; r++) {
    char *what = run_text(em, p, &em->loops[k].runs[r]);
    char *text = xasprintf("Kept as a loop: %s; in it each buffer below that those calls "
                           "define serves every iteration.", what);
    sb_puts(sb, " * ");
    put_words(sb, text, " *   ");
    sb_putc(sb, '\n');
    free(what), free(text);
  }
  sb_puts(sb, " * Buffers:\n");
  for (int b = 0; b < p->nbuffers; b++)
    if (named(em, k, b)) describe_buffer(sb, em, p, b);
  sb_puts(sb, " */\n");
}

static char *kernel_name(const Emitter *em, int k) {
  return xasprintf("kas_%s_k%d", em->prefix, k + 1);
}

/* Whether a routine of kernel k takes the leading dimension (it moves a component-major
 * array), and so the kernel. */
static bool kernel_takes_ld(const Emitter *em, int k) {
  for (int s = 0; s < em->cand->kernels[k]->nsteps; s++)
    if (em->routines_of[k][s].takes_ld) return true;
  return false;
}

/* The parameter list of kernel k: global arrays of loaded and saved values, then n (and ld). */
static void kernel_param_list(StrBuf *sb, const Emitter *em, int k, bool device) {
  const KernelPlan *p = em->cand->kernels[k];
  int *params = xcalloc((size_t)p->nbuffers, sizeof(int));
  int np = kernel_params(em->dag, p, params);
  for (int i = 0; i < np; i++) {
    const Buffer *b = &p->buffers[params[i]];
    char *g = param_name(em, b->value);
    sb_printf(sb, "\n    %s%s *%s%s,", param_read_only(em->dag, p, params[i]) ? "const " : "",
              em->real,
              device ? "__restrict__ " : "", g);
    free(g);
  }
  free(params);
  sb_puts(sb, kernel_takes_ld(em, k) ? "\n    size_t n, size_t ld" : "\n    size_t n");
}

/* Buffer declarations: shared ones as views of the dynamic shared array (byte offsets are
 * multiples of 16, so real offsets are whole), register ones as arrays. */
static void declare_buffers(StrBuf *sb, const Emitter *em, int k) {
  const KernelPlan *p = em->cand->kernels[k];
  const Staging *st = &em->staging[k];
  bool any_shared = st->n > 0;
  int rb = target_real_bytes(p->precision);
  for (int b = 0; b < p->nbuffers; b++) any_shared |= p->buffers[b].place == PLACE_SHARED;
  if (any_shared)
    sb_printf(sb, "  extern __shared__ %s kas_smem[]; /* 16-byte aligned */\n",
              rb == 8 ? "double2" : "float4");
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *buf = &p->buffers[b];
    if (!named(em, k, b)) continue;
    char *name = buffer_name(em->dag, buf);
    if (buf->place == PLACE_REGISTER) {
      sb_printf(sb, "  %s %s[%d];\n", em->real, name, buf->reg_floats);
    } else if (groups_of(em) > 1 && !threads_one_copy(em->dag, p)) { /* each group's own */
      char *at = group_smem_offset(em, p, buf->offset / rb);
      sb_printf(sb, "  %s *const %s = (%s *)kas_smem + %s;\n", em->real, name, em->real, at);
      free(at);
    } else if (buf->offset == 0) {
      sb_printf(sb, "  %s *const %s = (%s *)kas_smem;\n", em->real, name, em->real);
    } else {
      sb_printf(sb, "  %s *const %s = (%s *)kas_smem + %d;\n", em->real, name, em->real,
                buf->offset / rb);
    }
    free(name);
  }
  for (int i = 0; i < st->n; i++) {
    if (st->v[i].buffer >= 0) continue; /* the copy is in a buffer declared above */
    char *name = staged_name(em, st->v[i].arg);
    sb_printf(sb, "  %s *const %s = (%s *)kas_smem + %d; /* staged (staging.c) */\n", em->real,
              name, em->real, st->v[i].offset / rb);
    free(name);
  }
}

/* "threadIdx.x + 3 * threadIdx.y", "threadIdx.x + 3 * (threadIdx.y + 4 * threadIdx.z)". */
static void declare_lin(StrBuf *sb, BlockShape b) {
  sb_puts(sb, "  const int lin = threadIdx.x");
  if (b.bz > 1)
    sb_printf(sb, " + %d * (threadIdx.y + %d * threadIdx.z)", b.bx, b.by);
  else if (b.by > 1)
    sb_printf(sb, " + %d * threadIdx.y", b.bx);
  sb_puts(sb, ";\n");
}

/* In a kernel of groups: the thread's coordinates inside its group (tz, lin) and its index in
 * the whole block (lin_block, which the staged copies use). */
static void declare_group_coords(StrBuf *sb, const KernelPlan *p, unsigned used, bool block) {
  BlockShape b = p->block;
  if (used & COORD_TZ) {
    if (b.bz > 1) sb_printf(sb, "  const int tz = (int)threadIdx.z %% %d;\n", b.bz);
    else sb_puts(sb, "  const int tz = 0;\n");
  }
  if (used & USES_LIN) {
    sb_puts(sb, "  const int lin = threadIdx.x");
    if (b.bz > 1)
      sb_printf(sb, " + %d * (threadIdx.y + %d * ((int)threadIdx.z %% %d))", b.bx, b.by, b.bz);
    else if (b.by > 1)
      sb_printf(sb, " + %d * threadIdx.y", b.bx);
    sb_puts(sb, ";\n");
  }
  if (block && b.by == 1)
    sb_printf(sb, "  const int lin_block = threadIdx.x + %d * threadIdx.z;\n", b.bx);
  else if (block)
    sb_printf(sb, "  const int lin_block = threadIdx.x + %d * (threadIdx.y + %d * threadIdx.z);\n",
              b.bx, b.by);
}

static void emit_device_kernel(StrBuf *sb, const Emitter *em, int k) {
  const KernelPlan *p = em->cand->kernels[k];
  kernel_header(sb, em, p, k);
  char *kn = kernel_name(em, k);
  sb_printf(sb, "__global__ void __launch_bounds__(%d) %s(", threads_in_block(em->dag, p), kn);
  kernel_param_list(sb, em, k, true);
  sb_puts(sb, ") {\n");
  free(kn);
  if (groups_of(em) > 1) declare_group(sb, em, p);
  declare_buffers(sb, em, k);
  sb_printf(sb, "  const size_t e0 = (size_t)blockIdx.x * %d;\n", p->e);
  bool staged_in = stages(em, k, false), staged_out = stages(em, k, true);
  if (staged_in || staged_out)
    sb_printf(sb, "  const size_t ne = n - e0 < %d ? n - e0 : %d; /* elements of this block */\n",
              p->e, p->e);
  unsigned used = coords_used(em, k, 0, p->nsteps);
  if (used & COORD_TX) sb_puts(sb, "  const int tx = threadIdx.x;\n");
  if (used & COORD_TY) sb_puts(sb, "  const int ty = threadIdx.y;\n");
  if (groups_of(em) > 1) {
    declare_group_coords(sb, p, used, staged_in || staged_out);
  } else {
    if (used & COORD_TZ) sb_puts(sb, "  const int tz = threadIdx.z;\n");
    if ((used & USES_LIN) || staged_in || staged_out) declare_lin(sb, p->block);
  }
  if (staged_in) {
    emit_staging_copies(sb, 1, em, k, false, true);
    sb_puts(sb, "  kas_stage_wait(); /* this thread's copies, issued asynchronously */\n"
                "  __syncthreads(); /* the staged copies are complete */\n");
  }
  emit_steps(sb, 1, em, p, k, 0, p->nsteps, true, NULL);
  if (staged_out) {
    sb_puts(sb, "  __syncthreads(); /* every slice of the staged outputs is written */\n");
    emit_staging_copies(sb, 1, em, k, true, true);
  }
  sb_puts(sb, "}\n\n");
}

/* Bytes of workspace for n elements: each intermediate crossing kernels, 256-byte aligned. */
static void emit_workspace_bytes_fn(StrBuf *sb, const Emitter *em, const char *fname) {
  if (em->nws == 0) {
    sb_printf(sb, "/* No intermediate crosses kernels: no workspace. */\n"
                  "%ssize_t %s(size_t /* n */) {%sreturn 0;%s}\n\n",
              em->linkage, fname,
              strlen(em->linkage) + strlen(fname) + 40 > 100 ? "\n  " : " ",
              strlen(em->linkage) + strlen(fname) + 40 > 100 ? "\n" : " ");
    return;
  }
  sb_printf(sb, "/* Bytes of workspace for n elements: the intermediates that cross kernels. */\n"
                "%ssize_t %s(size_t n) {\n  return ",
            em->linkage, fname);
  for (int i = 0; i < em->nws; i++)
    sb_printf(sb, "%skas_align256(n * %d * sizeof(%s))", i ? "\n         + " : "",
              dag_value_floats(em->dag, em->ws_values[i]), em->real);
  sb_puts(sb, ";\n}\n\n");
}

/* The launch function's names for the spec's inputs and outputs that its kernels and copies
 * use, then the workspace pointers. */
static void emit_launch_pointers(StrBuf *sb, const Emitter *em) {
  bool *used = xcalloc((size_t)em->dag->nvalues, sizeof *used);
  for (int k = 0; k < em->cand->nkernels; k++) {
    const KernelPlan *p = em->cand->kernels[k];
    for (int b = 0; b < p->nbuffers; b++)
      used[p->buffers[b].value] |= p->buffers[b].load || p->buffers[b].save;
  }
  for (int i = 0; i < em->dag->nin_args; i++) {
    const DagArg *arg = &em->dag->in_args[i];
    bool any = false;
    for (int k = 0; k < arg->nvalues; k++) any |= used[arg->values[k]];
    if (any) sb_printf(sb, "  const %s *const %s = in[%d];\n", em->real, em->io.input[i], i);
  }
  for (int o = 0; o < em->dag->nout_args; o++)
    sb_printf(sb, "  %s *const %s = out[%d];\n", em->real, em->io.output[o], o);
  free(used);
  if (em->nws) sb_puts(sb, "  char *ws = (char *)workspace;\n");
  for (int i = 0; i < em->nws; i++) {
    int v = em->ws_values[i];
    char *id = dag_value_ident(em->dag, v);
    sb_printf(sb, "  %s *const w_%s = (%s *)ws; /* %s */\n", em->real, id, em->real,
              dag_value_label(em->dag, v));
    if (i + 1 < em->nws)
      sb_printf(sb, "  ws += kas_align256(n * %d * sizeof(%s));\n",
                dag_value_floats(em->dag, v), em->real);
    free(id);
  }
}

/* Kernel k's arguments in a launch function (freed by the caller); returns their count. */
static int launch_args(const Emitter *em, int k, char **args) {
  const KernelPlan *p = em->cand->kernels[k];
  int *params = xcalloc((size_t)p->nbuffers, sizeof(int));
  int np = kernel_params(em->dag, p, params);
  for (int i = 0; i < np; i++) args[i] = global_array(em, p->buffers[params[i]].value);
  free(params);
  args[np++] = xstrdup("n");
  if (kernel_takes_ld(em, k)) args[np++] = xstrdup("ld");
  return np;
}

/* Whether the candidate's launch needs the leading dimension: a kernel takes it.  (Every output
 * is saved by a kernel: the spec language returns no input and no variable twice.) */
static bool uses_ld(const Emitter *em) {
  for (int k = 0; k < em->cand->nkernels; k++)
    if (kernel_takes_ld(em, k)) return true;
  return false;
}

/* The parameters of every launch function: in, out, workspace, n, ld, then last. */
static void launch_params(StrBuf *sb, const Emitter *em, const char *head, const char *last,
                          bool workspace, bool ld) {
  char *in = xasprintf("const %s *const *in", em->real), *out = xasprintf("%s *const *out", em->real);
  char *args[6] = {in, out, (char *)(workspace ? "void *workspace" : "void * /* no workspace */"),
                   (char *)"size_t n",
                   (char *)(ld ? "size_t ld" : "size_t /* ld: no component-major array */"),
                   (char *)last};
  put_call(sb, 0, head, args, 6, " {\n");
  free(in);
  free(out);
}

/* "extern "C" int kas_cand01_launch(const float *const *in, ...) {" and what every launch
 * function starts with: nothing to do for n = 0, a leading dimension of 0 meaning n, the named
 * pointers. */
static void launch_head(StrBuf *sb, const Emitter *em, const char *ret, const char *fname,
                        const char *last) {
  char *head = xasprintf("%s%s %s", em->linkage, ret, fname);
  bool ld = uses_ld(em);
  launch_params(sb, em, head, last, em->nws > 0, ld);
  free(head);
  const char *value = strcmp(ret, "void") ? " 0" : "";
  sb_printf(sb, "  if (n == 0) return%s;\n", value);
  if (ld)
    sb_printf(sb, "  if (ld == 0) ld = n; /* component-major arrays of exactly n elements */\n"
                  "  if (ld < n) return%s;\n", strcmp(ret, "void") ? " (int)cudaErrorInvalidValue"
                                                                  : "");
  emit_launch_pointers(sb, em);
}

/* Kernel k's opt-in to smem bytes of shared memory (beyond 48 KB).  cudaFuncSetAttribute
 * clears an error that the caller left pending (a failed cudaMalloc), cudaFuncGetAttributes
 * does not (CUDA 13.0 on an H200, benchmarks/h200-2026-11-29-s43/pending.cu): the embed, which
 * leaves the caller's errors alone, sets the limit only while the kernel lacks it, on its first
 * call.  candNN/kernels.cu sets it every time, as the code its results files digest did. */
static void emit_smem_optin(StrBuf *sb, const Emitter *em, int k, const char *kn, int smem) {
  char *attr[3] = {xstrdup(kn), xstrdup("cudaFuncAttributeMaxDynamicSharedMemorySize"),
                   xasprintf("%d", smem)};
  if (em->launch_ex) {
    sb_printf(sb, "  /* cudaFuncSetAttribute would clear an error the caller left pending */\n"
                  "  cudaFuncAttributes kas_attr%d;\n", k + 1);
    char *get[2] = {xasprintf("&kas_attr%d", k + 1), xstrdup(kn)};
    put_call(sb, 1, "err = cudaFuncGetAttributes", get, 2, ";\n");
    free(get[0]);
    free(get[1]);
    sb_printf(sb, "  if (err != cudaSuccess) return (int)err;\n"
                  "  if (kas_attr%d.maxDynamicSharedSizeBytes < %d) { /* the first call */\n",
              k + 1, smem);
    put_call(sb, 2, "err = cudaFuncSetAttribute", attr, 3, ";\n");
    sb_puts(sb, "    if (err != cudaSuccess) return (int)err;\n  }\n");
  } else {
    put_call(sb, 1, "err = cudaFuncSetAttribute", attr, 3, ";\n");
    sb_puts(sb, "  if (err != cudaSuccess) return (int)err;\n");
  }
  for (int i = 0; i < 3; i++) free(attr[i]);
}

/* Whether kernel k needs more than 48 KB of shared memory, which its launch opts in to. */
static bool opts_in_smem(const Emitter *em, int k) {
  return em->staging[k].smem_bytes > KAS_SMEM_WITHOUT_OPTIN;
}

/* Kernel k's launch: its grid, the shared-memory opt-in beyond 48 KB, its arguments. */
static void emit_kernel_launch(StrBuf *sb, const Emitter *em, int k) {
  const KernelPlan *p = em->cand->kernels[k];
  char *kn = kernel_name(em, k);
  sb_printf(sb, "  /* kernel %d */\n", k + 1);
  sb_printf(sb, "  const size_t blocks%d = (n + %d) / %d;\n", k + 1, p->e - 1, p->e);
  sb_printf(sb, "  if (blocks%d > %ldu) return (int)cudaErrorInvalidConfiguration;\n", k + 1,
            MAX_GRID_X);
  int smem = em->staging[k].smem_bytes;
  if (opts_in_smem(em, k)) emit_smem_optin(sb, em, k, kn, smem);
  char *block = xasprintf("dim3(%d, %d, %d)", p->block.bx, p->block.by,
                          p->block.bz * groups_of(em));
  char *args[KAS_MAX_NODES * 2 + 4];
  if (em->launch_ex) { /* the launch's own error, the thread's pending one left alone */
    char *config[6] = {xasprintf("dim3((unsigned)blocks%d)", k + 1), block,
                       xasprintf("%d", smem), (char *)"stream", (char *)"NULL", (char *)"0"};
    char *open = xasprintf("const cudaLaunchConfig_t kas_config%d = {", k + 1);
    emit_list(sb, 1, open, config, 6, "}; /* no launch attributes */\n");
    free(open);
    free(config[0]);
    free(config[2]);
    args[0] = xasprintf("&kas_config%d", k + 1);
    args[1] = xstrdup(kn);
    int n = 2 + launch_args(em, k, args + 2);
    put_call(sb, 1, "err = cudaLaunchKernelEx", args, n, ";\n");
    for (int i = 0; i < n; i++) free(args[i]);
    sb_puts(sb, "  if (err != cudaSuccess) return (int)err;\n");
  } else {
    char *head = xasprintf("%s<<<(unsigned)blocks%d, %s, %d, stream>>>", kn, k + 1, block, smem);
    int n = launch_args(em, k, args);
    put_call(sb, 1, head, args, n, ";\n");
    for (int i = 0; i < n; i++) free(args[i]);
    sb_puts(sb, "  err = cudaGetLastError();\n  if (err != cudaSuccess) return (int)err;\n");
    free(head);
  }
  free(block);
  free(kn);
}

/* The start of a launch function's comment: "Runs the kernel" or "Runs the 3 kernels in order". */
static void runs_kernels(StrBuf *sb, int n) {
  if (n == 1) sb_puts(sb, "/* Runs the kernel");
  else sb_printf(sb, "/* Runs the %d kernels in order", n);
}

/* What the embed's launch function returns, and which pending error it leaves: all where no
 * kernel opts in to more than 48 KB of shared memory; otherwise all but on the first call in a
 * process, whose cudaFuncSetAttribute clears it (emit_smem_optin). */
static void launch_ex_errors(StrBuf *sb, const Emitter *em) {
  bool opts_in = false;
  for (int k = 0; k < em->cand->nkernels; k++) opts_in = opts_in || opts_in_smem(em, k);
  if (!opts_in) {
    sb_puts(sb, " on stream; returns 0 or the first cudaError_t, that of a\n"
                " * launch (cudaLaunchKernelEx returns each its own: an error left pending by an "
                "earlier CUDA\n * call is neither taken nor cleared).\n");
    return;
  }
  sb_puts(sb, " on stream; returns 0 or the first cudaError_t, that of a\n"
              " * launch or of reading or raising a kernel's shared-memory limit "
              "(cudaLaunchKernelEx returns\n * each its own: an error left pending by an earlier "
              "CUDA call is neither taken nor cleared,\n * but for the first call in a process, "
              "whose cudaFuncSetAttribute, raising the limit beyond\n * 48 KB, clears it).\n");
}

static void emit_device_launch(StrBuf *sb, const Emitter *em) {
  char *fn = xasprintf("kas_%s_workspace_bytes", em->entry);
  emit_workspace_bytes_fn(sb, em, fn);
  free(fn);
  runs_kernels(sb, em->cand->nkernels);
  if (em->launch_ex) launch_ex_errors(sb, em);
  else sb_puts(sb, " on stream; returns 0 or the first cudaError_t.\n");
  sb_puts(sb, " * in: the spec's inputs in `input` order; out: its outputs in `return` "
              "order. */\n");
  fn = xasprintf("kas_%s_launch", em->entry);
  launch_head(sb, em, "int", fn, "cudaStream_t stream");
  free(fn);
  if (em->nws) sb_puts(sb, "  if (!workspace) return (int)cudaErrorInvalidValue;\n");
  sb_puts(sb, "  cudaError_t err;\n");
  for (int k = 0; k < em->cand->nkernels; k++) emit_kernel_launch(sb, em, k);
  sb_puts(sb, "  return 0;\n}\n");
}

static void file_banner(StrBuf *sb, const Emitter *em, const char *file, const char *what) {
  char *from = c_safe_text(em->dag->spec->path ? em->dag->spec->path : "(spec)");
  sb_printf(sb, "/*\n * %s/%s — generated by kasgen %s\n * from %s; do not edit.\n * %s\n",
            em->name, file, KASGEN_VERSION, from, what);
  free(from);
  sb_printf(sb, " * %d kernel%s; predicted %.4f ns per element.\n */\n", em->cand->nkernels,
            em->cand->nkernels == 1 ? "" : "s", em->cand->predicted_ns_per_elem);
}

static const char align256_fn[] =
    "static size_t kas_align256(size_t bytes) { return (bytes + 255) & ~(size_t)255; }\n\n";

/* ------------------------------------------------------------------------------------------ */
/* A candidate: its plan, and the plan for arrays of any alignment behind one launch             */
/* ------------------------------------------------------------------------------------------ */

/* What one candidate's files are made from: one Emitter per plan (two when the candidate has a
 * plan for arrays of any alignment), their routines, and the names of its entry points. */
typedef struct {
  Emitter plan[2];
  int nplans;
  RoutineSet routines;
  const char *linkage; /* of the candidate's entry points */
  const char *prefix;  /* kas_<prefix>_launch, ... */
  char *names[3];      /* owned: the plans' prefixes and entries */
} CandidateText;

/* What an array argument the choosing launch checks is called there: in[i], out[o], workspace. */
static char *checked_pointer(const Emitter *em, int value) {
  int slot = emit_input_slot(em->dag, value);
  if (slot >= 0) return xasprintf("in[%d]", slot);
  slot = emit_output_slot(em->dag, value);
  if (slot >= 0) return xasprintf("out[%d]", slot);
  return xstrdup("workspace");
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends name (owned) to names[0 .. *n) unless it is there already (then frees it). */
static void add_name(char **names, int *n, char *name) {
  for (int i = 0; i < *n; i++)
    if (!strcmp(names[i], name)) {
      free(name);
      return;
    }
  names[(*n)++] = name;
}

/* The arrays the plan moves 16 bytes at a time (a routine using W at W > 1), each once, as
 * checked_pointer names them, sorted (in[], out[], workspace); returns their count. */
static int vector_arrays(const Emitter *em, char **names) {
  int n = 0;
  for (int k = 0; k < em->cand->nkernels; k++) {
    const KernelPlan *p = em->cand->kernels[k];
    for (int b = 0; b < p->nbuffers && p->w > 1; b++) {
      const Buffer *buf = &p->buffers[b];
      if ((buf->load && buf->load->ls.uses_w) || (buf->save && buf->save->ls.uses_w))
        add_name(names, &n, checked_pointer(em, buf->value));
    }
    /* Staged arrays are copied whole, 16 bytes at a time where the plan allows. */
    for (int i = 0; i < em->staging[k].n; i++) {
      const StagedArray *a = &em->staging[k].v[i];
      if (staging_copy_width(p, a) > 1)
        add_name(names, &n, checked_pointer(em, dag_api_arg(em->dag, a->arg)->values[0]));
    }
  }
  qsort(names, (size_t)n, sizeof *names, by_name);
  return n;
}

static const char aligned16_fn[] =
    "/* Whether p may be read and written 16 bytes at a time. */\n"
    "static bool kas_aligned16(const void *p) { return ((size_t)p & 15) == 0; }\n\n"
    "/* Whether p starts a block of `bytes` (a power of two) in memory. */\n"
    "static bool kas_aligned_to(const void *p, size_t bytes) {\n"
    "  return ((size_t)p & (bytes - 1)) == 0;\n}\n\n";

static const char rows_on_sectors_fn[] =
    "/* Whether every row of a component-major array at p, rows ld_bytes apart, starts on a\n"
    " * 32-byte sector. */\n"
    "static bool kas_rows_on_sectors(const void *p, size_t ld_bytes) {\n"
    "  return (((size_t)p | ld_bytes) & 31) == 0;\n}\n\n";

/* Which rows sector_rows lists. */
enum { ROWS_STAGED = 1, ROWS_HINTED = 2 };

/* The component-major arrays whose rows the plan for any alignment moves from sectors, as
 * checked_pointer names them, each once, sorted; returns their count.  ROWS_STAGED: the outputs
 * it stages (written out from sectors); ROWS_HINTED: the arrays it reads through kas_row_load.
 * The fast plan runs only where every row of these starts on a sector. */
static int sector_rows(const Emitter *any, unsigned which, char **names) {
  int n = 0;
  for (int k = 0; k < any->cand->nkernels; k++) {
    const KernelPlan *p = any->cand->kernels[k];
    for (int i = 0; i < any->staging[k].n && (which & ROWS_STAGED); i++) {
      const StagedArray *a = &any->staging[k].v[i];
      if (a->rows)
        add_name(names, &n, checked_pointer(any, dag_api_arg(any->dag, a->arg)->values[0]));
    }
    for (int b = 0; b < p->nbuffers && (which & ROWS_HINTED) && p->hint_rows; b++)
      if (unaligned_reads_rows(any->dag, any->target, &p->buffers[b]))
        add_name(names, &n, checked_pointer(any, p->buffers[b].value));
  }
  qsort(names, (size_t)n, sizeof *names, by_name);
  return n;
}

/* How many arrays sector_rows lists. */
static int sector_row_count(const Emitter *any, unsigned which) {
  char *names[KAS_MAX_NODES * 2];
  int n = sector_rows(any, which, names);
  for (int i = 0; i < n; i++) free(names[i]);
  return n;
}

/* The tests' helpers that the choosing launch of ct uses (unused static functions would warn). */
static void put_alignment_helpers(StrBuf *sb, const CandidateText *ct) {
  char *names[KAS_MAX_NODES * 2];
  int nvec = vector_arrays(&ct->plan[0], names);
  for (int i = 0; i < nvec; i++) free(names[i]);
  int nrows = sector_row_count(&ct->plan[1], ROWS_STAGED | ROWS_HINTED);
  if (nvec) sb_puts(sb, aligned16_fn);
  if (nrows) sb_puts(sb, rows_on_sectors_fn);
}

/* An array as the peeled launch names it after moving it h elements on: "in_h[0]". */
static char *moved_name(const char *name) {
  if (!strncmp(name, "in[", 3)) return xasprintf("in_h%s", name + 2);
  if (!strncmp(name, "out[", 4)) return xasprintf("out_h%s", name + 3);
  return xstrdup(name);
}

/* The tests under which the fast plan may run (malloc'ed, into tests; returns their count):
 * each array it moves 16 bytes at a time aligned (`vector`, a printf format taking the array's
 * name), and every row of the arrays sector_rows lists starting on a sector.  With
 * `moved`, the arrays are those moved h elements on (the peeled launch's). */
static int alignment_tests(const Emitter *fast, const Emitter *any, const char *vector,
                           bool moved, char **tests) {
  char *names[KAS_MAX_NODES * 2];
  int n = vector_arrays(fast, names), ntests = 0;
  for (int i = 0; i < n; i++) {
    char *name = moved ? moved_name(names[i]) : xstrdup(names[i]);
    tests[ntests++] = xasprintf(vector, name);
    free(name);
    free(names[i]);
  }
  n = sector_rows(any, ROWS_STAGED | ROWS_HINTED, names);
  for (int i = 0; i < n; i++) {
    char *name = moved ? moved_name(names[i]) : xstrdup(names[i]);
    tests[ntests++] = xasprintf("kas_rows_on_sectors(%s, lda * sizeof(%s))", name, any->real);
    free(name);
    free(names[i]);
  }
  return ntests;
}

/* "tests[0] && tests[1] ...", wrapped at MAX_LINE with continuation lines indented to `indent`
 * columns, then `after`; frees the tests. */
static void put_conjunction(StrBuf *sb, char **tests, int ntests, int indent, const char *after) {
  for (int i = 0; i < ntests; i++) {
    char *test = xasprintf("%s%s", tests[i], i + 1 < ntests ? " &&" : after);
    if (i && column(sb) + 1 + strlen(test) > MAX_LINE) sb_printf(sb, "\n%*s", indent, "");
    else if (i) sb_putc(sb, ' ');
    sb_puts(sb, test);
    free(test);
    free(tests[i]);
  }
}

/* "in[2] + h * 9" (element-major, 9 reals per element) or "in[2] + h" (component-major): API
 * argument k moved forward by h elements. */
static char *moved_argument(const Emitter *em, int k) {
  const Dag *dag = em->dag;
  bool input = k < dag->nin_args;
  int slot = input ? k : k - dag->nin_args;
  const char *name = input ? "in" : "out";
  if (target_arg_layout(em->target, dag, k) == LAYOUT_COMPONENT)
    return xasprintf("%s[%d] + h", name, slot);
  int record = dag_api_arg(dag, k)->record;
  if (record == 1) return xasprintf("%s[%d] + h", name, slot);
  return xasprintf("%s[%d] + h * %d", name, slot, record);
}

/* A sub-range of 16-byte-aligned arrays (elements [e0, e0 + n), e0 not a multiple of 4) leaves
 * every array pointer aligned to its real only, but moved alike: after the first h elements
 * they are aligned again.  So the first h elements run the plan of any alignment and the rest
 * the 16-byte plan, for the least h that starts every pointer the fast plan moves 16 bytes at a
 * time on a 128-byte line, else on 64 or 32 bytes (a 32-byte sector), else on 16: a warp's run
 * that starts mid-sector touches one sector more than it uses (measured on the H100: 16-byte
 * peeling left sub-ranges 4-9% slower than whole arrays).  docs/generated.md, "Alignment".
 * Emitted inside the choosing launch after the aligned case; falls through when no h works. */
static void emit_peeled_launch(StrBuf *sb, const Emitter *fast, const Emitter *any,
                               const char *h, const char *last, bool device) {
  const Dag *dag = fast->dag;
  char *tests[KAS_MAX_NODES * 4];
  int ntests = alignment_tests(fast, any, "kas_aligned_to(%s, line)", true, tests);
  sb_puts(sb, "  { /* peel h elements so that the rest starts on a line (or sector) */\n");
  sb_puts(sb, "    for (size_t line = 128; line >= 16; line /= 2) {\n");
  sb_printf(sb, "      for (size_t h = 1; h < line / sizeof(%s) && h < n; h++) {\n", fast->real);
  char *items[KAS_MAX_NODES * 2];
  for (int pass = 0; pass < 2; pass++) {
    int from = pass == 0 ? 0 : dag->nin_args;
    int to = pass == 0 ? dag->nin_args : dag->nin_args + dag->nout_args;
    if (to == from) continue;
    for (int k = from; k < to; k++) items[k - from] = moved_argument(fast, k);
    char *open = pass == 0 ? xasprintf("const %s *const in_h[%d] = {", fast->real, to - from)
                           : xasprintf("%s *const out_h[%d] = {", fast->real, to - from);
    emit_list(sb, 4, open, items, to - from, "};\n");
    free(open);
    for (int k = 0; k < to - from; k++) free(items[k]);
  }
  sb_puts(sb, "        if (!(");
  put_conjunction(sb, tests, ntests, 14, ")) continue;");
  sb_putc(sb, '\n');
  /* The first h elements through the plan of any alignment, the rest through the fast one. */
  char *ins = dag->nin_args ? "in_h" : "in", *stream = (char *)last; /* or order */
  char *peeled[6] = {"in", "out", "workspace", "h", "lda", stream};
  char *rest[6] = {ins, "out_h", "workspace", "n - h", "lda", stream};
  char *first = xasprintf("%skas_%s_launch%s", device ? "const int err = " : "", any->entry, h);
  char *second = xasprintf("%skas_%s_launch%s", device ? "return " : "", fast->entry, h);
  put_call(sb, 4, first, peeled, 6, ";\n");
  if (device) sb_puts(sb, "        if (err != 0) return err;\n");
  put_call(sb, 4, second, rest, 6, ";\n");
  if (!device) sb_puts(sb, "        return;\n");
  free(first);
  free(second);
  sb_puts(sb, "      }\n    }\n  }\n");
}

/* "before a, b and c after" into text; nothing when there are no names. */
static void put_series(StrBuf *text, const char *before, char *const *names, int n,
                       const char *after) {
  if (n == 0) return;
  sb_puts(text, before);
  for (int i = 0; i < n; i++)
    sb_printf(text, "%s%s", i == 0 ? "" : i + 1 == n ? " and " : ", ", names[i]);
  sb_puts(text, after);
}

/* The candidate's own entry points over its two plans: the workspace both need, and the launch
 * that runs the plan moving arrays 16 bytes at a time when they allow it (device: "" for the
 * kernels, "_host" for the CPU forms). */
static void emit_choosing_launch(StrBuf *sb, const CandidateText *ct, bool device) {
  const Emitter *fast = &ct->plan[0], *any = &ct->plan[1];
  const char *h = device ? "" : "_host";
  sb_printf(sb, "/* Bytes of workspace for n elements: what the larger of the two plans needs. */\n"
                "%ssize_t kas_%s%s_workspace_bytes(size_t n) {\n"
                "  const size_t aligned = kas_%s%s_workspace_bytes(n);\n"
                "  const size_t any = kas_%s%s_workspace_bytes(n);\n"
                "  return aligned > any ? aligned : any;\n}\n\n",
            ct->linkage, ct->prefix, device ? "" : "_host", fast->entry, device ? "" : "_host",
            any->entry, device ? "" : "_host");
  char *checked[KAS_MAX_NODES * 2], *rows[KAS_MAX_NODES * 2];
  int nchecked = vector_arrays(fast, checked);
  int nrows = sector_rows(any, ROWS_STAGED | ROWS_HINTED, rows);
  StrBuf text;
  sb_init(&text);
  sb_puts(&text, "Runs the candidate: ");
  put_series(&text, "its plan moves ", checked, nchecked,
             " 16 bytes at a time and runs where they are 16-byte aligned");
  put_series(&text, nchecked ? ", and where the rows of " : "its plan runs where the rows of ",
             rows, nrows, " start on 32-byte sectors");
  sb_puts(&text, "; elsewhere the same partition planned for arrays of any alignment (one real "
                 "per access");
  if (sector_row_count(any, ROWS_STAGED))
    sb_puts(&text, ", component-major outputs written out from sectors");
  if (sector_row_count(any, ROWS_HINTED))
    sb_puts(&text, ", loads of component-major rows asking L2 for whole 256-byte blocks");
  sb_puts(&text, ") runs.");
  put_comment(sb, 0, text.data);
  sb_free(&text);
  for (int i = 0; i < nchecked; i++) free(checked[i]);
  for (int i = 0; i < nrows; i++) free(rows[i]);
  char *head = xasprintf("%s%s kas_%s_launch%s", ct->linkage, device ? "int" : "void", ct->prefix,
                         h);
  launch_params(sb, fast, head, device ? "cudaStream_t stream" : "int order", true, true);
  free(head);
  sb_printf(sb, "  if (n == 0) return%s;\n", device ? " 0" : "");
  sb_puts(sb, "  const size_t lda = ld ? ld : n; /* the sub-launches have fewer elements */\n");
  sb_puts(sb, "  const bool aligned = ");
  char *tests[KAS_MAX_NODES * 4];
  int ntests = alignment_tests(fast, any, "kas_aligned16(%s)", false, tests);
  put_conjunction(sb, tests, ntests, 23, ";");
  const char *last = device ? "stream" : "order";
  if (device)
    sb_printf(sb, "\n  if (aligned)\n    return kas_%s_launch(in, out, workspace, n, ld, %s);\n",
              fast->entry, last);
  else
    sb_printf(sb, "\n  if (aligned) {\n    kas_%s_launch_host(in, out, workspace, n, ld, %s);\n"
                  "    return;\n  }\n", fast->entry, last);
  emit_peeled_launch(sb, fast, any, h, last, device);
  sb_printf(sb, "  %skas_%s_launch%s(in, out, workspace, n, ld, %s);\n}\n",
            device ? "return " : "", any->entry, h, last);
}

static char *kernels_cu(const CandidateText *ct, bool whole_file) {
  const Emitter *em = &ct->plan[0];
  StrBuf sb;
  sb_init(&sb);
  if (whole_file) {
    file_banner(&sb, em, "kernels.cu", "Fused kernels and their launch sequence (GPU).");
    sb_puts(&sb, "#include <cuda_runtime.h>\n#include \"../common/kas_device.h\"\n\n");
  }
  if (em->nws || (ct->nplans > 1 && ct->plan[1].nws)) sb_puts(&sb, align256_fn);
  sb_puts(&sb, ct->routines.text.data ? ct->routines.text.data : "");
  for (int p = 0; p < ct->nplans; p++)
    for (int k = 0; k < ct->plan[p].cand->nkernels; k++) emit_device_kernel(&sb, &ct->plan[p], k);
  for (int p = 0; p < ct->nplans; p++) {
    emit_device_launch(&sb, &ct->plan[p]);
    sb_putc(&sb, '\n');
  }
  if (ct->nplans > 1) {
    put_alignment_helpers(&sb, ct);
    emit_choosing_launch(&sb, ct, true);
  }
  if (sb.len >= 2 && sb.data[sb.len - 2] == '\n') sb.data[--sb.len] = '\0';
  return sb_take(&sb);
}

/* ------------------------------------------------------------------------------------------ */
/* kernels_host.cpp                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* Calls f for each loop-local buffer of kernel k's kept loops (reloads) that steps [from, to)
 * use, each name once (the runs of one loop in several iterations of an outer one share it). */
typedef void ReloadFn(StrBuf *sb, int level, const Emitter *em, int k, const char *name,
                      int reals);
static void each_reload(const Emitter *em, int k, int from, int to, ReloadFn *f, StrBuf *sb,
                        int level) {
  const KernelPlan *p = em->cand->kernels[k];
  char **seen = NULL;
  int nseen = 0;
  for (int r = 0; r < em->loops[k].n; r++) {
    const RollRun *run = &em->loops[k].runs[r];
    for (int i = 0; i < run->nreload; i++) {
      const RollReload *rl = &run->reloads[i];
      if (run->from + rl->at < from || run->from + rl->at >= to) continue;
      char *name = reload_name(em, p, run, i);
      if (name_taken(seen, nseen, name)) {
        free(name);
        continue;
      }
      f(sb, level, em, k, name, p->buffers[rl->buffer].reg_floats);
      seen = xrealloc(seen, sizeof *seen * (size_t)(nseen + 1));
      seen[nseen++] = name;
    }
  }
  free_strings(seen, nseen);
}

static void put_view(StrBuf *sb, int level, const Emitter *em, int k, const char *name,
                     int reals) {
  (void)k;
  indent(sb, level);
  sb_printf(sb, "%s *const %s = %s_all + (size_t)lin * %d;\n", em->real, name, name, reals);
}

static void put_alloc(StrBuf *sb, int level, const Emitter *em, int k, const char *name,
                      int reals) {
  indent(sb, level);
  sb_printf(sb, "%s *const %s_all = %s(%d * %d); /* a kept loop's own */\n", em->real, name,
            em->cand->kernels[k]->precision == PREC_DOUBLE ? "kas_host_doubles"
                                                           : "kas_host_floats",
            em->cand->kernels[k]->threads, reals);
}

static void put_release(StrBuf *sb, int level, const Emitter *em, int k, const char *name,
                        int reals) {
  (void)em, (void)k, (void)reals;
  indent(sb, level);
  sb_printf(sb, "free(%s_all);\n", name);
}

static void put_poison(StrBuf *sb, int level, const Emitter *em, int k, const char *name,
                       int reals) {
  indent(sb, level);
  sb_printf(sb, "kas_host_poison(%s_all, %d * %d);\n", name, em->cand->kernels[k]->threads,
            reals);
}

/* The host's loop-local buffers of the kept loops that steps [from, to) use: views of this
 * thread's part, as for the plan's register buffers. */
static void host_reload_views(StrBuf *sb, int level, const Emitter *em, int k, int from, int to) {
  each_reload(em, k, from, to, put_view, sb, level);
}

/* Register pointers of the phase's thread: r_x = r_x_all + lin * reals, for those used (under
 * their names in kept loops). */
static void host_register_views(StrBuf *sb, int level, const Emitter *em, int k, int from,
                                int to, const RollRun *carries) {
  const KernelPlan *p = em->cand->kernels[k];
  const int *alias = em->loops[k].alias;
  bool *used = xcalloc((size_t)(p->nbuffers ? p->nbuffers : 1), sizeof *used);
  for (int s = from; s < to; s++)
    for (int i = 0; i < p->steps[s].nbuf; i++)
      used[alias ? alias[p->steps[s].buf[i]] : p->steps[s].buf[i]] = true;
  for (int c = 0; carries && c < carries->ncarry; c++)
    used[carries->carry_in[c]] = used[carries->carry_out[c]] = true;
  host_reload_views(sb, level, em, k, from, to);
  bool grouped = groups_of(em) > 1;
  bool copies = grouped && !threads_one_copy(em->dag, p); /* of shared memory, one per group */
  int rb = target_real_bytes(p->precision);
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *buf = &p->buffers[b];
    if (!used[b] || (buf->place != PLACE_REGISTER && !copies)) continue;
    char *name = buffer_name(em->dag, buf);
    indent(sb, level);
    if (buf->place == PLACE_REGISTER) {
      sb_printf(sb, "%s *const %s = %s_all + (size_t)%s * %d;\n", em->real, name, name,
                grouped ? "lin_block" : "lin", buf->reg_floats);
    } else { /* the thread's group's shared buffer (threads.c) */
      char *at = group_smem_offset(em, p, buf->offset / rb);
      sb_printf(sb, "%s *const %s = %s_all + %s;\n", em->real, name, name, at);
      free(at);
    }
    free(name);
  }
  free(used);
}

/* One phase: every thread of the block, in the requested order, runs steps [from, to) (of the
 * body of run, when it is one of a kept loop's phases; its last phase hands the carried values
 * on). */
static void emit_host_phase(StrBuf *sb, int level, const Emitter *em, const KernelPlan *p, int k,
                            int from, int to, const RollRun *run) {
  int threads = threads_in_block(em->dag, p);
  indent(sb, level);
  sb_printf(sb, "for (int t = 0; t < %d; t++) {\n", threads);
  indent(sb, level + 1);
  if (groups_of(em) > 1) { /* the block's thread, its group and its place in the group */
    const Dag *d = em->dag;
    char *var = group_var(em);
    sb_printf(sb, "const int lin_block = order > 0 ? t : %d - t;\n", threads - 1);
    indent(sb, level + 1);
    sb_printf(sb, "const int %s = ", var);
    if (d->group_first) sb_printf(sb, "%d + ", d->group_first);
    if (d->groups2 > 1) {
      char *var2 = group_var2(em);
      sb_printf(sb, "lin_block / %d, %s = ", p->threads * d->groups2, var2);
      if (d->group_first2) sb_printf(sb, "%d + ", d->group_first2);
      sb_printf(sb, "lin_block / %d %% %d", p->threads, d->groups2);
      free(var2);
    } else {
      sb_printf(sb, "lin_block / %d", p->threads);
    }
    sb_printf(sb, ", lin = lin_block %% %d;\n", p->threads);
    free(var);
  } else {
    sb_printf(sb, "const int lin = order > 0 ? t : %d - t;\n", p->threads - 1);
  }
  unsigned used = coords_used(em, k, from, to);
  static const char *const names[3] = {"tx", "ty", "tz"};
  for (int c = 0; c < 3; c++)
    if (used >> c & 1) declare_coord(sb, level + 1, names[c], c, p->block);
  const RollRun *carries = run && to == run->from + run->body ? run : NULL;
  host_register_views(sb, level + 1, em, k, from, to, carries);
  emit_steps(sb, level + 1, em, p, k, from, to, false, run);
  if (carries) emit_carries(sb, level + 1, em, p, k, run);
  indent(sb, level);
  sb_puts(sb, "}\n");
}

/* Whether a host phase of kernel k (in run's body, or outside any run) ends before step s: at a
 * barrier, or where a kept loop with barriers inside starts. */
static bool phase_ends_before(const Emitter *em, int k, int s, const RollRun *run) {
  const KernelPlan *p = em->cand->kernels[k];
  if (barrier_at(em, k, barrier_step(p, s, run))) return true;
  const RollRun *starts = run ? NULL : run_at(em, k, s);
  return starts && !run_in_phase(p, starts);
}

/* Steps [from, to) of host kernel k as phases between barriers; a kept loop with barriers inside
 * runs its phases in a loop (one without stays inside a phase, as on the GPU).  run: the loop
 * whose body [from, to) is. */
static void emit_host_steps(StrBuf *sb, int level, const Emitter *em, const KernelPlan *p, int k,
                            int from, int to, const RollRun *run) {
  for (int s = from; s < to;) {
    const RollRun *starts = run ? NULL : run_at(em, k, s);
    if (starts && !run_in_phase(p, starts)) {
      if (s > 0 && barrier_before_loop(p, starts))
        emit_barrier(sb, level, &p->steps[s], false);
      loop_head(sb, level, em, p, starts, false);
      emit_host_steps(sb, level + 1, em, p, k, s, s + starts->body, starts);
      indent(sb, level);
      sb_puts(sb, "}\n");
      s = starts->from + starts->count * starts->body;
      continue;
    }
    const Step *bs = barrier_step(p, s, run);
    if (barrier_at(em, k, bs) && (s > 0 || run)) emit_barrier(sb, level, bs, false);
    int e = s + 1;
    while (e < to && !phase_ends_before(em, k, e, run)) e++;
    emit_host_phase(sb, level, em, p, k, s, e, run);
    s = e;
  }
}

/* Allocation (begin) or release of a host kernel's shared memory and register files. */
static void host_block_memory(StrBuf *sb, const Emitter *em, int k, bool begin) {
  const KernelPlan *p = em->cand->kernels[k];
  const Staging *st = &em->staging[k];
  int rb = target_real_bytes(p->precision);
  int smem_reals = (st->smem_bytes + rb - 1) / rb;
  const char *alloc = rb == 8 ? "kas_host_doubles" : "kas_host_floats";
  if (smem_reals && begin)
    sb_printf(sb, "  %s *const smem = %s(%d);\n", em->real, alloc, smem_reals);
  else if (smem_reals)
    sb_puts(sb, "  free(smem);\n");
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *buf = &p->buffers[b];
    if (!named(em, k, b)) continue;
    char *name = buffer_name(em->dag, buf);
    if (buf->place == PLACE_REGISTER && begin)
      sb_printf(sb, "  %s *const %s_all = %s(%d * %d);\n", em->real, name, alloc,
                threads_in_block(em->dag, p), buf->reg_floats);
    else if (buf->place == PLACE_REGISTER)
      sb_printf(sb, "  free(%s_all);\n", name);
    else if (begin && groups_of(em) > 1 && !threads_one_copy(em->dag, p)) /* see the phases */
      sb_printf(sb, "  %s *const %s_all = smem;\n", em->real, name);
    else if (begin && buf->offset == 0)
      sb_printf(sb, "  %s *const %s = smem;\n", em->real, name);
    else if (begin)
      sb_printf(sb, "  %s *const %s = smem + %d;\n", em->real, name, buf->offset / rb);
    free(name);
  }
  for (int i = 0; i < st->n && begin; i++) {
    if (st->v[i].buffer >= 0) continue; /* the copy is in a buffer declared above */
    char *name = staged_name(em, st->v[i].arg);
    sb_printf(sb, "  %s *const %s = smem + %d; /* staged (staging.c) */\n", em->real, name,
              st->v[i].offset / rb);
    free(name);
  }
  each_reload(em, k, 0, p->nsteps, begin ? put_alloc : put_release, sb, 1);
}

static void emit_host_kernel(StrBuf *sb, const Emitter *em, int k) {
  const KernelPlan *p = em->cand->kernels[k];
  char *kn = kernel_name(em, k);
  int phases = 1;
  for (int s = 1; s < p->nsteps; s++) phases += barrier_at(em, k, &p->steps[s]);
  sb_printf(sb, "/* Kernel %d (see kernels.cu): %d phase%s between barriers. */\n", k + 1, phases,
            phases == 1 ? "" : "s");
  sb_printf(sb, "static void %s_host(", kn);
  kernel_param_list(sb, em, k, false);
  sb_puts(sb, ",\n    int order) {\n");
  free(kn);
  sb_printf(sb, "  const size_t blocks = (n + %d) / %d;\n", p->e - 1, p->e);
  host_block_memory(sb, em, k, true);
  sb_puts(sb, "  for (size_t block = 0; block < blocks; block++) {\n");
  sb_printf(sb, "    const size_t e0 = block * %d;\n", p->e);
  int rb = target_real_bytes(p->precision);
  int smem = em->staging[k].smem_bytes;
  if (smem) sb_printf(sb, "    kas_host_poison(smem, %d);\n", (smem + rb - 1) / rb);
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *buf = &p->buffers[b];
    if (buf->place != PLACE_REGISTER || !named(em, k, b)) continue;
    char *name = buffer_name(em->dag, buf);
    sb_printf(sb, "    kas_host_poison(%s_all, %d * %d);\n", name, threads_in_block(em->dag, p),
              buf->reg_floats);
    free(name);
  }
  each_reload(em, k, 0, p->nsteps, put_poison, sb, 2);
  bool staged_in = stages(em, k, false), staged_out = stages(em, k, true);
  if (staged_in || staged_out)
    sb_printf(sb, "    const size_t ne = n - e0 < %d ? n - e0 : %d; /* elements of this block */\n",
              p->e, p->e);
  emit_staging_copies(sb, 2, em, k, false, false);
  emit_host_steps(sb, 2, em, p, k, 0, p->nsteps, NULL);
  emit_staging_copies(sb, 2, em, k, true, false);
  sb_puts(sb, "  }\n");
  host_block_memory(sb, em, k, false);
  sb_puts(sb, "}\n\n");
}

static void emit_host_launch(StrBuf *sb, const Emitter *em) {
  char *fn = xasprintf("kas_%s_host_workspace_bytes", em->entry);
  emit_workspace_bytes_fn(sb, em, fn);
  free(fn);
  runs_kernels(sb, em->cand->nkernels);
  sb_puts(sb, " on the CPU, the threads of each phase in ascending\n"
              " * (order > 0) or descending order. */\n");
  fn = xasprintf("kas_%s_launch_host", em->entry);
  launch_head(sb, em, "void", fn, "int order");
  free(fn);
  for (int k = 0; k < em->cand->nkernels; k++) {
    char *head = kernel_name(em, k);
    char *call = xasprintf("%s_host", head);
    char *args[KAS_MAX_NODES * 2 + 3];
    int n = launch_args(em, k, args);
    args[n++] = xstrdup("order");
    put_call(sb, 1, call, args, n, ";\n");
    for (int i = 0; i < n; i++) free(args[i]);
    free(call);
    free(head);
  }
  sb_puts(sb, "}\n");
}

/* The host form of a candidate's kernels.  whole_file: kernels_host.cpp with its includes,
 * helpers and routines; otherwise the kernels and launch functions alone, for a translation unit
 * that holds the candidate's device text (kernels_cu), whose routines and helpers they share
 * (the embed's kas_<stem>_host). */
static char *kernels_host_text(const CandidateText *ct, bool whole_file) {
  const Emitter *em = &ct->plan[0];
  StrBuf sb;
  sb_init(&sb);
  if (whole_file) {
    file_banner(&sb, em, "kernels_host.cpp",
                "The kernels of kernels.cu run on the CPU: each block's threads one after "
                "another,\n * phase by phase between barriers, in ascending (order +1) or "
                "descending (-1) order.");
    sb_puts(&sb, "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
                 "#include <string.h>\n#include \"../common/kas_device.h\"\n"
                 "#include \"../common/kas_host.h\"\n\n");
    if (em->nws || (ct->nplans > 1 && ct->plan[1].nws)) sb_puts(&sb, align256_fn);
    sb_puts(&sb, ct->routines.text.data ? ct->routines.text.data : "");
  }
  for (int p = 0; p < ct->nplans; p++)
    for (int k = 0; k < ct->plan[p].cand->nkernels; k++) emit_host_kernel(&sb, &ct->plan[p], k);
  for (int p = 0; p < ct->nplans; p++) {
    emit_host_launch(&sb, &ct->plan[p]);
    if (p + 1 < ct->nplans) sb_putc(&sb, '\n');
  }
  if (ct->nplans > 1) {
    sb_putc(&sb, '\n');
    if (whole_file) put_alignment_helpers(&sb, ct);
    emit_choosing_launch(&sb, ct, false);
  }
  return sb_take(&sb);
}

/* ------------------------------------------------------------------------------------------ */
/* Entry points                                                                                */
/* ------------------------------------------------------------------------------------------ */

/* A compute step passes its call's arguments and result, a load or save its one buffer. */
static bool step_buffers_valid(const KernelPlan *p, const Step *st) {
  int want = st->kind == ROUTINE_COMPUTE ? st->impl->fn->nparams + 1 : 1;
  if (st->nbuf != want) return false;
  for (int k = 0; k < st->nbuf; k++)
    if (st->buf[k] < 0 || st->buf[k] >= p->nbuffers) return false;
  return true;
}

/* Whether io is one of the implementation's load or save routines. */
static bool routine_of(const Impl *im, const IoRoutine *io) {
  return io && ((io >= im->loads && io < im->loads + im->nloads) ||
                (io >= im->saves && io < im->saves + im->nsaves));
}

/* Rejects plans the emitter cannot turn into correct code (they would be bugs upstream). */
static bool check_plan(const Emitter *em, int k) {
  const KernelPlan *p = em->cand->kernels[k];
  const char *bad = NULL;
  if (p->e <= 0 || p->threads <= 0 || p->threads > KAS_MAX_THREADS)
    bad = "E or the thread count is out of range";
  else if (p->block.bx * p->block.by * p->block.bz != p->threads)
    bad = "block shape does not match the thread count";
  for (int s = 0; s < p->nsteps && !bad; s++) {
    const Step *st = &p->steps[s];
    if (st->call < 0 || st->call >= p->ncalls || st->impl != p->impl[st->call])
      bad = "a step names a call outside the kernel";
    else if (!step_buffers_valid(p, st))
      bad = "a step uses a value without a buffer";
    else if (st->kind != ROUTINE_COMPUTE && !routine_of(st->impl, st->io))
      bad = "a step names a load/save routine the implementation lacks";
    else if (impl_threads(p->impl[st->call], p->e) > p->threads)
      bad = "a call has more threads than the kernel";
  }
  for (int b = 0; b < p->nbuffers && !bad; b++) {
    const Buffer *buf = &p->buffers[b];
    if (buf->place == PLACE_SHARED &&
        (buf->offset < 0 || buf->offset % 16 || buf->offset + buf->bytes > p->smem_bytes))
      bad = "a shared buffer lies outside the kernel's shared memory or is not 16-byte aligned";
    if (buf->place == PLACE_REGISTER && buf->reg_floats <= 0)
      bad = "a register buffer has no floats";
  }
  if (bad) diag_error((SrcLoc){0}, "%s, kernel %d: invalid kernel plan: %s", em->name, k + 1, bad);
  return !bad;
}

/* Checks the plans and instantiates their routines; false after a diagnostic. */
static bool emitter_init(Emitter *em, CandidateText *ct, const Dag *dag, const Target *t,
                         const Candidate *cand, const char *name, const char *prefix,
                         const char *entry, const char *linkage) {
  if (!t) t = target_default();
  *em = (Emitter){.dag = candidate_dag(dag, cand), .cand = cand, .target = t, .name = name,
                  .prefix = prefix,
                  .entry = entry, .linkage = linkage, .real = target_real_name(t->precision),
                  .io = emit_io_names(dag), .routines = &ct->routines};
  bool ok = true;
  for (int k = 0; k < cand->nkernels && ok; k++) ok = check_plan(em, k);
  ok = ok && prepare_routines(em);
  if (ok) collect_workspace(em);
  return ok;
}

/* Both plans of a candidate (unaligned: its plan for arrays of any alignment, or NULL), their
 * entry points named kas_<prefix>_...; false after a diagnostic. */
static bool candidate_text_init(CandidateText *ct, const Dag *dag, const Target *t,
                                const Candidate *cand, const Candidate *unaligned,
                                const char *name, const char *prefix, bool embedded) {
  *ct = (CandidateText){.nplans = unaligned ? 2 : 1, .prefix = prefix,
                        .linkage = embedded ? "" : "extern \"C\" "};
  if (!unaligned)
    return emitter_init(&ct->plan[0], ct, dag, t, cand, name, prefix, prefix, ct->linkage);
  ct->names[0] = xasprintf("%s_aligned", prefix);
  ct->names[1] = xasprintf("%s_any", prefix);
  bool ok = emitter_init(&ct->plan[0], ct, dag, t, cand, name, prefix, ct->names[0], "static ");
  ct->nplans = 1;
  if (ok) { /* the same layouts; the plans carry their vector width and staged rows */
    ok = emitter_init(&ct->plan[1], ct, dag, t, unaligned, name, ct->names[1], ct->names[1],
                      "static ");
    ct->nplans = 2;
  }
  return ok;
}

static void candidate_text_free(CandidateText *ct) {
  for (int p = 0; p < ct->nplans; p++) emitter_free(&ct->plan[p]);
  routine_set_free(&ct->routines);
  for (int k = 0; k < 3; k++) free(ct->names[k]);
}

char *emit_cuda_kernels(const Dag *dag, const Target *t, const Candidate *cand,
                        const Candidate *unaligned, const char *name, const char *prefix,
                        bool embedded) {
  CandidateText ct;
  bool ok = candidate_text_init(&ct, dag, t, cand, unaligned, name, prefix, embedded);
  char *text = ok ? kernels_cu(&ct, !embedded) : NULL;
  candidate_text_free(&ct);
  return text;
}

char *emit_cuda_embed_kernels(const Dag *dag, const Target *t, const Candidate *cand,
                              const Candidate *unaligned, const char *name, const char *prefix) {
  CandidateText ct;
  bool ok = candidate_text_init(&ct, dag, t, cand, unaligned, name, prefix, true);
  for (int p = 0; p < ct.nplans; p++) ct.plan[p].launch_ex = true;
  char *text = ok ? kernels_cu(&ct, false) : NULL;
  candidate_text_free(&ct);
  return text;
}

char *emit_code_digest(const Dag *dag, const Target *t, const Candidate *cand) {
  char *text = emit_cuda_kernels(dag, t, cand, NULL, "c", "c", true);
  if (!text) return NULL;
  char *digest = xasprintf("%016llx", (unsigned long long)fnv1a(14695981039346656037ull, text));
  free(text);
  return digest;
}

char *emit_cuda_host_kernels(const Dag *dag, const Target *t, const Candidate *cand,
                             const Candidate *unaligned, const char *name, const char *prefix) {
  CandidateText ct;
  bool ok = candidate_text_init(&ct, dag, t, cand, unaligned, name, prefix, true);
  char *text = ok ? kernels_host_text(&ct, false) : NULL;
  candidate_text_free(&ct);
  return text;
}

bool emit_cuda_candidate(EmitDir *d, const Dag *dag, const Target *t, const Candidate *cand,
                         const Candidate *unaligned, const char *name) {
  CandidateText ct;
  bool ok = candidate_text_init(&ct, dag, t, cand, unaligned, name, name, false);
  if (ok) {
    char *cu = kernels_cu(&ct, true);
    char *host = kernels_host_text(&ct, true);
    char *cu_path = xasprintf("%s/kernels.cu", name);
    char *host_path = xasprintf("%s/kernels_host.cpp", name);
    ok = emit_dir_write(d, cu_path, cu) && emit_dir_write(d, host_path, host);
    free(cu);
    free(host);
    free(cu_path);
    free(host_path);
  }
  candidate_text_free(&ct);
  return ok;
}
