/*
 * harness.cu — the benchmark harness of a spec's generated candidates (common/harness.cu of
 * every folder `kasgen SPEC` writes; kept as src/runtime/harness.cu in kasgen's sources).  Built
 * with every candidate, it checks each against the CPU graph (float64), times it with CUDA
 * events, measures the device's copy bandwidth in the same run, and prints one table (also
 * results.xml and results.dat).  Depends on CUDA and libc; everything spec-specific comes from
 * kas_candidates.h, the arrays' real type and layouts included (kas_layout.h).
 *
 *   harness [N | N=n | --n N] [--reps R] [--rounds K] [--sizes a,b,c] [--check-only] [--signed]
 *           [--offset K]
 *
 * The inputs are drawn well-conditioned (square matrices near the identity, elements whose
 * reference is too sensitive to rounding drawn again) and each output's tolerance follows the
 * data (kas_random.h, kas_check.h).
 * Timing is repeated: K rounds (default 5), each timing every candidate in turn (the median of R
 * runs), so that a slow stretch of the GPU (clocks, another process) falls on all candidates
 * alike.  A candidate's time is the median of its rounds; the fastest and slowest round are
 * written too (round-min-ns, round-max-ns): the run-to-run spread `kasgen tune` compares
 * differences with.
 * --sizes checks correctness at each size (no timing); --check-only checks at N.  --offset K
 * runs on a sub-range, as a FEM code calls kernels on a colour of its mesh: elements
 * [K, K + N) of arrays of K + N elements (the pointers moved by K elements, aligned to their type
 * only when K is odd; component-major arrays K + N apart); the timed table then also times every
 * candidate on whole arrays of N elements and gives the sub-range's time against it.  Exit
 * status 1 when any candidate is wrong, 2 on a CUDA error.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KAS_CANDIDATES_DEVICE
#include "kas_candidates.h"
#include "kas_gpu.h"
#include "kas_layout.h"
#include "kas_random.h"

extern "C" void kas_cpu_graph_rounded(const double *const *in, double *const *out, size_t n,
                                      double u, const size_t *at);

/* Array lengths that stay positive when a spec has no inputs (C++ has no empty arrays). */
#define KAS_NIN1 (KAS_NINPUTS > 0 ? KAS_NINPUTS : 1)
#define CPU_CHUNK 65536 /* elements per call of the CPU graph (bounds the float64 copies) */

/* One problem: elements [first, first + n) of arrays of total = first + n elements (ld = total
 * for the component-major ones), as device arrays and the host's element-major values. */
typedef struct {
  size_t n, first, total, ld;
  kas_real *h_in[KAS_NIN1];      /* host inputs, element-major, the range only */
  double *ref[KAS_NOUTPUTS];     /* CPU graph outputs */
  KasTolerance tol[KAS_NOUTPUTS]; /* each output's on this data (kas_random.h) */
  kas_real *d_in_array[KAS_NIN1]; /* device inputs, copy 0, laid out */
  kas_real *d_in[KAS_NIN1];       /* what the candidates get: the range's first element */
  kas_real *d_out_array[KAS_NOUTPUTS];
  kas_real *d_out[KAS_NOUTPUTS];
  kas_real *h_out_array[KAS_NOUTPUTS]; /* an output read back, laid out */
  kas_real *h_out[KAS_NOUTPUTS];       /* the range, gathered element-major */
  void *d_work;
  size_t work_bytes;
} Problem;

static size_t input_reals(const Problem *p, int i) {
  return kas_array_reals(kas_input_layouts[i] == KAS_COMPONENT, kas_input_floats[i], p->total,
                         p->ld);
}

static size_t output_reals(const Problem *p, int o) {
  return kas_array_reals(kas_output_layouts[o] == KAS_COMPONENT, kas_output_floats[o], p->total,
                         p->ld);
}

/* The range's inputs drawn well-conditioned into h_in and the CPU graph's outputs into ref and
 * (under the tolerance model's rounding) into rounded, CPU_CHUNK elements at a time (in: a
 * chunk's doubles); returns how many elements stayed ill-conditioned (kas_random.h). */
static size_t draw_and_reference(Problem *p, double *const *in, double *const *rounded,
                                 int is_signed) {
  double *out[KAS_NOUTPUTS], *rounded_out[KAS_NOUTPUTS];
  size_t left = 0;
  for (size_t e0 = 0; e0 < p->n; e0 += CPU_CHUNK) {
    size_t m = p->n - e0 < CPU_CHUNK ? p->n - e0 : CPU_CHUNK;
    for (int o = 0; o < KAS_NOUTPUTS; o++) {
      out[o] = p->ref[o] + e0 * kas_output_floats[o];
      rounded_out[o] = rounded[o] + e0 * kas_output_floats[o];
    }
    left += kas_draw_inputs(in, m, is_signed, kas_cpu_graph_rounded, out, rounded_out);
    for (int i = 0; i < KAS_NINPUTS; i++) {
      size_t s = (size_t)kas_input_floats[i];
      for (size_t k = 0; k < m * s; k++) p->h_in[i][e0 * s + k] = (kas_real)in[i][k];
    }
  }
  return left;
}

/* The range's inputs, the CPU graph's outputs and their tolerances (kas_random.h). */
static void cpu_reference(Problem *p, int is_signed) {
  double *in[KAS_NIN1], *rounded[KAS_NOUTPUTS];
  for (int i = 0; i < KAS_NINPUTS; i++)
    in[i] = (double *)kas_host_alloc(sizeof(double) * CPU_CHUNK * kas_input_floats[i]);
  for (int o = 0; o < KAS_NOUTPUTS; o++)
    rounded[o] = (double *)kas_host_alloc(sizeof(double) * p->n * kas_output_floats[o]);
  char what[64];
  snprintf(what, sizeof what, "n=%zu from element %zu", p->n, p->first);
  kas_report_screen(what, draw_and_reference(p, in, rounded, is_signed), p->n);
  kas_tolerances(what, (const double *const *)p->ref, (const double *const *)rounded, p->n,
                 p->tol);
  for (int i = 0; i < KAS_NINPUTS; i++) free(in[i]);
  for (int o = 0; o < KAS_NOUTPUTS; o++) free(rounded[o]);
}

static size_t max_workspace(size_t n) {
  size_t w = 0;
  for (int c = 0; c < KAS_NCANDIDATES; c++) {
    size_t b = kas_candidates[c].workspace_bytes(n);
    if (b > w) w = b;
  }
  return w;
}

/* The range's place in an array of the given layout and size. */
static size_t range_start(const Problem *p, int layout, int size) {
  return kas_array_index(layout == KAS_COMPONENT, size, p->first, 0, p->ld);
}

static void problem_init(Problem *p, size_t n, size_t first, int is_signed) {
  memset(p, 0, sizeof *p);
  p->n = n;
  p->first = first;
  p->total = p->ld = first + n;
  for (int o = 0; o < KAS_NOUTPUTS; o++)
    p->ref[o] = (double *)kas_host_alloc(n * kas_output_floats[o] * sizeof(double));
  for (int i = 0; i < KAS_NINPUTS; i++)
    p->h_in[i] = (kas_real *)kas_host_alloc(n * kas_input_floats[i] * sizeof(kas_real));
  cpu_reference(p, is_signed);
  for (int i = 0; i < KAS_NINPUTS; i++) {
    int s = kas_input_floats[i], comp = kas_input_layouts[i] == KAS_COMPONENT;
    size_t reals = input_reals(p, i);
    kas_real *staged = (kas_real *)kas_host_alloc(reals * sizeof(kas_real));
    kas_fill_input(staged, reals, i, p->ld, is_signed); /* outside the range: must not matter */
    KAS_SCATTER(staged, p->h_in[i], comp, s, first, n, p->ld);
    kas_cuda_check(cudaMalloc(&p->d_in_array[i], reals * sizeof(kas_real) + 16),
                   "cudaMalloc input");
    kas_cuda_check(cudaMemcpy(p->d_in_array[i], staged, reals * sizeof(kas_real),
                              cudaMemcpyHostToDevice),
                   "copy input");
    p->d_in[i] = p->d_in_array[i] + range_start(p, kas_input_layouts[i], s);
    free(staged);
  }
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    size_t count = n * kas_output_floats[o], reals = output_reals(p, o);
    p->h_out[o] = (kas_real *)kas_host_alloc(count * sizeof(kas_real));
    p->h_out_array[o] = (kas_real *)kas_host_alloc(reals * sizeof(kas_real));
    kas_cuda_check(cudaMalloc(&p->d_out_array[o], reals * sizeof(kas_real) + 16),
                   "cudaMalloc output");
    p->d_out[o] = p->d_out_array[o] + range_start(p, kas_output_layouts[o], kas_output_floats[o]);
  }
  p->work_bytes = max_workspace(n);
  kas_cuda_check(cudaMalloc(&p->d_work, p->work_bytes + 256), "cudaMalloc workspace");
}

static void problem_free(Problem *p) {
  for (int i = 0; i < KAS_NINPUTS; i++) {
    free(p->h_in[i]);
    cudaFree(p->d_in_array[i]);
  }
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    free(p->ref[o]);
    free(p->h_out[o]);
    free(p->h_out_array[o]);
    cudaFree(p->d_out_array[o]);
  }
  cudaFree(p->d_work);
}

/* Fills outputs (whole arrays) and workspace with NaN (all bits set) so that anything a
 * candidate fails to write is caught, also by a check that only looks at norms. */
static void poison(Problem *p) {
  for (int o = 0; o < KAS_NOUTPUTS; o++)
    kas_cuda_check(cudaMemset(p->d_out_array[o], 0xFF, output_reals(p, o) * sizeof(kas_real)),
                   "poison output");
  if (p->work_bytes) kas_cuda_check(cudaMemset(p->d_work, 0xFF, p->work_bytes), "poison workspace");
}

/* Reads output o back: the range into h_out (element-major); false when something outside
 * the range was written. */
static bool read_output(Problem *p, int o) {
  int s = kas_output_floats[o], comp = kas_output_layouts[o] == KAS_COMPONENT;
  size_t reals = output_reals(p, o), outside = 0;
  kas_cuda_check(cudaMemcpy(p->h_out_array[o], p->d_out_array[o], reals * sizeof(kas_real),
                            cudaMemcpyDeviceToHost),
                 "copy output");
  KAS_GATHER(p->h_out[o], p->h_out_array[o], comp, s, p->first, p->n, p->ld);
  for (size_t k = 0; k < reals; k++) outside += !isnan(p->h_out_array[o][k]);
  for (size_t k = 0; k < p->n * (size_t)s; k++) outside -= !isnan(p->h_out[o][k]);
  return outside == 0;
}

/* Runs candidate c once and compares each output with the CPU graph (kas_check.h) under the
 * output's tolerance on this data (kas_random.h), saying what is wrong; returns the largest
 * normwise relative error over the outputs, INFINITY when the candidate is wrong: a launch
 * fails, or an output is off in the norm, in an element or written outside the range. */
static double check_candidate(Problem *p, const KasCandidate *c) {
  poison(p);
  int rc = c->launch((const kas_real *const *)p->d_in, p->d_out, p->d_work, p->n, p->ld, 0);
  cudaError_t e = cudaDeviceSynchronize();
  if (rc != 0 || e != cudaSuccess) {
    printf("  %s: launch failed at n=%zu: %s\n", c->name, p->n,
           cudaGetErrorString(rc ? (cudaError_t)rc : e));
    cudaGetLastError();
    return INFINITY;
  }
  char what[96];
  snprintf(what, sizeof what, "  %s: WRONG at n=%zu from element %zu", c->name, p->n, p->first);
  double worst = 0;
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    size_t count = p->n * kas_output_floats[o];
    bool inside = read_output(p, o);
    if (!inside) printf("%s: output %s written outside the range\n", what, kas_output_names[o]);
    double err;
    if (!kas_check_output(what, kas_output_names[o], p->h_out[o], p->ref[o], count,
                          kas_output_floats[o], p->tol[o], &err) || !inside)
      err = INFINITY; /* kas_check_output or the line above said how */
    if (err > worst) worst = err;
  }
  return worst;
}

/* Timing inputs: `copies` sets of device inputs (copy 0 is the checked one), so that consecutive
 * runs read inputs that are not in L2: the sets together exceed three times the L2.  A copy
 * holds the whole arrays, its pointers at the range as copy 0's. */
typedef struct {
  int copies;
  kas_real *array[16][KAS_NIN1];
  kas_real *in[16][KAS_NIN1];
} InputCopies;

static void make_copies(Problem *p, InputCopies *ic, long l2_bytes) {
  size_t set_bytes = 0;
  for (int i = 0; i < KAS_NINPUTS; i++) set_bytes += input_reals(p, i) * sizeof(kas_real);
  int copies = set_bytes ? (int)((3.0 * l2_bytes) / set_bytes) + 1 : 1;
  if (copies > 16) copies = 16;
  if (copies < 1) copies = 1;
  ic->copies = copies;
  for (int i = 0; i < KAS_NINPUTS; i++) ic->in[0][i] = p->d_in[i];
  for (int c = 1; c < copies; c++)
    for (int i = 0; i < KAS_NINPUTS; i++) {
      size_t bytes = input_reals(p, i) * sizeof(kas_real);
      kas_cuda_check(cudaMalloc(&ic->array[c][i], bytes + 16), "cudaMalloc input copy");
      kas_cuda_check(cudaMemcpy(ic->array[c][i], p->d_in_array[i], bytes,
                                cudaMemcpyDeviceToDevice),
                     "copy");
      ic->in[c][i] = ic->array[c][i] + (p->d_in[i] - p->d_in_array[i]);
    }
}

static void free_copies(InputCopies *ic) {
  for (int c = 1; c < ic->copies; c++)
    for (int i = 0; i < KAS_NINPUTS; i++) cudaFree(ic->array[c][i]);
}

/* One timed run of a candidate: its inputs rotate among the copies. */
typedef struct {
  Problem *p;
  InputCopies *ic;
  const KasCandidate *c;
} TimedRun;

static void run_candidate(void *arg, int run) {
  const TimedRun *t = (const TimedRun *)arg;
  const kas_real *const *in = (const kas_real *const *)t->ic->in[run % t->ic->copies];
  int rc = t->c->launch(in, t->p->d_out, t->p->d_work, t->p->n, t->p->ld, 0);
  if (rc) kas_cuda_check((cudaError_t)rc, t->c->name);
}

/* Median milliseconds of one launch of candidate c over reps timed runs after warm-up. */
static double time_candidate(Problem *p, InputCopies *ic, const KasCandidate *c, int reps) {
  TimedRun t = {p, ic, c};
  return kas_time_ms(reps, run_candidate, &t);
}

typedef struct {
  double error, ms, ns_per_elem, melem_s, gbs, copy_pct, avg_melem_s;
  double round_min_ns, round_max_ns; /* the fastest and slowest round's median */
  int measured_rank, correct;
} Row;

#define MAX_ROUNDS 64

/* Spearman's rank correlation of the predicted and measured ranks (Pearson on ranks). */
static double spearman(const Row *rows, int count) {
  double mp = 0, mm = 0, cov = 0, vp = 0, vm = 0;
  int k = 0;
  for (int c = 0; c < count; c++)
    if (kas_candidates[c].predicted_rank > 0 && rows[c].measured_rank > 0) {
      mp += kas_candidates[c].predicted_rank;
      mm += rows[c].measured_rank;
      k++;
    }
  if (k < 2) return NAN;
  mp /= k;
  mm /= k;
  for (int c = 0; c < count; c++)
    if (kas_candidates[c].predicted_rank > 0 && rows[c].measured_rank > 0) {
      double a = kas_candidates[c].predicted_rank - mp, b = rows[c].measured_rank - mm;
      cov += a * b;
      vp += a * a;
      vm += b * b;
    }
  return vp > 0 && vm > 0 ? cov / sqrt(vp * vm) : NAN;
}

/* Measured ranks among the ranked (not "unfused") candidates, fastest = 1. */
static void assign_measured_ranks(Row *rows) {
  for (int c = 0; c < KAS_NCANDIDATES; c++) {
    rows[c].measured_rank = 0;
    if (kas_candidates[c].predicted_rank <= 0) continue;
    int rank = 1;
    for (int d = 0; d < KAS_NCANDIDATES; d++)
      if (d != c && kas_candidates[d].predicted_rank > 0 &&
          (rows[d].ms < rows[c].ms || (rows[d].ms == rows[c].ms && d < c)))
        rank++;
    rows[c].measured_rank = rank;
  }
}

/* Moving average (window 5, centred) of MElem/s in predicted order, for the plot. */
static void moving_average(Row *rows) {
  for (int c = 0; c < KAS_NCANDIDATES; c++) {
    double sum = 0;
    int k = 0;
    for (int d = c - 2; d <= c + 2; d++)
      if (d >= 0 && d < KAS_NCANDIDATES && kas_candidates[d].predicted_rank > 0) {
        sum += rows[d].melem_s;
        k++;
      }
    rows[c].avg_melem_s = k ? sum / k : rows[c].melem_s;
  }
}

static void xml_escaped(FILE *f, const char *s) {
  for (; *s; s++) switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
}

static int bytes_per_element(void) {
  int reals = 0;
  for (int i = 0; i < KAS_NINPUTS; i++) reals += kas_input_floats[i];
  for (int o = 0; o < KAS_NOUTPUTS; o++) reals += kas_output_floats[o];
  return (int)sizeof(kas_real) * reals;
}

static void write_xml(const char *path, const char *device, double copy_gbs, size_t n,
                      size_t offset, int reps, int rounds, int copies, const Row *rows,
                      double rho) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return;
  }
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(f, "<kasgen-results version=\"1\" spec=\"%s\">\n", KAS_SPEC_NAME);
  fprintf(f, "  <device name=\"");
  xml_escaped(f, device);
  fprintf(f, "\" copy-gbs=\"%.2f\"/>\n", copy_gbs);
  /* precision and layout: what the code was generated for (kas_candidates.h), which kasgen
   * tune and calibrate search again with, even for a file copied out of its folder */
  fprintf(f, "  <run n=\"%zu\" reps=\"%d\" rounds=\"%d\" input-copies=\"%d\" "
             "bytes-per-element=\"%d\" precision=\"%s\" layout=\"",
          n, reps, rounds, copies, bytes_per_element(),
          sizeof(kas_real) == 8 ? "double" : "single");
  xml_escaped(f, KAS_LAYOUTS);
  fprintf(f, "\" offset=\"%zu\"/>\n", offset);
  for (int c = 0; c < KAS_NCANDIDATES; c++) {
    const KasCandidate *k = &kas_candidates[c];
    const Row *r = &rows[c];
    fprintf(f, "  <candidate name=\"%s\" kernels=\"", k->name);
    xml_escaped(f, k->kernels);
    fprintf(f, "\" calls=\"");
    xml_escaped(f, k->calls);
    fprintf(f, "\" shapes=\"");
    xml_escaped(f, k->shapes);
    fprintf(f, "\" code=\"");
    xml_escaped(f, k->code);
    fprintf(f,
            "\" nkernels=\"%d\" predicted-ns=\"%.6g\" measured-ns=\"%.6g\" melem-s=\"%.6g\" "
            "compulsory-gbs=\"%.6g\" copy-percent=\"%.4g\" predicted-rank=\"%d\" "
            "measured-rank=\"%d\" correct=\"%d\" error=\"%.3g\" round-min-ns=\"%.6g\" "
            "round-max-ns=\"%.6g\"/>\n",
            k->nkernels, k->predicted_ns_per_elem, r->ns_per_elem, r->melem_s, r->gbs,
            r->copy_pct, k->predicted_rank, r->measured_rank, r->correct,
            isfinite(r->error) ? r->error : 1e300, r->round_min_ns, r->round_max_ns);
  }
  if (isfinite(rho))
    fprintf(f, "  <spearman value=\"%.4f\"/>\n", rho);
  else
    fprintf(f, "  <spearman value=\"nan\"/>\n");
  fprintf(f, "</kasgen-results>\n");
  fclose(f);
}

/* results.dat for plot.gp: ranked candidates in predicted order. */
static void write_dat(const char *path, const Row *rows) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return;
  }
  fprintf(f, "# predicted_rank melem_s moving_avg_melem_s measured_ns predicted_ns name\n");
  for (int rank = 1; rank <= KAS_NCANDIDATES; rank++)
    for (int c = 0; c < KAS_NCANDIDATES; c++)
      if (kas_candidates[c].predicted_rank == rank)
        fprintf(f, "%d %.6g %.6g %.6g %.6g %s\n", rank, rows[c].melem_s, rows[c].avg_melem_s,
                rows[c].ns_per_elem, kas_candidates[c].predicted_ns_per_elem,
                kas_candidates[c].name);
  fclose(f);
}

/* The predicted ranks are as good as the timings they come from: on a GPU other than the
 * database's (or with no database) say so, and how to get this GPU's ranking. */
static void note_prediction_source(const char *device) {
  if (!KAS_PREDICTED_FOR[0])
    printf("note: the predictions come from kasgen's analytic model, not from timings of this\n"
           "      GPU (`make benchdb` in kasgen's folder measures them)\n");
  else if (strcmp(device, KAS_PREDICTED_FOR))
    printf("note: the predictions are for the %s (kasgen's timing database), not this\n"
           "      %s: run kasgen again with --db and this GPU's database (`make benchdb`),\n"
           "      or `kasgen tune` on this folder to embed the measured best\n",
           KAS_PREDICTED_FOR, device);
}

/* The table, every line within 80 columns (names of unusual length aside): the run in three
 * lines (the precision and layout worded as `kasgen report` words them), then per candidate its
 * figures on one line and its kernels on the next, under the figures from the "kernels" column
 * on.  Kernels on their own line rather than a list cut to what follows the figures: those take
 * 79 columns, so after them no list fits a terminal (an element's kernel of 128 calls made
 * lines of 165), while on a line of its own it gets 70 columns, to which kasgen shortened it
 * (`brief`: HARNESS_BRIEF_WIDTH, kasgen.h).  A wrong candidate's kernels line starts with WRONG,
 * under its name, where every flag lines up.  results.xml keeps the lists whole. */
static void print_table(const char *device, double copy_gbs, size_t n, size_t offset,
                        const Row *rows, double rho) {
  printf("\n%s on %s: n = %zu%s\n", KAS_SPEC_NAME, device, n,
         offset ? " (a sub-range, see below)" : "");
  printf("precision %s, layout %s\n", sizeof(kas_real) == 8 ? "double" : "single", KAS_LAYOUTS);
  printf("%d bytes/element compulsory, copy bandwidth %.1f GB/s\n", bytes_per_element(),
         copy_gbs);
  printf("%-9s %-7s %10s %10s %9s %9s %7s %5s %5s\n%-9s %s\n", "candidate", "kernels",
         "pred ns/e", "meas ns/e", "MElem/s", "GB/s", "%copy", "pred", "meas", "",
         "kernels (calls)");
  for (int c = 0; c < KAS_NCANDIDATES; c++) {
    const KasCandidate *k = &kas_candidates[c];
    const Row *r = &rows[c];
    char pr[16] = "-", mr[16] = "-";
    if (k->predicted_rank > 0) {
      snprintf(pr, sizeof pr, "%d", k->predicted_rank);
      snprintf(mr, sizeof mr, "%d", r->measured_rank);
    }
    printf("%-9s %-7d %10.4f %10.4f %9.1f %9.1f %6.1f%% %5s %5s\n", k->name, k->nkernels,
           k->predicted_ns_per_elem, r->ns_per_elem, r->melem_s, r->gbs, r->copy_pct, pr, mr);
    printf("%-9s %s\n", r->correct ? "" : "WRONG", k->brief);
  }
  if (isfinite(rho))
    printf("Spearman rank correlation (predicted vs measured): %.3f\n", rho);
  else
    printf("Spearman rank correlation: n/a (fewer than two ranked candidates)\n");
}

/* Correctness only, at every size of a comma-separated list (each a sub-range from element
 * offset). */
static int check_sizes(const char *list, size_t offset, int is_signed) {
  int failures = 0;
  for (const char *s = list; *s;) {
    char *end;
    unsigned long long n = strtoull(s, &end, 10);
    if (end == s) {
      fprintf(stderr, "harness: bad --sizes list '%s'\n", list);
      return 2;
    }
    Problem p;
    problem_init(&p, (size_t)n, offset, is_signed);
    for (int c = 0; c < KAS_NCANDIDATES; c++) {
      double err = check_candidate(&p, &kas_candidates[c]);
      int ok = isfinite(err);
      failures += !ok;
      printf("%-9s n=%-10llu %s (normwise relative error %.3g)\n", kas_candidates[c].name, n,
             ok ? "ok" : "WRONG", err);
      if (!ok && !strcmp(kas_candidates[c].name, "unfused")) kas_note_unfused_failed();
    }
    problem_free(&p);
    s = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') {
      fprintf(stderr, "harness: bad --sizes list '%s'\n", list);
      return 2;
    }
  }
  printf("%s\n", failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}

static size_t parse_size(const char *s) {
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || *end) {
    fprintf(stderr, "harness: bad element count '%s'\n", s);
    exit(2);
  }
  return (size_t)v;
}

/* Checks every candidate on the problem into rows; returns the number wrong. */
static int check_all(Problem *p, Row *rows) {
  int failures = 0;
  for (int c = 0; c < KAS_NCANDIDATES; c++) {
    rows[c].error = check_candidate(p, &kas_candidates[c]);
    rows[c].correct = isfinite(rows[c].error);
    failures += !rows[c].correct;
    if (!rows[c].correct && !strcmp(kas_candidates[c].name, "unfused")) kas_note_unfused_failed();
  }
  return failures;
}

/* Times every candidate on the problem (rows: ms, ns/element, MElem/s, GB/s, % of copy) in
 * `rounds` rounds, each timing every candidate in turn (the median of reps runs); a candidate's
 * time is the median of its rounds, its spread the fastest and slowest round. */
static int time_all(Problem *p, Row *rows, int reps, int rounds, double copy_gbs,
                    long l2_bytes) {
  static float per_round[KAS_NCANDIDATES][MAX_ROUNDS];
  InputCopies ic;
  make_copies(p, &ic, l2_bytes);
  double bytes = (double)bytes_per_element() * (double)p->n;
  double to_ns = p->n ? 1e6 / (double)p->n : 0;
  for (int k = 0; k < rounds; k++)
    for (int c = 0; c < KAS_NCANDIDATES; c++)
      per_round[c][k] = (float)time_candidate(p, &ic, &kas_candidates[c], reps);
  for (int c = 0; c < KAS_NCANDIDATES; c++) {
    Row *r = &rows[c];
    float lo = per_round[c][0], hi = per_round[c][0];
    for (int k = 1; k < rounds; k++) {
      if (per_round[c][k] < lo) lo = per_round[c][k];
      if (per_round[c][k] > hi) hi = per_round[c][k];
    }
    r->round_min_ns = lo * to_ns;
    r->round_max_ns = hi * to_ns;
    r->ms = kas_median(per_round[c], rounds);
    r->ns_per_elem = p->n ? r->ms * 1e6 / (double)p->n : 0;
    r->melem_s = r->ms > 0 ? (double)p->n / (r->ms * 1e-3) / 1e6 : 0;
    r->gbs = r->ms > 0 ? bytes / (r->ms * 1e-3) / 1e9 : 0;
    r->copy_pct = copy_gbs > 0 ? 100.0 * r->gbs / copy_gbs : 0;
  }
  free_copies(&ic);
  return ic.copies;
}

/* --offset: every candidate on whole arrays of the same n, checked and timed, against the
 * sub-range's time.  Returns the number wrong there. */
static int compare_aligned(const Row *sub, size_t n, size_t offset, int reps, double copy_gbs,
                           long l2_bytes, int is_signed) {
  Problem a;
  problem_init(&a, n, 0, is_signed);
  Row whole[KAS_NCANDIDATES];
  memset(whole, 0, sizeof whole);
  int failures = check_all(&a, whole);
  time_all(&a, whole, reps, 1, copy_gbs, l2_bytes);
  printf("\nSub-range from element %zu (pointers aligned to their type only) against whole "
         "arrays, n = %zu:\n%-9s %12s %12s %8s\n", offset, n, "candidate", "sub ns/e",
         "whole ns/e", "sub/whole");
  for (int c = 0; c < KAS_NCANDIDATES; c++)
    printf("%-9s %12.4f %12.4f %7.1f%%%s\n", kas_candidates[c].name, sub[c].ns_per_elem,
           whole[c].ns_per_elem, whole[c].ms > 0 ? 100.0 * sub[c].ms / whole[c].ms : 0.0,
           whole[c].correct ? "" : "  WRONG on whole arrays");
  problem_free(&a);
  return failures;
}

int main(int argc, char **argv) {
  size_t n = KAS_DEFAULT_N, offset = 0;
  int reps = 30, rounds = 5, check_only = 0, is_signed = 0;
  const char *sizes = NULL;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--n") && a + 1 < argc) n = parse_size(argv[++a]);
    else if (!strncmp(argv[a], "N=", 2)) n = parse_size(argv[a] + 2);
    else if (!strcmp(argv[a], "--reps") && a + 1 < argc) reps = (int)parse_size(argv[++a]);
    else if (!strcmp(argv[a], "--rounds") && a + 1 < argc) rounds = (int)parse_size(argv[++a]);
    else if (!strcmp(argv[a], "--sizes") && a + 1 < argc) sizes = argv[++a];
    else if (!strcmp(argv[a], "--offset") && a + 1 < argc) offset = parse_size(argv[++a]);
    else if (!strcmp(argv[a], "--check-only")) check_only = 1;
    else if (!strcmp(argv[a], "--signed")) is_signed = 1;
    else if (argv[a][0] >= '0' && argv[a][0] <= '9') n = parse_size(argv[a]);
    else {
      fprintf(stderr, "usage: %s [N | N=n | --n N] [--reps R] [--rounds K] [--sizes a,b,c] "
                      "[--check-only] [--signed] [--offset K]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 20) reps = 20; /* a median of fewer runs is noise */
  if (rounds < 1) rounds = 1;
  if (rounds > MAX_ROUNDS) rounds = MAX_ROUNDS;
  kas_require_gpu("harness");
  if (sizes) return check_sizes(sizes, offset, is_signed);

  cudaDeviceProp prop;
  kas_cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  Problem p;
  problem_init(&p, n, offset, is_signed);
  Row rows[KAS_NCANDIDATES];
  memset(rows, 0, sizeof rows);
  int failures = check_all(&p, rows);
  if (check_only) {
    for (int c = 0; c < KAS_NCANDIDATES; c++)
      printf("%-9s n=%zu %s (normwise relative error %.3g)\n", kas_candidates[c].name, n,
             rows[c].correct ? "ok" : "WRONG", rows[c].error);
    printf("%s\n", failures ? "FAIL" : "PASS");
    problem_free(&p);
    return failures ? 1 : 0;
  }

  size_t copy_bytes = (size_t)8 * prop.l2CacheSize;
  if (copy_bytes < ((size_t)256 << 20)) copy_bytes = (size_t)256 << 20;
  double copy_gbs = kas_copy_gbs(copy_bytes, reps);
  int copies = time_all(&p, rows, reps, rounds, copy_gbs, prop.l2CacheSize);
  problem_free(&p);
  assign_measured_ranks(rows);
  moving_average(rows);
  double rho = spearman(rows, KAS_NCANDIDATES);
  print_table(prop.name, copy_gbs, n, offset, rows, rho);
  note_prediction_source(prop.name);
  if (offset)
    failures += compare_aligned(rows, n, offset, reps, copy_gbs, prop.l2CacheSize, is_signed);
  write_xml("results.xml", prop.name, copy_gbs, n, offset, reps, rounds, copies, rows, rho);
  write_dat("results.dat", rows);
  printf("wrote results.xml and results.dat%s\n", failures ? "; SOME CANDIDATES ARE WRONG" : "");
  return failures ? 1 : 0;
}
