#!/usr/bin/env bash
# Host side of session 45's first device call: how a candidate's time per element moves with
# the number of elements n (the model ignores --n: it shares each launch among 2^22 elements and
# takes the grid as full).  Five specs' top 12 (--variants 2: the #1 in three block shapes) on the H200's database, harnesses built here.
set -euo pipefail
cd "$(dirname "$0")/../.."
k=${KASGEN:-build/kasgen}
out=gpu/s45n
rm -rf "$out"
mkdir -p "$out"
for s in specs/stvenant.spec specs/chain12.spec specs/stvenant_element.spec \
  specs/bigfusion.spec benchmarks/specs/gradients_loop20.spec; do
  "$k" "$s" --top 12 --variants 2 --db benchmarks/nvidia-h200.xml --out "$out" >/dev/null
done
for d in "$out"/*/; do make -s -C "$d" build/harness >/dev/null & done
wait
ls -d "$out"/*/build/harness | wc -l
