/*
 * test_spawn.c — running another program (src/spawn.c), which gnuplot, nvcc, nvidia-smi and dot
 * go through: bytes fed on the standard input come back through a captured output; an output
 * longer than its bound is cut and its program does not hang kasgen; a program stopping to read
 * its input costs kasgen no SIGPIPE; the deadline kills a program, whether it sleeps or does not
 * read its input; a program that does not exist is told apart; exit statuses and signals pass
 * through; outputs go to a descriptor or /dev/null; several programs run at once.  Each program
 * leads a process group of its own with /dev/null as its input unless fed; the deadline kills
 * the program's children too; an interrupted kasgen (interrupt.c) dies of the signal with no
 * program or temporary left, and leaves an ignored signal ignored.  The test may use sh; kasgen
 * itself never does.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* The number in file path (a pid a shell wrote), waiting up to 5 s for it; -1 if none came. */
static pid_t pid_in_file(const char *path) {
  for (int i = 0; i < 500; i++) {
    FILE *f = fopen(path, "r");
    long pid = -1;
    if (f && fscanf(f, "%ld", &pid) == 1 && pid > 0) {
      fclose(f);
      return (pid_t)pid;
    }
    if (f) fclose(f);
    usleep(10000);
  }
  return -1;
}

/* Whether process pid is gone, waiting up to 2 s: no such process, or a zombie (dead; reaping it
 * is its new parent's business).  A survivor is killed, so the test leaves none behind. */
static bool process_gone(pid_t pid) {
  for (int i = 0; i < 200; i++) {
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    char path[64], stat[256] = {0};
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(stat, 1, sizeof stat - 1, f) : 0;
    if (f) fclose(f);
    const char *end = n ? strrchr(stat, ')') : NULL;
    if (end && end[1] == ' ' && end[2] == 'Z') return true;
    usleep(10000);
  }
  kill(pid, SIGKILL);
  return false;
}

/* A program whose own child outlives the deadline (nvcc's cicc or ptxas): both are killed.
 * Before each program had a group of its own, only the shell was, and the sleep it had started
 * in the background ran on. */
static void test_deadline_kills_children(void **state) {
  (void)state;
  char pidfile[] = "/tmp/kasgen-test-spawn-XXXXXX";
  int fd = mkstemp(pidfile);
  assert_true(fd >= 0);
  close(fd);
  char *script = xasprintf("sleep 100 & echo $! >%s; sleep 100", pidfile);
  char *argv[] = {"sh", "-c", script, NULL};
  SpawnOptions opt = {.timeout_s = 1};
  SpawnResult r = spawn_run(argv, &opt);
  assert_int_equal(r.end, SPAWN_TIMED_OUT);
  pid_t grandchild = pid_in_file(pidfile);
  unlink(pidfile);
  free(script);
  assert_true(grandchild > 0);
  assert_true(process_gone(grandchild));
}

/* The program leads its own process group (the deadline's kill reaches all of it) and reads
 * /dev/null unless fed: out of the terminal's foreground group, reading the terminal would
 * stop it. */
static void test_own_group_and_input(void **state) {
  (void)state;
  char *stat_argv[] = {"cat", "/proc/self/stat", NULL};
  SpawnResult r = spawn_run(stat_argv, &capture_both);
  assert_int_equal(r.end, SPAWN_EXITED);
  long pid = 0, ppid = 0, pgrp = 0;
  const char *after = strrchr(r.out.data, ')');
  assert_non_null(after);
  assert_int_equal(sscanf(r.out.data, "%ld", &pid), 1);
  assert_int_equal(sscanf(after + 1, " %*c %ld %ld", &ppid, &pgrp), 2);
  assert_int_equal(ppid, (long)getpid());
  assert_int_equal(pgrp, pid);
  assert_int_not_equal(pgrp, (long)getpgrp());
  spawn_result_free(&r);
  char *fd0_argv[] = {"readlink", "/proc/self/fd/0", NULL};
  r = spawn_run(fd0_argv, &capture_both);
  assert_string_equal(r.out.data, "/dev/null\n");
  spawn_result_free(&r);
}

/* In a process of its own (a kasgen): a program running (a shell whose background sleep ignores
 * SIGINT, as a non-interactive shell's does) and a temporary file registered.  SIGINT to that
 * process alone, as Ctrl-C now is, kills it by the signal within the grace second, and leaves
 * neither the program, nor its child, nor the temporary. */
static void test_interrupt_stops_everything(void **state) {
  (void)state;
  char dir[] = "/tmp/kasgen-test-spawn-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char *pidfile = xasprintf("%s/pids", dir), *temp = xasprintf("%s/temp", dir);
  char *script = xasprintf("sleep 100 & echo $$ $! >%s.new; mv %s.new %s; sleep 100", pidfile,
                           pidfile, pidfile);
  pid_t kasgen = fork();
  assert_true(kasgen >= 0);
  if (kasgen == 0) {
    /* SIGINT at its default, as at a terminal: a suite run in the background of a script
     * inherits it ignored, which interrupt_install keeps (test_ignored_stays_ignored) */
    signal(SIGINT, SIG_DFL);
    interrupt_install();
    close(open(temp, O_WRONLY | O_CREAT, 0644));
    interrupt_add_temporary(AT_FDCWD, temp);
    char *argv[] = {"sh", "-c", script, NULL};
    spawn_run(argv, &(SpawnOptions){.timeout_s = 60});
    _exit(0);
  }
  int shell = -1, sleeper = -1;
  assert_true(pid_in_file(pidfile) > 0);
  FILE *f = fopen(pidfile, "r");
  assert_true(f && fscanf(f, "%d %d", &shell, &sleeper) == 2);
  fclose(f);
  double t0 = clock_seconds();
  kill(kasgen, SIGINT);
  int status = 0;
  assert_int_equal(waitpid(kasgen, &status, 0), kasgen);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), SIGINT);
  assert_true(clock_seconds() - t0 < 3);
  assert_true(process_gone(shell));
  assert_true(process_gone(sleeper));
  struct stat st;
  assert_int_not_equal(stat(temp, &st), 0);
  unlink(pidfile);
  assert_int_equal(rmdir(dir), 0);
  free(pidfile), free(temp), free(script);
}

/* A signal kasgen was started ignoring (nohup, a background job of a script) stays ignored. */
static void test_ignored_stays_ignored(void **state) {
  (void)state;
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    signal(SIGHUP, SIG_IGN);
    interrupt_install();
    struct sigaction hup, term;
    sigaction(SIGHUP, NULL, &hup);
    sigaction(SIGTERM, NULL, &term);
    _exit(hup.sa_handler == SIG_IGN && term.sa_handler != SIG_DFL ? 0 : 1);
  }
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
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
      cmocka_unit_test(test_deadline_kills_children),
      cmocka_unit_test(test_own_group_and_input),
      cmocka_unit_test(test_interrupt_stops_everything),
      cmocka_unit_test(test_ignored_stays_ignored),
      cmocka_unit_test(test_deadline_while_feeding),
      cmocka_unit_test(test_not_installed),
      cmocka_unit_test(test_exit_status_and_signal),
      cmocka_unit_test(test_output_to_fd),
      cmocka_unit_test(test_several_at_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
