#!/usr/bin/env bash
# Call C (session 25): the top 30 of gradients_loop20 and pair_blocks18 under the slice-save
# lines rule (`SPECS=... bench/prepare_tune.sh gpu/s25c 30` on the host, carried packed as
# gpu-pack.tar.xz), harnesses built here, each timed alone (--rounds 9); then Nsight Compute's
# time, DRAM and L2 write sectors of kernels that write output records slice by slice (and of
# each spec's one-kernel cand01) at n = 1048576.  Everything comes back as one r.tar.gz.
set -u
export PATH=/usr/local/cuda/bin:$PATH
[ -d gpu/s25c ] || tar -xJf gpu-pack.tar.xz
src=gpu/s25c
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/r/gpu.txt
t0=$SECONDS
for s in gradients_loop20 pair_blocks18; do
  make -C $src/$s -j16 build/harness > $OUT/r/build_$s.log 2>&1 || echo "BUILD FAIL $s"
done
echo "built in $((SECONDS - t0)) s"
for s in gradients_loop20 pair_blocks18; do
  mkdir -p $OUT/r/$s
  (cd $src/$s && ./build/harness N=4194304 --rounds 9) > $OUT/r/$s/run.log 2>&1 || echo "FAIL $s"
  grep -A40 "^candidate" $OUT/r/$s/run.log | cut -c1-110
  cp $src/$s/results.xml $src/$s/index.txt $OUT/r/$s/ 2>/dev/null
done
ncu_one() { # spec cand launches
  (cd $src/$1 && timeout 120 ncu --kernel-name regex:"kas_cand$2_k[0-9]" --launch-count $3 \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum \
    ./build/harness --check-only N=1048576) > $OUT/r/ncu_$1_cand$2.txt 2>&1
  grep -E "kas_cand|gpu__time|dram__bytes|lts__t_sectors_op_write|lts__t_requests" $OUT/r/ncu_$1_cand$2.txt | sed 's/  */ /g'
}
ncu_one gradients_loop20 01 1
ncu_one gradients_loop20 07 2
ncu_one gradients_loop20 08 2
ncu_one pair_blocks18 01 1
ncu_one pair_blocks18 04 2
echo "total $((SECONDS - t0)) s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
