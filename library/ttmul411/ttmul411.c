/* ttmul411.c — CPU reference of ttmul411 for one element, in double precision:
 *   O[j][k][l] = sum_i T[i][j][k][l] * v[i]
 * (tensor3x3x3x3, vector3) -> tensor3x3x3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_ttmul411(const double *t, const double *v, double *out) {
  for (int j = 0; j < 3; j++)
    for (int k = 0; k < 3; k++)
      for (int l = 0; l < 3; l++) {
        double sum = 0.0;
        for (int i = 0; i < 3; i++) sum += t[((i * 3 + j) * 3 + k) * 3 + l] * v[i];
        out[(j * 3 + k) * 3 + l] = sum;
      }
}
