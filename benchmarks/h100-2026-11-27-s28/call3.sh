#!/usr/bin/env bash
# Call 3 (session 28): issue #13's last item with component-major rows read through kas_row_load
# in the plan for any alignment.  The ten component-major folders (`bench/prepare_gpu.sh
# gpu/s28` with CONFIGS="single-component double-component" UNITS=0, their harnesses built on
# the host with the same nvcc) carried packed as gpu-pack.tar.xz: checks at n = 1, 7, 1000003,
# 4194304 and on sub-ranges, memcheck, racecheck, synccheck; each folder's timed table; each
# folder's sub-range from element 1 (ld = n + 1, odd: no peel aligns the rows) against whole
# arrays in the same run.  CONFIGS and DIR (defaults: as call 3 ran) serve call 4.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
tar -xJf gpu-pack.tar.xz
SUB=""
dir=${DIR:-gpu/s28}
for c in ${CONFIGS:-single-component double-component}; do
  for s in bigfusion bigfusion_full stvenant stvenant_inner synctest; do SUB="$SUB $c/$s"; done
done
BUDGET=560 BENCHDB=0 JOBS=8 SANITIZE_N=10007 SUBRANGE="$SUB" bash bench/gpu_io.sh "$dir" "$OUT"
