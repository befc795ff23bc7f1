#!/usr/bin/env bash
# Host side of session 46's first device call (callA_call.sh): data for the model at small n.
# Eight specs that session 45's n sweep and its held-out check did not see, with kasgen at
# 19e3498 and the H200's database, each generated three times (top 12, --variants 4: the #1 in
# four more block shapes):
#   gpu/s46a/SPEC-m16384, SPEC-m131072: ranked at --n 16384 and --n 131072 (the model at n);
#   gpu/s46a/SPEC-fixed: ranked at the default n (2^22), to be timed at seven n, among them
#     non-powers of two (24576, 196608), where a kernel's last wave of blocks is partly empty.
set -euo pipefail
cd "$(dirname "$0")/../.."
k=${KASGEN:-build/kasgen}
out=gpu/s46a
h200=benchmarks/nvidia-h200.xml
rm -rf "$out"
mkdir -p "$out"
for s in benchmarks/specs/stvk_point11 specs/quadrature benchmarks/specs/tangent_pair16 \
  benchmarks/specs/vertex_forces10 benchmarks/specs/edge_blocks13 \
  benchmarks/specs/face_blocks12 benchmarks/specs/coupling_blocks17 \
  benchmarks/specs/stvenant_pair; do
  name=${s##*/}
  for n in 16384 131072 fixed; do
    nopt=(); [ $n = fixed ] || nopt=(--n $n)
    "$k" $s.spec --top 12 --variants 4 --db $h200 "${nopt[@]}" --out "$out/t" >/dev/null 2>&1
    tag=$n; [ $n = fixed ] || tag=m$n
    mv "$out/t/$name" "$out/$name-$tag"
    rmdir "$out/t"
  done
done
for d in "$out"/*/; do make -s -C "$d" build/harness >/dev/null; done
ls -d "$out"/*/build/harness | wc -l
