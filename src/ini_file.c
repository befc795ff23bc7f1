/*
 * ini_file.c — INI files read by inih with every key and value located: Debian's inih gives its
 * handler no line numbers, so the text is fed through our own line reader (ini_parse_stream),
 * which knows the line inih is working on; every key's and value's column is found in that raw
 * line.  The library's files (library.c) and a generated folder's generation.ini
 * (generation.c) are read so.
 */
#include "kasgen.h"

#include <ini.h>
#include <stdlib.h>
#include <string.h>

/* inih's heap line buffer; longer lines are rejected before inih sees them. */
#define MAX_INI_LINE 8192

SrcLoc ini_file_loc(const IniFile *f, int line, int col) {
  return (SrcLoc){.file = f->path, .text = f->text, .line = line, .col = col};
}

/* Reports a well-formed section header line to the file's callback. */
static void notice_section(IniFile *f) {
  const char *s = f->line;
  while (*s == ' ' || *s == '\t') s++;
  if (*s != '[' || !f->on_section) return;
  const char *end = strchr(s, ']');
  const char *nl = strchr(s, '\n');
  if (!end || (nl && end > nl)) return; /* inih reports the malformed header */
  char *name = xstrndup(s + 1, (size_t)(end - s - 1));
  f->on_section(f, name, ini_file_loc(f, f->lineno, (int)(s - f->line) + 1));
  free(name);
}

/* fgets-style reader over the text: one whole line per call (lines were length-checked). */
static char *read_line(char *str, int num, void *stream) {
  IniFile *f = stream;
  if (f->text[f->pos] == '\0') return NULL;
  const char *start = f->text + f->pos;
  const char *nl = strchr(start, '\n');
  size_t len = nl ? (size_t)(nl - start) + 1 : strlen(start);
  if (len > (size_t)num - 1) len = (size_t)num - 1;
  memcpy(str, start, len);
  str[len] = '\0';
  f->pos += len;
  f->line = start;
  f->lineno++;
  notice_section(f);
  return str;
}

/* Column (1-based) of the first character of the value on the current line. */
static int value_column(const IniFile *f) {
  const char *eq = strpbrk(f->line, "=:");
  if (!eq) return 0;
  const char *v = eq + 1;
  while (*v == ' ' || *v == '\t') v++;
  return (int)(v - f->line) + 1;
}

static int key_column(const IniFile *f) {
  const char *s = f->line;
  while (*s == ' ' || *s == '\t') s++;
  return (int)(s - f->line) + 1;
}

static int ini_handler_cb(void *user, const char *section, const char *name, const char *value) {
  IniFile *f = user;
  f->on_pair(f, section, name, value, ini_file_loc(f, f->lineno, key_column(f)),
             ini_file_loc(f, f->lineno, value_column(f)));
  return 1; /* keep going: we collect every error ourselves */
}

/* Parses text; syntax errors inih finds are reported as ours.  Returns false on any. */
bool ini_run(IniFile *f) {
  int line = 1;
  for (const char *s = f->text; *s;) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    if (len + 3 > MAX_INI_LINE) {
      diag_error(ini_file_loc(f, line, 0), "line too long (%zu characters; at most %d)", len,
                 MAX_INI_LINE - 3);
      return false;
    }
    if (!nl) break;
    s = nl + 1;
    line++;
  }
  /* Debian's inih exposes its compile-time options as variables: a heap buffer long enough for
   * any line we accept, and no Python-style continuation lines (an indented line would
   * silently extend the previous value). */
  ini_use_stack = false;
  ini_allow_realloc = false;
  ini_max_line = MAX_INI_LINE;
  ini_initial_alloc = MAX_INI_LINE;
  ini_allow_multiline = false;
  ini_stop_on_first_error = false;
  /* A leading byte order mark is skipped here, not by inih, so that the columns of line 1
   * count from after it, as the spec's do and as the source lines are shown (util.c). */
  f->pos = (size_t)utf8_bom_len(f->text);
  int rc = ini_parse_stream(read_line, f, ini_handler_cb, f);
  if (rc > 0) {
    diag_error(ini_file_loc(f, rc, 0), "expected 'key = value', '[section]' or a comment");
    return false;
  }
  if (rc < 0) {
    diag_error(ini_file_loc(f, 0, 0), "cannot parse (inih error %d)", rc);
    return false;
  }
  return true;
}
