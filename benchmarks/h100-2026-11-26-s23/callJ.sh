#!/usr/bin/env bash
# Call J (session 23): issue #13's last item after call I, rows also staged at half E where the
# model predicts it pays and 4 or more blocks stay resident (a0f83af).  The ten component-major
# folders (`bench/prepare_gpu.sh gpu/J` with CONFIGS="single-component double-component" UNITS=0, their
# harnesses built on the host with the same nvcc) carried packed as gpu-pack.tar.xz: checks at
# n = 1, 7, 1000003, 4194304 and on sub-ranges, memcheck, racecheck, synccheck; each folder's timed
# table; each folder's sub-range from element 1 (ld = n + 1, odd: no peel aligns the rows) against
# whole arrays in the same run.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
tar -xJf gpu-pack.tar.xz
SUB=""
for c in single-component double-component; do
  for s in bigfusion bigfusion_full stvenant stvenant_inner synctest; do SUB="$SUB $c/$s"; done
done
BUDGET=540 BENCHDB=0 JOBS=8 SANITIZE_N=10007 SUBRANGE="$SUB" bash bench/gpu_io.sh gpu/J "$OUT"
