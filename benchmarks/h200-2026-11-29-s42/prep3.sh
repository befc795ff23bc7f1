#!/usr/bin/env bash
# Host side of device call 3 (session 42), with kasgen at the session's end:
#   gpu/s42c/single-element/stvenant_element: the top 10 on the H200's database (the candidates
#     of call 2's folder), tuned here with call 2's results.xml: its embed wraps the measured
#     best, the kernel of 4 groups (cand09), which the FEM driver then runs through the
#     embedding API on the GPU;
#   gpu/s42c/double-component/stvenant: the top 4 in double precision, component-major, whose
#     results.xml should now name its layout.
# RESULTS: the folder holding call 2's results_stvenant_element.xml.
set -euo pipefail
cd "$(dirname "$0")/../.."
k=${KASGEN:-build/kasgen}
out=gpu/s42c
h200=benchmarks/nvidia-h200.xml
mkdir -p "$out/single-element" "$out/double-component"
"$k" specs/stvenant_element.spec --top 10 --db $h200 --out "$out/single-element" >/dev/null
cp "${RESULTS:?}/results_stvenant_element.xml" "$out/single-element/stvenant_element/results.xml"
"$k" tune "$out/single-element/stvenant_element" | tail -2
"$k" specs/stvenant.spec --top 4 --db $h200 --precision double --layout component \
  --out "$out/double-component" >/dev/null
for d in "$out"/*/*/; do make -s -C "$d" build/harness >/dev/null & done
wait
ls -d "$out"/*/*/build/harness | wc -l
