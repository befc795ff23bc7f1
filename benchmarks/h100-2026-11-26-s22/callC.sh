#!/usr/bin/env bash
# Call C: the top 30 of the given specs (bench/prepare_tune.sh gpu/tune 30), built on all cores,
# then timed one spec at a time with 9 rounds (harness --rounds 9).  Usage: callC.sh SPEC...
set -u
src=gpu/tune
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
t0=$SECONDS
for s in "$@"; do make -C $src/$s -j16 build/harness > $OUT/build_$s.log 2>&1 || echo "BUILD FAIL $s"; done
echo "built in $((SECONDS - t0)) s"
for s in "$@"; do
  t1=$SECONDS; mkdir -p $OUT/$s
  if (cd $src/$s && ./build/harness N=4194304 --rounds 9) > $OUT/$s/run.log 2>&1; then echo "ok $s ($((SECONDS - t1)) s)"; else echo "FAIL $s"; tail -5 $OUT/$s/run.log; fi
  cp $src/$s/results.xml $src/$s/index.txt $OUT/$s/ 2>/dev/null
done
echo "total $((SECONDS - t0)) s"
