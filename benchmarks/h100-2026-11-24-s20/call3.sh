#!/usr/bin/env bash
# Device call 3 (session 20): stvk_tet's top 10 timed again and the hyperelastic example with its
# winner (cp.async staging); misaligned sub-ranges after peeling to 128-byte lines (4 folders);
# quadrature's top 10 at n = 1, 7, 1000003, 4194304 and under compute-sanitizer.
set -uo pipefail
out=${OUT:?}
logs=$out/r
mkdir -p "$logs"
export PATH=/usr/local/cuda/bin:$PATH
pack() { tar -czf "$out/call3.tar.gz" -C "$out" r; }
trap pack EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$logs/gpu.txt"
t0=$SECONDS
subs="gpu3/double-component/bigfusion gpu3/double-component/synctest gpu3/double-element/bigfusion gpu3/single-element/stvenant"
for f in gpu3/stvk_tet gpu3/quadrature $subs; do
  make -C "$f" -j6 build/harness >"$logs/build_$(echo "$f" | tr / _).log" 2>&1 &
done
wait
echo "built $((SECONDS - t0)) s"
run() { # name limit command...
  local name=$1 lim=$2; shift 2
  local t=$SECONDS
  if timeout "$lim" "$@" >"$logs/$name.log" 2>&1; then echo "ok    $name ($((SECONDS - t)) s)"
  else echo "FAIL  $name ($((SECONDS - t)) s)"; tail -5 "$logs/$name.log"; fi
}
run run_stvk_tet 120 make -C gpu3/stvk_tet run
cp gpu3/stvk_tet/results.xml "$logs/results_stvk_tet.xml"
grep -E "^cand0[1-3] |^unfused|copy bandwidth" "$logs/run_stvk_tet.log" | cut -c1-100
for f in $subs; do
  tag=$(echo "$f" | tr / _)
  run "subrange_$tag" 100 make -C "$f" subrange
  cp "$f/results.xml" "$logs/subrange_$tag.xml"
  grep -A14 "whole arrays" "$logs/subrange_$tag.log" | cut -c1-80 | head -14
done
run sizes_quadrature 120 make -C gpu3/quadrature sizes
grep -cE " ok " "$logs/sizes_quadrature.log"
run sanitize_quadrature 60 make -C gpu3/quadrature sanitize SANITIZE_N=10007
grep -E "SUMMARY" "$logs/sanitize_quadrature.log"
HARNESS=0 HEXES=80 PASSES=3 run hyper $((570 - SECONDS)) \
  bash examples/hyperelastic/gpu_run.sh gpu3/stvk_tet "$logs/hyper"
tail -22 "$logs/hyper/summary.txt" 2>/dev/null
echo "total $SECONDS s"
