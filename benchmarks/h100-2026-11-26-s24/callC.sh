#!/usr/bin/env bash
# Calls C and D (session 24): issue #14's table on the model with the L1 rule (session 24): the
# top 30 of the given specs (`SPECS=... bench/prepare_tune.sh gpu/tune 30` on the host, with
# ptxas's registers; carried packed as gpu-pack.tar.xz), each spec's harness built on the GPU
# machine's cores, then timed alone with 9 rounds (harness --rounds 9); everything comes back as
# one r.tar.gz (call C's build logs took the returned files' places: its results.xml and index.txt
# were tarred from the warm machine by a second command).  Usage: callC.sh SPEC...
set -u
export PATH=/usr/local/cuda/bin:$PATH
[ -d gpu/tune ] || tar -xJf gpu-pack.tar.xz
src=gpu/tune
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
