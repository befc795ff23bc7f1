#!/usr/bin/env bash
# Session 26 calls: the slice-chunk change (eb3efb8: a contiguous routine asked for a slice of
# element-major records moves one real per thread, consecutive reals in consecutive threads)
# against main before it (9a78480), on the H100.  The folders were made on the host with
# bench/prepare_tune.sh (ptxas's registers): gpu/s26old/<spec> (9a78480, top 10) and
# gpu/s26new/<spec> (eb3efb8, top 30; stvenant_element top 10) and gpu/s26san/<spec> (eb3efb8,
# `kasgen SPEC --top 10`, for the sanitizers), gpu/s26ab_{old,new}/stvk_tet (top 1 of 9a78480 and
# eb3efb8) and gpu/s26hyb/<spec> (15d6550, top 30), carried packed as gpu-pack.tar.xz.  Each
# argument is SET/SPEC (old/quadrature): its harness is built here, then each folder is timed alone
# with ROUNDS rounds (default 9) at n = 4194304 (the harness checks every candidate against the CPU
# first).  SAN="SET/SPEC ...": those folders also run memcheck, racecheck and synccheck at n =
# 10007, and SIZES="SET/SPEC ..." the harness's checks at n = 1, 7, 1000003 and 4194304 and on
# sub-ranges from element 1 (`make sizes`).  r.tar.gz is rewritten after each folder, so that a
# call cut short returns what it finished.  LIMIT: seconds per harness run (default 200).
# FOLDERS: the prefix of the folders (default gpu/s26; session 27's calls give gpu/s27/).
set -u
folders=${FOLDERS:-gpu/s26} # where SET/SPEC lives: $folders<SET/SPEC>
export PATH=/usr/local/cuda/bin:$PATH
[ -f gpu-pack.tar.xz ] && tar -xJf gpu-pack.tar.xz
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,ecc.mode.current --format=csv,noheader | tee $OUT/r/gpu.txt
t0=$SECONDS
printf '%s\n' "$@" ${SAN:-} ${SIZES:-} | sort -u | xargs -P 5 -I{} sh -c \
  "make -C $folders{} -j3 build/harness > $OUT/r/build_\$(echo {} | tr / _).log 2>&1 || echo 'BUILD FAIL {}'"
echo "built in $((SECONDS - t0)) s"
for f in "$@"; do
  t1=$SECONDS; d=$OUT/r/$f; mkdir -p $d
  if (cd $folders$f && timeout ${LIMIT:-200} ./build/harness N=4194304 --rounds ${ROUNDS:-9}) > $d/run.log 2>&1; then
    echo "ok $f ($((SECONDS - t1)) s) $(grep -c WRONG $d/run.log) wrong"
  else
    echo "FAIL $f ($((SECONDS - t1)) s)"; tail -3 $d/run.log
  fi
  cp $folders$f/results.xml $folders$f/index.txt $d/ 2>/dev/null
  (cd $OUT && tar czf r.tar.gz r)
done
for f in ${SAN:-}; do
  t1=$SECONDS; d=$OUT/r/$f; mkdir -p $d
  if make -C $folders$f sanitize SANITIZE_N=10007 > $d/sanitize.log 2>&1; then
    echo "sanitizers clean $f ($((SECONDS - t1)) s)"
  else
    echo "SANITIZER FAIL $f ($((SECONDS - t1)) s)"; grep -m3 -i "error\|hazard" $d/sanitize.log
  fi
  (cd $OUT && tar czf r.tar.gz r)
done
for f in ${SIZES:-}; do
  t1=$SECONDS; d=$OUT/r/$f; mkdir -p $d
  if make -C $folders$f sizes > $d/sizes.log 2>&1; then
    echo "sizes ok $f ($((SECONDS - t1)) s) $(grep -c WRONG $d/sizes.log) wrong"
  else
    echo "SIZES FAIL $f ($((SECONDS - t1)) s)"; tail -3 $d/sizes.log
  fi
  (cd $OUT && tar czf r.tar.gz r)
done
echo "total $((SECONDS - t0)) s"
rm -rf $OUT/r
