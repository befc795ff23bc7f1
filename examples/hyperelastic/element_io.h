/*
 * element_io.h — the per-element records that the gather fills and the assembly reads, shared by
 * the CPU (C) and GPU (CUDA) paths of the hyperelastic example: the geometry of a tetrahedron
 * from its reference nodes (docs/stvk.md §5), the relative gather of its displacements (§6), and
 * the layout of the element outputs of specs/stvk_tet.spec.  Header-only so that the same lines
 * run on the host and on the device.
 */
#ifndef HYPERELASTIC_ELEMENT_IO_H
#define HYPERELASTIC_ELEMENT_IO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define HOST_DEVICE __host__ __device__
#else
#define HOST_DEVICE
#endif

/* Floats per element of the spec's arguments (docs/loops.md, arrays in C order). */
enum { REC_U = 12, REC_DPHI = 12, REC_F = 12, REC_K = 144 };

/* dphi[N] (3 floats each) and V of the tetrahedron with reference nodes x[N] (3 doubles each):
 * the rows of the inverse of the edge matrix by cross products, in double, rounded once. */
HOST_DEVICE static inline void tet_geometry(const double *x0, const double *x1, const double *x2,
                                            const double *x3, float *dphi, float *volume) {
  double e[3][3], g[4][3];
  for (int c = 0; c < 3; c++) {
    e[0][c] = x1[c] - x0[c];
    e[1][c] = x2[c] - x0[c];
    e[2][c] = x3[c] - x0[c];
  }
  for (int c = 0; c < 3; c++) {
    int c1 = (c + 1) % 3, c2 = (c + 2) % 3;
    g[1][c] = e[1][c1] * e[2][c2] - e[1][c2] * e[2][c1]; /* e1 x e2 */
    g[2][c] = e[2][c1] * e[0][c2] - e[2][c2] * e[0][c1]; /* e2 x e0 */
    g[3][c] = e[0][c1] * e[1][c2] - e[0][c2] * e[1][c1]; /* e0 x e1 */
  }
  double det = e[0][0] * g[1][0] + e[0][1] * g[1][1] + e[0][2] * g[1][2];
  for (int c = 0; c < 3; c++) {
    for (int k = 1; k < 4; k++) g[k][c] /= det;
    g[0][c] = -(g[1][c] + g[2][c] + g[3][c]);
  }
  for (int k = 0; k < 4; k++)
    for (int c = 0; c < 3; c++) dphi[3 * k + c] = (float)g[k][c];
  *volume = (float)(det / 6);
}

/* Entry r (0..11) of an element's u record: u[N][c] = U(node N) - U(node 0), in double, then
 * rounded (docs/stvk.md §6: a translation changes nothing, and rounding acts on small numbers). */
HOST_DEVICE static inline float gather_entry(const double *U, const int32_t *tet, int r) {
  int node = r / 3, c = r % 3;
  return (float)(U[3 * (size_t)tet[node] + c] - U[3 * (size_t)tet[0] + c]);
}

/* Where entry r (0..143) of an element's K record goes in the CSR values: K[N][M][i][k] is at
 * r = 36N + 9M + 3i + k, row 3 node_N + i, column 3 node_M + k.  block_slot[4N + M] is the slot of
 * (row 3 node_N, column 3 node_M); the rows of one node have equal length row_len. */
HOST_DEVICE static inline int64_t stiffness_slot(const int64_t *block_slot, const int64_t *row_ptr,
                                                 const int32_t *tet, int r) {
  int n = r / 36, m = (r / 9) % 4, i = (r / 3) % 3, k = r % 3;
  int64_t row0 = 3 * (int64_t)tet[n];
  int64_t row_len = row_ptr[row0 + 1] - row_ptr[row0];
  return block_slot[4 * n + m] + i * row_len + k;
}

#endif
