#!/usr/bin/env bash
# Call C (session 31): why call B's kernel of 4 groups (522b95a) ran at 83% of copy where call
# A's hand-edited v1 ran at 99.8%.  The two differ in the plan's barrier before ttmul411 (v1
# kept it; 522b95a makes none, no step writing shared memory) and in the order of the two
# staged copies.  From `kasgen specs/stvenant_element.spec --loops groups --top 1` at 522b95a
# (w0), edit2.py beside this script makes: w1 the barrier back; w2 ten4Help1's copy issued
# first; w3 both.  v1 is call A's harness.  Each timed twice, interleaved (--rounds 3), then
# Nsight Compute on w0 and w1.
set -u
export PATH=/usr/local/cuda/bin:$PATH
tar -xJf gpu-pack.tar.xz
for pass in 1 2; do
  for v in v1 w0 w1 w2 w3; do
    (cd exp2/$v && ./build/harness --rounds 3 > "$OUT/$v.$pass.txt" 2>&1
     echo "$pass $v $(grep -E '^cand01' "$OUT/$v.$pass.txt" | awk '{print $4, $7}')")
  done
done
for v in w0 w1; do
  (cd exp2/$v && ./build/harness --sizes 1,7,1000003 2>&1 | tail -1)
  (cd exp2/$v && timeout 100 ncu --kernel-name kas_cand01_k1 --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
    ./build/harness N=4194304 --reps 1 --rounds 1 > "$OUT/ncu_$v.txt" 2>&1
   grep -E "Duration|DRAM Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Warp Cycles Per Issued|Stall" "$OUT/ncu_$v.txt" | head -14)
done
