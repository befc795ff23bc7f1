#!/usr/bin/env bash
# Session 39, call 1 on an H200: why a calibrated ranking's owner loads of 5x5 matrices ran
# slower than the model said (session 38: bigfusion's held-out #1, E = 32, 0.1042 ns against
# 0.0884 for E = 192).  Folders made on the host by prep1.sh: gpu/s39/<spec>, the top 12 of
# bigfusion and plate5_12 under their held-out constants of session 38 with --variants 8 (the #1
# in eight other block shapes), and plain/<spec> the same under the uncalibrated model, carried
# packed as gpu-pack.tar.xz.  Each folder is built, checked
# and timed by session 26's call script (ROUNDS rounds), then every kernel of every candidate is
# profiled once at n = 1048576 by Nsight Compute (duration, DRAM bytes, L1 hit rate, L2 sectors
# read from L1, occupancy and its limits, registers, stall reasons): ncu_<spec>.csv.
# The device tool returned the Nsight files of this call but not timing.tar.gz; the timings in
# call1/r.tar.gz are a second call of session 26's script alone on the same folders
# (ROUNDS=5 LIMIT=100 FOLDERS=gpu/s39/ ... bigfusion plate5_12 plain/bigfusion plain/plate5_12).
#   ROUNDS=5 bash benchmarks/h200-2026-11-28-s39/call1.sh bigfusion plate5_12 \
#     plain/bigfusion plain/plate5_12
set -u
export PATH=/usr/local/cuda/bin:$PATH
FOLDERS=gpu/s39/ bash "$(dirname "$0")/../h100-2026-11-27-s26/call.sh" "$@"
mv $OUT/r.tar.gz $OUT/timing.tar.gz
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
metrics=$metrics,l1tex__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum
metrics=$metrics,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
metrics=$metrics,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
metrics=$metrics,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
metrics=$metrics,launch__occupancy_limit_blocks,launch__occupancy_limit_warps,launch__block_size
metrics=$metrics,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct
metrics=$metrics,smsp__warp_issue_stalled_barrier_per_warp_active.pct
metrics=$metrics,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct
metrics=$metrics,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct
metrics=$metrics,smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct
for s in "$@"; do
  t1=$SECONDS
  (cd gpu/s39/$s && timeout 200 ncu --csv --metrics $metrics \
     -k 'regex:^kas_(cand[0-9]+|unfused)_k' ./build/harness --check-only N=1048576) \
    > $OUT/ncu_${s//\//_}.csv 2> $OUT/ncu_${s//\//_}.err
  echo "ncu $s: rc $? ($((SECONDS - t1)) s)"
done
