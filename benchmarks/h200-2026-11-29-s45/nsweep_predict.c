/*
 * nsweep_predict.c — session 45: the model's prediction of each measured candidate of the n sweep
 * at the n it was measured at.  Linked against build/libkasgen.a by nsweep_model.sh.
 *
 *   nsweep_predict SPEC DB RESULTS...
 *
 * Searches SPEC as nsweep_prep.sh generated it (--top 12 --variants 2, the default n), finds
 * each ranked row of each results file (tune_candidate_of: its kernels, calls, shapes and code)
 * and predicts it at the file's <run n> (tune_predict, uncalibrated).  One line per row:
 *   n name nkernels measured-ns file-predicted-ns model-ns
 */
#include "kasgen.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: nsweep_predict SPEC DB RESULTS...\n");
    return 2;
  }
  CliOptions o = {.argv0 = argv[0], .command = "plan", .spec = argv[1], .db_path = argv[2],
                  .top = 12, .variants = 2, .time_limit = 600, .n = DEFAULT_ELEMENTS,
                  .no_calibration = true};
  Session s;
  if (!cli_open_session(&o, &s, false)) return 1;
  int missing = 0;
  for (int f = 3; f < argc; f++) {
    size_t len;
    char *text = read_text_file(argv[f], &len);
    Results r;
    if (!text || !results_parse(argv[f], text, len, &r)) return 1;
    SearchContext *ctx = search_context_new(s.dag, s.db, s.target);
    ctx->n = r.n;
    model_memo_quiet(ctx->model);
    for (int i = 0; i < r.nrows; i++) {
      const ResultRow *x = &r.rows[i];
      if (x->predicted_rank < 1 || !results_row_counts(x)) continue;
      const Candidate *c = tune_candidate_of(s.dag, s.target, s.res, x, true);
      if (!c) {
        missing++;
        continue;
      }
      printf("%ld %s %d %.9g %.9g %.9g\n", r.n, x->name, c->nkernels, x->measured_ns,
             x->predicted_ns, tune_predict(ctx, c, NULL));
    }
    search_context_free(ctx);
    results_free(&r);
    free(text);
  }
  cli_close_session(&s);
  if (missing) fprintf(stderr, "%s: %d rows not found\n", argv[1], missing);
  return missing ? 1 : 0;
}
