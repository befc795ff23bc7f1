/* mtrace33.c — CPU reference of mtrace33 for one element, in double precision:
 *   t = sum_i A[i][i]
 * (matrix3x3) -> scalar; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_mtrace33(const double *a, double *out) {
  out[0] = a[0] + a[4] + a[8];
}
