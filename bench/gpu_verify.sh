#!/usr/bin/env bash
# bench/gpu_verify.sh — the whole GPU verification in one run, on a machine with only the CUDA
# toolkit, gcc and make.  The host prepares the folder (kasgen cannot be built there):
#     bench/prepare_gpu.sh gpu            # kasgen --top 10 for every seed spec, kasgen units
# then on the GPU machine:
#     bench/gpu_verify.sh gpu OUTDIR
# For every seed spec: build, correctness at n = 1, 7, 1000003, 4194304, compute-sanitizer
# memcheck/racecheck/synccheck, timed table at n = 4194304 (copy bandwidth measured in the same
# run); every standalone unit kernel cu_<f>_<i>; the FEM driver through the embedding API.
# ONLY=specs|units runs one half.  Logs and results.xml files are packed into OUTDIR/gpu_results.tar.gz; a summary goes to stdout.
set -uo pipefail
src=${1:?folder prepared by bench/prepare_gpu.sh}
out=${2:?output folder}
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
logs=$(mktemp -d)/logs   # many files: packed into $out/gpu_results.tar.gz after every step
mkdir -p "$logs" "$out"
jobs=$(nproc)
status=0
step() { # name, command...
  local name=$1; shift
  local t0=$SECONDS
  if "$@" >"$logs/$name.log" 2>&1; then echo "ok    $name ($((SECONDS - t0)) s)"
  else echo "FAIL  $name"; status=1; tail -20 "$logs/$name.log"; fi
  tar -czf "$out/gpu_results.tar.gz" -C "$(dirname "$logs")" logs
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/gpu.txt"
nvcc --version | tail -2 >>"$logs/gpu.txt"

specs=$(cd "$src" && ls -d */ | tr -d / | grep -v '^units$')
units=$(ls -d "$src"/units/*/ 2>/dev/null)
# ONLY=specs or ONLY=units runs one half (to fit one call of the device tool).
[ "${ONLY:-}" = units ] && specs=
[ "${ONLY:-}" = specs ] && units=
# Builds in parallel (16 cores), runs one at a time (timings must not overlap).
for s in $specs; do make -C "$src/$s" -j"$jobs" all >"$logs/build_$s.log" 2>&1 & done
for f in $units; do make -C "$f" -j2 compile >"$logs/build_unit_$(basename "$f").log" 2>&1 & done
wait
for s in $specs; do
  step "sizes_$s" make -C "$src/$s" sizes
  step "run_$s" make -C "$src/$s" run
  cp "$src/$s/results.xml" "$logs/results_$s.xml" 2>/dev/null
  step "sanitize_$s" make -C "$src/$s" sanitize
done
for s in $specs; do
  step "fem_driver_$s" make -C tests/fem_driver GEN="$PWD/$src/$s" STEM="$s" run
done
for f in $units; do
  step "unit_$(basename "$f")" make -C "$f" run
  step "unit_sanitize_$(basename "$f")" make -C "$f" sanitize
done
for s in $specs; do echo "== $s"; tail -16 "$logs/run_$s.log"; done
tar -czf "$out/gpu_results.tar.gz" -C "$(dirname "$logs")" logs
exit $status
