#!/usr/bin/env bash
# Call K (session 23): where stvenant_element's fused kernels lose to the copy (issue #11, 64.9%
# of copy in session 22).  The folder of `kasgen specs/stvenant_element.spec --top 10` at 8cde172
# (gpu/K, harness built on the host, carried packed as gpu-pack.tar.xz): the timed table at
# n = 4194304, then Nsight Compute on the first four candidates' kernels at n = 1048576 (one
# launch each: --check-only): throughput, occupancy, launch statistics, memory workload, warp
# states.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
tar -xJf gpu-pack.tar.xz
cd gpu/K/stvenant_element
./build/harness N=4194304 > "$OUT/run.log" 2>&1; cp results.xml "$OUT/" 2>/dev/null
timeout 300 ncu --kernel-name regex:'kas_cand0[1-4]_(aligned_)?k[0-9]' --launch-count 12 \
  --section SpeedOfLight --section Occupancy --section LaunchStats \
  --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
  ./build/harness --check-only N=1048576 > "$OUT/ncu.txt" 2>&1
tail -5 "$OUT/ncu.txt"
grep -c "kas_cand" "$OUT/ncu.txt"
