/*
 * placement.c — register or shared memory for each buffer of a fused kernel (DESIGN.md §6
 * step 5, seed 004 §4.4), and the per-thread access-set cache the plan stages share.
 *
 * A buffer may live in the registers of each thread only when every routine touching it gives
 * each thread exactly the offsets (and start) that thread itself produced: same thread count,
 * pairwise compatible patterns, and no `noreg`.  Otherwise another thread would need the data,
 * which only shared memory provides.
 *
 * Access sets are evaluated once per (pattern, block shape) and cached: the search builds
 * thousands of plans over the same few patterns, and expression evaluation per thread is the
 * expensive part.  The cache is keyed by the pattern's address, so it must be cleared when a
 * library is freed (plan_cache_clear; search_run does it).
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const Pattern *pat;
  BlockShape shape;
  AccessSet *sets; /* NULL when evaluation failed */
  int nthreads;
  int extent; /* register extent over threads (max offset - start + 1, at least 1); -1 when a
                 thread touches an offset below its start */
} CacheEntry;

static CacheEntry **cache_slots; /* open addressing, power-of-two size */
static size_t cache_size, cache_used;

static int shape_threads(BlockShape s) { return s.bx * s.by * s.bz; }

static size_t cache_hash(const Pattern *p, BlockShape s) {
  uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
  h ^= ((uint64_t)s.bx << 40) ^ ((uint64_t)s.by << 20) ^ (uint64_t)s.bz;
  h *= 0xff51afd7ed558ccdull;
  return (size_t)(h ^ (h >> 29));
}

static void free_entry(CacheEntry *e) {
  if (e->sets)
    for (int t = 0; t < e->nthreads; t++) access_set_free(&e->sets[t]);
  free(e->sets);
  free(e);
}

/* Results about pattern pairs: (writer, reader, their shapes, buffer size) -> covered, and
 * (a, b, shapes, nfloats = -1) -> first thread whose accesses differ (first_difference). */
typedef struct {
  const Pattern *w, *r;
  BlockShape sw, sr;
  int nfloats;
  int result;
} CoverEntry;
static CoverEntry *cover_memo;
static size_t cover_n, cover_cap;

void plan_cache_clear(void) {
  for (size_t k = 0; k < cache_size; k++)
    if (cache_slots[k]) free_entry(cache_slots[k]);
  free(cache_slots);
  cache_slots = NULL;
  cache_size = cache_used = 0;
  free(cover_memo);
  cover_memo = NULL;
  cover_n = cover_cap = 0;
}

static void cache_insert(CacheEntry *e);

static void cache_grow(void) {
  CacheEntry **old = cache_slots;
  size_t old_size = cache_size;
  cache_size = cache_size ? cache_size * 2 : 256;
  cache_slots = xcalloc(cache_size, sizeof *cache_slots);
  cache_used = 0;
  for (size_t k = 0; k < old_size; k++)
    if (old[k]) cache_insert(old[k]);
  free(old);
}

static void cache_insert(CacheEntry *e) {
  if ((cache_used + 1) * 2 > cache_size) cache_grow();
  size_t k = cache_hash(e->pat, e->shape) & (cache_size - 1);
  while (cache_slots[k]) k = (k + 1) & (cache_size - 1);
  cache_slots[k] = e;
  cache_used++;
}

static CacheEntry *cache_find(const Pattern *p, BlockShape s) {
  if (!cache_size) return NULL;
  size_t k = cache_hash(p, s) & (cache_size - 1);
  for (; cache_slots[k]; k = (k + 1) & (cache_size - 1)) {
    CacheEntry *e = cache_slots[k];
    if (e->pat == p && e->shape.bx == s.bx && e->shape.by == s.by && e->shape.bz == s.bz)
      return e;
  }
  return NULL;
}

static int sets_extent(const AccessSet *sets, int nthreads) {
  int extent = 1;
  for (int t = 0; t < nthreads; t++) {
    if (sets[t].n == 0) continue;
    if (sets[t].offsets[0] < sets[t].start) return -1;
    long e = sets[t].offsets[sets[t].n - 1] - sets[t].start + 1;
    if (e > extent) extent = (int)e;
  }
  return extent;
}

/* Evaluates every thread; a failure is remembered so the diagnostic is printed once. */
static CacheEntry *evaluate_entry(const Pattern *p, BlockShape s) {
  CacheEntry *e = xcalloc(1, sizeof *e);
  e->pat = p;
  e->shape = s;
  e->nthreads = shape_threads(s);
  e->sets = xcalloc((size_t)e->nthreads, sizeof *e->sets);
  for (int t = 0; t < e->nthreads; t++) {
    if (!pattern_access_set(p, s, t, &e->sets[t])) {
      for (int u = 0; u <= t; u++) access_set_free(&e->sets[u]);
      free(e->sets);
      e->sets = NULL;
      break;
    }
  }
  e->extent = e->sets ? sets_extent(e->sets, e->nthreads) : -1;
  return e;
}

static CacheEntry *cached_entry(const Pattern *p, BlockShape shape) {
  CacheEntry *e = cache_find(p, shape);
  if (!e) {
    e = evaluate_entry(p, shape);
    cache_insert(e);
  }
  return e;
}

const AccessSet *plan_access_sets(const Pattern *p, BlockShape shape) {
  return cached_entry(p, shape)->sets;
}

static bool same_access(const AccessSet *x, const AccessSet *y) {
  return x->start == y->start && x->n == y->n &&
         (x->n == 0 || !memcmp(x->offsets, y->offsets, sizeof(long) * (size_t)x->n));
}

/* First thread whose accesses differ, or -1 when compatible (-2: evaluation failed). */
static int first_difference(const Pattern *a, BlockShape sa, const Pattern *b, BlockShape sb) {
  const AccessSet *x = plan_access_sets(a, sa), *y = plan_access_sets(b, sb);
  if (!x || !y) return -2;
  for (int t = 0; t < shape_threads(sa); t++)
    if (!same_access(&x[t], &y[t])) return t;
  return -1;
}

static int memo_first_difference(const Pattern *a, BlockShape sa, const Pattern *b,
                                 BlockShape sb);

bool plan_patterns_compatible(const Pattern *a, BlockShape sa, const Pattern *b, BlockShape sb) {
  if (shape_threads(sa) != shape_threads(sb)) return false;
  return memo_first_difference(a, sa, b, sb) == -1;
}

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

static char *incompatibility_why(const PatternUse *a, const PatternUse *b, int t) {
  const AccessSet *x = &plan_access_sets(a->pat, a->shape)[t];
  const AccessSet *y = &plan_access_sets(b->pat, b->shape)[t];
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
static int register_extent(const PatternUse *uses, int nuses) {
  int extent = 1;
  for (int u = 0; u < nuses; u++) {
    int e = cached_entry(uses[u].pat, uses[u].shape)->extent;
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

bool placement_decide(const PatternUse *uses, int nuses, int *reg_floats, char **why) {
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
  for (int a = 0; a < nuses; a++)
    for (int b = a + 1; b < nuses; b++) {
      int t = memo_first_difference(uses[a].pat, uses[a].shape, uses[b].pat, uses[b].shape);
      if (t == -2) {
        SET_WHY(xstrdup("shared: access pattern could not be evaluated"));
        return false;
      }
      if (t >= 0) {
        SET_WHY(incompatibility_why(&uses[a], &uses[b], t));
        return false;
      }
    }
  int extent = register_extent(uses, nuses);
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

static bool same_shape(BlockShape a, BlockShape b) {
  return a.bx == b.bx && a.by == b.by && a.bz == b.bz;
}

/* Marks every offset of the pattern; false if one lies outside [0, nfloats). */
static bool mark_offsets(const AccessSet *sets, int threads, int nfloats, unsigned char *mark) {
  for (int t = 0; t < threads; t++)
    for (int j = 0; j < sets[t].n; j++) {
      long off = sets[t].offsets[j];
      if (off < 0 || off >= nfloats) return false;
      if (mark) mark[off] = 1;
    }
  return true;
}

static bool compute_covers(const Pattern *w, BlockShape sw, const Pattern *r, BlockShape sr,
                           int nfloats) {
  const AccessSet *ws = plan_access_sets(w, sw), *rs = plan_access_sets(r, sr);
  if (!ws || !rs || nfloats <= 0) return false;
  unsigned char *written = xcalloc((size_t)nfloats, 1);
  bool ok = mark_offsets(ws, shape_threads(sw), nfloats, written) &&
            mark_offsets(rs, shape_threads(sr), nfloats, NULL);
  for (int t = 0; ok && t < shape_threads(sr); t++)
    for (int j = 0; ok && j < rs[t].n; j++) ok = written[rs[t].offsets[j]];
  free(written);
  return ok;
}

static size_t cover_hash(const Pattern *w, BlockShape sw, const Pattern *r, BlockShape sr,
                         int nfloats) {
  uint64_t h = cache_hash(w, sw) * 31 + cache_hash(r, sr);
  h ^= (uint64_t)nfloats * 0x9E3779B97F4A7C15ull;
  return (size_t)(h ^ (h >> 31));
}

static bool cover_matches(const CoverEntry *e, const Pattern *w, BlockShape sw, const Pattern *r,
                          BlockShape sr, int nfloats) {
  return e->w == w && e->r == r && e->nfloats == nfloats && same_shape(e->sw, sw) &&
         same_shape(e->sr, sr);
}

/* Open addressing over cover_memo (cover_cap slots, a NULL writer marks a free one). */
static void cover_insert(const CoverEntry *e) {
  if ((cover_n + 1) * 2 > cover_cap) {
    CoverEntry *old = cover_memo;
    size_t old_cap = cover_cap;
    cover_cap = cover_cap ? cover_cap * 2 : 1024;
    cover_memo = xcalloc(cover_cap, sizeof *cover_memo);
    cover_n = 0;
    for (size_t k = 0; k < old_cap; k++)
      if (old[k].w) cover_insert(&old[k]);
    free(old);
  }
  size_t k = cover_hash(e->w, e->sw, e->r, e->sr, e->nfloats) & (cover_cap - 1);
  while (cover_memo[k].w) k = (k + 1) & (cover_cap - 1);
  cover_memo[k] = *e;
  cover_n++;
}

static const CoverEntry *pair_find(const Pattern *w, BlockShape sw, const Pattern *r,
                                   BlockShape sr, int nfloats) {
  if (!cover_cap) return NULL;
  size_t k = cover_hash(w, sw, r, sr, nfloats) & (cover_cap - 1);
  for (; cover_memo[k].w; k = (k + 1) & (cover_cap - 1))
    if (cover_matches(&cover_memo[k], w, sw, r, sr, nfloats)) return &cover_memo[k];
  return NULL;
}

bool plan_pattern_covers(const Pattern *w, BlockShape sw, const Pattern *r, BlockShape sr,
                         int nfloats) {
  const CoverEntry *hit = pair_find(w, sw, r, sr, nfloats);
  if (hit) return hit->result;
  CoverEntry e = {w, r, sw, sr, nfloats, compute_covers(w, sw, r, sr, nfloats)};
  cover_insert(&e);
  return e.result;
}

static int memo_first_difference(const Pattern *a, BlockShape sa, const Pattern *b,
                                 BlockShape sb) {
  const CoverEntry *hit = pair_find(a, sa, b, sb, -1);
  if (hit) return hit->result;
  CoverEntry e = {a, b, sa, sb, -1, first_difference(a, sa, b, sb)};
  cover_insert(&e);
  return e.result;
}
