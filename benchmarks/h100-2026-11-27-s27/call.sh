#!/usr/bin/env bash
# Session 27 calls on the H100.  The folders gpu/s27/SET/SPEC are made on the host
# (call2/prepare.sh, prepare_345.sh) and carried packed as gpu-pack.tar.xz.  Each argument is
# SET/SPEC (t30/stvk_tet): its harness is built here, then each folder is timed alone
# with ROUNDS rounds (default 9) at n = 4194304 (the harness checks every candidate against the CPU
# first).  SAN="SET/SPEC ...": those folders also run memcheck, racecheck and synccheck at n =
# 10007, and SIZES="SET/SPEC ..." the harness's checks at n = 1, 7, 1000003 and 4194304 and on
# sub-ranges from element 1 (`make sizes`).  r.tar.gz is rewritten after each folder, so that a
# call cut short returns what it finished.  LIMIT: seconds per harness run (default 200).
set -u
export PATH=/usr/local/cuda/bin:$PATH
[ -f gpu-pack.tar.xz ] && tar -xJf gpu-pack.tar.xz
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,ecc.mode.current --format=csv,noheader | tee $OUT/r/gpu.txt
t0=$SECONDS
printf '%s\n' "$@" ${SAN:-} ${SIZES:-} | sort -u | xargs -P 5 -I{} sh -c \
  "make -C gpu/s27/{} -j3 build/harness > $OUT/r/build_\$(echo {} | tr / _).log 2>&1 || echo 'BUILD FAIL {}'"
echo "built in $((SECONDS - t0)) s"
for f in "$@"; do
  t1=$SECONDS; d=$OUT/r/$f; mkdir -p $d
  if (cd gpu/s27/$f && timeout ${LIMIT:-200} ./build/harness N=4194304 --rounds ${ROUNDS:-9}) > $d/run.log 2>&1; then
    echo "ok $f ($((SECONDS - t1)) s) $(grep -c WRONG $d/run.log) wrong"
  else
    echo "FAIL $f ($((SECONDS - t1)) s)"; tail -3 $d/run.log
  fi
  cp gpu/s27/$f/results.xml gpu/s27/$f/index.txt $d/ 2>/dev/null
  (cd $OUT && tar czf r.tar.gz r)
done
for f in ${SAN:-}; do
  t1=$SECONDS; d=$OUT/r/$f; mkdir -p $d
  if make -C gpu/s27/$f sanitize SANITIZE_N=10007 > $d/sanitize.log 2>&1; then
    echo "sanitizers clean $f ($((SECONDS - t1)) s)"
  else
    echo "SANITIZER FAIL $f ($((SECONDS - t1)) s)"; grep -m3 -i "error\|hazard" $d/sanitize.log
  fi
  (cd $OUT && tar czf r.tar.gz r)
done
for f in ${SIZES:-}; do
  t1=$SECONDS; d=$OUT/r/$f; mkdir -p $d
  if make -C gpu/s27/$f sizes > $d/sizes.log 2>&1; then
    echo "sizes ok $f ($((SECONDS - t1)) s) $(grep -c WRONG $d/sizes.log) wrong"
  else
    echo "SIZES FAIL $f ($((SECONDS - t1)) s)"; tail -3 $d/sizes.log
  fi
  (cd $OUT && tar czf r.tar.gz r)
done
echo "total $((SECONDS - t0)) s"
rm -rf $OUT/r
