/*
 * tracer.hpp — the runtime of the metadata tracer (tests/test_metadata.c).
 *
 * test_metadata.c writes, per library implementation and precision, a C++ program (compiled
 * with -DKAS_TRACER_REAL=float or double) that includes this file (which includes
 * library/kas_device.h with KAS_BUF defined), then the implementation's routines instantiated by
 * kasgen (every E, every placement, every binding of their global array: element-major at the
 * precision's vector width and at W = 1, component-major), the CPU reference <f>.c, and a table
 * of KasRoutine descriptors; main() calls kas_trace_main().  The program runs every thread of a
 * block one after another and prints:
 *
 *   T <rid> <case> <lin> <arg> <r|w> <count> <offsets...>   buffer offsets one thread touched
 *   E <rid> <case> <message>                                a wrong value, a misaligned vector
 *   D <rid>                                                 routine finished
 *   F <rid> <case> <layout> <lin> <real offset>             a global access outside the chunk
 *
 * Buffers (KAS_BUF) are KasBuf proxies that record each thread's reads and writes; offsets are
 * what the code used: absolute for a shared buffer, relative to the thread's start for a register
 * buffer.  Global memory is real: the block's chunk (exactly its valid elements; component-major,
 * each component's run of them) is placed against an inaccessible page, once after the chunk
 * and once before it, so that any global access outside the chunk faults and is reported (F).
 * Vector accesses (KAS_LOADV/KAS_STOREV) must be 16 bytes at a 16-byte aligned address, or one
 * real.  Values are checked here (E lines); access sets against the metadata are checked by
 * test_metadata.c.
 */
#ifndef KAS_TRACER_HPP
#define KAS_TRACER_HPP

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KAS_TRACE 1
#define KAS_TRACER_MAX_ARGS 7 /* compute: up to KAS_MAX_ARGS = 6 inputs and the output */

/* The program's real type: what the routines were instantiated with. */
#ifndef KAS_TRACER_REAL
#define KAS_TRACER_REAL float
#endif
typedef KAS_TRACER_REAL kas_treal;

/* Offsets one thread touched (a growable array; plain C so that the program compiles fast). */
struct KasOffsets {
  long *v;
  size_t n, cap;
  void push_back(long o) {
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      v = (long *)realloc(v, cap * sizeof *v);
      if (!v) abort();
    }
    v[n++] = o;
  }
};

/* One pattern argument of the routine running now: its storage and what the thread did. */
struct KasArgState {
  kas_treal *data;
  long size; /* valid offsets are [0, size) */
  KasOffsets reads, writes;
};

/* A reference to buf[i]: reading converts to the real type, assigning writes; both are
 * recorded. */
class KasRef {
 public:
  KasRef(KasArgState *a, long i) : a_(a), i_(i) {}
  operator kas_treal() const {
    a_->reads.push_back(i_);
    return i_ >= 0 && i_ < a_->size ? a_->data[i_] : (kas_treal)NAN;
  }
  KasRef &operator=(kas_treal v) {
    a_->writes.push_back(i_);
    if (i_ >= 0 && i_ < a_->size) a_->data[i_] = v;
    return *this;
  }
  KasRef &operator=(const KasRef &o) { return *this = (kas_treal)o; }
  KasRef &operator+=(kas_treal v) { return *this = (kas_treal)*this + v; }
  KasRef &operator-=(kas_treal v) { return *this = (kas_treal)*this - v; }
  KasRef &operator*=(kas_treal v) { return *this = (kas_treal)*this * v; }

 private:
  KasArgState *a_;
  long i_;
};

/* KAS_BUF: a buffer argument.  Only indexing is allowed (docs/library-format.md). */
class KasBuf {
 public:
  explicit KasBuf(KasArgState *a) : a_(a) {}
  KasRef operator[](long i) const { return KasRef(a_, i); }

 private:
  KasArgState *a_;
};

#define KAS_BUF(T) KasBuf
#include "kas_device.h"

/* Vector accesses go through these, so that their width and alignment are checked. */
#undef KAS_LOADV
#undef KAS_STOREV
#define KAS_LOADV(v, g, q) kas_loadv_checked(v, g, (size_t)(q))
#define KAS_STOREV(g, q, v) kas_storev_checked(g, (size_t)(q), v)

/* ------------------------------------------------------------------------------------------ */

enum { KAS_T_LOAD = 0, KAS_T_COMPUTE = 1, KAS_T_SAVE = 2 };

/* Calls the instantiated routine with a uniform signature (generated per routine). */
typedef void (*KasCall)(kas_treal *g, KasBuf *bufs, int tx, int ty, int tz, size_t e0, size_t n,
                        size_t ld);
/* Calls ref_<f>(in0, ..., out). */
typedef void (*KasRefCall)(const double *const *in, double *out);

struct KasRoutine {
  int rid, kind, e;
  int bx, by, bz;
  int nargs;                           /* pattern arguments: 1, or inputs + output */
  int size[KAS_TRACER_MAX_ARGS];       /* reals per element of each argument's variable */
  int reg[KAS_TRACER_MAX_ARGS];        /* 1 = placed in registers */
  const long *start[KAS_TRACER_MAX_ARGS]; /* per thread: the pattern's start (register args) */
  int extent[KAS_TRACER_MAX_ARGS];     /* register array length */
  int component;                       /* load/save: its array is component-major */
  KasCall call;
};

/* Where we are, for the fault handler and the E lines. */
static struct {
  int rid, kase, layout, lin;
  const kas_treal *chunk;
} kas_now;
static int kas_errors_this_case;

static void kas_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void kas_error(const char *fmt, ...) {
  if (kas_errors_this_case++ >= 5) return; /* the first few say enough */
  va_list ap;
  va_start(ap, fmt);
  printf("E %d %d ", kas_now.rid, kas_now.kase);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

static void kas_fault(int sig, siginfo_t *si, void *ctx) {
  (void)sig;
  (void)ctx;
  long off = (long)(((const char *)si->si_addr - (const char *)kas_now.chunk) /
                    (long)sizeof(kas_treal));
  printf("F %d %d %d %d %ld\n", kas_now.rid, kas_now.kase, kas_now.layout, kas_now.lin, off);
  fflush(stdout);
  _exit(3);
}

/* A vector access is one real, or 16 bytes at a 16-byte aligned address (the library's
 * contract; a GPU would fault). */
static inline void kas_check_vector(const kas_treal *p, int n, const char *what) {
  if (n > 1 && n * sizeof(kas_treal) != 16)
    kas_error("a %s of %d reals is no 16-byte vector", what, n);
  if (n > 1 && (uintptr_t)p % 16)
    kas_error("misaligned vector %s at chunk offset %ld", what, (long)(p - kas_now.chunk));
}

template <int N> static inline void kas_loadv_checked(kas_treal (&v)[N], const kas_treal *g,
                                                      size_t q) {
  const kas_treal *p = g + (size_t)N * q;
  kas_check_vector(p, N, "load");
  memcpy(v, p, sizeof v);
}

template <int N> static inline void kas_storev_checked(kas_treal *g, size_t q,
                                                       const kas_treal (&v)[N]) {
  kas_treal *p = g + (size_t)N * q;
  kas_check_vector(p, N, "store");
  memcpy(p, v, sizeof v);
}

/* Global memory of one block: `valid` elements of `size` reals against inaccessible pages,
 * after them (layout 0) or before them (layout 1).  Element-major, the chunk is one run of
 * valid * size reals; component-major, each component's run of valid reals has guard pages of
 * its own, ld reals apart. */
struct KasGuarded {
  char *map;
  size_t map_bytes;
  kas_treal *chunk; /* element 0 of the block, component 0 */
  size_t ld;        /* component-major: reals from one component's run to the next */
  int size, component;
};

static size_t kas_pages(size_t bytes, size_t page) { return (bytes + page - 1) / page * page; }

static KasGuarded kas_guarded_alloc(size_t valid, int size, int component, int layout) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t run = (component ? valid : valid * size) * sizeof(kas_treal);
  size_t runs = component ? (size_t)size : 1;
  size_t stride = kas_pages(run, page) + page; /* a run's pages and the guard after them */
  KasGuarded m;
  m.map_bytes = page + runs * stride;
  m.map = (char *)mmap(NULL, m.map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  for (size_t r = 0; m.map != MAP_FAILED && r < runs; r++)
    if (mprotect(m.map + page + r * stride, stride - page, PROT_READ | PROT_WRITE) != 0) {
      perror("mprotect");
      exit(2);
    }
  if (m.map == MAP_FAILED) {
    perror("mmap");
    exit(2);
  }
  char *first = m.map + page + (layout == 0 ? stride - page - run : 0);
  m.chunk = (kas_treal *)first;
  m.ld = stride / sizeof(kas_treal);
  m.size = size;
  m.component = component;
  return m;
}

/* Element j of the block, component c. */
static kas_treal *kas_global_at(const KasGuarded *m, size_t j, int c) {
  return m->component ? m->chunk + (size_t)c * m->ld + j : m->chunk + j * m->size + c;
}

static void kas_guarded_free(KasGuarded *m) { munmap(m->map, m->map_bytes); }

/* ------------------------------------------------------------------------------------------ */

/* Deterministic data: positive, so that no result cancels (the tolerance stays meaningful). */
static unsigned long kas_rng = 12345;
static float kas_random(void) {
  kas_rng = kas_rng * 6364136223846793005UL + 1442695040888963407UL;
  return 0.5f + (float)((kas_rng >> 40) & 0xffff) / 65536.0f;
}

static const float kas_sentinel = -12345.5f; /* never a value the data or a result can take */

static int kas_cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* Prints a thread's set of one argument (sorted, each offset once) and empties it. */
static void kas_print_set(int rid, int kase, int lin, int arg, char rw, KasOffsets *s) {
  if (s->n == 0) return;
  qsort(s->v, s->n, sizeof *s->v, kas_cmp_long);
  size_t m = 0;
  for (size_t k = 0; k < s->n; k++)
    if (m == 0 || s->v[m - 1] != s->v[k]) s->v[m++] = s->v[k];
  printf("T %d %d %d %d %c %zu", rid, kase, lin, arg, rw, m);
  for (size_t k = 0; k < m; k++) printf(" %ld", s->v[k]);
  printf("\n");
  s->n = 0;
}

/* Runs every thread of the block once, each with its own register arrays (register args) or
 * the block's shared arrays.  Register arrays are filled from the shared image before the
 * thread (inputs) and scattered back after it (written offsets), so that one value check
 * serves both placements.  trace = print the thread's access sets. */
static void kas_run_block(const KasRoutine *r, kas_treal **shared, kas_treal *g, size_t e0,
                          size_t n, size_t ld, bool trace) {
  int threads = r->bx * r->by * r->bz;
  KasArgState st[KAS_TRACER_MAX_ARGS];
  kas_treal *regs[KAS_TRACER_MAX_ARGS];
  memset(st, 0, sizeof st);
  for (int a = 0; a < r->nargs; a++)
    regs[a] = (kas_treal *)calloc(r->extent[a] + 1, sizeof(kas_treal));
  for (int lin = 0; lin < threads; lin++) {
    kas_now.lin = lin;
    int tx = lin % r->bx, ty = lin / r->bx % r->by, tz = lin / (r->bx * r->by);
    KasBuf bufs[KAS_TRACER_MAX_ARGS] = {KasBuf(&st[0]), KasBuf(&st[1]), KasBuf(&st[2]),
                                        KasBuf(&st[3]), KasBuf(&st[4]), KasBuf(&st[5]),
                                        KasBuf(&st[6])};
    for (int a = 0; a < r->nargs; a++) {
      long full = (long)r->e * r->size[a];
      if (r->reg[a]) {
        for (int k = 0; k < r->extent[a]; k++) {
          long o = r->start[a][lin] + k;
          regs[a][k] = o >= 0 && o < full ? shared[a][o] : kas_sentinel;
        }
        st[a].data = regs[a];
        st[a].size = r->extent[a];
      } else {
        st[a].data = shared[a];
        st[a].size = full;
      }
    }
    r->call(g, bufs, tx, ty, tz, e0, n, ld);
    for (int a = 0; a < r->nargs; a++) {
      if (r->reg[a])
        for (size_t w = 0; w < st[a].writes.n; w++) {
          long k = st[a].writes.v[w], o = r->start[a][lin] + k;
          if (k >= 0 && k < r->extent[a] && o >= 0 && o < (long)r->e * r->size[a])
            shared[a][o] = regs[a][k];
        }
      if (trace) {
        kas_print_set(r->rid, kas_now.kase, lin, a, 'r', &st[a].reads);
        kas_print_set(r->rid, kas_now.kase, lin, a, 'w', &st[a].writes);
      }
      st[a].reads.n = st[a].writes.n = 0;
    }
  }
  for (int a = 0; a < KAS_TRACER_MAX_ARGS; a++) free(st[a].reads.v), free(st[a].writes.v);
  for (int a = 0; a < r->nargs; a++) free(regs[a]);
}

/* A load or save in one (e0, n) case and one placement of its global memory. */
static void kas_run_io(const KasRoutine *r, size_t e0, size_t n, int layout) {
  int s = r->size[0];
  size_t valid = n > e0 ? n - e0 : 0;
  if (valid > (size_t)r->e) valid = (size_t)r->e;
  size_t full = (size_t)r->e * s;
  kas_treal *buf = (kas_treal *)malloc(full * sizeof(kas_treal));
  kas_treal *image = (kas_treal *)malloc(full * sizeof(kas_treal));
  KasGuarded m = kas_guarded_alloc(valid, s, r->component, layout);
  kas_now.chunk = m.chunk;
  /* the array's base as the routine gets it: element e0 is the chunk's first */
  kas_treal *g = r->component ? m.chunk - e0 : m.chunk - e0 * s;
  if (r->kind == KAS_T_LOAD) {
    for (size_t j = 0; j < valid; j++)
      for (int c = 0; c < s; c++) *kas_global_at(&m, j, c) = kas_random();
    for (size_t o = 0; o < full; o++) buf[o] = kas_sentinel;
    kas_run_block(r, &buf, g, e0, n, m.ld, layout == 0);
    for (size_t o = 0; o < full; o++) {
      kas_treal want = o / s < valid ? *kas_global_at(&m, o / s, (int)(o % s)) : 0;
      if (buf[o] != want && buf[o] != kas_sentinel)
        kas_error("load: buffer offset %zu holds %g, global has %g", o, (double)buf[o],
                  (double)want);
    }
  } else {
    for (size_t j = 0; j < valid; j++)
      for (int c = 0; c < s; c++) *kas_global_at(&m, j, c) = kas_sentinel;
    for (size_t o = 0; o < full; o++) image[o] = buf[o] = kas_random();
    kas_run_block(r, &buf, g, e0, n, m.ld, layout == 0);
    for (size_t o = 0; o < valid * s; o++) {
      kas_treal got = *kas_global_at(&m, o / s, (int)(o % s));
      if (got != image[o])
        kas_error("save: global offset %zu holds %g, buffer has %g%s", o, (double)got,
                  (double)image[o], got == kas_sentinel ? " (never written)" : "");
    }
  }
  kas_guarded_free(&m);
  free(buf), free(image);
}

/* A compute on random inputs, compared with the CPU reference element by element (normwise
 * relative error over the element's result). */
static void kas_run_compute(const KasRoutine *r, KasRefCall ref) {
  int nin = r->nargs - 1, e = r->e, so = r->size[nin];
  kas_treal *data[KAS_TRACER_MAX_ARGS];
  for (int a = 0; a < r->nargs; a++) {
    data[a] = (kas_treal *)malloc((size_t)e * r->size[a] * sizeof(kas_treal));
    for (long k = 0; k < (long)e * r->size[a]; k++)
      data[a][k] = a < nin ? kas_random() : kas_sentinel;
  }
  kas_now.chunk = NULL;
  kas_run_block(r, data, NULL, 0, (size_t)e, 0, true);
  double in[KAS_TRACER_MAX_ARGS][128], out[128]; /* the largest type has 81 floats */
  const double *inp[KAS_TRACER_MAX_ARGS];
  for (int k = 0; k < e; k++) {
    for (int a = 0; a < nin; a++) {
      for (int j = 0; j < r->size[a]; j++) in[a][j] = data[a][(long)k * r->size[a] + j];
      inp[a] = in[a];
    }
    ref(inp, out);
    double err = 0, norm = 0;
    for (int j = 0; j < so; j++) {
      double got = data[nin][(long)k * so + j];
      double d = got == got ? fabs(got - out[j]) : INFINITY; /* NaN: read out of range */
      if (d > err) err = d;
      if (fabs(out[j]) > norm) norm = fabs(out[j]);
    }
    /* single precision: 1e-5 of the element's norm; double: 1e-12 (docs/library-format.md) */
    double tolerance = sizeof(kas_treal) == sizeof(double) ? 1e-12 : 1e-5;
    if (err > tolerance * norm || (norm == 0 && err > 0))
      kas_error("compute: element %d differs from the CPU reference (error %g, norm %g)", k, err,
                norm);
  }
  for (int a = 0; a < r->nargs; a++) free(data[a]);
}

/* (e0, n) cases of a load/save: two full blocks (first and second) and two partial ones. */
static int kas_io_cases(int e, size_t *e0, size_t *n) {
  int c = 0;
  e0[c] = 0, n[c++] = (size_t)e;
  e0[c] = (size_t)e, n[c++] = 2 * (size_t)e + 5;
  e0[c] = (size_t)e, n[c++] = 2 * (size_t)e - 1;
  e0[c] = 0, n[c++] = 1;
  return c;
}

static inline int kas_trace_main(const KasRoutine *routines, int nroutines, KasRefCall ref) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = kas_fault;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
  for (int i = 0; i < nroutines; i++) {
    const KasRoutine *r = &routines[i];
    kas_now.rid = r->rid;
    if (r->kind == KAS_T_COMPUTE) {
      kas_now.kase = 0, kas_now.layout = 0, kas_errors_this_case = 0;
      kas_run_compute(r, ref);
    } else {
      size_t e0[8], n[8];
      int ncases = kas_io_cases(r->e, e0, n);
      for (int c = 0; c < ncases; c++)
        for (int layout = 0; layout < 2; layout++) {
          kas_now.kase = c, kas_now.layout = layout, kas_errors_this_case = 0;
          kas_run_io(r, e0[c], n[c], layout);
        }
    }
    printf("D %d\n", r->rid);
  }
  return 0;
}

#endif
