/* ttmul3212.c — CPU reference of ttmul3212 for one element, in double precision:
 *   O[a][b][c] = sum_x T[a][b][x] * M[x][c]
 * (tensor3x3x3, matrix3x3) -> tensor3x3x3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_ttmul3212(const double *t, const double *m, double *out) {
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      for (int c = 0; c < 3; c++) {
        double sum = 0.0;
        for (int x = 0; x < 3; x++) sum += t[(a * 3 + b) * 3 + x] * m[x * 3 + c];
        out[(a * 3 + b) * 3 + c] = sum;
      }
}
