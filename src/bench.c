/*
 * bench.c — the micro-benchmarks that measure a GPU's timing database (docs/design.md §8, schema
 * in docs/timingdb.md); `kasgen bench` (cli_tools.c) writes them, for both precisions and both
 * layouts.
 *
 * The output folder (default bench/out) is ONE CUDA program that depends on the CUDA toolkit and
 * libc only, because the GPU machine has nothing else (no inih, libxml2, lp_solve):
 *
 *   Makefile          `make` builds build/kasbench (one nvcc per function, in parallel);
 *                     `make run DB=dir` runs it and writes dir/<gpu-slug>.xml
 *   kas_device.h      copied from the library
 *   bench_common.h    the table entry type shared by the files (src/runtime/bench_common.h)
 *   bench_<f>.cu      per function: every routine of every implementation (each load and save
 *                     variant, the compute), in shared memory and — where its pattern allows —
 *                     in registers, in single and double precision, instantiated
 *                     (instantiate_routine) for each E, wrapped in a kernel of its own
 *                     (kb_<f>_<n>), plus a table of those kernels.  Loads and saves are timed
 *                     on element-major arrays, on component-major ones where they may serve
 *                     those, and a contiguous routine also at W = 1 (arrays of any alignment)
 *   bench_tables.h    the table of every function's tables, for bench_main.cu
 *   bench_main.cu     device limits (cudaGetDeviceProperties), copy bandwidth and launch
 *                     overhead measured in the same run, every kernel timed at every extra
 *                     shared-memory size (median of repetitions, CUDA events), the XML by stdio
 *                     (src/runtime/bench_main.cu)
 *
 * Each benchmark kernel has one signature, (const real *in, real *out, size_t n, size_t ld,
 * float seed), and keeps its routine's work alive with a test against a value that never occurs.
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>

/* Elements per block that are measured (lookup interpolates between them, clamps outside). */
static const int BENCH_E[] = {4, 16, 32, 64, 128, 256};
enum { N_BENCH_E = sizeof BENCH_E / sizeof BENCH_E[0] };
/* Register buffers larger than this would spill: not a placement kasgen would choose. */
enum { MAX_REGISTER_FLOATS = 128 };

/* What one benchmark kernel measures. */
typedef struct {
  const Impl *impl;
  RoutineKind kind;
  int index; /* load/save j, 0 for compute */
  Placement place;
  int e;
  Precision precision;
  Layout layout; /* of the array a load or save moves */
  int w;         /* the vector width it is instantiated at */
} BenchCase;

/* The routine a load or save case runs, or NULL for a compute. */
static const IoRoutine *case_io(const BenchCase *c) {
  if (c->kind == ROUTINE_LOAD) return &c->impl->loads[c->index];
  return c->kind == ROUTINE_SAVE ? &c->impl->saves[c->index] : NULL;
}

/* The case's block shape at its E and vector width. */
static BlockShape case_shape(const BenchCase *c) {
  BlockShape sh = impl_shape(c->impl, c->e);
  sh.w = c->w;
  return sh;
}

static const char *kind_word(RoutineKind k) {
  return k == ROUTINE_LOAD ? "load" : k == ROUTINE_SAVE ? "save" : "compute";
}

static int type_floats(const KType *t) { return t ? t->size : 1; }

/* Floats of the buffer a load or save routine fills or drains. */
static int io_floats(const Impl *impl, RoutineKind kind, int j) {
  if (kind == ROUTINE_SAVE) return type_floats(impl->fn->result);
  return type_floats(impl->fn->params[impl->loads[j].arg]);
}

/* Whether every pattern argument of the routine may live in registers, at a sane size. */
static bool register_possible(const BenchCase *c) {
  BlockShape sh = case_shape(c);
  const IoRoutine *io = case_io(c);
  if (io) {
    if (io->ls.noreg) return false;
    int ext = pattern_register_extent(&io->ls, sh);
    return ext > 0 && ext <= MAX_REGISTER_FLOATS;
  }
  for (int a = 0; a <= c->impl->fn->nparams; a++) {
    const Pattern *p = a < c->impl->fn->nparams ? &c->impl->in[a] : &c->impl->out;
    int ext = p->noreg ? -1 : pattern_register_extent(p, sh);
    if (ext <= 0 || ext > MAX_REGISTER_FLOATS) return false;
  }
  return true;
}

/* ---- one kernel --------------------------------------------------------------------------- */

/* Thread coordinates, the block's first element and the linear id, as every kernel starts. */
static void kernel_prologue(StrBuf *sb, BlockShape sh, int e) {
  sb_printf(sb,
            "  const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;\n"
            "  const size_t e0 = (size_t)blockIdx.x * %d;\n"
            "  const int lin = tx + %d * (ty + %d * tz);\n"
            "  (void)e0; (void)lin; (void)seed; (void)in; (void)n; (void)ld;\n",
            e, sh.bx, sh.by);
}

/* The "never true" test that keeps the measured work alive. */
static void keep_alive(StrBuf *sb) {
  sb_puts(sb, "  if (acc == KB_NEVER) out[blockIdx.x] = acc;\n");
}

/* The arguments of a call after the buffers: the routine's coordinates (COORD_*), then e0, n
 * and ld where it takes them ("e0, n" for none: a compute). */
static char *call_tail(const RoutineInstance *ri, bool io) {
  static const char *const xyz[8] = {"", ", tx", ", ty", ", tx, ty", ", tz", ", tx, tz",
                                     ", ty, tz", ", tx, ty, tz"};
  return xasprintf("%s%s%s", xyz[ri->coords & 7], io ? ", e0, n" : "", ri->takes_ld ? ", ld" : "");
}

static void kernel_load(StrBuf *sb, const BenchCase *c, const RoutineInstance *ri, int size,
                        int ext, int threads) {
  const char *real = target_real_name(c->precision);
  char *tail = call_tail(ri, true);
  if (c->place == PLACE_REGISTER) {
    /* Zeros first: offsets outside the thread's access set stay defined, so that the sum (and
     * with it every load) cannot be folded away as undefined. */
    sb_printf(sb, "  %s r[%d];\n#pragma unroll\n  for (int k = 0; k < %d; k++) r[k] = 0;\n"
                  "  %s(in, r%s);\n  %s acc = 0;\n"
                  "#pragma unroll\n  for (int k = 0; k < %d; k++) acc += r[k];\n",
              real, ext, ext, ri->name, tail, real, ext);
  } else {
    /* Every real of the buffer is read back after a barrier: no store can be dropped. */
    sb_printf(sb, "  %s(in, kb_smem%s);\n  __syncthreads();\n"
                  "  %s acc = 0;\n"
                  "  for (int k = lin; k < %d; k += %d) acc += kb_smem[k];\n",
              ri->name, tail, real, size * c->e, threads);
  }
  free(tail);
  keep_alive(sb);
}

static void kernel_save(StrBuf *sb, const BenchCase *c, const RoutineInstance *ri, int size,
                        int ext, int threads) {
  const char *real = target_real_name(c->precision);
  char *tail = call_tail(ri, true);
  if (c->place == PLACE_REGISTER) {
    sb_printf(sb, "  %s r[%d];\n#pragma unroll\n  for (int k = 0; k < %d; k++) "
                  "r[k] = seed * (%s)(k + 1) + (%s)lin;\n  %s(r, out%s);\n",
              real, ext, ext, real, real, ri->name, tail);
  } else {
    sb_printf(sb, "  for (int k = lin; k < %d; k += %d) kb_smem[k] = seed + (%s)k;\n"
                  "  __syncthreads();\n  %s(kb_smem, out%s);\n",
              size * c->e, threads, real, ri->name, tail);
  }
  free(tail);
}

static void kernel_compute(StrBuf *sb, const BenchCase *c, const RoutineInstance *ri) {
  const Function *fn = c->impl->fn;
  const char *real = target_real_name(c->precision);
  BlockShape sh = case_shape(c);
  int offset = 0;
  char args[256] = "";
  for (int a = 0; a <= fn->nparams; a++) {
    const Pattern *p = a < fn->nparams ? &c->impl->in[a] : &c->impl->out;
    int size = type_floats(a < fn->nparams ? fn->params[a] : fn->result);
    char name[16];
    snprintf(name, sizeof name, "b%d", a);
    if (c->place == PLACE_REGISTER) {
      int ext = pattern_register_extent(p, sh);
      sb_printf(sb, "  %s %s[%d];\n", real, name, ext);
      if (a < fn->nparams) /* inputs from a runtime value: nothing folds to a constant */
        sb_printf(sb, "#pragma unroll\n  for (int k = 0; k < %d; k++) %s[k] = seed * (%s)(k "
                      "+ %d) + (%s)lin;\n",
                  ext, name, real, a + 1, real);
      else /* the output: defined where the compute does not write (see kernel_load) */
        sb_printf(sb, "#pragma unroll\n  for (int k = 0; k < %d; k++) %s[k] = 0;\n", ext, name);
    } else {
      sb_printf(sb, "  %s *%s = kb_smem + %d;\n", real, name, offset);
      offset += size * c->e;
    }
    size_t len = strlen(args);
    snprintf(args + len, sizeof args - len, "%s%s", a ? ", " : "", name);
  }
  char *tail = call_tail(ri, false);
  sb_printf(sb, "  %s(%s%s);\n", ri->name, args, tail);
  free(tail);
  if (c->place == PLACE_REGISTER) {
    int ext = pattern_register_extent(&c->impl->out, sh);
    sb_printf(sb, "  %s acc = 0;\n#pragma unroll\n  for (int k = 0; k < %d; k++) acc += "
                  "b%d[k];\n",
              real, ext, fn->nparams);
  } else {
    sb_printf(sb, "  %s acc = b%d[lin %% %d];\n", real, fn->nparams,
              type_floats(fn->result) * c->e);
  }
  keep_alive(sb);
}

/* Shared bytes the routine's own buffers take (the extra shared memory is on top of it). */
static int own_smem_bytes(const BenchCase *c) {
  if (c->place == PLACE_REGISTER) return 0;
  int rb = target_real_bytes(c->precision);
  if (c->kind != ROUTINE_COMPUTE) return rb * io_floats(c->impl, c->kind, c->index) * c->e;
  int reals = type_floats(c->impl->fn->result);
  for (int a = 0; a < c->impl->fn->nparams; a++) reals += type_floats(c->impl->fn->params[a]);
  return rb * reals * c->e;
}

/* The routine's instance: its placement for every argument, its array as the case binds it. */
static bool instantiate_case(const BenchCase *c, RoutineInstance *ri) {
  RoutineRequest rq = {c->kind, c->index, c->e, case_shape(c), {PLACE_SHARED}, c->precision,
                       {c->layout, 0, 0, 0}, false /* the database times plain loads */};
  for (int k = 0; k <= KAS_MAX_ARGS; k++) rq.place[k] = c->place;
  return instantiate_routine(c->impl, &rq, ri);
}

/* The row of the case's kernel in its function's table. */
static void table_row(StrBuf *table, const BenchCase *c, int id) {
  BlockShape sh = case_shape(c);
  char *row[13] = {xasprintf("\"%s\"", c->impl->name), xasprintf("\"%s\"", kind_word(c->kind)),
                   xasprintf("%d", c->index),
                   xasprintf("\"%s\"", c->place == PLACE_REGISTER ? "register" : "shared"),
                   xasprintf("\"%s\"", target_precision_name(c->precision)),
                   xasprintf("\"%s\"", target_layout_name(c->layout)), xasprintf("%d", c->w),
                   xasprintf("%d", c->e), xasprintf("%d", sh.bx), xasprintf("%d", sh.by),
                   xasprintf("%d", sh.bz), xasprintf("%d", own_smem_bytes(c)),
                   xasprintf("(const void *)kb_%s_%d", c->impl->fn->name, id)};
  emit_list(table, 1, "{", row, 13, "},\n");
  for (int k = 0; k < 13; k++) free(row[k]);
}

/* Emits the routine (once per name) and its kernel kb_<id>; false after a diagnostic.  The
 * double-precision routines live in namespace kb_double: both precisions' instances of one
 * routine have the same name. */
static bool emit_kernel(StrBuf *sb, StrBuf *table, const BenchCase *c, int id, char ***done,
                        int *ndone) {
  RoutineInstance ri;
  if (!instantiate_case(c, &ri)) return false;
  bool dbl = c->precision == PREC_DOUBLE;
  char *qualified = xasprintf("%s%s", dbl ? "kb_double::" : "", ri.name);
  bool seen = false;
  for (int k = 0; k < *ndone && !seen; k++) seen = !strcmp((*done)[k], qualified);
  if (!seen) {
    sb_printf(sb, dbl ? "namespace kb_double {\n%s\n} // namespace kb_double\n\n" : "%s\n\n",
              ri.text);
    *done = xrealloc(*done, sizeof **done * (size_t)(*ndone + 1));
    (*done)[(*ndone)++] = xstrdup(qualified);
  }
  free(ri.name);
  ri.name = qualified;
  BlockShape sh = case_shape(c);
  int threads = sh.bx * sh.by * sh.bz;
  const char *real = target_real_name(c->precision);
  sb_printf(sb, "__global__ void __launch_bounds__(%d) kb_%s_%d(const %s *__restrict__ in,\n"
                "    %s *__restrict__ out, size_t n, size_t ld, float seed_arg) {\n"
                "  extern __shared__ float4 kb_smem_raw[]; /* one type for both precisions */\n"
                "  %s *const kb_smem = (%s *)kb_smem_raw;\n  (void)kb_smem;\n"
                "  const %s seed = (%s)seed_arg;\n",
            threads, c->impl->fn->name, id, real, real, real, real, real, real);
  kernel_prologue(sb, sh, c->e);
  const IoRoutine *io = case_io(c);
  if (!io) {
    kernel_compute(sb, c, &ri);
  } else {
    int ext = c->place == PLACE_REGISTER ? pattern_register_extent(&io->ls, sh) : 0;
    int size = io_floats(c->impl, c->kind, c->index);
    if (c->kind == ROUTINE_LOAD) kernel_load(sb, c, &ri, size, ext, threads);
    else kernel_save(sb, c, &ri, size, ext, threads);
  }
  sb_puts(sb, "}\n\n");
  table_row(table, c, id);
  routine_instance_free(&ri);
  return true;
}

/* The bindings a routine is timed with in one precision: element-major at the precision's
 * vector width; a routine using W also at W = 1 (arrays of any alignment); a load or save that
 * may serve component-major arrays on one.  A compute touches no global array: element only. */
static int routine_bindings(const Impl *impl, RoutineKind kind, int index, Precision prec,
                            Layout *layouts, int *widths) {
  BenchCase probe = {.impl = impl, .kind = kind, .index = index};
  const IoRoutine *io = case_io(&probe);
  int n = 0;
  layouts[n] = LAYOUT_ELEMENT, widths[n++] = target_vector_width(prec);
  if (io && io->ls.uses_w) layouts[n] = LAYOUT_ELEMENT, widths[n++] = 1;
  if (io && !io->contiguous) layouts[n] = LAYOUT_COMPONENT, widths[n++] = target_vector_width(prec);
  return n;
}

/* Every case of one routine: each precision and binding, each E with at most 1024 threads,
 * shared then register. */
static bool emit_routine_cases(StrBuf *sb, StrBuf *table, const Impl *impl, RoutineKind kind,
                               int index, int *id, char ***done, int *ndone) {
  for (int prec = PREC_SINGLE; prec <= PREC_DOUBLE; prec++) {
    Layout layouts[3];
    int widths[3];
    int nb = routine_bindings(impl, kind, index, (Precision)prec, layouts, widths);
    for (int bi = 0; bi < nb; bi++)
      for (int place = PLACE_SHARED; place <= PLACE_REGISTER; place++)
        for (int k = 0; k < N_BENCH_E; k++) {
          BenchCase c = {impl, kind, index, (Placement)place, BENCH_E[k], (Precision)prec,
                         layouts[bi], widths[bi]};
          if (impl_threads(impl, c.e) > KAS_MAX_THREADS) continue;
          if (own_smem_bytes(&c) > 200 * 1024) continue;
          if (c.place == PLACE_REGISTER && !register_possible(&c)) continue;
          if (!emit_kernel(sb, table, &c, (*id)++, done, ndone)) return false;
        }
  }
  return true;
}

/* bench_<f>.cu: all implementations of one function. */
static char *function_source(const Function *fn, int *nkernels) {
  StrBuf sb, table;
  sb_init(&sb);
  sb_init(&table);
  sb_printf(&sb, "/* bench_%s.cu — micro-benchmarks of every routine of %s\n"
                 " * (generated by kasgen bench; do not edit). */\n"
                 "#include \"bench_common.h\"\n\n",
            fn->name, fn->name);
  char **done = NULL;
  int ndone = 0, id = 0;
  bool ok = true;
  for (int i = 0; i < fn->nimpls && ok; i++) {
    const Impl *im = &fn->impls[i];
    for (int j = 0; j < im->nloads && ok; j++)
      ok = emit_routine_cases(&sb, &table, im, ROUTINE_LOAD, j, &id, &done, &ndone);
    ok = ok && emit_routine_cases(&sb, &table, im, ROUTINE_COMPUTE, 0, &id, &done, &ndone);
    for (int j = 0; j < im->nsaves && ok; j++)
      ok = emit_routine_cases(&sb, &table, im, ROUTINE_SAVE, j, &id, &done, &ndone);
  }
  for (int k = 0; k < ndone; k++) free(done[k]);
  free(done);
  if (!ok) {
    sb_free(&sb);
    sb_free(&table);
    return NULL;
  }
  sb_printf(&sb, "extern \"C\" const BenchEntry bench_%s_entries[] = {\n%s};\n"
                 "extern \"C\" const int bench_%s_count = %d;\n",
            fn->name, table.data ? table.data : "", fn->name, id);
  sb_free(&table);
  *nkernels = id;
  return sb_take(&sb);
}

/* ---- the program around the kernels ------------------------------------------------------ */

static const char MAKEFILE[] =
    "# Micro-benchmarks of the kasgen library (generated by kasgen bench; do not edit).\n"
    "#   make            build build/kasbench (needs only the CUDA toolkit)\n"
    "#   make run DB=dir run it; writes dir/<gpu-slug>.xml\n"
    "NVCC ?= nvcc\nARCH ?= sm_90\nDB ?= .\n"
    "NVFLAGS ?= -O3 -std=c++17 -arch=$(ARCH) -lineinfo\n"
    "SRC := $(wildcard bench_*.cu)\n"
    "OBJ := $(patsubst %.cu,build/%.o,$(SRC))\n"
    ".PHONY: all run clean\nall: build/kasbench\n"
    "build/%.o: %.cu bench_common.h bench_tables.h kas_device.h\n\t@mkdir -p build\n"
    "\t$(NVCC) $(NVFLAGS) -c -o $@ $<\n"
    "build/kasbench: $(OBJ)\n\t$(NVCC) $(NVFLAGS) -o $@ $(OBJ)\n"
    "run: build/kasbench\n\t./build/kasbench $(DB)\n"
    "clean:\n\trm -rf build\n";

/* bench_tables.h: the table of every function's kernels that bench_main.cu runs, and the
 * version of kasgen that wrote them (for the database's <generated> element). */
static char *tables_header(const Library *lib) {
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "/* bench_tables.h — generated by kasgen bench: the benchmark kernels of every "
                 "function of\n * the library, for bench_main.cu; do not edit. */\n"
                 "#include \"bench_common.h\"\n\n#define KASGEN_VERSION \"%s\"\n\n",
            KASGEN_VERSION);
  for (int f = 0; f < lib->nfuncs; f++) {
    const char *n = lib->funcs[f].name;
    sb_printf(&sb, "extern \"C\" const BenchEntry bench_%s_entries[];\n"
                   "extern \"C\" const int bench_%s_count;\n", n, n);
  }
  sb_puts(&sb, "\nstatic const BenchTable tables[] = {\n");
  for (int f = 0; f < lib->nfuncs; f++)
    sb_printf(&sb, "    {bench_%s_entries, bench_%s_count},\n", lib->funcs[f].name,
              lib->funcs[f].name);
  sb_puts(&sb, "};\n");
  return sb_take(&sb);
}

static bool write_device_header(EmitDir *d, const Library *lib) {
  char *path = xasprintf("%s/kas_device.h", lib->dir);
  char *text = read_text_file(path, NULL);
  free(path);
  bool ok = text && emit_dir_write(d, "kas_device.h", text);
  free(text);
  return ok;
}

/* Writes the whole benchmark folder; returns the number of kernels, -1 after a diagnostic. */
int bench_emit(const Library *lib, const char *out_dir) {
  EmitDir *d = emit_dir_open(out_dir);
  if (!d) return -1;
  bool ok = write_device_header(d, lib) && emit_runtime_file(d, "", "bench_common.h") &&
            emit_runtime_file(d, "", "bench_main.cu") && emit_dir_write(d, "Makefile", MAKEFILE);
  int total = 0;
  for (int f = 0; f < lib->nfuncs && ok; f++) {
    int n = 0;
    progress("kasgen bench: emitting", f, lib->nfuncs);
    char *src = function_source(&lib->funcs[f], &n);
    char *name = xasprintf("bench_%s.cu", lib->funcs[f].name);
    ok = src && emit_dir_write(d, name, src);
    total += n;
    free(src);
    free(name);
  }
  progress_done();
  if (ok) {
    char *t = tables_header(lib);
    ok = emit_dir_write(d, "bench_tables.h", t);
    free(t);
  }
  ok = emit_dir_close(d) && ok;
  return ok ? total : -1;
}
