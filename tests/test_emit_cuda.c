/*
 * test_emit_cuda.c — the CUDA emitter (src/emit_cuda.c) on hand-built kernel plans over the real
 * library: barriers exactly where the plan has them, register arrays and shared offsets as
 * planned, coordinates recomputed only where a call's shape differs, each routine instantiated
 * once, the workspace of intermediates that cross kernels, invalid plans refused, the common
 * files (CPU graph, references), and the layouts kas_candidates.h says (KAS_LAYOUTS, one spelling
 * of --layout, continued over lines when long).  The generated code is compiled and run by
 * tests/integration/emit_cpu.sh.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* w = mvmul33(M, v); r = svmul3(w, s): a 3-threads-per-element call and a 1-thread-per-element
 * one, so the second recomputes its coordinates. */
static const char fused_spec[] = "matrix3x3 M;\nvector3 v, w, r;\nscalar s;\n"
                                 "input M, v, s;\nw = mvmul33(M, v);\nr = svmul3(w, s);\n"
                                 "return r;\n";

typedef struct {
  Library *lib;
  Spec *spec;
  Dag *dag;
  char dir[64];
} Fixture;

static int setup(void **state) {
  Fixture *f = xcalloc(1, sizeof *f);
  f->lib = library_load(TEST_LIBRARY);
  if (!f->lib) return -1;
  f->spec = spec_parse("fused.spec", fused_spec, f->lib);
  if (!f->spec) return -1;
  f->dag = dag_build(f->spec);
  strcpy(f->dir, "/tmp/test_emit_cuda.XXXXXX");
  if (!mkdtemp(f->dir)) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  Fixture *f = *state;
  if (getenv("KEEP")) return 0;
  char *cmd = xasprintf("rm -rf '%s'", f->dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", f->dir);
  free(cmd);
  dag_free(f->dag);
  spec_free(f->spec);
  library_free(f->lib);
  free(f);
  return 0;
}

static Impl *find_impl(const Library *lib, const char *fn, int index) {
  Function *f = library_find_function(lib, fn);
  for (int i = 0; f && i < f->nimpls; i++)
    if (f->impls[i].index == index) return &f->impls[i];
  return NULL;
}

/* Value indices of the fixture (dag.c: inputs first, then one per statement). */
enum { V_M, V_V, V_S, V_W, V_R };

static Buffer shared_buf(int value, int offset, int bytes, int first, int last) {
  return (Buffer){.value = value, .place = PLACE_SHARED, .offset = offset, .bytes = bytes,
                  .first_use = first, .last_use = last, .load_call = -1, .producer = -1};
}

static Buffer reg_buf(int value, int floats, int first, int last) {
  return (Buffer){.value = value, .place = PLACE_REGISTER, .offset = -1, .reg_floats = floats,
                  .first_use = first, .last_use = last, .load_call = -1, .producer = -1};
}

/* Buffer b is filled by load j of call `call` (implementation im) / saved by save j of its
 * producer `call`. */
static void loaded_by(Buffer *b, const Impl *im, int call, int j) {
  b->load = &im->loads[j];
  b->load_call = call;
}

static void saved_by(Buffer *b, const Impl *im, int call, int j) {
  b->save = &im->saves[j];
  b->producer = call;
}

static Step io_step(RoutineKind kind, const Impl *im, int call, int j, int buf) {
  const IoRoutine *io = kind == ROUTINE_LOAD ? &im->loads[j] : &im->saves[j];
  return (Step){.kind = kind, .call = call, .impl = im, .io = io, .buf = {buf}, .nbuf = 1};
}

/* The compute of a two-argument call: buffers of the arguments, then of the result. */
static Step compute_step(const Impl *im, int call, int a0, int a1, int result) {
  return (Step){.kind = ROUTINE_COMPUTE, .call = call, .impl = im, .buf = {a0, a1, result},
                .nbuf = 3};
}

/* The fused plan at E = 32: M coalesced into shared memory (barrier before the compute), v and s
 * owner-loaded into registers, w in shared memory (different thread counts: barrier), r in
 * registers saved by its owner. */
static KernelPlan *fused_plan(const Fixture *f) {
  KernelPlan *p = xcalloc(1, sizeof *p);
  p->nodes = nodeset_range(0, 2);
  p->ncalls = 2;
  p->order = xcalloc(2, sizeof(int));
  p->order[0] = 0;
  p->order[1] = 1;
  p->impl = xcalloc(2, sizeof(Impl *));
  p->impl[0] = find_impl(f->lib, "mvmul33", 2);
  p->impl[1] = find_impl(f->lib, "svmul3", 1);
  assert_non_null(p->impl[0]);
  assert_non_null(p->impl[1]);
  p->e = 32;
  p->precision = PREC_SINGLE;
  p->w = 4; /* M's coalesced load moves float4s */
  p->block = (BlockShape){3, 32, 1, 0};
  p->threads = 96;
  p->nbuffers = 5;
  p->buffers = xcalloc(5, sizeof(Buffer));
  const Impl *mv = p->impl[0], *sv = p->impl[1];
  p->buffers[0] = shared_buf(V_M, 0, 32 * 9 * 4, 0, 2);
  loaded_by(&p->buffers[0], mv, 0, 0);
  p->buffers[1] = reg_buf(V_V, 3, 1, 2);
  loaded_by(&p->buffers[1], mv, 0, 3);
  p->buffers[2] = shared_buf(V_W, 1152, 32 * 3 * 4, 2, 4);
  p->buffers[2].producer = 0;
  p->buffers[3] = reg_buf(V_S, 1, 3, 4);
  loaded_by(&p->buffers[3], sv, 1, 3);
  p->buffers[4] = reg_buf(V_R, 3, 4, 5);
  saved_by(&p->buffers[4], sv, 1, 1);
  p->smem_bytes = 1152 + 384;
  p->nsteps = 6;
  p->steps = xcalloc(6, sizeof(Step));
  p->steps[0] = io_step(ROUTINE_LOAD, mv, 0, 0, 0);
  p->steps[1] = io_step(ROUTINE_LOAD, mv, 0, 3, 1);
  p->steps[2] = compute_step(mv, 0, 0, 1, 2);
  p->steps[2].barrier_before = true;
  p->steps[2].barrier_why = "mvmul33 reads M written by others";
  p->steps[3] = io_step(ROUTINE_LOAD, sv, 1, 3, 3);
  p->steps[4] = compute_step(sv, 1, 2, 3, 4);
  p->steps[4].barrier_before = true;
  p->steps[4].barrier_why = "svmul3 reads w written by others";
  p->steps[5] = io_step(ROUTINE_SAVE, sv, 1, 1, 4);
  for (int s = 3; s < 6; s++) p->steps[s].recompute_coords = true;
  p->barriers = 2;
  p->barriers_possible = 3;
  return p;
}

/* A one-call kernel through owner routines: its arguments loaded by loads 1 and 3, its result
 * saved by save 1 (buffers 0, 1 and 2). */
static void one_call_buffers(Buffer *b, const Impl *im) {
  loaded_by(&b[0], im, 0, 1);
  loaded_by(&b[1], im, 0, 3);
  saved_by(&b[2], im, 0, 1);
}

static void one_call_steps(Step *s, const Impl *im) {
  s[0] = io_step(ROUTINE_LOAD, im, 0, 1, 0);
  s[1] = io_step(ROUTINE_LOAD, im, 0, 3, 1);
  s[2] = compute_step(im, 0, 0, 1, 2);
  s[3] = io_step(ROUTINE_SAVE, im, 0, 1, 2);
}

static void free_plan(KernelPlan *p) {
  free(p->order);
  free(p->impl);
  free(p->buffers);
  free(p->steps);
  free(p);
}

/* Each candidate gets its own output folder, so that the tests' files can be inspected (KEEP=1);
 * t: its target (NULL: single precision, element-major), unaligned: its plan for arrays of any
 * alignment or NULL. */
static char *emit_target_and_read(const Fixture *f, const Target *t, Candidate *c,
                                  Candidate *unaligned, const char *name, const char *file) {
  char *dir = xasprintf("%s/%s", f->dir, name);
  EmitDir *d = emit_dir_open(dir);
  assert_non_null(d);
  bool ok = emit_cuda_candidate(d, f->dag, t, c, unaligned, name);
  bool closed = emit_dir_close(d); /* false after an error: the folder keeps its old files */
  if (ok) assert_true(closed);
  if (!ok) {
    free(dir);
    return NULL;
  }
  char *path = xasprintf("%s/%s/%s", dir, name, file);
  char *text = read_text_file(path, NULL);
  free(path);
  free(dir);
  return text;
}

static char *emit_and_read(const Fixture *f, Candidate *c, const char *name, const char *file) {
  return emit_target_and_read(f, NULL, c, NULL, name, file);
}

static int count(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

static void test_fused_kernel_text(void **state) {
  Fixture *f = *state;
  KernelPlan *p = fused_plan(f);
  Candidate c = {.kernels = &p, .nkernels = 1, .predicted_ns_per_elem = 0.5, .rank = 1};
  char *cu = emit_and_read(f, &c, "cand01", "kernels.cu");
  assert_non_null(cu);
  assert_non_null(strstr(cu, "#include \"../common/kas_device.h\""));
  /* kernels are numbered from 1, as everywhere */
  assert_non_null(strstr(cu, "__global__ void __launch_bounds__(96) kas_cand01_k1("));
  assert_null(strstr(cu, "_k0"));
  /* exactly the two planned barriers, each under its reason */
  assert_int_equal(count(cu, "__syncthreads();"), 2);
  assert_non_null(strstr(cu, "  /* Barrier: mvmul33 reads M written by others */\n"
                             "  __syncthreads();\n"));
  assert_non_null(strstr(cu, "/* Barrier: svmul3 reads w written by others */\n"
                             "  __syncthreads();\n"));
  /* shared buffers at their offsets (in floats), register arrays of their sizes */
  assert_non_null(strstr(cu, "extern __shared__ float4 kas_smem[];"));
  assert_non_null(strstr(cu, "float *const s_M_0 = (float *)kas_smem;"));
  assert_non_null(strstr(cu, "float *const s_w_0 = (float *)kas_smem + 288;"));
  assert_non_null(strstr(cu, "float r_v_0[3];"));
  assert_non_null(strstr(cu, "float r_s_0[1];"));
  assert_non_null(strstr(cu, "float r_r_0[3];"));
  assert_null(strstr(cu, "s_v_0"));
  /* the 32-thread call idles the other 64 and recomputes x only (its routines take no y, z);
   * in its 1-D shape of 32 threads, x is lin itself */
  assert_non_null(strstr(cu, "if (lin < 32) {"));
  assert_non_null(strstr(cu, "const int ctx = lin;"));
  assert_null(strstr(cu, "cty"));
  assert_non_null(strstr(cu, "const int lin = threadIdx.x + 3 * threadIdx.y;"));
  assert_non_null(strstr(cu, "const size_t e0 = (size_t)blockIdx.x * 32;"));
  /* each instantiation once, with its placement suffix; calls pass buffers and coordinates */
  assert_int_equal(count(cu, "void d_mvmul33_2_compute_e32_srs("), 1);
  assert_int_equal(count(cu, "void d_svmul3_1_compute_e32_srr("), 1);
  assert_int_equal(count(cu, "void d_mvmul33_2_load_3_e32_r("), 1);
  assert_non_null(strstr(cu, "  /* mvmul33#0 load M (coalesced) */\n"
                             "  d_mvmul33_2_load_0_e32_s(g_M, s_M_0, tx, ty, tz, e0, n);\n"));
  /* only the coordinates each routine uses */
  assert_non_null(strstr(cu, "d_mvmul33_2_compute_e32_srs(s_M_0, r_v_0, s_w_0, tx, ty);"));
  assert_non_null(strstr(cu, "d_svmul3_1_compute_e32_srr(s_w_0, r_s_0, r_r_0, ctx);"));
  assert_non_null(strstr(cu, "d_svmul3_1_save_1_e32_r(r_r_0, g_r, ctx, e0, n);"));
  /* launch: 1-D grid of ceil(n/32) blocks of 3 x 32 threads, no workspace, 1536 bytes; the
   * arguments named after the spec's variables */
  assert_non_null(strstr(cu, "const size_t blocks1 = (n + 31) / 32;"));
  assert_non_null(strstr(cu, "  const float *const M = in[0];\n  const float *const v = in[1];\n"
                             "  const float *const s = in[2];\n  float *const r = out[0];\n"));
  assert_non_null(strstr(cu, "dim3(3, 32, 1), 1536, stream>>>(M, v, s, r, n);"));
  assert_non_null(strstr(cu, "void * /* no workspace */, size_t n,\n"
                             "                                 size_t /* ld: no component-major "
                             "array */, cudaStream_t stream) {"));
  assert_non_null(strstr(cu, "if (n == 0) return 0;"));
  assert_null(strstr(cu, "cudaFuncSetAttribute")); /* 1536 bytes need no opt-in */
  free(cu);
  free_plan(p);
}

static void test_fused_host_phases(void **state) {
  Fixture *f = *state;
  KernelPlan *p = fused_plan(f);
  Candidate c = {.kernels = &p, .nkernels = 1};
  char *host = emit_and_read(f, &c, "cand01", "kernels_host.cpp");
  assert_non_null(host);
  /* two barriers split the kernel into three phases, each a loop over the block's threads */
  assert_non_null(strstr(host, "3 phases between barriers"));
  assert_int_equal(count(host, "for (int t = 0; t < 96; t++) {"), 3);
  assert_int_equal(count(host, "/* Barrier: "), 2);
  assert_int_equal(count(host, "const int lin = order > 0 ? t : 95 - t;"), 3);
  /* registers persist per thread across phases; shared memory and registers poisoned per block */
  assert_non_null(strstr(host, "float *const r_v_0_all = kas_host_floats(96 * 3);"));
  assert_non_null(strstr(host, "float *const r_v_0 = r_v_0_all + (size_t)lin * 3;"));
  assert_non_null(strstr(host, "kas_host_poison(smem, 384);"));
  assert_non_null(strstr(host, "kas_host_poison(r_r_0_all, 96 * 3);"));
  assert_non_null(strstr(host, "extern \"C\" void kas_cand01_launch_host("));
  assert_non_null(strstr(host, "extern \"C\" size_t kas_cand01_host_workspace_bytes(size_t /* n */) "
                               "{ return 0; }"));
  assert_null(strstr(host, "__syncthreads();"));
  free(host);
  free_plan(p);
}

/* One call, everything in registers through owner routines: no barrier, no shared memory. */
static void test_no_barrier_no_shared(void **state) {
  Fixture *f = *state;
  KernelPlan *p = xcalloc(1, sizeof *p);
  int order = 1;
  Impl *im = find_impl(f->lib, "svmul3", 1);
  p->order = &order;
  p->ncalls = 1;
  p->impl = &im;
  p->e = 64;
  p->block = (BlockShape){64, 1, 1, 0};
  p->threads = 64;
  Buffer bufs[3] = {reg_buf(V_W, 3, 0, 2), reg_buf(V_S, 1, 1, 2), reg_buf(V_R, 3, 2, 3)};
  one_call_buffers(bufs, im);
  p->buffers = bufs;
  p->nbuffers = 3;
  Step steps[4];
  one_call_steps(steps, im);
  p->steps = steps;
  p->nsteps = 4;
  /* w is an intermediate that this kernel loads: a two-kernel candidate would pass it through
   * the workspace; alone here it reads it as a kernel parameter named after the value. */
  Candidate c = {.kernels = &p, .nkernels = 1};
  char *cu = emit_and_read(f, &c, "single", "kernels.cu");
  assert_non_null(cu);
  assert_int_equal(count(cu, "__syncthreads"), 0);
  assert_null(strstr(cu, "kas_smem"));
  assert_null(strstr(cu, "lin")); /* the call runs in the kernel's own shape */
  assert_non_null(strstr(cu, "dim3(64, 1, 1), 0, stream>>>"));
  free(cu);
  char *host = emit_and_read(f, &c, "single", "kernels_host.cpp");
  assert_int_equal(count(host, "for (int t = 0; t < 64; t++) {"), 1);
  assert_null(strstr(host, "smem"));
  free(host);
  free(p);
}

/* Two kernels: mvmul33 saves w, svmul3 loads it: w lives in the 256-byte aligned workspace. */
static void test_workspace_between_kernels(void **state) {
  Fixture *f = *state;
  Impl *mv = find_impl(f->lib, "mvmul33", 2), *sv = find_impl(f->lib, "svmul3", 1);
  int order0 = 0, order1 = 1;
  Buffer b0[3] = {reg_buf(V_M, 3, 0, 2), reg_buf(V_V, 3, 1, 2), reg_buf(V_W, 1, 2, 3)};
  one_call_buffers(b0, mv);
  Step s0[4];
  one_call_steps(s0, mv);
  KernelPlan k0 = {.order = &order0, .ncalls = 1, .impl = &mv, .e = 64,
                   .block = {3, 64, 1}, .threads = 192, .buffers = b0, .nbuffers = 3,
                   .steps = s0, .nsteps = 4};
  Buffer b1[3] = {reg_buf(V_W, 3, 0, 2), reg_buf(V_S, 1, 1, 2), reg_buf(V_R, 3, 2, 3)};
  one_call_buffers(b1, sv);
  Step s1[4];
  one_call_steps(s1, sv);
  KernelPlan k1 = {.order = &order1, .ncalls = 1, .impl = &sv, .e = 256,
                   .block = {256, 1, 1}, .threads = 256, .buffers = b1, .nbuffers = 3,
                   .steps = s1, .nsteps = 4};
  KernelPlan *ks[2] = {&k0, &k1};
  Candidate c = {.kernels = ks, .nkernels = 2};
  char *cu = emit_and_read(f, &c, "unfused", "kernels.cu");
  assert_non_null(cu);
  assert_non_null(strstr(cu, "return kas_align256(n * 3 * sizeof(float));"));
  assert_non_null(strstr(cu, "if (!workspace) return (int)cudaErrorInvalidValue;"));
  assert_non_null(strstr(cu, "float *const w_w_0 = (float *)ws; /* w */"));
  assert_non_null(strstr(cu, "kas_unfused_k1<<<(unsigned)blocks1, dim3(3, 64, 1), 0, "
                             "stream>>>(M, v, w_w_0, n);"));
  assert_non_null(strstr(cu, "kas_unfused_k2<<<(unsigned)blocks2, dim3(256, 1, 1), 0, "
                             "stream>>>(w_w_0, s, r, n);"));
  assert_non_null(strstr(cu, "const size_t blocks2 = (n + 255) / 256;"));
  assert_non_null(strstr(cu, "if (blocks2 > 2147483647u) return (int)cudaErrorInvalidConfiguration;"));
  /* svmul3_1's owner routines are instantiated once although k1 alone uses them */
  assert_int_equal(count(cu, "void d_svmul3_1_load_1_e256_r("), 1);
  free(cu);
}

/* A plan whose shared buffer overruns the kernel's shared memory is refused, nothing written. */
static void test_invalid_plan_refused(void **state) {
  Fixture *f = *state;
  KernelPlan *p = fused_plan(f);
  p->smem_bytes = 1200; /* w ends at 1536 */
  Candidate c = {.kernels = &p, .nkernels = 1};
  int errors = diag_error_count();
  char *cu = emit_and_read(f, &c, "bad", "kernels.cu");
  assert_null(cu);
  assert_int_equal(diag_error_count(), errors + 1);
  char *path = xasprintf("%s/bad/bad/kernels.cu", f->dir);
  assert_int_not_equal(access(path, F_OK), 0);
  free(path);
  p->smem_bytes = 1536;
  p->buffers[2].offset = 1160; /* not 16-byte aligned */
  assert_null(emit_and_read(f, &c, "bad", "kernels.cu"));
  free_plan(p);
}

static void test_large_shared_opts_in(void **state) {
  Fixture *f = *state;
  KernelPlan *p = fused_plan(f);
  p->buffers[2].offset = 60000;
  p->smem_bytes = 60000 + 384;
  Candidate c = {.kernels = &p, .nkernels = 1};
  char *cu = emit_and_read(f, &c, "big", "kernels.cu");
  assert_non_null(cu);
  assert_non_null(strstr(cu, "  err = cudaFuncSetAttribute(kas_big_k1, "
                             "cudaFuncAttributeMaxDynamicSharedMemorySize, 60384);\n"));
  /* the embed raises the limit only while it is short: cudaFuncSetAttribute clears an error
   * the caller left pending (emit_smem_optin) */
  char *embed = emit_cuda_embed_kernels(f->dag, NULL, &c, NULL, "big", "e_big");
  assert_non_null(embed);
  const char *get = strstr(embed, "  err = cudaFuncGetAttributes(&kas_attr1, kas_e_big_k1);\n");
  const char *test = strstr(embed, "  if (kas_attr1.maxDynamicSharedSizeBytes < 60384) {");
  const char *set = strstr(embed, "    err = cudaFuncSetAttribute(kas_e_big_k1, "
                                  "cudaFuncAttributeMaxDynamicSharedMemorySize, 60384);\n");
  assert_true(get && test && set && get < test && test < set);
  /* and its launch function's comment says that first call clears a pending error */
  assert_non_null(strstr(embed, "is neither taken nor cleared,\n * but for the first call in "
                                "a process, whose cudaFuncSetAttribute"));
  free(embed);
  free(cu);
  free_plan(p);
}

static void test_common_files(void **state) {
  Fixture *f = *state;
  char *dir = xasprintf("%s/spec", f->dir);
  EmitDir *d = emit_dir_open(dir);
  assert_non_null(d);
  assert_true(emit_common(d, f->dag, f->lib));
  assert_true(emit_dir_close(d));
  char *path = xasprintf("%s/common/cpu_graph.c", dir);
  char *graph = read_text_file(path, NULL);
  free(path);
  assert_non_null(graph);
  assert_non_null(strstr(graph, "void ref_mvmul33(const double *, const double *, double *);"));
  assert_non_null(strstr(graph, "const double *const v_M_0 = in[0] + e * 9;"));
  /* every argument through R: rounded by +-u in kas_cpu_graph_rounded, itself when u = 0 */
  assert_non_null(strstr(graph, "ref_mvmul33(R(0, v_M_0, 9), R(1, v_v_0, 3), v_w_0);"));
  assert_non_null(strstr(graph, "ref_svmul3(R(0, v_w_0, 3), R(1, v_s_0, 1), v_r_0);"));
  assert_non_null(strstr(graph, "out[0][e * 3 + k] = v_r_0[k];"));
  assert_non_null(strstr(graph, "  if (u == 0) return x;\n"));
  assert_non_null(strstr(graph, "  kas_cpu_graph_rounded(in, out, n, 0, NULL);\n"));
  free(graph);
  path = xasprintf("%s/common/kas_refs.c", dir);
  free(dir);
  char *refs = read_text_file(path, NULL);
  free(path);
  assert_non_null(strstr(refs, "ref_mvmul33("));
  assert_non_null(strstr(refs, "ref_svmul3("));
  assert_null(strstr(refs, "ref_mmul33(")); /* only the functions used */
  free(refs);
  assert_int_equal(emit_input_slot(f->dag, V_S), 2);
  assert_int_equal(emit_input_slot(f->dag, V_W), -1);
  assert_int_equal(emit_output_slot(f->dag, V_R), 0);
}

/* kas_candidates.h for one candidate "cand01" of the fixture spec (docs/generated.md format,
 * host side only). */
static const char one_candidate_h[] =
    "#ifndef KAS_CANDIDATES_H\n#define KAS_CANDIDATES_H\n" /* kas_random.h includes it too */
    "#define KAS_SPEC_NAME \"fused\"\ntypedef float kas_real;\n#define KAS_REAL_DEFINED\n"
    "enum { KAS_ELEMENT = 0, KAS_COMPONENT = 1 };\n#define KAS_NINPUTS 3\n#define KAS_NOUTPUTS 1\n"
    "static const char *const kas_input_names[3] = {\"M\", \"v\", \"s\"};\n"
    "static const int kas_input_floats[3] = {9, 3, 1};\n"
    "static const int kas_input_layouts[3] = {KAS_ELEMENT, KAS_ELEMENT, KAS_ELEMENT};\n"
    "static const int kas_input_near_identity[3] = {3, 0, 0};\n"
    "static const char *const kas_output_names[1] = {\"r\"};\n"
    "static const int kas_output_floats[1] = {3};\n"
    "static const int kas_output_layouts[1] = {KAS_ELEMENT};\n"
    "extern \"C\" void kas_cand01_launch_host(const float *const *, float *const *, void *, "
    "size_t, size_t, int);\n"
    "extern \"C\" size_t kas_cand01_host_workspace_bytes(size_t);\n"
    "typedef struct { const char *name; double predicted_ns_per_elem; int predicted_rank, "
    "nkernels; const char *kernels, *calls; void (*launch_host)(const float *const *, "
    "float *const *, void *, size_t, size_t, int); size_t (*host_workspace_bytes)(size_t); "
    "} KasCandidate;\n"
    "#define KAS_NCANDIDATES 1\n"
    "static const KasCandidate kas_candidates[1] = {{\"cand01\", 1, 1, 1, \"mvmul33+svmul3\", "
    "\"{mvmul33#0 svmul3#1}\", kas_cand01_launch_host, kas_cand01_host_workspace_bytes}};\n"
    "#endif\n";

/* The plan for arrays of any alignment that a fused plan stands for here: the same plan, its
 * contiguous routines at W = 1 (as unaligned.c would plan it, the barriers staying). */
static KernelPlan *unaligned_plan(const KernelPlan *p) {
  KernelPlan *u = xmalloc(sizeof *u);
  *u = *p;
  u->w = 1;
  return u;
}

/* Emits the plan (and its plan for arrays of any alignment, when given) with the common files,
 * builds check_cpu with gcc/g++ and returns its exit status (-1 when the tools are missing).
 * header: the hand-written kas_candidates.h, or NULL for the one emit.c makes for target t. */
static int build_and_check(const Fixture *f, const Target *t, KernelPlan *p, KernelPlan *any,
                           const char *header, const char *tag) {
  if (system("command -v g++ >/dev/null 2>&1") != 0) return -1;
  char *dir = xasprintf("%s/%s", f->dir, tag);
  EmitDir *d = emit_dir_open(dir);
  assert_non_null(d);
  Candidate c = {.kernels = &p, .nkernels = 1, .rank = 1};
  Candidate u = {.kernels = &any, .nkernels = 1, .rank = 1};
  assert_true(emit_cuda_candidate(d, f->dag, t, &c, any ? &u : NULL, "cand01"));
  assert_true(emit_common(d, f->dag, f->lib));
  CandidateEntry entry = {(char *)"cand01", &c, 1, (char *)"mvmul33+svmul3", NULL};
  char *made = header ? NULL : emit_candidates_header(f->dag, t, NULL, &entry, 1, 203);
  assert_true(emit_dir_write(d, "common/kas_candidates.h", header ? header : made));
  free(made);
  assert_true(emit_dir_close(d));
  char *cmd = xasprintf("cd '%s' && gcc -c common/kas_refs.c common/cpu_graph.c && g++ -O1 "
                        "-DKAS_HOST -Wno-unknown-pragmas -o check_cpu common/check_cpu.cpp "
                        "cand01/kernels_host.cpp kas_refs.o cpu_graph.o && ./check_cpu 203",
                        dir);
  int rc = system(cmd);
  free(cmd);
  free(dir);
  return rc;
}

/* The host form and check_cpu together: the planned kernel passes (with its plan for arrays of
 * any alignment, which check_cpu's sub-range from element 1 runs); the same kernel with its
 * second barrier removed (svmul3 then reads w before the other threads wrote it) must fail, and
 * so must the kernel without the plan for any alignment (its float4 load of M would fault on a
 * GPU; the CPU form stops there too). */
static void test_check_cpu_catches_missing_barrier(void **state) {
  Fixture *f = *state;
  KernelPlan *p = fused_plan(f);
  KernelPlan *any = unaligned_plan(p);
  int rc = build_and_check(f, NULL, p, any, one_candidate_h, "good");
  if (rc == -1) skip();
  assert_int_equal(rc, 0);
  assert_int_not_equal(build_and_check(f, NULL, p, NULL, one_candidate_h, "vector_only"), 0);
  p->steps[4].barrier_before = false;
  assert_int_not_equal(build_and_check(f, NULL, p, any, one_candidate_h, "missing_barrier"), 0);
  free(any);
  free_plan(p);
}

/* The fused plan in double precision: its shared buffers hold doubles (twice the bytes). */
static KernelPlan *fused_plan_double(const Fixture *f) {
  KernelPlan *p = fused_plan(f);
  p->precision = PREC_DOUBLE;
  p->w = 2; /* double2 */
  p->buffers[0].bytes *= 2;
  p->buffers[2].offset *= 2;
  p->buffers[2].bytes *= 2;
  p->smem_bytes *= 2;
  return p;
}

/* Double precision with v, s and r component-major (M stays element-major: its load is a
 * contiguous routine): the kernel holds doubles, the component-major arrays' routines take the
 * leading dimension, and the candidate passes check_cpu (all of it, the sub-range included) with
 * the kas_candidates.h emit.c makes.  The plan for any alignment reads the component-major rows
 * through kas_row_load (unaligned.c's hint_rows), the fast plan plainly, and the launch runs the
 * fast plan only where those rows start on sectors. */
static void test_double_component_major(void **state) {
  Fixture *f = *state;
  Target *t = target_new(f->dag, PREC_DOUBLE, "component,M=element");
  assert_non_null(t);
  KernelPlan *p = fused_plan_double(f);
  KernelPlan *any = unaligned_plan(p);
  any->hint_rows = true;
  Candidate c = {.kernels = &p, .nkernels = 1, .rank = 1};
  Candidate u = {.kernels = &any, .nkernels = 1, .rank = 1};
  char *cu = emit_target_and_read(f, t, &c, &u, "dbl", "kernels.cu");
  assert_non_null(cu);
  assert_non_null(strstr(cu, "extern __shared__ double2 kas_smem[];"));
  assert_non_null(strstr(cu, "double *const s_w_0 = (double *)kas_smem + 288;"));
  assert_non_null(strstr(cu, "double r_v_0[3];"));
  assert_non_null(strstr(cu, "const double *__restrict__ g_M,"));
  assert_non_null(strstr(cu, "double *__restrict__ g_r,\n    size_t n, size_t ld) {"));
  assert_non_null(strstr(cu, "d_mvmul33_2_load_3_e32_r_cm(g_v, r_v_0, ty, e0, n, ld);"));
  assert_non_null(strstr(cu, "d_mvmul33_2_load_0_e32_s(g_M, s_M_0, tx, ty, tz, e0, n);"));
  assert_non_null(strstr(cu, "  if (ld == 0) ld = n; /* component-major arrays of exactly n "));
  assert_non_null(strstr(cu, "stream>>>(M, v, s, r, n, ld);"));
  assert_non_null(strstr(cu, "d_mvmul33_2_load_3_e32_r_cm_l2_256(g_v, r_v_0, ty, e0, n, ld);"));
  assert_int_equal(count(cu, "d_mvmul33_2_load_3_e32_r_cm("), 2); /* definition and fast plan */
  assert_non_null(strstr(cu, "kas_row_load(&g["));
  assert_int_equal(count(cu, "d_mvmul33_2_load_0_e32_s_w1(g_M"), 1); /* M: element-major, plain */
  assert_non_null(strstr(cu, "const bool aligned = kas_aligned16(in[0]) && "
                             "kas_rows_on_sectors(in[1], lda * sizeof(double)) &&\n"
                             "                       kas_rows_on_sectors(in[2], lda * "
                             "sizeof(double));"));
  assert_null(strstr(cu, "kas_rows_on_sectors(in[0]"));
  assert_null(strstr(cu, "float"));
  free(cu);
  int rc = build_and_check(f, t, p, any, NULL, "dbl_check");
  if (rc != -1) assert_int_equal(rc, 0);
  free(any);
  free_plan(p);
  target_free(t);
}

/* What kas_candidates.h says of the layouts (KAS_LAYOUTS, which the harness writes into
 * results.xml): the --layout value of the target, spelt one way however it was given (the
 * shorter of the component-major arrays named and "component" with the others named), which
 * reads back as the same target. */
static void test_layouts_said_one_way(void **state) {
  Fixture *f = *state;
  const char *given[][2] = {
      {NULL, "element"},
      {"element", "element"},
      {"component", "component"},
      {"v=component,component", "component"},
      {"component,M=element", "component,M=element"},
      {"M=element,component,M=element", "component,M=element"},
      {"v=component", "v=component"},
      {"component,M=element,r=element", "v=component,s=component"},
  };
  for (size_t i = 0; i < sizeof given / sizeof *given; i++) {
    Target *t = target_new(f->dag, PREC_DOUBLE, given[i][0]);
    char *said = target_layout_option(t, f->dag);
    assert_string_equal(said, given[i][1]);
    Target *again = target_new(f->dag, PREC_SINGLE, said);
    assert_true(again && target_same_layouts(again, t, f->dag));
    free(said);
    target_free(again), target_free(t);
  }
  Target *mixed = target_new(f->dag, PREC_DOUBLE, "component,M=element");
  Target *all = target_new(f->dag, PREC_DOUBLE, "component");
  assert_false(target_same_layouts(all, mixed, f->dag));
  char *h = emit_candidates_header(f->dag, mixed, NULL, NULL, 0, 203);
  assert_non_null(strstr(h, "\n#define KAS_LAYOUTS \"component,M=element\"\n"));
  free(h);
  target_free(all), target_free(mixed);
}

/* A long one is one literal continued over lines, none over 100 columns. */
static void test_long_layouts_continued(void **state) {
  Fixture *f = *state;
  const char *text = "matrix3x3 inputMatrixWithAVeryLongNameOne, inputMatrixWithAVeryLongNameTwo,\n"
                     "  outputMatrixWithAVeryLongNameOne, outputMatrixWithAVeryLongNameTwo;\n"
                     "input inputMatrixWithAVeryLongNameOne, inputMatrixWithAVeryLongNameTwo;\n"
                     "outputMatrixWithAVeryLongNameOne = madd33(inputMatrixWithAVeryLongNameOne,\n"
                     "  inputMatrixWithAVeryLongNameTwo);\n"
                     "outputMatrixWithAVeryLongNameTwo = madd33(inputMatrixWithAVeryLongNameTwo,\n"
                     "  inputMatrixWithAVeryLongNameOne);\n"
                     "return outputMatrixWithAVeryLongNameOne, outputMatrixWithAVeryLongNameTwo;\n";
  Spec *spec = spec_parse("long.spec", text, f->lib);
  assert_non_null(spec);
  Dag *dag = dag_build(spec);
  Target *t = target_new(dag, PREC_SINGLE, "inputMatrixWithAVeryLongNameOne=component,"
                                           "outputMatrixWithAVeryLongNameTwo=component");
  char *h = emit_candidates_header(dag, t, NULL, NULL, 0, 1);
  assert_non_null(strstr(h, "#define KAS_LAYOUTS \"inputMatrixWithAVeryLongNameOne=component,\" "
                            "\\\n    \"outputMatrixWithAVeryLongNameTwo=component\"\n"));
  for (const char *line = h; *line;) {
    size_t len = strcspn(line, "\n");
    assert_true(len <= 100);
    line += len + (line[len] == '\n');
  }
  free(h);
  target_free(t);
  dag_free(dag);
  spec_free(spec);
}

/* A candidate with a plan for arrays of any alignment: both plans' kernels, each routine once
 * (the W = 1 ones renamed _w1), both launches static, and the candidate's launch choosing by
 * the one caller's array the fast plan moves 16 bytes at a time (M, in[0]). */
static void test_unaligned_plan_behind_one_launch(void **state) {
  Fixture *f = *state;
  KernelPlan *p = fused_plan(f);
  KernelPlan *any = unaligned_plan(p);
  Candidate c = {.kernels = &p, .nkernels = 1, .rank = 1};
  Candidate u = {.kernels = &any, .nkernels = 1, .rank = 1};
  char *cu = emit_target_and_read(f, NULL, &c, &u, "cand01", "kernels.cu");
  assert_non_null(cu);
  assert_non_null(strstr(cu, "__global__ void __launch_bounds__(96) kas_cand01_k1("));
  assert_non_null(strstr(cu, "__global__ void __launch_bounds__(96) kas_cand01_any_k1("));
  assert_int_equal(count(cu, "void d_mvmul33_2_load_0_e32_s("), 1);
  assert_int_equal(count(cu, "void d_mvmul33_2_load_0_e32_s_w1("), 1);
  assert_int_equal(count(cu, "void d_svmul3_1_save_1_e32_r("), 1); /* both plans call it */
  assert_non_null(strstr(cu, "static int kas_cand01_aligned_launch("));
  assert_non_null(strstr(cu, "static int kas_cand01_any_launch("));
  assert_non_null(strstr(cu, "extern \"C\" size_t kas_cand01_workspace_bytes(size_t n) {"));
  assert_non_null(strstr(cu, "  const bool aligned = kas_aligned16(in[0]);\n  if (aligned)\n"
                             "    return kas_cand01_aligned_launch(in, out, workspace, n, ld, "
                             "stream);\n"));
  /* A sub-range moved alike (M of 9 reals, v of 3, s of 1: all by h elements) is peeled: the
   * least h that starts M on a 128-byte line (else 64, 32, 16 bytes) through the plan of any
   * alignment, the rest through the 16-byte plan; otherwise the plan of any alignment runs
   * everything. */
  assert_non_null(strstr(cu, "    for (size_t line = 128; line >= 16; line /= 2) {\n"
                             "      for (size_t h = 1; h < line / sizeof(float) && h < n; h++) {\n"
                             "        const float *const in_h[3] = {in[0] + h * 9, in[1] + h * 3, "
                             "in[2] + h};\n"
                             "        float *const out_h[1] = {out[0] + h * 3};\n"
                             "        if (!(kas_aligned_to(in_h[0], line))) continue;\n"
                             "        const int err = kas_cand01_any_launch(in, out, workspace, h, "
                             "lda, stream);\n"
                             "        if (err != 0) return err;\n"
                             "        return kas_cand01_aligned_launch(in_h, out_h, workspace, "
                             "n - h, lda, stream);\n"
                             "      }\n    }\n  }\n"));
  assert_non_null(strstr(cu, "  }\n  return kas_cand01_any_launch(in, out, workspace, n, ld, "
                             "stream);\n}\n"));
  free(cu);
  char *host = emit_target_and_read(f, NULL, &c, &u, "cand01", "kernels_host.cpp");
  assert_non_null(strstr(host, "static void kas_cand01_aligned_launch_host("));
  assert_non_null(strstr(host, "extern \"C\" void kas_cand01_launch_host("));
  free(host);
  free(any);
  free_plan(p);
}


/* The kernels as text for any prefix, as the embed takes them: the definitions alone (no banner,
 * no include, no C linkage), every symbol under the prefix, none under the candidate's name. */
static void test_kernels_for_any_prefix(void **state) {
  Fixture *f = *state;
  KernelPlan *p = fused_plan(f);
  Candidate c = {.kernels = &p, .nkernels = 1, .rank = 1};
  char *text = emit_cuda_kernels(f->dag, NULL, &c, NULL, "cand01", "fused_cand01", true);
  assert_non_null(text);
  assert_non_null(strstr(text, "kas_fused_cand01_k1("));
  assert_non_null(strstr(text, "int kas_fused_cand01_launch(const float *const *in"));
  assert_non_null(strstr(text, "size_t kas_fused_cand01_workspace_bytes("));
  assert_null(strstr(text, "kas_cand01_"));
  assert_null(strstr(text, "#include"));
  assert_null(strstr(text, "extern \"C\""));
  assert_null(strstr(text, "generated by kasgen"));
  free(text);
  /* the same plan as a whole file: banner, includes, C linkage */
  text = emit_cuda_kernels(f->dag, NULL, &c, NULL, "cand01", "cand01", false);
  assert_non_null(strstr(text, "#include \"../common/kas_device.h\""));
  assert_non_null(strstr(text, "extern \"C\" int kas_cand01_launch("));
  free(text);
  free_plan(p);
}

/* The embed's kernels: emit_cuda_kernels' embedded text but for the launches, each by
 * cudaLaunchKernelEx, whose return is the launch's own error; nothing reads or clears the
 * thread's pending error (cudaGetLastError, cudaPeekAtLastError).  The text the code digest is
 * of keeps <<<...>>> and cudaGetLastError, as results files have recorded it. */
static void test_embed_launches_return_their_own_error(void **state) {
  Fixture *f = *state;
  KernelPlan *p = fused_plan(f);
  Candidate c = {.kernels = &p, .nkernels = 1, .rank = 1};
  char *embed = emit_cuda_embed_kernels(f->dag, NULL, &c, NULL, "cand01", "e_cand01");
  char *digested = emit_cuda_kernels(f->dag, NULL, &c, NULL, "cand01", "e_cand01", true);
  assert_non_null(embed);
  assert_non_null(strstr(embed, "const cudaLaunchConfig_t kas_config1 = {dim3((unsigned)blocks1), "
                                "dim3(3, 32, 1), 1536, stream,"));
  assert_non_null(strstr(embed, "err = cudaLaunchKernelEx(&kas_config1, kas_e_cand01_k1, "));
  assert_null(strstr(embed, "<<<"));
  assert_null(strstr(embed, "cudaGetLastError"));
  assert_null(strstr(embed, "cudaPeekAtLastError"));
  assert_non_null(strstr(embed, "is neither taken nor cleared).\n")); /* no opt-in, no exception */
  assert_null(strstr(embed, "first call in a process"));
  assert_non_null(strstr(digested, "kas_e_cand01_k1<<<(unsigned)blocks1, dim3(3, 32, 1), 1536, "));
  assert_non_null(strstr(digested, "err = cudaGetLastError();"));
  /* the routines and kernels before the launch function are the same text */
  const char *launch = strstr(embed, "/* Runs the kernel");
  assert_non_null(launch);
  assert_int_equal(launch - embed, strstr(digested, "/* Runs the kernel") - digested);
  assert_memory_equal(embed, digested, (size_t)(launch - embed));
  free(embed);
  free(digested);
  free_plan(p);
}

/* The names of the spec's inputs and outputs in launch functions and the embed's API: the
 * variables' own names, made unique and kept clear of C keywords and generated names. */
static void test_io_names(void **state) {
  (void)state;
  Library *lib = library_load(TEST_LIBRARY);
  assert_non_null(lib);
  const char *text = "matrix3x3 A, n, n_, int, M, out;\ninput A, n, n_, int;\n"
                     "M = madd33(A, n);\nout = madd33(M, int);\nM = madd33(out, n_);\n"
                     "return M, out;\n";
  Spec *spec = spec_parse("names.spec", text, lib);
  assert_non_null(spec);
  Dag *dag = dag_build(spec);
  IoNames io = emit_io_names(dag);
  assert_int_equal(io.ninputs, 4);
  assert_string_equal(io.input[0], "A");
  assert_string_equal(io.input[1], "n_");   /* n is the element count */
  assert_string_equal(io.input[2], "n_2");  /* n_ is taken now ("n__": C++ reserves "__") */
  assert_string_equal(io.input[3], "int_"); /* a keyword */
  assert_int_equal(io.noutputs, 2);
  assert_string_equal(io.output[0], "M");
  assert_string_equal(io.output[1], "out_"); /* the launch's array of outputs */
  emit_io_names_free(&io);
  dag_free(dag);
  spec_free(spec);
  library_free(lib);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kernels_for_any_prefix), cmocka_unit_test(test_io_names),
      cmocka_unit_test(test_fused_kernel_text),   cmocka_unit_test(test_fused_host_phases),
      cmocka_unit_test(test_no_barrier_no_shared), cmocka_unit_test(test_workspace_between_kernels),
      cmocka_unit_test(test_invalid_plan_refused), cmocka_unit_test(test_large_shared_opts_in),
      cmocka_unit_test(test_common_files),
      cmocka_unit_test(test_check_cpu_catches_missing_barrier),
      cmocka_unit_test(test_double_component_major),
      cmocka_unit_test(test_layouts_said_one_way),
      cmocka_unit_test(test_long_layouts_continued),
      cmocka_unit_test(test_unaligned_plan_behind_one_launch),
      cmocka_unit_test(test_embed_launches_return_their_own_error),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
