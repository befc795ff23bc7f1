/*
 * fuzz_outdir.c — libFuzzer target for the output folder (src/emit_files.c).  Each input is a
 * small program that builds a tree in a sandbox: files, folders, symbolic links (to files and
 * folders outside the output folder, inside it, dangling; the output folder itself a link), a
 * manifest of valid, tampered and run-output entries, leftover temporaries and temporary-looking
 * user files.  Then kasgen writes into it: emit_dir_open, emit_dir_write of some files,
 * emit_dir_close; if that worked, a second run under a file-size limit (a disk that fills up half
 * way), and if that failed, a third run without the limit.  The oracle, after every run:
 *   - nothing outside the output folder changed (kind, content, link target);
 *   - inside it, no entry that the manifest did not list changed or went away, no symbolic link
 *     changed, and a folder went away only if it held nothing but folders and listed files;
 *   - when emit_dir_open refused, nothing changed at all;
 *   - when emit_dir_close succeeded, every file holds the text written and the manifest lists
 *     exactly the files written;
 *   - kasgen's folder stays kasgen's: after a run that worked, or one that failed half way under
 *     the size limit, the next run opens the folder (it never refuses kasgen's own files).
 * The sandbox is a fresh mkdtemp folder (in /dev/shm when it exists, else /tmp, or in
 * $FUZZ_OUTDIR_BASE); every symbolic link the program makes points inside it, so a bug in kasgen
 * cannot reach anything else.  Build: tests/fuzz/build.sh.
 */
#include "kasgen.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char *sandbox;
static char *run_root, *out_dir, *outside; /* sandbox/run, sandbox/run/d, sandbox/run/outside */

/* ---- the input, read as a stream of bytes (zeros when it runs out) -------------------------- */

typedef struct {
  const uint8_t *p;
  size_t n;
} Input;

static unsigned next(Input *in) {
  if (!in->n) return 0;
  in->n--;
  return *in->p++;
}

static const char *pick(Input *in, const char *const *pool, size_t npool) {
  return pool[next(in) % npool];
}

#define PICK(in, pool) pick(in, pool, sizeof pool / sizeof *pool)

/* Names the tree is made of: kasgen's own, run outputs, temporaries and look-alikes. */
static const char *const names[] = {
    "a", "b", "cand01", "common", "Makefile", "build", "results.xml", "plot.png",
    ".kasgen-manifest", ".kasgen-manifest.kasgen-tmp", ".a.kasgen-tmp", ".Makefile.kasgen-tmp",
    ".notes.kasgen-tmp-abc123", "kernels.cu", ".plot.png.kasgen-tmp-7", "x.cu"};

/* A relative path of 1 to 3 names. */
static char *gen_path(Input *in) {
  int depth = 1 + (int)(next(in) % 3);
  StrBuf sb;
  sb_init(&sb);
  for (int k = 0; k < depth; k++) sb_printf(&sb, "%s%s", k ? "/" : "", PICK(in, names));
  return sb_take(&sb);
}

/* Where the program's links point: all inside the sandbox. */
static char *gen_target(Input *in, const char *rel) {
  switch (next(in) % 8) {
  case 0: return xasprintf("%s/o1", outside);
  case 1: return xstrdup(outside);
  case 2: return xasprintf("%s/od", outside);
  case 3: { /* ../outside/o1 from the link's own folder */
    StrBuf sb;
    sb_init(&sb);
    for (const char *s = rel; *s; s++)
      if (*s == '/') sb_puts(&sb, "../");
    sb_puts(&sb, "../outside/o1");
    return sb_take(&sb);
  }
  case 4: return xstrdup("nonexistent");
  case 5: return xstrdup("a");
  case 6: return xstrdup(".");
  default: return xstrdup("..");
  }
}

/* ---- building the tree -------------------------------------------------------------------- */

static char *in_out(const char *rel) { return xasprintf("%s/%s", out_dir, rel); }

/* mkdir -p of rel's folders inside the output folder; false if one is not a folder. */
static bool make_parents(const char *rel) {
  char *p = in_out(rel);
  bool ok = true;
  for (char *s = p + strlen(out_dir) + 1; ok && (s = strchr(s, '/')); s++) {
    *s = '\0';
    struct stat st;
    if (lstat(p, &st) != 0) ok = mkdir(p, 0777) == 0;
    else ok = S_ISDIR(st.st_mode);
    *s = '/';
  }
  free(p);
  return ok;
}

static void put(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
  if (fd < 0) return;
  if (write(fd, text, strlen(text)) < 0) abort();
  close(fd);
}

static const char *const manifest_junk[] = {
    "../outside/o1", "a/../../outside/o1", "build/x", "results.xml", ".kasgen-manifest",
    "a//b", "a b", "plot.png", "./a", "", "# comment", "a\r"};

static void build_tree(Input *in, StrBuf *manifest, bool *want_manifest) {
  mkdir(out_dir, 0777);
  int ops = (int)(next(in) % 24);
  for (int op = 0; op < ops; op++) {
    unsigned code = next(in) % 8;
    char *rel = gen_path(in);
    char *full = in_out(rel);
    if (code <= 3 && make_parents(rel)) {
      struct stat st;
      bool free_name = lstat(full, &st) != 0;
      if (code == 0 && free_name) put(full, "user data\n");
      if (code == 1 && free_name) mkdir(full, 0777);
      if (code == 2 && free_name) {
        char *target = gen_target(in, rel);
        if (symlink(target, full) != 0 && errno != EEXIST) abort();
        free(target);
      }
      if (code == 3) sb_printf(manifest, "%s\n", rel); /* listed, whatever it is */
    } else if (code == 4) {
      sb_printf(manifest, "%s\n", PICK(in, manifest_junk));
      if (next(in) % 4 == 0) sb_printf(manifest, "%s/o1\n", outside); /* absolute, inside */
    } else if (code == 5) {
      *want_manifest = !*want_manifest;
    } else if (code == 6) { /* the manifest's temporary: a real leftover, or a user's file */
      char *temp = in_out(".kasgen-manifest.kasgen-tmp");
      put(temp, next(in) % 2 ? "# Files written by kasgen in this folder.\na\n" : "mine\n");
      free(temp);
    } else if (code == 7 && op == 0) { /* the output folder itself a link */
      rmdir(out_dir);
      if (symlink(next(in) % 2 ? outside : "outside/od", out_dir) != 0) abort();
    }
    free(full);
    free(rel);
  }
  if (*want_manifest) {
    char *m = in_out(".kasgen-manifest");
    struct stat st;
    if (lstat(m, &st) != 0 || S_ISREG(st.st_mode)) put(m, manifest->data ? manifest->data : "");
    free(m);
  }
}

/* ---- snapshots of the sandbox -------------------------------------------------------------- */

typedef struct {
  char *rel;      /* below run_root */
  mode_t kind;    /* S_IFREG, S_IFDIR, S_IFLNK, ... */
  char *content;  /* a file's text, a link's target */
} Entry;

typedef struct {
  Entry *e;
  int n, cap;
} Snapshot;

static Snapshot *snap_target;

static char *slurp(const char *path) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return xstrdup("(unreadable)");
  StrBuf sb;
  sb_init(&sb);
  char buf[4096];
  ssize_t got;
  while ((got = read(fd, buf, sizeof buf)) > 0)
    for (ssize_t i = 0; i < got; i++) sb_putc(&sb, buf[i] ? buf[i] : '\1');
  close(fd);
  return sb_take(&sb);
}

static int record(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)flag;
  (void)ftw;
  Snapshot *s = snap_target;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 64;
    s->e = xrealloc(s->e, (size_t)s->cap * sizeof *s->e);
  }
  Entry *e = &s->e[s->n++];
  e->rel = xstrdup(path + strlen(run_root));
  e->kind = st->st_mode & S_IFMT;
  e->content = NULL;
  if (S_ISREG(st->st_mode)) e->content = slurp(path);
  if (S_ISLNK(st->st_mode)) {
    char target[4096];
    ssize_t n = readlink(path, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    e->content = xstrdup(target);
  }
  return 0;
}

static Snapshot snapshot(void) {
  Snapshot s = {0};
  snap_target = &s;
  if (nftw(run_root, record, 16, FTW_PHYS) != 0) abort();
  return s;
}

static void snapshot_free(Snapshot *s) {
  for (int i = 0; i < s->n; i++) free(s->e[i].rel), free(s->e[i].content);
  free(s->e);
}

static const Entry *find(const Snapshot *s, const char *rel) {
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->e[i].rel, rel)) return &s->e[i];
  return NULL;
}

static bool same(const Entry *a, const Entry *b) {
  return b && a->kind == b->kind &&
         (!a->content || (b->content && !strcmp(a->content, b->content)));
}

/* ---- the oracle ---------------------------------------------------------------------------- */

/* The old manifest's entries, as relative paths below run_root ("/d/<entry>"). */
typedef struct {
  char **rel;
  int n;
} Listed;

static Listed listed_of(const Snapshot *before) {
  Listed l = {0};
  const Entry *m = find(before, "/d/.kasgen-manifest");
  if (!m || m->kind != S_IFREG) return l;
  char *text = xstrdup(m->content);
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    size_t len = strlen(line);
    if (len && line[len - 1] == '\r') line[--len] = '\0';
    if (!len || line[0] == '#') continue;
    l.rel = xrealloc(l.rel, (size_t)(l.n + 1) * sizeof *l.rel);
    l.rel[l.n++] = xasprintf("/d/%s", line);
  }
  free(text);
  return l;
}

static bool is_listed(const Listed *l, const char *rel) {
  for (int i = 0; i < l->n; i++)
    if (!strcmp(l->rel[i], rel)) return true;
  return false;
}

/* A folder may go away only if nothing of the user's was in it: only folders and listed plain
 * files (kasgen removes a folder only with rmdir, once it has emptied it of its own files). */
static bool held_nothing_of_the_users(const Snapshot *before, const Listed *l, const char *dir) {
  size_t len = strlen(dir);
  for (int i = 0; i < before->n; i++) {
    const Entry *e = &before->e[i];
    if (strncmp(e->rel, dir, len) || e->rel[len] != '/') continue;
    if (e->kind != S_IFDIR && !(e->kind == S_IFREG && is_listed(l, e->rel))) return false;
  }
  return true;
}

static bool is_manifest_temp_ours(const Entry *e) {
  return e->kind == S_IFREG && !strncmp(e->content, "# Files written by kasgen in this folder.",
                                        strlen("# Files written by kasgen in this folder."));
}

/* A broken promise: say which entry (on stderr, which -close_fd_mask=2 hides), then abort. */
static void broken(const Entry *e, const Entry *now) {
  fprintf(stderr, "fuzz_outdir: %s (kind %o) changed: now %s\n", e->rel, (unsigned)e->kind,
          now ? (now->kind == e->kind ? "other content" : "other kind") : "gone");
  abort();
}

/* Every entry of `before` that kasgen may not change is unchanged in `after`. */
static void check_untouched(const Snapshot *before, const Snapshot *after, const Listed *l,
                            bool opened) {
  for (int i = 0; i < before->n; i++) {
    const Entry *e = &before->e[i];
    const Entry *now = find(after, e->rel);
    bool inside = !strncmp(e->rel, "/d/", 3);
    if (!opened || !inside || e->kind == S_IFLNK) {
      if (!same(e, now)) broken(e, now); /* outside, a link, or a refused run: untouched */
      continue;
    }
    if (!strcmp(e->rel, "/d/.kasgen-manifest") && e->kind == S_IFREG) continue;
    if (!strcmp(e->rel, "/d/.kasgen-manifest.kasgen-tmp") && is_manifest_temp_ours(e)) continue;
    if (is_listed(l, e->rel) && e->kind == S_IFREG) continue; /* kasgen's own file */
    if (e->kind == S_IFDIR && !now && held_nothing_of_the_users(before, l, e->rel)) continue;
    if (e->kind == S_IFDIR ? !now || now->kind != S_IFDIR : !same(e, now)) broken(e, now);
  }
}

/* The files of one run. */
static const char *const writable[] = {"Makefile", "index.txt", "a.txt", "cand01/kernels.cu",
                                       "cand01/kernels_host.cpp", "common/x.h", "embed/y.cu",
                                       "cand02/kernels.cu"};
enum { NWRITABLE = sizeof writable / sizeof *writable };

typedef struct {
  bool chosen[NWRITABLE];
  char *text[NWRITABLE];
} Writes;

typedef enum { REFUSED, FAILED, WRITTEN } Outcome;

static Outcome run_kasgen(const Writes *w, long size_limit) {
  EmitDir *d = emit_dir_open(out_dir);
  if (!d) return REFUSED;
  for (int i = 0; i < NWRITABLE; i++)
    if (w->chosen[i] && !emit_dir_write(d, writable[i], w->text[i])) abort(); /* paths are valid */
  struct rlimit old, lim = {(rlim_t)size_limit, RLIM_INFINITY};
  getrlimit(RLIMIT_FSIZE, &old);
  /* Over the limit, write() then fails with EFBIG, as on a full disk.  (libFuzzer installs its
   * own SIGXFSZ handler after LLVMFuzzerInitialize, so ignore it here, each time.) */
  void (*handler)(int) = signal(SIGXFSZ, SIG_IGN);
  if (size_limit > 0) lim.rlim_max = old.rlim_max, setrlimit(RLIMIT_FSIZE, &lim);
  bool ok = emit_dir_close(d);
  if (size_limit > 0) setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, handler);
  return ok ? WRITTEN : FAILED;
}

/* After a successful run: the files hold their texts; the manifest lists exactly them. */
static void check_written(const Writes *w) {
  StrBuf want;
  sb_init(&want);
  sb_puts(&want, "# Files written by kasgen in this folder.  kasgen overwrites and removes only\n"
                 "# these; any other file here makes it refuse to write.  Do not edit.\n");
  const char *sorted[NWRITABLE];
  int n = 0;
  for (int i = 0; i < NWRITABLE; i++)
    if (w->chosen[i]) sorted[n++] = writable[i];
  for (int i = 1; i < n; i++) /* insertion sort by strcmp, as the manifest is sorted */
    for (int j = i; j > 0 && strcmp(sorted[j - 1], sorted[j]) > 0; j--) {
      const char *t = sorted[j];
      sorted[j] = sorted[j - 1], sorted[j - 1] = t;
    }
  for (int i = 0; i < n; i++) sb_printf(&want, "%s\n", sorted[i]);
  char *m = in_out(".kasgen-manifest");
  char *got = slurp(m);
  if (strcmp(got, want.data)) fprintf(stderr, "fuzz_outdir: manifest\n%s\nexpected\n%s", got, want.data), abort();
  free(got);
  free(m);
  sb_free(&want);
  for (int i = 0; i < NWRITABLE; i++) {
    if (!w->chosen[i]) continue;
    char *p = in_out(writable[i]);
    char *text = slurp(p);
    if (strcmp(text, w->text[i])) abort();
    free(text);
    free(p);
  }
}

static void gen_writes(Input *in, Writes *w, char fill) {
  for (int i = 0; i < NWRITABLE; i++) {
    unsigned b = next(in);
    w->chosen[i] = b & 1;
    size_t len = (b >> 1) % 4 == 0 ? 3000 + (b % 7) * 500 : 1 + b % 40; /* some exceed a limit */
    w->text[i] = xmalloc(len + 1);
    memset(w->text[i], fill + i, len);
    w->text[i][len] = '\0';
  }
}

static void writes_free(Writes *w) {
  for (int i = 0; i < NWRITABLE; i++) free(w->text[i]);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  chmod(path, 0755); /* nothing makes them read-only, but be sure */
  if ((flag == FTW_DP ? rmdir(path) : unlink(path)) != 0) abort();
  return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  /* On tmpfs when there is one: fsync (the manifest's) is free there, and the disk is spared. */
  const char *base = getenv("FUZZ_OUTDIR_BASE");
  struct stat st;
  if (!base) base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
  sandbox = xasprintf("%s/kasgen-fuzz-outdir-XXXXXX", base);
  if (!mkdtemp(sandbox)) abort();
  run_root = xasprintf("%s/run", sandbox);
  out_dir = xasprintf("%s/d", run_root);
  outside = xasprintf("%s/outside", run_root);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Input in = {data, size};
  nftw(run_root, remove_entry, 16, FTW_PHYS | FTW_DEPTH); /* no link is followed */
  if (mkdir(run_root, 0777) != 0 || mkdir(outside, 0777) != 0) abort();
  char *od = xasprintf("%s/od", outside), *o1 = xasprintf("%s/o1", outside);
  mkdir(od, 0777);
  put(o1, "outside\n");
  free(od);
  free(o1);
  StrBuf manifest;
  sb_init(&manifest);
  bool want_manifest = next(&in) % 2;
  build_tree(&in, &manifest, &want_manifest);
  sb_free(&manifest);
  Writes first, second;
  gen_writes(&in, &first, 'a');
  gen_writes(&in, &second, 'A');
  long limit = 512 + (long)(next(&in) % 8) * 1024;
  Snapshot before = snapshot();
  Listed l = listed_of(&before);
  diag_reset();
  Outcome outcome = run_kasgen(&first, 0);
  if (outcome == REFUSED && diag_error_count() == 0) abort(); /* refused without saying why */
  Snapshot after = snapshot();
  check_untouched(&before, &after, &l, outcome != REFUSED);
  snapshot_free(&after);
  if (outcome == WRITTEN) {
    check_written(&first);
    /* A full disk half way: kasgen's folder must still be kasgen's (the next run opens it),
     * whatever failed.  Only a folder left in a state kasgen refuses breaks the promise. */
    Outcome second_outcome = run_kasgen(&second, limit);
    if (second_outcome == FAILED) {
      diag_reset();
      second_outcome = run_kasgen(&second, 0);
    }
    if (second_outcome == REFUSED) abort();
    if (second_outcome == WRITTEN) check_written(&second);
    after = snapshot();
    check_untouched(&before, &after, &l, true);
    snapshot_free(&after);
  }
  for (int i = 0; i < l.n; i++) free(l.rel[i]);
  free(l.rel);
  snapshot_free(&before);
  writes_free(&first);
  writes_free(&second);
  diag_reset();
  return 0;
}
