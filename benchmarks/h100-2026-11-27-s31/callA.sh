#!/usr/bin/env bash
# Call A (session 31): hand-edited variants of the element's kernel of 4 groups (kasgen
# specs/stvenant_element.spec --loops groups --top 1 at 46b91a7, cand01), harnesses built on the
# host with the same CUDA 13.0 (edit.py beside this script makes them from v0):
#   v0 as generated; v1 ten4Help1's one copy by every thread with cp.async (kas_stage_in) at the
#   start; v2 v1 + matTangent staged over ten4Help1's dead copy (43 KB, a barrier after
#   ttmul411); v3 v2 + __launch_bounds__(256, 5); v4 v1 + matTangent saved straight (no
#   staging, 26.9 KB); v5 v4 + __launch_bounds__(256, 6).
set -u
export PATH=/usr/local/cuda/bin:$PATH
tar -xJf gpu-pack.tar.xz
for v in v0 v1 v2 v3 v4 v5; do
  echo "== $v"
  (cd exp/$v && ./build/harness --sizes 1,7,1000003,4194304 2>&1 | tail -4)
  (cd exp/$v && ./build/harness --rounds 3 > "$OUT/$v.txt" 2>&1; grep -E "cand01|copy" "$OUT/$v.txt" | head -6)
done
for v in v1 v2 v4; do
  for tool in memcheck racecheck; do
    (cd exp/$v && timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 ./build/harness --check-only --n 10007 > "$OUT/$v.$tool.txt" 2>&1; echo "$v $tool exit $?"; tail -2 "$OUT/$v.$tool.txt")
  done
done
for v in v0 v2 v4; do
  (cd exp/$v && timeout 100 ncu --kernel-name kas_cand01_k1 --launch-skip 2 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats ./build/harness N=4194304 --reps 1 --rounds 1 > "$OUT/ncu_$v.txt" 2>&1; grep -E "Duration|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued" "$OUT/ncu_$v.txt" | head -12)
done
