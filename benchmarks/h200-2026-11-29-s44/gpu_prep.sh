#!/usr/bin/env bash
# Host side of the device call of session 44, with kasgen at the session's end and the H200's
# database:
#   gpu/s44/single-element/stvenant: the README's main job (top 10), checked and timed;
#   gpu/s44/single-element/stvenant_element: the element's top 10, whose embed now says in its
#     launch function's comment that a first call raising the 48 KB limit clears a pending error;
#   gpu/s44/single-element/stvk_qp: a user's spec written by a fresh-eyes review from the docs
#     alone (St. Venant-Kirchhoff, P = F S summed over 8 quadrature points, 47 calls);
#   gpu/s44/double-component/stvk_point11: a seed-like spec in double precision, component-major.
set -euo pipefail
cd "$(dirname "$0")/../.."
k=${KASGEN:-build/kasgen}
out=gpu/s44
h200=benchmarks/nvidia-h200.xml
here=benchmarks/h200-2026-11-29-s44
rm -rf "$out"
mkdir -p "$out/single-element" "$out/double-component"
for s in specs/stvenant.spec specs/stvenant_element.spec $here/specs/stvk_qp.spec; do
  "$k" "$s" --top 10 --db $h200 --out "$out/single-element" >/dev/null
done
"$k" benchmarks/specs/stvk_point11.spec --top 10 --db $h200 --precision double \
  --layout component --out "$out/double-component" >/dev/null
for d in "$out"/*-*/*/; do make -s -C "$d" build/harness >/dev/null & done
wait
ls -d "$out"/*-*/*/build/harness | wc -l
