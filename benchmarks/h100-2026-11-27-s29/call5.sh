#!/usr/bin/env bash
# Session 29, call 5 (H100): quadrature in double precision, component-major, top 10 with the
# loops the model keeps (their loads read global memory directly: the in-flight term decides) and
# the same candidates unrolled; bench/gpu_io.sh's checks and timings as in call 1, on the folders
# gpu/s29c/double-component-{kept,unrolled}/quadrature (made and built on the host, carried packed).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
tar -xJf gpu-pack.tar.xz
BUDGET=${BUDGET:-320} BENCHDB=0 JOBS=8 SANITIZE_N=10007 bash bench/gpu_io.sh gpu/s29c "$OUT"
