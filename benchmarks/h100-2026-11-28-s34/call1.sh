#!/usr/bin/env bash
# Session 34, call 1 on the H100: what each kernel of six specs' top 30 spends its time on,
# from Nsight Compute's counters (n = 1048576, every candidate's kernels once, --check-only):
# DRAM bytes, L1 global requests and sectors (loads, stores, async copies), shared-memory
# wavefronts and bank conflicts, warp instructions executed and issue activity, and the warps'
# stall shares (long scoreboard, barrier, MIO and LG throttle, short scoreboard, ...).  The
# folders (kasgen --top 30 --ptxas at the call's commit) travel packed as gpu-pack.tar.xz.
# Metrics this ncu does not know are left out (listed in r/metrics.txt).  ncu_<spec>.csv per spec.
#   bash benchmarks/h100-2026-11-28-s34/call1.sh
set -u
export PATH=/usr/local/cuda/bin:$PATH
[ -f gpu-pack.tar.xz ] && tar -xJf gpu-pack.tar.xz
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,ecc.mode.current --format=csv,noheader | tee $OUT/r/gpu.txt
t0=$SECONDS
specs="face_tractions13 edge_blocks13 quad_fluxes17 gradients_loop20 plate5_12 stvenant_element2_unrolled"
for s in $specs; do echo $s; done | xargs -P 6 -I{} sh -c \
  "make -C gpu/s34/t30/{} -j3 build/harness > $OUT/r/build_{}.log 2>&1 || echo 'BUILD FAIL {}'"
echo "built in $((SECONDS - t0)) s"
want="gpu__time_duration.sum dram__bytes_read.sum dram__bytes_write.sum
sm__warps_active.avg.pct_of_peak_sustained_active smsp__inst_executed.sum smsp__inst_issued.sum
sm__cycles_elapsed.avg smsp__issue_active.avg.pct_of_peak_sustained_active
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum
l1tex__data_pipe_lsu_wavefronts_mem_shared.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
lts__t_sectors_srcunit_tex_op_read.sum lts__t_requests_srcunit_tex_op_write.sum
smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct
smsp__warp_issue_stalled_barrier_per_warp_active.pct
smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct
smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct
smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct
smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct
smsp__warp_issue_stalled_wait_per_warp_active.pct
smsp__warp_issue_stalled_not_selected_per_warp_active.pct
smsp__warp_issue_stalled_selected_per_warp_active.pct
smsp__warp_issue_stalled_drain_per_warp_active.pct
smsp__warp_issue_stalled_membar_per_warp_active.pct
smsp__warp_issue_stalled_imc_miss_per_warp_active.pct
smsp__warp_issue_stalled_no_instruction_per_warp_active.pct
smsp__warp_issue_stalled_dispatch_stall_per_warp_active.pct
smsp__warp_issue_stalled_tex_throttle_per_warp_active.pct"
ncu --query-metrics --chip gh100 > $OUT/r/query.txt 2>&1
metrics=""
for m in $want; do
  if grep -q "^${m%%.*} " $OUT/r/query.txt; then metrics="$metrics,$m"; else echo "unknown: $m"; fi
done | tee $OUT/r/metrics.txt
metrics=""
for m in $want; do grep -q "^${m%%.*} " $OUT/r/query.txt && metrics="$metrics,$m"; done
metrics=${metrics#,}
# a query that failed leaves the basic set of session 33's call 3
[ -n "$metrics" ] || metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
echo "$metrics" >> $OUT/r/metrics.txt
for s in $specs; do
  t1=$SECONDS
  (cd gpu/s34/t30/$s && timeout 100 ncu --csv --metrics $metrics \
     -k 'regex:^kas_(cand[0-9]+|unfused)_k' ./build/harness --check-only N=1048576) \
    > $OUT/r/ncu_$s.csv 2> $OUT/r/ncu_$s.err
  echo "ncu $s: rc $? ($((SECONDS - t1)) s)"
  (cd $OUT && tar czf r.tar.gz r)
done
rm -f $OUT/r/query.txt; (cd $OUT && tar czf r.tar.gz r)
echo "total $((SECONDS - t0)) s"
