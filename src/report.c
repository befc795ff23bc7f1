/*
 * report.c — `kasgen report DIR`: reads DIR/results.xml, written by a generated harness on a GPU
 * machine and copied back (schema below), prints the table with the rank correlation recomputed
 * from the ranks, and draws DIR/plot.png with gnuplot when it is installed (measured performance
 * in predicted order, like seed 004's Graf 5.1-5.4).  A malformed file gets located errors.
 * `kasgen report FILE` reads a results file of any name and draws the plot beside it (plot_name);
 * `kasgen report -` reads the standard input and prints the table only.  A folder kasgen may not
 * write in gets no plot, and a note saying so; a file in the plot's place that is not a PNG is
 * never replaced.
 *
 *   results     = <kasgen-results version="1" spec=NAME> device run candidate+ spearman? </...>
 *   device      = <device name=TEXT copy-gbs=NUM/>
 *   run         = <run n=INT reps=INT input-copies=INT bytes-per-element=INT/>
 *   candidate   = <candidate name=TEXT kernels=TEXT nkernels=INT predicted-ns=NUM
 *                  measured-ns=NUM melem-s=NUM compulsory-gbs=NUM copy-percent=NUM
 *                  predicted-rank=INT measured-rank=INT correct=0|1 error=NUM/>
 *   spearman    = <spearman value=NUM|nan/>
 *
 * predicted-rank 0 marks "unfused" (shown, not ranked).
 *
 * A results file is data copied between machines: nothing in it is ever executed.  gnuplot gets a
 * fixed script; the only text from the file in it (spec and device names, in the title) is reduced
 * to plain printable characters inside a single-quoted string, and the data are numbers.  gnuplot
 * runs without a shell and writes the PNG to its standard output, a temporary file that kasgen
 * created in DIR (O_EXCL, never through a symbolic link) and renames to plot.png, so a link named
 * plot.png is replaced, never followed.  Every pass over the rows is O(n log n).
 */
#include "kasgen.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

typedef struct {
  char *name, *kernels;
  long nkernels, predicted_rank, measured_rank, correct;
  double predicted_ns, measured_ns, melem_s, gbs, copy_pct, error;
  long line; /* of its <candidate>, for messages about duplicates */
} ResultRow;

typedef struct {
  char *spec, *device;
  double copy_gbs, file_spearman;
  long n, reps, copies, bytes_per_elem;
  ResultRow *rows;
  int nrows, cap;
} Results;

typedef struct {
  const char *path, *text;
  bool failed;
  int nerrors; /* reported so far; reading stops after MAX_RESULTS_ERRORS */
} ResultsParser;

enum { MAX_RESULTS_ERRORS = 50 };

static void results_error(ResultsParser *p, xmlNodePtr node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void results_error_at(ResultsParser *p, long line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void vresults_error(ResultsParser *p, long line, const char *fmt, va_list ap) {
  p->failed = true;
  if (++p->nerrors > MAX_RESULTS_ERRORS) return;
  char buf[512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  diag_error((SrcLoc){.file = p->path, .text = p->text, .line = line > 0 ? (int)line : 0}, "%s",
             buf);
  if (p->nerrors == MAX_RESULTS_ERRORS)
    diag_note((SrcLoc){.file = p->path}, "too many errors; the rest are not shown");
}

static void results_error(ResultsParser *p, xmlNodePtr node, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vresults_error(p, xml_line(node), fmt, ap);
  va_end(ap);
}

static void results_error_at(ResultsParser *p, long line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vresults_error(p, line, fmt, ap);
  va_end(ap);
}

/* The attribute's text (malloc'ed) or NULL after an error naming it. */
static char *required_attr(ResultsParser *p, xmlNodePtr node, const char *attr) {
  xmlChar *v = xmlGetProp(node, (const xmlChar *)attr);
  if (!v) {
    results_error(p, node, "<%s> lacks the attribute %s", (const char *)node->name, attr);
    return NULL;
  }
  char *s = xstrdup((const char *)v);
  xmlFree(v);
  return s;
}

/* number = a finite decimal with nothing after it; "nan" only where allow_nan. */
static bool number_attr(ResultsParser *p, xmlNodePtr node, const char *attr, bool allow_nan,
                        double *out) {
  char *s = required_attr(p, node, attr);
  if (!s) return false;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  bool ok = end != s && !*end && errno == 0 && (isfinite(v) || (allow_nan && isnan(v)));
  if (!ok) results_error(p, node, "%s=\"%s\" of <%s> is not a number", attr, s,
                         (const char *)node->name);
  else *out = v;
  free(s);
  return ok;
}

static bool int_attr(ResultsParser *p, xmlNodePtr node, const char *attr, long min, long max,
                     long *out) {
  char *s = required_attr(p, node, attr);
  if (!s) return false;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  bool ok = end != s && !*end && errno == 0 && v >= min && v <= max;
  if (!ok)
    results_error(p, node, "%s=\"%s\" of <%s> is not an integer in [%ld, %ld]", attr, s,
                  (const char *)node->name, min, max);
  else
    *out = v;
  free(s);
  return ok;
}

static bool nonnegative(ResultsParser *p, xmlNodePtr node, const char *attr, double *out) {
  if (!number_attr(p, node, attr, false, out)) return false;
  if (*out < 0) {
    results_error(p, node, "%s of <%s> is negative", attr, (const char *)node->name);
    return false;
  }
  return true;
}

static void parse_candidate(ResultsParser *p, xmlNodePtr c, Results *r) {
  if (r->nrows == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 16;
    r->rows = xrealloc(r->rows, (size_t)r->cap * sizeof *r->rows);
  }
  ResultRow *row = &r->rows[r->nrows++];
  *row = (ResultRow){.line = xml_line(c)};
  row->name = required_attr(p, c, "name");
  row->kernels = required_attr(p, c, "kernels");
  int_attr(p, c, "nkernels", 1, INT_MAX, &row->nkernels);
  nonnegative(p, c, "predicted-ns", &row->predicted_ns);
  nonnegative(p, c, "measured-ns", &row->measured_ns);
  nonnegative(p, c, "melem-s", &row->melem_s);
  nonnegative(p, c, "compulsory-gbs", &row->gbs);
  nonnegative(p, c, "copy-percent", &row->copy_pct);
  int_attr(p, c, "predicted-rank", 0, INT_MAX, &row->predicted_rank);
  int_attr(p, c, "measured-rank", 0, INT_MAX, &row->measured_rank);
  int_attr(p, c, "correct", 0, 1, &row->correct);
  nonnegative(p, c, "error", &row->error);
  if (row->predicted_rank == 0 && row->measured_rank != 0)
    results_error(p, c, "an unranked candidate (predicted-rank 0) has measured-rank %ld",
                  row->measured_rank);
  if (row->predicted_rank > 0 && row->measured_rank == 0)
    results_error(p, c, "a ranked candidate has no measured-rank");
}

/* Duplicates among the rows (a rank or a name twice), found by sorting pointers to the rows by
 * one key and then by line: O(n log n), each reported at its second occurrence.  A key is a
 * comparison and a label: what the message calls the value, NULL for values that may repeat
 * (rank 0 marks the unranked "unfused"). */
typedef struct {
  int (*cmp)(const ResultRow *a, const ResultRow *b);
  char *(*label)(const ResultRow *r); /* malloc'ed */
} RowKey;

static int cmp_predicted(const ResultRow *a, const ResultRow *b) {
  return (a->predicted_rank > b->predicted_rank) - (a->predicted_rank < b->predicted_rank);
}

static int cmp_measured(const ResultRow *a, const ResultRow *b) {
  return (a->measured_rank > b->measured_rank) - (a->measured_rank < b->measured_rank);
}

static int cmp_name(const ResultRow *a, const ResultRow *b) {
  return strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

static char *predicted_label(const ResultRow *r) {
  return r->predicted_rank ? xasprintf("predicted-rank %ld", r->predicted_rank) : NULL;
}

static char *measured_label(const ResultRow *r) {
  return r->measured_rank ? xasprintf("measured-rank %ld", r->measured_rank) : NULL;
}

static char *name_label(const ResultRow *r) {
  if (!r->name) return NULL;
  char *shown = c_safe_text(r->name), *label = xasprintf("candidate '%s'", shown);
  free(shown);
  return label;
}

static const RowKey *sort_key; /* for qsort, which takes no context */

static int cmp_by_key_then_line(const void *x, const void *y) {
  const ResultRow *a = *(const ResultRow *const *)x, *b = *(const ResultRow *const *)y;
  int c = sort_key->cmp(a, b);
  return c ? c : (a->line > b->line) - (a->line < b->line);
}

static void report_duplicates(ResultsParser *p, const Results *r, const RowKey *key) {
  const ResultRow **sorted = xmalloc(sizeof *sorted * (size_t)(r->nrows ? r->nrows : 1));
  for (int i = 0; i < r->nrows; i++) sorted[i] = &r->rows[i];
  sort_key = key;
  if (r->nrows > 1) qsort(sorted, (size_t)r->nrows, sizeof *sorted, cmp_by_key_then_line);
  for (int i = 1; i < r->nrows && p->nerrors < MAX_RESULTS_ERRORS; i++) {
    if (key->cmp(sorted[i - 1], sorted[i]) != 0) continue;
    char *label = key->label(sorted[i]);
    if (label) results_error_at(p, sorted[i]->line, "%s appears twice", label);
    free(label);
  }
  free(sorted);
}

static bool is_element(xmlNodePtr n, const char *name) {
  return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

static void parse_results_root(ResultsParser *p, xmlNodePtr root, Results *r) {
  if (!root || !is_element(root, "kasgen-results")) {
    results_error(p, root, "the root element must be <kasgen-results>");
    return;
  }
  long version = 0;
  if (int_attr(p, root, "version", 0, INT_MAX, &version) && version != 1)
    results_error(p, root, "results version %ld; this kasgen reads version 1", version);
  r->spec = required_attr(p, root, "spec");
  int ndevice = 0, nrun = 0, nspearman = 0;
  r->file_spearman = NAN;
  for (xmlNodePtr c = root->children; c && p->nerrors < MAX_RESULTS_ERRORS; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (is_element(c, "device")) {
      if (ndevice++) { results_error(p, c, "more than one <device>"); continue; }
      r->device = required_attr(p, c, "name");
      nonnegative(p, c, "copy-gbs", &r->copy_gbs);
    } else if (is_element(c, "run")) {
      if (nrun++) { results_error(p, c, "more than one <run>"); continue; }
      int_attr(p, c, "n", 0, LONG_MAX, &r->n);
      int_attr(p, c, "reps", 1, INT_MAX, &r->reps);
      int_attr(p, c, "input-copies", 1, INT_MAX, &r->copies);
      int_attr(p, c, "bytes-per-element", 0, INT_MAX, &r->bytes_per_elem);
    } else if (is_element(c, "candidate")) {
      parse_candidate(p, c, r);
    } else if (is_element(c, "spearman")) {
      if (nspearman++) { results_error(p, c, "more than one <spearman>"); continue; }
      number_attr(p, c, "value", true, &r->file_spearman);
    } else {
      results_error(p, c, "unknown element <%s> in <kasgen-results>", (const char *)c->name);
    }
  }
  if (!ndevice) results_error(p, root, "<kasgen-results> has no <device>");
  if (!nrun) results_error(p, root, "<kasgen-results> has no <run>");
  if (!r->nrows) results_error(p, root, "<kasgen-results> has no <candidate>");
  static const RowKey keys[] = {{cmp_predicted, predicted_label}, {cmp_measured, measured_label},
                                {cmp_name, name_label}};
  for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) report_duplicates(p, r, &keys[k]);
}

static void results_free(Results *r) {
  for (int i = 0; i < r->nrows; i++) {
    free(r->rows[i].name);
    free(r->rows[i].kernels);
  }
  free(r->rows);
  free(r->spec);
  free(r->device);
}

/* Parses text; false after located errors. */
static bool results_parse(const char *path, const char *text, size_t len, Results *r) {
  ResultsParser p = {.path = path, .text = text};
  *r = (Results){0};
  xmlDocPtr doc = xml_read_untrusted(path, text, len);
  if (!doc) return false;
  parse_results_root(&p, xmlDocGetRootElement(doc), r);
  xmlFreeDoc(doc);
  if (p.failed) results_free(r);
  return !p.failed;
}

/* Spearman's rho over the ranked candidates: Pearson's correlation of their predicted and measured
 * ranks, each re-ranked 1..k among them (the file's ranks may have gaps when rows are missing).
 * Ranks are unique (results_parse checks), so re-ranking is a sort: O(k log k). */
static int cmp_row_ptr_predicted(const void *x, const void *y) {
  return cmp_predicted(*(const ResultRow *const *)x, *(const ResultRow *const *)y);
}

static int cmp_row_ptr_measured(const void *x, const void *y) {
  return cmp_measured(*(const ResultRow *const *)x, *(const ResultRow *const *)y);
}

static double spearman_of(const Results *r, int *k_out) {
  int k = 0;
  for (int i = 0; i < r->nrows; i++) k += r->rows[i].predicted_rank > 0;
  *k_out = k;
  if (k < 2) return NAN;
  const ResultRow **by_pred = xcalloc((size_t)k, sizeof *by_pred);
  const ResultRow **by_meas = xcalloc((size_t)k, sizeof *by_meas);
  for (int i = 0, j = 0; i < r->nrows; i++)
    if (r->rows[i].predicted_rank > 0) by_pred[j] = by_meas[j] = &r->rows[i], j++;
  qsort(by_pred, (size_t)k, sizeof *by_pred, cmp_row_ptr_predicted);
  qsort(by_meas, (size_t)k, sizeof *by_meas, cmp_row_ptr_measured);
  /* rank of each row among the ranked ones, 1-based, by row index */
  double *a = xcalloc((size_t)r->nrows, sizeof *a), *b = xcalloc((size_t)r->nrows, sizeof *b);
  for (int j = 0; j < k; j++) {
    a[by_pred[j] - r->rows] = j + 1;
    b[by_meas[j] - r->rows] = j + 1;
  }
  double mean = (k + 1) / 2.0, cov = 0, va = 0, vb = 0;
  for (int i = 0; i < r->nrows; i++) {
    if (r->rows[i].predicted_rank <= 0) continue;
    cov += (a[i] - mean) * (b[i] - mean);
    va += (a[i] - mean) * (a[i] - mean);
    vb += (b[i] - mean) * (b[i] - mean);
  }
  free(a);
  free(b);
  free(by_pred);
  free(by_meas);
  return va > 0 && vb > 0 ? cov / sqrt(va * vb) : NAN;
}

/* How far the prediction is from the measurement over the ranked candidates: the mean of
 * |predicted - measured| / measured, and how much slower the predicted best ran than the measured
 * best (0 when the model picked the winner).  These, with Spearman's rho, are the three figures
 * by which the model is judged (issue: model quality, measured). */
static void prediction_errors(const Results *r, double *mean_rel_error, double *best_gap) {
  double sum = 0, best_measured = INFINITY, predicted_best_measured = NAN;
  long best_rank = LONG_MAX;
  int k = 0;
  for (int i = 0; i < r->nrows; i++) {
    const ResultRow *x = &r->rows[i];
    if (x->predicted_rank <= 0 || !(x->measured_ns > 0)) continue;
    sum += fabs(x->predicted_ns - x->measured_ns) / x->measured_ns;
    k++;
    if (x->measured_ns < best_measured) best_measured = x->measured_ns;
    if (x->predicted_rank < best_rank) {
      best_rank = x->predicted_rank;
      predicted_best_measured = x->measured_ns;
    }
  }
  *mean_rel_error = k ? sum / k : NAN;
  *best_gap = k ? predicted_best_measured / best_measured - 1 : NAN;
}

static int compare_rows(const void *x, const void *y) {
  const ResultRow *a = x, *b = y;
  /* ranked first in predicted order, unranked ("unfused") last */
  long ra = a->predicted_rank ? a->predicted_rank : LONG_MAX;
  long rb = b->predicted_rank ? b->predicted_rank : LONG_MAX;
  return ra < rb ? -1 : ra > rb;
}

/* Prints text from the file with control characters escaped (c_safe_text): a name holding
 * terminal escape sequences must not reach the user's terminal as such. */
static void print_field(FILE *out, const char *format, const char *text) {
  char *shown = c_safe_text(text ? text : "");
  fprintf(out, format, shown);
  free(shown);
}

static void print_row(const ResultRow *x, FILE *out) {
  char pr[24] = "-", mr[24] = "-";
  if (x->predicted_rank) {
    snprintf(pr, sizeof pr, "%ld", x->predicted_rank);
    snprintf(mr, sizeof mr, "%ld", x->measured_rank);
  }
  print_field(out, "%-9s ", x->name);
  fprintf(out, "%-7ld %10.4f %10.4f %9.1f %9.1f %6.1f%% %5s %5s  ", x->nkernels, x->predicted_ns,
          x->measured_ns, x->melem_s, x->gbs, x->copy_pct, pr, mr);
  print_field(out, "%s", x->kernels);
  fputs(x->correct ? "\n" : "  WRONG\n", out);
}

static void print_results(const Results *r, double rho, int k, FILE *out) {
  print_field(out, "%s on ", r->spec);
  print_field(out, "%s: ", r->device);
  fprintf(out, "n = %ld, %ld bytes/element compulsory, copy bandwidth %.1f GB/s\n", r->n,
          r->bytes_per_elem, r->copy_gbs);
  fprintf(out, "%-9s %-7s %10s %10s %9s %9s %7s %5s %5s  %s\n", "candidate", "kernels",
          "pred ns/e", "meas ns/e", "MElem/s", "GB/s", "%copy", "pred", "meas", "kernels (calls)");
  for (int i = 0; i < r->nrows; i++) print_row(&r->rows[i], out);
  if (isfinite(rho))
    fprintf(out, "Spearman rank correlation (predicted vs measured, %d candidates): %.3f\n", k,
            rho);
  else
    fputs("Spearman rank correlation: n/a (fewer than two ranked candidates)\n", out);
  double mean_rel_error, best_gap;
  prediction_errors(r, &mean_rel_error, &best_gap);
  if (isfinite(mean_rel_error))
    fprintf(out, "mean relative error of the predicted time: %.1f%%; the predicted best ran "
                 "%.1f%% slower than the measured best (%s 5%%)\n",
            100 * mean_rel_error, 100 * best_gap, best_gap <= 0.05 ? "within" : "NOT within");
}

/* Text from the file for the plot's title: printable ASCII but the characters gnuplot treats
 * specially in or around a single-quoted string (quote, backquote, backslash, @, $), each
 * replaced by '_'; at most 120 characters.  With `noenhanced` nothing in it is markup either. */
static void gnuplot_text(StrBuf *sb, const char *s) {
  for (int n = 0; *s && n < 120; s++, n++) {
    unsigned char c = (unsigned char)*s;
    bool plain = c >= 0x20 && c < 0x7f && !strchr("'`\\@$\"", c);
    sb_putc(sb, plain ? (char)c : '_');
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
  sb_puts(&sb, ": measured performance in predicted order' noenhanced\n"
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

/* Runs gnuplot (no shell; found on $PATH) with the script on its standard input and its standard
 * output on out_fd.  Returns its exit status, 127 when it cannot be started (not installed). */
static int run_gnuplot(const char *script, int out_fd) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  extern char **environ;
  char *argv[] = {"gnuplot", NULL};
  pid_t pid;
  int rc = posix_spawnp(&pid, "gnuplot", &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[0]);
  if (rc != 0) {
    close(pipe_fds[1]);
    return 127;
  }
  /* gnuplot may stop reading early (an error): no SIGPIPE for us, just a short write. */
  void (*old)(int) = signal(SIGPIPE, SIG_IGN);
  size_t len = strlen(script);
  for (size_t done = 0; done < len;) {
    ssize_t w = write(pipe_fds[1], script + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += (size_t)w;
  }
  close(pipe_fds[1]);
  signal(SIGPIPE, old);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
  char *script = plot_script(r, k);
  int status = fd < 0 ? -1 : run_gnuplot(script, fd);
  free(script);
  struct stat st;
  bool written = fd >= 0 && status == 0 && fstat(fd, &st) == 0 && st.st_size > 0;
  int saved = errno;
  if (fd >= 0 && close(fd) != 0 && written) written = false, saved = errno;
  if (written && renameat(dirfd, temp, dirfd, name) != 0) written = false, saved = errno;
  if (!written && temp) unlinkat(dirfd, temp, 0);
  free(temp);
  PlotOutcome outcome = written ? PLOT_DRAWN : status == 127 ? PLOT_NO_GNUPLOT : PLOT_FAILED;
  if (outcome == PLOT_DRAWN)
    printf("wrote %s\n", png);
  else if (outcome == PLOT_NO_GNUPLOT)
    printf("gnuplot not found: no plot drawn\n");
  else if (fd < 0 || status == 0)
    diag_error((SrcLoc){.file = png}, "cannot write: %s; the plot is lost", strerror(saved));
  else
    diag_error((SrcLoc){.file = png}, "gnuplot failed (status %d); the plot is not drawn",
               status);
  free(png);
  return outcome;
}

/* name in dirfd (AT_FDCWD: the working folder), read as a plain file only: a link or a FIFO
 * there is refused. */
static char *read_results(int dirfd, const char *name, const char *path, size_t *len) {
  int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    diag_error((SrcLoc){.file = path}, "cannot read: %s",
               errno == ELOOP ? "a symbolic link; kasgen reads a results file only as a plain file"
                              : strerror(errno));
    return NULL;
  }
  char *text = read_text_fd(fd, path, len);
  close(fd);
  return text;
}

bool report_text(const char *path, const char *text, size_t len, FILE *out, char **script) {
  Results r;
  if (!results_parse(path, text, len, &r)) return false;
  qsort(r.rows, (size_t)r.nrows, sizeof *r.rows, compare_rows);
  int k;
  double rho = spearman_of(&r, &k);
  if (out) print_results(&r, rho, k, out);
  if (script) *script = plot_script(&r, k);
  results_free(&r);
  return true;
}

/* Parses text (a results file called path), prints the table, and draws the plot as dir/name
 * when plot_dirfd is a folder (not for the standard input, -1).  false after an error. */
static bool report_results(const char *path, const char *text, size_t len, int plot_dirfd,
                           const char *dir, const char *name) {
  Results r;
  if (!results_parse(path, text, len, &r)) return false;
  qsort(r.rows, (size_t)r.nrows, sizeof *r.rows, compare_rows);
  int k;
  double rho = spearman_of(&r, &k);
  print_results(&r, rho, k, stdout);
  if (isfinite(rho) && isfinite(r.file_spearman) && fabs(rho - r.file_spearman) > 1e-3)
    diag_warning((SrcLoc){.file = path}, "the file says Spearman %.4f; recomputed from its "
                 "ranks %.4f (shown above)", r.file_spearman, rho);
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
  char *text = read_results(dirfd, "results.xml", path, &len);
  if (!text)
    diag_note((SrcLoc){.file = dir}, "results.xml is written by `make run` in a generated "
                                     "folder on the GPU machine; copy it back here");
  bool ok = text && report_results(path, text, len, dirfd, dir, "plot.png");
  free(text);
  free(path);
  free(dir);
  return ok;
}

/* FILE: the plot beside it (plot_name). */
static bool report_file(const char *path) {
  size_t len;
  char *text = read_results(AT_FDCWD, path, path, &len);
  if (!text) return false;
  const char *slash = strrchr(path, '/');
  char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
  char *name = plot_name(slash ? slash + 1 : path);
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    diag_note((SrcLoc){.file = dir}, "cannot open this folder (%s): no plot drawn",
              strerror(errno));
  bool ok = report_results(path, text, len, dirfd, dir, name);
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
  bool ok = text && report_results(STDIN_NAME, text, len, -1, NULL, NULL);
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
