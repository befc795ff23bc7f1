/*
 * placement.c — register or shared memory for each buffer of a fused kernel (docs/design.md §6
 * step 5, seed 004 §4.4).
 *
 * A buffer may live in the registers of each thread only when every routine touching it gives
 * each thread exactly the offsets (and start) that thread itself produced: same thread count,
 * pairwise compatible patterns, and no `noreg`.  Otherwise another thread would need the data,
 * which only shared memory provides.  The access sets come from the search's AccessCache
 * (access_cache.c).
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>

static int shape_threads(BlockShape s) { return s.bx * s.by * s.bz; }

/* "3..5" for a contiguous run, else "{0,4,8,...}" (at most 6 shown). */
static char *describe_offsets(const AccessSet *s) {
  if (s->n == 0) return xstrdup("nothing");
  if (s->offsets[s->n - 1] - s->offsets[0] == s->n - 1)
    return s->n == 1 ? xasprintf("%ld", s->offsets[0])
                     : xasprintf("%ld..%ld", s->offsets[0], s->offsets[s->n - 1]);
  StrBuf sb;
  sb_init(&sb);
  sb_putc(&sb, '{');
  for (int k = 0; k < s->n && k < 6; k++) sb_printf(&sb, "%s%ld", k ? "," : "", s->offsets[k]);
  sb_puts(&sb, s->n > 6 ? ",...}" : "}");
  return sb_take(&sb);
}

static char *incompatibility_why(AccessCache *ac, const PatternUse *a, const PatternUse *b,
                                 int t) {
  const AccessSet *x = &access_sets(ac, a->pat, a->shape)[t];
  const AccessSet *y = &access_sets(ac, b->pat, b->shape)[t];
  char *dx = describe_offsets(x), *dy = describe_offsets(y);
  char *why = xasprintf("shared: %s incompatible with %s (thread %d touches offsets %s "
                        "(start %ld) under the first, %s (start %ld) under the second)",
                        a->label, b->label, t, dx, x->start, dy, y->start);
  free(dx);
  free(dy);
  return why;
}

/* Register array length: largest offset - start + 1 over threads and uses; -1 when some
 * thread touches an offset below its start (it could not be indexed from 0). */
static int register_extent(AccessCache *ac, const PatternUse *uses, int nuses) {
  int extent = 1;
  for (int u = 0; u < nuses; u++) {
    int e = access_extent(ac, uses[u].pat, uses[u].shape);
    if (e < 0) return -1;
    if (e > extent) extent = e;
  }
  return extent;
}

static char *joined_labels(const PatternUse *uses, int nuses) {
  StrBuf sb;
  sb_init(&sb);
  for (int u = 0; u < nuses; u++) {
    if (u) sb_puts(&sb, u + 1 == nuses ? " and " : ", ");
    sb_puts(&sb, uses[u].label);
  }
  return sb_take(&sb);
}

/* Building why strings costs more than deciding; the beam search asks without them. */
#define SET_WHY(...) \
  do {                   \
    if (why) *why = __VA_ARGS__; \
  } while (0)

bool placement_decide(AccessCache *ac, const PatternUse *uses, int nuses, int *reg_floats,
                      char **why) {
  *reg_floats = 0;
  if (nuses == 0) {
    SET_WHY(xstrdup("shared: no routine touches it"));
    return false;
  }
  for (int u = 0; u < nuses; u++)
    if (uses[u].pat->noreg) {
      SET_WHY(xasprintf("shared: %s says noreg", uses[u].label));
      return false;
    }
  int threads = shape_threads(uses[0].shape);
  for (int u = 1; u < nuses; u++)
    if (shape_threads(uses[u].shape) != threads) {
      SET_WHY(xasprintf("shared: %s runs %d threads, %s %d", uses[0].label, threads, uses[u].label,
                       shape_threads(uses[u].shape)));
      return false;
    }
  /* Equal access sets are an equivalence: every use equal to the first makes every pair equal,
   * and the first pair that differs is the one a loop over all pairs would report first. */
  for (int b = 1; b < nuses; b++) {
    int t = access_first_difference(ac, uses[0].pat, uses[0].shape, uses[b].pat, uses[b].shape);
    if (t == -2) {
      SET_WHY(xstrdup("shared: access pattern could not be evaluated"));
      return false;
    }
    if (t >= 0) {
      SET_WHY(incompatibility_why(ac, &uses[0], &uses[b], t));
      return false;
    }
  }
  int extent = register_extent(ac, uses, nuses);
  if (extent < 0) {
    SET_WHY(xasprintf("shared: %s touches offsets below its start", uses[0].label));
    return false;
  }
  *reg_floats = extent;
  if (why) {
    char *labels = joined_labels(uses, nuses);
    *why = xasprintf("registers: %s compatible at %d threads (%d float%s per thread)", labels,
                     threads, extent, extent == 1 ? "" : "s");
    free(labels);
  }
  return true;
}
