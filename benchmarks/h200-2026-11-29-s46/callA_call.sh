#!/usr/bin/env bash
# Device call 1 of session 46 (callA_prep.sh's folders): each SPEC-mN folder's harness at its
# own n, each SPEC-fixed folder's at n = 8192, 16384, 24576, 65536, 131072, 196608, 524288.
# Each run checks every candidate against the CPU at that n, then times it (median of 30
# launches per round, 9 rounds, inputs rotated past L2, the copy bandwidth measured in the same
# run).  Everything comes back as one tarball, $OUT/callA.tar.gz, rewritten after each spec (the
# device tool brings back at most 8 files, and a call cut short keeps the last one written).
set -uo pipefail
[ -d gpu/s46a ] || tar -xJf gpu-pack.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
res=$(mktemp -d)
pack() { tar -czf "$OUT/callA.tar.gz" -C "$res" .; }
status=0
run_at() { # folder n name
  (cd "$1" && timeout 60 ./build/harness --n "$2" >"$res/$3.log" 2>&1) ||
    { echo "FAIL $3"; status=1; }
  cp "$1/results.xml" "$res/$3.xml" 2>/dev/null
  echo "$3 $SECONDS s"
}
for d in gpu/s46a/*-fixed/; do
  s=$(basename "$d" -fixed)
  for n in 16384 131072; do run_at "gpu/s46a/$s-m$n" $n "$s-m$n"; done
  for n in 8192 16384 24576 65536 131072 196608 524288; do
    run_at "$d" $n "$s-fixed-n$n"
  done
  pack
done
exit $status
