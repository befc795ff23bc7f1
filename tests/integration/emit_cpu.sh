#!/usr/bin/env bash
# emit_cpu.sh — the emitted code builds and is right: `kasgen units` writes a standalone kernel for
# every implementation of every library function (through the same plan and emission path as
# fused candidates), in single and in double precision; every unit's kernels compile with nvcc
# -arch=sm_90 (one nvcc run per function and precision, at most 2 in parallel), and every unit's
# CPU form (threads run one by one, ascending and descending, on whole arrays and on a sub-range
# whose pointers are aligned to their type only) matches the double-precision reference (`make
# check-cpu`: 1e-5 normwise in single precision, 1e-12 in double).  Also: a second run over the
# same folder works.  Run from the repository root with $KASGEN set (tests/run.sh does).
set -euo pipefail
KASGEN=${KASGEN:-build/kasgen}
NVCC=${NVCC:-$(tools/find-nvcc.sh 2>/dev/null || true)} # tools/find-nvcc.sh decides
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check_units() { # precision
  local units="$tmp/units-$1" logs="$tmp/logs-$1" fail=0
  "$KASGEN" units --library library --precision "$1" --out "$units" >"$tmp/units.log"
  cat "$tmp/units.log"
  nfun=$(ls -d "$units"/*/ | wc -l)
  nunits=$(ls -d "$units"/*/cu_*/ | wc -l)
  [ "$nfun" -ge 27 ] || { echo "expected units of >= 27 functions, got $nfun"; return 1; }
  [ "$nunits" -ge $((2 * nfun)) ] || { echo "expected >= 2 units per function, got $nunits"; return 1; }
  long=$(bash tests/long_lines.sh "$units")
  [ -z "$long" ] || { echo "generated lines over 100 columns:"; head -5 <<<"$long"; return 1; }
  grep -q "typedef $([ "$1" = double ] && echo double || echo float) kas_real;" \
    "$units/mmul33/common/kas_candidates.h" || { echo "$1 units: wrong kas_real"; return 1; }

  # The CPU check of every unit: each prints one PASS/FAIL line per unit and exits non-zero on
  # any failure (wrong value, NaN left by a missing write, or thread-order dependence).
  # Logs go outside the generated folders: kasgen refuses to rewrite a folder holding foreign
  # files.
  mkdir "$logs"
  for d in "$units"/*/; do
    f=$(basename "$d")
    if ! make -s -C "$d" check-cpu >"$logs/$f.check" 2>&1; then
      echo "check-cpu FAILED in $d"; cat "$logs/$f.check"; fail=1
    fi
  done
  passed=$(cat "$logs"/*.check | grep -c ' PASS ' || true)
  echo "check-cpu, $1 precision: $passed of $nunits units passed"
  [ "$passed" -eq "$nunits" ] || fail=1

  # nvcc: every function's units in one translation unit (common/all_kernels.cu), 2 jobs at a
  # time.
  if [ -x "$NVCC" ]; then
    (cd "$units" && ls -d */ | tr -d / | xargs -P2 -I{} sh -c \
      "make -s -C {} compile NVCC='$NVCC' >$logs/{}.nvcc 2>&1 || { echo 'nvcc FAILED in {}'; cat $logs/{}.nvcc; exit 1; }") \
      || fail=1
    warnings=$(cat "$logs"/*.nvcc | grep -c -i 'warning' || true)
    echo "nvcc -arch=sm_90, $1 precision: $nfun translation units, $warnings warnings"
    [ "$warnings" -eq 0 ] || { cat "$logs"/*.nvcc; fail=1; }
  else
    echo "nvcc not found: compile step skipped"; fail=1
  fi
  return $fail
}

fail=0
check_units single || fail=1
check_units double || fail=1

# ARCH= in a units folder (built above): the same ARCH runs no nvcc, another rebuilds with it.
if [ -x "$NVCC" ]; then
  u="$tmp/units-single/venorm3"
  n=$(make -C "$u" compile NVCC="$NVCC" 2>&1 | grep -c -- '-arch=' || true)
  [ "$n" -eq 0 ] || { echo "units: make compile with the same ARCH ran nvcc $n times"; fail=1; }
  out=$(make -C "$u" compile NVCC="$NVCC" ARCH=sm_80 2>&1) # not piped into grep -q: pipefail
  [[ "$out" == *"-arch=sm_80"* ]] || { echo "$out"; echo "units: ARCH=sm_80 did not rebuild"; fail=1; }
fi

# Rerunning over kasgen's own output is allowed (the manifest lists every file).
"$KASGEN" units --library library --out "$tmp/units-single" >/dev/null

exit $fail
