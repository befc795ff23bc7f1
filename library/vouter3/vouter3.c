/* vouter3.c — CPU reference of vouter3 for one element, in double precision:
 *   M[i][j] = a[i]*b[j]
 * (vector3, vector3) -> matrix3x3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_vouter3(const double *a, const double *b, double *out) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) out[i * 3 + j] = a[i] * b[j];
}
