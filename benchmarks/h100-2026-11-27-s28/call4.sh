#!/usr/bin/env bash
# Call 4 (session 28): issue #13's element-major half on the current generator (last verified in
# session 22): the ten element-major folders (`bench/prepare_gpu.sh gpu/s28em` with
# CONFIGS="single-element double-element" UNITS=0, harnesses built on the host) carried packed in
# gpu-pack.tar.xz: checks at n = 1, 7, 1000003, 4194304 and on sub-ranges, memcheck, racecheck,
# synccheck; each folder's timed table; each folder's sub-range from element 1 against whole
# arrays in the same run.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
tar -xJf gpu-pack.tar.xz
SUB=""
for c in single-element double-element; do
  for s in bigfusion bigfusion_full stvenant stvenant_inner synctest; do SUB="$SUB $c/$s"; done
done
BUDGET=560 BENCHDB=0 JOBS=8 SANITIZE_N=10007 SUBRANGE="$SUB" bash bench/gpu_io.sh gpu/s28em "$OUT"
