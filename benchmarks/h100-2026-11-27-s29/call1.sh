#!/usr/bin/env bash
# Session 29, call 1 (H100): quadrature's top 10 with the loops the model keeps (roll.c) and the
# same ten candidates with every loop unrolled (--unroll-loops), in single and double precision,
# element-major.  The folders gpu/s29/<precision>-{kept,unrolled}/quadrature were made on the
# host (`kasgen specs/quadrature.spec --top 10 [--precision double] [--unroll-loops]`, harnesses
# built there with the same CUDA 13.0) and carried packed as gpu-pack.tar.xz.  bench/gpu_io.sh
# checks every candidate (n = 1, 7, 1000003, 4194304 and sub-ranges from element 1; memcheck,
# racecheck, synccheck at n = 10007) and times each folder alone, kept then unrolled per
# precision, in the same run.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
tar -xJf gpu-pack.tar.xz
BUDGET=${BUDGET:-480} BENCHDB=0 JOBS=8 SANITIZE_N=10007 bash bench/gpu_io.sh gpu/s29 "$OUT"
