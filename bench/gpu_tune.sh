#!/usr/bin/env bash
# bench/gpu_tune.sh — on a GPU machine with only the CUDA toolkit, gcc and make, in one run of
# a few minutes: builds and times every spec folder that bench/prepare_tune.sh generated on the
# host, and leaves each spec's results.xml (with the repeated timing: the median of 5 rounds and
# their spread) and index.txt under OUT/<spec>/ for `kasgen calibrate OUT` and `kasgen tune`.
#
#     bash bench/gpu_tune.sh DIR OUT
#
# Builds use all cores, one spec after another (a spec's candidates compile in parallel, so the
# load stays even); the timings run one spec at a time, so that they never overlap.  No sanitizers: the correctness checks are bench/gpu_verify.sh's.
# Each harness still checks every candidate against the CPU before timing it.
set -uo pipefail
src=${1:?folder prepared by bench/prepare_tune.sh}
out=${2:?output folder}
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$out"
jobs=$(nproc)
specs=$(cd "$src" && ls -d */ | tr -d /)
nspecs=$(echo "$specs" | wc -w)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
t0=$SECONDS
for s in $specs; do make -C "$src/$s" -j"$jobs" build/harness >"$out/build_$s.log" 2>&1; done
echo "built $nspecs specs in $((SECONDS - t0)) s"
status=0
for s in $specs; do
  t1=$SECONDS
  mkdir -p "$out/$s"
  if make -C "$src/$s" run >"$out/$s/run.log" 2>&1; then echo "ok    $s ($((SECONDS - t1)) s)"
  else echo "FAIL  $s"; status=1; tail -5 "$out/$s/run.log"; fi
  cp "$src/$s/results.xml" "$src/$s/index.txt" "$out/$s/" 2>/dev/null
done
echo "total $((SECONDS - t0)) s"
exit $status
