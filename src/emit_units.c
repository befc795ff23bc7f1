/*
 * emit_units.c — a standalone kernel for every implementation of every library function
 * (docs/design.md §5.3's cu_<f>_<i>), for unit tests of the library on the CPU (check-cpu) and on
 * a GPU (run); `kasgen units` (cli_tools.c) writes them.
 *
 * A unit is built exactly like a fused candidate, so that units exercise the real code path: a
 * one-statement spec `r = f(a0, a1); return r;` goes through spec_parse, dag_build and
 * combine_fusion(keep_all) and the chosen single-call plan through emit_cuda_candidate.  Per
 * implementation the unit cu_<f>_<i> uses coalesced loads and saves where the implementation has
 * them, and cu_<f>_<i>_owner the owner routines (registers) when such a plan exists as well.
 *
 * Output: DIR/<f>/ per function, laid out like a spec's output (docs/generated.md): common/
 * (the CPU graph, check_cpu.cpp and the shared headers from emit_common.c; kas_candidates.h,
 * all_kernels.cu and src/runtime/check_gpu.cu from here), one folder per unit and a Makefile
 * with check-cpu (g++, no GPU), compile (one nvcc run per function) and run (the GPU check at
 * n = 1, 7, 1000003, 4194304).
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_UNITS_PER_FN 64

/* One unit: a one-kernel candidate.  Its row of kas_candidates.h names it "cu_mmul33_2" or
 * "cu_mmul33_2_owner" and describes it as "mmul33_2 E=32 load0:coalesced ...". */
typedef struct {
  KernelPlan *plan; /* owned by the plan list of the function */
  Candidate cand;
} Unit;

/* ------------------------------------------------------------------------------------------ */
/* Choosing plans                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* The routine moving a buffer of a one-call kernel to or from global memory, if any. */
static const IoRoutine *buffer_routine(const Buffer *b) { return b->load ? b->load : b->save; }

/* Counts the plan's load/save routines by variant. */
static void count_variants(const KernelPlan *p, int *coalesced, int *owner, int *total) {
  *coalesced = *owner = *total = 0;
  for (int b = 0; b < p->nbuffers; b++) {
    const IoRoutine *io = buffer_routine(&p->buffers[b]);
    if (!io) continue;
    (*total)++;
    if (io->variant && !strcmp(io->variant, "coalesced")) (*coalesced)++;
    if (io->variant && !strcmp(io->variant, "owner")) (*owner)++;
  }
}

/* Better of two plans of one kind: the implementation's recommended E first, then the model's
 * prediction (plans arrive sorted by prediction, so the first one found wins ties). */
static bool prefer(const KernelPlan *cand, const KernelPlan *best) {
  if (!best) return true;
  int rec = cand->impl[0]->recommended_e;
  return rec && cand->e == rec && best->e != rec;
}

/* The coalesced unit: most coalesced routines; the owner unit: only owner routines. */
static void choose_plans(KernelPlan **plans, int n, const Impl *im, KernelPlan **coalesced_out,
                         KernelPlan **owner_out) {
  KernelPlan *best_c = NULL, *best_o = NULL;
  int best_score = -1;
  for (int i = 0; i < n; i++) {
    KernelPlan *p = plans[i];
    if (p->ncalls != 1 || p->impl[0] != im) continue;
    int c, o, t;
    count_variants(p, &c, &o, &t);
    if (c > best_score || (c == best_score && prefer(p, best_c))) {
      best_c = p;
      best_score = c;
    }
    if (o == t && prefer(p, best_o)) best_o = p;
  }
  *coalesced_out = best_c;
  *owner_out = best_o != best_c ? best_o : NULL;
}

static char *describe_plan(const KernelPlan *p) {
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "%s E=%d", p->impl[0]->name, p->e);
  for (int b = 0; b < p->nbuffers; b++) {
    const IoRoutine *io = buffer_routine(&p->buffers[b]);
    if (io)
      sb_printf(&sb, " %s%d:%s", io->kind == ROUTINE_LOAD ? "load" : "save", io->index,
                io->variant ? io->variant : "?");
  }
  if (p->barriers) sb_printf(&sb, " barriers:%d", p->barriers);
  char *text = sb_take(&sb);
  char *safe = c_safe_text(text); /* holds the INI's variant text, which lands in a C string */
  free(text);
  return safe;
}

/* ------------------------------------------------------------------------------------------ */
/* Per-function files                                                                          */
/* ------------------------------------------------------------------------------------------ */

/* r = f(a0, a1, ...); with one variable per parameter. */
static char *unit_spec_text(const Function *fn) {
  StrBuf sb;
  sb_init(&sb);
  for (int a = 0; a < fn->nparams; a++) sb_printf(&sb, "%s a%d;\n", fn->params[a]->name, a);
  sb_printf(&sb, "%s r;\ninput ", fn->result->name);
  for (int a = 0; a < fn->nparams; a++) sb_printf(&sb, "%sa%d", a ? ", " : "", a);
  sb_printf(&sb, ";\nr = %s(", fn->name);
  for (int a = 0; a < fn->nparams; a++) sb_printf(&sb, "%sa%d", a ? ", " : "", a);
  sb_puts(&sb, ");\nreturn r;\n");
  return sb_take(&sb);
}

static char *units_makefile(const Dag *dag, const CandidateEntry *units, int nunits) {
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "# Makefile — generated by kasgen units: the standalone kernels of %s.\n"
                 "#   make check-cpu   host forms against the CPU reference (g++, no GPU)\n"
                 "#   make compile     compile every kernel with nvcc (no GPU)\n"
                 "#   make run         on a GPU: every unit at n = 1, 7, 1000003, 4194304\n"
                 "#   make sanitize    on a GPU: compute-sanitizer memcheck and racecheck, n = 1, 7, 100003\n"
                 "# What nvcc builds is rebuilt whenever NVCC or ARCH change (build/nvcc-command).\n"
                 "NVCC ?= nvcc\nARCH ?= sm_90\nCC ?= gcc\nCXX ?= g++\nSANITIZER ?= compute-sanitizer\n"
                 "B := build\n",
            dag->spec->name);
  sb_puts(&sb, "HOST_SRC :=");
  for (int u = 0; u < nunits; u++) sb_printf(&sb, " \\\n    %s/kernels_host.cpp", units[u].name);
  sb_puts(&sb, "\nCU_SRC :=");
  for (int u = 0; u < nunits; u++) sb_printf(&sb, " \\\n    %s/kernels.cu", units[u].name);
  sb_puts(&sb,
          "\nREFS := $(B)/kas_refs.o $(B)/cpu_graph.o\n\n"
          ".PHONY: all check-cpu compile run sanitize clean FORCE\n"
          "all: $(B)/check_cpu $(B)/check_gpu\n\n"
          "check-cpu: $(B)/check_cpu\n\t$(B)/check_cpu\n\n"
          "compile: $(B)/all_kernels.o\n\n"
          "run: $(B)/check_gpu\n\t$(B)/check_gpu\n\n"
          "sanitize: $(B)/check_gpu\n"
          "\t$(SANITIZER) --tool memcheck --error-exitcode 1 $(B)/check_gpu 1 7 100003\n"
          "\t$(SANITIZER) --tool racecheck --error-exitcode 1 $(B)/check_gpu 1 7 100003\n\n"
          "$(B):\n\tmkdir -p $(B)\n\n"
          "# Rewritten only when the nvcc command changes; what nvcc builds depends on it.\n"
          "NVCC_COMMAND = $(NVCC) -O3 -arch=$(ARCH)\n"
          "$(B)/nvcc-command: FORCE | $(B)\n"
          "\t@echo '$(NVCC_COMMAND)' | cmp -s - $@ || echo '$(NVCC_COMMAND)' >$@\n\n"
          "$(B)/%.o: common/%.c | $(B)\n\t$(CC) -O2 -c -o $@ $<\n\n"
          "$(B)/check_cpu: common/check_cpu.cpp $(HOST_SRC) common/kas_candidates.h "
          "common/kas_device.h $(REFS)\n"
          "\t$(CXX) -O1 -DKAS_HOST -Wno-unknown-pragmas -o $@ common/check_cpu.cpp $(HOST_SRC) "
          "$(REFS)\n\n"
          "$(B)/all_kernels.o: common/all_kernels.cu $(CU_SRC) common/kas_device.h \\\n"
          "    $(B)/nvcc-command | $(B)\n"
          "\t$(NVCC) -O3 -arch=$(ARCH) -c -o $@ common/all_kernels.cu\n\n"
          "$(B)/check_gpu.o: common/check_gpu.cu common/kas_candidates.h common/kas_gpu.h \\\n"
          "    common/kas_check.h $(B)/nvcc-command | $(B)\n"
          "\t$(NVCC) -O3 -arch=$(ARCH) -c -o $@ common/check_gpu.cu\n\n"
          "$(B)/check_gpu: $(B)/check_gpu.o $(B)/all_kernels.o $(REFS)\n"
          "\t$(NVCC) -arch=$(ARCH) -o $@ $^\n\n"
          "clean:\n\trm -rf $(B)\n");
  return sb_take(&sb);
}

static bool write_text(EmitDir *d, const char *path, char *text) {
  bool ok = emit_dir_write(d, path, text);
  free(text);
  return ok;
}

/* Emits every unit of fn into d, its folder out/<fn>/, in the given precision (every array
 * element-major); nothing is written before units_emit closes d.  Returns false after
 * reporting an error. */
static bool emit_function_units(const Library *lib, const TimingDb *db, const Function *fn,
                                Precision precision, EmitDir *d, int *nunits_out) {
  *nunits_out = 0;
  char *path = xasprintf("%s.spec", fn->name);
  char *text = unit_spec_text(fn);
  Spec *spec = spec_parse(path, text, lib);
  Dag *dag = spec ? dag_build(spec) : NULL;
  Target *target = dag ? target_new(dag, precision, NULL) : NULL;
  bool ok = target != NULL;
  int nplans = 0;
  SearchContext *ctx = ok ? search_context_new(dag, db, target) : NULL;
  KernelPlan **plans = ok ? combine_fusion(ctx, nodeset_of(0), true, &nplans) : NULL;
  search_context_free(ctx);
  Unit units[MAX_UNITS_PER_FN];
  CandidateEntry entries[MAX_UNITS_PER_FN];
  int nunits = 0;
  for (int i = 0; ok && i < fn->nimpls && nunits + 2 <= MAX_UNITS_PER_FN; i++) {
    const Impl *im = &fn->impls[i];
    KernelPlan *coalesced, *owner;
    choose_plans(plans, nplans, im, &coalesced, &owner);
    if (!coalesced) {
      diag_error(im->fn->loc, "implementation %s: no valid standalone kernel plan", im->name);
      ok = false;
      break;
    }
    entries[nunits] = (CandidateEntry){xasprintf("cu_%s", im->name), NULL, nunits + 1,
                                       describe_plan(coalesced), NULL};
    units[nunits++].plan = coalesced;
    if (owner) {
      entries[nunits] = (CandidateEntry){xasprintf("cu_%s_owner", im->name), NULL, nunits + 1,
                                         describe_plan(owner), NULL};
      units[nunits++].plan = owner;
    }
  }
  bool failed = false;
  UnalignedPlanner *planner = ok ? unaligned_planner_new(dag, db, target, LOOPS_UNROLL) : NULL;
  for (int u = 0; u < nunits; u++) {
    units[u].cand = (Candidate){.kernels = &units[u].plan, .nkernels = 1,
                                .predicted_ns_per_elem = units[u].plan->predicted_ns_per_elem,
                                .rank = u + 1};
    entries[u].cand = &units[u].cand;
    if (!failed) entries[u].unaligned = unaligned_candidate(planner, &units[u].cand, &failed);
  }
  unaligned_planner_free(planner);
  ok = ok && !failed;
  for (int u = 0; ok && u < nunits; u++)
    ok = emit_cuda_candidate(d, dag, target, &units[u].cand, entries[u].unaligned,
                             entries[u].name);
  ok = ok && emit_common(d, dag, lib);
  ok = ok && write_text(d, "common/kas_candidates.h",
                        emit_candidates_header(dag, target, db, entries, nunits,
                                               DEFAULT_ELEMENTS));
  ok = ok && write_text(d, "common/all_kernels.cu", emit_all_kernels(dag, entries, nunits));
  ok = ok && emit_runtime_file(d, "common", "check_gpu.cu");
  ok = ok && write_text(d, "Makefile", units_makefile(dag, entries, nunits));
  for (int u = 0; u < nunits; u++) {
    free(entries[u].name), free(entries[u].kernels);
    unaligned_candidate_free(entries[u].unaligned);
  }
  target_free(target);
  for (int p = 0; p < nplans; p++) kernel_plan_free(plans[p]);
  free(plans);
  if (dag) dag_free(dag);
  if (spec) spec_free(spec);
  free(text);
  free(path);
  *nunits_out = nunits;
  return ok;
}

/* Opens out/<f>/ for every function f with implementations whose folder exists (existing) or
 * not (!existing): emit_dir_open checks the ones there, reporting each refusal, and creates the
 * others, so that a refusal leaves no empty folder behind.  False after a refusal. */
static bool open_function_dirs(const Library *lib, const char *out, EmitDir **dirs,
                               bool existing) {
  bool ok = true;
  for (int f = 0; f < lib->nfuncs; f++) {
    if (lib->funcs[f].nimpls == 0 || dirs[f]) continue;
    char *dir = xasprintf("%s/%s", out, lib->funcs[f].name);
    struct stat st;
    if ((lstat(dir, &st) == 0) == existing) {
      dirs[f] = emit_dir_open(dir);
      ok = dirs[f] && ok;
    }
    free(dir);
  }
  return ok;
}

/* Like the main job, all or nothing: every function's folder is checked first, and a folder
 * refused or a unit that fails writes no folder at all (it wrote the others, then said exit 1). */
int units_emit(const Library *lib, const char *out_dir, Precision precision,
               int *nfunctions_out) {
  TimingDb *db = timingdb_analytic(); /* the choice of plans does not need measured timings */
  EmitDir **dirs = xcalloc((size_t)lib->nfuncs + 1, sizeof *dirs);
  bool opened = open_function_dirs(lib, out_dir, dirs, true) &&
                open_function_dirs(lib, out_dir, dirs, false);
  bool ok = opened;
  int total = 0, functions = 0;
  for (int f = 0; opened && f < lib->nfuncs; f++) {
    int n = 0;
    if (dirs[f] && !emit_function_units(lib, db, &lib->funcs[f], precision, dirs[f], &n))
      ok = false; /* the others are still emitted, for their errors */
    total += n;
    functions += n > 0;
  }
  for (int f = 0; f < lib->nfuncs; f++) {
    if (ok && dirs[f]) ok = emit_dir_close(dirs[f]);
    else emit_dir_discard(dirs[f]);
  }
  free(dirs);
  timingdb_free(db);
  *nfunctions_out = functions;
  return ok ? total : -1;
}
