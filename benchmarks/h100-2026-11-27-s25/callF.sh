#!/usr/bin/env bash
# Call F (session 25): issue #14 on e747aa9 (each kernel's straight slices share their record):
# the top 30 of the specs whose rankings that changed (pair_blocks18, laplace_blocks24, stvk_tet)
# and of two specs written after it and before any of their results (face_tractions13,
# coupling_blocks17): `SPECS=... bench/prepare_tune.sh gpu/s25f 30` on the host, with ptxas's
# registers, carried packed as gpu-pack.tar.xz; the harnesses built here, then each spec timed
# alone with 9 rounds at n = 4194304 (the harness checks every candidate against the CPU first).
# r.tar.gz is rewritten after each spec, so that a call cut short returns what it finished.
# Usage: callF.sh SPEC...
set -u
export PATH=/usr/local/cuda/bin:$PATH
[ -d gpu/s25f ] || tar -xJf gpu-pack.tar.xz
src=gpu/s25f
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/r/gpu.txt
t0=$SECONDS
printf '%s\n' "$@" | xargs -P 5 -I{} sh -c "make -C $src/{} -j3 build/harness > $OUT/r/build_{}.log 2>&1 || echo 'BUILD FAIL {}'"
echo "built in $((SECONDS - t0)) s"
for s in "$@"; do
  t1=$SECONDS; mkdir -p $OUT/r/$s
  if (cd $src/$s && timeout 200 ./build/harness N=4194304 --rounds 9) > $OUT/r/$s/run.log 2>&1; then
    echo "ok $s ($((SECONDS - t1)) s) $(grep -c WRONG $OUT/r/$s/run.log) wrong"
  else
    echo "FAIL $s"; tail -3 $OUT/r/$s/run.log
  fi
  cp $src/$s/results.xml $src/$s/index.txt $OUT/r/$s/ 2>/dev/null
  (cd $OUT && tar czf r.tar.gz r)
done
echo "total $((SECONDS - t0)) s"
rm -rf $OUT/r
