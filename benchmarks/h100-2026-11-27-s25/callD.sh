#!/usr/bin/env bash
# Call D (session 25): Nsight Compute on the slow candidates of call C's folders (gpu/s25c, the
# same pack): time, DRAM bytes, L2 write requests and sectors of every kernel of gradients_loop20's
# cand15, cand21, cand24 and pair_blocks18's cand11, cand26, at n = 1048576.  One r.tar.gz back.
set -u
export PATH=/usr/local/cuda/bin:$PATH
[ -d gpu/s25c ] || tar -xJf gpu-pack.tar.xz
src=gpu/s25c
mkdir -p $OUT/r
for s in gradients_loop20 pair_blocks18; do
  make -C $src/$s -j16 build/harness > $OUT/r/build_$s.log 2>&1 || echo "BUILD FAIL $s"
done
ncu_one() { # spec cand launches
  (cd $src/$1 && timeout 150 ncu --kernel-name regex:"kas_cand$2_k[0-9]" --launch-count $3 \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum,gpu__time_duration.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,smsp__inst_executed_op_global_st.sum,lts__t_sectors_op_read.sum \
    ./build/harness --check-only N=1048576) > $OUT/r/ncu_$1_cand$2.txt 2>&1
  grep -E "kas_cand|gpu__time|dram__bytes|lts__t|l1tex__t|inst_executed" $OUT/r/ncu_$1_cand$2.txt | sed 's/  */ /g; s/(const.*//'
}
ncu_one gradients_loop20 15 2
ncu_one gradients_loop20 21 2
ncu_one gradients_loop20 24 3
ncu_one pair_blocks18 11 3
ncu_one pair_blocks18 26 4
cd $OUT && tar czf r.tar.gz r && rm -rf r
