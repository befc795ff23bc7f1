#!/usr/bin/env bash
# Call C (session 30): at e860494, the groups over two loops.  On the host: `kasgen SPEC --top
# 10 --out gpu30/el` for stvenant_element, stvenant and stvenant_inner (the KAS way) and
# pair_blocks18; `kasgen SPEC --loops groups --out gpu30/grp` (only the kernels of groups: N,
# and N and M where the inner loop qualifies) for stvenant_element, pair_blocks18,
# gradients_loop20 and quad_stress15; harnesses built there with the same CUDA 13.0, carried as
# gpu-pack.tar.xz.  Here: bench/gpu_io.sh's checks and timings, every folder in one run.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,ecc.mode.current --format=csv,noheader | tee "$OUT/gpu.txt"
tar -xJf gpu-pack.tar.xz
BUDGET=560 BENCHDB=0 JOBS=8 SANITIZE_N=10007 SUBRANGE="grp/stvenant_element" \
  bash bench/gpu_io.sh gpu30 "$OUT"
