/*
 * report.c — `kasgen report DIR`: reads DIR/results.xml, written by a generated harness on a GPU
 * machine and copied back, prints the table with the figures the model is judged by (as `kasgen
 * tune` computes them: over the correct candidates only; rho from the file's ranks), and draws
 * DIR/plot.png with gnuplot when it is installed (measured performance in predicted order, like
 * seed 004's Graf 5.1-5.4).
 * A malformed file gets located errors.  `kasgen report FILE` reads a results file of any name
 * and draws the plot beside it (plot_name);
 * `kasgen report -` reads the standard input and prints the table only.  The table's header and
 * the plot's title say the precision and layout the run's code was generated for (generated_for).
 * A folder kasgen may not write in gets no plot, and a note saying so; a file in the plot's place
 * that is not a PNG is never replaced.  A folder's results.xml of a previous generation (kept
 * when the folder is generated again) is warned about (warn_other_code).
 *
 * The file's schema and its reader are in results.c.
 *
 * A results file is data copied between machines: nothing in it is ever executed.  gnuplot gets a
 * fixed script; the only text from the file in it (spec and device names and the run's layout,
 * in the title) is reduced to printable characters (ASCII but gnuplot's special ones, and valid
 * UTF-8 beyond) inside a single-quoted string, and the data are numbers.  gnuplot runs without a
 * shell and writes the PNG to its standard output, a temporary file that kasgen created in DIR
 * (O_EXCL, never through a symbolic link) and renames to plot.png, so a link named plot.png is
 * replaced, never followed.
 * Every pass over the rows is O(n log n).
 */
#include "kasgen.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* Spearman's rho over the ranked candidates: the rank correlation of their predicted and
 * measured ranks (re-ranked 1..k among them: the file's ranks may have gaps when rows are
 * missing). */
static double spearman_of(const Results *r, int *k_out) {
  int k = 0;
  double *pred = xmalloc(sizeof *pred * (size_t)(r->nrows + 1));
  double *meas = xmalloc(sizeof *meas * (size_t)(r->nrows + 1));
  for (int i = 0; i < r->nrows; i++)
    if (r->rows[i].predicted_rank > 0) {
      pred[k] = (double)r->rows[i].predicted_rank;
      meas[k++] = (double)r->rows[i].measured_rank;
    }
  *k_out = k;
  double rho = rank_correlation(pred, meas, k);
  free(pred);
  free(meas);
  return rho;
}

/* The figures the model is judged by, as `kasgen tune` computes them "as generated"
 * (tune_figures: Spearman's rho, how much slower the predicted best ran than the measured best,
 * the mean relative error of the prediction), over the rows that count (results_row_counts): a
 * WRONG candidate's time measures no computation of the spec, so it is neither the measured best
 * nor the predicted best, whatever its time.  *wrong: how many ranked rows are WRONG;
 * *wrong_best: the predicted best when it is WRONG, else NULL.  r is in predicted order. */
static void run_figures(const Results *r, TuneFigures *f, int *wrong,
                        const ResultRow **wrong_best) {
  double *pred = xmalloc(sizeof *pred * (size_t)(r->nrows + 1));
  double *meas = xmalloc(sizeof *meas * (size_t)(r->nrows + 1));
  double *pred_rank = xmalloc(sizeof *pred_rank * (size_t)(r->nrows + 1));
  double *meas_rank = xmalloc(sizeof *meas_rank * (size_t)(r->nrows + 1));
  int n = 0, ranked = 0;
  *wrong = 0;
  *wrong_best = NULL;
  for (int i = 0; i < r->nrows; i++) {
    const ResultRow *x = &r->rows[i];
    if (x->predicted_rank > 0 && !ranked++ && !x->correct) *wrong_best = x; /* the first */
    if (x->predicted_rank > 0 && !x->correct) ++*wrong;
    if (!results_row_counts(x)) continue;
    pred_rank[n] = (double)x->predicted_rank, meas_rank[n] = (double)x->measured_rank;
    pred[n] = x->predicted_ns, meas[n++] = x->measured_ns;
  }
  tune_figures(pred, meas, n, f);
  /* Spearman's rho from the file's ranks (re-ranked among these rows): they break the ties its
   * six-digit times leave (block shapes predicted alike), so rho is the harness's where every
   * ranked candidate is correct. */
  f->spearman = rank_correlation(pred_rank, meas_rank, n);
  free(pred), free(meas), free(pred_rank), free(meas_rank);
}

/* Prints text from the file as terminal_text shows it: a name in UTF-8 as it is, but a name
 * holding terminal escape sequences must not reach the user's terminal as such. */
static void print_field(FILE *out, const char *format, const char *text) {
  char *shown = terminal_text(text ? text : "");
  fprintf(out, format, shown);
  free(shown);
}

/* A candidate's figures on one line (79 columns), its kernels on the next under the "kernels"
 * column, shortened to fit 80 (an element's kernels once made lines of 159 after the figures),
 * WRONG in the margin before them for a candidate that failed its check: the harness's table,
 * which reads the same row from the same run. */
static void print_row(const ResultRow *x, FILE *out) {
  char pr[24] = "-", mr[24] = "-";
  if (x->predicted_rank) {
    snprintf(pr, sizeof pr, "%ld", x->predicted_rank);
    snprintf(mr, sizeof mr, "%ld", x->measured_rank);
  }
  print_field(out, "%-9s ", x->name);
  fprintf(out, "%-7ld %10.4f %10.4f %9.1f %9.1f %6.1f%% %5s %5s\n%-9s ", x->nkernels,
          x->predicted_ns, x->measured_ns, x->melem_s, x->gbs, x->copy_pct, pr, mr,
          x->correct ? "" : "WRONG");
  char *brief = brief_kernels(x->kernels, HARNESS_BRIEF_WIDTH);
  print_field(out, "%s\n", brief);
  free(brief);
}

/* What the run's code was generated for, as its <run> says: "precision double, layout
 * component" (the layout as --layout takes it; "", as --layout "", is every array
 * element-major).  The figures of a double-precision or component-major run are not comparable
 * with a single-precision element-major one's, so the reader must see which it is; a file
 * written before the harness recorded them says "not recorded" rather than a guess.
 * malloc'ed. */
static char *generated_for(const Results *r) {
  const char *layout = !r->layouts ? "not recorded" : *r->layouts ? r->layouts : "element";
  return xasprintf("precision %s, layout %s",
                   r->has_precision ? target_precision_name(r->precision) : "not recorded",
                   layout);
}

/* A sentence on lines within 80 columns (one of 109 before, where the predicted best is WRONG),
 * each further line indented by two spaces; free'd. */
static void print_wrapped(FILE *out, char *sentence) {
  char *lines = wrapped_text(sentence, 80);
  fprintf(out, "%s\n", lines);
  free(lines), free(sentence);
}

/* The figures that judge the model, over the correct candidates, each sentence within 80
 * columns: Spearman's rho, the mean relative error, the predicted best's gap. */
static void print_judgement(const Results *r, FILE *out) {
  TuneFigures f;
  int wrong;
  const ResultRow *wrong_best;
  run_figures(r, &f, &wrong, &wrong_best);
  if (wrong_best) {
    char *name = terminal_text(wrong_best->name ? wrong_best->name : "");
    print_wrapped(out, xasprintf("the predicted best, %s, is WRONG: the figures below leave it "
                                 "out, as they leave out every WRONG candidate", name));
    free(name);
  }
  char left_out[48] = "";
  if (wrong) snprintf(left_out, sizeof left_out, "; %d WRONG left out", wrong);
  if (isfinite(f.spearman))
    print_wrapped(out, xasprintf("Spearman rank correlation (predicted vs measured, %d "
                                 "candidates%s): %.3f", f.n, left_out, f.spearman));
  else
    print_wrapped(out, xasprintf("Spearman rank correlation: n/a (fewer than two correct ranked "
                                 "candidates%s)", left_out));
  if (f.n == 0) return;
  fprintf(out, "mean relative error of the predicted time: %.1f%%\n", 100 * f.error);
  print_wrapped(out, xasprintf("the predicted best%s ran %.1f%% slower than the measured best "
                               "(%s 5%%)", wrong_best ? " of the correct ones" : "",
                               100 * f.gap, f.gap <= 0.05 ? "within" : "NOT within"));
}

/* Every line within 80 columns (names of unusual length aside), in the harness's layout: the
 * run in three lines, the rows (print_row), the figures that judge the model. */
static void print_results(const Results *r, FILE *out) {
  print_field(out, "%s on ", r->spec);
  print_field(out, "%s: ", r->device);
  fprintf(out, "n = %ld\n", r->n);
  char *target = generated_for(r);
  print_field(out, "%s", target);
  fputs(r->has_precision && r->layouts ? "\n" : " (the file of an older harness)\n", out);
  free(target);
  fprintf(out, "%ld bytes/element compulsory, copy bandwidth %.1f GB/s\n", r->bytes_per_elem,
          r->copy_gbs);
  fprintf(out, "%-9s %-7s %10s %10s %9s %9s %7s %5s %5s\n%-9s %s\n", "candidate", "kernels",
          "pred ns/e", "meas ns/e", "MElem/s", "GB/s", "%copy", "pred", "meas", "",
          "kernels (calls)");
  for (int i = 0; i < r->nrows; i++) print_row(&r->rows[i], out);
  print_judgement(r, out);
}

/* Text from the file for the plot's title: printable ASCII but the characters gnuplot treats
 * specially in or around a single-quoted string (quote, backquote, backslash, @, $), and valid
 * UTF-8 characters beyond ASCII but control characters (control_char_len), which gnuplot's png
 * terminal draws as they are: their bytes are all 0x80 or more, none of those characters.  Any
 * other byte is replaced by '_'; at most 120 characters.  With `noenhanced` nothing in it is
 * markup either. */
static void gnuplot_text(StrBuf *sb, const char *s) {
  for (int n = 0; *s && n < 120; n++) {
    int len = utf8_char_len(s);
    unsigned char c = (unsigned char)*s;
    bool plain = len > 1 ? !control_char_len(s)
                         : c >= 0x20 && c < 0x7f && !strchr("'`\\@$\"", c);
    if (plain) sb_printf(sb, "%.*s", len, s);
    else sb_putc(sb, '_');
    s += len > 1 ? len : 1;
  }
}

/* The gnuplot script of the plot: fixed commands, the title, then the three series inline as
 * numbers.  rows: the ranked rows, in predicted order. */
static char *plot_script(const Results *r, int k) {
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, "set terminal png size 1000,600\nset title '");
  gnuplot_text(&sb, r->spec);
  sb_puts(&sb, " on ");
  gnuplot_text(&sb, r->device);
  char *target = generated_for(r);
  sb_puts(&sb, " (");
  gnuplot_text(&sb, target);
  free(target);
  /* 10 points: a title saying the precision and layout too overran the 1000 pixels at the
   * terminal's default size (about 100 characters fit), and gnuplot cuts it at the edge. */
  sb_puts(&sb, "): measured performance in predicted order' noenhanced font ',10'\n"
               "set xlabel 'candidate (predicted rank)'\nset ylabel 'million elements per second'\n"
               "set grid\nset key top right\nset yrange [0:*]\nset offsets 0.5, 0.5, 0, 0\n");
  if (k <= 50) sb_puts(&sb, "set xtics 1\n"); /* one tic per candidate while that is readable */
  sb_puts(&sb, "plot '-' using 1:2 with points pointtype 7 pointsize 1.5 title 'measured', "
               "'-' using 1:2 with lines linewidth 2 title 'moving average (5)', "
               "'-' using 1:2 with linespoints dashtype 2 title 'predicted'\n");
  for (int series = 0; series < 3; series++) {
    for (int i = 0; i < k; i++) {
      const ResultRow *x = &r->rows[i]; /* sorted: the first k are ranked, in order */
      double y = x->melem_s;
      if (series == 1) {
        double sum = 0;
        int m = 0;
        for (int j = i - 2; j <= i + 2; j++)
          if (j >= 0 && j < k) sum += r->rows[j].melem_s, m++;
        y = sum / m;
      } else if (series == 2) {
        y = x->predicted_ns > 0 ? 1000.0 / x->predicted_ns : 0;
      }
      sb_printf(&sb, "%ld %.6g\n", x->predicted_rank, y);
    }
    sb_puts(&sb, "e\n");
  }
  return sb_take(&sb);
}

/* The plot of a results file named base (no folder): plot.png for results.xml, as a folder's
 * report draws it (and as generated folders expect); NAME.png for NAME.xml; base.png otherwise.
 * Never base itself. */
static char *plot_name(const char *base) {
  if (!strcmp(base, "results.xml")) return xstrdup("plot.png");
  size_t len = strlen(base);
  if (len > 4 && !strcmp(base + len - 4, ".xml"))
    return xasprintf("%.*s.png", (int)(len - 4), base);
  return xasprintf("%s.png", base);
}

/* Whether name in dirfd may be replaced by the plot: absent, or anything but a regular file (a
 * link is replaced, never followed), or a regular file that is a PNG already (an earlier plot).
 * A user's other file of that name is kept. */
static bool plot_replaceable(int dirfd, const char *name) {
  int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return true;
  struct stat st;
  unsigned char head[8] = {0};
  bool ok = fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
            (read(fd, head, sizeof head) == (ssize_t)sizeof head &&
             !memcmp(head, "\x89PNG\r\n\x1a\n", sizeof head));
  close(fd);
  return ok;
}

/* Creates a fresh temporary file in dirfd for the plot (exclusively, not through a link); its
 * name goes to *name (malloc'ed).  -1 with errno set. */
static int create_plot_temp(int dirfd, char **name) {
  for (int attempt = 0; attempt < 100; attempt++) {
    *name = xasprintf(REPORT_TEMP_PREFIX "%ld-%d", (long)getpid(), attempt);
    int fd = openat(dirfd, *name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) {
      if (fd < 0) free(*name), *name = NULL;
      return fd;
    }
    free(*name);
  }
  *name = NULL;
  errno = EEXIST;
  return -1;
}

/* gnuplot draws one plot in well under a second; 120 s only keeps a gnuplot that hangs (a
 * broken font setup, a terminal waiting on a display) from hanging kasgen. */
#define GNUPLOT_TIMEOUT_S 120
/* run_gnuplot's status when gnuplot was killed at the deadline */
#define GNUPLOT_TIMED_OUT (-2)

/* Runs gnuplot (no shell; found on $PATH) with the script on its standard input and its standard
 * output on out_fd.  Returns its exit status (128 + the signal it died of), 127 when it cannot
 * be started (not installed), GNUPLOT_TIMED_OUT, -1 when kasgen's side failed. */
static int run_gnuplot(const char *script, int out_fd) {
  char *argv[] = {"gnuplot", NULL};
  SpawnOptions opt = {.input = script, .input_len = strlen(script),
                      .out = {.sink = SPAWN_TO_FD, .fd = out_fd}, .timeout_s = GNUPLOT_TIMEOUT_S};
  SpawnResult r = spawn_run(argv, &opt);
  switch (r.end) {
  case SPAWN_EXITED: return r.status;
  case SPAWN_SIGNALLED: return 128 + r.status;
  case SPAWN_TIMED_OUT: return GNUPLOT_TIMED_OUT;
  case SPAWN_NOT_STARTED: return 127;
  case SPAWN_BROKEN: break;
  }
  return -1;
}

/* What draw_plot did. */
typedef enum { PLOT_DRAWN, PLOT_FAILED, PLOT_NO_GNUPLOT, PLOT_NOT_WRITABLE } PlotOutcome;

static bool not_writable(int err) { return err == EACCES || err == EPERM || err == EROFS; }

/* DIR/NAME (plot.png): measured MElem/s in predicted order, a moving average over five, and the
 * prediction.  PLOT_FAILED after an error; nothing of the user's is changed in any case. */
static PlotOutcome draw_plot(const Results *r, int k, int dirfd, const char *dir,
                             const char *name) {
  char *png = strcmp(dir, ".") ? xasprintf("%s/%s", dir, name) : xstrdup(name);
  if (!plot_replaceable(dirfd, name)) {
    diag_error((SrcLoc){.file = png}, "exists and is not a PNG image: not replaced, the plot is "
               "not drawn");
    free(png);
    return PLOT_FAILED;
  }
  char *temp;
  int fd = create_plot_temp(dirfd, &temp);
  if (fd < 0 && not_writable(errno)) {
    diag_note((SrcLoc){.file = dir}, "cannot write in this folder (%s): no plot drawn",
              strerror(errno));
    free(png);
    return PLOT_NOT_WRITABLE;
  }
  /* Ctrl-C while gnuplot draws leaves no temporary in the user's folder (interrupt.c) */
  if (fd >= 0) interrupt_add_temporary(dirfd, temp);
  char *script = plot_script(r, k);
  int status = fd < 0 ? -1 : run_gnuplot(script, fd);
  free(script);
  struct stat st;
  bool written = fd >= 0 && status == 0 && fstat(fd, &st) == 0 && st.st_size > 0;
  int saved = errno;
  if (fd >= 0 && close(fd) != 0 && written) written = false, saved = errno;
  if (written && renameat(dirfd, temp, dirfd, name) != 0) written = false, saved = errno;
  if (!written && temp) unlinkat(dirfd, temp, 0);
  if (temp) interrupt_drop_temporary(dirfd, temp);
  free(temp);
  PlotOutcome outcome = written ? PLOT_DRAWN : status == 127 ? PLOT_NO_GNUPLOT : PLOT_FAILED;
  if (outcome == PLOT_DRAWN)
    printf("wrote %s\n", png);
  else if (outcome == PLOT_NO_GNUPLOT)
    printf("gnuplot not found: no plot drawn\n");
  else if (fd < 0 || status == 0)
    diag_error((SrcLoc){.file = png}, "cannot write: %s; the plot is lost", strerror(saved));
  else if (status == GNUPLOT_TIMED_OUT)
    diag_error((SrcLoc){.file = png}, "gnuplot did not finish in %d s and was stopped; the plot "
               "is not drawn", GNUPLOT_TIMEOUT_S);
  else
    diag_error((SrcLoc){.file = png}, "gnuplot failed (status %d); the plot is not drawn",
               status);
  free(png);
  return outcome;
}

bool report_text(const char *path, const char *text, size_t len, FILE *out, char **script) {
  Results r;
  if (!results_parse(path, text, len, &r)) return false;
  results_sort_by_rank(&r);
  int k; /* the plot's points: the ranked rows */
  (void)spearman_of(&r, &k);
  if (out) print_results(&r, out);
  if (script) *script = plot_script(&r, k);
  results_free(&r);
  return true;
}

/* The text of file `name` of a generated folder (dirfd, named dir), malloc'ed; NULL, silently,
 * when it is not a plain file there (a folder of results only).  Read without following a link
 * or waiting on a FIFO, as the results file is. */
static char *folder_text(int dirfd, const char *dir, const char *name) {
  int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0) return NULL;
  char *path = xasprintf("%s/%s", dir, name);
  char *text = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read_text_fd(fd, path, NULL) : NULL;
  close(fd);
  free(path);
  return text;
}

/* The spec a generated folder was generated for, as its index.txt's first line names it
 * ("kasgen V: spec NAME (PATH), ..."), malloc'ed; NULL, silently, when there is no such plain
 * file or line. */
static char *folder_spec(int dirfd, const char *dir) {
  char *text = folder_text(dirfd, dir, "index.txt");
  char *name = text ? index_spec_name(text) : NULL;
  free(text);
  return name;
}

/* The folder's common/kas_candidates.h, which says the code the folder holds now: its real type,
 * its layouts and each candidate's code digest, the ones the harness copies into results.xml.
 * malloc'ed; NULL, silently, when there is none (a folder of results only). */
static char *folder_candidates(int dirfd, const char *dir) {
  return folder_text(dirfd, dir, "common/kas_candidates.h");
}

/* The value of the header's `#define KAS_LAYOUTS "..."` (malloc'ed), or NULL. */
static char *header_layouts(const char *header) {
  const char *at = strstr(header, "#define KAS_LAYOUTS \"");
  if (!at) return NULL;
  at += strlen("#define KAS_LAYOUTS \"");
  return xstrndup(at, strcspn(at, "\"\n"));
}

/* How the run's results differ from the code the folder holds now (header: folder_candidates),
 * as far as the file tells: its precision, its layouts, and the ranked rows whose code digest
 * is none of the folder's candidates' (tune's strict match, without its search: the digests are
 * of the kernels' code).  A sentence, malloc'ed, or NULL when nothing differs. */
static char *other_code(const Results *r, const char *header) {
  StrBuf sb;
  sb_init(&sb);
  const char *now = strstr(header, "typedef double kas_real;") ? "double" : "single";
  if (r->has_precision && strcmp(target_precision_name(r->precision), now))
    sb_printf(&sb, "; they measured %s-precision code, the folder holds %s",
              target_precision_name(r->precision), now);
  char *layouts = header_layouts(header);
  if (r->layouts && layouts && strcmp(r->layouts, layouts))
    sb_printf(&sb, "; they measured layout '%s', the folder's code has '%s'", r->layouts, layouts);
  free(layouts);
  int ranked = 0, other = 0;
  for (int i = 0; i < r->nrows; i++) {
    const ResultRow *x = &r->rows[i];
    if (x->predicted_rank == 0 || !x->code) continue;
    char *quoted = xasprintf("\"%s\"", x->code);
    ranked++, other += strstr(header, quoted) == NULL;
    free(quoted);
  }
  if (other)
    sb_printf(&sb, "; %d of their %d ranked candidates' code digests are none of the folder's "
              "candidates' now", other, ranked);
  if (!sb.len) {
    sb_free(&sb);
    return NULL;
  }
  return sb_take(&sb);
}

/* A warning where a results file of a previous generation would pass for the folder's code
 * (regenerating keeps results.xml: it is the user's measurement). */
static void warn_other_code(const char *path, const Results *r, const char *header) {
  char *why = header ? other_code(r, header) : NULL;
  if (!why) return;
  diag_warning((SrcLoc){.file = path}, "these results are of a previous generation, not of "
               "the code the folder holds now%s; `make run` measures the code now", why);
  free(why);
}

/* The n the folder's predictions were made for: its header's KAS_DEFAULT_N (the harness's
 * default n is the generation's --n), or 0 when not found. */
static long header_default_n(const char *header) {
  const char *at = strstr(header, "#define KAS_DEFAULT_N ");
  long n = 0;
  if (at) {
    at += strlen("#define KAS_DEFAULT_N ");
    char *digits = xstrndup(at, strspn(at, "0123456789"));
    if (!parse_decimal_long(digits, &n)) n = 0;
    free(digits);
  }
  return n;
}

/* A note where the run's n is not the n its predictions were made for (the folder's, where its
 * header is at hand; else the default, which a results file does not record): the model shares
 * each launch among n elements and fills the GPU with n / E blocks, so at n = 4096 its default
 * predictions are off by a factor the error then measures (docs/model.md, "The element
 * count"); kasgen tune predicts at the run's n. */
static void note_other_n(const char *path, const Results *r, const char *header) {
  long predicted_n = header ? header_default_n(header) : 0;
  if (predicted_n > 0 && predicted_n != r->n)
    diag_note((SrcLoc){.file = path}, "this run is at n = %ld, but the predictions are for n = "
              "%ld (the folder's generation): the figures compare times at two element counts; "
              "kasgen tune DIR predicts at the run's n", r->n, predicted_n);
  else if (!header && r->n != DEFAULT_ELEMENTS)
    diag_note((SrcLoc){.file = path}, "this run is at n = %ld; its predictions are for the n its "
              "folder was generated at, which a results file does not record (%ld unless --n "
              "was given): at another n the figures compare times at two element counts; kasgen "
              "tune DIR predicts at the run's n", r->n, (long)DEFAULT_ELEMENTS);
}

/* Parses text (a results file called path), prints the table, and draws the plot as dir/name
 * when plot_dirfd is a folder (not for the standard input, -1).  spec: the spec of the folder the
 * file is in (folder_spec), or NULL; header: its common/kas_candidates.h (folder_candidates), or
 * NULL.  false after an error. */
static bool report_results(const char *path, const char *text, size_t len, int plot_dirfd,
                           const char *dir, const char *name, const char *spec,
                           const char *header) {
  Results r;
  if (!results_parse(path, text, len, &r)) return false;
  warn_other_code(path, &r, header);
  note_other_n(path, &r, header);
  /* another spec's results copied into a folder: its table would pass for the folder's */
  if (spec && strcmp(spec, r.spec)) {
    char *was = terminal_text(r.spec), *is = terminal_text(spec);
    diag_warning((SrcLoc){.file = path, .line = r.spec_at.line, .col = r.spec_at.col},
                 "the results are of spec '%s', but the folder's index.txt names spec '%s': "
                 "these are not the folder's candidates", was, is);
    free(was), free(is);
  }
  results_sort_by_rank(&r);
  int k;
  double rho = spearman_of(&r, &k);
  print_results(&r, stdout);
  /* the harness's figure, over every ranked row (WRONG ones too), against its own ranks */
  if (isfinite(rho) && isfinite(r.file_spearman) && fabs(rho - r.file_spearman) > 1e-3)
    diag_warning((SrcLoc){.file = path}, "the file says Spearman %.4f; recomputed from its "
                 "ranks as the harness computes it (every ranked candidate) %.4f",
                 r.file_spearman, rho);
  fflush(stdout);
  bool ok = plot_dirfd < 0 || draw_plot(&r, k, plot_dirfd, dir, name) != PLOT_FAILED;
  results_free(&r);
  return ok;
}

/* DIR: DIR/results.xml, the plot DIR/plot.png. */
static bool report_folder(int dirfd, const char *folder) {
  char *dir = xstrdup(folder);
  for (size_t len = strlen(dir); len > 1 && dir[len - 1] == '/';) dir[--len] = '\0';
  char *path = xasprintf("%s/results.xml", dir);
  size_t len;
  char *text = results_read(dirfd, "results.xml", path, &len);
  if (!text)
    diag_note((SrcLoc){.file = dir}, "results.xml is written by `make run` in a generated "
                                     "folder on the GPU machine; copy it back here");
  char *spec = text ? folder_spec(dirfd, dir) : NULL;
  char *header = text ? folder_candidates(dirfd, dir) : NULL;
  bool ok = text && report_results(path, text, len, dirfd, dir, "plot.png", spec, header);
  free(header);
  free(spec);
  free(text);
  free(path);
  free(dir);
  return ok;
}

/* FILE: the plot beside it (plot_name). */
static bool report_file(const char *path) {
  size_t len;
  char *text = results_read(AT_FDCWD, path, path, &len);
  if (!text) return false;
  const char *slash = strrchr(path, '/');
  char *dir = path_folder(path);
  char *name = plot_name(slash ? slash + 1 : path);
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    diag_note((SrcLoc){.file = dir}, "cannot open this folder (%s): no plot drawn",
              strerror(errno));
  bool ok = report_results(path, text, len, dirfd, dir, name, NULL, NULL);
  if (dirfd >= 0) close(dirfd);
  free(name);
  free(dir);
  free(text);
  return ok;
}

/* -: the standard input, the table only. */
static bool report_stdin(void) {
  size_t len;
  char *text = read_text_file("-", &len);
  bool ok = text && report_results(STDIN_NAME, text, len, -1, NULL, NULL, NULL, NULL);
  free(text);
  return ok;
}

bool report_run(const char *operand) {
  if (!*operand) {
    diag_error((SrcLoc){0}, "an empty name was given; expected the folder holding results.xml, "
                            "or a results file");
    return false;
  }
  if (is_stdio_path(operand)) return report_stdin();
  /* O_NONBLOCK: a FIFO is refused (ENOTDIR, then by read_results), never waited on. */
  int dirfd = open(operand, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
  if (dirfd >= 0) {
    bool ok = report_folder(dirfd, operand);
    close(dirfd);
    return ok;
  }
  if (errno == ENOTDIR) return report_file(operand);
  diag_error((SrcLoc){.file = operand}, "cannot open: %s", strerror(errno));
  diag_note((SrcLoc){.file = operand}, "give the folder holding results.xml (written by `make "
            "run` in a generated folder on the GPU machine), or a results file");
  return false;
}
