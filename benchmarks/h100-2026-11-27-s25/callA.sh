#!/usr/bin/env bash
# Calls A and B (session 25): partial/partial.cu, what a kernel pays for the sectors of an element-major
# record it writes only in part (issue #14); the GPU's ECC state beside it.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
d=benchmarks/h100-2026-11-27-s25/partial
mkdir -p "$OUT/a"
nvidia-smi -q -d ECC > "$OUT/a/ecc.txt" 2>&1
nvcc -O3 -arch=sm_90 -o /tmp/partial $d/partial.cu > "$OUT/a/build.log" 2>&1 || { cat "$OUT/a/build.log"; exit 1; }
CALL=${CALL:-A}
/tmp/partial | tee "$OUT/a/partial_call$CALL.txt"
grep -i "ecc mode" -A3 "$OUT/a/ecc.txt" | head -8
