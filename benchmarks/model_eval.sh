#!/usr/bin/env bash
# model_eval.sh — held-out evaluation of the model's calibration (docs/model.md, "Calibration"):
# leave one spec out.  For every spec S with results in RESULTS, the constants fitted on every
# other spec's runs predict S's runs (`kasgen calibrate RESULTS --held-out`, which stores
# nothing).  Prints per run: candidates, the measured span (slowest / fastest - 1), and for the
# plain and the held-out calibrated model Spearman's rho, the predicted best's measured gap to
# the measured best, and the mean relative error; then how many runs meet issue #14's targets.
# No figure here comes from a spec the constants were fitted on.
#
#   benchmarks/model_eval.sh [RESULTS] [DB]
#
# RESULTS: a folder of <spec>.xml (as benchmarks/h100-2026-11-23/) or of <name>/results.xml with
# <name>/index.txt (as bench/gpu_tune.sh leaves them; two runs of one spec are held out
# together); default benchmarks/h100-2026-11-23.
# DB: the database of the GPU they were measured on (default benchmarks/nvidia-h100-80gb-hbm3.xml).
# KASGEN_FLAGS: flags of the generation that was measured (default none, as the committed
# H100 results were generated before ptxas's registers; bench/gpu_tune.sh's runs: --ptxas).
# Until session 38 this script calibrated and ran `kasgen tune` once per spec; --held-out gives
# the same figures (the H100's 34 runs: 29 of 33, 33 of 34, 22 of 34 both ways) in one search
# of each run.
set -euo pipefail
cd "$(dirname "$0")/.."
results=${1:-benchmarks/h100-2026-11-23}
db=${2:-benchmarks/nvidia-h100-80gb-hbm3.xml}
kasgen=${KASGEN:-./kasgen}
flags=${KASGEN_FLAGS-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KASGEN_CACHE=${KASGEN_CACHE:-$tmp/cache}
# shellcheck disable=SC2086  # flags is a list of words
"$kasgen" calibrate "$results" --db "$db" --held-out $flags 2>"$tmp/err" | grep -v ' measured candidates of ' \
  || { cat "$tmp/err" >&2; exit 1; }
