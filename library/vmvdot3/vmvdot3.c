/* vmvdot3.c — CPU reference of vmvdot3 for one element, in double precision:
 *   d = sum_ij a[i]*M[i][j]*b[j]
 * (vector3, matrix3x3, vector3) -> scalar; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_vmvdot3(const double *a, const double *m, const double *b, double *out) {
  double sum = 0.0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) sum += a[i] * m[i * 3 + j] * b[j];
  out[0] = sum;
}
