/* mdet33.c — CPU reference of mdet33 for one element, in double precision:
 *   d = det A (cofactor expansion along row 0)
 * (matrix3x3) -> scalar; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_mdet33(const double *a, double *out) {
  out[0] = a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
           a[2] * (a[3] * a[7] - a[4] * a[6]);
}
