#!/usr/bin/env bash
# Session 33, call 3 on the H100: the L2 write requests of slice saves counted by both of Nsight
# Compute's metrics (at the L2 slices, lts__t_requests_op_write, and from L1,
# lts__t_requests_srcunit_tex_op_write), with the warps' stall reasons (WarpStateStats): first
# on session 32's micro-benchmark of store forms (requests.cu --once: each form and slice set
# launched once at n = 4194304), then on every kernel of call 2's four folders (carried packed
# as gpu-pack.tar.xz), each checked once at n = 1048576.  ncu_*.csv per run.
#   bash benchmarks/h100-2026-11-28-s33/call3.sh
set -u
export PATH=/usr/local/cuda/bin:$PATH
[ -f gpu-pack.tar.xz ] && tar -xJf gpu-pack.tar.xz
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,ecc.mode.current --format=csv,noheader | tee $OUT/r/gpu.txt
t0=$SECONDS
specs="edge_blocks13 quad_fluxes17 face_tractions13 gradients_loop20"
for s in $specs; do echo $s; done | xargs -P 4 -I{} sh -c \
  "make -C gpu/s33/t30/{} -j4 build/harness > $OUT/r/build_{}.log 2>&1 || echo 'BUILD FAIL {}'"
src=benchmarks/h100-2026-11-27-s32/requests/requests.cu
nvcc -O3 -arch=sm_90 -o /tmp/requests $src > $OUT/r/build_requests.log 2>&1 || echo "BUILD FAIL requests"
echo "built in $((SECONDS - t0)) s"
metrics=gpu__time_duration.sum,lts__t_requests_op_write.sum,lts__t_requests_srcunit_tex_op_write.sum
metrics=$metrics,lts__t_sectors_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum
metrics=$metrics,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active
t1=$SECONDS
timeout 120 ncu --csv --metrics $metrics --section WarpStateStats /tmp/requests --once \
  > $OUT/r/ncu_requests.csv 2> $OUT/r/ncu_requests.err
echo "ncu requests: rc $? ($((SECONDS - t1)) s)"
(cd $OUT && tar czf r.tar.gz r)
for s in $specs; do
  t1=$SECONDS
  (cd gpu/s33/t30/$s && timeout 150 ncu --csv --metrics $metrics --section WarpStateStats \
     -k 'regex:^kas_(cand[0-9]+|unfused)_k' ./build/harness --check-only N=1048576) \
    > $OUT/r/ncu_$s.csv 2> $OUT/r/ncu_$s.err
  echo "ncu $s: rc $? ($((SECONDS - t1)) s)"
  (cd $OUT && tar czf r.tar.gz r)
done
echo "total $((SECONDS - t0)) s"
