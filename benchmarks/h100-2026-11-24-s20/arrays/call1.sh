#!/usr/bin/env bash
# Device call 1 (session 20): staging by asynchronous copies (cp.async) and the model's
# in-flight bytes.  Builds every folder in parallel, then, one at a time on the GPU:
# make run (timed top-N with the copy bandwidth of the same run) of the array specs and of the
# quadrature/stvenant/stvenant_inner tune folders; make sizes and make sanitize (N=10007) of the
# two element specs.  Everything goes to $OUT/call1.tar.gz.
set -uo pipefail
out=${OUT:?}
logs=$(mktemp -d)/call1
mkdir -p "$logs"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$logs/gpu.txt"
pack() { tar -czf "$out/call1.tar.gz" -C "$(dirname "$logs")" call1; }
trap pack EXIT
folders="gpu-el/stvenant_element gpu-el/stvk_tet tune31/quadrature tune31/stvenant tune31/stvenant_inner"
t0=$SECONDS
printf '%s\n' $folders | xargs -P 5 -I{} sh -c \
  'make -C {} -j4 build/harness >"$1/build_$(basename {}).log" 2>&1 || echo "build failed: {}"' _ "$logs"
echo "built in $((SECONDS - t0)) s"
run() { # name seconds command...
  local name=$1 lim=$2; shift 2
  local t=$SECONDS
  if timeout "$lim" "$@" >"$logs/$name.log" 2>&1; then echo "ok    $name ($((SECONDS - t)) s)"
  else echo "FAIL  $name ($((SECONDS - t)) s)"; tail -8 "$logs/$name.log"; fi
}
for f in $folders; do
  n=$(basename "$f")
  run "run_$n" 150 make -C "$f" run
  cp "$f/results.xml" "$logs/results_$n.xml" 2>/dev/null
  cp "$f/index.txt" "$logs/index_$n.txt" 2>/dev/null
  grep -E "^cand|^unfused|copy|KAS" "$logs/run_$n.log" | head -14
done
for f in gpu-el/stvenant_element gpu-el/stvk_tet; do
  n=$(basename "$f")
  run "sizes_$n" 120 make -C "$f" sizes
  run "sanitize_$n" 120 make -C "$f" sanitize SANITIZE_N=10007
  grep -cE "ERROR SUMMARY: 0|RACECHECK SUMMARY: 0" "$logs/sanitize_$n.log"
done
echo "total $SECONDS s"
