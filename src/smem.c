/*
 * smem.c — shared-memory allocation with overlap (docs/design.md §6 step 3, seed 004 §3.6.3).
 *
 * A fused kernel has one dynamic shared array; each shared buffer gets a byte offset into it.
 * Buffers whose live ranges (inclusive step intervals) overlap must not share a byte; the others
 * may.  This is interval-graph colouring with weights (NP-hard in general for minimal peak), so
 * we use first fit by decreasing size: place each buffer at the lowest 16-byte-aligned offset
 * that does not collide with an already placed, simultaneously live buffer.  Larger buffers
 * first keeps small ones in the holes they leave.
 */
#include "kasgen.h"

#include <stdlib.h>

static int align16(int bytes) { return (bytes + 15) & ~15; }

static bool ranges_overlap(int f1, int l1, int f2, int l2) { return f1 <= l2 && f2 <= l1; }

/* Buffer indices sorted by decreasing size, ties by index (deterministic). */
static const int *sort_sizes;
static int by_size_desc(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  if (sort_sizes[x] != sort_sizes[y]) return sort_sizes[x] < sort_sizes[y] ? 1 : -1;
  return x - y;
}

/* Lowest aligned offset for buffer b such that it misses every placed live-overlapping buffer.
 * Candidate offsets are 0 and the (aligned) ends of the placed buffers: the lowest free spot
 * always starts at one of them. */
static int first_fit(int b, const int *bytes, const int *first, const int *last,
                     const int *placed, int nplaced, const int *offset) {
  int size = align16(bytes[b]);
  int best = -1;
  for (int c = -1; c < nplaced; c++) {
    int cand = c < 0 ? 0 : offset[placed[c]] + align16(bytes[placed[c]]);
    if (best >= 0 && cand >= best) continue;
    bool fits = true;
    for (int k = 0; k < nplaced && fits; k++) {
      int o = placed[k];
      if (!ranges_overlap(first[b], last[b], first[o], last[o])) continue;
      if (cand < offset[o] + align16(bytes[o]) && offset[o] < cand + size) fits = false;
    }
    if (fits) best = cand;
  }
  return best;
}

int smem_allocate(const int *bytes, const int *first, const int *last, int n, int *offset_out) {
  int *idx = xmalloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  int *placed = xmalloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  int m = 0;
  for (int b = 0; b < n; b++) {
    offset_out[b] = -1;
    if (bytes[b] > 0) idx[m++] = b;
  }
  sort_sizes = bytes;
  qsort(idx, (size_t)m, sizeof(int), by_size_desc);
  int peak = 0;
  for (int k = 0; k < m; k++) {
    int b = idx[k];
    offset_out[b] = first_fit(b, bytes, first, last, placed, k, offset_out);
    placed[k] = b;
    if (offset_out[b] + align16(bytes[b]) > peak) peak = offset_out[b] + align16(bytes[b]);
  }
  free(idx);
  free(placed);
  return peak;
}
