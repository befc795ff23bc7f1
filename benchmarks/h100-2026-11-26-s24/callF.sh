#!/usr/bin/env bash
# Call F (session 24): the slice-save rule (model.c, call E's finding): gradients_loop20's top 30
# regenerated under it, and two held-out specs written after it (vertex_forces10, pair_blocks18):
# `SPECS=... bench/prepare_tune.sh gpu/tune2 30` on the host (ptxas's registers), carried packed
# as gpu-pack.tar.xz; each spec's harness built on the GPU machine, then timed alone with 9
# rounds; everything back as one r.tar.gz.  Usage: callF.sh SPEC...
set -u
export PATH=/usr/local/cuda/bin:$PATH
[ -d gpu/tune2 ] || tar -xJf gpu-pack.tar.xz
src=gpu/tune2
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/r/gpu.txt
t0=$SECONDS
for s in "$@"; do make -C $src/$s -j16 build/harness > $OUT/r/build_$s.log 2>&1 || echo "BUILD FAIL $s"; done
echo "built in $((SECONDS - t0)) s"
for s in "$@"; do
  t1=$SECONDS; mkdir -p $OUT/r/$s
  if (cd $src/$s && ./build/harness N=4194304 --rounds 9) > $OUT/r/$s/run.log 2>&1; then
    echo "ok $s ($((SECONDS - t1)) s)"
  else
    echo "FAIL $s"; tail -5 $OUT/r/$s/run.log
  fi
  cp $src/$s/results.xml $src/$s/index.txt $OUT/r/$s/ 2>/dev/null
done
echo "total $((SECONDS - t0)) s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
