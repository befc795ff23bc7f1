#!/usr/bin/env bash
# Call B (session 31): issue #11's deliverable 5 at 522b95a (the one copy of a kernel of groups
# filled by every thread of the block): the top 10 of both loop specs (stvenant_element, whose
# 5th is its kernel of 4 groups, and quadrature), the element's kernels of groups alone
# (`--loops groups`) and the KAS way (stvenant and stvenant_inner), made here with `kasgen SPEC
# --top 10 --out gpu31/el` (and `--loops groups --out gpu31/grp`), harnesses built here with the
# same CUDA 13.0, carried as gpu-pack.tar.xz.  bench/gpu_io.sh's checks (n = 1, 7, 1000003,
# 4194304, sub-ranges; memcheck, racecheck and synccheck at n = 10007) and timings, in one run.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,ecc.mode.current --format=csv,noheader | tee "$OUT/gpu.txt"
tar -xJf gpu-pack.tar.xz
BUDGET=560 BENCHDB=0 JOBS=8 SANITIZE_N=10007 SUBRANGE="el/stvenant_element grp/stvenant_element" \
  bash bench/gpu_io.sh gpu31 "$OUT"
