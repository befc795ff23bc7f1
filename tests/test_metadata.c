/*
 * test_metadata.c — proves every implementation's access-pattern metadata against its code.
 *
 * For each implementation in library/ (whatever it contains), every routine (each load, the
 * compute, each save) is instantiated with instantiate_routine at E = 4 and at one larger E, in
 * every placement (all pattern buffers shared, and every combination of register placement for
 * the buffers whose pattern permits it), in both precisions, and a load or save with every
 * binding of its global array: element-major at the precision's vector width (W = 4 floats or 2
 * doubles), at W = 1 where its pattern uses W, and component-major where it may serve such an
 * array.  An implementation's instances of one precision go into one C++ program
 * (tests/metadata/tracer.hpp is its runtime) which g++ compiles and runs: every thread of
 * the block runs in turn, buffer accesses are recorded per thread, values are checked (loads
 * copy the global chunk, saves write it back, computes equal the CPU reference), and global
 * accesses outside the block's valid chunk fault against guard pages.  This file then compares
 * each thread's recorded offsets with pattern_access_set:
 *   load:    writes exactly its LSPATTERN set, reads nothing; the sets cover the whole buffer;
 *   compute: reads exactly INPATTERN k of input k, writes exactly the OUTPATTERN set;
 *   save:    reads exactly its LSPATTERN set (a subset in a partial block), writes nothing.
 * Shared placement compares absolute offsets; register placement compares offsets relative to
 * the thread's start, all below pattern_register_extent.  A last test alters patterns on purpose
 * and requires the comparison to catch it.
 *
 * KASGEN_TRACER_KEEP=1 keeps the generated programs and their output (the path is printed).
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PATTERN_ARGS (KAS_MAX_ARGS + 1)
#define IO_CASES 4        /* (e0, n) cases of a load/save: see kas_io_cases in tracer.hpp */
#define PARTIAL_CASE_MIN 2 /* cases >= this one are partial blocks */
#define MAX_REPORTS 12     /* mismatches printed per implementation */

/* One instantiated routine of the program. */
typedef struct {
  int rid;
  RoutineKind kind;
  int io_index; /* load/save j */
  int e;
  BlockShape shape; /* with the vector width W of the instance */
  Layout layout;    /* load/save: of its global array */
  int threads;
  int nargs;                           /* pattern arguments */
  const Pattern *pat[MAX_PATTERN_ARGS]; /* their patterns, as the library states them */
  int size[MAX_PATTERN_ARGS];          /* floats per element of each argument's variable */
  Placement place[MAX_PATTERN_ARGS];
  char *name; /* instantiated function name */
  unsigned coords; /* the thread coordinates it takes (COORD_*) */
  bool takes_ld;   /* it takes the leading dimension (component-major) */
  int ncases;
  /* Recorded offsets, slot (case, lin, arg, rw): see slot_of. */
  long **offs;
  int *noffs;
  bool done; /* the program printed D for it */
} Instance;

typedef struct {
  const Impl *impl;
  Precision precision;
  Instance *inst;
  int ninst;
  char *faults; /* E and F lines of the program, for the report */
  int nfaults;
  bool ran; /* compiled and ran */
} ImplRun;

static int slot_of(const Instance *in, int kase, int lin, int arg, int rw) {
  return ((kase * in->threads + lin) * in->nargs + arg) * 2 + rw;
}

static const char *kind_name(RoutineKind k) {
  return k == ROUTINE_LOAD ? "load" : k == ROUTINE_COMPUTE ? "compute" : "save";
}

static Library *lib;

/* ------------------------------------------------------------------------------------------ */
/* Instances                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* The larger E: 32, or the recommended E if smaller, lowered until the block fits. */
static int larger_e(const Impl *im) {
  int e = 32;
  if (im->recommended_e > 4 && im->recommended_e < e && im->recommended_e % 4 == 0)
    e = im->recommended_e;
  while (e > 4 && impl_threads(im, e) > KAS_MAX_THREADS) e -= 4;
  return e;
}

static void add_instance(ImplRun *run, const Instance *proto, int regmask) {
  run->inst = xrealloc(run->inst, sizeof(Instance) * (run->ninst + 1));
  Instance *in = &run->inst[run->ninst];
  *in = *proto;
  in->rid = run->ninst++;
  for (int a = 0; a < in->nargs; a++) in->place[a] = (regmask >> a & 1) ? PLACE_REGISTER : PLACE_SHARED;
  in->ncases = in->kind == ROUTINE_COMPUTE ? 1 : IO_CASES;
  int nslots = in->ncases * in->threads * in->nargs * 2;
  in->offs = xcalloc(nslots, sizeof(long *));
  in->noffs = xcalloc(nslots, sizeof(int));
}

/* Every placement: bit a of the mask = argument a in registers, only where noreg is 0. */
static void add_placements(ImplRun *run, const Instance *proto) {
  int allowed = 0;
  for (int a = 0; a < proto->nargs; a++)
    if (!proto->pat[a]->noreg) allowed |= 1 << a;
  for (int mask = 0; mask < 1 << proto->nargs; mask++)
    if ((mask & ~allowed) == 0) add_instance(run, proto, mask);
}

/* A load's or save's instances: every placement, with its array element-major at the
 * precision's vector width, at W = 1 when its pattern uses W, and component-major when it is
 * not contiguous. */
static void add_bindings(ImplRun *run, Instance *proto, const IoRoutine *io) {
  int w = target_vector_width(run->precision);
  proto->layout = LAYOUT_ELEMENT;
  proto->shape.w = w;
  add_placements(run, proto);
  if (io->ls.uses_w) {
    proto->shape.w = 1;
    add_placements(run, proto);
    proto->shape.w = w;
  }
  if (!io->contiguous) {
    proto->layout = LAYOUT_COMPONENT;
    add_placements(run, proto);
    proto->layout = LAYOUT_ELEMENT;
  }
}

static void build_instances(ImplRun *run) {
  const Impl *im = run->impl;
  const Function *fn = im->fn;
  int es[2] = {4, larger_e(im)};
  for (int ei = 0; ei < (es[1] > es[0] ? 2 : 1); ei++) {
    Instance p = {.e = es[ei], .shape = impl_shape(im, es[ei]), .threads = impl_threads(im, es[ei])};
    p.shape.w = target_vector_width(run->precision);
    for (int j = 0; j < im->nloads; j++) {
      p.kind = ROUTINE_LOAD, p.io_index = j, p.nargs = 1;
      p.pat[0] = &im->loads[j].ls;
      p.size[0] = fn->params[im->loads[j].arg]->size;
      add_bindings(run, &p, &im->loads[j]);
    }
    p.kind = ROUTINE_COMPUTE, p.io_index = 0, p.nargs = fn->nparams + 1;
    for (int k = 0; k < fn->nparams; k++) p.pat[k] = &im->in[k], p.size[k] = fn->params[k]->size;
    p.pat[fn->nparams] = &im->out, p.size[fn->nparams] = fn->result->size;
    add_placements(run, &p);
    for (int j = 0; j < im->nsaves; j++) {
      p.kind = ROUTINE_SAVE, p.io_index = j, p.nargs = 1;
      p.pat[0] = &im->saves[j].ls;
      p.size[0] = fn->result->size;
      add_bindings(run, &p, &im->saves[j]);
    }
  }
}

/* ------------------------------------------------------------------------------------------ */
/* The tracer program                                                                          */
/* ------------------------------------------------------------------------------------------ */

/* The per-thread start table of a register argument. */
static bool write_start_table(StrBuf *sb, const Instance *in, int a) {
  sb_printf(sb, "static const long kas_start_%d_%d[] = {", in->rid, a);
  for (int lin = 0; lin < in->threads; lin++) {
    AccessSet set;
    if (!pattern_access_set(in->pat[a], in->shape, lin, &set)) return false;
    sb_printf(sb, "%s%ld", lin == 0 ? "\n  " : lin % 16 ? ", " : ",\n  ", set.start);
    access_set_free(&set);
  }
  sb_puts(sb, "};\n");
  return true;
}

/* ", tx, ty": the coordinate arguments of a routine taking coords (COORD_*). */
static const char *coord_args(unsigned coords) {
  static const char *const args[8] = {"", ", tx", ", ty", ", tx, ty", ", tz", ", tx, tz",
                                      ", ty, tz", ", tx, ty, tz"};
  return args[coords & 7];
}

/* The uniform-signature wrapper of one instance (coordinates the routine does not take are
 * discarded here). */
static void write_wrapper(StrBuf *sb, const Instance *in) {
  sb_printf(sb, "static void kas_call_%d(kas_treal *g, KasBuf *b, int tx, int ty, int tz, "
                "size_t e0,\n    size_t n, size_t ld) {\n  (void)tx, (void)ty, (void)tz, (void)ld;\n  ",
            in->rid);
  const char *xyz = coord_args(in->coords), *ld = in->takes_ld ? ", ld" : "";
  if (in->kind == ROUTINE_LOAD)
    sb_printf(sb, "%s(g, b[0]%s, e0, n%s);\n}\n", in->name, xyz, ld);
  else if (in->kind == ROUTINE_SAVE)
    sb_printf(sb, "%s(b[0], g%s, e0, n%s);\n}\n", in->name, xyz, ld);
  else {
    sb_printf(sb, "(void)g, (void)e0, (void)n;\n  %s(", in->name);
    for (int a = 0; a < in->nargs; a++) sb_printf(sb, "%sb[%d]", a ? ", " : "", a);
    sb_printf(sb, "%s);\n}\n", xyz);
  }
}

static void write_descriptor(StrBuf *sb, const Instance *in, const Impl *im) {
  static const char *kinds[] = {"KAS_T_LOAD", "KAS_T_COMPUTE", "KAS_T_SAVE"};
  sb_printf(sb, "  {%d, %s, %d, %d, %d, %d, %d, {", in->rid, kinds[in->kind], in->e,
            in->shape.bx, in->shape.by, in->shape.bz, in->nargs);
  for (int a = 0; a < in->nargs; a++) sb_printf(sb, "%d, ", in->size[a]);
  sb_puts(sb, "}, {");
  for (int a = 0; a < in->nargs; a++) sb_printf(sb, "%d, ", in->place[a] == PLACE_REGISTER);
  sb_puts(sb, "}, {");
  for (int a = 0; a < in->nargs; a++)
    sb_printf(sb, in->place[a] == PLACE_REGISTER ? "kas_start_%d_%d, " : "NULL, ", in->rid, a);
  sb_puts(sb, "}, {");
  for (int a = 0; a < in->nargs; a++)
    sb_printf(sb, "%d, ", in->place[a] == PLACE_REGISTER
                              ? pattern_register_extent(in->pat[a], in->shape) : 0);
  sb_printf(sb, "}, %d, kas_call_%d},\n", in->layout == LAYOUT_COMPONENT, in->rid);
  (void)im;
}

/* The whole program: runtime, instantiated routines, reference, tables, main. */
static char *program_text(ImplRun *run) {
  const Impl *im = run->impl;
  const Function *fn = im->fn;
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "// metadata tracer of %s in %s precision, generated by tests/test_metadata.c\n",
            im->name, target_precision_name(run->precision));
  sb_puts(&sb, "#include \"tracer.hpp\"\n\n");
  sb_printf(&sb, "static_assert(%d <= KAS_TRACER_MAX_ARGS, \"tracer.hpp: KAS_TRACER_MAX_ARGS below "
                 "KAS_MAX_ARGS + 1\");\n\n", MAX_PATTERN_ARGS);
  for (int i = 0; i < run->ninst; i++) {
    Instance *in = &run->inst[i];
    RoutineRequest rq = {in->kind, in->io_index, in->e, in->shape, {PLACE_SHARED},
                         run->precision, {in->layout, 0, 0, 0}, false};
    memcpy(rq.place, in->place, sizeof in->place);
    RoutineInstance ri;
    if (!instantiate_routine(im, &rq, &ri)) {
      sb_free(&sb);
      return NULL;
    }
    sb_printf(&sb, "%s\n", ri.text);
    in->name = ri.name;
    in->coords = ri.coords;
    in->takes_ld = ri.takes_ld;
    free(ri.text);
  }
  char *ref = realpath(fn->ref_path, NULL);
  sb_printf(&sb, "#include \"%s\"\n\n", ref ? ref : fn->ref_path);
  free(ref);
  sb_printf(&sb, "static void kas_ref(const double *const *in, double *out) {\n  %s(",
            fn->ref_symbol);
  for (int k = 0; k < fn->nparams; k++) sb_printf(&sb, "in[%d], ", k);
  sb_puts(&sb, "out);\n}\n\n");
  for (int i = 0; i < run->ninst; i++) {
    Instance *in = &run->inst[i];
    for (int a = 0; a < in->nargs; a++)
      if (in->place[a] == PLACE_REGISTER && !write_start_table(&sb, in, a)) {
        sb_free(&sb);
        return NULL;
      }
    write_wrapper(&sb, in);
  }
  sb_puts(&sb, "\nstatic const KasRoutine kas_routines[] = {\n");
  for (int i = 0; i < run->ninst; i++) write_descriptor(&sb, &run->inst[i], im);
  sb_printf(&sb, "};\n\nint main(void) {\n  return kas_trace_main(kas_routines, %d, kas_ref);\n}\n",
            run->ninst);
  return sb_take(&sb);
}

/* Parses one "T rid case lin arg rw count offsets..." line into its slot. */
static void parse_trace_line(ImplRun *run, const char *line) {
  char *p;
  long rid = strtol(line + 1, &p, 10), kase = strtol(p, &p, 10), lin = strtol(p, &p, 10);
  long arg = strtol(p, &p, 10);
  while (*p == ' ') p++;
  int rw = *p++ == 'w';
  long count = strtol(p, &p, 10);
  if (rid < 0 || rid >= run->ninst) return;
  Instance *in = &run->inst[rid];
  if (kase < 0 || kase >= in->ncases || lin < 0 || lin >= in->threads || arg < 0 ||
      arg >= in->nargs || count < 0)
    return;
  int s = slot_of(in, (int)kase, (int)lin, (int)arg, rw);
  free(in->offs[s]);
  in->offs[s] = xcalloc(count + 1, sizeof(long));
  in->noffs[s] = (int)count;
  for (long k = 0; k < count; k++) in->offs[s][k] = strtol(p, &p, 10);
}

static void parse_output(ImplRun *run, FILE *f) {
  char *line = NULL;
  size_t cap = 0;
  StrBuf faults;
  sb_init(&faults);
  while (getline(&line, &cap, f) > 0) {
    if (line[0] == 'T') {
      parse_trace_line(run, line);
    } else if (line[0] == 'D') {
      long rid = strtol(line + 1, NULL, 10);
      if (rid >= 0 && rid < run->ninst) run->inst[rid].done = true;
    } else if (line[0] == 'E' || line[0] == 'F') {
      run->nfaults++;
      sb_puts(&faults, line);
    }
  }
  free(line);
  run->faults = sb_take(&faults);
}

static bool write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return false;
  bool ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok;
}

/* Generates, compiles and runs the tracer of run->impl; false (with a message) if any step
 * fails before the traces exist. */
static bool run_tracer(ImplRun *run) {
  char dir[] = "/tmp/kasmeta.XXXXXX";
  if (!mkdtemp(dir)) return false;
  char *text = program_text(run);
  if (!text) {
    print_error("%s: instantiation failed\n", run->impl->name);
    return false;
  }
  char *src = xasprintf("%s/tracer_%s.cpp", dir, run->impl->name);
  char *bin = xasprintf("%s/tracer_%s", dir, run->impl->name);
  char *out = xasprintf("%s/trace.txt", dir);
  bool ok = write_file(src, text);
  char *cmd = xasprintf("g++ -std=c++17 -O0 -w -DKAS_TRACER_REAL=%s -Itests/metadata -I%s -o %s "
                        "%s 2>&1", target_real_name(run->precision), lib->dir, bin, src);
  if (ok && system(cmd) != 0) {
    print_error("%s: the tracer program does not compile (%s)\n", run->impl->name, src);
    ok = false;
  }
  free(cmd);
  if (ok) {
    cmd = xasprintf("%s > %s", bin, out);
    int rc = system(cmd);
    (void)rc; /* a fault exits non-zero after printing its F line; the traces tell */
    free(cmd);
    FILE *f = fopen(out, "r");
    ok = f != NULL;
    if (f) {
      parse_output(run, f);
      fclose(f);
    }
  }
  run->ran = ok;
  if (getenv("KASGEN_TRACER_KEEP")) {
    print_message("%s: tracer kept in %s\n", run->impl->name, dir);
  } else if (ok) {
    unlink(src), unlink(bin), unlink(out), rmdir(dir);
  }
  free(text), free(src), free(bin), free(out);
  return ok;
}

/* ------------------------------------------------------------------------------------------ */
/* The comparison                                                                              */
/* ------------------------------------------------------------------------------------------ */

static void print_offsets(const char *what, const long *v, int n) {
  print_message("      %s {", what);
  for (int k = 0; k < n && k < 24; k++) print_message("%s%ld", k ? " " : "", v[k]);
  print_message("%s}\n", n > 24 ? " ..." : "");
}

/* Compares one recorded set with the expected one: equal, or (subset) contained in it. */
static bool sets_match(const long *got, int ngot, const long *want, int nwant, bool subset) {
  if (!subset) {
    if (ngot != nwant) return false;
    for (int k = 0; k < ngot; k++)
      if (got[k] != want[k]) return false;
    return true;
  }
  int w = 0;
  for (int k = 0; k < ngot; k++) {
    while (w < nwant && want[w] < got[k]) w++;
    if (w == nwant || want[w] != got[k]) return false;
  }
  return true;
}

typedef struct {
  const Impl *impl;
  int mismatches;
  bool report;
} Checker;

static void mismatch(Checker *ck, const Instance *in, int kase, int lin, int arg, const char *why,
                     const long *got, int ngot, const long *want, int nwant) {
  if (ck->report && ck->mismatches < MAX_REPORTS) {
    print_message("    %s %s %d (E=%d, W=%d, %s-major, arg %d %s) case %d thread %d: %s\n",
                  ck->impl->name, kind_name(in->kind), in->io_index, in->e, in->shape.w,
                  target_layout_name(in->layout), arg,
                  in->place[arg] == PLACE_REGISTER ? "register" : "shared", kase, lin, why);
    if (got) print_offsets("code touches   ", got, ngot);
    if (want) print_offsets("metadata says  ", want, nwant);
  }
  ck->mismatches++;
}

/* The expected set of argument a for thread lin under pattern p: absolute offsets (shared) or
 * relative to the start (register).  Also checks the offsets lie inside the buffer. */
static long *expected_set(Checker *ck, const Instance *in, const Pattern *p, int a, int lin,
                          int *n_out) {
  AccessSet set;
  if (!pattern_access_set(p, in->shape, lin, &set)) {
    mismatch(ck, in, 0, lin, a, "pattern cannot be evaluated", NULL, 0, NULL, 0);
    *n_out = 0;
    return NULL;
  }
  long limit = (long)in->e * in->size[a];
  int extent = in->place[a] == PLACE_REGISTER ? pattern_register_extent(p, in->shape) : 0;
  for (int k = 0; k < set.n; k++) {
    if (set.offsets[k] < 0 || set.offsets[k] >= limit)
      mismatch(ck, in, 0, lin, a, "pattern offset outside the buffer", NULL, 0, set.offsets,
               set.n);
    if (in->place[a] == PLACE_REGISTER) {
      set.offsets[k] -= set.start;
      if (set.offsets[k] < 0 || set.offsets[k] >= extent)
        mismatch(ck, in, 0, lin, a, "register offset outside [0, extent)", NULL, 0, NULL, 0);
    }
  }
  *n_out = set.n;
  return set.offsets;
}

/* What argument a of this routine kind must do: 'r' read its set, 'w' write it. */
static int expected_rw(const Instance *in, int a) {
  if (in->kind == ROUTINE_LOAD) return 1;
  if (in->kind == ROUTINE_SAVE) return 0;
  return a == in->nargs - 1 ? 1 : 0;
}

static void check_thread(Checker *ck, const Instance *in, const Pattern *const *pats, int kase,
                         int lin) {
  for (int a = 0; a < in->nargs; a++) {
    int nwant;
    long *want = expected_set(ck, in, pats[a], a, lin, &nwant);
    int rw = expected_rw(in, a);
    int s = slot_of(in, kase, lin, a, rw), other = slot_of(in, kase, lin, a, !rw);
    bool subset = in->kind == ROUTINE_SAVE && kase >= PARTIAL_CASE_MIN;
    if (!sets_match(in->offs[s], in->noffs[s], want, nwant, subset))
      mismatch(ck, in, kase, lin, a,
               rw ? "writes differ from the pattern" : "reads differ from the pattern",
               in->offs[s], in->noffs[s], want, nwant);
    if (in->noffs[other])
      mismatch(ck, in, kase, lin, a,
               rw ? "reads a buffer it should only write" : "writes a buffer it should only read",
               in->offs[other], in->noffs[other], NULL, 0);
    free(want);
  }
}

/* A load's sets must together cover its whole buffer, or the compute reads garbage. */
static void check_load_covers(Checker *ck, const Instance *in, const Pattern *p) {
  long size = (long)in->e * in->size[0];
  char *hit = xcalloc(size, 1);
  for (int lin = 0; lin < in->threads; lin++) {
    AccessSet set;
    if (!pattern_access_set(p, in->shape, lin, &set)) break;
    for (int k = 0; k < set.n; k++)
      if (set.offsets[k] >= 0 && set.offsets[k] < size) hit[set.offsets[k]] = 1;
    access_set_free(&set);
  }
  for (long o = 0; o < size; o++)
    if (!hit[o]) {
      long miss = o;
      mismatch(ck, in, 0, 0, 0, "the load's sets leave a buffer offset unfilled", NULL, 0, &miss,
               1);
      break;
    }
  free(hit);
}

/* Compares every instance of a run against patterns pats_of(instance); returns mismatches. */
static int check_instance(Checker *ck, const Instance *in, const Pattern *const *pats) {
  int before = ck->mismatches;
  if (!in->done) {
    mismatch(ck, in, 0, 0, 0, "the tracer did not finish this routine", NULL, 0, NULL, 0);
    return ck->mismatches - before;
  }
  for (int kase = 0; kase < in->ncases; kase++)
    for (int lin = 0; lin < in->threads; lin++) check_thread(ck, in, pats, kase, lin);
  if (in->kind == ROUTINE_LOAD) check_load_covers(ck, in, pats[0]);
  return ck->mismatches - before;
}

static void free_run(ImplRun *run) {
  for (int i = 0; i < run->ninst; i++) {
    Instance *in = &run->inst[i];
    int nslots = in->ncases * in->threads * in->nargs * 2;
    for (int s = 0; s < nslots; s++) free(in->offs[s]);
    free(in->offs), free(in->noffs), free(in->name);
  }
  free(run->inst), free(run->faults), free(run);
}

static ImplRun *trace_impl(const Impl *im, Precision precision) {
  ImplRun *run = xcalloc(1, sizeof *run);
  run->impl = im;
  run->precision = precision;
  build_instances(run);
  run_tracer(run);
  return run;
}

/* ------------------------------------------------------------------------------------------ */
/* Tests                                                                                       */
/* ------------------------------------------------------------------------------------------ */

/* Prints the tracer's E/F lines one by one (cmocka's messages are short), at most a few. */
static void print_faults(const ImplRun *run) {
  const char *p = run->faults;
  for (int k = 0; k < MAX_REPORTS && p && *p; k++) {
    const char *nl = strchr(p, '\n');
    int len = nl ? (int)(nl - p) : (int)strlen(p);
    print_message("    %s: %.*s\n", run->impl->name, len, p);
    p = nl ? nl + 1 : NULL;
  }
}

/* Instances of a run with this layout: every non-contiguous load and save has one. */
static int count_layout(const ImplRun *run, Layout layout) {
  int n = 0;
  for (int i = 0; i < run->ninst; i++) n += run->inst[i].layout == layout;
  return n;
}

static void test_impl_metadata(void **state) {
  const Impl *im = *state;
  int noncontiguous = 0;
  for (int j = 0; j < im->nloads + im->nsaves; j++)
    noncontiguous += !(j < im->nloads ? im->loads[j] : im->saves[j - im->nloads]).contiguous;
  for (int prec = PREC_SINGLE; prec <= PREC_DOUBLE; prec++) {
    ImplRun *run = trace_impl(im, (Precision)prec);
    assert_true(run->ran);
    print_faults(run);
    Checker ck = {.impl = im, .report = true};
    long sets = 0;
    for (int i = 0; i < run->ninst; i++) {
      const Instance *in = &run->inst[i];
      check_instance(&ck, in, in->pat);
      sets += (long)in->ncases * in->threads * in->nargs;
    }
    print_message("  %s, %s: %d routine instances (%d component-major), %ld per-thread sets "
                  "compared, %d tracer errors, %d mismatches\n", im->name,
                  target_precision_name((Precision)prec), run->ninst,
                  count_layout(run, LAYOUT_COMPONENT), sets, run->nfaults, ck.mismatches);
    /* Every load, the compute and every save was checked at two E and at least shared, and
     * every non-contiguous load and save on a component-major array too. */
    assert_true(run->ninst >= 2 * (im->nloads + 1 + im->nsaves));
    assert_true(count_layout(run, LAYOUT_COMPONENT) >= 2 * noncontiguous);
    assert_int_equal(run->nfaults, 0);
    assert_int_equal(ck.mismatches, 0);
    free_run(run);
  }
}

/* A copy of p with one expression replaced ("start"/"count"), parsed like the library does. */
static bool altered_pattern(const Pattern *p, const char *which, const char *delta, Pattern *out) {
  char *start = strcmp(which, "start") ? xstrdup(p->start_src)
                                       : xasprintf("(%s)%s", p->start_src, delta);
  char *count = strcmp(which, "count") ? xstrdup(p->count_src)
                                       : xasprintf("(%s)%s", p->count_src, delta);
  char *value = xasprintf("start \"%s\", block \"%s\", stride \"%s\", count \"%s\", noreg %d",
                          start, p->block_src, p->stride_src, count, p->noreg ? 1 : 0);
  bool ok = pattern_parse(value, (SrcLoc){.file = "altered pattern"}, out);
  free(start), free(count), free(value);
  return ok;
}

/* Finds the instance of run with this kind, E = 4, index and placement mask, its array
 * element-major at the precision's vector width. */
static const Instance *find_instance(const ImplRun *run, RoutineKind kind, int io_index,
                                     int regmask) {
  for (int i = 0; i < run->ninst; i++) {
    const Instance *in = &run->inst[i];
    int mask = 0;
    for (int a = 0; a < in->nargs; a++) mask |= (in->place[a] == PLACE_REGISTER) << a;
    if (in->kind == kind && in->io_index == io_index && in->e == 4 && mask == regmask &&
        in->layout == LAYOUT_ELEMENT && in->shape.w == target_vector_width(run->precision))
      return in;
  }
  return NULL;
}

/* Counts mismatches of one instance with argument `arg`'s pattern altered. */
static int mismatches_with(const ImplRun *run, const Instance *in, int arg, const char *which,
                           const char *delta) {
  Pattern alt;
  assert_true(altered_pattern(in->pat[arg], which, delta, &alt));
  const Pattern *pats[MAX_PATTERN_ARGS];
  memcpy(pats, in->pat, sizeof pats);
  pats[arg] = &alt;
  Checker ck = {.impl = run->impl, .report = false};
  int n = check_instance(&ck, in, pats);
  pattern_free(&alt);
  return n;
}

/* Wrong metadata must be detected: the first implementation's patterns, shifted or shortened,
 * no longer match its code, and unaltered they do. */
static void test_altered_patterns_detected(void **state) {
  (void)state;
  assert_true(lib->nfuncs > 0 && lib->funcs[0].nimpls > 0);
  ImplRun *run = trace_impl(&lib->funcs[0].impls[0], PREC_SINGLE);
  assert_true(run->ran);
  const Instance *compute = find_instance(run, ROUTINE_COMPUTE, 0, 0);
  const Instance *load = find_instance(run, ROUTINE_LOAD, 0, 0);
  const Instance *save = find_instance(run, ROUTINE_SAVE, 0, 0);
  assert_non_null(compute), assert_non_null(load), assert_non_null(save);
  Checker ck = {.impl = run->impl, .report = true};
  assert_int_equal(check_instance(&ck, compute, compute->pat), 0);
  for (int a = 0; a < compute->nargs; a++) {
    assert_true(mismatches_with(run, compute, a, "start", "+1") > 0);
    assert_true(mismatches_with(run, compute, a, "count", "+1") > 0);
  }
  assert_true(mismatches_with(run, load, 0, "start", "+1") > 0);
  assert_true(mismatches_with(run, save, 0, "start", "+1") > 0);
  /* In registers a shifted start shifts the set with it, but a longer count still shows. */
  for (int a = 0; a < compute->nargs; a++) {
    if (compute->pat[a]->noreg) continue;
    const Instance *reg = find_instance(run, ROUTINE_COMPUTE, 0, 1 << a);
    assert_non_null(reg);
    assert_int_equal(mismatches_with(run, reg, a, "count", "+0"), 0);
    assert_true(mismatches_with(run, reg, a, "count", "+1") > 0);
  }
  free_run(run);
}

int main(void) {
  lib = library_load(TEST_LIBRARY);
  if (!lib) {
    fprintf(stderr, "test_metadata: cannot load %s\n", TEST_LIBRARY);
    return 1;
  }
  int nimpls = 0;
  for (int f = 0; f < lib->nfuncs; f++) nimpls += lib->funcs[f].nimpls;
  struct CMUnitTest *tests = xcalloc(nimpls + 1, sizeof *tests);
  int t = 0;
  for (int f = 0; f < lib->nfuncs; f++)
    for (int i = 0; i < lib->funcs[f].nimpls; i++) {
      Impl *im = &lib->funcs[f].impls[i];
      tests[t].name = im->name;
      tests[t].test_func = test_impl_metadata;
      tests[t].initial_state = im;
      t++;
    }
  tests[t].name = "altered_patterns_detected";
  tests[t].test_func = test_altered_patterns_detected;
  t++;
  int failed = _cmocka_run_group_tests("metadata", tests, t, NULL, NULL);
  free(tests);
  library_free(lib);
  return failed;
}
