#!/usr/bin/env bash
# Device call 3 of session 46, on callB_prep.sh's folders: what call 2 (callB_call.sh) left
# undone when the checks of single-precision neohooke outran its budget (420 s; the CPU
# reference of a 76-call element with the screen of ill-conditioned elements, kas_random.h, at
# n = 4194304): the README's main job timed, and neohooke in single precision checked at
# smaller n, with the time its checks take.  One tarball, $OUT/callC.tar.gz, after each step.
set -uo pipefail
[ -d gpu/s46b ] || tar -xJf gpu-pack.tar.xz
export PATH=/usr/local/cuda/bin:$PATH
res=$(mktemp -d)
pack() { tar -czf "$OUT/callC.tar.gz" -C "$res" .; }
status=0
src=$PWD/gpu/s46b/io
stv=$src/single-element/stvenant
(cd "$stv" && timeout 200 ./build/harness >"$res/stvenant_run.log" 2>&1) || status=1
cp "$stv/results.xml" "$res/results_stvenant.xml"; echo "stvenant timed $SECONDS s"; pack
nh=$src/single-element/neohooke
san=(compute-sanitizer --error-exitcode 1)
for t in memcheck racecheck synccheck; do
  "${san[@]}" --tool $t "$nh/build/harness" --check-only N=10007 >"$res/nh_$t.log" 2>&1 ||
    status=1
done
echo "neohooke sanitizers $SECONDS s"; pack
for n in 1,7,100003 1048576; do
  t0=$SECONDS
  (cd "$nh" && timeout 150 ./build/harness --sizes $n >"$res/nh_sizes_$n.log" 2>&1) || status=1
  echo "neohooke sizes $n: $((SECONDS - t0)) s" | tee -a "$res/nh_times.txt"; pack
done
(cd "$nh" && timeout 60 ./build/harness --offset 1 --sizes 1,7,100003 \
  >"$res/nh_offset.log" 2>&1) || status=1
pack
exit $status
