/*
 * main.c — the command line: parses options with getopt_long and hands them to the command,
 * which lives in the file of the stage it drives (cli_front.c, cli_search.c, bench.c, ...).
 */
#include "kasgen.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
  fputs("usage: kasgen SPEC [--top N] [--out DIR] [--max-fusion K] [--library DIR] [--db FILE]\n"
        "                   [--dot FILE] [--explain R] [--n N] [--no-db]\n"
        "       kasgen check SPEC [--library DIR] [--dot FILE]\n"
        "       kasgen fusions SPEC [--max-fusion K]\n"
        "       kasgen plan SPEC [--top N] [--max-fusion K] [--db FILE] [--explain R]\n"
        "       kasgen list [--library DIR]\n"
        "       kasgen units [--library DIR] [--out DIR]\n"
        "       kasgen bench [--library DIR] [--out DIR]\n"
        "       kasgen report DIR\n"
        "\n"
        "Generates fused CUDA kernels for a map computation described in SPEC.\n"
        "\n"
        "  --top N         emit the N best predicted candidates (default 10)\n"
        "  --out DIR       output parent folder (default generated/); output goes to DIR/<spec>/\n"
        "  --max-fusion K  at most K calls per kernel (default 6)\n"
        "  --library DIR   elementary-function library (default $KASGEN_LIBRARY, else library/\n"
        "                  beside the binary or in the working directory)\n"
        "  --db FILE       timing database (default benchmarks/nvidia-h100-80gb-hbm3.xml)\n"
        "  --no-db         predict with the analytic model only\n"
        "  --dot FILE      write the DAG for Graphviz\n"
        "  --explain R     say why each buffer and barrier of candidate R is where it is\n"
        "  --n N           default element count of the generated harness (default 4194304)\n"
        "  -h, --help      this text\n"
        "  -V, --version   version\n",
        out);
}

static bool parse_int(const char *s, long min, long max, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < min || v > max) return false;
  *out = v;
  return true;
}

static const char *const commands[] = {"check", "fusions", "list", "plan", "bench", "report",
                                       "units", NULL};

static bool is_command(const char *s) {
  for (int i = 0; commands[i]; i++)
    if (!strcmp(s, commands[i])) return true;
  return false;
}

static int run_kasgen(int argc, char **argv) {
  CliOptions o = {.argv0 = argv[0], .command = "generate", .top = 10, .max_fusion = 6,
                  .n = 4194304};
  static const struct option longopts[] = {
      {"top", required_argument, 0, 't'},     {"out", required_argument, 0, 'o'},
      {"max-fusion", required_argument, 0, 'k'}, {"library", required_argument, 0, 'L'},
      {"db", required_argument, 0, 'd'},      {"dot", required_argument, 0, 'g'},
      {"explain", required_argument, 0, 'x'}, {"n", required_argument, 0, 'n'},
      {"no-db", no_argument, 0, 'N'},         {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},       {0, 0, 0, 0}};
  int c;
  long v;
  while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
    switch (c) {
    case 't':
      if (!parse_int(optarg, 1, 100000, &v)) goto bad_number;
      o.top = (int)v;
      break;
    case 'k':
      if (!parse_int(optarg, 1, KAS_MAX_NODES, &v)) goto bad_number;
      o.max_fusion = (int)v;
      break;
    case 'x':
      if (!parse_int(optarg, 1, 100000, &v)) goto bad_number;
      o.explain = (int)v;
      break;
    case 'n':
      if (!parse_int(optarg, 0, (long)1 << 40, &v)) goto bad_number;
      o.n = v;
      break;
    case 'o': o.out_dir = optarg; break;
    case 'L': o.library_dir = optarg; break;
    case 'd': o.db_path = optarg; break;
    case 'g': o.dot_path = optarg; break;
    case 'N': o.no_db = true; break;
    case 'h': usage(stdout); return EXIT_OK;
    case 'V': printf("kasgen %s\n", KASGEN_VERSION); return EXIT_OK;
    default: usage(stderr); return EXIT_USAGE;
    }
    continue;
  bad_number:
    fprintf(stderr, "kasgen: error: invalid value '%s' for --%s\n", optarg,
            longopts[c == 't' ? 0 : c == 'k' ? 2 : c == 'x' ? 6 : 7].name);
    return EXIT_USAGE;
  }
  int nargs = argc - optind;
  char **args = argv + optind;
  if (nargs > 0 && is_command(args[0])) {
    o.command = args[0];
    args++;
    nargs--;
  }
  bool needs_arg = strcmp(o.command, "list") && strcmp(o.command, "bench") &&
                   strcmp(o.command, "units");
  if (needs_arg ? nargs != 1 : nargs != 0) {
    fprintf(stderr, "kasgen: error: %s\n",
            needs_arg ? (nargs ? "expected exactly one SPEC (or folder)" : "missing SPEC")
                      : "this command takes no positional argument");
    usage(stderr);
    return EXIT_USAGE;
  }
  if (needs_arg) o.spec = args[0];

  if (!strcmp(o.command, "generate")) return cmd_generate(&o);
  if (!strcmp(o.command, "check")) return cmd_check(&o);
  if (!strcmp(o.command, "fusions")) return cmd_fusions(&o);
  if (!strcmp(o.command, "list")) return cmd_list(&o);
  if (!strcmp(o.command, "plan")) return cmd_plan(&o);
  if (!strcmp(o.command, "bench")) return cmd_bench(&o);
  if (!strcmp(o.command, "report")) return cmd_report(&o);
  return cmd_units(&o);
}

/* A command whose output could not be written (stdout on a full disk) has failed. */
int main(int argc, char **argv) { return stdout_checked(run_kasgen(argc, argv)); }
