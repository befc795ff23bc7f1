/*
 * spawn.c — running another program: gnuplot (report.c), nvcc (ptxas.c), nvidia-smi
 * (local_gpu.c) and dot (emit.c).  Each gets a fixed argument list and never a shell (found on
 * $PATH unless argv[0] names a path).  Its standard input is /dev/null or bytes fed through a
 * pipe; its standard output and error each kasgen's, /dev/null, a file descriptor, or a bounded
 * buffer; an optional deadline kills it (SIGKILL) and reaps it, so that a hung program cannot
 * hang kasgen.  The result says whether it exited (and its status), died of a signal, was killed
 * at the deadline, or could not be started.
 *
 * Each program leads a process group of its own, and the deadline kills the group: nvcc runs
 * cicc and ptxas, which a SIGKILL of nvcc alone would leave running.  Out of the terminal's
 * foreground group, a program gets no Ctrl-C from it: interrupt.c passes kasgen's on to every
 * group registered here, from the start of the program until it is reaped.
 *
 * spawn_start and spawn_finish are apart so that several programs can run at once (emit.c's
 * dot processes); spawn_run is both.  The pipes are written and read without blocking, under
 * poll, so that a program that stops reading its input or never closes its output is still
 * killed at the deadline.
 */
#include "kasgen.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The pipes kasgen keeps: to the program's standard input, from its output and its error. */
enum { PIPE_IN, PIPE_OUT, PIPE_ERR, NPIPES };

struct Spawn {
  pid_t pid;
  bool started;
  SpawnResult result; /* the captures; end and error when it never started */
  double deadline;    /* clock_seconds(); 0: none */
  int fd[NPIPES];     /* kasgen's ends; -1 where there is no pipe */
  const char *input;
  size_t input_len, input_done;
  size_t max[NPIPES]; /* for PIPE_OUT and PIPE_ERR: the bound of the capture */
};

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/* The capture a pipe fills. */
static SpawnCapture *capture_of(Spawn *s, int which) {
  return which == PIPE_OUT ? &s->result.out : &s->result.err;
}

/* ---- starting ----------------------------------------------------------------------------- */

/* Makes the pipes the options ask for: ends[i][0] the program's, ends[i][1] kasgen's (all
 * close-on-exec; dup2 in the program clears it on its own end).  false with errno set. */
static bool make_pipes(const SpawnOptions *opt, int ends[NPIPES][2]) {
  bool wanted[NPIPES] = {opt->input != NULL, opt->out.sink == SPAWN_CAPTURE,
                         opt->err.sink == SPAWN_CAPTURE};
  for (int i = 0; i < NPIPES; i++) {
    int p[2];
    if (!wanted[i]) continue;
    if (pipe2(p, O_CLOEXEC) != 0) return false;
    /* the input pipe's read end is the program's; the others' write end */
    ends[i][0] = i == PIPE_IN ? p[0] : p[1];
    ends[i][1] = i == PIPE_IN ? p[1] : p[0];
  }
  return true;
}

/* Where the program's descriptor target goes (its pipe end, when captured). */
static void add_output(posix_spawn_file_actions_t *fa, const SpawnOutput *o, int pipe_end,
                       int target) {
  if (o->sink == SPAWN_DEV_NULL)
    posix_spawn_file_actions_addopen(fa, target, "/dev/null", O_WRONLY, 0);
  else if (o->sink == SPAWN_TO_FD)
    posix_spawn_file_actions_adddup2(fa, o->fd, target);
  else if (o->sink == SPAWN_CAPTURE)
    posix_spawn_file_actions_adddup2(fa, pipe_end, target);
}

/* Starts the program in a new process group, registered with interrupt.c before any signal
 * could find it unregistered; the program gets the signal mask kasgen had. */
static int start_program(Spawn *s, char *const argv[], const SpawnOptions *opt,
                         int ends[NPIPES][2]) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (ends[PIPE_IN][0] >= 0) posix_spawn_file_actions_adddup2(&fa, ends[PIPE_IN][0], 0);
  else posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  add_output(&fa, &opt->out, ends[PIPE_OUT][0], STDOUT_FILENO);
  add_output(&fa, &opt->err, ends[PIPE_ERR][0], STDERR_FILENO);
  sigset_t before;
  interrupt_hold(&before);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0); /* its own pid */
  posix_spawnattr_setsigmask(&attr, &before);
  int rc = posix_spawnp(&s->pid, argv[0], &fa, &attr, argv, environ);
  if (rc == 0) interrupt_add_group(s->pid);
  interrupt_release(&before);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  return rc;
}

/* The capture's buffer holds one byte beyond the bound (read to tell that there was more) and
 * the terminating NUL. */
static void capture_init(Spawn *s, int which, size_t max) {
  s->max[which] = max;
  capture_of(s, which)->data = xcalloc(max + 2, 1);
}

Spawn *spawn_start(char *const argv[], const SpawnOptions *opt) {
  Spawn *s = xcalloc(1, sizeof *s);
  int ends[NPIPES][2];
  for (int i = 0; i < NPIPES; i++) ends[i][0] = ends[i][1] = -1;
  int rc = 0;
  if (!make_pipes(opt, ends))
    s->result = (SpawnResult){.end = SPAWN_BROKEN, .error = errno};
  else if ((rc = start_program(s, argv, opt, ends)) != 0)
    s->result = (SpawnResult){.end = SPAWN_NOT_STARTED, .error = rc};
  else
    s->started = true;
  for (int i = 0; i < NPIPES; i++) {
    close_fd(&ends[i][0]);
    s->fd[i] = ends[i][1];
    if (!s->started) close_fd(&s->fd[i]);
    /* never blocked on a pipe: the deadline is kept while writing and reading */
    if (s->fd[i] >= 0) fcntl(s->fd[i], F_SETFL, O_NONBLOCK);
  }
  if (!s->started) return s;
  if (s->fd[PIPE_OUT] >= 0) capture_init(s, PIPE_OUT, opt->out.max);
  if (s->fd[PIPE_ERR] >= 0) capture_init(s, PIPE_ERR, opt->err.max);
  s->input = opt->input;
  s->input_len = opt->input_len;
  s->deadline = opt->timeout_s > 0 ? clock_seconds() + opt->timeout_s : 0;
  return s;
}

/* ---- feeding and reading ------------------------------------------------------------------ */

/* Writes what the pipe takes now; closes it when all is written or the program stopped reading
 * (a short write is fine: the program decides what it makes of it). */
static void feed_input(Spawn *s) {
  ssize_t w = write(s->fd[PIPE_IN], s->input + s->input_done, s->input_len - s->input_done);
  if (w > 0) s->input_done += (size_t)w;
  bool again = w >= 0 || errno == EINTR || errno == EAGAIN;
  if (!again || s->input_done == s->input_len) close_fd(&s->fd[PIPE_IN]);
}

/* Reads what the pipe holds into its capture; closes it at the end of the output, or once the
 * output is longer than the bound (the program then gets SIGPIPE, or EPIPE, if it writes on). */
static void read_output(Spawn *s, int which) {
  SpawnCapture *c = capture_of(s, which);
  ssize_t n = read(s->fd[which], c->data + c->len, s->max[which] + 1 - c->len);
  if (n > 0) c->len += (size_t)n;
  if (c->len > s->max[which]) {
    c->len = s->max[which];
    c->data[c->len] = '\0';
    c->cut = true;
  }
  if (c->cut || n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) close_fd(&s->fd[which]);
}

/* Milliseconds left before the deadline for poll: -1 without one, 0 once it is past. */
static int ms_left(double deadline) {
  if (deadline <= 0) return -1;
  double left = (deadline - clock_seconds()) * 1000;
  return left <= 0 ? 0 : left > 1e9 ? 1000000000 : (int)left + 1;
}

/* Feeds the input and reads the outputs until every pipe is closed; false when the deadline
 * came first. */
static bool exchange(Spawn *s) {
  for (;;) {
    struct pollfd p[NPIPES];
    int which[NPIPES], n = 0;
    for (int i = 0; i < NPIPES; i++)
      if (s->fd[i] >= 0)
        p[n] = (struct pollfd){s->fd[i], i == PIPE_IN ? POLLOUT : POLLIN, 0}, which[n++] = i;
    if (n == 0) return true;
    int left = ms_left(s->deadline);
    if (left == 0) return false;
    int ready = poll(p, (nfds_t)n, left);
    if (ready < 0 && errno != EINTR) return true; /* cannot happen with valid descriptors */
    for (int k = 0; ready > 0 && k < n; k++) {
      if (!p[k].revents) continue;
      if (which[k] == PIPE_IN) feed_input(s);
      else read_output(s, which[k]);
    }
  }
}

/* ---- waiting ------------------------------------------------------------------------------ */

static void sleep_seconds(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

/* Waits until the program ends or the deadline (none: as long as it takes), leaving it unreaped
 * (WNOWAIT): 1 when it ended, 0 when the deadline came first, -1 with errno set.  waitid has no
 * timeout, so with a deadline it is asked without waiting, at intervals growing from 1 ms to
 * 20 ms (a program that ends is seen at most 20 ms late; a SIGCHLD handler would change what the
 * whole process does). */
static int wait_until(pid_t pid, double deadline) {
  double interval = 0.001;
  for (;;) {
    siginfo_t info = {0};
    int rc = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT | (deadline > 0 ? WNOHANG : 0));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return -1;
    if (info.si_pid != 0) return 1;
    double left = deadline - clock_seconds();
    if (left <= 0) return 0;
    sleep_seconds(left < interval ? left : interval);
    interval = interval * 2 > 0.02 ? 0.02 : interval * 2;
  }
}

/* Reaps the program, after killing its group when it is late: while the leader is unreaped its
 * pid names the group, which no other process can have taken.  Interruptions are held, so that
 * interrupt.c never signals a group whose leader is gone.  Whatever else of the group an ended
 * program left running is its own business; a late program's is killed (SIGKILL cannot be
 * caught, so this does not wait long). */
static void reap(pid_t pid, bool kill_group, int *status) {
  sigset_t before;
  interrupt_hold(&before);
  if (kill_group) kill(-pid, SIGKILL);
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
  interrupt_drop_group(pid);
  interrupt_release(&before);
}

SpawnResult spawn_finish(Spawn *s) {
  if (s->started) {
    /* a program may stop reading its input (gnuplot after an error): no SIGPIPE for kasgen,
     * only a short write; set after the start, so that the program keeps kasgen's SIGPIPE */
    struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
    bool feeding = s->fd[PIPE_IN] >= 0 && sigaction(SIGPIPE, &ignore, &old) == 0;
    bool in_time = exchange(s);
    if (feeding) sigaction(SIGPIPE, &old, NULL);
    for (int i = 0; i < NPIPES; i++) close_fd(&s->fd[i]);
    int status = 0;
    int got = in_time ? wait_until(s->pid, s->deadline) : 0;
    int saved = errno;
    reap(s->pid, got == 0, &status);
    errno = saved;
    SpawnResult *r = &s->result;
    if (got < 0) r->end = SPAWN_BROKEN, r->error = errno;
    else if (got == 0) r->end = SPAWN_TIMED_OUT;
    else if (WIFEXITED(status)) r->end = SPAWN_EXITED, r->status = WEXITSTATUS(status);
    else r->end = SPAWN_SIGNALLED, r->status = WTERMSIG(status);
  }
  SpawnResult r = s->result;
  free(s);
  return r;
}

SpawnResult spawn_run(char *const argv[], const SpawnOptions *opt) {
  return spawn_finish(spawn_start(argv, opt));
}

void spawn_result_free(SpawnResult *r) {
  free(r->out.data);
  free(r->err.data);
  r->out.data = r->err.data = NULL;
}
