#!/usr/bin/env bash
# Session 40, call 1 on an H200: why blocks of three threads per element run slower the more
# warps they hold (session 37: green_blocks17's fusion in 96-, 192-, 384- and 576-thread blocks
# ran 0.0748, 0.0870, 0.0981 and 0.1054 ns per element; the plain model predicted 0.070-0.072
# for all).  Folders made on the host at the commit this script was committed with:
#   kasgen benchmarks/specs/SPEC.spec --db benchmarks/nvidia-h200.xml --top 10 --out gpu/s40
# for green_blocks17 and stress_rows14 (the plain top 10 with five shapes of the #1, as session
# 37's call 4), carried packed as gpu-pack.tar.xz.  Each folder is built, checked and timed by
# session 26's call script (ROUNDS rounds), then every kernel of every candidate is profiled
# once at the harness's default n by Nsight Compute (occupancy, issue, instructions, L1
# wavefronts, DRAM, stall reasons): ncu_<spec>.csv.
#   ROUNDS=5 LIMIT=120 SAN="green_blocks17 stress_rows14" \
#     bash benchmarks/h200-2026-11-28-s40/call1.sh green_blocks17 stress_rows14
set -u
export PATH=/usr/local/cuda/bin:$PATH
FOLDERS=gpu/s40/ bash "$(dirname "$0")/../h100-2026-11-27-s26/call.sh" "$@"
mv $OUT/r.tar.gz $OUT/timing.tar.gz
m=gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active
m=$m,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
m=$m,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
m=$m,l1tex__throughput.avg.pct_of_peak_sustained_active,l1tex__t_sector_hit_rate.pct
m=$m,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
m=$m,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum
m=$m,sm__ctas_launched.sum,launch__waves_per_multiprocessor,launch__registers_per_thread
m=$m,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
m=$m,launch__occupancy_limit_blocks,launch__occupancy_limit_warps,launch__block_size
for s in long_scoreboard barrier lg_throttle mio_throttle short_scoreboard wait not_selected \
  math_pipe_throttle no_instruction dispatch_stall drain membar selected tex_throttle \
  branch_resolving; do
  m=$m,smsp__warp_issue_stalled_${s}_per_warp_active.pct
done
for s in "$@"; do
  t1=$SECONDS
  (cd gpu/s40/$s && timeout 240 ncu --csv --metrics $m \
     -k 'regex:^kas_cand[0-9]+_k' ./build/harness --check-only) \
    > $OUT/ncu_$s.csv 2> $OUT/ncu_$s.err
  echo "ncu $s: rc $? ($((SECONDS - t1)) s)"
done
