/*
 * kas_random.h — the test data of every checker kasgen generates (check_cpu, harness,
 * check_gpu): reproducible, never zero, so that a kernel that forgets to load or to multiply
 * cannot pass, and well-conditioned, so that a right kernel cannot fail:
 *   - per type: a square matrix type that types.ini marks `check-inputs = near-identity`
 *     (kas_input_near_identity, kas_candidates.h) is drawn as I + P, |P[i][j]| in
 *     [0.25, 0.75)/k with both signs (a deformation gradient near the reference: singular
 *     values in (0.25, 1.75), every entry nonzero); any other type as +-[0.5, 1.5);
 *   - per element: an element whose float64 reference moves by more than KAS_SCREEN_LIMIT
 *     (relative, in any of its outputs) when every argument of every call moves by one
 *     rounding of kas_real (cpu_graph.c's kas_cpu_graph_rounded) is drawn again
 *     (kas_draw_inputs).  Its result is then ill-conditioned at this precision: the
 *     library's functions called one by one (the unfused form) miss it as much as any fusion,
 *     and the check would judge the data, not the code.  Random F^T F of +-[0.5, 1.5) entries
 *     is such data: all entries alike, nearly rank one;
 *   - per output: the tolerance on what is left (kas_model_tolerances; kas_check.h), 16 times
 *     how far the output moves under that rounding where that is more than KAS_TOLERANCE.
 * Copied into common/ of every generated folder from kasgen's src/runtime/; the harness,
 * check_cpu, check_gpu and tests/fem_driver include it.
 */
#ifndef KAS_RANDOM_H
#define KAS_RANDOM_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "kas_candidates.h" /* kas_real, the input and output tables */
#include "kas_check.h"

/* xorshift64*: a fixed seed, so a failure reproduces. */
static uint64_t kas_rng_state = 0x9E3779B97F4A7C15ull;

static inline double kas_uniform(void) {
  kas_rng_state ^= kas_rng_state >> 12;
  kas_rng_state ^= kas_rng_state << 25;
  kas_rng_state ^= kas_rng_state >> 27;
  return (double)((kas_rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* A value in [0.5, 1.5), negated with probability 1/2 when is_signed: never zero.  In double
 * precision every bit is random (a float-valued double would hide a computation in float). */
static inline double kas_random_double(int is_signed) {
  double v = 0.5 + kas_uniform();
  return is_signed && kas_uniform() < 0.5 ? -v : v;
}

/* Component c of one element of an input of type `order` (kas_input_near_identity: k of a
 * k x k matrix drawn near the identity, row-major, an array's values one after another; 0: any
 * other type), rounded to kas_real.  The perturbation has both signs whatever is_signed. */
static inline double kas_random_component(int order, int c, int is_signed) {
  if (order <= 0) return (double)(kas_real)kas_random_double(is_signed);
  int at = c % (order * order);
  double identity = at % (order + 1) == 0 ? 1.0 : 0.0;
  return (double)(kas_real)(identity + kas_random_double(1) * (0.5 / order));
}

/* All `reals` reals of an array of input i laid out as the candidates address it (kas_layout.h:
 * component-major rows ld apart, or element-major): the range a check then draws with
 * kas_draw_inputs and the elements around it, which must not matter. */
static inline void kas_fill_input(kas_real *x, size_t reals, int i, size_t ld, int is_signed) {
  size_t s = (size_t)kas_input_floats[i];
  int comp = kas_input_layouts[i] == KAS_COMPONENT;
  for (size_t k = 0; k < reals; k++)
    x[k] = (kas_real)kas_random_component(kas_input_near_identity[i],
                                          (int)(comp ? k / ld : k % s), is_signed);
}

/* ---- the screen of ill-conditioned elements, and the tolerance they leave ----------------- */

/* The float64 reference with every call's arguments rounded by a relative +-u (cpu_graph.c's
 * kas_cpu_graph_rounded; u = 0: kas_cpu_graph), element e as element at[e] of a call (at NULL:
 * as element e): the rounding of an element depends on its place in the call. */
typedef void (*KasGraph)(const double *const *in, double *const *out, size_t n, double u,
                         const size_t *at);

#define KAS_SCREEN_CHUNK 1024 /* elements the screen evaluates at a time */
#define KAS_SCREEN_ROUNDS 64  /* draws of an element before it is kept as it is */
/* The relative move of an element's reference under one rounding of every argument above which
 * it is drawn again: a quarter of the tolerance, so that the rounding of a chain of calls,
 * amplified as much, stays inside it. */
#define KAS_SCREEN_LIMIT (KAS_TOLERANCE / 4)
/* The relative size of that rounding: kas_real's machine epsilon, twice its unit roundoff, since
 * 1 + 2^-53 is no double (a move by the unit roundoff would often be none). */
#define KAS_ROUNDING (sizeof(kas_real) == sizeof(double) ? 0x1p-52 : 0x1p-23)
#define KAS_NIN_1 (KAS_NINPUTS > 0 ? KAS_NINPUTS : 1)

/* The screen's buffers for KAS_SCREEN_CHUNK elements: the inputs of the elements it evaluates,
 * packed, the outputs exact [0] and rounded [1], the elements' indices, the places they are
 * rounded as (kas_screen_round_in_place) and the elements drawn more than once. */
typedef struct {
  double *in[KAS_NIN_1], *out[2][KAS_NOUTPUTS];
  size_t todo[KAS_SCREEN_CHUNK], at[KAS_SCREEN_CHUNK], redrawn[KAS_SCREEN_CHUNK];
} KasScreen;

static inline void *kas_screen_alloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fputs("kas: out of memory\n", stderr);
    exit(2);
  }
  return p;
}

static inline KasScreen *kas_screen_new(void) {
  const size_t per_real = KAS_SCREEN_CHUNK * sizeof(double);
  KasScreen *w = (KasScreen *)kas_screen_alloc(sizeof *w);
  for (int i = 0; i < KAS_NINPUTS; i++)
    w->in[i] = (double *)kas_screen_alloc(per_real * (size_t)kas_input_floats[i]);
  for (int v = 0; v < 2; v++)
    for (int o = 0; o < KAS_NOUTPUTS; o++)
      w->out[v][o] = (double *)kas_screen_alloc(per_real * (size_t)kas_output_floats[o]);
  return w;
}

static inline void kas_screen_free(KasScreen *w) {
  for (int i = 0; i < KAS_NINPUTS; i++) free(w->in[i]);
  for (int v = 0; v < 2; v++)
    for (int o = 0; o < KAS_NOUTPUTS; o++) free(w->out[v][o]);
  free(w);
}

/* Every input of element e drawn anew, element-major into in. */
static inline void kas_draw_element(double *const *in, size_t e, int is_signed) {
  for (int i = 0; i < KAS_NINPUTS; i++) {
    size_t s = (size_t)kas_input_floats[i];
    for (size_t c = 0; c < s; c++)
      in[i][e * s + c] = kas_random_component(kas_input_near_identity[i], (int)c, is_signed);
  }
}

/* The listed elements' inputs, packed into the screen's buffers, and their outputs rounded
 * (as the elements at[k] of a call; at NULL: as placed) and, when `exact`, exact. */
static inline void kas_screen_evaluate(KasScreen *w, const double *const *in, size_t count,
                                       KasGraph graph, int exact, const size_t *at) {
  for (int i = 0; i < KAS_NINPUTS; i++) {
    size_t s = (size_t)kas_input_floats[i];
    for (size_t k = 0; k < count; k++)
      for (size_t c = 0; c < s; c++) w->in[i][k * s + c] = in[i][w->todo[k] * s + c];
  }
  for (int v = !exact; v < 2; v++)
    graph((const double *const *)w->in, w->out[v], count, v ? KAS_ROUNDING : 0, at);
}

/* Whether packed element k's reference moved by more than KAS_SCREEN_LIMIT (or is not
 * finite) in any output, relative to the element's norm of that output: the checks compare each
 * output on its own, so a small output beside a large one must be as well-conditioned. */
static inline int kas_screen_sensitive(const KasScreen *w, size_t k) {
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    size_t s = (size_t)kas_output_floats[o];
    double moved2 = 0, norm2 = 0;
    for (size_t c = 0; c < s; c++) {
      double a = w->out[0][o][k * s + c], b = w->out[1][o][k * s + c];
      moved2 += (b - a) * (b - a);
      norm2 += a * a;
    }
    if (!(moved2 <= KAS_SCREEN_LIMIT * KAS_SCREEN_LIMIT * norm2)) return 1;
  }
  return 0;
}

/* The outputs exact (v = 0) or rounded (1) of the count packed elements, to the elements'
 * places in `to`. */
static inline void kas_screen_keep(const KasScreen *w, int v, double *const *to, size_t count) {
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    size_t s = (size_t)kas_output_floats[o];
    for (size_t k = 0; k < count; k++)
      for (size_t c = 0; c < s; c++) to[o][w->todo[k] * s + c] = w->out[v][o][k * s + c];
  }
}

/* The rounded outputs of the elements drawn more than once in the chunk from `first`, rounded
 * as the tolerance model has always rounded them, each as the element at its place in the
 * chunk: the screen's later rounds evaluated them packed, at other places (so rounded
 * otherwise), and its first round evaluated every element at its place. */
static inline void kas_screen_round_in_place(KasScreen *w, const double *const *in, size_t first,
                                             size_t count, KasGraph graph,
                                             double *const *rounded) {
  for (size_t k = 0; k < count; k++) {
    w->todo[k] = w->redrawn[k];
    w->at[k] = w->redrawn[k] - first;
  }
  kas_screen_evaluate(w, in, count, graph, 0, w->at);
  kas_screen_keep(w, 1, rounded, count);
}

/* Screens elements [first, first + m), drawn already: the sensitive ones are drawn again until
 * none is or KAS_SCREEN_ROUNDS pass.  The outputs of the final data go to ref (exact) and
 * rounded (the tolerance model's, kas_model_add), so that the checks need not evaluate the graph
 * again: each element's exact outputs of its last round are kas_cpu_graph's bit for bit (u = 0
 * rounds nothing, whatever the place), and its rounded ones of the first round are those of its
 * place (kas_screen_round_in_place evaluates the redrawn ones again).  Returns how many stayed
 * sensitive. */
static inline size_t kas_screen_chunk(KasScreen *w, double *const *in, size_t first, size_t m,
                                      int is_signed, KasGraph graph, double *const *ref,
                                      double *const *rounded) {
  size_t count = m, redrawn = 0;
  for (size_t k = 0; k < m; k++) w->todo[k] = first + k;
  for (int round = 0; count && round < KAS_SCREEN_ROUNDS; round++) {
    if (round)
      for (size_t k = 0; k < count; k++) kas_draw_element(in, w->todo[k], is_signed);
    kas_screen_evaluate(w, (const double *const *)in, count, graph, 1, NULL);
    kas_screen_keep(w, 0, ref, count);
    if (!round) kas_screen_keep(w, 1, rounded, count);
    size_t kept = 0;
    for (size_t k = 0; k < count; k++)
      if (kas_screen_sensitive(w, k)) w->todo[kept++] = w->todo[k];
    count = kept;
    if (!round)
      for (redrawn = 0; redrawn < count; redrawn++) w->redrawn[redrawn] = w->todo[redrawn];
  }
  kas_screen_round_in_place(w, (const double *const *)in, first, redrawn, graph, rounded);
  return count;
}

/* Draws n elements of every input, element-major into in[i] (n * kas_input_floats[i] doubles,
 * each a value kas_real holds), screened with the float64 reference `graph`, and their outputs
 * exact (kas_cpu_graph's) into ref[o] and rounded (the tolerance model's) into rounded[o]
 * (n * kas_output_floats[o] doubles each).  Returns how many stayed ill-conditioned
 * (kas_report_screen says so). */
static inline size_t kas_draw_inputs(double *const *in, size_t n, int is_signed, KasGraph graph,
                                     double *const *ref, double *const *rounded) {
  KasScreen *w = kas_screen_new();
  for (size_t e = 0; e < n; e++) kas_draw_element(in, e, is_signed);
  size_t left = 0;
  for (size_t e0 = 0; e0 < n; e0 += KAS_SCREEN_CHUNK) {
    size_t m = n - e0 < KAS_SCREEN_CHUNK ? n - e0 : KAS_SCREEN_CHUNK;
    left += kas_screen_chunk(w, in, e0, m, is_signed, graph, ref, rounded);
  }
  kas_screen_free(w);
  return left;
}

static inline void kas_report_screen(const char *what, size_t left, size_t n) {
  if (left)
    printf("note: %s: %zu of %zu elements stay ill-conditioned after %d draws (their reference "
           "moves by more than %.3g under one rounding of every argument)\n",
           what, left, n, KAS_SCREEN_ROUNDS, KAS_SCREEN_LIMIT);
}

/* The rounding model of a problem's outputs, summed part by part: how far the reference
 * moves when every call's arguments are rounded once (KasTolerance's two measures). */
typedef struct {
  double rms[KAS_NOUTPUTS], diff2[KAS_NOUTPUTS], element[KAS_NOUTPUTS];
  size_t count[KAS_NOUTPUTS];
} KasModel;

/* Starts the model of outputs ref (n elements, element-major): their RMS first, since an
 * element's error is relative to the larger of its magnitude and the RMS. */
static inline void kas_model_begin(KasModel *m, const double *const *ref, size_t n) {
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    double ref2 = 0;
    m->count[o] = n * (size_t)kas_output_floats[o];
    for (size_t k = 0; k < m->count[o]; k++) ref2 += ref[o][k] * ref[o][k];
    m->rms[o] = m->count[o] ? sqrt(ref2 / (double)m->count[o]) : 0;
    m->diff2[o] = m->element[o] = 0;
  }
}

/* Adds elements [e0, e0 + count) of the problem: ref and rounded (kas_draw_inputs's outputs)
 * point at element e0. */
static inline void kas_model_add(KasModel *m, const double *const *ref,
                                 const double *const *rounded, size_t count) {
  for (int o = 0; o < KAS_NOUTPUTS; o++)
    for (size_t k = 0; k < count * (size_t)kas_output_floats[o]; k++) {
      double a = ref[o][k], b = rounded[o][k];
      double e = kas_element_error(b, a, m->rms[o]);
      m->diff2[o] += (b - a) * (b - a);
      if (!(e <= m->element[o])) m->element[o] = e;
    }
}

/* Each output's tolerance on this data (kas_check.h): the fixed one, or KAS_MODEL_FACTOR times
 * the rounding model's where that is more, up to KAS_TOLERANCE_CAP; says so on stdout where it
 * grows, prefixed by `what`.  Ends the model. */
static inline void kas_model_tolerances(KasModel *m, const char *what, KasTolerance *tol) {
  const KasTolerance fixed = kas_fixed_tolerance();
  for (int o = 0; o < KAS_NOUTPUTS; o++) {
    double norm = m->rms[o] * sqrt((double)m->count[o]);
    double moved = norm > 0 ? sqrt(m->diff2[o]) / norm : sqrt(m->diff2[o]);
    tol[o].error = fmin(fmax(fixed.error, KAS_MODEL_FACTOR * moved), KAS_TOLERANCE_CAP);
    tol[o].element = fmin(fmax(fixed.element, KAS_MODEL_FACTOR * m->element[o]),
                          10 * KAS_TOLERANCE_CAP);
    if (tol[o].error > fixed.error || tol[o].element > fixed.element)
      printf("note: %s: output %s: the reference moves by %.3g (element: %.3g) under one "
             "rounding of every argument: ill-conditioned data, tolerance %.3g (element: %.3g)"
             "%s\n", what, kas_output_names[o], moved, m->element[o], tol[o].error,
             tol[o].element, tol[o].error == KAS_TOLERANCE_CAP ? ", capped" : "");
  }
}

/* The tolerances of a problem held whole: outputs exact ref and rounded, n elements each. */
static inline void kas_tolerances(const char *what, const double *const *ref,
                                  const double *const *rounded, size_t n, KasTolerance *tol) {
  KasModel m;
  kas_model_begin(&m, ref, n);
  kas_model_add(&m, ref, rounded, n);
  kas_model_tolerances(&m, what, tol);
}
#endif
