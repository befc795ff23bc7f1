/*
 * util.c — memory helpers that never return NULL, growable strings, the file reader (plain
 * files only, and "-" for the standard input), GCC-style diagnostics (file:line:col: error:
 * message, then the source line and a caret), "did you mean" spelling hints (a banded edit
 * distance), terminal progress, the reading of numbers and text from data files, and the
 * search for files kept beside the kasgen binary (its library and timing databases).
 */
#include "kasgen.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The largest input file kasgen reads (specs, INI, .cu, databases, results, manifests). */
#define MAX_INPUT_BYTES (1 << 30)

static void out_of_memory(void) {
  fputs("kasgen: fatal: out of memory\n", stderr);
  exit(1);
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) out_of_memory();
  return p;
}

void *xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) out_of_memory();
  return p;
}

void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) out_of_memory();
  return p;
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

char *xstrndup(const char *s, size_t n) {
  char *p = xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

int compare_strings(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *xvasprintf(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  char *p = xmalloc((size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  return p;
}

char *xasprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *p = xvasprintf(fmt, ap);
  va_end(ap);
  return p;
}

/* What a file system object is, for messages about a path that should be a regular file. */
static const char *kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

/* Reads fd to its end, whatever it is (the caller has looked at what it is).  A descriptor left
 * non-blocking by whoever started kasgen (a pipe on stdin) is waited on, not failed. */
static char *read_all(int fd, const char *name, size_t *len_out) {
  StrBuf sb;
  sb_init(&sb);
  char chunk[65536];
  for (;;) {
    ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, -1);
      continue;
    }
    if (got < 0) {
      diag_error((SrcLoc){.file = name}, "read failed: %s", strerror(errno));
      sb_free(&sb);
      return NULL;
    }
    if (got == 0) break;
    if (memchr(chunk, '\0', (size_t)got)) {
      sb_free(&sb);
      diag_error((SrcLoc){.file = name}, "binary file (contains a NUL byte), expected text");
      return NULL;
    }
    if (sb.len + (size_t)got > MAX_INPUT_BYTES) { /* it grew while we read it, or a pipe */
      sb_free(&sb);
      diag_error((SrcLoc){.file = name}, "cannot read: more than kasgen reads (%d MiB)",
                 MAX_INPUT_BYTES >> 20);
      return NULL;
    }
    if (sb.len + (size_t)got + 1 > sb.cap) {
      sb.cap = (sb.len + (size_t)got + 1) * 2;
      sb.data = xrealloc(sb.data, sb.cap);
    }
    memcpy(sb.data + sb.len, chunk, (size_t)got);
    sb.len += (size_t)got;
    sb.data[sb.len] = '\0';
  }
  if (len_out) *len_out = sb.len;
  if (!sb.data) return xstrdup("");
  return sb.data;
}

char *read_text_fd(int fd, const char *name, size_t *len_out) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    diag_error((SrcLoc){.file = name}, "cannot read: %s", strerror(errno));
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    diag_error((SrcLoc){.file = name}, "cannot read: it is %s, not a regular file",
               kind_of(st.st_mode));
    return NULL;
  }
  if (st.st_size > MAX_INPUT_BYTES) {
    diag_error((SrcLoc){.file = name}, "cannot read: %lld bytes, more than kasgen reads (%d MiB)",
               (long long)st.st_size, MAX_INPUT_BYTES >> 20);
    return NULL;
  }
  return read_all(fd, name, len_out);
}

bool is_stdio_path(const char *path) { return path && !strcmp(path, "-"); }

const char *input_name(const char *path) { return is_stdio_path(path) ? STDIN_NAME : path; }

char *absolute_path(const char *path) {
  char *absolute = is_stdio_path(path) ? NULL : realpath(path, NULL);
  return absolute ? absolute : xstrdup(path);
}

char *path_folder(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return xstrdup(".");
  return xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* The first folder/names[k] that accept takes, or NULL. */
static char *find_in_folder(const char *folder, const char *const names[], size_t count,
                            bool (*accept)(const char *path)) {
  for (size_t k = 0; k < count; k++) {
    char *path = xasprintf("%s/%s", folder, names[k]);
    if (accept(path)) return path;
    free(path);
  }
  return NULL;
}

char *find_beside_binary(const char *argv0, const char *const names[], size_t count,
                         bool (*accept)(const char *path)) {
  char *found = NULL;
  if (argv0 && strchr(argv0, '/')) {
    char *folder = path_folder(argv0);
    found = find_in_folder(folder, names, count, accept);
    free(folder);
  }
  char exe[4096];
  ssize_t n = found ? 0 : readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    char *folder = path_folder(exe);
    found = find_in_folder(folder, names, count, accept);
    free(folder);
  }
  return found;
}

/* "-": the standard input, which the user chose to give (a pipe, a terminal, a redirected file
 * or device), so anything but a folder is read; once, since a second read would find it empty.
 * The command line refuses two "-" inputs before this is reached. */
static char *read_stdin(size_t *len_out) {
  static bool consumed;
  if (consumed) {
    diag_error((SrcLoc){.file = STDIN_NAME}, "cannot read: the standard input was already read "
               "for an earlier '-'");
    return NULL;
  }
  consumed = true;
  struct stat st;
  if (fstat(STDIN_FILENO, &st) != 0) {
    diag_error((SrcLoc){.file = STDIN_NAME}, "cannot read: %s", strerror(errno));
    return NULL;
  }
  if (S_ISDIR(st.st_mode)) {
    diag_error((SrcLoc){.file = STDIN_NAME}, "cannot read: it is a folder, not a file");
    return NULL;
  }
  return read_all(STDIN_FILENO, STDIN_NAME, len_out);
}

char *read_text_file(const char *path, size_t *len_out) {
  if (!path || !*path) {
    diag_error((SrcLoc){0}, "an empty file name was given where a file to read is expected");
    return NULL;
  }
  if (is_stdio_path(path)) return read_stdin(len_out);
  /* stat first, so that a device is never even opened; O_NONBLOCK so that a FIFO that appears
   * in between cannot block the open; read_text_fd's fstat has the last word. */
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    diag_error((SrcLoc){.file = path}, "cannot read: it is %s, not a regular file",
               kind_of(st.st_mode));
    return NULL;
  }
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    diag_error((SrcLoc){.file = path}, "cannot read: %s", strerror(errno));
    return NULL;
  }
  char *text = read_text_fd(fd, path, len_out);
  close(fd);
  return text;
}

/* ---- a best-first queue -------------------------------------------------------------------- */

static unsigned char *queue_slot(const BestFirstQueue *q, int k) {
  return q->v + (size_t)k * q->size;
}

/* The entries' keys are read through memcpy: an entry only begins like a QueueKey. */
static bool queue_before(const void *a, const void *b) {
  QueueKey x, y;
  memcpy(&x, a, sizeof x);
  memcpy(&y, b, sizeof y);
  return x.key < y.key || (x.key == y.key && x.order < y.order);
}

void queue_push(BestFirstQueue *q, const void *entry) {
  if (q->n == q->cap) {
    q->cap = q->cap ? 2 * q->cap : 256;
    q->v = xrealloc(q->v, q->size * (size_t)(q->cap + 1));
  }
  unsigned char *e = queue_slot(q, q->cap);
  memcpy(e, entry, q->size);
  QueueKey key;
  memcpy(&key, e, sizeof key);
  key.order = q->pushed++;
  memcpy(e, &key, sizeof key);
  int k = q->n++;
  while (k > 0 && queue_before(e, queue_slot(q, (k - 1) / 2))) {
    memcpy(queue_slot(q, k), queue_slot(q, (k - 1) / 2), q->size);
    k = (k - 1) / 2;
  }
  memcpy(queue_slot(q, k), e, q->size);
}

void queue_pop(BestFirstQueue *q, void *out) {
  memcpy(out, queue_slot(q, 0), q->size);
  unsigned char *last = queue_slot(q, q->cap);
  memcpy(last, queue_slot(q, --q->n), q->size);
  int k = 0;
  for (;;) {
    int c = 2 * k + 1;
    if (c >= q->n) break;
    if (c + 1 < q->n && queue_before(queue_slot(q, c + 1), queue_slot(q, c))) c++;
    if (!queue_before(queue_slot(q, c), last)) break;
    memcpy(queue_slot(q, k), queue_slot(q, c), q->size);
    k = c;
  }
  if (q->n > 0) memcpy(queue_slot(q, k), last, q->size);
}

double queue_least_key(const BestFirstQueue *q) {
  QueueKey key;
  memcpy(&key, q->v, sizeof key);
  return key.key;
}

void queue_free(BestFirstQueue *q) {
  free(q->v);
  *q = (BestFirstQueue){.size = q->size};
}

/* ---- diagnostics ------------------------------------------------------------------------ */

static int n_errors;
/* An error reported was in a value the command line gave, seen wrong only once a file was read
 * (diag_blame_command_line). */
static bool command_line_blamed;
/* Finding a line costs a pass over the text up to it, so a file with thousands of errors would
 * cost thousands of passes: after this many, messages come without their source line. */
enum { MAX_SOURCE_LINES_SHOWN = 100 };
static int n_source_lines_shown;

/* A leading UTF-8 byte order mark, which many Windows editors write: every reader of kasgen's
 * own text formats skips it, as most tools do, and counts columns from after it: the spec's
 * lexer (spec.c, which also reports one anywhere else in a spec), every INI file, through ini_run
 * (ini_file.c: the library's types.ini, function.ini and implementation files, a folder's
 * generation.ini), and the source line a diagnostic shows (show_source_line, below).  The XML
 * files (results, timing databases, calibration stores) are read by libxml2, which skips it
 * itself. */
int utf8_bom_len(const char *text) { return strncmp(text, "\xEF\xBB\xBF", 3) ? 0 : 3; }

int utf8_char_len(const char *p) {
  const unsigned char *u = (const unsigned char *)p;
  if (u[0] < 0x80) return 1;
  /* The lead byte gives the length; the second byte's range rules out overlong forms (E0, F0),
   * the surrogates U+D800-U+DFFF (ED) and code points beyond U+10FFFF (F4). */
  int n;
  unsigned char lo = 0x80, hi = 0xbf;
  if (u[0] >= 0xc2 && u[0] <= 0xdf) n = 2;
  else if (u[0] >= 0xe0 && u[0] <= 0xef) n = 3;
  else if (u[0] >= 0xf0 && u[0] <= 0xf4) n = 4;
  else return 0;
  if (u[0] == 0xe0) lo = 0xa0;
  if (u[0] == 0xed) hi = 0x9f;
  if (u[0] == 0xf0) lo = 0x90;
  if (u[0] == 0xf4) hi = 0x8f;
  if (u[1] < lo || u[1] > hi) return 0;
  for (int k = 2; k < n; k++)
    if ((u[k] & 0xc0) != 0x80) return 0;
  return n;
}

/* Prints n bytes of a source line as they are but for control characters other than a tab
 * (control_char_len) and stray bytes, one '?' a byte: the line is the input's, a terminal would
 * act on an escape sequence in it (a stray 0x9b is one to an 8-bit terminal), and the caret
 * below stays under its column. */
static void put_source_text(const char *p, size_t n) {
  for (size_t i = 0; i < n;) {
    size_t len = (size_t)utf8_char_len(p + i);
    bool plain = len && (p[i] == '\t' || !control_char_len(p + i));
    if (!len) len = 1;
    for (size_t k = 0; k < len && i + k < n; k++) fputc(plain ? p[i + k] : '?', stderr);
    i += len;
  }
}

/* Prints the source line of loc and a caret under its column, as GCC does. */
static void show_source_line(SrcLoc loc) {
  if (!loc.text || loc.line <= 0) return;
  if (n_source_lines_shown++ >= MAX_SOURCE_LINES_SHOWN) {
    if (n_source_lines_shown == MAX_SOURCE_LINES_SHOWN + 1)
      fputs("kasgen: note: too many diagnostics; source lines are no longer shown\n", stderr);
    return;
  }
  const char *p = loc.text + utf8_bom_len(loc.text); /* columns count from after it */
  for (int l = 1; l < loc.line && *p; p++)
    if (*p == '\n') l++;
  const char *end = strchr(p, '\n');
  size_t len = end ? (size_t)(end - p) : strlen(p);
  if (len && p[len - 1] == '\r') len--; /* a CRLF line's CR is part of its end, not shown */
  /* Very long lines (a 10 MB line in a malformed spec) are shown around the column only. */
  size_t from = 0, shown = len;
  if (loc.col > 0 && len > 200) {
    size_t c = (size_t)loc.col - 1;
    from = c > 60 ? c - 60 : 0;
    shown = len - from < 140 ? len - from : 140;
  } else if (len > 200) {
    shown = 140;
  }
  fprintf(stderr, " %5d | %s", loc.line, from ? "..." : "");
  put_source_text(p + from, shown);
  fprintf(stderr, "%s\n", from + shown < len ? "..." : "");
  if (loc.col > 0) {
    fprintf(stderr, "       | %s", from ? "   " : "");
    for (size_t i = from; i + 1 < (size_t)loc.col && i < from + shown; i++)
      fputc(p[i] == '\t' ? '\t' : ' ', stderr);
    fputs("^\n", stderr);
  }
}

static void vdiag(const char *kind, SrcLoc loc, const char *fmt, va_list ap) {
  if (loc.file) {
    /* a file's name is as much the input's as its text: a folder named "x\nerror: ..." */
    put_source_text(loc.file, strlen(loc.file));
    if (loc.line > 0) fprintf(stderr, ":%d", loc.line);
    if (loc.line > 0 && loc.col > 0) fprintf(stderr, ":%d", loc.col);
    fprintf(stderr, ": %s: ", kind);
  } else {
    fprintf(stderr, "kasgen: %s: ", kind);
  }
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  show_source_line(loc);
}

void diag_error(SrcLoc loc, const char *fmt, ...) {
  n_errors++;
  va_list ap;
  va_start(ap, fmt);
  vdiag("error", loc, fmt, ap);
  va_end(ap);
}

void diag_warning(SrcLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vdiag("warning", loc, fmt, ap);
  va_end(ap);
}

/* Every key diag_said_before has seen, for the whole run: one command runs several searches
 * (the ranking's, each loop's groups of threads, the #1's block shapes; calibrate one per spec)
 * and a line said in one need not be said again.  Kept reachable until exit (not a leak). */
static char **said_keys;
static int nsaid_keys;

bool diag_said_before(const char *key) {
  for (int i = 0; i < nsaid_keys; i++)
    if (!strcmp(said_keys[i], key)) return true;
  said_keys = xrealloc(said_keys, sizeof *said_keys * (size_t)(nsaid_keys + 1));
  said_keys[nsaid_keys++] = xstrdup(key);
  return false;
}

void diag_warning_once(SrcLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *message = xvasprintf(fmt, ap);
  va_end(ap);
  char *key = xasprintf("%s:%d:%d: %s", loc.file ? loc.file : "", loc.line, loc.col, message);
  if (!diag_said_before(key)) diag_warning(loc, "%s", message);
  free(key);
  free(message);
}

void diag_note(SrcLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vdiag("note", loc, fmt, ap);
  va_end(ap);
}

int diag_error_count(void) { return n_errors; }

void diag_blame_command_line(void) { command_line_blamed = true; }

bool diag_command_line_blamed(void) { return command_line_blamed; }

static int hint_searches; /* name_hint_start calls this run (HINT_MAX_SEARCHES bounds them) */

void diag_reset(void) {
  n_errors = 0;
  command_line_blamed = false;
  n_source_lines_shown = 0;
  hint_searches = 0;
}

/* ---- spelling hints ------------------------------------------------------------------------ */

static bool same_char(char x, char y, bool fold_case) {
  return fold_case ? tolower((unsigned char)x) == tolower((unsigned char)y) : x == y;
}

/* Optimal string alignment distance (Levenshtein plus transposition of two adjacent
 * characters), computed only in the band |i - j| <= cap: a cell outside it is at least cap + 1
 * away, so the band decides every answer up to cap.  Three rows of the table, rotated; the cells
 * just outside each row's band are set to cap + 1 so that the next rows read no stale value. */
int edit_distance_capped(const char *a, size_t alen, const char *b, size_t blen, int cap,
                         bool fold_case) {
  enum { MAX_LEN = HINT_MAX_NAME + HINT_MAX_DISTANCE };
  int far = cap + 1;
  if (cap < 0 || cap > HINT_MAX_DISTANCE || alen > MAX_LEN || blen > MAX_LEN) return far;
  if ((alen > blen ? alen - blen : blen - alen) > (size_t)cap) return far;
  int rows[3][MAX_LEN + 2];
  int *before = rows[0], *prev = rows[1], *cur = rows[2];
  int n = (int)alen, m = (int)blen;
  for (int j = 0; j <= m + 1; j++) prev[j] = j <= cap ? j : far;
  for (int i = 1; i <= n; i++) {
    int lo = i - cap > 1 ? i - cap : 1, hi = i + cap < m ? i + cap : m;
    cur[lo - 1] = lo == 1 ? (i <= cap ? i : far) : far;
    for (int j = lo; j <= hi; j++) {
      int cost = same_char(a[i - 1], b[j - 1], fold_case) ? 0 : 1;
      int d = prev[j - 1] + cost;
      if (prev[j] + 1 < d) d = prev[j] + 1;
      if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
      if (i > 1 && j > 1 && same_char(a[i - 1], b[j - 2], fold_case) &&
          same_char(a[i - 2], b[j - 1], fold_case) && before[j - 2] + 1 < d)
        d = before[j - 2] + 1;
      cur[j] = d < far ? d : far;
    }
    if (hi + 1 <= m + 1) cur[hi + 1] = far;
    int *spare = before;
    before = prev, prev = cur, cur = spare;
  }
  return prev[m] < far ? prev[m] : far;
}

void name_hint_start(NameHint *h, const char *name, size_t len) {
  *h = (NameHint){.name = name, .len = len, .limit = -1, .best_id = -1};
  if (++hint_searches > HINT_MAX_SEARCHES || len == 0 || len > HINT_MAX_NAME) return;
  int half = (int)((len - 1) / 2); /* the largest distance less than half the length */
  h->limit = half < HINT_MAX_DISTANCE ? half : HINT_MAX_DISTANCE;
}

void name_hint_offer(NameHint *h, const char *candidate, int id) {
  if (h->limit < 0 || !candidate) return;
  size_t clen = strlen(candidate);
  if ((clen > h->len ? clen - h->len : h->len - clen) > (size_t)h->limit) return;
  int d = edit_distance_capped(h->name, h->len, candidate, clen, h->limit, true);
  if (d > h->limit || (h->best && d > h->best_distance)) return;
  int case_cost =
      edit_distance_capped(h->name, h->len, candidate, clen, HINT_MAX_DISTANCE, false);
  if (h->best && d == h->best_distance &&
      (case_cost > h->best_case_cost ||
       (case_cost == h->best_case_cost && strcmp(candidate, h->best) >= 0)))
    return;
  h->best = candidate;
  h->best_distance = d;
  h->best_case_cost = case_cost;
  h->best_id = id;
}

/* ---- time and progress ------------------------------------------------------------------- */

/* Nanoseconds kasgen has spent stopped.  Kept here, not in interrupt.c, whose handler adds to
 * it, so that the clock does not call up into the signal handling (layers.sh: no circle). */
static atomic_llong stopped_ns;
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "stopped_ns must be lock-free: a handler writes it");

void clock_add_stopped(double seconds) {
  atomic_fetch_add(&stopped_ns, (long long)(seconds * 1e9));
}

double clock_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9 - (double)atomic_load(&stopped_ns) * 1e-9;
}

static int progress_shown;
static char progress_what[96]; /* the line shown last, and when */
static double progress_at;

/* Each line clears the one before: lines of several phases follow one another.  A phase's line
 * is written at most ten times a second (a beam's levels come by the thousand). */
void progress(const char *what, long done, long total) {
  if (!isatty(STDERR_FILENO)) return;
  double now = clock_seconds();
  if (progress_shown && now - progress_at < 0.1 &&
      strncmp(what, progress_what, sizeof progress_what - 1) == 0)
    return;
  snprintf(progress_what, sizeof progress_what, "%s", what);
  progress_at = now;
  if (total > 0)
    fprintf(stderr, "\r\033[K%s: %ld/%ld (%3.0f%%)", what, done, total, 100.0 * done / total);
  else
    fprintf(stderr, "\r\033[K%s: %ld", what, done);
  progress_shown = 1;
}

void progress_done(void) {
  if (progress_shown && isatty(STDERR_FILENO)) fputs("\r\033[K", stderr);
  progress_shown = 0;
}

/* ---- string buffers ----------------------------------------------------------------------- */

void sb_init(StrBuf *sb) { *sb = (StrBuf){0}; }

static void sb_reserve(StrBuf *sb, size_t extra) {
  if (sb->len + extra + 1 <= sb->cap) return;
  size_t cap = sb->cap ? sb->cap : 256;
  while (cap < sb->len + extra + 1) cap *= 2;
  sb->data = xrealloc(sb->data, cap);
  sb->cap = cap;
}

void sb_putc(StrBuf *sb, char c) {
  sb_reserve(sb, 1);
  sb->data[sb->len++] = c;
  sb->data[sb->len] = '\0';
}

void sb_puts(StrBuf *sb, const char *s) {
  size_t n = strlen(s);
  sb_reserve(sb, n);
  memcpy(sb->data + sb->len, s, n + 1);
  sb->len += n;
}

void sb_printf(StrBuf *sb, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  sb_reserve(sb, (size_t)n);
  vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  sb->len += (size_t)n;
}

void sb_free(StrBuf *sb) {
  free(sb->data);
  *sb = (StrBuf){0};
}

char *sb_take(StrBuf *sb) {
  char *s = sb->data ? sb->data : xstrdup("");
  *sb = (StrBuf){0};
  return s;
}

/* ---- long lists shortened for a table ----------------------------------------------------- */

/* s, a list of items split by sep, in at most width characters where it can be: the leading
 * items that fit, "...", the last item and the count ("a+b+...+z (128 calls)").  The last item
 * stays because variants of one kernel often differ there (a final call's implementation).
 * note: what followed the list in s (" (N = 0..3 in 4 groups)"), said with the count. */
static char *brief_items(const char *s, const char *sep, size_t width, const char *noun,
                         const char *note) {
  size_t seplen = strlen(sep);
  int n = 1;
  const char *last = s;
  for (const char *p = strstr(s, sep); p; p = strstr(p + seplen, sep)) n++, last = p + seplen;
  if (strlen(s) + strlen(note) <= width || n < 3) return xasprintf("%s%s", s, note);
  const char *said = strncmp(note, " (", 2) ? "" : note + 2; /* "N = 0..3 in 4 groups)" */
  char *tail = *said ? xasprintf("%s...%s%s (%d %s; %s", sep, sep, last, n, noun, said)
                     : xasprintf("%s...%s%s (%d %s)", sep, sep, last, n, noun);
  StrBuf sb;
  sb_init(&sb);
  for (const char *p = s; p < last;) { /* whole items, at least the first */
    const char *end = strstr(p, sep);
    size_t item = (size_t)(end - p);
    if (sb.len && sb.len + seplen + item + strlen(tail) > width) break;
    if (sb.len) sb_puts(&sb, sep);
    sb_printf(&sb, "%.*s", (int)item, p);
    p = end + seplen;
  }
  sb_puts(&sb, tail);
  free(tail);
  return sb_take(&sb);
}

char *brief_list(const char *s, const char *sep, size_t width) {
  return brief_items(s, sep, width, "calls", "");
}

/* One kernel of brief_kernels: its implementations, shortened, and the note after them. */
static char *brief_kernel(const char *kernel, size_t width) {
  const char *plus = strrchr(kernel, '+'), *note = strstr(plus ? plus : kernel, " (");
  char *chain = note ? xstrndup(kernel, (size_t)(note - kernel)) : xstrdup(kernel);
  char *brief = brief_items(chain, "+", width, "calls", note ? note : "");
  free(chain);
  return brief;
}

char *brief_kernels(const char *kernels, size_t width) {
  if (strlen(kernels) <= width) return xstrdup(kernels);
  const char *bar = " | ";
  int n = 1;
  for (const char *p = strstr(kernels, bar); p; p = strstr(p + 3, bar)) n++;
  size_t each = width / (size_t)n > 32 ? width / (size_t)n : 32; /* a kernel's share */
  StrBuf sb;
  sb_init(&sb);
  for (const char *p = kernels;;) {
    const char *end = strstr(p, bar);
    char *kernel = end ? xstrndup(p, (size_t)(end - p)) : xstrdup(p);
    char *brief = brief_kernel(kernel, each);
    sb_printf(&sb, "%s%s", sb.len ? bar : "", brief);
    free(brief), free(kernel);
    if (!end) break;
    p = end + 3;
  }
  char *joined = sb_take(&sb), *out = brief_items(joined, bar, width, "kernels", "");
  free(joined);
  return out;
}

/* ---- words wrapped into lines ------------------------------------------------------------- */

/* The columns a terminal gives the len bytes at s: one per UTF-8 character (terminal_text's
 * output is valid UTF-8 but for its escapes, which are ASCII). */
static size_t text_columns(const char *s, size_t len) {
  size_t n = 0;
  for (size_t i = 0; i < len; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
  return n;
}

size_t sb_wrap_words(StrBuf *sb, const char *text, size_t col, size_t width, const char *next,
                     size_t next_col) {
  bool after_word = col > 0; /* a line that holds no word yet is not broken before one */
  for (const char *p = text; *p;) {
    if (*p == ' ') {
      p++;
      continue;
    }
    size_t len = strcspn(p, " "), w = text_columns(p, len);
    if (after_word && col + 1 + w > width) {
      sb_puts(sb, next);
      col = next_col;
    }
    bool spaced = col > 0;
    sb_printf(sb, "%s%.*s", spaced ? " " : "", (int)len, p);
    col += w + spaced;
    after_word = true;
    p += len;
  }
  return col;
}

char *wrapped_text(const char *text, size_t width) {
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, "");
  sb_wrap_words(&sb, text, 0, width, "\n ", 1);
  return sb_take(&sb);
}

/* ---- hashing text ------------------------------------------------------------------------- */

uint64_t fnv1a(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* ---- numbers in data files --------------------------------------------------------------- */

static const char *past_digits(const char *p) {
  while (*p >= '0' && *p <= '9') p++;
  return p;
}

/* Whether s is written as a plain decimal and nothing else: a sign, digits, for a fraction a
 * point with a digit on one side of it at least and an exponent of digits.  strtod, strtol
 * alone take more: leading spaces, and for strtod hex floats, inf and nan. */
static bool plain_decimal(const char *s, bool fraction) {
  const char *p = s + (*s == '+' || *s == '-'), *end = past_digits(p);
  bool digits = end > p;
  if (fraction && *end == '.') {
    p = end + 1;
    end = past_digits(p);
    digits |= end > p;
  }
  if (fraction && digits && (*end == 'e' || *end == 'E')) {
    p = end + 1 + (end[1] == '+' || end[1] == '-');
    end = past_digits(p);
    digits = end > p;
  }
  return digits && !*end;
}

bool is_plain_decimal(const char *s) { return plain_decimal(s, true); }

bool parse_decimal(const char *s, double *out) {
  if (!plain_decimal(s, true)) return false;
  errno = 0;
  double v = strtod(s, NULL);
  if (errno || !isfinite(v)) return false; /* beyond a double's range */
  *out = v;
  return true;
}

bool parse_decimal_long(const char *s, long *out) {
  if (!plain_decimal(s, false)) return false;
  errno = 0;
  long v = strtol(s, NULL, 10);
  if (errno) return false;
  *out = v;
  return true;
}

/* ---- text from input shown on the terminal ------------------------------------------------ */

int control_char_len(const char *p) {
  const unsigned char *u = (const unsigned char *)p;
  if ((*u && *u < 0x20) || *u == 0x7f) return 1;
  /* C1 codes, U+0080-U+009F, are 0xC2 0x80-0x9F in UTF-8: U+009B is a CSI to many terminals. */
  if (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f) return 2;
  /* The bidirectional embeddings and overrides U+202A-U+202E (0xE2 0x80 0xAA-0xAE) and isolates
   * U+2066-U+2069 (0xE2 0x81 0xA6-0xA9) reorder what a terminal shows after them: a name could
   * show one text and be another ("Trojan Source"). */
  if (u[0] == 0xe2 && ((u[1] == 0x80 && u[2] >= 0xaa && u[2] <= 0xae) ||
                       (u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9)))
    return 3;
  return 0;
}

char *terminal_text(const char *s) {
  StrBuf sb;
  sb_init(&sb);
  for (const char *p = s; *p;) {
    int len = utf8_char_len(p);
    if (len > 0 && *p != '\\' && !control_char_len(p)) {
      sb_printf(&sb, "%.*s", len, p);
    } else {
      len = len ? len : 1; /* a control character's bytes, or one stray byte */
      for (int k = 0; k < len; k++) sb_printf(&sb, "\\%03o", (unsigned char)p[k]);
    }
    p += len;
  }
  return sb_take(&sb);
}

/* ---- text from input inside generated code ------------------------------------------------ */

char *c_safe_text(const char *s) {
  StrBuf sb;
  sb_init(&sb);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    unsigned char c = *p;
    bool comment_mark = c == '/' && (p[1] == '*' || (p > (const unsigned char *)s && p[-1] == '*'));
    /* Octal, three digits, so that a following digit cannot join the escape.  Escaped: bytes
     * outside printable ASCII (a newline would end a // comment), backslash and quote (a
     * backslash before a newline splices lines even in a comment), '?' (trigraphs), and a '/'
     * that would open or close a comment next to a '*'. */
    if (c < 0x20 || c >= 0x7f || c == '\\' || c == '"' || c == '?' || comment_mark)
      sb_printf(&sb, "\\%03o", c);
    else
      sb_putc(&sb, (char)c);
  }
  return sb_take(&sb);
}

/* ---- checked output ----------------------------------------------------------------------- */

FILE *output_open(const char *path) {
  if (!path || !*path) {
    diag_error((SrcLoc){0}, "an empty file name was given where a file to write is expected");
    return NULL;
  }
  FILE *f = fopen(path, "w");
  if (!f) diag_error((SrcLoc){.file = path}, "cannot write: %s", strerror(errno));
  return f;
}

FILE *output_open_temp(const char *path) {
  for (int attempt = 0; attempt < 2; attempt++) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
      FILE *f = fdopen(fd, "w");
      if (f) return f;
      close(fd);
      break;
    }
    struct stat st;
    if (errno != EEXIST || attempt > 0) break;
    /* A regular file of that name is an earlier run's leftover; anything else (a link, a FIFO)
     * was put there by someone, and is neither followed nor removed. */
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
      diag_error((SrcLoc){.file = path}, "exists and is not a regular file; kasgen writes "
                 "its temporary file there (remove it)");
      return NULL;
    }
    if (unlink(path) != 0) break;
  }
  diag_error((SrcLoc){.file = path}, "cannot write: %s", strerror(errno));
  return NULL;
}

bool output_close(FILE *f, const char *path, const char *what) {
  bool failed = ferror(f) != 0;
  int saved = errno;
  if (fclose(f) != 0) {
    failed = true;
    saved = errno;
  }
  if (failed)
    diag_error((SrcLoc){.file = path}, "write failed: %s; %s is lost",
               saved ? strerror(saved) : "I/O error", what);
  return !failed;
}

int stdout_checked(int status) {
  errno = 0;
  bool failed = fflush(stdout) != 0 || ferror(stdout);
  if (!failed) return status;
  diag_error((SrcLoc){0}, "cannot write the standard output: %s; what this command printed is "
             "lost", errno ? strerror(errno) : "I/O error");
  return status == EXIT_OK ? EXIT_BAD_INPUT : status;
}
