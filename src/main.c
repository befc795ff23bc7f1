/*
 * main.c — the command line.  One table lists the commands: each with its operand, the options
 * that apply to it, the function that runs it (in a cli_*.c file) and its help (the options' own
 * table, and the checks of their values, are options.c's).  main parses the
 * options with getopt_long (they may stand anywhere), finds the command, rejects an option that
 * does not apply to it or a wrong operand (usage error, exit 2), and runs it; a command that
 * fails on a value of the command line that only a file could show wrong (a --layout name the
 * spec lacks: diag_blame_command_line) exits 2 too.
 *
 *   kasgen [COMMAND] [OPERAND] [OPTIONS]     no command word: the main job on a SPEC
 *   kasgen COMMAND --help, kasgen help COMMAND
 *
 * An unknown command or option gets a "did you mean" note when a close name exists.  "-" is the
 * standard input for SPEC, --db and report's operand, and the standard output for check's
 * --dot; stdio_usage_ok says where it is refused and why.
 */
#include "kasgen.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The search stops after a minute by default: long enough for every spec we know (the 128-call
 * element takes seconds), short enough that a user at a terminal never waits on a search that
 * would not end (README, "Searching"). */
#define DEFAULT_TIME_LIMIT 60.0

typedef struct {
  const char *name;    /* the command word; "generate" is the main job, which has none */
  const char *operand; /* "SPEC", "DIR", or NULL when the command takes none */
  unsigned options;
  int (*run)(const CliOptions *o);
  const char *summary; /* one line for the list of commands */
  const char *help;    /* what it does, for `kasgen COMMAND --help` */
} Command;

#define SEARCH_OPTIONS                                                                          \
  (OPT_TOP | OPT_MAX_FUSION | OPT_TIME_LIMIT | OPT_EXHAUSTIVE | OPT_BEAM_WIDTH | OPT_LIBRARY |     \
   OPT_DB | OPT_NO_DB | OPT_DOT | OPT_PRECISION | OPT_LAYOUT | OPT_NO_CALIBRATION |            \
   OPT_LOOPS | OPT_VARIANTS)
#define TUNE_OPTIONS RECORDED_OPTIONS

static const Command commands[] = {
    {"generate", "SPEC", SEARCH_OPTIONS | OPT_OUT | OPT_EXPLAIN | OPT_N | OPT_PTXAS | OPT_NAME,
     cmd_generate,
     "rank the candidates and write them to DIR/<spec>/ (the main job)",
     "Ranks the fusions of the computation in SPEC for the GPU of the timing database, prints\n"
     "the ranking, and writes the best candidates, the unfused form, a benchmark harness, a CPU\n"
     "check and a C API for the winner to DIR/<spec>/ (--out, default generated/).\n"
     "SPEC - reads the spec from the standard input; --name NAME is then required, since it\n"
     "names the output folder and the C API.  --db - reads the database from the standard\n"
     "input (not both); --dot - is refused, the standard output holding the ranking."},
    {"check", "SPEC", OPT_LIBRARY | OPT_DOT, cmd_check, "validate SPEC and print its DAG",
     "Parses SPEC, checks it against the library and prints its calls, values and edges.\n"
     "SPEC - reads the spec from the standard input (called <stdin> in messages).  With\n"
     "--dot - the standard output gets the DAG for Graphviz instead of the listing."},
    {"fusions", "SPEC", OPT_MAX_FUSION | OPT_LIBRARY, cmd_fusions,
     "every valid fusion of SPEC, one per line",
     "Prints every valid (convex) fusion of at most --max-fusion calls as function#index\n"
     "tokens, one per line, then their count.  SPEC - reads the standard input."},
    {"plan", "SPEC", SEARCH_OPTIONS | OPT_EXPLAIN | OPT_N, cmd_plan,
     "the ranking, one line per candidate",
     "Prints one line per candidate, for scripts: rank ns_per_element {f#i f#i} {...}, the\n"
     "time per element at --n N elements.\n"
     "SPEC - or --db - reads the standard input (not both); --dot - is refused, the standard\n"
     "output holding the ranking."},
    {"list", NULL, OPT_LIBRARY, cmd_list, "the library's types, functions and implementations",
     "Lists the library: types, functions, and implementations with their shapes and load\n"
     "and save variants."},
    {"units", NULL, OPT_LIBRARY | OPT_OUT | OPT_PRECISION, cmd_units,
     "a standalone kernel for every implementation",
     "Writes a standalone kernel cu_<f>_<i> for every implementation, with CPU and GPU checks,\n"
     "to DIR/<function>/ (--out, default generated/units), in single or double precision."},
    {"bench", NULL, OPT_LIBRARY | OPT_OUT, cmd_bench, "the micro-benchmarks of the timing database",
     "Writes the micro-benchmark program that measures a GPU's timing database, both precisions\n"
     "and both layouts, to DIR (--out, default bench/out); on a GPU, `make benchdb` runs it."},
    {"report", "DIR|FILE|-", 0, cmd_report, "read results.xml copied back from a GPU run",
     "Reads DIR/results.xml written by a generated harness on a GPU and copied back, prints\n"
     "the table with the rank correlation, and draws DIR/plot.png with gnuplot.\n"
     "Given a results FILE instead, draws the plot beside it: plot.png for a file named\n"
     "results.xml, NAME.png for NAME.xml; when that folder is not writable, the table only,\n"
     "with a note.  FILE - reads the standard input: the table only, no plot."},
    {"tune", "DIR", TUNE_OPTIONS | OPT_SPEC, cmd_tune,
     "ship the measured best of a GPU run in DIR/embed/",
     "Reads DIR/results.xml of a GPU run of the generated folder DIR, shows the predicted and\n"
     "measured ranks side by side (and the current model's prediction), and re-emits DIR with\n"
     "embed/ around the measured best candidate (correct, fastest median), unless it is slower\n"
     "than the predicted best by less than the run-to-run spread of the rounds: then the\n"
     "predicted best stays.  The embed header says which candidate and why.  The spec searched\n"
     "is DIR's copy of the one it was generated from, DIR/<spec>.spec, unless --spec FILE."},
    {"calibrate", "DIR",
     OPT_MAX_FUSION | OPT_LIBRARY | OPT_DB | OPT_PTXAS | OPT_HELD_OUT | OPT_PRECISION |
         OPT_LAYOUT,
     cmd_calibrate,
     "fit the model's constants to measured candidates",
     "Reads the results of GPU runs in DIR (DIR/<spec>/results.xml, or DIR/<spec>.xml), fits\n"
     "the model's constants for that GPU to them (docs/model.md), and stores the measured\n"
     "times with the constants beside the timing database (<db>.measured.xml, replaced), where\n"
     "the model reads them.  A run's spec is its folder's copy, DIR/<spec>/<spec>.spec (a\n"
     "folder written before the copy: as its index.txt says); a results file's is\n"
     "DIR/<spec>.spec, specs/<spec>.spec or benchmarks/specs/<spec>.spec.\n"
     "Each run is searched in the precision and layouts it was generated with, as its\n"
     "generation.ini or its results file says them; --precision and --layout give them for\n"
     "files that do not, and are an error where a file says otherwise.\n"
     "--held-out judges the calibration on specs it was not fitted on: for each spec, the\n"
     "constants fitted on the other specs' runs predict its runs; Spearman's rho, the\n"
     "predicted best's gap and the mean error are printed per run, with and without\n"
     "calibration, and nothing is stored."},
};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static const Command *find_command(const char *name) {
  for (int c = 0; c < NCOMMANDS; c++)
    if (!strcmp(commands[c].name, name)) return &commands[c];
  return NULL;
}

/* The command word closest to word (a spelling hint), or NULL. */
static const char *closest_command(const char *word) {
  NameHint h;
  name_hint_start(&h, word, strlen(word));
  for (int c = 0; c < NCOMMANDS; c++) name_hint_offer(&h, commands[c].name, c);
  name_hint_offer(&h, "help", -1);
  return h.best;
}

/* ---- help ------------------------------------------------------------------------------------ */

/* "kasgen plan SPEC [--top N] ...", wrapped under its own start. */
static void usage_line(FILE *out, const char *lead, const Command *c) {
  int col = fprintf(out, "%skasgen%s%s%s%s", lead, c == commands ? "" : " ",
                    c == commands ? "" : c->name, c->operand ? " " : "",
                    c->operand ? c->operand : "");
  int indent = (int)strlen(lead) + 7;
  for (int k = 0; k < NOPTIONS; k++) {
    const OptionDoc *d = &option_docs[k];
    if (!(c->options & d->bit)) continue;
    int width = (int)strlen(d->name) + 5 + (d->arg ? (int)strlen(d->arg) + 1 : 0);
    if (col + width > 100) col = fprintf(out, "\n%*s", indent, "") - 1;
    col += fprintf(out, " [--%s%s%s]", d->name, d->arg ? " " : "", d->arg ? d->arg : "");
  }
  fputc('\n', out);
}

/* "  --top N         the N best ..." with continuation lines aligned, and a numeric option's
 * range on a line of its own ("N: an integer from 1 to 100000"), from the table that the
 * option's check and its error use (options.c). */
static void option_help(FILE *out, const OptionDoc *d) {
  char left[32];
  snprintf(left, sizeof left, "--%s%s%s", d->name, d->arg ? " " : "", d->arg ? d->arg : "");
  fprintf(out, "  %-16s", left);
  for (const char *s = d->help; *s; s++) {
    fputc(*s, out);
    if (*s == '\n') fprintf(out, "%18s", "");
  }
  fputc('\n', out);
  char *range = option_number_rule(d->bit);
  if (range) fprintf(out, "%18s%s: %s\n", "", d->arg, range);
  free(range);
}

static void usage(FILE *out) {
  for (int c = 0; c < NCOMMANDS; c++) usage_line(out, c ? "       " : "usage: ", &commands[c]);
  fputs("\nGenerates fused CUDA kernels for a map computation described in SPEC.\n"
        "A - in place of SPEC, FILE or --db's FILE reads the standard input.\n\n", out);
  for (int c = 0; c < NCOMMANDS; c++)
    fprintf(out, "  %-9s %s\n", c ? commands[c].name : "(none)", commands[c].summary);
  fputs("\n", out);
  for (int k = 0; k < NOPTIONS; k++) option_help(out, &option_docs[k]);
  fputs("  -h, --help      this text; `kasgen COMMAND --help` or `kasgen help COMMAND`: the\n"
        "                  command's own\n"
        "  -V, --version   version\n",
        out);
}

static void command_help(FILE *out, const Command *c) {
  usage_line(out, "usage: ", c);
  fprintf(out, "\n%s\n", c->help);
  if (c->options) fputc('\n', out);
  for (int k = 0; k < NOPTIONS; k++)
    if (c->options & option_docs[k].bit) option_help(out, &option_docs[k]);
}

/* ---- parsing --------------------------------------------------------------------------------- */

/* getopt_long's value for option_docs[k] is OPTION_BASE + k, apart from every character. */
enum { HELP = 'h', VERSION = 'V', OPTION_BASE = 256 };

/* The long options' names, for hints: the table's, then help and version. */
static const char *long_option_name(int i) {
  return i < NOPTIONS ? option_docs[i].name : i == NOPTIONS ? "help" : "version";
}

/* The length of an option's name written as "tpo=3" (after its dashes): "tpo". */
static size_t option_name_length(const char *name) {
  const char *eq = strchr(name, '=');
  return eq ? (size_t)(eq - name) : strlen(name);
}

/* "kasgen: note: did you mean '--top'?" for an option name (without dashes) close to one. */
static void hint_long_option(const char *name, size_t len) {
  NameHint h;
  name_hint_start(&h, name, len);
  for (int i = 0; i < NOPTIONS + 2; i++) name_hint_offer(&h, long_option_name(i), i);
  if (h.best) fprintf(stderr, "kasgen: note: did you mean '--%s'?\n", h.best);
}

/* An unknown or ambiguous long option (getopt_long accepts unique abbreviations). */
static void unknown_long_option(const char *arg) {
  const char *name = arg + 2;
  size_t len = option_name_length(name);
  int matches = 0;
  for (int i = 0; i < NOPTIONS + 2; i++) matches += !strncmp(long_option_name(i), name, len);
  if (matches > 1) {
    fprintf(stderr, "kasgen: error: option '--%.*s' is ambiguous; it could be", (int)len, name);
    for (int i = 0, shown = 0; i < NOPTIONS + 2; i++)
      if (!strncmp(long_option_name(i), name, len))
        fprintf(stderr, "%s--%s", shown++ ? ", " : " ", long_option_name(i));
    fputc('\n', stderr);
    return;
  }
  fprintf(stderr, "kasgen: error: unknown option '--%.*s'\n", (int)len, name);
  hint_long_option(name, len);
}

/* getopt_long's error, in kasgen's words (opterr is off): c is ':' (a value missing) or '?'.
 * getopt_long has just passed a long option (argv[optind - 1]); an unknown short option is in
 * the word it is reading (argv[optind]) or has just finished (argv[optind - 1]). */
static void option_error(int c, int argc, char **argv) {
  const char *word = optind > 0 && optind <= argc ? argv[optind - 1] : NULL;
  if (optind < argc && argv[optind][0] == '-' && argv[optind][1] == optopt) word = argv[optind];
  bool is_long = word && !strncmp(word, "--", 2);
  if (c == ':' && optopt >= OPTION_BASE) { /* only long options take values */
    const OptionDoc *d = &option_docs[optopt - OPTION_BASE];
    fprintf(stderr, "kasgen: error: option '--%s' needs a value (%s)\n", d->name, d->arg);
  } else if (optopt >= OPTION_BASE || (is_long && (optopt == HELP || optopt == VERSION))) {
    const char *name = word + 2; /* a flag given a value: --no-db=1 */
    fprintf(stderr, "kasgen: error: option '--%.*s' takes no value\n",
            (int)option_name_length(name), name);
  } else if (optopt) {
    fprintf(stderr, "kasgen: error: unknown option '-%c'\n", optopt);
    if (word && word[0] == '-' && word[1] == optopt && word[2]) /* -top: a long one? */
      hint_long_option(word + 1, option_name_length(word + 1));
  } else {
    unknown_long_option(word ? word : "--");
  }
}

/* "invalid value 'half' for --precision: single or double", with what the option takes; a
 * --layout list names its bad item instead, in the words target_new uses for a list it cannot
 * read (one list may hold many items). */
static void invalid_value(const OptionDoc *d, const char *value) {
  if (d->bit == OPT_LAYOUT) {
    target_layouts_check(value, (SrcLoc){.file = "--layout"});
    return;
  }
  char *rule = option_value_rule(d->bit);
  fprintf(stderr, "kasgen: error: invalid value '%s' for --%s%s\n", value, d->name, rule);
  free(rule);
}

typedef struct {
  unsigned given; /* bits of the options on the command line */
  bool help, version;
  int nargs;
  char **args; /* the non-option words: [COMMAND] [OPERAND] */
} Parsed;

/* getopt_long over the table; false (after a message) on a usage error. */
static bool parse_options(int argc, char **argv, CliOptions *o, Parsed *p) {
  struct option longopts[NOPTIONS + 3];
  for (int k = 0; k < NOPTIONS; k++)
    longopts[k] = (struct option){option_docs[k].name,
                                  option_docs[k].arg ? required_argument : no_argument, 0,
                                  OPTION_BASE + k};
  longopts[NOPTIONS] = (struct option){"help", no_argument, 0, HELP};
  longopts[NOPTIONS + 1] = (struct option){"version", no_argument, 0, VERSION};
  longopts[NOPTIONS + 2] = (struct option){0, 0, 0, 0};
  int c;
  opterr = 0; /* kasgen says what is wrong itself, with a hint */
  while ((c = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
    if (c == HELP || c == VERSION) {
      *(c == HELP ? &p->help : &p->version) = true;
    } else if (c >= OPTION_BASE && c < OPTION_BASE + NOPTIONS) {
      const OptionDoc *d = &option_docs[c - OPTION_BASE];
      p->given |= d->bit;
      if (!option_set(o, d->bit, optarg)) {
        invalid_value(d, optarg);
        return false;
      }
    } else {
      option_error(c, argc, argv);
      return false;
    }
  }
  p->nargs = argc - optind;
  p->args = argv + optind;
  return true;
}

/* Whether every option given applies to the command; false after naming the first that does
 * not. */
static bool options_apply(const Command *c, unsigned given) {
  for (int k = 0; k < NOPTIONS; k++)
    if ((given & option_docs[k].bit) && !(c->options & option_docs[k].bit)) {
      fprintf(stderr, "kasgen: error: option --%s does not apply to '%s' (kasgen %s --help)\n",
              option_docs[k].name, c->name, c->name);
      return false;
    }
  return true;
}

static bool operand_ok(const Command *c, int nargs) {
  if (c->operand ? nargs == 1 : nargs == 0) return true;
  if (!c->operand)
    fprintf(stderr, "kasgen: error: '%s' takes no operand\n", c->name);
  else if (nargs == 0)
    fprintf(stderr, "kasgen: error: missing %s\n", c->operand);
  else
    fprintf(stderr, "kasgen: error: expected exactly one %s\n", c->operand);
  return false;
}

/* `kasgen help [COMMAND]`. */
static int run_help(const Parsed *p) {
  if (p->nargs == 1) {
    usage(stdout);
    return EXIT_OK;
  }
  const Command *c = find_command(p->args[1]);
  if (p->nargs > 2 || !c) {
    const char *word = p->args[p->nargs > 2 ? 2 : 1], *close = closest_command(word);
    fprintf(stderr, "kasgen: error: no command '%s'\n", word);
    if (close) fprintf(stderr, "kasgen: note: did you mean '%s'?\n", close);
    return EXIT_USAGE;
  }
  command_help(stdout, c);
  return EXIT_OK;
}

/* Whether the first word, which names no command, was meant as one: a plain word (letters,
 * digits, '_' and '-', not first: no path) that names no file, and either an operand follows it
 * or a command is close to it (alone, it is otherwise a spec's name).  Reports it if so. */
static bool mistyped_command(const Parsed *p) {
  const char *word = p->args[0];
  struct stat st;
  if (!*word || *word == '-' || strspn(word, NAME_CHARS) != strlen(word) || lstat(word, &st) == 0)
    return false;
  const char *close = closest_command(word);
  if (!close && p->nargs < 2) return false;
  fprintf(stderr, "kasgen: error: unknown command '%s'\n", word);
  if (close)
    fprintf(stderr, "kasgen: note: did you mean '%s'?\n", close);
  else
    fputs("kasgen: note: kasgen --help lists the commands\n", stderr);
  return true;
}

/* Where "-" may stand, and where not: false after a usage error saying why.  SPEC, --db and
 * report's FILE read the standard input, which holds one input; check's --dot - writes the DAG
 * to the standard output in place of the listing, while the main job's and plan's standard
 * output holds the ranking.  The main job names its output folder and C API after the spec, so
 * a spec without a file name needs --name.  Folders (--out, --library) cannot be "-". */
static bool stdio_usage_ok(const Command *c, const CliOptions *o) {
  const char *why = NULL;
  bool spec_stdin = c->operand && !strcmp(c->operand, "SPEC") && is_stdio_path(o->spec);
  if (is_stdio_path(o->out_dir))
    why = "--out names a folder; '-' cannot be one";
  else if (is_stdio_path(o->library_dir))
    why = "--library names a folder; '-' cannot be one";
  else if (spec_stdin && is_stdio_path(o->db_path))
    why = "SPEC and --db are both '-', but the standard input holds only one of them";
  else if (is_stdio_path(o->dot_path) && c->run != cmd_check)
    why = "--dot -: the standard output holds the ranking; give --dot a file name";
  else if (spec_stdin && c->run == cmd_generate && !o->name)
    why = "a spec read from the standard input needs --name NAME: its output folder and C API "
          "are named after it";
  if (why) fprintf(stderr, "kasgen: error: %s\n", why);
  return why == NULL;
}

/* --explain R beyond --top N can name no candidate: refused before the search, not after it
 * (cli_search.c's explain still refuses an R that a search giving fewer than N leaves out). */
static bool explain_usage_ok(const CliOptions *o) {
  if (o->explain <= o->top) return true;
  fprintf(stderr,
          "kasgen: error: --explain %d: the ranking holds at most %d candidates (--top %d)\n",
          o->explain, o->top, o->top);
  return false;
}

static int run_kasgen(int argc, char **argv) {
  CliOptions o = {.argv0 = argv[0], .command = "generate", .top = 10, .variants = -1,
                  .max_fusion = 0, .time_limit = DEFAULT_TIME_LIMIT, .n = DEFAULT_ELEMENTS};
  Parsed p = {0};
  if (!parse_options(argc, argv, &o, &p)) {
    fputs("usage: kasgen [COMMAND] [SPEC|DIR|FILE] [OPTIONS]; kasgen --help lists them\n", stderr);
    return EXIT_USAGE;
  }
  if (p.version) {
    printf("kasgen %s\n", KASGEN_VERSION);
    return EXIT_OK;
  }
  if (p.nargs > 0 && !strcmp(p.args[0], "help")) return run_help(&p);
  const Command *c = p.nargs > 0 ? find_command(p.args[0]) : NULL;
  if (c) {
    p.args++;
    p.nargs--;
  } else if (p.nargs > 0 && !p.help && mistyped_command(&p)) {
    return EXIT_USAGE;
  } else {
    c = &commands[0]; /* the main job */
  }
  if (p.help) {
    if (c == commands) usage(stdout);
    else command_help(stdout, c);
    return EXIT_OK;
  }
  if (!options_apply(c, p.given) || !operand_ok(c, p.nargs)) {
    if (c == commands) usage(stderr);
    else usage_line(stderr, "usage: ", c);
    return EXIT_USAGE;
  }
  o.command = c->name;
  o.given = p.given;
  if (c->operand) o.spec = p.args[0];
  if (!stdio_usage_ok(c, &o) || !explain_usage_ok(&o)) {
    usage_line(stderr, "usage: ", c);
    return EXIT_USAGE;
  }
  int status = c->run(&o);
  /* a value the command line gave that only a file showed wrong (a --layout name the spec
   * lacks) is bad usage too, as one refused on sight is */
  return status == EXIT_BAD_INPUT && diag_command_line_blamed() ? EXIT_USAGE : status;
}

/* A command whose output could not be written (stdout on a full disk) has failed.  Ctrl-C
 * stops the programs kasgen started and removes its temporaries (interrupt.c). */
int main(int argc, char **argv) {
  interrupt_install();
  return stdout_checked(run_kasgen(argc, argv));
}
