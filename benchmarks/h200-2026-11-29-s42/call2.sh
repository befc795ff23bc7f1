#!/usr/bin/env bash
# Device call 2 (session 42): prep2.sh's three folders.  The checks of the three at once (the
# harness's --sizes 1,7,1000003 and from element 1; memcheck, racecheck, synccheck at
# n = 10007), then each timed table alone on the GPU at n = N (default 4194304; call 2 ran 1048576, its rerun 4194304): at 4194304 the timed run's
# own check against a 128-call CPU reference took longer than session 41's 80 s.  The timed
# run checks every candidate at its n too.
set -uo pipefail
final=$OUT OUT=$(mktemp -d) # the device tool brings back only a few files: one tarball
tar -xJf gpu-pack.tar.xz || python3 -c "import tarfile; tarfile.open('gpu-pack.tar.xz').extractall()"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,ecc.mode.current --format=csv,noheader
src=$PWD/gpu/s42b/single-element
specs="stvenant_element stvenant_element_unrolled stvk_tet"
check() {
  local s=$1 h=$src/$1/build/harness san="compute-sanitizer --error-exitcode 1"
  cd "$src/$s" || return 1
  { $h --sizes 1,7,1000003 && $h --offset 1 --sizes 1,7,1000003; } >"$OUT/sizes_$s.log" 2>&1 ||
    echo "FAIL sizes $s"
  $san --tool memcheck $h --check-only N=10007 >"$OUT/memcheck_$s.log" 2>&1 || echo "FAIL memcheck $s"
  $san --tool racecheck --racecheck-report all $h --check-only N=10007 >"$OUT/racecheck_$s.log" 2>&1 ||
    echo "FAIL racecheck $s"
  $san --tool synccheck $h --check-only N=10007 >"$OUT/synccheck_$s.log" 2>&1 || echo "FAIL synccheck $s"
  echo "checked $s at $SECONDS s"
}
for s in $specs; do check "$s" & done
wait
for s in $specs; do
  t0=$SECONDS
  (cd "$src/$s" && timeout 150 ./build/harness N="${N:-4194304}") >"$OUT/run_$s.log" 2>&1
  echo "timed $s rc=$? $((SECONDS - t0)) s"
  cp "$src/$s/results.xml" "$OUT/results_$s.xml" 2>/dev/null
done
for f in "$OUT"/*.log; do tail -1 "$f" | grep -q 'ERROR SUMMARY: 0\|RACECHECK SUMMARY: 0\|PASS\|wrote' || echo "look: $f"; done
tar -czf "$final/call2.tar.gz" -C "$OUT" .
