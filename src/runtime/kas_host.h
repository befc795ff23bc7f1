/*
 * kas_host.h — what every candidate's kernels_host.cpp (its kernels run thread by thread on the
 * CPU, phase by phase between barriers) needs besides kas_device.h: the shared memory and
 * register files of one block, poisoned with NaN at each block's start so that reading anything
 * not written in that block shows up in the result.  Copied into common/ of every generated
 * folder from kasgen's src/runtime/; the embed copies it into kas_<stem>.cu (inline, not static:
 * nvcc warns of unused static functions).
 */
#ifndef KAS_HOST_H
#define KAS_HOST_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

inline void *kas_host_block(size_t bytes) {
  void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) {
    fputs("kas: out of memory\n", stderr);
    exit(1);
  }
  return p;
}

/* Block memory of count reals: single precision, double precision. */
inline float *kas_host_floats(size_t count) {
  return (float *)kas_host_block(count * sizeof(float));
}

inline double *kas_host_doubles(size_t count) {
  return (double *)kas_host_block(count * sizeof(double));
}

inline void kas_host_poison(float *p, size_t count) {
  for (size_t i = 0; i < count; i++) p[i] = NAN;
}

inline void kas_host_poison(double *p, size_t count) {
  for (size_t i = 0; i < count; i++) p[i] = NAN;
}
#endif
