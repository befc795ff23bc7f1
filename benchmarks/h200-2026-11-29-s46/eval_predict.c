/*
 * eval_predict.c — session 46: the model's prediction of each measured candidate of a results
 * file at the n it was measured at, with each kernel's grid (what the small-n terms act on).
 * Linked against build/libkasgen.a by eval.sh.
 *
 *   eval_predict SPEC DB SEARCH_N TOP VARIANTS WIDER RESULTS...
 *
 * Searches SPEC as its folder was generated (--n SEARCH_N --top TOP --variants VARIANTS; 0 for
 * SEARCH_N: the default n), finds each ranked row of each results file (tune_candidate_of: its
 * kernels, calls, shapes and code, at its predicted rank) and predicts it at the file's <run n>
 * (tune_predict, uncalibrated, as session 45's nsweep_predict.c), by session 45's model (the
 * one that ranked the runs, and searches here: model_floor_as_session45) and by the model now.
 * A row the search does not rank where the run did is looked for again, by its kernels, calls,
 * shapes and code, in a search of the WIDER first (0: not).  One line per row:
 *   n name nkernels measured-ns file-predicted-ns before-ns now-ns E:threads:blocks:resident,...
 * blocks: the kernel's grid at that n, n / E rounded up; resident: its blocks an SM holds.
 */
#include "kasgen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void print_row(SearchContext *ctx, const Results *r, const ResultRow *x,
                      const Candidate *c) {
  double before = tune_predict(ctx, c, NULL);
  model_floor_as_session45(false);
  double now = tune_predict(ctx, c, NULL);
  model_floor_as_session45(true);
  printf("%ld %s %d %.9g %.9g %.9g %.9g ", r->n, x->name, c->nkernels, x->measured_ns,
         x->predicted_ns, before, now);
  for (int k = 0; k < c->nkernels; k++) {
    const KernelPlan *p = c->kernels[k];
    printf("%s%d:%d:%ld:%d", k ? "," : "", p->e, threads_in_block(c->dag, p),
           (r->n + p->e - 1) / p->e, model_resident_blocks(ctx->db, p, p->smem_bytes));
  }
  printf("\n");
}

/* The row's candidate: at its rank in s, else (o->top > 0) anywhere in the wider search's,
 * opened at the first row that needs it (*opened). */
static const Candidate *candidate_of(Session *s, const CliOptions *o, Session *wide,
                                     bool *opened, const ResultRow *x) {
  const Candidate *c = tune_candidate_of(s->dag, s->target, s->res, x, true);
  if (c || o->top <= 0) return c;
  if (!*opened && !cli_open_session(o, wide, false)) exit(1);
  *opened = true;
  return tune_candidate_of(wide->dag, wide->target, wide->res, x, false);
}

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr, "usage: eval_predict SPEC DB SEARCH_N TOP VARIANTS WIDER RESULTS...\n");
    return 2;
  }
  long search_n = atol(argv[3]);
  CliOptions o = {.argv0 = argv[0], .command = "plan", .spec = argv[1], .db_path = argv[2],
                  .top = atoi(argv[4]), .variants = atoi(argv[5]), .time_limit = 600,
                  .n = search_n > 0 ? search_n : DEFAULT_ELEMENTS, .no_calibration = true};
  Session s, wide;
  model_floor_as_session45(true); /* the model that ranked the runs */
  if (!cli_open_session(&o, &s, false)) return 1;
  o.top = atoi(argv[6]);
  bool wider = false;
  int missing = 0;
  for (int f = 7; f < argc; f++) {
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
      const Candidate *c = candidate_of(&s, &o, &wide, &wider, x);
      if (c) print_row(ctx, &r, x, c);
      else missing++;
    }
    search_context_free(ctx);
    results_free(&r);
    free(text);
  }
  cli_close_session(&s);
  if (wider) cli_close_session(&wide);
  if (missing) fprintf(stderr, "%s: %d rows not found\n", argv[1], missing);
  return missing ? 1 : 0;
}
