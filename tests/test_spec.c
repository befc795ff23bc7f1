/*
 * test_spec.c — the spec parser: the seed specs parse into the right SSA form (against a fake
 * library with docs/design.md §5.2's signatures, and against the real library when it exists); every
 * malformed spec in tests/bad_specs/ produces exactly the located error its first line names;
 * empty, binary, huge and missing inputs fail cleanly and quickly.  Loops and arrays: the specs
 * with loops equal their unrolled twins statement by statement, and so do 400 random loop
 * nests unrolled by the test itself; provenance, loop-carried versions, the DAG's API
 * arguments and offsets, mistakes reported once, hostile loops bounded.
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
 * must be at exactly that place and contain the fragment.  A second line "// errors: N" gives
 * the number of errors in all (no error that only follows from another). */
static void check_bad_spec(const Library *lib, const char *path) {
  char *text = read_text_file(path, NULL);
  assert_non_null(text);
  int line = 0, col = 0, used = 0;
  if (sscanf(text, "// expect: %d:%d: %n", &line, &col, &used) != 2 || !used)
    fail_msg("%s: first line must be // expect: L:C: message", path);
  const char *frag_start = text + used, *frag_end = strchr(frag_start, '\n');
  char *fragment = xstrndup(frag_start, (size_t)(frag_end - frag_start));
  int nwant = -1;
  if (sscanf(frag_end, "\n// errors: %d", &nwant) != 1) nwant = -1;
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
  if (nwant >= 0 && diag_error_count() != nwant)
    fail_msg("%s: %d errors, expected %d:\n%s", path, diag_error_count(), nwant, err);
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

/* Specs as Windows editors may save them: a leading UTF-8 byte order mark is skipped (line 1's
 * columns count from after it, and the line is shown without it), CRLF line ends work, and the
 * CR is not shown in the source line of an error.  A mark elsewhere is named as one. */
static void test_bom_and_crlf(void **state) {
  (void)state;
  Library *lib = fake_library();
  char *err;
  Spec *sp = parse_captured("ok.spec", "\xEF\xBB\xBFmatrix3x3 A, B;\r\ninput A;\r\n"
                            "B = madd33(A, A);\r\nreturn B;\r\n", lib, &err);
  assert_non_null(sp);
  assert_int_equal(diag_error_count(), 0);
  spec_free(sp);
  free(err);
  assert_null(parse_captured("bom.spec", "\xEF\xBB\xBFmatrx3x3 A, B;\ninput A;\n"
                             "B = madd33(A, A);\nreturn B;\n", lib, &err));
  assert_non_null(strstr(err, "bom.spec:1:1: error: unknown type 'matrx3x3'\n"
                              "     1 | matrx3x3 A, B;\n       | ^\n"));
  assert_int_equal(diag_error_count(), 1);
  free(err);
  assert_null(parse_captured("crlf.spec", "matrix3x3 A, B;\r\ninput A;\r\n"
                             "B = madd33(A, C);\r\nreturn B;\r\n", lib, &err));
  assert_non_null(strstr(err, "crlf.spec:3:15: error: undeclared variable 'C'\n"
                              "     3 | B = madd33(A, C);\n       |               ^\n"));
  free(err);
  assert_null(parse_captured("mid.spec", "matrix3x3 A, B;\n\xEF\xBB\xBFinput A;\n"
                             "B = madd33(A, A);\nreturn B;\n", lib, &err));
  assert_non_null(strstr(err, "mid.spec:2:1: error: stray UTF-8 byte order mark in spec"));
  assert_int_equal(diag_error_count(), 1);
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

/* ---- loops and arrays --------------------------------------------------------------------- */

/* Two parsed specs hold the same statements: functions, results and arguments by variable name
 * and SSA version; and the same inputs and outputs. */
static void assert_same_statements(const Spec *a, const Spec *b) {
  assert_int_equal(a->nstmts, b->nstmts);
  for (int i = 0; i < a->nstmts; i++) {
    const Statement *x = &a->stmts[i], *y = &b->stmts[i];
    if (x->fn != y->fn) fail_msg("statement %d: %s against %s", i, x->fn->name, y->fn->name);
    assert_string_equal(a->vars[x->result.var].name, b->vars[y->result.var].name);
    assert_int_equal(x->result.version, y->result.version);
    assert_int_equal(x->nargs, y->nargs);
    for (int k = 0; k < x->nargs; k++) {
      assert_string_equal(a->vars[x->args[k].var].name, b->vars[y->args[k].var].name);
      assert_int_equal(x->args[k].version, y->args[k].version);
    }
  }
  assert_int_equal(a->ninputs, b->ninputs);
  for (int k = 0; k < a->ninputs; k++)
    assert_string_equal(a->vars[a->inputs[k]].name, b->vars[b->inputs[k]].name);
  assert_int_equal(a->noutputs, b->noutputs);
  for (int k = 0; k < a->noutputs; k++) {
    assert_string_equal(a->vars[a->outputs[k].var].name, b->vars[b->outputs[k].var].name);
    assert_int_equal(a->outputs[k].version, b->outputs[k].version);
  }
  assert_int_equal(a->ninput_args, b->ninput_args);
  assert_int_equal(a->noutput_args, b->noutput_args);
}

static Spec *load_quiet(const char *path, const Library *lib) {
  char *err;
  Spec *sp = parse_captured(path, NULL, lib, &err);
  if (!sp) fail_msg("%s did not parse:\n%s", path, err);
  free(err);
  return sp;
}

/* StVenant element: statement i is, with N = i / 32 and r = i % 32, the r-th call of the
 * vertex loop's body (r < 4) or call (r - 4) % 7 of the pair loop with M = (r - 4) / 7. */
static void check_element_provenance(const Spec *sp) {
  assert_int_equal(sp->nstmts, 128);
  assert_int_equal(sp->nloops, 2);
  assert_int_equal(sp->loops[0].calls_per_iteration, 32);
  assert_int_equal(sp->loops[1].calls_per_iteration, 7);
  assert_int_equal(sp->loops[1].parent, 0);
  for (int i = 0; i < 128; i++) {
    const Statement *st = &sp->stmts[i];
    int n = i / 32, r = i % 32;
    assert_int_equal(st->iter[0], n);
    if (r < 4) {
      assert_int_equal(st->depth, 1);
      assert_int_equal(st->loop, 0);
      assert_int_equal(st->source, r);
    } else {
      assert_int_equal(st->depth, 2);
      assert_int_equal(st->loop, 1);
      assert_int_equal(st->iter[1], (r - 4) / 7);
      assert_int_equal(st->source, 4 + (r - 4) % 7);
    }
    assert_true(spec_statement_in_loop(sp, i, 0));
    assert_int_equal(spec_statement_in_loop(sp, i, 1), r >= 4);
  }
  for (int s = 0; s < sp->nsources; s++)
    assert_int_equal(sp->sources[s].ninstances, s < 4 ? 4 : 16);
  const Statement *last = &sp->stmts[127];
  assert_string_equal(sp->vars[last->result.var].name, "matTangent[3][3]");
  assert_string_equal(sp->vars[sp->stmts[97].args[0].var].name, "nodeStiffHelp");
  assert_int_equal(sp->stmts[97].args[0].version, 3); /* the N = 3 version, from #96 */
}

static void test_loop_specs_equal_unrolled_twins(void **state) {
  (void)state;
  Library *libs[2] = {fake_library(), NULL};
  if (access(TEST_LIBRARY "/types.ini", R_OK) == 0) libs[1] = library_load(TEST_LIBRARY);
  const char *names[] = {"stvenant_element", "quadrature"};
  for (int l = 0; l < 2 && libs[l]; l++) {
    for (int n = 0; n < 2; n++) {
      char *path = xasprintf("%s/%s.spec", TEST_SPECS, names[n]);
      char *twin_path = xasprintf("%s/%s_unrolled.spec", TEST_SPECS, names[n]);
      Spec *sp = load_quiet(path, libs[l]), *twin = load_quiet(twin_path, libs[l]);
      assert_same_statements(sp, twin);
      assert_int_equal(twin->nloops, 0);
      for (int i = 0; i < twin->nstmts; i++) assert_int_equal(twin->stmts[i].depth, 0);
      if (n == 0) check_element_provenance(sp);
      spec_free(sp);
      spec_free(twin);
      free(path);
      free(twin_path);
    }
  }
  fake_library_free(libs[0]);
  if (libs[1]) library_free(libs[1]);
}

/* The quadrature sum: acc is carried from iteration to iteration. */
static void test_loop_carried_sum(void **state) {
  (void)state;
  Library *lib = fake_library();
  Spec *sp = load_quiet(TEST_SPECS "/quadrature.spec", lib);
  assert_int_equal(sp->nstmts, 23);
  int acc = var_index(sp, "acc");
  for (int q = 1; q < 8; q++) {
    const Statement *add = &sp->stmts[1 + 3 * q];
    assert_string_equal(add->fn->name, "madd33");
    assert_int_equal(add->depth, 1);
    assert_int_equal(add->iter[0], q);
    assert_int_equal(add->source, 4);
    assert_int_equal(add->args[0].var, acc);
    assert_int_equal(add->args[0].version, q);    /* what the previous iteration made */
    assert_int_equal(add->result.version, q + 1);
  }
  assert_int_equal(sp->outputs[0].var, acc);
  assert_int_equal(sp->outputs[0].version, 8);
  const SpecLoop *loop = &sp->loops[0];
  assert_string_equal(loop->var, "q");
  assert_int_equal(loop->lo, 1);
  assert_int_equal(loop->hi, 8);
  assert_int_equal(loop->depth, 0);
  assert_int_equal(loop->parent, -1);
  assert_int_equal(loop->calls_per_iteration, 3);
  assert_int_equal(loop->nbody, 3);
  assert_int_equal(loop->pos, 2);
  assert_int_equal(sp->nbody, 3);
  assert_true(sp->body[2].is_loop);
  const SourceCall *sc = &sp->sources[loop->body[0].index];
  assert_int_equal(sc->first_stmt, 2);
  assert_int_equal(sc->ninstances, 7);
  assert_int_equal(sc->args[0].nidx, 1);
  assert_int_equal(sc->args[0].idx[0].loop, 0);
  assert_int_equal(sc->args[0].idx[0].offset, 0);
  char *text = spec_statement_text(sp, 4);
  assert_string_equal(text, "[q=1] acc.2 = madd33(acc.1, FS.1)");
  free(text);
  text = spec_statement_text(sp, 2);
  assert_string_equal(text, "[q=1] FS.0 = mmul33(F[1], S[1])");
  free(text);
  spec_free(sp);
  fake_library_free(lib);
}

/* The DAG's API arguments: one per name of the input and return lines, each input or output
 * value at its C-order offset in its argument's record; intermediates belong to none.  The
 * emitters' slots are those arguments. */
static void test_array_arguments_in_dag(void **state) {
  (void)state;
  Library *lib = fake_library();
  char *err;
  Spec *sp = parse_captured("api.spec",
                            "matrix3x3 A, T, B[2][3];\nscalar w[4];\nvector3 v;\ninput w, A, v;\n"
                            "T = smmul33(A, w[3]);\n"
                            "for i in 0..2 { for j in 0..3 { B[i][j] = smmul33(T, w[j+1]); } }\n"
                            "return B, T;\n",
                            lib, &err);
  if (!sp) fail_msg("%s", err);
  free(err);
  Dag *dag = dag_build(sp);
  assert_non_null(dag);
  assert_int_equal(dag->nin_args, 3);
  assert_int_equal(dag->nout_args, 2);
  assert_int_equal(dag->in_args[0].nvalues, 4);
  assert_int_equal(dag->in_args[0].record, 4);
  assert_int_equal(dag->in_args[1].record, 9);
  assert_int_equal(dag->in_args[2].record, 3);
  assert_int_equal(dag->out_args[0].nvalues, 6);
  assert_int_equal(dag->out_args[0].record, 54);
  assert_int_equal(dag->out_args[1].record, 9);
  for (int k = 0; k < 4; k++) {
    const Value *v = &dag->values[dag->in_args[0].values[k]];
    assert_string_equal(v->label, sp->vars[var_index(sp, "w") + 1 + k].name);
    assert_int_equal(v->arg, 0);
    assert_int_equal(v->arg_offset, k);
    assert_int_equal(v->arg_record, 4);
    assert_int_equal(emit_input_slot(dag, dag->in_args[0].values[k]), 0);
  }
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) {
      int value = dag->out_args[0].values[3 * i + j];
      char *name = xasprintf("B[%d][%d]", i, j);
      assert_string_equal(dag->values[value].label, name);
      free(name);
      assert_int_equal(dag->values[value].arg_offset, 9 * (3 * i + j));
      assert_int_equal(dag->values[value].arg_record, 54);
      assert_int_equal(emit_output_slot(dag, value), 0);
      assert_int_equal(emit_input_slot(dag, value), -1);
    }
  int t = dag->out_args[1].values[0];
  assert_string_equal(dag->values[t].label, "T");
  assert_int_equal(emit_output_slot(dag, t), 1);
  assert_int_equal(dag->values[t].arg_offset, 0);
  assert_int_equal(emit_input_slot(dag, dag->in_args[2].values[0]), 2);
  for (int v = 0; v < dag->nvalues; v++) {
    bool api = dag->values[v].producer < 0 || dag->values[v].is_output;
    assert_int_equal(dag->values[v].arg >= 0, api);
  }
  dag_free(dag);
  spec_free(sp);

  /* A spec without arrays: the slots are the input and return positions, as before. */
  sp = spec_load(TEST_SPECS "/stvenant.spec", lib);
  dag = dag_build(sp);
  for (int k = 0; k < dag->ninputs; k++) assert_int_equal(emit_input_slot(dag, dag->inputs[k]), k);
  for (int k = 0; k < dag->noutputs; k++)
    assert_int_equal(emit_output_slot(dag, dag->outputs[k]), k);
  dag_free(dag);
  spec_free(sp);
  fake_library_free(lib);
}

/* The labels check prints from the spec are the DAG's value labels. */
static void test_statement_labels_match_dag(void **state) {
  (void)state;
  Library *lib = fake_library();
  const char *paths[] = {TEST_SPECS "/stvenant.spec", TEST_SPECS "/quadrature.spec",
                         TEST_SPECS "/bigfusion_full.spec", "tests/specs/loop_plain.spec"};
  for (int p = 0; p < 4; p++) {
    Spec *sp = load_quiet(paths[p], lib);
    Dag *dag = dag_build(sp);
    for (int i = 0; i < sp->nstmts; i++) {
      char *label = spec_value_label(sp, sp->stmts[i].result);
      assert_string_equal(label, dag->values[dag->nodes[i].result].label);
      free(label);
      for (int a = 0; a < sp->stmts[i].nargs; a++) {
        label = spec_value_label(sp, sp->stmts[i].args[a]);
        assert_string_equal(label, dag->values[dag->nodes[i].args[a]].label);
        free(label);
      }
    }
    dag_free(dag);
    spec_free(sp);
  }
  fake_library_free(lib);
}

/* More calls than the DAG holds: the spec parses, dag_build refuses with a located error that
 * names the first call past the limit; a spec at the limit builds. */
static void test_dag_call_limit(void **state) {
  (void)state;
  Library *lib = fake_library();
  for (int calls = KAS_MAX_NODES; calls <= KAS_MAX_NODES + 6; calls += 6) {
    char text[256];
    snprintf(text, sizeof text,
             "vector3 v;\nscalar s;\ninput v;\nfor i in 0..%d {\n  s = venorm3(v);\n}\n"
             "return s;\n", calls);
    char *err;
    Spec *sp = parse_captured("limit.spec", text, lib, &err);
    assert_non_null(sp);
    free(err);
    diag_reset();
    capture_start();
    Dag *dag = dag_build(sp);
    err = capture_end();
    if (calls == KAS_MAX_NODES) {
      assert_non_null(dag);
      assert_int_equal(dag->nnodes, KAS_MAX_NODES);
      assert_int_equal(diag_error_count(), 0);
    } else {
      assert_null(dag);
      assert_int_equal(diag_error_count(), 1);
      assert_contains(err, "limit.spec:5:7: error: too many calls for the call DAG: the spec has "
                           "1030 after unrolling, the DAG holds at most 1024 for now (call #1024 "
                           "is [i=1024] s.1024 = venorm3(v))");
    }
    free(err);
    dag_free(dag);
    spec_free(sp);
  }
  fake_library_free(lib);
}

/* A mistake inside a loop is reported once, not once per iteration; so is a value never read,
 * with the iteration where it happens. */
static void test_loop_mistakes_reported_once(void **state) {
  (void)state;
  Library *lib = fake_library();
  char *err;
  Spec *sp = parse_captured("once.spec",
                            "matrix3x3 A, C, T[4];\ninput A;\n"
                            "for i in 0..4 {\n  C = madd33(A, Q);\n  T[0] = madd33(A, C);\n}\n"
                            "return T;\n",
                            lib, &err);
  assert_null(sp);
  assert_int_equal(diag_error_count(), 3);
  assert_contains(err, "once.spec:4:17: error: undeclared variable 'Q'");
  assert_contains(err, "once.spec:7:8: error: element 'T[1]' of output array 'T' is never "
                       "assigned (nor are 2 more)");
  assert_contains(err, "once.spec:5:3: error: array element 'T[0]' is assigned twice (when i = 1)");
  assert_contains(err, "once.spec:5:3: note: first assigned here (when i = 0)");
  free(err);

  sp = parse_captured("unused.spec",
                      "matrix3x3 A, C, D;\ninput A;\nfor i in 0..3 {\n  D = madd33(A, A);\n"
                      "  C = madd33(A, A);\n  C = madd33(C, D);\n}\nfor j in 0..2 { }\nreturn D;\n",
                      lib, &err);
  assert_non_null(sp);
  assert_contains(err, "unused.spec:6:3: warning: the value assigned to 'C' here is never used "
                       "(when i = 0)\n");
  assert_null(strstr(err, "(when i = 1)"));
  assert_contains(err, "unused.spec:8:1: warning: empty loop body");
  assert_int_equal(sp->nstmts, 9);
  spec_free(sp);
  free(err);
  fake_library_free(lib);
}

/* Hostile loops stay bounded: huge trip counts, deep nesting, enormous bodies, 10 MB of loop
 * headers.  Exactly KAS_MAX_SPEC_CALLS calls is fine; one more is not. */
static void test_hostile_loops(void **state) {
  (void)state;
  Library *lib = fake_library();
  const char *head = "vector3 v;\nscalar s;\ninput v;\n";
  StrBuf sb;
  for (int kind = 0; kind < 5; kind++) {
    sb_init(&sb);
    sb_puts(&sb, head);
    if (kind == 0) {
      sb_puts(&sb, "for i in 0..1000000 { for j in 0..1000000 { s = venorm3(v); } }\n");
    } else if (kind == 1) {
      for (long i = 0; sb.len < (10u << 20); i++) sb_printf(&sb, "for v%ld in 0..1 {", i);
    } else if (kind == 2) {
      sb_puts(&sb, "for i in 0..2 {\n");
      while (sb.len < (10u << 20)) sb_puts(&sb, "s = venorm3(v);");
      sb_puts(&sb, "}\n");
    } else if (kind == 3) {
      while (sb.len < (10u << 20)) sb_puts(&sb, "for i in 0..3 { }");
    } else {
      sb_puts(&sb, "for i in 0..1000000 { for j in 0..1000000 { } }\n");
    }
    sb_puts(&sb, "return s;\n");
    char *err;
    double t0 = now_s();
    Spec *sp = parse_captured("hostile.spec", sb.data, lib, &err);
    double dt = now_s() - t0;
    print_message("hostile loops, kind %d: %.2f s, %d errors\n", kind, dt, diag_error_count());
    assert_null(sp);
    assert_true(dt < 10.0);
    assert_true(diag_error_count() >= 1 && diag_error_count() <= (kind == 1 ? 3 : 2));
    if (kind == 0) assert_contains(err, "hostile.spec:4:1: error: too many calls: this loop");
    if (kind == 1) assert_contains(err, "hostile.spec:4:129: error: loops nest at most 8 deep");
    if (kind == 2) assert_contains(err, "error: too many calls: a spec holds at most 4096");
    if (kind == 3) assert_contains(err, "error: too many loops: a spec holds at most 4096");
    if (kind == 4) assert_contains(err, "no calls before the 'return' line");
    free(err);
    sb_free(&sb);
  }
  for (int extra = 0; extra < 2; extra++) {
    sb_init(&sb);
    sb_printf(&sb, "%sfor i in 0..16 { for j in 0..16 { for k in 0..%d { s = venorm3(v); } } }\n"
                   "return s;\n", head, 16 + extra);
    char *err;
    Spec *sp = parse_captured("limit.spec", sb.data, lib, &err);
    if (!extra) {
      assert_non_null(sp);
      assert_int_equal(sp->nstmts, KAS_MAX_SPEC_CALLS);
      assert_int_equal(sp->stmts[KAS_MAX_SPEC_CALLS - 1].iter[2], 15);
    } else {
      assert_null(sp);
      assert_contains(err, "limit.spec:4:1: error: too many calls: this loop unrolls to more "
                           "than 4096");
    }
    spec_free(sp);
    free(err);
    sb_free(&sb);
  }
  fake_library_free(lib);
}

/* ---- the oracle: random loop nests against the test's own unrolling ---------------------- */

/* A random program over the fake library, after a prelude of three top-level calls: calls that
 * carry acc and t across iterations, read input arrays at literal or loop-relative indices,
 * fill output arrays R<k> (one element per iteration of the loops around the call) and fill
 * temporary arrays T<k> that the next call reads in the same iteration.  It is printed twice:
 * with its loops, and unrolled by the test itself; both must parse into the same statements,
 * and the looped one must carry the provenance the test's unrolling saw. */
enum { GEN_MAX_ITEMS = 4, GEN_MAX_DEPTH = 3, GEN_IN = 12, GEN_MAX_ARRAYS = 256, GEN_PRELUDE = 3 };

typedef struct GenItem {
  bool is_loop;
  int lo, hi;                 /* a loop */
  struct GenItem *body;
  int nbody;
  int kind, array;            /* a call: template, R/T array number */
  int ix_loop[2], ix_off[2];  /* input indices: loop depth (-1: literal) and offset */
  int src;                    /* source number of its (first) call as written */
} GenItem;

typedef struct {
  int nsrc, nloops, narrays;
  int depth[GEN_MAX_ARRAYS];  /* array k: one dimension per enclosing loop */
  int trips[GEN_MAX_ARRAYS][GEN_MAX_DEPTH];
  bool is_tmp[GEN_MAX_ARRAYS];
} GenState;

static const char *const loop_names[] = {"i", "j", "k"};

/* An index into an input array of GEN_IN elements: a literal, or a loop variable plus an
 * offset that keeps it in range over the loop's whole range. */
static void gen_index(const int *lo, const int *hi, int depth, int *loop, int *off) {
  if (!depth || rand() % 3 == 0) {
    *loop = -1;
    *off = rand() % GEN_IN;
    return;
  }
  *loop = rand() % depth;
  int min_off = -lo[*loop], max_off = GEN_IN - hi[*loop];
  *off = min_off + rand() % (max_off - min_off + 1);
}

/* kinds: 0 acc += G[a]; 1 t = s G[a], acc += t; 2 u = G[a] V[b]; 3 R[..] = acc + G[a];
 * 4 T[..] = s G[a], acc += T[..] */
static GenItem gen_call(GenState *g, int depth, const int *lo, const int *hi) {
  GenItem it = {.kind = rand() % 5, .src = g->nsrc};
  if (it.kind >= 3 && (!depth || g->narrays == GEN_MAX_ARRAYS)) it.kind = 0;
  g->nsrc += it.kind == 1 || it.kind == 4 ? 2 : 1;
  if (it.kind >= 3) {
    it.array = g->narrays++;
    g->depth[it.array] = depth;
    g->is_tmp[it.array] = it.kind == 4;
    for (int d = 0; d < depth; d++) g->trips[it.array][d] = hi[d] - lo[d];
  }
  for (int k = 0; k < 2; k++) gen_index(lo, hi, depth, &it.ix_loop[k], &it.ix_off[k]);
  return it;
}

static GenItem *gen_items(GenState *g, int depth, int *lo, int *hi, int *nitems);

static GenItem gen_loop(GenState *g, int depth, int *lo, int *hi) {
  GenItem it = {.is_loop = true, .lo = rand() % 3};
  it.hi = it.lo + 1 + rand() % 3;
  lo[depth] = it.lo;
  hi[depth] = it.hi;
  g->nloops++;
  it.body = gen_items(g, depth + 1, lo, hi, &it.nbody);
  return it;
}

/* A body of 1..GEN_MAX_ITEMS items, in source order (so source numbers are textual order). */
static GenItem *gen_items(GenState *g, int depth, int *lo, int *hi, int *nitems) {
  *nitems = 1 + rand() % GEN_MAX_ITEMS;
  GenItem *items = xcalloc((size_t)*nitems, sizeof(GenItem));
  for (int i = 0; i < *nitems; i++) {
    bool loop = depth < GEN_MAX_DEPTH && rand() % 3 == 0;
    items[i] = loop ? gen_loop(g, depth, lo, hi) : gen_call(g, depth, lo, hi);
  }
  return items;
}

static void gen_free(GenItem *items, int n) {
  for (int i = 0; i < n; i++)
    if (items[i].is_loop) gen_free(items[i].body, items[i].nbody);
  free(items);
}

/* An index as text: with its loop variable (vals NULL) or evaluated at the loop values. */
static void put_index(StrBuf *sb, int loop, int off, const int *vals) {
  if (loop < 0)
    sb_printf(sb, "[%d]", off);
  else if (vals)
    sb_printf(sb, "[%d]", vals[loop] + off);
  else if (off)
    sb_printf(sb, "[%s%+d]", loop_names[loop], off);
  else
    sb_printf(sb, "[%s]", loop_names[loop]);
}

/* "R3[i-1][j]": the element of an R/T array for this iteration of the loops around it. */
static void put_element(StrBuf *sb, const GenItem *it, int depth, const int *lo,
                        const int *vals) {
  sb_printf(sb, "%c%d", it->kind == 4 ? 'T' : 'R', it->array);
  for (int d = 0; d < depth; d++) put_index(sb, d, -lo[d], vals);
}

/* What the oracle expects of one unrolled statement: where it comes from, and what it reads
 * and writes, as "name.version" the way the test's own unrolling counts SSA versions (acc, t
 * and u are reassigned; array elements and inputs have one version). */
typedef struct {
  int src, depth, iter[GEN_MAX_DEPTH];
  char ssa[3][32]; /* result, argument 1, argument 2 */
} Expect;

typedef struct {
  Expect *e;
  int n;
  int version[3]; /* current versions of acc, t, u (the prelude made version 0 of each) */
} ExpectList;

static const char *const carried[] = {"acc", "t", "u"};

/* "acc.3" for a carried variable (its current version, or a new one), else the name. */
static void ssa_name(char *out, ExpectList *x, const char *name, bool assign) {
  for (int c = 0; c < 3; c++) {
    if (strcmp(name, carried[c])) continue;
    snprintf(out, 32, "%s.%d", name, assign ? ++x->version[c] : x->version[c]);
    return;
  }
  snprintf(out, 32, "%s", name);
}

/* One unrolled call "res = f(a1, a2)": the arguments are read before the result is written. */
static void expect(ExpectList *x, int src, int depth, const int *vals, const char *res,
                   const char *a1, const char *a2) {
  x->e = xrealloc(x->e, sizeof(Expect) * (size_t)(x->n + 1));
  Expect *e = &x->e[x->n++];
  *e = (Expect){.src = src, .depth = depth};
  for (int d = 0; d < depth; d++) e->iter[d] = vals[d];
  ssa_name(e->ssa[1], x, a1, false);
  ssa_name(e->ssa[2], x, a2, false);
  ssa_name(e->ssa[0], x, res, true);
}

/* Writes one generated call as spec text; unrolled (vals set), also records what it expects. */
static void put_call(StrBuf *sb, const GenItem *it, int depth, const int *lo, const int *vals,
                     ExpectList *x) {
  StrBuf g, v, el;
  sb_init(&g);
  sb_init(&v);
  sb_init(&el);
  sb_puts(&g, "G");
  put_index(&g, it->ix_loop[0], it->ix_off[0], vals);
  sb_puts(&v, "V");
  put_index(&v, it->ix_loop[1], it->ix_off[1], vals);
  if (it->kind >= 3) put_element(&el, it, depth, lo, vals);
  const char *res[2] = {0}, *fn[2] = {0}, *a1[2] = {0}, *a2[2] = {0};
  if (it->kind == 0) res[0] = "acc", fn[0] = "madd33", a1[0] = "acc", a2[0] = g.data;
  if (it->kind == 1) {
    res[0] = "t", fn[0] = "smmul33", a1[0] = g.data, a2[0] = "s";
    res[1] = "acc", fn[1] = "madd33", a1[1] = "acc", a2[1] = "t";
  }
  if (it->kind == 2) res[0] = "u", fn[0] = "mvmul33", a1[0] = g.data, a2[0] = v.data;
  if (it->kind == 3) res[0] = el.data, fn[0] = "madd33", a1[0] = "acc", a2[0] = g.data;
  if (it->kind == 4) {
    res[0] = el.data, fn[0] = "smmul33", a1[0] = g.data, a2[0] = "s";
    res[1] = "acc", fn[1] = "madd33", a1[1] = "acc", a2[1] = el.data;
  }
  for (int c = 0; c < 2 && res[c]; c++) {
    sb_printf(sb, "%s = %s(%s, %s);\n", res[c], fn[c], a1[c], a2[c]);
    if (vals) expect(x, it->src + c, depth, vals, res[c], a1[c], a2[c]);
  }
  sb_free(&g);
  sb_free(&v);
  sb_free(&el);
}

/* Prints items with their loops (vals NULL), or unrolled (vals: the loop values, filled here)
 * recording each unrolled statement in x. */
static void put_items(StrBuf *sb, const GenItem *items, int n, int depth, int *lo, int *vals,
                      ExpectList *x) {
  for (int i = 0; i < n; i++) {
    const GenItem *it = &items[i];
    if (!it->is_loop) {
      put_call(sb, it, depth, lo, vals, x);
      continue;
    }
    lo[depth] = it->lo;
    if (!vals) {
      sb_printf(sb, "for %s in %d..%d {\n", loop_names[depth], it->lo, it->hi);
      put_items(sb, it->body, it->nbody, depth + 1, lo, NULL, NULL);
      sb_puts(sb, "}\n");
      continue;
    }
    for (int v = it->lo; v < it->hi; v++) {
      vals[depth] = v;
      put_items(sb, it->body, it->nbody, depth + 1, lo, vals, x);
    }
  }
}

static void put_declarations(StrBuf *sb, const GenState *g) {
  sb_printf(sb, "matrix3x3 P, acc, t, G[%d];\nvector3 u, V[%d];\nscalar s;\n", GEN_IN, GEN_IN);
  for (int k = 0; k < g->narrays; k++) {
    sb_printf(sb, "matrix3x3 %c%d", g->is_tmp[k] ? 'T' : 'R', k);
    for (int d = 0; d < g->depth[k]; d++) sb_printf(sb, "[%d]", g->trips[k][d]);
    sb_puts(sb, ";\n");
  }
  sb_puts(sb, "input P, s, G, V;\n"
              "acc = madd33(P, P);\nt = smmul33(P, s);\nu = mvmul33(P, V[0]);\n");
}

static void put_return(StrBuf *sb, const GenState *g) {
  sb_puts(sb, "return acc, u");
  for (int k = 0; k < g->narrays; k++)
    if (!g->is_tmp[k]) sb_printf(sb, ", R%d", k);
  sb_puts(sb, ";\n");
}

/* "acc.3": a statement's reference as the oracle names it. */
static void assert_ssa(const Spec *sp, VarRef r, const char *want) {
  char got[64];
  snprintf(got, sizeof got, "%s", sp->vars[r.var].name);
  for (int c = 0; c < 3; c++)
    if (!strcmp(got, carried[c])) snprintf(got, sizeof got, "%s.%d", carried[c], r.version);
  if (strcmp(got, want)) fail_msg("expected %s, parsed %s", want, got);
  if (strcmp(got, sp->vars[r.var].name) == 0) assert_int_equal(r.version, 0);
}

/* The looped spec reads and writes the SSA versions the test's own unrolling counted, and
 * carries the provenance it saw; the unrolled twin has no loops. */
static void check_provenance(const Spec *sp, const Spec *twin, const ExpectList *x, int nloops) {
  assert_int_equal(sp->nstmts, GEN_PRELUDE + x->n);
  assert_int_equal(sp->nloops, nloops);
  assert_int_equal(twin->nloops, 0);
  for (int i = 0; i < sp->nstmts; i++) {
    const Statement *st = &sp->stmts[i];
    Expect e = i < GEN_PRELUDE ? (Expect){.src = i} : x->e[i - GEN_PRELUDE];
    if (i >= GEN_PRELUDE) {
      assert_ssa(sp, st->result, e.ssa[0]);
      assert_ssa(sp, st->args[0], e.ssa[1]);
      assert_ssa(sp, st->args[1], e.ssa[2]);
    }
    assert_int_equal(st->source, e.src);
    assert_int_equal(st->depth, e.depth);
    for (int d = 0; d < e.depth; d++) assert_int_equal(st->iter[d], e.iter[d]);
    assert_int_equal(twin->stmts[i].depth, 0);
    if (!e.depth) {
      assert_int_equal(st->loop, -1);
      continue;
    }
    assert_string_equal(sp->loops[st->loop].var, loop_names[e.depth - 1]);
    assert_int_equal(sp->loops[st->loop].depth, e.depth - 1);
  }
}

/* Where both fit a DAG, each value sits at the same place of the same API argument. */
static void check_same_api(const Spec *sp, const Spec *twin) {
  if (sp->nstmts > KAS_MAX_NODES) return;
  Dag *a = dag_build(sp), *b = dag_build(twin);
  assert_int_equal(a->nvalues, b->nvalues);
  assert_int_equal(a->nout_args, b->nout_args);
  for (int v = 0; v < a->nvalues; v++) {
    assert_string_equal(a->values[v].label, b->values[v].label);
    assert_int_equal(a->values[v].arg, b->values[v].arg);
    assert_int_equal(a->values[v].arg_offset, b->values[v].arg_offset);
    assert_int_equal(a->values[v].arg_record, b->values[v].arg_record);
  }
  for (int n = 0; n < a->nnodes; n++) assert_true(nodeset_equal(&a->pred[n], &b->pred[n]));
  dag_free(a);
  dag_free(b);
}

static void test_random_loop_nests_against_unrolling(void **state) {
  (void)state;
  Library *lib = fake_library();
  srand(1101);
  int rounds = 0, calls = 0, max_calls = 0, dags = 0;
  while (rounds < 400) {
    GenState g = {.nsrc = GEN_PRELUDE};
    int lo[GEN_MAX_DEPTH], hi[GEN_MAX_DEPTH], vals[GEN_MAX_DEPTH], n;
    GenItem *items = gen_items(&g, 0, lo, hi, &n);
    StrBuf looped, unrolled;
    sb_init(&looped);
    sb_init(&unrolled);
    ExpectList x = {0};
    put_declarations(&looped, &g);
    put_declarations(&unrolled, &g);
    put_items(&looped, items, n, 0, lo, NULL, NULL);
    put_items(&unrolled, items, n, 0, lo, vals, &x);
    put_return(&looped, &g);
    put_return(&unrolled, &g);
    if (GEN_PRELUDE + x.n <= KAS_MAX_SPEC_CALLS) {
      char *err, *err2;
      Spec *sp = parse_captured("looped.spec", looped.data, lib, &err);
      Spec *twin = parse_captured("unrolled.spec", unrolled.data, lib, &err2);
      if (!sp || !twin)
        fail_msg("round %d:\n%s%s\n%s%s", rounds, looped.data, err, unrolled.data, err2);
      assert_same_statements(sp, twin);
      check_provenance(sp, twin, &x, g.nloops);
      check_same_api(sp, twin);
      dags += sp->nstmts <= KAS_MAX_NODES;
      calls += sp->nstmts;
      if (sp->nstmts > max_calls) max_calls = sp->nstmts;
      rounds++;
      spec_free(sp);
      spec_free(twin);
      free(err);
      free(err2);
    }
    free(x.e);
    sb_free(&looped);
    sb_free(&unrolled);
    gen_free(items, n);
  }
  print_message("%d random loop nests (%d calls, at most %d in one; %d compared as DAGs) "
                "equal to their unrolling\n", rounds, calls, max_calls, dags);
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
      cmocka_unit_test(test_bom_and_crlf),
      cmocka_unit_test(test_binary_garbage),
      cmocka_unit_test(test_missing_file),
      cmocka_unit_test(test_ten_megabyte_line),
      cmocka_unit_test(test_many_variables),
      cmocka_unit_test(test_warnings_do_not_fail),
      cmocka_unit_test(test_reports_several_errors),
      cmocka_unit_test(test_comments_names_dead_values),
      cmocka_unit_test(test_loop_specs_equal_unrolled_twins),
      cmocka_unit_test(test_loop_carried_sum),
      cmocka_unit_test(test_array_arguments_in_dag),
      cmocka_unit_test(test_statement_labels_match_dag),
      cmocka_unit_test(test_dag_call_limit),
      cmocka_unit_test(test_loop_mistakes_reported_once),
      cmocka_unit_test(test_hostile_loops),
      cmocka_unit_test(test_random_loop_nests_against_unrolling),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
