#!/usr/bin/env bash
# Device call 3 (session 42): prep3.sh's folders.  The FEM driver through the embedding API of
# the tuned element (the kernel of groups that `kasgen tune` shipped), whole arrays and from
# element 1, then launched in chunks of 1024 elements; each folder's checks at n = 1, 7, 1000003
# and from element 1, and its timed table at n = 1048576 (the harness's short kernels column and
# results.xml's layout); memcheck and racecheck of the tuned embed's FEM run are the harness's
# checks of cand09 (call 2).
set -uo pipefail
final=$OUT OUT=$(mktemp -d) # the device tool brings back only a few files: one tarball
tar -xJf gpu-pack.tar.xz || python3 -c "import tarfile; tarfile.open('gpu-pack.tar.xz').extractall()"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
status=0
src=$PWD/gpu/s42c
fem() { # tag [embed flags]
  make -C tests/fem_driver GEN="$src/single-element/stvenant_element" STEM=stvenant_element \
    BUILD_DIR="build/$1" EMBED_FLAGS="${2:-}" run >"$OUT/fem_$1.log" 2>&1 ||
    { echo "FAIL fem $1"; status=1; }
  tail -4 "$OUT/fem_$1.log"
}
fem whole
fem chunked -DKAS_EMBED_CHUNK_LOG2=10
for f in single-element/stvenant_element double-component/stvenant; do
  tag=${f/\//_}
  (cd "$src/$f" && ./build/harness --sizes 1,7,1000003 && ./build/harness --offset 1 --sizes 1,7,1000003) \
    >"$OUT/sizes_$tag.log" 2>&1 || { echo "FAIL sizes $f"; status=1; }
  tail -1 "$OUT/sizes_$tag.log"
  (cd "$src/$f" && timeout 150 ./build/harness N=1048576) >"$OUT/run_$tag.log" 2>&1 ||
    { echo "FAIL run $f"; status=1; }
  cut -c1-150 "$OUT/run_$tag.log"
  cp "$src/$f/results.xml" "$OUT/results_$tag.xml" 2>/dev/null
done
tar -czf "$final/call3.tar.gz" -C "$OUT" .
exit $status
