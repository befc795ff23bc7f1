/* smmul55.c — CPU reference of smmul55 for one element, in double precision:
 *   M * s
 * (matrix5x5, scalar) -> matrix5x5; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_smmul55(const double *m, const double *s, double *out) {
  for (int k = 0; k < 25; k++) out[k] = m[k] * s[0];
}
