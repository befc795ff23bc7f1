/*
 * test_calibrate.c — the fit of the model's constants to measured candidates (src/calibrate.c,
 * docs/model.md "Calibration") on synthetic samples: constants that generated the times are
 * found again, a fit is never worse than the best point of a brute-force grid over the scales,
 * the split of IO into its parts changes nothing without a calibration, the requests' overlap
 * and coverage slope give what their formula says, a store of the first form (one work scale)
 * still reads, its IO scales 1, its requests summed, no cost per warp, and the held-out
 * figures of a spec come from constants fitted without its runs.
 */
#include "testutil.h"

#include <math.h>

/* A deterministic pseudo-random number in [lo, hi) (the test needs no statistics). */
static double uniform(unsigned *state, double lo, double hi) {
  *state = *state * 1103515245u + 12345u;
  return lo + (hi - lo) * ((*state >> 8) & 0xffff) / 65536.0;
}

/* A kernel's terms of the kinds the model gives: IO of plain moves, of slices whose L2 write
 * requests set their time (saved by one thread or by several) and of overfetched lines, a
 * compute side that sometimes dominates, a floor, barriers. */
static ModelTerms random_terms(unsigned *state) {
  ModelTerms t = {0};
  double moves = uniform(state, 0.02, 0.2);
  t.requests_one = uniform(state, 0, 1) < 0.4 ? uniform(state, 0.01, 0.15) : 0;
  t.requests_shared = uniform(state, 0, 1) < 0.4 ? uniform(state, 0.01, 0.15) : 0;
  t.requests_shared_covered = t.requests_shared * uniform(state, 0.25, 1);
  t.lines = uniform(state, 0, 1) < 0.3 ? uniform(state, 0.005, 0.03) : 0;
  t.io = moves + t.requests_one + t.requests_shared + t.lines;
  t.compute = uniform(state, 0.2, 1.2) * t.io;
  t.work = fmax(t.io, t.compute);
  t.floor = uniform(state, 0.002, 0.01);
  t.barrier = uniform(state, 0, 1) < 0.5 ? uniform(state, 0.0005, 0.02) : 0;
  /* barriers x warps per block over ~150000 resident elements */
  t.barrier_warps = t.barrier > 0 ? uniform(state, 1, 12) * uniform(state, 1, 12) / 150000 : 0;
  /* the loads' L1 wavefronts: most well under IO, some (owner loads of long records) above */
  t.wavefronts = t.io * (uniform(state, 0, 1) < 0.3 ? uniform(state, 0.9, 1.6) : 0.5);
  return t;
}

/* Adds n candidates of 1-3 kernels (random_terms from seed), timed by calibration `truth` times
 * (1 + noise * u), u uniform in [-1, 1). */
static void add_timed(CalibrationSamples *all, unsigned seed, int n, const ModelCalibration *truth,
                      double noise) {
  unsigned state = seed;
  for (int i = 0; i < n; i++) {
    ModelTerms terms[3];
    int nk = 1 + i % 3;
    double launch = 0.0006 * nk, t = launch;
    for (int k = 0; k < nk; k++) {
      terms[k] = random_terms(&state);
      t += model_combine_terms(&terms[k], truth);
    }
    calibration_add_terms(all, terms, nk, launch, t * (1 + noise * uniform(&state, -1, 1)));
  }
}

static CalibrationSamples *samples(int n, const ModelCalibration *truth, double noise) {
  CalibrationSamples *all = calibration_samples_new();
  add_timed(all, 7, n, truth, noise);
  return all;
}

static const ModelCalibration TRUTH = {.present = true,
                                       .work_scale = 0.95,
                                       .requests_one_scale = 1.3,
                                       .requests_shared_scale = 0.6,
                                       .lines_scale = 0.7,
                                       .requests_overlap = 1.8,
                                       .coverage_slope = -1.0,
                                       .unhidden_share = 0.15,
                                       .wavefront_scale = 1.2,
                                       .barrier_scale = 0.8,
                                       .barrier_warp_ns = 30,
                                       .kernel_ns = 0.002};

static void test_fit_finds_the_constants(void **state) {
  (void)state;
  CalibrationSamples *all = samples(120, &TRUTH, 0);
  double fitted, plain;
  ModelCalibration c = calibration_fit(all, &fitted, &plain);
  assert_true(c.present);
  assert_int_equal(c.ncandidates, 120);
  assert_true(fabs(c.work_scale - TRUTH.work_scale) < 1e-3);
  assert_true(fabs(c.requests_one_scale - TRUTH.requests_one_scale) < 1e-2);
  assert_true(fabs(c.requests_shared_scale - TRUTH.requests_shared_scale) < 1e-2);
  assert_true(fabs(c.lines_scale - TRUTH.lines_scale) < 2e-2);
  assert_true(fabs(c.requests_overlap - TRUTH.requests_overlap) < 2e-2);
  assert_true(fabs(c.coverage_slope - TRUTH.coverage_slope) < 2e-2);
  assert_true(fabs(c.unhidden_share - TRUTH.unhidden_share) < 1e-2);
  assert_true(fabs(c.wavefront_scale - TRUTH.wavefront_scale) < 1e-2);
  assert_true(fabs(c.barrier_scale - TRUTH.barrier_scale) < 2e-2);
  assert_true(fabs(c.barrier_warp_ns - TRUTH.barrier_warp_ns) < 0.5);
  assert_true(fabs(c.kernel_ns - TRUTH.kernel_ns) < 1e-4);
  assert_true(fitted < 1e-3);
  assert_true(plain > 0.05); /* the truth is far from the uncalibrated model */
  calibration_samples_free(all);
}

/* The error of c over the samples' candidates, as calibrate.c measures it (the oracle's own
 * sum, from model_combine_terms). */
static double rms_of(const ModelCalibration *truth, double noise, int n,
                     const ModelCalibration *c) {
  unsigned state = 7;
  double e = 0;
  for (int i = 0; i < n; i++) {
    int nk = 1 + i % 3;
    double launch = 0.0006 * nk, t = launch, p = launch;
    for (int k = 0; k < nk; k++) {
      ModelTerms terms = random_terms(&state);
      t += model_combine_terms(&terms, truth);
      p += model_combine_terms(&terms, c);
    }
    double measured = t * (1 + noise * uniform(&state, -1, 1));
    e += (p - measured) * (p - measured) / (measured * measured);
  }
  return sqrt(e / n);
}

/* Against brute force: with 10% noise no constants fit exactly; the fit's error is no larger
 * than that of any point of a grid over the four scales (the other constants at the truth's
 * values). */
static void test_fit_beats_a_grid(void **state) {
  (void)state;
  const int n = 60;
  CalibrationSamples *all = samples(n, &TRUTH, 0.1);
  double fitted, plain;
  ModelCalibration c = calibration_fit(all, &fitted, &plain);
  assert_true(fabs(rms_of(&TRUTH, 0.1, n, &c) - fitted) < 1e-9);
  double grid_best = INFINITY;
  for (int a = 0; a <= 10; a++)
    for (int r1 = 0; r1 <= 8; r1++)
      for (int rs = 0; rs <= 8; rs++)
        for (int l = 0; l <= 8; l++) {
          ModelCalibration g = TRUTH;
          g.work_scale = 0.5 + 0.1 * a;
          g.requests_one_scale = 0.25 + 0.25 * r1;
          g.requests_shared_scale = 0.25 + 0.25 * rs;
          g.lines_scale = 0.25 + 0.25 * l;
          grid_best = fmin(grid_best, rms_of(&TRUTH, 0.1, n, &g));
        }
  assert_true(fitted <= grid_best + 1e-12);
  calibration_samples_free(all);
}

/* Without a calibration, and with every scale 1, the requests summed and no coverage slope,
 * the parts of IO change nothing. */
static void test_unit_scales_are_the_plain_model(void **state) {
  (void)state;
  unsigned s = 11;
  ModelCalibration unit = {.present = true, .work_scale = 1, .requests_one_scale = 1,
                           .requests_shared_scale = 1, .lines_scale = 1, .requests_overlap = 1,
                           .barrier_scale = 1};
  for (int i = 0; i < 100; i++) {
    ModelTerms t = random_terms(&s);
    double plain = model_combine_terms(&t, NULL);
    assert_true(fabs(model_combine_terms(&t, &unit) - plain) < 1e-15 * fmax(1, plain));
  }
}

/* The requests' overlap and coverage slope against the formula worked by hand: a kernel of
 * 0.3 ns of other moves and 0.1 ns of several threads' requests, a quarter of which save whole
 * records (covered 0.025 + 0.075 / 4 = 0.04375; the requests then 0.1 + s * (0.04375 - 0.05)). */
static void test_overlap_and_coverage(void **state) {
  (void)state;
  ModelTerms t = {.io = 0.4, .compute = 0.1, .requests_shared = 0.1,
                  .requests_shared_covered = 0.04375};
  ModelCalibration c = {.present = true, .work_scale = 1, .requests_one_scale = 1,
                        .requests_shared_scale = 1, .lines_scale = 1, .requests_overlap = 1};
  assert_true(fabs(model_calibrated_work(&t, &c) - 0.4) < 1e-15);
  c.coverage_slope = -1.6; /* requests 0.1 + 1.6 * 0.00625 = 0.11 */
  assert_true(fabs(model_calibrated_work(&t, &c) - 0.41) < 1e-15);
  c.requests_overlap = 2; /* hypot(0.3, 0.11) */
  assert_true(fabs(model_calibrated_work(&t, &c) - hypot(0.3, 0.11)) < 1e-15);
  c.requests_shared_scale = 2; /* requests 0.22 */
  assert_true(fabs(model_calibrated_work(&t, &c) - hypot(0.3, 0.22)) < 1e-15);
  t.compute = 0.5; /* the compute side dominates */
  assert_true(fabs(model_calibrated_work(&t, &c) - 0.5) < 1e-15);
}

static char *write_store(const char *calibration) {
  char dir[] = "/tmp/kasgen-calib-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char *store = xasprintf("%s/db.measured.xml", dir);
  FILE *f = fopen(store, "w");
  assert_non_null(f);
  fprintf(f, "<?xml version=\"1.0\"?>\n<kasgen-measured version=\"1\">\n  %s\n"
             "</kasgen-measured>\n",
          calibration);
  fclose(f);
  return store;
}

static void remove_store(char *store) {
  unlink(store);
  *strrchr(store, '/') = '\0';
  rmdir(store);
  free(store);
}

/* A store written before the IO scales: IO scaled as a whole. */
static void test_store_of_the_first_form(void **state) {
  (void)state;
  char *store = write_store("<calibration work-scale=\"0.9\" barrier-scale=\"0.5\" "
                            "kernel-ns=\"0\" specs=\"2\" candidates=\"30\" fitted-on=\"a b\"/>");
  char *db_path = xasprintf("%.*s.xml", (int)(strlen(store) - strlen(".measured.xml")), store);
  TimingDb db = {.path = db_path};
  ModelCalibration c;
  assert_true(calibration_read(&db, &c, NULL));
  assert_true(c.present);
  assert_true(c.work_scale == 0.9 && c.barrier_scale == 0.5);
  assert_true(c.requests_one_scale == 1 && c.requests_shared_scale == 1 && c.lines_scale == 1);
  assert_true(c.requests_overlap == 1 && c.coverage_slope == 0 && c.barrier_warp_ns == 0);
  assert_true(c.unhidden_share == 0 && c.wavefront_scale == 0);
  free(db_path);
  remove_store(store);
}

/* An IO scale, the requests' overlap or the coverage slope out of range is a located error. */
static void store_refused(const char *constant, const char *message) {
  char *calibration = xasprintf("<calibration work-scale=\"0.9\" %s barrier-scale=\"0.5\" "
                                "kernel-ns=\"0\" specs=\"2\" candidates=\"30\" "
                                "fitted-on=\"a b\"/>",
                                constant);
  char *store = write_store(calibration);
  free(calibration);
  char *db_path = xasprintf("%.*s.xml", (int)(strlen(store) - strlen(".measured.xml")), store);
  TimingDb db = {.path = db_path};
  ModelCalibration c;
  capture_start();
  bool ok = calibration_read(&db, &c, NULL);
  char *err = capture_end();
  assert_false(ok);
  assert_non_null(strstr(err, message));
  free(err);
  free(db_path);
  remove_store(store);
}

static void test_store_scale_out_of_range(void **state) {
  (void)state;
  const char *range = "db.measured.xml:3: error: the calibration's constants are out of range";
  store_refused("requests-one-scale=\"0\"", range);
  store_refused("requests-overlap=\"0.5\"", range);
  store_refused("coverage-slope=\"-2\"", range);
  store_refused("barrier-warp-ns=\"-1\"", range);
  store_refused("unhidden-share=\"1.5\"", range);
  store_refused("unhidden-share=\"-0.1\"", range);
  store_refused("wavefront-scale=\"11\"", range);
  store_refused("requests-overlap=\"nan\"",
                "db.measured.xml:3: error: requests-overlap of <calibration> is not a number");
}

/* calibrate replaces a store whose constants are out of range (one a kasgen before 2026-11-29
 * stored: barrier-scale 296): read to be fitted again it is a warning, the constants absent;
 * read by any other command it stays an error, with what to do. */
static void test_store_out_of_range_is_replaced(void **state) {
  (void)state;
  char *store = write_store("<calibration work-scale=\"1.5\" barrier-scale=\"296.1751\" "
                            "kernel-ns=\"1.097559\" specs=\"1\" candidates=\"10\" "
                            "fitted-on=\"stvenant\"/>");
  char *db_path = xasprintf("%.*s.xml", (int)(strlen(store) - strlen(".measured.xml")), store);
  TimingDb db = {.path = db_path};
  ModelCalibration c = {.present = true};
  capture_start();
  bool ok = calibration_read_to_refit(&db, &c, NULL);
  char *err = capture_end();
  assert_true(ok);
  assert_false(c.present);
  assert_non_null(strstr(err, "db.measured.xml:3: warning: the calibration's constants are out "
                              "of range (barrier-scale 296.1751 is outside [0, 100]): calibrate "
                              "sets them aside"));
  free(err);
  capture_start();
  ok = calibration_read(&db, &c, NULL);
  err = capture_end();
  assert_false(ok);
  assert_non_null(strstr(err, "db.measured.xml:3: error: the calibration's constants are out of "
                              "range (barrier-scale 296.1751 is outside [0, 100];"));
  assert_non_null(strstr(err, "kasgen calibrate replaces it"));
  free(err);
  free(db_path);
  remove_store(store);
}

/* A fit outside the range a store may hold is not written (a store that every command would
 * then refuse): an error, and the store as it was; one inside it is written and reads back.
 * Also at the edge: a constant that rounds out of range as written is refused. */
static void test_fit_out_of_range_not_stored(void **state) {
  (void)state;
  char *store = write_store("<calibration work-scale=\"0.9\" barrier-scale=\"0.5\" "
                            "kernel-ns=\"0\" specs=\"2\" candidates=\"30\" fitted-on=\"a b\"/>");
  char *db_path = xasprintf("%.*s.xml", (int)(strlen(store) - strlen(".measured.xml")), store);
  TimingDb db = {.path = db_path};
  size_t len_before;
  char *before = read_text_file(store, &len_before);
  CalibrationSamples *all = samples(10, &TRUTH, 0);
  ModelCalibration bad[3] = {TRUTH, TRUTH, TRUTH};
  bad[0].barrier_scale = 296.1751;
  bad[1].kernel_ns = 100.0000006; /* written 100.000001 */
  bad[2].coverage_slope = -1.99006; /* written -1.9901 */
  for (int i = 0; i < 3; i++) {
    char *path = NULL;
    capture_start();
    bool ok = calibration_write(&db, all, &bad[i], &path);
    char *err = capture_end();
    assert_false(ok);
    assert_non_null(strstr(err, "db.measured.xml: error: not written: the fitted "));
    assert_non_null(strstr(err, "the store is left as it was"));
    char *after = read_text_file(store, NULL);
    assert_string_equal(after, before);
    free(after), free(err), free(path);
  }
  char *path = NULL;
  ModelCalibration edge = TRUTH, back;
  edge.barrier_scale = 100, edge.kernel_ns = 100.0000004; /* written 100.000000 */
  assert_true(calibration_write(&db, all, &edge, &path));
  assert_true(calibration_read(&db, &back, NULL) && back.present);
  assert_true(back.barrier_scale == 100 && back.kernel_ns == 100);
  free(path);
  calibration_samples_free(all);
  free(before);
  free(db_path);
  remove_store(store);
}

/* The figures tune_figures gives calibration c (NULL: none) on the samples made by `samples`'
 * generator (seed, n, truth), worked out here from model_combine_terms. */
static TuneFigures figures_of(unsigned seed, int n, const ModelCalibration *truth,
                              const ModelCalibration *c) {
  double pred[64], meas[64];
  unsigned state = seed;
  for (int i = 0; i < n; i++) {
    int nk = 1 + i % 3;
    double launch = 0.0006 * nk;
    pred[i] = meas[i] = launch;
    for (int k = 0; k < nk; k++) {
      ModelTerms t = random_terms(&state);
      meas[i] += model_combine_terms(&t, truth);
      pred[i] += model_combine_terms(&t, c);
    }
    uniform(&state, -1, 1); /* add_timed's draw for the noise */
  }
  TuneFigures f;
  tune_figures(pred, meas, n, &f);
  return f;
}

/* Runs of three specs: a and b timed by TRUTH, c by other constants.  Held out, c is predicted
 * by the constants fitted on a and b, which are TRUTH: its figures are TRUTH's on c's samples,
 * which a fit that saw c's runs would not give; a and b, fitted on the others with c among
 * them, are not predicted exactly. */
static void add_run(CalibrationSamples *all, const char *spec, unsigned seed, int n,
                    const ModelCalibration *truth) {
  calibration_begin_spec(all, spec, "Test GPU", spec);
  add_timed(all, seed, n, truth, 0);
  calibration_end_spec(all);
}

static void test_held_out(void **state) {
  (void)state;
  ModelCalibration other = TRUTH;
  other.work_scale = 1.3, other.barrier_warp_ns = 0, other.kernel_ns = 0.01;
  CalibrationSamples *all = calibration_samples_new();
  add_run(all, "a", 3, 40, &TRUTH);
  add_run(all, "b", 5, 40, &TRUTH);
  add_run(all, "c", 9, 30, &other);
  add_run(all, "a", 13, 20, &TRUTH); /* a second run of a: held out with the first */
  int n;
  HeldOutRun *runs = calibration_held_out(all, &n);
  assert_int_equal(n, 4);
  assert_string_equal(runs[0].spec, "a");
  assert_string_equal(runs[1].spec, "a"); /* a's runs together, fitted once */
  assert_string_equal(runs[2].spec, "b");
  assert_string_equal(runs[3].spec, "c");
  assert_int_equal(runs[1].plain.n, 20);
  for (int i = 0; i < n; i++) assert_true(runs[i].fitted);
  TuneFigures truth_on_c = figures_of(9, 30, &other, &TRUTH);
  assert_true(fabs(runs[3].calibration.work_scale - TRUTH.work_scale) < 1e-3);
  assert_true(fabs(runs[3].held_out.error - truth_on_c.error) < 1e-3 * truth_on_c.error);
  assert_true(truth_on_c.error > 0.1); /* c is far from TRUTH: a fit that saw it would move */
  TuneFigures plain_on_c = figures_of(9, 30, &other, NULL);
  assert_true(fabs(runs[3].plain.error - plain_on_c.error) < 1e-12);
  assert_true(fabs(runs[3].plain.spearman - plain_on_c.spearman) < 1e-12);
  assert_true(runs[0].held_out.error > 1e-3); /* fitted with c among the others */
  free(runs);
  calibration_samples_free(all);
}

/* The constants on a limit of the fit's scan are named with their values and ranges, the
 * others not; a fit inside every range names none.  Session 24's H100 fit: four of them. */
static void test_constants_at_scan_limits(void **state) {
  (void)state;
  assert_null(calibration_at_limits(&TRUTH));
  ModelCalibration h100 = {.present = true, .work_scale = 0.9351, .requests_one_scale = 4,
                           .requests_shared_scale = 0.25, .lines_scale = 0.7401,
                           .requests_overlap = 4, .coverage_slope = -1.99,
                           .unhidden_share = 0.1362, .wavefront_scale = 1.8091};
  char *at = calibration_at_limits(&h100);
  assert_non_null(at);
  assert_string_equal(at, "requests-one-scale 4.0000 (scanned 0.25 to 4), requests-shared-scale "
                          "0.2500 (scanned 0.25 to 4), requests-overlap 4.0000 (scanned 1 to 4), "
                          "coverage-slope -1.9900 (scanned -1.99 to 1.99)");
  free(at);
  /* within the golden-section search's reach of a limit counts; a step inside it does not */
  ModelCalibration near = TRUTH;
  near.work_scale = 0.50001, near.unhidden_share = 0.001;
  at = calibration_at_limits(&near);
  assert_non_null(at);
  assert_string_equal(at, "work-scale 0.5000 (scanned 0.5 to 1.5)");
  free(at);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fit_finds_the_constants),
      cmocka_unit_test(test_fit_beats_a_grid),
      cmocka_unit_test(test_unit_scales_are_the_plain_model),
      cmocka_unit_test(test_overlap_and_coverage),
      cmocka_unit_test(test_store_of_the_first_form),
      cmocka_unit_test(test_store_scale_out_of_range),
      cmocka_unit_test(test_store_out_of_range_is_replaced),
      cmocka_unit_test(test_fit_out_of_range_not_stored),
      cmocka_unit_test(test_held_out),
      cmocka_unit_test(test_constants_at_scan_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
