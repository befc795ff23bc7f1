/*
 * test_spawn.c — running another program (src/spawn.c), which gnuplot, nvcc, nvidia-smi and dot
 * go through: bytes fed on the standard input come back through a captured output; an output
 * longer than its bound is cut and its program does not hang kasgen; a program stopping to read
 * its input costs kasgen no SIGPIPE; the deadline kills a program, whether it sleeps or does not
 * read its input; a program that does not exist is told apart; exit statuses and signals pass
 * through; outputs go to a descriptor or /dev/null; several programs run at once.  The test may
 * use sh; kasgen itself never does.
 */
#include "testutil.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

static const SpawnOptions capture_both = {
    .out = {SPAWN_CAPTURE, -1, 4096}, .err = {SPAWN_CAPTURE, -1, 4096}, .timeout_s = 20};

static void test_input_comes_back(void **state) {
  (void)state;
  char *argv[] = {"cat", NULL};
  SpawnOptions opt = capture_both;
  opt.input = "line one\nline two\n";
  opt.input_len = strlen(opt.input);
  SpawnResult r = spawn_run(argv, &opt);
  assert_int_equal(r.end, SPAWN_EXITED);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out.data, "line one\nline two\n");
  assert_int_equal(r.out.len, 18);
  assert_false(r.out.cut);
  assert_string_equal(r.err.data, "");
  spawn_result_free(&r);
}

/* An input far beyond a pipe's buffer, echoed back while it is fed: neither side blocks. */
static void test_large_input_both_ways(void **state) {
  (void)state;
  size_t n = 1 << 20;
  char *big = xmalloc(n);
  for (size_t i = 0; i < n; i++) big[i] = (char)('a' + i % 26);
  char *argv[] = {"cat", NULL};
  SpawnOptions opt = {.input = big, .input_len = n, .out = {SPAWN_CAPTURE, -1, n},
                      .timeout_s = 20};
  SpawnResult r = spawn_run(argv, &opt);
  assert_int_equal(r.end, SPAWN_EXITED);
  assert_int_equal(r.out.len, n);
  assert_false(r.out.cut);
  assert_memory_equal(r.out.data, big, n);
  spawn_result_free(&r);
  free(big);
}

/* `yes` never ends by itself: its output is cut at the bound, and it ends (SIGPIPE) well before
 * the deadline. */
static void test_capture_bound(void **state) {
  (void)state;
  char *argv[] = {"yes", NULL};
  SpawnOptions opt = {.out = {SPAWN_CAPTURE, -1, 4096}, .timeout_s = 10};
  double t0 = clock_seconds();
  SpawnResult r = spawn_run(argv, &opt);
  double took = clock_seconds() - t0;
  assert_true(r.out.cut);
  assert_int_equal(r.out.len, 4096);
  assert_int_equal(strlen(r.out.data), 4096);
  for (size_t i = 0; i < 4096; i += 2) assert_memory_equal(r.out.data + i, "y\n", 2);
  assert_int_equal(r.end, SPAWN_SIGNALLED);
  assert_int_equal(r.status, SIGPIPE);
  assert_true(took < 5);
  spawn_result_free(&r);
}

/* An output of exactly the bound is whole, not cut. */
static void test_output_of_the_bound(void **state) {
  (void)state;
  char *argv[] = {"printf", "abcd", NULL};
  SpawnOptions opt = {.out = {SPAWN_CAPTURE, -1, 4}, .timeout_s = 20};
  SpawnResult r = spawn_run(argv, &opt);
  assert_int_equal(r.end, SPAWN_EXITED);
  assert_false(r.out.cut);
  assert_string_equal(r.out.data, "abcd");
  spawn_result_free(&r);
  opt.out.max = 3;
  r = spawn_run(argv, &opt);
  assert_true(r.out.cut);
  assert_string_equal(r.out.data, "abc");
  spawn_result_free(&r);
}

static bool sigpipe_ignored(void) {
  struct sigaction now;
  sigaction(SIGPIPE, NULL, &now);
  return now.sa_handler == SIG_IGN;
}

/* head reads 10 bytes of a megabyte and exits: the rest is not written, the test process gets no
 * SIGPIPE (it would die of it), and SIGPIPE's handling is as it was afterwards. */
static void test_input_not_read(void **state) {
  (void)state;
  size_t n = 1 << 20;
  char *big = xcalloc(n, 1);
  memset(big, 'x', n);
  char *argv[] = {"head", "-c", "10", NULL};
  SpawnOptions opt = {.input = big, .input_len = n, .out = {SPAWN_CAPTURE, -1, 100},
                      .timeout_s = 20};
  assert_false(sigpipe_ignored());
  SpawnResult r = spawn_run(argv, &opt);
  assert_false(sigpipe_ignored());
  assert_int_equal(r.end, SPAWN_EXITED);
  assert_int_equal(r.status, 0);
  assert_string_equal(r.out.data, "xxxxxxxxxx");
  spawn_result_free(&r);
  free(big);
}

static void test_deadline_kills(void **state) {
  (void)state;
  char *argv[] = {"sleep", "30", NULL};
  SpawnOptions opt = {.timeout_s = 1};
  double t0 = clock_seconds();
  SpawnResult r = spawn_run(argv, &opt);
  double took = clock_seconds() - t0;
  assert_int_equal(r.end, SPAWN_TIMED_OUT);
  assert_true(took >= 0.9);
  assert_true(took < 2);
  /* reaped: no child of the test is left */
  assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
}

/* A program that neither reads its input (a megabyte, beyond the pipe's buffer) nor ends: the
 * deadline holds while kasgen is still writing. */
static void test_deadline_while_feeding(void **state) {
  (void)state;
  size_t n = 1 << 20;
  char *big = xcalloc(n, 1);
  char *argv[] = {"sleep", "30", NULL};
  SpawnOptions opt = {.input = big, .input_len = n, .out = {SPAWN_CAPTURE, -1, 100},
                      .timeout_s = 1};
  double t0 = clock_seconds();
  SpawnResult r = spawn_run(argv, &opt);
  double took = clock_seconds() - t0;
  assert_int_equal(r.end, SPAWN_TIMED_OUT);
  assert_true(took < 2);
  assert_int_equal(r.out.len, 0);
  spawn_result_free(&r);
  free(big);
}

static void test_not_installed(void **state) {
  (void)state;
  char *on_path[] = {"kasgen-test-no-such-program", NULL};
  SpawnResult r = spawn_run(on_path, &capture_both);
  assert_int_equal(r.end, SPAWN_NOT_STARTED);
  assert_int_equal(r.error, ENOENT);
  assert_null(r.out.data);
  char *by_path[] = {"/nonexistent/kasgen-test", NULL};
  r = spawn_run(by_path, &(SpawnOptions){0});
  assert_int_equal(r.end, SPAWN_NOT_STARTED);
  assert_int_equal(r.error, ENOENT);
}

static void test_exit_status_and_signal(void **state) {
  (void)state;
  char *exits[] = {"sh", "-c", "echo to-err >&2; exit 3", NULL};
  SpawnResult r = spawn_run(exits, &capture_both);
  assert_int_equal(r.end, SPAWN_EXITED);
  assert_int_equal(r.status, 3);
  assert_string_equal(r.err.data, "to-err\n");
  assert_string_equal(r.out.data, "");
  spawn_result_free(&r);
  char *killed[] = {"sh", "-c", "kill -TERM $$", NULL};
  r = spawn_run(killed, &capture_both);
  assert_int_equal(r.end, SPAWN_SIGNALLED);
  assert_int_equal(r.status, SIGTERM);
  spawn_result_free(&r);
}

/* Standard output on a descriptor (nvcc's log, gnuplot's PNG), the error to /dev/null. */
static void test_output_to_fd(void **state) {
  (void)state;
  FILE *f = tmpfile();
  assert_non_null(f);
  char *argv[] = {"sh", "-c", "echo out; echo err >&2", NULL};
  SpawnOptions opt = {.out = {SPAWN_TO_FD, fileno(f), 0}, .err = {SPAWN_DEV_NULL, -1, 0}};
  capture_start(); /* the error must not reach the test's own */
  SpawnResult r = spawn_run(argv, &opt);
  char *err = capture_end();
  assert_int_equal(r.end, SPAWN_EXITED);
  assert_string_equal(err, "");
  char got[16] = {0};
  rewind(f);
  assert_int_equal(fread(got, 1, sizeof got - 1, f), 4);
  assert_string_equal(got, "out\n");
  free(err);
  fclose(f);
}

/* Three programs of one second each, started before any is waited for, take one second, and
 * each result is its own program's. */
static void test_several_at_once(void **state) {
  (void)state;
  char *argv[3][4] = {{"sh", "-c", "sleep 1; exit 5", NULL},
                      {"sh", "-c", "sleep 1; exit 6", NULL},
                      {"sh", "-c", "sleep 1; exit 7", NULL}};
  SpawnOptions opt = {.timeout_s = 20};
  double t0 = clock_seconds();
  Spawn *s[3];
  for (int i = 0; i < 3; i++) s[i] = spawn_start(argv[i], &opt);
  for (int i = 0; i < 3; i++) {
    SpawnResult r = spawn_finish(s[i]);
    assert_int_equal(r.end, SPAWN_EXITED);
    assert_int_equal(r.status, 5 + i);
  }
  assert_true(clock_seconds() - t0 < 2.5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_input_comes_back),
      cmocka_unit_test(test_large_input_both_ways),
      cmocka_unit_test(test_capture_bound),
      cmocka_unit_test(test_output_of_the_bound),
      cmocka_unit_test(test_input_not_read),
      cmocka_unit_test(test_deadline_kills),
      cmocka_unit_test(test_deadline_while_feeding),
      cmocka_unit_test(test_not_installed),
      cmocka_unit_test(test_exit_status_and_signal),
      cmocka_unit_test(test_output_to_fd),
      cmocka_unit_test(test_several_at_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
