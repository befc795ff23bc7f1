#!/usr/bin/env bash
# embed_errors.sh — the embed's CUDA errors as its header and docs/generated.md ("CUDA errors")
# say, with no GPU:
#   - the embed's launches are cudaLaunchKernelEx, whose return is the launch's own error, and
#     nothing in it reads or clears the thread's pending error (cudaGetLastError,
#     cudaPeekAtLastError); candNN/kernels.cu keeps <<<...>>> and cudaGetLastError (the code
#     digest of results files is of that text);
#   - the header declares kas_<stem>_last_cuda_error and compiles as C99, warning-free;
#   - KAS_ERR_INVALID's texts name ld below n only in an API that takes ld;
#   - tests/fem_driver/embed_errors_fake.c, linked with the embed's object (nvcc, chunks of 2^10)
#     and fake_cudart.c instead of the CUDA runtime, passes: a call after the caller's failed
#     cudaMalloc returns KAS_OK and leaves that error pending; a failed launch gives
#     KAS_ERR_CUDA and its cause, per thread, 0 again after a call that returns anything else;
#     a corrupted context fails every call with its error.  The embed of the generator before
#     fails it (KAS_ERR_CUDA after the caller's failed cudaMalloc, the pending error cleared);
#   - the GPU programs of `make -C tests/fem_driver errors` build (they run on a GPU only).
# For single precision element-major and double precision component-major (ld) embeds.
set -eu
: "${KASGEN:?set KASGEN to the kasgen binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
NVCC=${NVCC:-$(tools/find-nvcc.sh 2>/dev/null || true)} # tools/find-nvcc.sh decides
[ -x "$NVCC" ] || fail "no nvcc (make deps installs one)"
cflags="-O2 -std=c11 -Wall -Wextra -Werror"

# check NAME [kasgen options]: stvenant generated into $tmp/NAME, checked and run on the fake.
check() {
  local name=$1
  shift
  "$KASGEN" specs/stvenant.spec --top 1 --variants 0 --out "$tmp/$name" "$@" \
    >"$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log"; fail "$name: kasgen"; }
  local gen=$tmp/$name/stvenant cu=$tmp/$name/stvenant/embed/kas_stvenant.cu
  local h=$tmp/$name/stvenant/embed/kas_stvenant.h
  grep -q 'cudaLaunchKernelEx(&kas_config1, ' "$cu" || fail "$name: no cudaLaunchKernelEx"
  ! grep -n '<<<\|cudaGetLastError\|cudaPeekAtLastError' "$cu" ||
    fail "$name: the embed launches with <<<...>>> or reads the pending error"
  grep -q '_k1<<<' "$gen/cand01/kernels.cu" && grep -q 'err = cudaGetLastError();' \
    "$gen/cand01/kernels.cu" || fail "$name: kernels.cu's launches changed (the code digest)"
  grep -qx 'int kas_stvenant_last_cuda_error(void);' "$h" || fail "$name: no last_cuda_error"
  grep -q 'cudaGetLastError() says why' "$h" && fail "$name: the header's old promise"
  # KAS_ERR_INVALID's texts (the header's enum, status_string) say "ld below n" only in an API
  # that takes ld: an element-major one said it too
  local want=0 said
  grep -q '^#define KAS_STVENANT_LD 1 ' "$h" && want=2
  said=$(cat "$h" "$cu" | grep -c 'ld below n' || true)
  [ "$said" = "$want" ] || fail "$name: 'ld below n' $said times, wanted $want"
  printf '#define KAS_EMBED_GENERIC\n#include "kas_stvenant.h"\n' >"$tmp/$name-c99.c"
  gcc -std=c99 -pedantic -Wall -Wextra -Werror -I"$gen/embed" -c -o /dev/null \
    "$tmp/$name-c99.c" || fail "$name: the header does not compile as C99"
  make -C tests/fem_driver GEN="$gen" BUILD_DIR="$tmp/$name-build" NVCC="$NVCC" \
    CFLAGS="$cflags" errors-fake >"$tmp/$name.fake" 2>&1 ||
    { tail -30 "$tmp/$name.fake"; fail "$name: embed_errors_fake"; }
  grep -q '^embed_errors_fake stvenant: PASS$' "$tmp/$name.fake" ||
    { tail -30 "$tmp/$name.fake"; fail "$name: embed_errors_fake did not pass"; }
  local cxx
  cxx=$(nm -u "$tmp/$name-build/kas_stvenant_chunks.o" | grep -E ' (_Z|__cxa_|__gxx_|_Unwind_)' ||
    true)
  [ -z "$cxx" ] || fail "$name: the embed needs libstdc++: $cxx"
  make -C tests/fem_driver GEN="$gen" BUILD_DIR="$tmp/$name-build" NVCC="$NVCC" \
    CFLAGS="$cflags" "$tmp/$name-build/embed_errors" "$tmp/$name-build/embed_errors_wrong_arch" \
    >"$tmp/$name.gpu" 2>&1 || { tail -30 "$tmp/$name.gpu"; fail "$name: the GPU programs"; }
  echo "$name: embed_errors_fake passes; the GPU programs build"
}

check single
check double --precision double --layout component
grep -q 'size_t ld' "$tmp/double/stvenant/embed/kas_stvenant.h" || fail "double: no ld"

# A winner of more than 48 KB of shared memory raises its kernels' limit on the first call only
# (cudaFuncSetAttribute clears a pending error; emit_smem_optin), and its header and its launch
# functions' comments say so; one that needs no opt-in says nothing of it.
"$KASGEN" specs/stvenant_element.spec --top 1 --variants 0 --out "$tmp/big" >/dev/null 2>&1 ||
  fail "element: kasgen"
big=$tmp/big/stvenant_element/embed
grep -q 'but for the first call in a process' "$big/kas_stvenant_element.h" ||
  fail "element: the header does not say the first call's exception"
grep -q 'if (kas_attr1.maxDynamicSharedSizeBytes < ' "$big/kas_stvenant_element.cu" ||
  fail "element: the limit is raised on every call"
grep -q 'but for the first call in a process, whose cudaFuncSetAttribute' \
  "$big/kas_stvenant_element.cu" || fail "element: the launch does not say the exception"
grep -q 'first call in a process' "$tmp/single/stvenant/embed/kas_stvenant".{h,cu} &&
  fail "stvenant: an exception its winner does not have"
echo "element: the opt-in on the first call only, said in the header and the launch"
