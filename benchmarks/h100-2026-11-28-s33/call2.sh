#!/usr/bin/env bash
# Session 33, call 2 on the H100: what memory does for slice-saving kernels.  The top 30 of
# edge_blocks13 and quad_fluxes17 (call 1's folders) and of face_tractions13 and gradients_loop20
# made again at 0a8043e (`SPECS=... bench/prepare_tune.sh gpu/s33/t30 30`), carried packed as
# gpu-pack.tar.xz.  The latter two are timed as call 1 timed its folders (LIMIT seconds); then
# every kernel of every folder is checked once at n = 1048576 under Nsight Compute, which
# records its duration, DRAM bytes read and written, and the L2's write requests and sectors
# from L1 and its read sectors (ncu.csv per folder).
#   LIMIT=250 bash benchmarks/h100-2026-11-28-s33/call2.sh
set -u
export PATH=/usr/local/cuda/bin:$PATH
[ -f gpu-pack.tar.xz ] && tar -xJf gpu-pack.tar.xz
mkdir -p $OUT/r
specs="edge_blocks13 quad_fluxes17 face_tractions13 gradients_loop20"
nvidia-smi --query-gpu=name,driver_version,ecc.mode.current --format=csv,noheader | tee $OUT/r/gpu.txt
t0=$SECONDS
for s in $specs; do echo $s; done | xargs -P 4 -I{} sh -c \
  "make -C gpu/s33/t30/{} -j4 build/harness > $OUT/r/build_{}.log 2>&1 || echo 'BUILD FAIL {}'"
echo "built in $((SECONDS - t0)) s"
for s in face_tractions13 gradients_loop20; do
  t1=$SECONDS; d=$OUT/r/t30/$s; mkdir -p $d
  if (cd gpu/s33/t30/$s && timeout ${LIMIT:-200} ./build/harness N=4194304 --rounds 9) > $d/run.log 2>&1; then
    echo "ok $s ($((SECONDS - t1)) s) $(grep -c WRONG $d/run.log) wrong"
  else
    echo "FAIL $s ($((SECONDS - t1)) s)"; tail -3 $d/run.log
  fi
  cp gpu/s33/t30/$s/results.xml gpu/s33/t30/$s/index.txt $d/ 2>/dev/null
  (cd $OUT && tar czf r.tar.gz r)
done
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
metrics=$metrics,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum
metrics=$metrics,lts__t_sectors_srcunit_tex_op_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active
for s in $specs; do
  t1=$SECONDS; d=$OUT/r/ncu/$s; mkdir -p $d
  (cd gpu/s33/t30/$s && timeout 120 ncu --csv --metrics $metrics -k 'regex:^kas_(cand[0-9]+|unfused)_k' \
     ./build/harness --check-only N=1048576) > $d/ncu.csv 2> $d/ncu.err
  echo "ncu $s: rc $? ($((SECONDS - t1)) s), $(grep -c gpu__time_duration $d/ncu.csv) kernels"
  (cd $OUT && tar czf r.tar.gz r)
done
echo "total $((SECONDS - t0)) s"
