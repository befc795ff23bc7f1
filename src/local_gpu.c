/*
 * local_gpu.c — the GPU of the machine kasgen runs on, so that the default timing database is
 * that GPU's when benchmarks/ holds one (docs/timingdb.md, "Which database").  Before, a user on
 * an H200 who ran the README's command got the H100's predictions, and learnt it only from the
 * harness's note after a GPU run, whose #1 was then up to 53% behind the measured best.
 *
 * $KASGEN_GPU names the GPU when it is set (empty: none, so the default database); else
 * `nvidia-smi --query-gpu=name --format=csv,noheader` says, run without a shell with a fixed
 * argument list (spawn.c), its standard output read for at most LOCAL_GPU_TIMEOUT_S seconds (a
 * broken driver can hang it; it is then killed) and LOCAL_GPU_MAX_OUTPUT bytes.  Only a name of
 * printable ASCII is taken.  GPUs of different names choose none: which of them the generated
 * code will run on is not known here.
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>

#define LOCAL_GPU_TIMEOUT_S 5
#define LOCAL_GPU_MAX_OUTPUT 4096

/* nvidia-smi's standard output (NUL-terminated, at most LOCAL_GPU_MAX_OUTPUT bytes), or NULL
 * when it is not installed, fails, takes too long, or says more (not a list of names). */
static char *nvidia_smi_output(void) {
  char *argv[] = {"nvidia-smi", "--query-gpu=name", "--format=csv,noheader", NULL};
  SpawnOptions opt = {.out = {.sink = SPAWN_CAPTURE, .max = LOCAL_GPU_MAX_OUTPUT},
                      .err = {.sink = SPAWN_DEV_NULL}, .timeout_s = LOCAL_GPU_TIMEOUT_S};
  SpawnResult r = spawn_run(argv, &opt);
  if (r.end == SPAWN_EXITED && r.status == 0 && !r.out.cut) return r.out.data;
  spawn_result_free(&r);
  return NULL;
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
