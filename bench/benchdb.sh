#!/usr/bin/env bash
# bench/benchdb.sh — `make benchdb` on a GPU machine: builds the micro-benchmark program that
# `kasgen bench --out bench/out` emitted on the host (it needs only the CUDA toolkit, gcc and
# make), runs it, and writes benchmarks/<gpu-slug>.xml (docs/timingdb.md).
#   BENCH_DIR=dir  another emitted folder;  ARCH=sm_XX  another GPU architecture (default sm_90).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_DIR:-bench/out}
if [ ! -f "$dir/Makefile" ]; then
  echo "benchdb: $dir/Makefile missing: run 'kasgen bench --out $dir' on the host first" >&2
  exit 1
fi
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
make -C "$dir" -j"$(nproc)" ARCH="${ARCH:-sm_90}"
mkdir -p benchmarks
"$dir/build/kasbench" "$PWD/benchmarks"
