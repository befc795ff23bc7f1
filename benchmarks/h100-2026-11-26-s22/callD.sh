#!/usr/bin/env bash
# Call D (session 22): after the new timing database (both precisions, both layouts) and the
# model's changes (lines of partial record reads, spills on the chip, staged copies at copy
# bandwidth): issue #13's 20 folders and single-element quadrature, stvenant_element, stvk_tet
# (`kasgen SPEC --top 10`), built on the GPU machine; checks of every folder (sizes, memcheck,
# racecheck, synccheck), then every folder's timed table and four sub-range timings.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
BUDGET=570 BENCHDB=0 JOBS=8 SANITIZE_N=10007 \
  SUBRANGE="double-element/bigfusion double-component/bigfusion double-component/synctest single-element/stvenant" \
  bash bench/gpu_io.sh gpu/D "$OUT"
