#!/usr/bin/env bash
# record_plans.sh — writes the golden `kasgen plan` outputs (tests/golden/plan/) with the binary
# in $KASGEN, for every spec of tests/golden/plan_specs.txt and every case of tests/golden/plan_cases.txt.  Run it only
# when a change of the rankings is intended, and say why in the commit.
set -eu
: "${KASGEN:?set KASGEN to the kasgen binary}"
cd "$(dirname "$0")/../.."
export KASGEN_LIBRARY=${KASGEN_LIBRARY:-$PWD/library}
mkdir -p tests/golden/plan
grep -v '^#' tests/golden/plan_cases.txt | while read -r name opts; do
  for spec in $(grep -v '^#' tests/golden/plan_specs.txt); do
    stem=$(basename "$spec" .spec)
    # shellcheck disable=SC2086  # opts is a list of words
    "$KASGEN" plan "$spec" $opts >"tests/golden/plan/$stem.$name.txt"
  done
done
