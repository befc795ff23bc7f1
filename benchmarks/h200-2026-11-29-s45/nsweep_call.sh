#!/usr/bin/env bash
# Device call 1 of session 45: nsweep_prep.sh's folders timed at n = 2^12 ... 2^21 (the
# harness's own timing: median of 30 launches per round, 5 rounds, copies rotated past L2, the
# copy bandwidth measured in the same run; each run first checks every candidate against the
# CPU at that n, which is what takes the time).  Each run's results.xml is kept as SPEC/nN.xml,
# and the whole set is tarred into $OUT/nsweep.tar.gz after each size (the device tool brings
# back at most 8 files).  A first form that also ran n = 2^24 and tarred only at the end ran out
# of its 500 s and brought nothing back; a second, writing each file into $OUT, ran n = 2^12 ...
# 2^22 (256 s, 181 of them at 2^22, the CPU checks) and brought back 8 of its 60 files.  This
# third form runs n = 2^12 ... 2^21.
set -uo pipefail
[ -d gpu/s45n ] || tar -xJf gpu-pack.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
res=$(mktemp -d)
for e in 12 14 16 18 20 21; do
  n=$((1 << e))
  for d in gpu/s45n/*/; do
    s=$(basename "$d")
    mkdir -p "$res/$s"
    (cd "$d" && timeout 100 ./build/harness --n $n >"$res/$s/n$n.log" 2>&1;
     echo "$s n=$n rc=$? $SECONDS s"; cp results.xml "$res/$s/n$n.xml" 2>/dev/null)
  done
  tar -czf "$OUT/nsweep.tar.gz" -C "$res" .
done
