#!/usr/bin/env bash
# Device call 2 of session 46: callB_prep.sh's folders (gpu/s46b), with kasgen after the
# session's merges.  Everything comes back as one tarball, $OUT/callB.tar.gz, rewritten after
# each step (the device tool brings back at most 8 files; a call cut short keeps the last).
#   1. nsmall/: each folder's harness at its own n: every candidate checked against the CPU at
#      that n, then timed; the new ranking at n against the old (19e3498's) at the same n;
#   2. bench/gpu_io.sh over the README's main job and the hyperelastic specs in both
#      precisions: the checks (n = 1, 7, 1000003, 4194304 and from element 1; memcheck,
#      racecheck and synccheck at n = 10007), and the timed table of the main job at
#      n = 4194304 with the copy bandwidth of the same run.
set -uo pipefail
[ -d gpu/s46b ] || tar -xJf gpu-pack.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
res=$(mktemp -d)
pack() { tar -czf "$OUT/callB.tar.gz" -C "$res" .; }
status=0
src=$PWD/gpu/s46b
mkdir -p "$res/nsmall"
for d in "$src"/nsmall/*/; do
  s=$(basename "$d")
  n=${s#*-n}; n=${n%%-*}
  (cd "$d" && timeout 60 ./build/harness --n "$n" >"$res/nsmall/$s.log" 2>&1) ||
    { echo "FAIL $s"; status=1; }
  cp "$d/results.xml" "$res/nsmall/$s.xml" 2>/dev/null
  echo "$s n=$n $SECONDS s"
done
pack
BUDGET=420 BENCHDB=0 JOBS=6 SANITIZE_N=10007 SUBRANGE="" TIMED="single-element/stvenant" \
  bash bench/gpu_io.sh "$src/io" "$res/io" || status=1
cp "$src/io/single-element/stvenant/results.xml" "$res/results_stvenant.xml" 2>/dev/null
pack
exit $status
