/*
 * timingdb.c — the per-GPU timing database (docs/design.md §8, schema in docs/timingdb.md).
 *
 * The database is XML written by the micro-benchmarks on a GPU machine; kasgen reads it here with
 * libxml2 to predict for that GPU without running on it.  Every error names file:line.  Lookups
 * interpolate a routine's nanoseconds per element linearly in extra shared memory and in E,
 * clamped to the measured range.  With no database, timingdb_analytic() gives the built-in H100
 * SXM limits and no routine timings (the model then uses its analytic form).
 */
#include "kasgen.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <errno.h>
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
} DbParser;

static SrcLoc node_loc(DbParser *p, xmlNodePtr node) {
  return (SrcLoc){.file = p->path, .text = p->text, .line = node ? (int)xmlGetLineNo(node) : 0};
}

static void db_error(DbParser *p, xmlNodePtr node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void db_error(DbParser *p, xmlNodePtr node, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_error(node_loc(p, node), "%s", msg);
  p->failed = true;
}

/* ---- attributes ------------------------------------------------------------------------- */

/* Returns the attribute's value (malloc'ed) or NULL after "missing attribute" when required. */
static char *get_attr(DbParser *p, xmlNodePtr node, const char *name, bool required) {
  xmlChar *v = xmlGetProp(node, (const xmlChar *)name);
  if (!v) {
    if (required)
      db_error(p, node, "<%s> lacks the attribute '%s'", (const char *)node->name, name);
    return NULL;
  }
  char *s = xstrdup((const char *)v);
  xmlFree(v);
  return s;
}

/* A finite, non-negative number. */
static bool attr_double(DbParser *p, xmlNodePtr node, const char *name, bool required,
                        double *out) {
  char *s = get_attr(p, node, name, required);
  if (!s) return !required;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  bool ok = end != s && *end == '\0' && errno == 0 && isfinite(v) && v >= 0;
  if (!ok)
    db_error(p, node, "attribute '%s' must be a finite non-negative number, not '%s'", name, s);
  else
    *out = v;
  free(s);
  return ok;
}

/* A non-negative integer that fits an int (or a long when wide). */
static bool attr_long(DbParser *p, xmlNodePtr node, const char *name, bool required, long max,
                      long *out) {
  char *s = get_attr(p, node, name, required);
  if (!s) return !required;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  bool ok = end != s && *end == '\0' && errno == 0 && v >= 0 && v <= max;
  if (!ok)
    db_error(p, node, "attribute '%s' must be a non-negative integer in range, not '%s'", name,
             s);
  else
    *out = v;
  free(s);
  return ok;
}

static void attr_int(DbParser *p, xmlNodePtr node, const char *name, int *out) {
  long v = 0;
  if (attr_long(p, node, name, true, INT_MAX, &v)) *out = (int)v;
}

/* ---- elements --------------------------------------------------------------------------- */

static bool is_element(xmlNodePtr n, const char *name) {
  return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

/* <device name slug sm-count ... copy-gbs launch-overhead-ns/> */
static void parse_device(DbParser *p, xmlNodePtr node, DeviceLimits *d) {
  d->name = get_attr(p, node, "name", true);
  d->slug = get_attr(p, node, "slug", true);
  attr_int(p, node, "sm-count", &d->sm_count);
  attr_int(p, node, "smem-per-sm", &d->smem_per_sm);
  attr_int(p, node, "smem-per-block-optin", &d->smem_per_block_optin);
  attr_int(p, node, "regs-per-sm", &d->regs_per_sm);
  attr_int(p, node, "regs-per-block", &d->regs_per_block);
  attr_int(p, node, "max-threads-per-sm", &d->max_threads_per_sm);
  attr_int(p, node, "max-blocks-per-sm", &d->max_blocks_per_sm);
  attr_int(p, node, "max-threads-per-block", &d->max_threads_per_block);
  attr_int(p, node, "warp-size", &d->warp_size);
  attr_long(p, node, "l2-bytes", true, LONG_MAX, &d->l2_bytes);
  attr_double(p, node, "copy-gbs", true, &d->copy_gbs);
  d->launch_overhead_ns = 2500;
  attr_double(p, node, "launch-overhead-ns", false, &d->launch_overhead_ns);
  if (p->failed) return;
  /* Zeros would make the model divide by zero; they are never a real device. */
  if (d->sm_count == 0 || d->max_threads_per_sm == 0 || d->max_blocks_per_sm == 0 ||
      d->warp_size == 0 || d->copy_gbs <= 0 || d->regs_per_sm == 0 || d->smem_per_sm == 0)
    db_error(p, node, "<device>: sm-count, smem-per-sm, regs-per-sm, max-threads-per-sm, "
             "max-blocks-per-sm, warp-size and copy-gbs must be positive");
}

/* <generated date nvcc kasgen elements/>: provenance, shown to the user. */
static void parse_generated(DbParser *p, xmlNodePtr node, TimingDb *db) {
  db->date = get_attr(p, node, "date", true);
  db->nvcc_version = get_attr(p, node, "nvcc", true);
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

/* <point e extra-smem ns/> */
static void parse_point(DbParser *p, xmlNodePtr node, TimingPoint *pt) {
  long e = 0, smem = 0;
  if (attr_long(p, node, "e", true, KAS_MAX_THREADS * 64L, &e) && e == 0)
    db_error(p, node, "attribute 'e' must be positive");
  attr_long(p, node, "extra-smem", true, INT_MAX, &smem);
  attr_double(p, node, "ns", true, &pt->ns);
  pt->e = (int)e;
  pt->extra_smem = (int)smem;
}

static const char *kind_name(RoutineKind k) {
  return k == ROUTINE_LOAD ? "load" : k == ROUTINE_SAVE ? "save" : "compute";
}

static const char *placement_name(Placement pl) {
  return pl == PLACE_REGISTER ? "register" : "shared";
}

static bool same_routine(const RoutineTiming *a, const RoutineTiming *b) {
  return !strcmp(a->impl, b->impl) && a->kind == b->kind && a->index == b->index &&
         a->placement == b->placement;
}

/* <routine impl kind index placement> <point/>+ </routine> */
static void parse_routine(DbParser *p, xmlNodePtr node, TimingDb *db) {
  RoutineTiming r = {0};
  r.impl = get_attr(p, node, "impl", true);
  char *kind = get_attr(p, node, "kind", true);
  char *place = get_attr(p, node, "placement", true);
  long index = 0;
  attr_long(p, node, "index", true, 1000, &index);
  r.index = (int)index;
  if (kind && !parse_kind(kind, &r.kind))
    db_error(p, node, "unknown routine kind '%s' (expected load, compute or save)", kind);
  if (place && !parse_placement(place, &r.placement))
    db_error(p, node, "unknown placement '%s' (expected shared or register)", place);
  free(kind);
  free(place);
  for (xmlNodePtr c = node->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (!is_element(c, "point")) {
      db_error(p, c, "unexpected <%s> inside <routine> (expected <point>)",
               (const char *)c->name);
      continue;
    }
    r.points = xrealloc(r.points, sizeof *r.points * (size_t)(r.npoints + 1));
    r.points[r.npoints] = (TimingPoint){0};
    parse_point(p, c, &r.points[r.npoints++]);
  }
  if (r.npoints == 0 && !p->failed)
    db_error(p, node, "<routine impl=\"%s\"> has no <point>", r.impl);
  for (int i = 0; !p->failed && i < db->nroutines; i++)
    if (same_routine(&db->routines[i], &r)) {
      char *what = xasprintf("%s %s %d %s", r.impl, kind_name(r.kind), r.index,
                             placement_name(r.placement));
      db_error(p, node, "duplicate routine (%s)", what);
      free(what);
    }
  db->routines = xrealloc(db->routines, sizeof *db->routines * (size_t)(db->nroutines + 1));
  db->routines[db->nroutines++] = r; /* kept even on error so that it is freed with db */
}

/* kasgen-timings := <kasgen-timings version="1"> device generated? routine* </kasgen-timings> */
static void parse_root(DbParser *p, xmlNodePtr root, TimingDb *db) {
  if (!root || !is_element(root, "kasgen-timings")) {
    db_error(p, root, "root element must be <kasgen-timings>, not <%s>",
             root ? (const char *)root->name : "(none)");
    return;
  }
  char *version = get_attr(p, root, "version", true);
  if (version && strcmp(version, "1"))
    db_error(p, root, "unsupported database version '%s' (this kasgen reads version 1)",
             version);
  free(version);
  if (p->failed) return;
  int ndevices = 0;
  for (xmlNodePtr c = root->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (is_element(c, "device")) {
      if (ndevices++) db_error(p, c, "more than one <device>");
      else parse_device(p, c, &db->dev);
    } else if (is_element(c, "generated")) {
      if (db->date) db_error(p, c, "more than one <generated>");
      else parse_generated(p, c, db);
    } else if (is_element(c, "routine")) {
      parse_routine(p, c, db);
    } else {
      db_error(p, c, "unknown element <%s> in <kasgen-timings>", (const char *)c->name);
    }
  }
  if (ndevices == 0) db_error(p, root, "<kasgen-timings> has no <device>");
}

/* Reports libxml2's own error (malformed or truncated XML) at its line. */
static void report_xml_error(DbParser *p, xmlParserCtxtPtr ctxt) {
  const xmlError *err = xmlCtxtGetLastError(ctxt);
  SrcLoc loc = {.file = p->path, .text = p->text, .line = err ? err->line : 0,
                .col = err ? err->int2 : 0};
  char *msg = xstrdup(err && err->message ? err->message : "not well-formed XML");
  size_t len = strlen(msg);
  while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' ')) msg[--len] = '\0';
  diag_error(loc, "malformed XML: %s", msg);
  free(msg);
  p->failed = true;
}

TimingDb *timingdb_parse(const char *path, const char *text, size_t len) {
  DbParser p = {.path = path, .text = text};
  if (len > INT_MAX) {
    diag_error((SrcLoc){.file = path}, "timing database too large");
    return NULL;
  }
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
  if (!ctxt) {
    diag_error((SrcLoc){.file = path}, "cannot create an XML parser");
    return NULL;
  }
  /* NONET: a database never fetches anything; NOERROR/NOWARNING: we report errors ourselves. */
  xmlDocPtr doc = xmlCtxtReadMemory(ctxt, text, (int)len, path, NULL,
                                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  TimingDb *db = xcalloc(1, sizeof *db);
  db->path = xstrdup(path);
  if (!doc)
    report_xml_error(&p, ctxt);
  else
    parse_root(&p, xmlDocGetRootElement(doc), db);
  xmlFreeDoc(doc);
  xmlFreeParserCtxt(ctxt);
  if (p.failed) {
    timingdb_free(db);
    return NULL;
  }
  return db;
}

TimingDb *timingdb_load(const char *path) {
  size_t len;
  char *text = read_text_file(path, &len);
  if (!text) return NULL;
  TimingDb *db = timingdb_parse(path, text, len);
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
  }
  free(db->routines);
  free(db->dev.name);
  free(db->dev.slug);
  free(db->date);
  free(db->nvcc_version);
  free(db->path);
  free(db);
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

double timingdb_routine_ns(const RoutineTiming *r, int e, int extra_smem) {
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

const RoutineTiming *timingdb_find(const TimingDb *db, const char *impl, RoutineKind kind,
                                   int index, Placement placement) {
  if (!db) return NULL;
  for (int i = 0; i < db->nroutines; i++) {
    const RoutineTiming *r = &db->routines[i];
    if (r->kind == kind && r->index == index && r->placement == placement &&
        !strcmp(r->impl, impl) && r->npoints > 0)
      return r;
  }
  return NULL;
}

bool timingdb_lookup(const TimingDb *db, const char *impl, RoutineKind kind, int index,
                     Placement placement, int e, int extra_smem, double *ns_out) {
  const RoutineTiming *r = timingdb_find(db, impl, kind, index, placement);
  if (!r) return false;
  *ns_out = timingdb_routine_ns(r, e, extra_smem);
  return true;
}

/* ---- default location ------------------------------------------------------------------- */

static bool file_exists(const char *path) { return access(path, R_OK) == 0; }

/* Tries dir/benchmarks, dir/../benchmarks and dir/../share/kasgen/benchmarks. */
static char *find_beside(const char *dir) {
  static const char *const rel[] = {"benchmarks", "../benchmarks", "../share/kasgen/benchmarks"};
  for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
    char *p = xasprintf("%s/%s/%s", dir, rel[i], DEFAULT_DB_NAME);
    if (file_exists(p)) return p;
    free(p);
  }
  return NULL;
}

static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return NULL;
  return xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
}

char *timingdb_default_path(const char *argv0) {
  char *found = NULL;
  char *dir = argv0 ? dir_of(argv0) : NULL;
  if (dir) found = find_beside(dir);
  free(dir);
  if (!found) {
    /* Invoked through $PATH: argv0 has no folder, the running executable does. */
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
      exe[n] = '\0';
      char *d = dir_of(exe);
      if (d) found = find_beside(d);
      free(d);
    }
  }
  if (!found && file_exists("benchmarks/" DEFAULT_DB_NAME))
    found = xstrdup("benchmarks/" DEFAULT_DB_NAME);
  return found;
}
