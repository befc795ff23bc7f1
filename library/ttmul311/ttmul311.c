/* ttmul311.c — CPU reference of ttmul311 for one element, in double precision:
 *   O[j][k] = sum_i T[i][j][k] * v[i]
 * (tensor3x3x3, vector3) -> matrix3x3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_ttmul311(const double *t, const double *v, double *out) {
  for (int j = 0; j < 3; j++)
    for (int k = 0; k < 3; k++) {
      double sum = 0.0;
      for (int i = 0; i < 3; i++) sum += t[(i * 3 + j) * 3 + k] * v[i];
      out[j * 3 + k] = sum;
    }
}
