/* smmul33.c — CPU reference of smmul33 for one element, in double precision:
 *   M * s
 * (matrix3x3, scalar) -> matrix3x3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_smmul33(const double *m, const double *s, double *out) {
  for (int k = 0; k < 9; k++) out[k] = m[k] * s[0];
}
