/*
 * test_timingdb.c — the timing database reader (src/timingdb.c): a good file's fields, lookup
 * interpolation and clamping, the lookup index against a plain scan, and a located error
 * (file:line) for every kind of bad input.
 */
#include "testutil.h"

#include <math.h>
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

/* The key of a routine timed in single precision on an element-major array at W = 4 (all a
 * version-1 database holds). */
static RoutineTiming key(const char *impl, RoutineKind kind, int index, Placement pl) {
  return (RoutineTiming){.impl = (char *)impl, .kind = kind, .index = index, .placement = pl,
                         .precision = PREC_SINGLE, .layout = LAYOUT_ELEMENT, .width = 4};
}

static bool find(const TimingDb *db, const char *impl, RoutineKind kind, int index, Placement pl,
                 int e, int smem, double *ns) {
  RoutineTiming k = key(impl, kind, index, pl);
  return timingdb_lookup(db, &k, e, smem, ns);
}

static double lookup(const TimingDb *db, RoutineKind k, Placement pl, int e, int smem) {
  double ns = -1;
  assert_true(find(db, "mmul33_2", k, 0, pl, e, smem, &ns));
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
  assert_false(find(db, "mmul33_2", ROUTINE_SAVE, 0, PLACE_SHARED, 32, 0, &ns));
  assert_false(find(db, "mmul33_2", ROUTINE_LOAD, 1, PLACE_SHARED, 32, 0, &ns));
  assert_false(find(db, "mmul33_1", ROUTINE_LOAD, 0, PLACE_SHARED, 32, 0, &ns));
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
  assert_false(find(db, "mmul33_2", ROUTINE_LOAD, 0, PLACE_SHARED, 32, 0, &ns));
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

/* A malformed file gets the first error libxml2 reports, the cause; not the last, one of its
 * consequences (what was reported before). */
static void test_first_xml_error(void **state) {
  (void)state;
  /* a start tag left open: "error parsing attribute name" at the '<' after it, then "attributes
   * construct error" and "Couldn't find end of Start Tag" */
  expect_error(HEAD "<device name=\"T\" </kasgen-timings>\n", "mem.xml:3:18: error: not "
               "well-formed XML: error parsing attribute name", "");
  assert_null(strstr(messages, "Couldn't find end"));
  /* cut off inside a start tag: the tag it leaves open, then "Premature end of data" in the
   * root */
  expect_error(HEAD "<device name=\"x\"\n", "mem.xml:4:1: error: not well-formed XML: "
               "Couldn't find end of Start Tag device line 3", "");
  assert_null(strstr(messages, "Premature end"));
}

static void test_errors(void **state) {
  (void)state;
  expect_error("", "mem.xml", "not well-formed XML");
  expect_error(HEAD DEVICE, "mem.xml:4", "not well-formed XML: Premature end");
  expect_error(HEAD "<device name=\"x\"\n", "mem.xml:", "not well-formed XML");
  expect_error("<?xml version=\"1.0\"?>\n<timings version=\"1\"/>\n", "mem.xml:2",
               "root element must be <kasgen-timings>");
  expect_error("<?xml version=\"1.0\"?>\n<kasgen-timings version=\"3\">\n" DEVICE TAIL,
               "mem.xml:2", "unsupported database version '3'");
  expect_error("<?xml version=\"1.0\"?>\n<kasgen-timings>\n" DEVICE TAIL, "mem.xml:2",
               "lacks the attribute 'version'");
  expect_error(HEAD TAIL, "mem.xml:2", "has no <device>");
  expect_error(HEAD "<device name=\"T\" slug=\"t\"/>\n" TAIL, "mem.xml:3",
               "lacks the attribute 'sm-count'");
  expect_error(HEAD DEVICE DEVICE TAIL, "mem.xml:4", "more than one <device>");
  /* found by fuzz_timingdb: a first <generated> without a date was read again (a leak, ASan) */
  expect_error(HEAD DEVICE "<generated nvcc=\"13\"/>\n<generated nvcc=\"13\"/>\n" TAIL,
               "mem.xml:5", "more than one <generated>");
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
               "mem.xml:5", "'extra-smem' must be an integer in [0, ");
  expect_error(HEAD DEVICE "<routine impl=\"a_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
                           "\n<point e=\"0\" extra-smem=\"0\" ns=\"1\"/></routine>\n" TAIL,
               "mem.xml:5", "'e' must be an integer in [1, ");
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
  /* two points of one E and extra shared memory with different times (the lookup took the
   * first, silently): at the second's line; other E or smem, or another routine's, are fine */
  expect_error(HEAD DEVICE "<routine impl=\"a_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
                           "\n<point e=\"4\" extra-smem=\"0\" ns=\"1\"/>"
                           "\n<point e=\"4\" extra-smem=\"64\" ns=\"1\"/>"
                           "\n<point e=\"8\" extra-smem=\"0\" ns=\"1\"/>"
                           "\n<point e=\"4\" extra-smem=\"0\" ns=\"2\"/></routine>\n" TAIL,
               "mem.xml:8",
               "duplicate point (e 4, extra-smem 0) of routine a_1; first at line 5");
  TimingDb *db = parse_quiet(HEAD DEVICE
                             "<routine impl=\"a_1\" kind=\"load\" index=\"0\" "
                             "placement=\"shared\"><point e=\"4\" extra-smem=\"0\" ns=\"1\"/>"
                             "<point e=\"4\" extra-smem=\"64\" ns=\"1\"/></routine>\n"
                             "<routine impl=\"b_1\" kind=\"load\" index=\"0\" "
                             "placement=\"shared\"><point e=\"4\" extra-smem=\"0\" ns=\"2\"/>"
                             "</routine>\n" TAIL);
  assert_non_null(db);
  timingdb_free(db);
  expect_error(HEAD "<device name=\"T\" slug=\"t\" sm-count=\"0\" smem-per-sm=\"1000\" "
                    "smem-per-block-optin=\"1000\" regs-per-sm=\"100\" regs-per-block=\"100\" "
                    "max-threads-per-sm=\"64\" max-blocks-per-sm=\"2\" "
                    "max-threads-per-block=\"64\" warp-size=\"32\" l2-bytes=\"10\" "
                    "copy-gbs=\"5\"/>\n" TAIL,
               "mem.xml:3", "'sm-count' must be an integer in [1, ");
  /* An external DTD must not be fetched (NONET) nor crash: a DOCTYPE is refused where it is. */
  expect_error("<?xml version=\"1.0\"?>\n<!DOCTYPE x SYSTEM \"http://example.invalid/x.dtd\">\n"
               "<x/>\n", "mem.xml:2", "document type declaration (<!DOCTYPE>) is not allowed");
}

#define ROUTINE(attrs, ns)                                                                    \
  "<routine impl=\"a_1\" kind=\"load\" index=\"0\" placement=\"shared\" " attrs ">"            \
  "<point e=\"1\" extra-smem=\"0\" ns=\"" ns "\"/></routine>\n"

/* Schema version 2 keys a routine also by precision, layout and width; a version-1 database
 * reads as single precision, element-major, W = 4. */
static void test_version_2_keys(void **state) {
  (void)state;
  const char *v2 = "<?xml version=\"1.0\"?>\n<kasgen-timings version=\"2\">\n" DEVICE
      ROUTINE("", "1")
      ROUTINE("precision=\"double\"", "2")
      ROUTINE("precision=\"double\" layout=\"component\"", "3")
      ROUTINE("width=\"1\"", "4")
      ROUTINE("precision=\"double\" width=\"1\"", "5") TAIL;
  TimingDb *db = parse_quiet(v2);
  assert_non_null(db);
  assert_int_equal(db->nroutines, 5);
  struct {
    Precision p;
    Layout l;
    int w;
    double ns;
  } want[] = {{PREC_SINGLE, LAYOUT_ELEMENT, 4, 1}, {PREC_DOUBLE, LAYOUT_ELEMENT, 2, 2},
              {PREC_DOUBLE, LAYOUT_COMPONENT, 2, 3}, {PREC_SINGLE, LAYOUT_ELEMENT, 1, 4},
              {PREC_DOUBLE, LAYOUT_ELEMENT, 1, 5}};
  for (int k = 0; k < 5; k++) {
    RoutineTiming key_k = key("a_1", ROUTINE_LOAD, 0, PLACE_SHARED);
    key_k.precision = want[k].p, key_k.layout = want[k].l, key_k.width = want[k].w;
    double ns = -1;
    assert_true(timingdb_lookup(db, &key_k, 1, 0, &ns));
    assert_true(ns == want[k].ns);
  }
  RoutineTiming absent = key("a_1", ROUTINE_LOAD, 0, PLACE_SHARED);
  absent.layout = LAYOUT_COMPONENT; /* single precision component-major: not timed */
  assert_null(timingdb_find(db, &absent));
  assert_true(timingdb_has(db, PREC_DOUBLE, LAYOUT_COMPONENT, 0));
  assert_true(timingdb_has(db, PREC_SINGLE, LAYOUT_ELEMENT, 1));
  assert_false(timingdb_has(db, PREC_SINGLE, LAYOUT_COMPONENT, 0));
  assert_false(timingdb_has(db, PREC_DOUBLE, LAYOUT_COMPONENT, 1));
  timingdb_free(db);
  /* the same routine twice in one precision is a duplicate; the message names the key */
  expect_error("<?xml version=\"1.0\"?>\n<kasgen-timings version=\"2\">\n" DEVICE
               ROUTINE("precision=\"double\"", "1") ROUTINE("precision=\"double\" width=\"2\"", "1")
               TAIL, "mem.xml:5", "duplicate routine (a_1 load 0 shared, double, element, width 2");
  expect_error(HEAD DEVICE ROUTINE("precision=\"half\"", "1") TAIL, "mem.xml:4",
               "unknown precision 'half'");
  expect_error(HEAD DEVICE ROUTINE("layout=\"soa\"", "1") TAIL, "mem.xml:4",
               "unknown layout 'soa'");
  expect_error(HEAD DEVICE ROUTINE("width=\"0\"", "1") TAIL, "mem.xml:4",
               "'width' must be an integer in [1, 16]");
  /* version 1: no routine of double precision */
  db = parse_quiet(HEAD DEVICE ROUTINE("", "1") TAIL);
  assert_non_null(db);
  assert_true(timingdb_has(db, PREC_SINGLE, LAYOUT_ELEMENT, 4));
  assert_false(timingdb_has(db, PREC_DOUBLE, LAYOUT_ELEMENT, 0));
  timingdb_free(db);
}

/* A <device> line with one attribute replaced. */
static char *device_with(const char *attr, const char *value) {
  const char *start = strstr(DEVICE, attr);
  const char *q1 = strchr(start, '"'), *q2 = strchr(q1 + 1, '"');
  return xasprintf(HEAD "%.*s%s%s" TAIL, (int)(q1 + 1 - DEVICE), DEVICE, value, q2);
}

/* Limits no GPU has are located errors at load time, not a SIGFPE or an overflow in the model
 * (warp-size 2^31-1 crashed model.c; 2^30 overflowed it under UBSan). */
static void test_absurd_device_limits(void **state) {
  (void)state;
  static const char *const cases[][3] = {
      {"warp-size=", "2147483647", "'warp-size' must be an integer in [1, 1024]"},
      {"warp-size=", "1073741824", "'warp-size' must be an integer in [1, 1024]"},
      {"warp-size=", "0", "'warp-size' must be an integer in [1, 1024]"},
      {"max-threads-per-block=", "2147483647", "'max-threads-per-block' must be an integer"},
      {"regs-per-sm=", "2147483647", "'regs-per-sm' must be an integer"},
      {"max-blocks-per-sm=", "2147483647", "'max-blocks-per-sm' must be an integer"},
      {"sm-count=", "-3", "'sm-count' must be an integer"},
      {"l2-bytes=", "9223372036854775807", "'l2-bytes' must be an integer"},
      {"copy-gbs=", "1e300", "'copy-gbs' = 1e+300 is outside"},
      {"copy-gbs=", "0", "'copy-gbs' = 0 is outside [1, 1e+06]"},
      /* passed a check for positive, then made every plan unlaunchable ("at most 1024 threads") */
      {"copy-gbs=", "1e-300", "'copy-gbs' = 1e-300 is outside [1, 1e+06]: not a real GPU's"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *text = device_with(cases[i][0], cases[i][1]);
    expect_error(text, "mem.xml:3:", cases[i][2]);
    free(text);
  }
}

/* A database whose every timing is 1e300 ns is the database's fault: refused at its line, before
 * the search can find every plan unlaunchable and blame the spec. */
static void test_absurd_timings(void **state) {
  (void)state;
  expect_error(HEAD DEVICE "<routine impl=\"a_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
                           "\n<point e=\"1\" extra-smem=\"0\" ns=\"1e300\"/></routine>\n" TAIL,
               "mem.xml:5", "'ns' = 1e+300 is outside [0, 1e+06]");
  expect_error(HEAD "<device name=\"T\" slug=\"t\" sm-count=\"2\" smem-per-sm=\"1000\" "
                    "smem-per-block-optin=\"1000\" regs-per-sm=\"100\" regs-per-block=\"100\" "
                    "max-threads-per-sm=\"64\" max-blocks-per-sm=\"2\" "
                    "max-threads-per-block=\"64\" warp-size=\"32\" l2-bytes=\"10\" "
                    "copy-gbs=\"5\" launch-overhead-ns=\"1e300\"/>\n" TAIL,
               "mem.xml:3", "'launch-overhead-ns' = 1e+300 is outside");
}

/* A DTD is refused where it starts, before any entity is declared or expanded: a 40,000-fold
 * reference to a 20-byte entity in one attribute once took over a minute in xmlGetProp. */
static void test_entities_are_never_expanded(void **state) {
  (void)state;
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, "<?xml version=\"1.0\"?>\n<!DOCTYPE kasgen-timings [\n"
               "<!ENTITY a \"aaaaaaaaaaaaaaaaaaaa\">\n]>\n<kasgen-timings version=\"1\">\n"
               "<device name=\"");
  for (int i = 0; i < 40000; i++) sb_puts(&sb, "&a;");
  sb_puts(&sb, "\" slug=\"t\"/>\n" TAIL);
  expect_error(sb.data, "mem.xml:2:", "document type declaration (<!DOCTYPE>) is not allowed");
  sb_free(&sb);
  /* nested entities ("billion laughs") meet the same refusal */
  expect_error("<?xml version=\"1.0\"?>\n<!DOCTYPE x [<!ENTITY a \"aaaaaaaaaa\">"
               "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\"><!ENTITY c \"&b;&b;&b;&b;&b;&b;\">]>\n"
               "<x a=\"&c;&c;&c;\"/>\n", "mem.xml:2:", "document type declaration");
  /* an undeclared entity is malformed XML, and the five predefined ones still work */
  expect_error(HEAD "<device name=\"&a;\"/>\n" TAIL, "mem.xml:3", "not well-formed XML");
  TimingDb *db = parse_quiet(HEAD "<device name=\"A &amp; B &lt;&#33;\" slug=\"t\" sm-count=\"2\" "
                             "smem-per-sm=\"1000\" smem-per-block-optin=\"1000\" "
                             "regs-per-sm=\"100\" regs-per-block=\"100\" "
                             "max-threads-per-sm=\"64\" max-blocks-per-sm=\"2\" "
                             "max-threads-per-block=\"64\" warp-size=\"32\" l2-bytes=\"10\" "
                             "copy-gbs=\"5\"/>\n" TAIL);
  assert_non_null(db);
  assert_string_equal(db->dev.name, "A & B <!");
  timingdb_free(db);
}

/* 100,000 routines: duplicates are found by sorting (the pairwise check took over a minute),
 * reported at the second one's line with the first one's; lookups still find every routine. */
static void test_many_routines(void **state) {
  (void)state;
  enum { N = 100000 };
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, HEAD DEVICE);
  for (int i = N - 1; i >= 0; i--) /* reverse order: the loader sorts */
    sb_printf(&sb, "<routine impl=\"f%d_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
                   "<point e=\"32\" extra-smem=\"0\" ns=\"%d\"/></routine>\n", i, i);
  size_t before_tail = sb.len;
  sb_puts(&sb, TAIL);
  TimingDb *db = parse_quiet(sb.data);
  assert_non_null(db);
  assert_int_equal(db->nroutines, N);
  double ns = -1;
  for (int i = 0; i < N; i += 997) {
    char impl[32];
    snprintf(impl, sizeof impl, "f%d_1", i);
    assert_true(find(db, impl, ROUTINE_LOAD, 0, PLACE_SHARED, 32, 0, &ns));
    assert_true(ns == i);
  }
  assert_false(find(db, "f7_1", ROUTINE_SAVE, 0, PLACE_SHARED, 32, 0, &ns));
  timingdb_free(db);
  /* the same routine again at the end: line 4 + N */
  sb.len = before_tail;
  sb_puts(&sb, "<routine impl=\"f5_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
               "<point e=\"32\" extra-smem=\"0\" ns=\"1\"/></routine>\n" TAIL);
  char *where = xasprintf("mem.xml:%d:", 4 + N);
  char *first = xasprintf("first at line %d", 4 + N - 1 - 5);
  expect_error(sb.data, where, "duplicate routine (f5_1 load 0 shared");
  assert_non_null(strstr(messages, first));
  free(where);
  free(first);
  sb_free(&sb);
}

static void test_error_files(void **state) {
  (void)state;
  TimingDb *db = load_quiet(FIXTURES "truncated.xml");
  assert_null(db);
  assert_non_null(strstr(messages, FIXTURES "truncated.xml:4:1: error: not well-formed XML"));
  /* cut off inside <device>: no error about the attributes the cut took away */
  assert_null(strstr(messages, "lacks the attribute"));
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

/* The loader's index (binary searches over points sorted by E and shared memory) gives exactly
 * what a scan of the points gives, on the shipped H100 database at E and shared-memory values on,
 * between and beyond the measured ones, and on a routine with unordered points (repeated ones
 * are an error, test_errors); and min_ns bounds every interpolated value from below (the grid
 * floor stops on it). */
static double scanned_ns(const RoutineTiming *r, int e, int smem) {
  RoutineTiming plain = *r; /* without the index: the scan */
  plain.by_e = NULL;
  return timingdb_routine_ns(&plain, e, smem);
}

static void check_index_against_scan(const RoutineTiming *r) {
  static const int es[] = {1, 3, 4, 8, 12, 16, 32, 48, 64, 96, 128, 192, 256, 300, 1024};
  static const int smems[] = {0, 1, 16, 1000, 4096, 8192, 12345, 16384, 32768, 65536, 100000,
                              150000, 232448, 300000};
  for (size_t a = 0; a < sizeof es / sizeof *es; a++)
    for (size_t b = 0; b < sizeof smems / sizeof *smems; b++) {
      double indexed = timingdb_routine_ns(r, es[a], smems[b]);
      assert_true(indexed == scanned_ns(r, es[a], smems[b]));
      assert_true(indexed >= r->min_ns);
    }
}

static void test_index_equals_scan(void **state) {
  (void)state;
  TimingDb *db = load_quiet("benchmarks/nvidia-h100-80gb-hbm3.xml");
  assert_non_null(db);
  assert_true(db->nroutines > 300);
  for (int i = 0; i < db->nroutines; i++) check_index_against_scan(&db->routines[i]);
  for (int i = 1; i < db->nroutines; i++) /* by_min_ns orders the routines by min_ns */
    assert_true(db->routines[db->by_min_ns[i - 1]].min_ns <= db->routines[db->by_min_ns[i]].min_ns);
  timingdb_free(db);
  const char *text =
      "<kasgen-timings version=\"1\"><device name=\"G\" slug=\"g\" sm-count=\"1\" "
      "smem-per-sm=\"233472\" smem-per-block-optin=\"232448\" regs-per-sm=\"65536\" "
      "regs-per-block=\"65536\" max-threads-per-sm=\"2048\" max-blocks-per-sm=\"32\" "
      "max-threads-per-block=\"1024\" warp-size=\"32\" l2-bytes=\"1\" copy-gbs=\"1\"/>"
      "<routine impl=\"x_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
      "<point e=\"32\" extra-smem=\"8192\" ns=\"5\"/><point e=\"8\" extra-smem=\"0\" ns=\"2\"/>"
      "<point e=\"32\" extra-smem=\"0\" ns=\"3\"/><point e=\"32\" extra-smem=\"4096\" ns=\"7\"/>"
      "<point e=\"8\" extra-smem=\"16384\" ns=\"9\"/><point e=\"64\" extra-smem=\"4096\" ns=\"1\"/>"
      "</routine></kasgen-timings>";
  db = parse_quiet(text);
  if (!db) fail_msg("%s", messages);
  assert_int_equal(db->routines[0].ne, 3);
  assert_true(db->routines[0].min_ns == 1);
  check_index_against_scan(&db->routines[0]);
  timingdb_free(db);
}

/* The numbers of a database (and of results files and the store, through the same parser):
 * plain decimals only, not the other forms strtod and strtol take. */
static void test_plain_decimals(void **state) {
  (void)state;
  static const char *const good[] = {"0", "12", "-3", "+4", "0.5", ".5", "5.", "1e-6", "2E+3",
                                     "1.5e2"};
  static const double values[] = {0, 12, -3, 4, 0.5, 0.5, 5, 1e-6, 2e3, 150};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    double v = NAN;
    assert_true(parse_decimal(good[i], &v));
    assert_true(v == values[i]);
  }
  static const char *const bad[] = {"", " 5", "5 ", "0x1p3", "0X10", "inf", "nan", "-infinity",
                                    ".", "e5", "1e", "1e+", "1.2.3", "--1", "1e-400", "1e400"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    double v = 7;
    assert_false(parse_decimal(bad[i], &v));
    assert_true(v == 7); /* untouched */
  }
  long n = 0;
  assert_true(parse_decimal_long("-42", &n) && n == -42);
  assert_false(parse_decimal_long(" 42", &n));
  assert_false(parse_decimal_long("4.0", &n));
  assert_false(parse_decimal_long("0x10", &n));
  assert_false(parse_decimal_long("99999999999999999999", &n));
  expect_error(HEAD DEVICE "<routine impl=\"a_1\" kind=\"load\" index=\"0\" placement=\"shared\">"
               "<point e=\"32\" extra-smem=\"0\" ns=\"0x1p3\"/></routine>" TAIL,
               "mem.xml:4", "'ns' must be a finite non-negative number, not '0x1p3'");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_good_file),     cmocka_unit_test(test_lookup_interpolates_and_clamps),
      cmocka_unit_test(test_analytic),      cmocka_unit_test(test_minimal_ok),
      cmocka_unit_test(test_errors),        cmocka_unit_test(test_first_xml_error),
      cmocka_unit_test(test_error_files),   cmocka_unit_test(test_default_path),
      cmocka_unit_test(test_absurd_device_limits),
      cmocka_unit_test(test_absurd_timings), cmocka_unit_test(test_entities_are_never_expanded),
      cmocka_unit_test(test_many_routines), cmocka_unit_test(test_index_equals_scan),
      cmocka_unit_test(test_version_2_keys), cmocka_unit_test(test_plain_decimals),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  free(messages);
  return rc;
}
