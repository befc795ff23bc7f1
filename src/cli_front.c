/*
 * cli_front.c — the commands of the front end and what every command shares:
 *   kasgen check SPEC [--dot FILE]   parse and validate; print the DAG; optionally write it
 *                                    (--dot -: to the standard output, instead of the listing)
 *   kasgen fusions SPEC              every valid (convex) fusion of at most --max-fusion calls
 *   kasgen list                      the library: types, functions, implementations
 * plus cli_load_library (--library, $KASGEN_LIBRARY, beside the binary, ./library; with
 * cli_load_library_and_spec, only the spec's functions' patterns are checked),
 * cli_load_timingdb (--no-db, --db FILE, the database of this machine's GPU beside the default
 * one, the default database, else the analytic model) and
 * cli_check_output (a cheap look at --out before any work).
 * Results go to stdout, diagnostics to stderr; exit 0 ok, 1 bad input (main.c handles usage).
 */
#include "kasgen.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The library that --library, $KASGEN_LIBRARY or the defaults name: every implementation
 * checked (library_load), or none yet (library_open: the caller checks what it uses). */
static Library *locate_library(const CliOptions *o, bool check_all) {
  char *dir = library_locate(o->library_dir, o->argv0);
  Library *lib = !dir ? NULL : check_all ? library_load(dir) : library_open(dir);
  free(dir);
  return lib;
}

Library *cli_load_library(const CliOptions *o) { return locate_library(o, true); }

Spec *cli_load_spec(const CliOptions *o, const Library *lib) {
  Spec *spec = spec_load(o->spec, lib);
  if (spec && o->spec_as_given && strcmp(o->spec_as_given, spec->path)) {
    spec->read_from = spec->path;
    spec->path = xstrdup(o->spec_as_given);
  }
  if (spec && o->name) {
    free(spec->name);
    spec->name = xstrdup(o->name);
  }
  return spec;
}

bool cli_load_library_and_spec(const CliOptions *o, Library **lib, Spec **spec) {
  *spec = NULL;
  *lib = locate_library(o, false);
  if (!*lib || !(*spec = cli_load_spec(o, *lib))) return false;
  bool *used = xcalloc((size_t)(*lib)->nfuncs, sizeof *used);
  for (int c = 0; c < (*spec)->nsources; c++) used[(*spec)->sources[c].fn - (*lib)->funcs] = true;
  bool ok = library_check(*lib, used);
  free(used);
  return ok;
}

/* The default database: this machine's GPU's (local_gpu.c) where benchmarks/ has it, else the
 * H100's, with a warning (once a run) when the GPU is another.  gpu: its name, or NULL. */
static char *default_db_path(const char *argv0, const char *gpu, bool *for_gpu) {
  char *path = timingdb_default_path(argv0);
  char *mine = gpu && path ? timingdb_path_for_gpu(path, gpu) : NULL;
  *for_gpu = mine != NULL;
  if (!mine) return path;
  free(path);
  return mine;
}

/* The predictions are for another GPU than this machine's: said once a run. */
static void say_other_gpu(const TimingDb *db, const char *gpu) {
  static bool said;
  if (said || !gpu || !strcmp(db->dev.name, gpu)) return;
  said = true;
  char *slug = timingdb_slug(gpu);
  if (db->for_local_gpu)
    diag_warning((SrcLoc){.file = db->path}, "chosen by its name for this machine's GPU, %s, "
                 "but it times %s", gpu, db->dev.name);
  else
    diag_warning((SrcLoc){0}, "this machine's GPU is %s, but the predictions are for %s (%s): "
                 "there is no %s.xml beside it; `make benchdb` on this GPU times one, or give "
                 "--db", gpu, db->dev.name, db->path, slug);
  free(slug);
}

/* Only the commands that choose what to generate look for this machine's GPU: tune and
 * calibrate repeat a generation, with the database it recorded (generation.ini) or else the
 * default, wherever they run. */
static bool looks_for_gpu(const CliOptions *o) {
  return !o->db_path && o->command &&
         (!strcmp(o->command, "generate") || !strcmp(o->command, "plan"));
}

TimingDb *cli_load_timingdb(const CliOptions *o) {
  if (o->no_db) return timingdb_analytic();
  TimingDb *db = NULL;
  char *gpu = looks_for_gpu(o) ? local_gpu_name() : NULL;
  bool for_gpu = false;
  char *path = o->db_path ? xstrdup(o->db_path) : default_db_path(o->argv0, gpu, &for_gpu);
  if (path && (o->db_path || access(path, R_OK) == 0)) {
    db = timingdb_load(path); /* --db -: the standard input */
    free(path);
    if (db) {
      db->for_local_gpu = for_gpu;
      say_other_gpu(db, gpu);
    }
    free(gpu);
    /* The constants fitted to this GPU's measured kernels, when `kasgen calibrate` stored them,
     * and the store's run measured on another GPU that tune warns of, from the same reading. */
    if (db && !o->no_calibration && !calibration_read(db, &db->calib, &db->calib_other_gpu)) {
      timingdb_free(db);
      return NULL;
    }
    return db;
  }
  free(path), free(gpu);
  diag_note((SrcLoc){0}, "no timing database; using the analytic model");
  return timingdb_analytic();
}

/* The folder that holds path's last component ("." when there is none); path is changed. */
static const char *enclosing_folder(char *path) {
  char *slash = strrchr(path, '/');
  if (!slash) return ".";
  if (slash == path) return "/";
  *slash = '\0';
  return path;
}

/* Creating path will need its nearest existing ancestor to be a folder kasgen may write in. */
static bool creatable(const char *path) {
  char *p = xstrdup(path);
  const char *up = p;
  struct stat st;
  do up = enclosing_folder(p);
  while (stat(up, &st) != 0 && strcmp(up, ".") && strcmp(up, "/"));
  bool ok = false;
  if (stat(up, &st) != 0 || !S_ISDIR(st.st_mode))
    diag_error((SrcLoc){.file = path}, "cannot be created: %s is not a folder", up);
  else if (access(up, W_OK | X_OK) != 0)
    diag_error((SrcLoc){.file = path}, "cannot be created: %s is not writable", up);
  else
    ok = true;
  free(p);
  return ok;
}

bool cli_check_output(const char *path) {
  char *p = xstrdup(path);
  for (size_t len = strlen(p); len > 1 && p[len - 1] == '/';) p[--len] = '\0';
  struct stat st;
  bool ok = true;
  if (stat(p, &st) != 0) {
    ok = creatable(p);
  } else if (!S_ISDIR(st.st_mode)) {
    diag_error((SrcLoc){.file = p}, "exists and is not a folder; refusing to write there");
    ok = false;
  }
  free(p);
  return ok;
}

/* Everything check and fusions need, loaded in order; NULL fields after the first failure. */
typedef struct {
  Library *lib;
  Spec *spec;
  Dag *dag;
} Front;

/* dag_optional: a spec with more calls than a DAG holds loads without one (check shows it). */
static bool front_load(const CliOptions *o, Front *f, bool dag_optional) {
  *f = (Front){0};
  if (!cli_load_library_and_spec(o, &f->lib, &f->spec)) return false;
  if (dag_optional && f->spec->nstmts > KAS_MAX_NODES) return true;
  f->dag = dag_build(f->spec);
  return f->dag != NULL;
}

static void front_free(Front *f) {
  dag_free(f->dag);
  spec_free(f->spec);
  library_free(f->lib);
}

/* ---- check -------------------------------------------------------------------------------- */

static const char *type_of_value(const Dag *dag, int v) {
  return dag->values[v].type ? dag->values[v].type->name : "?";
}

static void print_value_list(const Dag *dag, const char *title, const int *vals, int n) {
  printf("%s", title);
  for (int k = 0; k < n; k++)
    printf("%s%s (%s)", k ? ", " : " ", dag->values[vals[k]].label, type_of_value(dag, vals[k]));
  putchar('\n');
}

/* The ways the spec's loops can run their iterations side by side in groups of threads
 * (threads.c; docs/loops.md, "Iterations over threads"), when there are any:
 * "groups: N = 0..3 (4 groups of 32 calls); N = 0..3, M = 0..3 (16 groups of 11 calls)". */
static void print_groups(const Dag *dag) {
  ThreadLoop t[2];
  int n = threads_loops(dag, t);
  for (int k = 0; k < n; k++) {
    Dag *d = threads_dag(dag, &t[k]);
    char *loops = candidate_group_loops(d);
    printf("%s%s (%d groups of %d calls)", k ? "; " : "groups: ", loops, d->groups, d->nnodes);
    free(loops);
    dag_free(d);
  }
  if (n) putchar('\n');
}

/* The arrays and loops, then every unrolled call with its provenance:
 * "mvmul33#4  [N=1] ns.2 = mvmul33(inv1, dphi[1])".  From the spec: it needs no DAG. */
static void print_calls(const Spec *spec) {
  spec_print_structure(spec, stdout);
  printf("calls:\n");
  for (int i = 0; i < spec->nstmts; i++) {
    char *text = spec_statement_text(spec, i);
    printf("  %s#%d  %s\n", spec->stmts[i].fn->name, i, text);
    free(text);
  }
}

/* Each SSA value: its type, where it comes from, which calls read it, whether it is returned. */
static void print_values(const Dag *dag) {
  printf("values:\n");
  for (int v = 0; v < dag->nvalues; v++) {
    const Value *val = &dag->values[v];
    printf("  %-20s %-14s from ", val->label, type_of_value(dag, v));
    if (val->producer >= 0)
      printf("%s#%d", dag->nodes[val->producer].fn->name, val->producer);
    else
      printf("input");
    printf(", read by");
    for (int c = 0; c < val->nconsumers; c++)
      printf("%s%s#%d", c ? ", " : " ", dag->nodes[val->consumers[c]].fn->name,
             val->consumers[c]);
    if (!val->nconsumers) printf(" nothing");
    printf("%s\n", val->is_output ? ", returned" : "");
  }
}

/* One line per pair of directly dependent calls, with the values that flow between them. */
static int print_edges(const Dag *dag) {
  int nedges = 0;
  printf("edges:\n");
  for (int u = 0; u < dag->nnodes; u++) {
    for (int v = u + 1; v < dag->nnodes; v++) {
      if (!nodeset_has(&dag->succ[u], v)) continue;
      nedges++;
      printf("  %s#%d -> %s#%d  (", dag->nodes[u].fn->name, u, dag->nodes[v].fn->name, v);
      const DagNode *nd = &dag->nodes[v];
      bool first = true;
      for (int a = 0; a < nd->nargs; a++) {
        int val = nd->args[a];
        bool dup = false;
        for (int b = 0; b < a; b++) dup |= nd->args[b] == val;
        if (dag->values[val].producer != u || dup) continue;
        printf("%s%s", first ? "" : ", ", dag->values[val].label);
        first = false;
      }
      printf(")\n");
    }
  }
  if (!nedges) printf("  (none: the calls are independent)\n");
  return nedges;
}

/* "-" is the standard output, which then holds only the DAG (cmd_check); stdout_checked in
 * main.c reports a failed write. */
static bool write_dot_file(const Dag *dag, const char *path) {
  if (is_stdio_path(path)) {
    dag_write_dot(dag, stdout);
    return true;
  }
  FILE *f = output_open(path);
  if (!f) return false;
  dag_write_dot(dag, f);
  return output_close(f, path, "the DAG picture");
}

int cmd_check(const CliOptions *o) {
  Front f;
  if (!front_load(o, &f, true)) {
    front_free(&f);
    return EXIT_BAD_INPUT;
  }
  const Dag *dag = f.dag;
  bool dot_only = is_stdio_path(o->dot_path); /* --dot -: the DAG in place of the listing */
  if (dag && dot_only) {
    write_dot_file(dag, o->dot_path);
    front_free(&f);
    return EXIT_OK;
  }
  if (!dag) { /* too many calls for a DAG: the parsed spec only */
    if (!dot_only) {
      printf("%s: ok: %d calls (values and edges not shown: the call DAG holds at most %d for "
             "now)\n", f.spec->path, f.spec->nstmts, KAS_MAX_NODES);
      print_calls(f.spec);
    }
    if (o->dot_path)
      diag_error((SrcLoc){.file = dot_only ? "<stdout>" : o->dot_path},
                 "not written: the spec has no call DAG");
    front_free(&f);
    return o->dot_path ? EXIT_BAD_INPUT : EXIT_OK;
  }
  int nedges = 0;
  for (int u = 0; u < dag->nnodes; u++) nedges += nodeset_count(&dag->succ[u]);
  printf("%s: ok: %d calls, %d values, %d inputs, %d outputs, %d edges\n", f.spec->path,
         dag->nnodes, dag->nvalues, dag->ninputs, dag->noutputs, nedges);
  print_value_list(dag, "inputs:", dag->inputs, dag->ninputs);
  print_value_list(dag, "outputs:", dag->outputs, dag->noutputs);
  print_groups(dag);
  print_calls(f.spec);
  print_values(dag);
  print_edges(dag);
  bool ok = !o->dot_path || write_dot_file(dag, o->dot_path);
  front_free(&f);
  return ok ? EXIT_OK : EXIT_BAD_INPUT;
}

/* ---- fusions ------------------------------------------------------------------------------ */

int cmd_fusions(const CliOptions *o) {
  Front f;
  if (!front_load(o, &f, false)) {
    front_free(&f);
    return EXIT_BAD_INPUT;
  }
  FusionSet fs = fusion_enumerate(f.dag, o->max_fusion > 0 ? o->max_fusion : f.dag->nnodes);
  int status = fs.truncated ? EXIT_BAD_INPUT : EXIT_OK;
  if (!fs.truncated) {
    for (int i = 0; i < fs.n; i++) {
      NodeSet set = fusion_set_get(&fs, i);
      for (int v = nodeset_next(&set, 0); v >= 0; v = nodeset_next(&set, v + 1))
        printf("%s%s#%d", v == nodeset_next(&set, 0) ? "" : " ", f.dag->nodes[v].fn->name, v);
      putchar('\n');
    }
    printf("%d valid fusions\n", fs.n);
  }
  fusion_set_free(&fs);
  front_free(&f);
  return status;
}

/* ---- list --------------------------------------------------------------------------------- */

static void print_signature(const Function *fn) {
  printf("  %s(", fn->name);
  for (int p = 0; p < fn->nparams; p++)
    printf("%s%s", p ? ", " : "", fn->params[p] ? fn->params[p]->name : "?");
  printf(") -> %s\n", fn->result ? fn->result->name : "?");
  if (fn->formula) printf("    formula: %s\n", fn->formula);
}

/* "mmul33_2  block 3 x E x 1, 3 threads/element, E=32 recommended" and its load/save variants */
static void print_impl(const Impl *im) {
  printf("    %-12s block ", im->name);
  for (int d = 0; d < 3; d++) {
    if (d == im->size_dim)
      printf("%sE", d ? " x " : "");
    else
      printf("%s%d", d ? " x " : "", im->dims[d]);
  }
  printf(", %d thread%s/element", impl_threads(im, 1), impl_threads(im, 1) == 1 ? "" : "s");
  if (im->recommended_e) printf(", E=%d recommended", im->recommended_e);
  putchar('\n');
  for (int j = 0; j < im->nloads; j++)
    printf("      load %d  (argument %d): %s\n", im->loads[j].index, im->loads[j].arg,
           im->loads[j].variant && *im->loads[j].variant ? im->loads[j].variant : "-");
  for (int j = 0; j < im->nsaves; j++)
    printf("      save %d: %s\n", im->saves[j].index,
           im->saves[j].variant && *im->saves[j].variant ? im->saves[j].variant : "-");
}

int cmd_list(const CliOptions *o) {
  Library *lib = cli_load_library(o);
  if (!lib) return EXIT_BAD_INPUT;
  printf("library %s: %d types, %d functions\n", lib->dir, lib->ntypes, lib->nfuncs);
  printf("types:\n");
  for (int t = 0; t < lib->ntypes; t++)
    printf("  %-15s %3d float%s\n", lib->types[t].name, lib->types[t].size,
           lib->types[t].size == 1 ? "" : "s");
  printf("functions (block: threads along x, y and z; E: elements per block):\n");
  for (int f = 0; f < lib->nfuncs; f++) {
    print_signature(&lib->funcs[f]);
    for (int i = 0; i < lib->funcs[f].nimpls; i++) print_impl(&lib->funcs[f].impls[i]);
  }
  library_free(lib);
  return EXIT_OK;
}
