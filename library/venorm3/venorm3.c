/* venorm3.c — CPU reference of venorm3 for one element, in double precision:
 *   sqrt(sum_i v[i]^2)
 * (vector3) -> scalar; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_venorm3(const double *v, double *out) {
  double sum = 0.0;
  for (int i = 0; i < 3; i++) sum += v[i] * v[i];
  out[0] = sqrt(sum);
}
