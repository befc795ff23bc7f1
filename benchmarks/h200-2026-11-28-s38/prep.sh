#!/usr/bin/env bash
# Session 38: how the folders of the calls were made, on the host (kasgen at 43337a8).
#   RUNS: the 64 H200 runs, one folder each with results.xml and index.txt: p_<spec> the plain
#   top 30 (benchmarks/h100-2026-11-28-s34/call3 h2/, h100-2026-11-28-s35/call1-3 h2/,
#   h200-2026-11-28-s36/call1 s35/h2/stvk_tet), v_<spec> the top 10 with block shapes
#   (h200-2026-11-28-s37/call4 s37/var/, call5 s37/var2/).
#   CONSTANTS: per run, "CONST spec a r1 rs l p s b w c", the held-out fit of its spec: what
#   `kasgen calibrate RUNS --db benchmarks/nvidia-h200.xml --held-out` fits, printed by a local
#   build of 43337a8 that adds those lines to the table (not committed; held_out_constants.txt).
#   bash prep.sh  ->  gpu/s38/cal/<spec>
set -eu
: "${RUNS:?the H200 runs}" "${CONSTANTS:?the held-out constants}" "${KASGEN:?the kasgen binary}"
ho=$(mktemp -d)
grep '^CONST ' "$CONSTANTS" | sort -u -k2,2 | while read -r _ S a r1 rs l p sl b w c; do
  mkdir -p "$ho/$S"
  cp benchmarks/nvidia-h200.xml "$ho/$S/db.xml"
  printf '<?xml version="1.0" encoding="UTF-8"?>\n<kasgen-measured version="1">\n  <calibration work-scale="%s" requests-one-scale="%s" requests-shared-scale="%s" lines-scale="%s" requests-overlap="%s" coverage-slope="%s" barrier-scale="%s" barrier-warp-ns="%s" kernel-ns="%s" specs="63" candidates="0" fitted-on="all but %s"/>\n</kasgen-measured>\n' \
    "$a" "$r1" "$rs" "$l" "$p" "$sl" "$b" "$w" "$c" "$S" >"$ho/$S/db.measured.xml"
  spec=$(sed -n '1s/.*spec [^ ]* (\(.*\)), [0-9]* calls.*/\1/p' "$RUNS/p_$S/index.txt")
  "$KASGEN" "$spec" --db "$ho/$S/db.xml" --top 10 --out gpu/s38/cal >/dev/null
done
rm -rf "$ho"
