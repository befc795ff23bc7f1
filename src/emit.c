/*
 * emit.c — drives code generation for one spec (docs/design.md §7, docs/generated.md): opens
 * the output folder, has emit_common.c write the files the candidates share (the CPU graph, the
 * checkers, the harness), emit_cuda.c every candidate, emit_embed.c the winner's C API, and
 * writes the files that list the candidates itself:
 *
 *   common/kas_candidates.h  the table of candidates (device and host entry points) that the
 *                            harness and the CPU checker read
 *   common/all_kernels.cu    every candidate in one translation unit (one-nvcc compile check)
 *   candNN/fusion.dot, .svg  each candidate's kernels drawn on the DAG
 *   Makefile, plot.gp, index.txt
 *   <stem>.spec              the spec's text as read, which tune and calibrate search with
 */
#include "kasgen.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Name of ranked candidate r (1-based): "cand01".  The winner is cand01 (docs/generated.md). */
static char *candidate_name(int rank) { return xasprintf("cand%02d", rank); }

static void c_string(StrBuf *sb, const char *s) {
  sb_putc(sb, '"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') sb_putc(sb, '\\');
    sb_putc(sb, *s);
  }
  sb_putc(sb, '"');
}

/* The column of the next character of sb. */
static size_t column(const StrBuf *sb) {
  size_t k = sb->len;
  while (k > 0 && sb->data[k - 1] != '\n') k--;
  return sb->len - k;
}

/* A C string literal for s, split into literals that C concatenates wherever a line would pass
 * 100 columns (after one of the separators, which stays with its word); brk goes between two
 * literals: the line break and the next line's indent.  The strings are names: nothing in them
 * needs escaping but quotes and backslashes. */
static void c_string_split(StrBuf *sb, const char *s, const char *separators, const char *brk) {
  sb_putc(sb, '"');
  size_t line_start = column(sb); /* of this line's literal: a break there would gain nothing */
  while (*s) {
    size_t len = strcspn(s, separators);
    if (s[len]) len++;
    if (column(sb) + len + 3 > 100 && column(sb) > line_start) {
      sb_puts(sb, brk);
      line_start = column(sb);
    }
    for (size_t k = 0; k < len; k++) {
      if (s[k] == '"' || s[k] == '\\') sb_putc(sb, '\\');
      sb_putc(sb, s[k]);
    }
    s += len;
  }
  sb_putc(sb, '"');
}

/* An implementation list as c_string_split writes it, split after a '+' or a space, the
 * continuation lines starting at column indent. */
static void c_string_lines(StrBuf *sb, const char *s, int indent) {
  char *brk = xasprintf("\"\n%*s\"", indent, "");
  c_string_split(sb, s, "+ ", brk);
  free(brk);
}

static void free_entries(CandidateEntry *e, int count) {
  for (int i = 0; i < count; i++)
    free(e[i].name), free(e[i].kernels), unaligned_candidate_free(e[i].unaligned);
  free(e);
}

/* The ranked candidates, then the unfused form, each with its plan for arrays of any alignment
 * (unaligned.c); NULL after a diagnostic. */
static CandidateEntry *list_entries(const Dag *dag, const TimingDb *db, const Target *t,
                                    const SearchResult *res, int *count) {
  CandidateEntry *e = xcalloc((size_t)res->ncands + 1, sizeof *e);
  int n = 0;
  for (int r = 0; r < res->ncands; r++)
    e[n++] = (CandidateEntry){candidate_name(r + 1), &res->cands[r], r + 1,
                              candidate_kernels(&res->cands[r]), NULL};
  if (res->unfused)
    e[n++] = (CandidateEntry){xstrdup("unfused"), res->unfused, 0, candidate_kernels(res->unfused),
                              NULL};
  bool failed = false;
  UnalignedPlanner *planner = unaligned_planner_new(dag, db, t, res->loops);
  unaligned_planner_elements(planner, res->n);
  UnalignedPlanner *groups[2] = {NULL, NULL}; /* one per DAG of groups (threads.c) */
  for (int g = 0; g < 2; g++)
    if (res->group_dags[g]) {
      groups[g] = unaligned_planner_new(res->group_dags[g], db, t, res->loops);
      unaligned_planner_elements(groups[g], res->n);
    }
  for (int i = 0; i < n && !failed; i++) {
    const Dag *d = e[i].cand->dag;
    UnalignedPlanner *u = !d ? planner : d == res->group_dags[0] ? groups[0] : groups[1];
    e[i].unaligned = unaligned_candidate(u, e[i].cand, &failed);
  }
  unaligned_planner_free(planner);
  for (int g = 0; g < 2; g++) unaligned_planner_free(groups[g]);
  *count = n;
  if (!failed) return e;
  free_entries(e, n);
  return NULL;
}



/* "\"name\"" (a C string literal), malloc'ed. */
static char *c_literal(const char *s) {
  StrBuf sb;
  sb_init(&sb);
  c_string(&sb, s);
  return sb_take(&sb);
}

/* One table of an API side: `static const <type> kas_<side>_<what>[count > 0 ? count : 1] =
 * {items}` (one item "0" when the side has none: C++ has no empty arrays).  Frees the items. */
static void side_table(StrBuf *sb, const char *type, const char *side, const char *what,
                       char **items, int nv) {
  const char *count = !strcmp(side, "output") ? "KAS_NOUTPUTS" : "KAS_NINPUTS";
  if (!nv) items[0] = xstrdup("0");
  char *open = xasprintf("static const %s kas_%s_%s[%s > 0 ? %s : 1] = {", type, side, what,
                         count, count);
  emit_list(sb, 0, open, items, nv ? nv : 1, "};\n");
  free(open);
  for (int i = 0; i < (nv ? nv : 1); i++) free(items[i]);
  free(items);
}

/* How the checks draw each input (kas_random.h): as a comment naming every input's type, and as
 * kas_input_near_identity, the order k of a k x k matrix type drawn near the identity (types.ini
 * check-inputs = near-identity), 0 for a type drawn as +-[0.5, 1.5). */
static void near_identity_table(StrBuf *sb, const Dag *dag) {
  int nv = dag->nin_args;
  char **orders = xcalloc((size_t)nv + 1, sizeof *orders);
  sb_puts(sb, "/* The checks' inputs (kas_random.h; types.ini check-inputs): square matrices near "
              "the\n * identity, I + P with |P[i][j]| < 0.75/k (well-conditioned, every entry "
              "nonzero),\n * anything else +-[0.5, 1.5):");
  for (int i = 0; i < nv; i++) {
    const DagArg *arg = dag_api_arg(dag, i);
    orders[i] = xasprintf("%d", arg->type->near_identity);
    sb_printf(sb, "\n *   %s (%s%s): %s", dag_arg_name(dag, arg), arg->type->name,
              arg->nvalues > 1 ? " array" : "",
              arg->type->near_identity ? "identity + perturbation" : "+-[0.5, 1.5)");
  }
  sb_puts(sb, nv ? " */\n" : " (no inputs) */\n");
  side_table(sb, "int", "input", "near_identity", orders, nv);
}

/* kas_<side>_names, kas_<side>_floats and kas_<side>_layouts of the API's input or output
 * arguments (an array is one, of its whole record). */
static void io_table(StrBuf *sb, const Dag *dag, const Target *t, bool outputs) {
  int first = outputs ? dag->nin_args : 0, nv = outputs ? dag->nout_args : dag->nin_args;
  const char *side = outputs ? "output" : "input";
  char **names = xcalloc((size_t)nv + 1, sizeof *names);
  char **floats = xcalloc((size_t)nv + 1, sizeof *floats);
  char **layouts = xcalloc((size_t)nv + 1, sizeof *layouts);
  for (int i = 0; i < nv; i++) {
    const DagArg *arg = dag_api_arg(dag, first + i);
    names[i] = c_literal(dag_arg_name(dag, arg));
    floats[i] = xasprintf("%d", arg->record);
    layouts[i] = xstrdup(target_arg_layout(t, dag, first + i) == LAYOUT_COMPONENT
                             ? "KAS_COMPONENT" : "KAS_ELEMENT");
  }
  side_table(sb, "char *const", side, "names", names, nv);
  side_table(sb, "int", side, "floats", floats, nv);
  side_table(sb, "int", side, "layouts", layouts, nv);
  if (!outputs) near_identity_table(sb, dag);
}

/* The real type and the arrays: their names, reals per element and layouts. */
static void io_tables(StrBuf *sb, const Dag *dag, const Target *t) {
  sb_printf(sb, "\n/* Every array holds %s (--precision %s). */\n"
                "typedef %s kas_real;\n#define KAS_REAL_DEFINED\n",
            target_real_name(t->precision), target_precision_name(t->precision),
            target_real_name(t->precision));
  sb_puts(sb, "/* Layouts: element e of an array of s reals at p + e*s (KAS_ELEMENT), or component "
              "c of\n * element e at p[c*ld + e] (KAS_COMPONENT; --layout). */\n"
              "enum { KAS_ELEMENT = 0, KAS_COMPONENT = 1 };\n");
  sb_printf(sb, "#define KAS_NINPUTS %d\n#define KAS_NOUTPUTS %d\n", dag->nin_args,
            dag->nout_args);
  io_table(sb, dag, t, false);
  io_table(sb, dag, t, true);
}

/* The functions every candidate's kernels.cu (device) and kernels_host.cpp (host) define;
 * each %s is the candidate's name. */
static const char DEVICE_ENTRY_POINTS[] =
    "size_t kas_%s_workspace_bytes(size_t n);\n"
    "int kas_%s_launch(const kas_real *const *in, kas_real *const *out,\n"
    "    void *workspace, size_t n, size_t ld, cudaStream_t stream);\n";
static const char HOST_ENTRY_POINTS[] =
    "size_t kas_%s_host_workspace_bytes(size_t n);\n"
    "void kas_%s_launch_host(const kas_real *const *in, kas_real *const *out,\n"
    "    void *workspace, size_t n, size_t ld, int order);\n";

/* The declarations of one side (KAS_CANDIDATES_<side>) for every entry. */
static void entry_points(StrBuf *sb, const CandidateEntry *ents, int count, const char *side,
                         const char *format) {
  sb_printf(sb, "#ifdef KAS_CANDIDATES_%s\n", side);
  for (int i = 0; i < count; i++) sb_printf(sb, format, ents[i].name, ents[i].name);
  sb_puts(sb, "#endif\n");
}

char *emit_candidates_header(const Dag *dag, const Target *t, const TimingDb *db,
                             const CandidateEntry *ents, int count, long default_n) {
  if (!t) t = target_default();
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb,
            "/*\n * common/kas_candidates.h — generated by kasgen %s for spec %s;\n * do not edit.\n"
            " * The candidates, best predicted first, then \"unfused\".  Define\n"
            " * KAS_CANDIDATES_DEVICE (harness.cu) and/or KAS_CANDIDATES_HOST (check_cpu.cpp) before\n"
            " * including, to get the entry points of the side you link (docs/generated.md).\n */\n",
            KASGEN_VERSION, dag->spec->name);
  sb_puts(&sb, "#ifndef KAS_CANDIDATES_H\n#define KAS_CANDIDATES_H\n#include <stddef.h>\n"
               "#ifdef KAS_CANDIDATES_DEVICE\n#include <cuda_runtime.h>\n#endif\n\n");
  sb_puts(&sb, "#define KAS_SPEC_NAME ");
  c_string(&sb, dag->spec->name);
  sb_printf(&sb, "\n#define KAS_DEFAULT_N %ld\n", default_n);
  /* The harness compares it with the GPU it runs on: a ranking is only as good as the timings
   * it was made from. */
  sb_puts(&sb, "/* the GPU of the timing database the predictions come from (\"\": the analytic\n"
               " * model) */\n#define KAS_PREDICTED_FOR ");
  c_string(&sb, !db || db->analytic ? "" : db->dev.name);
  /* The harness writes it, with the precision (kas_real), into results.xml: a file copied
   * without its folder still says which search made its candidates (tune and calibrate search
   * again).  One spelling whatever --layout's, so that files of one target say it alike. */
  sb_puts(&sb, "\n/* the arrays' layouts, as --layout takes them (results.xml records them, with\n"
               " * the precision, for kasgen tune and calibrate) */\n");
  /* a spec of many arrays, some of each layout, continues it over lines (a macro: '\\') */
  sb_puts(&sb, "#define KAS_LAYOUTS ");
  char *layouts = target_layout_option(t, dag);
  c_string_split(&sb, layouts, ",", "\" \\\n    \"");
  free(layouts);
  sb_puts(&sb, "\n");
  io_tables(&sb, dag, t);
  sb_puts(&sb, "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
  entry_points(&sb, ents, count, "DEVICE", DEVICE_ENTRY_POINTS);
  entry_points(&sb, ents, count, "HOST", HOST_ENTRY_POINTS);
  sb_puts(&sb, "#ifdef __cplusplus\n}\n#endif\n\n");
  sb_puts(&sb,
          "typedef struct {\n"
          "  const char *name;             /* \"cand01\" ... then \"unfused\" */\n"
          "  double predicted_ns_per_elem; /* the model's prediction */\n"
          "  int predicted_rank;           /* 1-based; 0 for \"unfused\" (not ranked) */\n"
          "  int nkernels;\n"
          "  const char *kernels;          /* implementations per kernel, kernels split by \" | \" */\n"
          "  const char *calls;            /* each kernel's calls, as `kasgen plan` prints them */\n"
          "  const char *shapes;           /* each kernel's elements and threads per block */\n"
          "  const char *code;             /* a digest of the kernels' code (kasgen tune) */\n"
          "  const char *brief;            /* kernels, shortened for the harness's table */\n"
          "  /* ld: the leading dimension of the component-major arrays (0: n) */\n"
          "#ifdef KAS_CANDIDATES_DEVICE\n"
          "  int (*launch)(const kas_real *const *in, kas_real *const *out, void *workspace,\n"
          "                size_t n, size_t ld, cudaStream_t stream);\n"
          "  size_t (*workspace_bytes)(size_t n);\n"
          "#endif\n"
          "#ifdef KAS_CANDIDATES_HOST\n"
          "  void (*launch_host)(const kas_real *const *in, kas_real *const *out, void *workspace,\n"
          "                      size_t n, size_t ld, int order);\n"
          "  size_t (*host_workspace_bytes)(size_t n);\n"
          "#endif\n"
          "} KasCandidate;\n\n");
  sb_printf(&sb, "#define KAS_NCANDIDATES %d\nstatic const KasCandidate kas_candidates[%d] = {\n",
            count, count);
  for (int i = 0; i < count; i++) {
    sb_printf(&sb, "    {\"%s\", %.6g, %d, %d, ", ents[i].name, ents[i].cand->predicted_ns_per_elem,
              ents[i].rank, ents[i].cand->nkernels);
    c_string_lines(&sb, ents[i].kernels, 5);
    sb_puts(&sb, ",\n     ");
    char *calls = candidate_calls(dag, ents[i].cand);
    c_string_lines(&sb, calls, 5);
    free(calls);
    sb_puts(&sb, ",\n     ");
    char *shapes = candidate_shapes(ents[i].cand);
    c_string_lines(&sb, shapes, 5);
    free(shapes);
    char *code = emit_code_digest(dag, t, ents[i].cand);
    sb_puts(&sb, ",\n     ");
    c_string(&sb, code ? code : "");
    free(code);
    char *brief = brief_kernels(ents[i].kernels, HARNESS_BRIEF_WIDTH);
    sb_puts(&sb, ",\n     ");
    c_string_lines(&sb, brief, 5);
    free(brief);
    sb_printf(&sb,
              ",\n#ifdef KAS_CANDIDATES_DEVICE\n     kas_%s_launch, kas_%s_workspace_bytes,\n#endif\n"
              "#ifdef KAS_CANDIDATES_HOST\n     kas_%s_launch_host, kas_%s_host_workspace_bytes,\n"
              "#endif\n    },\n",
              ents[i].name, ents[i].name, ents[i].name, ents[i].name);
  }
  sb_puts(&sb, "};\n#endif\n");
  return sb_take(&sb);
}

char *emit_all_kernels(const Dag *dag, const CandidateEntry *ents, int count) {
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb,
            "/*\n * common/all_kernels.cu — generated by kasgen %s for spec %s;\n * do not edit.\n"
            " * Every candidate's kernels.cu in one translation unit, each in its own namespace\n"
            " * (their device routines share names), so that `make compile-check` compiles them\n"
            " * all in one nvcc invocation.  The harness links the separate objects instead.\n */\n",
            KASGEN_VERSION, dag->spec->name);
  sb_puts(&sb, "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n"
               "#include <cuda_runtime.h>\n#include \"kas_device.h\"\n\n");
  for (int i = 0; i < count; i++)
    sb_printf(&sb, "namespace kas_ns_%s {\n#include \"../%s/kernels.cu\"\n}\n", ents[i].name,
              ents[i].name);
  return sb_take(&sb);
}

static char *makefile_text(const Dag *dag, const CandidateEntry *ents, int count, long default_n) {
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb,
            "# Makefile — generated by kasgen %s for spec %s;\n# do not edit (rerun kasgen).\n"
            "# Builds every candidate into one benchmark harness (nvcc) and the CPU checker (g++).\n"
            "# Everything built goes to build/; make -j is safe.\n"
            "#\n"
            "#   make                build/harness and build/check_cpu\n"
            "#   make check-cpu      every candidate run thread by thread on the CPU (no GPU needed)\n"
            "#   make compile-check  every candidate compiled by one nvcc invocation (no GPU needed)\n"
            "#   make run            on a GPU: check, time, table, results.xml/.dat (N=... to resize)\n"
            "#   make sizes          on a GPU: correctness only at n = 1, 7, 1000003, 4194304\n"
            "#   make subrange       on a GPU: run on elements [1, 1 + N) of larger arrays (pointers\n"
            "#                       aligned to their type only), timed against whole arrays\n"
            "#   make sanitize       on a GPU: compute-sanitizer memcheck, racecheck, synccheck\n"
            "#   make plot           plot.png from results.dat (gnuplot)\n"
            "#   make embed          build/embed/libkas_<spec>.a, the winner's C API for a FEM code\n"
            "#   make clean          removes build/ and plot.png; keeps results.xml and "
            "results.dat,\n"
            "#                       the measurements (perhaps their only copy)\n"
            "#   make clean-results  removes results.xml, results.dat and plot.png\n"
            "#\n"
            "# ARCH=sm_80 builds for another GPU (default sm_90, the H100's).  What nvcc built is\n"
            "# rebuilt whenever NVCC, ARCH or NVCCFLAGS change: build/nvcc-command holds the last.\n\n",
            KASGEN_VERSION, dag->spec->name);
  sb_printf(&sb,
            "NVCC ?= nvcc\nARCH ?= sm_90\nNVCCFLAGS ?= -O3 -arch=$(ARCH) -lineinfo\n"
            "CFLAGS ?= -O2\nCXXFLAGS ?= -O2\nSANITIZER ?= compute-sanitizer\nGNUPLOT ?= gnuplot\n"
            "N ?= %ld\nSANITIZE_N ?= 100003\nB := build\n\n",
            default_n);
  sb_puts(&sb, "CANDIDATES :=");
  for (int i = 0; i < count; i++) sb_printf(&sb, " %s", ents[i].name);
  sb_puts(&sb,
          "\nDEVICE_OBJ := $(CANDIDATES:%=$(B)/%/kernels.o)\n"
          "HOST_OBJ := $(CANDIDATES:%=$(B)/%/kernels_host.o)\n"
          "CPU_OBJ := $(B)/common/cpu_graph.o $(B)/common/kas_refs.o\n\n"
          ".PHONY: all check-cpu compile-check run sizes subrange sanitize plot embed clean "
          "clean-results \\\n"
          "    FORCE\n"
          "all: $(B)/harness $(B)/check_cpu\n\n"
          "# Rewritten only when the nvcc command changes; what nvcc builds depends on it.\n"
          "NVCC_COMMAND = $(NVCC) $(NVCCFLAGS)\n"
          "$(B)/nvcc-command: FORCE\n"
          "\t@mkdir -p $(@D)\n"
          "\t@echo '$(NVCC_COMMAND)' | cmp -s - $@ || echo '$(NVCC_COMMAND)' >$@\n\n"
          "$(B)/%/kernels.o: %/kernels.cu common/kas_device.h $(B)/nvcc-command\n"
          "\t@mkdir -p $(@D)\n"
          "\t$(NVCC) $(NVCCFLAGS) -c -o $@ $<\n\n"
          "$(B)/%/kernels_host.o: %/kernels_host.cpp common/kas_device.h common/kas_host.h\n"
          "\t@mkdir -p $(@D)\n"
          "\t$(CXX) $(CXXFLAGS) -DKAS_HOST -c -o $@ $<\n\n"
          "$(B)/common/%.o: common/%.c\n"
          "\t@mkdir -p $(@D)\n"
          "\t$(CC) $(CFLAGS) -c -o $@ $<\n\n"
          "$(B)/harness: common/harness.cu common/kas_candidates.h common/kas_gpu.h "
          "common/kas_check.h \\\n    common/kas_layout.h $(DEVICE_OBJ) $(CPU_OBJ) $(B)/nvcc-command\n"
          "\t$(NVCC) $(NVCCFLAGS) -o $@ common/harness.cu $(DEVICE_OBJ) $(CPU_OBJ)\n\n"
          "$(B)/check_cpu: common/check_cpu.cpp common/kas_candidates.h common/kas_check.h \\\n"
          "    common/kas_layout.h $(HOST_OBJ) $(CPU_OBJ)\n"
          "\t$(CXX) $(CXXFLAGS) -DKAS_HOST -o $@ common/check_cpu.cpp $(HOST_OBJ) $(CPU_OBJ) -lm\n\n"
          "$(B)/all_kernels.o: common/all_kernels.cu common/kas_device.h "
          "$(CANDIDATES:%=%/kernels.cu) \\\n    $(B)/nvcc-command\n"
          "\t@mkdir -p $(@D)\n"
          "\t$(NVCC) $(NVCCFLAGS) -c -o $@ common/all_kernels.cu\n\n"
          "check-cpu: $(B)/check_cpu\n\t./$(B)/check_cpu\n\n"
          "compile-check: $(B)/all_kernels.o\n\n"
          "run: $(B)/harness\n\t./$(B)/harness N=$(N)\n\n"
          "sizes: $(B)/harness\n\t./$(B)/harness --sizes 1,7,1000003,4194304\n"
          "\t./$(B)/harness --offset 1 --sizes 1,7,1000003\n\n"
          "subrange: $(B)/harness\n\t./$(B)/harness --offset 1 N=$(N)\n\n"
          "sanitize: $(B)/harness\n"
          "\t$(SANITIZER) --tool memcheck --error-exitcode 1 ./$(B)/harness --check-only "
          "N=$(SANITIZE_N)\n"
          "\t$(SANITIZER) --tool racecheck --racecheck-report all --error-exitcode 1 \\\n"
          "\t    ./$(B)/harness --check-only N=$(SANITIZE_N)\n"
          "\t$(SANITIZER) --tool synccheck --error-exitcode 1 ./$(B)/harness --check-only "
          "N=$(SANITIZE_N)\n\n"
          "# -fno-threadsafe-statics: nvcc's launch stubs would otherwise need libstdc++\n"
          "# (__cxa_guard_*), which a C program linked with cc ... -lcudart lacks.\n"
          "embed: $(patsubst embed/%.cu,$(B)/embed/lib%.a,$(wildcard embed/*.cu))\n"
          "$(B)/embed/lib%.a: embed/%.cu embed/%.h $(B)/nvcc-command\n"
          "\t@mkdir -p $(@D)\n"
          "\t$(NVCC) $(NVCCFLAGS) -Xcompiler -fno-threadsafe-statics -c -o $(B)/embed/$*.o $<\n"
          "\trm -f $@\n"
          "\t$(AR) rcs $@ $(B)/embed/$*.o\n\n"
          "plot: plot.png\n"
          "plot.png: results.dat plot.gp\n\t$(GNUPLOT) plot.gp\n\n"
          /* the results of a GPU run, copied back or not yet, may be their only copy: clean
           * removes what make can build again, clean-results the measurements, asked by name */
          "clean:\n\trm -rf $(B) plot.png\n\n"
          "clean-results:\n\trm -f results.xml results.dat plot.png\n");
  return sb_take(&sb);
}

/* The picture of seed 004's Graf 5.1-5.4: measured performance in predicted order, with a moving
 * average (so a good model shows a falling curve) and the model's own prediction. */
static char *plot_gp(const Dag *dag) {
  return xasprintf(
      "# plot.gp — generated by kasgen %s for spec %s.\n"
      "# Measured performance of the candidates in predicted order (results.dat from `make run`),\n"
      "# like seed 004's Graf 5.1-5.4.\n"
      "set terminal png size 1000,600\n"
      "set output 'plot.png'\n"
      "set title '%s: measured performance in predicted order'\n"
      "set xlabel 'candidate (predicted rank)'\n"
      "set ylabel 'million elements per second'\n"
      "set grid\n"
      "set key top right\n"
      "set xtics 1\n"
      "set yrange [0:*]\n"
      "set offsets 0.5, 0.5, 0, 0\n"
      "plot 'results.dat' using 1:2 with points pointtype 7 pointsize 1.5 title 'measured', \\\n"
      "     '' using 1:3 with lines linewidth 2 title 'moving average (5)', \\\n"
      "     '' using 1:(1000.0/$5) with linespoints dashtype 2 title 'predicted'\n",
      KASGEN_VERSION, dag->spec->name, dag->spec->name);
}

/* The ranked candidates among the entries (the unfused form is not one). */
static int ranked(const CandidateEntry *ents, int count) {
  int n = 0;
  for (int i = 0; i < count; i++) n += ents[i].rank > 0;
  return n;
}

/* "element-major" when every array is; otherwise each array's layout. */
static void describe_layouts(StrBuf *sb, const Dag *dag, const Target *t) {
  if (!target_has_component(t)) {
    sb_puts(sb, "every array element-major");
    return;
  }
  for (int k = 0; k < dag->nin_args + dag->nout_args; k++)
    sb_printf(sb, "%s%s %s-major", k ? ", " : "", dag_arg_name(dag, dag_api_arg(dag, k)),
              target_layout_name(target_arg_layout(t, dag, k)));
}

/* "Variants: --variants 5: cand02, cand04 are cand01 with its kernel 1 in other block
 * shapes." (`kasgen tune` reads the K back: the search it repeats must give these candidates.) */
static void describe_variants(StrBuf *sb, const SearchResult *res, const CandidateEntry *ents,
                              int count) {
  sb_printf(sb, "Variants: --variants %d", res->stats.variants_asked);
  int n = 0;
  const Candidate *v = NULL;
  for (int i = 0; i < count; i++)
    if (ents[i].cand->shape_of) {
      sb_printf(sb, "%s%s", n++ ? ", " : ": ", ents[i].name);
      v = ents[i].cand;
    }
  const Candidate *base = v ? candidate_shape_base(res, v) : NULL;
  if (base)
    sb_printf(sb, " %s cand%02d with its kernel %d in other block shape%s.\n",
              n == 1 ? "is" : "are", base->rank, v->shape_of, n == 1 ? "" : "s");
  else
    sb_puts(sb, ": none.\n");
}

/* The folder's copy of the spec as read (tune and calibrate search with it), malloc'ed: named as
 * the folder's other files of the spec are, a plain name (NAME_CHARS, or a sanitized stem). */
static char *spec_copy_name(const Dag *dag) { return xasprintf("%s.spec", dag->spec->name); }

/* embedded: the entry embed/ wraps, or NULL when there is none; origin: the spec to name on the
 * first line instead of the one read (EmitOptions.spec_origin), or NULL. */
static char *index_txt(const Dag *dag, const TimingDb *db, const Target *t,
                       const SearchResult *res, const CandidateEntry *ents, int count,
                       const CandidateEntry *embedded, long default_n, const char *origin) {
  StrBuf sb;
  sb_init(&sb);
  int nranked = ranked(ents, count);
  /* the spec's path absolute, as the database's below: tune and calibrate, from any folder,
   * compare the file with the folder's copy (realpath: no "..", so it reads as the file's place);
   * <stdin> stays itself */
  const char *read = origin                ? origin
                     : dag->spec->read_from ? dag->spec->read_from
                                            : dag->spec->path;
  char *spec_path = read && strcmp(read, STDIN_NAME) ? absolute_path(read) : xstrdup(STDIN_NAME);
  char *from = c_safe_text(spec_path);
  free(spec_path);
  sb_printf(&sb, "kasgen %s: spec %s (%s), %d calls; %d candidate%s, best predicted first%s.\n",
            KASGEN_VERSION, dag->spec->name, from, dag->nnodes, nranked, nranked == 1 ? "" : "s",
            count > nranked ? ", then the unfused form for comparison" : "");
  free(from);
  /* the path as given, which the code's comments name: tune and calibrate name it so again,
   * or the code and its digest in results.xml would differ with the folder they ran from */
  char *given = c_safe_text(dag->spec->path ? dag->spec->path : STDIN_NAME);
  sb_printf(&sb, "%s%s (the generated code names it so).\n", SPEC_GIVEN_KEY, given);
  free(given);
  /* what tune and calibrate search with: the text this folder was generated from, whatever
   * became of the file (tune.c) */
  char *copy = spec_copy_name(dag);
  sb_printf(&sb, "%s%s, the spec as read (kasgen tune and calibrate search with it).\n",
            SPEC_COPY_KEY, copy);
  free(copy);
  /* the database's path absolute: index.txt is read from inside the folder, where the path as
   * found (build/../benchmarks/...) would name nothing */
  char *db_path = db && !db->analytic && db->path ? absolute_path(db->path) : NULL;
  sb_printf(&sb, "Prediction: %s.  Harness default n = %ld.\n",
            !db || db->analytic ? "analytic model (no timing database)"
                                : db_path ? db_path : "timing database",
            default_n);
  if (db_path && db->calib.present) {
    char *store = calibration_store_path(db_path);
    sb_printf(&sb, "Calibration: the constants of %s are applied (fitted on %d specs, %d "
              "candidates; --uncalibrated predicts without them).\n", store, db->calib.nspecs,
              db->calib.ncandidates);
    free(store);
  }
  free(db_path);
  sb_printf(&sb, "Precision: %s; layouts: ", target_precision_name(t->precision));
  describe_layouts(&sb, dag, t);
  sb_puts(&sb, ".\n");
  describe_variants(&sb, res, ents, count);
  sb_puts(&sb, "\n");
  sb_printf(&sb, "%-5s %-8s %12s %8s  %s\n", "rank", "name", "ns/element", "kernels",
            "implementations per kernel");
  for (int i = 0; i < count; i++) {
    char rank[16] = "-";
    if (ents[i].rank) snprintf(rank, sizeof rank, "%d", ents[i].rank);
    sb_printf(&sb, "%-5s %-8s %12.4f %8d  %s\n", rank, ents[i].name,
              ents[i].cand->predicted_ns_per_elem, ents[i].cand->nkernels, ents[i].kernels);
  }
  sb_puts(&sb, "\nKernels (E = elements per block):\n");
  for (int i = 0; i < count; i++) {
    const Candidate *c = ents[i].cand;
    const Dag *cd = candidate_dag(dag, c);
    for (int k = 0; k < c->nkernels; k++) {
      const KernelPlan *p = c->kernels[k];
      int copies = threads_smem_copies(cd, p); /* of the plan's shared memory */
      /* the kernel as launched: its shared memory with the staged copies, its barriers */
      sb_printf(&sb, "  %-8s kernel %d: E=%d, %d threads, %d B shared, %d of %d barriers, "
                     "%.4f ns/element:",
                ents[i].name, k + 1, p->e, threads_in_block(cd, p), staging_kernel_smem(cd, t, p),
                staging_kernel_barriers(cd, t, p), p->barriers_possible, p->predicted_ns_per_elem);
      for (int j = 0; j < p->ncalls; j++) /* numbered as the spec's calls (check's #) */
        sb_printf(&sb, " %s(#%d)", p->impl[j]->name, cd->nodes[p->order[j]].stmt);
      sb_puts(&sb, "\n");
      if (dag_groups(cd) > 1) {
        char *loops = candidate_group_loops(cd);
        sb_printf(&sb, "           groups: %s, one iteration per group of %d threads%s\n", loops,
                  p->threads, copies == 1 ? ", one copy of the shared inputs" : "");
        free(loops);
      }
      char *loops = roll_summary(cd, t, p);
      if (loops) sb_printf(&sb, "           %s\n", loops);
      free(loops);
    }
  }
  if (embedded)
    sb_printf(&sb, "\nEmbedding: embed/kas_%s.h and embed/kas_%s.cu wrap %s%s.\n", dag->spec->name,
              dag->spec->name, embedded->name,
              embedded->rank == 1 ? "" : " (chosen by kasgen tune; the header says why)");
  return sb_take(&sb);
}

/* Writes one generated text file; frees text. */
static bool put(EmitDir *d, const char *rel, char *text) {
  bool ok = emit_dir_write(d, rel, text);
  free(text);
  return ok;
}

/* The files of the spec as a whole, all written here: the harness's table of candidates, the
 * Makefile, the plot's script, index.txt, the spec's text as read (<stem>.spec), and
 * generation.ini where opt gives its text (tune and calibrate read both back, tune.c and
 * generation.c). */
static bool emit_spec_files(EmitDir *d, const Dag *dag, const TimingDb *db, const Target *t,
                            const SearchResult *res, const CandidateEntry *ents, int count,
                            const CandidateEntry *embedded, const EmitOptions *opt) {
  long default_n = opt && opt->default_n > 0 ? opt->default_n : DEFAULT_ELEMENTS;
  bool ok = put(d, "common/kas_candidates.h",
                emit_candidates_header(dag, t, db, ents, count, default_n));
  ok = ok && put(d, "common/all_kernels.cu", emit_all_kernels(dag, ents, count));
  ok = ok && put(d, "Makefile", makefile_text(dag, ents, count, default_n));
  ok = ok && put(d, "plot.gp", plot_gp(dag));
  ok = ok && put(d, "index.txt", index_txt(dag, db, t, res, ents, count, embedded, default_n,
                                           opt ? opt->spec_origin : NULL));
  char *copy = spec_copy_name(dag);
  ok = ok && emit_dir_write(d, copy, dag->spec->text);
  free(copy);
  if (ok && opt && opt->generation_ini)
    ok = emit_dir_write(d, "generation.ini", opt->generation_ini);
  return ok;
}

/* The chosen fusions of one candidate as a picture: the DAG with each kernel's calls in a
 * labelled cluster (fusion.dot), rendered to fusion.svg when Graphviz is installed.  SVG is text,
 * so it goes through the manifest like every other file. */
static char *fusion_dot(const Dag *dag, const Target *t, const Candidate *cand,
                        const char *name) {
  DotKernel *kernels = xcalloc((size_t)cand->nkernels, sizeof *kernels);
  char **labels = xcalloc((size_t)cand->nkernels, sizeof *labels);
  for (int k = 0; k < cand->nkernels; k++) {
    const KernelPlan *p = cand->kernels[k];
    int regs = 0;
    for (int b = 0; b < p->nbuffers; b++) regs += p->buffers[b].place == PLACE_REGISTER;
    /* as index.txt has them: the whole block's threads, the groups' copies (threads.c) */
    labels[k] = xasprintf("%s kernel %d: E=%d, %d threads, %d B shared, %d/%d buffers in "
                          "registers, %d of %d barriers", name, k + 1, p->e,
                          threads_in_block(dag, p), staging_kernel_smem(dag, t, p),
                          regs, p->nbuffers, staging_kernel_barriers(dag, t, p),
                          p->barriers_possible);
    kernels[k] = (DotKernel){p->nodes, labels[k]};
  }
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (f) {
    dag_write_dot_kernels(dag, kernels, cand->nkernels, f);
    fclose(f);
  }
  for (int k = 0; k < cand->nkernels; k++) free(labels[k]);
  free(labels);
  free(kernels);
  return text ? text : xstrdup("");
}

/* dot draws a candidate's fusion.dot in well under a second (an element of 128 calls: 0.06 s);
 * 120 s only keeps a dot that hangs from hanging kasgen.  The processes run side by side, so
 * they all end or are killed within about 120 s of the first's start. */
#define DOT_TIMEOUT_S 120

/* Runs Graphviz's dot (no shell) on files[0..n): `dot -Tsvg -O` writes <file>.svg beside each.
 * One process per file, all started before any is waited for: dot 2.43 given several files in
 * one process orders each picture's clusters by state the earlier ones left, and drew the same
 * fusion.dot differently from run to run; alone, a file always gets the same picture.  A dot
 * killed at the deadline may have written part of its picture: that file is removed. */
static void run_dot(char **files, int n) {
  SpawnOptions opt = {.out = {.sink = SPAWN_DEV_NULL}, .err = {.sink = SPAWN_DEV_NULL},
                      .timeout_s = DOT_TIMEOUT_S};
  Spawn **running = xcalloc((size_t)n + 1, sizeof *running);
  for (int i = 0; i < n; i++) {
    char *argv[] = {"dot", "-Tsvg", "-O", files[i], NULL};
    running[i] = spawn_start(argv, &opt);
  }
  for (int i = 0; i < n; i++) {
    progress("drawing fusion pictures (Graphviz)", i, n);
    SpawnResult r = spawn_finish(running[i]);
    if (r.end != SPAWN_TIMED_OUT) continue;
    char *svg = xasprintf("%s.svg", files[i]);
    unlink(svg);
    free(svg);
  }
  free(running);
}

/* dot lays an edge spanning k ranks out through k - 1 added nodes, and its time grows far faster
 * than their number: a chain whose every call reads one input (B = madd33(B, A)) as one kernel,
 * at 50 calls (1324 ranks spanned in all) 0.8 s, 60 calls 2.5 s, 80 calls 18 s, 100 calls past
 * 100 s (dot 2.43), a kernel of 1001 calls past DOT_TIMEOUT_S.  The seed specs span at most
 * 998 (stvk_tet) and draw in well under a second. */
#define DOT_SPAN_LIMIT 2000

/* The ranks dag's edges span in all, each call ranked one below the latest of its arguments'
 * producers (inputs at rank 0): how much dot must add to lay it out. */
static long dot_spans(const Dag *dag) {
  int *rank = xcalloc((size_t)dag->nnodes + 1, sizeof *rank);
  long spans = 0;
  for (int n = 0; n < dag->nnodes; n++) { /* numbered in topological order */
    for (int a = 0; a < dag->nodes[n].nargs; a++) {
      int p = dag->values[dag->nodes[n].args[a]].producer;
      int r = (p >= 0 ? rank[p] : 0) + 1;
      if (r > rank[n]) rank[n] = r;
    }
    for (int a = 0; a < dag->nodes[n].nargs; a++) {
      int p = dag->values[dag->nodes[n].args[a]].producer;
      spans += rank[n] - (p >= 0 ? rank[p] : 0);
    }
  }
  free(rank);
  return spans;
}

/* Whether each candidate's picture is drawn (its DAG's dot_spans within DOT_SPAN_LIMIT), each
 * DAG's spans computed once: the candidates share the spec's DAG or one of its DAGs of groups
 * (threads.c).  Where some are not, a note says so with the spans that decided.  Returns how many
 * are drawn. */
static int pictures_drawn(const Dag *dag, const CandidateEntry *ents, int count, bool *draw) {
  long *spans = xcalloc((size_t)count + 1, sizeof *spans), least = 0, most = 0;
  int ndraw = 0;
  for (int i = 0; i < count; i++) {
    const Dag *d = candidate_dag(dag, ents[i].cand);
    int j = 0;
    while (j < i && candidate_dag(dag, ents[j].cand) != d) j++;
    spans[i] = j < i ? spans[j] : dot_spans(d);
    ndraw += draw[i] = spans[i] <= DOT_SPAN_LIMIT;
    if (draw[i]) continue;
    least = least && least < spans[i] ? least : spans[i];
    most = most > spans[i] ? most : spans[i];
  }
  free(spans);
  if (ndraw == count) return ndraw;
  progress_done(); /* the note on a line of its own */
  char *span = least == most ? xasprintf("their DAG's edges span %ld ranks", most)
                             : xasprintf("their DAGs' edges span %ld to %ld ranks", least, most);
  diag_note((SrcLoc){.file = dag->spec->path}, "fusion.svg not drawn for %d of %d candidates: %s, "
            "which Graphviz's dot takes minutes to lay out (more than %d); fusion.dot is written "
            "(dot -Tsvg -O fusion.dot draws it)", count - ndraw, count, span, DOT_SPAN_LIMIT);
  free(span);
  return ndraw;
}

/* Each candidate's chosen fusions as a picture: fusion.dot always, fusion.svg where Graphviz is
 * installed (missing or failing, it only costs the pictures) and its layout takes seconds at most
 * (DOT_SPAN_LIMIT; a note says which were not drawn). */
static bool emit_fusion_pictures(EmitDir *d, const Dag *dag, const Target *t,
                                 const CandidateEntry *ents, int count) {
  char **dots = xcalloc((size_t)count, sizeof *dots), **files = xcalloc((size_t)count, sizeof *files);
  bool ok = true, *draw = xcalloc((size_t)count, sizeof *draw);
  int ndraw = pictures_drawn(dag, ents, count, draw);
  for (int i = 0; i < count && ok; i++) {
    dots[i] = fusion_dot(candidate_dag(dag, ents[i].cand), t, ents[i].cand, ents[i].name);
    char *rel = xasprintf("%s/fusion.dot", ents[i].name);
    ok = emit_dir_write(d, rel, dots[i]);
    free(rel);
  }
  char tmp[] = "/tmp/kasgen-dot-XXXXXX";
  bool have_tmp = ok && mkdtemp(tmp) != NULL;
  int nfiles = 0;
  /* an interruption removes the folder and every file dot may be writing (interrupt.c) */
  if (have_tmp) interrupt_add_temporary(AT_FDCWD, tmp);
  char **todo = xcalloc((size_t)count + 1, sizeof *todo); /* files[i] of the drawn, in order */
  for (int i = 0; have_tmp && i < count; i++) {
    if (!draw[i]) continue;
    files[i] = todo[nfiles] = xasprintf("%s/%d.dot", tmp, i);
    char *svg_path = xasprintf("%s.svg", files[i]);
    interrupt_add_temporary(AT_FDCWD, files[i]);
    interrupt_add_temporary(AT_FDCWD, svg_path);
    free(svg_path);
    FILE *f = fopen(files[i], "w");
    if (f) fputs(dots[i], f);
    if (f && fclose(f) == 0) nfiles++;
  }
  if (have_tmp && nfiles == ndraw && nfiles > 0) run_dot(todo, nfiles);
  free(todo);
  for (int i = 0; have_tmp && i < count; i++) {
    if (!draw[i]) continue;
    char *svg_path = xasprintf("%s.svg", files[i]);
    size_t len;
    char *svg = ok && nfiles == ndraw && access(svg_path, R_OK) == 0
                    ? read_text_file(svg_path, &len) : NULL;
    if (svg) {
      char *rel = xasprintf("%s/fusion.svg", ents[i].name);
      ok = emit_dir_write(d, rel, svg);
      free(rel);
      free(svg);
    }
    unlink(svg_path);
    unlink(files[i]);
    interrupt_drop_temporary(AT_FDCWD, svg_path);
    interrupt_drop_temporary(AT_FDCWD, files[i]);
    free(svg_path);
  }
  if (have_tmp) rmdir(tmp), interrupt_drop_temporary(AT_FDCWD, tmp);
  for (int i = 0; i < count; i++) free(dots[i]), free(files[i]);
  free(dots);
  free(files);
  free(draw);
  return ok;
}

/* Generated code names each value "<variable>_<version>", an array element "B[1][2]" as
 * "B_1_2_0" (dag_value_ident); a spec in which two values get one name (an element of array B
 * and a plain variable B_1_2, or arrays B and B_1) is refused before anything is written. */
bool emit_supports_dag(const Dag *dag) {
  int a, b;
  char *id = dag_duplicate_ident(dag, &a, &b);
  if (!id) return true;
  /* one of the two is an array's element: plain variables' names end in their version */
  if (dag->spec->vars[dag->values[a].var].array < 0) {
    int t = a;
    a = b, b = t;
  }
  const SpecVar *var = &dag->spec->vars[dag->values[a].var];
  diag_error(dag->spec->vars[var->array >= 0 ? var->array : dag->values[a].var].loc,
             "array element '%s' would be named %s in generated code, as '%s' is: rename the "
             "array or that variable",
             var->name, id, dag->spec->vars[dag->values[b].var].name);
  free(id);
  return false;
}

bool emit_all(const Dag *dag, const Library *lib, const TimingDb *db, const SearchResult *res,
              const EmitOptions *opt) {
  if (!emit_supports_dag(dag)) return false;
  const char *parent = opt && opt->out_dir ? opt->out_dir : "generated";
  const Target *t = opt && opt->target ? opt->target : target_default();
  int count;
  CandidateEntry *ents = list_entries(dag, db, t, res, &count);
  if (!ents) return false;
  char *path = opt && opt->folder ? xstrdup(opt->folder) : xasprintf("%s/%s", parent,
                                                                       dag->spec->name);
  EmitDir *d = emit_dir_open(path); /* refuses before anything is written */
  free(path);
  if (!d) {
    free_entries(ents, count);
    return false;
  }
  bool ok = emit_common(d, dag, lib);
  for (int i = 0; ok && i < count; i++) { /* progress: on a terminal only (util.c) */
    progress("writing candidates", i, count);
    ok = emit_cuda_candidate(d, dag, t, ents[i].cand, ents[i].unaligned, ents[i].name);
  }
  ok = ok && emit_fusion_pictures(d, dag, t, ents, count);
  const CandidateEntry *embedded = NULL;
  if (ok && res->ncands > 0) { /* the predicted best, unless `kasgen tune` chose another */
    int w = 0;
    for (int i = 0; opt && opt->embed && i < count; i++)
      if (ents[i].cand == opt->embed) w = i;
    embedded = &ents[w];
    ok = emit_embed(d, dag, lib, t, ents[w].cand, ents[w].unaligned, opt ? opt->embed_why : NULL);
  }
  ok = ok && emit_spec_files(d, dag, db, t, res, ents, count, embedded, opt);
  progress_done();
  free_entries(ents, count);
  bool closed = emit_dir_close(d);
  return ok && closed;
}
