/*
 * sync.c — barrier placement in a fused kernel (docs/design.md §6 step 7, seed 004 §4.5).
 *
 * KAS synchronized after every device function; seed 004 dropped the barriers that access
 * patterns prove unnecessary.  We decide exactly: every step's shared-memory accesses are
 * enumerated per thread (the search's cached access sets, access_cache.c, mapped to absolute
 * float offsets in the one dynamic shared array; a call's thread `lin` is kernel thread `lin`,
 * see kasgen.h).  Since the last barrier we remember, per shared float, which thread wrote it
 * and which thread read it (or "several").  A step needs a barrier when one of its threads reads
 * a float another thread wrote (RAW), writes a float another thread wrote (WAW) or read (WAR,
 * e.g. bytes reused by smem.c).  A barrier synchronizes everything, so the record starts afresh.
 * Warp lock-step is never assumed: two threads of one warp are two threads.  Register buffers
 * have no shared accesses.
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>

enum { NOBODY = -1, SEVERAL = -2 };

/* The record, per shared float.  A barrier empties it; rather than clearing every float (this
 * was a fifth of a small spec's search), a float's entries count only when its stamp is the
 * record's current one. */
typedef struct {
  int nfloats;
  unsigned now;              /* the current stamp: a barrier moves it on */
  unsigned *stamp;           /* per float: entries below are valid when stamp[f] == now */
  int *writer, *writer_step; /* thread (or NOBODY/SEVERAL) and step of the last write */
  int *reader, *reader_step; /* likewise for reads */
} SharedRecord;

static void record_reset(SharedRecord *r) { r->now++; }

static void record_init(SharedRecord *r, int nfloats) {
  r->nfloats = nfloats;
  size_t n = (size_t)(nfloats > 0 ? nfloats : 1);
  r->now = 1;
  r->stamp = xcalloc(n, sizeof(unsigned));
  r->writer = xmalloc(sizeof(int) * n);
  r->writer_step = xmalloc(sizeof(int) * n);
  r->reader = xmalloc(sizeof(int) * n);
  r->reader_step = xmalloc(sizeof(int) * n);
}

static void record_free(SharedRecord *r) {
  free(r->stamp);
  free(r->writer);
  free(r->writer_step);
  free(r->reader);
  free(r->reader_step);
}

/* Float f's entries, made current (empty) first if a barrier came since they were written. */
static void record_touch(SharedRecord *r, int f) {
  if (r->stamp[f] == r->now) return;
  r->stamp[f] = r->now;
  r->writer[f] = r->reader[f] = NOBODY;
  r->writer_step[f] = r->reader_step[f] = -1;
}

/* Who last wrote (read) float f since the last barrier: NOBODY when its entries are stale. */
static int record_who(const SharedRecord *r, const int *who, int f) {
  return r->stamp[f] == r->now ? who[f] : NOBODY;
}

static bool other_thread(int who, int t) { return who == SEVERAL || (who >= 0 && who != t); }

/* Describes the first conflict of access a by thread t at float f, or NULL if none. */
static char *conflict(const SharedRecord *r, const StepAccesses *steps, int s,
                      const SharedAccess *a, int t, int f) {
  const char *me = steps[s].label;
  int writer = record_who(r, r->writer, f), reader = record_who(r, r->reader, f);
  if (!a->write && other_thread(writer, t))
    return xasprintf("%s reads %s offsets written by other threads in %s", me, a->buffer_label,
                     steps[r->writer_step[f]].label);
  if (a->write && other_thread(writer, t))
    return xasprintf("%s writes %s offsets also written by other threads in %s", me,
                     a->buffer_label, steps[r->writer_step[f]].label);
  if (a->write && other_thread(reader, t))
    return xasprintf("%s writes %s over shared bytes other threads read in %s", me,
                     a->buffer_label, steps[r->reader_step[f]].label);
  return NULL;
}

/* Checks every access of the step; false + diagnostic when a pattern leaves its buffer. */
static bool find_conflict(AccessCache *ac, const SharedRecord *r, const StepAccesses *steps, int s,
                          char **why) {
  *why = NULL;
  for (int k = 0; k < steps[s].n && !*why; k++) {
    const SharedAccess *a = &steps[s].acc[k];
    const AccessSet *sets = access_sets(ac, a->pat, a->shape);
    if (!sets) return false;
    int threads = a->shape.bx * a->shape.by * a->shape.bz;
    for (int t = 0; t < threads && !*why; t++)
      for (int j = 0; j < sets[t].n && !*why; j++) {
        long off = sets[t].offsets[j];
        if (off < 0 || off >= a->nfloats) {
          diag_error(a->pat->loc, "%s: thread %d touches offset %ld of %s, outside its %d floats",
                     steps[s].label, t, off, a->buffer_label, a->nfloats);
          return false;
        }
        *why = conflict(r, steps, s, a, t, a->base_float + (int)off);
      }
  }
  return true;
}

static void note_access(int *who, int *when, int t, int s) {
  *who = (*who == NOBODY || *who == t) ? t : SEVERAL;
  *when = s;
}

static void apply_step(AccessCache *ac, SharedRecord *r, const StepAccesses *steps, int s) {
  for (int k = 0; k < steps[s].n; k++) {
    const SharedAccess *a = &steps[s].acc[k];
    const AccessSet *sets = access_sets(ac, a->pat, a->shape);
    int threads = a->shape.bx * a->shape.by * a->shape.bz;
    for (int t = 0; t < threads; t++)
      for (int j = 0; j < sets[t].n; j++) {
        int f = a->base_float + (int)sets[t].offsets[j];
        record_touch(r, f);
        if (a->write)
          note_access(&r->writer[f], &r->writer_step[f], t, s);
        else
          note_access(&r->reader[f], &r->reader_step[f], t, s);
      }
  }
}

bool sync_plan(AccessCache *ac, KernelPlan *plan, const StepAccesses *per_step) {
  SharedRecord rec;
  record_init(&rec, (plan->smem_bytes + 3) / 4);
  plan->barriers = plan->barriers_possible = 0;
  bool ok = true;
  for (int s = 0; s < plan->nsteps && ok; s++) {
    Step *st = &plan->steps[s];
    st->barrier_before = false;
    free(st->barrier_why);
    st->barrier_why = NULL;
    if (s > 0 && per_step[s].n > 0) plan->barriers_possible++;
    char *why;
    ok = find_conflict(ac, &rec, per_step, s, &why);
    if (!ok) break;
    if (why) {
      st->barrier_before = true;
      st->barrier_why = why;
      plan->barriers++;
      record_reset(&rec);
    }
    apply_step(ac, &rec, per_step, s);
  }
  record_free(&rec);
  return ok;
}

/* ---- the cheap estimate ------------------------------------------------------------------- */

static bool ranges_overlap(const SharedAccess *a, const SharedAccess *b) {
  return a->base_float < b->base_float + b->nfloats && b->base_float < a->base_float + a->nfloats;
}

/* Seed 004's rule, per buffer instead of per float: a step conflicts with an access since the
 * last barrier when it touches the same buffer, one of them writes, and their patterns are not
 * compatible (each thread would not see only its own data), or when it touches bytes another
 * buffer used (reuse) and one of them writes. */
static bool estimate_conflict(AccessCache *ac, const SharedAccess *a, const SharedAccess *r) {
  if (!ranges_overlap(a, r) || (!a->write && !r->write)) return false;
  bool same_buffer = a->base_float == r->base_float && a->nfloats == r->nfloats;
  return !same_buffer || !access_compatible(ac, a->pat, a->shape, r->pat, r->shape);
}

/* The accesses since the last barrier, each kept once.  Whether a step conflicts with one depends
 * only on its pattern, shape, buffer bytes and direction, and in a long kernel the same access
 * recurs at every step (an input that every call reads): kept once per step, the list grew with
 * the kernel, and the estimate, run for every partial plan of the beam, took time growing with
 * the square of the kernel's steps (half of the search on a chain of 256 or 1024 calls).  A hash
 * table finds the repeats; stamps empty it at a barrier without clearing it. */
typedef struct {
  const SharedAccess **v; /* the distinct accesses since the last barrier, in order */
  int n;
  const SharedAccess **slot; /* open addressing over v: valid where stamp == now */
  unsigned *stamp;
  unsigned now;
  size_t mask;
} SinceSet;

static SinceSet since_new(int cap) {
  size_t nslots = 16;
  while (nslots < 2 * (size_t)cap) nslots *= 2;
  return (SinceSet){.v = xmalloc(sizeof(SharedAccess *) * (size_t)(cap ? cap : 1)),
                    .slot = xmalloc(sizeof(SharedAccess *) * nslots),
                    .stamp = xcalloc(nslots, sizeof(unsigned)), .now = 1, .mask = nslots - 1};
}

static void since_free(SinceSet *s) {
  free(s->v);
  free(s->slot);
  free(s->stamp);
}

static void since_clear(SinceSet *s) {
  s->n = 0;
  s->now++;
}

static bool same_access(const SharedAccess *a, const SharedAccess *b) {
  return a->pat == b->pat && a->shape.bx == b->shape.bx && a->shape.by == b->shape.by &&
         a->shape.bz == b->shape.bz && a->shape.w == b->shape.w &&
         a->base_float == b->base_float && a->nfloats == b->nfloats && a->write == b->write;
}

static size_t access_hash(const SharedAccess *a) {
  uint64_t h = (uint64_t)(uintptr_t)a->pat * 0x9e3779b97f4a7c15ull;
  int fields[] = {a->shape.bx, a->shape.by, a->shape.bz, a->shape.w, a->base_float, a->nfloats,
                  a->write};
  for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++)
    h = (h ^ (uint32_t)fields[k]) * 0xff51afd7ed558ccdull;
  return (size_t)(h ^ (h >> 29));
}

/* Adds a unless an identical access is there already. */
static void since_add(SinceSet *s, const SharedAccess *a) {
  size_t i = access_hash(a) & s->mask;
  for (; s->stamp[i] == s->now; i = (i + 1) & s->mask)
    if (same_access(s->slot[i], a)) return;
  s->stamp[i] = s->now;
  s->slot[i] = a;
  s->v[s->n++] = a;
}

int sync_estimate(AccessCache *ac, const KernelPlan *plan, const StepAccesses *per_step) {
  int cap = 0, barriers = 0;
  for (int s = 0; s < plan->nsteps; s++) cap += per_step[s].n;
  SinceSet since = since_new(cap);
  for (int s = 0; s < plan->nsteps; s++) {
    bool conflict_found = false;
    for (int k = 0; k < per_step[s].n && !conflict_found; k++)
      for (int r = 0; r < since.n && !conflict_found; r++)
        conflict_found = estimate_conflict(ac, &per_step[s].acc[k], since.v[r]);
    if (conflict_found) barriers++, since_clear(&since);
    for (int k = 0; k < per_step[s].n; k++) since_add(&since, &per_step[s].acc[k]);
  }
  since_free(&since);
  return barriers;
}
