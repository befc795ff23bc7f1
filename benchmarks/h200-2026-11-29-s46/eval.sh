#!/usr/bin/env bash
# Session 46: every measured candidate of the H200's small-n data predicted at the n it ran at,
# one row each, for eval_table.py.  An evaluation of stored measurements; no GPU.
#   eval.sh [LIBKASGEN] > ROWS
# LIBKASGEN: the library to link eval_predict.c against (default build/libkasgen.a; run `make`
# first).  Rows: set spec n name nkernels measured file-predicted before now kernels, where
# before is session 45's model (model_floor_as_session45: the one that ranked every run here),
# now the model of the library, kernels E:threads:blocks:resident,... (eval_predict.c).
# Sets: sweep (session 45's n sweep, ranked at the default n: what the model was fitted on),
# fixed (a folder ranked at the default n timed at small n), atn (a folder ranked at --n N,
# timed at N); fixed and atn are of specs the sweep did not see (held out).  A folder ranked at
# --n N is searched again at N as it was generated, and rows the model now ranks elsewhere are
# looked for in a longer list (--top 200); rows not found are counted on the standard error.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
lib=$(realpath "${1:-build/libkasgen.a}")
s45=benchmarks/h200-2026-11-29-s45
callA=${CALLA:-$here/callA}
h200=benchmarks/nvidia-h200.xml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2046  # pkg-config's words
cc -O2 -std=c11 -D_GNU_SOURCE -Isrc -I/usr/include/lpsolve $(pkg-config --cflags libxml-2.0 inih) \
  -o "$tmp/predict" "$here/eval_predict.c" "$lib" \
  $(pkg-config --libs libxml-2.0 inih) -llpsolve55 -lcolamd -ldl -lm
spec_of() { local s=specs/$1.spec; [ -f "$s" ] || s=benchmarks/specs/$1.spec; echo "$s"; }
rows() { # set spec search-n top variants wider files...; rows not found: said, not fatal
  local set=$1 s=$2
  shift 2
  "$tmp/predict" "$(spec_of "$s")" $h200 "$@" 2> >(grep -v ": note: " >&2) |
    sed "s/^/$set $s /" || true
}
for d in $s45/nsweep/*/; do
  rows sweep "$(basename "$d")" 0 12 2 0 "$d"/n*.xml
done
for f in $s45/final/nsmall/*-fixed.xml; do
  b=$(basename "$f" .xml)
  rows fixed "${b%%-n*}" 0 10 5 0 "$f"
done
for f in $s45/final/nsmall/*-model.xml; do
  b=$(basename "$f" -model.xml)
  rows atn "${b%%-n*}" "${b##*-n}" 10 5 200 "$f"
done
# This session's device call A (callA/README.txt): eight specs the above did not see, each
# ranked at the default n (timed at seven n) and at --n 16384 and 131072, top 12, --variants 4.
for s in stvk_point11 quadrature tangent_pair16 vertex_forces10 edge_blocks13 face_blocks12 \
  coupling_blocks17 stvenant_pair; do
  rows fixed "$s" 0 12 4 0 "$callA/$s"-fixed-n*.xml
  for n in 16384 131072; do
    rows atn "$s" $n 12 4 200 "$callA/$s-m$n.xml"
  done
done
