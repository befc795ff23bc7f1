/*
 * emit_files.c — the output folder of generated code, and the promise that kasgen never
 * overwrites or deletes a file it did not write, never follows a symbolic link out of the folder,
 * and leaves a folder that the next run accepts, whatever happened to this one.
 *
 * The folder may be new, or hold only files listed in its `.kasgen-manifest` (written by an
 * earlier run).  emit_dir_open walks the whole tree before anything is written: any file not in
 * the manifest, and anything that is not a plain file or folder (a symbolic link, a FIFO, a
 * manifest-listed path that became a folder), makes it refuse with a message naming the path.  A
 * manifest that names a run output (build/, results.xml, ...), itself, "..", or an absolute path
 * is refused at its line.
 *
 * Emitters hand their files to emit_dir_write, which keeps them in memory; emit_dir_close writes
 * them like a careful installer:
 *   0. every file's place is checked: folders are folders, the names it and its temporary take
 *      are free or kasgen's own; otherwise nothing is written;
 *   1. the manifest first (atomically: a temporary file and rename), listing the old entries, the
 *      new files and the temporary name each new file is written through;
 *   2. each file through its temporary `.<name>.kasgen-tmp` and rename();
 *   3. the old files this run did not write again are removed (plain files only);
 *   4. the manifest again, listing exactly what is there.
 * Interrupted anywhere (a crash, a full disk), the folder holds only files the manifest lists,
 * so the next run accepts it.  After an error in the emitters nothing is written at all.
 *
 * Every path is resolved from the folder's descriptor one component at a time with O_NOFOLLOW
 * (openat, mkdirat, unlinkat, renameat), so a symbolic link planted anywhere in the tree is never
 * followed.  The run outputs of the generated Makefile are neither checked nor ever written.
 */
#include "kasgen.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_NAME ".kasgen-manifest"
#define TEMP_SUFFIX ".kasgen-tmp"
#define MANIFEST_TEMP MANIFEST_NAME TEMP_SUFFIX
#define MANIFEST_HEADER "# Files written by kasgen in this folder."
#define MAX_DEPTH 32 /* folders nested deeper than this are refused, not walked */

/* ---- sets of relative paths (O(log n) membership through tsearch) ------------------------- */

typedef struct {
  char **items; /* in insertion order */
  int n, cap;
  void *index;  /* tsearch tree over items */
} PathSet;

static int compare_paths(const void *a, const void *b) { return strcmp(a, b); }

static bool paths_contain(const PathSet *l, const char *p) {
  return tfind(p, &l->index, compare_paths) != NULL;
}

/* Adds p unless present; returns its stored copy. */
static const char *paths_add(PathSet *l, const char *p) {
  char **found = tfind(p, &l->index, compare_paths);
  if (found) return *found;
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 16;
    l->items = xrealloc(l->items, (size_t)l->cap * sizeof *l->items);
  }
  char *copy = xstrdup(p);
  l->items[l->n++] = copy;
  if (!tsearch(copy, &l->index, compare_paths)) {
    fputs("kasgen: fatal: out of memory\n", stderr);
    exit(1);
  }
  return copy;
}

static void no_free(void *p) { (void)p; }

static void paths_free(PathSet *l) {
  tdestroy(l->index, no_free);
  for (int i = 0; i < l->n; i++) free(l->items[i]);
  free(l->items);
  *l = (PathSet){0};
}

/* ---- the folder --------------------------------------------------------------------------- */

typedef struct {
  char *rel, *text;
} PendingFile;

struct EmitDir {
  char *path;         /* the folder, as given (for messages) */
  int fd;             /* the folder, opened without following a final symbolic link */
  PathSet old;        /* entries of the previous manifest */
  PathSet written;    /* paths emit_dir_write received, in order */
  PendingFile *files; /* their texts, parallel to written.items */
  bool manifest_temp; /* a complete manifest temp of an interrupted run is there */
  int errors_at_open; /* diag_error_count() when opened: errors since then write nothing */
};

static SrcLoc file_loc(const char *file) { return (SrcLoc){.file = file}; }

/* "<folder>/<rel>" for messages (malloc'ed). */
static char *shown_path(const EmitDir *d, const char *rel) {
  return *rel ? xasprintf("%s/%s", d->path, rel) : xstrdup(d->path);
}

static void error_at(const EmitDir *d, const char *rel, const char *fmt, const char *reason) {
  char *full = shown_path(d, rel);
  diag_error(file_loc(full), fmt, reason);
  free(full);
}

/* A relative path kasgen may write: components of [A-Za-z0-9._-], none empty, "." or "..", and
 * not beginning with '/'.  Returns NULL when fine, else the reason. */
static const char *relpath_problem(const char *rel) {
  if (!*rel) return "empty path";
  if (*rel == '/') return "absolute path";
  const char *comp = rel;
  int depth = 0;
  for (const char *p = rel;; p++) {
    if (*p == '/' && ++depth > MAX_DEPTH) return "nested too deep";
    if (*p == '/' || !*p) {
      size_t len = (size_t)(p - comp);
      if (len == 0) return "empty path component";
      if ((len == 1 && comp[0] == '.') || (len == 2 && comp[0] == '.' && comp[1] == '.'))
        return "'.' or '..' component";
      if (len > 200) return "a component longer than 200 characters";
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

/* Run outputs (docs/generated.md): written by `make`, the harness and `kasgen report`, never by
 * the generator, so the check skips them (without looking inside), the manifest may not name
 * them, and emit_dir_write refuses them. */
static bool is_run_output(const char *rel) {
  static const char *const names[] = {"build", "results.xml", "results.dat", "plot.png", NULL};
  if (!strncmp(rel, REPORT_TEMP_PREFIX, strlen(REPORT_TEMP_PREFIX))) return true; /* report's */
  for (int i = 0; names[i]; i++) {
    size_t len = strlen(names[i]);
    if (!strncmp(rel, names[i], len) && (rel[len] == '\0' || rel[len] == '/')) return true;
  }
  return false;
}

/* The temporary name a file is written through: "dir/.name.kasgen-tmp" (malloc'ed). */
static char *temp_of(const char *rel) {
  const char *slash = strrchr(rel, '/');
  if (!slash) return xasprintf(".%s" TEMP_SUFFIX, rel);
  return xasprintf("%.*s/.%s" TEMP_SUFFIX, (int)(slash - rel), rel, slash + 1);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && !strcmp(s + n - m, suffix);
}

/* ---- walking paths without following links ----------------------------------------------- */

/* Opens the folder holding rel's last component, one component at a time from d->fd, never
 * through a symbolic link; creates missing folders when `create`.  Returns the descriptor (close
 * it; d->fd itself is never returned) or -1 with errno set (ENOENT: a folder is missing). */
static int open_parent(const EmitDir *d, const char *rel, bool create) {
  int fd = dup(d->fd);
  if (fd < 0) return -1;
  for (const char *comp = rel, *slash; (slash = strchr(comp, '/')); comp = slash + 1) {
    char *name = xstrndup(comp, (size_t)(slash - comp));
    int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && create && mkdirat(fd, name, 0777) == 0)
      next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int saved = errno;
    free(name);
    close(fd);
    if (next < 0) {
      errno = saved == ELOOP ? ENOTDIR : saved; /* a link where a folder should be */
      return -1;
    }
    fd = next;
  }
  return fd;
}

static const char *base_name(const char *rel) {
  const char *slash = strrchr(rel, '/');
  return slash ? slash + 1 : rel;
}

/* Writes all of text to fd; false with errno set. */
static bool write_all(int fd, const char *text, size_t len) {
  for (size_t done = 0; done < len;) {
    ssize_t w = write(fd, text + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return false;
    if (w == 0) {
      errno = EIO;
      return false;
    }
    done += (size_t)w;
  }
  return true;
}

/* Removes the plain file `name` in folder dirfd if it is there; true when it is not there now.
 * Anything else by that name (a folder, a link) is left alone and reported. */
static bool remove_plain_file(int dirfd, const char *name) {
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT;
  if (!S_ISREG(st.st_mode)) {
    errno = EEXIST;
    return false;
  }
  return unlinkat(dirfd, name, 0) == 0 || errno == ENOENT;
}

/* Writes text as rel: through its temporary name (created exclusively, never through a link) and
 * renameat().  The target, if there, must be a plain file of the old manifest; a leftover
 * temporary is removed first if the old manifest lists it.  false + diagnostic. */
static bool install_file(const EmitDir *d, const char *rel, const char *text) {
  int dirfd = open_parent(d, rel, true);
  if (dirfd < 0) {
    error_at(d, rel, "cannot create the folder for this file: %s", strerror(errno));
    return false;
  }
  const char *name = base_name(rel);
  char *temp = temp_of(rel);
  const char *temp_name = base_name(temp);
  bool ok = false;
  struct stat st;
  bool there = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (there && !S_ISREG(st.st_mode)) {
    error_at(d, rel, "%s appeared here during this run; kasgen did not replace it",
             S_ISLNK(st.st_mode) ? "a symbolic link" : "a folder or special file");
  } else if (there && !paths_contain(&d->old, rel)) {
    error_at(d, rel, "%s", "a file not written by kasgen appeared here during this run; kasgen "
             "did not replace it");
  } else if (paths_contain(&d->old, temp) && !remove_plain_file(dirfd, temp_name)) {
    error_at(d, temp, "cannot remove this leftover temporary file: %s",
             errno == EEXIST ? "not a plain file" : strerror(errno));
  } else {
    int fd = openat(dirfd, temp_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) interrupt_add_temporary(dirfd, temp_name); /* Ctrl-C leaves no temporary */
    ok = fd >= 0 && write_all(fd, text, strlen(text));
    int saved = errno;
    if (fd >= 0 && close(fd) != 0 && ok) ok = false, saved = errno;
    if (ok && renameat(dirfd, temp_name, dirfd, name) != 0) ok = false, saved = errno;
    if (!ok && fd >= 0) unlinkat(dirfd, temp_name, 0);
    if (fd >= 0) interrupt_drop_temporary(dirfd, temp_name);
    if (!ok)
      error_at(d, rel, "cannot write: %s; this file is lost, but the folder's manifest lists "
               "every file kasgen wrote, so rerunning kasgen will work", strerror(saved));
  }
  free(temp);
  close(dirfd);
  return ok;
}

/* Before the first manifest: whether rel can be installed.  Its folders must be folders (or
 * missing), the file itself a plain file of the old manifest (or missing), and its temporary name
 * free (or a leftover plain file the old manifest lists).  Otherwise nothing is written at all, so
 * the manifest never lists a name that something else holds, and the next run accepts the folder.
 * false + diagnostic. */
static bool can_install(const EmitDir *d, const char *rel) {
  int dirfd = open_parent(d, rel, false);
  if (dirfd < 0) {
    if (errno == ENOENT) return true; /* its folder will be created */
    error_at(d, rel, "cannot create the folder for this file: %s (a file or a symbolic link is "
             "in the way)", strerror(errno));
    return false;
  }
  char *temp = temp_of(rel);
  struct stat st;
  bool ok = false;
  if (fstatat(dirfd, base_name(rel), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      (!S_ISREG(st.st_mode) || !paths_contain(&d->old, rel)))
    error_at(d, rel, "%s", "something kasgen did not write is where this file goes; nothing was "
             "written");
  else if (fstatat(dirfd, base_name(temp), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           (!S_ISREG(st.st_mode) || !paths_contain(&d->old, temp)))
    error_at(d, temp, "%s", "something kasgen did not write has the name of kasgen's temporary "
             "file; nothing was written");
  else
    ok = true;
  free(temp);
  close(dirfd);
  return ok;
}

/* Writes the manifest listing `entries` (sorted here) through its temporary name and rename(). */
static bool write_manifest(const EmitDir *d, char **entries, int n) {
  if (n > 1) qsort(entries, (size_t)n, sizeof *entries, compare_strings);
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, MANIFEST_HEADER "  kasgen overwrites and removes only\n"
               "# these; any other file here makes it refuse to write.  Do not edit.\n");
  for (int i = 0; i < n; i++) sb_printf(&sb, "%s\n", entries[i]);
  int fd = openat(d->fd, MANIFEST_TEMP, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0644);
  if (fd >= 0) interrupt_add_temporary(d->fd, MANIFEST_TEMP);
  bool ok = fd >= 0 && write_all(fd, sb.data, sb.len) && fsync(fd) == 0;
  int saved = errno;
  if (fd >= 0 && close(fd) != 0 && ok) ok = false, saved = errno;
  if (ok && renameat(d->fd, MANIFEST_TEMP, d->fd, MANIFEST_NAME) != 0) ok = false, saved = errno;
  if (!ok && fd >= 0) unlinkat(d->fd, MANIFEST_TEMP, 0);
  if (fd >= 0) interrupt_drop_temporary(d->fd, MANIFEST_TEMP);
  if (!ok)
    error_at(d, MANIFEST_NAME, "cannot write the manifest: %s; this run's files are lost (the "
             "folder is as the manifest says)", strerror(saved));
  sb_free(&sb);
  return ok;
}

/* ---- reading and checking the folder ------------------------------------------------------ */

/* Why a manifest line cannot be an entry kasgen wrote, or NULL when it can. */
static const char *manifest_entry_problem(const char *entry) {
  const char *why = relpath_problem(entry);
  if (!why && !strcmp(entry, MANIFEST_NAME)) why = "the manifest itself";
  if (!why && !strcmp(entry, MANIFEST_TEMP)) why = "the manifest's temporary file";
  if (!why && is_run_output(entry)) why = "a run output, which kasgen never writes";
  return why;
}

/* Parses manifest text into *out (one relative path per line; blank lines and lines starting with
 * '#' are ignored); false after errors located at their lines (reported unless quiet). */
static bool parse_manifest(const EmitDir *d, const char *mpath, const char *text, bool quiet,
                           PathSet *out) {
  int line = 1, errors = 0;
  for (const char *p = text; *p && errors < 10; line++) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char *entry = xstrndup(p, len);
    if (len > 0 && entry[len - 1] == '\r') entry[len - 1] = '\0';
    const char *why = entry[0] && entry[0] != '#' ? manifest_entry_problem(entry) : NULL;
    if (why) {
      errors++;
      char *shown = c_safe_text(entry);
      if (!quiet)
        diag_error((SrcLoc){.file = mpath, .text = text, .line = line, .col = 1},
                   "manifest entry '%s' is not a path kasgen writes (%s); refusing to write into "
                   "'%s'", shown, why, d->path);
      free(shown);
    } else if (entry[0] && entry[0] != '#') {
      paths_add(out, entry);
    }
    free(entry);
    p += len;
    if (*p == '\n') p++;
  }
  return errors == 0;
}

/* Reads the file `name` of d's root if it is a plain file: its text, or NULL (after an error when
 * it exists but cannot be read, or is something else).  *absent is set when there is no such
 * entry. */
static char *read_root_file(const EmitDir *d, const char *name, bool *absent) {
  *absent = false;
  int fd = openat(d->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      *absent = true;
      return NULL;
    }
    error_at(d, name, "cannot read: %s; refusing to write into this folder",
             errno == ELOOP ? "a symbolic link" : strerror(errno));
    return NULL;
  }
  char *mpath = shown_path(d, name);
  char *text = read_text_fd(fd, mpath, NULL);
  free(mpath);
  close(fd);
  return text;
}

/* Reads DIR/.kasgen-manifest into d->old.  A tampered entry is an error located at its line: we
 * would otherwise delete or overwrite outside the folder, or a file the harness wrote. */
static bool read_manifest(EmitDir *d) {
  bool absent;
  char *text = read_root_file(d, MANIFEST_NAME, &absent);
  if (!text) return absent; /* no manifest: a new folder, or one that must be empty of files */
  char *mpath = shown_path(d, MANIFEST_NAME);
  bool ok = parse_manifest(d, mpath, text, false, &d->old);
  free(mpath);
  free(text);
  return ok;
}

/* Whether DIR/.kasgen-manifest.kasgen-tmp is what an interrupted write_manifest left: a complete
 * manifest of ours (header and valid entries).  Only then is it removed. */
static bool is_our_manifest_temp(EmitDir *d) {
  bool absent;
  char *text = read_root_file(d, MANIFEST_TEMP, &absent);
  if (!text) return false;
  PathSet scratch = {0};
  bool ours = !strncmp(text, MANIFEST_HEADER, strlen(MANIFEST_HEADER)) &&
              parse_manifest(d, MANIFEST_TEMP, text, true, &scratch);
  paths_free(&scratch);
  free(text);
  return ours;
}

static void refuse(const EmitDir *d, const char *rel, const char *what) {
  char *full = shown_path(d, rel);
  diag_error(file_loc(full), "%s; kasgen refuses to write into '%s' (it only overwrites files "
             "listed in its %s)", what, d->path, MANIFEST_NAME);
  diag_note(file_loc(d->path), "move the file away or choose another --out folder");
  free(full);
}

/* Checks one entry `name` of folder dirfd (at `rel` below the root, "" for the root). */
static bool check_entry(EmitDir *d, int dirfd, const char *rel, const char *name, int depth);

/* Walks folder dirfd (at rel) and checks every entry; false after the first foreign one. */
static bool check_folder(EmitDir *d, int dirfd, const char *rel, int depth) {
  int fd = dup(dirfd);
  DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
  if (!dir) {
    if (fd >= 0) close(fd);
    error_at(d, rel, "cannot read folder: %s", strerror(errno));
    return false;
  }
  bool ok = true;
  for (struct dirent *ent; ok && (ent = readdir(dir));) {
    if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..")) continue;
    if (!*rel && is_run_output(ent->d_name)) continue;
    ok = check_entry(d, dirfd, rel, ent->d_name, depth);
  }
  closedir(dir);
  return ok;
}

static bool check_entry(EmitDir *d, int dirfd, const char *rel, const char *name, int depth) {
  char *child = *rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
  struct stat st;
  bool ok = false;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    error_at(d, child, "cannot inspect: %s", strerror(errno));
  } else if (S_ISLNK(st.st_mode)) {
    refuse(d, child, "a symbolic link, not written by kasgen");
  } else if (S_ISDIR(st.st_mode)) {
    int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (paths_contain(&d->old, child))
      refuse(d, child, "listed in the manifest as a file but now a folder");
    else if (depth >= MAX_DEPTH)
      refuse(d, child, "folders nested this deep are not kasgen's");
    else if (sub < 0)
      error_at(d, child, "cannot read folder: %s", strerror(errno));
    else
      ok = check_folder(d, sub, child, depth + 1);
    if (sub >= 0) close(sub);
  } else if (!S_ISREG(st.st_mode)) {
    refuse(d, child, "not a plain file (device, FIFO or socket)");
  } else if (!*rel && !strcmp(name, MANIFEST_NAME)) {
    ok = true; /* the manifest itself, already read */
  } else if (!*rel && !strcmp(name, MANIFEST_TEMP)) {
    ok = d->manifest_temp = is_our_manifest_temp(d);
    if (!ok) refuse(d, child, "a file named like kasgen's temporary manifest, but not one");
  } else if (paths_contain(&d->old, child)) {
    ok = true;
  } else {
    refuse(d, child, "a file not written by kasgen");
  }
  free(child);
  return ok;
}

/* Opens (creating when missing) the folder at path: the parent as the user named it, the last
 * component without following a symbolic link.  -1 after a diagnostic. */
static int open_output_folder(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *last = slash ? slash + 1 : path;
  if (!strcmp(last, ".") || !strcmp(last, "..") || !*last) { /* "--out ." names it as is */
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) diag_error(file_loc(path), "cannot open this folder: %s", strerror(errno));
    return fd;
  }
  char *parent = path_folder(path);
  int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (pfd < 0 && errno == ENOENT) { /* mkdir -p of the parent, which the user named */
    for (char *p = parent + 1; *p; p++)
      if (*p == '/') *p = '\0', mkdir(parent, 0777), *p = '/';
    mkdir(parent, 0777);
    pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  int fd = -1;
  if (pfd < 0) {
    diag_error(file_loc(parent), "cannot open or create this folder: %s", strerror(errno));
  } else {
    fd = openat(pfd, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && mkdirat(pfd, last, 0777) == 0)
      fd = openat(pfd, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
        fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0)
      diag_error(file_loc(path), "exists and is not a folder (%s); refusing to write there",
                 S_ISLNK(st.st_mode) ? "a symbolic link" : "a file");
    else if (fd < 0)
      diag_error(file_loc(path), "cannot open or create this folder: %s", strerror(errno));
    close(pfd);
  }
  free(parent);
  return fd;
}

EmitDir *emit_dir_open(const char *path) {
  EmitDir *d = xcalloc(1, sizeof *d);
  d->path = xstrdup(path);
  d->errors_at_open = diag_error_count();
  size_t len = strlen(d->path);
  while (len > 1 && d->path[len - 1] == '/') d->path[--len] = '\0';
  d->fd = open_output_folder(d->path);
  if (d->fd < 0 || !read_manifest(d) || !check_folder(d, d->fd, "", 0)) {
    if (d->fd >= 0) close(d->fd);
    paths_free(&d->old);
    free(d->path);
    free(d);
    return NULL;
  }
  return d;
}

/* Whether emit_dir_open would accept path, looked at before a search so that a refusal costs
 * nothing; a folder that is not there yet is accepted (cli_check_output judges its parent).
 * A symbolic link is opened too, so that its refusal comes now, not after the search. */
bool emit_dir_acceptable(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0 || !(S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode))) return true;
  EmitDir *d = emit_dir_open(path);
  bool ok = d != NULL;
  emit_dir_discard(d);
  return ok;
}

const char *emit_dir_path(const EmitDir *d) { return d->path; }

bool emit_dir_write(EmitDir *d, const char *relpath, const char *text) {
  const char *why = relpath_problem(relpath);
  if (!why && (!strcmp(relpath, MANIFEST_NAME) || ends_with(relpath, TEMP_SUFFIX) ||
               is_run_output(relpath)))
    why = "reserved name";
  if (why) {
    diag_error(file_loc(relpath), "internal: emitter asked to write a bad path (%s)", why);
    return false;
  }
  int before = d->written.n;
  paths_add(&d->written, relpath);
  if (d->written.n > before) {
    d->files = xrealloc(d->files, (size_t)d->written.cap * sizeof *d->files);
    d->files[before] = (PendingFile){d->written.items[before], xstrdup(text)};
    return true;
  }
  for (int i = 0; i < d->written.n; i++) /* the same path twice: the last text wins */
    if (!strcmp(d->files[i].rel, relpath)) {
      free(d->files[i].text);
      d->files[i].text = xstrdup(text);
    }
  return true;
}

const char *emit_dir_text(const EmitDir *d, const char *relpath) {
  if (!paths_contain(&d->written, relpath)) return NULL;
  for (int i = d->written.n - 1; i >= 0; i--)
    if (!strcmp(d->files[i].rel, relpath)) return d->files[i].text;
  return NULL;
}

/* ---- closing: manifest, files, removals, manifest ----------------------------------------- */

/* Removes the old file rel if it is still a plain file, then its folders while they are empty
 * (only when the file was there: a folder that was already empty is left alone).  True when it
 * is gone; false (errno set) when something else stands in its way.  Nothing is
 * followed: every folder of the path is opened with O_NOFOLLOW from the one before. */
static bool remove_old_file(const EmitDir *d, const char *rel) {
  char *parts = xstrdup(rel);
  char *names[MAX_DEPTH + 2];
  int fds[MAX_DEPTH + 2], n = 0; /* names[k] is opened from fds[k]; fds[0] is the root */
  names[n++] = parts;
  for (char *s = parts; (s = strchr(s, '/')) && n < MAX_DEPTH + 2; s++) {
    *s = '\0';
    names[n++] = s + 1;
  }
  fds[0] = d->fd;
  int opened = 1;
  bool gone = false, ok = true;
  for (; opened < n; opened++) {
    fds[opened] = openat(fds[opened - 1], names[opened - 1],
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fds[opened] < 0) {
      /* a folder of its path is missing, or not a folder (links were refused at open): the
       * file cannot be there */
      gone = errno == ENOENT || errno == ENOTDIR;
      ok = gone;
      break;
    }
  }
  struct stat st;
  if (!gone && ok && fstatat(fds[n - 1], names[n - 1], &st, AT_SYMLINK_NOFOLLOW) != 0)
    gone = errno == ENOENT, ok = gone;
  /* A folder where the listed file was: this run made it, for files of its own (a listed path
   * that was a folder at open was refused).  Folders are never listed: the entry just goes. */
  if (!gone && ok && S_ISDIR(st.st_mode)) gone = true;
  if (!gone && ok) ok = remove_plain_file(fds[n - 1], names[n - 1]);
  int saved = errno;
  bool parents = ok && !gone; /* folders emptied by removing the file now, innermost first */
  for (int k = opened - 1; k > 0; k--) {
    close(fds[k]);
    if (parents && unlinkat(fds[k - 1], names[k - 1], AT_REMOVEDIR) != 0) parents = false;
  }
  free(parts);
  errno = saved;
  return ok;
}

bool emit_dir_close(EmitDir *d) {
  if (!d) return false;
  bool ok = diag_error_count() <= d->errors_at_open; /* else: write nothing at all */
  /* The first manifest: old entries, new files and their temporaries; not an old entry that a
   * new file needs as a folder (folders are never listed: the next run would refuse it). */
  PathSet folders = {0}, all = {0};
  for (int i = 0; ok && i < d->written.n; i++) {
    char *p = xstrdup(d->written.items[i]);
    for (char *slash; (slash = strrchr(p, '/'));) *slash = '\0', paths_add(&folders, p);
    free(p);
  }
  for (int i = 0; ok && i < d->old.n; i++)
    if (!paths_contain(&folders, d->old.items[i])) paths_add(&all, d->old.items[i]);
  for (int i = 0; ok && i < d->written.n; i++) {
    char *temp = temp_of(d->written.items[i]);
    paths_add(&all, d->written.items[i]);
    paths_add(&all, temp);
    free(temp);
  }
  for (int i = 0; ok && i < d->written.n; i++) ok = can_install(d, d->written.items[i]);
  if (ok && d->manifest_temp) ok = remove_plain_file(d->fd, MANIFEST_TEMP);
  if (ok) ok = write_manifest(d, all.items, all.n);
  for (int i = 0; ok && i < d->written.n; i++)
    ok = install_file(d, d->files[i].rel, d->files[i].text);
  PathSet kept = {0}; /* the second manifest: what is there now */
  for (int i = 0; ok && i < d->written.n; i++) paths_add(&kept, d->written.items[i]);
  for (int i = 0; ok && i < d->old.n; i++) {
    const char *rel = d->old.items[i];
    if (paths_contain(&d->written, rel)) continue;
    if (!remove_old_file(d, rel)) {
      char *full = shown_path(d, rel);
      diag_warning(file_loc(full), "cannot remove this file of an earlier run (%s); it stays "
                   "in the manifest", errno == EEXIST ? "not a plain file" : strerror(errno));
      free(full);
      paths_add(&kept, rel);
    }
  }
  if (ok) ok = write_manifest(d, kept.items, kept.n);
  paths_free(&kept);
  paths_free(&all);
  paths_free(&folders);
  emit_dir_discard(d);
  return ok;
}

void emit_dir_discard(EmitDir *d) {
  if (!d) return;
  for (int i = 0; i < d->written.n; i++) free(d->files[i].text);
  free(d->files);
  paths_free(&d->old);
  paths_free(&d->written);
  close(d->fd);
  free(d->path);
  free(d);
}
