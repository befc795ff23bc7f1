/*
 * test_timingdb.c — the timing database reader (src/timingdb.c): a good file's fields, lookup
 * interpolation and clamping, and a located error (file:line) for every kind of bad input.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIXTURES "tests/fixtures/db/"

/* What the last parse_quiet/load_quiet wrote to stderr (malloc'ed). */
static char *messages;

static TimingDb *parse_quiet(const char *text) {
  capture_start();
  TimingDb *db = timingdb_parse("mem.xml", text, strlen(text));
  free(messages);
  messages = capture_end();
  return db;
}

static TimingDb *load_quiet(const char *path) {
  capture_start();
  TimingDb *db = timingdb_load(path);
  free(messages);
  messages = capture_end();
  return db;
}

static void test_good_file(void **state) {
  (void)state;
  TimingDb *db = load_quiet(FIXTURES "good.xml");
  assert_non_null(db);
  assert_string_equal(messages, "");
  assert_false(db->analytic);
  assert_string_equal(db->dev.name, "Test GPU");
  assert_string_equal(db->dev.slug, "test-gpu");
  assert_int_equal(db->dev.sm_count, 132);
  assert_int_equal(db->dev.smem_per_block_optin, 232448);
  assert_int_equal(db->dev.max_blocks_per_sm, 32);
  assert_int_equal(db->dev.l2_bytes, 52428800L);
  assert_true(db->dev.copy_gbs == 3000.0);
  assert_true(db->dev.launch_overhead_ns == 2000.0);
  assert_string_equal(db->nvcc_version, "13.0");
  assert_int_equal(db->nroutines, 3);
  assert_int_equal(db->routines[2].kind, ROUTINE_SAVE);
  assert_int_equal(db->routines[2].placement, PLACE_REGISTER);
  assert_int_equal(db->routines[0].npoints, 4);
  timingdb_free(db);
}

static double lookup(const TimingDb *db, RoutineKind k, Placement pl, int e, int smem) {
  double ns = -1;
  assert_true(timingdb_lookup(db, "mmul33_2", k, 0, pl, e, smem, &ns));
  return ns;
}

static void test_lookup_interpolates_and_clamps(void **state) {
  (void)state;
  TimingDb *db = load_quiet(FIXTURES "good.xml");
  assert_non_null(db);
  /* exact points */
  assert_float_equal(lookup(db, ROUTINE_LOAD, PLACE_SHARED, 32, 0), 1.0, 1e-12);
  assert_float_equal(lookup(db, ROUTINE_LOAD, PLACE_SHARED, 64, 1000), 5.0, 1e-12);
  /* linear in extra smem */
  assert_float_equal(lookup(db, ROUTINE_LOAD, PLACE_SHARED, 32, 250), 1.25, 1e-12);
  /* bilinear: at e=48 halfway, smem 500: (1.5 + 4.0) / 2 */
  assert_float_equal(lookup(db, ROUTINE_LOAD, PLACE_SHARED, 48, 500), 2.75, 1e-12);
  /* clamped outside */
  assert_float_equal(lookup(db, ROUTINE_LOAD, PLACE_SHARED, 8, 0), 1.0, 1e-12);
  assert_float_equal(lookup(db, ROUTINE_LOAD, PLACE_SHARED, 512, 99999), 5.0, 1e-12);
  /* single point: constant */
  assert_float_equal(lookup(db, ROUTINE_COMPUTE, PLACE_SHARED, 1024, 77), 0.5, 1e-12);
  /* linear in e */
  assert_float_equal(lookup(db, ROUTINE_SAVE, PLACE_REGISTER, 32, 0), 0.5, 1e-12);
  /* absent: other placement, other index, other impl */
  double ns;
  assert_false(timingdb_lookup(db, "mmul33_2", ROUTINE_SAVE, 0, PLACE_SHARED, 32, 0, &ns));
  assert_false(timingdb_lookup(db, "mmul33_2", ROUTINE_LOAD, 1, PLACE_SHARED, 32, 0, &ns));
  assert_false(timingdb_lookup(db, "mmul33_1", ROUTINE_LOAD, 0, PLACE_SHARED, 32, 0, &ns));
  timingdb_free(db);
}

static void test_analytic(void **state) {
  (void)state;
  TimingDb *db = timingdb_analytic();
  assert_true(db->analytic);
  assert_int_equal(db->dev.sm_count, 132);
  assert_int_equal(db->dev.smem_per_sm, 228 * 1024);
  assert_int_equal(db->dev.smem_per_block_optin, 227 * 1024);
  assert_int_equal(db->dev.regs_per_sm, 65536);
  assert_int_equal(db->dev.max_threads_per_sm, 2048);
  assert_int_equal(db->dev.max_blocks_per_sm, 32);
  assert_int_equal(db->nroutines, 0);
  double ns;
  assert_false(timingdb_lookup(db, "mmul33_2", ROUTINE_LOAD, 0, PLACE_SHARED, 32, 0, &ns));
  timingdb_free(db);
}

/* Expects the text to be rejected with a message that contains `where` and `what`. */
static void expect_error(const char *text, const char *where, const char *what) {
  TimingDb *db = parse_quiet(text);
  if (db || !strstr(messages, where) || !strstr(messages, what)) {
    fprintf(stderr, "expected error '%s' ... '%s', got:\n%s", where, what, messages);
    timingdb_free(db);
    fail();
  }
}

#define HEAD "<?xml version=\"1.0\"?>\n<kasgen-timings version=\"1\">\n"
#define DEVICE                                                                                \
  "<device name=\"T\" slug=\"t\" sm-count=\"2\" smem-per-sm=\"1000\" "                        \
  "smem-per-block-optin=\"1000\" regs-per-sm=\"100\" regs-per-block=\"100\" "                 \
  "max-threads-per-sm=\"64\" max-blocks-per-sm=\"2\" max-threads-per-block=\"64\" "           \
  "warp-size=\"32\" l2-bytes=\"10\" copy-gbs=\"5\"/>\n"
#define TAIL "</kasgen-timings>\n"

static void test_minimal_ok(void **state) {
  (void)state;
  TimingDb *db = parse_quiet(HEAD DEVICE TAIL);
  assert_non_null(db);
  assert_int_equal(db->nroutines, 0);
  assert_true(db->dev.launch_overhead_ns > 0); /* default when absent */
  timingdb_free(db);
}

static void test_errors(void **state) {
  (void)state;
  expect_error("", "mem.xml", "malformed XML");
  expect_error(HEAD DEVICE, "mem.xml:4", "malformed XML: Premature end");
  expect_error(HEAD "<device name=\"x\"\n", "mem.xml:", "malformed XML");
  expect_error("<?xml version=\"1.0\"?>\n<timings version=\"1\"/>\n", "mem.xml:2",
               "root element must be <kasgen-timings>");
  expect_error("<?xml version=\"1.0\"?>\n<kasgen-timings version=\"2\">\n" DEVICE TAIL,
               "mem.xml:2", "unsupported database version '2'");
  expect_error("<?xml version=\"1.0\"?>\n<kasgen-timings>\n" DEVICE TAIL, "mem.xml:2",
               "lacks the attribute 'version'");
  expect_error(HEAD TAIL, "mem.xml:2", "has no <device>");
  expect_error(HEAD "<device name=\"T\" slug=\"t\"/>\n" TAIL, "mem.xml:3",
               "lacks the attribute 'sm-count'");
  expect_error(HEAD DEVICE DEVICE TAIL, "mem.xml:4", "more than one <device>");
  expect_error(HEAD DEVICE "<frobnicate/>\n" TAIL, "mem.xml:4", "unknown element <frobnicate>");
  expect_error(HEAD DEVICE "<routine impl=\"a_1\" kind=\"copy\" index=\"0\" placement=\"shared\">"
                           "<point e=\"1\" extra-smem=\"0\" ns=\"1\"/></routine>\n" TAIL,
               "mem.xml:4", "unknown routine kind 'copy'");
  expect_error(HEAD DEVICE "<routine impl=\"a_1\" kind=\"load\" index=\"0\" placement=\"global\">"
                           "<point e=\"1\" extra-smem=\"0\" ns=\"1\"/></routine>\n" TAIL,
               "mem.xml:4", "unknown placement 'global'");
  expect_error(HEAD DEVICE "<routine impl=\"a_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
                           "\n<point e=\"1\" extra-smem=\"0\" ns=\"nan\"/></routine>\n" TAIL,
               "mem.xml:5", "'ns' must be a finite non-negative number, not 'nan'");
  expect_error(HEAD DEVICE "<routine impl=\"a_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
                           "\n<point e=\"1\" extra-smem=\"0\" ns=\"inf\"/></routine>\n" TAIL,
               "mem.xml:5", "finite non-negative");
  expect_error(HEAD DEVICE "<routine impl=\"a_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
                           "\n<point e=\"1\" extra-smem=\"-5\" ns=\"1\"/></routine>\n" TAIL,
               "mem.xml:5", "'extra-smem' must be a non-negative integer");
  expect_error(HEAD DEVICE "<routine impl=\"a_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
                           "\n<point e=\"0\" extra-smem=\"0\" ns=\"1\"/></routine>\n" TAIL,
               "mem.xml:5", "'e' must be positive");
  expect_error(HEAD DEVICE "<routine impl=\"a_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
                           "\n<point e=\"1\" ns=\"1\"/></routine>\n" TAIL,
               "mem.xml:5", "lacks the attribute 'extra-smem'");
  expect_error(HEAD DEVICE "<routine impl=\"a_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
                           "</routine>\n" TAIL,
               "mem.xml:4", "has no <point>");
  expect_error(HEAD DEVICE
               "<routine impl=\"a_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
               "<point e=\"1\" extra-smem=\"0\" ns=\"1\"/></routine>\n"
               "<routine impl=\"a_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
               "<point e=\"1\" extra-smem=\"0\" ns=\"1\"/></routine>\n" TAIL,
               "mem.xml:5", "duplicate routine");
  expect_error(HEAD "<device name=\"T\" slug=\"t\" sm-count=\"0\" smem-per-sm=\"1000\" "
                    "smem-per-block-optin=\"1000\" regs-per-sm=\"100\" regs-per-block=\"100\" "
                    "max-threads-per-sm=\"64\" max-blocks-per-sm=\"2\" "
                    "max-threads-per-block=\"64\" warp-size=\"32\" l2-bytes=\"10\" "
                    "copy-gbs=\"5\"/>\n" TAIL,
               "mem.xml:3", "must be positive");
  /* An external entity must not be fetched (NONET) nor crash; it is just not a database. */
  expect_error("<?xml version=\"1.0\"?>\n<!DOCTYPE x SYSTEM \"http://example.invalid/x.dtd\">\n"
               "<x/>\n", "mem.xml", "root element");
}

static void test_error_files(void **state) {
  (void)state;
  TimingDb *db = load_quiet(FIXTURES "truncated.xml");
  assert_null(db);
  assert_non_null(strstr(messages, FIXTURES "truncated.xml:"));
  assert_non_null(strstr(messages, "malformed XML"));
  db = load_quiet(FIXTURES "bad_negative.xml");
  assert_null(db);
  assert_non_null(strstr(messages, FIXTURES "bad_negative.xml:8:"));
  assert_non_null(strstr(messages, "'-1.0'"));
  db = load_quiet(FIXTURES "does_not_exist.xml");
  assert_null(db);
  assert_non_null(strstr(messages, "cannot read"));
}

static void test_default_path(void **state) {
  (void)state;
  /* From the repository root the database is found beside a binary in build-x/ (../benchmarks)
   * if it exists; when it does not, NULL (the caller falls back to the analytic model). */
  char *p = timingdb_default_path("build-none/kasgen");
  if (access("benchmarks/nvidia-h100-80gb-hbm3.xml", R_OK) == 0) {
    assert_non_null(p);
    assert_non_null(strstr(p, "benchmarks/nvidia-h100-80gb-hbm3.xml"));
  } else {
    assert_null(p);
  }
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_good_file),     cmocka_unit_test(test_lookup_interpolates_and_clamps),
      cmocka_unit_test(test_analytic),      cmocka_unit_test(test_minimal_ok),
      cmocka_unit_test(test_errors),        cmocka_unit_test(test_error_files),
      cmocka_unit_test(test_default_path),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  free(messages);
  return rc;
}
