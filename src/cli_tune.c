/*
 * cli_tune.c — the commands that close the loop after a GPU run, thin drivers over tune.c and
 * calibrate.c:
 *   kasgen tune DIR        the measured best of DIR/results.xml shipped in DIR/embed/
 *   kasgen calibrate DIR   the model's constants fitted to the runs in DIR, stored beside the
 *                          database
 * Both search again for the runs' specs through cli_search.c's session, as the runs were
 * generated: with the folder's generation.ini, else in the precision and layouts the results
 * file's <run> says (a file copied out of its folder), and never for other code than the run
 * measured.  Results go to stdout, diagnostics to stderr; exit 0 ok, 1 bad input.
 */
#include "kasgen.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MIN_SAMPLES 3

/* A GPU run as tune and calibrate search it again. */
typedef struct {
  const Results *r;
  const char *path; /* its results file, for messages */
  bool recorded;    /* its folder's generation.ini was read: the options it was generated with */
} Run;

/* ---- what a run was measured in ---------------------------------------------------------- */

/* A place in the run's results file, for a message. */
static SrcLoc place_in(const Run *run, TextPlace at) {
  return (SrcLoc){.file = run->path, .line = at.line, .col = at.col};
}

/* The precision, layouts and element count the run's results file says its code was generated
 * for, into o where neither the command line nor generation.ini (which, when there is one, says
 * them all: a default is left out) gives them: a file copied out of its folder, a folder from
 * before generation.ini.  As generation_read gives the record, the command line winning; o keeps
 * pointers into run->r. */
static void search_as_measured(CliOptions *o, const Run *run) {
  const Results *r = run->r;
  if (run->recorded) return;
  if (r->has_precision)
    (void)option_set_recorded(o, "precision", target_precision_name(r->precision));
  if (r->layouts && option_set_recorded(o, "layout", r->layouts) == RECORDED_SET)
    o->layouts_at = place_in(run, r->layout_at); /* a name the spec lacks: an error there */
  /* the n the model ranked for: the harness runs at the n its folder was generated with,
   * unless given another (--n), which a results file alone does not tell */
  char n[32];
  snprintf(n, sizeof n, "%ld", r->n);
  if (r->n > 0) (void)option_set_recorded(o, "n", n);
}

/* The search is for other code than the run measured (option: "precision" or "layout", bit its
 * OPT_*, the values the run's file and the search give it): an error at the file's attribute
 * naming both and where the search's comes from, and what to do. */
static void report_other_code(const CliOptions *o, const Run *run, TextPlace at,
                              const char *option, unsigned bit, const char *measured,
                              const char *searched) {
  bool given = o->given & bit;
  diag_error(place_in(run, at), "this run measured the code of --%s %s, but %s searches with "
             "--%s %s (%s%s)", option, measured, o->command, option, searched,
             given ? "given to " : run->recorded ? "as the folder's generation.ini records it"
                                                 : "by default",
             given ? o->command : "");
  if (given)
    diag_note((SrcLoc){0}, "a run's candidates are the code it measured: without --%s, %s "
              "searches as the run was generated", option, o->command);
  else if (run->recorded)
    diag_note((SrcLoc){.file = run->path}, "this is not the run of the folder's code: a results "
              "file of another generation, or generation.ini changed since");
}

/* Whether session s searches for the code the run measured, in its precision and layouts (where
 * its results file says them; names that are no argument of the spec are an error there);
 * else an error at the file's attribute, rather than tune_reproduces's "the search no longer
 * gives the candidate", which would hide the cause. */
static bool searched_as_measured(const CliOptions *o, const Run *run, const Session *s) {
  const Results *r = run->r;
  const Target *t = s->target;
  if (r->has_precision && r->precision != t->precision) {
    report_other_code(o, run, r->precision_at, "precision", OPT_PRECISION,
                      target_precision_name(r->precision), target_precision_name(t->precision));
    return false;
  }
  if (!r->layouts) return true;
  Target *measured = target_new_at(s->dag, t->precision, r->layouts, place_in(run, r->layout_at));
  bool same = measured && target_same_layouts(measured, t, s->dag);
  if (measured && !same) {
    char *was = target_layout_option(measured, s->dag), *is = target_layout_option(t, s->dag);
    report_other_code(o, run, r->layout_at, "layout", OPT_LAYOUT, was, is);
    free(was), free(is);
  }
  target_free(measured);
  return same;
}

/* The timing database kasgen has for the GPU named device (a path beside the default database,
 * found as the main job finds this machine's: timingdb_path_for_gpu), malloc'ed; NULL: none. */
static char *database_of_gpu(const CliOptions *o, const char *device) {
  char *base = timingdb_default_path(o->argv0);
  char *path = base ? timingdb_path_for_gpu(base, device) : NULL;
  free(base);
  return path;
}

/* Whether the run is of the spec searched: else an error at the results file's spec attribute,
 * before the search is compared with the rows (tune_reproduces's "the search no longer gives the
 * candidate", which another spec's rows always get, would hide the cause). */
static bool of_the_spec(const Run *run, const Session *s) {
  if (!strcmp(run->r->spec, s->spec->name)) return true;
  char *was = terminal_text(run->r->spec);
  diag_error(place_in(run, run->r->spec_at), "the results are of spec '%s', but the spec "
             "searched is '%s' (%s)", was, s->spec->name, s->spec->path ? s->spec->path : "-");
  diag_note((SrcLoc){0}, "a run's results are matched with the search of its own spec: give "
            "the folder the run was generated in, or --spec FILE of spec '%s'", was);
  free(was);
  return false;
}

/* ---- kasgen tune ------------------------------------------------------------------------ */

/* The search does not give the run's candidates: where the run was measured on another GPU
 * than the database's, that first, as the likely reason (a folder generated with that GPU's
 * database, searched here with another), with the database to give where kasgen has it; then
 * the first row missing (tune_reproduces). */
static void report_not_reproduced(const CliOptions *o, const Run *run, const Session *s) {
  const Results *r = run->r;
  const TimingDb *db = s->db;
  bool other_gpu = !db->analytic && strcmp(r->device, db->dev.name);
  if (other_gpu) {
    char *base = timingdb_default_path(o->argv0);
    char *theirs = base ? timingdb_path_for_gpu(base, r->device) : NULL;
    diag_warning((SrcLoc){.file = run->path, .line = (int)r->device_line},
                 "this run was measured on '%s', but the search uses the database %s, of '%s': "
                 "the run's candidates were most likely ranked with a database of the GPU "
                 "measured, which this search does not use%s%s", r->device, db->path, db->dev.name,
                 theirs ? "; give --db " : "", theirs ? theirs : "");
    free(base), free(theirs);
  }
  tune_reproduces(r, s->dag, s->target, s->res, run->path, false);
}

/* Opens the session of the run: the configured one, else with the calibration set aside (a run
 * generated before the calibration).  *exact: the search reproduces every ranked row (else,
 * unless quiet, an error says the first that it does not, and why where the GPU tells).  false
 * after an error: also when the search is not for the code the run measured. */
static bool open_run_session(const CliOptions *o, const Run *run, bool quiet, Session *s,
                             bool *exact) {
  const Results *r = run->r;
  if (!cli_open_session(o, s, false) || !of_the_spec(run, s) || !searched_as_measured(o, run, s))
    return false;
  *exact = tune_reproduces(r, s->dag, s->target, s->res, run->path, true);
  if (!*exact && s->db->calib.present) {
    cli_close_session(s);
    CliOptions plain = *o;
    plain.no_calibration = true;
    if (!cli_open_session(&plain, s, false)) return false;
    *exact = tune_reproduces(r, s->dag, s->target, s->res, run->path, true);
  }
  if (!*exact && !quiet) report_not_reproduced(o, run, s);
  return true;
}

/* The top N that holds every ranked row of r (in *top); false, with an error, beyond what a
 * generation gives (MAX_TOP): tune and calibrate search that many again. */
static bool top_of(const Results *r, const char *rpath, int *top) {
  long most = 1;
  for (int i = 0; i < r->nrows; i++)
    if (r->rows[i].predicted_rank > most) most = r->rows[i].predicted_rank;
  if (most > MAX_TOP) {
    diag_error((SrcLoc){.file = rpath}, "a candidate ranked %ld: more than the %d a "
               "generation gives (--top)", most, MAX_TOP);
    return false;
  }
  *top = (int)most;
  return true;
}

/* ---- the command ------------------------------------------------------------------------ */

/* DIR without trailing slashes, and its parent ("." when none). */
static char *trimmed(const char *dir) {
  char *d = xstrdup(dir);
  for (size_t len = strlen(d); len > 1 && d[len - 1] == '/';) d[--len] = '\0';
  return d;
}

/* The embed header's reason for shipping c (malloc'ed): tune_choose's, and for a block shape of
 * another candidate (--variants), which has that candidate's calls, what differs. */
static char *shipped_why(const Session *s, const Candidate *c, const char *why) {
  const Candidate *base = c->shape_of ? candidate_shape_base(s->res, c) : NULL;
  if (!base) return xstrdup(why);
  const KernelPlan *k = c->kernels[c->shape_of - 1];
  return xasprintf("%s It is cand%02d with its kernel %d in another block shape: E = %d, %d "
                   "threads per block.", why, base->rank, c->shape_of, k->e,
                   threads_in_block(candidate_dag(s->dag, c), k));
}

/* Whether dir may be written again as the folder of spec `name`: named so (the main job's
 * out/<spec>/), or of another name (stvenant-h100/ beside stvenant-h200/) when its index.txt's
 * first line names that spec, the generation kasgen wrote there.  Either way emit_dir_open then
 * refuses a folder holding any file its manifest does not list, so nothing but kasgen's own
 * files is ever replaced; the index line keeps another spec's folder from being overwritten
 * with this one.  Checked before the table is printed; an error when not. */
static bool writable_as(const char *dir, const FolderIndex *index, const char *name) {
  const char *slash = strrchr(dir, '/');
  if (!strcmp(slash ? slash + 1 : dir, name)) return true;
  bool ours = index->name && !strcmp(index->name, name);
  if (!ours)
    diag_error((SrcLoc){.file = dir}, "not written again: the folder is not named %s and its "
               "index.txt does not name spec %s (not kasgen's folder of this spec)", name, name);
  return ours;
}

/* origin: the spec the folder was generated from, where its copy was read (FolderIndex):
 * index.txt keeps naming it, and the copy is written again as read. */
static bool reemit(const CliOptions *o, const Session *s, const char *dir, const TuneChoice *ch,
                   const char *origin) {
  const Candidate *c = &s->res->cands[ch->row->predicted_rank - 1];
  char *why = shipped_why(s, c, ch->why);
  char *generation = generation_ini_text(o, s);
  EmitOptions eo = {.folder = dir, .default_n = o->n, .target = s->target, .embed = c,
                    .embed_why = why, .generation_ini = generation, .spec_origin = origin};
  bool ok = emit_all(s->dag, s->lib, s->db, s->res, &eo);
  free(generation);
  if (ok) printf("wrote %s/embed/ around cand%02d\n", dir, c->rank);
  free(why);
  return ok;
}

/* What a run's folder's index.txt gives the search of its run: the spec's path as its code names
 * it, and the --variants K where neither the command line nor generation.ini (read into o
 * already) gives one, as in a folder from before the record. */
static void index_options(CliOptions *o, const FolderIndex *index) {
  o->spec_as_given = index->given;
  if (o->variants < 0) o->variants = index->variants;
}

/* The --variants K the folder records (its generation.ini, else its index.txt's line), or -1
 * when it records none (a folder older than both, for which --variants K says it). */
static int recorded_variants(const FolderIndex *index, const GenerationRecord *generation) {
  for (int i = 0; i < generation->nkeys; i++)
    if (!strcmp(generation->keys[i], "variants")) return atoi(generation->values[i]);
  return index->variants > 0 ? index->variants : -1;
}

/* The database to search a run with when neither the command line nor the folder says it
 * (generation_db_unknown): the one for the GPU its results name, found as the main job finds
 * this machine's (timingdb_path_for_gpu beside the default database), said in a note; else an
 * error asking for --db.  Before, tune searched with the default database (the H100's) whatever
 * GPU measured the run, and failed with "the search no longer gives the candidate".  *chosen
 * (malloc'ed, o->db_path points to it) is freed by the caller. */
static bool db_for_unrecorded_run(CliOptions *o, const Run *run, char **chosen) {
  *chosen = NULL;
  if (o->db_path || o->no_db) return true;
  *chosen = database_of_gpu(o, run->r->device);
  char *gpu = terminal_text(run->r->device);
  SrcLoc at = {.file = run->path, .line = (int)run->r->device_line};
  if (*chosen)
    diag_note(at, "the folder does not record the timing database it was generated with: %s "
              "searches with %s, the database of '%s', the GPU that measured this run (--db "
              "FILE gives another)", o->command, *chosen, gpu);
  else
    diag_error(at, "the folder does not record the timing database it was generated with, and "
               "kasgen has none for '%s', the GPU that measured this run: give --db FILE, the "
               "database the folder was generated with", gpu);
  free(gpu);
  o->db_path = *chosen;
  return *chosen != NULL;
}

int cmd_tune(const CliOptions *o) {
  Results r;
  char *rpath;
  if (!results_load(o->spec, &r, &rpath)) return EXIT_BAD_INPUT;
  char *dir = trimmed(o->spec);
  FolderIndex index; /* read once: the spec (unless --spec names it), the path its code names, K */
  bool index_ok = tune_read_index(dir, !o->spec_file, &index);
  int rc = EXIT_BAD_INPUT;
  Session s = {0};
  CliOptions so = *o;
  so.spec = o->spec_file ? o->spec_file : index.spec;
  GenerationRecord generation;
  bool recorded = generation_read(dir, &so, NULL, &generation);
  /* The run's candidates are those of the search that generated its folder: another K than
   * the one it records searches for others, never the run's (the search no longer gives...). */
  int k = recorded && (o->given & OPT_VARIANTS) ? recorded_variants(&index, &generation) : -1;
  if (k >= 0 && k != o->variants) {
    diag_error((SrcLoc){0}, "--variants %d: %s was generated with --variants %d, whose "
               "candidates the run measured; leave --variants out (it is read from the folder)",
               o->variants, dir, k);
    generation_record_free(&generation);
    results_free(&r);
    tune_index_free(&index);
    free(rpath), free(dir);
    return EXIT_USAGE;
  }
  Run run = {.r = &r, .path = rpath, .recorded = generation.found};
  search_as_measured(&so, &run);
  bool ranks_ok = top_of(&r, rpath, &so.top);
  index_options(&so, &index);
  TuneChoice ch = {0};
  bool exact = false;
  OtherGpuRun other_read = {0}; /* where the session's database was read without the store */
  char *chosen_db = NULL;
  if (index_ok && recorded && ranks_ok &&
      (!generation_db_unknown(&generation) || db_for_unrecorded_run(&so, &run, &chosen_db)) &&
      open_run_session(&so, &run, false, &s, &exact)) {
    ModelCalibration cal = s.db->calib;
    const OtherGpuRun *other = &s.db->calib_other_gpu;
    if (!cal.present && !o->no_calibration) {
      if (!calibration_read(s.db, &cal, &other_read)) goto done;
      other = &other_read;
    }
    /* the run, and the runs the calibration was fitted on, against the database's GPU (a run
     * not reproduced was said to be of another GPU already, as the reason) */
    if (exact)
      tune_same_gpu((SrcLoc){.file = rpath, .line = (int)r.device_line},
                    "this run was measured", r.device, s.db, false);
    if (cal.present) calibration_same_gpu(s.db, other, false);
    if (!writable_as(dir, &index, s.spec->name)) goto done;
    tune_print_table(&r, s.dag, s.db, s.target, s.res, &cal);
    if (exact && tune_choose(&r, rpath, &ch)) {
      char *choice = xasprintf("choice: %s", ch.why), *shown = wrapped_text(choice, 80);
      printf("%s\n", shown); /* within 80 columns, as the table (one line of 195 before) */
      free(shown), free(choice);
      fflush(stdout);
      if (reemit(&so, &s, dir, &ch, index.origin)) rc = EXIT_OK;
    }
  }
done:
  free(chosen_db);
  free(ch.why);
  other_gpu_run_free(&other_read);
  cli_close_session(&s);
  generation_record_free(&generation);
  results_free(&r);
  tune_index_free(&index);
  free(rpath);
  free(dir);
  return rc;
}

/* ---- kasgen calibrate ------------------------------------------------------------------- */

/* The session whose candidates are the run's: the search that generated it, as tune repeats it
 * (with the stored calibration, when the run was generated with it: a calibration moves the
 * choice of load and save routines, which the rows' code digests tell apart; else without),
 * when that reproduces every row; else the uncalibrated search with room for candidates that
 * moved (ptxas's registers, the #1's block shapes), whose rows tune_candidate_of finds by what
 * they name.  variants: the folder's --variants K (0 for a folder without its index line),
 * -1 when unknown. */
static bool open_calibration_session(const CliOptions *o, const Run *run, const char *spec,
                                     int variants, Session *s) {
  CliOptions so = *o;
  so.spec = spec;
  if (!top_of(run->r, run->path, &so.top)) return false;
  so.variants = variants;
  bool exact = false;
  if (!open_run_session(&so, run, true, s, &exact)) return false;
  if (exact) return true;
  /* a results file alone does not say the n its code was ranked at: its run's, else the
   * default (a harness run at another --n than its folder's) */
  if (!run->recorded && so.n != DEFAULT_ELEMENTS && !(o->given & OPT_N)) {
    cli_close_session(s);
    CliOptions at_default = so;
    at_default.n = DEFAULT_ELEMENTS;
    if (!open_run_session(&at_default, run, true, s, &exact)) return false;
    if (exact) return true;
  }
  cli_close_session(s);
  so.no_calibration = true;
  so.top += so.top / 2;
  /* a folder without the index line may have been written with variants before the line */
  so.variants = variants > 0 ? variants : SEARCH_VARIANTS;
  so.top += so.variants;
  return cli_open_session(&so, s, false);
}

/* A run whose fastest correct candidate takes less than this per launch (measured ns per
 * element times n) is timed mostly by the launches' fixed costs.  Session 45's n sweep on the
 * H200 (benchmarks/h200-2026-11-29-s45, nsweep_table.py): about 8 us for a candidate's first
 * kernel and 4.5 us for each further one; at n = 2^18 the one-kernel candidates of four of five
 * specs took 31-53 us, 15-26% of it fixed; at n = 2^20 the fastest took 98-362 us (at most 8%).
 * stvenant's run at n = 4096 (8.4 us) was fitted a barrier-scale of 296 (2026-11-29, when the
 * model took every launch as shared among 2^22 elements), out of any store's range. */
#define LAUNCH_BOUND_US 50.0

/* Warns of a run whose fixed per-launch costs dominate (LAUNCH_BOUND_US): its fit says little
 * of the kernels' work. */
static void warn_if_launch_bound(const Run *run) {
  const Results *r = run->r;
  double fastest = INFINITY; /* us per launch */
  for (int i = 0; i < r->nrows; i++)
    if (results_row_counts(&r->rows[i]))
      fastest = fmin(fastest, r->rows[i].measured_ns * (double)r->n / 1000);
  if (!(fastest < LAUNCH_BOUND_US)) return;
  diag_warning((SrcLoc){.file = run->path}, "n = %ld: the fastest correct candidate takes "
               "%.1f us per launch, under %.0f us, where the launches' fixed costs (about 8 us "
               "for the first kernel on an H200) are much of what was measured; constants fitted "
               "to it say more of them than of the kernels' work (run the harness with a larger "
               "n, its default 4194304)", r->n, fastest, LAUNCH_BOUND_US);
}

/* One run, measured on db's GPU: its candidates found again (open_calibration_session), the
 * correct ones samples.  o: the options to search it with (its record, calibrate's own), to
 * which its results file adds what they leave unsaid. */
static bool add_run(const CliOptions *o, const TimingDb *db, const Run *run, const char *spec,
                    int variants, CalibrationSamples *all) {
  const Results *r = run->r;
  const char *rpath = run->path;
  CliOptions ro = *o;
  search_as_measured(&ro, run);
  Session s = {0};
  bool same = tune_same_gpu((SrcLoc){.file = rpath, .line = (int)r->device_line},
                            "this run was measured", r->device, db, true);
  bool ok = same && open_calibration_session(&ro, run, spec, variants, &s);
  int used = 0, skipped = 0;
  if (ok) warn_if_launch_bound(run);
  if (ok) {
    SearchContext *ctx = search_context_new(s.dag, s.db, s.target);
    ctx->n = r->n > 0 ? r->n : ctx->n; /* the samples at the n the run measured */
    model_memo_quiet(ctx->model);
    calibration_begin_spec(all, s.spec->name, r->device, rpath);
    for (int i = 0; i < r->nrows; i++) {
      const ResultRow *x = &r->rows[i];
      if (!results_row_counts(x)) continue;
      const Candidate *c = tune_candidate_of(s.dag, s.target, s.res, x, false);
      if (!c) { skipped++; continue; }
      calibration_add(all, ctx, c, x);
      used++;
    }
    calibration_end_spec(all);
    search_context_free(ctx);
    printf("%s: %d measured candidates of %s", rpath, used, s.spec->name);
    if (skipped) printf(" (%d left out: the search no longer gives them)", skipped);
    putchar('\n');
  }
  cli_close_session(&s);
  return ok;
}

/* ---- finding the runs ------------------------------------------------------------------- */

static bool exists(const char *path) { return access(path, R_OK) == 0; }

/* The spec of a results file DIR/<file>: DIR/<spec>.spec, specs/, benchmarks/specs/. */
static char *spec_beside(const char *dir, const char *name) {
  /* The name comes from the file: a path in it would reach beyond these folders. */
  if (!*name || strchr(name, '/') || name[0] == '.') {
    diag_error((SrcLoc){.file = dir}, "a results file names its spec '%s', which is not a "
               "spec's name", name);
    return NULL;
  }
  const char *where[] = {"%s/%s.spec", "specs/%s%s.spec", "benchmarks/specs/%s%s.spec"};
  for (int i = 0; i < 3; i++) {
    char *p = i ? xasprintf(where[i], "", name) : xasprintf(where[i], dir, name);
    if (exists(p)) return p;
    free(p);
  }
  diag_error((SrcLoc){.file = dir}, "no spec '%s' in this folder, specs/ or benchmarks/specs/",
             name);
  return NULL;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What calibrate decides for every run, whatever a run's generation.ini says: the database it
 * fits, with no calibration applied. */
static const char *const left_to_calibrate[] = {"db", "no-db", "uncalibrated", NULL};

/* The entries of dir but its hidden ones, in name order (malloc'ed, *n of them); NULL after an
 * error. */
static char **folder_entries(const char *dir, int *n) {
  DIR *d = opendir(dir);
  *n = 0;
  if (!d) {
    diag_error((SrcLoc){.file = dir}, "cannot open this folder: %s", strerror(errno));
    return NULL;
  }
  char **names = xmalloc(sizeof *names);
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] != '.') {
      names = xrealloc(names, sizeof *names * (size_t)(*n + 1));
      names[(*n)++] = xstrdup(e->d_name);
    }
  closedir(d);
  if (*n) qsort(names, (size_t)*n, sizeof *names, by_name);
  return names;
}

static void free_entries(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

/* What entry `name` of a calibrate folder is: a run's folder (it holds results.xml), a results
 * file copied out of its folder (<spec>.xml), or neither (left alone). */
typedef enum { NOT_A_RUN, RUN_FOLDER, RUN_FILE } RunEntry;

static RunEntry run_entry(const char *path, const char *name) {
  char *rx = xasprintf("%s/results.xml", path);
  bool folder = exists(rx);
  free(rx);
  size_t len = strlen(name);
  if (folder) return RUN_FOLDER;
  return len > 4 && !strcmp(name + len - 4, ".xml") ? RUN_FILE : NOT_A_RUN;
}

/* A results file copied out of its folder, read as results_load reads results.xml: a file of
 * the folder, not a link out of it.  false after an error. */
static bool load_results_file(const char *path, Results *r) {
  size_t tl;
  struct stat st;
  bool plain = lstat(path, &st) == 0 && S_ISREG(st.st_mode);
  if (!plain)
    diag_error((SrcLoc){.file = path}, "not a regular file (a link, a folder or a device); "
               "calibrate reads only the folder's own results files");
  char *text = plain ? read_text_file(path, &tl) : NULL;
  bool ok = text && results_parse(path, text, tl, r);
  free(text);
  return ok;
}

/* The results of run entry `path` (RUN_FOLDER or RUN_FILE) into *r, *rpath naming them
 * (malloc'ed); false after an error. */
static bool load_run_results(const char *path, RunEntry kind, Results *r, char **rpath) {
  if (kind == RUN_FOLDER) return results_load(path, r, rpath);
  *rpath = xstrdup(path);
  return load_results_file(path, r);
}

/* One run entry of the folder: a run's folder searched again with the options it was generated
 * with (generation.ini), or a results file with its spec found beside it. */
static bool add_entry(const CliOptions *o, const TimingDb *db, const char *dir, const char *sub,
                      RunEntry kind, CalibrationSamples *all) {
  Results r;
  char *rpath = NULL, *spec = NULL;
  bool ok;
  if (kind == RUN_FOLDER) {
    CliOptions ro = *o;
    FolderIndex index = {0};
    GenerationRecord generation;
    ok = generation_read(sub, &ro, left_to_calibrate, &generation) &&
         results_load(sub, &r, &rpath) && tune_read_index(sub, true, &index);
    if (ok) index_options(&ro, &index);
    ok = ok && add_run(&ro, db, &(Run){&r, rpath, generation.found}, index.spec, ro.variants,
                       all);
    if (rpath) results_free(&r);
    generation_record_free(&generation);
    tune_index_free(&index);
  } else {
    ok = load_results_file(sub, &r);
    if (ok) {
      ok = (spec = spec_beside(dir, r.spec)) && add_run(o, db, &(Run){&r, sub, false}, spec, -1,
                                                        all);
      results_free(&r);
    }
  }
  free(spec), free(rpath);
  return ok;
}

/* Every run in dir, in name order; false after an error. */
static bool add_runs(const CliOptions *o, const TimingDb *db, const char *dir,
                     CalibrationSamples *all) {
  int n;
  char **names = folder_entries(dir, &n);
  if (!names) return false;
  bool ok = true;
  int runs = 0;
  for (int i = 0; i < n && ok; i++) {
    char *sub = xasprintf("%s/%s", dir, names[i]);
    RunEntry kind = run_entry(sub, names[i]);
    if (kind != NOT_A_RUN) ok = add_entry(o, db, dir, sub, kind, all), runs++;
    free(sub);
  }
  free_entries(names, n);
  if (ok && !runs) diag_error((SrcLoc){.file = dir}, "no results here (<spec>/results.xml or "
                                                     "<spec>.xml)");
  return ok && runs;
}

/* The GPU that measured every run in dir (malloc'ed, as its results name it); NULL after an
 * error: a results file that cannot be read, none at all, or runs of two GPUs, which no one
 * database fits (calibrate refuses a run of another GPU than the database's). */
static char *gpu_of_runs(const char *dir) {
  int n;
  char **names = folder_entries(dir, &n);
  char *gpu = NULL, *first = NULL; /* first: the results file that named gpu */
  bool ok = names != NULL;
  for (int i = 0; i < n && ok; i++) {
    char *sub = xasprintf("%s/%s", dir, names[i]), *rpath = NULL;
    RunEntry kind = run_entry(sub, names[i]);
    Results r;
    if (kind != NOT_A_RUN && (ok = load_run_results(sub, kind, &r, &rpath))) {
      if (!gpu) {
        gpu = xstrdup(r.device), first = xstrdup(rpath);
      } else if (strcmp(gpu, r.device)) {
        char *one = terminal_text(gpu), *other = terminal_text(r.device);
        diag_error((SrcLoc){.file = rpath, .line = (int)r.device_line}, "this run was measured "
                   "on '%s', %s on '%s': calibrate fits one GPU's database; give --db FILE, "
                   "and a folder of that GPU's runs", other, first, one);
        free(one), free(other);
        ok = false;
      }
      results_free(&r);
    }
    free(sub), free(rpath);
  }
  free_entries(names, n);
  if (ok && !gpu) diag_error((SrcLoc){.file = dir}, "no results here (<spec>/results.xml or "
                                                    "<spec>.xml)");
  free(first);
  if (!ok) free(gpu);
  return ok ? gpu : NULL;
}

/* calibrate without --db (or --no-db) fits the database of the GPU that measured the runs in
 * dir, chosen as tune chooses one for a folder that records none (database_of_gpu); malloc'ed,
 * NULL after an error. */
static char *database_of_runs(const CliOptions *o, const char *dir) {
  char *gpu = gpu_of_runs(dir);
  if (!gpu) return NULL;
  char *path = database_of_gpu(o, gpu), *shown = terminal_text(gpu);
  if (path)
    diag_note((SrcLoc){0}, "calibrate fits %s, the database of '%s', the GPU that measured the "
              "runs (--db FILE gives another)", path, shown);
  else
    diag_error((SrcLoc){.file = dir}, "kasgen has no timing database for '%s', the GPU that "
               "measured the runs here: give --db FILE", shown);
  free(shown), free(gpu);
  return path;
}

/* ---- kasgen calibrate --held-out --------------------------------------------------------- */

/* Runs meeting issue #14's targets: Spearman >= 0.8 where the measured times span more than
 * 10%, the predicted best within 2% of the measured best, the mean relative error <= 5%. */
typedef struct {
  int ranked, spearman, gap, error, runs;
  double error_sum;
} Tally;

static bool ranked(double span) { return span > 0.10; }

static void tally(Tally *t, const TuneFigures *f, double span) {
  t->runs++;
  if (ranked(span)) t->ranked++, t->spearman += f->spearman >= 0.8;
  t->gap += f->gap <= 0.02;
  t->error += f->error <= 0.05;
  t->error_sum += f->error;
}

static void print_tally(const char *what, const Tally *t) {
  if (!t->runs) { /* a mean of nothing is no 0.00% */
    printf("%s: no runs to hold out (leaving any spec out leaves too few samples to fit on)\n",
           what);
    return;
  }
  printf("%s: Spearman >= 0.8 on %d of %d (span > 10%%), predicted #1 within 2%% on %d of %d, "
         "mean error <= 5%% on %d of %d (mean %.2f%%)\n",
         what, t->spearman, t->ranked, t->gap, t->runs, t->error, t->runs,
         100 * t->error_sum / t->runs);
}

/* rho, gap, error; a figure that misses its target is marked '*'. */
static void print_run_figures(const TuneFigures *f, double span) {
  printf(" %6.3f%c %5.1f%%%c %5.1f%%%c", f->spearman,
         ranked(span) && !(f->spearman >= 0.8) ? '*' : ' ', 100 * f->gap,
         f->gap > 0.02 ? '*' : ' ', 100 * f->error, f->error > 0.05 ? '*' : ' ');
}

static bool print_held_out(const CalibrationSamples *all) {
  int n;
  HeldOutRun *runs = calibration_held_out(all, &n);
  Tally plain = {0}, held = {0};
  printf("leave one spec out: each spec's runs predicted by the constants fitted on the other "
         "specs' runs\n('*': Spearman below 0.8 where the span exceeds 10%%, gap above 2%%, "
         "error above 5%%)\n");
  printf("%-41s|%-25s|%s\n", "", "  plain (uncalibrated)", "  held out");
  printf("%-26s %5s %7s |%s |%s\n", "spec", "cands", "span", "    rho     gap   error ",
         "    rho     gap   error");
  for (int i = 0; i < n; i++) {
    const HeldOutRun *r = &runs[i];
    printf("%-26s %5d %6.1f%% |", r->spec, r->plain.n, 100 * r->span);
    print_run_figures(&r->plain, r->span);
    printf(" |");
    if (r->fitted) print_run_figures(&r->held_out, r->span);
    else
      printf(" (too few samples elsewhere)");
    printf("  %s\n", r->source);
    tally(&plain, &r->plain, r->span);
    if (r->fitted) tally(&held, &r->held_out, r->span);
  }
  if (n) {
    print_tally("plain", &plain);
    print_tally("held out", &held);
  } else {
    diag_error((SrcLoc){0}, "no run has a measured candidate the search still gives");
  }
  free(runs);
  return n > 0;
}

/* A constant the fit left on a limit of its scan was not determined by the runs: the error
 * still fell towards the limit (session 24's H100 runs put four of them there). */
static void note_constants_at_limits(const ModelCalibration *c) {
  char *at = calibration_at_limits(c);
  if (at)
    diag_note((SrcLoc){0}, "on a limit of the fit's scan, so not determined by these runs (the "
              "best fit may lie beyond it): %s", at);
  free(at);
}

int cmd_calibrate(const CliOptions *given) {
  if (given->db_path && !strcmp(given->db_path, "-")) {
    diag_error((SrcLoc){0}, "calibrate reads the database once per run and stores the "
               "constants beside it: give --db FILE, not the standard input");
    return EXIT_BAD_INPUT;
  }
  CliOptions with_db = *given, *o = &with_db;
  char *chosen_db = NULL;
  if (!o->db_path && !o->no_db && !(o->db_path = chosen_db = database_of_runs(o, o->spec)))
    return EXIT_BAD_INPUT;
  CalibrationSamples *all = calibration_samples_new();
  int rc = EXIT_BAD_INPUT;
  OtherGpuRun other = {0}; /* the store's run measured on another GPU, if any */
  ModelCalibration stored;  /* the store's constants: absent when set aside */
  CliOptions set_aside = *o;
  set_aside.no_calibration = true;
  TimingDb *db = cli_load_timingdb(&(CliOptions){.argv0 = o->argv0, .db_path = o->db_path,
                                                 .no_db = o->no_db, .no_calibration = true});
  if (db && db->analytic)
    diag_error((SrcLoc){0}, "calibration needs a timing database (--db FILE): it is stored "
                            "beside it");
  /* the store, which the runs' searches apply (a run generated with it is found again by
   * searching with it), and each run: of the database's GPU.  Constants out of range, which
   * no search could read, are set aside (a warning): calibrate replaces them. */
  else if (db && calibration_read_to_refit(db, &stored, &other) &&
           calibration_same_gpu(db, &other, true) &&
           add_runs(stored.present ? o : &set_aside, db, o->spec, all)) {
    int n = calibration_sample_count(all);
    if (n < MIN_SAMPLES) {
      diag_error((SrcLoc){.file = o->spec}, "only %d measured candidates; at least %d are needed",
                 n, MIN_SAMPLES);
    } else if (o->held_out) {
      if (print_held_out(all)) rc = EXIT_OK;
    } else {
      double fitted, plain;
      ModelCalibration c = calibration_fit(all, &fitted, &plain);
      printf("fitted on %d candidates of %d specs: work-scale %.4f, requests-one-scale %.4f, "
             "requests-shared-scale %.4f, lines-scale %.4f, requests-overlap %.4f, "
             "coverage-slope %.4f, unhidden-share %.4f, wavefront-scale %.4f, "
             "barrier-scale %.4f, barrier-warp-ns %.4f, kernel-ns %.6f\n"
             "root mean square relative error on them: %.2f%% (uncalibrated %.2f%%); these are "
             "fitted figures, not predictions\n",
             c.ncandidates, c.nspecs, c.work_scale, c.requests_one_scale,
             c.requests_shared_scale, c.lines_scale, c.requests_overlap, c.coverage_slope,
             c.unhidden_share, c.wavefront_scale, c.barrier_scale, c.barrier_warp_ns,
             c.kernel_ns, 100 * fitted, 100 * plain);
      note_constants_at_limits(&c);
      char *path;
      if (calibration_write(db, all, &c, &path)) {
        printf("wrote %s\n", path);
        rc = EXIT_OK;
      }
      free(path);
    }
  }
  other_gpu_run_free(&other);
  timingdb_free(db);
  calibration_samples_free(all);
  free(chosen_db);
  return rc;
}
