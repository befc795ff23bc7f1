/* msub33.c — CPU reference of msub33 for one element, in double precision:
 *   C[i][j] = A[i][j] - B[i][j]
 * (matrix3x3, matrix3x3) -> matrix3x3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_msub33(const double *a, const double *b, double *out) {
  for (int k = 0; k < 9; k++) out[k] = a[k] - b[k];
}
