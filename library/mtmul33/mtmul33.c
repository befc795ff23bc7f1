/* mtmul33.c — CPU reference of mtmul33 for one element, in double precision:
 *   C[i][j] = sum_k A[k][i]*B[k][j]
 * (matrix3x3, matrix3x3) -> matrix3x3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_mtmul33(const double *a, const double *b, double *out) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double sum = 0.0;
      for (int k = 0; k < 3; k++) sum += a[k * 3 + i] * b[k * 3 + j];
      out[i * 3 + j] = sum;
    }
}
