/*
 * calibrate.c — a model that learns from what it measured (docs/model.md, "Calibration").
 *
 * `kasgen calibrate DIR` (cli_tune.c) reads the results of GPU runs (DIR/<spec>/results.xml of
 * generated folders, or DIR/<name>.xml files), finds each run's candidates again by searching for
 * its spec with the uncalibrated model (tune.c: the same kernels), and calibrate.c fits
 * three constants of the model (ModelCalibration) to the correct candidates' measured times:
 *
 *   t(candidate) = Σ_kernels [hypot(a · work, floor) + b · barriers + spills + c] + launches
 *
 * a (work_scale) on a grid from 0.5 to 1.5 in steps of 0.001, and for each a, b (barrier_scale)
 * and c (kernel_ns) by weighted linear least squares (both kept >= 0), minimizing the sum of
 * squared relative errors.  Why these three: the model is pessimistic throughout (a), it
 * misjudges one kernel with barriers against two without (b against c).
 *
 * The measured times and the fitted constants are stored beside the database,
 * <db without .xml>.measured.xml, which the model reads whenever it loads that database
 * (cli_load_timingdb; --uncalibrated sets it aside):
 *
 *   store       = <kasgen-measured version="1"> calibration? spec* </kasgen-measured>
 *   calibration = <calibration work-scale=NUM barrier-scale=NUM kernel-ns=NUM specs=INT
 *                  candidates=INT fitted-on=TEXT/>
 *   spec        = <spec name=TEXT device=TEXT> candidate+ </spec>
 *   candidate   = <candidate name=TEXT predicted-rank=INT kernels=TEXT measured-ns=NUM/>
 *
 * The store is data copied between machines like a results file: read through xml_input.c (no
 * DTD, no network), every number checked, errors located; written through a temporary file and
 * rename.  A calibration fitted on some specs says nothing of its accuracy on them as a
 * prediction: benchmarks/model_eval.sh evaluates it on specs left out of the fit.
 */
#include "kasgen.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#define MIN_SAMPLES 3

/* ---- the store's path and its reading --------------------------------------------------- */

static char *store_path(const char *db_path) {
  size_t len = strlen(db_path);
  if (len > 4 && !strcmp(db_path + len - 4, ".xml")) len -= 4;
  return xasprintf("%.*s.measured.xml", (int)len, db_path);
}

/* A finite number attribute; false after a located error. */
static bool number_of(const char *path, const char *text, xmlNodePtr n, const char *attr,
                      double *out) {
  xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
  char *end = NULL;
  double x = v ? strtod((const char *)v, &end) : NAN;
  bool ok = v && end != (char *)v && !*end && isfinite(x);
  SrcLoc at = {.file = path, .text = text, .line = (int)xml_line(n)};
  if (!ok && v) diag_error(at, "%s of <%s> is not a number", attr, (const char *)n->name);
  if (!v) diag_error(at, "<%s> lacks the attribute %s", (const char *)n->name, attr);
  else
    *out = x;
  xmlFree(v);
  return ok;
}

static bool calibration_of(const char *path, const char *text, xmlNodePtr n,
                           ModelCalibration *c) {
  double specs = 0, cands = 0;
  bool ok = number_of(path, text, n, "work-scale", &c->work_scale) &
            number_of(path, text, n, "barrier-scale", &c->barrier_scale) &
            number_of(path, text, n, "kernel-ns", &c->kernel_ns) &
            number_of(path, text, n, "specs", &specs) &
            number_of(path, text, n, "candidates", &cands);
  if (ok && (c->work_scale <= 0 || c->work_scale > 10 || c->barrier_scale < 0 ||
             c->barrier_scale > 100 || fabs(c->kernel_ns) > 100)) {
    diag_error((SrcLoc){.file = path, .text = text, .line = (int)xml_line(n)},
               "the calibration's constants are out of range (work-scale in (0, 10], "
               "barrier-scale in [0, 100], |kernel-ns| <= 100)");
    ok = false;
  }
  c->nspecs = (int)specs;
  c->ncandidates = (int)cands;
  c->present = ok;
  return ok;
}

/* Reads the store at path into doc (NULL when there is no store); false after an error. */
static bool read_store(const char *path, xmlDocPtr *doc, char **text_out) {
  *doc = NULL;
  *text_out = NULL;
  struct stat st;
  if (stat(path, &st) != 0 && errno == ENOENT) return true;
  size_t len;
  char *text = read_text_file(path, &len);
  if (!text) return false;
  *doc = xml_read_untrusted(path, text, len);
  xmlNodePtr root = *doc ? xmlDocGetRootElement(*doc) : NULL;
  bool ok = root && !strcmp((const char *)root->name, "kasgen-measured");
  if (*doc && !ok)
    diag_error((SrcLoc){.file = path, .text = text, .line = root ? (int)xml_line(root) : 0},
               "the root element must be <kasgen-measured>");
  if (!ok && *doc) xmlFreeDoc(*doc), *doc = NULL;
  if (!ok) free(text);
  else *text_out = text;
  return ok;
}

bool calibration_read(const TimingDb *db, ModelCalibration *out) {
  *out = (ModelCalibration){0};
  if (!db || db->analytic || !db->path) return true;
  char *path = store_path(db->path), *text;
  xmlDocPtr doc;
  bool ok = read_store(path, &doc, &text);
  for (xmlNodePtr n = doc ? xmlDocGetRootElement(doc)->children : NULL; ok && n; n = n->next)
    if (n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, "calibration"))
      ok = calibration_of(path, text, n, out);
  if (doc) xmlFreeDoc(doc);
  free(text);
  free(path);
  return ok;
}

/* ---- the samples: measured candidates with their model terms ---------------------------- */

typedef struct {
  ModelTerms terms[KAS_MAX_NODES];
  int nkernels;
  double launch;   /* the launch share the search adds */
  double measured; /* ns per element */
} Sample;

struct CalibrationSamples {
  Sample *s;
  int n, cap;
  StrBuf store;  /* the <spec> elements of the new store */
  StrBuf fitted; /* the specs' names */
  int nspecs;
};
typedef CalibrationSamples Samples;

CalibrationSamples *calibration_samples_new(void) { return xcalloc(1, sizeof(Samples)); }

void calibration_samples_free(CalibrationSamples *all) {
  if (!all) return;
  free(all->s);
  sb_free(&all->store);
  sb_free(&all->fitted);
  free(all);
}

int calibration_sample_count(const CalibrationSamples *all) { return all->n; }

static void xml_text(StrBuf *sb, const char *s) {
  for (; *s; s++) switch (*s) {
    case '&': sb_puts(sb, "&amp;"); break;
    case '<': sb_puts(sb, "&lt;"); break;
    case '>': sb_puts(sb, "&gt;"); break;
    case '"': sb_puts(sb, "&quot;"); break;
    default: sb_putc(sb, *s);
    }
}

static void add_sample(Samples *all, SearchContext *ctx, const Candidate *c, double measured) {
  if (all->n == all->cap) {
    all->cap = all->cap ? 2 * all->cap : 64;
    all->s = xrealloc(all->s, sizeof *all->s * (size_t)all->cap);
  }
  Sample *s = &all->s[all->n];
  *s = (Sample){.nkernels = c->nkernels, .launch = c->predicted_ns_per_elem,
                .measured = measured};
  for (int k = 0; k < c->nkernels; k++) {
    s->launch -= c->kernels[k]->predicted_ns_per_elem;
    if (!model_kernel_terms(ctx, c->kernels[k], &s->terms[k])) return; /* cannot launch */
  }
  all->n++;
}


void calibration_begin_spec(CalibrationSamples *all, const char *spec, const char *device) {
  sb_puts(&all->store, "  <spec name=\"");
  xml_text(&all->store, spec);
  sb_puts(&all->store, "\" device=\"");
  xml_text(&all->store, device ? device : "");
  sb_puts(&all->store, "\">\n");
  sb_printf(&all->fitted, "%s%s", all->nspecs++ ? " " : "", spec);
}

void calibration_add(CalibrationSamples *all, SearchContext *ctx, const Candidate *c,
                     const ResultRow *row) {
  add_sample(all, ctx, c, row->measured_ns);
  sb_printf(&all->store, "    <candidate name=\"cand%02ld\" predicted-rank=\"%ld\" kernels=\"",
            row->predicted_rank, row->predicted_rank);
  xml_text(&all->store, row->kernels ? row->kernels : "");
  sb_printf(&all->store, "\" measured-ns=\"%.6g\"/>\n", row->measured_ns);
}

void calibration_end_spec(CalibrationSamples *all) { sb_puts(&all->store, "  </spec>\n"); }

/* ---- the fit ---------------------------------------------------------------------------- */

/* Sum of squared relative errors of calibration c over the samples. */
static double sq_error(const Samples *all, const ModelCalibration *c) {
  double e = 0;
  for (int i = 0; i < all->n; i++) {
    const Sample *s = &all->s[i];
    double t = s->launch;
    for (int k = 0; k < s->nkernels; k++) t += model_combine_terms(&s->terms[k], c);
    e += (t - s->measured) * (t - s->measured) / (s->measured * s->measured);
  }
  return e;
}

/* For a given work scale: b and c >= 0 by weighted least squares of what the scaled work leaves
 * of each measured time, over the barrier sums and kernel counts. */
static ModelCalibration fit_linear(const Samples *all, double a) {
  double xx = 0, xn = 0, nn = 0, xr = 0, nr = 0;
  for (int i = 0; i < all->n; i++) {
    const Sample *s = &all->s[i];
    double rest = s->measured - s->launch, x = 0, w = 1 / (s->measured * s->measured);
    for (int k = 0; k < s->nkernels; k++) {
      rest -= hypot(a * s->terms[k].work, s->terms[k].floor) + s->terms[k].spill;
      x += s->terms[k].barrier;
    }
    xx += w * x * x, xn += w * x * s->nkernels, nn += w * s->nkernels * s->nkernels;
    xr += w * x * rest, nr += w * s->nkernels * rest;
  }
  ModelCalibration best = {.present = true, .work_scale = a, .barrier_scale = 0, .kernel_ns = 0};
  double best_e = sq_error(all, &best), det = xx * nn - xn * xn;
  ModelCalibration tries[3] = {
      {true, a, det > 0 ? (xr * nn - nr * xn) / det : -1, det > 0 ? (nr * xx - xr * xn) / det : -1,
       0, 0},
      {true, a, xx > 0 ? xr / xx : 0, 0, 0, 0},
      {true, a, 0, nn > 0 ? nr / nn : 0, 0, 0}};
  for (int t = 0; t < 3; t++) {
    if (tries[t].barrier_scale < 0 || tries[t].kernel_ns < 0) continue;
    double e = sq_error(all, &tries[t]);
    if (e < best_e) best_e = e, best = tries[t];
  }
  return best;
}

ModelCalibration calibration_fit(const CalibrationSamples *all, double *rms_fitted,
                                 double *rms_plain) {
  ModelCalibration best = fit_linear(all, 1.0);
  double best_e = sq_error(all, &best);
  for (int step = 0; step <= 1000; step++) {
    ModelCalibration c = fit_linear(all, 0.5 + step * 0.001);
    double e = sq_error(all, &c);
    if (e < best_e) best_e = e, best = c;
  }
  ModelCalibration none = {0};
  *rms_fitted = all->n ? sqrt(best_e / all->n) : NAN;
  *rms_plain = all->n ? sqrt(sq_error(all, &none) / all->n) : NAN;
  best.nspecs = all->nspecs;
  best.ncandidates = all->n;
  return best;
}

/* ---- the store, written ---------------------------------------------------------------- */

bool calibration_write(const TimingDb *db, const CalibrationSamples *all,
                       const ModelCalibration *c, char **path_out) {
  char *path = store_path(db->path);
  *path_out = path;
  char *temp = xasprintf("%s.kasgen-tmp", path);
  FILE *f = output_open(temp);
  if (!f) {
    free(temp);
    return false;
  }
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- Written by kasgen calibrate: "
             "measured candidates of this GPU and the model's constants fitted to them "
             "(docs/model.md). -->\n<kasgen-measured version=\"1\">\n");
  fprintf(f, "  <calibration work-scale=\"%.4f\" barrier-scale=\"%.4f\" kernel-ns=\"%.6f\" "
             "specs=\"%d\" candidates=\"%d\" fitted-on=\"",
          c->work_scale, c->barrier_scale, c->kernel_ns, all->nspecs, all->n);
  StrBuf names;
  sb_init(&names);
  xml_text(&names, all->fitted.data ? all->fitted.data : "");
  fprintf(f, "%s\"/>\n%s</kasgen-measured>\n", names.data ? names.data : "",
          all->store.data ? all->store.data : "");
  sb_free(&names);
  bool ok = output_close(f, temp, "the calibration");
  if (ok && rename(temp, path) != 0) {
    diag_error((SrcLoc){.file = path}, "cannot write: %s", strerror(errno));
    ok = false;
  }
  if (!ok) unlink(temp);
  free(temp);
  return ok;
}

