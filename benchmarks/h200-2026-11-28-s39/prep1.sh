#!/usr/bin/env bash
# Session 39: the folders of call 1, on the host.  For bigfusion and plate5_12, a copy of the
# H200 database with the held-out constants session 38 fitted for that spec
# (benchmarks/h200-2026-11-28-s38/held_out_constants.txt) ranks the spec: top 12, --variants 8
# (gpu/s39/<spec>); and the database without a calibration, the same way (gpu/s39/plain/<spec>).
#   KASGEN=build/kasgen bash benchmarks/h200-2026-11-28-s39/prep1.sh
set -eu
: "${KASGEN:?the kasgen binary}"
consts=benchmarks/h200-2026-11-28-s38/held_out_constants.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for S in bigfusion plate5_12; do
  read -r _ _ a r1 rs l p sl b w c < <(grep "^CONST $S " "$consts" | head -1)
  mkdir -p "$tmp/$S"
  cp benchmarks/nvidia-h200.xml "$tmp/$S/db.xml"
  printf '<?xml version="1.0" encoding="UTF-8"?>\n<kasgen-measured version="1">\n  <calibration work-scale="%s" requests-one-scale="%s" requests-shared-scale="%s" lines-scale="%s" requests-overlap="%s" coverage-slope="%s" barrier-scale="%s" barrier-warp-ns="%s" kernel-ns="%s" specs="63" candidates="0" fitted-on="all but %s"/>\n</kasgen-measured>\n' \
    "$a" "$r1" "$rs" "$l" "$p" "$sl" "$b" "$w" "$c" "$S" >"$tmp/$S/db.measured.xml"
  spec=specs/$S.spec
  [ -f "$spec" ] || spec=benchmarks/specs/$S.spec
  "$KASGEN" "$spec" --db "$tmp/$S/db.xml" --top 12 --variants 8 --out gpu/s39 >/dev/null
  "$KASGEN" "$spec" --db benchmarks/nvidia-h200.xml --uncalibrated --top 12 --variants 8 \
    --out gpu/s39/plain >/dev/null
done
