/*
 * test_library.c — the library loader: the real library (types, 27 signatures and formulas,
 * CPU references computed against independent formulas, implementations), the small fixture
 * library, every malformed fixture with its expected file:line:col and message, the in-memory
 * INI entry point, and library_locate's search order.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The CPU references are plain C files with one function each: test them as they are. */
#include "../library/madd33/madd33.c"
#include "../library/madd55/madd55.c"
#include "../library/mmul33/mmul33.c"
#include "../library/mmul55/mmul55.c"
#include "../library/mvmul33/mvmul33.c"
#include "../library/smimul33/smimul33.c"
#include "../library/smmul33/smmul33.c"
#include "../library/smmul55/smmul55.c"
#include "../library/svmul3/svmul3.c"
#include "../library/ttmul311/ttmul311.c"
#include "../library/ttmul3212/ttmul3212.c"
#include "../library/ttmul411/ttmul411.c"
#include "../library/venorm3/venorm3.c"
#include "../library/vvmulabs3/vvmulabs3.c"

/* ---- the real library --------------------------------------------------------------------- */

static Library *real;

static int load_real(void **state) {
  (void)state;
  real = library_load(TEST_LIBRARY);
  return real ? 0 : -1;
}

static int free_real(void **state) {
  (void)state;
  library_free(real);
  return 0;
}

static void test_types(void **state) {
  (void)state;
  /* near_identity: check-inputs = near-identity, the square matrices (the checks draw them
   * near I); the tensor of 81 is square too but no deformation gradient: drawn at random */
  struct {
    const char *name;
    int size, near_identity;
  } want[] = {{"scalar", 1, 0},     {"vector3", 3, 0},      {"vector5", 5, 0},
              {"matrix3x3", 9, 3},  {"matrix5x5", 25, 5},   {"tensor3x3x3", 27, 0},
              {"tensor3x3x3x3", 81, 0}};
  assert_int_equal(real->ntypes, 7);
  for (int k = 0; k < 7; k++) {
    KType *t = library_find_type(real, want[k].name);
    assert_non_null(t);
    assert_int_equal(t->size, want[k].size);
    assert_int_equal(t->near_identity, want[k].near_identity);
  }
  assert_ptr_equal(library_find_type(real, "MATRIX3x3"), library_find_type(real, "matrix3x3"));
  assert_ptr_equal(library_find_type(real, "Tensor3X3X3"), library_find_type(real, "tensor3x3x3"));
  assert_null(library_find_type(real, "matrix4x4"));
}

/* "matrix3x3, scalar": the parameter list of fn as function.ini spells it. */
static char *param_list(const Function *fn) {
  StrBuf sb;
  sb_init(&sb);
  for (int p = 0; p < fn->nparams; p++) sb_printf(&sb, "%s%s", p ? ", " : "", fn->params[p]->name);
  return sb_take(&sb);
}

static void test_signatures(void **state) {
  (void)state;
  struct {
    const char *name, *params, *result;
  } want[] = {
      {"mmul33", "matrix3x3, matrix3x3", "matrix3x3"},
      {"mmul55", "matrix5x5, matrix5x5", "matrix5x5"},
      {"madd33", "matrix3x3, matrix3x3", "matrix3x3"},
      {"madd55", "matrix5x5, matrix5x5", "matrix5x5"},
      {"mvmul33", "matrix3x3, vector3", "vector3"},
      {"venorm3", "vector3", "scalar"},
      {"smmul33", "matrix3x3, scalar", "matrix3x3"},
      {"smmul55", "matrix5x5, scalar", "matrix5x5"},
      {"svmul3", "vector3, scalar", "vector3"},
      {"smimul33", "scalar", "matrix3x3"},
      {"vvmulabs3", "vector3, vector3", "scalar"},
      {"ttmul411", "tensor3x3x3x3, vector3", "tensor3x3x3"},
      {"ttmul311", "tensor3x3x3, vector3", "matrix3x3"},
      {"ttmul3212", "tensor3x3x3, matrix3x3", "tensor3x3x3"},
      {"vouter3", "vector3, vector3", "matrix3x3"},
      {"mtmul33", "matrix3x3, matrix3x3", "matrix3x3"},
      {"msub33", "matrix3x3, matrix3x3", "matrix3x3"},
      {"mtrace33", "matrix3x3", "scalar"},
      {"mdet33", "matrix3x3", "scalar"},
      {"minv33", "matrix3x3", "matrix3x3"},
      {"vvdot3", "vector3, vector3", "scalar"},
      {"maddsi33", "matrix3x3, scalar", "matrix3x3"},
      {"maddid33", "matrix3x3", "matrix3x3"},
      {"green33", "matrix3x3", "matrix3x3"},
      {"stvk_stress33", "matrix3x3, scalar, scalar", "matrix3x3"},
      {"vmvdot3", "vector3, matrix3x3, vector3", "scalar"},
      {"stvk_kmat33", "matrix3x3, vector3, vector3, scalar, scalar", "matrix3x3"},
  };
  assert_int_equal(real->nfuncs, (int)(sizeof want / sizeof want[0]));
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    Function *fn = library_find_function(real, want[k].name);
    if (!fn) fail_msg("function %s missing", want[k].name);
    char *params = param_list(fn);
    assert_string_equal(params, want[k].params);
    free(params);
    assert_string_equal(fn->result->name, want[k].result);
    char sym[64];
    snprintf(sym, sizeof sym, "ref_%s", want[k].name);
    assert_string_equal(fn->ref_symbol, sym);
    assert_true(access(fn->ref_path, R_OK) == 0);
    /* Every function of the shipped library says what it computes (kasgen list shows it). */
    if (!fn->formula || !fn->formula[0]) fail_msg("%s has no formula", want[k].name);
  }
  assert_string_equal(library_find_function(real, "mtmul33")->formula,
                      "C[i][j] = sum_k A[k][i]*B[k][j]");
  assert_null(library_find_function(real, "MMUL33")); /* function names are exact */
}

/* Every implementation is consistent with its function (the loader checked the patterns). */
static void test_implementations(void **state) {
  (void)state;
  int total = 0;
  for (int f = 0; f < real->nfuncs; f++) {
    Function *fn = &real->funcs[f];
    if (fn->nimpls < 2) fail_msg("%s has %d implementations (need >= 2)", fn->name, fn->nimpls);
    for (int i = 0; i < fn->nimpls; i++) {
      Impl *im = &fn->impls[i];
      total++;
      assert_ptr_equal(im->fn, fn);
      assert_int_equal(im->dims[im->size_dim], 0);
      assert_int_equal(im->batch, 1);
      assert_true(impl_threads(im, 4) <= KAS_MAX_THREADS);
      assert_non_null(strstr(im->cu_text, im->compute_symbol));
      for (int a = 0; a < fn->nparams; a++) {
        bool has = false;
        for (int j = 0; j < im->nloads; j++) has |= im->loads[j].arg == a;
        assert_true(has);
      }
      assert_true(im->nsaves >= 1);
      if (i > 0) assert_true(im->index > fn->impls[i - 1].index); /* sorted by index */
    }
  }
  assert_int_equal(total, 68); /* docs/library-format.md and docs/functions.md list them */
}

static void test_impl_shape(void **state) {
  (void)state;
  Function *fn = library_find_function(real, "mmul33");
  Impl *two = NULL;
  for (int i = 0; i < fn->nimpls; i++)
    if (fn->impls[i].index == 2) two = &fn->impls[i];
  assert_non_null(two);
  assert_string_equal(two->name, "mmul33_2");
  assert_string_equal(two->upper, "MMUL33_2");
  assert_int_equal(two->size_dim, 1);
  assert_int_equal(impl_threads(two, 32), 96);
  BlockShape s = impl_shape(two, 32);
  assert_int_equal(s.bx, 3);
  assert_int_equal(s.by, 32);
  assert_int_equal(s.bz, 1);
  assert_string_equal(two->compute_symbol, "d_mmul33_2_compute");
  assert_string_equal(two->loads[0].symbol, "d_mmul33_2_load_0");
}

/* ---- CPU references against independent formulas ---------------------------------------- */

static double rnd(unsigned *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return ((double)(*seed >> 8 & 0xffff) / 65536.0) * 2.0 - 1.0;
}

static void fill(double *x, int n, unsigned *seed) {
  for (int k = 0; k < n; k++) x[k] = rnd(seed);
}

static void assert_close(double got, double want) {
  if (fabs(got - want) > 1e-12 * (1.0 + fabs(want))) fail_msg("got %.17g, want %.17g", got, want);
}

static void test_references_matrix(void **state) {
  (void)state;
  unsigned seed = 7;
  double a[25], b[25], out[25], out2[25], at[25], bt[25];
  for (int rep = 0; rep < 20; rep++) {
    for (int n = 3; n <= 5; n += 2) {
      fill(a, n * n, &seed);
      fill(b, n * n, &seed);
      (n == 3 ? ref_mmul33 : ref_mmul55)(a, b, out);
      /* (AB)^T = B^T A^T: a property, not the same loop. */
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) at[j * n + i] = a[i * n + j], bt[j * n + i] = b[i * n + j];
      (n == 3 ? ref_mmul33 : ref_mmul55)(bt, at, out2);
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) assert_close(out[i * n + j], out2[j * n + i]);
      /* One entry by hand. */
      double c01 = 0;
      for (int k = n - 1; k >= 0; k--) c01 += b[k * n + 1] * a[0 * n + k];
      assert_close(out[1], c01);
      (n == 3 ? ref_madd33 : ref_madd55)(a, b, out);
      for (int k = 0; k < n * n; k++) assert_close(out[k], b[k] + a[k]);
      double s = rnd(&seed);
      (n == 3 ? ref_smmul33 : ref_smmul55)(a, &s, out);
      for (int k = 0; k < n * n; k++) assert_close(out[k], s * a[k]);
    }
  }
}

static void test_references_vector(void **state) {
  (void)state;
  double m[9] = {1, 2, 3, 4, 5, 6, 7, 8, 10}, v[3] = {1, -1, 2}, w[3], s;
  ref_mvmul33(m, v, w);
  assert_close(w[0], 1 - 2 + 6);
  assert_close(w[1], 4 - 5 + 12);
  assert_close(w[2], 7 - 8 + 20);
  double v345[3] = {3, -4, 0};
  ref_venorm3(v345, &s);
  assert_close(s, 5);
  double two = 2;
  ref_svmul3(v, &two, w);
  assert_close(w[0], 2);
  assert_close(w[1], -2);
  assert_close(w[2], 4);
  double id[9];
  double k = -1.5;
  ref_smimul33(&k, id);
  for (int i = 0; i < 9; i++) assert_close(id[i], i % 4 == 0 ? -1.5 : 0.0);
  double a[3] = {1, 2, 3}, b[3] = {-4, 0, 1};
  ref_vvmulabs3(a, b, &s);
  assert_close(s, 1.0); /* |-4 + 0 + 3| */
}

static void test_references_tensor(void **state) {
  (void)state;
  unsigned seed = 11;
  double t4[81], t3[27], m[9], v[3], out[27];
  fill(t4, 81, &seed);
  fill(t3, 27, &seed);
  fill(m, 9, &seed);
  /* With a unit vector e_i, ttmul411 and ttmul311 pick the slice T[i]. */
  for (int i = 0; i < 3; i++) {
    v[0] = v[1] = v[2] = 0;
    v[i] = 1;
    ref_ttmul411(t4, v, out);
    for (int r = 0; r < 27; r++) assert_close(out[r], t4[i * 27 + r]);
    ref_ttmul311(t3, v, out);
    for (int r = 0; r < 9; r++) assert_close(out[r], t3[i * 9 + r]);
  }
  /* Linearity in v: v = (1, 2, -1). */
  v[0] = 1, v[1] = 2, v[2] = -1;
  ref_ttmul411(t4, v, out);
  for (int r = 0; r < 27; r++) assert_close(out[r], t4[r] + 2 * t4[27 + r] - t4[54 + r]);
  /* ttmul3212 with a permutation matrix P (P[x][c] = 1 when c = (x+1)%3) moves index x to c. */
  double p[9] = {0};
  for (int x = 0; x < 3; x++) p[x * 3 + (x + 1) % 3] = 1;
  ref_ttmul3212(t3, p, out);
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      for (int x = 0; x < 3; x++) assert_close(out[(a * 3 + b) * 3 + (x + 1) % 3], t3[(a * 3 + b) * 3 + x]);
  /* And against a general M: entry [1][2][0] by hand. */
  ref_ttmul3212(t3, m, out);
  assert_close(out[(1 * 3 + 2) * 3 + 0],
               t3[15] * m[0] + t3[16] * m[3] + t3[17] * m[6]);
}

/* ---- fixtures ----------------------------------------------------------------------------- */

static void test_fixture_ok(void **state) {
  (void)state;
  Library *lib = library_load("tests/fixtures/lib_ok");
  assert_non_null(lib);
  assert_int_equal(lib->ntypes, 2);
  assert_int_equal(lib->nfuncs, 1);
  Function *fn = library_find_function(lib, "vcopy3");
  assert_non_null(fn);
  assert_int_equal(fn->nimpls, 1);
  assert_null(fn->formula); /* optional: a user's library need not give one */
  Impl *im = &fn->impls[0];
  assert_int_equal(im->index, 1);
  assert_int_equal(im->size_dim, 0);
  assert_int_equal(im->dims[1], 1);
  assert_int_equal(im->recommended_e, 32);
  assert_string_equal(im->in[0].start_src, "tx*3");
  assert_int_equal(im->in[0].count, 3);
  assert_int_equal(im->nloads, 1);
  assert_int_equal(im->loads[0].arg, 0);
  assert_string_equal(im->loads[0].variant, "owner");
  assert_string_equal(im->saves[0].symbol, "d_vcopy3_1_save_0");
  assert_string_equal(im->saves[0].ls.block_src, "3");
  assert_int_equal(im->in[0].loc.line, 17);
  assert_int_equal(im->in[0].loc.col, 15);
  assert_non_null(strstr(im->cu_path, "vcopy3_1.cu"));
  library_free(lib);
}

typedef struct {
  const char *dir;   /* tests/fixtures/<dir> */
  const char *where; /* expected "file:line:col: error: " prefix (relative to the fixture) */
  const char *message;
} BadFixture;

static const BadFixture bad[] = {
    {"bad_missing_key", "vcopy3/vcopy3_1.ini:2:1: error: ", "[implementation] lacks 'BATCH'"},
    {"bad_number", "vcopy3/vcopy3_1.ini:10:6: error: ", "expected an integer, found '3x'"},
    {"bad_two_size", "vcopy3/vcopy3_1.ini:10:1: error: ", "exactly one of BX BY BZ must be 'size' (found 2)"},
    {"bad_unknown_key", "vcopy3/vcopy3_1.ini:6:1: error: ", "unknown key 'colour'"},
    {"bad_unknown_section", "vcopy3/vcopy3_1.ini:20:1: error: ", "unknown section '[loads 0]'"},
    {"bad_pattern_syntax", "vcopy3/vcopy3_1.ini:17:28: error: ", "expected ',' between pattern items"},
    {"bad_expr_column", "vcopy3/vcopy3_1.ini:17:29: error: ", "unknown variable 'foo'"},
    {"bad_div_zero", "vcopy3/vcopy3_1.ini:17:37: error: ", "division by zero"},
    {"bad_out_of_range", "vcopy3/vcopy3_1.ini:18:14: error: ", "touches offset 12, outside the buffer [0, 12)"},
    {"bad_missing_symbol", "vcopy3/vcopy3_1.cu: error: ", "no definition of d_vcopy3_1_save_0"},
    {"bad_missing_inpattern", "vcopy3/vcopy3_1.ini:16:1: error: ", "[compute] lacks 'INPATTERN 0'"},
    {"bad_empty_file", "vcopy3/vcopy3_1.ini: error: ", "no [implementation] section"},
    {"bad_binary", "vcopy3/vcopy3_1.ini: error: ", "binary file"},
    {"bad_garbage", "vcopy3/vcopy3_1.ini:1: error: ", "expected 'key = value'"},
    {"bad_uncovered_load", "vcopy3/vcopy3_1.ini:23:13: error: ", "leaves offset 2 of the buffer untouched"},
    {"bad_duplicate_key", "vcopy3/vcopy3_1.ini:9:1: error: ", "'GX' given twice (first at line 7)"},
    {"bad_unknown_type", "vcopy3/function.ini:4:10: error: ", "unknown type 'vektor3'"},
    {"bad_reference", "vcopy3/vcopy3.c: error: ", "does not define ref_vcopy3"},
    {"bad_load_gap", "vcopy3/vcopy3_1.ini:20:1: error: ", "[load 0] missing"},
    {"bad_long_line", "vcopy3/vcopy3_1.ini:6: error: ", "line too long"},
    {"bad_noreg", "vcopy3/vcopy3_1.ini:18:66: error: ", "noreg: 0 or 1"},
    {"bad_no_save", "vcopy3/vcopy3_1.ini: error: ", "no [save j] section"},
    {"bad_index", "vcopy3/vcopy3_1.ini:4:9: error: ", "index 2 does not match the file name"},
    {"bad_types_size", "types.ini:6:8: error: ", "expected an integer, found 'three'"},
    {"bad_barrier", "vcopy3/vcopy3_1.cu:18:3: error: ", "d_vcopy3_1_compute uses a barrier (__sync...)"},
    {"bad_duplicate_definition", "vcopy3/vcopy3_1.cu:34:1: error: ", "d_vcopy3_1_save_0 defined twice"},
    {"bad_empty_formula", "vcopy3/function.ini:6:10: error: ", "formula is empty"},
    {"bad_function_key", "vcopy3/function.ini:6:1: error: ", "unknown key 'formla' (expected name, params, result, reference, formula)"},
    {"bad_too_many_params", "vcopy3/function.ini:4:64: error: ", "more than 6 parameters"},
};

static void test_fixtures_bad(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    char dir[256], where[512];
    snprintf(dir, sizeof dir, "tests/fixtures/%s", bad[k].dir);
    snprintf(where, sizeof where, "%s/%s", dir, bad[k].where);
    int before = diag_error_count();
    capture_start();
    Library *lib = library_load(dir);
    char *out = capture_end();
    if (lib) fail_msg("%s loaded but should not", dir);
    assert_true(diag_error_count() > before);
    assert_contains(out, where);
    assert_contains(out, bad[k].message);
    free(out);
  }
  assert_true(sizeof bad / sizeof bad[0] >= 12);
}

/* library_open defers the checks of the implementations (patterns at sample block sizes, the
 * routines' definitions) to library_check, which checks only the functions asked for,
 * once: every bad fixture still fails with its located message, whichever of the two finds it. */
static void test_fixtures_bad_deferred(void **state) {
  (void)state;
  static const char *const deferred[] = {"bad_div_zero", "bad_out_of_range", "bad_missing_symbol",
                                         "bad_uncovered_load", "bad_barrier",
                                         "bad_duplicate_definition"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    char dir[256], where[512];
    snprintf(dir, sizeof dir, "tests/fixtures/%s", bad[k].dir);
    snprintf(where, sizeof where, "%s/%s", dir, bad[k].where);
    bool is_deferred = false;
    for (size_t d = 0; d < sizeof deferred / sizeof deferred[0]; d++)
      is_deferred |= !strcmp(bad[k].dir, deferred[d]);
    int before = diag_error_count();
    capture_start();
    Library *lib = library_open(dir);
    char *out = capture_end();
    if (!is_deferred) { /* found while reading, as by library_load */
      if (lib) fail_msg("%s opened but should not", dir);
      assert_contains(out, where);
      free(out);
      continue;
    }
    if (!lib) fail_msg("%s: library_open failed: %s", dir, out);
    assert_int_equal(diag_error_count(), before);
    free(out);
    bool unused[1] = {false}; /* the fixture's one function, vcopy3, not called */
    capture_start();
    assert_true(library_check(lib, unused));
    out = capture_end();
    assert_int_equal(diag_error_count(), before);
    free(out);
    capture_start();
    assert_false(library_check(lib, NULL));
    out = capture_end();
    assert_contains(out, where);
    assert_contains(out, bad[k].message);
    free(out);
    int after = diag_error_count();
    assert_true(after > before);
    capture_start();
    assert_true(library_check(lib, NULL)); /* checked once: nothing new to report */
    free(capture_end());
    assert_int_equal(diag_error_count(), after);
    library_free(lib);
  }
}

static void test_missing_library_dir(void **state) {
  (void)state;
  capture_start();
  Library *lib = library_load("tests/fixtures/no_such_library");
  char *out = capture_end();
  assert_null(lib);
  assert_contains(out, "tests/fixtures/no_such_library: error: library folder not found");
  free(out);
}

/* A copy of text with the first `from` replaced by `to`. */
static char *replace_once(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  if (!at) fail_msg("'%s' not in the fixture", from);
  return xasprintf("%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
}

/* text as a Windows editor may save it: a UTF-8 byte order mark first, CRLF line ends. */
static char *bom_crlf(const char *text) {
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, "\xEF\xBB\xBF");
  for (const char *c = text; *c; c++) {
    if (*c == '\n') sb_putc(&sb, '\r');
    sb_putc(&sb, *c);
  }
  return sb_take(&sb);
}

/* The in-memory entry point (also the fuzzer's). */
static void test_parse_text(void **state) {
  (void)state;
  Library *lib = library_load("tests/fixtures/lib_ok");
  assert_non_null(lib);
  Function *fn = &lib->funcs[0];
  char *good = read_text_file("tests/fixtures/lib_ok/vcopy3/vcopy3_1.ini", NULL);
  Impl im;
  assert_true(library_parse_impl_ini_text("mem/vcopy3_1.ini", good, fn, &im));
  assert_int_equal(im.nsaves, 1);
  assert_string_equal(im.cu_path, "mem/vcopy3_1.cu");
  library_impl_free(&im);
  /* A pattern that covers only the first element of the block. */
  char *bad_text = replace_once(good, "OUTPATTERN = start \"tx*3\"", "OUTPATTERN = start \"tx/9\"");
  capture_start();
  bool ok = library_parse_impl_ini_text("mem/vcopy3_1.ini", bad_text, fn, &im);
  char *out = capture_end();
  assert_false(ok);
  assert_contains(out, "mem/vcopy3_1.ini:18:14: error: OUTPATTERN leaves offset 3");
  free(out);
  library_impl_free(&im);
  char *bad_first_line = xasprintf("bogus = 1\n%s", bad_text);
  /* No continuation lines: an indented line is a key of its own, here a duplicate. */
  char *indented = replace_once(good, "GY = 1\n", "GY = 1\n  GY = 1\n");
  capture_start();
  ok = library_parse_impl_ini_text("mem/vcopy3_1.ini", indented, fn, &im);
  out = capture_end();
  assert_false(ok);
  assert_contains(out, "mem/vcopy3_1.ini:9:3: error: 'GY' given twice (first at line 8)");
  free(out);
  library_impl_free(&im);
  free(indented);
  /* A leading byte order mark is skipped, line 1's columns counting from after it, and CRLF
   * line ends work; the source line an error shows has neither the mark nor the CR. */
  const char *want[2][2] = {{"mem/vcopy3_1.ini:1:1: error: key 'bogus' outside a section",
                             "     1 | bogus = 1\n       | ^\n"},
                            {"mem/vcopy3_1.ini:18:14: error: OUTPATTERN leaves offset 3",
                             "count 3, noreg 0\n       |              ^\n"}};
  for (int k = 0; k < 2; k++) {
    char *windows = bom_crlf(k ? bad_text : bad_first_line);
    capture_start();
    ok = library_parse_impl_ini_text("mem/vcopy3_1.ini", windows, fn, &im);
    out = capture_end();
    assert_false(ok);
    assert_contains(out, want[k][0]);
    assert_contains(out, want[k][1]);
    free(out);
    library_impl_free(&im);
    free(windows);
  }
  free(bad_first_line);
  free(bad_text);
  /* Inline comments after whitespace are stripped; a ';' inside a value needs no space. */
  char *commented = replace_once(good, "BATCH = 1\n", "BATCH = 1 ; always one\n");
  assert_true(library_parse_impl_ini_text("mem/vcopy3_1.ini", commented, fn, &im));
  library_impl_free(&im);
  free(commented);
  free(good);
  library_free(lib);
}

static void test_locate(void **state) {
  (void)state;
  char *dir = library_locate("tests/fixtures/lib_ok", "kasgen");
  assert_string_equal(dir, "tests/fixtures/lib_ok");
  free(dir);
  capture_start();
  dir = library_locate("tests/fixtures/nowhere", "kasgen");
  char *out = capture_end();
  assert_null(dir);
  assert_contains(out, "--library: not a library folder");
  free(out);
  setenv("KASGEN_LIBRARY", "tests/fixtures/lib_ok", 1);
  dir = library_locate(NULL, "kasgen");
  assert_string_equal(dir, "tests/fixtures/lib_ok");
  free(dir);
  setenv("KASGEN_LIBRARY", "tests/fixtures/nowhere", 1);
  capture_start();
  dir = library_locate(NULL, "kasgen");
  out = capture_end();
  assert_null(dir);
  assert_contains(out, "$KASGEN_LIBRARY");
  free(out);
  unsetenv("KASGEN_LIBRARY");
  /* Beside the binary, spelt as argv0 names its folder, as the timing database is: src/kasgen
   * (no such file) finds the checkout's ../library. */
  dir = library_locate(NULL, "src/kasgen");
  assert_string_equal(dir, "src/../library");
  free(dir);
  /* The test binary's folder has no library/: falls back to ./library (we run from the root). */
  dir = library_locate(NULL, "/nonexistent/bin/kasgen");
  assert_non_null(dir);
  assert_true(access(dir, R_OK) == 0);
  free(dir);
}

int main(void) {
  const struct CMUnitTest real_tests[] = {
      cmocka_unit_test(test_types),           cmocka_unit_test(test_signatures),
      cmocka_unit_test(test_implementations), cmocka_unit_test(test_impl_shape),
  };
  const struct CMUnitTest other_tests[] = {
      cmocka_unit_test(test_references_matrix), cmocka_unit_test(test_references_vector),
      cmocka_unit_test(test_references_tensor), cmocka_unit_test(test_fixture_ok),
      cmocka_unit_test(test_fixtures_bad),      cmocka_unit_test(test_fixtures_bad_deferred),
      cmocka_unit_test(test_missing_library_dir),
      cmocka_unit_test(test_parse_text),        cmocka_unit_test(test_locate),
  };
  int failed = cmocka_run_group_tests(real_tests, load_real, free_real);
  return failed + cmocka_run_group_tests(other_tests, NULL, NULL);
}
