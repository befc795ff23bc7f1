#!/usr/bin/env bash
# Device call 1 (session 21): issue #13's matrix, every seed spec in both precisions and both
# layouts (gpu/ prepared here with `UNITS=0 bench/prepare_gpu.sh gpu` and each harness built
# here by `make -C FOLDER build/harness`, CUDA 13.0, sm_90), on the GPU with bench/gpu_io.sh:
# the checks (sizes, memcheck, racecheck, synccheck) 8 folders at a time, then make run of
# every folder and make subrange of four, no timing database.
set -uo pipefail
tar -xJf gpu-pack.tar.xz || python3 -c "import tarfile; tarfile.open('gpu-pack.tar.xz').extractall()"
export PATH=/usr/local/cuda/bin:$PATH
BUDGET=555 BENCHDB=0 JOBS=8 SANITIZE_N=10007 \
  SUBRANGE="double-element/bigfusion double-component/bigfusion single-element/stvenant single-component/stvenant" \
  bash bench/gpu_io.sh gpu "$OUT"
