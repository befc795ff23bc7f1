#!/usr/bin/env bash
# Call E (session 25): issue #14's held-out check of the L2 write-request rule (45d3daa): the top
# 30 of the specs whose rankings the rule changed and of three specs written after it and before
# any of their results (`SPECS=... bench/prepare_tune.sh gpu/s25e 30` on the host, with ptxas's
# registers; stvenant_element's top 10 beside them), carried packed as gpu-pack.tar.xz; each
# spec's harness built here, then timed alone with 9 rounds at n = 4194304 (the harness checks
# every candidate against the CPU first).  One r.tar.gz back.  Usage: callE.sh SPEC...
set -u
export PATH=/usr/local/cuda/bin:$PATH
[ -d gpu/s25e ] || tar -xJf gpu-pack.tar.xz
src=gpu/s25e
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/r/gpu.txt
t0=$SECONDS
printf '%s\n' "$@" | xargs -P 4 -I{} sh -c "make -C $src/{} -j4 build/harness > $OUT/r/build_{}.log 2>&1 || echo 'BUILD FAIL {}'"
echo "built in $((SECONDS - t0)) s"
for s in "$@"; do
  t1=$SECONDS; mkdir -p $OUT/r/$s
  if (cd $src/$s && ./build/harness N=4194304 --rounds 9) > $OUT/r/$s/run.log 2>&1; then
    echo "ok $s ($((SECONDS - t1)) s) $(grep -c WRONG $OUT/r/$s/run.log) wrong; $(grep Spearman $OUT/r/$s/run.log)"
  else
    echo "FAIL $s"; tail -5 $OUT/r/$s/run.log
  fi
  cp $src/$s/results.xml $src/$s/index.txt $OUT/r/$s/ 2>/dev/null
done
echo "total $((SECONDS - t0)) s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
