/* minv33.c — CPU reference of minv33 for one element, in double precision:
 *   A^-1 = adj(A)/det A (singular A: +-inf or NaN entries)
 * (matrix3x3) -> matrix3x3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_minv33(const double *a, double *out) {
  /* cof[i][j]: the cofactor of A[i][j]; the cyclic index order carries its sign. */
  double cof[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      cof[i * 3 + j] = a[i1 * 3 + j1] * a[i2 * 3 + j2] - a[i1 * 3 + j2] * a[i2 * 3 + j1];
    }
  double det = a[0] * cof[0] + a[1] * cof[1] + a[2] * cof[2];
  /* adj(A) = cof^T; a singular A (det == 0) gives inf or NaN entries. */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) out[i * 3 + j] = cof[j * 3 + i] / det;
}
