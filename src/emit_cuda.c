/*
 * emit_cuda.c — turns kernel plans into CUDA source (DESIGN.md §7, seed 004 §3.7 and §4.4).
 *
 * For one candidate (a partition of the DAG into KernelPlans) it writes
 *   <name>/kernels.cu        the instantiated device functions, one __global__ kernel per plan
 *                            and the host launch sequence (kas_<name>_launch);
 *   <name>/kernels_host.cpp  the same kernels as barrier-delimited phases that a CPU runs thread
 *                            by thread in ascending or descending order (kas_<name>_launch_host),
 *                            so that a missing barrier shows up as an order-dependent result;
 * and per spec the files the candidates share: common/kas_device.h, common/kas_refs.c (CPU
 * references), common/cpu_graph.c (the chain of references in double) and common/check_cpu.cpp
 * (runs every candidate's host form in both orders against the CPU graph).
 *
 * The kernel body is generated once as a list of "step groups" (consecutive routine calls that
 * share thread coordinates and have no barrier between them); the GPU form emits barriers as
 * __syncthreads() and the host form as phase boundaries, so both forms run the same calls.
 * docs/generated.md is the contract for file names and signatures.
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_GRID_X 2147483647L /* gridDim.x limit of every GPU since compute capability 3.0 */
#define DEFAULT_SMEM_LIMIT (48 * 1024) /* above this a kernel must opt in */

/* ------------------------------------------------------------------------------------------ */
/* Names                                                                                       */
/* ------------------------------------------------------------------------------------------ */

/* "<variable>_<version>": unique because the version after the last '_' is a plain number. */
static char *value_ident(const Dag *dag, int value) {
  const Value *v = &dag->values[value];
  return xasprintf("%s_%d", dag->spec->vars[v->var].name, v->version);
}

/* A label for comments: "vec3NodeStiff.1". */
static const char *value_label(const Dag *dag, int value) {
  const Value *v = &dag->values[value];
  return v->label ? v->label : dag->spec->vars[v->var].name;
}

static int value_floats(const Dag *dag, int value) { return dag->values[value].type->size; }

int emit_input_slot(const Dag *dag, int value) {
  const Value *v = &dag->values[value];
  return v->producer < 0 ? v->arg : -1;
}

int emit_output_slot(const Dag *dag, int value) {
  const Value *v = &dag->values[value];
  return v->is_output ? v->arg : -1;
}

/* Comment text must not close the comment it sits in, nor span lines. */
static void put_comment_text(StrBuf *sb, const char *s) {
  for (; s && *s; s++) {
    if (s[0] == '*' && s[1] == '/') {
      sb_puts(sb, "* ");
      continue;
    }
    sb_putc(sb, *s == '\n' ? ' ' : *s);
  }
}

static void indent(StrBuf *sb, int level) {
  for (int i = 0; i < level; i++) sb_puts(sb, "  ");
}

/* ------------------------------------------------------------------------------------------ */
/* Plan queries                                                                                */
/* ------------------------------------------------------------------------------------------ */

static int find_buffer(const KernelPlan *p, int value) {
  for (int b = 0; b < p->nbuffers; b++)
    if (p->buffers[b].value == value) return b;
  return -1;
}

static const DagNode *call_node(const Dag *dag, const KernelPlan *p, int call) {
  return &dag->nodes[p->order[call]];
}

static BlockShape call_shape(const KernelPlan *p, int call) {
  return impl_shape(p->impl[call], p->e);
}

static bool same_shape(BlockShape a, BlockShape b) {
  return a.bx == b.bx && a.by == b.by && a.bz == b.bz;
}

static const IoRoutine *step_io(const KernelPlan *p, const Step *s) {
  const Impl *im = p->impl[s->call];
  if (s->kind == ROUTINE_LOAD) {
    for (int j = 0; j < im->nloads; j++)
      if (im->loads[j].index == s->io_index) return &im->loads[j];
  } else if (s->kind == ROUTINE_SAVE) {
    for (int j = 0; j < im->nsaves; j++)
      if (im->saves[j].index == s->io_index) return &im->saves[j];
  }
  return NULL;
}

/* The buffers a step passes, in the routine's pattern-argument order (compute: inputs, then the
 * output; load/save: the one buffer).  Returns the count, or -1 + error if one is missing. */
static int step_buffers(const Dag *dag, const KernelPlan *p, const Step *s, int *bufs) {
  if (s->kind != ROUTINE_COMPUTE) {
    bufs[0] = s->buffer;
    return s->buffer >= 0 && s->buffer < p->nbuffers ? 1 : -1;
  }
  const DagNode *node = call_node(dag, p, s->call);
  int nb = 0;
  for (int k = 0; k < node->nargs; k++) bufs[nb++] = find_buffer(p, node->args[k]);
  bufs[nb++] = find_buffer(p, node->result);
  for (int k = 0; k < nb; k++)
    if (bufs[k] < 0) return -1;
  return nb;
}

/* ------------------------------------------------------------------------------------------ */
/* Routine instantiation: each (routine, E, placement) once per candidate                      */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
  char **names; /* instantiated names, for deduplication */
  int n, cap;
  StrBuf text; /* the instantiated definitions, each after its comment */
} RoutineSet;

static bool routine_set_has(const RoutineSet *rs, const char *name) {
  for (int i = 0; i < rs->n; i++)
    if (!strcmp(rs->names[i], name)) return true;
  return false;
}

static void routine_set_free(RoutineSet *rs) {
  for (int i = 0; i < rs->n; i++) free(rs->names[i]);
  free(rs->names);
  sb_free(&rs->text);
}

static const char *kind_name(RoutineKind k) {
  return k == ROUTINE_LOAD ? "load" : k == ROUTINE_SAVE ? "save" : "compute";
}

/* Comment naming function, implementation, routine and placement of one instantiation. */
static void routine_comment(StrBuf *sb, const Impl *im, const Step *s, const IoRoutine *io,
                            const Placement *pl, int npl) {
  sb_printf(sb, "/* %s, implementation %s, %s", im->fn->name, im->name, kind_name(s->kind));
  char *variant = c_safe_text(io && io->variant ? io->variant : ""); /* INI free text */
  if (io) sb_printf(sb, " %d (%s)", io->index, variant);
  free(variant);
  sb_puts(sb, "; buffers:");
  for (int k = 0; k < npl; k++) {
    const char *what = s->kind != ROUTINE_COMPUTE ? "buffer" : k + 1 == npl ? "out" : NULL;
    if (what)
      sb_printf(sb, " %s", what);
    else
      sb_printf(sb, " in%d", k);
    sb_printf(sb, " %s", pl[k] == PLACE_REGISTER ? "register" : "shared");
    if (k + 1 < npl) sb_putc(sb, ',');
  }
  sb_puts(sb, " */\n");
}

/* Instantiates the routine of step s (if not yet done) and returns its name in *name_out. */
static bool instantiate_step(RoutineSet *rs, const Dag *dag, const KernelPlan *p, const Step *s,
                             char **name_out) {
  int bufs[KAS_MAX_ARGS + 1];
  int nb = step_buffers(dag, p, s, bufs);
  const Impl *im = p->impl[s->call];
  if (nb < 0) {
    diag_error((SrcLoc){0}, "kernel plan of %s: a %s step of call %d has no buffer", im->name,
               kind_name(s->kind), s->call);
    return false;
  }
  Placement pl[KAS_MAX_ARGS + 1];
  for (int k = 0; k < nb; k++) pl[k] = p->buffers[bufs[k]].place;
  char *name = NULL;
  char *text = instantiate_routine(im, s->kind, s->io_index, p->e, pl, &name);
  if (!text) return false;
  if (!routine_set_has(rs, name)) {
    if (rs->n == rs->cap) {
      rs->cap = rs->cap ? 2 * rs->cap : 16;
      rs->names = xrealloc(rs->names, (size_t)rs->cap * sizeof *rs->names);
    }
    rs->names[rs->n++] = xstrdup(name);
    routine_comment(&rs->text, im, s, step_io(p, s), pl, nb);
    sb_puts(&rs->text, text);
    sb_puts(&rs->text, text[0] && text[strlen(text) - 1] == '\n' ? "\n" : "\n\n");
  }
  free(text);
  *name_out = name;
  return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Candidate context: where each value lives in global memory                                 */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
  const Dag *dag;
  const Candidate *cand;
  const char *name;
  int *ws_values; /* intermediates crossing kernels, in workspace order */
  int nws;
  char ***routine_names; /* [kernel][step]: instantiated routine called by the step */
  RoutineSet routines;
} Emitter;

/* The C expression of a value's global array inside a launch function. */
static char *global_array(const Emitter *em, int value) {
  int slot = emit_input_slot(em->dag, value);
  if (slot >= 0) return xasprintf("in[%d]", slot);
  slot = emit_output_slot(em->dag, value);
  if (slot >= 0) return xasprintf("out[%d]", slot);
  char *id = value_ident(em->dag, value);
  char *s = xasprintf("w_%s", id);
  free(id);
  return s;
}

static bool is_workspace_value(const Emitter *em, int value) {
  return emit_input_slot(em->dag, value) < 0 && emit_output_slot(em->dag, value) < 0;
}

/* Values saved by one kernel for a later one that are neither inputs nor outputs of the spec. */
static void collect_workspace(Emitter *em) {
  em->ws_values = xcalloc((size_t)em->dag->nvalues, sizeof(int));
  for (int v = 0; v < em->dag->nvalues; v++) {
    if (!is_workspace_value(em, v)) continue;
    for (int k = 0; k < em->cand->nkernels; k++) {
      int b = find_buffer(em->cand->kernels[k], v);
      if (b >= 0 && em->cand->kernels[k]->buffers[b].saved) {
        em->ws_values[em->nws++] = v;
        break;
      }
    }
  }
}

/* The buffers of a kernel that are parameters (loaded or saved), in parameter order: the loaded
 * ones first.  Returns the count. */
static int kernel_params(const KernelPlan *p, int *params) {
  int n = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int b = 0; b < p->nbuffers; b++)
      if (pass == 0 ? p->buffers[b].loaded : p->buffers[b].saved && !p->buffers[b].loaded)
        params[n++] = b;
  return n;
}

static bool prepare_routines(Emitter *em) {
  const Candidate *c = em->cand;
  em->routine_names = xcalloc((size_t)c->nkernels, sizeof *em->routine_names);
  for (int k = 0; k < c->nkernels; k++) {
    const KernelPlan *p = c->kernels[k];
    em->routine_names[k] = xcalloc((size_t)p->nsteps, sizeof(char *));
    for (int s = 0; s < p->nsteps; s++)
      if (!instantiate_step(&em->routines, em->dag, p, &p->steps[s], &em->routine_names[k][s]))
        return false;
  }
  return true;
}

static void emitter_free(Emitter *em) {
  if (em->routine_names)
    for (int k = 0; k < em->cand->nkernels; k++) {
      for (int s = 0; s < em->cand->kernels[k]->nsteps; s++) free(em->routine_names[k][s]);
      free(em->routine_names[k]);
    }
  free(em->routine_names);
  free(em->ws_values);
  routine_set_free(&em->routines);
}

/* ------------------------------------------------------------------------------------------ */
/* Step groups and thread coordinates                                                          */
/* ------------------------------------------------------------------------------------------ */

/* Which coordinates a call with shape c can take from the kernel's block shape k: tx when the x
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

/* Kernel coordinates used by steps [from, to): bit 0 tx, 1 ty, 2 tz, 3 lin. */
static unsigned coords_used(const KernelPlan *p, int from, int to) {
  unsigned used = 0;
  for (int s = from; s < to; s++) {
    CoordPlan cp = coord_plan(p->block, call_shape(p, p->steps[s].call), p->threads);
    if (cp.same) {
      used |= 7;
      continue;
    }
    used |= 8;
    if (cp.reuse_x) used |= 1;
    if (cp.reuse_yz) used |= 6;
  }
  return used;
}

/* "lin % 3", "lin / 3 % 32", "lin / 96" with the trivial factors left out. */
static void coord_expr(StrBuf *sb, int below, int extent) {
  if (extent == 1) {
    sb_puts(sb, "0");
    return;
  }
  sb_puts(sb, "lin");
  if (below > 1) sb_printf(sb, " / %d", below);
  sb_printf(sb, " %% %d", extent);
}

/* Declares the call's own coordinates (ctx, cty, ctz) for those that differ from the kernel's
 * and returns the argument text "ctx, ty, tz". */
static char *declare_call_coords(StrBuf *sb, int level, const CoordPlan *cp, BlockShape c) {
  const char *x = "tx", *y = "ty", *z = "tz";
  if (!cp->reuse_x) {
    indent(sb, level);
    sb_puts(sb, "const int ctx = ");
    coord_expr(sb, 1, c.bx);
    sb_puts(sb, ";\n");
    x = "ctx";
  }
  if (!cp->reuse_yz) {
    indent(sb, level);
    sb_puts(sb, "const int cty = ");
    coord_expr(sb, c.bx, c.by);
    sb_puts(sb, ";\n");
    indent(sb, level);
    if (c.bz == 1)
      sb_puts(sb, "const int ctz = 0;\n");
    else
      sb_printf(sb, "const int ctz = lin / %d;\n", c.bx * c.by);
    y = "cty";
    z = "ctz";
  }
  return xasprintf("%s, %s, %s", x, y, z);
}

/* The name of a buffer in kernel code: s_<ident> (shared) or r_<ident> (registers). */
static char *buffer_name(const Dag *dag, const Buffer *b) {
  char *id = value_ident(dag, b->value);
  char *s = xasprintf("%s_%s", b->place == PLACE_REGISTER ? "r" : "s", id);
  free(id);
  return s;
}

static char *param_name(const Dag *dag, int value) {
  char *id = value_ident(dag, value);
  char *s = xasprintf("g_%s", id);
  free(id);
  return s;
}

/* One routine call: d_..._e32_ss(g_a_0, s_a_0, tx, ty, tz, e0, n); */
static void emit_call(StrBuf *sb, int level, const Emitter *em, const KernelPlan *p, int k,
                      int step, const char *coords) {
  const Step *s = &p->steps[step];
  int bufs[KAS_MAX_ARGS + 1];
  int nb = step_buffers(em->dag, p, s, bufs);
  indent(sb, level);
  sb_printf(sb, "%s(", em->routine_names[k][step]);
  if (s->kind == ROUTINE_SAVE) {
    char *b = buffer_name(em->dag, &p->buffers[bufs[0]]);
    char *g = param_name(em->dag, p->buffers[bufs[0]].value);
    sb_printf(sb, "%s, %s, %s, e0, n);", b, g, coords);
    free(b);
    free(g);
  } else if (s->kind == ROUTINE_LOAD) {
    char *b = buffer_name(em->dag, &p->buffers[bufs[0]]);
    char *g = param_name(em->dag, p->buffers[bufs[0]].value);
    sb_printf(sb, "%s, %s, %s, e0, n);", g, b, coords);
    free(b);
    free(g);
  } else {
    for (int i = 0; i < nb; i++) {
      char *b = buffer_name(em->dag, &p->buffers[bufs[i]]);
      sb_printf(sb, "%s, ", b);
      free(b);
    }
    sb_printf(sb, "%s);", coords);
  }
  const DagNode *node = call_node(em->dag, p, s->call);
  sb_printf(sb, " /* %s#%d %s", node->fn->name, node->stmt, kind_name(s->kind));
  if (s->kind != ROUTINE_COMPUTE) {
    sb_printf(sb, " %s", value_label(em->dag, p->buffers[bufs[0]].value));
    const IoRoutine *io = step_io(p, s);
    char *variant = c_safe_text(io && io->variant ? io->variant : ""); /* INI free text */
    if (io && io->variant) sb_printf(sb, " (%s)", variant);
    free(variant);
  }
  sb_puts(sb, " */\n");
}

/* Steps [from, to) of one group: directly when the call runs in the kernel's block shape,
 * otherwise inside a block that recomputes the differing coordinates and idles extra threads. */
static void emit_group(StrBuf *sb, int level, const Emitter *em, const KernelPlan *p, int k,
                       int from, int to) {
  BlockShape c = call_shape(p, p->steps[from].call);
  CoordPlan cp = coord_plan(p->block, c, p->threads);
  if (cp.same) {
    for (int s = from; s < to; s++) emit_call(sb, level, em, p, k, s, "tx, ty, tz");
    return;
  }
  indent(sb, level);
  const Impl *im = p->impl[p->steps[from].call];
  if (cp.guard)
    sb_printf(sb, "if (lin < %d) { /* %s runs %d x %d x %d threads; the rest idle */\n",
              cp.count, im->name, c.bx, c.by, c.bz);
  else
    sb_printf(sb, "{ /* %s runs as %d x %d x %d threads */\n", im->name, c.bx, c.by, c.bz);
  char *coords = declare_call_coords(sb, level + 1, &cp, c);
  for (int s = from; s < to; s++) emit_call(sb, level + 1, em, p, k, s, coords);
  free(coords);
  indent(sb, level);
  sb_puts(sb, "}\n");
}

/* A barrier line: prefix (which opens the comment), the plan's reason, the comment's end. */
static void emit_barrier_comment(StrBuf *sb, const Step *s, const char *prefix) {
  sb_puts(sb, prefix);
  put_comment_text(sb, s->barrier_why ? s->barrier_why : "planned barrier");
  sb_puts(sb, " */\n");
}

/* ------------------------------------------------------------------------------------------ */
/* kernels.cu                                                                                  */
/* ------------------------------------------------------------------------------------------ */

static void describe_call(StrBuf *sb, const Emitter *em, const KernelPlan *p, int c) {
  const DagNode *node = call_node(em->dag, p, c);
  const Impl *im = p->impl[c];
  sb_printf(sb, " *   %s#%d: %s = %s(", node->fn->name, node->stmt,
            value_label(em->dag, node->result), node->fn->name);
  for (int a = 0; a < node->nargs; a++)
    sb_printf(sb, "%s%s", a ? ", " : "", value_label(em->dag, node->args[a]));
  BlockShape s = call_shape(p, c);
  sb_printf(sb, ") with %s (%d x %d x %d threads)", im->name, s.bx, s.by, s.bz);
  for (int st = 0; st < p->nsteps; st++) {
    const Step *step = &p->steps[st];
    const IoRoutine *io = step->call == c ? step_io(p, step) : NULL;
    char *variant = c_safe_text(io && io->variant ? io->variant : ""); /* INI free text */
    if (io) sb_printf(sb, ", %s %d %s", kind_name(step->kind), io->index, variant);
    free(variant);
  }
  sb_puts(sb, "\n");
}

static void describe_buffer(StrBuf *sb, const Emitter *em, const KernelPlan *p, int b) {
  const Buffer *buf = &p->buffers[b];
  char *name = buffer_name(em->dag, buf);
  sb_printf(sb, " *   %-20s %s, ", name, value_label(em->dag, buf->value));
  if (buf->place == PLACE_REGISTER)
    sb_printf(sb, "registers, %d float%s per thread", buf->reg_floats,
              buf->reg_floats == 1 ? "" : "s");
  else
    sb_printf(sb, "shared, bytes %d..%d", buf->offset, buf->offset + buf->bytes - 1);
  sb_printf(sb, ", steps %d..%d%s%s", buf->first_use, buf->last_use,
            buf->loaded ? ", loaded" : "", buf->saved ? ", saved" : "");
  if (buf->why) {
    sb_puts(sb, " (");
    put_comment_text(sb, buf->why);
    sb_puts(sb, ")");
  }
  sb_puts(sb, "\n");
  free(name);
}

static void kernel_header(StrBuf *sb, const Emitter *em, const KernelPlan *p, int k) {
  sb_printf(sb, "/* Kernel %d of %s: %d call%s\n", k, em->name, p->ncalls,
            p->ncalls == 1 ? "" : "s");
  for (int c = 0; c < p->ncalls; c++) describe_call(sb, em, p, c);
  sb_printf(sb, " * E = %d elements per block, %d threads (%d x %d x %d), %d bytes of shared "
                "memory\n",
            p->e, p->threads, p->block.bx, p->block.by, p->block.bz, p->smem_bytes);
  sb_puts(sb, " * buffers:\n");
  for (int b = 0; b < p->nbuffers; b++) describe_buffer(sb, em, p, b);
  sb_printf(sb, " * barriers: %d of %d possible */\n", p->barriers, p->barriers_possible);
}

static char *kernel_name(const Emitter *em, int k) { return xasprintf("kas_%s_k%d", em->name, k); }

/* The parameter list of kernel k: global arrays of loaded and saved values, then n. */
static void kernel_param_list(StrBuf *sb, const Emitter *em, const KernelPlan *p, bool device) {
  int *params = xcalloc((size_t)p->nbuffers, sizeof(int));
  int np = kernel_params(p, params);
  for (int i = 0; i < np; i++) {
    const Buffer *b = &p->buffers[params[i]];
    char *g = param_name(em->dag, b->value);
    sb_printf(sb, "\n    %sfloat *%s%s,", b->loaded ? "const " : "", device ? "__restrict__ " : "", g);
    free(g);
  }
  free(params);
  sb_puts(sb, "\n    size_t n");
}

static void emit_device_kernel(StrBuf *sb, const Emitter *em, int k) {
  const KernelPlan *p = em->cand->kernels[k];
  kernel_header(sb, em, p, k);
  char *kn = kernel_name(em, k);
  sb_printf(sb, "__global__ void __launch_bounds__(%d) %s(", p->threads, kn);
  kernel_param_list(sb, em, p, true);
  sb_puts(sb, ") {\n");
  free(kn);
  bool any_shared = false;
  for (int b = 0; b < p->nbuffers; b++) any_shared |= p->buffers[b].place == PLACE_SHARED;
  if (any_shared) sb_puts(sb, "  extern __shared__ float4 kas_smem[]; /* 16-byte aligned */\n");
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *buf = &p->buffers[b];
    char *name = buffer_name(em->dag, buf);
    if (buf->place == PLACE_SHARED)
      sb_printf(sb, "  float *const %s = (float *)((char *)kas_smem + %d);\n", name, buf->offset);
    else
      sb_printf(sb, "  float %s[%d];\n", name, buf->reg_floats);
    free(name);
  }
  sb_printf(sb, "  const size_t e0 = (size_t)blockIdx.x * %d;\n", p->e);
  unsigned used = coords_used(p, 0, p->nsteps);
  if (used & 1) sb_puts(sb, "  const int tx = threadIdx.x;\n");
  if (used & 2) sb_puts(sb, "  const int ty = threadIdx.y;\n");
  if (used & 4) sb_puts(sb, "  const int tz = threadIdx.z;\n");
  if (used & 8) {
    sb_puts(sb, "  const int lin = threadIdx.x");
    if (p->block.by > 1 || p->block.bz > 1) {
      sb_printf(sb, " + %d * (threadIdx.y", p->block.bx);
      if (p->block.bz > 1) sb_printf(sb, " + %d * threadIdx.z", p->block.by);
      sb_puts(sb, ")");
    }
    sb_puts(sb, ";\n");
  }
  for (int s = 0; s < p->nsteps;) {
    if (p->steps[s].barrier_before) {
      emit_barrier_comment(sb, &p->steps[s], "  __syncthreads(); /* ");
    }
    int to = group_end(p, s);
    emit_group(sb, 1, em, p, k, s, to);
    s = to;
  }
  sb_puts(sb, "}\n\n");
}

/* Workspace offsets are computed at run time from n; each intermediate starts 256-byte aligned. */
static void emit_workspace_bytes_fn(StrBuf *sb, const Emitter *em, const char *fname) {
  sb_printf(sb, "extern \"C\" size_t %s(size_t n) {\n", fname);
  if (em->nws == 0) {
    sb_puts(sb, "  (void)n;\n  return 0;\n}\n\n");
    return;
  }
  sb_puts(sb, "  return ");
  for (int i = 0; i < em->nws; i++)
    sb_printf(sb, "%skas_align256(n * %d * sizeof(float))", i ? "\n       + " : "",
              value_floats(em->dag, em->ws_values[i]));
  sb_puts(sb, ";\n}\n\n");
}

static void emit_workspace_pointers(StrBuf *sb, const Emitter *em) {
  if (em->nws == 0) {
    sb_puts(sb, "  (void)workspace;\n");
    return;
  }
  sb_puts(sb, "  char *ws = (char *)workspace;\n");
  for (int i = 0; i < em->nws; i++) {
    int v = em->ws_values[i];
    char *id = value_ident(em->dag, v);
    sb_printf(sb, "  float *const w_%s = (float *)ws; /* %s */\n", id, value_label(em->dag, v));
    if (i + 1 < em->nws)
      sb_printf(sb, "  ws += kas_align256(n * %d * sizeof(float));\n", value_floats(em->dag, v));
    free(id);
  }
}

/* Kernel k's arguments in a launch function. */
static void launch_args(StrBuf *sb, const Emitter *em, const KernelPlan *p) {
  int *params = xcalloc((size_t)p->nbuffers, sizeof(int));
  int np = kernel_params(p, params);
  for (int i = 0; i < np; i++) {
    char *g = global_array(em, p->buffers[params[i]].value);
    sb_printf(sb, "%s, ", g);
    free(g);
  }
  free(params);
  sb_puts(sb, "n");
}

/* Outputs that no kernel saves into their out[] slot: a returned input, or a value returned twice
 * (saved into its first slot).  The launch copies them from where they are. */
static int output_source(const Emitter *em, int slot) {
  int v = em->dag->outputs[slot];
  if (emit_output_slot(em->dag, v) != slot) return v; /* duplicate: copy from the first slot */
  if (emit_input_slot(em->dag, v) >= 0) return v;
  return -1;
}

static void emit_output_copies(StrBuf *sb, const Emitter *em, bool device) {
  for (int o = 0; o < em->dag->noutputs; o++) {
    int v = output_source(em, o);
    if (v < 0) continue;
    int src = emit_input_slot(em->dag, v);
    char *from = src >= 0 ? xasprintf("in[%d]", src)
                          : xasprintf("out[%d]", emit_output_slot(em->dag, v));
    if (device)
      sb_printf(sb, "  err = cudaMemcpyAsync(out[%d], %s, n * %d * sizeof(float), "
                    "cudaMemcpyDeviceToDevice, stream);\n  if (err != cudaSuccess) return (int)err;\n",
                o, from, value_floats(em->dag, v));
    else
      sb_printf(sb, "  memcpy(out[%d], %s, n * %d * sizeof(float));\n", o, from,
                value_floats(em->dag, v));
    free(from);
  }
}

static void emit_device_launch(StrBuf *sb, const Emitter *em) {
  char *fn = xasprintf("kas_%s_workspace_bytes", em->name);
  emit_workspace_bytes_fn(sb, em, fn);
  free(fn);
  sb_printf(sb, "/* Runs the %d kernel%s in order on stream; returns 0 or the first cudaError_t. */\n",
            em->cand->nkernels, em->cand->nkernels == 1 ? "" : "s");
  sb_printf(sb, "extern \"C\" int kas_%s_launch(const float *const *in, float *const *out, "
                "void *workspace,\n    size_t n, cudaStream_t stream) {\n",
            em->name);
  sb_puts(sb, "  if (n == 0) return 0;\n");
  if (em->nws) sb_puts(sb, "  if (!workspace) return (int)cudaErrorInvalidValue;\n");
  emit_workspace_pointers(sb, em);
  sb_puts(sb, "  cudaError_t err;\n");
  for (int k = 0; k < em->cand->nkernels; k++) {
    const KernelPlan *p = em->cand->kernels[k];
    char *kn = kernel_name(em, k);
    sb_printf(sb, "  /* kernel %d */\n", k);
    sb_printf(sb, "  const size_t blocks%d = (n + %d) / %d;\n", k, p->e - 1, p->e);
    sb_printf(sb, "  if (blocks%d > %ldu) return (int)cudaErrorInvalidConfiguration;\n", k,
              MAX_GRID_X);
    if (p->smem_bytes > DEFAULT_SMEM_LIMIT) {
      sb_printf(sb, "  err = cudaFuncSetAttribute(%s, cudaFuncAttributeMaxDynamicSharedMemorySize, "
                    "%d);\n  if (err != cudaSuccess) return (int)err;\n",
                kn, p->smem_bytes);
    }
    sb_printf(sb, "  %s<<<(unsigned)blocks%d, dim3(%d, %d, %d), %d, stream>>>(", kn, k,
              p->block.bx, p->block.by, p->block.bz, p->smem_bytes);
    launch_args(sb, em, p);
    sb_puts(sb, ");\n  err = cudaGetLastError();\n  if (err != cudaSuccess) return (int)err;\n");
    free(kn);
  }
  emit_output_copies(sb, em, true);
  sb_puts(sb, "  return 0;\n}\n");
}

static void file_banner(StrBuf *sb, const Emitter *em, const char *file, const char *what) {
  char *from = c_safe_text(em->dag->spec->path ? em->dag->spec->path : "(spec)");
  sb_printf(sb, "/*\n * %s/%s — generated by kasgen %s from %s; do not edit.\n * %s\n", em->name,
            file, KASGEN_VERSION, from, what);
  free(from);
  sb_printf(sb, " * %d kernel%s; predicted %.4f ns per element.\n */\n", em->cand->nkernels,
            em->cand->nkernels == 1 ? "" : "s", em->cand->predicted_ns_per_elem);
}

static const char align256_fn[] =
    "static size_t kas_align256(size_t bytes) { return (bytes + 255) & ~(size_t)255; }\n\n";

static char *kernels_cu(const Emitter *em) {
  StrBuf sb;
  sb_init(&sb);
  file_banner(&sb, em, "kernels.cu", "Fused kernels and their launch sequence (GPU).");
  sb_puts(&sb, "#include <cuda_runtime.h>\n#include \"../common/kas_device.h\"\n\n");
  if (em->nws) sb_puts(&sb, align256_fn);
  sb_puts(&sb, em->routines.text.data ? em->routines.text.data : "");
  for (int k = 0; k < em->cand->nkernels; k++) emit_device_kernel(&sb, em, k);
  emit_device_launch(&sb, em);
  return sb_take(&sb);
}

/* ------------------------------------------------------------------------------------------ */
/* kernels_host.cpp                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* Register pointers of the phase's thread: r_x = r_x_all + lin * floats, for those used. */
static void host_register_views(StrBuf *sb, const Emitter *em, const KernelPlan *p, int from,
                                int to) {
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *buf = &p->buffers[b];
    if (buf->place != PLACE_REGISTER) continue;
    bool used = false;
    for (int s = from; s < to && !used; s++) {
      int bufs[KAS_MAX_ARGS + 1];
      int nb = step_buffers(em->dag, p, &p->steps[s], bufs);
      for (int i = 0; i < nb; i++) used |= bufs[i] == b;
    }
    if (!used) continue;
    char *name = buffer_name(em->dag, buf);
    sb_printf(sb, "      float *const %s = %s_all + (size_t)lin * %d;\n", name, name,
              buf->reg_floats);
    free(name);
  }
}

/* One phase: every thread of the block, in the requested order, runs steps [from, to). */
static void emit_host_phase(StrBuf *sb, const Emitter *em, const KernelPlan *p, int k, int from,
                            int to) {
  sb_printf(sb, "    for (int t = 0; t < %d; t++) {\n", p->threads);
  sb_printf(sb, "      const int lin = order > 0 ? t : %d - t;\n", p->threads - 1);
  unsigned used = coords_used(p, from, to);
  BlockShape b = p->block;
  if (used & 1) {
    sb_puts(sb, "      const int tx = ");
    coord_expr(sb, 1, b.bx);
    sb_puts(sb, ";\n");
  }
  if (used & 2) {
    sb_puts(sb, "      const int ty = ");
    coord_expr(sb, b.bx, b.by);
    sb_puts(sb, ";\n");
  }
  if (used & 4) {
    if (b.bz == 1)
      sb_puts(sb, "      const int tz = 0;\n");
    else
      sb_printf(sb, "      const int tz = lin / %d;\n", b.bx * b.by);
  }
  host_register_views(sb, em, p, from, to);
  for (int s = from; s < to;) {
    int end = group_end(p, s);
    if (end > to) end = to;
    emit_group(sb, 3, em, p, k, s, end);
    s = end;
  }
  sb_puts(sb, "    }\n");
}

static void emit_host_kernel(StrBuf *sb, const Emitter *em, int k) {
  const KernelPlan *p = em->cand->kernels[k];
  char *kn = kernel_name(em, k);
  int phases = 1;
  for (int s = 1; s < p->nsteps; s++) phases += p->steps[s].barrier_before;
  sb_printf(sb, "/* Kernel %d (see kernels.cu): %d phase%s between barriers. */\n", k, phases,
            phases == 1 ? "" : "s");
  sb_printf(sb, "static void %s_host(", kn);
  kernel_param_list(sb, em, p, false);
  sb_puts(sb, ",\n    int order) {\n");
  free(kn);
  sb_printf(sb, "  const size_t blocks = (n + %d) / %d;\n", p->e - 1, p->e);
  int smem_floats = (p->smem_bytes + 3) / 4;
  if (smem_floats) sb_printf(sb, "  float *const smem = kas_host_floats(%d);\n", smem_floats);
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *buf = &p->buffers[b];
    char *name = buffer_name(em->dag, buf);
    if (buf->place == PLACE_SHARED)
      sb_printf(sb, "  float *const %s = (float *)((char *)smem + %d);\n", name, buf->offset);
    else
      sb_printf(sb, "  float *const %s_all = kas_host_floats(%d * %d);\n", name, p->threads,
                buf->reg_floats);
    free(name);
  }
  sb_puts(sb, "  for (size_t block = 0; block < blocks; block++) {\n");
  sb_printf(sb, "    const size_t e0 = block * %d;\n", p->e);
  if (smem_floats) sb_printf(sb, "    kas_host_poison(smem, %d);\n", smem_floats);
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *buf = &p->buffers[b];
    if (buf->place != PLACE_REGISTER) continue;
    char *name = buffer_name(em->dag, buf);
    sb_printf(sb, "    kas_host_poison(%s_all, %d * %d);\n", name, p->threads, buf->reg_floats);
    free(name);
  }
  for (int s = 0; s < p->nsteps;) {
    int to = s + 1;
    while (to < p->nsteps && !p->steps[to].barrier_before) to++;
    if (s > 0) {
      emit_barrier_comment(sb, &p->steps[s], "    /* __syncthreads(): ");
    }
    emit_host_phase(sb, em, p, k, s, to);
    s = to;
  }
  sb_puts(sb, "  }\n");
  if (smem_floats) sb_puts(sb, "  free(smem);\n");
  for (int b = 0; b < p->nbuffers; b++) {
    if (p->buffers[b].place != PLACE_REGISTER) continue;
    char *name = buffer_name(em->dag, &p->buffers[b]);
    sb_printf(sb, "  free(%s_all);\n", name);
    free(name);
  }
  sb_puts(sb, "}\n\n");
}

static void emit_host_launch(StrBuf *sb, const Emitter *em) {
  char *fn = xasprintf("kas_%s_host_workspace_bytes", em->name);
  emit_workspace_bytes_fn(sb, em, fn);
  free(fn);
  sb_printf(sb, "extern \"C\" void kas_%s_launch_host(const float *const *in, float *const *out, "
                "void *workspace,\n    size_t n, int order) {\n",
            em->name);
  sb_puts(sb, "  if (n == 0) return;\n");
  emit_workspace_pointers(sb, em);
  for (int k = 0; k < em->cand->nkernels; k++) {
    char *kn = kernel_name(em, k);
    sb_printf(sb, "  %s_host(", kn);
    launch_args(sb, em, em->cand->kernels[k]);
    sb_puts(sb, ", order);\n");
    free(kn);
  }
  emit_output_copies(sb, em, false);
  sb_puts(sb, "}\n");
}

static const char host_helpers[] =
    "/* Shared memory and register files of one block; NaN-poisoned at each block's start so that\n"
    " * reading anything not written in this block shows up in the result. */\n"
    "static float *kas_host_floats(size_t count) {\n"
    "  float *p = (float *)aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64);\n"
    "  if (!p) {\n"
    "    fputs(\"kas: out of memory\\n\", stderr);\n"
    "    exit(1);\n"
    "  }\n"
    "  return p;\n"
    "}\n\n"
    "static void kas_host_poison(float *p, size_t count) {\n"
    "  for (size_t i = 0; i < count; i++) p[i] = NAN;\n"
    "}\n\n";

static char *kernels_host_cpp(const Emitter *em) {
  StrBuf sb;
  sb_init(&sb);
  file_banner(&sb, em, "kernels_host.cpp",
              "The kernels of kernels.cu run on the CPU: each block's threads one after another,\n"
              " * phase by phase between barriers, in ascending (order +1) or descending (-1) "
              "order.");
  sb_puts(&sb, "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
               "#include \"../common/kas_device.h\"\n\n");
  sb_puts(&sb, host_helpers);
  if (em->nws) sb_puts(&sb, align256_fn);
  sb_puts(&sb, em->routines.text.data ? em->routines.text.data : "");
  for (int k = 0; k < em->cand->nkernels; k++) emit_host_kernel(&sb, em, k);
  emit_host_launch(&sb, em);
  return sb_take(&sb);
}

/* ------------------------------------------------------------------------------------------ */
/* emit_cuda_candidate                                                                         */
/* ------------------------------------------------------------------------------------------ */

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
    int bufs[KAS_MAX_ARGS + 1];
    if (st->call < 0 || st->call >= p->ncalls)
      bad = "a step names a call outside the kernel";
    else if (step_buffers(em->dag, p, st, bufs) < 0)
      bad = "a step uses a value without a buffer";
    else if (st->kind != ROUTINE_COMPUTE && !step_io(p, st))
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
  if (bad) diag_error((SrcLoc){0}, "%s, kernel %d: invalid kernel plan: %s", em->name, k, bad);
  return !bad;
}

bool emit_cuda_candidate(EmitDir *d, const Dag *dag, const Library *lib, const Candidate *cand,
                         const char *name) {
  (void)lib; /* the plans hold their implementations; the library is only the common files' */
  Emitter em = {.dag = dag, .cand = cand, .name = name};
  bool ok = true;
  for (int k = 0; k < cand->nkernels && ok; k++) ok = check_plan(&em, k);
  if (ok) ok = prepare_routines(&em);
  if (ok) {
    collect_workspace(&em);
    char *cu = kernels_cu(&em);
    char *host = kernels_host_cpp(&em);
    char *cu_path = xasprintf("%s/kernels.cu", name);
    char *host_path = xasprintf("%s/kernels_host.cpp", name);
    ok = emit_dir_write(d, cu_path, cu) && emit_dir_write(d, host_path, host);
    free(cu);
    free(host);
    free(cu_path);
    free(host_path);
  }
  emitter_free(&em);
  return ok;
}

/* ------------------------------------------------------------------------------------------ */
/* common/: references, CPU graph, CPU checker                                                 */
/* ------------------------------------------------------------------------------------------ */

/* Functions called by the DAG, each once, in order of first call. */
static int used_functions(const Dag *dag, const Function **out) {
  int n = 0;
  for (int i = 0; i < dag->nnodes; i++) {
    bool seen = false;
    for (int j = 0; j < n; j++) seen |= out[j] == dag->nodes[i].fn;
    if (!seen) out[n++] = dag->nodes[i].fn;
  }
  return n;
}

/* The reference file: as recorded by the loader, or relative to the function's folder. */
static char *read_reference(const Library *lib, const Function *fn) {
  if (access(fn->ref_path, R_OK) == 0 || fn->ref_path[0] == '/')
    return read_text_file(fn->ref_path, NULL);
  char *path = xasprintf("%s/%s/%s", lib->dir, fn->name, fn->ref_path);
  char *text = read_text_file(path, NULL);
  free(path);
  return text;
}

static char *kas_refs_c(const Dag *dag, const Library *lib) {
  const Function *fns[KAS_MAX_NODES];
  int nf = used_functions(dag, fns);
  StrBuf sb;
  sb_init(&sb);
  char *from = c_safe_text(dag->spec->path ? dag->spec->path : "the spec");
  sb_printf(&sb, "/*\n * common/kas_refs.c — generated by kasgen: the CPU references (double) of "
                 "the functions\n * %s calls, copied from the library.\n */\n",
            from);
  free(from);
  for (int i = 0; i < nf; i++) {
    char *text = read_reference(lib, fns[i]);
    if (!text) {
      sb_free(&sb);
      return NULL;
    }
    char *ref = c_safe_text(fns[i]->ref_path); /* from function.ini */
    sb_printf(&sb, "\n/* ---- %s (%s) ---- */\n", fns[i]->name, ref);
    free(ref);
    sb_puts(&sb, text);
    free(text);
  }
  return sb_take(&sb);
}

static void ref_prototype(StrBuf *sb, const Function *fn) {
  sb_printf(sb, "void %s(", fn->ref_symbol);
  for (int a = 0; a < fn->nparams; a++) sb_puts(sb, "const double *, ");
  sb_puts(sb, "double *);\n");
}

/* Element e's pointer to value v, or its local array for values computed here. */
static char *graph_operand(const Dag *dag, int v) {
  char *id = value_ident(dag, v);
  char *s = xasprintf("v_%s", id);
  free(id);
  return s;
}

static char *cpu_graph_c(const Dag *dag) {
  const Function *fns[KAS_MAX_NODES];
  int nf = used_functions(dag, fns);
  StrBuf sb;
  sb_init(&sb);
  char *from = c_safe_text(dag->spec->path ? dag->spec->path : "the spec");
  sb_printf(&sb, "/*\n * common/cpu_graph.c — generated by kasgen from %s: the computation in "
                 "double, one element\n * at a time, as a chain of the library's CPU references "
                 "(the checkers' ground truth).\n */\n#include <stddef.h>\n\n",
            from);
  free(from);
  for (int i = 0; i < nf; i++) ref_prototype(&sb, fns[i]);
  sb_puts(&sb, "\nvoid kas_cpu_graph(const double *const *in, double *const *out, size_t n);\n\n"
               "void kas_cpu_graph(const double *const *in, double *const *out, size_t n) {\n"
               "  for (size_t e = 0; e < n; e++) {\n");
  for (int k = 0; k < dag->ninputs; k++) {
    int v = dag->inputs[k];
    if (dag->values[v].nconsumers == 0 && emit_output_slot(dag, v) < 0) continue;
    char *op = graph_operand(dag, v);
    sb_printf(&sb, "    const double *const %s = in[%d] + e * %d;\n", op, k, value_floats(dag, v));
    free(op);
  }
  for (int i = 0; i < dag->nnodes; i++) {
    const DagNode *node = &dag->nodes[i];
    char *res = graph_operand(dag, node->result);
    sb_printf(&sb, "    double %s[%d];\n    %s(", res, value_floats(dag, node->result),
              node->fn->ref_symbol);
    for (int a = 0; a < node->nargs; a++) {
      char *op = graph_operand(dag, node->args[a]);
      sb_printf(&sb, "%s, ", op);
      free(op);
    }
    sb_printf(&sb, "%s);\n", res);
    free(res);
  }
  for (int o = 0; o < dag->noutputs; o++) {
    int v = dag->outputs[o];
    char *op = graph_operand(dag, v);
    int f = value_floats(dag, v);
    sb_printf(&sb, "    for (int k = 0; k < %d; k++) out[%d][e * %d + k] = %s[k];\n", f, o, f, op);
    free(op);
  }
  sb_puts(&sb, "  }\n}\n");
  return sb_take(&sb);
}

/* check_cpu.cpp does not depend on the spec: sizes come from kas_candidates.h. */
static const char check_cpu_text[] =
    "/*\n"
    " * common/check_cpu.cpp — generated by kasgen: runs every candidate's host form (the kernels\n"
    " * executed thread by thread on the CPU) with threads in ascending and in descending order,\n"
    " * compares both with the double-precision CPU graph (normwise relative error < 1e-5) and with\n"
    " * each other (any difference means a barrier is missing).  Usage: check_cpu [N]\n"
    " * (default 1003, a tail case for every E that is a multiple of 4); it also runs n = 1 and n = 0.\n"
    " */\n"
    "#include <math.h>\n"
    "#include <stdint.h>\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "#define KAS_CANDIDATES_HOST\n"
    "#include \"kas_candidates.h\"\n"
    "#include \"kas_random.h\"\n"
    "\n"
    "extern \"C\" void kas_cpu_graph(const double *const *in, double *const *out, size_t n);\n"
    "\n"
    "#define KAS_TOLERANCE 1e-5\n"
    "\n"

    "static void *alloc_or_die(size_t bytes) {\n"
    "  void *p = aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);\n"
    "  if (!p) {\n"
    "    fprintf(stderr, \"check_cpu: out of memory (%zu bytes)\\n\", bytes);\n"
    "    exit(2);\n"
    "  }\n"
    "  return p;\n"
    "}\n"
    "\n"
    "typedef struct {\n"
    "  size_t n;\n"
    "  float *in[KAS_NINPUTS > 0 ? KAS_NINPUTS : 1];\n"
    "  double *in_d[KAS_NINPUTS > 0 ? KAS_NINPUTS : 1];\n"
    "  double *ref[KAS_NOUTPUTS];\n"
    "  float *up[KAS_NOUTPUTS], *down[KAS_NOUTPUTS]; /* results of order +1 and -1 */\n"
    "} Problem;\n"
    "\n"
    "/* Inputs: magnitudes in [0.5, 1.5) with random signs, never zero. */\n"
    "static void problem_init(Problem *p, size_t n) {\n"
    "  p->n = n;\n"
    "  for (int i = 0; i < KAS_NINPUTS; i++) {\n"
    "    size_t len = n * kas_input_floats[i];\n"
    "    p->in[i] = (float *)alloc_or_die(len * sizeof(float));\n"
    "    p->in_d[i] = (double *)alloc_or_die(len * sizeof(double));\n"
    "    for (size_t k = 0; k < len; k++) {\n"
    "      p->in[i][k] = kas_random_value(1);\n"
    "      p->in_d[i][k] = p->in[i][k];\n"
    "    }\n"
    "  }\n"
    "  for (int o = 0; o < KAS_NOUTPUTS; o++) {\n"
    "    size_t len = n * kas_output_floats[o];\n"
    "    p->ref[o] = (double *)alloc_or_die(len * sizeof(double));\n"
    "    p->up[o] = (float *)alloc_or_die(len * sizeof(float));\n"
    "    p->down[o] = (float *)alloc_or_die(len * sizeof(float));\n"
    "  }\n"
    "  kas_cpu_graph(p->in_d, p->ref, n);\n"
    "}\n"
    "\n"
    "static void problem_free(Problem *p) {\n"
    "  for (int i = 0; i < KAS_NINPUTS; i++) free(p->in[i]), free(p->in_d[i]);\n"
    "  for (int o = 0; o < KAS_NOUTPUTS; o++) free(p->ref[o]), free(p->up[o]), free(p->down[o]);\n"
    "}\n"
    "\n"
    "/* Runs one candidate's host form in one thread order into outs (poisoned first). */\n"
    "static void run_host(const KasCandidate *c, const Problem *p, int order, float **outs) {\n"
    "  for (int o = 0; o < KAS_NOUTPUTS; o++)\n"
    "    for (size_t k = 0; k < p->n * kas_output_floats[o]; k++) outs[o][k] = NAN;\n"
    "  void *ws = alloc_or_die(c->host_workspace_bytes(p->n));\n"
    "  c->launch_host(p->in, outs, ws, p->n, order);\n"
    "  free(ws);\n"
    "}\n"
    "\n"
    "/* Normwise relative error of output o; names the first element that is wrong on its own\n"
    " * (non-finite, or off by more than the tolerance relative to the output's RMS). */\n"
    "static bool check_output(const char *cand, const Problem *p, int o, const float *got,\n"
    "                         const char *order, double *err_out) {\n"
    "  size_t len = p->n * kas_output_floats[o];\n"
    "  double diff2 = 0, ref2 = 0;\n"
    "  size_t first_bad = len;\n"
    "  for (size_t k = 0; k < len; k++) {\n"
    "    double d = (double)got[k] - p->ref[o][k];\n"
    "    diff2 += d * d;\n"
    "    ref2 += p->ref[o][k] * p->ref[o][k];\n"
    "  }\n"
    "  double rms = len ? sqrt(ref2 / (double)len) : 0;\n"
    "  for (size_t k = 0; k < len && first_bad == len; k++)\n"
    "    if (!isfinite(got[k]) || fabs((double)got[k] - p->ref[o][k]) > 10 * KAS_TOLERANCE * rms)\n"
    "      first_bad = k;\n"
    "  double err = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);\n"
    "  if (err != err) err = INFINITY;\n"
    "  *err_out = err;\n"
    "  if (err < KAS_TOLERANCE && first_bad == len) return true;\n"
    "  printf(\"%s: n=%zu order %s: output %s: relative error %.3g\", cand, p->n, order,\n"
    "         kas_output_names[o], err);\n"
    "  if (first_bad < len) {\n"
    "    size_t f = (size_t)kas_output_floats[o];\n"
    "    printf(\", first wrong: element %zu [%zu] = %.9g, expected %.9g\", first_bad / f,\n"
    "           first_bad % f, (double)got[first_bad], p->ref[o][first_bad]);\n"
    "  }\n"
    "  printf(\"\\n\");\n"
    "  return false;\n"
    "}\n"
    "\n"
    "/* Both orders must agree bit for bit: the CUDA model promises nothing about thread order. */\n"
    "static bool check_orders(const char *cand, const Problem *p) {\n"
    "  for (int o = 0; o < KAS_NOUTPUTS; o++) {\n"
    "    size_t len = p->n * kas_output_floats[o];\n"
    "    for (size_t k = 0; k < len; k++)\n"
    "      if (memcmp(&p->up[o][k], &p->down[o][k], sizeof(float))) {\n"
    "        size_t f = (size_t)kas_output_floats[o];\n"
    "        printf(\"%s: n=%zu: output %s element %zu [%zu] differs between thread orders \"\n"
    "               \"(%.9g vs %.9g): a barrier is missing\\n\", cand, p->n, kas_output_names[o],\n"
    "               k / f, k % f, (double)p->up[o][k], (double)p->down[o][k]);\n"
    "        return false;\n"
    "      }\n"
    "  }\n"
    "  return true;\n"
    "}\n"
    "\n"
    "static bool check_candidate(const KasCandidate *c, Problem *p, double *worst) {\n"
    "  run_host(c, p, +1, p->up);\n"
    "  run_host(c, p, -1, p->down);\n"
    "  bool ok = true;\n"
    "  for (int o = 0; o < KAS_NOUTPUTS; o++) {\n"
    "    double e1, e2;\n"
    "    ok &= check_output(c->name, p, o, p->up[o], \"+1\", &e1);\n"
    "    ok &= check_output(c->name, p, o, p->down[o], \"-1\", &e2);\n"
    "    if (e1 > *worst) *worst = e1;\n"
    "    if (e2 > *worst) *worst = e2;\n"
    "  }\n"
    "  return ok && check_orders(c->name, p);\n"
    "}\n"
    "\n"
    "/* n = 0 must write nothing: the poisoned sentinel stays. */\n"
    "static bool check_empty(const KasCandidate *c) {\n"
    "  float sentinel[KAS_NOUTPUTS][1];\n"
    "  float *outs[KAS_NOUTPUTS];\n"
    "  for (int o = 0; o < KAS_NOUTPUTS; o++) sentinel[o][0] = 42.0f, outs[o] = sentinel[o];\n"
    "  float dummy = 1.0f;\n"
    "  const float *ins[KAS_NINPUTS > 0 ? KAS_NINPUTS : 1];\n"
    "  for (int i = 0; i < KAS_NINPUTS; i++) ins[i] = &dummy;\n"
    "  c->launch_host(ins, outs, NULL, 0, 1);\n"
    "  for (int o = 0; o < KAS_NOUTPUTS; o++)\n"
    "    if (sentinel[o][0] != 42.0f) {\n"
    "      printf(\"%s: n=0 wrote output %s\\n\", c->name, kas_output_names[o]);\n"
    "      return false;\n"
    "    }\n"
    "  return true;\n"
    "}\n"
    "\n"
    "int main(int argc, char **argv) {\n"
    "  size_t n = 1003;\n"
    "  if (argc > 1) {\n"
    "    char *end;\n"
    "    unsigned long long v = strtoull(argv[1], &end, 10);\n"
    "    if (*end || end == argv[1]) {\n"
    "      fprintf(stderr, \"usage: %s [N]\\n\", argv[0]);\n"
    "      return 2;\n"
    "    }\n"
    "    n = (size_t)v;\n"
    "  }\n"
    "  const size_t sizes[] = {n, 1};\n"
    "  Problem problems[2];\n"
    "  for (int s = 0; s < 2; s++) problem_init(&problems[s], sizes[s]);\n"
    "  int failures = 0;\n"
    "  for (int c = 0; c < KAS_NCANDIDATES; c++) {\n"
    "    const KasCandidate *cand = &kas_candidates[c];\n"
    "    double worst = 0;\n"
    "    bool ok = check_empty(cand);\n"
    "    for (int s = 0; s < 2; s++) ok &= check_candidate(cand, &problems[s], &worst);\n"
    "    printf(\"%-10s %s  max relative error %.3g  (n = %zu and 1, thread orders +1/-1)  %s\\n\",\n"
    "           cand->name, ok ? \"PASS\" : \"FAIL\", worst, n, cand->kernels);\n"
    "    failures += !ok;\n"
    "  }\n"
    "  for (int s = 0; s < 2; s++) problem_free(&problems[s]);\n"
    "  printf(\"%s: %d of %d candidates passed\\n\", KAS_SPEC_NAME, KAS_NCANDIDATES - failures,\n"
    "         KAS_NCANDIDATES);\n"
    "  return failures ? 1 : 0;\n"
    "}\n";

/* The one source of test data for every generated checker (check_cpu, harness, check_gpu):
 * reproducible, and never zero, so a kernel that forgets to load or multiply cannot pass. */
static const char kas_random_h[] =
    "/* common/kas_random.h — generated by kasgen; the test data of every checker here. */\n"
    "#ifndef KAS_RANDOM_H\n#define KAS_RANDOM_H\n#include <stdint.h>\n\n"
    "/* xorshift64*: a fixed seed, so a failure reproduces. */\n"
    "static uint64_t kas_rng_state = 0x9E3779B97F4A7C15ull;\n"
    "static inline double kas_uniform(void) {\n"
    "  kas_rng_state ^= kas_rng_state >> 12;\n"
    "  kas_rng_state ^= kas_rng_state << 25;\n"
    "  kas_rng_state ^= kas_rng_state >> 27;\n"
    "  return (double)((kas_rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;\n"
    "}\n\n"
    "/* A value in [0.5, 1.5), negated with probability 1/2 when is_signed: never zero. */\n"
    "static inline float kas_random_value(int is_signed) {\n"
    "  float v = (float)(0.5 + kas_uniform());\n"
    "  return is_signed && kas_uniform() < 0.5 ? -v : v;\n"
    "}\n#endif\n";

static bool write_owned(EmitDir *d, const char *path, char *text) {
  if (!text) return false;
  bool ok = emit_dir_write(d, path, text);
  free(text);
  return ok;
}

bool emit_cuda_common(EmitDir *d, const Dag *dag, const Library *lib, const SearchResult *res) {
  (void)res; /* every candidate computes the same DAG: the common files depend on it alone */
  char *dev_path = xasprintf("%s/kas_device.h", lib->dir);
  char *dev = read_text_file(dev_path, NULL);
  free(dev_path);
  bool ok = write_owned(d, "common/kas_device.h", dev);
  ok = ok && write_owned(d, "common/kas_refs.c", kas_refs_c(dag, lib));
  ok = ok && write_owned(d, "common/cpu_graph.c", cpu_graph_c(dag));
  ok = ok && emit_dir_write(d, "common/kas_random.h", kas_random_h);
  ok = ok && emit_dir_write(d, "common/check_cpu.cpp", check_cpu_text);
  return ok;
}
