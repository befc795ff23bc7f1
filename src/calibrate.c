/*
 * calibrate.c — a model that learns from what it measured (docs/model.md, "Calibration").
 *
 * `kasgen calibrate DIR` (cli_tune.c) reads the results of GPU runs (DIR/<spec>/results.xml of
 * generated folders, or DIR/<name>.xml files), finds each run's candidates again by searching for
 * its spec as it was generated (cli_tune.c's open_calibration_session; tune.c: the same kernels
 * and code), and calibrate.c fits eleven constants of the model (ModelCalibration) to the correct
 * candidates' measured times:
 *
 *   t(candidate) = Σ_kernels [hypot(a · WORK, floor) + b · barriers
 *                             + w · barriers × warps per block / resident elements + spills + c]
 *                  + launches
 *   WORK = max(IO', COMPUTE) + u · min(IO', COMPUTE)
 *   IO'  = max((REQ^p + REST^p)^(1/p), v · wavefronts)
 *   REQ  = r1 · requests by one thread + rs · (requests by several + s · (covered - them / 2))
 *   REST = the other moves + l · lines
 *
 * a (work_scale), r1, rs and l (the IO parts' scales), p (requests_overlap), s (coverage_slope),
 * u (unhidden_share) and v (wavefront_scale) by coordinate descent, each on a scan of its range
 * refined by a golden-section search, and for each point b (barrier_scale), w (barrier_warp_ns)
 * and c (kernel_ns) by weighted linear least squares (all kept >= 0), minimizing the sum of
 * squared relative errors.  Why these: the model is pessimistic throughout (a); the L2 write
 * requests of slices saved straight and the lines of slices loaded are the terms measured
 * candidates disagree with most, each in its own direction (r1, rs, l; docs/model.md); the
 * request term's time overlaps the other moves in part (p), and several threads' requests cost
 * less where the kernel saves more of the record (s); memory and arithmetic do not hide each
 * other wholly (u: fitted 0.12 on the H100's runs, 0.20 on the H200's); the loads' L1
 * wavefronts bound their time, which the database's routines, timed alone, do not show (v:
 * Nsight Compute on the H200, session 39; fitted 1.49 and 1.18, above 1 as the count leaves out
 * shared memory's and the stores' wavefronts); it misjudges one kernel with barriers against two
 * without (b against c); and a block waits longer at a barrier the more warps it has (w: the
 * H200's block shapes of one fusion).  Nsight Compute says the request term stands in
 * for latency in the generated kernels (docs/model.md): p and s are fitted, not derived.
 *
 * The measured times and the fitted constants are stored beside the database,
 * <db without .xml>.measured.xml, which the model reads whenever it loads that database
 * (cli_load_timingdb; --uncalibrated sets it aside):
 *
 *   store       = <kasgen-measured version="1"> calibration? spec* </kasgen-measured>
 *                  (the version is required, and a second <calibration> refused)
 *   calibration = <calibration work-scale=NUM requests-one-scale=NUM? requests-shared-scale=NUM?
 *                  lines-scale=NUM? requests-overlap=NUM? coverage-slope=NUM?
 *                  unhidden-share=NUM? wavefront-scale=NUM? barrier-scale=NUM
 *                  barrier-warp-ns=NUM? kernel-ns=NUM specs=INT candidates=INT fitted-on=TEXT/>
 *                  (stores written before them lack the optional constants: an IO scale left
 *                  out is 1, requests-overlap 1, coverage-slope, unhidden-share,
 *                  wavefront-scale and barrier-warp-ns 0)
 *   spec        = <spec name=TEXT device=TEXT> candidate+ </spec>  (device: the GPU the run
 *                  was measured on, as its results file names it; calibrate refuses and tune
 *                  warns of one that is not the database's <device name>, calibration_same_gpu)
 *   candidate   = <candidate name=TEXT predicted-rank=INT kernels=TEXT calls=TEXT? shapes=TEXT?
 *                  code=TEXT? measured-ns=NUM/>  (the results file's row: which candidate ran;
 *                  a record, not read back)
 *
 * The store is data copied between machines like a results file: read through xml_input.c (no
 * DTD, no network), every number checked, errors located; written through a temporary file and
 * rename.  A calibration fitted on some specs says nothing of its accuracy on them as a
 * prediction: `kasgen calibrate DIR --held-out` (calibration_held_out) fits once per spec, on
 * the other specs' runs, and judges the spec's runs by that fit.
 */
#include "kasgen.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#define MIN_SAMPLES 3
/* The ranges of the requests' overlap and coverage slope: p = 4 is all but a max; a slope
 * below 2 in size keeps every rate positive (the share of a record is in (0, 1]). */
#define MAX_OVERLAP 4.0
#define MAX_COVERAGE_SLOPE 1.99

/* ---- the store's path and its reading --------------------------------------------------- */

/* A database read from the standard input has no folder, so no store beside it. */
static bool db_from_stdin(const char *db_path) {
  return !strcmp(db_path, STDIN_NAME) || !strcmp(db_path, "-");
}

char *calibration_store_path(const char *db_path) {
  size_t len = strlen(db_path);
  if (len > 4 && !strcmp(db_path + len - 4, ".xml")) len -= 4;
  return xasprintf("%.*s.measured.xml", (int)len, db_path);
}

/* A finite number attribute, a plain decimal (parse_decimal); false after a located error.  An
 * optional attribute that is absent leaves *out as it is. */
static bool number_or(const char *path, const char *text, xmlNodePtr n, const char *attr,
                      bool optional, double *out) {
  xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
  if (!v && optional) return true;
  bool ok = v && parse_decimal((const char *)v, out);
  SrcLoc at = {.file = path, .text = text, .line = (int)xml_line(n)};
  if (!ok && v)
    diag_error(at, "%s of <%s> is not a number (" PLAIN_DECIMAL ")", attr, (const char *)n->name);
  if (!v) diag_error(at, "<%s> lacks the attribute %s", (const char *)n->name, attr);
  xmlFree(v);
  return ok;
}

static bool number_of(const char *path, const char *text, xmlNodePtr n, const char *attr,
                      double *out) {
  return number_or(path, text, n, attr, false, out);
}

/* The relative scales of IO's parts came with the store's second form, the requests' overlap
 * and coverage slope with its third, the barriers' cost per warp with its fourth, the unhidden
 * share and the wavefront scale with its fifth; a store without them scales IO as a whole (1),
 * its parts summed (overlap 1), whatever the coverage (slope 0) and the blocks' warps (0), the
 * lesser of memory and arithmetic hidden (0), and no bound of L1's wavefronts (0). */
static bool scales_of(const char *path, const char *text, xmlNodePtr n, ModelCalibration *c) {
  c->requests_one_scale = c->requests_shared_scale = c->lines_scale = c->requests_overlap = 1;
  c->coverage_slope = c->barrier_warp_ns = c->unhidden_share = c->wavefront_scale = 0;
  return number_or(path, text, n, "requests-one-scale", true, &c->requests_one_scale) &
         number_or(path, text, n, "unhidden-share", true, &c->unhidden_share) &
         number_or(path, text, n, "wavefront-scale", true, &c->wavefront_scale) &
         number_or(path, text, n, "barrier-warp-ns", true, &c->barrier_warp_ns) &
         number_or(path, text, n, "requests-shared-scale", true, &c->requests_shared_scale) &
         number_or(path, text, n, "lines-scale", true, &c->lines_scale) &
         number_or(path, text, n, "requests-overlap", true, &c->requests_overlap) &
         number_or(path, text, n, "coverage-slope", true, &c->coverage_slope);
}

/* The range of each constant that a store may hold: what calibration_of reads and
 * calibration_write writes (a fit outside it is refused there, so that no command is then
 * refused the database).  lo_open: lo itself is out.  NaN is in no range. */
typedef struct {
  const char *name;
  size_t offset; /* in ModelCalibration */
  double lo, hi;
  bool lo_open;
} ConstantRange;
static const ConstantRange RANGES[] = {
    {"work-scale", offsetof(ModelCalibration, work_scale), 0, 10, true},
    {"requests-one-scale", offsetof(ModelCalibration, requests_one_scale), 0, 10, true},
    {"requests-shared-scale", offsetof(ModelCalibration, requests_shared_scale), 0, 10, true},
    {"lines-scale", offsetof(ModelCalibration, lines_scale), 0, 10, true},
    {"requests-overlap", offsetof(ModelCalibration, requests_overlap), 1, MAX_OVERLAP, false},
    {"coverage-slope", offsetof(ModelCalibration, coverage_slope), -MAX_COVERAGE_SLOPE,
     MAX_COVERAGE_SLOPE, false},
    {"unhidden-share", offsetof(ModelCalibration, unhidden_share), 0, 1, false},
    {"wavefront-scale", offsetof(ModelCalibration, wavefront_scale), 0, 10, false},
    {"barrier-scale", offsetof(ModelCalibration, barrier_scale), 0, 100, false},
    {"barrier-warp-ns", offsetof(ModelCalibration, barrier_warp_ns), 0, 10000, false},
    {"kernel-ns", offsetof(ModelCalibration, kernel_ns), 0, 100, false},
};
enum { NRANGES = sizeof RANGES / sizeof *RANGES };

static double constant_at(const ModelCalibration *c, const ConstantRange *r) {
  return *(const double *)((const char *)c + r->offset);
}

/* The first constant of c outside its range, or NULL. */
static const ConstantRange *out_of_range(const ModelCalibration *c) {
  for (int i = 0; i < NRANGES; i++) {
    double x = constant_at(c, &RANGES[i]);
    if (!(x <= RANGES[i].hi && (x > RANGES[i].lo || (x == RANGES[i].lo && !RANGES[i].lo_open))))
      return &RANGES[i];
  }
  return NULL;
}

/* "barrier-scale 296.1751 is outside [0, 100]" (malloc'ed). */
static char *range_text(const ModelCalibration *c, const ConstantRange *r) {
  return xasprintf("%s %.4f is outside %c%g, %g]", r->name, constant_at(c, r),
                   r->lo_open ? '(' : '[', r->lo, r->hi);
}

/* "work-scale in (0, 10], ..., kernel-ns in [0, 100]": RANGES as the error lists them, so that
 * the message cannot drift from the check (malloc'ed). */
static char *every_range_text(void) {
  StrBuf sb;
  sb_init(&sb);
  for (int i = 0; i < NRANGES; i++)
    sb_printf(&sb, "%s%s in %c%g, %g]", i ? ", " : "", RANGES[i].name,
              RANGES[i].lo_open ? '(' : '[', RANGES[i].lo, RANGES[i].hi);
  return sb_take(&sb);
}

/* What the store's specs and candidates may say (they are read as numbers, kept as ints). */
static bool whole_count(double x) { return x >= 0 && x <= 1e9 && x == floor(x); }

/* The constants of <calibration> n into *c; false after a located error.  replacing: the store
 * is being fitted again (calibrate): constants out of range (as a kasgen before 2026-11-29
 * could store) are a warning, and *c is left absent (present false), not an error that would
 * keep calibrate from replacing them. */
static bool calibration_of(const char *path, const char *text, xmlNodePtr n,
                           ModelCalibration *c, bool replacing) {
  double specs = 0, cands = 0;
  bool ok = number_of(path, text, n, "work-scale", &c->work_scale) &
            scales_of(path, text, n, c) &
            number_of(path, text, n, "barrier-scale", &c->barrier_scale) &
            number_of(path, text, n, "kernel-ns", &c->kernel_ns) &
            number_of(path, text, n, "specs", &specs) &
            number_of(path, text, n, "candidates", &cands);
  const ConstantRange *bad = ok ? out_of_range(c) : NULL;
  SrcLoc at = {.file = path, .text = text, .line = (int)xml_line(n)};
  if (bad && replacing) {
    char *why = range_text(c, bad);
    diag_warning(at, "the calibration's constants are out of range (%s): calibrate sets them "
                 "aside, searches the runs without them and replaces them", why);
    free(why);
    *c = (ModelCalibration){0};
    return true;
  }
  if (ok && (bad || !whole_count(specs) || !whole_count(cands))) {
    char *why = bad ? range_text(c, bad) : xstrdup("specs or candidates");
    char *ranges = every_range_text();
    diag_error(at, "the calibration's constants are out of range (%s; %s, specs and candidates "
               "whole numbers in [0, 10^9])", why, ranges);
    free(ranges);
    diag_note((SrcLoc){0}, "--uncalibrated sets the store aside; kasgen calibrate replaces it");
    free(why);
    ok = false;
  }
  c->nspecs = ok ? (int)specs : 0;
  c->ncandidates = ok ? (int)cands : 0;
  c->present = ok;
  return ok;
}

/* Whether root is the store's: <kasgen-measured version="1">, the version calibration_write
 * writes (a store of another version is not read as this one); false after a located error. */
static bool store_root(const char *path, const char *text, xmlNodePtr root) {
  SrcLoc at = {.file = path, .text = text, .line = root ? (int)xml_line(root) : 0};
  if (!root || strcmp((const char *)root->name, "kasgen-measured")) {
    diag_error(at, "the root element must be <kasgen-measured>");
    return false;
  }
  xmlChar *version = xmlGetProp(root, (const xmlChar *)"version");
  bool ok = version && !strcmp((const char *)version, "1");
  if (!version)
    diag_error(at, "<kasgen-measured> lacks the attribute version (kasgen calibrate writes "
               "version=\"1\")");
  else if (!ok)
    diag_error(at, "store version '%s'; this kasgen reads version 1", (const char *)version);
  xmlFree(version);
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
  bool ok = *doc && store_root(path, text, xmlDocGetRootElement(*doc));
  if (!ok && *doc) xmlFreeDoc(*doc), *doc = NULL;
  if (!ok) free(text);
  else *text_out = text;
  return ok;
}

/* The constants of the store's <calibration> into *out; false after a located error (an
 * unknown element, a second <calibration>, a constant out of range). */
static bool constants_of(const char *path, const char *text, xmlDocPtr doc,
                         ModelCalibration *out, bool replacing) {
  bool ok = true;
  long first = 0; /* the line of the <calibration> read */
  for (xmlNodePtr n = xmlDocGetRootElement(doc)->children; ok && n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE || !strcmp((const char *)n->name, "spec")) continue;
    if (strcmp((const char *)n->name, "calibration")) { /* a typo must not pass silently */
      diag_error((SrcLoc){.file = path, .text = text, .line = (int)xml_line(n)},
                 "unknown element <%s>; a store holds <calibration> and <spec>",
                 (const char *)n->name);
      ok = false;
    } else if (first) {
      diag_error((SrcLoc){.file = path, .text = text, .line = (int)xml_line(n)},
                 "more than one <calibration> (the first at line %ld); a store holds one",
                 first);
      ok = false;
    } else {
      first = xml_line(n);
      ok = calibration_of(path, text, n, out, replacing);
    }
  }
  if (!ok) *out = (ModelCalibration){0};
  return ok;
}

/* The store's first <spec> (a run) measured on another GPU than db's, as its device says; NULL
 * when there is none (a device of "" names no GPU). */
static xmlNodePtr run_on_other_gpu(xmlDocPtr doc, const TimingDb *db) {
  for (xmlNodePtr n = xmlDocGetRootElement(doc)->children; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, "spec")) continue;
    xmlChar *device = xmlGetProp(n, (const xmlChar *)"device");
    bool other = device && *device && strcmp((const char *)device, db->dev.name);
    xmlFree(device);
    if (other) return n;
  }
  return NULL;
}

/* That run, kept for calibration_same_gpu's message: *path and *text move into *other. */
static void keep_other_gpu_run(xmlDocPtr doc, const TimingDb *db, char **path, char **text,
                               OtherGpuRun *other) {
  xmlNodePtr run = run_on_other_gpu(doc, db);
  if (!run) return;
  xmlChar *device = xmlGetProp(run, (const xmlChar *)"device");
  *other = (OtherGpuRun){.device = xstrdup((const char *)device), .store = *path,
                         .text = *text, .line = (int)xml_line(run)};
  xmlFree(device);
  *path = *text = NULL;
}

/* calibration_read, and calibration_read_to_refit where replacing. */
static bool read_calibration(const TimingDb *db, ModelCalibration *out, OtherGpuRun *other,
                             bool replacing) {
  if (out) *out = (ModelCalibration){0};
  if (other) *other = (OtherGpuRun){0};
  if (!db || db->analytic || !db->path || db_from_stdin(db->path)) return true;
  char *path = calibration_store_path(db->path), *text;
  xmlDocPtr doc;
  bool ok = read_store(path, &doc, &text);
  if (ok && doc && out) ok = constants_of(path, text, doc, out, replacing);
  if (ok && doc && other) keep_other_gpu_run(doc, db, &path, &text, other);
  if (doc) xmlFreeDoc(doc);
  free(text);
  free(path);
  return ok;
}

bool calibration_read(const TimingDb *db, ModelCalibration *out, OtherGpuRun *other) {
  return read_calibration(db, out, other, false);
}

bool calibration_read_to_refit(const TimingDb *db, ModelCalibration *out, OtherGpuRun *other) {
  return read_calibration(db, out, other, true);
}

bool calibration_same_gpu(const TimingDb *db, const OtherGpuRun *other, bool refuse) {
  if (!other->device) return true;
  bool ok = tune_same_gpu((SrcLoc){.file = other->store, .text = other->text, .line = other->line},
                          "the calibration was fitted on a run measured", other->device, db,
                          refuse);
  if (!ok)
    diag_note((SrcLoc){0}, "calibrate searches each run with the calibration stored beside the "
              "database; remove %s and calibrate again", other->store);
  return ok;
}

/* ---- the samples: measured candidates with their model terms ---------------------------- */

typedef struct {
  ModelTerms *terms; /* of each kernel */
  int nkernels;
  double launch;   /* the launch share the search adds */
  double measured; /* ns per element */
  int run;         /* index in CalibrationSamples.runs; -1 for samples given outside a run */
} Sample;

typedef struct {
  char *spec, *source; /* its spec's name, its results file */
} Run;

struct CalibrationSamples {
  Sample *s;
  int n, cap;
  StrBuf store;  /* the <spec> elements of the new store */
  StrBuf fitted; /* the specs' names */
  int nspecs;    /* runs begun (calibration_begin_spec) */
  Run *runs;     /* each of them */
};
typedef CalibrationSamples Samples;

CalibrationSamples *calibration_samples_new(void) { return xcalloc(1, sizeof(Samples)); }

void calibration_samples_free(CalibrationSamples *all) {
  if (!all) return;
  for (int i = 0; i < all->n; i++) free(all->s[i].terms);
  free(all->s);
  for (int r = 0; r < all->nspecs; r++) free(all->runs[r].spec), free(all->runs[r].source);
  free(all->runs);
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

void calibration_add_terms(CalibrationSamples *all, const ModelTerms *terms, int nkernels,
                           double launch, double measured) {
  if (all->n == all->cap) {
    all->cap = all->cap ? 2 * all->cap : 64;
    all->s = xrealloc(all->s, sizeof *all->s * (size_t)all->cap);
  }
  ModelTerms *copy = xmalloc(sizeof *copy * (size_t)(nkernels > 0 ? nkernels : 1));
  memcpy(copy, terms, sizeof *copy * (size_t)nkernels);
  all->s[all->n++] = (Sample){copy, nkernels, launch, measured, all->nspecs - 1};
}

static void add_sample(Samples *all, SearchContext *ctx, const Candidate *c, double measured) {
  ModelTerms *terms = xmalloc(sizeof *terms * (size_t)c->nkernels);
  double launch;
  if (search_candidate_terms(ctx, c, terms, &launch))
    calibration_add_terms(all, terms, c->nkernels, launch, measured);
  free(terms);
}


/* ` name="value"` (escaped) when value is present: a results file written before the calls,
 * shapes or code lacks them. */
static void store_attribute(StrBuf *sb, const char *name, const char *value) {
  if (!value) return;
  sb_printf(sb, " %s=\"", name);
  xml_text(sb, value);
  sb_putc(sb, '"');
}

void calibration_begin_spec(CalibrationSamples *all, const char *spec, const char *device,
                            const char *source) {
  all->runs = xrealloc(all->runs, sizeof *all->runs * (size_t)(all->nspecs + 1));
  all->runs[all->nspecs] = (Run){xstrdup(spec), xstrdup(source ? source : "")};
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
  sb_puts(&all->store, "    <candidate name=\"");
  xml_text(&all->store, row->name ? row->name : "");
  sb_printf(&all->store, "\" predicted-rank=\"%ld\"", row->predicted_rank);
  store_attribute(&all->store, "kernels", row->kernels ? row->kernels : "");
  store_attribute(&all->store, "calls", row->calls);
  store_attribute(&all->store, "shapes", row->shapes);
  store_attribute(&all->store, "code", row->code);
  sb_printf(&all->store, " measured-ns=\"%.6g\"/>\n", row->measured_ns);
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

/* The constants that enter the time linearly: ModelCalibration's barrier_scale, barrier_warp_ns
 * and kernel_ns, on a sample's barrier time, its barriers' warps and its kernel count. */
enum { NLINEAR = 3 };

static void set_linear(ModelCalibration *c, const double *theta) {
  c->barrier_scale = theta[0], c->barrier_warp_ns = theta[1], c->kernel_ns = theta[2];
}

/* Solves the n x n system a x = v (row stride NLINEAR) by Gaussian elimination with partial
 * pivoting; false when it is singular. */
static bool solve(double a[NLINEAR][NLINEAR], double *v, int n, double *x) {
  for (int c = 0; c < n; c++) {
    int p = c;
    for (int r = c + 1; r < n; r++)
      if (fabs(a[r][c]) > fabs(a[p][c])) p = r;
    if (!(fabs(a[p][c]) > 1e-300)) return false;
    for (int k = 0; k < n; k++) {
      double t = a[c][k];
      a[c][k] = a[p][k], a[p][k] = t;
    }
    double t = v[c];
    v[c] = v[p], v[p] = t;
    for (int r = c + 1; r < n; r++) {
      double f = a[r][c] / a[c][c];
      for (int k = c; k < n; k++) a[r][k] -= f * a[c][k];
      v[r] -= f * v[c];
    }
  }
  for (int r = n - 1; r >= 0; r--) {
    x[r] = v[r];
    for (int k = r + 1; k < n; k++) x[r] -= a[r][k] * x[k];
    x[r] /= a[r][r];
  }
  return true;
}

/* For the scales of `scales`: the linear constants >= 0 by weighted least squares of what the
 * scaled work leaves of each measured time.  The error is a quadratic in them, from the moments
 * (rr - 2 theta.v + theta' A theta); the constrained minimum is the unconstrained one of some
 * subset of them, the others 0, and with three there are eight subsets to try.  *err: the sum
 * of squared relative errors at the result. */
static ModelCalibration fit_linear(const Samples *all, ModelCalibration scales, double *err) {
  double A[NLINEAR][NLINEAR] = {{0}}, v[NLINEAR] = {0}, rr = 0;
  scales.present = true;
  for (int i = 0; i < all->n; i++) {
    const Sample *s = &all->s[i];
    double rest = s->measured - s->launch, x[NLINEAR] = {0, 0, s->nkernels};
    double w = 1 / (s->measured * s->measured);
    for (int k = 0; k < s->nkernels; k++) {
      rest -= hypot(model_calibrated_work(&s->terms[k], &scales), s->terms[k].floor) +
              s->terms[k].spill;
      x[0] += s->terms[k].barrier, x[1] += s->terms[k].barrier_warps;
    }
    for (int r = 0; r < NLINEAR; r++) {
      v[r] += w * x[r] * rest;
      for (int c = 0; c < NLINEAR; c++) A[r][c] += w * x[r] * x[c];
    }
    rr += w * rest * rest;
  }
  double best[NLINEAR] = {0}, best_e = rr;
  for (int set = 1; set < 1 << NLINEAR; set++) {
    int idx[NLINEAR], n = 0;
    for (int r = 0; r < NLINEAR; r++)
      if (set >> r & 1) idx[n++] = r;
    double a[NLINEAR][NLINEAR], b[NLINEAR], x[NLINEAR], theta[NLINEAR] = {0};
    for (int r = 0; r < n; r++) {
      b[r] = v[idx[r]];
      for (int c = 0; c < n; c++) a[r][c] = A[idx[r]][idx[c]];
    }
    if (!solve(a, b, n, x)) continue;
    bool feasible = true;
    for (int r = 0; r < n; r++) feasible &= x[r] >= 0, theta[idx[r]] = x[r];
    if (!feasible) continue;
    double e = rr;
    for (int r = 0; r < NLINEAR; r++) {
      e -= 2 * theta[r] * v[r];
      for (int c = 0; c < NLINEAR; c++) e += theta[r] * A[r][c] * theta[c];
    }
    if (e < best_e) {
      best_e = e;
      memcpy(best, theta, sizeof best);
    }
  }
  set_linear(&scales, best);
  *err = fmax(best_e, 0);
  return scales;
}

/* The nonlinear constants, each searched in its range. */
typedef struct {
  const char *name; /* as the store and calibrate's output name it */
  size_t offset;    /* in ModelCalibration */
  double lo, hi;
} Scale;
static const Scale SCALES[] = {
    {"work-scale", offsetof(ModelCalibration, work_scale), 0.5, 1.5},
    {"requests-one-scale", offsetof(ModelCalibration, requests_one_scale), 0.25, 4},
    {"requests-shared-scale", offsetof(ModelCalibration, requests_shared_scale), 0.25, 4},
    {"lines-scale", offsetof(ModelCalibration, lines_scale), 0.25, 4},
    {"requests-overlap", offsetof(ModelCalibration, requests_overlap), 1, MAX_OVERLAP},
    {"coverage-slope", offsetof(ModelCalibration, coverage_slope), -MAX_COVERAGE_SLOPE,
     MAX_COVERAGE_SLOPE},
    {"unhidden-share", offsetof(ModelCalibration, unhidden_share), 0, 1},
    {"wavefront-scale", offsetof(ModelCalibration, wavefront_scale), 0, 2},
};
enum { NSCALES = sizeof SCALES / sizeof *SCALES, SCAN_POINTS = 41, MAX_SWEEPS = 50 };

static double *scale_at(ModelCalibration *c, int i) {
  return (double *)((char *)c + SCALES[i].offset);
}

/* The best calibration with scale i at x, the others as in c (b and c solved for). */
static ModelCalibration with_scale(const Samples *all, ModelCalibration c, int i, double x,
                                   double *err) {
  *scale_at(&c, i) = x;
  return fit_linear(all, c, err);
}

/* Scale i on a scan of its range, then a golden-section search around the best point: the
 * error need not be unimodal over the whole range (max and hypot make it piecewise). */
static ModelCalibration search_scale(const Samples *all, ModelCalibration c, int i,
                                     double *best_e) {
  const Scale *r = &SCALES[i];
  double step = (r->hi - r->lo) / (SCAN_POINTS - 1), e;
  ModelCalibration best = c;
  for (int p = 0; p < SCAN_POINTS; p++) {
    ModelCalibration f = with_scale(all, c, i, r->lo + p * step, &e);
    if (e < *best_e) *best_e = e, best = f;
  }
  const double golden = 0.6180339887498949;
  double lo = fmax(r->lo, *scale_at(&best, i) - step), hi = fmin(r->hi, *scale_at(&best, i) + step);
  double x1 = hi - golden * (hi - lo), x2 = lo + golden * (hi - lo), e1, e2;
  ModelCalibration f1 = with_scale(all, c, i, x1, &e1), f2 = with_scale(all, c, i, x2, &e2);
  while (hi - lo > 1e-5) {
    if (e1 < e2) {
      hi = x2, x2 = x1, e2 = e1, f2 = f1;
      x1 = hi - golden * (hi - lo);
      f1 = with_scale(all, c, i, x1, &e1);
    } else {
      lo = x1, x1 = x2, e1 = e2, f1 = f2;
      x2 = lo + golden * (hi - lo);
      f2 = with_scale(all, c, i, x2, &e2);
    }
  }
  if (e1 < *best_e) *best_e = e1, best = f1;
  if (e2 < *best_e) *best_e = e2, best = f2;
  return best;
}

/* Coordinate descent over the constants from the uncalibrated model (every scale 1, the requests
 * summed, no slope), each step keeping the best point seen: the error never rises, and it stops
 * when a sweep gains nothing.  Eleven constants cannot fit the noise of hundreds of candidates;
 * they are the model's own parts (docs/model.md, "Calibration"). */
ModelCalibration calibration_fit(const CalibrationSamples *all, double *rms_fitted,
                                 double *rms_plain) {
  double best_e;
  ModelCalibration best = fit_linear(all,
                                     (ModelCalibration){.work_scale = 1,
                                                        .requests_one_scale = 1,
                                                        .requests_shared_scale = 1,
                                                        .lines_scale = 1,
                                                        .requests_overlap = 1},
                                     &best_e);
  for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    double before = best_e;
    for (int i = 0; i < NSCALES; i++) best = search_scale(all, best, i, &best_e);
    if (before - best_e <= 1e-12 * before) break;
  }
  ModelCalibration none = {0};
  best_e = sq_error(all, &best); /* the moments' sum, to rounding */
  *rms_fitted = all->n ? sqrt(best_e / all->n) : NAN;
  *rms_plain = all->n ? sqrt(sq_error(all, &none) / all->n) : NAN;
  best.nspecs = all->nspecs;
  best.ncandidates = all->n;
  return best;
}

/* Nearer a scan's limit than this the golden-section search (to 1e-5) has gone as far as it
 * could towards it. */
#define AT_LIMIT 1e-4

char *calibration_at_limits(const ModelCalibration *c) {
  StrBuf sb;
  sb_init(&sb);
  for (int i = 0; i < NSCALES; i++) {
    double x = *scale_at((ModelCalibration *)c, i), lo = SCALES[i].lo, hi = SCALES[i].hi;
    if (fabs(x - lo) > AT_LIMIT && fabs(x - hi) > AT_LIMIT) continue;
    sb_printf(&sb, "%s%s %.4f (scanned %g to %g)", sb.len ? ", " : "", SCALES[i].name, x, lo, hi);
  }
  if (sb.len) return sb_take(&sb);
  sb_free(&sb);
  return NULL;
}

/* ---- held out --------------------------------------------------------------------------- */

/* A run's figures: its candidates' measured span and the model's figures (tune_figures) under
 * calibration c (NULL: none). */
static TuneFigures run_figures(const Samples *all, int run, const ModelCalibration *c,
                               double *span) {
  size_t bytes = sizeof(double) * (size_t)(all->n ? all->n : 1);
  double *pred = xmalloc(bytes), *meas = xmalloc(bytes);
  int n = 0;
  double lo = INFINITY, hi = 0;
  for (int i = 0; i < all->n; i++) {
    const Sample *s = &all->s[i];
    if (s->run != run) continue;
    double t = s->launch;
    for (int k = 0; k < s->nkernels; k++) t += model_combine_terms(&s->terms[k], c);
    pred[n] = t, meas[n++] = s->measured;
    lo = fmin(lo, s->measured), hi = fmax(hi, s->measured);
  }
  TuneFigures f;
  tune_figures(pred, meas, n, &f);
  *span = n ? hi / lo - 1 : 0;
  free(pred), free(meas);
  return f;
}

/* The samples of runs whose spec is not `spec` (a view: the terms stay all's). */
static Samples others(const Samples *all, const char *spec) {
  Samples o = {.s = xmalloc(sizeof *o.s * (size_t)(all->n ? all->n : 1))};
  for (int i = 0; i < all->n; i++)
    if (all->s[i].run < 0 || strcmp(all->runs[all->s[i].run].spec, spec)) o.s[o.n++] = all->s[i];
  for (int r = 0; r < all->nspecs; r++) o.nspecs += strcmp(all->runs[r].spec, spec) != 0;
  return o;
}

HeldOutRun *calibration_held_out(const CalibrationSamples *all, int *nruns) {
  HeldOutRun *out = xcalloc((size_t)(all->nspecs ? all->nspecs : 1), sizeof *out);
  *nruns = 0;
  for (int r = 0; r < all->nspecs; r++) {
    const char *spec = all->runs[r].spec;
    bool first = true; /* fitted once per spec, at its first run */
    for (int q = 0; q < r; q++) first &= strcmp(all->runs[q].spec, spec) != 0;
    if (!first) continue;
    Samples train = others(all, spec);
    double fitted, unfitted;
    ModelCalibration c = {0};
    if (train.n >= MIN_SAMPLES) c = calibration_fit(&train, &fitted, &unfitted);
    free(train.s);
    for (int q = r; q < all->nspecs; q++) {
      if (strcmp(all->runs[q].spec, spec)) continue;
      HeldOutRun *h = &out[*nruns];
      *h = (HeldOutRun){.spec = all->runs[q].spec, .source = all->runs[q].source,
                        .fitted = c.present, .calibration = c};
      h->plain = run_figures(all, q, NULL, &h->span);
      h->held_out = run_figures(all, q, &c, &h->span);
      if (h->plain.n > 0) ++*nruns;
    }
  }
  return out;
}

/* ---- the store, written ---------------------------------------------------------------- */

/* c as the store holds it once written with calibration_write's decimals, then read. */
static ModelCalibration as_written(const ModelCalibration *c) {
  ModelCalibration w = *c;
  for (int i = 0; i < NRANGES; i++) {
    double *x = (double *)((char *)&w + RANGES[i].offset);
    char digits[64];
    snprintf(digits, sizeof digits, RANGES[i].offset == offsetof(ModelCalibration, kernel_ns)
                                        ? "%.6f" : "%.4f", *x);
    *x = strtod(digits, NULL);
  }
  return w;
}

/* Whether the fitted c may be stored at path: each constant, as written, in the range that the
 * store's reader takes (calibration_of), else an error and nothing stored.  A constant beyond
 * it is no calibration of the model's parts: a run whose fixed per-launch costs dominate (a
 * small n, which calibrate warns of) was fitted a barrier-scale of 296 on the H200. */
static bool storable(const ModelCalibration *c, const char *path) {
  ModelCalibration w = as_written(c);
  const ConstantRange *bad = out_of_range(&w);
  if (!bad) return true;
  char *why = range_text(&w, bad);
  diag_error((SrcLoc){.file = path}, "not written: the fitted %s, the range a calibration may "
             "hold; the store is left as it was", why);
  diag_note((SrcLoc){0}, "such a constant stands for no part of the model: look for runs "
            "whose time per launch is small (calibrate warns of them) and fit without them");
  free(why);
  return false;
}

bool calibration_write(const TimingDb *db, const CalibrationSamples *all,
                       const ModelCalibration *c, char **path_out) {
  if (!db->path || db_from_stdin(db->path)) {
    *path_out = NULL;
    diag_error((SrcLoc){0}, "the database was read from the standard input: there is no file "
               "to store the calibration beside (give --db FILE)");
    return false;
  }
  char *path = calibration_store_path(db->path);
  *path_out = path;
  if (!storable(c, path)) return false;
  char *temp = xasprintf("%s.kasgen-tmp", path);
  FILE *f = output_open_temp(temp);
  if (!f) {
    free(temp);
    return false;
  }
  interrupt_add_temporary(AT_FDCWD, temp); /* Ctrl-C leaves the store as it was, and no temp */
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- Written by kasgen calibrate: "
             "measured candidates of this GPU and the model's constants fitted to them "
             "(docs/model.md). -->\n<kasgen-measured version=\"1\">\n");
  fprintf(f, "  <calibration work-scale=\"%.4f\" requests-one-scale=\"%.4f\" "
             "requests-shared-scale=\"%.4f\" lines-scale=\"%.4f\" requests-overlap=\"%.4f\" "
             "coverage-slope=\"%.4f\" unhidden-share=\"%.4f\" wavefront-scale=\"%.4f\" "
             "barrier-scale=\"%.4f\" barrier-warp-ns=\"%.4f\" kernel-ns=\"%.6f\" specs=\"%d\" "
             "candidates=\"%d\" fitted-on=\"",
          c->work_scale, c->requests_one_scale, c->requests_shared_scale, c->lines_scale,
          c->requests_overlap, c->coverage_slope, c->unhidden_share, c->wavefront_scale,
          c->barrier_scale, c->barrier_warp_ns, c->kernel_ns, all->nspecs, all->n);
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
  interrupt_drop_temporary(AT_FDCWD, temp);
  free(temp);
  return ok;
}

