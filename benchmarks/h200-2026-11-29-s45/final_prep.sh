#!/usr/bin/env bash
# Host side of session 45's last device call (final_call.sh), with kasgen at the session's end and the H200's
# database:
#   gpu/s45/single-element/stvenant: the README's main job (top 10), checked and timed;
#   gpu/s45/stdin/stvenant: the same spec generated from the standard input, to be tuned back
#     here without --spec (its folder now carries a copy of the spec);
#   gpu/s45/nsmall/SPEC-nN-{model,fixed}: three specs the n sweep did not see (stvk_tet,
#     plate5_12, tet20), each ranked at --n N (the model's ranking for that n) and at the default
#     n (the ranking the model gave for every n before), both timed at n = N = 16384 and 131072.
set -euo pipefail
cd "$(dirname "$0")/../.."
k=${KASGEN:-build/kasgen}
out=gpu/s45
h200=benchmarks/nvidia-h200.xml
rm -rf "$out"
mkdir -p "$out/single-element" "$out/stdin" "$out/nsmall"
"$k" specs/stvenant.spec --top 10 --db $h200 --out "$out/single-element" >/dev/null
"$k" - --top 10 --db $h200 --out "$out/stdin" --name stvenant <specs/stvenant.spec >/dev/null
for s in specs/stvk_tet benchmarks/specs/plate5_12 benchmarks/specs/tet20; do
  for n in 16384 131072; do
    "$k" $s.spec --top 10 --db $h200 --n $n --out "$out/nsmall/m$n" >/dev/null
    mv "$out/nsmall/m$n/${s##*/}" "$out/nsmall/${s##*/}-n$n-model"
    "$k" $s.spec --top 10 --db $h200 --out "$out/nsmall/f$n" >/dev/null
    mv "$out/nsmall/f$n/${s##*/}" "$out/nsmall/${s##*/}-n$n-fixed"
    rmdir "$out/nsmall/m$n" "$out/nsmall/f$n" 2>/dev/null || true
  done
done
for d in "$out"/*/*/; do make -s -C "$d" build/harness >/dev/null & done
wait
ls -d "$out"/*/*/build/harness | wc -l
