#!/usr/bin/env bash
# Call B (session 24): why chain55_8's candidates 24-28 run 30-72% slower than the model predicts
# (issue #14; session 22's held-out run).  The folder of `kasgen benchmarks/specs/chain55_8.spec
# --top 30 --ptxas` at 84a39fc (the same 30 candidates as session 22's; gpu/B, harness built on
# the host, carried packed as gpu-pack.tar.xz): the timed table at n = 4194304, then Nsight
# Compute on the kernels of cand01, cand08, cand23 (measured as predicted) and cand24, cand25,
# cand26 (mispredicted), one candidate at a time (--check-only, n = 1048576).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
tar -xJf gpu-pack.tar.xz
cd gpu/B/chain55_8
./build/harness N=4194304 --rounds 5 > "$OUT/run.log" 2>&1; cp results.xml "$OUT/" 2>/dev/null
for c in 01:1 08:2 23:3 24:2 25:2 26:3; do
  timeout 120 ncu --kernel-name regex:"kas_cand${c%:*}_k[0-9]" --launch-count "${c#*:}" \
    --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    --section WarpStateStats \
    ./build/harness --check-only N=1048576 > "$OUT/ncu_cand${c%:*}.txt" 2>&1
  echo "cand${c%:*}: $(grep -c 'kas_cand' "$OUT/ncu_cand${c%:*}.txt") kernel reports"
done
