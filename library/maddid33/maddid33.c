/* maddid33.c — CPU reference of maddid33 for one element, in double precision:
 *   C[i][j] = A[i][j] + (i == j ? 1 : 0)
 * (matrix3x3) -> matrix3x3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_maddid33(const double *a, double *out) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) out[i * 3 + j] = a[i * 3 + j] + (i == j ? 1.0 : 0.0);
}
