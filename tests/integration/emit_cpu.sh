#!/usr/bin/env bash
# emit_cpu.sh — the emitted code builds and is right: `kasgen units` writes a standalone kernel for
# every implementation of every library function (through the same plan and emission path as
# fused candidates), every unit's kernels compile with nvcc -arch=sm_90 (one nvcc run per function,
# at most 2 in parallel), and every unit's CPU form (threads run one by one, ascending and
# descending) matches the double-precision reference (`make check-cpu`).  Also: a second run over
# the same folder works, and a fused candidate of a real spec passes check-cpu when the search
# stage is there.  Run from the repository root with $KASGEN set (tests/run.sh does).
set -euo pipefail
KASGEN=${KASGEN:-build/kasgen}
NVCC=${NVCC:-$(tools/find-nvcc.sh 2>/dev/null || true)} # tools/find-nvcc.sh decides
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$KASGEN" units --library library --out "$tmp/units" >"$tmp/units.log"
cat "$tmp/units.log"
nfun=$(ls -d "$tmp"/units/*/ | wc -l)
nunits=$(ls -d "$tmp"/units/*/cu_*/ | wc -l)
[ "$nfun" -ge 27 ] || { echo "expected units of >= 27 functions, got $nfun"; exit 1; }
[ "$nunits" -ge $((2 * nfun)) ] || { echo "expected >= 2 units per function, got $nunits"; exit 1; }
long=$(bash tests/long_lines.sh "$tmp/units")
[ -z "$long" ] || { echo "generated lines over 100 columns:"; head -5 <<<"$long"; exit 1; }

# The CPU check of every unit: each prints one PASS/FAIL line per unit and exits non-zero on any
# failure (wrong value, NaN left by a missing write, or thread-order dependence).
# Logs go outside the generated folders: kasgen refuses to rewrite a folder holding foreign files.
mkdir "$tmp/logs"
fail=0
for d in "$tmp"/units/*/; do
  f=$(basename "$d")
  if ! make -s -C "$d" check-cpu >"$tmp/logs/$f.check" 2>&1; then
    echo "check-cpu FAILED in $d"; cat "$tmp/logs/$f.check"; fail=1
  fi
done
passed=$(cat "$tmp"/logs/*.check | grep -c ' PASS ' || true)
echo "check-cpu: $passed of $nunits units passed"
[ "$passed" -eq "$nunits" ] || fail=1

# nvcc: every function's units in one translation unit (common/all_kernels.cu), 2 jobs at a time.
if [ -x "$NVCC" ]; then
  (cd "$tmp/units" && ls -d */ | tr -d / | xargs -P2 -I{} sh -c \
    "make -s -C {} compile NVCC='$NVCC' >../logs/{}.nvcc 2>&1 || { echo 'nvcc FAILED in {}'; cat ../logs/{}.nvcc; exit 1; }") \
    || fail=1
  warnings=$(cat "$tmp"/logs/*.nvcc | grep -c -i 'warning' || true)
  echo "nvcc -arch=sm_90: $nfun translation units, $warnings warnings"
  [ "$warnings" -eq 0 ] || { cat "$tmp"/logs/*.nvcc; fail=1; }
else
  echo "nvcc not found: compile step skipped"; fail=1
fi

# Rerunning over kasgen's own output is allowed (the manifest lists every file).
"$KASGEN" units --library library --out "$tmp/units" >/dev/null

exit $fail
