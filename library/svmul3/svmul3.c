/* svmul3.c — CPU reference of svmul3 for one element, in double precision:
 *   v * s
 * (vector3, scalar) -> vector3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_svmul3(const double *v, const double *s, double *out) {
  for (int k = 0; k < 3; k++) out[k] = v[k] * s[0];
}
