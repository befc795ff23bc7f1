/* stvk_kmat33.c — CPU reference of stvk_kmat33 for one element, in double precision:
 *   K = lambda a(x)b + mu b(x)a + mu (dN.dM) F F^T with a = F dN, b = F dM
 * (matrix3x3, vector3, vector3, scalar, scalar) -> matrix3x3; layouts row-major as in
 * library/types.ini. */
#include <math.h>

void ref_stvk_kmat33(const double *f, const double *dn, const double *dm, const double *lambda,
                     const double *mu, double *out) {
  double a[3], b[3], dd = 0.0;
  for (int i = 0; i < 3; i++) {
    a[i] = f[i * 3 + 0] * dn[0] + f[i * 3 + 1] * dn[1] + f[i * 3 + 2] * dn[2];
    b[i] = f[i * 3 + 0] * dm[0] + f[i * 3 + 1] * dm[1] + f[i * 3 + 2] * dm[2];
    dd += dn[i] * dm[i];
  }
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double fft = 0.0; /* (F F^T)[i][j] */
      for (int k = 0; k < 3; k++) fft += f[i * 3 + k] * f[j * 3 + k];
      out[i * 3 + j] = lambda[0] * a[i] * b[j] + mu[0] * b[i] * a[j] + mu[0] * dd * fft;
    }
}
