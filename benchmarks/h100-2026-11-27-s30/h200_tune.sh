#!/usr/bin/env bash
# Session 30 (NVIDIA H200), session 29's script: issue #14's table there.
# `bench/prepare_tune.sh gpu/h200n 30` with DB=benchmarks/nvidia-h200.xml made the top 30 of
# every spec on the host at 8a5b861 (the four specs with kernels of groups, stvenant_element,
# gradients_loop20, pair_blocks18 and quad_stress15, again at d71d342), harnesses built there
# with the same CUDA 13.0; each call carries half of the folders packed as gpu-pack.tar.xz (only
# what running needs: build/harness, index.txt).  Each argument is a spec folder: its harness
# runs alone at n = 4194304 (5 rounds; it checks every candidate against the CPU first), and its
# results.xml, index.txt and log go to OUT/r/<spec>/ (r.tar.gz rewritten after each, so that a
# call cut short returns what it finished).  LIMIT: seconds per harness (default 150).
set -u
export PATH=/usr/local/cuda/bin:$PATH
# The device tool may lend an H100 for an H200 call: then nothing here is worth running.
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || {
  echo "not an H200: $(nvidia-smi --query-gpu=name --format=csv,noheader)"
  exit 3
}
tar -xJf gpu-pack.tar.xz
mkdir -p "$OUT/r"
nvidia-smi --query-gpu=name,driver_version,ecc.mode.current --format=csv,noheader |
  tee "$OUT/r/gpu.txt"
t0=$SECONDS
for f in "$@"; do
  t1=$SECONDS
  d=$OUT/r/$f
  mkdir -p "$d"
  if (cd "gpu/h200n/$f" && timeout "${LIMIT:-150}" ./build/harness N=4194304 --rounds 5) \
    >"$d/run.log" 2>&1; then
    echo "ok $f ($((SECONDS - t1)) s) $(grep -c WRONG "$d/run.log") wrong"
  else
    echo "FAIL $f ($((SECONDS - t1)) s)"
    tail -3 "$d/run.log"
  fi
  cp "gpu/h200n/$f/results.xml" "gpu/h200n/$f/index.txt" "$d/" 2>/dev/null
  (cd "$OUT" && tar czf r.tar.gz r)
done
echo "total $((SECONDS - t0)) s"
rm -rf "$OUT/r"
