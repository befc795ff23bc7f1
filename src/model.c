/*
 * model.c — predicted time of one fused kernel, in nanoseconds per element (docs/design.md §6
 * step 8, docs/model.md).
 *
 * The base is KAS's (seed 004 §3.5): t = max(Σ_io ψ, Σ_compute ψ), ψ read from the GPU's timing
 * database at the kernel's E and the extra shared memory the other buffers take.  On top of it,
 * because KAS's ranking was poor where register pressure and occupancy mattered (seed 004 §5.1.3):
 *
 *  - occupancy from threads, shared memory and registers per block; the database times were taken
 *    at the routine's own occupancy, so each io time is scaled by how much less memory-level
 *    parallelism the fused kernel has (Little's law: bytes in flight per SM against bandwidth ×
 *    latency);
 *  - barriers: each stalls its block; the cost per element shrinks with E and resident blocks;
 *  - idle threads: a call with fewer threads than the kernel's block takes the same time for
 *    fewer elements' worth of work, so its compute is scaled by threads / its threads;
 *  - spilled registers go through local memory, on the chip beside the DRAM stream.
 *
 * With no database (or a routine missing from it), a routine costs its compulsory bytes over the
 * copy bandwidth, divided by the access efficiency of its global pattern: the fraction of the
 * 32-byte sectors a warp touches that it actually uses, counted round by round from the pattern
 * (a warp of one-thread-per-element loads of 9-float elements uses 4 bytes of each 32: 12.5%;
 * a coalesced float4 copy uses all).  This is what makes the analytic ranking memory-bound like
 * the real H100: staging through shared memory with coalesced loads wins, intermediates kept in a
 * kernel cost no global traffic, and every extra kernel re-reads/writes its intermediates.
 *
 * What the model computes once per search (access profiles of patterns, grid floors, the
 * warnings it gave) lives in the search's ModelMemo (SearchContext), not here.  docs/model.md
 * explains every term and constant.
 */
#include "kasgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Machine constants of the analytic parts.  They are H100-flavoured defaults that calibration
 * against measured kernels should refine; the device limits themselves come from the database. */
#define DRAM_LATENCY_NS 600.0      /* loaded-latency of a global access */
#define COPY_EFFICIENCY 0.90       /* a coalesced float4 stream reaches ~90% of copy bandwidth */
#define MAX_INFLIGHT_PER_THREAD 256 /* bytes one thread keeps in flight (unrolled loads) */
#define SMEM_BYTES_PER_CLK 128.0   /* shared-memory bandwidth per SM */
#define FP32_FLOPS_PER_CLK 256.0   /* 128 FMA lanes per SM */
#define CLOCK_GHZ 1.7
#define BARRIER_NS 30.0            /* a __syncthreads() of a block with nothing to wait for */
#define BASE_REGISTERS 24          /* addresses, indices, loop counters of a routine */
#define MAX_REGISTERS 255
#define SMEM_RESERVED_PER_BLOCK 1024 /* the runtime's per-block reservation (sm_80 and later) */
/* Device-wide cost of scheduling one block (H100, measured by kasgen bench: a grid of 2^20 blocks
 * of 4 elements takes 0.15 ns per element whatever the routine).  Paid once per kernel. */
#define BLOCK_OVERHEAD_NS 0.6
/* Bandwidth of sector requests served by L1 (a warp re-reading sectors it fetched in an earlier
 * round) and by L2 (when the warps' footprints overflow L1), and L1's usable size per SM.
 * Calibrated on H100 owner loads: 9-float elements run at copy speed (L1 hits), 81-float ones
 * ~3x slower (L1 thrashes, every round goes to L2). */
#define L1_SECTOR_GBS 29000.0
#define L2_SECTOR_GBS 10000.0
/* L1 data-pipe wavefronts per ns and SM at its peak: measured on the H200 (session 39, Nsight
 * Compute) at 149-171 wavefronts per ns over 132 SMs where L1 ran at 82-94% of its peak. */
#define L1_WAVEFRONTS_PER_NS_PER_SM 1.36
/* Write requests L2 takes per ns, whole chip (round_store_requests counts them).  Measured on
 * the H100 with Nsight Compute (session 25, calls C and D): 13 kernels of gradients_loop20 and
 * pair_blocks18 that write slices of output records ran at 37.6-47.1 requests per ns, their
 * time set by them; per-thread stores of 9-real slices of 144-real records and of whole 36-real
 * records in a write-only kernel at 31 and 40 (benchmarks/h100-2026-11-27-s25/partial). */
#define L2_WRITE_REQUESTS_PER_NS 40.0
/* The shortest life of a block (launch, one DRAM round trip, exit): with few resident blocks per
 * SM it is not hidden. */
#define BLOCK_LIFE_NS 2000.0
#define L1_SMEM_BYTES_PER_SM (256 * 1024) /* L1 and shared memory together */
/* What memory moves per line touched by a partial read of a record: a blend of DRAM's 64-byte
 * access and L2's 128-byte line, weights measured on the H100 (overfetch_time). */
enum { LINE_SIZES = 2 };
static const int LINE_BYTES[LINE_SIZES] = {64, 128};
static const double LINE_WEIGHT[LINE_SIZES] = {0.77, 0.23};
#define L1_USABLE_BYTES (128 * 1024)      /* hits fall off long before L1 is full */

/* Whether a routine's own time is recovered from its database time with the kernel's floor at
 * the search's n, as session 45 did (model_floor_as_session45), rather than with the floor the
 * database timed it with. */
static bool floor_as_session45;

void model_floor_as_session45(bool on) { floor_as_session45 = on; }

/* ---- occupancy -------------------------------------------------------------------------- */

typedef struct {
  int blocks_per_sm; /* resident blocks per SM; 0 = the kernel cannot launch */
  double occupancy;  /* resident threads / max threads per SM */
} Occupancy;

static long long round_up(long long x, long long to) {
  return to > 0 ? (x + to - 1) / to * to : x;
}

static long long min_ll(long long a, long long b) { return a < b ? a : b; }

/* The elements a prediction is for: n, where n <= 0 means not set and the default count. */
static double elements_or_default(long n) { return (double)(n > 0 ? n : DEFAULT_ELEMENTS); }

static int min_int(int a, int b) { return a < b ? a : b; }

static Occupancy occupancy(const DeviceLimits *d, int threads, int smem_bytes, int regs) {
  Occupancy o = {0};
  int warp = d->warp_size > 0 ? d->warp_size : 32;
  if (threads <= 0 || threads > d->max_threads_per_block) return o;
  if (d->smem_per_block_optin > 0 && smem_bytes > d->smem_per_block_optin) return o;
  /* 64-bit: a database's limits are checked at load, but this arithmetic must not overflow
   * whatever they are (a warp of 2^31 threads once made warps * warp zero). */
  long long warps = ((long long)threads + warp - 1) / warp;
  long long blocks = d->max_blocks_per_sm;
  blocks = min_ll(blocks, d->max_threads_per_sm / (warps * warp));
  blocks = min_ll(blocks, d->smem_per_sm / ((long long)smem_bytes + SMEM_RESERVED_PER_BLOCK));
  if (regs > MAX_REGISTERS) regs = MAX_REGISTERS;
  long long regs_per_warp = round_up((long long)regs * warp, 256); /* granule: 256 registers */
  if (regs_per_warp > 0) blocks = min_ll(blocks, d->regs_per_sm / regs_per_warp / warps);
  if (blocks < 0) blocks = 0;
  o.blocks_per_sm = (int)blocks;
  o.occupancy = (double)blocks * warps * warp / d->max_threads_per_sm;
  return o;
}

/* Fraction of the copy bandwidth reachable when `active` threads per SM each keep `bytes` in
 * flight: the device needs bandwidth × latency bytes in flight (Little's law). */
static double saturation(const DeviceLimits *d, double active_threads, double bytes_per_thread) {
  double needed = d->copy_gbs / d->sm_count * DRAM_LATENCY_NS;
  if (bytes_per_thread > MAX_INFLIGHT_PER_THREAD) bytes_per_thread = MAX_INFLIGHT_PER_THREAD;
  double s = active_threads * bytes_per_thread / needed;
  if (s > 1) s = 1;
  if (s < 0.02) s = 0.02;
  return s;
}

/* ---- access efficiency of a global pattern ---------------------------------------------- */

/* Where global memory is: a profile is counted for a pattern, a block shape and the array's
 * binding (layout, record) with its real size. */
typedef struct {
  const Pattern *pat;
  BlockShape shape;
  GlobalBinding binding;
  int real_bytes;
  double efficiency; /* useful bytes / bytes of the sectors requested round by round */
  double footprint;  /* distinct sectors a warp touches over all rounds, in bytes */
  double useful;     /* useful bytes per warp */
  double round_bytes; /* sector bytes a warp requests per round: what must stay in L1 while the
                         next rounds re-read those sectors (an owner load of a record longer
                         than a sector re-reads each of its sectors round after round) */
  double write_requests; /* L2 write requests of a warp's stores over all rounds, were the
                            pattern's accesses stores (round_store_requests) */
  double wavefronts; /* L1 data-pipe wavefronts of a warp's loads over all rounds
                        (lines_wavefronts) */
} EffMemo;

/* What the model remembers during one search (it lives in the SearchContext): the access profile
 * of every global pattern it has counted, the grid floors it has looked up, the database entry of
 * every routine it has asked for, and the routines missing from the database that it has warned
 * about (one warning each).  Each is a hash table on two 64-bit keys (a pointer and packed small
 * numbers): a search asks them millions of times. */
typedef struct {
  uint64_t k1, k2;
  union {
    double ns;       /* grid floors */
    const void *ptr; /* database entries (NULL: missing, already warned about) */
    int index;       /* access profiles: index into ModelMemo.eff */
  } v;
  bool used;
} MemoSlot;

typedef struct {
  MemoSlot *slots;
  size_t cap, n; /* cap: a power of two, or 0 */
} MemoMap;

static size_t memo_hash(uint64_t k1, uint64_t k2) {
  uint64_t h = (k1 ^ (k2 * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
  return (size_t)(h ^ (h >> 32));
}

/* The slot of (k1, k2): its entry, or the free slot where it belongs. */
static MemoSlot *memo_slot(MemoMap *m, uint64_t k1, uint64_t k2) {
  size_t i = memo_hash(k1, k2) & (m->cap - 1);
  while (m->slots[i].used && (m->slots[i].k1 != k1 || m->slots[i].k2 != k2))
    i = (i + 1) & (m->cap - 1);
  return &m->slots[i];
}

static MemoSlot *memo_find(MemoMap *m, uint64_t k1, uint64_t k2) {
  if (m->cap == 0) return NULL;
  MemoSlot *s = memo_slot(m, k1, k2);
  return s->used ? s : NULL;
}

/* The slot for a new key (not present), growing the table to stay at most half full. */
static MemoSlot *memo_insert(MemoMap *m, uint64_t k1, uint64_t k2) {
  if (2 * (m->n + 1) > m->cap) {
    MemoMap bigger = {xcalloc(m->cap ? 2 * m->cap : 256, sizeof(MemoSlot)),
                      m->cap ? 2 * m->cap : 256, m->n};
    for (size_t i = 0; i < m->cap; i++)
      if (m->slots[i].used) *memo_slot(&bigger, m->slots[i].k1, m->slots[i].k2) = m->slots[i];
    free(m->slots);
    *m = bigger;
  }
  MemoSlot *s = memo_slot(m, k1, k2);
  *s = (MemoSlot){.k1 = k1, .k2 = k2, .used = true};
  m->n++;
  return s;
}

static uint64_t key_ptr(const void *p) { return (uint64_t)(uintptr_t)p; }

/* A routine the database lacks: "load 2 register" of impl, as the search asked for it. */
typedef struct {
  const Impl *impl;
  const char *kind;   /* "load", "compute", "save" */
  char *variant;      /* "2 register", "0 shared double component-major" */
  const char *db_path;
} MissingRoutine;

struct ModelMemo {
  EffMemo *eff;
  int neff, eff_cap;
  MemoMap eff_index; /* (pattern, shape) -> index into eff */
  MemoMap floors;    /* (database, E, shared bytes) -> grid floor */
  MemoMap routines;  /* (implementation, kind, index, placement) -> database entry */
  MissingRoutine *missing; /* the routines the database lacks, warned about when freed */
  int nmissing;
  bool quiet; /* single missing routines are not warned about (model_memo_quiet) */
};

ModelMemo *model_memo_new(void) { return xcalloc(1, sizeof(ModelMemo)); }

void model_memo_quiet(ModelMemo *m) { m->quiet = true; }

static void warn_missing_routines(ModelMemo *m);

void model_memo_free(ModelMemo *m) {
  if (!m) return;
  warn_missing_routines(m);
  free(m->eff);
  free(m->eff_index.slots);
  free(m->floors.slots);
  free(m->routines.slots);
  free(m);
}

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

static long count_distinct(long *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_long);
  long distinct = 0;
  for (int k = 0; k < n; k++)
    if (k == 0 || v[k] != v[k - 1]) distinct++;
  return distinct;
}

/* The leading dimension the model assumes for component-major arrays: large, and a multiple of
 * every sector, so that each component's row starts a sector of its own. */
#define MODEL_LD (1L << 24)

/* The sector (32 bytes) holding buffer offset o of the block's first element (e0 = 0), through
 * the array's layout: o = element * size + component in the block's buffer, the address as the
 * binding places it in global memory (docs/model.md). */
static long sector_of(const GlobalBinding *b, int real_bytes, long o) {
  long at = o;
  if (!binding_contiguous(b) && b->size > 0)
    at = (long)binding_address(b, (size_t)(o / b->size), (int)(o % b->size), MODEL_LD);
  return at * real_bytes / 32;
}

/* The L2 write requests of one round of a warp's stores.  A lane moves its block of reals one by
 * one (a slice sits at any offset: no wider access), and each store instruction sends L2 one
 * request per sector it writes in part and one per line of the sectors it writes whole (counted
 * against Nsight Compute's lts__t_requests_op_write on the H100: 16.0 per element counted,
 * 16.7 measured, for pair_blocks18's three 9-real slices of 54-real records written by three
 * threads each; 5.0 and 4.9 for one slice of gradients_loop20's 36-real records). */
static long round_store_requests(const EffMemo *m, const long *start, const long *block,
                                 int lanes) {
  const int reals_per_sector = 32 / m->real_bytes;
  long requests = 0, most = 0, sector[32];
  for (int l = 0; l < lanes; l++) most = block[l] > most ? block[l] : most;
  for (long j = 0; j < most; j++) {
    int n = 0;
    for (int l = 0; l < lanes; l++)
      if (block[l] > j) sector[n++] = sector_of(&m->binding, m->real_bytes, start[l] + j);
    qsort(sector, (size_t)n, sizeof *sector, cmp_long);
    long line_of_last_whole = -1;
    for (int a = 0, b; a < n; a = b) {
      for (b = a; b < n && sector[b] == sector[a];) b++;
      if (b - a < reals_per_sector) {
        requests++;
      } else if (sector[a] / 4 != line_of_last_whole) {
        requests++;
        line_of_last_whole = sector[a] / 4;
      }
    }
  }
  return requests;
}

/* The L1 wavefronts of one round of loads touching the n sorted sectors: one per four of the
 * 128-byte lines they lie in (Nsight Compute on the H200, session 39: a warp's owner load of one
 * real of each of 32 records of 100 bytes, 25 lines, took 6.5 wavefronts; of 36-byte records, 9
 * lines, 3). */
static long lines_wavefronts(const long *sorted, int n) {
  long lines = 0;
  for (int k = 0; k < n; k++)
    if (k == 0 || sorted[k] / 4 != sorted[k - 1] / 4) lines++;
  return (lines + 3) / 4;
}

/* Adds one warp's rounds to *useful (reals), *sectors (32-byte sectors touched per round),
 * *requests (L2 write requests, were they stores), *wavefronts (L1's, were they loads) and
 * *distinct (sectors touched over all rounds). */
static bool warp_sectors(const EffMemo *m, int first, int nthreads, long count, double *useful,
                         double *sectors, double *requests, double *wavefronts,
                         double *distinct) {
  const Pattern *p = m->pat;
  BlockShape shape = m->shape;
  enum { WARP = 32, MAX_SECTORS_PER_ROUND = 4096 };
  long offset[WARP];
  ExprEnv env[WARP];
  int lanes = min_int(WARP, nthreads - first);
  for (int l = 0; l < lanes; l++) {
    int lin = first + l;
    env[l] = (ExprEnv){.tx = lin % shape.bx, .ty = lin / shape.bx % shape.by,
                       .tz = lin / (shape.bx * shape.by), .BX = shape.bx, .BY = shape.by,
                       .BZ = shape.bz, .W = shape.w};
    if (!expr_eval(p->start, &env[l], &offset[l], p->start_loc)) return false;
  }
  long *touched = xmalloc(sizeof *touched * MAX_SECTORS_PER_ROUND);
  long *all = NULL;
  int nall = 0, capall = 0;
  bool ok = true;
  for (long k = 0; k < count && ok; k++) {
    int nt = 0;
    long start[WARP], blocks[WARP];
    for (int l = 0; l < lanes && ok; l++) {
      long block, stride;
      env[l].i = k;
      ok = expr_eval(p->block, &env[l], &block, p->block_loc) &&
           expr_eval(p->stride, &env[l], &stride, p->stride_loc);
      if (!ok) break;
      start[l] = offset[l], blocks[l] = block;
      if (block > 0) {
        *useful += (double)block;
        for (long o = offset[l]; o < offset[l] + block; o++) {
          long s = sector_of(&m->binding, m->real_bytes, o);
          if (nt < MAX_SECTORS_PER_ROUND && (nt == 0 || touched[nt - 1] != s)) touched[nt++] = s;
        }
      }
      offset[l] += stride;
    }
    if (!ok) break;
    *sectors += (double)count_distinct(touched, nt); /* sorts them */
    *wavefronts += (double)lines_wavefronts(touched, nt);
    *requests += (double)round_store_requests(m, start, blocks, lanes);
    if (nall + nt > capall) {
      capall = (nall + nt) * 2;
      all = xrealloc(all, sizeof *all * (size_t)capall);
    }
    if (nt > 0) memcpy(all + nall, touched, sizeof *all * (size_t)nt);
    nall += nt;
  }
  if (nall > 0) *distinct += (double)count_distinct(all, nall);
  free(all);
  free(touched);
  return ok;
}

static bool same_profile(const EffMemo *a, const EffMemo *b) {
  return a->pat == b->pat && !memcmp(&a->shape, &b->shape, sizeof a->shape) &&
         !memcmp(&a->binding, &b->binding, sizeof a->binding) && a->real_bytes == b->real_bytes;
}

/* The hash key of a profile beside its pattern: the block shape, the binding and the real size
 * (a collision is caught by same_profile and only costs a recount). */
static uint64_t profile_key(BlockShape shape, GlobalBinding b, int real_bytes) {
  const int parts[] = {shape.bx, shape.by, shape.bz, shape.w, (int)b.layout,
                       b.size,   b.record, b.offset, real_bytes};
  uint64_t h = 1469598103934665603ull; /* FNV-1a over the fields */
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
    h = (h ^ (uint32_t)parts[i]) * 1099511628211ull;
  return h;
}

/* The memo entry of pattern p at a shape for an array bound so: sampled on the first and the
 * last warp of the block (tails of cooperative copies differ). */
static const EffMemo *access_profile(ModelMemo *m, const Pattern *p, BlockShape shape,
                                     GlobalBinding binding, int real_bytes) {
  EffMemo key = {.pat = p, .shape = shape, .binding = binding, .real_bytes = real_bytes};
  uint64_t hashed = profile_key(shape, binding, real_bytes);
  MemoSlot *known = memo_find(&m->eff_index, key_ptr(p), hashed);
  if (known && same_profile(&m->eff[known->v.index], &key)) return &m->eff[known->v.index];
  int nthreads = shape.bx * shape.by * shape.bz;
  long count = pattern_count(p, shape);
  double useful = 0, sectors = 0, requests = 0, wavefronts = 0, distinct = 0, eff = 1.0;
  int last_warp = (nthreads - 1) / 32 * 32, nwarps = 1;
  bool ok = count >= 0 &&
            warp_sectors(&key, 0, nthreads, count, &useful, &sectors, &requests, &wavefronts,
                         &distinct);
  if (ok && last_warp > 0) {
    ok = warp_sectors(&key, last_warp, nthreads, count, &useful, &sectors, &requests,
                      &wavefronts, &distinct);
    nwarps = 2;
  }
  if (ok && sectors > 0) eff = useful * real_bytes / (sectors * 32.0);
  if (eff > 1) eff = 1;
  if (!ok) useful = distinct = 0;
  if (m->neff == m->eff_cap) {
    m->eff_cap = m->eff_cap ? m->eff_cap * 2 : 256;
    m->eff = xrealloc(m->eff, sizeof *m->eff * (size_t)m->eff_cap);
  }
  key.efficiency = eff;
  key.footprint = distinct * 32.0 / nwarps;
  key.useful = useful * real_bytes / nwarps;
  key.round_bytes = ok && count > 0 ? sectors * 32.0 / (nwarps * (double)count) : 0;
  key.write_requests = ok ? requests / nwarps : 0;
  key.wavefronts = ok ? wavefronts / nwarps : 0;
  m->eff[m->neff] = key;
  if (!known) known = memo_insert(&m->eff_index, key_ptr(p), hashed);
  known->v.index = m->neff;
  return &m->eff[m->neff++];
}

/* Used bytes over requested sector bytes for a warp-wide access through pattern p, round by
 * round, to an element-major array of the context's target. 1 = coalesced. */
double model_access_efficiency(SearchContext *ctx, const Pattern *p, BlockShape shape) {
  if (!shape.w) shape.w = ctx->target->w;
  int rb = target_real_bytes(ctx->target->precision);
  return access_profile(ctx->model, p, shape, (GlobalBinding){0}, rb)->efficiency;
}

double model_write_requests(SearchContext *ctx, const Pattern *p, BlockShape shape,
                            GlobalBinding binding) {
  if (!shape.w) shape.w = ctx->target->w;
  int rb = target_real_bytes(ctx->target->precision);
  return access_profile(ctx->model, p, shape, binding, rb)->write_requests;
}

double model_load_wavefronts(SearchContext *ctx, const Pattern *p, BlockShape shape,
                             GlobalBinding binding) {
  if (!shape.w) shape.w = ctx->target->w;
  int rb = target_real_bytes(ctx->target->precision);
  return access_profile(ctx->model, p, shape, binding, rb)->wavefronts;
}

/* ---- registers -------------------------------------------------------------------------- */

/* The live-range count above is an upper bound: ptxas streams a loaded buffer into the compute
 * that reads it and reuses registers across steps.  Over the 166 kernels of the top 10 of six
 * specs in both precisions (`--ptxas`, CUDA 13.0, sm_90) ptxas's count was 0.63 times the
 * bound (least squares through the origin; mean absolute error 8.7 registers, against 24.6 for
 * the bound itself), and never more than 8 above it. */
#define REGISTER_BOUND_SCALE 0.63

static int scaled_registers(int bound) {
  int regs = (int)(REGISTER_BOUND_SCALE * bound + 0.5);
  return regs < BASE_REGISTERS ? BASE_REGISTERS : regs;
}

int model_estimate_registers(const KernelPlan *plan) {
  /* Register buffers alive at the same step add up (a sweep over their live ranges); without
   * steps, all of them.  A double takes two registers. */
  int per_real = target_real_bytes(plan->precision) / 4;
  int peak = 0;
  if (plan->nsteps == 0) {
    for (int b = 0; b < plan->nbuffers; b++)
      if (plan->buffers[b].place == PLACE_REGISTER)
        peak += (plan->buffers[b].reg_floats > 0 ? plan->buffers[b].reg_floats : 1) * per_real;
    return scaled_registers(BASE_REGISTERS + peak + 8);
  }
  int *delta = xcalloc((size_t)plan->nsteps + 1, sizeof(int));
  for (int b = 0; b < plan->nbuffers; b++) {
    const Buffer *buf = &plan->buffers[b];
    int first = buf->first_use < 0 ? 0 : buf->first_use;
    int last = buf->last_use >= plan->nsteps ? plan->nsteps - 1 : buf->last_use;
    if (buf->place != PLACE_REGISTER || first > last) continue;
    int reals = (buf->reg_floats > 0 ? buf->reg_floats : 1) * per_real;
    delta[first] += reals;
    delta[last + 1] -= reals;
  }
  for (int s = 0, live = 0; s < plan->nsteps; s++) {
    live += delta[s];
    if (live > peak) peak = live;
  }
  free(delta);
  return scaled_registers(BASE_REGISTERS + peak + 8); /* + temporaries (products, sums) */
}

/* ---- one routine ------------------------------------------------------------------------ */

/* A compute step's database time, remembered for the kernel being predicted: it depends on the
 * routine, its placement and its own shared bytes only (the kernel's E, shared memory and floor
 * are fixed), and a long kernel runs the same routine at many steps (a chain of madd33), where
 * the lookup and the interpolation were a fifth of its search's time. */
typedef struct {
  const Impl *impl; /* NULL: an empty slot */
  Placement pl;
  int own;
  bool timed; /* db_time found it */
  double ns;
} ComputeMemo;
enum { COMPUTE_MEMO_SLOTS = 16 };

/* What the model needs about the kernel as a whole. */
typedef struct {
  const KernelPlan *plan;
  const Dag *dag;
  const TimingDb *db;
  ModelMemo *memo;
  const DeviceLimits *dev;
  Occupancy occ;
  /* The grid at the search's element count (grid_fill): the SMs its blocks occupy, the blocks
   * each holds at once and the threads resident there over max_threads_per_sm.  A grid of at
   * least a full wave has sm_count, occ.blocks_per_sm and occ.occupancy. */
  double sms, blocks, occupancy;
  double floor_ns; /* per-element cost of running the grid at all (block scheduling) */
  /* The grid floor the database's times contain (grid_floor): its routines were timed on grids
   * of many blocks, where a block's life is hidden, whatever n the search predicts for. */
  double timed_floor_ns;
  const Target *target;
  int real_bytes;  /* of the target's precision */
  const Staging *staging; /* arrays moved whole through shared memory (staging.c) */
  /* Bytes a thread of the kernel loads, and saves, over all its buffers: what it can keep in
   * flight at once (in_flight_bytes). */
  double load_bytes_per_thread, save_bytes_per_thread;
  int *straight_reals; /* straight_saved_reals */
  RollCosts loops;     /* of the loops the kernel keeps (roll.c) */
  ComputeMemo compute_memo[COMPUTE_MEMO_SLOTS]; /* compute_db_time's, by hash of its key */
} KernelCtx;

/* Warns once per message in the run: a whole precision, layout or width the database lacks. */
static void warn_once(const KernelCtx *k, char *message) {
  diag_warning_once((SrcLoc){.file = k->db->path}, "%s", message);
  free(message);
}

/* Kept until the search ends (model_memo_free), so that one line per routine and kind lists
 * every load, compute or save variant the search found missing (a new function's routines
 * were 9-10 lines a run, some of them twice). */
static void remember_missing(const KernelCtx *k, const Impl *impl, const char *kind,
                             char *variant) {
  ModelMemo *m = k->memo;
  m->missing = xrealloc(m->missing, sizeof *m->missing * (size_t)(m->nmissing + 1));
  m->missing[m->nmissing++] =
      (MissingRoutine){.impl = impl, .kind = kind, .variant = variant, .db_path = k->db->path};
}

/* "no timing for routine vadd3_1 load 0 shared, 1 register, 2 register; predicting them with
 * the analytic model": per routine and kind in the order met, its variants sorted, those warned
 * about earlier in the run left out. */
static void warn_missing_routines(ModelMemo *m) {
  char **group = xmalloc(sizeof *group * (size_t)(m->nmissing + 1));
  for (int i = 0; i < m->nmissing; i++) {
    const MissingRoutine *first = &m->missing[i];
    if (!first->variant) continue; /* in an earlier line */
    int ngroup = 0;
    for (int j = i; j < m->nmissing; j++) {
      MissingRoutine *r = &m->missing[j];
      if (!r->variant || r->impl != first->impl || strcmp(r->kind, first->kind)) continue;
      char *key = xasprintf("%s %s %s %s", r->db_path, r->impl->name, r->kind, r->variant);
      if (!diag_said_before(key)) group[ngroup++] = r->variant;
      else free(r->variant);
      free(key);
      r->variant = NULL; /* in group, or said before */
    }
    qsort(group, (size_t)ngroup, sizeof *group, compare_strings);
    StrBuf sb;
    sb_init(&sb);
    for (int g = 0; g < ngroup; g++) {
      sb_printf(&sb, "%s%s", g ? ", " : "", group[g]);
      free(group[g]);
    }
    if (ngroup > 0)
      diag_warning((SrcLoc){.file = first->db_path}, "no timing for routine %s %s %s; "
                   "predicting %s with the analytic model", first->impl->name, first->kind,
                   sb.data, ngroup == 1 ? "it" : "them");
    sb_free(&sb);
  }
  free(group);
  free(m->missing);
}

/* The database key of a routine: its placement, the target's precision, the layout of the
 * array it moves (element for a compute) and the vector width its code was made at (the
 * precision's 16 bytes for a routine whose code does not depend on W: kasgen bench times it
 * there only). */
static RoutineTiming routine_key(const KernelCtx *k, const Impl *impl, RoutineKind kind,
                                 int index, Placement pl, Layout layout) {
  const IoRoutine *io = kind == ROUTINE_LOAD ? &impl->loads[index]
                        : kind == ROUTINE_SAVE ? &impl->saves[index] : NULL;
  Precision prec = k->target->precision;
  int width = io && io->ls.uses_w ? k->plan->w : target_vector_width(prec);
  return (RoutineTiming){.impl = impl->name, .kind = kind, .index = index, .placement = pl,
                         .precision = prec, .layout = layout, .width = width};
}

/* Whether the database times this key's precision, layout and width at all; when it does not,
 * that is said once and the routine is predicted analytically. */
static bool database_covers(const KernelCtx *k, const RoutineTiming *key) {
  if (timingdb_has(k->db, key->precision, key->layout, key->width)) return true;
  warn_once(k, xasprintf("no timings of %s-precision routines on %s-major arrays at W = %d; "
                         "predicting them with the analytic model (make benchdb measures them)",
                         target_precision_name(key->precision), target_layout_name(key->layout),
                         key->width));
  return false;
}

/* The database entry timing a routine (a register variant never timed: its shared time bounds
 * it), looked up once per search; NULL after one warning when the database lacks it. */
static const RoutineTiming *routine_entry(const KernelCtx *k, const Impl *impl, RoutineKind kind,
                                          int index, Placement pl, Layout layout) {
  RoutineTiming key = routine_key(k, impl, kind, index, pl, layout);
  uint64_t packed = (uint64_t)kind << 56 | (uint64_t)pl << 52 | (uint64_t)layout << 48 |
                    (uint64_t)key.precision << 44 | (uint64_t)(uint32_t)key.width << 32 |
                    (uint64_t)(uint32_t)index;
  MemoSlot *known = memo_find(&k->memo->routines, key_ptr(impl), packed);
  if (known) return known->v.ptr;
  const RoutineTiming *r = NULL;
  if (database_covers(k, &key)) {
    r = timingdb_find(k->db, &key);
    if (!r && pl == PLACE_REGISTER) {
      key.placement = PLACE_SHARED;
      r = timingdb_find(k->db, &key);
      key.placement = pl;
    }
    if (!r && !k->memo->quiet)
      remember_missing(k, impl,
                       kind == ROUTINE_LOAD ? "load" : kind == ROUTINE_SAVE ? "save" : "compute",
                       xasprintf("%d %s%s%s", index, pl == PLACE_REGISTER ? "register" : "shared",
                                 key.precision == PREC_DOUBLE ? " double" : "",
                                 key.layout == LAYOUT_COMPONENT ? " component-major" : ""));
  }
  memo_insert(&k->memo->routines, key_ptr(impl), packed)->v.ptr = r;
  return r;
}

/* Database time of a routine, corrected for the kernel's lower occupancy; false if absent. */
static bool db_time(const KernelCtx *k, const Impl *impl, RoutineKind kind, int index,
                    Placement pl, Layout layout, int own_smem, double bench_sat,
                    double kernel_sat, double *ns) {
  if (!k->db || k->db->analytic) return false;
  const RoutineTiming *r = routine_entry(k, impl, kind, index, pl, layout);
  if (!r) return false;
  int extra = k->plan->smem_bytes - own_smem;
  /* A measured time includes the cost of running its grid, which a kernel pays once.  The two
   * overlap (a memory-bound routine hides most of it), so they combine as a soft maximum,
   * sqrt(own² + floor²), and the routine's own part is recovered the same way, with the floor
   * the database timed it with.  Not the kernel's floor at a small n, which a block's life
   * raises (kernel_floor): at n = 16384 that left nothing of the compute routines of blocks of
   * 8 elements, whose timed floor is almost all their time, and ranked such a kernel of
   * stvk_tet first at 0.51 ns per element; it ran in 1.03 ns, 53% slower than the best
   * (docs/model.md, "The element count"). */
  double psi = timingdb_routine_ns(r, k->plan->e, extra > 0 ? extra : 0);
  double f = floor_as_session45 ? k->floor_ns : k->timed_floor_ns;
  *ns = psi > f ? sqrt(psi * psi - f * f) : 0;
  if (kind != ROUTINE_COMPUTE && kernel_sat > 0) *ns *= bench_sat / kernel_sat;
  return true;
}

/* L1 bytes per SM left beside `blocks` resident blocks of smem_bytes shared memory each (and
 * the runtime's reservation per block), as far as hits go.  Measured on the H100 (Nsight
 * Compute, benchmarks/RESULTS.md session 24 call B): 31 blocks of 6400 bytes leave 28 KB. */
static double l1_left(double blocks, int smem_bytes) {
  double free_bytes =
      L1_SMEM_BYTES_PER_SM - (double)blocks * (smem_bytes + SMEM_RESERVED_PER_BLOCK);
  if (free_bytes < 0) free_bytes = 0;
  return free_bytes < L1_USABLE_BYTES ? free_bytes : L1_USABLE_BYTES;
}

static double l1_free_bytes(const KernelCtx *k) {
  return l1_left(k->blocks, k->plan->smem_bytes);
}

/* The fraction of the copy bandwidth k's grid reaches where each of `threads` threads of a block
 * keeps `bytes` in flight: Little's law on each SM the grid occupies, with the blocks it holds
 * there, and an SM draws no more than its share of the bandwidth (a grid of 22 blocks of 192
 * elements, one per SM, took 2 us longer than one of 128 blocks of 32 on the H200: the n sweep
 * of benchmarks/RESULTS.md, session 45). */
static double kernel_saturation(const KernelCtx *k, int threads, double bytes) {
  return saturation(k->dev, k->blocks * threads, bytes) * (k->sms / k->dev->sm_count);
}

/* The time of `requested` sector bytes of a load whose warps keep `live` bytes of sectors that
 * later rounds re-read, or of its useful `bytes` from DRAM if that is longer, at saturation
 * sat: L1 serves the re-reads while the live sectors fit it; a cyclic reuse over more than L1
 * holds hits almost never, and every round goes to L2. */
static double reread_ns(const KernelCtx *k, double bytes, double requested, double live,
                        double l1, double sat) {
  double dram = bytes / (k->dev->copy_gbs * COPY_EFFICIENCY * sat);
  double scale = k->dev->copy_gbs / 3000.0; /* caches scale with the device, roughly */
  double path = live <= l1 ? L1_SECTOR_GBS : L2_SECTOR_GBS;
  double served = requested / (path * scale * sat);
  return served > dram ? served : dram;
}

/* Whole records loaded thread by thread (owner loads of a 5x5 matrix: each round a warp
 * requests one sector per thread and re-reads it in the next rounds) were timed in the
 * database alone: one array's rounds at a time, at the routine's own occupancy.  In a kernel
 * the call's other loads keep their sectors live beside them, and the resident blocks' shared
 * memory may leave little L1: where the kernel's live sectors overflow L1 and the routine's did
 * not, the re-reads go to L2 (measured on the H100: chain55_8's one-warp-block kernels with
 * 23-28 KB of L1 left and two 25-real records per call ran at 44-55% of DRAM bandwidth;
 * benchmarks/RESULTS.md session 24 call B).  Returns the factor on the database's time, >= 1;
 * saturation is the database correction's business, so both sides are taken at full. */
static double l1_pressure_factor(const KernelCtx *k, const Buffer *b, const IoRoutine *io,
                                 BlockShape shape, GlobalBinding binding, int threads,
                                 double bytes, Occupancy alone) {
  /* Where half of L1 or more is left, the loads ran as the database said: without this limit
   * the rule predicted stvk_point11's candidates (3x3 records, high occupancy) slower than
   * measured, its mean error 4.7% -> 7.2%.  The rule is kept to the range where its effect was
   * seen. */
  if (l1_free_bytes(k) >= L1_USABLE_BYTES / 2) return 1;
  /* Copied out: the profiles of the call's other loads below may move the memo's array. */
  const EffMemo *a = access_profile(k->memo, &io->ls, shape, binding, k->real_bytes);
  const double efficiency = a->efficiency, round_bytes = a->round_bytes;
  if (efficiency >= 1 || round_bytes <= 0) return 1;
  const KernelPlan *plan = k->plan;
  double call_round = 0; /* the call's loads, issued back to back before its compute */
  for (int i = 0; i < plan->nbuffers; i++) {
    const Buffer *o = &plan->buffers[i];
    if (!o->load || o->load_call != b->load_call) continue;
    GlobalBinding ob = target_binding(k->target, k->dag, o->value);
    BlockShape os = shape;
    os.w = staging_io_width(k->staging, k->dag, k->target, o->load, o->value, plan->w);
    call_round += access_profile(k->memo, &o->load->ls, os, ob, k->real_bytes)->round_bytes;
  }
  double warps_per_block = (threads + 31) / 32;
  double requested = bytes / efficiency;
  double in_kernel = reread_ns(k, bytes, requested,
                               k->blocks * warps_per_block * call_round,
                               l1_free_bytes(k), 1);
  double in_bench = reread_ns(k, bytes, requested,
                              alone.blocks_per_sm * warps_per_block * round_bytes,
                              l1_left(alone.blocks_per_sm, plan->smem_bytes), 1);
  return in_kernel > in_bench ? in_kernel / in_bench : 1;
}

/* The analytic time of moving `bytes` per element through routine io bound so: DRAM at the copy
 * bandwidth, or the sectors the warps request (a partly used sector costs a whole one) served by
 * L1 or L2, whichever is slower. */
static double analytic_io_ns(const KernelCtx *k, const IoRoutine *io, BlockShape shape,
                             GlobalBinding binding, int threads, double bytes,
                             double kernel_sat) {
  const EffMemo *a = access_profile(k->memo, &io->ls, shape, binding, k->real_bytes);
  double requested = bytes / (a->efficiency > 0 ? a->efficiency : 1); /* sector bytes */
  /* Stores go to L2 sector by sector: a partly written sector costs a whole one. */
  if (io->kind == ROUTINE_SAVE)
    return requested / (k->dev->copy_gbs * COPY_EFFICIENCY * kernel_sat);
  /* Loads re-requesting sectors of earlier rounds hit L1 while the resident warps' footprints
   * fit beside the shared memory; otherwise every round goes to L2. */
  double warps = k->blocks * ((threads + 31) / 32);
  /* A slice of an element-major record shares its sectors with the record's other slices, which
   * the kernel reads too: what must stay in L1 for the re-reads to hit is the whole record. */
  double footprint = a->footprint;
  if (binding.layout == LAYOUT_ELEMENT && binding.record > binding.size)
    footprint *= (double)binding.record / binding.size;
  return reread_ns(k, bytes, requested, warps * footprint, l1_free_bytes(k), kernel_sat);
}

/* The database timed each routine on whole values (record = size).  A slice of a larger record
 * (an array element, `F[q]` of a 72-real record) is strided: its warps use fewer bytes of each
 * sector they request.  A load's time scales by what the access analysis says the stride costs
 * (measured on the H100: owner loads of 9-real slices of 72-real records ran at 30% of copy
 * where whole 9-real values run at copy speed). */
static double slice_load_factor(const KernelCtx *k, const IoRoutine *io, BlockShape shape,
                                GlobalBinding slice, GlobalBinding whole, int threads,
                                double bytes, double kernel_sat) {
  double strided = analytic_io_ns(k, io, shape, slice, threads, bytes, kernel_sat);
  double plain = analytic_io_ns(k, io, shape, whole, threads, bytes, kernel_sat);
  return plain > 0 && strided > plain ? strided / plain : 1;
}

/* The time of the L2 write requests of a slice saved straight to element-major records, by
 * routine io at the call's block shape and threads: each store writes parts of sectors, each a
 * request of its own, and L2 takes only so many a second (docs/model.md, "Slices saved
 * straight"). */
static double slice_request_time(const KernelCtx *k, const IoRoutine *io, BlockShape shape,
                                 GlobalBinding slice, int threads) {
  const EffMemo *a = access_profile(k->memo, &io->ls, shape, slice, k->real_bytes);
  double per_element = a->write_requests * ((threads + 31) / 32) / k->plan->e;
  double scale = k->dev->copy_gbs / 3000.0; /* caches scale with the device, roughly */
  return per_element / (L2_WRITE_REQUESTS_PER_NS * scale);
}

/* Per output argument, the reals the kernel saves straight (unstaged), all its slices together:
 * memory moves the records they share once per kernel.  Counted once per complete kernel (the
 * element's kernels save a hundred slices); NULL for a partial one. */
static int *straight_saved_reals(const KernelPlan *plan, const Dag *dag, const Staging *staging) {
  if (plan->partial) return NULL;
  int *reals = xcalloc((size_t)dag->nout_args + 1, sizeof *reals);
  for (int b = 0; b < plan->nbuffers; b++) {
    const Buffer *buf = &plan->buffers[b];
    const Value *v = &dag->values[buf->value];
    if (buf->save && v->producer >= 0 && v->arg >= 0 && !staging_find(staging, dag, buf->value))
      reals[v->arg] += dag_value_floats(dag, buf->value);
  }
  return reals;
}

/* What set the time of a buffer's move, for the calibration's scales (ModelTerms): the bytes
 * it moves, or the L2 write requests of a slice saved straight, by one thread per element or by
 * several (measured candidates say the two run at different request rates: docs/model.md,
 * "Calibration"). */
typedef enum { MOVE_BYTES, MOVE_REQUESTS_ONE, MOVE_REQUESTS_SHARED } MoveCost;
typedef struct {
  MoveCost cost;
  double record_share; /* requests: the share of the slice's record the kernel saves straight */
} Move;

/* Time of one load or save of buffer b by routine io of impl (ns per element); *move says
 * what set it. */
static double io_time_aligned(const KernelCtx *k, const Buffer *b, const Impl *impl,
                              const IoRoutine *io, Move *move) {
  *move = (Move){MOVE_BYTES, 0};
  RoutineKind kind = io->kind;
  const KernelPlan *plan = k->plan;
  int threads = impl_threads(impl, plan->e);
  BlockShape shape = impl_shape(impl, plan->e);
  GlobalBinding binding = target_binding(k->target, k->dag, b->value);
  const StagedArray *staged = staging_find(k->staging, k->dag, b->value);
  shape.w = binding_io_width(io, &binding, staged != NULL, plan->w);
  double bytes = (double)k->real_bytes * dag_value_floats(k->dag, b->value);
  double per_thread = bytes * plan->e / (threads > 0 ? threads : 1);
  /* Only the call's own threads issue its loads; the others idle (docs/design.md §6 step 6).
   * In the kernel a thread's loads of other buffers are in flight beside this one's. */
  double in_flight = kind == ROUTINE_LOAD ? k->load_bytes_per_thread : k->save_bytes_per_thread;
  if (in_flight < per_thread) in_flight = per_thread;
  double kernel_sat = kernel_saturation(k, threads, in_flight);
  Occupancy alone = occupancy(k->dev, threads, plan->smem_bytes, BASE_REGISTERS + 8);
  double bench_sat = saturation(k->dev, (double)alone.blocks_per_sm * threads, per_thread);
  /* A slice of a staged array moves from or to the kernel's shared copy of the block's records,
   * which one coalesced run fills or drains: its share of that run, at the copy bandwidth. */
  if (staged) {
    /* Every thread issues its share of the whole records back to back: that is what it keeps
     * in flight, not its share of the slice. */
    double run = (double)k->real_bytes * staged->record * plan->e / plan->threads;
    if (staged->buffer >= 0) run /= dag_groups(k->dag); /* every group's threads copy it */
    double sat = kernel_saturation(k, plan->threads, run);
    /* The copy moves whole records: each moved slice pays for the unused ones too. */
    double share = (double)staged->nvalues / staged->moved;
    /* Whole records in 16-byte asynchronous copies: a plain stream, at the copy bandwidth
     * (measured on the H100: quadrature's staged kernel 101.6% of copy). */
    return share * bytes / (k->dev->copy_gbs * sat);
  }
  /* Slices written straight to element-major records leave the sectors they touch partly
   * written, and memory then moves the kernel's records whole, once, whichever of their slices
   * the kernel writes: each slice pays its share of the record, or its L2 write requests
   * (slice_request_time) where they take longer.  The database, which timed the routine on
   * whole values, knows neither.  While combine.c's beam builds the kernel call by call the
   * slices pay whole records each (KernelPlan.partial): the whole fusion may stage the array,
   * and a beam steered by the shares and requests of routines chosen on the way finds worse
   * staged plans. */
  double slice_floor = 0, requests = 0, record_share = 0;
  if (kind == ROUTINE_SAVE && binding.layout == LAYOUT_ELEMENT && binding.record > binding.size) {
    int saved = k->straight_reals ? k->straight_reals[k->dag->values[b->value].arg] : 0;
    record_share = fmin(1, (double)saved / binding.record);
    double share = saved > binding.size ? (double)binding.size / saved : 1;
    slice_floor = share * k->real_bytes * binding.record /
                  (k->dev->copy_gbs * COPY_EFFICIENCY * kernel_sat);
    if (!plan->partial) requests = slice_request_time(k, io, shape, binding, threads);
    slice_floor = fmax(slice_floor, requests);
  }
  double ns;
  int own = b->place == PLACE_SHARED ? b->bytes : 0;
  /* No routine moves its compulsory bytes faster than the copy bandwidth; this bound matters
   * at small E, where a measured time is mostly the grid floor and says little of the routine. */
  double bound = bytes / (k->dev->copy_gbs * kernel_sat);
  if (db_time(k, impl, kind, io->index, b->place, binding.layout, own, bench_sat, kernel_sat,
              &ns)) {
    if (ns < bound) ns = bound;
    if (binding.record > binding.size) {
      GlobalBinding whole = binding;
      whole.record = whole.size, whole.offset = 0;
      if (kind == ROUTINE_LOAD)
        ns *= slice_load_factor(k, io, shape, binding, whole, threads, bytes, kernel_sat);
    } else if (kind == ROUTINE_LOAD) {
      ns *= l1_pressure_factor(k, b, io, shape, binding, threads, bytes, alone);
    }
  } else {
    ns = analytic_io_ns(k, io, shape, binding, threads, bytes, kernel_sat);
  }
  if (requests > 0 && requests >= ns && requests >= slice_floor)
    *move = (Move){threads == plan->e ? MOVE_REQUESTS_ONE : MOVE_REQUESTS_SHARED, record_share};
  return fmax(ns, slice_floor);
}

/* What a component-major row that starts mid-sector adds to its moves, as a share of their
 * time: a warp's run shares a sector at each end with the next warp's.  From the misalignment
 * micro-benchmark on the H100 (benchmarks/h100-2026-11-26-s23/misalign: a kernel of equal loads
 * and stores, 7.2% slower with its stores misaligned, 2.5% with its loads), not from any
 * candidate: stores 14.4%, loads 5% of their own time. */
#define MISALIGNED_ROW_SAVE 0.144
#define MISALIGNED_ROW_LOAD 0.05

/* The time of a buffer's load or save; in the plan for arrays of any alignment, component-major
 * rows moved straight (not staged) pay for the sectors they share. */
static double io_time(const KernelCtx *k, const Buffer *b, const Impl *impl,
                      const IoRoutine *io, Move *move) {
  double ns = io_time_aligned(k, b, impl, io, move);
  if (!k->target->misaligned_rows || staging_find(k->staging, k->dag, b->value)) return ns;
  if (target_binding(k->target, k->dag, b->value).layout != LAYOUT_COMPONENT) return ns;
  return ns * (1 + (io->kind == ROUTINE_SAVE ? MISALIGNED_ROW_SAVE : MISALIGNED_ROW_LOAD));
}

/* L1 wavefronts per element of loading buffer b by routine io of impl: a staged array's
 * coalesced copy takes one per 128-byte line; a load straight from global memory as its access
 * profile says, over the call's warps. */
static double load_wavefronts(const KernelCtx *k, const Buffer *b, const Impl *impl,
                              const IoRoutine *io) {
  const KernelPlan *plan = k->plan;
  double bytes = (double)k->real_bytes * dag_value_floats(k->dag, b->value);
  if (staging_find(k->staging, k->dag, b->value)) return bytes / 128;
  BlockShape shape = impl_shape(impl, plan->e);
  GlobalBinding binding = target_binding(k->target, k->dag, b->value);
  shape.w = binding_io_width(io, &binding, false, plan->w);
  const EffMemo *a = access_profile(k->memo, &io->ls, shape, binding, k->real_bytes);
  int threads = impl_threads(impl, plan->e);
  return a->wavefronts * ((threads + 31) / 32) / plan->e;
}

/* Whether the compute step's buffer argument a repeats an earlier one (f(x, x)). */
static bool repeated_argument(const Step *st, int a) {
  for (int b = 0; b < a; b++)
    if (st->buf[b] == st->buf[a]) return true;
  return false;
}

/* Analytic compute: shared-memory traffic of its shared buffers plus the arithmetic. */
static double compute_analytic(const KernelCtx *k, const Step *st) {
  const DagNode *n = &k->dag->nodes[k->plan->order[st->call]];
  int out = dag_value_floats(k->dag, n->result);
  int max_in = 1;
  double smem_reals = 0;
  for (int a = 0; a < n->nargs; a++) {
    int s = dag_value_floats(k->dag, n->args[a]);
    if (s > max_in) max_in = s;
  }
  for (int a = 0; a < st->nbuf; a++) {
    const Buffer *buf = &k->plan->buffers[st->buf[a]];
    if (buf->place == PLACE_SHARED && !repeated_argument(st, a))
      smem_reals += 3.0 * dag_value_floats(k->dag, buf->value); /* each real read ~3 times */
  }
  int reduce = (max_in + out - 1) / out;
  double flops = 2.0 * out * (reduce > 3 ? reduce : 3);
  double per_ns_smem = k->dev->sm_count * SMEM_BYTES_PER_CLK * CLOCK_GHZ;
  /* FP64 runs at half the FP32 rate (H100, H200). */
  double per_ns_flops = k->dev->sm_count * FP32_FLOPS_PER_CLK * 4 / k->real_bytes * CLOCK_GHZ;
  return smem_reals * k->real_bytes / per_ns_smem + flops / per_ns_flops;
}

/* db_time of a compute step, from the kernel's memo when the same key was timed before. */
static bool compute_db_time(KernelCtx *k, const Impl *impl, Placement pl, int own, double *ns) {
  uintptr_t h = ((uintptr_t)impl >> 4) ^ (uintptr_t)pl * 7 ^ (uintptr_t)own * 31;
  ComputeMemo *m = &k->compute_memo[h % COMPUTE_MEMO_SLOTS];
  if (m->impl != impl || m->pl != pl || m->own != own) {
    *m = (ComputeMemo){.impl = impl, .pl = pl, .own = own};
    m->timed = db_time(k, impl, ROUTINE_COMPUTE, 0, pl, LAYOUT_ELEMENT, own, 1, 1, &m->ns);
  }
  *ns = m->ns;
  return m->timed;
}

static double compute_time(KernelCtx *k, const Step *st) {
  const KernelPlan *plan = k->plan;
  int threads = impl_threads(st->impl, plan->e);
  bool all_registers = true;
  int own = 0;
  for (int a = 0; a < st->nbuf; a++) {
    const Buffer *buf = &plan->buffers[st->buf[a]];
    if (buf->place == PLACE_SHARED && !repeated_argument(st, a)) {
      all_registers = false;
      own += buf->bytes;
    }
  }
  double ns;
  Placement pl = all_registers ? PLACE_REGISTER : PLACE_SHARED;
  if (!compute_db_time(k, st->impl, pl, own, &ns)) ns = compute_analytic(k, st);
  /* Threads beyond the call's count idle through it. */
  if (threads > 0 && threads < plan->threads) ns *= (double)plan->threads / threads;
  /* A grid smaller than the GPU computes on the SMs it occupies only. */
  return ns * (k->dev->sm_count / k->sms);
}

/* ---- the kernel ------------------------------------------------------------------------- */

/* Per-element cost of a grid of blocks doing nothing: from a database, the cheapest routine
 * measured at this E and shared memory (memoized); analytically, block scheduling throughput or,
 * with few resident blocks, their unhidden life.  A kernel's time is sqrt(work² + floor²): the
 * floor dominates at small E, the memory traffic at large E (what the H100 measurements show). */
static double grid_floor(const KernelCtx *k) {
  const KernelPlan *plan = k->plan;
  double analytic = BLOCK_OVERHEAD_NS / plan->e;
  double life = BLOCK_LIFE_NS / (k->blocks * plan->e * k->sms);
  if (life > analytic) analytic = life;
  if (!k->db || k->db->analytic || k->db->nroutines == 0) return analytic;
  uint64_t packed = (uint64_t)(uint32_t)plan->e << 32 | (uint32_t)plan->smem_bytes;
  MemoSlot *known = memo_find(&k->memo->floors, key_ptr(k->db), packed);
  if (known) return known->v.ns;
  double best = INFINITY;
  const int *order = k->db->by_min_ns;
  for (int i = 0; i < k->db->nroutines; i++) {
    const RoutineTiming *r = &k->db->routines[order ? order[i] : i];
    if (order && r->min_ns >= best) break; /* no later routine can be cheaper */
    double ns = timingdb_routine_ns(r, plan->e, plan->smem_bytes);
    if (ns < best) best = ns;
  }
  memo_insert(&k->memo->floors, key_ptr(k->db), packed)->v.ns = best;
  return best;
}

/* The grid floor at the search's element count: a kernel lasts at least one block's life
 * (BLOCK_LIFE_NS), whatever its grid; shared among n elements that is more than the database's
 * floor only for small n (below about 2^18: at the default 2^22 it is 0.0005 ns, under every
 * floor of the databases, the least 0.0034). */
static double kernel_floor(const KernelCtx *k, long n) {
  return fmax(grid_floor(k), BLOCK_LIFE_NS / elements_or_default(n));
}

/* The barriers a block of k passes: the plan's, one after staging in, one before staging out,
 * and those of kept loops (roll.c). */
static int kernel_barriers(const KernelCtx *k) {
  const KernelPlan *plan = k->plan;
  int barriers = staging_plan_barriers(k->staging, plan) + k->loops.barriers;
  for (int i = 0; i < k->staging->n; i++)
    barriers += i == 0 || k->staging->v[i].output != k->staging->v[i - 1].output;
  return barriers;
}

static double barrier_time(const KernelCtx *k) {
  const KernelPlan *plan = k->plan;
  int barriers = kernel_barriers(k);
  if (barriers <= 0) return 0;
  /* A barrier waits for the block's slowest warp; the memory latency it exposes is hidden only
   * by the other resident blocks. */
  double blocks = k->blocks;
  double per_block = BARRIER_NS + DRAM_LATENCY_NS * (1.0 - k->occupancy) / blocks;
  return barriers * per_block / ((double)plan->e * blocks * k->sms);
}

/* ModelTerms.barrier_warps of k, whose blocks hold `groups` groups of its threads (threads.c):
 * its barriers times the warps of a block, over the elements resident on the GPU.  barrier_time
 * costs a barrier the same whatever the block's size, as KAS did; on the H200 the block shapes
 * of one fusion (--variants) ran slower the more warps their blocks had where they had several
 * barriers, up to twice as slow as predicted (docs/model.md, "Calibration").  Only a calibration
 * prices it (barrier_warp_ns).
 * A barrier is a __syncthreads() of the whole block, so its warps are all the groups' threads';
 * the blocks resident are k->blocks / groups, as model_kernel_terms counts each group as a block
 * (k->blocks *= groups).  Hence the one factor `groups` (the division by k->blocks / groups),
 * which is no second count of the groups' warps: a kernel of 4 groups of 64 threads (8 warps)
 * with one barrier and 2 blocks of E = 16 resident on each of S SMs is 1 * 8 / (2 * 16 * S)
 * per element, as for any block of 8 warps. */
static double barrier_warps(const KernelCtx *k, int groups) {
  int warp = k->dev->warp_size > 0 ? k->dev->warp_size : 32;
  double warps = ceil((double)k->plan->threads * groups / warp);
  return kernel_barriers(k) * warps / (k->blocks * k->plan->e * k->sms) * groups;
}

/* The distinct lines of `line` bytes that slices [lo[i], lo[i] + len[i]) (reals) of elements
 * [0, elements) touch, the records being `rec` bytes apart. */
static long distinct_lines(const int *lo, const int *len, int n, long rec, int real_bytes,
                           int line, long elements, long *scratch) {
  int count = 0;
  for (long e = 0; e < elements; e++)
    for (int i = 0; i < n; i++) {
      long first = e * rec + (long)lo[i] * real_bytes;
      long last = first + (long)len[i] * real_bytes - 1;
      for (long l = first / line; l <= last / line; l++) scratch[count++] = l;
    }
  return count_distinct(scratch, count);
}

/* Counted as the lines one period of the records' alignment to lines adds after another. */
double model_line_bytes(const int *lo, const int *len, int n, int record, int real_bytes,
                        int line) {
  long rec = (long)record * real_bytes, period = 1;
  while (period * rec % line) period++;
  long per_element = 0;
  for (int i = 0; i < n; i++) per_element += (long)len[i] * real_bytes / line + 2;
  long *scratch = xmalloc(sizeof *scratch * (size_t)(2 * period * per_element));
  long one = distinct_lines(lo, len, n, rec, real_bytes, line, period, scratch);
  long two = distinct_lines(lo, len, n, rec, real_bytes, line, 2 * period, scratch);
  free(scratch);
  return (double)(two - one) * line / period;
}

/* Memory moves whole lines, not the bytes a kernel reads: a kernel that reads some slices of an
 * element-major array's records (F[0] and F[1] of F[8]: 72 of every 288 bytes) pays for the
 * rest of the lines they touch.  A kernel reading every slice of the records pays nothing extra
 * (the slices share their lines), and neither does one that stages the records whole (staging.c
 * charges that copy).  The bytes per line, between DRAM's 64-byte access and L2's 128-byte line,
 * were measured on the H100 (docs/model.md, "Lines"). */
static double overfetch_time(const KernelCtx *k) {
  const KernelPlan *plan = k->plan;
  const Dag *dag = k->dag;
  /* The kernel's unstaged loads of slices of element-major records, argument by argument
   * (the buffers of one array are its slices in load order, which counting lines ignores). */
  int n = 0, *lo = NULL, *len = NULL;
  double extra = 0;
  for (int arg = 0; arg < dag->nin_args + dag->nout_args; arg++) {
    int record = 0;
    n = 0;
    for (int b = 0; b < plan->nbuffers; b++) {
      const Buffer *buf = &plan->buffers[b];
      const Value *v = &dag->values[buf->value];
      if (!buf->load || v->arg < 0 || (v->producer < 0 ? v->arg : dag->nin_args + v->arg) != arg)
        continue;
      GlobalBinding g = target_binding(k->target, dag, buf->value);
      if (g.layout != LAYOUT_ELEMENT || g.record <= g.size) continue;
      if (staging_find(k->staging, dag, buf->value)) continue;
      if (!lo) { /* most kernels load no slice: nothing is allocated for them */
        lo = xmalloc(sizeof *lo * (size_t)plan->nbuffers);
        len = xmalloc(sizeof *len * (size_t)plan->nbuffers);
      }
      lo[n] = g.offset, len[n] = g.size, record = g.record;
      n++;
    }
    double useful = 0, moved = 0;
    for (int i = 0; i < n; i++) useful += (double)len[i] * k->real_bytes;
    for (int l = 0; l < LINE_SIZES && n > 0; l++)
      moved += LINE_WEIGHT[l] * model_line_bytes(lo, len, n, record, k->real_bytes, LINE_BYTES[l]);
    if (moved > useful) extra += moved - useful;
  }
  free(lo);
  free(len);
  return extra / (k->dev->copy_gbs * COPY_EFFICIENCY * (k->sms / k->dev->sm_count));
}

/* Local-memory traffic of spilled registers: ptxas's spill bytes (stores plus loads) per thread
 * when known, else the registers beyond the per-thread maximum, stored and reloaded.  Local
 * memory is cached on the chip: the traffic runs at L1's sector bandwidth while the resident
 * threads' spill slots fit beside the shared memory, else at L2's; either way beside the DRAM
 * stream, not after it (measured on the H100: stvenant's single kernel spilling 108 bytes per
 * thread, and chain12's kernels spilling 60, ran at copy speed). */
static double spill_traffic_time(const KernelCtx *k, int regs) {
  double per_thread = k->plan->regs_from_ptxas ? k->plan->spill_stores + k->plan->spill_loads
                      : regs > MAX_REGISTERS    ? (regs - MAX_REGISTERS) * 8.0
                                                : 0;
  if (per_thread <= 0) return 0;
  double bytes = per_thread * k->plan->threads / k->plan->e;
  double resident = k->blocks * k->plan->threads * per_thread / 2;
  /* caches scale with the device, roughly; L1 is per SM, and a small grid has fewer */
  double scale = k->dev->copy_gbs / 3000.0 * (k->sms / k->dev->sm_count);
  return bytes / ((resident <= l1_free_bytes(k) ? L1_SECTOR_GBS : L2_SECTOR_GBS) * scale);
}

/* ---- calibration (docs/model.md; fitted by calibrate.c) ----------------------------------- */

/* With p > 1 the time the request term gives overlaps the other moves in part, and where
 * several threads save more of a record their requests cost less (coverage_slope < 0), as in
 * the micro-benchmark of benchmarks/h100-2026-11-27-s32/requests (three threads per element:
 * 37 requests per ns saving a quarter of a record, 69 saving all of it).  What the request term
 * stands for in the generated kernels is latency more than requests (docs/model.md,
 * "Calibration"): these constants are fitted, not derived. */
double model_calibrated_work(const ModelTerms *t, const ModelCalibration *c) {
  double covered = c->coverage_slope * (t->requests_shared_covered - t->requests_shared / 2);
  double req = c->requests_one_scale * t->requests_one +
               c->requests_shared_scale * (t->requests_shared + covered);
  double rest = t->io - t->requests_one - t->requests_shared + (c->lines_scale - 1) * t->lines;
  double p = c->requests_overlap;
  double io = p > 1 && req > 0 && rest > 0 ? pow(pow(req, p) + pow(rest, p), 1 / p) : req + rest;
  /* The loads cannot run faster than L1 serves their wavefronts (docs/model.md, "Calibration"). */
  io = fmax(io, c->wavefront_scale * t->wavefronts);
  /* Memory and arithmetic overlap, but not wholly: a share of the lesser stays in the time. */
  double hiding = fmax(io, t->compute), hidden = fmin(io, t->compute);
  return c->work_scale * (hiding + c->unhidden_share * hidden);
}

double model_combine_terms(const ModelTerms *t, const ModelCalibration *c) {
  if (!c || !c->present) return hypot(t->work, t->floor) + t->barrier + t->spill;
  return hypot(model_calibrated_work(t, c), t->floor) + c->barrier_scale * t->barrier +
         c->barrier_warp_ns * t->barrier_warps + t->spill + c->kernel_ns;
}

double model_predict_kernel(SearchContext *ctx, const KernelPlan *plan) {
  ModelTerms t;
  if (!model_kernel_terms(ctx, plan, &t)) return INFINITY; /* cannot launch */
  return model_combine_terms(&t, &ctx->db->calib);
}

/* What a thread of the kernel loads and saves over all buffers.  The database timed each
 * routine alone, its grid's threads keeping only that routine's bytes in flight; in a fused
 * kernel a thread's loads of several buffers are in flight together (and its saves), so a small
 * load beside large ones is not latency-bound as it was alone.  Held out over 282 measured
 * candidates of 11 specs on the H100 this halved the model's error (docs/model.md).  A loop the
 * kernel keeps (roll.c) has one iteration's loads in flight at a time. */
static void in_flight_bytes(KernelCtx *k) {
  const KernelPlan *plan = k->plan;
  for (int b = 0; b < plan->nbuffers; b++) {
    const Buffer *buf = &plan->buffers[b];
    double bytes = (double)k->real_bytes * dag_value_floats(k->dag, buf->value) * plan->e;
    if (buf->load)
      k->load_bytes_per_thread += bytes / impl_threads(plan->impl[buf->load_call], plan->e);
    if (buf->save)
      k->save_bytes_per_thread += bytes / impl_threads(plan->impl[buf->producer], plan->e);
  }
  k->load_bytes_per_thread -= k->loops.loads_apart;
}

/* The grid of n elements has n / E blocks.  Where they are fewer than the GPU holds resident
 * (occ.blocks_per_sm on each SM), the block scheduler spreads them over the SMs, one each
 * first: min(blocks, SMs) SMs hold max(1, blocks / SMs) blocks each, and fewer warps and fewer
 * bytes in flight than a full GPU (docs/model.md, "The element count").  A grid of a full wave
 * or more keeps the occupancy's figures as they are. */
static void grid_fill(KernelCtx *k, long n) {
  double sms = k->dev->sm_count, full = k->occ.blocks_per_sm;
  double blocks = ceil(elements_or_default(n) / k->plan->e);
  k->sms = sms;
  k->blocks = full;
  k->occupancy = k->occ.occupancy;
  if (blocks >= sms * full) return;
  k->sms = fmin(sms, blocks);
  k->blocks = fmax(1, blocks / sms);
  k->occupancy = k->occ.occupancy * k->blocks / full;
}

/* A kernel of threads.c's groups is costed per iteration, as the plan of one iteration whose
 * blocks are the groups (so many of them resident), and the terms are then counted once per
 * group, but the grid floor once (the grid has n / E blocks whatever the groups).  An input
 * that every group reads is counted once per group too: each group loads it (into its own
 * buffers); a model that counted those loads once per element predicted the four specs' group
 * kernels 5-90% faster than they ran on the H100 (session 30, call A).  Where the groups share
 * one copy of the shared memory (threads_one_copy), it is moved once: by every thread of the
 * block, where staging.c fills its buffers, else by the first group. */
bool model_kernel_terms(SearchContext *ctx, const KernelPlan *plan, ModelTerms *out) {
  const Dag *dag = ctx->dag;
  const TimingDb *db = ctx->db;
  const DeviceLimits *dev = &db->dev;
  int regs = plan->regs_estimate > 0 ? plan->regs_estimate : model_estimate_registers(plan);
  int groups = dag_groups(dag);
  bool one_copy = threads_one_copy(dag, plan);
  Staging staging = staging_of(dag, ctx->target, plan);
  KernelCtx k = {.plan = plan, .dag = dag, .db = db, .memo = ctx->model, .dev = dev,
                 .occ = occupancy(dev, threads_in_block(dag, plan), staging.smem_bytes, regs),
                 .target = ctx->target, .real_bytes = target_real_bytes(ctx->target->precision),
                 .staging = &staging};
  if (k.occ.blocks_per_sm == 0 || plan->e <= 0) { /* cannot launch */
    staging_free(&staging);
    return false;
  }
  grid_fill(&k, ctx->n);
  k.occ.blocks_per_sm *= groups;
  k.blocks *= groups;
  k.floor_ns = kernel_floor(&k, ctx->n);
  k.timed_floor_ns = grid_floor(&k);
  k.loops = roll_costs(dag, ctx->target, plan, &staging, k.real_bytes);
  in_flight_bytes(&k);
  k.straight_reals = straight_saved_reals(plan, dag, &staging);
  double io = 0, compute = 0, by_cost[3] = {0, 0, 0}; /* by MoveCost: the saves' */
  double covered = 0; /* ModelTerms.requests_shared_covered */
  double wavefronts = 0; /* of the loads, per element */
  Move move;
  for (int b = 0; b < plan->nbuffers; b++) {
    const Buffer *buf = &plan->buffers[b];
    /* the one copy of the shared memory that all groups read is moved once per block */
    double loaders = one_copy && buf->place == PLACE_SHARED ? groups : 1;
    if (buf->load) {
      io += io_time(&k, buf, plan->impl[buf->load_call], buf->load, &move) / loaders;
      wavefronts += load_wavefronts(&k, buf, plan->impl[buf->load_call], buf->load) / loaders;
    }
    if (buf->save) {
      double ns = io_time(&k, buf, plan->impl[buf->producer], buf->save, &move);
      io += ns;
      by_cost[move.cost] += ns;
      if (move.cost == MOVE_REQUESTS_SHARED) covered += ns * move.record_share;
    }
  }
  /* The compute steps come in call order. */
  for (int s = 0; s < plan->nsteps; s++)
    if (plan->steps[s].kind == ROUTINE_COMPUTE) compute += compute_time(&k, &plan->steps[s]);
  double lines = overfetch_time(&k);
  io += lines;
  /* Spill traffic shares the chip with the compute: what it adds beyond the memory time is the
   * spill term. */
  double work = io > compute ? io : compute;
  double spilled = compute + spill_traffic_time(&k, regs);
  *out = (ModelTerms){.work = work * groups,
                      .floor = k.floor_ns,
                      .barrier = barrier_time(&k) * groups,
                      .spill = (spilled > work ? spilled - work : 0) * groups,
                      .io = io * groups,
                      .compute = compute * groups,
                      .requests_one = by_cost[MOVE_REQUESTS_ONE] * groups,
                      .requests_shared = by_cost[MOVE_REQUESTS_SHARED] * groups,
                      .requests_shared_covered = covered * groups,
                      .lines = lines * groups,
                      .barrier_warps = barrier_warps(&k, groups),
                      .wavefronts = wavefronts / (L1_WAVEFRONTS_PER_NS_PER_SM * k.sms) *
                                    groups};
  free(k.straight_reals);
  staging_free(&staging);
  return true;
}

/* A kernel keeps no loop below this occupancy.  Unrolled, nvcc interleaves one iteration's work
 * with the next one's, and with few warps resident that is what hides the latencies; a kept
 * loop (unroll 1) runs its iterations one after another.  Measured on the H100 (session 29,
 * benchmarks/RESULTS.md) against their unrolled twins: kept loops cost nothing in the 40
 * candidates whose kernels run at 26-94% occupancy, and up to 17% in the element's kernels of
 * loops over M at 9-11%. */
#define KEEP_LOOPS_MIN_OCCUPANCY 0.25

void model_keep_loops(SearchContext *ctx, KernelPlan *p) {
  RollRun *runs;
  int n = roll_find(ctx->dag, ctx->target, p, &runs);
  roll_runs_free(runs, n);
  if (n == 0 || ctx->loops == LOOPS_UNROLL) return;
  if (ctx->loops == LOOPS_KEEP) {
    p->keep_runs = n >= 32 ? ~0u : (1u << n) - 1;
    p->predicted_ns_per_elem = model_predict_kernel(ctx, p);
    return;
  }
  Staging staging = staging_of(ctx->dag, ctx->target, p);
  int regs = p->regs_estimate > 0 ? p->regs_estimate : model_estimate_registers(p);
  double occ = occupancy(&ctx->db->dev, threads_in_block(ctx->dag, p), staging.smem_bytes,
                         regs).occupancy;
  staging_free(&staging);
  if (occ < KEEP_LOOPS_MIN_OCCUPANCY) return;
  double best = model_predict_kernel(ctx, p);
  for (int r = 0; r < n; r++) { /* run by run, each kept where it costs nothing */
    p->keep_runs |= 1u << r;
    double kept = model_predict_kernel(ctx, p);
    if (kept <= best)
      best = kept;
    else
      p->keep_runs &= ~(1u << r);
  }
  p->predicted_ns_per_elem = best;
}

int model_resident_blocks(const TimingDb *db, const KernelPlan *plan, int smem_bytes) {
  int regs = plan->regs_estimate > 0 ? plan->regs_estimate : model_estimate_registers(plan);
  return occupancy(&db->dev, plan->threads, smem_bytes, regs).blocks_per_sm;
}

double model_launch_overhead_ns(const TimingDb *db) {
  if (db && db->dev.launch_overhead_ns > 0) return db->dev.launch_overhead_ns;
  return 2500.0;
}

double model_launch_share_ns(const TimingDb *db, long n) {
  return model_launch_overhead_ns(db) / elements_or_default(n);
}
