/*
 * options.c — kasgen's options: one table of their names, values and help (main.c's command
 * line and help print it), and the setting of an option's value with its checks, shared by the
 * command line (main.c) and the options a generated folder records (generation.c), so that a
 * value read from a file is held to the same rules as one typed; the numeric options' ranges,
 * which the errors and --help both say from the one table that holds values to them.
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>

const OptionDoc option_docs[NOPTIONS] = {
    {"top", "N", OPT_TOP, "the N best predicted candidates (default 10)"},
    {"out", "DIR", OPT_OUT, "output folder (its default: see the command's help)"},
    {"max-fusion", "K", OPT_MAX_FUSION, "at most K calls per kernel (default: any number)"},
    {"time-limit", "S", OPT_TIME_LIMIT,
     "stop searching after S seconds and rank what was found (default 60; 0: none);\n"
     "writing the candidates afterwards is not covered"},
    {"exhaustive", NULL, OPT_EXHAUSTIVE,
     "combine every valid fusion, without the bounds that skip most (slow): exact\n"
     "where the default search says its ranking is not"},
    {"loops", "WHEN", OPT_LOOPS,
     "which runs of a spec loop's iterations kernels write as loops: model (the\n"
     "model's choice, the default), keep (every one), unroll (none); groups: a loop's\n"
     "iterations side by side in groups of threads wherever a loop allows"},
    {"beam-width", "W", OPT_BEAM_WIDTH,
     "keep W implementation choices per call inside a kernel (default 10)"},
    {"variants", "K", OPT_VARIANTS,
     "of the top N, up to K are the predicted #1 with its costliest kernel in\n"
     "other block shapes, for a GPU run to choose from (default 5; 0: none; tune:\n"
     "as the folder was generated)"},
    {"library", "DIR", OPT_LIBRARY,
     "elementary-function library (default $KASGEN_LIBRARY, else library/,\n"
     "../library or ../share/kasgen/library beside the binary, or ./library)"},
    {"db", "FILE", OPT_DB,
     "timing database (default: this machine's GPU's in benchmarks/, else\n"
     "benchmarks/nvidia-h100-80gb-hbm3.xml; - reads the standard input)"},
    {"no-db", NULL, OPT_NO_DB, "predict with the analytic model only"},
    {"dot", "FILE", OPT_DOT, "write the DAG for Graphviz (check: - for the standard output)"},
    {"explain", "R", OPT_EXPLAIN, "say why each buffer and barrier of candidate R is where it is"},
    {"n", "N", OPT_N,
     "elements per call (default 4194304): the model shares each kernel's launch\n"
     "among them and fills the GPU with N / E blocks; the harness's default count"},
    {"precision", "P", OPT_PRECISION, "real type of generated code: single (default) or double"},
    {"layout", "L", OPT_LAYOUT,
     "arrays element-major (default) or component-major (p[c*ld + e]): element,\n"
     "component, or per input and output NAME=element|component, comma-separated"},
    {"ptxas", NULL, OPT_PTXAS, "re-rank the top 30 with ptxas's register counts (nvcc; cached)"},
    {"uncalibrated", NULL, OPT_NO_CALIBRATION,
     "ignore the calibration beside the database (<db>.measured.xml)"},
    {"held-out", NULL, OPT_HELD_OUT,
     "fit once per spec on the other specs' runs and judge the spec's runs by it;\n"
     "store nothing"},
    {"spec", "FILE", OPT_SPEC,
     "the spec to search (default: DIR's copy of the one it was generated from)"},
    {"name", "NAME", OPT_NAME,
     "the spec's name: its output folder DIR/NAME/ and C API kas_NAME\n"
     "(default: SPEC's file name without its extension; required\n"
     "when SPEC is -)"},
};
_Static_assert(sizeof option_docs / sizeof option_docs[0] == NOPTIONS, "NOPTIONS (kasgen.h)");

/* ---- values ----------------------------------------------------------------------------- */

/* The integers each numeric option takes: option_set holds values to them and
 * option_value_rule says them, so that the message cannot drift from the check. */
typedef struct {
  unsigned bit;
  long min, max;
  const char *note; /* after the maximum, or NULL */
} IntRange;

static const IntRange int_ranges[] = {
    {OPT_TOP, 1, MAX_TOP, NULL},
    {OPT_MAX_FUSION, 1, KAS_MAX_NODES, " (the calls the DAG holds at most)"},
    {OPT_EXPLAIN, 1, MAX_TOP, " (and at most --top)"},
    {OPT_N, 1, (long)1 << 40, " (2^40)"},
    {OPT_BEAM_WIDTH, 1, 1000, NULL},
    {OPT_VARIANTS, 0, MAX_TOP, NULL},
};

static const IntRange *int_range(unsigned bit) {
  for (size_t k = 0; k < sizeof int_ranges / sizeof int_ranges[0]; k++)
    if (int_ranges[k].bit == bit) return &int_ranges[k];
  return NULL;
}

#define MAX_SECONDS (7 * 24 * 3600) /* --time-limit: a week */

/* Values are plain decimals (util.c), on the command line as in generation.ini: strtol and
 * strtod alone would take leading spaces and hex floats. */
static bool parse_int(const char *s, unsigned bit, long *out) {
  const IntRange *r = int_range(bit);
  long v;
  if (!parse_decimal_long(s, &v) || v < r->min || v > r->max) return false;
  *out = v;
  return true;
}

/* Seconds: a number from 0 (no limit) to a week. */
static bool parse_seconds(const char *s, double *out) {
  double v;
  if (!parse_decimal(s, &v) || !(v >= 0 && v <= MAX_SECONDS)) return false;
  *out = v;
  return true;
}

unsigned option_bit(const char *name) {
  for (int k = 0; k < NOPTIONS; k++)
    if (!strcmp(option_docs[k].name, name)) return option_docs[k].bit;
  return 0;
}

char *option_number_rule(unsigned bit) {
  const IntRange *r = int_range(bit);
  if (r)
    return xasprintf("an integer from %ld to %ld%s", r->min, r->max, r->note ? r->note : "");
  if (bit == OPT_TIME_LIMIT)
    return xasprintf("seconds from 0 (no limit) to %d (a week)", MAX_SECONDS);
  return NULL;
}

char *option_value_rule(unsigned bit) {
  char *number = option_number_rule(bit);
  if (number) {
    char *rule = xasprintf(": %s", number);
    free(number);
    return rule;
  }
  switch (bit) {
  case OPT_LOOPS: return xstrdup(": model, keep, unroll or groups");
  case OPT_PRECISION: return xstrdup(": single or double");
  case OPT_NAME: return xstrdup(NAME_RULE);
  default: return xstrdup("");
  }
}

/* A --layout text whose items' words target_new reads: its syntax, which needs no spec (the
 * names are the spec's to check: cli_open_session). */
static bool valid_layouts(const char *s) {
  const char *bad;
  int bad_len;
  return target_layouts_valid(s, &bad, &bad_len);
}

/* --name NAME names folders, files and C identifiers: what a spec's file name keeps. */
static bool valid_name(const char *s) {
  size_t len = strlen(s);
  return len > 0 && len <= 64 && s[0] != '-' && strspn(s, NAME_CHARS) == len;
}

bool option_set(CliOptions *o, unsigned bit, const char *arg) {
  long v = 0;
  switch (bit) {
  case OPT_TOP: return parse_int(arg, bit, &v) && ((o->top = (int)v), true);
  case OPT_MAX_FUSION: return parse_int(arg, bit, &v) && ((o->max_fusion = (int)v), true);
  case OPT_EXPLAIN: return parse_int(arg, bit, &v) && ((o->explain = (int)v), true);
  case OPT_N: return parse_int(arg, bit, &v) && ((o->n = v), true);
  case OPT_BEAM_WIDTH: return parse_int(arg, bit, &v) && ((o->beam_width = (int)v), true);
  case OPT_VARIANTS: return parse_int(arg, bit, &v) && ((o->variants = (int)v), true);
  case OPT_TIME_LIMIT: return parse_seconds(arg, &o->time_limit);
  case OPT_EXHAUSTIVE: o->exhaustive = true; return true;
  case OPT_LOOPS:
    if (!strcmp(arg, "model")) o->loops = LOOPS_MODEL;
    else if (!strcmp(arg, "keep")) o->loops = LOOPS_KEEP;
    else if (!strcmp(arg, "unroll")) o->loops = LOOPS_UNROLL;
    else if (!strcmp(arg, "groups")) o->loops = LOOPS_GROUPS;
    else return false;
    return true;
  case OPT_OUT: o->out_dir = arg; return true;
  case OPT_LIBRARY: o->library_dir = arg; return true;
  case OPT_DB: o->db_path = arg; return true;
  case OPT_DOT: o->dot_path = arg; return true;
  case OPT_NO_DB: o->no_db = true; return true;
  case OPT_PRECISION:
    if (strcmp(arg, "single") && strcmp(arg, "double")) return false;
    o->precision = !strcmp(arg, "double") ? PREC_DOUBLE : PREC_SINGLE;
    return true;
  case OPT_LAYOUT: return valid_layouts(arg) && ((o->layouts = arg), true);
  case OPT_PTXAS: o->ptxas = true; return true;
  case OPT_NO_CALIBRATION: o->no_calibration = true; return true;
  case OPT_HELD_OUT: o->held_out = true; return true;
  case OPT_SPEC: o->spec_file = arg; return true;
  case OPT_NAME: return valid_name(arg) && ((o->name = arg), true);
  default: return false;
  }
}

RecordedOption option_set_recorded(CliOptions *o, const char *name, const char *value) {
  for (int k = 0; k < NOPTIONS; k++) {
    const OptionDoc *d = &option_docs[k];
    if (strcmp(d->name, name) || !(d->bit & RECORDED_OPTIONS)) continue;
    /* --db and --no-db choose one thing: the command line's choice of either wins */
    unsigned choice = d->bit & (OPT_DB | OPT_NO_DB) ? OPT_DB | OPT_NO_DB : d->bit;
    if (o->given & choice) return RECORDED_GIVEN;
    if (!d->arg && strcmp(value, "yes")) return RECORDED_BAD_VALUE;
    if (!option_set(o, d->bit, value)) return RECORDED_BAD_VALUE;
    o->recorded |= d->bit;
    return RECORDED_SET;
  }
  return RECORDED_UNKNOWN;
}
