#!/usr/bin/env bash
# Session 39: the folders of call 5, on the host (kasgen at f36bb7f).  For each spec S, the
# calibration with u and v fitted on the H200's runs without S's (sets.sh's H200 folder less
# p_S and v_S: `kasgen calibrate RUNS_WITHOUT_S --db COPY_OF_nvidia-h200.xml`; the constants are
# in held_out_constants_uv.txt) ranks S: `kasgen SPEC --db COPY --top 10 --out gpu/s39/uv`.
#   H200=<sets.sh's H200 folder> KASGEN=build/kasgen bash benchmarks/h200-2026-11-28-s39/prep5.sh
set -eu
: "${H200:?the H200 runs}" "${KASGEN:?the kasgen binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for S in bigfusion plate5_12 bigfusion_full stvenant_element2_unrolled laplace_blocks24 \
  quadrature synctest; do
  mkdir -p "$tmp/$S/runs"
  for d in "$H200"/*; do
    case $(basename "$d") in p_$S | v_$S) ;; *) cp -r "$d" "$tmp/$S/runs/" ;; esac
  done
  cp benchmarks/nvidia-h200.xml "$tmp/$S/db.xml"
  "$KASGEN" calibrate "$tmp/$S/runs" --db "$tmp/$S/db.xml" >/dev/null
  spec=specs/$S.spec
  [ -f "$spec" ] || spec=benchmarks/specs/$S.spec
  "$KASGEN" "$spec" --db "$tmp/$S/db.xml" --top 10 --out gpu/s39/uv >/dev/null
done
