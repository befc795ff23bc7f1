#!/usr/bin/env bash
# calibrated_search.sh — the search under a calibration stored beside the database
# (docs/search.md, "Bounds"): with the H100's constants of session 24 (requests-shared-scale 0.25,
# coverage-slope -1.99, requests-overlap 4), which predict some saves below their bytes at the
# copy bandwidth, the bounded search's #1 at --top 1 and 2 is --exhaustive's (it was a partition
# up to 5.2 times slower, pruned by the plain bound); the note's gap to the bound is not
# negative and names the calibrated model's bound; the ranking and index.txt name the store
# whose constants are applied, and --uncalibrated neither applies nor names it.  Run by
# tests/run.sh with $KASGEN set.
set -u
KASGEN=${KASGEN:-./kasgen}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

db="$tmp/h100db.xml"
cp benchmarks/nvidia-h100-80gb-hbm3.xml "$db"
cat >"$tmp/h100db.measured.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<kasgen-measured version="1">
  <calibration work-scale="0.9351" requests-one-scale="4.0000" requests-shared-scale="0.2500" lines-scale="0.7401" requests-overlap="4.0000" coverage-slope="-1.9900" unhidden-share="0.1362" wavefront-scale="1.8091" barrier-scale="1.6835" barrier-warp-ns="0.0000" kernel-ns="0.000000" specs="18" candidates="472" fitted-on="bigfusion synctest stvenant"/>
</kasgen-measured>
XML

# --- the bounded search finds --exhaustive's #1 --------------------------------------------------
for spec in synctest stvenant; do
  for top in 1 2; do
    "$KASGEN" plan "specs/$spec.spec" --db "$db" --top "$top" >"$tmp/bounded" 2>"$tmp/err" ||
      { cat "$tmp/err"; fail "$spec --top $top: exit"; }
    "$KASGEN" plan "specs/$spec.spec" --db "$db" --top "$top" --exhaustive >"$tmp/all" \
      2>"$tmp/err_all" || { cat "$tmp/err_all"; fail "$spec --top $top --exhaustive: exit"; }
    [ "$(head -1 "$tmp/bounded")" = "$(head -1 "$tmp/all")" ] ||
      fail "$spec --top $top: #1 $(head -1 "$tmp/bounded") but --exhaustive's $(head -1 "$tmp/all")"
    # the gap to the calibrated model's bound, never negative
    grep -q "note: predicted #1 is [0-9.]*% above the calibrated model's compulsory-traffic bound" \
      "$tmp/err" || { cat "$tmp/err"; fail "$spec --top $top: no calibrated bound's gap"; }
    grep -q 'predicted #1 is -' "$tmp/err" && fail "$spec --top $top: a negative gap to the bound"
  done
done
# the #1s as session 24's constants predict them (--exhaustive's)
"$KASGEN" plan specs/synctest.spec --db "$db" --top 1 2>/dev/null |
  grep -q '^1 0.0251885 {madd33#0 madd33#1 madd33#2 madd33#3}$' || fail "synctest's #1"
"$KASGEN" plan specs/stvenant.spec --db "$db" --top 1 2>/dev/null | grep -q '^1 0.17481 ' ||
  fail "stvenant's #1"
# --top 3 printed "-3.0% above the compulsory-traffic bound"
"$KASGEN" plan specs/stvenant.spec --db "$db" --top 3 >/dev/null 2>"$tmp/err" || fail "--top 3"
grep -q 'predicted #1 is [0-9.]*% above' "$tmp/err" || { cat "$tmp/err"; fail "--top 3: gap"; }

# --- the ranking and index.txt name the calibration ------------------------------------------
"$KASGEN" specs/synctest.spec --db "$db" --top 2 --out "$tmp/out" >"$tmp/ranking" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "generate: exit"; }
grep -q "^calibrated: the constants of $tmp/h100db.measured.xml are applied (fitted on 18 specs, \
472 candidates; --uncalibrated: the plain model)$" "$tmp/ranking" ||
  { head -5 "$tmp/ranking"; fail "the ranking does not name the calibration"; }
grep -q "^Calibration: the constants of $tmp/h100db.measured.xml are applied " \
  "$tmp/out/synctest/index.txt" || fail "index.txt does not name the calibration"
"$KASGEN" specs/synctest.spec --db "$db" --top 2 --out "$tmp/plain" --uncalibrated \
  >"$tmp/ranking" 2>"$tmp/err" || { cat "$tmp/err"; fail "--uncalibrated: exit"; }
grep -q '^calibrated: ' "$tmp/ranking" && fail "--uncalibrated: the ranking names a calibration"
grep -q '^Calibration: ' "$tmp/plain/synctest/index.txt" &&
  fail "--uncalibrated names a calibration"
grep -q "note: predicted #1 is [0-9.]*% above the compulsory-traffic bound" "$tmp/err" ||
  fail "--uncalibrated: the plain bound's note"
echo "calibrated_search: ok"
