#!/usr/bin/env bash
# Device call of session 44: gpu_prep.sh's folders (gpu/s44), with kasgen at the session's end.
#   1. bench/gpu_io.sh: every folder's checks (n = 1, 7, 1000003, 4194304 and from element 1;
#      memcheck, racecheck, synccheck at n = 10007), 8 at a time; the README's main job
#      (single-element/stvenant) and the user's stvk_qp timed at n = 4194304 with the copy
#      bandwidth of the same run.
#   2. the embedding API's CUDA errors on a GPU (make -C tests/fem_driver ... errors) and the
#      FEM driver through the embed, for stvenant and the element (whose launch comment changed).
#   3. make clean in a folder after its run keeps results.xml (it used to remove it).
set -uo pipefail
final=$OUT OUT=$(mktemp -d) # the device tool brings back only a few files: one tarball
tar -xJf gpu-pack.tar.xz || python3 -c "import tarfile; tarfile.open('gpu-pack.tar.xz').extractall()"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
status=0
src=$PWD/gpu/s44
BUDGET=360 BENCHDB=0 JOBS=8 SANITIZE_N=10007 SUBRANGE="" \
  TIMED="single-element/stvenant single-element/stvk_qp" \
  bash bench/gpu_io.sh "$src" "$OUT/io" || status=1
fem() { # tag folder [target]
  make -C tests/fem_driver GEN="$2" BUILD_DIR="$PWD/build/fem_$1" \
    "${3:-run}" >"$OUT/fem_$1.log" 2>&1 || { echo "FAIL fem $1"; status=1; }
  tail -3 "$OUT/fem_$1.log"
}
for s in stvenant stvenant_element; do
  fem "${s}_errors" "$src/single-element/$s" errors
  fem "${s}_whole" "$src/single-element/$s"
done
d=$src/single-element/stvenant
if [ -s "$d/results.xml" ]; then
  cp "$d/results.xml" "$OUT/results_stvenant.xml"
  make -s -C "$d" clean >/dev/null 2>&1
  [ -s "$d/results.xml" ] && [ ! -e "$d/build" ] && echo "make clean kept results.xml" ||
    { echo "FAIL make clean"; status=1; }
else
  echo "FAIL no results.xml in stvenant"; status=1
fi
cp "$src/single-element/stvk_qp/results.xml" "$OUT/results_stvk_qp.xml" 2>/dev/null
tar -czf "$final/call.tar.gz" -C "$OUT" .
exit $status
