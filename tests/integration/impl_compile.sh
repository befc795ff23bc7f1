#!/usr/bin/env bash
# impl_compile.sh — every routine of the heavy library implementations (mmul33, mmul55, ttmul411,
# ttmul311, ttmul3212; IMPLS="all" or a list of names to choose others) compiles as kasgen will
# paste it: each load, save and compute is instantiated through instantiate_routine (the real
# substitution of APLS/APINn/APOUT, the block-size constants and the target's real, W and GIDX)
# at E = 4 and at the implementation's recommended E, in every placement its patterns allow, in
# single and double precision, each load and save with every binding of its array (element-major
# at the precision's vector width and at W = 1, component-major, and each component-major load
# also as the plan for any alignment reads it, through kas_row_load), and the result must
#   - compile with g++ -DKAS_HOST -Wall -Wextra -Werror (the CPU shim's and the tracer's view), and
#   - compile with nvcc -arch=sm_90 inside one wrapper kernel per routine, with ptxas told to warn
#     on any local-memory use and warnings made errors: a buffer placed in registers that is not
#     indexed by constants only (after unrolling) would land in local memory and fail here.
# No GPU is needed.  The nvcc half is skipped, with a message, where nvcc is not installed.
# Run from the repository root with $KASGEN set (tests/run.sh does); the driver is linked
# against libkasgen.a beside $KASGEN.
set -u
KASGEN=${KASGEN:-build/kasgen}
LIBDIR=${KASGEN_LIBRARY:-library}
LIBA="$(dirname "$KASGEN")/libkasgen.a"
IMPLS=${IMPLS:-"mmul33_1 mmul33_2 mmul33_3 mmul55_1 mmul55_2 mmul55_3 ttmul411_1 ttmul411_2
  ttmul411_3 ttmul311_1 ttmul311_2 ttmul3212_1 ttmul3212_2 ttmul3212_3"}
NVCC=${NVCC:-$(tools/find-nvcc.sh 2>/dev/null || true)} # tools/find-nvcc.sh decides

fail() { echo "impl_compile: FAIL: $*" >&2; exit 1; }
[ -f "$LIBA" ] || fail "$LIBA not built (make BUILD=$(dirname "$KASGEN"))"
tmp=$(mktemp -d)
trap 'if [ -n "${KEEP:-}" ]; then echo "impl_compile: kept $tmp"; else rm -rf "$tmp"; fi' EXIT

# The driver: instantiates routines and writes one .cu per implementation.
cat >"$tmp/driver.c" <<'EOF'
/* impl_compile driver: driver LIBDIR OUTDIR IMPL... writes OUTDIR/<impl>_<precision>.cu holding
 * every routine of IMPL instantiated at E = 4 and at its recommended E, in every allowed
 * placement and binding, and (for nvcc only) one wrapper kernel per instance that feeds and
 * consumes its buffers. */
#include "kasgen.h"
#include <stdlib.h>
#include <string.h>

#define MAX_PARGS (KAS_MAX_ARGS + 1)

/* One routine's pattern arguments in call order, with the floats per element of each. */
typedef struct {
  const Pattern *pat[MAX_PARGS];
  int size[MAX_PARGS];
  int n;
} PatArgs;

static PatArgs routine_pattern_args(const Impl *im, RoutineKind kind, int j) {
  PatArgs pa = {.n = 0};
  if (kind == ROUTINE_LOAD) {
    pa.pat[0] = &im->loads[j].ls;
    pa.size[0] = im->fn->params[im->loads[j].arg]->size;
    pa.n = 1;
  } else if (kind == ROUTINE_SAVE) {
    pa.pat[0] = &im->saves[j].ls;
    pa.size[0] = im->fn->result->size;
    pa.n = 1;
  } else {
    for (int a = 0; a < im->fn->nparams; a++) {
      pa.pat[pa.n] = &im->in[a];
      pa.size[pa.n++] = im->fn->params[a]->size;
    }
    pa.pat[pa.n] = &im->out;
    pa.size[pa.n++] = im->fn->result->size;
  }
  return pa;
}

/* How a routine is instantiated besides its placement: precision, vector width, layout, and
 * whether component-major loads read through kas_row_load (RoutineRequest.hint_rows). */
typedef struct {
  Precision precision;
  int w;
  Layout layout;
  bool hint_rows;
} Binding;

/* The wrapper kernel: shared buffers are slices of dynamic shared memory, register buffers local
 * arrays filled from global memory; afterwards every buffer real is summed into go. */
static void put_wrapper(StrBuf *sb, const Impl *im, RoutineKind kind, const RoutineInstance *ri,
                        int e, const PatArgs *pa, const Placement *pl, Binding b) {
  BlockShape shape = impl_shape(im, e);
  shape.w = b.w;
  const char *name = ri->name, *real = target_real_name(b.precision);
  unsigned coords = ri->coords;
  sb_printf(sb, "__global__ void w_%s(const %s *__restrict__ gi, %s *__restrict__ go, "
                "size_t n) {\n  extern __shared__ %s sm[];\n"
                "  const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;\n"
                "  (void)tx, (void)ty, (void)tz; /* a routine may take fewer */\n"
                "  const size_t e0 = (size_t)blockIdx.x * %d;\n  (void)e0; /* computes take no e0 */\n"
                "  %s acc = 0;\n", name, real, real, real, e, real);
  long offset = 0;
  for (int a = 0; a < pa->n; a++) {
    if (pl[a] == PLACE_REGISTER) {
      int ext = pattern_register_extent(pa->pat[a], shape);
      sb_printf(sb, "  %s b%d[%d];\n#pragma unroll\n  for (int k = 0; k < %d; k++) "
                    "b%d[k] = gi[threadIdx.x + k * 32];\n", real, a, ext, ext, a);
    } else {
      sb_printf(sb, "  %s *b%d = sm + %ld;\n", real, a, offset);
      offset += (long)e * pa->size[a];
    }
  }
  static const char *const xyz[8] = {"", ", tx", ", ty", ", tx, ty", ", tz", ", tx, tz",
                                      ", ty, tz", ", tx, ty, tz"}; /* the routine's coordinates */
  const char *ld = ri->takes_ld ? ", n" : ""; /* ld: one component's row of n reals */
  if (kind == ROUTINE_LOAD)
    sb_printf(sb, "  %s(gi, b0%s, e0, n%s);\n", name, xyz[coords & 7], ld);
  else if (kind == ROUTINE_SAVE)
    sb_printf(sb, "  %s(b0, go%s, e0, n%s);\n", name, xyz[coords & 7], ld);
  else {
    sb_printf(sb, "  %s(", name);
    for (int a = 0; a < pa->n; a++) sb_printf(sb, "%sb%d", a ? ", " : "", a);
    sb_printf(sb, "%s);\n", xyz[coords & 7]);
  }
  for (int a = 0; a < pa->n; a++) {
    if (pl[a] == PLACE_REGISTER) {
      int ext = pattern_register_extent(pa->pat[a], shape);
      sb_printf(sb, "#pragma unroll\n  for (int k = 0; k < %d; k++) acc += b%d[k];\n", ext, a);
    } else {
      sb_printf(sb, "  acc += b%d[threadIdx.x];\n", a);
    }
  }
  sb_printf(sb, "  go[(size_t)blockIdx.x * %d + threadIdx.x] = acc;\n}\n",
            shape.bx * shape.by * shape.bz);
}

/* Every allowed placement of one routine under a binding: register only where the pattern
 * permits it. */
static int put_routine(StrBuf *sb, StrBuf *wr, const Impl *im, RoutineKind kind, int j, int e,
                       Binding b) {
  PatArgs pa = routine_pattern_args(im, kind, j);
  int errors = 0;
  for (int mask = 0; mask < (1 << pa.n); mask++) {
    Placement pl[MAX_PARGS];
    bool allowed = true;
    for (int a = 0; a < pa.n; a++) {
      pl[a] = (mask >> a) & 1 ? PLACE_REGISTER : PLACE_SHARED;
      if (pl[a] == PLACE_REGISTER && pa.pat[a]->noreg) allowed = false;
    }
    if (!allowed) continue;
    RoutineRequest rq = {kind, j, e, impl_shape(im, e), {PLACE_SHARED}, b.precision,
                         {b.layout, 0, 0, 0}, b.hint_rows};
    rq.shape.w = b.w;
    for (int a = 0; a < pa.n; a++) rq.place[a] = pl[a];
    RoutineInstance ri;
    if (!instantiate_routine(im, &rq, &ri)) {
      errors++;
      continue;
    }
    sb_printf(sb, "%s\n", ri.text);
    put_wrapper(wr, im, kind, &ri, e, &pa, pl, b);
    routine_instance_free(&ri);
  }
  return errors;
}

static const Impl *find_impl(const Library *lib, const char *name) {
  for (int f = 0; f < lib->nfuncs; f++)
    for (int i = 0; i < lib->funcs[f].nimpls; i++)
      if (!strcmp(lib->funcs[f].impls[i].name, name)) return &lib->funcs[f].impls[i];
  return NULL;
}

/* Whether a load or save is instantiated with the binding (its array element-major at the
 * precision's vector width; at W = 1 where its pattern uses W; component-major where it is not
 * contiguous). */
static bool takes_binding(const IoRoutine *io, Binding b) {
  if (b.layout == LAYOUT_COMPONENT) return !io->contiguous;
  return b.w == target_vector_width(b.precision) || io->ls.uses_w;
}

/* The loads and saves of one E under one binding, and the compute (once, with the first); a
 * hinted binding changes the loads only. */
static int put_binding(StrBuf *sb, StrBuf *wr, const Impl *im, int e, Binding b, bool compute) {
  int errors = 0;
  for (int j = 0; j < im->nloads; j++)
    if (takes_binding(&im->loads[j], b)) errors += put_routine(sb, wr, im, ROUTINE_LOAD, j, e, b);
  for (int j = 0; j < im->nsaves && !b.hint_rows; j++)
    if (takes_binding(&im->saves[j], b)) errors += put_routine(sb, wr, im, ROUTINE_SAVE, j, e, b);
  if (compute) errors += put_routine(sb, wr, im, ROUTINE_COMPUTE, 0, e, b);
  return errors;
}

/* OUTDIR/<impl>_<precision>.cu: the routines at E = 4 and at the recommended E (when it fits a
 * block), with every binding. */
static int write_impl(const Impl *im, const char *outdir, Precision prec) {
  StrBuf sb, wr;
  sb_init(&sb);
  sb_init(&wr);
  int errors = 0;
  sb_puts(&sb, "#include \"kas_device.h\"\n\n");
  int es[2] = {4, im->recommended_e > 4 ? im->recommended_e : 32};
  int w = target_vector_width(prec);
  Binding binds[4] = {{prec, w, LAYOUT_ELEMENT, false}, {prec, 1, LAYOUT_ELEMENT, false},
                      {prec, w, LAYOUT_COMPONENT, false}, {prec, w, LAYOUT_COMPONENT, true}};
  for (int t = 0; t < 2; t++) {
    int e = es[t];
    if (impl_threads(im, e) > KAS_MAX_THREADS) continue;
    for (int b = 0; b < 4; b++) errors += put_binding(&sb, &wr, im, e, binds[b], b == 0);
  }
  sb_printf(&sb, "#ifdef __CUDACC__\n%s#endif\n", wr.data ? wr.data : "");
  char *path = xasprintf("%s/%s_%s.cu", outdir, im->name, target_precision_name(prec));
  FILE *f = fopen(path, "w");
  if (!f || fputs(sb.data, f) == EOF || fclose(f) != 0) {
    fprintf(stderr, "%s: cannot write\n", path);
    errors++;
  }
  free(path);
  sb_free(&sb);
  sb_free(&wr);
  return errors;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: driver LIBDIR OUTDIR IMPL...\n");
    return 2;
  }
  Library *lib = library_load(argv[1]);
  if (!lib) return 1;
  int errors = 0;
  for (int k = 3; k < argc; k++) {
    const Impl *im = find_impl(lib, argv[k]);
    if (!im) {
      fprintf(stderr, "%s: no such implementation in %s\n", argv[k], argv[1]);
      errors++;
      continue;
    }
    errors += write_impl(im, argv[2], PREC_SINGLE) + write_impl(im, argv[2], PREC_DOUBLE);
  }
  library_free(lib);
  return errors ? 1 : 0;
}
EOF

if [ "$IMPLS" = all ]; then
  IMPLS=$(find "$LIBDIR" -name '*_[0-9]*.ini' -printf '%f\n' | sed 's/\.ini$//' | sort)
fi

san=""
[ "${SAN:-0}" = 1 ] && san="-fsanitize=address,undefined"
# shellcheck disable=SC2046
cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -Isrc -I/usr/include/lpsolve \
  -o "$tmp/driver" "$tmp/driver.c" "$LIBA" \
  $(pkg-config --libs libxml-2.0 inih 2>/dev/null) -llpsolve55 -lcolamd -ldl -lm \
  || fail "cannot build the driver"
# shellcheck disable=SC2086
"$tmp/driver" "$LIBDIR" "$tmp" $IMPLS || fail "instantiation failed"
cp "$LIBDIR/kas_device.h" "$tmp/"

have_nvcc=1
if ! [ -x "$NVCC" ]; then
  have_nvcc=0
  echo "impl_compile: nvcc not found: skipping the device half (g++ -DKAS_HOST only)"
fi
files=0
for cu in "$tmp"/*_[0-9]*_single.cu "$tmp"/*_[0-9]*_double.cu; do
  files=$((files + 1))
  g++ -x c++ -std=c++17 -DKAS_HOST -Wall -Wextra -Werror -Wno-unknown-pragmas \
    -I"$tmp" -c -o /dev/null "$cu" 2>"$cu.gxx.log" \
    || { cat "$cu.gxx.log" >&2; fail "g++ -DKAS_HOST: $(basename "$cu")"; }
  if ((have_nvcc)); then
    # -warn-lmem-usage: any local memory (a register buffer indexed at run time) is an error.
    nice "$NVCC" -arch=sm_90 -c -o /dev/null -Werror all-warnings \
      -Xptxas -warn-lmem-usage,-warn-spills,-Werror -I"$tmp" "$cu" 2>"$cu.nvcc.log" \
      || { cat "$cu.nvcc.log" >&2; fail "nvcc: $(basename "$cu")"; }
  fi
done
((files > 0)) || fail "no implementation instantiated"
routines=$(grep -h -c '^__global__' "$tmp"/*_[0-9]*.cu | awk '{s += $1} END {print s}')
echo "impl_compile: $files files (single and double precision), $routines routine instances" \
  "compiled" \
  "(g++ -DKAS_HOST$( ((have_nvcc)) && echo ', nvcc sm_90 with no local memory'))"
