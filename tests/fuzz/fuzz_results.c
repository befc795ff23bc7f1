/*
 * fuzz_results.c — libFuzzer target for the results-file reader behind `kasgen report`
 * (src/report.c through src/xml_input.c): any bytes go through report_text, which parses, prints
 * the table (to /dev/null) and builds the gnuplot script.  The promise checked on every accepted
 * input is the one that matters: nothing from the file can become a gnuplot command.  The script
 * must be the fixed commands, one title line whose quoted text holds no quote, backquote,
 * backslash, '@', '$', control character or invalid UTF-8 (a valid character beyond ASCII has
 * no byte below 0x80, so it is none of those), then only numeric data lines and "e"
 * terminators.  A rejected input must have reported an error.  Build: tests/fuzz/build.sh.
 */
#include "kasgen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  devnull = fopen("/dev/null", "w");
  return 0;
}

/* The one line of the script that carries text from the file. */
static void check_title(const char *line, size_t len) {
  static const char head[] = "set title '", tail[] = "' noenhanced font ',10'";
  size_t hl = strlen(head), tl = strlen(tail);
  if (len < hl + tl || strncmp(line, head, hl) || strncmp(line + len - tl, tail, tl)) abort();
  for (size_t i = hl; i < len - tl;) {
    unsigned char c = (unsigned char)line[i];
    int n = c >= 0x80 ? utf8_char_len(line + i) : 1;
    if (n > 1 && i + (size_t)n <= len - tl && !control_char_len(line + i)) {
      i += (size_t)n;
      continue;
    }
    if (c < 0x20 || c >= 0x7f || strchr("'`\\@$\"", c)) abort();
    i++;
  }
}

/* A data line: "<integer> <number>" or the terminator "e". */
static void check_data(const char *line, size_t len) {
  if (len == 1 && line[0] == 'e') return;
  char *copy = strndup(line, len), *end;
  strtol(copy, &end, 10);
  if (end == copy || *end != ' ') abort();
  char *num = end + 1;
  strtod(num, &end);
  if (end == num || *end) abort();
  free(copy);
}

static void check_script(const char *script) {
  static const char *const fixed[] = {
      "set terminal png size 1000,600", "set xlabel 'candidate (predicted rank)'",
      "set ylabel 'million elements per second'", "set grid", "set key top right",
      "set yrange [0:*]", "set offsets 0.5, 0.5, 0, 0", "set xtics 1", NULL};
  bool in_data = false;
  int titles = 0;
  for (const char *p = script; *p;) {
    const char *nl = strchr(p, '\n');
    if (!nl) abort(); /* every line ends */
    size_t len = (size_t)(nl - p);
    if (in_data) {
      check_data(p, len);
    } else if (!strncmp(p, "set title ", 10)) {
      check_title(p, len), titles++;
    } else if (!strncmp(p, "plot '-' ", 9)) {
      in_data = true;
    } else {
      bool known = false;
      for (int i = 0; fixed[i]; i++) known |= strlen(fixed[i]) == len && !strncmp(p, fixed[i], len);
      if (!known) abort();
    }
    p = nl + 1;
  }
  if (titles != 1 || !in_data) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = strndup((const char *)data, size); /* as read_text_file hands it over */
  diag_reset();
  char *script = NULL;
  if (report_text("fuzz/results.xml", text, strlen(text), devnull, &script)) {
    check_script(script);
    free(script);
  } else if (diag_error_count() == 0) {
    abort();
  }
  free(text);
  return 0;
}
