#!/usr/bin/env bash
# Device call 2 of session 45: final_prep.sh's folders (gpu/s45), with kasgen after the
# session's merges.  Everything it brings back is one tarball, $OUT/call.tar.gz, rewritten after
# each step (the device tool brings back at most 8 files, and a call cut short keeps the last).
#   1. bench/gpu_io.sh on the README's main job (single-element/stvenant) and the stdin-generated
#      folder: the checks (n = 1, 7, 1000003, 4194304 and from element 1; memcheck, racecheck,
#      synccheck at n = 10007), and the timed table at n = 4194304 with the copy bandwidth of the
#      same run; results.xml of each kept;
#   2. nsmall/: each folder's harness at its own n (16384 or 131072): the candidates checked at
#      that n against the CPU and timed, the model's ranking at that n against the ranking at
#      the default n.
set -uo pipefail
[ -d gpu/s45 ] || tar -xJf gpu-pack.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
res=$(mktemp -d)
pack() { tar -czf "$OUT/call.tar.gz" -C "$res" .; }
status=0
src=$PWD/gpu/s45
mkdir -p "$res/nsmall"
for d in "$src"/nsmall/*/; do
  s=$(basename "$d")
  n=${s#*-n}; n=${n%%-*}
  (cd "$d" && timeout 100 ./build/harness --n "$n" >"$res/nsmall/$s.log" 2>&1) ||
    { echo "FAIL $s"; status=1; }
  cp "$d/results.xml" "$res/nsmall/$s.xml" 2>/dev/null
  echo "$s n=$n $SECONDS s"
done
pack
BUDGET=300 BENCHDB=0 JOBS=4 SANITIZE_N=10007 SUBRANGE="" \
  TIMED="single-element/stvenant stdin/stvenant" \
  bash bench/gpu_io.sh "$src" "$res/io" || status=1
for c in single-element stdin; do
  cp "$src/$c/stvenant/results.xml" "$res/results_$c.xml" 2>/dev/null
done
pack
exit $status
