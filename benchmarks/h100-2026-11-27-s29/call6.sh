#!/usr/bin/env bash
# Session 29, call 6 (H100, the last 4 minutes of device time): stvenant_element's top 10 with the
# loops the model keeps (12f4642: N or M loops that load vec3DPhi's elements again) and the same
# candidates unrolled, folders gpu/s29e/{kept,unrolled}/stvenant_element made and built on the
# host.  Kept: the checks at n = 1, 7, 100003 (and sub-ranges from element 1), racecheck and
# memcheck at n = 1003; then both timed at n = 524288 (3 rounds), kept first.  Short sizes and
# timeouts: the CPU reference of the 128-call element dominates each run.
set -u
export PATH=/usr/local/cuda/bin:$PATH
tar -xJf gpu-pack.tar.xz
k=gpu/s29e/kept/stvenant_element u=gpu/s29e/unrolled/stvenant_element
(cd $k && timeout 45 ./build/harness --sizes 1,7,100003 && timeout 30 ./build/harness --offset 1 \
  --sizes 1,7,10007) > "$OUT/sizes_kept.txt" 2>&1
echo "sizes kept rc=$? $(grep -c WRONG "$OUT/sizes_kept.txt") wrong"
(cd $k && timeout 35 compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 1 \
  ./build/harness --check-only N=1003) > "$OUT/racecheck_kept.txt" 2>&1
echo "racecheck kept rc=$? $(grep -h 'SUMMARY' "$OUT/racecheck_kept.txt")"
(cd $k && timeout 25 compute-sanitizer --tool memcheck --error-exitcode 1 ./build/harness \
  --check-only N=1003) > "$OUT/memcheck_kept.txt" 2>&1
echo "memcheck kept rc=$? $(grep -h 'SUMMARY' "$OUT/memcheck_kept.txt")"
for f in kept unrolled; do
  (cd gpu/s29e/$f/stvenant_element && timeout 40 ./build/harness N=524288 --rounds 3) \
    > "$OUT/time_$f.txt" 2>&1
  echo "time $f rc=$? $(grep -c WRONG "$OUT/time_$f.txt") wrong"
done
