/* stvk_stress33.c — CPU reference of stvk_stress33 for one element, in double precision:
 *   S = lambda tr(E) I + 2 mu E
 * (matrix3x3, scalar, scalar) -> matrix3x3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_stvk_stress33(const double *e, const double *lambda, const double *mu, double *out) {
  double tr = e[0] + e[4] + e[8];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      out[i * 3 + j] = lambda[0] * tr * (i == j ? 1.0 : 0.0) + 2.0 * mu[0] * e[i * 3 + j];
}
