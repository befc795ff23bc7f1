/*
 * cli_tools.c — the commands around the library and the GPU runs, each a thin driver over the
 * stage that does the work:
 *   kasgen units [--out DIR]    a standalone kernel for every implementation (emit_units.c)
 *   kasgen bench [--out DIR]    the micro-benchmarks of the timing database (bench.c)
 *   kasgen report DIR           results.xml copied back from a GPU run (report.c)
 * Results go to stdout, diagnostics to stderr; exit 0 ok, 1 bad input (main.c handles usage).
 */
#include "kasgen.h"

#include <stdio.h>
#include <stdlib.h>

#define UNITS_DEFAULT_OUT "generated/units"
#define BENCH_DEFAULT_OUT "bench/out"

int cmd_units(const CliOptions *o) {
  const char *out = o->out_dir ? o->out_dir : UNITS_DEFAULT_OUT;
  if (!cli_check_output(out)) return EXIT_BAD_INPUT;
  Library *lib = cli_load_library(o);
  if (!lib) return EXIT_BAD_INPUT;
  int functions;
  int total = units_emit(lib, out, o->precision, &functions);
  library_free(lib);
  if (total < 0) return EXIT_BAD_INPUT;
  printf("kasgen: %d standalone kernels of %d functions in %s/<function>/\n", total, functions,
         out);
  return EXIT_OK;
}

int cmd_bench(const CliOptions *o) {
  const char *out = o->out_dir ? o->out_dir : BENCH_DEFAULT_OUT;
  if (!cli_check_output(out)) return EXIT_BAD_INPUT;
  Library *lib = cli_load_library(o);
  if (!lib) return EXIT_BAD_INPUT;
  int n = bench_emit(lib, out);
  library_free(lib);
  if (n < 0) return EXIT_BAD_INPUT;
  printf("wrote %s/: %d routine benchmarks in one CUDA program\n"
         "on a GPU: make -C %s run DB=$PWD/benchmarks   (or: make benchdb)\n",
         out, n, out);
  return EXIT_OK;
}

int cmd_report(const CliOptions *o) { return report_run(o->spec) ? EXIT_OK : EXIT_BAD_INPUT; }
