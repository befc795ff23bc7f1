/*
 * test_references.c — the CPU references of the solid-mechanics functions (library/<f>/<f>.c,
 * the definitions every generated checker compares kernels with) against independent formulas:
 * determinant against the triple product, another row's expansion and det(AB) = det A det B;
 * inverse against A A^-1 = I and the cross-product form of a tetrahedron's J^-1; A^T B against
 * the product with an explicit transpose; trace, outer and dot products, shifts against
 * compositions of other functions; Green-Lagrange strain against frame indifference and its
 * small-strain limit; and the St. Venant-Kirchhoff tangent (stvk_kmat33 plus the geometric part
 * vmvdot3 + maddsi33) against a central finite difference of the internal forces of a linear
 * tetrahedron, f_N(u) = V F S grad(phi_N), the check a mechanics engineer asks for.
 */
#include "testutil.h"

#include <math.h>

/* The references are plain C files with one function each: test them as they are. */
#include "../library/green33/green33.c"
#include "../library/madd33/madd33.c"
#include "../library/maddid33/maddid33.c"
#include "../library/maddsi33/maddsi33.c"
#include "../library/mdet33/mdet33.c"
#include "../library/minv33/minv33.c"
#include "../library/mmul33/mmul33.c"
#include "../library/msub33/msub33.c"
#include "../library/mtmul33/mtmul33.c"
#include "../library/mtrace33/mtrace33.c"
#include "../library/mvmul33/mvmul33.c"
#include "../library/smimul33/smimul33.c"
#include "../library/smmul33/smmul33.c"
#include "../library/stvk_kmat33/stvk_kmat33.c"
#include "../library/stvk_stress33/stvk_stress33.c"
#include "../library/svmul3/svmul3.c"
#include "../library/vmvdot3/vmvdot3.c"
#include "../library/vouter3/vouter3.c"
#include "../library/vvdot3/vvdot3.c"
#include "../library/vvmulabs3/vvmulabs3.c"

#define TOL 1e-12 /* the references are double precision: only rounding separates two forms */

static const double IDENTITY[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

/* Uniform in [-1, 1): a fixed sequence, so a failure reproduces. */
static double rnd(unsigned *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return ((double)(*seed >> 8 & 0xffff) / 65536.0) * 2.0 - 1.0;
}

static void fill(double *x, int n, unsigned *seed) {
  for (int k = 0; k < n; k++) x[k] = rnd(seed);
}

static void assert_near(double got, double want, double tol, const char *what) {
  if (!(fabs(got - want) <= tol)) /* NaN fails too */
    fail_msg("%s: got %.17g, want %.17g (tolerance %.3g)", what, got, want, tol);
}

static void assert_all_near(const double *got, const double *want, int n, double tol,
                            const char *what) {
  for (int k = 0; k < n; k++) {
    char where[96];
    snprintf(where, sizeof where, "%s [%d]", what, k);
    assert_near(got[k], want[k], tol, where);
  }
}

static void transpose(const double *a, double *at) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) at[j * 3 + i] = a[i * 3 + j];
}

static void cross(const double *a, const double *b, double *c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

/* A random matrix made safely invertible (diagonally dominant). */
static void random_invertible(double *a, unsigned *seed) {
  fill(a, 9, seed);
  for (int i = 0; i < 3; i++) a[i * 4] += 3.0;
}

/* The rotation by angle t about the unit vector n (Rodrigues' formula). */
static void rotation(const double *n, double t, double *r) {
  double c = cos(t), s = sin(t);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) r[i * 3 + j] = (i == j ? c : 0.0) + (1 - c) * n[i] * n[j];
  r[1] -= s * n[2], r[2] += s * n[1], r[3] += s * n[2];
  r[5] -= s * n[0], r[6] -= s * n[1], r[7] += s * n[0];
}

static void random_rotation(unsigned *seed, double *r) {
  double n[3];
  fill(n, 3, seed);
  double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  for (int k = 0; k < 3; k++) n[k] /= len;
  rotation(n, 3.0 * rnd(seed), r);
}

/* ---- determinant and inverse -------------------------------------------------------------- */

static void test_det(void **state) {
  (void)state;
  unsigned seed = 3;
  for (int rep = 0; rep < 50; rep++) {
    double a[9], b[9], ab[9], at[9], det, det_b, det_ab, det_t;
    fill(a, 9, &seed);
    fill(b, 9, &seed);
    ref_mdet33(a, &det);
    /* The triple product of the rows. */
    double r12[3];
    cross(a + 3, a + 6, r12);
    assert_near(det, a[0] * r12[0] + a[1] * r12[1] + a[2] * r12[2], TOL, "det = r0 . (r1 x r2)");
    /* The expansion along row 1. */
    double row1 = -a[3] * (a[1] * a[8] - a[2] * a[7]) + a[4] * (a[0] * a[8] - a[2] * a[6]) -
                  a[5] * (a[0] * a[7] - a[1] * a[6]);
    assert_near(det, row1, TOL, "det along row 1");
    ref_mmul33(a, b, ab);
    ref_mdet33(b, &det_b);
    ref_mdet33(ab, &det_ab);
    assert_near(det_ab, det * det_b, TOL, "det(AB) = det A det B");
    transpose(a, at);
    ref_mdet33(at, &det_t);
    assert_near(det_t, det, TOL, "det A^T = det A");
  }
  double diag[9] = {2, 0, 0, 0, 3, 0, 0, 0, 4}, swapped[9] = {0, 3, 0, 2, 0, 0, 0, 0, 4}, det;
  ref_mdet33(diag, &det);
  assert_near(det, 24, 0, "det diag(2, 3, 4)");
  ref_mdet33(swapped, &det);
  assert_near(det, -24, 0, "det with two rows swapped");
}

static void test_inverse(void **state) {
  (void)state;
  unsigned seed = 5;
  for (int rep = 0; rep < 50; rep++) {
    double a[9], inv[9], prod[9];
    random_invertible(a, &seed);
    ref_minv33(a, inv);
    ref_mmul33(inv, a, prod);
    assert_all_near(prod, IDENTITY, 9, TOL, "A^-1 A");
    ref_mmul33(a, inv, prod);
    assert_all_near(prod, IDENTITY, 9, TOL, "A A^-1");
  }
  /* Documented: a singular A gives no finite entry (adj(A) / 0: +-inf, or NaN where the
   * cofactor is 0 too).  Integer entries keep det exactly 0. */
  double singular[9] = {1, 2, 3, 1, 2, 3, 4, 5, 7}, inv[9];
  ref_minv33(singular, inv);
  int infinite = 0;
  for (int k = 0; k < 9; k++) {
    if (isfinite(inv[k])) fail_msg("singular A: entry %d of the inverse is finite (%g)", k, inv[k]);
    infinite += isinf(inv[k]) != 0;
  }
  assert_true(infinite > 0);
}

/* ---- products, trace, shifts -------------------------------------------------------------- */

static void test_transpose_product(void **state) {
  (void)state;
  unsigned seed = 7;
  for (int rep = 0; rep < 20; rep++) {
    double a[9], b[9], at[9], c[9], want[9], ata[9], atat[9];
    fill(a, 9, &seed);
    fill(b, 9, &seed);
    ref_mtmul33(a, b, c);
    transpose(a, at);
    ref_mmul33(at, b, want);
    assert_all_near(c, want, 9, TOL, "A^T B = mmul33(transpose(A), B)");
    ref_mtmul33(a, a, ata); /* A^T A is symmetric */
    transpose(ata, atat);
    assert_all_near(ata, atat, 9, TOL, "A^T A symmetric");
  }
}

static void test_trace_sub_outer_dot(void **state) {
  (void)state;
  unsigned seed = 11;
  for (int rep = 0; rep < 20; rep++) {
    double a[9], b[9], ab[9], ba[9], d[9], back[9], t_ab, t_ba;
    fill(a, 9, &seed);
    fill(b, 9, &seed);
    ref_mmul33(a, b, ab);
    ref_mmul33(b, a, ba);
    ref_mtrace33(ab, &t_ab);
    ref_mtrace33(ba, &t_ba);
    assert_near(t_ab, t_ba, TOL, "tr(AB) = tr(BA)");
    ref_msub33(a, b, d);
    ref_madd33(d, b, back);
    assert_all_near(back, a, 9, TOL, "(A - B) + B = A");
    double u[3], v[3], w[3], m[9], mw[3], vw, uv, tr;
    fill(u, 3, &seed);
    fill(v, 3, &seed);
    fill(w, 3, &seed);
    ref_vouter3(u, v, m);
    ref_mvmul33(m, w, mw); /* (u (x) v) w = u (v . w) */
    ref_vvdot3(v, w, &vw);
    for (int i = 0; i < 3; i++) assert_near(mw[i], u[i] * vw, TOL, "(u (x) v) w");
    ref_mtrace33(m, &tr);
    ref_vvdot3(u, v, &uv);
    assert_near(tr, uv, TOL, "tr(u (x) v) = u . v");
    double mv[3], amb, want;
    ref_vmvdot3(u, a, v, &amb); /* u^T A v = u . (A v) */
    ref_mvmul33(a, v, mv);
    ref_vvdot3(u, mv, &want);
    assert_near(amb, want, TOL, "u^T A v");
  }
  double hand[9] = {1, 2, 3, 4, 5, 6, 7, 8, 10}, t;
  ref_mtrace33(hand, &t);
  assert_near(t, 16, 0, "tr by hand");
  /* vvdot3 keeps the sign that vvmulabs3 drops. */
  double p[3] = {1, 2, 3}, q[3] = {-4, 0, 1}, dot, absdot;
  ref_vvdot3(p, q, &dot);
  ref_vvmulabs3(p, q, &absdot);
  assert_near(dot, -1, 0, "(1, 2, 3) . (-4, 0, 1)");
  assert_near(absdot, 1, 0, "|(1, 2, 3) . (-4, 0, 1)|");
}

static void test_shifts(void **state) {
  (void)state;
  unsigned seed = 13;
  for (int rep = 0; rep < 20; rep++) {
    double a[9], s, si[9], want[9], got[9], one = 1.0;
    fill(a, 9, &seed);
    s = rnd(&seed);
    ref_smimul33(&s, si);
    ref_madd33(a, si, want);
    ref_maddsi33(a, &s, got);
    assert_all_near(got, want, 9, TOL, "A + s I = madd33(A, smimul33(s))");
    ref_smimul33(&one, si);
    ref_madd33(a, si, want);
    ref_maddid33(a, got);
    assert_all_near(got, want, 9, TOL, "A + I");
  }
}

/* ---- strain and stress -------------------------------------------------------------------- */

static void test_green(void **state) {
  (void)state;
  unsigned seed = 17;
  for (int rep = 0; rep < 20; rep++) {
    double f[9], e[9], et[9], r[9], rf[9], e_rf[9];
    fill(f, 9, &seed);
    ref_green33(f, e);
    transpose(e, et);
    assert_all_near(e, et, 9, TOL, "E symmetric");
    /* Frame indifference: E(R F) = E(F) for a rotation R. */
    random_rotation(&seed, r);
    ref_mmul33(r, f, rf);
    ref_green33(rf, e_rf);
    assert_all_near(e_rf, e, 9, TOL, "E(R F) = E(F)");
    /* A rigid rotation does not strain. */
    ref_green33(r, e);
    assert_all_near(e, (const double[9]){0}, 9, TOL, "E(R) = 0");
    /* Small strain: E(I + eps H) / eps -> (H + H^T) / 2, the error being (eps / 2) H^T H. */
    double h[9], fh[9], eps = 1e-6;
    fill(h, 9, &seed);
    for (int k = 0; k < 9; k++) fh[k] = IDENTITY[k] + eps * h[k];
    ref_green33(fh, e);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        assert_near(e[i * 3 + j] / eps, 0.5 * (h[i * 3 + j] + h[j * 3 + i]), 1e-5,
                    "small-strain limit");
  }
  double stretch[9] = {2, 0, 0, 0, 0.5, 0, 0, 0, 1}, e[9];
  ref_green33(stretch, e);
  assert_all_near(e, (const double[9]){1.5, 0, 0, 0, -0.375, 0, 0, 0, 0}, 9, TOL,
                  "E of stretches 2, 0.5, 1");
}

static void test_stress(void **state) {
  (void)state;
  unsigned seed = 19;
  for (int rep = 0; rep < 20; rep++) {
    double e[9], lam = 1 + rnd(&seed) * 0.5, mu = 1 + rnd(&seed) * 0.5, s[9];
    fill(e, 9, &seed);
    ref_stvk_stress33(e, &lam, &mu, s);
    /* The same stress composed from other functions: 2 mu E + (lambda tr E) I. */
    double twomu = 2 * mu, tr, ltr, scaled[9], want[9];
    ref_mtrace33(e, &tr);
    ltr = lam * tr;
    ref_smmul33(e, &twomu, scaled);
    ref_maddsi33(scaled, &ltr, want);
    assert_all_near(s, want, 9, TOL, "S = 2 mu E + lambda tr(E) I");
    double trs;
    ref_mtrace33(s, &trs);
    assert_near(trs, (3 * lam + 2 * mu) * tr, TOL, "tr S = (3 lambda + 2 mu) tr E");
  }
}

/* ---- the St. Venant-Kirchhoff tangent of a linear tetrahedron ----------------------------- */

/* A linear tetrahedron: shape-function gradients g[N] (constant) and volume. */
typedef struct {
  double g[4][3];
  double volume;
  double jacobian[9]; /* columns X1 - X0, X2 - X0, X3 - X0 */
} Tet;

/* From the nodes: the rows of J^-1 are (e2 x e3, e3 x e1, e1 x e2) / det J for the edges e_k
 * = X_k - X0 (an inverse written without minv33, which is checked against it). */
static Tet make_tet(const double x[4][3]) {
  Tet t;
  double e[3][3];
  for (int k = 0; k < 3; k++)
    for (int c = 0; c < 3; c++) {
      e[k][c] = x[k + 1][c] - x[0][c];
      t.jacobian[c * 3 + k] = e[k][c];
    }
  double c23[3], c31[3], c12[3];
  cross(e[1], e[2], c23);
  cross(e[2], e[0], c31);
  cross(e[0], e[1], c12);
  double det = e[0][0] * c23[0] + e[0][1] * c23[1] + e[0][2] * c23[2];
  for (int c = 0; c < 3; c++) {
    t.g[1][c] = c23[c] / det, t.g[2][c] = c31[c] / det, t.g[3][c] = c12[c] / det;
    t.g[0][c] = -(t.g[1][c] + t.g[2][c] + t.g[3][c]);
  }
  t.volume = det / 6;
  return t;
}

typedef struct {
  Tet tet;
  double lambda, mu;
} Element;

/* F = I + sum_M u_M (x) g_M, through the references. */
static void deformation_gradient(const Element *el, const double u[4][3], double *f) {
  double sum[9] = {0}, outer[9], next[9];
  for (int m = 0; m < 4; m++) {
    ref_vouter3(u[m], el->tet.g[m], outer);
    ref_madd33(sum, outer, next);
    memcpy(sum, next, sizeof sum);
  }
  ref_maddid33(sum, f);
}

/* S(F) of the element's material. */
static void stress(const Element *el, const double *f, double *s) {
  double e[9];
  ref_green33(f, e);
  ref_stvk_stress33(e, &el->lambda, &el->mu, s);
}

/* f_N = V F S g_N: the internal force on node N at displacements u. */
static void internal_force(const Element *el, const double u[4][3], int node, double *out) {
  double f[9], s[9], p[9], pg[3];
  deformation_gradient(el, u, f);
  stress(el, f, s);
  ref_mmul33(f, s, p);
  ref_mvmul33(p, el->tet.g[node], pg);
  ref_svmul3(pg, &el->tet.volume, out);
}

/* How the analytic block is put together; the wrong ones show that the check can fail. */
typedef enum { TANGENT_FULL, TANGENT_NO_GEOMETRIC, TANGENT_LAME_SWAPPED } TangentForm;

/* K_NM = V (stvk_kmat33(F, g_N, g_M, lambda, mu) + (g_N . S g_M) I). */
static void tangent_block(const Element *el, const double u[4][3], int n, int m, TangentForm form,
                          double *k) {
  double f[9], s[9], mat[9], geo = 0, full[9];
  deformation_gradient(el, u, f);
  stress(el, f, s);
  bool swap = form == TANGENT_LAME_SWAPPED;
  ref_stvk_kmat33(f, el->tet.g[n], el->tet.g[m], swap ? &el->mu : &el->lambda,
                  swap ? &el->lambda : &el->mu, mat);
  if (form != TANGENT_NO_GEOMETRIC) ref_vmvdot3(el->tet.g[n], s, el->tet.g[m], &geo);
  ref_maddsi33(mat, &geo, full);
  ref_smmul33(full, &el->tet.volume, k);
}

/* K_NM[i][j] = d f_N[i] / d u_M[j] by central differences (f is cubic in u: the h^2 term is
 * the whole truncation error, about 1e-10 of |K| here). */
static void tangent_fd(const Element *el, const double u[4][3], int n, int m, double *k) {
  const double h = 1e-5;
  for (int j = 0; j < 3; j++) {
    double up[4][3], down[4][3], fp[3], fm[3];
    memcpy(up, u, sizeof up);
    memcpy(down, u, sizeof down);
    up[m][j] += h;
    down[m][j] -= h;
    internal_force(el, up, n, fp);
    internal_force(el, down, n, fm);
    for (int i = 0; i < 3; i++) k[i * 3 + j] = (fp[i] - fm[i]) / (2 * h);
  }
}

/* Largest |difference| over all 16 blocks, relative to the largest |K| entry. */
static double tangent_error(const Element *el, const double u[4][3], TangentForm form) {
  double worst = 0, scale = 0;
  for (int n = 0; n < 4; n++)
    for (int m = 0; m < 4; m++) {
      double k[9], kfd[9];
      tangent_block(el, u, n, m, form, k);
      tangent_fd(el, u, n, m, kfd);
      for (int q = 0; q < 9; q++) {
        worst = fmax(worst, fabs(k[q] - kfd[q]));
        scale = fmax(scale, fabs(kfd[q]));
      }
    }
  return worst / scale;
}

/* A reference tetrahedron with jittered nodes, random Lame parameters. */
static Element random_element(unsigned *seed) {
  double x[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (int n = 0; n < 4; n++)
    for (int c = 0; c < 3; c++) x[n][c] += 0.2 * rnd(seed);
  Element el = {.tet = make_tet(x), .lambda = 1.5 + rnd(seed), .mu = 1 + 0.5 * rnd(seed)};
  return el;
}

static void test_tangent_against_finite_differences(void **state) {
  (void)state;
  unsigned seed = 23;
  for (int rep = 0; rep < 10; rep++) {
    Element el = random_element(&seed);
    assert_true(el.tet.volume > 0.05); /* jitter 0.2 keeps the element far from flat */
    double u[4][3];
    for (int n = 0; n < 4; n++)
      for (int c = 0; c < 3; c++) u[n][c] = 0.15 * rnd(&seed); /* strains of ~10 % */
    double err = tangent_error(&el, u, TANGENT_FULL);
    if (err > 1e-7)
      fail_msg("element %d: tangent and finite differences differ by %.3g of |K|", rep, err);
    /* The check can fail: the material part alone, or lambda and mu exchanged, are off by far
     * more than the tolerance (the stress is not small at these strains). */
    double err_material = tangent_error(&el, u, TANGENT_NO_GEOMETRIC);
    double err_swapped = tangent_error(&el, u, TANGENT_LAME_SWAPPED);
    print_message("  element %d: |K - K_fd| / |K| = %.2g (material part alone %.2g, lambda and mu "
                  "exchanged %.2g)\n", rep, err, err_material, err_swapped);
    assert_true(err_material > 1e-3);
    assert_true(err_swapped > 1e-3);
    /* A hyperelastic tangent is symmetric: K_NM = K_MN^T. */
    for (int n = 0; n < 4; n++)
      for (int m = 0; m < 4; m++) {
        double knm[9], kmn[9], kmnt[9];
        tangent_block(&el, u, n, m, TANGENT_FULL, knm);
        tangent_block(&el, u, m, n, TANGENT_FULL, kmn);
        transpose(kmn, kmnt);
        assert_all_near(knm, kmnt, 9, 1e-12, "K_NM = K_MN^T");
      }
    /* The internal forces balance: sum_N g_N = 0, so sum_N f_N = V P sum_N g_N = 0. */
    double total[3] = {0}, fn[3];
    for (int n = 0; n < 4; n++) {
      internal_force(&el, u, n, fn);
      for (int c = 0; c < 3; c++) total[c] += fn[c];
    }
    assert_all_near(total, (const double[3]){0}, 3, 1e-12, "sum_N f_N");
  }
}

/* The tetrahedron's gradients are the rows of J^-1: minv33 must agree with the cross products,
 * and a rigid rotation of the nodes (u_N = (R - I) X_N) gives F = R, no strain, no force. */
static void test_tet_inverse_and_rigid_motion(void **state) {
  (void)state;
  unsigned seed = 29;
  for (int rep = 0; rep < 10; rep++) {
    double x[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int n = 0; n < 4; n++)
      for (int c = 0; c < 3; c++) x[n][c] += 0.2 * rnd(&seed);
    Element el = {.tet = make_tet(x), .lambda = 1.2, .mu = 0.8};
    double inv[9];
    ref_minv33(el.tet.jacobian, inv);
    for (int k = 0; k < 3; k++)
      assert_all_near(inv + 3 * k, el.tet.g[k + 1], 3, TOL, "J^-1 rows are the gradients");
    double r[9], u[4][3], f[9], force[3];
    random_rotation(&seed, r);
    for (int n = 0; n < 4; n++) {
      double rx[3];
      ref_mvmul33(r, x[n], rx);
      for (int c = 0; c < 3; c++) u[n][c] = rx[c] - x[n][c];
    }
    deformation_gradient(&el, u, f);
    assert_all_near(f, r, 9, TOL, "F of a rigid rotation");
    for (int n = 0; n < 4; n++) {
      internal_force(&el, u, n, force);
      assert_all_near(force, (const double[3]){0}, 3, TOL, "force of a rigid rotation");
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_det),
      cmocka_unit_test(test_inverse),
      cmocka_unit_test(test_transpose_product),
      cmocka_unit_test(test_trace_sub_outer_dot),
      cmocka_unit_test(test_shifts),
      cmocka_unit_test(test_green),
      cmocka_unit_test(test_stress),
      cmocka_unit_test(test_tangent_against_finite_differences),
      cmocka_unit_test(test_tet_inverse_and_rigid_motion),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
