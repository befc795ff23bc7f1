#!/usr/bin/env bash
# names.sh — a spec's inputs and outputs may bear any name the spec language allows, and the
# generated code still builds and is right (src/emit_cuda.c, io_name).  The launch functions and
# the embedding API declare a variable per argument; a name that C, C++, CUDA, the standard
# headers or kasgen's own code already use gets another, and the ranking still finishes:
#   - a prefix of kasgen's own (w_q, kas_out, blocks1) or of C's implementation (__w, _F) gets
#     "v_" (before, "_" was appended for ever: the main job hung after the ranking);
#   - a word (size_t, dim3, float3, int32_t, cudaStream_t, n, ld) gets "_" (size_t, dim3 and ld
#     were not reserved: kernels.cu and the embed did not compile);
#   - a name taken by an earlier argument gets a number (n -> n_, then n_ -> n_2).
# Each spec runs under `timeout 20`; every candidate compiles with nvcc (where installed) and
# passes `make check-cpu` (both thread orders against the float64 CPU graph), the embedding
# header compiles as C99, and the arguments keep their spec names in kas_candidates.h.
set -eu
: "${KASGEN:?set KASGEN to the kasgen binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
NVCC=${NVCC:-$(tools/find-nvcc.sh 2>/dev/null || true)}
have_nvcc=1
[ -x "$NVCC" ] || { have_nvcc=0; echo "note: no nvcc; GPU compilation not checked" >&2; }

# spec NAME MATRIX SCALAR OUTPUT: OUTPUT = smmul33(MATRIX, SCALAR).
spec() {
  printf 'matrix3x3 %s, %s;\nscalar %s;\ninput %s, %s;\n%s = smmul33(%s, %s);\nreturn %s;\n' \
    "$2" "$4" "$3" "$2" "$3" "$4" "$2" "$3" "$4" >"$tmp/$1.spec"
}

# check NAME EXPECTED_PROTOTYPE_START [kasgen options]: generated in time, built, checked.
check() {
  local name=$1 want=$2
  shift 2
  local rc=0
  timeout 20 "$KASGEN" "$tmp/$name.spec" --top 2 --variants 0 --out "$tmp" "$@" \
    >"$tmp/$name.log" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { cat "$tmp/$name.log"; fail "$name: kasgen exit $rc (124: it hung)"; }
  local out=$tmp/$name
  grep -qF "kas_status kas_$name($want" "$out/embed/kas_$name.h" ||
    { grep -A1 "^kas_status kas_$name(" "$out/embed/kas_$name.h"; fail "$name: not ($want"; }
  # kas_candidates.h, which the harness prints from, keeps the spec's names
  local spec_names
  spec_names=$(sed -n 's/^input \(.*\);$/\1/p' "$tmp/$name.spec" | sed 's/, */", "/g')
  grep -qF "{\"$spec_names\"}" "$out/common/kas_candidates.h" || fail "$name: input names"
  gcc -std=c99 -pedantic -Wall -Werror -fsyntax-only -x c "$out/embed/kas_$name.h" ||
    fail "$name: the embedding header does not compile as C99"
  local targets=check-cpu
  ((have_nvcc)) && targets="compile-check check-cpu"
  make -C "$out" -j2 $targets NVCC="$NVCC" >"$tmp/$name.make" 2>&1 ||
    { tail -30 "$tmp/$name.make"; fail "$name: make $targets"; }
  grep -q "^$name: \([0-9]*\) of \1 candidates passed" "$tmp/$name.make" ||
    { tail -5 "$tmp/$name.make"; fail "$name: check-cpu"; }
  if ((have_nvcc)); then
    "$NVCC" -arch=sm_90 -c "$out/embed/kas_$name.cu" -o "$tmp/$name.o" >"$tmp/$name.nvcc" 2>&1 ||
      { head -20 "$tmp/$name.nvcc"; fail "$name: the embed does not compile"; }
  fi
  echo "$name: ok"
}

spec prefixes w_q __w kas_out
check prefixes "const float *v_w_q, const float *v_w, float *v_kas_out, size_t n"
spec words size_t dim3 blocks1
check words "const float *size_t_, const float *dim3_, float *v_blocks1, size_t n"
spec types float3 int32_t cudaStream_t
check types "const float *float3_, const float *int32_t_, float *cudaStream_t_, size_t n"
# component-major: the launch functions and the API take a parameter ld
spec taken n n_ ld
check taken "const double *n_, const double *n_2, double *ld_, size_t n, size_t ld" \
  --precision double --layout component
spec renamed _F v_w w_
check renamed "const float *v_F, const float *v_w, float *v_w_2, size_t n"

# The spec's name in the API (docs/spec-language.md, "Name of the computation"): "-" becomes "_",
# a leading digit gets an "s"; the folder keeps the name; --name gives colliding names apart, and
# the main job refuses a second spec of one API in one --out.
api_name() { # SPEC_STEM WANT_API [options]: the folder is the stem's, the API WANT_API
  local stem=$1 want=$2; shift 2
  cp "$tmp/prefixes.spec" "$tmp/$stem.spec"
  "$KASGEN" "$tmp/$stem.spec" --top 1 --variants 0 --out "$tmp/api" "$@" >"$tmp/api.log" 2>&1 ||
    { cat "$tmp/api.log"; fail "$stem: kasgen exit $?"; }
  local folder=${stem}
  [ "${1:-}" = --name ] && folder=$2
  local upper
  upper=$(tr '[:lower:]' '[:upper:]' <<<"$want")
  grep -q "^kas_status $want(" "$tmp/api/$folder/embed/$want.h" &&
    grep -q "^#define ${upper}_LD 0" "$tmp/api/$folder/embed/$want.h" ||
    fail "$stem $*: no $want in $folder/embed/$want.h"
}
api_name 3d kas_s3d
api_name a-b kas_a_b
# a_b's API would be a-b's, and s3d's 3d's, beside it in one --out: refused before the search,
# at the other's header, nothing written (before, both were written; linking both fails)
collides() { # SPEC_STEM OTHER_FOLDER API
  cp "$tmp/prefixes.spec" "$tmp/$1.spec"
  local rc=0
  "$KASGEN" "$tmp/$1.spec" --top 1 --variants 0 --out "$tmp/api" >"$tmp/api.log" 2>&1 || rc=$?
  [ "$rc" = 1 ] && grep -q "^$tmp/api/$2/embed/$3.h: error: spec '$1' would get this embed's \
C API, $3 " "$tmp/api.log" && [ ! -e "$tmp/api/$1" ] ||
    { cat "$tmp/api.log"; fail "$1 beside $2: exit $rc, or written"; }
}
collides a_b a-b kas_a_b
collides s3d 3d kas_s3d
api_name a_b kas_a_b2 --name a_b2
"$KASGEN" "$tmp/a_b.spec" --top 1 --variants 0 --out "$tmp/api2" >"$tmp/api.log" 2>&1 &&
  grep -q "^kas_status kas_a_b(" "$tmp/api2/a_b/embed/kas_a_b.h" ||
  { cat "$tmp/api.log"; fail "a_b into another --out: not kas_a_b"; }
# A copy of a-b's own folder beside it (a backup) holds a-b.spec: the same name, the same API by
# design, so a-b generates again; a_b beside that copy still collides, at one of the two.
cp -r "$tmp/api/a-b" "$tmp/api/a-b.backup"
"$KASGEN" "$tmp/a-b.spec" --top 1 --variants 0 --out "$tmp/api" >"$tmp/api.log" 2>&1 ||
  { cat "$tmp/api.log"; fail "a-b beside a copy of its own folder: exit $?"; }
rc=0
"$KASGEN" "$tmp/a_b.spec" --top 1 --variants 0 --out "$tmp/api" >"$tmp/api.log" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "error: spec 'a_b' would get this embed's C API" "$tmp/api.log" ||
  { cat "$tmp/api.log"; fail "a_b beside a-b and its copy: exit $rc"; }
echo "names: all checks passed"
