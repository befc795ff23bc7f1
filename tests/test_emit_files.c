/*
 * test_emit_files.c — the output folder's safety promise (emit_files.c): kasgen writes into a new
 * folder or one holding only its own files, never touches a foreign file, removes only files its
 * manifest lists, and refuses a tampered manifest.
 */
#include "testutil.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* The whole file (read_text_file: a missing one is NULL, with its diagnostic); a fixed buffer
 * here once cut kas_candidates.h at 4 KiB, hiding its later lines from the assertions. */
static char *get_file(const char *dir, const char *rel) {
  char *p = xasprintf("%s/%s", dir, rel);
  char *text = read_text_file(p, NULL);
  free(p);
  return text;
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

/* Temporary files are recognised by the exact names kasgen records in its manifest, never by a
 * pattern: a user's ".notes.kasgen-tmp-abc123" was once deleted as a leftover. */
static void user_files_named_like_temporaries_are_refused(void **state) {
  (void)state;
  static const char *const names[] = {".notes.kasgen-tmp-abc123", ".a.txt.kasgen-tmp-AbC123",
                                      ".a.txt.kasgen-tmp", ".kasgen-manifest.kasgen-tmp"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char *dir = make_tempdir();
    assert_true(run_emit(dir, (const char *const[]){"a.txt", "one\n", NULL}));
    put_file(dir, names[i], "mine\n");
    diag_reset();
    capture_start();
    assert_null(emit_dir_open(dir));
    char *msgs = capture_end();
    assert_contains(msgs, names[i]);
    free(msgs);
    diag_reset();
    assert_file(dir, names[i], "mine\n");
    rm_rf(dir);
    free(dir);
  }
}

/* What a run leaves when it dies between its first manifest and its last: files of both runs,
 * temporaries, a half-written manifest temp.  All of it is listed, so the rerun accepts the
 * folder, and cleans it up to exactly its own files. */
static void interrupted_run_can_be_rerun(void **state) {
  (void)state;
  char *dir = make_tempdir();
  assert_true(run_emit(dir, (const char *const[]){"a.txt", "one\n", "sub/b.txt", "two\n", NULL}));
  put_file(dir, ".kasgen-manifest",
           "# Files written by kasgen in this folder.\n.a.txt.kasgen-tmp\n.c.txt.kasgen-tmp\n"
           "a.txt\nc.txt\nsub/.b.txt.kasgen-tmp\nsub/b.txt\n");
  put_file(dir, ".c.txt.kasgen-tmp", "half of c");
  put_file(dir, "sub/.b.txt.kasgen-tmp", "half of b");
  put_file(dir, ".kasgen-manifest.kasgen-tmp",
           "# Files written by kasgen in this folder.\na.txt\nc.txt\n");
  diag_reset();
  assert_true(run_emit(dir, (const char *const[]){"a.txt", "new a\n", "c.txt", "new c\n", NULL}));
  assert_int_equal(diag_error_count(), 0);
  assert_file(dir, "a.txt", "new a\n");
  assert_file(dir, "c.txt", "new c\n");
  assert_false(exists(dir, "sub")); /* b.txt and its temporary removed, then the empty folder */
  assert_false(exists(dir, ".c.txt.kasgen-tmp"));
  assert_false(exists(dir, ".kasgen-manifest.kasgen-tmp"));
  assert_file(dir, ".kasgen-manifest",
              "# Files written by kasgen in this folder.  kasgen overwrites and removes only\n"
              "# these; any other file here makes it refuse to write.  Do not edit.\n"
              "a.txt\nc.txt\n");
  assert_int_equal(count_entries(dir), 3);
  rm_rf(dir);
  free(dir);
}

/* A write that fails half way (a full disk; here a file size limit) exits with an error naming
 * the file, and leaves a folder the next run accepts: the manifest went first. */
static void disk_full_run_can_be_rerun(void **state) {
  (void)state;
  char *dir = make_tempdir();
  char *big = xmalloc(20000);
  memset(big, 'x', 19999);
  big[19999] = '\0';
  assert_true(run_emit(dir, (const char *const[]){"old.txt", "old\n", NULL}));
  char *log = xasprintf("%s.log", dir);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct rlimit lim = {8192, 8192};
    signal(SIGXFSZ, SIG_IGN); /* write() then fails with EFBIG, like ENOSPC */
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0 || !freopen(log, "w", stderr)) _exit(3);
    /* no cmocka assertion in the child: a failure must not run the other tests here */
    EmitDir *d = emit_dir_open(dir);
    bool ok = d && emit_dir_write(d, "a.txt", "small\n") && emit_dir_write(d, "b.txt", big);
    ok = emit_dir_close(d) && ok;
    fflush(stderr); /* _exit does not flush, and stderr is now a buffered file */
    _exit(ok ? 0 : 1);
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 1);
  char *msgs = read_text_file(log, NULL);
  assert_contains(msgs, "/b.txt: error: cannot write: File too large; this file is lost");
  free(msgs);
  assert_file(dir, "a.txt", "small\n");
  assert_false(exists(dir, "b.txt"));
  assert_false(exists(dir, ".b.txt.kasgen-tmp"));
  char *m = get_file(dir, ".kasgen-manifest");
  assert_contains(m, "\nb.txt\n");
  assert_contains(m, "\nold.txt\n");
  free(m);
  diag_reset();
  assert_true(run_emit(dir, (const char *const[]){"a.txt", "small\n", "b.txt", big, NULL}));
  assert_false(exists(dir, "old.txt"));
  char *bpath = xasprintf("%s/b.txt", dir);
  char *got = read_text_file(bpath, NULL);
  assert_string_equal(got, big);
  free(got);
  free(bpath);
  unlink(log);
  free(log);
  free(big);
  rm_rf(dir);
  free(dir);
}

/* The reproducers of issue #16: nothing outside the folder is ever touched through a symbolic
 * link, and no run output is ever deleted through a manifest. */
static void symlinks_and_run_outputs_are_never_followed_or_deleted(void **state) {
  (void)state;
  char *tmp = make_tempdir();
  char *u = xasprintf("%s/u", tmp), *dir = xasprintf("%s/d", tmp);
  assert_int_equal(mkdir(u, 0777), 0);
  put_file(u, "important.txt", "keep\n");
  put_file(u, "kernels.cu", "keep\n");
  assert_true(run_emit(dir, (const char *const[]){"a.txt", "one\n", NULL}));
  char *build = xasprintf("%s/build", dir);
  /* 1. DIR/build -> ../u and a manifest entry build/important.txt */
  assert_int_equal(symlink("../u", build), 0);
  put_file(dir, ".kasgen-manifest", "a.txt\nbuild/important.txt\n");
  diag_reset();
  capture_start();
  assert_null(emit_dir_open(dir));
  char *msgs = capture_end();
  assert_contains(msgs, ".kasgen-manifest:2:1: error: manifest entry 'build/important.txt' is "
                        "not a path kasgen writes (a run output");
  free(msgs);
  assert_file(u, "important.txt", "keep\n");
  assert_int_equal(unlink(build), 0);
  /* 2. a manifest that lists results.xml, which kasgen promises never to remove */
  put_file(dir, "results.xml", "<measured/>");
  put_file(dir, ".kasgen-manifest", "a.txt\nresults.xml\n");
  assert_null(emit_dir_open(dir));
  assert_file(dir, "results.xml", "<measured/>");
  put_file(dir, ".kasgen-manifest", "a.txt\n");
  /* 3. a link in the middle of a listed path: cand01 -> ../u, manifest cand01/kernels.cu */
  char *cand = xasprintf("%s/cand01", dir);
  assert_int_equal(symlink("../u", cand), 0);
  put_file(dir, ".kasgen-manifest", "a.txt\ncand01/kernels.cu\n");
  assert_null(emit_dir_open(dir));
  assert_file(u, "kernels.cu", "keep\n");
  assert_int_equal(unlink(cand), 0);
  /* 4. links that appear while kasgen runs: a folder to write into, a folder to clean up */
  put_file(dir, ".kasgen-manifest", "a.txt\n");
  assert_true(run_emit(dir, (const char *const[]){"a.txt", "x\n", "old/kernels.cu", "o\n",
                                                  NULL}));
  diag_reset();
  EmitDir *d = emit_dir_open(dir);
  assert_non_null(d);
  assert_true(emit_dir_write(d, "cand01/kernels.cu", "overwrite?\n"));
  char *old = xasprintf("%s/old", dir);
  rm_rf(old);
  assert_int_equal(symlink("../u", old), 0);
  assert_int_equal(symlink("../u", cand), 0);
  capture_start();
  assert_false(emit_dir_close(d));
  msgs = capture_end();
  assert_contains(msgs, "/cand01/kernels.cu: error: cannot create the folder for this file");
  free(msgs);
  diag_reset();
  assert_file(u, "kernels.cu", "keep\n");
  assert_file(u, "important.txt", "keep\n");
  assert_int_equal(count_entries(u), 2);
  /* 5. the output folder itself a link: refused, the target untouched */
  char *link = xasprintf("%s/link", tmp);
  assert_int_equal(symlink("u", link), 0);
  assert_null(emit_dir_open(link));
  diag_reset();
  assert_int_equal(count_entries(u), 2);
  free(link);
  free(old);
  free(cand);
  free(build);
  free(u);
  free(dir);
  rm_rf(tmp);
  free(tmp);
}

/* Found by fuzz_outdir: a listed file that is already gone must not make kasgen remove the empty
 * folders on its path, which it did not empty (they may be the user's). */
static void empty_folders_of_a_gone_file_are_left_alone(void **state) {
  (void)state;
  char *dir = make_tempdir();
  char *a = xasprintf("%s/a", dir), *aa = xasprintf("%s/a/a", dir);
  assert_int_equal(mkdir(a, 0777), 0);
  assert_int_equal(mkdir(aa, 0777), 0);
  put_file(dir, ".kasgen-manifest", "a/a/gone.txt\n");
  diag_reset();
  assert_true(run_emit(dir, (const char *const[]){"b.txt", "b\n", NULL}));
  assert_true(exists(dir, "a/a"));
  /* a file that is there is removed, and the folders it leaves empty with it */
  put_file(dir, "a/a/x.txt", "ours\n");
  put_file(dir, ".kasgen-manifest", "a/a/x.txt\nb.txt\n");
  assert_true(run_emit(dir, (const char *const[]){"b.txt", "b\n", NULL}));
  assert_false(exists(dir, "a"));
  free(a);
  free(aa);
  rm_rf(dir);
  free(dir);
}

/* Found by fuzz_outdir: a user's folder named like the temporary file of a file to be written
 * once made the write fail after the manifest listed that name, and every later run refused the
 * folder ("listed in the manifest as a file but now a folder").  Now the places are checked before
 * the manifest is written: nothing is written, the error names the folder, the next run opens. */
static void names_in_the_way_are_found_before_anything_is_written(void **state) {
  (void)state;
  char *dir = make_tempdir();
  assert_true(run_emit(dir, (const char *const[]){"b.txt", "b\n", NULL}));
  char *m_before = get_file(dir, ".kasgen-manifest");
  char *in_way = xasprintf("%s/.a.txt.kasgen-tmp", dir);
  assert_int_equal(mkdir(in_way, 0777), 0); /* an empty folder: the tree check accepts it */
  diag_reset();
  capture_start();
  assert_false(run_emit(dir, (const char *const[]){"a.txt", "a\n", "b.txt", "new\n", NULL}));
  char *msgs = capture_end();
  assert_contains(msgs, "/.a.txt.kasgen-tmp: error: something kasgen did not write has the name "
                        "of kasgen's temporary file; nothing was written");
  free(msgs);
  char *m_after = get_file(dir, ".kasgen-manifest");
  assert_string_equal(m_before, m_after);
  assert_file(dir, "b.txt", "b\n");
  assert_false(exists(dir, "a.txt"));
  assert_true(exists(dir, ".a.txt.kasgen-tmp"));
  diag_reset();
  EmitDir *d = emit_dir_open(dir); /* still kasgen's folder */
  assert_non_null(d);
  assert_true(emit_dir_close(d));
  free(m_before);
  free(m_after);
  free(in_way);
  rm_rf(dir);
  free(dir);
}

/* Found by fuzz_outdir: a listed file that is gone, whose name this run needs as a folder, once
 * stayed in the manifest as a "file" that is now a folder, and the next run refused the folder. */
static void a_listed_name_becoming_a_folder_leaves_the_manifest(void **state) {
  (void)state;
  char *dir = make_tempdir();
  put_file(dir, ".kasgen-manifest", "common\nb.txt\n");
  put_file(dir, "b.txt", "b\n");
  diag_reset();
  assert_true(run_emit(dir, (const char *const[]){"common/x.h", "x\n", NULL}));
  assert_int_equal(diag_error_count(), 0);
  char *m = get_file(dir, ".kasgen-manifest");
  assert_null(strstr(m, "\ncommon\n"));
  assert_contains(m, "\ncommon/x.h\n");
  free(m);
  assert_true(run_emit(dir, (const char *const[]){"common/x.h", "y\n", NULL})); /* reopens */
  rm_rf(dir);
  free(dir);
}

/* A manifest of 200,000 lines (once a minute of pairwise comparisons) is read, checked against
 * the tree and replaced by one listing this run's files. */
static void huge_manifest_is_handled(void **state) {
  (void)state;
  char *dir = make_tempdir();
  StrBuf sb;
  sb_init(&sb);
  for (int i = 0; i < 200000; i++) sb_printf(&sb, "cand%06d/kernels.cu\n", i);
  sb_puts(&sb, "a.txt\n");
  put_file(dir, "a.txt", "one\n");
  put_file(dir, ".kasgen-manifest", sb.data);
  sb_free(&sb);
  diag_reset();
  assert_true(run_emit(dir, (const char *const[]){"a.txt", "two\n", NULL}));
  assert_int_equal(diag_error_count(), 0);
  assert_file(dir, "a.txt", "two\n");
  char *m = get_file(dir, ".kasgen-manifest");
  assert_null(strstr(m, "cand"));
  free(m);
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
  assert_non_null(strstr(h, "#define KAS_PREDICTED_FOR \"\"\n")); /* the analytic model */
  /* the harness writes it into results.xml: every array element-major, said so */
  assert_non_null(strstr(h, "#define KAS_LAYOUTS \"element\"\n"));
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
      cmocka_unit_test(user_files_named_like_temporaries_are_refused),
      cmocka_unit_test(interrupted_run_can_be_rerun),
      cmocka_unit_test(disk_full_run_can_be_rerun),
      cmocka_unit_test(symlinks_and_run_outputs_are_never_followed_or_deleted),
      cmocka_unit_test(empty_folders_of_a_gone_file_are_left_alone),
      cmocka_unit_test(names_in_the_way_are_found_before_anything_is_written),
      cmocka_unit_test(a_listed_name_becoming_a_folder_leaves_the_manifest),
      cmocka_unit_test(huge_manifest_is_handled),
      cmocka_unit_test(run_outputs_are_tolerated_never_written),
      cmocka_unit_test(emit_all_writes_the_documented_layout),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
