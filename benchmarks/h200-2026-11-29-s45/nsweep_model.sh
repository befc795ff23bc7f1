#!/usr/bin/env bash
# Session 45: the n sweep (nsweep/SPEC/nN.xml, nsweep_call.sh) judged by the model at each n.
# An evaluation of stored measurements; no GPU.  nsweep_predict.c (linked against the build's
# libkasgen.a: run `make` first) searches each spec as nsweep_prep.sh generated it and predicts
# every measured candidate at the n its file was measured at; nsweep_metrics.py prints, per spec
# and n and over all specs per n, Spearman's rho of predicted against measured, the measured gap
# of the predicted #1 to the measured best, and the mean relative error, for the predictions in
# the files (the model at 2^22, as they were generated) and for the model now.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2046  # pkg-config's words
cc -O2 -std=c11 -D_GNU_SOURCE -Isrc -I/usr/include/lpsolve $(pkg-config --cflags libxml-2.0 inih) \
  -o "$tmp/predict" "$here/nsweep_predict.c" build/libkasgen.a \
  $(pkg-config --libs libxml-2.0 inih) -llpsolve55 -lcolamd -ldl -lm
for d in "$here"/nsweep/*/; do
  s=$(basename "$d")
  spec=specs/$s.spec
  [ -f "$spec" ] || spec=benchmarks/specs/$s.spec
  "$tmp/predict" "$spec" benchmarks/nvidia-h200.xml "$d"/n*.xml 2>/dev/null | sed "s/^/$s /"
done >"$tmp/rows"
python3 "$here/nsweep_metrics.py" "$tmp/rows"
