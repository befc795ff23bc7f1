/* maddsi33.c — CPU reference of maddsi33 for one element, in double precision:
 *   C[i][j] = A[i][j] + (i == j ? s : 0)
 * (matrix3x3, scalar) -> matrix3x3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_maddsi33(const double *a, const double *s, double *out) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) out[i * 3 + j] = a[i * 3 + j] + (i == j ? s[0] : 0.0);
}
