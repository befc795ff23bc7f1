/*
 * util.c — memory helpers that never return NULL, growable strings, GCC-style diagnostics
 * (file:line:col: error: message, then the source line and a caret) and terminal progress.
 */
#include "kasgen.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

char *xasprintf(const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = xmalloc((size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return p;
}

char *read_text_file(const char *path, size_t *len_out) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    diag_error((SrcLoc){.file = path}, "cannot read: %s", strerror(errno));
    return NULL;
  }
  StrBuf sb;
  sb_init(&sb);
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (memchr(chunk, '\0', got)) {
      fclose(f);
      sb_free(&sb);
      diag_error((SrcLoc){.file = path}, "binary file (contains a NUL byte), expected text");
      return NULL;
    }
    if (sb.len + got + 1 > sb.cap) {
      sb.cap = (sb.len + got + 1) * 2;
      sb.data = xrealloc(sb.data, sb.cap);
    }
    memcpy(sb.data + sb.len, chunk, got);
    sb.len += got;
    sb.data[sb.len] = '\0';
  }
  bool failed = ferror(f);
  fclose(f);
  if (failed) {
    sb_free(&sb);
    diag_error((SrcLoc){.file = path}, "read failed");
    return NULL;
  }
  if (len_out) *len_out = sb.len;
  if (!sb.data) return xstrdup("");
  return sb.data;
}

/* ---- diagnostics ------------------------------------------------------------------------ */

static int n_errors;

/* Prints the source line of loc and a caret under its column, as GCC does. */
static void show_source_line(SrcLoc loc) {
  if (!loc.text || loc.line <= 0) return;
  const char *p = loc.text;
  for (int l = 1; l < loc.line && *p; p++)
    if (*p == '\n') l++;
  const char *end = strchr(p, '\n');
  size_t len = end ? (size_t)(end - p) : strlen(p);
  /* Very long lines (a 10 MB line in a malformed spec) are shown around the column only. */
  size_t from = 0, shown = len;
  if (loc.col > 0 && len > 200) {
    size_t c = (size_t)loc.col - 1;
    from = c > 60 ? c - 60 : 0;
    shown = len - from < 140 ? len - from : 140;
  } else if (len > 200) {
    shown = 140;
  }
  fprintf(stderr, " %5d | %s%.*s%s\n", loc.line, from ? "..." : "", (int)shown, p + from,
          from + shown < len ? "..." : "");
  if (loc.col > 0) {
    fprintf(stderr, "       | %s", from ? "   " : "");
    for (size_t i = from; i + 1 < (size_t)loc.col && i < from + shown; i++)
      fputc(p[i] == '\t' ? '\t' : ' ', stderr);
    fputs("^\n", stderr);
  }
}

static void vdiag(const char *kind, SrcLoc loc, const char *fmt, va_list ap) {
  if (loc.file && loc.line > 0 && loc.col > 0)
    fprintf(stderr, "%s:%d:%d: %s: ", loc.file, loc.line, loc.col, kind);
  else if (loc.file && loc.line > 0)
    fprintf(stderr, "%s:%d: %s: ", loc.file, loc.line, kind);
  else if (loc.file)
    fprintf(stderr, "%s: %s: ", loc.file, kind);
  else
    fprintf(stderr, "kasgen: %s: ", kind);
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

void diag_note(SrcLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vdiag("note", loc, fmt, ap);
  va_end(ap);
}

int diag_error_count(void) { return n_errors; }
void diag_reset(void) { n_errors = 0; }

/* ---- progress ---------------------------------------------------------------------------- */

static int progress_shown;

void progress(const char *what, long done, long total) {
  if (!isatty(STDERR_FILENO)) return;
  if (total > 0)
    fprintf(stderr, "\r%s: %ld/%ld (%3.0f%%)   ", what, done, total, 100.0 * done / total);
  else
    fprintf(stderr, "\r%s: %ld   ", what, done);
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
