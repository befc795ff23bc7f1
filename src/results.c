/*
 * results.c — the results file a generated harness writes on a GPU machine (results.xml), read
 * back on the host by `kasgen report`, `kasgen tune` and `kasgen calibrate`.  A malformed file
 * gets located errors (file:line:col: at the value of the attribute at fault, or at the '<' of
 * the element), at most MAX_RESULTS_ERRORS of them; nothing in it is ever executed.  Schema
 * (version 1; the attributes marked ? are optional, absent from files written before the
 * harness wrote them):
 *
 *   results     = <kasgen-results version="1" spec=NAME> device run candidate+ spearman? </...>
 *   device      = <device name=TEXT copy-gbs=NUM/>  (copy-gbs > 0)
 *   run         = <run n=INT reps=INT rounds=INT? input-copies=INT bytes-per-element=INT
 *                  precision=single|double? layout=TEXT? offset=INT?/>
 *   candidate   = <candidate name=TEXT kernels=TEXT calls=TEXT? shapes=TEXT? code=TEXT?
 *                  nkernels=INT predicted-ns=NUM measured-ns=NUM melem-s=NUM compulsory-gbs=NUM
 *                  copy-percent=NUM
 *                  predicted-rank=INT measured-rank=INT correct=0|1 error=NUM
 *                  round-min-ns=NUM? round-max-ns=NUM?/>
 *   spearman    = <spearman value=NUM|nan/>
 *
 * calls (absent from older files) is each kernel's calls as `kasgen plan` prints them
 * (candidate_calls): it tells apart candidates that share their kernels' string.  shapes (absent
 * from files written before it) is each kernel's block shape (candidate_shapes): it tells apart
 * the block shapes of one candidate (--variants), which share their calls.  code (absent from
 * files written before it) is a digest of the kernels' code (emit_code_digest): plans of the
 * same implementations, calls and shapes differ in their load and save routines.
 * precision and layout (absent from older files) are the --precision and --layout the code was
 * generated with (layout as target_layout_option writes it, checked as target_new reads it):
 * tune and calibrate search a run again with them, and a file copied out of its folder says
 * them still.  offset (a sub-range's first element) is not read.
 * predicted-rank 0 marks "unfused" (shown, not ranked).  measured-ns is the median of the
 * rounds' medians; round-min-ns and round-max-ns are the fastest and slowest round's median, the
 * run-to-run spread that `kasgen tune` compares differences with.  Values that no run gives are
 * refused at their place, as a bad number is (a hand-edited file): n 0, copy-gbs 0 or below,
 * and measured-ns 0 (nothing measured) on a candidate said correct.
 */
#include "kasgen.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

typedef struct {
  const char *path, *text;
  bool failed;
  int nerrors;          /* reported so far; reading stops after MAX_RESULTS_ERRORS */
  xmlNodePtr *row_node; /* each row's <candidate>, for the place of a duplicate's attribute */
} ResultsParser;

enum { MAX_RESULTS_ERRORS = 50 };

static void results_error(ResultsParser *p, xmlNodePtr node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void results_error_attr(ResultsParser *p, xmlNodePtr node, const char *attr,
                               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void results_error_place(ResultsParser *p, TextPlace at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void vresults_error(ResultsParser *p, TextPlace at, const char *fmt, va_list ap) {
  p->failed = true;
  if (++p->nerrors > MAX_RESULTS_ERRORS) return;
  char buf[512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  diag_error((SrcLoc){.file = p->path, .text = p->text, .line = at.line, .col = at.col}, "%s",
             buf);
  if (p->nerrors == MAX_RESULTS_ERRORS)
    diag_note((SrcLoc){.file = p->path}, "too many errors; the rest are not shown");
}

/* An error about an element (one it lacks, one too many), at its start tag's '<'. */
static void results_error(ResultsParser *p, xmlNodePtr node, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vresults_error(p, xml_element_place(p->text, node), fmt, ap);
  va_end(ap);
}

/* An error about the value of node's attribute attr, at that value. */
static void results_error_attr(ResultsParser *p, xmlNodePtr node, const char *attr,
                               const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vresults_error(p, xml_attr_place(p->text, node, attr), fmt, ap);
  va_end(ap);
}

static void results_error_place(ResultsParser *p, TextPlace at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vresults_error(p, at, fmt, ap);
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

/* number = a finite plain decimal (parse_decimal); "nan" only where allow_nan. */
static bool number_attr(ResultsParser *p, xmlNodePtr node, const char *attr, bool allow_nan,
                        double *out) {
  char *s = required_attr(p, node, attr);
  if (!s) return false;
  bool ok = parse_decimal(s, out);
  if (!ok && allow_nan && !strcmp(s, "nan")) *out = NAN, ok = true;
  /* a plain decimal that parse_decimal refuses is beyond a double's range (1e400, 1e-400) */
  if (!ok && is_plain_decimal(s))
    results_error_attr(p, node, attr, "%s=\"%s\" of <%s> is out of range (beyond what a double "
                       "holds)", attr, s, (const char *)node->name);
  else if (!ok)
    results_error_attr(p, node, attr, "%s=\"%s\" of <%s> is not a number (" PLAIN_DECIMAL ")",
                       attr, s, (const char *)node->name);
  free(s);
  return ok;
}

static bool int_attr(ResultsParser *p, xmlNodePtr node, const char *attr, long min, long max,
                     long *out) {
  char *s = required_attr(p, node, attr);
  if (!s) return false;
  long v = 0;
  bool ok = parse_decimal_long(s, &v) && v >= min && v <= max;
  if (!ok)
    results_error_attr(p, node, attr, "%s=\"%s\" of <%s> is not an integer in [%ld, %ld]", attr,
                       s, (const char *)node->name, min, max);
  else
    *out = v;
  free(s);
  return ok;
}

static bool nonnegative(ResultsParser *p, xmlNodePtr node, const char *attr, double *out) {
  if (!number_attr(p, node, attr, false, out)) return false;
  if (*out < 0) {
    results_error_attr(p, node, attr, "%s of <%s> is negative", attr, (const char *)node->name);
    return false;
  }
  return true;
}

/* A figure the harness measures and divides by (a copy bandwidth): 0 is no measurement. */
static bool positive(ResultsParser *p, xmlNodePtr node, const char *attr, double *out) {
  if (!number_attr(p, node, attr, false, out)) return false;
  if (!(*out > 0)) {
    results_error_attr(p, node, attr, "%s of <%s> is not positive", attr,
                       (const char *)node->name);
    return false;
  }
  return true;
}

static bool has_attr(xmlNodePtr node, const char *attr) {
  return xmlHasProp(node, (const xmlChar *)attr) != NULL;
}

static void parse_candidate(ResultsParser *p, xmlNodePtr c, Results *r) {
  if (r->nrows == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 16;
    r->rows = xrealloc(r->rows, (size_t)r->cap * sizeof *r->rows);
    p->row_node = xrealloc(p->row_node, (size_t)r->cap * sizeof *p->row_node);
  }
  p->row_node[r->nrows] = c;
  ResultRow *row = &r->rows[r->nrows++];
  *row = (ResultRow){.line = xml_line(c)};
  row->name = required_attr(p, c, "name");
  row->kernels = required_attr(p, c, "kernels");
  if (has_attr(c, "calls")) row->calls = required_attr(p, c, "calls");
  if (has_attr(c, "shapes")) row->shapes = required_attr(p, c, "shapes");
  if (has_attr(c, "code")) row->code = required_attr(p, c, "code");
  int_attr(p, c, "nkernels", 1, INT_MAX, &row->nkernels);
  nonnegative(p, c, "predicted-ns", &row->predicted_ns);
  /* 0 where the harness measured nothing; a time per element beyond this range is no
   * measurement of a kernel (and its square's inverse, the calibration's weight, overflows). */
  bool measured_read = nonnegative(p, c, "measured-ns", &row->measured_ns);
  if (measured_read && row->measured_ns != 0 &&
      !(row->measured_ns >= 1e-6 && row->measured_ns <= 1e6))
    results_error_attr(p, c, "measured-ns",
                       "measured-ns of <%s> is outside 0 and [1e-6, 1e6] ns per element",
                       (const char *)c->name);
  nonnegative(p, c, "melem-s", &row->melem_s);
  nonnegative(p, c, "compulsory-gbs", &row->gbs);
  nonnegative(p, c, "copy-percent", &row->copy_pct);
  int_attr(p, c, "predicted-rank", 0, INT_MAX, &row->predicted_rank);
  int_attr(p, c, "measured-rank", 0, INT_MAX, &row->measured_rank);
  int_attr(p, c, "correct", 0, 1, &row->correct);
  nonnegative(p, c, "error", &row->error);
  row->round_min_ns = row->round_max_ns = NAN;
  if (has_attr(c, "round-min-ns") || has_attr(c, "round-max-ns")) {
    nonnegative(p, c, "round-min-ns", &row->round_min_ns);
    nonnegative(p, c, "round-max-ns", &row->round_max_ns);
    if (row->round_min_ns > row->round_max_ns)
      results_error_attr(p, c, "round-min-ns", "round-min-ns is larger than round-max-ns");
  }
  /* 0 is "nothing measured" (results_row_counts): a candidate said correct was run and timed;
   * a value that was refused ("nan") is no 0, and one error is enough */
  if (measured_read && row->correct == 1 && row->measured_ns == 0)
    results_error_attr(p, c, "measured-ns", "measured-ns of a correct <%s> is 0: a candidate "
                       "checked correct was timed (0 marks one the harness did not measure)",
                       (const char *)c->name);
  if (row->predicted_rank == 0 && row->measured_rank != 0)
    results_error_attr(p, c, "measured-rank",
                       "an unranked candidate (predicted-rank 0) has measured-rank %ld",
                       row->measured_rank);
  if (row->predicted_rank > 0 && row->measured_rank == 0)
    results_error_attr(p, c, "measured-rank", "a ranked candidate has no measured-rank");
}

/* Duplicates among the rows (a rank or a name twice), found by sorting pointers to the rows by
 * one key and then by line: O(n log n), each reported at its second occurrence's value.  A key
 * is its attribute, a comparison and a label: what the message calls the value, NULL for values
 * that may repeat (rank 0 marks the unranked "unfused"). */
typedef struct {
  const char *attr;
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
  char *shown = terminal_text(r->name), *label = xasprintf("candidate '%s'", shown);
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
    if (label)
      results_error_attr(p, p->row_node[sorted[i] - r->rows], key->attr, "%s appears twice",
                         label);
    free(label);
  }
  free(sorted);
}

static bool is_element(xmlNodePtr n, const char *name) {
  return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

/* precision="single|double": the command line's words, read by its reader (options.c). */
static void parse_precision(ResultsParser *p, xmlNodePtr run, Results *r) {
  char *value = required_attr(p, run, "precision");
  if (!value) return;
  r->precision_at = xml_attr_place(p->text, run, "precision");
  CliOptions read = {0};
  if (option_set(&read, OPT_PRECISION, value)) {
    r->has_precision = true;
    r->precision = read.precision;
  } else {
    results_error_place(p, r->precision_at, "precision=\"%s\" of <run> is neither single nor "
                        "double", value);
  }
  free(value);
}

/* layout="...": a --layout value, its items read as target_new reads them (target.c); the names
 * are checked against the spec when the run is searched again (cli_tune.c). */
static void parse_layout(ResultsParser *p, xmlNodePtr run, Results *r) {
  char *value = required_attr(p, run, "layout");
  if (!value) return;
  r->layout_at = xml_attr_place(p->text, run, "layout");
  const char *bad = NULL;
  int bad_len = 0;
  if (target_layouts_valid(value, &bad, &bad_len)) {
    r->layouts = value;
    return;
  }
  results_error_place(p, r->layout_at, "layout=\"%s\" of <run>: '%.*s' is not element, "
                      "component or NAME=element|component", value, bad_len, bad);
  free(value);
}

static void parse_run(ResultsParser *p, xmlNodePtr run, Results *r) {
  int_attr(p, run, "n", 1, LONG_MAX, &r->n); /* the times are per element of n */
  int_attr(p, run, "reps", 1, INT_MAX, &r->reps);
  int_attr(p, run, "input-copies", 1, INT_MAX, &r->copies);
  int_attr(p, run, "bytes-per-element", 0, INT_MAX, &r->bytes_per_elem);
  r->rounds = 1;
  if (has_attr(run, "rounds")) int_attr(p, run, "rounds", 1, INT_MAX, &r->rounds);
  if (has_attr(run, "precision")) parse_precision(p, run, r);
  if (has_attr(run, "layout")) parse_layout(p, run, r);
}

static void parse_results_root(ResultsParser *p, xmlNodePtr root, Results *r) {
  if (!root || !is_element(root, "kasgen-results")) {
    results_error(p, root, "the root element must be <kasgen-results>");
    return;
  }
  long version = 0;
  if (int_attr(p, root, "version", 0, INT_MAX, &version) && version != 1)
    results_error_attr(p, root, "version", "results version %ld; this kasgen reads version 1",
                       version);
  r->spec = required_attr(p, root, "spec");
  r->spec_at = xml_attr_place(p->text, root, "spec");
  int ndevice = 0, nrun = 0, nspearman = 0;
  r->file_spearman = NAN;
  for (xmlNodePtr c = root->children; c && p->nerrors < MAX_RESULTS_ERRORS; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (is_element(c, "device")) {
      if (ndevice++) { results_error(p, c, "more than one <device>"); continue; }
      r->device = required_attr(p, c, "name");
      r->device_line = xml_line(c);
      positive(p, c, "copy-gbs", &r->copy_gbs);
    } else if (is_element(c, "run")) {
      if (nrun++) { results_error(p, c, "more than one <run>"); continue; }
      parse_run(p, c, r);
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
  static const RowKey keys[] = {{"predicted-rank", cmp_predicted, predicted_label},
                                {"measured-rank", cmp_measured, measured_label},
                                {"name", cmp_name, name_label}};
  for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) report_duplicates(p, r, &keys[k]);
}

void results_free(Results *r) {
  for (int i = 0; i < r->nrows; i++) {
    free(r->rows[i].name);
    free(r->rows[i].kernels);
    free(r->rows[i].calls);
    free(r->rows[i].shapes);
    free(r->rows[i].code);
  }
  free(r->rows);
  free(r->spec);
  free(r->device);
  free(r->layouts);
}

bool results_parse(const char *path, const char *text, size_t len, Results *r) {
  ResultsParser p = {.path = path, .text = text};
  *r = (Results){0};
  xmlDocPtr doc = xml_read_untrusted(path, text, len);
  if (!doc) return false;
  parse_results_root(&p, xmlDocGetRootElement(doc), r);
  free(p.row_node);
  xmlFreeDoc(doc);
  if (p.failed) results_free(r);
  return !p.failed;
}

/* name in dirfd (AT_FDCWD: the working folder), read as a plain file only: a link or a FIFO
 * there is refused; path names it in messages. */
char *results_read(int dirfd, const char *name, const char *path, size_t *len) {
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

bool results_load(const char *folder, Results *r, char **path_out) {
  *path_out = NULL;
  if (!*folder) {
    diag_error((SrcLoc){0}, "an empty folder name was given; expected the folder holding "
                            "results.xml");
    return false;
  }
  char *dir = xstrdup(folder);
  for (size_t len = strlen(dir); len > 1 && dir[len - 1] == '/';) dir[--len] = '\0';
  char *path = xasprintf("%s/results.xml", dir);
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  size_t len = 0;
  char *text = NULL;
  if (dirfd < 0)
    diag_error((SrcLoc){.file = dir}, "cannot open this folder: %s", strerror(errno));
  else
    text = results_read(dirfd, "results.xml", path, &len);
  if (dirfd >= 0) close(dirfd);
  bool ok = text && results_parse(path, text, len, r);
  if (!text)
    diag_note((SrcLoc){.file = dir}, "results.xml is written by `make run` in a generated "
                                     "folder on the GPU machine; copy it back here");
  free(text);
  free(dir);
  if (ok) *path_out = path;
  else free(path);
  return ok;
}

/* Ranks 1..n of v (ties get the mean of their ranks), into rank[]. */
static const double *rank_values; /* for qsort, which takes no context */

static int cmp_by_value(const void *x, const void *y) {
  double a = rank_values[*(const int *)x], b = rank_values[*(const int *)y];
  return (a > b) - (a < b);
}

static void ranks_of(const double *v, int n, double *rank) {
  int *order = xmalloc(sizeof *order * (size_t)n);
  for (int i = 0; i < n; i++) order[i] = i;
  rank_values = v;
  qsort(order, (size_t)n, sizeof *order, cmp_by_value);
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && v[order[j + 1]] == v[order[i]]) j++;
    for (int k = i; k <= j; k++) rank[order[k]] = (i + j) / 2.0 + 1;
    i = j + 1;
  }
  free(order);
}

double rank_correlation(const double *x, const double *y, int n) {
  if (n < 2) return NAN;
  double *a = xmalloc(sizeof *a * (size_t)n), *b = xmalloc(sizeof *b * (size_t)n);
  ranks_of(x, n, a);
  ranks_of(y, n, b);
  double mean = (n + 1) / 2.0, cov = 0, va = 0, vb = 0;
  for (int i = 0; i < n; i++) {
    cov += (a[i] - mean) * (b[i] - mean);
    va += (a[i] - mean) * (a[i] - mean);
    vb += (b[i] - mean) * (b[i] - mean);
  }
  free(a);
  free(b);
  return va > 0 && vb > 0 ? cov / sqrt(va * vb) : NAN;
}

bool results_row_counts(const ResultRow *x) {
  return x->predicted_rank > 0 && x->correct && x->measured_ns > 0;
}

/* ---- the rows in predicted order ----------------------------------------------------------- */

typedef struct {
  long rank; /* predicted; LONG_MAX for an unranked row, which goes last */
  int index; /* in the file: ties keep file order */
} RankKey;

static int by_rank_then_file_order(const void *a, const void *b) {
  const RankKey *x = a, *y = b;
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

int *results_rank_order(const Results *r) {
  int n = r->nrows;
  RankKey *keys = xmalloc(sizeof *keys * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; i++)
    keys[i] = (RankKey){r->rows[i].predicted_rank ? r->rows[i].predicted_rank : LONG_MAX, i};
  qsort(keys, (size_t)n, sizeof *keys, by_rank_then_file_order);
  int *order = xmalloc(sizeof *order * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; i++) order[i] = keys[i].index;
  free(keys);
  return order;
}

void results_sort_by_rank(Results *r) {
  int *order = results_rank_order(r);
  ResultRow *rows = xmalloc(sizeof *rows * (size_t)(r->nrows > 0 ? r->nrows : 1));
  for (int i = 0; i < r->nrows; i++) rows[i] = r->rows[order[i]];
  memcpy(r->rows, rows, sizeof *rows * (size_t)r->nrows);
  free(rows);
  free(order);
}
