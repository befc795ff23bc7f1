#!/usr/bin/env bash
# Call 1 (session 28): the pairs micro-benchmark (pairs/pairs.cu): a sector shared by two warps
# written whole by whichever finishes second (no waiting), and loads with an L2 256-byte hint,
# in the shapes of session 24's seams; then its checks under compute-sanitizer.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
d=benchmarks/h100-2026-11-27-s28/pairs
nvcc -O3 -arch=sm_90 -lineinfo -o /tmp/pairs $d/pairs.cu || exit 1
/tmp/pairs | tee "$OUT/pairs_call1.txt"
for t in memcheck racecheck synccheck; do
  compute-sanitizer --tool $t --error-exitcode 9 /tmp/pairs quick > "$OUT/pairs_$t.txt" 2>&1
  echo "$t rc=$? $(tail -1 "$OUT/pairs_$t.txt")"
done
