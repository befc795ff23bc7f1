/*
 * ptxas.c — register counts and spills from the compiler instead of the model's estimate
 * (docs/model.md, "Registers from ptxas").  For the top PTXAS_TOP_K candidates of a search, the
 * kernels are generated exactly as the emitter writes them (emit_cuda_kernels), compiled once by
 * nvcc with `-Xptxas -v` (no GPU needed), and ptxas's report (registers, spill stores and loads
 * of every entry function) replaces the estimate in each kernel's plan; the plans are predicted
 * again, so that registers drive occupancy and spills cost local-memory traffic, and the
 * candidates are re-ranked.
 *
 * One nvcc run compiles every candidate that holds a kernel not yet known, each in a namespace of
 * its own in one translation unit (nvcc's start-up is paid once).  The report of a candidate is
 * cached under the hash of its kernel text, the library's kas_device.h, nvcc's path and flags
 * ($KASGEN_CACHE, else $XDG_CACHE_HOME/kasgen, else ~/.cache/kasgen), so a rerun compiles
 * nothing.  Without nvcc ($NVCC, nvcc on $PATH, /usr/local/cuda/bin/nvcc) kasgen says so once
 * and keeps the estimate.  nvcc runs without a shell on files kasgen wrote itself in a fresh
 * temporary folder; nothing from an input is passed to it as an option.  It runs for at most
 * what --time-limit left after the search, else NVCC_TIMEOUT_S; stopped, kasgen says so and
 * keeps the estimate too.
 */
#include "kasgen.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PTXAS_TOP_K 30
#define PTXAS_ARCH "-arch=sm_90"
#define PTXAS_NAME "ptxas" /* candidate name and symbol prefix of the compiled text */

/* What ptxas says of one kernel. */
typedef struct {
  int regs, spill_stores, spill_loads; /* spills in bytes per thread */
  bool known;
} KernelReport;

/* ---- finding nvcc ------------------------------------------------------------------------- */

static bool executable(const char *path) { return access(path, X_OK) == 0; }

/* $NVCC (a path, or a name looked up on $PATH), nvcc on $PATH, /usr/local/cuda/bin/nvcc: the
 * order of tools/find-nvcc.sh.  NULL when none runs. */
static char *find_nvcc(void) {
  const char *env = getenv("NVCC");
  const char *name = env && *env ? env : "nvcc";
  if (strchr(name, '/')) return executable(name) ? xstrdup(name) : NULL;
  const char *path = getenv("PATH");
  for (const char *p = path ? path : ""; *p;) {
    const char *colon = strchr(p, ':');
    size_t len = colon ? (size_t)(colon - p) : strlen(p);
    char *full = xasprintf("%.*s/%s", (int)len, p, name);
    if (len && executable(full)) return full;
    free(full);
    p += len + (colon ? 1 : 0);
  }
  if (env && *env) return NULL; /* the user's choice: not replaced */
  return executable("/usr/local/cuda/bin/nvcc") ? xstrdup("/usr/local/cuda/bin/nvcc") : NULL;
}

/* ---- the cache ---------------------------------------------------------------------------- */

static char *cache_dir(void) {
  const char *k = getenv("KASGEN_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
  if (k && *k) return xstrdup(k);
  if (x && *x) return xasprintf("%s/kasgen", x);
  return h && *h ? xasprintf("%s/.cache/kasgen", h) : NULL;
}

static char *cache_path(const char *dir, uint64_t key) {
  return xasprintf("%s/ptxas-%016llx.txt", dir, (unsigned long long)key);
}

/* Reads a cached report of nk kernels ("k<i> <registers> <spill stores> <spill loads>" lines,
 * bytes per thread); false when it is absent or not what kasgen writes (it is then compiled
 * again: so are the caches of kasgen before 2026-11-29, which wrote stores + loads as one). */
static bool cache_read(const char *dir, uint64_t key, KernelReport *rep, int nk) {
  if (!dir) return false;
  char *path = cache_path(dir, key);
  FILE *f = fopen(path, "r");
  free(path);
  if (!f) return false;
  int got = 0, k, regs, stores, loads;
  while (fscanf(f, " k%d %d %d %d", &k, &regs, &stores, &loads) == 4)
    if (k >= 1 && k <= nk && regs > 0 && stores >= 0 && loads >= 0 && !rep[k - 1].known)
      rep[k - 1] = (KernelReport){regs, stores, loads, true}, got++;
  fclose(f);
  if (got == nk) return true;
  for (int i = 0; i < nk; i++) rep[i].known = false;
  return false;
}

/* Best effort: a cache that cannot be written only costs a compile next time. */
static void cache_write(const char *dir, uint64_t key, const KernelReport *rep, int nk) {
  if (!dir) return;
  char *parent = xstrdup(dir);
  for (char *p = parent + 1; *p; p++)
    if (*p == '/') *p = '\0', mkdir(parent, 0777), *p = '/';
  mkdir(parent, 0777);
  free(parent);
  char *path = cache_path(dir, key), *temp = xasprintf("%s.%ld.tmp", path, (long)getpid());
  FILE *f = fopen(temp, "w");
  if (f) {
    for (int i = 0; i < nk; i++)
      fprintf(f, "k%d %d %d %d\n", i + 1, rep[i].regs, rep[i].spill_stores, rep[i].spill_loads);
    if (fclose(f) == 0) rename(temp, path);
  }
  unlink(temp);
  free(temp);
  free(path);
}

/* ---- compiling ---------------------------------------------------------------------------- */

/* nvcc compiles at most PTXAS_TOP_K candidates in one run.  Without --time-limit it gets
 * NVCC_TIMEOUT_S: a cold compile of stvenant_element's top 30 (128 calls, 24 units, the largest
 * the suites know) took 29 s on this project's shared two-core machine (kasgen with --ptxas
 * 51.2 s, without 21.9 s, 2026-11-29; 13 s before on two idle cores), a tenth of it.  The bound
 * keeps an nvcc that hangs (a license or driver wait, a file system that does not answer, an
 * #include of a FIFO in the library) from hanging kasgen for long: it is killed, said, and the
 * estimate kept, as when nvcc fails or is missing.  With --time-limit S, nvcc gets what the
 * search left of S (ptxas_rerank's time_left_s). */
#define NVCC_TIMEOUT_S (5 * 60)

/* How an nvcc run ended. */
typedef enum { NVCC_OK, NVCC_FAILED, NVCC_CUT } NvccEnd;

/* Runs nvcc (no shell) in folder tmp on ptxas.cu, its output to tmp/ptxas.log, for at most
 * timeout_s seconds. */
static NvccEnd run_nvcc(const char *nvcc, const char *tmp, const char *libdir, double timeout_s) {
  char *log = xasprintf("%s/ptxas.log", tmp), *src = xasprintf("%s/ptxas.cu", tmp);
  char *obj = xasprintf("%s/ptxas.o", tmp), *inc = xasprintf("-I%s", libdir);
  int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  NvccEnd end = NVCC_FAILED;
  if (fd >= 0) {
    char *argv[] = {(char *)nvcc, "-O3", PTXAS_ARCH, "-Xptxas", "-v", inc, "-c", src, "-o",
                    obj, NULL};
    SpawnOptions opt = {.out = {.sink = SPAWN_TO_FD, .fd = fd},
                        .err = {.sink = SPAWN_TO_FD, .fd = fd}, .timeout_s = timeout_s};
    SpawnResult r = spawn_run(argv, &opt);
    end = r.end == SPAWN_TIMED_OUT                    ? NVCC_CUT
          : r.end == SPAWN_EXITED && r.status == 0 ? NVCC_OK
                                                    : NVCC_FAILED;
    close(fd);
  }
  free(log);
  free(src);
  free(obj);
  free(inc);
  return end;
}

/* "...'_ZN2c315kas_ptxas_k2E...'" -> unit 3, kernel 2; false for other functions. */
static bool entry_ids(const char *line, int *unit, int *kernel) {
  const char *q = strstr(line, "'_ZN");
  const char *k = strstr(line, "kas_" PTXAS_NAME "_k");
  if (!q || !k) return false;
  char *c;
  long len = strtol(q + 4, &c, 10); /* the namespace "c<unit>", length-prefixed */
  if (len < 2 || len > 8 || *c != 'c') return false;
  char digits[8] = {0};
  memcpy(digits, c + 1, (size_t)len - 1);
  *unit = atoi(digits);
  *kernel = atoi(k + strlen("kas_" PTXAS_NAME "_k"));
  return true;
}

/* Parses ptxas's report into rep[unit][kernel - 1]. */
static void parse_report(const char *log, KernelReport **rep, const int *nk, int nunits) {
  int unit = -1, kernel = 0;
  for (const char *line = log; line && *line;) {
    const char *end = strchr(line, '\n');
    char *l = xstrndup(line, end ? (size_t)(end - line) : strlen(line));
    int u, k, stores, loads, regs;
    if (strstr(l, "Compiling entry function")) {
      unit = -1;
      if (entry_ids(l, &u, &k) && u >= 0 && u < nunits && k >= 1 && k <= nk[u])
        unit = u, kernel = k;
    } else if (unit >= 0 && sscanf(l, " %*d bytes stack frame, %d bytes spill stores, %d bytes "
                                      "spill loads", &stores, &loads) == 2) {
      rep[unit][kernel - 1].spill_stores = stores;
      rep[unit][kernel - 1].spill_loads = loads;
    } else if (unit >= 0 && (sscanf(l, "ptxas info : Used %d registers", &regs) == 1 ||
                             sscanf(l, "ptxas info    : Used %d registers", &regs) == 1)) {
      rep[unit][kernel - 1].regs = regs;
      rep[unit][kernel - 1].known = true;
    }
    free(l);
    line = end ? end + 1 : NULL;
  }
}

/* The warning of an nvcc run cut at its bound (by_time_limit: what --time-limit left). */
static void say_cut(const char *nvcc, double bound_s, bool by_time_limit) {
  diag_warning((SrcLoc){.file = nvcc}, "compiling the candidates for ptxas's register report "
               "took longer than %s%.3g s; stopped, keeping the estimated registers",
               by_time_limit ? "what --time-limit left, " : "kasgen's bound of ", bound_s);
}

/* Compiles the texts as units c0, c1, ... of one file for at most bound_s seconds; fills rep;
 * false after a warning. */
static bool compile_units(const char *nvcc, const Library *lib, char **texts, int n,
                          KernelReport **rep, const int *nk, double bound_s,
                          bool by_time_limit) {
  char tmpl[] = "/tmp/kasgen-ptxas-XXXXXX";
  char *tmp = mkdtemp(tmpl);
  if (!tmp) return false;
  /* an interrupted compile leaves nothing in /tmp: the folder, then its files (interrupt.c) */
  char *made[] = {tmp, xasprintf("%s/ptxas.cu", tmp), xasprintf("%s/ptxas.log", tmp),
                  xasprintf("%s/ptxas.o", tmp)};
  for (int i = 0; i < 4; i++) interrupt_add_temporary(AT_FDCWD, made[i]);
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, "#include <cuda_runtime.h>\n#include <math.h>\n#include <stddef.h>\n"
               "#include <stdint.h>\n#include \"kas_device.h\"\n");
  for (int u = 0; u < n; u++) sb_printf(&sb, "namespace c%d {\n%s\n}\n", u, texts[u]);
  const char *src = made[1], *log = made[2];
  FILE *f = fopen(src, "w");
  bool ok = f && fputs(sb.data, f) >= 0;
  if (f && fclose(f) != 0) ok = false;
  sb_free(&sb);
  NvccEnd end = ok ? run_nvcc(nvcc, tmp, lib->dir, bound_s) : NVCC_FAILED;
  ok = end == NVCC_OK;
  char *text = ok ? read_text_file(log, NULL) : NULL;
  if (text) parse_report(text, rep, nk, n);
  if (end == NVCC_CUT) say_cut(nvcc, bound_s, by_time_limit);
  else if (!ok) diag_warning((SrcLoc){.file = nvcc}, "compiling the candidates for ptxas's "
                             "register report failed; keeping the estimated registers");
  free(text);
  for (int i = 4; i-- > 0;) {
    if (i > 0) unlink(made[i]);
    else rmdir(tmp);
    interrupt_drop_temporary(AT_FDCWD, made[i]);
  }
  for (int i = 1; i < 4; i++) free(made[i]);
  return ok;
}

/* ---- re-ranking --------------------------------------------------------------------------- */

/* A plan's new prediction and how much it moved. */
typedef struct {
  KernelPlan *plan;
  double delta;
} Moved;

static double moved_by(const Moved *m, int nm, const Candidate *c) {
  double d = 0;
  for (int k = 0; k < c->nkernels; k++)
    for (int i = 0; i < nm; i++)
      if (m[i].plan == c->kernels[k]) d += m[i].delta;
  return d;
}

/* Sets the plans' registers and spills from the reports, predicts them again and re-ranks. */
static void apply(const Dag *dag, const TimingDb *db, const Target *t, SearchResult *res,
                  KernelReport **rep, int ncands) {
  SearchContext *ctx = search_context_new(dag, db, t);
  ctx->n = res->n > 0 ? res->n : ctx->n; /* the search's element count */
  model_memo_quiet(ctx->model);
  Moved *m = xcalloc((size_t)ncands * KAS_MAX_NODES, sizeof *m);
  int nm = 0;
  for (int c = 0; c < ncands; c++) {
    const Candidate *cand = &res->cands[c];
    SearchContext *own = search_context_own(ctx, cand);
    for (int k = 0; k < cand->nkernels; k++) {
      KernelPlan *p = cand->kernels[k];
      if (!rep[c] || !rep[c][k].known || p->regs_from_ptxas) continue;
      p->regs_estimate = rep[c][k].regs;
      p->spill_stores = rep[c][k].spill_stores;
      p->spill_loads = rep[c][k].spill_loads;
      p->regs_from_ptxas = true;
      double before = p->predicted_ns_per_elem;
      p->predicted_ns_per_elem = model_predict_kernel(own ? own : ctx, p);
      m[nm++] = (Moved){p, p->predicted_ns_per_elem - before};
    }
    search_context_free(own);
  }
  for (int c = 0; c < res->ncands; c++)
    res->cands[c].predicted_ns_per_elem += moved_by(m, nm, &res->cands[c]);
  if (res->unfused) res->unfused->predicted_ns_per_elem += moved_by(m, nm, res->unfused);
  qsort(res->cands, (size_t)res->ncands, sizeof *res->cands, candidate_compare);
  for (int c = 0; c < res->ncands; c++) res->cands[c].rank = c + 1;
  free(m);
  search_context_free(ctx);
}

/* Whether candidate c holds a plan that no earlier candidate (to be compiled or cached) has. */
static bool brings_new_plan(const SearchResult *res, int c, const bool *covered) {
  for (int k = 0; k < res->cands[c].nkernels; k++) {
    bool seen = false;
    for (int d = 0; d < c && !seen; d++)
      if (covered[d])
        for (int j = 0; j < res->cands[d].nkernels; j++)
          seen |= res->cands[d].kernels[j] == res->cands[c].kernels[k];
    if (!seen) return true;
  }
  return false;
}

/* Whether nvcc may run, and for how long (*bound_s): what --time-limit left (time_left_s > 0),
 * else NVCC_TIMEOUT_S.  A time limit already spent by the search runs none (said), and the
 * reports in the cache are still used. */
static bool compile_bound(double time_left_s, double *bound_s) {
  *bound_s = time_left_s > 0 ? time_left_s : NVCC_TIMEOUT_S;
  if (!isnan(time_left_s) && time_left_s <= 0) {
    diag_warning((SrcLoc){0}, "the search spent --time-limit: ptxas is not run for the "
                 "candidates not in its cache, whose registers stay estimated");
    return false;
  }
  return true;
}

void ptxas_rerank(const Dag *dag, const Library *lib, const TimingDb *db, const Target *t,
                  SearchResult *res, double time_left_s) {
  static bool said; /* "no nvcc" is said once per run */
  char *nvcc = find_nvcc();
  if (!nvcc) {
    if (!said) diag_note((SrcLoc){0}, "no nvcc found: registers are estimated, not read from "
                                      "ptxas (docs/model.md)");
    said = true;
    return;
  }
  int n = res->ncands < PTXAS_TOP_K ? res->ncands : PTXAS_TOP_K;
  char *dpath = xasprintf("%s/kas_device.h", lib->dir), *device = read_text_file(dpath, NULL);
  char *dir = cache_dir();
  uint64_t base = fnv1a(fnv1a(fnv1a(14695981039346656037ull, nvcc), PTXAS_ARCH " -O3"),
                        device ? device : "");
  KernelReport **rep = xcalloc((size_t)(n ? n : 1), sizeof *rep);
  char **texts = xcalloc((size_t)(n ? n : 1), sizeof *texts);
  uint64_t *keys = xcalloc((size_t)(n ? n : 1), sizeof *keys);
  int *nk = xcalloc((size_t)(n ? n : 1), sizeof *nk), *unit_of = xcalloc((size_t)(n ? n : 1),
                                                                          sizeof *unit_of);
  bool *covered = xcalloc((size_t)(n ? n : 1), sizeof *covered);
  char **units = xcalloc((size_t)(n ? n : 1), sizeof *units);
  KernelReport **unit_rep = xcalloc((size_t)(n ? n : 1), sizeof *unit_rep);
  int nunits = 0, *unit_nk = xcalloc((size_t)(n ? n : 1), sizeof *unit_nk);
  for (int c = 0; device && c < n; c++) {
    unit_of[c] = -1;
    if (!brings_new_plan(res, c, covered)) continue;
    texts[c] = emit_cuda_kernels(dag, t, &res->cands[c], NULL, PTXAS_NAME, PTXAS_NAME, true);
    if (!texts[c]) continue;
    covered[c] = true;
    nk[c] = res->cands[c].nkernels;
    keys[c] = fnv1a(base, texts[c]);
    rep[c] = xcalloc((size_t)nk[c], sizeof **rep);
    if (cache_read(dir, keys[c], rep[c], nk[c])) continue;
    unit_of[c] = nunits;
    units[nunits] = texts[c];
    unit_rep[nunits] = rep[c];
    unit_nk[nunits++] = nk[c];
  }
  double bound_s;
  if (nunits > 0 && compile_bound(time_left_s, &bound_s) &&
      compile_units(nvcc, lib, units, nunits, unit_rep, unit_nk, bound_s, time_left_s > 0))
    for (int c = 0; c < n; c++)
      if (unit_of[c] >= 0) {
        bool all = true;
        for (int k = 0; k < nk[c]; k++) all &= rep[c][k].known;
        if (all) cache_write(dir, keys[c], rep[c], nk[c]);
      }
  apply(dag, db, t, res, rep, n);
  for (int c = 0; c < n; c++) free(rep[c]), free(texts[c]);
  free(rep), free(texts), free(keys), free(nk), free(unit_of), free(covered), free(units);
  free(unit_rep), free(unit_nk), free(dir), free(device), free(dpath), free(nvcc);
}
