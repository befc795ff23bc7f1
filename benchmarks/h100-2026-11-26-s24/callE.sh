#!/usr/bin/env bash
# Call E (session 24): where gradients_loop20's candidates 15-30 lose 2.5-3x against the model
# (calls C and D): Nsight Compute's DRAM and L2 traffic of cand01 (one kernel, measured as
# predicted), cand15 (kernel 1 writes Kd[0..2], kernel 2 writes Kd[3] of the 36-real records)
# and cand16, at n = 1048576 (--check-only), from the call-D folder (gpu/tune, carried packed).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
tar -xJf gpu-pack.tar.xz
mkdir -p $OUT/e
cd gpu/tune/gradients_loop20
make -j16 build/harness > $OUT/e/build.log 2>&1 || { tail -5 $OUT/e/build.log; exit 1; }
for c in 01:1 15:2 16:2; do
  timeout 120 ncu --kernel-name regex:"kas_cand${c%:*}_k[0-9]" --launch-count "${c#*:}" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read.sum,gpu__time_duration.sum \
    ./build/harness --check-only N=1048576 > "$OUT/e/ncu_cand${c%:*}.txt" 2>&1
  echo "cand${c%:*}: $(grep -c 'kas_cand' "$OUT/e/ncu_cand${c%:*}.txt") kernel reports"
done
cd $OUT && tar czf e.tar.gz e && rm -rf e
