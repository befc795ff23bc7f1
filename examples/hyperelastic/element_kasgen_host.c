/*
 * element_kasgen_host.c — kasgen's CPU path for the hyperelastic example: the winner of
 * specs/stvk_tet.spec in its generated host form, through the embed API's CPU entry
 * kas_stvk_tet_host (same arguments as kas_stvk_tet, host pointers; README.md, "What the CPU mode
 * expects of the embed folder").  This file is the one place to adapt if that entry's final
 * signature differs.
 */
#include <stdio.h>
#include <stdlib.h>

#include "element_cpu.h"
#include "kas_stvk_tet.h"

static int run_kasgen_host(const float *u, const float *dphi, const float *volume,
                           const float *lambda, const float *mu, float *f, float *K, size_t n) {
  size_t bytes = kas_stvk_tet_host_workspace_bytes(n);
  void *workspace = bytes ? malloc(bytes) : NULL;
  if (bytes && !workspace) {
    fprintf(stderr, "out of memory for the host workspace (%zu bytes)\n", bytes);
    return 1;
  }
  kas_status st = kas_stvk_tet_host(u, dphi, volume, lambda, mu, f, K, n, workspace, NULL);
  free(workspace);
  if (st != KAS_OK) {
    fprintf(stderr, "kas_stvk_tet_host: %s\n", kas_stvk_tet_status_string(st));
    return 1;
  }
  return 0;
}

const CpuElement cpu_element = {
    "kasgen's generated host form of the winner (kas_stvk_tet_host)", run_kasgen_host};
