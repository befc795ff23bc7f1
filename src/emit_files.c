/*
 * emit_files.c — the output folder of generated code, and the promise that kasgen never
 * overwrites or deletes a file it did not write.
 *
 * The folder may be new, or hold only files listed in its `.kasgen-manifest` (written by an
 * earlier run).  emit_dir_open walks the whole tree before anything is written: any file not in
 * the manifest, and anything that is not a plain file or folder (a symbolic link, a FIFO, a
 * manifest-listed path that became a folder), makes it refuse with a message naming the path.
 * Files are written through a temporary file in the same folder and rename(), so a crash leaves
 * either the old or the new file, never half of one.  At close, files listed in the old manifest
 * that this run did not write again are removed (they are kasgen's own), and the new manifest is
 * written.  The run outputs of the generated Makefile (build/, results.xml, ...) are neither
 * checked nor ever written.
 */
#include "kasgen.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_NAME ".kasgen-manifest"
#define TEMP_MARK ".kasgen-tmp-"

/* A list of relative paths. */
typedef struct {
  char **items;
  int n, cap;
} PathList;

struct EmitDir {
  char *path;        /* the folder, as given */
  PathList old;      /* paths of the previous manifest */
  PathList written;  /* paths written by this run */
  PathList stale_tmp;/* temporary files left by an interrupted run (ours, removed at close) */
  int errors_at_open;/* diag_error_count() when opened: errors since then keep old files */
};

static void paths_add(PathList *l, const char *p) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 16;
    l->items = xrealloc(l->items, (size_t)l->cap * sizeof *l->items);
  }
  l->items[l->n++] = xstrdup(p);
}

static bool paths_contain(const PathList *l, const char *p) {
  for (int i = 0; i < l->n; i++)
    if (!strcmp(l->items[i], p)) return true;
  return false;
}

static void paths_free(PathList *l) {
  for (int i = 0; i < l->n; i++) free(l->items[i]);
  free(l->items);
  *l = (PathList){0};
}

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static SrcLoc file_loc(const char *file) { return (SrcLoc){.file = file}; }

/* A relative path kasgen may write: components of [A-Za-z0-9._-], none empty, "." or "..", and
 * not beginning with '/'.  Returns NULL when fine, else the reason. */
static const char *relpath_problem(const char *rel) {
  if (!*rel) return "empty path";
  if (*rel == '/') return "absolute path";
  const char *comp = rel;
  for (const char *p = rel;; p++) {
    if (*p == '/' || !*p) {
      size_t len = (size_t)(p - comp);
      if (len == 0) return "empty path component";
      if ((len == 1 && comp[0] == '.') || (len == 2 && comp[0] == '.' && comp[1] == '.'))
        return "'.' or '..' component";
      if (!*p) return NULL;
      comp = p + 1;
      continue;
    }
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return "character outside [A-Za-z0-9._-]";
  }
}

/* Reads DIR/.kasgen-manifest into d->old.  Format: one relative path per line; blank lines and
 * lines starting with '#' are ignored.  A tampered entry (absolute, "..", odd characters) is an
 * error located at its line: we would otherwise delete or overwrite outside the folder. */
static bool read_manifest(EmitDir *d) {
  char *mpath = xasprintf("%s/%s", d->path, MANIFEST_NAME);
  struct stat st;
  bool ok = true;
  if (lstat(mpath, &st) != 0) {
    free(mpath);
    return true; /* no manifest: a new folder, or one that must be empty of files */
  }
  if (!S_ISREG(st.st_mode)) {
    diag_error(file_loc(mpath), "the manifest is not a plain file; refusing to write into '%s'",
               d->path);
    free(mpath);
    return false;
  }
  char *text = read_text_file(mpath, NULL);
  if (!text) {
    free(mpath);
    return false;
  }
  int line = 1;
  for (char *p = text; *p;) {
    char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char *entry = xstrndup(p, len);
    if (len > 0 && entry[len - 1] == '\r') entry[len - 1] = '\0';
    if (entry[0] && entry[0] != '#') {
      const char *why = relpath_problem(entry);
      if (why) {
        diag_error((SrcLoc){.file = mpath, .text = text, .line = line, .col = 1},
                   "manifest entry '%s' is not a path kasgen writes (%s); refusing to write "
                   "into '%s'",
                   entry, why, d->path);
        ok = false;
      } else if (!strcmp(entry, MANIFEST_NAME)) {
        diag_error((SrcLoc){.file = mpath, .text = text, .line = line, .col = 1},
                   "the manifest lists itself; refusing to write into '%s'", d->path);
        ok = false;
      } else if (!paths_contain(&d->old, entry)) {
        paths_add(&d->old, entry);
      }
    }
    free(entry);
    p += len;
    if (*p == '\n') p++;
    line++;
  }
  free(text);
  free(mpath);
  return ok;
}

/* ".<name>.kasgen-tmp-XXXXXX", as made by write_atomically (mkstemp fills six characters). */
/* Run outputs (docs/generated.md): written by `make` and the harness, never by kasgen, so the
 * check skips them and emit_dir_write refuses them.  Top level only. */
static bool is_run_output(const char *rel) {
  static const char *const names[] = {"build", "results.xml", "results.dat", "plot.png", NULL};
  for (int i = 0; names[i]; i++) {
    size_t len = strlen(names[i]);
    if (!strncmp(rel, names[i], len) && (rel[len] == '\0' || rel[len] == '/')) return true;
  }
  return false;
}

static bool is_stale_temp(const char *name) {
  const char *mark = strstr(name, TEMP_MARK);
  return name[0] == '.' && mark && mark > name + 1 && strlen(mark) == strlen(TEMP_MARK) + 6 &&
         !strchr(name, '/');
}

static void refuse(const EmitDir *d, const char *rel, const char *what) {
  char *full = xasprintf("%s/%s", d->path, rel);
  diag_error(file_loc(full), "%s; kasgen refuses to write into '%s' (it only overwrites files "
             "listed in its %s)", what, d->path, MANIFEST_NAME);
  diag_note(file_loc(d->path), "move the file away or choose another --out folder");
  free(full);
}

/* Walks folder `rel` (relative to d->path; "" for the root) and checks every entry.  Returns
 * false after reporting the first foreign entry. */
static bool check_tree(EmitDir *d, const char *rel) {
  char *dirpath = *rel ? xasprintf("%s/%s", d->path, rel) : xstrdup(d->path);
  DIR *dir = opendir(dirpath);
  if (!dir) {
    diag_error(file_loc(dirpath), "cannot read folder: %s", strerror(errno));
    free(dirpath);
    return false;
  }
  bool ok = true;
  struct dirent *ent;
  while (ok && (ent = readdir(dir))) {
    if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..")) continue;
    if (!*rel && is_run_output(ent->d_name)) continue;
    char *child = *rel ? xasprintf("%s/%s", rel, ent->d_name) : xstrdup(ent->d_name);
    char *full = xasprintf("%s/%s", d->path, child);
    struct stat st;
    if (lstat(full, &st) != 0) {
      diag_error(file_loc(full), "cannot inspect: %s", strerror(errno));
      ok = false;
    } else if (S_ISLNK(st.st_mode)) {
      refuse(d, child, "a symbolic link, not written by kasgen");
      ok = false;
    } else if (S_ISDIR(st.st_mode)) {
      if (paths_contain(&d->old, child)) {
        refuse(d, child, "listed in the manifest as a file but now a folder");
        ok = false;
      } else {
        ok = check_tree(d, child);
      }
    } else if (!S_ISREG(st.st_mode)) {
      refuse(d, child, "not a plain file (device, FIFO or socket)");
      ok = false;
    } else if (!*rel && !strcmp(ent->d_name, MANIFEST_NAME)) {
      /* the manifest itself, already read */
    } else if (is_stale_temp(ent->d_name)) {
      paths_add(&d->stale_tmp, child); /* left by an interrupted run of kasgen */
    } else if (!paths_contain(&d->old, child)) {
      refuse(d, child, "a file not written by kasgen");
      ok = false;
    }
    free(full);
    free(child);
  }
  closedir(dir);
  free(dirpath);
  return ok;
}

/* mkdir -p for the folder part of full (everything before the last '/' when parent_only). */
static bool make_folders(const char *full, bool parent_only) {
  char *p = xstrdup(full);
  size_t len = strlen(p);
  if (parent_only) {
    char *slash = strrchr(p, '/');
    if (!slash) {
      free(p);
      return true;
    }
    *slash = '\0';
    len = strlen(p);
  }
  bool ok = true;
  for (size_t i = 1; i <= len && ok; i++) {
    if (p[i] != '/' && p[i] != '\0') continue;
    char saved = p[i];
    p[i] = '\0';
    struct stat st;
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
      diag_error(file_loc(p), "cannot create folder: %s", strerror(errno));
      ok = false;
    } else if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
      diag_error(file_loc(p), "exists and is not a folder");
      ok = false;
    }
    p[i] = saved;
  }
  free(p);
  return ok;
}

EmitDir *emit_dir_open(const char *path) {
  EmitDir *d = xcalloc(1, sizeof *d);
  d->path = xstrdup(path);
  d->errors_at_open = diag_error_count();
  size_t len = strlen(d->path);
  while (len > 1 && d->path[len - 1] == '/') d->path[--len] = '\0';
  struct stat st;
  bool ok;
  if (stat(d->path, &st) != 0) {
    ok = make_folders(d->path, false); /* a new folder: nothing of anyone's can be in it */
  } else if (!S_ISDIR(st.st_mode)) {
    diag_error(file_loc(d->path), "exists and is not a folder; refusing to write there");
    ok = false;
  } else {
    ok = read_manifest(d) && check_tree(d, "");
  }
  if (!ok) {
    paths_free(&d->old);
    paths_free(&d->stale_tmp);
    free(d->path);
    free(d);
    return NULL;
  }
  return d;
}

const char *emit_dir_path(const EmitDir *d) { return d->path; }

/* Writes text to full through a temporary file beside it and rename(). */
static bool write_atomically(const char *full, const char *text) {
  const char *slash = strrchr(full, '/');
  char *tmp = slash ? xasprintf("%.*s/.%s" TEMP_MARK "XXXXXX", (int)(slash - full), full, slash + 1)
                    : xasprintf(".%s" TEMP_MARK "XXXXXX", full);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    diag_error(file_loc(full), "cannot create a temporary file: %s", strerror(errno));
    free(tmp);
    return false;
  }
  size_t len = strlen(text), done = 0;
  bool ok = true;
  while (done < len) {
    ssize_t w = write(fd, text + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      ok = false;
      break;
    }
    done += (size_t)w;
  }
  /* Generated files are ordinary source: rw-r--r-- (mkstemp makes them 0600). */
  if (ok && fchmod(fd, 0644) != 0) ok = false;
  if (close(fd) != 0) ok = false;
  if (ok && rename(tmp, full) != 0) ok = false;
  if (!ok) {
    diag_error(file_loc(full), "cannot write: %s", strerror(errno));
    unlink(tmp);
  }
  free(tmp);
  return ok;
}

bool emit_dir_write(EmitDir *d, const char *relpath, const char *text) {
  const char *why = relpath_problem(relpath);
  if (why || !strcmp(relpath, MANIFEST_NAME) || is_stale_temp(relpath) || is_run_output(relpath)) {
    diag_error(file_loc(relpath), "internal: emitter asked to write a bad path (%s)",
               why ? why : "reserved name");
    return false;
  }
  char *full = xasprintf("%s/%s", d->path, relpath);
  struct stat st;
  bool ok = make_folders(full, true);
  /* Re-check the target now: the tree was checked at open, but a folder may since have appeared
   * where a file is to go (or the emitter writes the same path twice, which is fine). */
  if (ok && lstat(full, &st) == 0 && !S_ISREG(st.st_mode)) {
    refuse(d, relpath, "not a plain file");
    ok = false;
  }
  if (ok && lstat(full, &st) == 0 && !paths_contain(&d->old, relpath) &&
      !paths_contain(&d->written, relpath)) {
    refuse(d, relpath, "a file not written by kasgen (appeared during this run)");
    ok = false;
  }
  if (ok) ok = write_atomically(full, text);
  if (ok && !paths_contain(&d->written, relpath)) paths_add(&d->written, relpath);
  free(full);
  return ok;
}

/* Removes the folders of rel up to the root while they are empty (rmdir fails otherwise, which is
 * what we want: a folder holding anything is left alone). */
static void remove_empty_parents(const EmitDir *d, const char *rel) {
  char *p = xstrdup(rel);
  for (char *slash; (slash = strrchr(p, '/'));) {
    *slash = '\0';
    char *full = xasprintf("%s/%s", d->path, p);
    int rc = rmdir(full);
    free(full);
    if (rc != 0) break;
  }
  free(p);
}

/* Removes a file kasgen wrote in an earlier run and does not write now.  Only plain files. */
static void remove_own_file(const EmitDir *d, const char *rel) {
  char *full = xasprintf("%s/%s", d->path, rel);
  struct stat st;
  if (lstat(full, &st) == 0 && S_ISREG(st.st_mode) && unlink(full) == 0)
    remove_empty_parents(d, rel);
  free(full);
}

bool emit_dir_close(EmitDir *d) {
  if (!d) return false;
  /* After an error in this run, keep the files of the previous run (still ours, so still in the
   * manifest) rather than leave a half-updated folder with fewer files than either run wrote. */
  bool failed = diag_error_count() > d->errors_at_open;
  PathList keep = {0};
  for (int i = 0; i < d->written.n; i++) paths_add(&keep, d->written.items[i]);
  for (int i = 0; i < d->old.n; i++) {
    if (paths_contain(&d->written, d->old.items[i])) continue;
    if (failed)
      paths_add(&keep, d->old.items[i]);
    else
      remove_own_file(d, d->old.items[i]);
  }
  for (int i = 0; i < d->stale_tmp.n; i++) remove_own_file(d, d->stale_tmp.items[i]);
  if (keep.n) qsort(keep.items, (size_t)keep.n, sizeof *keep.items, compare_strings);
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, "# Files written by kasgen in this folder.  kasgen overwrites and removes only\n"
               "# these; any other file here makes it refuse to write.  Do not edit.\n");
  for (int i = 0; i < keep.n; i++) sb_printf(&sb, "%s\n", keep.items[i]);
  char *mpath = xasprintf("%s/%s", d->path, MANIFEST_NAME);
  bool ok = write_atomically(mpath, sb.data);
  free(mpath);
  sb_free(&sb);
  paths_free(&keep);
  paths_free(&d->old);
  paths_free(&d->written);
  paths_free(&d->stale_tmp);
  free(d->path);
  free(d);
  return ok && !failed;
}
