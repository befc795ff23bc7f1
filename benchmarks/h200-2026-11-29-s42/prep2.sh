#!/usr/bin/env bash
# Host side of device call 2 (session 42): the three largest specs (stvenant_element, its
# unrolled form, stvk_tet), never timed on an H200, generated with the H200's database in
# single precision element-major (gpu/s42b/single-element/<spec>), harnesses built here.
set -euo pipefail
cd "$(dirname "$0")/../.."
k=${KASGEN:-build/kasgen}
out=gpu/s42b/single-element
mkdir -p "$out"
for s in stvenant_element stvenant_element_unrolled stvk_tet; do
  "$k" "specs/$s.spec" --top 10 --db benchmarks/nvidia-h200.xml --out "$out" >"$out.$s.log" 2>&1 ||
    { cat "$out.$s.log"; exit 1; }
done
for d in "$out"/*/; do make -s -C "$d" build/harness >/dev/null & done
wait
ls -d "$out"/*/build/harness | wc -l
