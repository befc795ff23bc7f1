/*
 * element_cpu.h — the element computation of the hyperelastic example's CPU mode: one of two
 * implementations is linked in, and the program says which one ran.
 *   element_kasgen_host.c   kasgen's path: the generated host form of the winner, through the
 *                           embed API's kas_stvk_tet_host (the one the GPU mode runs on a GPU);
 *   element_cpu_reference.c the reference path: the library's CPU references in double (for
 *                           testing the mesh, gather, assembly and output; not kasgen).
 * Arguments as kas_stvk_tet's, on host memory: records of 12, 12, 1, 1, 1 floats per element in,
 * 12 and 144 out (docs/stvk.md §1).
 */
#ifndef HYPERELASTIC_ELEMENT_CPU_H
#define HYPERELASTIC_ELEMENT_CPU_H

#include <stddef.h>

typedef struct {
  const char *name; /* printed in the report */
  /* 0 on success; otherwise prints why and returns nonzero. */
  int (*run)(const float *u, const float *dphi, const float *volume, const float *lambda,
             const float *mu, float *f, float *K, size_t n);
} CpuElement;

extern const CpuElement cpu_element;

#endif
