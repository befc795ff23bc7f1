/*
 * test_instantiate.c — extraction of device functions from .cu text and their instantiation
 * (Lakomý 2012, Kód 4.5): exact expected text for the thesis's mmul33_2 compute in its sss and rsr
 * variants, loads and saves in shared and register form, identifier-level (not substring)
 * substitution, start expressions parenthesized only where needed and no "0 +" left by a
 * register placeholder, coordinate parameters that the body only discards dropped, refusal of
 * foreign placeholders, and every routine of the real library instantiated (its lines within
 * 100 columns, no discarded coordinate left) and compiled as C++ with kas_device.h.
 */
#include "testutil.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static Library *fixture;
static Impl *mm;

static int load_fixture(void **state) {
  (void)state;
  fixture = library_load("tests/fixtures/lib_inst");
  if (!fixture) return -1;
  mm = &fixture->funcs[0].impls[0];
  return 0;
}

static int free_fixture(void **state) {
  (void)state;
  library_free(fixture);
  return 0;
}

/* ---- extraction --------------------------------------------------------------------------- */

static void test_find(void **state) {
  (void)state;
  size_t b, e;
  const char *text = mm->cu_text;
  /* The prototype is skipped; the definition starts at its KAS_DEV line (a line of its own). */
  assert_true(instantiate_find(text, "d_mm33_2_compute", &b, &e));
  assert_true(strncmp(text + b, "KAS_DEV\nvoid d_mm33_2_compute(", 30) == 0);
  assert_int_equal(text[e - 1], '}');
  assert_true(strncmp(text + e, "\n\nKAS_DEV void d_mm33_2_save_0", 30) == 0);
  /* A name mentioned only in a comment before a real definition. */
  assert_true(instantiate_find(text, "d_mm33_2_load_0", &b, &e));
  assert_true(strncmp(text + b, "KAS_DEV void d_mm33_2_load_0(", 29) == 0);
  assert_false(instantiate_find(text, "d_mm33_2", &b, &e)); /* a prefix is not a name */
  assert_false(instantiate_find(text, "d_mm33_2_load_9", &b, &e));

  const char *traps =
      "// KAS_DEV void f(int x) { in a line comment }\n"
      "#define G(x) KAS_DEV void f(x) {}\n"
      "KAS_DEV void f(int x);\n"
      "static const char *s = \"KAS_DEV void f(int x) {\";\n"
      "void f(int y) { }\n" /* no KAS_DEV: not a routine */
      "KAS_DEV void g(const char *s = \")\") { if (1) { s = \"}\"; } /* } */ }\n"
      "KAS_DEV void f(int x) {\n  { x++; }\n  /* } */ char c = '}';\n}\nint after;\n";
  assert_true(instantiate_find(traps, "f", &b, &e));
  assert_true(strncmp(traps + b, "KAS_DEV void f(int x) {\n  { x++; }", 34) == 0);
  assert_true(strncmp(traps + e, "\nint after;", 11) == 0);
  assert_true(instantiate_find(traps, "g", &b, &e));
  const char *g_def = "KAS_DEV void g(const char *s = \")\") { if (1) { s = \"}\"; } /* } */ }";
  assert_int_equal(e - b, strlen(g_def));
  assert_true(strncmp(traps + b, g_def, e - b) == 0);
  assert_false(instantiate_find("KAS_DEV void h(int x) { x++;", "h", &b, &e)); /* unbalanced */
}

/* 35,000 lines that start like the routine's definition and never close their parameter list,
 * then the definition: found, and at the right place.  (Each unclosed line once cost a scan to
 * the end of the text: over a minute; the brackets are now paired in one pass.)  The rule
 * checker sees thousands of forbidden identifiers in one routine and locates each. */
static void test_find_is_linear_on_hostile_text(void **state) {
  (void)state;
  StrBuf sb;
  sb_init(&sb);
  for (int i = 0; i < 35000; i++) sb_puts(&sb, "KAS_DEV void d_f_1_compute(float *a,\n");
  size_t def = sb.len;
  sb_puts(&sb, "KAS_DEV void d_f_1_compute(float *a) { a[0] = 1; }\nint after;\n");
  size_t b, e;
  assert_true(instantiate_find(sb.data, "d_f_1_compute", &b, &e));
  assert_int_equal(b, def);
  assert_true(strncmp(sb.data + e, "\nint after;", 11) == 0);
  sb_free(&sb);
  sb_puts(&sb, "KAS_DEV void d_f_1_compute(float *a) {\n");
  for (int i = 0; i < 20000; i++) sb_puts(&sb, "  __syncthreads();\n");
  sb_puts(&sb, "}\n");
  capture_start();
  assert_false(instantiate_check_rules("f.cu", sb.data, "d_f_1_compute"));
  char *msgs = capture_end();
  assert_contains(msgs, "f.cu:2:3: error: d_f_1_compute uses a barrier");
  /* the rules' section, where a library author finds them */
  assert_contains(msgs, "routines may not (docs/library-format.md, \"Device code\")");
  assert_contains(msgs, "f.cu:20001:3: error: d_f_1_compute uses a barrier");
  free(msgs);
  diag_reset();
  sb_free(&sb);
}

static void test_extract_missing(void **state) {
  (void)state;
  capture_start();
  char *t = instantiate_extract(mm, "d_mm33_2_load_7");
  char *out = capture_end();
  assert_null(t);
  assert_non_null(strstr(out, "mm33_2.cu: error: no definition of d_mm33_2_load_7"));
  free(out);
}

/* ---- substitution ------------------------------------------------------------------------- */

/* The request for one routine of the fixture at E (block shape from the implementation), in
 * single precision, its array element-major, at W = 4. */
static RoutineRequest request(const Impl *im, RoutineKind kind, int index, int e,
                              const Placement *pl) {
  RoutineRequest rq = {kind, index, e, impl_shape(im, e), {PLACE_SHARED}, PREC_SINGLE,
                       {LAYOUT_ELEMENT, 0, 0, 0}, false};
  rq.shape.w = 4;
  for (int k = 0; k <= KAS_MAX_ARGS; k++) rq.place[k] = pl[k < 3 ? k : 0];
  return rq;
}

/* Instantiates; checks the name and the coordinates taken (COORD_*). */
static char *routine(RoutineKind kind, int index, int e, const Placement *pl, const char *name,
                     unsigned coords) {
  RoutineRequest rq = request(mm, kind, index, e, pl);
  RoutineInstance ri;
  assert_true(instantiate_routine(mm, &rq, &ri));
  assert_string_equal(ri.name, name);
  assert_int_equal(ri.coords, coords);
  free(ri.name);
  return ri.text;
}

static const char *COMPUTE_HEAD =
    "KAS_DEV void %s(KAS_BUF s_a, KAS_BUF s_b, KAS_BUF s_c, %s) {\n"
    "  const char *tag = \"APOUT {\"; /* \"}\" and APIN0 in a comment stay as written */\n"
    "  (void)tag;\n"
    "  const int MM33_2_BYTES = 36; /* not a block-size constant */\n"
    "  (void)MM33_2_BYTES;\n"
    "#pragma unroll\n"
    "  for (int i = 0; i < 3; i++) {\n"
    "    float tmp = 0.0f;\n"
    "#pragma unroll\n";

/* Kód 4.5: the compute in its sss (all shared) and rsr (A and C in registers) variants. */
static void test_compute_variants(void **state) {
  (void)state;
  Placement sss[3] = {PLACE_SHARED, PLACE_SHARED, PLACE_SHARED};
  Placement rsr[3] = {PLACE_REGISTER, PLACE_SHARED, PLACE_REGISTER};
  /* tz is only discarded: dropped, with the line that discards it */
  char *got = routine(ROUTINE_COMPUTE, 0, 96, sss, "d_mm33_2_compute_e96_sss",
                      COORD_TX | COORD_TY);
  char *head = xasprintf(COMPUTE_HEAD, "d_mm33_2_compute_e96_sss", "int tx, int ty");
  char *want = xasprintf(
      "%s"
      "    for (int k = 0; k < 3; k++) tmp += s_a[ty * 9 + tx * 3 + k] * s_b[ty * 9 + k * 3 + i];\n"
      "    s_c[ty * 9 + tx * 3 + i] = tmp;\n"
      "  }\n"
      "}",
      head);
  assert_string_equal(got, want);
  free(got);
  free(want);
  free(head);
  /* A and C in registers: their offsets start at 0, and tx is no longer used either */
  got = routine(ROUTINE_COMPUTE, 0, 96, rsr, "d_mm33_2_compute_e96_rsr", COORD_TY);
  head = xasprintf(COMPUTE_HEAD, "d_mm33_2_compute_e96_rsr", "int ty");
  want = xasprintf("%s"
                   "    for (int k = 0; k < 3; k++) tmp += s_a[k] * s_b[ty * 9 + k * 3 + i];\n"
                   "    s_c[i] = tmp;\n"
                   "  }\n"
                   "}",
                   head);
  assert_string_equal(got, want);
  free(got);
  free(want);
  free(head);
}

/* A load in shared memory: APLS becomes the start with BX/BY as numbers; MM33_2_BX/BY too;
 * APLS_STEP (an identifier that only begins with a placeholder's name) is left alone. */
static void test_load_shared(void **state) {
  (void)state;
  Placement s[3] = {PLACE_SHARED};
  char *got = routine(ROUTINE_LOAD, 1, 32, s, "d_mm33_2_load_1_e32_s", COORD_TX | COORD_TY);
  assert_string_equal(
      got,
      "KAS_DEV void d_mm33_2_load_1_e32_s(const float *KAS_RESTRICT m, KAS_BUF s_m, int tx, int ty,\n"
      "                                   size_t e0, size_t n) {\n"
      "  const int lin = tx + 3 * ty;\n"
      "#pragma unroll\n"
      "  for (int i = 0; i < 3; i++) {\n"
      "    const size_t g = e0 * 9 + (size_t)(lin + i * 3 * 32);\n"
      "    s_m[tx + 3 * ty + i * 3 * 32] = g < n * 9 ? m[g] : 0.0f;\n"
      "  }\n"
      "}");
  free(got);
  got = routine(ROUTINE_LOAD, 0, 8, s, "d_mm33_2_load_0_e8_s", COORD_TX | COORD_TY);
  assert_non_null(strstr(got, "const int APLS_STEP = 8 * 3; /* not a placeholder: APLS_STEP is"));
  assert_non_null(strstr(got, "    s_m[ty * 3 + tx + sofs] = gofs < n * 9 ? m[gofs] : 0.0f;\n"));
  assert_non_null(strstr(got, "    gofs += 8 * 3;\n"));
  free(got);
}

static void test_save_register(void **state) {
  (void)state;
  Placement r[3] = {PLACE_REGISTER, PLACE_REGISTER, PLACE_REGISTER};
  char *got = routine(ROUTINE_SAVE, 0, 4, r, "d_mm33_2_save_0_e4_r", COORD_TX | COORD_TY);
  assert_non_null(strstr(got, "m[gofs] = s_m[i * 4 * 3];"));
  assert_null(strstr(got, "APLS"));
  assert_null(strstr(got, "MM33_2_B"));
  free(got);
}

/* A start expression keeps its parentheses where the text around the placeholder binds more
 * tightly than its own top level, and loses them elsewhere. */
static void test_start_parentheses(void **state) {
  (void)state;
  static const struct {
    const char *start, *code, *want;
  } cases[] = {
      {"tx*3", "s[APLS + k]", "s[tx * 3 + k]"},         /* a product in an index */
      {"tx+1", "s[APLS + k]", "s[tx + 1 + k]"},         /* a sum before + */
      {"tx+1", "s[k - APLS]", "s[k - (tx + 1)]"},       /* a sum after - */
      {"tx*3", "s[k - APLS]", "s[k - tx * 3]"},         /* a product after - */
      {"tx+1", "s[APLS * 2]", "s[(tx + 1) * 2]"},       /* a sum before * */
      {"tx/3", "s[k * APLS]", "s[k * (tx / 3)]"},       /* a product after * */
      {"tx<3?1:0", "s[APLS]", "s[(tx < 3 ? 1 : 0)]"},   /* a conditional stays wrapped */
      {"(tx+BX)", "s[APLS * 2]", "s[(tx + 4) * 2]"},    /* already in parentheses */
      {"-tx", "s[APLS]", "s[(-tx)]"},                   /* a leading minus stays wrapped */
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    char *pattern = xasprintf("start \"%s\", block \"1\", stride \"1\", count 1, noreg 0",
                              cases[c].start);
    IoRoutine save = {.kind = ROUTINE_SAVE, .arg = -1, .symbol = (char *)"d_t_1_save_0"};
    assert_true(pattern_parse(pattern, (SrcLoc){.file = "t.ini", .line = 1, .col = 1}, &save.ls));
    char *cu = xasprintf("KAS_DEV void d_t_1_save_0(KAS_BUF s, float *g, int tx, int ty, int tz,"
                         " size_t e0, size_t n) {\n  (void)ty;\n  (void)tz;\n"
                         "  g[e0] = %s + (float)tx + (float)n;\n}\n",
                         cases[c].code);
    Impl im = {.fn = mm->fn, .name = (char *)"t_1", .upper = (char *)"T_1", .dims = {0, 1, 1},
               .size_dim = 0, .saves = &save, .nsaves = 1, .cu_path = (char *)"t.cu",
               .cu_text = cu};
    Placement sh[3] = {PLACE_SHARED};
    RoutineRequest rq = request(&im, ROUTINE_SAVE, 0, 4, sh);
    RoutineInstance ri;
    assert_true(instantiate_routine(&im, &rq, &ri));
    if (!strstr(ri.text, cases[c].want))
      fail_msg("start \"%s\" in \"%s\": wanted \"%s\" in\n%s", cases[c].start, cases[c].code,
               cases[c].want, ri.text);
    assert_int_equal(ri.coords, COORD_TX);
    routine_instance_free(&ri);
    pattern_free(&save.ls);
    free(cu);
    free(pattern);
  }
}

static void test_refusals(void **state) {
  (void)state;
  Placement r[3] = {PLACE_REGISTER, PLACE_REGISTER, PLACE_REGISTER};
  RoutineInstance ri = {.name = (char *)"untouched"};
  RoutineRequest rq = request(mm, ROUTINE_SAVE, 1, 4, r);
  capture_start();
  bool ok = instantiate_routine(mm, &rq, &ri);
  char *out = capture_end();
  assert_false(ok);
  assert_string_equal(ri.name, "untouched");
  assert_non_null(strstr(out, "d_mm33_2_save_1 uses placeholder APIN1, which is not one of its"));
  free(out);
  rq = request(mm, ROUTINE_LOAD, 2, 4, r);
  capture_start();
  ok = instantiate_routine(mm, &rq, &ri);
  out = capture_end();
  assert_false(ok);
  assert_non_null(strstr(out, "mm33_2 has no load routine 2"));
  free(out);
}

/* ---- the target's placeholders ------------------------------------------------------------ */

/* A load of a matrix3x3 whose global array goes through GIDX, instantiated under a binding. */
static RoutineInstance target_load(const char *code, Precision prec, int w, GlobalBinding b,
                                   bool contiguous, bool hint_rows) {
  IoRoutine load = {.kind = ROUTINE_LOAD, .arg = 0, .symbol = (char *)"d_t_1_load_0",
                    .contiguous = contiguous};
  assert_true(pattern_parse("start \"tx*9\", block \"1\", stride \"1\", count 9, noreg 0",
                            (SrcLoc){.file = "t.ini", .line = 1, .col = 1}, &load.ls));
  char *cu = xasprintf("KAS_DEV void d_t_1_load_0(const real *KAS_RESTRICT g, KAS_BUF(real) s,"
                       " int tx, int ty, int tz, size_t e0, size_t n) {\n  (void)ty;\n"
                       "  (void)tz;\n%s}\n", code);
  Impl im = {.fn = mm->fn, .name = (char *)"t_1", .upper = (char *)"T_1", .dims = {0, 1, 1},
             .size_dim = 0, .loads = &load, .nloads = 1, .cu_path = (char *)"t.cu",
             .ini_path = (char *)"t.ini", .cu_text = cu};
  Placement sh[3] = {PLACE_SHARED};
  RoutineRequest rq = request(&im, ROUTINE_LOAD, 0, 4, sh);
  rq.precision = prec;
  rq.shape.w = w;
  rq.global = b;
  rq.hint_rows = hint_rows;
  RoutineInstance ri = {0};
  capture_start();
  bool ok = instantiate_routine(&im, &rq, &ri);
  char *msgs = capture_end();
  if (!ok) ri.text = msgs; /* the diagnostic, for the caller to check */
  else free(msgs);
  pattern_free(&load.ls);
  free(cu);
  return ri;
}

/* real becomes the precision's type; W the vector width (a routine at another width than the
 * precision's 16 bytes is renamed _w<W>); GIDX(e, c) the binding's index, in parentheses only
 * where needed: element-major "e * 9 + c" (a slice of a record of 27: "e * 27 + c", _rec27),
 * component-major "e + c * ld" with ld a last parameter (_cm). */
static void test_target_placeholders(void **state) {
  (void)state;
  const char *code = "  const size_t e = e0 + tx;\n  real v[W];\n  (void)v;\n"
                     "  for (int k = 0; k < 9; k++) s[APLS + k] = g[GIDX(e, k)];\n"
                     "  s[APLS] += g[GIDX(e0 + tx, 0)] + g[2 * GIDX(e, tx + 1)];\n";
  GlobalBinding plain = {LAYOUT_ELEMENT, 0, 0, 0};
  RoutineInstance ri = target_load(code, PREC_DOUBLE, 2, plain, false, false);
  assert_string_equal(ri.name, "d_t_1_load_0_e4_s");
  assert_false(ri.takes_ld);
  assert_non_null(strstr(ri.text, "(const double *KAS_RESTRICT g, KAS_BUF(double) s, int tx,"));
  assert_non_null(strstr(ri.text, "  double v[2];\n"));
  assert_non_null(strstr(ri.text, "s[tx * 9 + k] = g[e * 9 + k];"));
  assert_non_null(strstr(ri.text, "g[(e0 + tx) * 9] + g[2 * (e * 9 + tx + 1)];"));
  routine_instance_free(&ri);

  ri = target_load(code, PREC_SINGLE, 1, plain, false, false);
  assert_string_equal(ri.name, "d_t_1_load_0_e4_s_w1");
  assert_non_null(strstr(ri.text, "  float v[1];\n"));
  routine_instance_free(&ri);

  GlobalBinding slice = {LAYOUT_ELEMENT, 9, 27, 9};
  ri = target_load(code, PREC_SINGLE, 4, slice, false, false);
  assert_string_equal(ri.name, "d_t_1_load_0_e4_s_rec27");
  assert_non_null(strstr(ri.text, "s[tx * 9 + k] = g[e * 27 + k];"));
  routine_instance_free(&ri);

  GlobalBinding component = {LAYOUT_COMPONENT, 0, 0, 0};
  ri = target_load(code, PREC_SINGLE, 4, component, false, false);
  assert_string_equal(ri.name, "d_t_1_load_0_e4_s_cm");
  assert_true(ri.takes_ld);
  assert_non_null(strstr(ri.text, "size_t e0, size_t n, size_t ld) {"));
  assert_non_null(strstr(ri.text, "s[tx * 9 + k] = g[e + k * ld];"));
  assert_non_null(strstr(ri.text, "g[e0 + tx] + g[2 * (e + (tx + 1) * ld)];"));
  routine_instance_free(&ri);

  /* In the plan for any alignment a load of component-major rows reads each real through
   * kas_row_load (renamed _cm_l2_256), the index as plain; an element-major array's stays. */
  ri = target_load(code, PREC_SINGLE, 4, component, false, true);
  assert_string_equal(ri.name, "d_t_1_load_0_e4_s_cm_l2_256");
  assert_non_null(strstr(ri.text, "s[tx * 9 + k] = kas_row_load(&g[e + k * ld]);"));
  assert_non_null(strstr(ri.text, "kas_row_load(&g[e0 + tx]) + "
                                  "kas_row_load(&g[2 * (e + (tx + 1) * ld)]);"));
  routine_instance_free(&ri);
  ri = target_load(code, PREC_SINGLE, 4, plain, false, true);
  assert_string_equal(ri.name, "d_t_1_load_0_e4_s");
  assert_non_null(strstr(ri.text, "s[tx * 9 + k] = g[e * 9 + k];"));
  assert_null(strstr(ri.text, "kas_row_load"));
  routine_instance_free(&ri);

  /* a contiguous routine moves the chunk as one run: never on a component-major array */
  ri = target_load(code, PREC_SINGLE, 4, component, true, false);
  assert_non_null(strstr(ri.text, "d_t_1_load_0 moves a contiguous chunk, but its array is "
                                  "component-major"));
  free(ri.text);
}

/* Runs the C++ program text and returns its standard output (NULL without g++). */
static char *run_program(const char *text) {
  if (system("command -v g++ >/dev/null 2>&1") != 0) return NULL;
  char dir[] = "/tmp/kasgen_chunk_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char *src = xasprintf("%s/chunk.cpp", dir), *bin = xasprintf("%s/chunk", dir);
  FILE *f = fopen(src, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  char *cmd = xasprintf("g++ -std=c++17 -DKAS_HOST -Wall -Werror -Wno-unknown-pragmas -Ilibrary "
                        "-o %s %s && %s", bin, src, bin);
  FILE *out = popen(cmd, "r");
  assert_non_null(out);
  StrBuf sb;
  sb_init(&sb);
  char line[256];
  while (fgets(line, sizeof line, out)) sb_puts(&sb, line);
  assert_int_equal(pclose(out), 0);
  unlink(src), unlink(bin), rmdir(dir);
  free(src), free(bin), free(cmd);
  return sb_take(&sb);
}

/* binding_address is the layout's formula; here it is checked against arrays laid out by hand
 * (an element-major record of 27 reals holding three matrices, and component-major rows), and
 * the instantiated owner load of mmul33_1 compiled and run against it: element e0 + j of the
 * second matrix of each record, read through the slice's binding from the pointer the launch
 * passes (p + offset, or p + offset * ld), must be the real binding_address names. */
static void test_slice_addressing(void **state) {
  (void)state;
  GlobalBinding em = {LAYOUT_ELEMENT, 9, 27, 9}, cm = {LAYOUT_COMPONENT, 9, 27, 9};
  enum { E = 4, N = 11, LD = 13 };
  for (size_t e = 0; e < N; e++)
    for (int c = 0; c < 9; c++) {
      assert_int_equal(binding_address(&em, e, c, LD), e * 27 + 9 + (size_t)c);
      assert_int_equal(binding_address(&cm, e, c, LD), (size_t)(9 + c) * LD + e);
    }
  GlobalBinding plain = {LAYOUT_ELEMENT, 9, 0, 0};
  assert_true(binding_contiguous(&plain));
  assert_false(binding_contiguous(&em));
  assert_false(binding_contiguous(&cm));
  if (system("command -v g++ >/dev/null 2>&1") != 0) skip();
  Library *lib = library_load(TEST_LIBRARY);
  assert_non_null(lib);
  const Impl *im = &library_find_function(lib, "mmul33")->impls[0]; /* mmul33_1 */
  StrBuf prog;
  sb_init(&prog);
  sb_puts(&prog, "#include <stdio.h>\n#include \"kas_device.h\"\n");
  const GlobalBinding *binds[2] = {&em, &cm};
  for (int b = 0; b < 2; b++) {
    Placement sh[3] = {PLACE_SHARED};
    RoutineRequest rq = request(im, ROUTINE_LOAD, 1, E, sh); /* load 1: owner of A */
    rq.global = *binds[b];
    RoutineInstance ri;
    assert_true(instantiate_routine(im, &rq, &ri));
    sb_printf(&prog, "%s\n", ri.text);
    /* a[i] = i: each loaded value is its own address */
    sb_printf(&prog, "static void run_%d(void) {\n  static float a[27 * %d * %d], s[9 * %d];\n"
                     "  for (int i = 0; i < 27 * %d * %d; i++) a[i] = (float)i;\n"
                     "  const float *g = a + %s;\n"
                     "  for (int tx = 0; tx < %d; tx++) %s(g, s, tx, %d, %d%s);\n"
                     "  for (int k = 0; k < 9 * %d; k++) printf(\"%%d \", (int)s[k]);\n"
                     "  printf(\"\\n\");\n}\n",
              b, LD, N, E, LD, N, b ? "9 * 13" : "9", E, ri.name, E, N, ri.takes_ld ? ", 13" : "",
              E);
    routine_instance_free(&ri);
  }
  sb_puts(&prog, "int main(void) {\n  run_0();\n  run_1();\n  return 0;\n}\n");
  char *out = run_program(prog.data);
  assert_non_null(out); /* g++ was found above */
  const char *at = out;
  for (int b = 0; b < 2; b++)
    for (int j = 0; j < E; j++)
      for (int c = 0; c < 9; c++) {
        int got = -1, used = 0;
        assert_int_equal(sscanf(at, "%d%n", &got, &used), 1);
        at += used;
        assert_int_equal(got, (int)binding_address(binds[b], (size_t)(E + j), c, LD));
      }
  free(out);
  sb_free(&prog);
  library_free(lib);
}

/* kasgen's chunk code for a slice (a contiguous routine asked for an element-major slice) must
 * move, thread by thread, exactly the shared offsets the routine's pattern gives at the
 * request's width (the barrier analysis takes them from the pattern, binding_io_width), and the
 * reals binding_address names, zero past n.  Checked by running the code of mmul33_1's coalesced
 * load for the second matrix of 27-real records at W = 1 and W = 4, one thread at a time, against
 * the access sets; the two widths' texts differ, and so must their names. */
static void test_slice_chunk_matches_pattern(void **state) {
  (void)state;
  Library *lib = library_load(TEST_LIBRARY);
  assert_non_null(lib);
  const Impl *im = &library_find_function(lib, "mmul33")->impls[0]; /* mmul33_1 */
  const IoRoutine *io = &im->loads[0]; /* coalesced, contiguous */
  assert_true(io->contiguous);
  enum { E = 8, N = E + 5 }; /* the second block, 5 of its elements below n */
  GlobalBinding slice = {LAYOUT_ELEMENT, 9, 27, 9};
  assert_true(binding_chunk_of_slice(io, &slice));
  assert_int_equal(binding_io_width(io, &slice, false, 4), 1);
  assert_int_equal(binding_io_width(io, &slice, true, 4), 4);
  const int widths[2] = {1, 4};
  char *names[2];
  AccessCache *ac = access_cache_new(4);
  for (int k = 0; k < 2; k++) {
    Placement sh[3] = {PLACE_SHARED};
    RoutineRequest rq = request(im, ROUTINE_LOAD, 0, E, sh);
    rq.shape.w = widths[k];
    rq.global = slice;
    RoutineInstance ri;
    assert_true(instantiate_routine(im, &rq, &ri));
    assert_int_equal(ri.coords, COORD_TX);
    names[k] = xstrdup(ri.name);
    char *prog = xasprintf(
        "#include <stdio.h>\n#include \"kas_device.h\"\n%s\nint main(void) {\n"
        "  static float a[27 * %d], s[9 * %d];\n"
        "  for (int i = 0; i < 27 * %d; i++) a[i] = (float)i + 1;\n"
        "  for (int t = 0; t < %d; t++) {\n"
        "    for (int f = 0; f < 9 * %d; f++) s[f] = -1;\n"
        "    %s(a + 9, s, t, %d, %d);\n"
        "    for (int f = 0; f < 9 * %d; f++)\n"
        "      if (s[f] != -1) printf(\"%%d %%d %%d\\n\", t, f, (int)s[f]);\n  }\n"
        "  return 0;\n}\n",
        ri.text, N, E, N, E, E, ri.name, E, N, E);
    routine_instance_free(&ri);
    char *out = run_program(prog);
    free(prog);
    if (!out) {
      free(names[k]);
      if (k) free(names[0]);
      access_cache_free(ac);
      library_free(lib);
      skip();
    }
    BlockShape shape = impl_shape(im, E);
    shape.w = widths[k];
    const AccessSet *sets = access_sets(ac, &io->ls, shape);
    assert_non_null(sets);
    int written[E][9 * E] = {{0}}, nwritten = 0;
    for (const char *p = out; *p;) {
      int t, f, v, used;
      assert_int_equal(sscanf(p, "%d %d %d%n", &t, &f, &v, &used), 3);
      p += used + (p[used] == '\n');
      size_t e = E + (size_t)(f / 9);
      int want = e < N ? (int)binding_address(&slice, e, f % 9, 0) + 1 : 0;
      assert_int_equal(v, want);
      written[t][f] = 1, nwritten++;
    }
    int expected = 0;
    for (int t = 0; t < E; t++) {
      for (int j = 0; j < sets[t].n; j++) {
        assert_int_equal(written[t][sets[t].offsets[j]], 1);
        expected++;
      }
    }
    assert_int_equal(nwritten, expected); /* no thread wrote an offset outside its set */
    free(out);
  }
  assert_string_not_equal(names[0], names[1]);
  assert_string_equal(names[0], "d_mmul33_1_load_0_e8_s_rec27_w1");
  free(names[0]), free(names[1]);
  access_cache_free(ac);
  library_free(lib);
}

/* ---- the real library --------------------------------------------------------------------- */

/* Copies text without comments and string literals (what the compiler sees as code). */
static char *code_only(const char *t) {
  char *out = xcalloc(1, strlen(t) + 1), *w = out;
  while (*t) {
    if (t[0] == '/' && t[1] == '*') {
      const char *e = strstr(t + 2, "*/");
      t = e ? e + 2 : t + strlen(t);
    } else if (t[0] == '/' && t[1] == '/') {
      while (*t && *t != '\n') t++;
    } else if (*t == '"') {
      t++;
      while (*t && *t != '"') t += (*t == '\\' && t[1]) ? 2 : 1;
      if (*t) t++;
    } else {
      *w++ = *t++;
    }
  }
  return out;
}

/* Whether identifier-like word occurs as a whole identifier in code. */
static bool has_word(const char *code, const char *word) {
  size_t n = strlen(word);
  for (const char *p = strstr(code, word); p; p = strstr(p + 1, word))
    if ((p == code || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
        !(isalnum((unsigned char)p[n]) || p[n] == '_'))
      return true;
  return false;
}

static bool has_placeholder(const char *code) {
  if (has_word(code, "APLS") || has_word(code, "APOUT")) return true;
  for (int k = 0; k < KAS_MAX_ARGS; k++) {
    char w[16];
    snprintf(w, sizeof w, "APIN%d", k);
    if (has_word(code, w)) return true;
  }
  return false;
}

/* The coordinate parameters a signature declares (COORD_*). */
static unsigned declared_coords(const char *text) {
  const char *close = strstr(text, ") {");
  unsigned c = 0;
  for (const char *p = text; close && (p = strstr(p, "int t")) && p < close; p += 5)
    if (p[5] >= 'x' && p[5] <= 'z' && !(isalnum((unsigned char)p[6]) || p[6] == '_'))
      c |= 1u << (p[5] - 'x');
  return c;
}

/* How a routine of the real library is instantiated: its precision and its array's binding
 * (vector width, layout). */
typedef struct {
  Precision precision;
  int w;
  Layout layout;
} Binding;

/* Instantiates one routine, checks it, and appends it to the compile unit. */
static int add_routine(FILE *unit, const Impl *im, RoutineKind kind, int index, int e,
                       const Placement *pl, Binding bind) {
  RoutineRequest rq = request(im, kind, index, e, pl);
  for (int k = 0; k <= KAS_MAX_ARGS; k++) rq.place[k] = pl[k];
  rq.precision = bind.precision;
  rq.shape.w = bind.w;
  rq.global.layout = bind.layout;
  RoutineInstance ri;
  if (!instantiate_routine(im, &rq, &ri))
    fail_msg("%s: routine %d/%d failed at E = %d", im->name, kind, index, e);
  char *t = ri.text, *name = ri.name;
  char *code = code_only(t);
  if (has_placeholder(code)) fail_msg("placeholder left in %s:\n%s", name, t);
  if (declared_coords(t) != ri.coords)
    fail_msg("%s declares coordinates %u but says it takes %u", name, declared_coords(t),
             ri.coords);
  for (int c = 0; c < 3; c++) {
    char discard[16];
    snprintf(discard, sizeof discard, "(void)t%c;", 'x' + c);
    if (strstr(code, discard)) fail_msg("%s still discards t%c:\n%s", name, 'x' + c, t);
  }
  if (strstr(code, "[0 +")) fail_msg("a \"0 +\" left in %s:\n%s", name, t);
  for (const char *line = t; *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    if (len > 100) fail_msg("%s has a line of %zu characters:\n%.*s", name, len, (int)len, line);
    line += len + (end != NULL);
  }
  for (const char *d = "XYZ"; *d; d++) {
    char constant[64];
    snprintf(constant, sizeof constant, "%s_B%c", im->upper, *d);
    if (has_word(code, constant)) fail_msg("%s left in %s", constant, name);
  }
  static const char *const target_words[] = {"real", "W", "GIDX", NULL};
  for (int k = 0; target_words[k]; k++)
    if (has_word(code, target_words[k])) fail_msg("%s left in %s:\n%s", target_words[k], name, t);
  if (has_word(code, bind.precision == PREC_DOUBLE ? "float" : "double") && !strstr(im->name, "mdet") &&
      !strstr(im->name, "minv"))
    fail_msg("%s holds the other precision's type:\n%s", name, t);
  if (!has_word(code, name)) fail_msg("%s not renamed", name);
  fprintf(unit, "%s\n\n", t);
  free(code);
  free(t);
  free(name);
  return 1;
}

/* Whether a load or save takes a binding: its precision's vector width and element-major every
 * routine, W = 1 one whose pattern uses W, component-major one that is not contiguous. */
static bool takes_binding(const IoRoutine *io, Binding bind) {
  if (bind.layout == LAYOUT_COMPONENT) return !io->contiguous;
  return bind.w == target_vector_width(bind.precision) || io->ls.uses_w;
}

/* Every routine of an implementation that takes the binding, in two placements (the compute
 * with the first binding of a precision: it touches no array). */
static int add_implementation(FILE *unit, const Impl *im, int e, Binding bind, bool compute) {
  int routines = 0;
  for (int variant = 0; variant < 2; variant++) {
    Placement pl[KAS_MAX_ARGS + 1];
    for (int k = 0; k <= KAS_MAX_ARGS; k++)
      pl[k] = (variant == 1 && (k % 2 == 0)) ? PLACE_REGISTER : PLACE_SHARED;
    if (compute) routines += add_routine(unit, im, ROUTINE_COMPUTE, 0, e, pl, bind);
    for (int j = 0; j < im->nloads; j++)
      if (takes_binding(&im->loads[j], bind))
        routines += add_routine(unit, im, ROUTINE_LOAD, j, e, pl, bind);
    for (int j = 0; j < im->nsaves; j++)
      if (takes_binding(&im->saves[j], bind))
        routines += add_routine(unit, im, ROUTINE_SAVE, j, e, pl, bind);
  }
  return routines;
}

/* library_load records where every routine of the real library is defined; copying from there
 * gives what a search of the text finds (the oracle), routine by routine, and a routine the
 * check never looked up is still searched for. */
static void test_recorded_definitions(void **state) {
  (void)state;
  Library *lib = library_load(TEST_LIBRARY);
  assert_non_null(lib);
  int routines = 0;
  for (int f = 0; f < lib->nfuncs; f++)
    for (int i = 0; i < lib->funcs[f].nimpls; i++) {
      Impl *im = &lib->funcs[f].impls[i];
      const char *symbols[2 * KAS_MAX_ARGS + 3];
      int n = 0;
      symbols[n++] = im->compute_symbol;
      assert_true(im->compute_def.found);
      for (int j = 0; j < im->nloads; j++) {
        assert_true(im->loads[j].def.found);
        symbols[n++] = im->loads[j].symbol;
      }
      for (int j = 0; j < im->nsaves; j++) {
        assert_true(im->saves[j].def.found);
        symbols[n++] = im->saves[j].symbol;
      }
      for (int k = 0; k < n; k++, routines++) {
        size_t b, e;
        assert_true(instantiate_find(im->cu_text, symbols[k], &b, &e));
        char *copied = instantiate_extract(im, symbols[k]);
        assert_non_null(copied);
        assert_int_equal(strlen(copied), e - b);
        assert_memory_equal(copied, im->cu_text + b, e - b);
        free(copied);
      }
      /* not recorded: searched */
      im->compute_def.found = false;
      char *searched = instantiate_extract(im, im->compute_symbol);
      assert_non_null(searched);
      assert_non_null(strstr(searched, im->compute_symbol));
      free(searched);
    }
  assert_true(routines > 100);
  library_free(lib);
}

/* Every routine of the library in single and double precision, element-major at the vector
 * width and at W = 1, and component-major: its lines within 100 columns, no placeholder left,
 * and the whole compiled as C++ with kas_device.h (each precision in a namespace of its own:
 * the two precisions' instances share names). */
static void test_real_library_compiles(void **state) {
  (void)state;
  Library *lib = library_load(TEST_LIBRARY);
  assert_non_null(lib);
  char path[] = "/tmp/kasgen_inst_XXXXXX.cpp";
  int fd = mkstemps(path, 4);
  assert_true(fd >= 0);
  FILE *unit = fdopen(fd, "w");
  fprintf(unit, "#include \"kas_device.h\"\n\n");
  int routines = 0;
  for (int prec = PREC_SINGLE; prec <= PREC_DOUBLE; prec++) {
    fprintf(unit, "namespace in_%s {\n", target_precision_name((Precision)prec));
    int w = target_vector_width((Precision)prec);
    Binding binds[3] = {{(Precision)prec, w, LAYOUT_ELEMENT}, {(Precision)prec, 1, LAYOUT_ELEMENT},
                        {(Precision)prec, w, LAYOUT_COMPONENT}};
    for (int f = 0; f < lib->nfuncs; f++)
      for (int i = 0; i < lib->funcs[f].nimpls; i++) {
        const Impl *im = &lib->funcs[f].impls[i];
        int e = 32;
        while (impl_threads(im, e) > KAS_MAX_THREADS) e /= 2;
        for (int b = 0; b < 3; b++) routines += add_implementation(unit, im, e, binds[b], !b);
      }
    fprintf(unit, "}\n");
  }
  fclose(unit);
  assert_true(routines > 100);
  if (system("command -v g++ >/dev/null 2>&1") == 0) {
    char *cmd = xasprintf("g++ -std=c++17 -fsyntax-only -Wall -Wno-unknown-pragmas -Ilibrary -x c++ %s", path);
    int rc = system(cmd);
    free(cmd);
    if (rc != 0) fail_msg("instantiated routines do not compile as C++: %s", path);
  }
  unlink(path);
  library_free(lib);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_find),
      cmocka_unit_test(test_find_is_linear_on_hostile_text),          cmocka_unit_test(test_extract_missing),
      cmocka_unit_test(test_compute_variants), cmocka_unit_test(test_load_shared),
      cmocka_unit_test(test_save_register), cmocka_unit_test(test_start_parentheses),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_target_placeholders), cmocka_unit_test(test_slice_addressing),
      cmocka_unit_test(test_slice_chunk_matches_pattern),
      cmocka_unit_test(test_recorded_definitions),
      cmocka_unit_test(test_real_library_compiles),
  };
  return cmocka_run_group_tests(tests, load_fixture, free_fixture);
}
