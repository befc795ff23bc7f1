#!/usr/bin/env bash
# embed_build.sh — a FEM code's build uses the embedded winner as the README and
# docs/generated.md say, with no GPU (the programs run: every call they make is answered before
# any launch):
#   - `make embed` builds build/embed/libkas_<stem>.a, which needs nothing of libstdc++ (nm), so
#     a C program links with gcc and -lcudart only: by hand, through embed/kas_<stem>.pc
#     (pkg-config) and through embed/kas_<stem>.cmake (CMake);
#   - the generated Makefile rebuilds what nvcc built when ARCH changes, and only then;
#   - on a machine without a usable GPU (or with CUDA_VISIBLE_DEVICES=-1), `make run` says so
#     plainly and exits non-zero.
set -eu
: "${KASGEN:?set KASGEN to the kasgen binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
NVCC=${NVCC:-$(tools/find-nvcc.sh 2>/dev/null || true)} # tools/find-nvcc.sh decides
[ -x "$NVCC" ] || fail "no nvcc (make deps installs one)"
for tool in cmake pkg-config nm; do
  command -v "$tool" >/dev/null || fail "$tool not installed (make deps installs it)"
done
cuda_lib=${NVCC%/bin/nvcc}/lib64
export NVCC

"$KASGEN" specs/stvenant.spec --top 2 --out "$tmp" >"$tmp/kasgen.log" 2>&1 ||
  { cat "$tmp/kasgen.log"; fail "kasgen stvenant"; }
gen=$tmp/stvenant
for f in kas_stvenant.h kas_stvenant.cu kas_stvenant.pc kas_stvenant.cmake; do
  [ -s "$gen/embed/$f" ] || fail "embed/$f missing"
  grep -qx "embed/$f" "$gen/.kasgen-manifest" || fail "embed/$f not in the manifest"
done

# A C program standing for the FEM code: the calls that are checked before any launch.
cat >"$tmp/fem.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#define KAS_EMBED_GENERIC
#include "kas_stvenant.h"

int main(void) {
  const float *in[KAS_EMBED_NINPUTS];
  float *out[KAS_EMBED_NOUTPUTS];
  for (int i = 0; i < KAS_EMBED_NINPUTS; i++) in[i] = (const float *)(uintptr_t)(4096 + 2);
  for (int o = 0; o < KAS_EMBED_NOUTPUTS; o++) out[o] = (float *)(uintptr_t)8192;
  int ok = kas_embed_arrays(in, out, 0, NULL, NULL) == KAS_OK &&             /* n = 0: nothing */
           kas_embed_arrays(NULL, out, 5, NULL, NULL) == KAS_ERR_INVALID &&  /* no inputs */
           kas_embed_arrays(in, out, 5, NULL, NULL) == KAS_ERR_ALIGN &&      /* odd address */
           strstr(kas_embed_status_string(KAS_ERR_ALIGN), "aligned") != NULL;
  printf("%s\n", ok ? "fem: API answers as documented" : "fem: WRONG");
  return !ok;
}
EOF
# Runs the program $1 (built by $2); the loader must take libcudart from $NVCC's toolkit (the
# run path the build gave), not from wherever this machine happens to have another copy.
toolkit=$(realpath "${NVCC%/bin/nvcc}")
run_fem() {
  "$1" >"$tmp/fem.out" 2>&1 || { cat "$tmp/fem.out"; fail "$2: the program failed"; }
  grep -q 'API answers as documented' "$tmp/fem.out" || fail "$2: unexpected output"
  local cudart
  cudart=$(realpath "$(ldd "$1" | awk '/libcudart/ { print $3 }')")
  case $cudart in "$toolkit"/*) ;; *) fail "$2: libcudart from $cudart, not $toolkit" ;; esac
}

# make embed: the static library, free of C++ (nm), for ARCH=sm_90.
make -C "$gen" embed ARCH=sm_90 >"$tmp/embed1.log" 2>&1 || { cat "$tmp/embed1.log"; fail "make embed"; }
lib=$gen/build/embed/libkas_stvenant.a
[ -s "$lib" ] || fail "make embed made no $lib"
grep -q -- '-arch=sm_90 .*-fno-threadsafe-statics' "$tmp/embed1.log" || fail "make embed: nvcc line"
cxx=$(nm -u "$lib" | grep -E ' (_Z|__cxa_|__gxx_|_Unwind_)' || true)
[ -z "$cxx" ] || fail "libkas_stvenant.a needs libstdc++: $cxx"

# By hand: gcc and -lcudart only.
gcc -std=c11 -Wall -Wextra -Werror -I"$gen/embed" -o "$tmp/fem-gcc" "$tmp/fem.c" "$lib" \
  -L"$cuda_lib" -lcudart -Wl,-rpath,"$cuda_lib" 2>"$tmp/gcc.log" ||
  { cat "$tmp/gcc.log"; fail "gcc + -lcudart does not link the embed"; }
run_fem "$tmp/fem-gcc" "gcc + -lcudart"

# pkg-config, in one line; cudalibdir defaults to /usr/local/cuda/lib64.
pc() { PKG_CONFIG_PATH="$gen/embed" pkg-config "$@" kas_stvenant; }
[ "$(pc --variable=cudalibdir)" = /usr/local/cuda/lib64 ] || fail "pkg-config: cudalibdir default"
flags=$(pc --define-variable=cudalibdir="$cuda_lib" --cflags --libs) || fail "pkg-config"
# shellcheck disable=SC2086 # the flags are words
gcc -std=c11 -Wall -Wextra -Werror -o "$tmp/fem-pc" "$tmp/fem.c" $flags 2>"$tmp/pc.log" ||
  { cat "$tmp/pc.log"; fail "gcc with pkg-config's flags ($flags)"; }
run_fem "$tmp/fem-pc" pkg-config

# CMake: include() the snippet, link the target.
mkdir "$tmp/cmake-src"
cp "$tmp/fem.c" "$tmp/cmake-src/"
cat >"$tmp/cmake-src/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.18)
project(fem C)
include("$gen/embed/kas_stvenant.cmake")
add_executable(fem fem.c)
target_link_libraries(fem PRIVATE kas_stvenant)
EOF
cmake -S "$tmp/cmake-src" -B "$tmp/cmake-build" -DCMAKE_CUDA_COMPILER="$NVCC" \
  >"$tmp/cmake.log" 2>&1 || { tail -30 "$tmp/cmake.log"; fail "cmake configure"; }
cmake --build "$tmp/cmake-build" -j2 -v >"$tmp/cmake-build.log" 2>&1 ||
  { tail -30 "$tmp/cmake-build.log"; fail "cmake build"; }
grep -q -- '-fno-threadsafe-statics' "$tmp/cmake-build.log" || fail "cmake: nvcc flags"
run_fem "$tmp/cmake-build/fem" CMake

# ARCH: the same ARCH builds nothing; another rebuilds, once.
cp "$lib" "$tmp/lib-sm90.a"
make -C "$gen" embed ARCH=sm_90 >"$tmp/embed2.log" 2>&1 || fail "make embed (again)"
grep -q nvcc "$tmp/embed2.log" && { cat "$tmp/embed2.log"; fail "same ARCH: nvcc ran again"; }
make -C "$gen" embed ARCH=sm_80 >"$tmp/embed3.log" 2>&1 || { cat "$tmp/embed3.log"; fail "ARCH=sm_80"; }
grep -q -- "nvcc.* -arch=sm_80 .*embed/kas_stvenant.cu" "$tmp/embed3.log" ||
  { cat "$tmp/embed3.log"; fail "ARCH=sm_80 did not rebuild the embed"; }
cmp -s "$lib" "$tmp/lib-sm90.a" && fail "ARCH=sm_80: the library did not change"
make -C "$gen" embed ARCH=sm_80 >"$tmp/embed4.log" 2>&1 || fail "make embed ARCH=sm_80 (again)"
grep -q nvcc "$tmp/embed4.log" && { cat "$tmp/embed4.log"; fail "ARCH=sm_80 twice: nvcc ran again"; }

# No usable GPU: a plain sentence and a non-zero exit, not "CUDA driver version is insufficient".
# CUDA_VISIBLE_DEVICES=-1 hides the GPU of a machine that has one.
"$KASGEN" specs/synctest.spec --top 1 --out "$tmp" >/dev/null 2>&1 || fail "kasgen synctest"
rc=0
CUDA_VISIBLE_DEVICES=-1 make -C "$tmp/synctest" -j2 run >"$tmp/run.log" 2>&1 || rc=$?
[ -x "$tmp/synctest/build/harness" ] || { tail -20 "$tmp/run.log"; fail "make run built no harness"; }
[ "$rc" -ne 0 ] || fail "make run without a GPU exited 0"
grep -q '^harness: no CUDA GPU on this machine (cuda' "$tmp/run.log" ||
  { tail -5 "$tmp/run.log"; fail "make run without a GPU does not say so"; }
grep -q 'built but cannot run here' "$tmp/run.log" || fail "make run: no explanation"
grep -q 'driver version is insufficient' "$tmp/run.log" &&
  fail "make run: the runtime's misleading text"

echo "embed_build: libkas_stvenant.a free of libstdc++; linked by gcc + -lcudart, pkg-config and" \
  "CMake; ARCH change rebuilds; make run without a GPU says so (exit $rc)"
