#!/usr/bin/env bash
# Device call 2 (session 21): the checks of call 1 again (call 1's --sizes runs failed to start:
# a relative path), every folder's top 10 and unfused at n = 1, 7, 1000003, 4194304 and on
# sub-ranges, with memcheck, racecheck and synccheck; and, timed in one run, double-precision
# element-major stvenant_inner as kasgen ranks it against the same spec generated with a library
# whose ttmul311_1 has no owner load (gpu/double-element-coalesced/: the 27-double tensor comes
# through shared memory by coalesced loads).
set -uo pipefail
tar -xJf gpu-pack.tar.xz || python3 -c "import tarfile; tarfile.open('gpu-pack.tar.xz').extractall()"
export PATH=/usr/local/cuda/bin:$PATH
BUDGET=400 BENCHDB=0 JOBS=8 SANITIZE_N=10007 SUBRANGE="" \
  TIMED="double-element/stvenant_inner double-element-coalesced/stvenant_inner" \
  bash bench/gpu_io.sh gpu "$OUT"
