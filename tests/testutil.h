/*
 * testutil.h — what every cmocka test of kasgen includes: cmocka itself (which needs these
 * headers first) and paths to the repository's library and specs.
 */
#ifndef KAS_TESTUTIL_H
#define KAS_TESTUTIL_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kasgen.h"

/* Diagnostics go to stderr; tests that check a message capture it between these two calls.
 * capture_end returns what was written (malloc'ed) and restores stderr. */
static int saved_stderr = -1;
static FILE *captured;

static inline void capture_start(void) {
  fflush(stderr);
  captured = tmpfile();
  assert_non_null(captured);
  saved_stderr = dup(2);
  dup2(fileno(captured), 2);
}

static inline char *capture_end(void) {
  fflush(stderr);
  dup2(saved_stderr, 2);
  close(saved_stderr);
  long n = ftell(captured);
  rewind(captured);
  char *s = calloc(1, (size_t)n + 1);
  size_t got = fread(s, 1, (size_t)n, captured);
  s[got] = '\0';
  fclose(captured);
  return s;
}

static inline void assert_contains(const char *text, const char *needle) {
  if (!strstr(text, needle)) fail_msg("expected \"%s\" in:\n%s", needle, text);
}

/* Whether the suite runs under the sanitizers (make test SAN=1): slower, so fewer cases. */
static inline bool sanitized(void) {
  const char *s = getenv("SAN");
  return s && !strcmp(s, "1");
}

/* Node sets of small test DAGs written as 64-bit masks (bit i = node i), and back: the low
 * word of a set, which must be all of it. */
static inline NodeSet mask_set(uint64_t mask) {
  NodeSet s = nodeset_empty();
  s.w[0] = mask;
  return s;
}
static inline uint64_t set_mask(NodeSet s) {
  for (int k = 1; k < NODESET_WORDS; k++) assert_int_equal(s.w[k], 0);
  return s.w[0];
}

/* Tests run from the repository root (tests/run.sh cds there). */
#define TEST_LIBRARY "library"
#define TEST_SPECS "specs"
#endif
