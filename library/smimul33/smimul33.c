/* smimul33.c — CPU reference of smimul33 for one element, in double precision:
 *   s * I
 * (scalar) -> matrix3x3; layouts row-major as in library/types.ini. */
#include <math.h>

void ref_smimul33(const double *s, double *out) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) out[i * 3 + j] = i == j ? s[0] : 0.0;
}
