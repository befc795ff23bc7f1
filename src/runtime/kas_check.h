/*
 * kas_check.h — how every generated checker (check_cpu.cpp, harness.cu, check_gpu.cu) decides
 * that an output is right: its normwise relative error against the float64 CPU graph is below
 * KAS_TOLERANCE (1e-5 in single precision, 1e-12 in double), and no element is non-finite or
 * off by more than 10 tolerances of the larger of its own magnitude and the output's RMS (a
 * single wrong element can hide in the norm of millions; its own magnitude lets a huge entry,
 * e.g. of a nearly singular matrix's inverse, be off by its rounding).  kas_real is the
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

typedef struct {
  double error;     /* normwise relative error; INFINITY when an element is not finite */
  size_t first_bad; /* the first element wrong on its own, or count when none is */
} KasComparison;

static inline KasComparison kas_compare(const kas_real *got, const double *ref, size_t count) {
  double diff2 = 0, ref2 = 0;
  int finite = 1;
  for (size_t k = 0; k < count; k++) {
    double d = (double)got[k] - ref[k];
    finite &= isfinite(got[k]) != 0;
    diff2 += d * d;
    ref2 += ref[k] * ref[k];
  }
  KasComparison c = {INFINITY, count};
  if (finite) c.error = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
  double rms = count ? sqrt(ref2 / (double)count) : 0;
  for (size_t k = 0; k < count && c.first_bad == count; k++)
    if (!isfinite(got[k]) ||
        fabs((double)got[k] - ref[k]) > 10 * KAS_TOLERANCE * fmax(rms, fabs(ref[k])))
      c.first_bad = k;
  return c;
}

static inline int kas_comparison_ok(KasComparison c, size_t count) {
  return c.error < KAS_TOLERANCE && c.first_bad == count;
}

/* Compares one output of `floats` reals per element; on a failure prints
 * "<what>: output <name>: relative error E, first wrong: element i [c] = x, expected y". */
static inline int kas_check_output(const char *what, const char *name, const kas_real *got,
                                   const double *ref, size_t count, int floats, double *error) {
  KasComparison c = kas_compare(got, ref, count);
  *error = c.error;
  if (kas_comparison_ok(c, count)) return 1;
  printf("%s: output %s: relative error %.3g", what, name, c.error);
  if (c.first_bad < count)
    printf(", first wrong: element %zu [%zu] = %.17g, expected %.17g", c.first_bad / floats,
           c.first_bad % floats, (double)got[c.first_bad], ref[c.first_bad]);
  printf("\n");
  return 0;
}
#endif
