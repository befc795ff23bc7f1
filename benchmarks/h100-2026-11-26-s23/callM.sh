#!/usr/bin/env bash
# Call M (session 23): the thread-split prototype, second version of the StVenant element
# (split/element_split.cu): checked at n = 1, 7, 1000003, 4194304 against its float64 reference,
# timed against the copy bandwidth of the same run, then memcheck and racecheck (--check-only).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
d=benchmarks/h100-2026-11-26-s23/split
nvcc -O3 -arch=sm_90 -lineinfo -Xptxas -v -o /tmp/split $d/element_split.cu > "$OUT/build.txt" 2>&1
/tmp/split > "$OUT/run.txt" 2>&1; echo "run rc=$?" >> "$OUT/run.txt"
timeout 200 compute-sanitizer --tool memcheck /tmp/split --check-only > "$OUT/memcheck.txt" 2>&1
echo "memcheck rc=$?" >> "$OUT/memcheck.txt"
timeout 200 compute-sanitizer --tool racecheck /tmp/split --check-only > "$OUT/racecheck.txt" 2>&1
echo "racecheck rc=$?" >> "$OUT/racecheck.txt"
cat "$OUT/build.txt" "$OUT/run.txt"; tail -3 "$OUT/memcheck.txt" "$OUT/racecheck.txt"
