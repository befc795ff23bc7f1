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
 * Output: DIR/<f>/ per function, laid out like a spec's output
 * (docs/generated.md): common/ (kas_device.h, kas_refs.c, cpu_graph.c, check_cpu.cpp from
 * emit_cuda.c; kas_candidates.h, all_kernels.cu and check_gpu.cu from here), one folder per unit
 * and a Makefile with check-cpu (g++, no GPU), compile (one nvcc run per function) and run (the
 * GPU check at n = 1, 7, 1000003, 4194304).
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>

#define MAX_UNITS_PER_FN 64

typedef struct {
  char *name;       /* "cu_mmul33_2" or "cu_mmul33_2_owner" */
  char *describe;   /* "mmul33_2 E=32: load 0 coalesced, ..." */
  KernelPlan *plan; /* owned by the plan list of the function */
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
  return sb_take(&sb);
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

static void name_list(StrBuf *sb, const char *type, const char *array, const Dag *dag,
                      const int *values, int n, bool floats) {
  sb_printf(sb, "static const %s %s[%d] = {", type, array, n > 0 ? n : 1);
  for (int k = 0; k < n; k++) {
    const Value *v = &dag->values[values[k]];
    if (floats)
      sb_printf(sb, "%s%d", k ? ", " : "", dag_value_floats(dag, values[k]));
    else
      sb_printf(sb, "%s\"%s\"", k ? ", " : "", dag->spec->vars[v->var].name);
  }
  sb_puts(sb, "};\n");
}

/* common/kas_candidates.h in the format of docs/generated.md, one entry per unit. */
static char *candidates_h(const Dag *dag, const Unit *units, int nunits) {
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "/* common/kas_candidates.h — generated by kasgen units: the standalone kernels "
                 "of %s\n * (format: docs/generated.md). */\n#ifndef KAS_CANDIDATES_H\n"
                 "#define KAS_CANDIDATES_H\n#include <stddef.h>\n",
            dag->spec->name);
  sb_printf(&sb, "#define KAS_SPEC_NAME \"%s\"\n#define KAS_NINPUTS %d\n#define KAS_NOUTPUTS %d\n"
                 "#define KAS_DEFAULT_N 4194304\n",
            dag->spec->name, dag->ninputs, dag->noutputs);
  name_list(&sb, "char *const", "kas_input_names", dag, dag->inputs, dag->ninputs, false);
  name_list(&sb, "int", "kas_input_floats", dag, dag->inputs, dag->ninputs, true);
  name_list(&sb, "char *const", "kas_output_names", dag, dag->outputs, dag->noutputs, false);
  name_list(&sb, "int", "kas_output_floats", dag, dag->outputs, dag->noutputs, true);
  sb_puts(&sb, "#ifdef KAS_CANDIDATES_DEVICE\n#include <cuda_runtime.h>\n#endif\n");
  for (int u = 0; u < nunits; u++) {
    const char *n = units[u].name;
    sb_printf(&sb, "#ifdef KAS_CANDIDATES_DEVICE\nextern \"C\" int kas_%s_launch(const float "
                   "*const *, float *const *, void *, size_t, cudaStream_t);\nextern \"C\" size_t "
                   "kas_%s_workspace_bytes(size_t);\n#endif\n",
              n, n);
    sb_printf(&sb, "#ifdef KAS_CANDIDATES_HOST\nextern \"C\" void kas_%s_launch_host(const float "
                   "*const *, float *const *, void *, size_t, int);\nextern \"C\" size_t "
                   "kas_%s_host_workspace_bytes(size_t);\n#endif\n",
              n, n);
  }
  sb_puts(&sb,
          "typedef struct {\n  const char *name;\n  double predicted_ns_per_elem;\n"
          "  int predicted_rank;\n  int nkernels;\n  const char *kernels;\n"
          "#ifdef KAS_CANDIDATES_DEVICE\n"
          "  int (*launch)(const float *const *in, float *const *out, void *workspace, size_t n,\n"
          "                cudaStream_t stream);\n  size_t (*workspace_bytes)(size_t n);\n#endif\n"
          "#ifdef KAS_CANDIDATES_HOST\n"
          "  void (*launch_host)(const float *const *in, float *const *out, void *workspace, "
          "size_t n,\n                      int order);\n"
          "  size_t (*host_workspace_bytes)(size_t n);\n#endif\n} KasCandidate;\n");
  sb_printf(&sb, "#define KAS_NCANDIDATES %d\nstatic const KasCandidate "
                 "kas_candidates[KAS_NCANDIDATES] = {\n",
            nunits);
  for (int u = 0; u < nunits; u++) {
    const char *n = units[u].name;
    sb_printf(&sb, "    {\"%s\", %.6g, %d, 1, \"%s\"\n#ifdef KAS_CANDIDATES_DEVICE\n     , "
                   "kas_%s_launch, kas_%s_workspace_bytes\n#endif\n#ifdef KAS_CANDIDATES_HOST\n"
                   "     , kas_%s_launch_host, kas_%s_host_workspace_bytes\n#endif\n    },\n",
              n, units[u].plan->predicted_ns_per_elem, u + 1, units[u].describe, n, n, n, n);
  }
  sb_puts(&sb, "};\n#endif\n");
  return sb_take(&sb);
}

/* One nvcc translation unit with every unit's kernels.cu, each in its own namespace (the
 * launch functions keep their extern "C" names). */
static char *all_kernels_cu(const Unit *units, int nunits) {
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, "/* common/all_kernels.cu — generated by kasgen units: every unit's kernels.cu in "
               "one nvcc run. */\n#include <cuda_runtime.h>\n#include <stddef.h>\n"
               "#include <stdint.h>\n#include <math.h>\n#include \"kas_device.h\"\n");
  for (int u = 0; u < nunits; u++)
    sb_printf(&sb, "namespace %s {\n#include \"../%s/kernels.cu\"\n}\n", units[u].name,
              units[u].name);
  return sb_take(&sb);
}

static char *units_makefile(const Dag *dag, const Unit *units, int nunits) {
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "# Makefile — generated by kasgen units: the standalone kernels of %s.\n"
                 "#   make check-cpu   host forms against the CPU reference (g++, no GPU)\n"
                 "#   make compile     compile every kernel with nvcc (no GPU)\n"
                 "#   make run         on a GPU: every unit at n = 1, 7, 1000003, 4194304\n"
                 "#   make sanitize    on a GPU: compute-sanitizer memcheck and racecheck, n = 1, 7, 100003\n"
                 "NVCC ?= nvcc\nARCH ?= sm_90\nCC ?= gcc\nCXX ?= g++\nSANITIZER ?= compute-sanitizer\n"
                 "B := build\n",
            dag->spec->name);
  sb_puts(&sb, "HOST_SRC :=");
  for (int u = 0; u < nunits; u++) sb_printf(&sb, " %s/kernels_host.cpp", units[u].name);
  sb_puts(&sb, "\nCU_SRC :=");
  for (int u = 0; u < nunits; u++) sb_printf(&sb, " %s/kernels.cu", units[u].name);
  sb_puts(&sb,
          "\nREFS := $(B)/kas_refs.o $(B)/cpu_graph.o\n\n"
          ".PHONY: all check-cpu compile run sanitize clean\n"
          "all: $(B)/check_cpu $(B)/check_gpu\n\n"
          "check-cpu: $(B)/check_cpu\n\t$(B)/check_cpu\n\n"
          "compile: $(B)/all_kernels.o\n\n"
          "run: $(B)/check_gpu\n\t$(B)/check_gpu\n\n"
          "sanitize: $(B)/check_gpu\n"
          "\t$(SANITIZER) --tool memcheck --error-exitcode 1 $(B)/check_gpu 1 7 100003\n"
          "\t$(SANITIZER) --tool racecheck --error-exitcode 1 $(B)/check_gpu 1 7 100003\n\n"
          "$(B):\n\tmkdir -p $(B)\n\n"
          "$(B)/%.o: common/%.c | $(B)\n\t$(CC) -O2 -c -o $@ $<\n\n"
          "$(B)/check_cpu: common/check_cpu.cpp $(HOST_SRC) common/kas_candidates.h "
          "common/kas_device.h $(REFS)\n"
          "\t$(CXX) -O1 -DKAS_HOST -Wno-unknown-pragmas -o $@ common/check_cpu.cpp $(HOST_SRC) "
          "$(REFS)\n\n"
          "$(B)/all_kernels.o: common/all_kernels.cu $(CU_SRC) common/kas_device.h | $(B)\n"
          "\t$(NVCC) -O3 -arch=$(ARCH) -c -o $@ common/all_kernels.cu\n\n"
          "$(B)/check_gpu.o: common/check_gpu.cu common/kas_candidates.h | $(B)\n"
          "\t$(NVCC) -O3 -arch=$(ARCH) -c -o $@ common/check_gpu.cu\n\n"
          "$(B)/check_gpu: $(B)/check_gpu.o $(B)/all_kernels.o $(REFS)\n"
          "\t$(NVCC) -arch=$(ARCH) -o $@ $^\n\n"
          "clean:\n\trm -rf $(B)\n");
  return sb_take(&sb);
}

/* The GPU check of every unit: random inputs, outputs poisoned with a guard zone behind them
 * (a save must not write elements >= n), the normwise error against the CPU graph, and the time
 * and bandwidth at the largest size. */
static const char check_gpu_text[] =
    "/* common/check_gpu.cu — generated by kasgen units: runs every standalone kernel on the GPU\n"
    " * at n = 1, 7, 1000003, 4194304 (or the sizes given as arguments) against the CPU reference\n"
    " * (normwise relative error < 1e-5), checks that nothing is written beyond element n, and\n"
    " * times the largest size (median of 20 runs) against the copy bandwidth measured here. */\n"
    "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    "#include <string.h>\n#include <algorithm>\n#include <cuda_runtime.h>\n"
    "#define KAS_CANDIDATES_DEVICE\n#include \"kas_candidates.h\"\n#include \"kas_random.h\"\n\n"
    "extern \"C\" void kas_cpu_graph(const double *const *in, double *const *out, size_t n);\n\n"
    "#define GUARD 4096 /* floats after each output that must stay poisoned */\n"
    "#define CUDA_OK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \\\n"
    "    fprintf(stderr, \"%s:%d: %s\\n\", __FILE__, __LINE__, cudaGetErrorString(e_)); "
    "exit(2); } } while (0)\n\n"

    "/* Device-to-device copy bandwidth, (bytes read + bytes written) / time, median of 20 copies of\n"
    " * 512 MiB: the yardstick every unit's time is given against, measured in the same run. */\n"
    "static double copy_gbs;\n"
    "static double measure_copy_gbs(void) {\n"
    "  const size_t bytes = (size_t)512 << 20;\n"
    "  void *src, *dst;\n"
    "  cudaEvent_t a, b;\n"
    "  float ms[20];\n"
    "  CUDA_OK(cudaMalloc(&src, bytes)); CUDA_OK(cudaMalloc(&dst, bytes));\n"
    "  CUDA_OK(cudaMemset(src, 1, bytes));\n"
    "  CUDA_OK(cudaEventCreate(&a)); CUDA_OK(cudaEventCreate(&b));\n"
    "  for (int r = -3; r < 20; r++) { /* three warm-up copies */\n"
    "    CUDA_OK(cudaEventRecord(a));\n"
    "    CUDA_OK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));\n"
    "    CUDA_OK(cudaEventRecord(b)); CUDA_OK(cudaEventSynchronize(b));\n"
    "    if (r >= 0) CUDA_OK(cudaEventElapsedTime(&ms[r], a, b));\n"
    "  }\n"
    "  std::sort(ms, ms + 20);\n"
    "  cudaEventDestroy(a); cudaEventDestroy(b); cudaFree(src); cudaFree(dst);\n"
    "  return 2.0 * bytes / (ms[10] * 1e-3) / 1e9;\n}\n\n"
    "static bool check_unit(const KasCandidate *c, size_t n, bool timed) {\n"
    "  float *h_in[KAS_NINPUTS], *d_in[KAS_NINPUTS], *h_out[KAS_NOUTPUTS], *d_out[KAS_NOUTPUTS];\n"
    "  double *in_d[KAS_NINPUTS], *ref[KAS_NOUTPUTS];\n"
    "  double bytes = 0;\n"
    "  for (int i = 0; i < KAS_NINPUTS; i++) {\n"
    "    size_t len = n * kas_input_floats[i];\n"
    "    bytes += 4.0 * len;\n"
    "    h_in[i] = (float *)malloc(len * 4 + 4); in_d[i] = (double *)malloc(len * 8 + 8);\n"
    "    for (size_t k = 0; k < len; k++) {\n"
    "      h_in[i][k] = kas_random_value(1); in_d[i][k] = h_in[i][k];\n"
    "    }\n"
    "    CUDA_OK(cudaMalloc(&d_in[i], len * 4 + 16));\n"
    "    CUDA_OK(cudaMemcpy(d_in[i], h_in[i], len * 4, cudaMemcpyHostToDevice));\n"
    "  }\n"
    "  for (int o = 0; o < KAS_NOUTPUTS; o++) {\n"
    "    size_t len = n * kas_output_floats[o] + GUARD;\n"
    "    bytes += 4.0 * n * kas_output_floats[o];\n"
    "    h_out[o] = (float *)malloc(len * 4); ref[o] = (double *)malloc(len * 8);\n"
    "    CUDA_OK(cudaMalloc(&d_out[o], len * 4));\n"
    "    CUDA_OK(cudaMemset(d_out[o], 0xFF, len * 4)); /* NaN */\n"
    "  }\n"
    "  kas_cpu_graph(in_d, ref, n);\n"
    "  void *ws = NULL;\n"
    "  if (c->workspace_bytes(n)) CUDA_OK(cudaMalloc(&ws, c->workspace_bytes(n)));\n"
    "  int err = c->launch(d_in, d_out, ws, n, 0);\n"
    "  if (!err) err = (int)cudaDeviceSynchronize();\n"
    "  bool ok = err == 0;\n"
    "  if (!ok) printf(\"%s: n=%zu: launch failed: %s\\n\", c->name, n, "
    "cudaGetErrorString((cudaError_t)err));\n"
    "  for (int o = 0; ok && o < KAS_NOUTPUTS; o++) {\n"
    "    size_t len = n * kas_output_floats[o];\n"
    "    CUDA_OK(cudaMemcpy(h_out[o], d_out[o], (len + GUARD) * 4, cudaMemcpyDeviceToHost));\n"
    "    double d2 = 0, r2 = 0;\n"
    "    size_t bad = len;\n"
    "    for (size_t k = 0; k < len; k++) {\n"
    "      double d = h_out[o][k] - ref[o][k];\n"
    "      d2 += d * d; r2 += ref[o][k] * ref[o][k];\n"
    "      if (bad == len && !isfinite(h_out[o][k])) bad = k;\n"
    "    }\n"
    "    double rel = r2 > 0 ? sqrt(d2 / r2) : sqrt(d2);\n"
    "    if (!(rel < 1e-5) || bad < len) {\n"
    "      printf(\"%s: n=%zu: output %s: relative error %.3g\", c->name, n, kas_output_names[o], "
    "rel);\n"
    "      if (bad < len) printf(\", element %zu [%zu] not written\", bad / kas_output_floats[o],\n"
    "                            bad % kas_output_floats[o]);\n"
    "      printf(\"\\n\");\n"
    "      ok = false;\n"
    "    }\n"
    "    for (size_t k = len; k < len + GUARD && ok; k++)\n"
    "      if (!isnan(h_out[o][k])) {\n"
    "        printf(\"%s: n=%zu: output %s written beyond element n (float %zu)\\n\", c->name, n,\n"
    "               kas_output_names[o], k);\n"
    "        ok = false;\n"
    "      }\n"
    "  }\n"
    "  if (ok && timed) {\n"
    "    cudaEvent_t a, b;\n"
    "    float ms[20];\n"
    "    CUDA_OK(cudaEventCreate(&a)); CUDA_OK(cudaEventCreate(&b));\n"
    "    c->launch(d_in, d_out, ws, n, 0);\n"
    "    for (int r = 0; r < 20; r++) {\n"
    "      CUDA_OK(cudaEventRecord(a)); c->launch(d_in, d_out, ws, n, 0); "
    "CUDA_OK(cudaEventRecord(b));\n"
    "      CUDA_OK(cudaEventSynchronize(b)); CUDA_OK(cudaEventElapsedTime(&ms[r], a, b));\n"
    "    }\n"
    "    std::sort(ms, ms + 20);\n"
    "    double gbs = bytes / (ms[10] * 1e-3) / 1e9;\n"
    "    printf(\"%-24s n=%zu  %.4f ns/elem  %.0f GB/s  %5.1f%% of copy  (%s)\\n\", c->name, n,\n"
    "           ms[10] * 1e6 / n, gbs, 100.0 * gbs / copy_gbs, c->kernels);\n"
    "    cudaEventDestroy(a); cudaEventDestroy(b);\n"
    "  }\n"
    "  for (int i = 0; i < KAS_NINPUTS; i++) free(h_in[i]), free(in_d[i]), cudaFree(d_in[i]);\n"
    "  for (int o = 0; o < KAS_NOUTPUTS; o++) free(h_out[o]), free(ref[o]), cudaFree(d_out[o]);\n"
    "  cudaFree(ws);\n"
    "  return ok;\n}\n\n"
    "int main(int argc, char **argv) {\n"
    "  size_t sizes[16] = {1, 7, 1000003, 4194304};\n"
    "  int nsizes = 4;\n"
    "  if (argc > 1) {\n"
    "    nsizes = 0;\n"
    "    for (int a = 1; a < argc && nsizes < 16; a++) sizes[nsizes++] = strtoull(argv[a], 0, 10);\n"
    "  }\n"
    "  int failures = 0;\n"
    "  cudaDeviceProp prop;\n"
    "  CUDA_OK(cudaGetDeviceProperties(&prop, 0));\n"
    "  copy_gbs = measure_copy_gbs();\n"
    "  printf(\"%s: %s, copy bandwidth %.1f GB/s (read + write)\\n\", KAS_SPEC_NAME, prop.name, copy_gbs);\n"
    "  for (int c = 0; c < KAS_NCANDIDATES; c++) {\n"
    "    bool ok = true;\n"
    "    for (int s = 0; s < nsizes; s++) ok &= check_unit(&kas_candidates[c], sizes[s], s == nsizes - 1);\n"
    "    printf(\"%-24s %s\\n\", kas_candidates[c].name, ok ? \"PASS\" : \"FAIL\");\n"
    "    failures += !ok;\n"
    "  }\n"
    "  printf(\"%s: %d of %d units passed on the GPU\\n\", KAS_SPEC_NAME, KAS_NCANDIDATES - failures,\n"
    "         KAS_NCANDIDATES);\n"
    "  return failures ? 1 : 0;\n}\n";

static bool write_text(EmitDir *d, const char *path, char *text) {
  bool ok = emit_dir_write(d, path, text);
  free(text);
  return ok;
}

/* Emits every unit of fn into out/<fn>/.  Returns false after reporting an error. */
static bool emit_function_units(const Library *lib, const TimingDb *db, const Function *fn,
                                const char *out, int *nunits_out) {
  *nunits_out = 0;
  if (fn->nimpls == 0) return true;
  char *path = xasprintf("%s.spec", fn->name);
  char *text = unit_spec_text(fn);
  Spec *spec = spec_parse(path, text, lib);
  Dag *dag = spec ? dag_build(spec) : NULL;
  bool ok = dag != NULL;
  int nplans = 0;
  SearchContext *ctx = ok ? search_context_new(dag, db) : NULL;
  KernelPlan **plans = ok ? combine_fusion(ctx, 1, true, &nplans) : NULL;
  search_context_free(ctx);
  Unit units[MAX_UNITS_PER_FN];
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
    units[nunits++] = (Unit){xasprintf("cu_%s", im->name), describe_plan(coalesced), coalesced};
    if (owner)
      units[nunits++] = (Unit){xasprintf("cu_%s_owner", im->name), describe_plan(owner), owner};
  }
  char *dir = xasprintf("%s/%s", out, fn->name);
  EmitDir *d = ok ? emit_dir_open(dir) : NULL;
  ok = d != NULL;
  for (int u = 0; ok && u < nunits; u++) {
    Candidate cand = {.kernels = &units[u].plan, .nkernels = 1,
                      .predicted_ns_per_elem = units[u].plan->predicted_ns_per_elem,
                      .rank = u + 1};
    ok = emit_cuda_candidate(d, dag, lib, &cand, units[u].name);
  }
  ok = ok && emit_cuda_common(d, dag, lib, NULL);
  ok = ok && write_text(d, "common/kas_candidates.h", candidates_h(dag, units, nunits));
  ok = ok && write_text(d, "common/all_kernels.cu", all_kernels_cu(units, nunits));
  ok = ok && emit_dir_write(d, "common/check_gpu.cu", check_gpu_text);
  ok = ok && write_text(d, "Makefile", units_makefile(dag, units, nunits));
  if (d) ok = emit_dir_close(d) && ok;
  for (int u = 0; u < nunits; u++) free(units[u].name), free(units[u].describe);
  for (int p = 0; p < nplans; p++) kernel_plan_free(plans[p]);
  free(plans);
  free(dir);
  if (dag) dag_free(dag);
  if (spec) spec_free(spec);
  free(text);
  free(path);
  *nunits_out = nunits;
  return ok;
}

int units_emit(const Library *lib, const char *out_dir, int *nfunctions_out) {
  TimingDb *db = timingdb_analytic(); /* the choice of plans does not need measured timings */
  bool ok = true;
  int total = 0, functions = 0;
  for (int f = 0; f < lib->nfuncs; f++) {
    int n;
    if (!emit_function_units(lib, db, &lib->funcs[f], out_dir, &n)) {
      ok = false;
      continue;
    }
    total += n;
    functions += n > 0;
  }
  timingdb_free(db);
  *nfunctions_out = functions;
  return ok ? total : -1;
}
