/*
 * timingdb.c — the per-GPU timing database (docs/design.md §8, schema in docs/timingdb.md).
 *
 * The database is XML written by the micro-benchmarks on a GPU machine; kasgen reads it here with
 * libxml2 (as a stream: no tree) to predict for that GPU without running on it.  Every error names file:line.  Lookups
 * interpolate a routine's nanoseconds per element linearly in extra shared memory and in E,
 * clamped to the measured range.  With no database, timingdb_analytic() gives the built-in H100
 * SXM limits and no routine timings (the model then uses its analytic form).
 *
 * A database is data that users copy between machines, so the loader trusts nothing in it: the XML
 * goes through xml_read_untrusted (no DTD, no entities), every device limit must lie in a range
 * that real GPUs span (a warp of 2^31 threads would overflow the model's arithmetic, a timing of
 * 1e300 ns would make every plan "unlaunchable" and blame the spec), and the routines are sorted
 * once so that duplicates are found, and lookups done, in O(log n).
 */
#include "kasgen.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_DB_NAME "nvidia-h100-80gb-hbm3.xml"

/* Parsing state: where we are, so that every error can say file:line. */
typedef struct {
  const char *path;
  const char *text;
  bool failed;
  int nerrors;       /* reported so far; parsing stops after MAX_DB_ERRORS */
  TimingDb *db;      /* being built */
  int *lines;        /* per routine of db: its line, for duplicates */
  int lines_cap;
  int points_cap;    /* of the routine last started */
  int *point_lines;  /* of its points, for duplicates (points_cap of them) */
  const char *parent; /* the name of the entry (depth 1) being read, "" between entries */
  int root_line;
  int ndevices, ngenerated;
} DbParser;

enum { MAX_DB_ERRORS = 50 };

static void db_error(DbParser *p, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void db_error(DbParser *p, int line, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  p->failed = true;
  if (++p->nerrors > MAX_DB_ERRORS) return;
  diag_error((SrcLoc){.file = p->path, .text = p->text, .line = line}, "%s", msg);
  if (p->nerrors == MAX_DB_ERRORS)
    diag_note((SrcLoc){.file = p->path}, "too many errors; the rest are not shown");
}

/* ---- attributes ------------------------------------------------------------------------- */

/* Returns the attribute's value or NULL after "missing attribute" when required. */
static const char *attr(DbParser *p, const XmlElement *el, const char *name, bool required) {
  const char *v = xml_attr(el, name);
  if (!v && required) db_error(p, el->line, "<%s> lacks the attribute '%s'", el->name, name);
  return v;
}

/* The same, malloc'ed: for the strings a database keeps. */
static char *get_attr(DbParser *p, const XmlElement *el, const char *name, bool required) {
  const char *v = attr(p, el, name, required);
  return v ? xstrdup(v) : NULL;
}

/* A finite, non-negative plain decimal (parse_decimal). */
static bool attr_double(DbParser *p, const XmlElement *el, const char *name, bool required,
                        double *out) {
  const char *s = attr(p, el, name, required);
  if (!s) return !required;
  double v = 0;
  bool ok = parse_decimal(s, &v) && v >= 0;
  if (!ok)
    db_error(p, el->line, "attribute '%s' must be a finite non-negative number, not '%s' ("
             PLAIN_DECIMAL ")", name, s);
  else
    *out = v;
  return ok;
}

/* An integer in [min, max]; the message gives the range, which real GPUs span comfortably. */
static bool attr_long(DbParser *p, const XmlElement *el, const char *name, bool required, long min,
                      long max, long *out) {
  const char *s = attr(p, el, name, required);
  if (!s) return !required;
  long v = 0;
  bool ok = parse_decimal_long(s, &v) && v >= min && v <= max;
  if (!ok)
    db_error(p, el->line, "attribute '%s' must be an integer in [%ld, %ld], not '%s'", name, min,
             max, s);
  else
    *out = v;
  return ok;
}

static void attr_int(DbParser *p, const XmlElement *el, const char *name, long min, long max,
                     int *out) {
  long v = 0;
  if (attr_long(p, el, name, true, min, max, &v)) *out = (int)v;
}

/* A number in [min, max] (both finite). */
static void attr_bounded(DbParser *p, const XmlElement *el, const char *name, bool required, double min,
                         double max, double *out) {
  double v = *out;
  if (!attr_double(p, el, name, required, &v)) return;
  if (v < min || v > max)
    db_error(p, el->line, "attribute '%s' = %g is outside [%g, %g]: not a real GPU's figure", name, v,
             min, max);
  else
    *out = v;
}

/* ---- elements --------------------------------------------------------------------------- */

/* Plausible ranges of the device limits: generous around every CUDA GPU so far, tight enough
 * that the model's integer arithmetic (threads x warps x registers) cannot overflow. */
#define MAX_SMS 100000L
#define MAX_SMEM_BYTES (1L << 30)
#define MAX_REGS (1L << 24)
#define MAX_THREADS_PER_SM (1L << 16)
#define MAX_BLOCKS_PER_SM 4096L
#define MAX_WARP 1024L
#define MAX_L2_BYTES (1L << 40)
#define MIN_COPY_GBS 1.0          /* 1 GB/s: below every GPU's (a smaller one made every plan
                                     unlaunchable, blamed on the spec, not the database) */
#define MAX_COPY_GBS 1e6          /* 1 PB/s */
#define MAX_LAUNCH_NS 1e9         /* one second per launch */
#define MAX_NS_PER_ELEMENT 1e6    /* a millisecond per element and routine */

/* <device name slug sm-count ... copy-gbs launch-overhead-ns/> */
static void parse_device(DbParser *p, const XmlElement *el, DeviceLimits *d) {
  d->name = get_attr(p, el, "name", true);
  d->slug = get_attr(p, el, "slug", true);
  attr_int(p, el, "sm-count", 1, MAX_SMS, &d->sm_count);
  attr_int(p, el, "smem-per-sm", 1, MAX_SMEM_BYTES, &d->smem_per_sm);
  attr_int(p, el, "smem-per-block-optin", 0, MAX_SMEM_BYTES, &d->smem_per_block_optin);
  attr_int(p, el, "regs-per-sm", 1, MAX_REGS, &d->regs_per_sm);
  attr_int(p, el, "regs-per-block", 0, MAX_REGS, &d->regs_per_block);
  attr_int(p, el, "max-threads-per-sm", 1, MAX_THREADS_PER_SM, &d->max_threads_per_sm);
  attr_int(p, el, "max-blocks-per-sm", 1, MAX_BLOCKS_PER_SM, &d->max_blocks_per_sm);
  attr_int(p, el, "max-threads-per-block", 1, MAX_THREADS_PER_SM, &d->max_threads_per_block);
  attr_int(p, el, "warp-size", 1, MAX_WARP, &d->warp_size);
  attr_long(p, el, "l2-bytes", true, 0, MAX_L2_BYTES, &d->l2_bytes);
  d->copy_gbs = 0;
  attr_bounded(p, el, "copy-gbs", true, MIN_COPY_GBS, MAX_COPY_GBS, &d->copy_gbs);
  d->launch_overhead_ns = 2500;
  attr_bounded(p, el, "launch-overhead-ns", false, 0, MAX_LAUNCH_NS, &d->launch_overhead_ns);
}

/* <generated date nvcc kasgen elements/>: provenance, shown to the user. */
static void parse_generated(DbParser *p, const XmlElement *el, TimingDb *db) {
  db->date = get_attr(p, el, "date", true);
  db->nvcc_version = get_attr(p, el, "nvcc", true);
}

static bool parse_kind(const char *s, RoutineKind *out) {
  if (!strcmp(s, "load")) *out = ROUTINE_LOAD;
  else if (!strcmp(s, "compute")) *out = ROUTINE_COMPUTE;
  else if (!strcmp(s, "save")) *out = ROUTINE_SAVE;
  else return false;
  return true;
}

static bool parse_placement(const char *s, Placement *out) {
  if (!strcmp(s, "shared")) *out = PLACE_SHARED;
  else if (!strcmp(s, "register")) *out = PLACE_REGISTER;
  else return false;
  return true;
}

/* precision="single|double", layout="element|component", width="W" (version 2; absent: what
 * version 1 measured, single precision element-major at W = 4, or the precision's 16 bytes). */
static void parse_routine_target(DbParser *p, const XmlElement *el, RoutineTiming *r) {
  const char *prec = attr(p, el, "precision", false);
  const char *layout = attr(p, el, "layout", false);
  r->precision = PREC_SINGLE;
  r->layout = LAYOUT_ELEMENT;
  if (prec && !strcmp(prec, "double")) r->precision = PREC_DOUBLE;
  else if (prec && strcmp(prec, "single"))
    db_error(p, el->line, "unknown precision '%s' (expected single or double)", prec);
  if (layout && !strcmp(layout, "component")) r->layout = LAYOUT_COMPONENT;
  else if (layout && strcmp(layout, "element"))
    db_error(p, el->line, "unknown layout '%s' (expected element or component)", layout);
  long width = target_vector_width(r->precision);
  attr_long(p, el, "width", false, 1, 16, &width);
  r->width = (int)width;
}

/* <point e extra-smem ns/> */
static void parse_point(DbParser *p, const XmlElement *el, TimingPoint *pt) {
  long e = 0, smem = 0;
  attr_long(p, el, "e", true, 1, KAS_MAX_THREADS * 64L, &e);
  attr_long(p, el, "extra-smem", true, 0, MAX_SMEM_BYTES, &smem);
  attr_bounded(p, el, "ns", true, 0, MAX_NS_PER_ELEMENT, &pt->ns);
  pt->e = (int)e;
  pt->extra_smem = (int)smem;
}

static const char *kind_name(RoutineKind k) {
  return k == ROUTINE_LOAD ? "load" : k == ROUTINE_SAVE ? "save" : "compute";
}

static const char *placement_name(Placement pl) {
  return pl == PLACE_REGISTER ? "register" : "shared";
}

/* The order of routines in a loaded database: by implementation, kind, index, placement,
 * precision, layout, width. */
static int routine_cmp(const RoutineTiming *a, const RoutineTiming *b) {
  int c = strcmp(a->impl, b->impl);
  if (c) return c;
  const int x[] = {a->kind, a->index, a->placement, a->precision, a->layout, a->width};
  const int y[] = {b->kind, b->index, b->placement, b->precision, b->layout, b->width};
  for (int k = 0; k < 6; k++)
    if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
  return 0;
}

static int cmp_routines(const void *a, const void *b) { return routine_cmp(a, b); }

/* <routine impl kind index placement precision? layout? width?>: appended to the database at
 * once (so that it is freed with it whatever follows); its points come as the stream goes on. */
static void start_routine(DbParser *p, const XmlElement *el, TimingDb *db) {
  RoutineTiming r = {0};
  r.impl = get_attr(p, el, "impl", true);
  const char *kind = attr(p, el, "kind", true);
  const char *place = attr(p, el, "placement", true);
  long index = 0;
  attr_long(p, el, "index", true, 0, 1000, &index);
  r.index = (int)index;
  if (kind && !parse_kind(kind, &r.kind))
    db_error(p, el->line, "unknown routine kind '%s' (expected load, compute or save)", kind);
  if (place && !parse_placement(place, &r.placement))
    db_error(p, el->line, "unknown placement '%s' (expected shared or register)", place);
  parse_routine_target(p, el, &r);
  if (!r.impl) r.impl = xstrdup(""); /* already reported; keeps the sort total */
  if (db->nroutines == p->lines_cap) {
    p->lines_cap = p->lines_cap ? 2 * p->lines_cap : 64;
    db->routines = xrealloc(db->routines, sizeof *db->routines * (size_t)p->lines_cap);
    p->lines = xrealloc(p->lines, sizeof *p->lines * (size_t)p->lines_cap);
  }
  p->lines[db->nroutines] = el->line;
  db->routines[db->nroutines++] = r;
  p->points_cap = 0;
}

/* <point e extra-smem ns/> of the routine last started.  A second point of the same E and extra
 * shared memory is an error at its line, as a second routine of the same key is: the lookup
 * would take the first and ignore the other's time (a routine has tens of points, so the scan
 * of the earlier ones is cheap). */
static void add_point(DbParser *p, const XmlElement *el, RoutineTiming *r) {
  if (r->npoints == p->points_cap) {
    p->points_cap = p->points_cap ? 2 * p->points_cap : 8;
    r->points = xrealloc(r->points, sizeof *r->points * (size_t)p->points_cap);
    p->point_lines = xrealloc(p->point_lines, sizeof *p->point_lines * (size_t)p->points_cap);
  }
  TimingPoint *pt = &r->points[r->npoints];
  *pt = (TimingPoint){0};
  int errors = p->nerrors;
  parse_point(p, el, pt);
  p->point_lines[r->npoints++] = el->line;
  for (int i = 0; i + 1 < r->npoints && p->nerrors == errors; i++)
    if (r->points[i].e == pt->e && r->points[i].extra_smem == pt->extra_smem)
      db_error(p, el->line, "duplicate point (e %d, extra-smem %d) of routine %s; first at line "
               "%d", pt->e, pt->extra_smem, r->impl, p->point_lines[i]);
}

/* </routine> */
static void end_routine(DbParser *p, const TimingDb *db) {
  const RoutineTiming *r = &db->routines[db->nroutines - 1];
  if (r->npoints == 0 && !p->failed)
    db_error(p, p->lines[db->nroutines - 1], "<routine impl=\"%s\"> has no <point>", r->impl);
}

/* A routine with the line it was read from, for sorting and for naming both duplicates. */
typedef struct {
  RoutineTiming r;
  int line;
} LinedRoutine;

static int cmp_lined(const void *a, const void *b) {
  const LinedRoutine *x = a, *y = b;
  int c = routine_cmp(&x->r, &y->r);
  return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* Sorts db->routines for timingdb_find's binary search and reports every duplicate at its second
 * occurrence: O(n log n) for n routines. */
static void sort_routines(DbParser *p, TimingDb *db) {
  int n = db->nroutines;
  LinedRoutine *all = xmalloc(sizeof *all * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) all[i] = (LinedRoutine){db->routines[i], p->lines[i]};
  qsort(all, (size_t)n, sizeof *all, cmp_lined);
  for (int k = 0; k < n; k++) {
    db->routines[k] = all[k].r;
    if (k > 0 && routine_cmp(&all[k].r, &all[k - 1].r) == 0) {
      const RoutineTiming *r = &all[k].r;
      char *what = xasprintf("%s %s %d %s, %s, %s, width %d", r->impl, kind_name(r->kind),
                             r->index, placement_name(r->placement),
                             target_precision_name(r->precision), target_layout_name(r->layout),
                             r->width);
      SrcLoc loc = {.file = p->path, .text = p->text, .line = all[k].line};
      p->failed = true;
      if (++p->nerrors <= MAX_DB_ERRORS)
        diag_error(loc, "duplicate routine (%s; first at line %d)", what, all[k - 1].line);
      free(what);
    }
  }
  free(all);
}

/* ---- the lookup index -------------------------------------------------------------------- */

static int cmp_point_e_smem(const void *a, const void *b) {
  const TimingPoint *x = a, *y = b;
  if (x->e != y->e) return x->e < y->e ? -1 : 1;
  return (x->extra_smem > y->extra_smem) - (x->extra_smem < y->extra_smem);
}

/* The points by (e, extra_smem) with ties in file order (an index sort keeps the order that
 * qsort, not being stable, would not), and the distinct E values. */
static void index_routine(RoutineTiming *r) {
  int n = r->npoints;
  int *idx = xmalloc(sizeof(int) * (size_t)n);
  TimingPoint *tagged = xmalloc(sizeof *tagged * (size_t)n);
  for (int i = 0; i < n; i++) idx[i] = i;
  /* insertion sort by (e, smem, file position): a routine has tens of points */
  for (int i = 1; i < n; i++) {
    int k = idx[i], j = i;
    while (j > 0 && cmp_point_e_smem(&r->points[idx[j - 1]], &r->points[k]) > 0) {
      idx[j] = idx[j - 1];
      j--;
    }
    idx[j] = k;
  }
  for (int i = 0; i < n; i++) tagged[i] = r->points[idx[i]];
  free(idx);
  r->by_e = tagged;
  r->e_values = xmalloc(sizeof(int) * (size_t)(n + 1));
  r->e_start = xmalloc(sizeof(int) * (size_t)(n + 1));
  r->ne = 0;
  r->min_ns = INFINITY;
  for (int i = 0; i < n; i++) {
    if (i == 0 || tagged[i].e != tagged[i - 1].e) {
      r->e_values[r->ne] = tagged[i].e;
      r->e_start[r->ne++] = i;
    }
    if (tagged[i].ns < r->min_ns) r->min_ns = tagged[i].ns;
  }
  r->e_start[r->ne] = n;
}

static const TimingDb *min_ns_db; /* qsort's context: the database being indexed */
static int cmp_min_ns(const void *a, const void *b) {
  double x = min_ns_db->routines[*(const int *)a].min_ns;
  double y = min_ns_db->routines[*(const int *)b].min_ns;
  if (x != y) return x < y ? -1 : 1;
  return *(const int *)a - *(const int *)b;
}

/* Every routine's index, and the routines by their least time (the grid floor of model.c scans
 * them in that order and stops at the first that cannot beat the best found). */
static void index_routines(TimingDb *db) {
  for (int i = 0; i < db->nroutines; i++) index_routine(&db->routines[i]);
  db->by_min_ns = xmalloc(sizeof(int) * (size_t)(db->nroutines ? db->nroutines : 1));
  for (int i = 0; i < db->nroutines; i++) db->by_min_ns[i] = i;
  min_ns_db = db;
  qsort(db->by_min_ns, (size_t)db->nroutines, sizeof(int), cmp_min_ns);
  min_ns_db = NULL;
}

/* kasgen-timings := <kasgen-timings version="1|2"> device generated? routine* </kasgen-timings> */
static void start_root(DbParser *p, const XmlElement *el) {
  p->root_line = el->line;
  if (strcmp(el->name, "kasgen-timings")) {
    db_error(p, el->line, "root element must be <kasgen-timings>, not <%s>", el->name);
    return;
  }
  const char *version = attr(p, el, "version", true);
  if (version && strcmp(version, "1") && strcmp(version, "2"))
    db_error(p, el->line,
             "unsupported database version '%s' (this kasgen reads versions 1 and 2)", version);
}

/* An element inside the root. */
static void start_entry(DbParser *p, const XmlElement *el) {
  p->parent = el->name;
  if (!strcmp(el->name, "device")) {
    if (p->ndevices++) db_error(p, el->line, "more than one <device>");
    else parse_device(p, el, &p->db->dev);
  } else if (!strcmp(el->name, "generated")) {
    /* counted, not db->date: a first one without a date was read twice, and leaked */
    if (p->ngenerated++) db_error(p, el->line, "more than one <generated>");
    else parse_generated(p, el, p->db);
  } else if (!strcmp(el->name, "routine")) {
    start_routine(p, el, p->db);
  } else {
    db_error(p, el->line, "unknown element <%s> in <kasgen-timings>", el->name);
  }
}

/* The stream's start tags: the root, its entries, and a routine's points (what lies inside
 * other entries is not read). */
static bool db_start(void *ctx, const XmlElement *el) {
  DbParser *p = ctx;
  if (el->depth == 0) start_root(p, el);
  else if (el->depth == 1) start_entry(p, el);
  else if (el->depth == 2 && !strcmp(p->parent, "routine")) {
    if (strcmp(el->name, "point"))
      db_error(p, el->line, "unexpected <%s> inside <routine> (expected <point>)", el->name);
    else
      add_point(p, el, &p->db->routines[p->db->nroutines - 1]);
  }
  /* a wrong root or version: nothing after it means anything */
  return p->nerrors < MAX_DB_ERRORS && !(el->depth == 0 && p->failed);
}

static bool db_end(void *ctx, const XmlElement *el) {
  DbParser *p = ctx;
  if (el->depth == 1 && !strcmp(el->name, "routine")) end_routine(p, p->db);
  if (el->depth == 1) p->parent = "";
  if (el->depth == 0 && p->ndevices == 0)
    db_error(p, p->root_line, "<kasgen-timings> has no <device>");
  return p->nerrors < MAX_DB_ERRORS;
}

TimingDb *timingdb_parse(const char *path, const char *text, size_t len) {
  TimingDb *db = xcalloc(1, sizeof *db);
  db->path = xstrdup(path);
  DbParser p = {.path = path, .text = text, .db = db, .parent = ""};
  XmlHandler handler = {.ctx = &p, .start = db_start, .end = db_end};
  bool read = xml_stream_untrusted(path, text, len, &handler);
  if (read && !p.failed) sort_routines(&p, db);
  if (read && !p.failed) index_routines(db);
  free(p.lines);
  free(p.point_lines);
  if (!read || p.failed) {
    timingdb_free(db);
    return NULL;
  }
  return db;
}

TimingDb *timingdb_load(const char *path) {
  size_t len;
  char *text = read_text_file(path, &len);
  if (!text) return NULL;
  TimingDb *db = timingdb_parse(input_name(path), text, len);
  free(text);
  return db;
}

TimingDb *timingdb_analytic(void) {
  TimingDb *db = xcalloc(1, sizeof *db);
  db->analytic = true;
  db->path = xstrdup("(analytic model)");
  db->dev = (DeviceLimits){
      .name = xstrdup("NVIDIA H100 SXM (built-in analytic limits)"),
      .slug = xstrdup("nvidia-h100-80gb-hbm3"),
      .sm_count = 132,
      .smem_per_sm = 228 * 1024,
      .smem_per_block_optin = 227 * 1024,
      .regs_per_sm = 65536,
      .regs_per_block = 65536,
      .max_threads_per_sm = 2048,
      .max_blocks_per_sm = 32,
      .max_threads_per_block = 1024,
      .warp_size = 32,
      .l2_bytes = 50L * 1024 * 1024,
      .copy_gbs = 3000.0,
      .launch_overhead_ns = 2500.0,
  };
  return db;
}

void timingdb_free(TimingDb *db) {
  if (!db) return;
  for (int i = 0; i < db->nroutines; i++) {
    free(db->routines[i].impl);
    free(db->routines[i].points);
    free(db->routines[i].by_e);
    free(db->routines[i].e_values);
    free(db->routines[i].e_start);
  }
  free(db->routines);
  free(db->by_min_ns);
  free(db->dev.name);
  free(db->dev.slug);
  free(db->date);
  free(db->nvcc_version);
  free(db->path);
  other_gpu_run_free(&db->calib_other_gpu);
  free(db);
}

void other_gpu_run_free(OtherGpuRun *run) {
  free(run->device);
  free(run->store);
  free(run->text);
  *run = (OtherGpuRun){0};
}

/* ---- lookup ----------------------------------------------------------------------------- */

static double lerp(double x0, double y0, double x1, double y1, double x) {
  if (x1 == x0) return y0;
  return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

/* ns at extra shared memory m among the points with elements-per-block e (clamped). */
static double interpolate_smem(const RoutineTiming *r, int e, int m) {
  const TimingPoint *lo = NULL, *hi = NULL; /* nearest at or below m, at or above m */
  const TimingPoint *min = NULL, *max = NULL;
  for (int i = 0; i < r->npoints; i++) {
    const TimingPoint *pt = &r->points[i];
    if (pt->e != e) continue;
    if (!min || pt->extra_smem < min->extra_smem) min = pt;
    if (!max || pt->extra_smem > max->extra_smem) max = pt;
    if (pt->extra_smem <= m && (!lo || pt->extra_smem > lo->extra_smem)) lo = pt;
    if (pt->extra_smem >= m && (!hi || pt->extra_smem < hi->extra_smem)) hi = pt;
  }
  if (!lo) return min->ns;
  if (!hi) return max->ns;
  return lerp(lo->extra_smem, lo->ns, hi->extra_smem, hi->ns, m);
}

/* interpolate_smem over the index: the points [from, to) of one E, sorted by extra_smem with
 * ties in file order.  The point picked for each role is the one the scan above picks: the first
 * in file order among those with the same extra_smem. */
static double interpolate_indexed(const TimingPoint *pts, int from, int to, int m) {
  int lo = from, hi = to; /* first point with extra_smem > m */
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (pts[mid].extra_smem <= m) lo = mid + 1;
    else hi = mid;
  }
  int above = lo; /* pts[above] is the first with smem > m (or to) */
  if (above == from) return pts[from].ns; /* nothing at or below m: the smallest smem */
  int below = above - 1; /* the largest smem <= m: the first point of its group */
  while (below > from && pts[below - 1].extra_smem == pts[below].extra_smem) below--;
  if (pts[below].extra_smem == m) return pts[below].ns; /* a point at m: lerp would give it */
  if (above == to) { /* nothing at or above m: the largest smem, first of its group */
    int last = to - 1;
    while (last > from && pts[last - 1].extra_smem == pts[last].extra_smem) last--;
    return pts[last].ns;
  }
  return lerp(pts[below].extra_smem, pts[below].ns, pts[above].extra_smem, pts[above].ns, m);
}

/* timingdb_routine_ns through the loader's index: binary searches instead of scans. */
static double routine_ns_indexed(const RoutineTiming *r, int e, int extra_smem) {
  int lo = 0, hi = r->ne; /* first E value > e */
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (r->e_values[mid] <= e) lo = mid + 1;
    else hi = mid;
  }
  int klo, khi;
  if (lo == 0) klo = khi = 0;                              /* every E above: the smallest */
  else if (r->e_values[lo - 1] == e) klo = khi = lo - 1;   /* measured at e */
  else if (lo == r->ne) klo = khi = r->ne - 1;             /* every E below: the largest */
  else klo = lo - 1, khi = lo;
  double ylo = interpolate_indexed(r->by_e, r->e_start[klo], r->e_start[klo + 1], extra_smem);
  double yhi = klo == khi ? ylo
                          : interpolate_indexed(r->by_e, r->e_start[khi], r->e_start[khi + 1],
                                                extra_smem);
  return lerp(r->e_values[klo], ylo, r->e_values[khi], yhi, e);
}

double timingdb_routine_ns(const RoutineTiming *r, int e, int extra_smem) {
  if (r->by_e) return routine_ns_indexed(r, e, extra_smem);
  int elo = -1, ehi = -1, emin = INT_MAX, emax = -1;
  for (int i = 0; i < r->npoints; i++) {
    int pe = r->points[i].e;
    if (pe < emin) emin = pe;
    if (pe > emax) emax = pe;
    if (pe <= e && pe > elo) elo = pe;
    if (pe >= e && (ehi < 0 || pe < ehi)) ehi = pe;
  }
  if (elo < 0) elo = ehi = emin;
  if (ehi < 0) elo = ehi = emax;
  double ylo = interpolate_smem(r, elo, extra_smem);
  double yhi = interpolate_smem(r, ehi, extra_smem);
  return lerp(elo, ylo, ehi, yhi, e);
}

const RoutineTiming *timingdb_find(const TimingDb *db, const RoutineTiming *key) {
  if (!db || db->nroutines == 0) return NULL;
  const RoutineTiming *r = bsearch(key, db->routines, (size_t)db->nroutines,
                                   sizeof *db->routines, cmp_routines);
  return r && r->npoints > 0 ? r : NULL;
}

bool timingdb_lookup(const TimingDb *db, const RoutineTiming *key, int e, int extra_smem,
                     double *ns_out) {
  const RoutineTiming *r = timingdb_find(db, key);
  if (!r) return false;
  *ns_out = timingdb_routine_ns(r, e, extra_smem);
  return true;
}

bool timingdb_has(const TimingDb *db, Precision precision, Layout layout, int width) {
  for (int i = 0; db && i < db->nroutines; i++) {
    const RoutineTiming *r = &db->routines[i];
    if (r->precision == precision && r->layout == layout && (!width || r->width == width))
      return true;
  }
  return false;
}

/* ---- default location ------------------------------------------------------------------- */

static bool file_exists(const char *path) { return access(path, R_OK) == 0; }

char *timingdb_slug(const char *gpu_name) {
  StrBuf sb;
  sb_init(&sb);
  bool dash = false;
  for (const char *s = gpu_name; *s; s++) {
    if (isalnum((unsigned char)*s)) sb_putc(&sb, (char)tolower((unsigned char)*s)), dash = false;
    else if (!dash && sb.len) sb_putc(&sb, '-'), dash = true;
  }
  if (sb.len && dash) sb.data[--sb.len] = '\0';
  return sb_take(&sb);
}

char *timingdb_path_for_gpu(const char *default_path, const char *gpu_name) {
  char *dir = path_folder(default_path), *slug = timingdb_slug(gpu_name);
  char *p = *slug ? xasprintf("%s/%s.xml", dir, slug) : NULL;
  free(dir), free(slug);
  if (p && !file_exists(p)) free(p), p = NULL;
  return p;
}

char *timingdb_default_path(const char *argv0) {
  static const char *const beside[] = {"benchmarks/" DEFAULT_DB_NAME,
                                       "../benchmarks/" DEFAULT_DB_NAME,
                                       "../share/kasgen/benchmarks/" DEFAULT_DB_NAME};
  char *found = find_beside_binary(argv0, beside, sizeof beside / sizeof *beside, file_exists);
  if (!found && file_exists("benchmarks/" DEFAULT_DB_NAME))
    found = xstrdup("benchmarks/" DEFAULT_DB_NAME);
  return found;
}
