#!/usr/bin/env bash
# Session 37: how the folders of the calls were made, on the host.
#   RUNS: the 34 runs of the H200 table (sessions 35 and 36: RUNS/<spec>/results.xml and
#   index.txt, unpacked from benchmarks/h200-2026-11-2[78]-s3[56]/); KASGEN: the binary.
#
# Calls 1-3 (gpu/s37/cal, kasgen at e849fd0): per spec S, the model calibrated on the other 33
# runs ranks S; its top 10 is timed.
#   bash prep.sh cal SPEC...
# Call 4 (gpu/s37/var, kasgen at e849fd0 plus the --variants change, default 5): the plain model's
# top 10 with five block shapes of the #1's costliest kernel.
#   bash prep.sh var SPEC...
set -eu
: "${RUNS:?the H200 runs}" "${KASGEN:?the kasgen binary}"
mode=$1; shift
spec_of() { sed -n '1s/.*spec [^ ]* (\(.*\)), [0-9]* calls.*/\1/p' "$RUNS/$1/index.txt"; }
for S in "$@"; do
  if [ "$mode" = cal ]; then
    ho=$(mktemp -d)
    for d in "$RUNS"/*/; do
      o=$(basename "$d"); [ "$o" = "$S" ] && continue
      mkdir -p "$ho/runs/$o"; cp "$d/results.xml" "$d/index.txt" "$ho/runs/$o/"
    done
    cp benchmarks/nvidia-h200.xml "$ho/db.xml"
    "$KASGEN" calibrate "$ho/runs" --db "$ho/db.xml" >"$ho/calibrate.log"
    "$KASGEN" "$(spec_of "$S")" --db "$ho/db.xml" --top 10 --out gpu/s37/cal >/dev/null
    rm -rf "$ho"
  else
    "$KASGEN" "$(spec_of "$S")" --db benchmarks/nvidia-h200.xml --top 10 --out gpu/s37/var >/dev/null
  fi
done
