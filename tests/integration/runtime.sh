#!/usr/bin/env bash
# runtime.sh — the programs kasgen writes into generated folders are real source files in
# src/runtime/, and this test holds them to that: each compiles as it is, warning-free (g++ for
# the host ones, nvcc -arch=sm_90 for the CUDA ones, against the headers a generated folder gives
# them), and what kasgen writes is byte for byte that file (they are embedded at build time).
# harness.cu and check_gpu.cu include one file for their check and timing code (kas_gpu.h).
set -u
: "${KASGEN:?set KASGEN to the kasgen binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
NVCC=${NVCC:-$(tools/find-nvcc.sh 2>/dev/null || true)} # tools/find-nvcc.sh decides
rt=src/runtime

"$KASGEN" specs/synctest.spec --top 2 --out "$tmp" >/dev/null 2>&1 || fail "kasgen synctest"
"$KASGEN" bench --out "$tmp/bench" >/dev/null 2>&1 || fail "kasgen bench"
common="$tmp/synctest/common"

# What kasgen writes is the file in the repository.
for f in harness.cu check_cpu.cpp kas_check.h kas_gpu.h kas_host.h kas_random.h; do
  cmp -s "$rt/$f" "$common/$f" || fail "common/$f differs from $rt/$f"
done
for f in bench_main.cu bench_common.h; do
  cmp -s "$rt/$f" "$tmp/bench/$f" || fail "bench/$f differs from $rt/$f"
done

# Shared code, not copies: both GPU programs include kas_gpu.h and define no timing of their own.
for f in harness.cu check_gpu.cu; do
  grep -q '#include "kas_gpu.h"' "$rt/$f" || fail "$f does not include kas_gpu.h"
  grep -q 'cudaEventCreate\|cudaEventElapsedTime' "$rt/$f" && fail "$f times by itself"
done
grep -q 'kas_time_ms' "$rt/kas_gpu.h" || fail "kas_gpu.h has no timing"

# Host programs and headers: g++, every warning an error.
gxx=(g++ -std=c++17 -Wall -Wextra -Werror -DKAS_HOST -I "$common" -fsyntax-only)
"${gxx[@]}" "$rt/check_cpu.cpp" || fail "check_cpu.cpp does not compile warning-free"
for h in kas_check.h kas_host.h kas_random.h; do
  "${gxx[@]}" -x c++ "$rt/$h" || fail "$h does not compile warning-free"
done
gcc -std=c11 -Wall -Wextra -Werror -fsyntax-only -x c "$rt/kas_check.h" ||
  fail "kas_check.h is not plain C"

# CUDA programs: nvcc -arch=sm_90, host compiler and nvcc warnings as errors.
if [ -x "$NVCC" ]; then
  nv=("$NVCC" -arch=sm_90 -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror -c)
  "${nv[@]}" -I "$common" -o "$tmp/harness.o" "$rt/harness.cu" ||
    fail "harness.cu does not compile warning-free"
  "${nv[@]}" -I "$common" -o "$tmp/check_gpu.o" "$rt/check_gpu.cu" ||
    fail "check_gpu.cu does not compile warning-free"
  "${nv[@]}" -I "$tmp/bench" -o "$tmp/bench_main.o" "$rt/bench_main.cu" ||
    fail "bench_main.cu does not compile warning-free"
else
  echo "note: no nvcc; the CUDA programs were not compiled" >&2
fi

if ((fails)); then echo "$fails failure(s)"; exit 1; fi
echo "runtime: every program of src/runtime compiles warning-free and is what kasgen writes"
