#!/usr/bin/env bash
# Call E (session 30): Nsight Compute on the element's kernel of 4 groups (call D's
# grp/stvenant_element, cand01, 64a36dc's code; harness built on the host, carried as
# gpu-pack.tar.xz): occupancy, its limiter, DRAM throughput and warp stalls, one launch at
# n = 4194304, and the same for cand02 (16 groups of (N, M)).
set -u
export PATH=/usr/local/cuda/bin:$PATH
tar -xJf gpu-pack.tar.xz
cd gpu30/grp/stvenant_element || exit 1
for k in kas_cand01_k1 kas_cand02_k1; do
  timeout 250 ncu --kernel-name "$k" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    ./build/harness N=4194304 --reps 1 --rounds 1 > "$OUT/ncu_$k.txt" 2>&1
  echo "$k: exit $?"
  grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Shared Memory Configuration Size|Dynamic Shared|Stall|Warp Cycles Per Issued" "$OUT/ncu_$k.txt" | head -30
done
