/*
 * test_hints.c — the "did you mean" hints (util.c's NameHint, library.c's closest names, the
 * spec parser's notes): the banded edit distance equals a plain full-table one on 20,000 random
 * pairs; the rules (at most two edits and less than half the name, letter case not counted, ties
 * to fewer case edits then strcmp order, whatever the order names are offered in); the bounds
 * (long names, the number of searches a run makes); and a spec of 10,000 names with 10,000
 * misspelt uses, parsed fast with its hints.
 */
#include "testutil.h"

#include <ctype.h>
#include <time.h>

#include "front_fake_library.h"

/* ---- the distance --------------------------------------------------------------------------- */

/* Optimal string alignment distance over the whole table, the textbook way: the oracle. */
static int osa_full(const char *a, const char *b, bool fold) {
  int n = (int)strlen(a), m = (int)strlen(b);
  int d[32][32];
  for (int i = 0; i <= n; i++) d[i][0] = i;
  for (int j = 0; j <= m; j++) d[0][j] = j;
  for (int i = 1; i <= n; i++)
    for (int j = 1; j <= m; j++) {
      char x = a[i - 1], y = b[j - 1];
      if (fold) x = (char)tolower((unsigned char)x), y = (char)tolower((unsigned char)y);
      int best = d[i - 1][j - 1] + (x != y);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1) {
        char px = a[i - 2], py = b[j - 2];
        if (fold) px = (char)tolower((unsigned char)px), py = (char)tolower((unsigned char)py);
        if (x == py && px == y && d[i - 2][j - 2] + 1 < best) best = d[i - 2][j - 2] + 1;
      }
      d[i][j] = best;
    }
  return d[n][m];
}

/* Random strings over "abAB" of length 0..8, and mutations of them, so that small distances
 * (the ones the band decides) are common. */
static void random_word(char *s, int len) {
  for (int i = 0; i < len; i++) s[i] = "abAB"[rand() % 4];
  s[len] = '\0';
}

static void mutate(const char *from, char *to) {
  strcpy(to, from);
  for (int edits = rand() % 4; edits > 0; edits--) {
    int len = (int)strlen(to), at = len ? rand() % len : 0;
    switch (rand() % 4) {
    case 0: /* insert */
      if (len < 12) {
        memmove(to + at + 1, to + at, (size_t)(len - at + 1));
        to[at] = "abAB"[rand() % 4];
      }
      break;
    case 1: /* delete */
      if (len) memmove(to + at, to + at + 1, (size_t)(len - at));
      break;
    case 2: /* change */
      if (len) to[at] = "abAB"[rand() % 4];
      break;
    default: /* swap two neighbours */
      if (at + 1 < len) {
        char t = to[at];
        to[at] = to[at + 1], to[at + 1] = t;
      }
    }
  }
}

static void test_banded_distance_equals_full_table(void **state) {
  (void)state;
  srand(9);
  int small = 0;
  for (int k = 0; k < 20000; k++) {
    char a[16], b[16];
    random_word(a, rand() % 9);
    if (k % 2) mutate(a, b);
    else random_word(b, rand() % 9);
    for (int fold = 0; fold < 2; fold++) {
      int want = osa_full(a, b, fold);
      small += want <= HINT_MAX_DISTANCE;
      for (int cap = 0; cap <= HINT_MAX_DISTANCE; cap++) {
        int got = edit_distance_capped(a, strlen(a), b, strlen(b), cap, fold);
        int expected = want <= cap ? want : cap + 1;
        if (got != expected)
          fail_msg("'%s' '%s' fold %d cap %d: %d, expected %d", a, b, fold, cap, got, expected);
      }
    }
  }
  assert_true(small > 5000); /* the band's answers were tested, not only "far" */
}

static void test_distance_examples(void **state) {
  (void)state;
  assert_int_equal(edit_distance_capped("tpo", 3, "top", 3, 2, false), 1); /* transposition */
  assert_int_equal(edit_distance_capped("mmul44", 6, "mmul33", 6, 2, false), 2);
  assert_int_equal(edit_distance_capped("MMUL33", 6, "mmul33", 6, 2, true), 0);
  assert_int_equal(edit_distance_capped("MMUL33", 6, "mmul33", 6, 2, false), 3); /* > cap */
  assert_int_equal(edit_distance_capped("", 0, "ab", 2, 2, false), 2);
  assert_int_equal(edit_distance_capped("abc", 3, "abcdef", 6, 2, false), 3); /* length gap */
}

/* ---- the rules ------------------------------------------------------------------------------ */

/* The hint for typo among names, offered forwards and backwards: both must agree. */
static const char *hint_among(const char *typo, const char *const *names, int n) {
  NameHint fwd, back;
  name_hint_start(&fwd, typo, strlen(typo));
  name_hint_start(&back, typo, strlen(typo));
  for (int i = 0; i < n; i++) {
    name_hint_offer(&fwd, names[i], i);
    name_hint_offer(&back, names[n - 1 - i], n - 1 - i);
  }
  if ((fwd.best == NULL) != (back.best == NULL) ||
      (fwd.best && (strcmp(fwd.best, back.best) || fwd.best_id != back.best_id)))
    fail_msg("'%s': the hint depends on the order of the names", typo);
  return fwd.best;
}

#define HINT(typo, ...)                                                                    \
  hint_among(typo, (const char *const[]){__VA_ARGS__},                                     \
             (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)))

static void test_hint_rules(void **state) {
  (void)state;
  diag_reset();
  assert_string_equal(HINT("mmul44", "madd33", "mmul33", "mmul55"), "mmul33"); /* tie: strcmp */
  assert_string_equal(HINT("tpo", "top", "out", "db"), "top");
  assert_string_equal(HINT("MADD33", "madd33", "madd55"), "madd33"); /* case does not count */
  /* Equal ignoring case: fewer case edits first, even against strcmp order. */
  assert_string_equal(HINT("aBcd", "ABCD", "abcd"), "abcd");
  /* Less than half the name: 1 edit in 3 letters, not 2 in 4; nothing for one letter. */
  assert_string_equal(HINT("abx", "abc"), "abc");
  assert_null(HINT("abxy", "abcd"));
  assert_string_equal(HINT("abxye", "abcde"), "abcde");
  assert_null(HINT("B", "A", "C"));
  assert_string_equal(HINT("b", "B"), "B"); /* a case-only difference is always a hint */
  assert_null(HINT("mmul", "mmul33")); /* two edits, not less than half of four letters */
  assert_null(HINT("abcdefgh", "abcdefghijk")); /* three edits */
  assert_string_equal(HINT("abcdefgh", "abcdefghij", "abcdefghi"), "abcdefghi"); /* closest */
}

static void test_hint_bounds(void **state) {
  (void)state;
  diag_reset();
  char long_name[HINT_MAX_NAME + 2];
  memset(long_name, 'a', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  char near[sizeof long_name];
  strcpy(near, long_name);
  near[0] = 'b';
  assert_null(HINT(long_name, near)); /* longer than HINT_MAX_NAME: no search */
  long_name[HINT_MAX_NAME] = near[HINT_MAX_NAME] = '\0';
  assert_string_equal(HINT(long_name, near), near); /* HINT_MAX_NAME itself is searched */
  /* A run searches at most HINT_MAX_SEARCHES times; diag_reset starts a new run. */
  diag_reset();
  NameHint h;
  for (int i = 0; i < HINT_MAX_SEARCHES; i++) {
    name_hint_start(&h, "tpo", 3);
    name_hint_offer(&h, "top", 0);
    assert_non_null(h.best);
  }
  name_hint_start(&h, "tpo", 3);
  name_hint_offer(&h, "top", 0);
  assert_null(h.best);
  diag_reset();
  name_hint_start(&h, "tpo", 3);
  name_hint_offer(&h, "top", 0);
  assert_non_null(h.best);
}

static void test_library_closest(void **state) {
  (void)state;
  diag_reset();
  Library *lib = fake_library();
  assert_string_equal(library_closest_function(lib, "mmul44", 6)->name, "mmul33");
  assert_string_equal(library_closest_function(lib, "ttmul3221", 9)->name, "ttmul3212");
  assert_null(library_closest_function(lib, "frobnicate", 10));
  assert_string_equal(library_closest_type(lib, "Vektor3", 7)->name, "vector3");
  assert_string_equal(library_closest_type(lib, "matrix4x4", 9)->name, "matrix3x3");
  assert_null(library_closest_type(lib, "quaternion", 10));
  fake_library_free(lib);
}

/* ---- through the parser --------------------------------------------------------------------- */

static char *parse_errors(const char *text, const Library *lib) {
  diag_reset();
  capture_start();
  Spec *sp = spec_parse("t.spec", text, lib);
  char *err = capture_end();
  assert_null(sp);
  return err;
}

static void test_spec_notes(void **state) {
  (void)state;
  Library *lib = fake_library();
  char *err = parse_errors("matrix3x3 stress, force;\ninput force;\n"
                           "stress = madd33(froce, force);\nreturn stress;\n", lib);
  assert_non_null(strstr(err, "t.spec:3:17: error: undeclared variable 'froce'\n"));
  assert_non_null(strstr(err, "t.spec:1:19: note: did you mean 'force'?\n"));
  free(err);
  err = parse_errors("vector3 v[2], u[2];\nmatrix3x3 A;\ninput A, v;\n"
                     "for i in 0..2 { for jj in 0..1 { u[i] = mvmul33(A, v[j]); } }\nreturn u;\n",
                     lib);
  assert_non_null(strstr(err, "t.spec:4:54: error: unknown loop variable 'j'\n"));
  assert_null(strstr(err, "did you mean")); /* 'j' is one letter: no hint */
  free(err);
  err = parse_errors("vector3 v[2], u[2];\nmatrix3x3 A;\ninput A, v;\n"
                     "for node in 0..2 { for k in 0..1 { u[node] = mvmul33(A, v[nod]); } }\n"
                     "return u;\n", lib);
  assert_non_null(strstr(err, "error: unknown loop variable 'nod'\n"));
  assert_non_null(strstr(err, "t.spec:4:5: note: did you mean 'node'?\n"));
  free(err);
  err = parse_errors("Matrx3x3 A, C;\ninput A;\nC = mmul3(A, A);\nreturn C;\n", lib);
  assert_non_null(strstr(err, "note: did you mean 'matrix3x3'?\n"));
  assert_non_null(strstr(err, "note: did you mean 'mmul33'?\n"));
  free(err);
  fake_library_free(lib);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* 10,000 declared names of 63 characters that differ only in their last digits (every one within
 * the length filter, so each costs a band), then 10,000 uses misspelt by one letter.  The parser
 * stops after its 20 errors, so at most 20 searches of 10,000 names run. */
static void test_ten_thousand_typos(void **state) {
  (void)state;
  Library *lib = fake_library();
  StrBuf sb;
  sb_init(&sb);
  const char *pad = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"; /* 58 */
  sb_puts(&sb, "matrix3x3 ");
  for (int i = 0; i < 10000; i++) sb_printf(&sb, "%sn%s%04d", i ? ", " : "", pad, i);
  sb_printf(&sb, ";\ninput n%s0000;\n", pad);
  for (int i = 0; i < 10000; i++)
    sb_printf(&sb, "n%s0001 = madd33(m%s%04d, n%s0000);\n", pad, pad, i, pad);
  sb_printf(&sb, "return n%s0001;\n", pad);
  double t0 = now_s();
  char *err = parse_errors(sb.data, lib);
  double dt = now_s() - t0;
  int notes = 0;
  for (const char *p = err; (p = strstr(p, "did you mean")); p++) notes++;
  assert_int_equal(notes, 19); /* the 20th error stops the parser before its note */
  char *want = xasprintf("note: did you mean 'n%s0000'?", pad);
  assert_non_null(strstr(err, want));
  free(want);
  print_message("10,000 names, 10,000 typos: %.3f s\n", dt);
  assert_true(dt < 10.0);
  free(err);
  sb_free(&sb);
  fake_library_free(lib);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_banded_distance_equals_full_table),
      cmocka_unit_test(test_distance_examples),
      cmocka_unit_test(test_hint_rules),
      cmocka_unit_test(test_hint_bounds),
      cmocka_unit_test(test_library_closest),
      cmocka_unit_test(test_spec_notes),
      cmocka_unit_test(test_ten_thousand_typos),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
