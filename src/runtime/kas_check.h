/*
 * kas_check.h — how every generated checker (check_cpu.cpp, harness.cu, check_gpu.cu) decides
 * that an output is right: its normwise relative error against the float64 CPU graph is below
 * the tolerance, and no element is non-finite or off by more than 10 tolerances of the larger
 * of its own magnitude and the output's RMS (a single wrong element can hide in the norm of
 * millions; its own magnitude lets a huge entry, e.g. of a nearly singular matrix's inverse, be
 * off by its rounding).  The tolerance is KAS_TOLERANCE (1e-5 in single precision, 1e-12 in
 * double), or KAS_MODEL_FACTOR times how far the reference itself moves when every call's
 * arguments are rounded once to kas_real, where that is more (ill-conditioned data:
 * kas_random.h's kas_tolerances), up to KAS_TOLERANCE_CAP.  kas_real is the
 * candidates' real type (kas_candidates.h; float when this file is included alone).  Plain C;
 * copied into common/ of every generated folder from kasgen's src/runtime/.
 */
#ifndef KAS_CHECK_H
#define KAS_CHECK_H
#include <math.h>
#include <stddef.h>
#include <stdio.h>

#ifndef KAS_REAL_DEFINED
typedef float kas_real;
#define KAS_REAL_DEFINED
#endif

#define KAS_TOLERANCE (sizeof(kas_real) == sizeof(double) ? 1e-12 : 1e-5)
/* The tolerance grows with the reference's own sensitivity to rounding, to this many times how
 * far it moves when every call's arguments are rounded once (kas_random.h: kas_tolerances) ... */
#define KAS_MODEL_FACTOR 16
/* ... up to this cap: beyond it the inputs are too ill-conditioned for the check to tell right
 * from wrong, and it says so. */
#define KAS_TOLERANCE_CAP (1000 * KAS_TOLERANCE)

/* How far an output may be from the reference: its normwise relative error, and each element's
 * error relative to the larger of its own magnitude and the output's RMS. */
typedef struct {
  double error, element;
} KasTolerance;

static inline KasTolerance kas_fixed_tolerance(void) {
  KasTolerance t = {KAS_TOLERANCE, 10 * KAS_TOLERANCE};
  return t;
}

typedef struct {
  double error;     /* normwise relative error; INFINITY when an element is not finite */
  double element;   /* the largest element error (see KasTolerance); INFINITY: not finite */
  size_t first_bad; /* the first element wrong on its own (under the tolerance given), or count */
} KasComparison;

/* Element k's error relative to the larger of its magnitude and the output's RMS. */
static inline double kas_element_error(double got, double ref, double rms) {
  double scale = fmax(rms, fabs(ref));
  return isfinite(got) ? fabs(got - ref) / (scale > 0 ? scale : 1) : INFINITY;
}

static inline KasComparison kas_compare(const kas_real *got, const double *ref, size_t count,
                                        KasTolerance tol) {
  double diff2 = 0, ref2 = 0;
  int finite = 1;
  for (size_t k = 0; k < count; k++) {
    double d = (double)got[k] - ref[k];
    finite &= isfinite(got[k]) != 0;
    diff2 += d * d;
    ref2 += ref[k] * ref[k];
  }
  KasComparison c = {INFINITY, 0, count};
  if (finite) c.error = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
  double rms = count ? sqrt(ref2 / (double)count) : 0;
  for (size_t k = 0; k < count; k++) {
    double e = kas_element_error((double)got[k], ref[k], rms);
    if (!(e <= c.element)) c.element = e;
    if (!(e <= tol.element) && c.first_bad == count) c.first_bad = k;
  }
  return c;
}

static inline int kas_comparison_ok(KasComparison c, size_t count, KasTolerance tol) {
  return c.error < tol.error && c.first_bad == count;
}

/* Said when the unfused form, the library's functions called one by one, fails: the fault is
 * then not a fusion's. */
static inline void kas_note_unfused_failed(void) {
  printf("note: the unfused form, the library's functions called one by one, fails too: the "
         "data are too ill-conditioned for this computation (or a function of the library is "
         "wrong), not a fusion\n");
}

/* Compares one output of `floats` reals per element; on a failure prints
 * "<what>: output <name>: relative error E, first wrong: element i [c] = x, expected y". */
static inline int kas_check_output(const char *what, const char *name, const kas_real *got,
                                   const double *ref, size_t count, int floats,
                                   KasTolerance tol, double *error) {
  KasComparison c = kas_compare(got, ref, count, tol);
  *error = c.error;
  if (kas_comparison_ok(c, count, tol)) return 1;
  printf("%s: output %s: relative error %.3g", what, name, c.error);
  if (tol.error > KAS_TOLERANCE) printf(" (tolerance %.3g)", tol.error);
  if (c.first_bad < count)
    printf(", first wrong: element %zu [%zu] = %.17g, expected %.17g", c.first_bad / floats,
           c.first_bad % floats, (double)got[c.first_bad], ref[c.first_bad]);
  printf("\n");
  return 0;
}
#endif
