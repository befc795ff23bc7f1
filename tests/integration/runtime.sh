#!/usr/bin/env bash
# runtime.sh — the programs kasgen writes into generated folders are real source files in
# src/runtime/, and this test holds them to that: each compiles as it is, warning-free (g++ for
# the host ones, nvcc -arch=sm_90 for the CUDA ones, against the headers a generated folder gives
# them), and what kasgen writes is byte for byte that file (they are embedded at build time).
# harness.cu and check_gpu.cu include one file for their check and timing code (kas_gpu.h).
# With nvcc, harness.cu's results.xml is also written on the host and read back by kasgen, and
# its table, printed on the host for the element of 128 calls, fits 80 columns.
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
  nv_link=("$NVCC" -arch=sm_90 -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror)
  nv=("${nv_link[@]}" -c)
  "${nv[@]}" -I "$common" -o "$tmp/harness.o" "$rt/harness.cu" ||
    fail "harness.cu does not compile warning-free"
  "${nv[@]}" -I "$common" -o "$tmp/check_gpu.o" "$rt/check_gpu.cu" ||
    fail "check_gpu.cu does not compile warning-free"
  "${nv[@]}" -I "$tmp/bench" -o "$tmp/bench_main.o" "$rt/bench_main.cu" ||
    fail "bench_main.cu does not compile warning-free"
  # The results.xml harness.cu writes is one kasgen reads, saying what the code was generated
  # for: its writer run on the host (no GPU needed) for a double-precision component-major
  # folder, then calibrate on the file copied out of its folder finds every row only by
  # searching as <run> says (it would search single precision, element-major, and find none).
  dc="$tmp/dc/synctest"
  "$KASGEN" specs/synctest.spec --top 4 --precision double --layout component \
    --db benchmarks/nvidia-h100-80gb-hbm3.xml --out "$tmp/dc" >/dev/null 2>&1 ||
    fail "kasgen synctest, double component-major"
  cat >"$tmp/write_xml.cu" <<'EOF2'
/* write_xml.cu — the folder's harness.cu writing results.xml on the host, of made-up rows. */
#define main harness_main
#include "harness.cu"
#undef main
int main() {
  Row rows[KAS_NCANDIDATES] = {};
  for (int c = 0; c < KAS_NCANDIDATES; c++) {
    rows[c].measured_rank = kas_candidates[c].predicted_rank;
    rows[c].correct = 1;
    rows[c].ns_per_elem = rows[c].round_min_ns = rows[c].round_max_ns = 0.05 + 0.01 * c;
  }
  write_xml("synctest.xml", "NVIDIA H100 80GB HBM3", 3000, 1000, 0, 30, 5, 1, rows, 1);
  return 0;
}
EOF2
  b="$dc/build"
  mkdir -p "$tmp/runs"
  if make -C "$dc" build/harness NVCC="$NVCC" >"$tmp/dc.log" 2>&1 &&
    "$NVCC" -arch=sm_90 -I "$dc/common" -o "$tmp/write_xml" "$tmp/write_xml.cu" \
      "$b"/cand0*/kernels.o "$b/unfused/kernels.o" "$b/common/cpu_graph.o" \
      "$b/common/kas_refs.o" >>"$tmp/dc.log" 2>&1 &&
    (cd "$tmp/runs" && "$tmp/write_xml"); then
    grep -q '<run .* precision="double" layout="component" ' "$tmp/runs/synctest.xml" ||
      fail "harness.cu's <run> does not say double precision, component-major"
    cp benchmarks/nvidia-h100-80gb-hbm3.xml "$tmp/db.xml"
    "$KASGEN" calibrate "$tmp/runs" --db "$tmp/db.xml" >"$tmp/cal.out" 2>"$tmp/cal.err" &&
      grep -q 'runs/synctest.xml: 4 measured candidates of synctest$' "$tmp/cal.out" ||
      { cat "$tmp/cal.out" "$tmp/cal.err"; fail "calibrate did not find the harness's rows"; }
  else
    tail -20 "$tmp/dc.log"
    fail "harness.cu's results.xml could not be written on the host"
  fi
  # The harness's table fits a terminal for the element of 128 calls, whose lines were 165
  # characters (81 of figures, then up to 80 of kernels): its print_table run on the host, of
  # made-up rows, the candidates' entry points stubs (the table launches nothing).  No line over
  # 80 columns; each candidate's kernels on the line under its figures, a wrong one's flagged.
  el="$tmp/el/stvenant_element"
  "$KASGEN" specs/stvenant_element.spec --top 2 --out "$tmp/el" >/dev/null 2>&1 ||
    fail "kasgen stvenant_element"
  stubs=$(sed -n 's/^int kas_\([a-z0-9_]*\)_launch(.*/STUB(\1)/p' "$el/common/kas_candidates.h")
  cat >"$tmp/table.cu" <<EOF2
/* table.cu — the folder's harness.cu printing its table on the host, of made-up rows. */
#define main harness_main
#include "harness.cu"
#undef main
#define STUB(c) \\
  size_t kas_##c##_workspace_bytes(size_t) { return 0; } \\
  int kas_##c##_launch(const kas_real *const *, kas_real *const *, void *, size_t, size_t, \\
                       cudaStream_t) { return 0; }
extern "C" { $stubs }
int main() {
  Row rows[KAS_NCANDIDATES] = {};
  for (int c = 0; c < KAS_NCANDIDATES; c++) {
    rows[c].measured_rank = kas_candidates[c].predicted_rank;
    rows[c].correct = c != 1;
    rows[c].ns_per_elem = 0.3 + 0.01 * c;
  }
  print_table("NVIDIA H200", 4143.2, 4194304, 1, rows, 1);
  return 0;
}
EOF2
  if make -C "$el" build/common/cpu_graph.o build/common/kas_refs.o >"$tmp/el.log" 2>&1 &&
    "${nv_link[@]}" -I "$el/common" -o "$tmp/table" "$tmp/table.cu" \
      "$el/build/common/cpu_graph.o" "$el/build/common/kas_refs.o" >>"$tmp/el.log" 2>&1 &&
    "$tmp/table" >"$tmp/table.out"; then
    long=$(awk 'length($0) > 80' "$tmp/table.out")
    [ -z "$long" ] || fail "the harness's table has lines over 80 columns: $(head -1 <<<"$long")"
    grep -A1 '^cand01 ' "$tmp/table.out" |
      grep -qx '          mvmul33_1+svmul3_1+[^ ]*+...+madd33_1 (128 calls)' ||
      { cat "$tmp/table.out"; fail "the harness's table: cand01's kernels not under its figures"; }
    grep -A1 '^cand02 ' "$tmp/table.out" | grep -q '^WRONG     mvmul33_1+' ||
      fail "the harness's table: the wrong candidate not flagged"
    grep -qx 'precision single, layout element' "$tmp/table.out" ||
      fail "the harness's table: no precision and layout"
  else
    tail -20 "$tmp/el.log"
    fail "harness.cu's table could not be printed on the host"
  fi
else
  echo "note: no nvcc; the CUDA programs were not compiled" >&2
fi

if ((fails)); then echo "$fails failure(s)"; exit 1; fi
echo "runtime: every program of src/runtime compiles warning-free and is what kasgen writes"
