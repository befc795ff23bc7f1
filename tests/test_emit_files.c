/*
 * test_emit_files.c — the output folder's safety promise (emit_files.c): kasgen writes into a new
 * folder or one holding only its own files, never touches a foreign file, removes only files its
 * manifest lists, and refuses a tampered manifest.
 */
#include "testutil.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *make_tempdir(void) {
  char *t = xstrdup("/tmp/kasgen-test-emit-XXXXXX");
  assert_non_null(mkdtemp(t));
  return t;
}

static void rm_rf(const char *path) {
  char *cmd = xasprintf("rm -rf '%s'", path);
  assert_int_equal(system(cmd), 0);
  free(cmd);
}

static void put_file(const char *dir, const char *rel, const char *text) {
  char *p = xasprintf("%s/%s", dir, rel);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  free(p);
}

static char *get_file(const char *dir, const char *rel) {
  char *p = xasprintf("%s/%s", dir, rel);
  FILE *f = fopen(p, "r");
  free(p);
  if (!f) return NULL;
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return xstrdup(buf);
}

static bool exists(const char *dir, const char *rel) {
  char *p = xasprintf("%s/%s", dir, rel);
  struct stat st;
  bool r = lstat(p, &st) == 0;
  free(p);
  return r;
}

static void assert_file(const char *dir, const char *rel, const char *want) {
  char *got = get_file(dir, rel);
  assert_non_null(got);
  assert_string_equal(got, want);
  free(got);
}

/* Number of entries in a folder other than . and .. */
static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  closedir(d);
  return n;
}

/* One run: writes the given (path, text) pairs. */
static bool run_emit(const char *dir, const char *const *files) {
  EmitDir *d = emit_dir_open(dir);
  if (!d) return false;
  for (int i = 0; files[i]; i += 2) assert_true(emit_dir_write(d, files[i], files[i + 1]));
  return emit_dir_close(d);
}

static void new_folder_gets_files_and_manifest(void **state) {
  (void)state;
  char *tmp = make_tempdir();
  char *dir = xasprintf("%s/out/spec", tmp); /* neither exists: both are created */
  const char *files[] = {"Makefile", "all:\n", "cand01/kernels.cu", "k1\n", NULL};
  assert_true(run_emit(dir, files));
  assert_file(dir, "Makefile", "all:\n");
  assert_file(dir, "cand01/kernels.cu", "k1\n");
  char *m = get_file(dir, ".kasgen-manifest");
  assert_non_null(strstr(m, "\nMakefile\n"));
  assert_non_null(strstr(m, "\ncand01/kernels.cu\n"));
  free(m);
  assert_int_equal(count_entries(dir), 3); /* no temporary file left behind */
  rm_rf(tmp);
  free(dir);
  free(tmp);
}

static void rerun_overwrites_own_and_removes_stale(void **state) {
  (void)state;
  char *dir = make_tempdir();
  const char *first[] = {"a.txt", "one\n", "cand02/kernels.cu", "old\n", NULL};
  assert_true(run_emit(dir, first));
  const char *second[] = {"a.txt", "two\n", NULL};
  assert_true(run_emit(dir, second));
  assert_file(dir, "a.txt", "two\n");
  assert_false(exists(dir, "cand02/kernels.cu")); /* ours, no longer written: removed */
  assert_false(exists(dir, "cand02"));            /* its folder became empty: removed */
  char *m = get_file(dir, ".kasgen-manifest");
  assert_null(strstr(m, "cand02"));
  free(m);
  rm_rf(dir);
  free(dir);
}

static void foreign_file_is_refused_and_untouched(void **state) {
  (void)state;
  char *dir = make_tempdir();
  const char *first[] = {"a.txt", "one\n", NULL};
  assert_true(run_emit(dir, first));
  put_file(dir, "notes.txt", "mine\n");
  diag_reset();
  assert_null(emit_dir_open(dir));
  assert_true(diag_error_count() > 0);
  assert_file(dir, "notes.txt", "mine\n");
  assert_file(dir, "a.txt", "one\n");
  /* a foreign file in a subfolder counts too */
  char *notes = xasprintf("%s/notes.txt", dir);
  assert_int_equal(unlink(notes), 0);
  free(notes);
  char *sub = xasprintf("%s/cand01", dir);
  assert_int_equal(mkdir(sub, 0777), 0);
  put_file(dir, "cand01/mine.cu", "x\n");
  assert_null(emit_dir_open(dir));
  assert_file(dir, "cand01/mine.cu", "x\n");
  diag_reset();
  free(sub);
  rm_rf(dir);
  free(dir);
}

static void existing_folder_without_manifest_must_be_empty(void **state) {
  (void)state;
  char *dir = make_tempdir();
  const char *files[] = {"a.txt", "x\n", NULL};
  assert_true(run_emit(dir, files)); /* empty: accepted */
  char *dir2 = make_tempdir();
  put_file(dir2, "Makefile", "users own\n");
  diag_reset();
  assert_null(emit_dir_open(dir2)); /* same name as ours, but no manifest says so */
  assert_file(dir2, "Makefile", "users own\n");
  diag_reset();
  rm_rf(dir);
  rm_rf(dir2);
  free(dir);
  free(dir2);
}

static void tampered_manifest_is_refused(void **state) {
  (void)state;
  const char *bad[] = {"../outside.txt\n", "/etc/passwd\n", "a/../../b\n", "a//b\n",
                       "a b\n", ".kasgen-manifest\n"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *tmp = make_tempdir();
    char *dir = xasprintf("%s/d", tmp);
    assert_int_equal(mkdir(dir, 0777), 0);
    put_file(tmp, "outside.txt", "keep\n");
    put_file(dir, ".kasgen-manifest", bad[i]);
    diag_reset();
    assert_null(emit_dir_open(dir));
    assert_int_equal(diag_error_count(), 1);
    assert_file(tmp, "outside.txt", "keep\n");
    diag_reset();
    rm_rf(tmp);
    free(dir);
    free(tmp);
  }
}

static void listed_path_now_a_folder_or_link_is_refused(void **state) {
  (void)state;
  char *dir = make_tempdir();
  const char *first[] = {"a.txt", "one\n", "b.txt", "two\n", NULL};
  assert_true(run_emit(dir, first));
  char *a = xasprintf("%s/a.txt", dir);
  assert_int_equal(unlink(a), 0);
  assert_int_equal(mkdir(a, 0777), 0);
  diag_reset();
  assert_null(emit_dir_open(dir));
  assert_int_equal(rmdir(a), 0);
  /* a symbolic link where our file was: following it could overwrite anything */
  assert_int_equal(symlink("/etc/hostname", a), 0);
  assert_null(emit_dir_open(dir));
  assert_int_equal(unlink(a), 0);
  diag_reset();
  /* with the file simply gone the folder is fine again */
  const char *again[] = {"a.txt", "three\n", NULL};
  assert_true(run_emit(dir, again));
  assert_false(exists(dir, "b.txt"));
  free(a);
  rm_rf(dir);
  free(dir);
}

static void target_is_a_file_is_refused(void **state) {
  (void)state;
  char *tmp = make_tempdir();
  put_file(tmp, "plain", "data\n");
  char *p = xasprintf("%s/plain", tmp);
  diag_reset();
  assert_null(emit_dir_open(p));
  assert_file(tmp, "plain", "data\n");
  diag_reset();
  free(p);
  rm_rf(tmp);
  free(tmp);
}

static void failed_run_keeps_previous_files(void **state) {
  (void)state;
  char *dir = make_tempdir();
  const char *first[] = {"a.txt", "one\n", "b.txt", "two\n", NULL};
  assert_true(run_emit(dir, first));
  diag_reset();
  EmitDir *d = emit_dir_open(dir);
  assert_non_null(d);
  assert_true(emit_dir_write(d, "a.txt", "new\n"));
  diag_error((SrcLoc){.file = "x"}, "simulated failure of an emitter");
  assert_false(emit_dir_close(d));
  diag_reset();
  assert_file(dir, "b.txt", "two\n"); /* not removed: the run failed */
  char *m = get_file(dir, ".kasgen-manifest");
  assert_non_null(strstr(m, "\nb.txt\n"));
  free(m);
  assert_true(run_emit(dir, (const char *const[]){"a.txt", "ok\n", NULL}));
  rm_rf(dir);
  free(dir);
}

static void bad_write_paths_are_rejected(void **state) {
  (void)state;
  char *dir = make_tempdir();
  EmitDir *d = emit_dir_open(dir);
  assert_non_null(d);
  diag_reset();
  assert_false(emit_dir_write(d, "../x", "a"));
  assert_false(emit_dir_write(d, "/tmp/x", "a"));
  assert_false(emit_dir_write(d, ".kasgen-manifest", "a"));
  assert_int_equal(diag_error_count(), 3);
  diag_reset();
  assert_true(emit_dir_close(d));
  rm_rf(dir);
  free(dir);
}

static void stale_temporary_files_are_cleaned(void **state) {
  (void)state;
  char *dir = make_tempdir();
  assert_true(run_emit(dir, (const char *const[]){"a.txt", "one\n", NULL}));
  put_file(dir, ".a.txt.kasgen-tmp-AbC123", "half");
  assert_true(run_emit(dir, (const char *const[]){"a.txt", "two\n", NULL}));
  assert_false(exists(dir, ".a.txt.kasgen-tmp-AbC123"));
  /* a name that only resembles one is the user's */
  put_file(dir, ".a.txt.kasgen-tmp-toolongname", "mine");
  diag_reset();
  assert_null(emit_dir_open(dir));
  diag_reset();
  rm_rf(dir);
  free(dir);
}

static void run_outputs_are_tolerated_never_written(void **state) {
  (void)state;
  char *dir = make_tempdir();
  assert_true(run_emit(dir, (const char *const[]){"Makefile", "all:\n", NULL}));
  char *build = xasprintf("%s/build", dir);
  assert_int_equal(mkdir(build, 0777), 0);
  put_file(dir, "build/harness", "binary");
  put_file(dir, "results.xml", "<x/>");
  assert_true(run_emit(dir, (const char *const[]){"Makefile", "all:\n", NULL}));
  assert_file(dir, "build/harness", "binary");
  assert_file(dir, "results.xml", "<x/>");
  EmitDir *d = emit_dir_open(dir);
  assert_non_null(d);
  diag_reset();
  assert_false(emit_dir_write(d, "results.xml", "overwritten"));
  assert_false(emit_dir_write(d, "build/x.o", "overwritten"));
  diag_reset();
  assert_true(emit_dir_close(d));
  assert_file(dir, "results.xml", "<x/>");
  free(build);
  rm_rf(dir);
  free(dir);
}

/* The whole emission of a real spec (library, search, analytic model): every file of
 * docs/generated.md is there, the candidate table matches the search result, the embedding API is
 * named after the spec's variables, and a rerun over the folder works. */
static void emit_all_writes_the_documented_layout(void **state) {
  (void)state;
  Library *lib = library_load(TEST_LIBRARY);
  assert_non_null(lib);
  Spec *spec = spec_load(TEST_SPECS "/synctest.spec", lib);
  assert_non_null(spec);
  Dag *dag = dag_build(spec);
  TimingDb *db = timingdb_analytic();
  SearchOptions so = {.top = 3, .max_fusion = 6};
  SearchResult *res = search_run(dag, db, &so);
  assert_non_null(res);
  assert_true(res->ncands >= 1 && res->ncands <= 3);
  char *tmp = make_tempdir();
  EmitOptions eo = {.out_dir = tmp, .default_n = 1000};
  assert_true(emit_all(dag, lib, db, res, &eo));
  char *dir = xasprintf("%s/synctest", tmp);
  const char *files[] = {"Makefile", "index.txt", "plot.gp", "common/harness.cu",
                         "common/kas_candidates.h", "common/all_kernels.cu", "common/cpu_graph.c",
                         "common/check_cpu.cpp", "cand01/kernels.cu", "unfused/kernels.cu",
                         "embed/kas_synctest.h", "embed/kas_synctest.cu", NULL};
  for (int i = 0; files[i]; i++) assert_true(exists(dir, files[i]));
  char *h = get_file(dir, "common/kas_candidates.h");
  char *want = xasprintf("#define KAS_NCANDIDATES %d\n", res->ncands + 1);
  assert_non_null(strstr(h, want));
  assert_non_null(strstr(h, "#define KAS_DEFAULT_N 1000\n"));
  assert_non_null(strstr(h, "kas_unfused_launch_host"));
  free(want);
  free(h);
  /* inputs in `input` order, outputs in `return` order, as parameters of the C API */
  char *eh = get_file(dir, "embed/kas_synctest.h");
  StrBuf proto;
  sb_init(&proto);
  sb_puts(&proto, "kas_status kas_synctest(");
  for (int i = 0; i < dag->ninputs; i++)
    sb_printf(&proto, "const float *%s, ", spec->vars[dag->values[dag->inputs[i]].var].name);
  assert_non_null(strstr(eh, proto.data));
  sb_free(&proto);
  free(eh);
  assert_false(exists(dir, "cand04"));
  assert_true(emit_all(dag, lib, db, res, &eo)); /* rerun over our own folder */
  free(dir);
  rm_rf(tmp);
  free(tmp);
  search_result_free(res);
  timingdb_free(db);
  dag_free(dag);
  spec_free(spec);
  library_free(lib);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(new_folder_gets_files_and_manifest),
      cmocka_unit_test(rerun_overwrites_own_and_removes_stale),
      cmocka_unit_test(foreign_file_is_refused_and_untouched),
      cmocka_unit_test(existing_folder_without_manifest_must_be_empty),
      cmocka_unit_test(tampered_manifest_is_refused),
      cmocka_unit_test(listed_path_now_a_folder_or_link_is_refused),
      cmocka_unit_test(target_is_a_file_is_refused),
      cmocka_unit_test(failed_run_keeps_previous_files),
      cmocka_unit_test(bad_write_paths_are_rejected),
      cmocka_unit_test(stale_temporary_files_are_cleaned),
      cmocka_unit_test(run_outputs_are_tolerated_never_written),
      cmocka_unit_test(emit_all_writes_the_documented_layout),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
