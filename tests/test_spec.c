/*
 * test_spec.c — the spec parser: the seed specs parse into the right SSA form (against a fake
 * library with docs/design.md §5.2's signatures, and against the real library when it exists); every
 * malformed spec in tests/bad_specs/ produces exactly the located error its first line names;
 * empty, binary, huge and missing inputs fail cleanly and quickly.
 */
#include "testutil.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "front_fake_library.h"

static Spec *parse_captured(const char *path, const char *text, const Library *lib,
                            char **err_out) {
  diag_reset();
  capture_start();
  Spec *sp = text ? spec_parse(path, text, lib) : spec_load(path, lib);
  *err_out = capture_end();
  return sp;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- seed specs --------------------------------------------------------------------------- */

static const char *const seed_specs[] = {"stvenant", "stvenant_inner", "bigfusion",
                                         "bigfusion_full", "synctest"};
static const int seed_calls[] = {4, 7, 5, 6, 4};

static int var_index(const Spec *sp, const char *name) {
  for (int v = 0; v < sp->nvars; v++)
    if (!strcmp(sp->vars[v].name, name)) return v;
  fail_msg("no variable %s", name);
  return -1;
}

static void parse_seed_specs(const Library *lib) {
  for (size_t i = 0; i < sizeof seed_specs / sizeof seed_specs[0]; i++) {
    char *path = xasprintf("%s/%s.spec", TEST_SPECS, seed_specs[i]);
    diag_reset();
    Spec *sp = spec_load(path, lib);
    if (!sp) fail_msg("%s did not parse", path);
    assert_int_equal(diag_error_count(), 0);
    assert_int_equal(sp->nstmts, seed_calls[i]);
    assert_string_equal(sp->name, seed_specs[i]);
    for (int s = 0; s < sp->nstmts; s++) assert_non_null(sp->stmts[s].fn);
    spec_free(sp);
    free(path);
  }
}

static void test_seed_specs_fake_library(void **state) {
  (void)state;
  Library *lib = fake_library();
  parse_seed_specs(lib);
  const char *more[] = {TEST_SPECS "/chain12.spec", "tests/specs/big40.spec"};
  const int calls[] = {12, 40};
  for (int i = 0; i < 2; i++) {
    Spec *sp = spec_load(more[i], lib);
    assert_non_null(sp);
    assert_int_equal(sp->nstmts, calls[i]);
    spec_free(sp);
  }
  fake_library_free(lib);
}

static void test_seed_specs_real_library(void **state) {
  (void)state;
  if (access(TEST_LIBRARY "/types.ini", R_OK) != 0) {
    print_message("skipped: " TEST_LIBRARY "/types.ini is missing (library not written yet)\n");
    skip();
  }
  diag_reset();
  Library *lib = library_load(TEST_LIBRARY);
  if (!lib) fail_msg("the real library did not load");
  parse_seed_specs(lib);
  library_free(lib);
}

/* StVenant reassigns vec3NodeStiff: the second call reads version 0 and defines version 1,
 * which the third call and the return line read. */
static void test_stvenant_ssa(void **state) {
  (void)state;
  Library *lib = fake_library();
  Spec *sp = spec_load(TEST_SPECS "/stvenant.spec", lib);
  assert_non_null(sp);
  int stiff = var_index(sp, "vec3NodeStiff");
  assert_int_equal(sp->ninputs, 5);
  assert_int_equal(sp->inputs[0], var_index(sp, "ten4Help1"));
  assert_int_equal(sp->inputs[4], var_index(sp, "vecQuadWeightsSums"));
  assert_true(sp->vars[var_index(sp, "mat33Help1")].is_input);
  assert_int_equal(sp->stmts[0].result.var, stiff);
  assert_int_equal(sp->stmts[0].result.version, 0);
  assert_int_equal(sp->stmts[1].args[0].var, stiff);
  assert_int_equal(sp->stmts[1].args[0].version, 0);
  assert_int_equal(sp->stmts[1].result.version, 1);
  assert_int_equal(sp->stmts[2].args[1].var, stiff);
  assert_int_equal(sp->stmts[2].args[1].version, 1);
  assert_string_equal(sp->stmts[3].fn->name, "ttmul3212");
  assert_int_equal(sp->stmts[3].loc.line, 13);
  assert_int_equal(sp->stmts[3].loc.col, 13);
  assert_int_equal(sp->noutputs, 2);
  assert_int_equal(sp->outputs[0].var, var_index(sp, "ten3Help2"));
  assert_int_equal(sp->outputs[1].var, stiff);
  assert_int_equal(sp->outputs[1].version, 1);
  assert_true(sp->vars[stiff].is_output);
  assert_false(sp->vars[var_index(sp, "ten3Help1")].is_output);
  spec_free(sp);
  fake_library_free(lib);
}

static void test_type_names_case_insensitive(void **state) {
  (void)state;
  Library *lib = fake_library();
  Spec *sp = spec_load(TEST_SPECS "/bigfusion_full.spec", lib);
  assert_non_null(sp);
  assert_string_equal(sp->vars[var_index(sp, "D")].type->name, "matrix5x5");
  assert_string_equal(sp->vars[var_index(sp, "s1")].type->name, "scalar");
  spec_free(sp);
  fake_library_free(lib);
}

/* ---- malformed specs ---------------------------------------------------------------------- */

/* Checks one bad spec: its first line is "// expect: L:C: fragment"; the first error printed
 * must be at exactly that place and contain the fragment. */
static void check_bad_spec(const Library *lib, const char *path) {
  char *text = read_text_file(path, NULL);
  assert_non_null(text);
  int line = 0, col = 0, used = 0;
  if (sscanf(text, "// expect: %d:%d: %n", &line, &col, &used) != 2 || !used)
    fail_msg("%s: first line must be // expect: L:C: message", path);
  const char *frag_start = text + used, *frag_end = strchr(frag_start, '\n');
  char *fragment = xstrndup(frag_start, (size_t)(frag_end - frag_start));
  free(text);

  char *err;
  Spec *sp = parse_captured(path, NULL, lib, &err);
  if (sp) fail_msg("%s parsed without error", path);
  assert_true(diag_error_count() > 0);
  char *want = xasprintf("%s:%d:%d: error: ", path, line, col);
  const char *first = strstr(err, ": error: ");
  if (!first) fail_msg("%s: no error printed", path);
  while (first > err && first[-1] != '\n') first--;
  const char *eol = strchr(first, '\n');
  char *first_line = xstrndup(first, eol ? (size_t)(eol - first) : strlen(first));
  if (strncmp(first_line, want, strlen(want)) || !strstr(first_line, fragment))
    fail_msg("%s: expected first error \"%s...%s\", got \"%s\"", path, want, fragment,
             first_line);
  free(first_line);
  free(want);
  free(fragment);
  free(err);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_bad_specs(void **state) {
  (void)state;
  Library *lib = fake_library();
  DIR *d = opendir("tests/bad_specs");
  assert_non_null(d);
  char *paths[256];
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) && n < 256;) {
    size_t len = strlen(e->d_name);
    if (len > 5 && !strcmp(e->d_name + len - 5, ".spec"))
      paths[n++] = xasprintf("tests/bad_specs/%s", e->d_name);
  }
  closedir(d);
  qsort(paths, (size_t)n, sizeof paths[0], cmp_str);
  assert_true(n >= 20);
  for (int i = 0; i < n; i++) {
    check_bad_spec(lib, paths[i]);
    free(paths[i]);
  }
  print_message("%d malformed specs each gave their expected located error\n", n);
  fake_library_free(lib);
}

static void test_empty_file(void **state) {
  (void)state;
  Library *lib = fake_library();
  char *err;
  assert_null(parse_captured("empty.spec", "", lib, &err));
  assert_non_null(strstr(err, "empty.spec:1:1: error: empty spec"));
  free(err);
  assert_null(parse_captured("blank.spec", "  \n\t\n", lib, &err));
  assert_non_null(strstr(err, "blank.spec:1:1: error: empty spec"));
  free(err);
  fake_library_free(lib);
}

/* Random bytes (no NUL: read_text_file rejects those) fail with a bounded number of errors. */
static void test_binary_garbage(void **state) {
  (void)state;
  Library *lib = fake_library();
  srand(12345);
  size_t len = 1 << 20;
  char *junk = xmalloc(len + 1);
  for (int round = 0; round < 5; round++) {
    for (size_t i = 0; i < len; i++) junk[i] = (char)(1 + rand() % 255);
    junk[len] = '\0';
    char *err;
    assert_null(parse_captured("junk.spec", junk, lib, &err));
    assert_true(diag_error_count() >= 1 && diag_error_count() <= 20);
    free(err);
  }
  free(junk);

  char path[] = "/tmp/kasgen_h1_binXXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "matrix3x3 A\0\1\2;", 16), 16);
  close(fd);
  char *err;
  assert_null(parse_captured(path, NULL, lib, &err));
  assert_non_null(strstr(err, "binary file"));
  free(err);
  unlink(path);
  fake_library_free(lib);
}

static void test_missing_file(void **state) {
  (void)state;
  Library *lib = fake_library();
  char *err;
  assert_null(parse_captured("tests/bad_specs/no_such_file.spec", NULL, lib, &err));
  assert_non_null(strstr(err, "no_such_file.spec: error: cannot read"));
  free(err);
  fake_library_free(lib);
}

/* One 10 MB line, three ways: a huge identifier, a million declared variables (refused past
 * the cap, with one error), and a flood of punctuation (errors stop at the cap). */
static void test_ten_megabyte_line(void **state) {
  (void)state;
  Library *lib = fake_library();
  size_t big = 10u << 20;
  StrBuf sb;
  for (int kind = 0; kind < 3; kind++) {
    sb_init(&sb);
    if (kind == 0) {
      sb_puts(&sb, "matrix3x3 ");
      char *name = xmalloc(big + 1);
      memset(name, 'a', big);
      name[big] = '\0';
      sb_puts(&sb, name);
      free(name);
      sb_puts(&sb, "; input a; return a;");
    } else if (kind == 1) {
      sb_puts(&sb, "scalar s");
      for (long i = 0; sb.len < big; i++) sb_printf(&sb, ", x%ld", i);
      sb_puts(&sb, "; vector3 v; input v; s = venorm3(v); return s;");
    } else {
      while (sb.len < big) sb_puts(&sb, "((,=;)");
    }
    char *err;
    double t0 = now_s();
    Spec *sp = parse_captured("big.spec", sb.data, lib, &err);
    double dt = now_s() - t0;
    print_message("10 MB line, kind %d: %.2f s, %d errors\n", kind, dt, diag_error_count());
    assert_true(dt < 10.0);
    assert_null(sp);
    assert_true(diag_error_count() <= 20);
    if (kind == 1) assert_non_null(strstr(err, "big.spec:1:68894: error: too many variables"));
    spec_free(sp);
    free(err);
    sb_free(&sb);
  }
  fake_library_free(lib);
}

/* Up to the cap, many variables are fine (hashed lookups) and unused ones only warn. */
static void test_many_variables(void **state) {
  (void)state;
  Library *lib = fake_library();
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, "scalar s");
  for (int i = 1; i < 9999; i++) sb_printf(&sb, ", x%d", i);
  sb_puts(&sb, ";\nvector3 v;\ninput v;\ns = venorm3(v);\nreturn s;\n");
  char *err;
  Spec *sp = parse_captured("many.spec", sb.data, lib, &err);
  assert_non_null(sp);
  assert_int_equal(sp->nvars, 10000);
  assert_non_null(strstr(err, "further warnings are not shown"));
  spec_free(sp);
  free(err);
  sb_free(&sb);
  fake_library_free(lib);
}

static void test_warnings_do_not_fail(void **state) {
  (void)state;
  Library *lib = fake_library();
  char *err;
  Spec *sp = parse_captured("w.spec",
                            "matrix3x3 A, B, C, D, E;\ninput A, B;\nC = madd33(A, A);\n"
                            "D = madd33(C, A);\nreturn D;\n",
                            lib, &err);
  assert_non_null(sp);
  assert_non_null(strstr(err, "w.spec:1:14: warning: input 'B' is never used"));
  assert_non_null(strstr(err, "w.spec:1:23: warning: variable 'E' is declared but never used"));
  assert_null(strstr(err, "error"));
  spec_free(sp);
  free(err);
  fake_library_free(lib);
}

/* Block comments may span lines (positions after them stay right); long names are shortened
 * in messages; a value nobody reads is a warning. */
static void test_comments_names_dead_values(void **state) {
  (void)state;
  Library *lib = fake_library();
  char *err;
  Spec *sp = parse_captured("c.spec",
                            "/* two\nlines */ matrix3x3 A, /* inline */ C;\ninput A; // tail\n"
                            "C = madd33(A, A);\nreturn Q;\n",
                            lib, &err);
  assert_null(sp);
  assert_non_null(strstr(err, "c.spec:5:8: error: undeclared variable 'Q'"));
  free(err);

  char *name = xmalloc(201);
  memset(name, 'z', 200);
  name[200] = '\0';
  char *text = xasprintf("%s A;\ninput A;\nA = madd33(A, A);\nreturn A;\n", name);
  sp = parse_captured("long.spec", text, lib, &err);
  assert_null(sp);
  char *want = xasprintf("long.spec:1:1: error: unknown type '%.64s...'\n", name);
  assert_non_null(strstr(err, want));
  free(want);
  free(text);
  free(name);
  free(err);

  sp = parse_captured("dead.spec",
                      "matrix3x3 A, C, D;\ninput A;\nD = madd33(A, A);\nC = madd33(A, A);\n"
                      "D = madd33(C, C);\nreturn D;\n",
                      lib, &err);
  assert_non_null(sp);
  assert_non_null(strstr(err, "dead.spec:3:1: warning: the value assigned to 'D' here is never used"));
  assert_int_equal(sp->nstmts, 3);
  assert_int_equal(sp->outputs[0].version, 1);
  spec_free(sp);
  free(err);
  fake_library_free(lib);
}

/* Independent mistakes on different lines are all reported in one run. */
static void test_reports_several_errors(void **state) {
  (void)state;
  Library *lib = fake_library();
  char *err;
  Spec *sp = parse_captured("m.spec",
                            "matrix3x3 A, C;\nfoo X;\ninput A;\nC = nope(A);\n"
                            "C = madd33(A, Q);\nC = madd33(A, A)\nreturn C;\n",
                            lib, &err);
  assert_null(sp);
  assert_int_equal(diag_error_count(), 4);
  assert_non_null(strstr(err, "m.spec:2:1: error: unknown type 'foo'"));
  assert_non_null(strstr(err, "m.spec:4:5: error: unknown function 'nope'"));
  assert_non_null(strstr(err, "m.spec:5:15: error: undeclared variable 'Q'"));
  assert_non_null(strstr(err, "m.spec:6:17: error: expected ';' before 'return'"));
  free(err);
  fake_library_free(lib);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_seed_specs_fake_library),
      cmocka_unit_test(test_seed_specs_real_library),
      cmocka_unit_test(test_stvenant_ssa),
      cmocka_unit_test(test_type_names_case_insensitive),
      cmocka_unit_test(test_bad_specs),
      cmocka_unit_test(test_empty_file),
      cmocka_unit_test(test_binary_garbage),
      cmocka_unit_test(test_missing_file),
      cmocka_unit_test(test_ten_megabyte_line),
      cmocka_unit_test(test_many_variables),
      cmocka_unit_test(test_warnings_do_not_fail),
      cmocka_unit_test(test_reports_several_errors),
      cmocka_unit_test(test_comments_names_dead_values),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
