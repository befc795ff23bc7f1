/*
 * local_gpu.c — the GPU of the machine kasgen runs on, so that the default timing database is
 * that GPU's when benchmarks/ holds one (docs/timingdb.md, "Which database").  Before, a user on
 * an H200 who ran the README's command got the H100's predictions, and learnt it only from the
 * harness's note after a GPU run, whose #1 was then up to 53% behind the measured best.
 *
 * $KASGEN_GPU names the GPU when it is set (empty: none, so the default database); else
 * `nvidia-smi --query-gpu=name --format=csv,noheader` says, run without a shell with a fixed
 * argument list, its standard output read for at most LOCAL_GPU_TIMEOUT_MS (a broken driver can
 * hang it; it is then killed) and LOCAL_GPU_MAX_OUTPUT bytes.  Only a name of printable ASCII is
 * taken.  GPUs of different names choose none: which of them the generated code will run on is
 * not known here.
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

#define LOCAL_GPU_TIMEOUT_MS 5000
#define LOCAL_GPU_MAX_OUTPUT 4096

extern char **environ;

/* nvidia-smi's standard output (NUL-terminated, at most LOCAL_GPU_MAX_OUTPUT bytes), or NULL
 * when it is not installed, fails, or takes too long. */
static char *nvidia_smi_output(void) {
  int fds[2];
  if (pipe(fds) != 0) return NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  char *argv[] = {"nvidia-smi", "--query-gpu=name", "--format=csv,noheader", NULL};
  pid_t pid;
  int spawned = posix_spawnp(&pid, "nvidia-smi", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    return NULL;
  }
  char *out = xcalloc(LOCAL_GPU_MAX_OUTPUT + 1, 1);
  size_t len = 0;
  double deadline = clock_seconds() + LOCAL_GPU_TIMEOUT_MS / 1000.0;
  bool done = false, late = false;
  while (!done && len < LOCAL_GPU_MAX_OUTPUT) {
    int left_ms = (int)((deadline - clock_seconds()) * 1000);
    struct pollfd p = {.fd = fds[0], .events = POLLIN};
    int ready = left_ms > 0 ? poll(&p, 1, left_ms) : 0;
    if (ready == 0) late = true;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    ssize_t n = read(fds[0], out + len, LOCAL_GPU_MAX_OUTPUT - len);
    if (n > 0) len += (size_t)n;
    else if (n == 0 || errno != EINTR) done = true;
  }
  close(fds[0]);
  if (late || !done) kill(pid, SIGKILL); /* too slow, or more than a list of names */
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (late || !done || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    free(out);
    return NULL;
  }
  return out;
}

/* The one name every line of out gives (trailing spaces and a CR dropped), or NULL. */
static char *single_name(const char *out) {
  char *name = NULL;
  for (const char *line = out; *line;) {
    size_t n = strcspn(line, "\n");
    size_t k = n;
    while (k > 0 && (line[k - 1] == ' ' || line[k - 1] == '\r')) k--;
    bool printable = k > 0;
    for (size_t i = 0; i < k; i++) printable &= line[i] >= 0x20 && line[i] < 0x7f;
    if (k > 0 && (!printable || (name && (strlen(name) != k || strncmp(name, line, k))))) {
      free(name);
      return NULL;
    }
    if (k > 0 && !name) name = xstrndup(line, k);
    line += n + (line[n] == '\n');
  }
  return name;
}

char *local_gpu_name(void) {
  const char *given = getenv("KASGEN_GPU");
  if (given) return *given ? single_name(given) : NULL;
  char *out = nvidia_smi_output();
  char *name = out ? single_name(out) : NULL;
  free(out);
  return name;
}
