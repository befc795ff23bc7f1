#!/usr/bin/env bash
# Session 39, call 4 on an H200: does L1 run out of wavefronts (tag lookups of the lines a
# request touches) where owner loads of 5x5 records ran slow?  Nsight Compute's L1 throughput and
# wavefront counts for every kernel of call 1's folders and of branches12's plain top 3
# (gpu/s39/branches12: `kasgen benchmarks/specs/branches12.spec --db benchmarks/nvidia-h200.xml
# --uncalibrated --top 3 --variants 0 --out gpu/s39`; its kernels load 3x3 records by owner
# threads and ran at DRAM speed), each kernel once at n = 1048576: ncu4_<folder>.csv.  First the
# names of the L1 metrics this ncu knows (metrics.txt).
#   bash benchmarks/h200-2026-11-28-s39/call4.sh bigfusion plain/bigfusion plate5_12 ...
set -u
export PATH=/usr/local/cuda/bin:$PATH
[ -f gpu-pack.tar.xz ] && tar -xJf gpu-pack.tar.xz
ncu --query-metrics --chip gh100 2>/dev/null | grep -E '^l1tex__(data_pipe_lsu_wavefronts|t_output_wavefronts|throughput|m_|lsu_writeback|f_wavefronts|t_set)' \
  > $OUT/metrics.txt
for s in "$@"; do
  make -C gpu/s39/$s -j8 build/harness > /dev/null 2>&1 || echo "BUILD FAIL $s"
done
m=gpu__time_duration.sum,l1tex__throughput.avg.pct_of_peak_sustained_active
m=$m,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
m=$m,l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum
m=$m,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__inst_executed_pipe_lsu.sum
m=$m,l1tex__lsu_writeback_active.avg.pct_of_peak_sustained_active
m=$m,dram__throughput.avg.pct_of_peak_sustained_elapsed
for s in "$@"; do
  t1=$SECONDS
  (cd gpu/s39/$s && timeout 150 ncu --csv --metrics $m \
     -k 'regex:^kas_cand[0-9]+_k' ./build/harness --check-only N=1048576) \
    > $OUT/ncu4_${s//\//_}.csv 2> $OUT/ncu4_${s//\//_}.err
  echo "ncu $s: rc $? ($((SECONDS - t1)) s)"
done
