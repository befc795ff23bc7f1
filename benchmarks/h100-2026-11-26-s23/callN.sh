#!/usr/bin/env bash
# Call N (session 23): the thread-split prototype (split/element_split.cu, second version) at 4, 8
# and 16 elements per block (64, 128, 256 threads): each checked at n = 1, 7, 1000003, 4194304
# and timed against the copy of the same run; memcheck and racecheck of EL = 8.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
d=benchmarks/h100-2026-11-26-s23/split
for el in 4 8 16; do
  nvcc -O3 -arch=sm_90 -lineinfo -DEL=$el -Xptxas -v -o /tmp/split_$el $d/element_split.cu > "$OUT/build_$el.txt" 2>&1
  /tmp/split_$el > "$OUT/run_$el.txt" 2>&1; echo "run rc=$?" >> "$OUT/run_$el.txt"
done
timeout 150 compute-sanitizer --tool memcheck /tmp/split_8 --check-only > "$OUT/memcheck_8.txt" 2>&1
echo "memcheck rc=$?" >> "$OUT/memcheck_8.txt"
timeout 150 compute-sanitizer --tool racecheck /tmp/split_8 --check-only > "$OUT/racecheck_8.txt" 2>&1
echo "racecheck rc=$?" >> "$OUT/racecheck_8.txt"
grep -h "registers" "$OUT"/build_*.txt; cat "$OUT"/run_*.txt
tail -n 2 "$OUT/memcheck_8.txt" "$OUT/racecheck_8.txt"
