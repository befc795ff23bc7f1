/* vvmulabs3.c — CPU reference of vvmulabs3 for one element, in double precision:
 *   |sum_i a[i] * b[i]|
 * (vector3, vector3) -> scalar; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_vvmulabs3(const double *a, const double *b, double *out) {
  double sum = 0.0;
  for (int i = 0; i < 3; i++) sum += a[i] * b[i];
  out[0] = fabs(sum);
}
