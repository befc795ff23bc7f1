/* green33.c — CPU reference of green33 for one element, in double precision:
 *   E = (F^T F - I)/2
 * (matrix3x3) -> matrix3x3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_green33(const double *f, double *out) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double ftf = 0.0;
      for (int k = 0; k < 3; k++) ftf += f[k * 3 + i] * f[k * 3 + j];
      out[i * 3 + j] = 0.5 * (ftf - (i == j ? 1.0 : 0.0));
    }
}
