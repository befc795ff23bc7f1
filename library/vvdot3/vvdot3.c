/* vvdot3.c — CPU reference of vvdot3 for one element, in double precision:
 *   d = sum_i a[i]*b[i] (signed)
 * (vector3, vector3) -> scalar; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_vvdot3(const double *a, const double *b, double *out) {
  out[0] = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
