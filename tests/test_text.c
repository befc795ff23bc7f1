/*
 * test_text.c — text from inputs shown to the user (src/util.c, src/report.c): utf8_char_len
 * tells valid UTF-8 from stray, truncated, overlong and surrogate bytes; terminal_text keeps
 * names in UTF-8 as they are and writes control characters, bidirectional controls, invalid
 * bytes and the backslash as octal escapes; report's table and its gnuplot title keep a name in
 * UTF-8, while the title still holds none of gnuplot's special characters, and both say the
 * precision and layout of the run; wrapped_text wraps sentences by the columns of their
 * characters.  What the results
 * reader refuses (control characters, invalid UTF-8) cannot reach report, so terminal_text is
 * checked on its own.
 */
#include "testutil.h"

static void test_utf8_char_len(void **state) {
  (void)state;
  assert_int_equal(utf8_char_len("a"), 1);
  assert_int_equal(utf8_char_len(""), 1); /* the NUL */
  assert_int_equal(utf8_char_len("\xc3\x9cnter"), 2);        /* Ü */
  assert_int_equal(utf8_char_len("\xc2\xb5"), 2);            /* µ */
  assert_int_equal(utf8_char_len("\xe2\x82\xac"), 3);        /* € */
  assert_int_equal(utf8_char_len("\xf0\x9f\x98\x80"), 4);    /* U+1F600 */
  assert_int_equal(utf8_char_len("\xf4\x8f\xbf\xbf"), 4);    /* U+10FFFF */
  assert_int_equal(utf8_char_len("\x80"), 0);                /* a stray continuation byte */
  assert_int_equal(utf8_char_len("\xff"), 0);
  assert_int_equal(utf8_char_len("\xc3"), 0);                /* truncated */
  assert_int_equal(utf8_char_len("\xe2\x82"), 0);
  assert_int_equal(utf8_char_len("\xc0\x9b"), 0);            /* overlong ESC */
  assert_int_equal(utf8_char_len("\xe0\x80\x9b"), 0);
  assert_int_equal(utf8_char_len("\xf0\x80\x80\x9b"), 0);
  assert_int_equal(utf8_char_len("\xed\xa0\x80"), 0);        /* a surrogate, U+D800 */
  assert_int_equal(utf8_char_len("\xf4\x90\x80\x80"), 0);    /* beyond U+10FFFF */
}

static void shown_as(const char *text, const char *want) {
  char *got = terminal_text(text);
  if (strcmp(got, want)) fail_msg("terminal_text: '%s', expected '%s'", got, want);
  free(got);
}

static void test_terminal_text(void **state) {
  (void)state;
  shown_as("\xc3\x9cnterelement", "\xc3\x9cnterelement");
  shown_as("NVIDIA \xc2\xb5GPU \"q?\" */", "NVIDIA \xc2\xb5GPU \"q?\" */");
  shown_as("a\\033b", "a\\134033b"); /* a backslash never reads as an escape */
  shown_as("x\033[2Jy", "x\\033[2Jy");
  shown_as("a\tb\nc\x7f", "a\\011b\\012c\\177");
  shown_as("GPU\xc2\x9b" "31m", "GPU\\302\\233" "31m");          /* C1: a CSI */
  shown_as("stv\xe2\x80\xaetnanev", "stv\\342\\200\\256tnanev"); /* right-to-left override */
  shown_as("a\xe2\x81\xa6z", "a\\342\\201\\246z");               /* an isolate */
  shown_as("a\xff\x80z", "a\\377\\200z");
  shown_as("a\xc0\x9bz", "a\\300\\233z"); /* overlong: each byte alone */
  shown_as("end\xc3", "end\\303");
}

/* The good results fixture with its spec's and device's names replaced. */
static char *results_named(const char *spec, const char *device) {
  size_t len;
  char *text = read_text_file("tests/fixtures/results/good/results.xml", &len);
  assert_non_null(text);
  char *a = strstr(text, "spec=\"stvenant\""), *b = strstr(text, "name=\"NVIDIA H100 80GB HBM3\"");
  assert_true(a && b && a < b);
  char *out = xasprintf("%.*sspec=\"%s\"%.*sname=\"%s\"%s", (int)(a - text), text, spec,
                        (int)(b - a - strlen("spec=\"stvenant\"")), a + strlen("spec=\"stvenant\""),
                        device, b + strlen("name=\"NVIDIA H100 80GB HBM3\""));
  free(text);
  return out;
}

static void test_report_names_in_utf8(void **state) {
  (void)state;
  char *text = results_named("\xc3\x9cnterelement", "\xc2\xb5GPU x&apos;y`z`$a@b\\c");
  char *table = NULL, *script = NULL;
  size_t table_len;
  FILE *out = open_memstream(&table, &table_len);
  assert_true(report_text("r.xml", text, strlen(text), out, &script));
  fclose(out);
  assert_contains(table, "\xc3\x9cnterelement on \xc2\xb5GPU x'y`z`$a@b\\134c: n = 4194304");
  assert_contains(script, "set title '\xc3\x9cnterelement on \xc2\xb5GPU x_y_z__a_b_c (precision "
                          "not recorded, layout not recorded): measured performance in predicted "
                          "order' noenhanced font ',10'\n");
  free(table), free(script), free(text);
}

/* The precision and layout <run> says the code was generated for, in the table's header and the
 * plot's title, a layout's names as any text from the file (a quote becomes '_' in the title). */
static void test_report_says_precision_and_layout(void **state) {
  (void)state;
  char *good = results_named("stvenant", "GPU");
  char *run = strstr(good, " bytes-per-element=\"532\"");
  assert_non_null(run);
  char *text = xasprintf("%.*s precision=\"double\" layout=\"component,F&apos;=element\"%s",
                         (int)(run - good), good, run);
  char *table = NULL, *script = NULL;
  size_t table_len;
  FILE *out = open_memstream(&table, &table_len);
  assert_true(report_text("r.xml", text, strlen(text), out, &script));
  fclose(out);
  assert_contains(table, "\nprecision double, layout component,F'=element\n532 bytes/element ");
  assert_contains(script, "set title 'stvenant on GPU (precision double, layout "
                          "component,F_=element): measured ");
  free(table), free(script), free(text), free(good);
}

/* The title keeps at most 120 characters of a name, counted as characters, never cutting one. */
static void test_title_cut_between_characters(void **state) {
  (void)state;
  StrBuf long_name;
  sb_init(&long_name);
  for (int i = 0; i < 130; i++) sb_puts(&long_name, "\xc3\x9c");
  char *text = results_named(long_name.data, "GPU");
  char *script = NULL;
  assert_true(report_text("r.xml", text, strlen(text), NULL, &script));
  StrBuf want;
  sb_init(&want);
  sb_puts(&want, "set title '");
  for (int i = 0; i < 120; i++) sb_puts(&want, "\xc3\x9c");
  sb_puts(&want, " on GPU (");
  assert_contains(script, want.data);
  sb_free(&want), sb_free(&long_name);
  free(script), free(text);
}

/* wrapped_text: report's and tune's sentences within 80 columns, words whole, each further line
 * indented by two; a name in UTF-8 counts a column per character (60 Ü fit where 60 bytes'
 * worth would not); a word longer than a line stands alone without an empty line before it. */
static void test_wrapped_text(void **state) {
  (void)state;
  char *w = wrapped_text("aaaa bbbb cccc", 9);
  assert_string_equal(w, "aaaa bbbb\n  cccc");
  free(w);
  w = wrapped_text("  short   enough ", 80);
  assert_string_equal(w, "short enough");
  free(w);
  StrBuf s;
  sb_init(&s);
  sb_puts(&s, "x ");
  for (int i = 0; i < 60; i++) sb_puts(&s, "\xc3\x9c");
  sb_puts(&s, " y");
  w = wrapped_text(s.data, 64);
  assert_string_equal(w, s.data); /* 64 columns, 124 bytes */
  free(w);
  w = wrapped_text("a 0123456789 b", 8);
  assert_string_equal(w, "a\n  0123456789\n  b");
  free(w);
  sb_free(&s);
  /* the embed's comment (emit_embed.c): from column 23, lines begun by " *", within 97 */
  sb_init(&s);
  sb_puts(&s, "/*");
  assert_int_equal(sb_wrap_words(&s, "aa bb cc", 23, 29, "\n *", 2), 5);
  assert_string_equal(s.data, "/* aa bb\n * cc");
  sb_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_utf8_char_len),
      cmocka_unit_test(test_terminal_text),
      cmocka_unit_test(test_report_names_in_utf8),
      cmocka_unit_test(test_report_says_precision_and_layout),
      cmocka_unit_test(test_title_cut_between_characters),
      cmocka_unit_test(test_wrapped_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
