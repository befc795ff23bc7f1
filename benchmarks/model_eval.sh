#!/usr/bin/env bash
# model_eval.sh — held-out evaluation of the model's calibration (docs/model.md, "Calibration"):
# leave one spec out.  For every spec S with results in RESULTS:
#   1. `kasgen calibrate` on the results of every other spec, into a copy of the database (the
#      shipped database and its store are never touched);
#   2. `kasgen tune` on S's results (in a scratch folder): its "model now (calibrated)" line is the calibrated model's
#      prediction of S, which took no part in the fit; "model now" under --uncalibrated is the
#      plain model, for comparison.
# Prints per spec: candidates, the measured span (slowest / fastest - 1), and for the plain and
# the held-out calibrated model Spearman's rho, the predicted best's measured gap to the measured
# best, and the mean relative error.  No figure here comes from a spec the constants were fitted
# on.
#
#   benchmarks/model_eval.sh [RESULTS] [DB]
#
# RESULTS: a folder of <spec>.xml (as benchmarks/h100-2026-11-23/) or of <spec>/results.xml with
# <spec>/index.txt (as bench/gpu_tune.sh leaves them); default benchmarks/h100-2026-11-23.
# DB: the database of the GPU they were measured on (default benchmarks/nvidia-h100-80gb-hbm3.xml).
# KASGEN_FLAGS: flags of the generation that was measured (default none, as the committed
# H100 results were generated before ptxas's registers; bench/gpu_tune.sh's runs: "").
# ONLY="a b": evaluate only those specs (each still calibrated on every other run).
set -euo pipefail
cd "$(dirname "$0")/.."
results=${1:-benchmarks/h100-2026-11-23}
db=${2:-benchmarks/nvidia-h100-80gb-hbm3.xml}
kasgen=${KASGEN:-./kasgen}
flags=${KASGEN_FLAGS-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KASGEN_CACHE=${KASGEN_CACHE:-$tmp/cache}

# spec name and its results file, one per line
list_runs() {
  for f in "$results"/*.xml "$results"/*/results.xml; do
    [ -f "$f" ] || continue
    sed -n 's/.*<kasgen-results version="1" spec="\([^"]*\)".*/\1 /p' "$f" | tr -d '\n'
    echo "$f"
  done
}
# the spec file of a run: index.txt beside it, else specs/ or benchmarks/specs/
spec_of() { # name results-file
  local idx; idx=$(dirname "$2")/index.txt
  if [ -f "$idx" ]; then sed -n '1s/.*spec [^ ]* (\(.*\)), [0-9]* calls.*/\1/p' "$idx"; return; fi
  for d in specs benchmarks/specs; do [ -f "$d/$1.spec" ] && { echo "$d/$1.spec"; return; }; done
}
figures() { # line of tune's output -> "rho gap error"
  sed -n 's/.*: spearman \([-0-9.a-z]*\), predicted best \([-0-9.]*\)% slower .* error \([0-9.]*\)% .*/\1 \2% \3%/p'
}

runs=$(list_runs)
[ -n "$runs" ] || { echo "model_eval: no results in $results" >&2; exit 1; }
printf '%-16s %5s %7s | %-22s | %-22s\n' spec cands span "plain: rho gap err" \
  "held-out: rho gap err"
while read -r name file; do
  [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $name "* ]] || continue
  spec=$(spec_of "$name" "$file")
  [ -n "$spec" ] || { echo "$name: spec not found, skipped" >&2; continue; }
  rm -rf "$tmp/runs" "$tmp/gen" "$tmp"/db.*
  mkdir -p "$tmp/runs" "$tmp/gen"
  cp "$db" "$tmp/db.xml"
  while read -r other ofile; do
    [ "$other" = "$name" ] && continue
    if [ "$(basename "$ofile")" = results.xml ]; then
      mkdir -p "$tmp/runs/$other"; cp "$ofile" "$(dirname "$ofile")/index.txt" "$tmp/runs/$other/"
    else
      cp "$ofile" "$tmp/runs/"
    fi
  done <<<"$runs"
  # shellcheck disable=SC2086  # flags is a list of words
  "$kasgen" calibrate "$tmp/runs" --db "$tmp/db.xml" $flags >"$tmp/calibrate.log" 2>&1 \
    || { echo "$name: calibration failed:"; tail -3 "$tmp/calibrate.log"; continue; }
  mkdir -p "$tmp/gen/$name"
  cp "$file" "$tmp/gen/$name/results.xml"
  # shellcheck disable=SC2086
  "$kasgen" tune "$tmp/gen/$name" --spec "$spec" --db "$tmp/db.xml" $flags --uncalibrated \
    >"$tmp/plain" 2>&1 || true
  # shellcheck disable=SC2086
  "$kasgen" tune "$tmp/gen/$name" --spec "$spec" --db "$tmp/db.xml" $flags >"$tmp/held" 2>&1 || true
  n=$(sed -n 's/.*error [0-9.]*% (\([0-9]*\) candidates).*/\1/p' "$tmp/held" | tail -1)
  span=$(awk '$1 ~ /^[0-9]+$/ && $3 ~ /^cand/ && $6 > 0 && $0 !~ /WRONG/ {
                if (!lo || $6 < lo) lo = $6; if ($6 > hi) hi = $6 }
              END { if (lo) printf "%.1f%%", 100 * (hi / lo - 1) }' "$tmp/held")
  printf '%-16s %5s %7s | %-22s | %-22s\n' "$name" "${n:-?}" "${span:-?}" \
    "$(grep '^model now: ' "$tmp/plain" | figures)" \
    "$(grep '^model now (calibrated): ' "$tmp/held" | figures)"
done <<<"$runs"
