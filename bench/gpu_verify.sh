#!/usr/bin/env bash
# bench/gpu_verify.sh — the whole GPU verification, on a machine with only the CUDA toolkit, gcc
# and make.  The host prepares the folder (kasgen cannot be built there):
#     bench/prepare_gpu.sh gpu            # top 10 of every seed spec in 4 configurations, units
# then on the GPU machine:
#     bench/gpu_verify.sh gpu OUTDIR
# For every configuration (gpu/<precision>-<layout>/) and seed spec: build; correctness at
# n = 1, 7, 1000003, 4194304 (make sizes); the timed table at n = 4194304 with the copy bandwidth
# measured in the same run (make run); a sub-range of the same n from element 1 (pointers aligned
# to their type only) timed against whole arrays in the same run (make subrange); compute-
# sanitizer memcheck, racecheck and synccheck (make sanitize); the FEM driver through the
# embedding API, whole arrays and a sub-range.  Then every standalone unit kernel in both
# precisions.  A summary table (bench/gpu_summary.sh) goes to stdout and OUTDIR/summary.md.
# Choosing a part (each fits a call of the device tool):
#   ONLY=specs | ONLY=units        one half
#   CONFIGS="double-component"     these configurations only (default: all four present)
#   SPECS="stvenant synctest"      these specs only
#   STEPS="sizes run subrange sanitize fem"   these steps only (default: all)
# Logs and results files are packed into OUTDIR/gpu_results.tar.gz after every step.
set -uo pipefail
src=${1:?folder prepared by bench/prepare_gpu.sh}
out=${2:?output folder}
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
logs=$(mktemp -d)/logs   # many files: packed into $out/gpu_results.tar.gz after every step
mkdir -p "$logs" "$out"
jobs=$(nproc)
status=0
steps=" ${STEPS:-sizes run subrange sanitize fem} "
step() { # name, command...
  local name=$1; shift
  local t0=$SECONDS
  if "$@" >"$logs/$name.log" 2>&1; then echo "ok    $name ($((SECONDS - t0)) s)"
  else echo "FAIL  $name"; status=1; tail -20 "$logs/$name.log"; fi
  tar -czf "$out/gpu_results.tar.gz" -C "$(dirname "$logs")" logs
}
wants() { [[ "$steps" == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/gpu.txt"
nvcc --version | tail -2 >>"$logs/gpu.txt"

configs=${CONFIGS:-$(cd "$src" && ls -d */ | tr -d / | grep -v '^units')}
folders=""
for c in $configs; do
  for s in ${SPECS:-$(cd "$src/$c" && ls -d */ | tr -d /)}; do folders="$folders $c/$s"; done
done
units=$(ls -d "$src"/units-*/*/ 2>/dev/null)
[ "${ONLY:-}" = units ] && folders=
[ "${ONLY:-}" = specs ] && units=
# Builds in parallel, runs one at a time (timings must not overlap).
for f in $folders; do make -C "$src/$f" -j"$jobs" all >"$logs/build_${f/\//_}.log" 2>&1 & done
wait
for f in $folders; do
  tag=${f/\//_}
  wants sizes && step "sizes_$tag" make -C "$src/$f" sizes
  if wants run; then
    step "run_$tag" make -C "$src/$f" run
    cp "$src/$f/results.xml" "$logs/results_$tag.xml" 2>/dev/null
  fi
  if wants subrange; then
    step "subrange_$tag" make -C "$src/$f" subrange
    cp "$src/$f/results.xml" "$logs/subrange_$tag.xml" 2>/dev/null
  fi
  wants sanitize && step "sanitize_$tag" make -C "$src/$f" sanitize
  if wants fem; then
    step "fem_driver_$tag" make -C tests/fem_driver GEN="$PWD/$src/$f" STEM="${f#*/}" \
      BUILD_DIR="build/$tag" run
  fi
done
for f in $units; do
  make -C "$f" -j2 compile >"$logs/build_unit_$(basename "$f").log" 2>&1
  tag=$(basename "$(dirname "$f")")_$(basename "$f")
  step "unit_$tag" make -C "$f" run
  wants sanitize && step "unit_sanitize_$tag" make -C "$f" sanitize
done
bash "$(dirname "$0")/gpu_summary.sh" "$logs" | tee "$out/summary.md" "$logs/summary.md"
tar -czf "$out/gpu_results.tar.gz" -C "$(dirname "$logs")" logs
exit $status
