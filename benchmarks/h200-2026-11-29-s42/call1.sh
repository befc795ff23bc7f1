#!/usr/bin/env bash
# Device call 1 (session 42): the folders of prep1.sh (gpu/s42a) by bench/gpu_io.sh: the checks
# (sizes, memcheck, racecheck, synccheck at n = 10007) 8 folders at a time, then each folder's
# timed table at n = 4194304 with the GPU to itself, no timing database.  The H200 database's
# #1 is judged against the measured best of its own top 10; h100db-single-element/bigfusion
# repeats session 41's worst miss and shows the harness's note on another GPU's predictions.
set -uo pipefail
tar -xJf gpu-pack.tar.xz || python3 -c "import tarfile; tarfile.open('gpu-pack.tar.xz').extractall()"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,ecc.mode.current --format=csv,noheader
BUDGET=540 BENCHDB=0 JOBS=8 SANITIZE_N=10007 SUBRANGE="" bash bench/gpu_io.sh gpu/s42a "$OUT"
