/* mmul55.c — CPU reference of mmul55 for one element, in double precision:
 *   C[i][j] = sum_k A[i][k] * B[k][j]
 * (matrix5x5, matrix5x5) -> matrix5x5; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_mmul55(const double *a, const double *b, double *out) {
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 5; j++) {
      double sum = 0.0;
      for (int k = 0; k < 5; k++) sum += a[i * 5 + k] * b[k * 5 + j];
      out[i * 5 + j] = sum;
    }
}
