#!/usr/bin/env bash
# Device call 1 (session 43): prep1.sh's folders (gpu/s43a), with kasgen at the session's end.
#   1. bench/gpu_io.sh: every folder's checks (n = 1, 7, 1000003, 4194304 and from element 1;
#      memcheck, racecheck, synccheck at n = 10007), 8 at a time; the README's main job
#      (single-element/stvenant) timed at n = 4194304 with the copy bandwidth of the same run.
#   2. the element's harness table at n = 1048576 (80 columns: kernels on their own line).
#   3. the embedding API's CUDA errors on a GPU (make -C tests/fem_driver ... errors: eight host
#      threads at once, a caller's failed cudaMalloc left pending, a fault, an embed built for
#      sm_80 alone) and the FEM driver through the embed, whole and in chunks of 1024 elements,
#      for stvenant, the element and the renamed arguments of names.sh (prefixes, taken).
set -uo pipefail
final=$OUT OUT=$(mktemp -d) # the device tool brings back only a few files: one tarball
tar -xJf gpu-pack.tar.xz || python3 -c "import tarfile; tarfile.open('gpu-pack.tar.xz').extractall()"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
status=0
src=$PWD/gpu/s43a
BUDGET=330 BENCHDB=0 JOBS=8 SANITIZE_N=10007 SUBRANGE="" TIMED="single-element/stvenant" \
  bash bench/gpu_io.sh "$src" "$OUT/io" || status=1
e=$src/single-element/stvenant_element
(cd "$e" && timeout 150 ./build/harness N=1048576) >"$OUT/run_element.log" 2>&1 ||
  { echo "FAIL run element"; status=1; }
cat "$OUT/run_element.log" | head -40
awk 'length > 80 { n++ } END { print n + 0, "lines over 80 columns" }' "$OUT/run_element.log"
cp "$e/results.xml" "$OUT/results_element.xml" 2>/dev/null
fem() { # tag folder [target] [embed flags]
  make -C tests/fem_driver GEN="$2" BUILD_DIR="$PWD/build/fem_$1" EMBED_FLAGS="${4:-}" \
    "${3:-run}" >"$OUT/fem_$1.log" 2>&1 || { echo "FAIL fem $1"; status=1; }
  tail -3 "$OUT/fem_$1.log"
}
for s in stvenant stvenant_element prefixes; do
  fem "${s}_errors" "$src/single-element/$s" errors
  fem "${s}_whole" "$src/single-element/$s"
  fem "${s}_chunked" "$src/single-element/$s" run -DKAS_EMBED_CHUNK_LOG2=10
done
fem taken_errors "$src/double-component/taken" errors
fem taken_whole "$src/double-component/taken"
tar -czf "$final/call1.tar.gz" -C "$OUT" .
exit $status
