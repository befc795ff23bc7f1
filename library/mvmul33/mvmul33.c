/* mvmul33.c — CPU reference of mvmul33 for one element, in double precision:
 *   w[i] = sum_j M[i][j] * v[j]
 * (matrix3x3, vector3) -> vector3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_mvmul33(const double *m, const double *v, double *out) {
  for (int i = 0; i < 3; i++) {
    double sum = 0.0;
    for (int j = 0; j < 3; j++) sum += m[i * 3 + j] * v[j];
    out[i] = sum;
  }
}
