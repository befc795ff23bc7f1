/*
 * element_cpu_reference.c — THE REFERENCE PATH, NOT KASGEN: the St. Venant-Kirchhoff element of
 * specs/stvk_tet.spec evaluated call by call with the library's CPU references (library/<f>/<f>.c,
 * double precision), for the CPU mode of the hyperelastic example.  It lets the tests check the
 * mesh, geometry, gather, assembly and output format against scikit-fem before kasgen can emit
 * array specs; kasgen's own CPU path is element_kasgen_host.c.  Float in and out, as the embed API.
 */
#include <string.h>

#include "element_cpu.h"

/* The CPU references of the functions the spec calls, as the library defines them (the Makefile
 * puts the library folder on the include path). */
#include "green33/green33.c"
#include "madd33/madd33.c"
#include "maddid33/maddid33.c"
#include "maddsi33/maddsi33.c"
#include "mmul33/mmul33.c"
#include "mvmul33/mvmul33.c"
#include "smmul33/smmul33.c"
#include "stvk_kmat33/stvk_kmat33.c"
#include "stvk_stress33/stvk_stress33.c"
#include "svmul3/svmul3.c"
#include "vmvdot3/vmvdot3.c"
#include "vouter3/vouter3.c"

typedef struct {
  double u[4][3], dphi[4][3], volume, lambda, mu;
} ElementIn;

static void widen(const float *p, double *out, int count) {
  for (int k = 0; k < count; k++) out[k] = p[k];
}

/* The spec's kinematics and stress lines: F, S and P = F S. */
static void stress_state(const ElementIn *in, double F[9], double S[9], double P[9]) {
  double H[9], G[9], sum[9], E[9];
  ref_vouter3(in->u[0], in->dphi[0], H);
  for (int n = 1; n < 4; n++) {
    ref_vouter3(in->u[n], in->dphi[n], G);
    ref_madd33(H, G, sum);
    memcpy(H, sum, sizeof H);
  }
  ref_maddid33(H, F);
  ref_green33(F, E);
  ref_stvk_stress33(E, &in->lambda, &in->mu, S);
  ref_mmul33(F, S, P);
}

static void one_element(const ElementIn *in, float *f, float *K) {
  double F[9], S[9], P[9];
  stress_state(in, F, S, P);
  for (int n = 0; n < 4; n++) {
    double fn[3], fv[3];
    ref_mvmul33(P, in->dphi[n], fn);
    ref_svmul3(fn, &in->volume, fv);
    for (int i = 0; i < 3; i++) f[3 * n + i] = (float)fv[i];
  }
  for (int n = 0; n < 4; n++)
    for (int m = 0; m < 4; m++) {
      double kmat[9], geo, kfull[9], block[9];
      ref_stvk_kmat33(F, in->dphi[n], in->dphi[m], &in->lambda, &in->mu, kmat);
      ref_vmvdot3(in->dphi[n], S, in->dphi[m], &geo);
      ref_maddsi33(kmat, &geo, kfull);
      ref_smmul33(kfull, &in->volume, block);
      for (int q = 0; q < 9; q++) K[9 * (4 * n + m) + q] = (float)block[q];
    }
}

static int run_reference(const float *u, const float *dphi, const float *volume,
                         const float *lambda, const float *mu, float *f, float *K, size_t n) {
  for (size_t e = 0; e < n; e++) {
    ElementIn in;
    widen(u + 12 * e, &in.u[0][0], 12);
    widen(dphi + 12 * e, &in.dphi[0][0], 12);
    in.volume = volume[e], in.lambda = lambda[e], in.mu = mu[e];
    one_element(&in, f + 12 * e, K + 144 * e);
  }
  return 0;
}

const CpuElement cpu_element = {
    "element_cpu_reference.c (the library's CPU references in double; the reference path, "
    "not kasgen)",
    run_reference};
