/* madd55.c — CPU reference of madd55 for one element, in double precision:
 *   C = A + B
 * (matrix5x5, matrix5x5) -> matrix5x5; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_madd55(const double *a, const double *b, double *out) {
  for (int k = 0; k < 25; k++) out[k] = a[k] + b[k];
}
