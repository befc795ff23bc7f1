#!/usr/bin/env bash
# Device call 1 (session 41): a regression check of main at the session's start on the GPU lent
# (an H200): every seed spec's top 10 in both precisions and both layouts (gpu/s41a, prepared on
# the host with `UNITS=0 KASGEN=build/kasgen bench/prepare_gpu.sh gpu/s41a`, each harness built
# there by `make -C FOLDER build/harness`, CUDA 13.0, sm_90), run by bench/gpu_io.sh: the checks
# (sizes, memcheck, racecheck, synccheck) 8 folders at a time, then the timed table of every
# folder and the sub-range of four, no timing database.
set -uo pipefail
tar -xJf gpu-pack.tar.xz || python3 -c "import tarfile; tarfile.open('gpu-pack.tar.xz').extractall()"
export PATH=/usr/local/cuda/bin:$PATH
BUDGET=555 BENCHDB=0 JOBS=8 SANITIZE_N=10007 \
  SUBRANGE="double-element/bigfusion double-component/bigfusion single-element/stvenant single-component/stvenant" \
  bash bench/gpu_io.sh gpu/s41a "$OUT"
