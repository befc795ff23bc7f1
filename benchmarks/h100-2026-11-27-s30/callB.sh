#!/usr/bin/env bash
# Call B (session 30): as call A, at 984b2d6: the groups' kernels cost each group's loads of the
# inputs they share, and share one copy of shared memory where every shared buffer holds such
# an input (the element's ten4Help1).  `kasgen SPEC --top 10 --out gpu30/el` for the same six
# specs (the four group candidates rank 2nd or 5th), harnesses built on the host.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,ecc.mode.current --format=csv,noheader | tee "$OUT/gpu.txt"
tar -xJf gpu-pack.tar.xz
BUDGET=560 BENCHDB=0 JOBS=8 SANITIZE_N=10007 SUBRANGE="" bash bench/gpu_io.sh gpu30 "$OUT"
