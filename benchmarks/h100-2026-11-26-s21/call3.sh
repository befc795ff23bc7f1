#!/usr/bin/env bash
# Device call 3 (session 21): after the model's register estimate was scaled to ptxas's counts
# and staging's asynchronous copies became plain PTX (no cuda_pipeline.h): issue #13's 20
# folders and the #10/#11 specs whose candidates changed (chain12, chain8_33, tet20, quadrature,
# stvenant_pair, branches12, stvenant_element2_unrolled;
# `kasgen SPEC --top 10`), generated and built here as in call 1.  Checks of every folder
# (sizes, memcheck, racecheck, synccheck), then every folder's timed table, double-precision
# element-major stvenant_inner first.
set -uo pipefail
tar -xJf gpu-pack.tar.xz || python3 -c "import tarfile; tarfile.open('gpu-pack.tar.xz').extractall()"
export PATH=/usr/local/cuda/bin:$PATH
timed="double-element/stvenant_inner"
for f in gpu/*/*/; do
  f=${f#gpu/}; f=${f%/}
  [ "$f" = double-element/stvenant_inner ] || timed="$timed $f"
done
BUDGET=560 BENCHDB=0 JOBS=8 SANITIZE_N=10007 SUBRANGE="" TIMED="$timed" \
  bash bench/gpu_io.sh gpu "$OUT"
