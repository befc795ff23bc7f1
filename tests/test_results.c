/*
 * test_results.c — the order in which tune's and report's tables list a results file's rows
 * (src/results.c): results_rank_order against a brute force (the least rank not yet taken,
 * first in the file among equals, unranked rows last), on random files with ties and unranked
 * rows, and results_sort_by_rank moving the rows into that order; and what the file says its
 * code was generated for (<run precision=... layout=...>, results_parse): read where given,
 * absent from older files, and a value the command line would refuse an error at its column.
 */
#include "testutil.h"

#include <limits.h>

/* A deterministic pseudo-random rank in [0, most]: 0 (unranked) about one row in six. */
static long random_rank(unsigned *state, long most) {
  *state = *state * 1103515245u + 12345u;
  unsigned v = (*state >> 8) & 0xffff;
  return v % 6 == 0 ? 0 : 1 + (long)(v / 6) % most;
}

/* The brute force: each place gets the first row in the file of the least rank left. */
static int *oracle_order(const Results *r) {
  int *order = xmalloc(sizeof *order * (size_t)r->nrows);
  bool *taken = xcalloc((size_t)r->nrows, sizeof *taken);
  for (int place = 0; place < r->nrows; place++) {
    int best = -1;
    long best_rank = 0;
    for (int i = 0; i < r->nrows; i++) {
      long rank = r->rows[i].predicted_rank ? r->rows[i].predicted_rank : LONG_MAX;
      if (!taken[i] && (best < 0 || rank < best_rank)) best = i, best_rank = rank;
    }
    taken[best] = true;
    order[place] = best;
  }
  free(taken);
  return order;
}

static Results random_results(unsigned *state, int nrows) {
  Results r = {.nrows = nrows, .rows = xcalloc((size_t)nrows, sizeof(ResultRow))};
  for (int i = 0; i < nrows; i++) {
    r.rows[i].predicted_rank = random_rank(state, nrows / 3 + 1); /* many ties */
    r.rows[i].measured_ns = i; /* which row it was in the file */
  }
  return r;
}

static void test_rank_order_is_the_brute_force(void **state) {
  (void)state;
  unsigned seed = 7;
  for (int trial = 0; trial < 200; trial++) {
    Results r = random_results(&seed, 1 + trial % 40);
    int *got = results_rank_order(&r), *want = oracle_order(&r);
    for (int i = 0; i < r.nrows; i++) assert_int_equal(got[i], want[i]);
    results_sort_by_rank(&r);
    for (int i = 0; i < r.nrows; i++) assert_int_equal((int)r.rows[i].measured_ns, want[i]);
    free(got), free(want), free(r.rows);
  }
}

/* Unranked rows go last even when the file gives them first, as "unfused" is listed. */
static void test_unranked_last(void **state) {
  (void)state;
  ResultRow rows[3] = {{.predicted_rank = 0}, {.predicted_rank = 2}, {.predicted_rank = 1}};
  Results r = {.nrows = 3, .rows = rows};
  int *order = results_rank_order(&r);
  assert_int_equal(order[0], 2);
  assert_int_equal(order[1], 1);
  assert_int_equal(order[2], 0);
  free(order);
}

/* A results file of one candidate whose <run> ends with run_attrs (each line of the file below
 * is one line: <run> is line 4). */
static char *results_text(const char *run_attrs) {
  return xasprintf("<?xml version=\"1.0\"?>\n<kasgen-results version=\"1\" spec=\"s\">\n"
                   "<device name=\"G\" copy-gbs=\"1\"/>\n"
                   "<run n=\"8\" reps=\"1\" input-copies=\"1\" bytes-per-element=\"8\"%s/>\n"
                   "<candidate name=\"c\" kernels=\"k\" nkernels=\"1\" predicted-ns=\"1\" "
                   "measured-ns=\"1\" melem-s=\"1\" compulsory-gbs=\"1\" copy-percent=\"1\" "
                   "predicted-rank=\"1\" measured-rank=\"1\" correct=\"1\" error=\"0\"/>\n"
                   "</kasgen-results>\n",
                   run_attrs);
}

/* Parses the file of run_attrs; false (its messages in *err, unless NULL) after errors. */
static bool parse_run(const char *run_attrs, Results *r, char **err) {
  char *text = results_text(run_attrs);
  capture_start();
  bool ok = results_parse("r.xml", text, strlen(text), r);
  char *said = capture_end();
  if (err) *err = said;
  else free(said);
  free(text);
  return ok;
}

/* The column of the value of attr="..." on line 4 of the file of run_attrs. */
static int value_column(const char *run_attrs, const char *attr) {
  char *text = results_text(run_attrs), *line = text;
  for (int l = 1; l < 4; l++) line = strchr(line, '\n') + 1;
  char *at = xasprintf(" %s=", attr);
  int col = (int)(strstr(line, at) - line) + (int)strlen(at) + 2; /* past the quote, 1-based */
  free(at);
  free(text);
  return col;
}

static void test_precision_and_layout_read(void **state) {
  (void)state;
  const char *attrs = " precision=\"double\"\n  layout=\"component,F=element\"";
  Results r;
  assert_true(parse_run(attrs, &r, NULL));
  assert_true(r.has_precision);
  assert_int_equal(r.precision, PREC_DOUBLE);
  assert_string_equal(r.layouts, "component,F=element");
  assert_int_equal(r.precision_at.line, 4);
  assert_int_equal(r.precision_at.col, value_column(attrs, "precision"));
  /* on the tag's next line: libxml2 gives the element the line its tag ends on */
  assert_int_equal(r.layout_at.line, 5);
  assert_int_equal(r.layout_at.col, 11); /* `  layout="` */
  results_free(&r);
  assert_true(parse_run(" precision=\"single\" layout=\"\"", &r, NULL));
  assert_int_equal(r.precision, PREC_SINGLE);
  assert_string_equal(r.layouts, ""); /* as --layout "": every array element-major */
  results_free(&r);
}

/* A file written before the harness said them: nothing is known, and nothing is wrong. */
static void test_older_file_says_neither(void **state) {
  (void)state;
  Results r;
  assert_true(parse_run("", &r, NULL));
  assert_false(r.has_precision);
  assert_null(r.layouts);
  results_free(&r);
}

/* Only the command line's words: an error at the value's line and column, naming it. */
static void test_bad_values_located(void **state) {
  (void)state;
  const char *bad[][3] = {
      {" precision=\"Double\"", "precision", "precision=\"Double\" of <run> is neither single "
                                             "nor double"},
      {" precision=\"\"", "precision", "precision=\"\" of <run> is neither"},
      {" layout=\"component,rows\"", "layout", "'rows' is not element, component or "
                                               "NAME=element|component"},
      {" layout=\"F=comp\"", "layout", "'F=comp' is not element"},
      /* every attribute's value, not only these two's (numbers had the line alone) */
      {" rounds=\"0x\"", "rounds", "rounds=\"0x\" of <run> is not an integer in [1, "},
      {" offset=\"1\" rounds=\"-2\"", "rounds", "rounds=\"-2\" of <run> is not an integer"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    Results r;
    char *err;
    assert_false(parse_run(bad[i][0], &r, &err));
    char *where = xasprintf("r.xml:4:%d: error: ", value_column(bad[i][0], bad[i][1]));
    assert_contains(err, where);
    assert_contains(err, bad[i][2]);
    free(where);
    free(err);
  }
}

/* text's messages (results_parse must refuse it), in a string to free. */
static char *errors_of(const char *text) {
  Results r;
  capture_start();
  assert_false(results_parse("r.xml", text, strlen(text), &r));
  return capture_end();
}

/* The other errors have columns too: an attribute's value, and an element's '<' for an
 * attribute it lacks, on the line the tag begins, where libxml2 gives the line it ends on. */
static void test_errors_at_columns(void **state) {
  (void)state;
  const char *head = "<?xml version=\"1.0\"?>\n<kasgen-results version=\"1\" spec=\"s\">\n"
                     "<device name=\"G\" copy-gbs=\"1\"/>\n";
  const char *cand = "  <candidate name=\"%s\" kernels=\"k\" nkernels=\"1\" predicted-ns=\"1\"\n"
                     "   measured-ns=\"%s\" melem-s=\"1\" compulsory-gbs=\"1\" copy-percent=\"1\"\n"
                     "   predicted-rank=\"%s\" measured-rank=\"1\" correct=\"1\" error=\"0\"/>\n";
  char *c1 = xasprintf(cand, "a", "0.13x", "1"), *c2 = xasprintf(cand, "a", "1", "1");
  /* lines: 4-5 <run>, 6-8 the first candidate, 9-11 the second */
  char *text = xasprintf("%s <run n=\"8\" reps=\"1\"\n  bytes-per-element=\"8\"/>\n%s%s"
                         "</kasgen-results>\n", head, c1, c2);
  char *err = errors_of(text);
  assert_contains(err, "r.xml:4:2: error: <run> lacks the attribute input-copies");
  assert_contains(err, "r.xml:7:17: error: measured-ns=\"0.13x\" of <candidate> is not a number");
  assert_contains(err, "r.xml:11:20: error: predicted-rank 1 appears twice");
  assert_contains(err, "r.xml:11:38: error: measured-rank 1 appears twice");
  assert_contains(err, "r.xml:9:20: error: candidate 'a' appears twice");
  free(err), free(text), free(c1), free(c2);
}

/* The file of results_text with `from` replaced by `to` (which must occur once). */
static char *edited(const char *from, const char *to) {
  char *text = results_text(""), *at = strstr(text, from);
  assert_non_null(at);
  char *out = xasprintf("%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  free(text);
  return out;
}

/* Values no run gives, as a hand edit makes them, are located errors (before: read, and shown
 * as "meas 0.0000" or "copy bandwidth 0.0 GB/s"): n 0, copy-gbs 0 or below, measured-ns 0 on a
 * correct candidate.  measured-ns 0 on a wrong one (nothing measured) still reads. */
static void test_values_no_run_gives(void **state) {
  (void)state;
  const char *bad[][3] = {
      {"<run n=\"8\"", "<run n=\"0\"", "r.xml:4:9: error: n=\"0\" of <run> is not an integer "
                                       "in [1, "},
      {"copy-gbs=\"1\"", "copy-gbs=\"0\"", "r.xml:3:28: error: copy-gbs of <device> is not "
                                           "positive"},
      {"copy-gbs=\"1\"", "copy-gbs=\"-3\"", "r.xml:3:28: error: copy-gbs of <device> is not "
                                            "positive"},
      {"measured-ns=\"1\"", "measured-ns=\"0\"", "r.xml:5:76: error: measured-ns of a correct "
                                                 "<candidate> is 0"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *text = edited(bad[i][0], bad[i][1]), *err = errors_of(text);
    assert_contains(err, bad[i][2]);
    free(err), free(text);
  }
  /* "nan" is said not to be a number, and not then also "is 0" (the value it was not read as) */
  char *nan_text = edited("measured-ns=\"1\"", "measured-ns=\"nan\""),
       *nan_err = errors_of(nan_text);
  assert_contains(nan_err, "measured-ns=\"nan\" of <candidate> is not a number");
  assert_null(strstr(nan_err, "is 0"));
  free(nan_err), free(nan_text);
  char *text = edited("measured-ns=\"1\"", "measured-ns=\"0\"");
  char *wrong = xasprintf("%.*scorrect=\"0\"%s", (int)(strstr(text, "correct=\"1\"") - text),
                          text, strstr(text, "correct=\"1\"") + strlen("correct=\"1\""));
  Results r;
  assert_true(results_parse("r.xml", wrong, strlen(wrong), &r));
  assert_false(results_row_counts(&r.rows[0]));
  results_free(&r);
  free(wrong), free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rank_order_is_the_brute_force),
      cmocka_unit_test(test_unranked_last),
      cmocka_unit_test(test_precision_and_layout_read),
      cmocka_unit_test(test_older_file_says_neither),
      cmocka_unit_test(test_bad_values_located),
      cmocka_unit_test(test_errors_at_columns),
      cmocka_unit_test(test_values_no_run_gives),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
