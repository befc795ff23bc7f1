#!/usr/bin/env bash
# Call A (session 24): the seams micro-benchmark (seams/seams.cu): misaligned rows written from
# sectors without a block barrier, in kernels of 2 resident blocks; then its checks under
# compute-sanitizer memcheck, racecheck and synccheck.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
d=benchmarks/h100-2026-11-26-s24/seams
nvcc -O3 -arch=sm_90 -lineinfo -o /tmp/seams $d/seams.cu || exit 1
/tmp/seams | tee "$OUT/seams_callA.txt"
for t in memcheck racecheck synccheck; do
  compute-sanitizer --tool $t --error-exitcode 9 /tmp/seams quick > "$OUT/seams_$t.txt" 2>&1
  echo "$t rc=$? $(tail -1 "$OUT/seams_$t.txt")"
done
