/*
 * emit_embed.c — the winner of a spec behind a plain C API, for embedding in a FEM code
 * (docs/design.md §7): embed/kas_<stem>.h (plain C, no CUDA headers needed) and
 * embed/kas_<stem>.cu (nvcc; self-contained: kas_device.h is copied in, and the winner's kernels
 * are generated from its plans by emit_cuda.c, their symbols prefixed kas_<stem>_cand01_, inside
 * an anonymous namespace so that nothing but the API has external linkage).
 *
 * API, per spec (real: float or double, --precision; [size_t ld,] only when an argument is
 * component-major, --layout):
 *   size_t kas_<stem>_workspace_bytes(size_t n);
 *   kas_status kas_<stem>(const real *<input>..., real *<output>..., size_t n, [size_t ld,]
 *                         void *workspace, void *stream);
 *   kas_status kas_<stem>_arrays(const real *const *in, real *const *out, size_t n,
 *                                [size_t ld,] void *workspace, void *stream);
 *   const char *kas_<stem>_status_string(kas_status s);
 *   int kas_<stem>_last_cuda_error(void);  (KAS_ERR_CUDA's cause: below)
 * and the same computation on the CPU, on host pointers, by the winner's kernels run thread by
 * thread (their host form, as `make check-cpu` runs them; for checks and GPU-less machines):
 *   size_t kas_<stem>_host_workspace_bytes(size_t n);
 *   kas_status kas_<stem>_host(<the arguments of kas_<stem>>);    (stream unused)
 *   kas_status kas_<stem>_host_arrays(<the arguments of kas_<stem>_arrays>);
 * An array of the spec (`vector3 dphi[4]`) is one pointer, its elements in C order in each
 * element's record (docs/loops.md).
 *
 * Pointers need only the alignment of their element type: the winner's launch runs its plan
 * that moves arrays 16 bytes at a time where they allow it, and the same partition planned for
 * any alignment elsewhere (unaligned.c); only a pointer not aligned to its type is refused.
 *
 * The stream is a `void *` rather than a cudaStream_t: cudaStream_t is itself a pointer
 * (struct CUstream_st *), so nothing is lost, and a C translation unit of the FEM code can include
 * the header with no CUDA include path (NULL = the legacy default stream).  n may be 0 (nothing is
 * launched) and may exceed 2^31: the wrapper splits the work into chunks of 2^30 elements, so the
 * grid of every launch stays far below its limit and the workspace is sized for one chunk.
 *
 * CUDA errors.  A FEM code calls the API among CUDA calls of its own, and may have left an error
 * pending (a cudaMalloc that failed, its result ignored).  So the API neither reads nor clears
 * the thread's pending error (cudaGetLastError): its kernels are launched by cudaLaunchKernelEx
 * (emit_cuda_embed_kernels), which returns that launch's own error, and a pending error of the
 * caller fails no call and is still there after it.  A launch that fails makes the call return
 * KAS_ERR_CUDA and keeps its cudaError_t, per thread (thread_local, as CUDA keeps its last
 * error), for kas_<stem>_last_cuda_error(); every call of kas_<stem> or kas_<stem>_arrays sets
 * it, 0 unless it returns KAS_ERR_CUDA.  An error the context keeps (a kernel faulted:
 * cudaErrorIllegalAddress, ...) cannot be cleared; every later launch returns it, and so the
 * call returns KAS_ERR_CUDA with that cause, whoever's kernel faulted.
 *
 * Threads.  Host threads may call the API at once (each on its own stream, workspace and
 * outputs): the wrapper shares nothing between them but constants (the cause is per thread).
 * nvcc's launch stub for each kernel keeps the kernel's handle in a function-local static,
 * unguarded under -fno-threadsafe-statics (which spares a C program libstdc++);
 * cudaLaunchKernelEx takes the kernel's address instead, and the runtime looks it up, so the
 * stubs are never called (the launches took turns under a lock while they were).
 */
#include "kasgen.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CHUNK_LOG2 30 /* elements per launch: 2^30, a multiple of every elements-per-block E <= 2^k */

/* A C identifier from a spec stem ("my-spec" -> "my_spec", "3d" -> "s3d": docs/spec-language.md,
 * "Name of the computation", which also says which names so collide). */
static char *c_identifier(const char *s) {
  char *id = xasprintf("%s%s", isdigit((unsigned char)s[0]) ? "s" : "", s);
  for (char *p = id; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') *p = '_';
  return id;
}

bool emit_embed_prefix_free(const char *parent, const char *name) {
  DIR *d = opendir(parent);
  if (!d) return true; /* no folder yet: nothing in it */
  char *stem = c_identifier(name);
  bool free_of_it = true;
  for (struct dirent *e; free_of_it && (e = readdir(d));) {
    if (e->d_name[0] == '.' || !strcmp(e->d_name, name)) continue;
    char *header = xasprintf("%s/%s/embed/kas_%s.h", parent, e->d_name, stem);
    /* A folder holding the spec copy <name>.spec was generated under this very name: a copy of
     * this spec's folder (a backup, a folder copied to be cleaned), whose API is this one by
     * design, as a regeneration's is; only another name mapping to the same API collides. */
    char *copy = xasprintf("%s/%s/%s.spec", parent, e->d_name, name);
    struct stat st;
    bool same_name = lstat(copy, &st) == 0 && S_ISREG(st.st_mode);
    free(copy);
    if (!same_name && lstat(header, &st) == 0 && S_ISREG(st.st_mode)) {
      diag_error((SrcLoc){.file = header}, "spec '%s' would get this embed's C API, kas_%s (a "
                 "character other than a letter, digit or '_' becomes '_'), and a program linking "
                 "both would fail: give --name NAME, or another --out", name, stem);
      free_of_it = false;
    }
    free(header);
  }
  closedir(d);
  free(stem);
  return free_of_it;
}

static char *upper(const char *s) {
  char *u = xstrdup(s);
  for (char *p = u; *p; p++) *p = (char)toupper((unsigned char)*p);
  return u;
}

typedef struct {
  const Dag *dag;
  const Target *target;
  const char *real; /* "float", "double" */
  bool ld;          /* an argument is component-major: the API takes its leading dimension */
  char *stem;  /* C identifier */
  char *upper; /* STEM */
  char *cand;  /* "cand01" */
  const Candidate *winner;
  const char *why; /* why the winner was chosen (kasgen tune), or NULL: the predicted best */
  IoNames io; /* the API's parameter names */
} Embed;

/* Whether a kernel of the winner needs more than 48 KB of shared memory, which the embed's first
 * call opts in to (emit_cuda.c, emit_smem_optin). */
static bool opts_in_smem(const Embed *em) {
  const Dag *dag = candidate_dag(em->dag, em->winner);
  for (int k = 0; k < em->winner->nkernels; k++)
    if (staging_kernel_smem(dag, em->target, em->winner->kernels[k]) > KAS_SMEM_WITHOUT_OPTIN)
      return true;
  return false;
}

/* "<lead>kas_<stem>(const float *<input>..., float *<output>..., size_t n, void *workspace,
 * void *stream)<tail>", wrapped within 100 columns. */
static void api_prototype(StrBuf *sb, const Embed *em, const char *lead, const char *suffix,
                          const char *tail) {
  int n = 0, total = em->io.ninputs + em->io.noutputs + 4; /* n, ld, workspace, stream */
  char **params = xcalloc((size_t)total, sizeof *params);
  for (int i = 0; i < em->io.ninputs; i++)
    params[n++] = xasprintf("const %s *%s", em->real, em->io.input[i]);
  for (int o = 0; o < em->io.noutputs; o++)
    params[n++] = xasprintf("%s *%s", em->real, em->io.output[o]);
  params[n++] = xstrdup("size_t n");
  if (em->ld) params[n++] = xstrdup("size_t ld");
  params[n++] = xstrdup("void *workspace");
  params[n++] = xstrdup("void *stream");
  char *open = xasprintf("%skas_status kas_%s%s(", lead, em->stem, suffix);
  char *close = xasprintf(")%s", tail);
  emit_list(sb, 0, open, params, n, close);
  for (int i = 0; i < n; i++) free(params[i]);
  free(params);
  free(open);
  free(close);
}

/* "#define NAME {a, b, c}" with backslash-continued lines within 100 columns. */
static void macro_list(StrBuf *sb, const char *name, char *const *items, int n) {
  sb_printf(sb, "#define %s {", name);
  size_t col = strlen(name) + 10;
  for (int i = 0; i < n; i++) {
    if (i && col + strlen(items[i]) + 5 > 100) {
      sb_puts(sb, ", \\\n    ");
      col = 4;
    } else if (i) {
      sb_puts(sb, ", ");
      col += 2;
    }
    sb_puts(sb, items[i]);
    col += strlen(items[i]);
  }
  sb_puts(sb, "}\n");
}

/* Writes "#define KAS_<STEM>_<side>_<what> {a, b, ...}" (a spec without inputs: {0}). */
static void side_macro(StrBuf *sb, const Embed *em, const char *side, const char *what,
                       char **items, int n) {
  char *name = xasprintf("KAS_%s_%s_%s", em->upper, side, what);
  char *zero[1] = {(char *)"0"};
  macro_list(sb, name, n ? items : zero, n ? n : 1);
  free(name);
  for (int i = 0; i < n; i++) free(items[i]);
}

static void io_macros(StrBuf *sb, const Embed *em) {
  const Dag *dag = em->dag;
  const char *side[2] = {"INPUT", "OUTPUT"};
  sb_printf(sb, "#define KAS_%s_REAL %s\n", em->upper, em->real);
  sb_printf(sb, "#define KAS_%s_LD %d /* 1: the API takes ld (an argument is component-major) */\n",
            em->upper, em->ld);
  sb_printf(sb, "#define KAS_%s_NINPUTS %d\n#define KAS_%s_NOUTPUTS %d\n", em->upper,
            dag->nin_args, em->upper, dag->nout_args);
  sb_printf(sb, "/* Per argument: its reals per element (of KAS_%s_REAL, float or double as\n"
                " * --precision chose; _FLOATS, the older name, is the same list in either), its "
                "name and its\n * layout (0 element-major, 1 component-major). */\n", em->upper);
  for (int s = 0; s < 2; s++) {
    int first = s ? dag->nin_args : 0, nv = s ? dag->nout_args : dag->nin_args;
    char **floats = xcalloc((size_t)nv + 1, sizeof *floats);
    char **names = xcalloc((size_t)nv + 1, sizeof *names);
    char **layouts = xcalloc((size_t)nv + 1, sizeof *layouts);
    for (int i = 0; i < nv; i++) {
      const DagArg *arg = dag_api_arg(dag, first + i);
      floats[i] = xasprintf("%d", arg->record);
      names[i] = xasprintf("\"%s\"", dag_arg_name(dag, arg));
      layouts[i] = xasprintf("%d", target_arg_layout(em->target, dag, first + i));
    }
    if (!nv) names[0] = xstrdup("\"\""), nv = -1; /* one empty name, no reals */
    side_macro(sb, em, side[s], "REALS", floats, nv > 0 ? nv : 0);
    sb_printf(sb, "#define KAS_%s_%s_FLOATS KAS_%s_%s_REALS\n", em->upper, side[s], em->upper,
              side[s]);
    side_macro(sb, em, side[s], "NAMES", names, nv > 0 ? nv : 1);
    side_macro(sb, em, side[s], "LAYOUTS", layouts, nv > 0 ? nv : 0);
    free(floats);
    free(names);
    free(layouts);
  }
}

/* The choice of `kasgen tune`, as a comment under the banner: its text made safe for a comment
 * (c_safe_text) and wrapped within 100 columns. */
static void embed_choice(StrBuf *sb, const char *why) {
  char *safe = c_safe_text(why);
  sb_puts(sb, "/* Chosen by kasgen tune:");
  sb_wrap_words(sb, safe, 23, 97, "\n *", 2);
  sb_puts(sb, " */\n");
  free(safe);
}

/* The API's name of argument k (inputs, then outputs). */
static const char *arg_param(const Embed *em, int k) {
  return k < em->io.ninputs ? em->io.input[k] : em->io.output[k - em->io.ninputs];
}

/* The pointer rules, per argument (inputs, then outputs): "F element-major: element e at
 * p + e*9", and for an array where its elements are in the element's record. */
static void describe_arguments(StrBuf *sb, const Embed *em) {
  const Dag *dag = em->dag;
  for (int k = 0; k < dag->nin_args + dag->nout_args; k++) {
    const DagArg *arg = dag_api_arg(dag, k);
    int s = arg->record;
    if (target_arg_layout(em->target, dag, k) == LAYOUT_COMPONENT)
      sb_printf(sb, " *   %-18s component-major: component c of element e at p[c*ld + e] "
                    "(c < %d)\n", arg_param(em, k), s);
    else
      sb_printf(sb, " *   %-18s element-major: element e at p + e*%d\n", arg_param(em, k), s);
    if (arg->nvalues > 1)
      sb_printf(sb, " *   %-18s   %d %ss in C order, [k] from component %d*k of the record\n",
                "", arg->nvalues, arg->type->name, arg->type->size);
  }
}

/* The header's opening comment: what the API runs and the rules of its pointers. */
static void header_comment(StrBuf *sb, const Embed *em) {
  const Dag *dag = em->dag;
  char *from = c_safe_text(dag->spec->path ? dag->spec->path : "the spec");
  sb_printf(sb,
            "/*\n * embed/kas_%s.h — generated by kasgen %s\n * from %s; do not edit.\n"
            " * Spec %s behind a plain C API: %s\n"
            " * (%s: %d kernel%s, %.4f ns per element predicted), in %s precision.\n"
            " * Link embed/kas_%s.cu, compiled by nvcc with\n"
            " * -Xcompiler -fno-threadsafe-statics (then no libstdc++ is needed), and -lcudart;\n"
            " * or use kas_%s.pc or kas_%s.cmake\n"
            " * (docs/generated.md, \"Building it into a FEM code\").\n"
            " *\n"
            " * Pointers are device pointers to %s, inputs in the spec's `input` order, outputs in\n"
            " * `return` order, each laid out as follows (--layout):\n",
            em->stem, KASGEN_VERSION, from, dag->spec->name,
            em->why ? "the candidate `kasgen tune` chose" : "the predicted best candidate",
            em->cand, em->winner->nkernels,
            em->winner->nkernels == 1 ? "" : "s", em->winner->predicted_ns_per_elem,
            target_precision_name(em->target->precision), em->stem, em->stem, em->stem,
            em->real);
  free(from);
  describe_arguments(sb, em);
  if (em->ld)
    sb_puts(sb, " * ld: the leading dimension of the component-major arguments, in elements, "
                "at least n\n * (0 = n).  A sub-range [s, s+n) of arrays of N elements: pass p + s, "
                "n and ld = N.\n");
  sb_printf(sb,
            " * A pointer needs only its type's alignment (%d bytes): where every array the "
            "winner moves\n * 16 bytes at a time is 16-byte aligned (cudaMalloc's are) that plan "
            "runs; a sub-range\n * whose pointers are all moved alike runs it after a few "
            "elements (docs/generated.md,\n * \"Alignment\"); elsewhere the same kernels planned "
            "for any alignment.\n * workspace: device "
            "memory of\n"
            " * kas_%s_workspace_bytes(n) bytes (NULL when that is 0).  stream: a cudaStream_t\n"
            " * passed as void * (NULL = default stream) so that C code needs no CUDA headers; the "
            "call is\n * asynchronous on it.  n = 0 launches nothing; any n works, also beyond "
            "2^31 (launched in\n * chunks of 2^%d elements).\n */\n",
            target_real_bytes(em->target->precision), em->stem, CHUNK_LOG2);
}

static char *header_text(const Embed *em) {
  StrBuf sb;
  sb_init(&sb);
  header_comment(&sb, em);
  if (em->why) embed_choice(&sb, em->why);
  sb_printf(&sb, "#ifndef KAS_%s_H\n#define KAS_%s_H\n\n#include <stddef.h>\n\n", em->upper,
            em->upper);
  /* ld is the component-major APIs' only: an element-major one has none to be below n */
  sb_printf(&sb, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
               "#ifndef KAS_STATUS_DEFINED\n#define KAS_STATUS_DEFINED\n"
               "typedef enum {\n"
               "  KAS_OK = 0,          /* launched (or nothing to do: n = 0) */\n"
               "  KAS_ERR_INVALID = 1, /* a NULL pointer with n > 0%s no workspace when one is "
               "needed%s */\n"
               "  KAS_ERR_ALIGN = 2,   /* a pointer not aligned to its element type */\n"
               "  KAS_ERR_CUDA = 3     /* a CUDA launch failed: kas_<spec>_last_cuda_error() "
               "gives\n                          its cudaError_t */\n"
               "} kas_status;\n#endif\n\n",
            em->ld ? "," : " or", em->ld ? ",\n                          or ld below n" : "");
  io_macros(&sb, em);
  sb_printf(&sb, "\n/* Bytes of device workspace for n elements (intermediates between kernels). */\n"
                 "size_t kas_%s_workspace_bytes(size_t n);\n\n"
                 "/* Runs the computation on n elements. */\n",
            em->stem);
  api_prototype(&sb, em, "", "", ";\n\n");
  sb_printf(&sb, "/* The same with the pointers in arrays (in: KAS_%s_NINPUTS,\n"
                 " * out: KAS_%s_NOUTPUTS). */\n"
                 "kas_status kas_%s_arrays(const %s *const *in, %s *const *out, size_t n,\n"
                 "    %svoid *workspace, void *stream);\n\n"
                 "const char *kas_%s_status_string(kas_status s);\n\n",
            em->upper, em->upper, em->stem, em->real, em->real, em->ld ? "size_t ld, " : "",
            em->stem);
  sb_printf(&sb,
            "/* Why this thread's last call of kas_%s or kas_%s_arrays returned\n"
            " * KAS_ERR_CUDA: the cudaError_t of the launch that failed (an int, so that C needs "
            "no CUDA\n * headers: cudaGetErrorString((cudaError_t)e)); 0 after a call that "
            "returned anything\n * else.  Per host thread, as CUDA's own last error.  A call "
            "neither reads nor clears the\n * thread's pending CUDA error (cudaGetLastError): "
            "one that an earlier CUDA call of yours left\n * pending fails no call and is still "
            "yours after it%s.  An error the context keeps (a kernel\n * faulted: "
            "cudaErrorIllegalAddress, cudaErrorLaunchFailure, ...; only a new process "
            "recovers)\n * fails every later launch, and so the call, with that cause, whichever "
            "kernel faulted. */\n"
            "int kas_%s_last_cuda_error(void);\n\n",
            em->stem, em->stem,
            opts_in_smem(em) ? " (but for the first call in a process: this\n * winner's "
                               "kernels take more than 48 KB of shared memory, a limit CUDA "
                               "raises only\n * by cudaFuncSetAttribute, which clears the "
                               "pending error)" : "",
            em->stem);
  sb_printf(&sb, "/* The CPU: the same computation by the same generated kernels, run thread by "
                 "thread\n * (their host form), on host pointers; the stream is unused.  For "
                 "checks and machines\n * without a GPU: far slower than the GPU. */\n"
                 "size_t kas_%s_host_workspace_bytes(size_t n); /* host memory */\n",
            em->stem);
  api_prototype(&sb, em, "", "_host", ";\n");
  sb_printf(&sb, "kas_status kas_%s_host_arrays(\n    const %s *const *in, %s *const *out, size_t n,"
                 "%s\n    void *workspace, void *stream);\n\n",
            em->stem, em->real, em->real, em->ld ? " size_t ld," : "");
  sb_printf(&sb,
            "/* Spec-independent names, for drivers written once for every spec. */\n"
            "#ifdef KAS_EMBED_GENERIC\n#define KAS_EMBED_NAME \"%s\"\n"
            "#define KAS_EMBED_REAL KAS_%s_REAL\n#define KAS_EMBED_LD KAS_%s_LD\n"
            "#define KAS_EMBED_NINPUTS KAS_%s_NINPUTS\n#define KAS_EMBED_NOUTPUTS KAS_%s_NOUTPUTS\n"
            "#define KAS_EMBED_INPUT_REALS KAS_%s_INPUT_REALS\n"
            "#define KAS_EMBED_OUTPUT_REALS KAS_%s_OUTPUT_REALS\n"
            "#define KAS_EMBED_INPUT_FLOATS KAS_EMBED_INPUT_REALS\n"
            "#define KAS_EMBED_OUTPUT_FLOATS KAS_EMBED_OUTPUT_REALS\n"
            "#define KAS_EMBED_INPUT_LAYOUTS KAS_%s_INPUT_LAYOUTS\n"
            "#define KAS_EMBED_OUTPUT_LAYOUTS KAS_%s_OUTPUT_LAYOUTS\n"
            "#define KAS_EMBED_INPUT_NAMES KAS_%s_INPUT_NAMES\n"
            "#define KAS_EMBED_OUTPUT_NAMES KAS_%s_OUTPUT_NAMES\n"
            "#define kas_embed_workspace_bytes kas_%s_workspace_bytes\n"
            "#define kas_embed_arrays kas_%s_arrays\n"
            "#define kas_embed_host_workspace_bytes kas_%s_host_workspace_bytes\n"
            "#define kas_embed_host_arrays kas_%s_host_arrays\n"
            "#define kas_embed_status_string kas_%s_status_string\n"
            "#define kas_embed_last_cuda_error kas_%s_last_cuda_error\n#endif\n\n",
            em->stem, em->upper, em->upper, em->upper, em->upper, em->upper, em->upper, em->upper,
            em->upper, em->upper, em->upper, em->stem, em->stem, em->stem, em->stem, em->stem,
            em->stem);
  sb_printf(&sb, "#ifdef __cplusplus\n}\n#endif\n#endif\n");
  return sb_take(&sb);
}

static void misaligned_function(StrBuf *sb, const Embed *em) {
  sb_printf(sb, "/* Whether p is not aligned to the element type: the only alignment refused. */\n"
                "static int kas_misaligned(const void *p) { return ((size_t)p %% sizeof(%s)) != 0; "
                "}\n\n",
            em->real);
}

/* kas_<stem>_arrays (host: kas_<stem>_host_arrays): checks the arguments, then runs the winner
 * chunk by chunk, on the GPU or in its host form (an element-major array moves chunk * its reals
 * per chunk, a component-major one chunk reals; the leading dimension stays). */
static void arrays_function(StrBuf *sb, const Embed *em, bool host) {
  const Dag *dag = em->dag;
  const char *s = em->stem, *u = em->upper, *r = em->real, *side = host ? "_host" : "";
  sb_printf(sb,
            "extern \"C\" kas_status kas_%s%s_arrays(\n    const %s *const *in, %s *const *out, "
            "size_t n,%s\n    void *workspace, void *stream) {\n",
            s, side, r, r, em->ld ? " size_t ld," : "");
  if (host) sb_puts(sb, "  (void)stream; /* the host form runs at once */\n");
  else sb_puts(sb, "  kas_cuda_error = cudaSuccess; /* this call's cause, if a launch fails */\n");
  sb_puts(sb, "  if (n == 0) return KAS_OK;\n");
  if (em->ld)
    sb_puts(sb, "  if (ld == 0) ld = n;\n  if (ld < n) return KAS_ERR_INVALID;\n");
  sb_printf(sb,
            "  if (KAS_%s_NINPUTS && !in) return KAS_ERR_INVALID;\n"
            "  if (KAS_%s_NOUTPUTS && !out) return KAS_ERR_INVALID;\n"
            "  for (int i = 0; i < KAS_%s_NINPUTS; i++) {\n"
            "    if (!in[i]) return KAS_ERR_INVALID;\n"
            "    if (kas_misaligned(in[i])) return KAS_ERR_ALIGN;\n  }\n"
            "  for (int o = 0; o < KAS_%s_NOUTPUTS; o++) {\n"
            "    if (!out[o]) return KAS_ERR_INVALID;\n"
            "    if (kas_misaligned(out[o])) return KAS_ERR_ALIGN;\n  }\n"
            "  if (kas_%s%s_workspace_bytes(n) > 0) {\n"
            "    if (!workspace) return KAS_ERR_INVALID;\n"
            "    if (kas_misaligned(workspace)) return KAS_ERR_ALIGN;\n  }\n",
            u, u, u, u, s, side);
  sb_printf(sb,
            "  /* Chunks keep every grid small; they run in order%s and reuse the\n"
            "     workspace.  Offsets are size_t: element counts beyond 2^31 are fine. */\n"
            "  for (size_t start = 0; start < n; start += kas_chunk) {\n"
            "    size_t m = n - start < kas_chunk ? n - start : kas_chunk;\n"
            "    const %s *cin[%d];\n    %s *cout[%d];\n"
            "    for (int i = 0; i < KAS_%s_NINPUTS; i++)\n"
            "      cin[i] = in[i] + start * kas_in_stride[i];\n"
            "    for (int o = 0; o < KAS_%s_NOUTPUTS; o++)\n"
            "      cout[o] = out[o] + start * kas_out_stride[o];\n",
            host ? "" : " on the stream", r, dag->nin_args > 0 ? dag->nin_args : 1, r,
            dag->nout_args > 0 ? dag->nout_args : 1, u, u);
  if (host)
    sb_printf(sb, "    kas_%s_%s_launch_host(cin, cout, workspace, m, %s, 1);\n  }\n"
                  "  return KAS_OK;\n}\n\n",
              s, em->cand, em->ld ? "ld" : "0");
  else {
    char *args[6] = {(char *)"cin", (char *)"cout", (char *)"workspace", (char *)"m",
                     (char *)(em->ld ? "ld" : "0"), (char *)"(cudaStream_t)stream"};
    char *open = xasprintf("const int err = kas_%s_%s_launch(", s, em->cand);
    emit_list(sb, 2, open, args, 6, ");\n");
    free(open);
    sb_printf(sb, "    if (err != 0) {\n"
                  "      kas_cuda_error = err; /* for kas_%s_last_cuda_error() */\n"
                  "      return KAS_ERR_CUDA;\n    }\n  }\n  return KAS_OK;\n}\n\n",
              s);
  }
}

/* "static const int kas_<side>_stride[N] = {...};": reals between consecutive elements of each
 * array (its size element-major, 1 component-major). */
static void stride_table(StrBuf *sb, const Embed *em, bool outputs) {
  const Dag *dag = em->dag;
  int first = outputs ? dag->nin_args : 0, nv = outputs ? dag->nout_args : dag->nin_args;
  char **items = xcalloc((size_t)nv + 1, sizeof *items);
  for (int i = 0; i < nv; i++)
    items[i] = xasprintf("%d", target_arg_layout(em->target, dag, first + i) == LAYOUT_COMPONENT
                                   ? 1 : dag_api_arg(dag, first + i)->record);
  if (!nv) items[0] = xstrdup("0");
  char *open = xasprintf("static const size_t kas_%s_stride[%d] = {", outputs ? "out" : "in",
                         nv > 0 ? nv : 1);
  emit_list(sb, 0, open, items, nv > 0 ? nv : 1, "};\n");
  free(open);
  for (int i = 0; i < (nv > 0 ? nv : 1); i++) free(items[i]);
  free(items);
}

/* The API function's pointers gathered into in[] and out[]. */
static void api_arrays(StrBuf *sb, const Embed *em) {
  char *zero[1] = {(char *)"0"}; /* a spec without inputs: C++ has no empty arrays */
  int ni = em->dag->nin_args, no = em->dag->nout_args;
  char *open = xasprintf("const %s *in[%d] = {", em->real, ni > 0 ? ni : 1);
  emit_list(sb, 1, open, ni ? em->io.input : zero, ni ? ni : 1, "};\n");
  free(open);
  open = xasprintf("%s *out[%d] = {", em->real, no > 0 ? no : 1);
  emit_list(sb, 1, open, no ? em->io.output : zero, no ? no : 1, "};\n");
  free(open);
}

static void wrapper_functions(StrBuf *sb, const Embed *em) {
  const char *s = em->stem, *c = em->cand;
  sb_printf(sb,
            "/* ---- the C API ---------------------------------------------------------- */\n\n"
            "/* Elements per launch; a smaller value (-DKAS_EMBED_CHUNK_LOG2=10) tests the split. */\n"
            "#ifndef KAS_EMBED_CHUNK_LOG2\n#define KAS_EMBED_CHUNK_LOG2 %d\n#endif\n"
            "static const size_t kas_chunk = (size_t)1 << KAS_EMBED_CHUNK_LOG2;\n"
            "/* Reals from one element to the next in each array (its layout). */\n",
            CHUNK_LOG2);
  stride_table(sb, em, false);
  stride_table(sb, em, true);
  sb_printf(sb, "/* The cudaError_t of this thread's last call that returned KAS_ERR_CUDA, 0 after "
                "any other\n   (kas_%s_last_cuda_error): per thread, as CUDA's last error. */\n"
                "static thread_local int kas_cuda_error;\n\n", s);
  misaligned_function(sb, em);
  for (int host = 0; host < 2; host++) {
    const char *side = host ? "_host" : "";
    sb_printf(sb,
              "extern \"C\" size_t kas_%s%s_workspace_bytes(size_t n) {\n"
              "  return kas_%s_%s%s_workspace_bytes(n < kas_chunk ? n : kas_chunk);\n}\n\n",
              s, side, s, c, side);
    arrays_function(sb, em, host);
    api_prototype(sb, em, "extern \"C\" ", side, " {\n");
    api_arrays(sb, em);
    sb_printf(sb, "  return kas_%s%s_arrays(in, out, n, %sworkspace, stream);\n}\n\n", s, side,
              em->ld ? "ld, " : "");
  }
  sb_printf(sb,
            "extern \"C\" const char *kas_%s_status_string(kas_status st) {\n"
            "  switch (st) {\n"
            "  case KAS_OK: return \"ok\";\n"
            "  case KAS_ERR_INVALID: return \"invalid argument (NULL pointer%s missing "
            "workspace%s)\";\n"
            "  case KAS_ERR_ALIGN: return \"pointer not aligned to its element type\";\n"
            "  case KAS_ERR_CUDA:\n"
            "    return \"CUDA launch failed (kas_%s_last_cuda_error() gives the cause)\";\n"
            "  }\n  return \"unknown status\";\n}\n\n",
            s, em->ld ? "," : " or", em->ld ? " or ld below n" : "", s);
  sb_printf(sb, "extern \"C\" int kas_%s_last_cuda_error(void) { return kas_cuda_error; }\n", s);
}

static char *source_text(const Embed *em, const char *device_h, const char *kernels,
                         const char *host_kernels) {
  StrBuf sb;
  sb_init(&sb);
  const Dag *dag = em->dag;
  char *from = c_safe_text(dag->spec->path ? dag->spec->path : "the spec");
  sb_printf(&sb,
            "/*\n * embed/kas_%s.cu — generated by kasgen %s\n * from %s; do not edit.\n"
            " * The C API of kas_%s.h around %s, in one self-contained file: compile with\n"
            " * nvcc -O3 -arch=sm_90 -Xcompiler -fno-threadsafe-statics -c (no libstdc++ needed).\n"
            " */\n",
            em->stem, KASGEN_VERSION, from, em->stem,
            em->cand);
  free(from);
  sb_printf(&sb, "#include <cuda_runtime.h>\n#include <math.h>\n#include <stddef.h>\n"
                 "#include <stdint.h>\n#include \"kas_%s.h\"\n\n",
            em->stem);
  sb_printf(&sb, "/* The routines serve the kernels and their host form (kas_%s_host) alike. */\n"
                 "#define KAS_DEV __host__ __device__ __forceinline__\n\n", em->stem);
  sb_puts(&sb, "/* ---- kas_device.h (from the library) ------------------------------------- */\n");
  sb_puts(&sb, device_h);
  sb_puts(&sb, "\n/* ---- kas_host.h (kasgen's runtime: block memory of the host form) ---------- */\n");
  sb_puts(&sb, runtime_file("kas_host.h"));
  sb_printf(&sb, "\n/* ---- the kernels of %s ------------------------------------------------ */\n"
                 "/* Internal to this file: the routines of every embedded spec share names. */\n"
                 "namespace {\n\n",
            em->cand);
  sb_puts(&sb, kernels);
  sb_printf(&sb, "\n\n/* ---- the host form of %s: its kernels run thread by thread "
                 "---------------- */\n\n", em->cand);
  sb_puts(&sb, host_kernels);
  sb_puts(&sb, "\n} /* namespace */\n\n");
  wrapper_functions(&sb, em);
  return sb_take(&sb);
}

bool emit_embed(EmitDir *d, const Dag *dag, const Library *lib, const Target *t,
                const Candidate *winner, const Candidate *unaligned, const char *why) {
  if (!t) t = target_default();
  Embed em = {.dag = dag, .target = t, .real = target_real_name(t->precision),
              .ld = target_has_component(t), .winner = winner, .why = why,
              .io = emit_io_names(dag)};
  em.stem = c_identifier(dag->spec->name);
  em.upper = upper(em.stem);
  em.cand = xasprintf("cand%02d", winner->rank > 0 ? winner->rank : 1);
  char *prefix = xasprintf("%s_%s", em.stem, em.cand);
  char *kernels = emit_cuda_embed_kernels(dag, t, winner, unaligned, em.cand, prefix);
  char *host_kernels = emit_cuda_host_kernels(dag, t, winner, unaligned, em.cand, prefix);
  char *dpath = xasprintf("%s/kas_device.h", lib->dir);
  char *dtext = kernels ? read_text_file(dpath, NULL) : NULL;
  bool ok = kernels && host_kernels && dtext;
  if (ok) {
    char *hrel = xasprintf("embed/kas_%s.h", em.stem), *crel = xasprintf("embed/kas_%s.cu", em.stem);
    char *h = header_text(&em), *cu = source_text(&em, dtext, kernels, host_kernels);
    ok = emit_dir_write(d, hrel, h) && emit_dir_write(d, crel, cu) &&
         emit_embed_build_files(d, dag, em.stem);
    free(h);
    free(cu);
    free(hrel);
    free(crel);
  }
  free(kernels);
  free(host_kernels);
  free(dtext);
  free(dpath);
  free(prefix);
  free(em.stem);
  free(em.upper);
  free(em.cand);
  emit_io_names_free(&em.io);
  return ok;
}
