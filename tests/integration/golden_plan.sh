#!/usr/bin/env bash
# golden_plan.sh — `kasgen plan` of every spec of tests/golden/plan_specs.txt under every case of
# tests/golden/plan_cases.txt is byte for byte the recorded golden (tests/golden/plan/): the same
# partitions in the same order with the same predicted times to the printed precision, and under
# --explain the same placements, barriers and reasons.  A refactoring must not move a ranking;
# an intended change re-records the goldens with tests/golden/record_plans.sh.
set -u
: "${KASGEN:?set KASGEN to the kasgen binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 checked=0
while read -r name opts; do
  case "$name" in ''|'#'*) continue ;; esac
  for spec in $(grep -v '^#' tests/golden/plan_specs.txt); do
    stem=$(basename "$spec" .spec)
    golden="tests/golden/plan/$stem.$name.txt"
    [ -f "$golden" ] || { echo "FAIL: no golden $golden"; fails=$((fails + 1)); continue; }
    # shellcheck disable=SC2086  # opts is a list of words
    "$KASGEN" plan "$spec" $opts >"$tmp/out" 2>"$tmp/err" \
      || { echo "FAIL: plan $spec $opts: exit $?"; head -5 "$tmp/err"; fails=$((fails + 1)); }
    if ! diff -u "$golden" "$tmp/out" >"$tmp/diff"; then
      echo "FAIL: plan $spec $opts differs from $golden:"
      head -30 "$tmp/diff"
      fails=$((fails + 1))
    fi
    checked=$((checked + 1))
  done
done <tests/golden/plan_cases.txt
[ "$checked" -ge 24 ] || { echo "FAIL: only $checked golden cases"; fails=$((fails + 1)); }
echo "golden_plan: $checked cases, $fails failures"
((fails == 0))
