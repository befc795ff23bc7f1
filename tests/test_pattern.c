/*
 * test_pattern.c — the access-pattern expression language (values, precedence, errors with exact
 * columns, division by zero, overflow), the pattern syntax, access sets against an independent
 * brute force, compatibility (thesis examples, symmetry, reflexivity, shapes) and register
 * extents.
 */
#include "testutil.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const SrcLoc LOC = {.file = "p.ini", .line = 3, .col = 10};

/* ---- expressions -------------------------------------------------------------------------- */

static long eval_ok(const char *src, const ExprEnv *env) {
  Expr *e = expr_parse(src, LOC);
  if (!e) fail_msg("did not parse: %s", src);
  long v = 0;
  if (!expr_eval(e, env, &v, LOC)) fail_msg("did not evaluate: %s", src);
  expr_free(e);
  return v;
}

static void test_expr_values(void **state) {
  (void)state;
  ExprEnv env = {.tx = 2, .ty = 5, .tz = 1, .bx = 7, .BX = 3, .BY = 32, .BZ = 1, .i = 4};
  struct {
    const char *src;
    long want;
  } cases[] = {
      {"1+2*3", 7}, {"(1+2)*3", 9}, {"10-4-3", 3}, {"100/10/5", 2}, {"-7/2", -3},
      {"-7%3", -1}, {"7/-2", -3}, {"2*-3", -6}, {"- - 3", 3}, {"1<2", 1}, {"2<=1", 0},
      {"3>=3", 1}, {"4>5", 0}, {"2==2", 1}, {"2!=2", 0}, {"1==1&&0", 0}, {"0||3", 1},
      {"1 ? 5 : 6", 5}, {"0 ? 5 : 6", 6}, {"1 ? 0 ? 1 : 2 : 3", 2}, {"min(3,-4)", -4},
      {"max(3, 4)", 4}, {"min(max(1,2),max(0,-1))", 0}, {"tx+BX*ty", 17},
      {"ty*9+tx*3", 51}, {"4*(4*(tx+BX*ty+i*BX*BY) < BY*9)", 0}, {"bx + tz + BZ", 9},
      {"i*i", 16}, {"1 + 2 < 4 == 1", 1}, {"0 && 1/0", 0}, {"1 || 1%0", 1},
      {"9223372036854775807", LONG_MAX}, {"  12  ", 12},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    long got = eval_ok(cases[k].src, &env);
    if (got != cases[k].want) fail_msg("%s = %ld, want %ld", cases[k].src, got, cases[k].want);
  }
}

/* Parsing src must fail with `message` at column `col` (LOC's col is 10: src[0] is column 10). */
static void expect_parse_error(const char *src, int col, const char *message) {
  capture_start();
  Expr *e = expr_parse(src, LOC);
  char *out = capture_end();
  if (e) fail_msg("parsed but should not: %s", src);
  char where[64];
  snprintf(where, sizeof where, col ? "p.ini:3:%d: error: " : "p.ini:3:", col);
  assert_contains(out, where);
  assert_contains(out, message);
  free(out);
}

static void test_expr_parse_errors(void **state) {
  (void)state;
  expect_parse_error("tx + foo", 15, "unknown variable 'foo'");
  expect_parse_error("(1+2", 14, "expected ')'");
  expect_parse_error("1 +", 13, "expression ends where an operand was expected");
  expect_parse_error("3 $ 4", 12, "unexpected character");
  expect_parse_error("", 10, "expression ends");
  expect_parse_error("2 3", 12, "unexpected character");
  expect_parse_error("99999999999999999999", 10, "integer literal out of range");
  expect_parse_error("min(1)", 15, "expected ','");
  expect_parse_error("1 ? 2", 15, "expected ':'");
  expect_parse_error("3tx", 11, "unexpected character after number");
  expect_parse_error("TX", 10, "unknown variable 'TX'"); /* case matters: BX is not bx */
  char deep[1200];
  memset(deep, '(', 600);
  strcpy(deep + 600, "1");
  expect_parse_error(deep, 0, "nested too deeply");
  memset(deep, '-', 600);
  strcpy(deep + 600, "1");
  expect_parse_error(deep, 0, "nested too deeply");
}

/* Evaluating src must fail with message at column col. */
static void expect_eval_error(const char *src, const ExprEnv *env, int col, const char *message) {
  Expr *e = expr_parse(src, LOC);
  assert_non_null(e);
  long v;
  capture_start();
  bool ok = expr_eval(e, env, &v, LOC);
  char *out = capture_end();
  expr_free(e);
  if (ok) fail_msg("evaluated but should not: %s", src);
  char where[64];
  snprintf(where, sizeof where, "p.ini:3:%d: error: ", col);
  assert_contains(out, where);
  assert_contains(out, message);
  free(out);
}

static void test_expr_eval_errors(void **state) {
  (void)state;
  ExprEnv env = {.tx = 1, .BX = 3};
  expect_eval_error("10/(tx-1)", &env, 12, "division by zero");
  expect_eval_error("5 % (BX-3)", &env, 12, "modulo by zero");
  expect_eval_error("9223372036854775807+1", &env, 29, "integer overflow in '+'");
  expect_eval_error("-9223372036854775807-2", &env, 30, "integer overflow in '-'");
  expect_eval_error("4611686018427387904*2", &env, 29, "integer overflow in '*'");
  expect_eval_error("(-9223372036854775807-1)/-1", &env, 34, "overflow in division");
  expect_eval_error("-(-9223372036854775807-1)", &env, 10, "overflow in unary '-'");
  expect_eval_error("1 ? 1/0 : 2", &env, 15, "division by zero");
  /* Short-circuit and the untaken branch are not evaluated. */
  assert_int_equal(eval_ok("0 ? 1/0 : 2", &env), 2);
}

static void test_expr_uses(void **state) {
  (void)state;
  Expr *e = expr_parse("ty*9 + min(tx, BX)", LOC);
  assert_non_null(e);
  assert_true(expr_uses(e, "ty"));
  assert_true(expr_uses(e, "tx"));
  assert_true(expr_uses(e, "BX"));
  assert_false(expr_uses(e, "i"));
  assert_false(expr_uses(e, "bx"));
  expr_free(e);
}

/* ---- pattern syntax ---------------------------------------------------------------------- */

static Pattern parse_pattern_ok(const char *value) {
  Pattern p;
  if (!pattern_parse(value, LOC, &p)) fail_msg("pattern did not parse: %s", value);
  return p;
}

static void expect_pattern_error(const char *value, int col, const char *message) {
  Pattern p;
  capture_start();
  bool ok = pattern_parse(value, LOC, &p);
  char *out = capture_end();
  if (ok) fail_msg("pattern parsed but should not: %s", value);
  char where[64];
  if (col) snprintf(where, sizeof where, "p.ini:3:%d: error: ", col);
  else snprintf(where, sizeof where, "p.ini:3:10: error: ");
  assert_contains(out, where);
  assert_contains(out, message);
  free(out);
}

static void test_pattern_syntax(void **state) {
  (void)state;
  Pattern p = parse_pattern_ok("start \"ty*9+tx*3\", block \"1\", stride \"1\", count 3, noreg 0");
  assert_string_equal(p.start_src, "ty*9+tx*3");
  assert_int_equal(p.count, 3);
  assert_false(p.noreg);
  assert_int_equal(p.start_loc.col, 17); /* LOC col 10 + 7 */
  pattern_free(&p);
  /* Any order; count as an expression over the block sizes. */
  p = parse_pattern_ok("noreg 1, count \"(BY*9+3)/4\", stride \"4\", block \"4\", start \"4*tx\"");
  assert_true(p.noreg);
  assert_int_equal(p.count, -1);
  assert_int_equal(pattern_count(&p, (BlockShape){3, 32, 1, 0}), (32 * 9 + 3) / 4);
  pattern_free(&p);

  expect_pattern_error("start \"tx\", block \"1\", stride \"1\", count 3", 10, "pattern lacks 'noreg'");
  expect_pattern_error("start \"tx\", start \"1\"", 22, "'start' given twice");
  expect_pattern_error("start \"tx\", block \"1\", stride \"1\", count 3, noreg 2", 60,
                       "noreg must be 0 or 1");
  expect_pattern_error("start \"tx, block \"1\"", 19, "unexpected character in expression");
  expect_pattern_error("start \"tx", 16, "unterminated quoted expression");
  expect_pattern_error("start tx", 16, "expected a quoted expression");
  expect_pattern_error("begin \"tx\"", 10, "expected start, block, stride, count or noreg");
  expect_pattern_error("start \"tx\" block \"1\"", 21, "expected ','");
  expect_pattern_error("start \"tx+i\", block \"1\", stride \"1\", count 3, noreg 0", 20,
                       "start may not use 'i'");
  expect_pattern_error("start \"min(tx,1)\", block \"1\", stride \"1\", count 3, noreg 0", 17,
                       "start may not use min/max");
  expect_pattern_error("start \"tx\", block \"1\", stride \"1\", count \"tx+1\", noreg 0", 52,
                       "count may not use 'tx'");
  expect_pattern_error("start \"tx\", block \"1\", stride \"1\", count \"2-5\", noreg 0", 52,
                       "count -3 out of range");
  expect_pattern_error("start \"tx\", block \"1 +* 2\", stride \"1\", count 3, noreg 0", 32,
                       "expected a number");
}

/* ---- access sets against a brute force ---------------------------------------------------- */

/* A pattern twice: as text for pattern.c, and as C functions for the brute force. */
typedef struct {
  const char *text;
  long (*start)(long tx, long ty, long tz, long BX, long BY, long BZ);
  long (*block)(long tx, long ty, long tz, long BX, long BY, long BZ, long i);
  long (*stride)(long tx, long ty, long tz, long BX, long BY, long BZ, long i);
  long (*count)(long BX, long BY, long BZ);
} TwinPattern;

#define UNUSED3 (void)tz, (void)BZ
static long s_row(long tx, long ty, long tz, long BX, long BY, long BZ) { UNUSED3, (void)BX, (void)BY; return ty * 9 + tx * 3; }
static long s_elem(long tx, long ty, long tz, long BX, long BY, long BZ) { UNUSED3, (void)tx, (void)BX, (void)BY; return ty * 9; }
static long s_lin4(long tx, long ty, long tz, long BX, long BY, long BZ) { UNUSED3, (void)BY; return 4 * (tx + BX * ty); }
static long s_rev(long tx, long ty, long tz, long BX, long BY, long BZ) { UNUSED3, (void)BX, (void)BY; return ty * 9 + tx * 3 + 2; }
static long s_z(long tx, long ty, long tz, long BX, long BY, long BZ) { (void)BZ; return ((tz * BY + ty) * BX + tx) * 2; }
static long b_one(long tx, long ty, long tz, long BX, long BY, long BZ, long i) { UNUSED3, (void)tx, (void)ty, (void)BX, (void)BY, (void)i; return 1; }
static long b_quad(long tx, long ty, long tz, long BX, long BY, long BZ, long i) { UNUSED3; return 4 * (4 * (tx + BX * ty + i * BX * BY) < BY * 9); }
static long b_grow(long tx, long ty, long tz, long BX, long BY, long BZ, long i) { UNUSED3, (void)ty, (void)BX, (void)BY; return (i + tx) % 3; }
static long st_one(long tx, long ty, long tz, long BX, long BY, long BZ, long i) { UNUSED3, (void)tx, (void)ty, (void)BX, (void)BY, (void)i; return 1; }
static long st_quad(long tx, long ty, long tz, long BX, long BY, long BZ, long i) { UNUSED3, (void)tx, (void)ty, (void)i; return 4 * BX * BY; }
static long st_back(long tx, long ty, long tz, long BX, long BY, long BZ, long i) { UNUSED3, (void)tx, (void)ty, (void)BX, (void)BY, (void)i; return -1; }
static long st_zero(long tx, long ty, long tz, long BX, long BY, long BZ, long i) { UNUSED3, (void)tx, (void)ty, (void)BX, (void)BY, (void)i; return 0; }
static long st_var(long tx, long ty, long tz, long BX, long BY, long BZ, long i) { UNUSED3, (void)ty, (void)BX, (void)BY; return i * 2 + tx; }
static long c3(long BX, long BY, long BZ) { (void)BX, (void)BY, (void)BZ; return 3; }
static long c9(long BX, long BY, long BZ) { (void)BX, (void)BY, (void)BZ; return 9; }
static long cquad(long BX, long BY, long BZ) { (void)BZ; return (BY * 9 / 4 + BX * BY - 1) / (BX * BY); }
static long c5(long BX, long BY, long BZ) { (void)BX, (void)BY, (void)BZ; return 5; }

static const TwinPattern twins[] = {
    {"start \"ty*9+tx*3\", block \"1\", stride \"1\", count 3, noreg 0", s_row, b_one, st_one, c3},
    {"start \"ty*9\", block \"1\", stride \"1\", count \"9\", noreg 0", s_elem, b_one, st_one, c9},
    {"start \"4*(tx+BX*ty)\", block \"4*(4*(tx+BX*ty+i*BX*BY) < BY*9)\", stride \"4*BX*BY\", "
     "count \"(BY*9/4+BX*BY-1)/(BX*BY)\", noreg 1", s_lin4, b_quad, st_quad, cquad},
    {"start \"ty*9+tx*3+2\", block \"1\", stride \"-1\", count 3, noreg 0", s_rev, b_one, st_back, c3},
    {"start \"ty*9\", block \"(i+tx)%3\", stride \"0\", count 5, noreg 0", s_elem, b_grow, st_zero, c5},
    {"start \"((tz*BY+ty)*BX+tx)*2\", block \"(i+tx)%3\", stride \"i*2+tx\", count 5, noreg 0", s_z,
     b_grow, st_var, c5},
};

/* The brute force: walks the rounds with an explicit cursor and marks a bitmap over a window
 * around the start, then lists the marked offsets in order. */
static int brute_force(const TwinPattern *tw, BlockShape sh, int lin, long *start, long *out) {
  long tx = lin % sh.bx, ty = lin / sh.bx % sh.by, tz = lin / (sh.bx * sh.by);
  enum { WINDOW = 4096 };
  static bool mark[2 * WINDOW];
  memset(mark, 0, sizeof mark);
  *start = tw->start(tx, ty, tz, sh.bx, sh.by, sh.bz);
  long cursor = *start;
  long rounds = tw->count(sh.bx, sh.by, sh.bz);
  for (long round = 0; round < rounds; round++) {
    long width = tw->block(tx, ty, tz, sh.bx, sh.by, sh.bz, round);
    for (long off = cursor; off < cursor + width; off++) mark[off - *start + WINDOW] = true;
    cursor += tw->stride(tx, ty, tz, sh.bx, sh.by, sh.bz, round);
  }
  int n = 0;
  for (long w = 0; w < 2 * WINDOW; w++)
    if (mark[w]) out[n++] = w - WINDOW + *start;
  return n;
}

static void test_access_sets_brute_force(void **state) {
  (void)state;
  BlockShape shapes[] = {{3, 4, 1, 0}, {3, 32, 1, 0}, {96, 1, 1, 0}, {1, 8, 1, 0}, {2, 3, 4, 0}, {9, 12, 1, 0}};
  long expect[8192];
  int checked = 0;
  for (size_t p = 0; p < sizeof twins / sizeof twins[0]; p++) {
    Pattern pat = parse_pattern_ok(twins[p].text);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      BlockShape sh = shapes[s];
      for (int t = 0; t < sh.bx * sh.by * sh.bz; t++) {
        long start;
        int n = brute_force(&twins[p], sh, t, &start, expect);
        AccessSet got;
        assert_true(pattern_access_set(&pat, sh, t, &got));
        if (got.start != start || got.n != n)
          fail_msg("pattern %zu shape %dx%dx%d thread %d: start %ld/%ld n %d/%d", p, sh.bx, sh.by,
                   sh.bz, t, got.start, start, got.n, n);
        for (int k = 0; k < n; k++) assert_int_equal(got.offsets[k], expect[k]);
        access_set_free(&got);
        checked++;
      }
    }
    pattern_free(&pat);
  }
  assert_true(checked > 1000);
}

/* The last round's stride is never used, so it may not even be evaluable. */
static void test_last_stride_unused(void **state) {
  (void)state;
  Pattern p = parse_pattern_ok("start \"0\", block \"1\", stride \"6/(2-i)\", count 3, noreg 0");
  AccessSet s;
  assert_true(pattern_access_set(&p, (BlockShape){1, 1, 1, 0}, 0, &s));
  assert_int_equal(s.n, 3);
  assert_int_equal(s.offsets[0], 0);
  assert_int_equal(s.offsets[1], 3); /* stride(0) = 3 */
  assert_int_equal(s.offsets[2], 9); /* stride(1) = 6 */
  access_set_free(&s);
  pattern_free(&p);
  /* A division by zero in a round that is used is reported at its column. */
  p = parse_pattern_ok("start \"0\", block \"1\", stride \"6/(1-i)\", count 3, noreg 0");
  capture_start();
  bool ok = pattern_access_set(&p, (BlockShape){1, 1, 1, 0}, 0, &s);
  char *out = capture_end();
  assert_false(ok);
  assert_contains(out, "p.ini:3:41: error: division by zero");
  free(out);
  pattern_free(&p);
  /* Negative block is an error, not an empty round. */
  p = parse_pattern_ok("start \"0\", block \"1-i\", stride \"1\", count 3, noreg 0");
  capture_start();
  ok = pattern_access_set(&p, (BlockShape){1, 1, 1, 0}, 0, &s);
  out = capture_end();
  assert_false(ok);
  assert_contains(out, "block -1 is negative at i = 2");
  free(out);
  pattern_free(&p);
  /* A huge count is refused before memory runs out. */
  p = parse_pattern_ok("start \"0\", block \"1000\", stride \"1000\", count \"BX*100000\", noreg 0");
  capture_start();
  ok = pattern_access_set(&p, (BlockShape){1, 1, 1, 0}, 0, &s);
  out = capture_end();
  assert_false(ok);
  assert_contains(out, "touches more than 131072 offsets");
  free(out);
  pattern_free(&p);
  /* An empty (never parsed) pattern is an error, not a crash, and compatible with nothing. */
  Pattern empty = {.loc = {.file = "p.ini"}};
  capture_start();
  ok = pattern_access_set(&empty, (BlockShape){1, 1, 1, 0}, 0, &s);
  out = capture_end();
  assert_false(ok);
  free(out);
  assert_false(patterns_compatible(&empty, (BlockShape){1, 1, 1, 0}, &empty, (BlockShape){1, 1, 1, 0}));
}

/* ---- compatibility ----------------------------------------------------------------------- */

static void test_compatibility_thesis(void **state) {
  (void)state;
  /* mmul33_2 (Lakomý 2012, Kód 4.4): BX = 3 threads per element, BY = E. */
  Pattern in0 = parse_pattern_ok("start \"ty*9+tx*3\", block \"1\", stride \"1\", count 3, noreg 0");
  Pattern in1 = parse_pattern_ok("start \"ty*9\", block \"1\", stride \"1\", count 9, noreg 0");
  Pattern out = parse_pattern_ok("start \"ty*9+tx*3\", block \"1\", stride \"1\", count 3, noreg 0");
  /* Same sets written differently: one round of 3 instead of 3 rounds of 1. */
  Pattern in0b = parse_pattern_ok("start \"ty*9+tx*3\", block \"3\", stride \"7\", count 1, noreg 0");
  /* Same set, different start: incompatible (registers are indexed from the start). */
  Pattern rev = parse_pattern_ok("start \"ty*9+tx*3+2\", block \"1\", stride \"-1\", count 3, noreg 0");
  /* One thread per element in a 1-D block of 3E threads: thread lin = tx + 3*ty touches 3*lin. */
  Pattern flat = parse_pattern_ok("start \"tx*3\", block \"1\", stride \"1\", count 3, noreg 0");
  BlockShape s32 = {3, 32, 1, 0}, s96 = {96, 1, 1, 0}, s16 = {3, 16, 1, 0};

  assert_true(patterns_compatible(&in0, s32, &out, s32));
  assert_false(patterns_compatible(&in1, s32, &out, s32));
  assert_true(patterns_compatible(&in0, s32, &in0b, s32));
  assert_false(patterns_compatible(&in0, s32, &rev, s32));
  assert_true(patterns_compatible(&in0, s32, &flat, s96));  /* same thread count, same offsets */
  assert_false(patterns_compatible(&in0, s32, &out, s16));  /* 96 vs 48 threads */
  assert_false(patterns_compatible(&in0, s32, &flat, (BlockShape){48, 1, 1, 0}));

  /* Reflexive and symmetric over every pair and shape. */
  Pattern *all[] = {&in0, &in1, &out, &in0b, &rev, &flat};
  BlockShape shapes[] = {s32, s96, s16, {48, 1, 1, 0}};
  for (int a = 0; a < 6; a++)
    for (int sa = 0; sa < 4; sa++) {
      assert_true(patterns_compatible(all[a], shapes[sa], all[a], shapes[sa]));
      for (int b = 0; b < 6; b++)
        for (int sb = 0; sb < 4; sb++)
          assert_int_equal(patterns_compatible(all[a], shapes[sa], all[b], shapes[sb]),
                           patterns_compatible(all[b], shapes[sb], all[a], shapes[sa]));
    }
  for (int k = 0; k < 6; k++) pattern_free(all[k]);
}

/* Differences in one thread only must be found (no sampling). */
static void test_compatibility_last_thread(void **state) {
  (void)state;
  Pattern a = parse_pattern_ok("start \"tx*2\", block \"2\", stride \"1\", count 1, noreg 0");
  Pattern b = parse_pattern_ok(
      "start \"tx*2\", block \"tx == BX-1 ? 1 : 2\", stride \"1\", count 1, noreg 0");
  assert_false(patterns_compatible(&a, (BlockShape){64, 1, 1, 0}, &b, (BlockShape){64, 1, 1, 0}));
  assert_false(patterns_compatible(&b, (BlockShape){64, 1, 1, 0}, &a, (BlockShape){64, 1, 1, 0}));
  pattern_free(&a);
  pattern_free(&b);
}

static void test_register_extent(void **state) {
  (void)state;
  BlockShape s32 = {3, 32, 1, 0};
  for (size_t p = 0; p < sizeof twins / sizeof twins[0]; p++) {
    Pattern pat = parse_pattern_ok(twins[p].text);
    long expect[8192], want = 0;
    for (int t = 0; t < 96; t++) {
      long start;
      int n = brute_force(&twins[p], s32, t, &start, expect);
      if (n && expect[n - 1] - start + 1 > want) want = expect[n - 1] - start + 1;
    }
    assert_int_equal(pattern_register_extent(&pat, s32), want);
    pattern_free(&pat);
  }
  Pattern row = parse_pattern_ok(twins[0].text), elem = parse_pattern_ok(twins[1].text);
  assert_int_equal(pattern_register_extent(&row, s32), 3);
  assert_int_equal(pattern_register_extent(&elem, s32), 9);
  pattern_free(&row);
  pattern_free(&elem);
}

/* Compatibility of large blocks stays fast (the search calls it very often). */
static void test_compatibility_speed(void **state) {
  (void)state;
  Pattern a = parse_pattern_ok(twins[2].text);
  Pattern b = parse_pattern_ok(
      "start \"4*(tx+BX*ty)\", block \"4*(4*(tx+BX*ty+i*BX*BY) < BY*9)\", stride \"4*BX*BY\", "
      "count \"(BY*9/4+BX*BY-1)/(BX*BY)+0\", noreg 1");
  for (int rep = 0; rep < 200; rep++)
    assert_true(patterns_compatible(&a, (BlockShape){3, 256, 1, 0}, &b, (BlockShape){3, 256, 1, 0}));
  pattern_free(&a);
  pattern_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_expr_values),
      cmocka_unit_test(test_expr_parse_errors),
      cmocka_unit_test(test_expr_eval_errors),
      cmocka_unit_test(test_expr_uses),
      cmocka_unit_test(test_pattern_syntax),
      cmocka_unit_test(test_access_sets_brute_force),
      cmocka_unit_test(test_last_stride_unused),
      cmocka_unit_test(test_compatibility_thesis),
      cmocka_unit_test(test_compatibility_last_thread),
      cmocka_unit_test(test_register_extent),
      cmocka_unit_test(test_compatibility_speed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
