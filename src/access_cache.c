/*
 * access_cache.c — every thread's access set of a pattern at a block shape, computed once per
 * search, and the pattern-pair relations built on them (docs/design.md §5.3, §6 steps 5 and 7):
 * whether two patterns give every thread the same offsets (register placement, barrier
 * estimates) and whether a writer covers everything a reader touches (a shared buffer's validity).
 *
 * The search builds thousands of plans over the same few patterns, and expression evaluation per
 * thread is the expensive part, so the sets and the pair results are memoized here.  Entries are
 * keyed by the pattern's address: a cache belongs to one SearchContext, which lives no longer than
 * the library whose patterns it holds (search_context_free frees it).  placement.c, sync.c and
 * combine.c all read the sets through this file; none keeps state of its own.
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>

/* The access sets of one (pattern, shape). */
typedef struct {
  const Pattern *pat;
  BlockShape shape;
  AccessSet *sets; /* one per linear thread id; NULL when evaluation failed */
  int nthreads;
  int extent; /* register extent over threads (max offset - start + 1, at least 1); -1 when a
                 thread touches an offset below its start */
} SetEntry;

/* A result about a pattern pair: (writer, reader, shapes, buffer floats) -> covered, and
 * (a, b, shapes, nfloats = -1) -> the first thread whose accesses differ (first_difference). */
typedef struct {
  const Pattern *w, *r;
  BlockShape sw, sr;
  int nfloats;
  int result;
} PairEntry;

/* Two open-addressing tables, power-of-two sizes, at most half full.  w is the vector width
 * (the pattern variable W) of the search's target, which a shape that names none is evaluated
 * at. */
struct AccessCache {
  int w;
  SetEntry **sets; /* NULL marks a free slot */
  size_t nsets, sets_cap;
  PairEntry *pairs; /* a NULL writer marks a free slot */
  size_t npairs, pairs_cap;
};

static int shape_threads(BlockShape s) { return s.bx * s.by * s.bz; }

static bool same_shape(BlockShape a, BlockShape b) {
  return a.bx == b.bx && a.by == b.by && a.bz == b.bz && a.w == b.w;
}

/* The shape with the cache's vector width where it names none. */
static BlockShape bound(const AccessCache *ac, BlockShape s) {
  if (!s.w) s.w = ac->w;
  return s;
}

/* MurmurHash3's 64-bit finalizer: every input bit reaches the low bits the tables index by.
 * (The shape once reached them only through a shift, and shapes differing in E alone, the
 * common case, collided: 6.6 probes per lookup on the StVenant element.) */
static uint64_t mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

static size_t set_hash(const Pattern *p, BlockShape s) {
  uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
  h ^= ((uint64_t)s.bx << 40) ^ ((uint64_t)s.by << 20) ^ (uint64_t)s.bz ^ ((uint64_t)s.w << 60);
  return (size_t)mix64(h);
}

static size_t pair_hash(const Pattern *w, BlockShape sw, const Pattern *r, BlockShape sr,
                        int nfloats) {
  uint64_t h = set_hash(w, sw) * 31 + set_hash(r, sr);
  h ^= (uint64_t)nfloats * 0x9E3779B97F4A7C15ull;
  return (size_t)(h ^ (h >> 31));
}

AccessCache *access_cache_new(int w) {
  AccessCache *ac = xcalloc(1, sizeof(AccessCache));
  ac->w = w;
  return ac;
}

static void free_set_entry(SetEntry *e) {
  if (e->sets)
    for (int t = 0; t < e->nthreads; t++) access_set_free(&e->sets[t]);
  free(e->sets);
  free(e);
}

void access_cache_free(AccessCache *ac) {
  if (!ac) return;
  for (size_t k = 0; k < ac->sets_cap; k++)
    if (ac->sets[k]) free_set_entry(ac->sets[k]);
  free(ac->sets);
  free(ac->pairs);
  free(ac);
}

/* ---- the access sets ------------------------------------------------------------------------ */

static void set_insert(AccessCache *ac, SetEntry *e);

static void sets_grow(AccessCache *ac) {
  SetEntry **old = ac->sets;
  size_t old_cap = ac->sets_cap;
  ac->sets_cap = old_cap ? old_cap * 2 : 256;
  ac->sets = xcalloc(ac->sets_cap, sizeof *ac->sets);
  ac->nsets = 0;
  for (size_t k = 0; k < old_cap; k++)
    if (old[k]) set_insert(ac, old[k]);
  free(old);
}

static void set_insert(AccessCache *ac, SetEntry *e) {
  if ((ac->nsets + 1) * 2 > ac->sets_cap) sets_grow(ac);
  size_t k = set_hash(e->pat, e->shape) & (ac->sets_cap - 1);
  while (ac->sets[k]) k = (k + 1) & (ac->sets_cap - 1);
  ac->sets[k] = e;
  ac->nsets++;
}

static SetEntry *set_find(const AccessCache *ac, const Pattern *p, BlockShape s) {
  if (!ac->sets_cap) return NULL;
  size_t k = set_hash(p, s) & (ac->sets_cap - 1);
  for (; ac->sets[k]; k = (k + 1) & (ac->sets_cap - 1)) {
    SetEntry *e = ac->sets[k];
    if (e->pat == p && same_shape(e->shape, s)) return e;
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

/* Evaluates every thread; a failure is remembered so that its diagnostic is printed once. */
static SetEntry *evaluate_entry(const Pattern *p, BlockShape s) {
  SetEntry *e = xcalloc(1, sizeof *e);
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

static const SetEntry *entry(AccessCache *ac, const Pattern *p, BlockShape shape) {
  shape = bound(ac, shape);
  SetEntry *e = set_find(ac, p, shape);
  if (!e) {
    e = evaluate_entry(p, shape);
    set_insert(ac, e);
  }
  return e;
}

const AccessSet *access_sets(AccessCache *ac, const Pattern *p, BlockShape shape) {
  return entry(ac, p, shape)->sets;
}

int access_extent(AccessCache *ac, const Pattern *p, BlockShape shape) {
  return entry(ac, p, shape)->extent;
}

/* ---- pair relations ------------------------------------------------------------------------- */

static bool pair_matches(const PairEntry *e, const Pattern *w, BlockShape sw, const Pattern *r,
                         BlockShape sr, int nfloats) {
  return e->w == w && e->r == r && e->nfloats == nfloats && same_shape(e->sw, sw) &&
         same_shape(e->sr, sr);
}

static void pair_insert(AccessCache *ac, const PairEntry *e) {
  if ((ac->npairs + 1) * 2 > ac->pairs_cap) {
    PairEntry *old = ac->pairs;
    size_t old_cap = ac->pairs_cap;
    ac->pairs_cap = old_cap ? old_cap * 2 : 1024;
    ac->pairs = xcalloc(ac->pairs_cap, sizeof *ac->pairs);
    ac->npairs = 0;
    for (size_t k = 0; k < old_cap; k++)
      if (old[k].w) pair_insert(ac, &old[k]);
    free(old);
  }
  size_t k = pair_hash(e->w, e->sw, e->r, e->sr, e->nfloats) & (ac->pairs_cap - 1);
  while (ac->pairs[k].w) k = (k + 1) & (ac->pairs_cap - 1);
  ac->pairs[k] = *e;
  ac->npairs++;
}

static const PairEntry *pair_find(const AccessCache *ac, const Pattern *w, BlockShape sw,
                                  const Pattern *r, BlockShape sr, int nfloats) {
  if (!ac->pairs_cap) return NULL;
  size_t k = pair_hash(w, sw, r, sr, nfloats) & (ac->pairs_cap - 1);
  for (; ac->pairs[k].w; k = (k + 1) & (ac->pairs_cap - 1))
    if (pair_matches(&ac->pairs[k], w, sw, r, sr, nfloats)) return &ac->pairs[k];
  return NULL;
}

static bool same_access(const AccessSet *x, const AccessSet *y) {
  return x->start == y->start && x->n == y->n &&
         (x->n == 0 || !memcmp(x->offsets, y->offsets, sizeof(long) * (size_t)x->n));
}

static int compute_first_difference(AccessCache *ac, const Pattern *a, BlockShape sa,
                                    const Pattern *b, BlockShape sb) {
  const AccessSet *x = access_sets(ac, a, sa), *y = access_sets(ac, b, sb);
  if (!x || !y) return -2;
  for (int t = 0; t < shape_threads(sa); t++)
    if (!same_access(&x[t], &y[t])) return t;
  return -1;
}

int access_first_difference(AccessCache *ac, const Pattern *a, BlockShape sa, const Pattern *b,
                            BlockShape sb) {
  sa = bound(ac, sa);
  sb = bound(ac, sb);
  if (a == b && same_shape(sa, sb)) return access_sets(ac, a, sa) ? -1 : -2; /* the same sets */
  const PairEntry *hit = pair_find(ac, a, sa, b, sb, -1);
  if (hit) return hit->result;
  PairEntry e = {a, b, sa, sb, -1, compute_first_difference(ac, a, sa, b, sb)};
  pair_insert(ac, &e);
  return e.result;
}

bool access_compatible(AccessCache *ac, const Pattern *a, BlockShape sa, const Pattern *b,
                       BlockShape sb) {
  if (shape_threads(sa) != shape_threads(sb)) return false;
  return access_first_difference(ac, a, sa, b, sb) == -1;
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

static bool compute_covers(AccessCache *ac, const Pattern *w, BlockShape sw, const Pattern *r,
                           BlockShape sr, int nfloats) {
  const AccessSet *ws = access_sets(ac, w, sw), *rs = access_sets(ac, r, sr);
  if (!ws || !rs || nfloats <= 0) return false;
  unsigned char *written = xcalloc((size_t)nfloats, 1);
  bool ok = mark_offsets(ws, shape_threads(sw), nfloats, written) &&
            mark_offsets(rs, shape_threads(sr), nfloats, NULL);
  for (int t = 0; ok && t < shape_threads(sr); t++)
    for (int j = 0; ok && j < rs[t].n; j++) ok = written[rs[t].offsets[j]];
  free(written);
  return ok;
}

bool access_covers(AccessCache *ac, const Pattern *w, BlockShape sw, const Pattern *r,
                   BlockShape sr, int nfloats) {
  sw = bound(ac, sw);
  sr = bound(ac, sr);
  const PairEntry *hit = pair_find(ac, w, sw, r, sr, nfloats);
  if (hit) return hit->result;
  PairEntry e = {w, r, sw, sr, nfloats, compute_covers(ac, w, sw, r, sr, nfloats)};
  pair_insert(ac, &e);
  return e.result;
}
