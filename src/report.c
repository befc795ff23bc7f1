/*
 * report.c — `kasgen report DIR`: reads DIR/results.xml, written by a generated harness on a GPU
 * machine and copied back (schema below), prints the table with the rank correlation recomputed
 * from the ranks, and draws DIR/plot.png with gnuplot when it is installed (measured performance
 * in predicted order, like seed 004's Graf 5.1-5.4).  A malformed file gets located errors.
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
 */
#include "kasgen.h"

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

typedef struct {
  char *name, *kernels;
  long nkernels, predicted_rank, measured_rank, correct;
  double predicted_ns, measured_ns, melem_s, gbs, copy_pct, error;
} ResultRow;

typedef struct {
  char *spec, *device;
  double copy_gbs, file_spearman;
  long n, reps, copies, bytes_per_elem;
  ResultRow *rows;
  int nrows;
} Results;

typedef struct {
  const char *path, *text;
  bool failed;
} ResultsParser;

static void results_error(ResultsParser *p, xmlNodePtr node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void results_error(ResultsParser *p, xmlNodePtr node, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  long line = node ? xmlGetLineNo(node) : 0;
  diag_error((SrcLoc){.file = p->path, .text = p->text, .line = line > 0 ? (int)line : 0}, "%s",
             buf);
  p->failed = true;
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
  r->rows = xrealloc(r->rows, (size_t)(r->nrows + 1) * sizeof *r->rows);
  ResultRow *row = &r->rows[r->nrows++];
  *row = (ResultRow){0};
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
  for (int i = 0; i + 1 < r->nrows; i++) {
    const ResultRow *o = &r->rows[i];
    if (row->predicted_rank && o->predicted_rank == row->predicted_rank)
      results_error(p, c, "predicted-rank %ld appears twice", row->predicted_rank);
    if (row->measured_rank && o->measured_rank == row->measured_rank)
      results_error(p, c, "measured-rank %ld appears twice", row->measured_rank);
    if (row->name && o->name && !strcmp(o->name, row->name))
      results_error(p, c, "candidate '%s' appears twice", row->name);
  }
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
  for (xmlNodePtr c = root->children; c; c = c->next) {
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
  if (len > INT_MAX) {
    diag_error((SrcLoc){.file = path}, "results file too large");
    return false;
  }
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
  if (!ctxt) {
    diag_error((SrcLoc){.file = path}, "cannot create an XML parser");
    return false;
  }
  /* NONET: never fetch anything; NOERROR/NOWARNING: errors are reported here, located. */
  xmlDocPtr doc = xmlCtxtReadMemory(ctxt, text, (int)len, path, NULL,
                                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!doc) {
    const xmlError *err = xmlCtxtGetLastError(ctxt);
    char *msg = xstrdup(err && err->message ? err->message : "not well-formed XML");
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) msg[--n] = '\0';
    diag_error((SrcLoc){.file = path, .text = text, .line = err ? err->line : 0,
                        .col = err ? err->int2 : 0},
               "malformed XML: %s", msg);
    free(msg);
    p.failed = true;
  } else {
    parse_results_root(&p, xmlDocGetRootElement(doc), r);
  }
  xmlFreeDoc(doc);
  xmlFreeParserCtxt(ctxt);
  if (p.failed) results_free(r);
  return !p.failed;
}

/* Spearman's rho over the ranked candidates: Pearson's correlation of their predicted and measured
 * ranks, each re-ranked 1..k among them (the file's ranks may have gaps when rows are missing). */
static double spearman_of(const Results *r, int *k_out) {
  int k = 0;
  for (int i = 0; i < r->nrows; i++) k += r->rows[i].predicted_rank > 0;
  *k_out = k;
  if (k < 2) return NAN;
  double *a = xcalloc((size_t)k, sizeof *a), *b = xcalloc((size_t)k, sizeof *b);
  int j = 0;
  for (int i = 0; i < r->nrows; i++) {
    const ResultRow *x = &r->rows[i];
    if (x->predicted_rank <= 0) continue;
    int ra = 1, rb = 1;
    for (int m = 0; m < r->nrows; m++) {
      const ResultRow *y = &r->rows[m];
      if (y->predicted_rank <= 0) continue;
      ra += y->predicted_rank < x->predicted_rank;
      rb += y->measured_rank < x->measured_rank;
    }
    a[j] = ra;
    b[j] = rb;
    j++;
  }
  double mean = (k + 1) / 2.0, cov = 0, va = 0, vb = 0;
  for (int i = 0; i < k; i++) {
    cov += (a[i] - mean) * (b[i] - mean);
    va += (a[i] - mean) * (a[i] - mean);
    vb += (b[i] - mean) * (b[i] - mean);
  }
  free(a);
  free(b);
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

static void print_results(const Results *r, double rho, int k) {
  printf("%s on %s: n = %ld, %ld bytes/element compulsory, copy bandwidth %.1f GB/s\n", r->spec,
         r->device, r->n, r->bytes_per_elem, r->copy_gbs);
  printf("%-9s %-7s %10s %10s %9s %9s %7s %5s %5s  %s\n", "candidate", "kernels", "pred ns/e",
         "meas ns/e", "MElem/s", "GB/s", "%copy", "pred", "meas", "kernels (calls)");
  for (int i = 0; i < r->nrows; i++) {
    const ResultRow *x = &r->rows[i];
    char pr[24] = "-", mr[24] = "-";
    if (x->predicted_rank) {
      snprintf(pr, sizeof pr, "%ld", x->predicted_rank);
      snprintf(mr, sizeof mr, "%ld", x->measured_rank);
    }
    printf("%-9s %-7ld %10.4f %10.4f %9.1f %9.1f %6.1f%% %5s %5s  %s%s\n", x->name, x->nkernels,
           x->predicted_ns, x->measured_ns, x->melem_s, x->gbs, x->copy_pct, pr, mr, x->kernels,
           x->correct ? "" : "  WRONG");
  }
  if (isfinite(rho))
    printf("Spearman rank correlation (predicted vs measured, %d candidates): %.3f\n", k, rho);
  else
    printf("Spearman rank correlation: n/a (fewer than two ranked candidates)\n");
  double mean_rel_error, best_gap;
  prediction_errors(r, &mean_rel_error, &best_gap);
  if (isfinite(mean_rel_error))
    printf("mean relative error of the predicted time: %.1f%%; the predicted best ran %.1f%% slower "
           "than the measured best (%s 5%%)\n",
           100 * mean_rel_error, 100 * best_gap, best_gap <= 0.05 ? "within" : "NOT within");
}

static bool have_gnuplot(void) { return system("command -v gnuplot >/dev/null 2>&1") == 0; }

/* A path as a gnuplot single-quoted string ('' stands for one quote). */
static void gnuplot_string(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', f);
    fputc(*s, f);
  }
  fputc('\'', f);
}

/* DIR/plot.png: measured MElem/s in predicted order, a moving average over five, and the
 * prediction.  The data go inline (plot '-'), so nothing but the picture is written. */
static bool draw_plot(const Results *r, const char *png) {
  FILE *g = popen("gnuplot", "w");
  if (!g) return false;
  fputs("set terminal png size 1000,600\nset output ", g);
  gnuplot_string(g, png);
  fputs("\nset title ", g);
  char *title = xasprintf("%s on %s: measured performance in predicted order", r->spec, r->device);
  gnuplot_string(g, title);
  free(title);
  fputs("\nset xlabel 'candidate (predicted rank)'\nset ylabel 'million elements per second'\n"
        "set grid\nset key top right\nset xtics 1\nset yrange [0:*]\nset offsets 0.5, 0.5, 0, 0\n"
        "plot '-' using 1:2 with points pointtype 7 pointsize 1.5 title 'measured', "
        "'-' using 1:2 with lines linewidth 2 title 'moving average (5)', "
        "'-' using 1:2 with linespoints dashtype 2 title 'predicted'\n",
        g);
  int k = 0;
  for (int i = 0; i < r->nrows; i++) k += r->rows[i].predicted_rank > 0;
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
      fprintf(g, "%ld %.6g\n", x->predicted_rank, y);
    }
    fputs("e\n", g);
  }
  return pclose(g) == 0;
}

bool report_run(const char *folder) {
  char *dir = xstrdup(folder);
  for (size_t len = strlen(dir); len > 1 && dir[len - 1] == '/';) dir[--len] = '\0';
  char *path = xasprintf("%s/results.xml", dir);
  size_t len;
  char *text = read_text_file(path, &len);
  if (!text) {
    diag_note((SrcLoc){.file = dir}, "results.xml is written by `make run` in a generated "
                                         "folder on the GPU machine; copy it back here");
    free(path);
    free(dir);
    return false;
  }
  Results r;
  bool ok = results_parse(path, text, len, &r);
  free(text);
  if (!ok) {
    free(path);
    free(dir);
    return false;
  }
  qsort(r.rows, (size_t)r.nrows, sizeof *r.rows, compare_rows);
  int k;
  double rho = spearman_of(&r, &k);
  print_results(&r, rho, k);
  if (isfinite(rho) && isfinite(r.file_spearman) && fabs(rho - r.file_spearman) > 1e-3)
    diag_warning((SrcLoc){.file = path}, "the file says Spearman %.4f; recomputed from its ranks "
                                         "%.4f (shown above)",
                 r.file_spearman, rho);
  char *png = xasprintf("%s/plot.png", dir);
  if (!have_gnuplot())
    printf("gnuplot not found: no plot drawn\n");
  else if (draw_plot(&r, png))
    printf("wrote %s\n", png);
  else
    diag_warning((SrcLoc){.file = png}, "gnuplot failed; no plot drawn");
  free(png);
  results_free(&r);
  free(path);
  free(dir);
  return true;
}
