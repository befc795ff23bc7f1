/*
 * tune.c — what `kasgen tune DIR` (cli_tune.c) does to close the loop after a GPU run.  DIR is
 * a folder the main job generated and the harness ran in (`make run` wrote DIR/results.xml):
 *
 *   1. searches again for the spec DIR was generated from (DIR's copy of its text, <stem>.spec,
 *      which the main job wrote), and checks that the search gives the candidates of the run,
 *      rank by rank (the same kernels, implementation by implementation, and call by call, block
 *      shape by shape and code digest where the run's file gives them);
 *      a calibration written since the run is set aside when the run was generated without it;
 *   2. shows the predicted and measured ranks side by side, with the current model's prediction
 *      (calibrated, when a calibration is stored) and the three figures the model is judged by:
 *      Spearman's rho, the predicted best's measured gap to the measured best, the mean relative
 *      error;
 *   3. chooses the candidate to ship: the measured best (correct, fastest median), unless the
 *      predicted best is correct and slower than it by no more than the run-to-run spread (the
 *      range of the harness's rounds, the larger of the two candidates'): a difference within
 *      the noise does not overturn the model;
 *   4. re-emits DIR (the same candidates, from their plans) with embed/ around the chosen one,
 *      and says in the embed header which candidate and why.
 *
 * The embed is always generated from the plan (emit_cuda_kernels), never copied from files in
 * DIR: what a results file says is data, checked, and never executed.
 */
#include "kasgen.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The PATH of index.txt's first line, "kasgen V: spec NAME (PATH), ..." (cut at its end), or
 * NULL. */
static char *first_line_spec(char *text) {
  char *nl = strchr(text, '\n');
  if (nl) *nl = '\0';
  char *open = strstr(text, " (");
  char *close = open ? strstr(open, "), ") : NULL;
  /* "-" would read the standard input (read_text_file): no generation reads its spec so. */
  size_t len = open && close ? (size_t)(close - open - 2) : 0;
  if (len > 0 && !memchr(open, '\\', len + 2) && strncmp(open + 2, "-", len))
    return xstrndup(open + 2, len);
  return NULL;
}

char *index_spec_name(const char *text) {
  const char *at = strstr(text, ": spec "), *nl = strchr(text, '\n');
  if (!at || (nl && at > nl)) return NULL;
  at += strlen(": spec ");
  size_t len = strcspn(at, " \n");
  return len ? xstrndup(at, len) : NULL;
}

/* Whether the file at path is a regular file that can be read and holds other bytes than text
 * (len bytes); quietly, as a note depends on it alone. */
static bool differs(const char *path, const char *text, size_t len) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return false;
  if ((size_t)st.st_size != len) {
    close(fd);
    return true;
  }
  char *got = xmalloc(len + 1);
  size_t have = 0;
  ssize_t n = 0;
  /* one byte more than len is asked for: a file grown since the stat differs */
  while (have <= len && (n = read(fd, got + have, len + 1 - have)) > 0) have += (size_t)n;
  close(fd);
  bool other = n >= 0 && (have != len || memcmp(got, text, len)); /* a failed read tells nothing */
  free(got);
  return other;
}

/* The folder's copy of its spec, DIR/NAME.spec (NAME: index.txt's first line's), read as a plain
 * file (not through a link): its path, or NULL after an error naming it (missing, a link, a FIFO,
 * a folder, unreadable).  The spec the folder was generated from (the first line's path), where
 * it is still a file that differs from the copy, gets a note: the run measured the copy's code.
 * text: index.txt's (its first line cut off here); *origin: that path, or NULL. */
static char *folder_copy(const char *dir, const char *index, char *text, char **origin) {
  char *name = index_spec_name(text);
  /* the name comes from the file: a path in it would reach out of the folder */
  if (!name || strspn(name, NAME_CHARS) != strlen(name) || name[0] == '-') {
    diag_error((SrcLoc){.file = index, .text = text, .line = 1},
               "cannot tell the spec's name from this line");
    free(name);
    return NULL;
  }
  char *copy = xasprintf("%s/%s.spec", dir, name);
  free(name);
  struct stat st;
  size_t len = 0;
  char *copied = NULL;
  if (lstat(copy, &st) == 0 && S_ISLNK(st.st_mode))
    diag_error((SrcLoc){.file = copy}, "cannot read: it is a symbolic link; kasgen reads a "
               "folder's copy of its spec only as the folder's own plain file");
  else
    copied = read_text_file(copy, &len); /* the spec reader's errors, naming the copy */
  if (!copied) {
    diag_note((SrcLoc){0}, "name the spec %s was generated from with --spec FILE", dir);
    free(copy);
    return NULL;
  }
  char *from = first_line_spec(text);
  if (from && strcmp(from, STDIN_NAME) && differs(from, copied, len))
    diag_note((SrcLoc){.file = from}, "changed since %s was generated from it: the run measured "
              "the code of the folder's copy, %s, which is searched (--spec FILE searches "
              "another spec)", dir, copy);
  free(copied);
  if (origin) *origin = from;
  else free(from);
  return copy;
}

/* The spec to search DIR with, from its index.txt (path, text): the folder's copy where the
 * line SPEC_COPY_KEY says it holds one (has_copy; *origin: the spec it was copied from), else the
 * spec the first line names: "kasgen V: spec NAME (PATH), ...". */
static char *spec_of_index(const char *dir, const char *path, char *text, bool has_copy,
                           char **origin) {
  if (has_copy) return folder_copy(dir, path, text, origin);
  /* A folder written before the copy: the spec the first line names. */
  char *spec = NULL;
  if (!(spec = first_line_spec(text)))
    diag_error((SrcLoc){.file = path, .text = text, .line = 1},
               "cannot tell the spec from this line");
  /* A spec the line names but that cannot be read (a folder generated from the standard
   * input, or from a relative path by an older kasgen, or a spec moved since) is said here,
   * with the way out, rather than as the spec reader's bare "cannot read". */
  if (spec && (!strcmp(spec, STDIN_NAME) || access(spec, R_OK) != 0)) {
    SrcLoc at = {.file = path, .text = text, .line = 1};
    if (!strcmp(spec, STDIN_NAME))
      diag_error(at, "%s was generated from the standard input: its spec is not on disk", dir);
    else
      diag_error(at, "%s was generated from the spec %s, which cannot be read: %s", dir, spec,
                 strerror(errno));
    free(spec);
    spec = NULL;
  }
  if (!spec)
    diag_note((SrcLoc){0}, "name the spec %s was generated from with --spec FILE", dir);
  return spec;
}

/* The path of the spec as the main job was given it (SPEC_GIVEN_KEY's line), or from a folder
 * written before that line the first line's (which cuts text there). */
static char *given_of_index(char *text) {
  static const char key[] = "\n" SPEC_GIVEN_KEY, tail[] = " (the generated code names it so).";
  const char *line = strstr(text, key);
  if (!line) return first_line_spec(text);
  line += strlen(key);
  const char *end = strstr(line, tail), *nl = strchr(line, '\n');
  return end && (!nl || end < nl) ? xstrndup(line, (size_t)(end - line)) : NULL;
}

/* The --variants K of the line "Variants: --variants K...", 0 without one. */
static int variants_of_index(const char *text) {
  static const char key[] = "\nVariants: --variants ";
  const char *line = strstr(text, key);
  long k = line ? strtol(line + strlen(key), NULL, 10) : 0;
  return k > 0 && k <= MAX_TOP ? (int)k : 0; /* main.c's range of --variants */
}

bool tune_read_index(const char *dir, bool spec_wanted, FolderIndex *fi) {
  *fi = (FolderIndex){0};
  char *path = xasprintf("%s/index.txt", dir);
  /* None at all (a folder given with --spec) is a folder without the lines; one that cannot be
   * read (a FIFO, a folder) is an error, said once, by read_text_file. */
  bool absent = !spec_wanted && access(path, F_OK) != 0 && errno == ENOENT;
  char *text = absent ? NULL : read_text_file(path, NULL);
  if (text) { /* in this order: the last two cut the text after its first line */
    bool has_copy = strstr(text, "\n" SPEC_COPY_KEY) != NULL;
    fi->name = index_spec_name(text);
    fi->variants = variants_of_index(text);
    fi->given = given_of_index(text);
    if (spec_wanted) fi->spec = spec_of_index(dir, path, text, has_copy, &fi->origin);
  }
  bool ok = spec_wanted ? fi->spec != NULL : absent || text;
  free(text);
  free(path);
  return ok;
}

void tune_index_free(FolderIndex *fi) {
  free(fi->spec), free(fi->given), free(fi->name), free(fi->origin);
  *fi = (FolderIndex){0};
}

/* Whether text (malloc'ed, freed here) is what the row gives, or the row gives nothing. */
static bool same_or_absent(char *text, const char *given) {
  bool same = !given || !strcmp(text, given);
  free(text);
  return same;
}

/* Whether c is the row's candidate by what the row names: its kernels' implementations, and
 * where the row has them (files written since the harness wrote them), its kernels' calls,
 * block shapes and code (emitted last: the others rule out most candidates cheaply). */
static bool same_kernels(const Dag *dag, const Target *t, const Candidate *c,
                         const ResultRow *row) {
  return row->kernels && same_or_absent(candidate_kernels(c), row->kernels) &&
         (!row->calls || same_or_absent(candidate_calls(dag, c), row->calls)) &&
         (!row->shapes || same_or_absent(candidate_shapes(c), row->shapes)) &&
         (!row->code || same_or_absent(emit_code_digest(dag, t, c), row->code));
}

/* Whether x and y are the same prediction, to rounding. */
static bool alike(double x, double y) {
  return x == y || fabs(x - y) <= 1e-9 * fmax(fabs(x), fabs(y));
}

/* How far candidate c's prediction now is from the one the run's file gives its row (results.c
 * requires it, a finite number). */
static double distance(const Candidate *c, const ResultRow *row) {
  return fabs(c->predicted_ns_per_elem - row->predicted_ns);
}

const Candidate *tune_candidate_of(const Dag *dag, const Target *t, const SearchResult *res,
                                   const ResultRow *row, bool strict) {
  if (row->predicted_rank >= 1 && row->predicted_rank <= res->ncands &&
      same_kernels(dag, t, &res->cands[row->predicted_rank - 1], row))
    return &res->cands[row->predicted_rank - 1];
  /* A search that gained candidates since the run ranks them elsewhere.  An older row names
   * only implementations, which candidates that split a loop's iterations differently between
   * the same kernels share (pair_blocks18's 0.3771 and 0.3849 ns); a row's calls tell those
   * apart, its shapes two block shapes of one kernel (--variants) and its code two plans of
   * other load and save routines, but files written before them lack them.  Of the candidates
   * left, the one predicted nearest to the run's own prediction is the row's; two equally near
   * (within 1e-5 of it, no less than a unit of the six digits the harness writes) and predicted
   * differently leave it ambiguous (isomorphic twins, predicted alike, are the same to the
   * model). */
  const Candidate *found = NULL;
  for (int c = 0; !strict && c < res->ncands; c++)
    if (same_kernels(dag, t, &res->cands[c], row) &&
        (!found || distance(&res->cands[c], row) < distance(found, row)))
      found = &res->cands[c];
  for (int c = 0; found && c < res->ncands; c++) {
    const Candidate *x = &res->cands[c];
    /* the kernel string, built anew for each candidate, is compared last */
    if (x != found && distance(x, row) - distance(found, row) <= 1e-5 * row->predicted_ns &&
        !alike(x->predicted_ns_per_elem, found->predicted_ns_per_elem) &&
        same_kernels(dag, t, x, row))
      return NULL;
  }
  return found;
}

/* Whether the search reproduces every ranked row; reports the first that differs when quiet is
 * false. */
bool tune_reproduces(const Results *r, const Dag *dag, const Target *t, const SearchResult *res,
                     const char *rpath, bool quiet) {
  for (int i = 0; i < r->nrows; i++) {
    const ResultRow *row = &r->rows[i];
    if (row->predicted_rank == 0 || tune_candidate_of(dag, t, res, row, true)) continue;
    if (!quiet) {
      char *shown = terminal_text(row->name ? row->name : "");
      diag_error((SrcLoc){.file = rpath, .line = (int)row->line},
                 "the search no longer gives the candidate measured as %s (predicted rank %ld); "
                 "the library, the database or the model changed since the run was generated, or "
                 "an option given here differs from the folder's (generation.ini)",
                 shown, row->predicted_rank);
      diag_note((SrcLoc){0}, "generate the folder again and run it on the GPU again");
      free(shown);
    }
    return false;
  }
  return true;
}

/* ---- the GPU ---------------------------------------------------------------------------- */

bool tune_same_gpu(SrcLoc at, const char *what, const char *device, const TimingDb *db,
                   bool refuse) {
  if (db->analytic || !strcmp(device, db->dev.name)) return true;
  const char *why = refuse ? "calibrate fits a GPU's constants to that GPU's runs only"
                           : "the model's figures below are for another GPU than the one "
                             "measured";
  (refuse ? diag_error : diag_warning)(at, "%s on '%s', but the database %s is of '%s': %s",
                                       what, device, db->path, db->dev.name, why);
  return !refuse;
}

/* ---- the figures ------------------------------------------------------------------------ */

double tune_spread(const ResultRow *row) {
  return isfinite(row->round_min_ns) && isfinite(row->round_max_ns)
             ? row->round_max_ns - row->round_min_ns
             : 0;
}

void tune_figures(const double *pred, const double *meas, int n, TuneFigures *f) {
  *f = (TuneFigures){.n = n, .spearman = rank_correlation(pred, meas, n), .gap = NAN,
                     .error = NAN};
  if (n == 0) return;
  int best_pred = 0, best_meas = 0;
  double err = 0;
  for (int i = 0; i < n; i++) {
    if (pred[i] < pred[best_pred]) best_pred = i;
    if (meas[i] < meas[best_meas]) best_meas = i;
    err += fabs(pred[i] - meas[i]) / meas[i];
  }
  f->gap = meas[best_pred] / meas[best_meas] - 1;
  f->error = err / n;
}

/* Two lines within 80 columns (one of 120 before), and no NaN: with no correct candidate
 * measured there are no figures, with one no Spearman. */
static void print_figures(const char *what, const TuneFigures *f) {
  if (f->n == 0) {
    printf("%s: no figures (no correct candidate measured)\n", what);
    return;
  }
  char rho[16] = "n/a";
  if (isfinite(f->spearman)) snprintf(rho, sizeof rho, "%.3f", f->spearman);
  printf("%s: spearman %s, mean relative error %.1f%%\n"
         "  predicted best %.1f%% slower than the measured best (%d candidates)\n",
         what, rho, 100 * f->error, 100 * f->gap, f->n);
}

/* The current model's prediction of candidate c under calibration cal: its kernels' terms
 * combined anew, plus the launch share the search gave it. */
double tune_predict(SearchContext *ctx, const Candidate *c, const ModelCalibration *cal) {
  ModelTerms *terms = xmalloc(sizeof *terms * (size_t)c->nkernels);
  double t;
  if (!search_candidate_terms(ctx, c, terms, &t)) t = INFINITY;
  for (int k = 0; k < c->nkernels && isfinite(t); k++) t += model_combine_terms(&terms[k], cal);
  free(terms);
  return t;
}

/* ---- the choice ------------------------------------------------------------------------- */

static const ResultRow *predicted_best(const Results *r) {
  for (int i = 0; i < r->nrows; i++)
    if (r->rows[i].predicted_rank == 1) return &r->rows[i];
  return NULL;
}

static const ResultRow *measured_best(const Results *r) {
  const ResultRow *best = NULL;
  for (int i = 0; i < r->nrows; i++) {
    const ResultRow *x = &r->rows[i];
    if (results_row_counts(x) && (!best || x->measured_ns < best->measured_ns))
      best = x;
  }
  return best;
}

bool tune_choose(const Results *r, const char *rpath, TuneChoice *ch) {
  const ResultRow *p = predicted_best(r), *b = measured_best(r);
  if (!b) {
    diag_error((SrcLoc){.file = rpath}, "no ranked candidate of this run is correct: nothing to "
                                        "ship");
    return false;
  }
  char *dev = terminal_text(r->device ? r->device : "the GPU");
  char *bn = terminal_text(b->name), *pn = terminal_text(p ? p->name : "");
  double noise = p ? fmax(tune_spread(p), tune_spread(b)) : 0;
  bool spread = p && isfinite(p->round_min_ns) && isfinite(b->round_min_ns);
  if (p == b) {
    ch->row = b;
    ch->why = xasprintf("%s, the predicted best, also measured best on %s (%.4f ns per "
                        "element).", bn, dev, b->measured_ns);
  } else if (p && p->correct && p->measured_ns - b->measured_ns <= noise) {
    ch->row = p;
    ch->why = xasprintf("%s measured %.4f ns per element on %s against %.4f for the predicted "
                        "best %s, a difference within the run-to-run spread (%.4f ns): the "
                        "predicted best stays.", bn, b->measured_ns, dev, p->measured_ns, pn,
                        noise);
  } else if (!p || !p->correct) {
    /* a WRONG candidate's time measures nothing: no "faster" against it (it may be faster) */
    ch->row = b;
    ch->why = p ? xasprintf("%s measured best on %s (%.4f ns per element); the predicted best "
                            "%s is WRONG.", bn, dev, b->measured_ns, pn)
                : xasprintf("%s measured best on %s (%.4f ns per element); the run has no "
                            "predicted best.", bn, dev, b->measured_ns);
    spread = false;
  } else {
    ch->row = b;
    ch->why = xasprintf("%s measured best on %s: %.4f ns per element against %.4f for the "
                        "predicted best %s (%.1f%% faster; run-to-run spread %s).",
                        bn, dev, b->measured_ns, p->measured_ns, pn,
                        100 * (p->measured_ns / b->measured_ns - 1),
                        spread ? "measured" : "not in the file, taken as 0");
    if (spread) {
      char *w = ch->why;
      ch->why = xasprintf("%s The spread of the two was %.4f ns.", w, noise);
      free(w);
    }
  }
  free(dev), free(bn), free(pn);
  return true;
}

/* ---- the table -------------------------------------------------------------------------- */

/* The column at which a row's kernels start on a line of their own: under its name. */
#define KERNELS_MARGIN 11

/* One ranked row of the table: its figures (65 columns), and its kernels (whole; shortened when
 * printed) or, where the search no longer gives its candidate, a note saying so. */
typedef struct {
  char *figures, *kernels;
  bool listed; /* kernels holds the kernels, not the note */
  bool wrong;
} TableRow;

/* The row of x with the current model's prediction of its candidate (*now; NaN without one). */
static TableRow table_row(SearchContext *ctx, const ResultRow *x, const Dag *dag,
                          const Target *t, const SearchResult *res, const ModelCalibration *cal,
                          double *now) {
  char *name = terminal_text(x->name);
  /* tune_reproduces's match: a row it says is missing shows no figures of another candidate */
  const Candidate *c = tune_candidate_of(dag, t, res, x, true);
  TableRow row = {.listed = c != NULL, .wrong = c && !x->correct};
  *now = c ? tune_predict(ctx, c, cal) : NAN;
  if (c)
    row.figures = xasprintf("%4ld %4ld  %-9s %10.4f %10.4f %10.4f %9.4f", x->predicted_rank,
                            x->measured_rank, name, x->predicted_ns, *now, x->measured_ns,
                            tune_spread(x));
  else
    row.figures = xasprintf("%4ld %4ld  %-9s %10.4f %10s", x->predicted_rank, x->measured_rank,
                            name, x->predicted_ns, "-");
  row.kernels = c ? terminal_text(x->kernels) : xstrdup("(not among the search's candidates now)");
  free(name);
  return row;
}

/* The kernels as the row shows them, shortened to width; the note as it is. */
static char *row_kernels(const TableRow *row, size_t width) {
  return row->listed ? brief_kernels(row->kernels, width) : xstrdup(row->kernels);
}

/* Whether every row fits 80 columns with its kernels after its figures; otherwise (the
 * element's 128 calls made lines of 150) each row's kernels go on a line of their own, as in the
 * harness's table and report's. */
static bool rows_fit_one_line(const TableRow *rows, int n) {
  for (int i = 0; i < n; i++) {
    char *k = row_kernels(&rows[i], BRIEF_WIDTH);
    size_t width = strlen(rows[i].figures) + 2 + strlen(k) + (rows[i].wrong ? 7 : 0);
    free(k);
    if (width > 80) return false;
  }
  return true;
}

static void print_rows(const TableRow *rows, int n) {
  bool one_line = rows_fit_one_line(rows, n);
  printf("%4s %4s  %-9s %10s %10s %10s %9s%s%*s%s\n", "pred", "meas", "candidate", "pred ns/e",
         "model now", "meas ns/e", "spread", one_line ? "  " : "\n", one_line ? 0 : KERNELS_MARGIN,
         "", "kernels");
  for (int i = 0; i < n; i++) {
    const TableRow *x = &rows[i];
    char *k = row_kernels(x, one_line ? BRIEF_WIDTH : 80 - KERNELS_MARGIN);
    if (one_line)
      printf("%s  %s%s\n", x->figures, k, x->wrong ? "  WRONG" : "");
    else /* WRONG in the margin, where every flag lines up */
      printf("%s\n%-*s%s\n", x->figures, KERNELS_MARGIN, x->wrong ? "WRONG" : "", k);
    free(k);
  }
}

void tune_print_table(const Results *r, const Dag *dag, const TimingDb *db, const Target *t,
                      const SearchResult *res, const ModelCalibration *cal) {
  SearchContext *ctx = search_context_new(dag, db, t);
  ctx->n = r->n > 0 ? r->n : ctx->n; /* the model now at the n the run measured */
  model_memo_quiet(ctx->model);
  int n = 0, nrows = 0;
  double *file = xcalloc((size_t)r->nrows + 1, sizeof *file);
  double *now = xcalloc((size_t)r->nrows + 1, sizeof *now);
  double *meas = xcalloc((size_t)r->nrows + 1, sizeof *meas);
  TableRow *rows = xcalloc((size_t)r->nrows + 1, sizeof *rows);
  char *device = terminal_text(r->device ? r->device : "");
  printf("%s: predicted and measured ranks (%s)\n", dag->spec->name, device);
  free(device);
  int *order = results_rank_order(r);
  for (int j = 0; j < r->nrows; j++) {
    const ResultRow *x = &r->rows[order[j]];
    if (x->predicted_rank < 1 || x->predicted_rank > r->nrows) continue; /* the ranked only */
    double t_now;
    rows[nrows++] = table_row(ctx, x, dag, t, res, cal, &t_now);
    if (isnan(t_now) || !results_row_counts(x)) continue;
    file[n] = x->predicted_ns, now[n] = t_now, meas[n++] = x->measured_ns;
  }
  free(order);
  print_rows(rows, nrows);
  for (int i = 0; i < nrows; i++) free(rows[i].figures), free(rows[i].kernels);
  free(rows);
  TuneFigures f;
  tune_figures(file, meas, n, &f);
  print_figures("as generated", &f);
  tune_figures(now, meas, n, &f);
  print_figures(cal->present ? "model now (calibrated)" : "model now", &f);
  free(file), free(now), free(meas);
  search_context_free(ctx);
}

