/*
 * interrupt.c — what Ctrl-C does: it stops kasgen promptly, with every program kasgen started
 * and every temporary file it was writing, so that nothing of the run is left behind; and what
 * Ctrl-Z does: it stops kasgen with those programs, which go on when kasgen does, and the time
 * it stood still does not count against its time limits.
 *
 * spawn.c starts each program (nvcc, gnuplot, dot, nvidia-smi) in a process group of its own, so
 * that a deadline can kill the program with its own children (nvcc's cicc and ptxas).  That takes
 * the programs out of the terminal's foreground group: Ctrl-C (SIGINT) no longer reaches them,
 * only kasgen, and a kasgen dying of it by default would leave them running.  So kasgen catches
 * SIGINT, SIGTERM and SIGHUP and, inside the handler (async-signal-safe calls only):
 *   1. sends the signal on to every program's group, as the terminal did before: nvcc removes
 *      its own temporary files on SIGINT, which it cannot do when killed;
 *   2. waits at most INTERRUPT_GRACE_S for the programs to end, then kills their groups (SIGKILL),
 *      whatever of them is left or ignores the signal;
 *   3. removes the temporary files and folders registered here (newest first): the plot being
 *      drawn in the user's folder, an output file before its rename, nvcc's and dot's folders
 *      in /tmp; a file the user names is only ever written through such a temporary and a rename,
 *      so none is left half-written;
 *   4. dies of the signal (its default action), so that a shell sees an interrupted command.
 * Ctrl-Z (SIGTSTP) has the same problem: it would stop kasgen and leave the programs running.
 * So kasgen catches it too and, in its handler (async-signal-safe calls only, as above), stops
 * every program's group (SIGSTOP, which no program can catch or ignore), then stops itself by
 * the default action; when it is continued (fg or bg send SIGCONT to its group only) it runs on
 * inside the handler, continues the programs' groups (SIGCONT) and catches SIGTSTP again.  The
 * handler restarts what it interrupted (SA_RESTART): kasgen's reads and writes go on after a
 * stop as they did without one.
 * SIGTTIN and SIGTTOU (a background kasgen reading or writing the terminal: SPEC -, the
 * progress lines under `stty tostop`) stop it as Ctrl-Z does, and are handled alike: the job is
 * stopped, programs included, until fg or bg continues it.
 * The time kasgen spends stopped so (the handler's clock readings around its stop) is kept: the
 * clock of --time-limit and of the programs' deadlines (clock_seconds) leaves it out, so that a
 * search stopped for ten minutes and continued is not cut by its limit on waking.
 * A signal that was ignored when kasgen started (nohup, a background job of a script) stays
 * ignored.  The registries are changed only with the four signals blocked (interrupt_hold), so
 * the handlers never see one half-changed.
 */
#include "kasgen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Long enough for nvcc to remove its files after SIGINT (milliseconds), short enough that the
 * user does not wait on a program that ignores the signal. */
#define INTERRUPT_GRACE_S 1.0

static const int caught[] = {SIGINT, SIGTERM, SIGHUP}; /* end kasgen */
enum { NCAUGHT = sizeof caught / sizeof caught[0] };
static const int stopping[] = {SIGTSTP, SIGTTIN, SIGTTOU}; /* stop kasgen: job control */
enum { NSTOPPING = sizeof stopping / sizeof stopping[0] };


typedef struct {
  int dirfd; /* AT_FDCWD or a folder's descriptor, open while registered */
  char *path;
} Temporary;

static pid_t *groups; /* the process groups of the programs running (their leaders' pids) */
static int ngroups, groups_cap;
static Temporary *temps;
static int ntemps, temps_cap;

/* The signals handled here: the three that end kasgen, and the three that stop it. */
static void caught_set(sigset_t *set) {
  sigemptyset(set);
  for (int i = 0; i < NCAUGHT; i++) sigaddset(set, caught[i]);
  for (int i = 0; i < NSTOPPING; i++) sigaddset(set, stopping[i]);
}

void interrupt_hold(sigset_t *before) {
  sigset_t set;
  caught_set(&set);
  sigprocmask(SIG_BLOCK, &set, before);
}

void interrupt_release(const sigset_t *before) { sigprocmask(SIG_SETMASK, before, NULL); }

/* ---- the handler -------------------------------------------------------------------------- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Whether every program has ended.  WNOWAIT leaves each unreaped: a zombie leader keeps its
 * group's id from being reused before the group is killed. */
static bool all_ended(void) {
  for (int i = 0; i < ngroups; i++) {
    siginfo_t info = {0};
    if (waitid(P_PID, (id_t)groups[i], &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == 0)
      return false;
  }
  return true;
}

static void signal_programs(int sig) {
  for (int i = 0; i < ngroups; i++) kill(-groups[i], sig);
}

static void stop_programs(int sig) {
  signal_programs(sig);
  double until = now_s() + INTERRUPT_GRACE_S;
  struct timespec tick = {0, 10 * 1000 * 1000};
  while (ngroups > 0 && !all_ended() && now_s() < until) nanosleep(&tick, NULL);
  for (int i = 0; i < ngroups; i++) kill(-groups[i], SIGKILL);
}

static void remove_temporaries(void) {
  for (int i = ntemps; i-- > 0;)
    if (unlinkat(temps[i].dirfd, temps[i].path, 0) != 0 && (errno == EISDIR || errno == EPERM))
      unlinkat(temps[i].dirfd, temps[i].path, AT_REMOVEDIR);
}

static void on_signal(int sig) {
  stop_programs(sig);
  remove_temporaries();
  struct sigaction dfl = {.sa_handler = SIG_DFL};
  sigaction(sig, &dfl, NULL);
  raise(sig); /* pending while the handler blocks it; delivered, and fatal, once unblocked */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  _exit(128 + sig); /* not reached */
}

/* The stopping signals' action, kept for the handler to install again after each stop. */
static struct sigaction stop_action;

static void on_stop(int sig) {
  int saved = errno;
  signal_programs(SIGSTOP);
  struct sigaction dfl = {.sa_handler = SIG_DFL};
  sigaction(sig, &dfl, NULL);
  raise(sig); /* pending while the handler blocks it */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  double stopped_at = now_s();
  sigprocmask(SIG_UNBLOCK, &set, NULL); /* delivered: kasgen stops here until SIGCONT */
  clock_add_stopped(now_s() - stopped_at);
  sigprocmask(SIG_BLOCK, &set, NULL);
  sigaction(sig, &stop_action, NULL);
  signal_programs(SIGCONT); /* also where kasgen did not stop (an orphaned process group) */
  errno = saved;
}

/* Installs act for sig unless sig was ignored at the start. */
static void catch_unless_ignored(int sig, const struct sigaction *act) {
  struct sigaction old;
  if (sigaction(sig, NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaction(sig, act, NULL);
}

void interrupt_install(void) {
  struct sigaction act = {.sa_handler = on_signal};
  caught_set(&act.sa_mask); /* a second signal waits for the first's cleaning */
  for (int i = 0; i < NCAUGHT; i++) catch_unless_ignored(caught[i], &act);
  stop_action = (struct sigaction){.sa_handler = on_stop, .sa_flags = SA_RESTART};
  caught_set(&stop_action.sa_mask);
  for (int i = 0; i < NSTOPPING; i++) catch_unless_ignored(stopping[i], &stop_action);
}

/* ---- the registries ----------------------------------------------------------------------- */

void interrupt_add_group(pid_t pgid) {
  sigset_t before;
  interrupt_hold(&before);
  if (ngroups == groups_cap) {
    groups_cap = groups_cap ? 2 * groups_cap : 8;
    groups = xrealloc(groups, (size_t)groups_cap * sizeof *groups);
  }
  groups[ngroups++] = pgid;
  interrupt_release(&before);
}

void interrupt_drop_group(pid_t pgid) {
  sigset_t before;
  interrupt_hold(&before);
  for (int i = 0; i < ngroups; i++)
    if (groups[i] == pgid) {
      groups[i] = groups[--ngroups];
      break;
    }
  interrupt_release(&before);
}

void interrupt_add_temporary(int dirfd, const char *path) {
  char *copy = xstrdup(path);
  sigset_t before;
  interrupt_hold(&before);
  if (ntemps == temps_cap) {
    temps_cap = temps_cap ? 2 * temps_cap : 8;
    temps = xrealloc(temps, (size_t)temps_cap * sizeof *temps);
  }
  temps[ntemps++] = (Temporary){dirfd, copy};
  interrupt_release(&before);
}

void interrupt_drop_temporary(int dirfd, const char *path) {
  char *gone = NULL;
  sigset_t before;
  interrupt_hold(&before);
  for (int i = ntemps; i-- > 0;)
    if (temps[i].dirfd == dirfd && !strcmp(temps[i].path, path)) {
      gone = temps[i].path;
      memmove(&temps[i], &temps[i + 1], (size_t)(ntemps - i - 1) * sizeof *temps);
      ntemps--;
      break;
    }
  interrupt_release(&before);
  free(gone);
}
