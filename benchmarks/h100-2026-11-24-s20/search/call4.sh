#!/usr/bin/env bash
# Device call 4 (session 20): issue #10's specs at the default settings (top 10 under the model
# with in-flight bytes): every candidate at n = 1, 7, 1000003, 4194304 (make sizes), then
# compute-sanitizer memcheck, racecheck and synccheck at n = 10007 (make sanitize).
set -uo pipefail
out=${OUT:?}
logs=$out/r4
mkdir -p "$logs"
export PATH=/usr/local/cuda/bin:$PATH
pack() { tar -czf "$out/call4.tar.gz" -C "$out" r4; }
trap pack EXIT
specs="chain8_33 stvenant_pair branches12 tet20 stvenant_element2_unrolled"
t0=$SECONDS
for s in $specs; do make -C "gpu4/$s" -j4 build/harness >"$logs/build_$s.log" 2>&1 & done
wait
echo "built $((SECONDS - t0)) s"
for s in $specs; do
  t=$SECONDS
  timeout 90 make -C "gpu4/$s" sizes >"$logs/sizes_$s.log" 2>&1; rc=$?
  echo "sizes $s rc=$rc ok=$(grep -c ' ok ' "$logs/sizes_$s.log") wrong=$(grep -c WRONG "$logs/sizes_$s.log") $((SECONDS - t)) s"
  t=$SECONDS
  timeout 60 make -C "gpu4/$s" sanitize SANITIZE_N=10007 >"$logs/sanitize_$s.log" 2>&1; rc=$?
  echo "sanitize $s rc=$rc $(grep -E 'SUMMARY' "$logs/sanitize_$s.log" | tr -s ' =' ' ' | tr '\n' ';') $((SECONDS - t)) s"
done
echo "total $SECONDS s"
