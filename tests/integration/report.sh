#!/usr/bin/env bash
# report.sh — `kasgen report DIR` on results files as a GPU run writes them: the table and the
# Spearman correlation recomputed from the ranks, plot.png when gnuplot exists, and located errors
# (file:line) with exit 1 for every kind of malformed file in tests/fixtures/results/.
set -eu
: "${KASGEN:?set KASGEN to the kasgen binary}"
fixtures=tests/fixtures/results
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A good file: table rows, ranks, WRONG flag, recomputed Spearman (ranks 1234 vs 2143 -> 0.600).
cp -r "$fixtures/good" "$tmp/good"
"$KASGEN" report "$tmp/good" >"$tmp/out" 2>"$tmp/err" || fail "good: exit $?"
grep -q '^cand01 .* 1 \+2  mvmul33_1+svmul3_1 | ttmul411_2+ttmul3212_1$' "$tmp/out" || fail "good: cand01 row"
grep -q '^cand04 .*WRONG$' "$tmp/out" || fail "good: wrong candidate not flagged"
grep -q '^unfused .* - \+-  ' "$tmp/out" || fail "good: unfused row should be unranked"
grep -q 'Spearman rank correlation (predicted vs measured, 4 candidates): 0.600' "$tmp/out" \
  || fail "good: Spearman"
[ "$(grep -cE '^(cand|unfused)' "$tmp/out")" = 6 ] || fail "good: expected 5 rows and the header"
if command -v gnuplot >/dev/null; then
  [ -s "$tmp/good/plot.png" ] || fail "good: no plot.png"
  head -c 8 "$tmp/good/plot.png" | od -An -c | grep -q 'P   N   G' || fail "good: plot.png is not a PNG"
fi

# Reversed order: -1; a trailing slash on DIR is fine.
cp -r "$fixtures/perfect" "$tmp/perfect"
"$KASGEN" report "$tmp/perfect/" >"$tmp/out" 2>&1 || fail "perfect: exit $?"
grep -q 'candidates): -1.000' "$tmp/out" || fail "perfect: Spearman should be -1"
grep -q 'on Test & GPU' "$tmp/out" || fail "perfect: XML entity in device name"

# A real file, written by the generated harness of specs/stvenant.spec on an H200: the round trip.
cp -r "$fixtures/h200-stvenant" "$tmp/h200"
"$KASGEN" report "$tmp/h200" >"$tmp/out" 2>"$tmp/err" || fail "h200: exit $?"
grep -q 'stvenant on NVIDIA H200: n = 4194304, 532 bytes/element' "$tmp/out" || fail "h200: header"
grep -q 'candidates): 0.976' "$tmp/out" || fail "h200: Spearman"
[ ! -s "$tmp/err" ] || { cat "$tmp/err" >&2; fail "h200: diagnostics on a harness-written file"; }

# A file whose stored Spearman disagrees with its ranks: the recomputed value wins, with a warning.
mkdir "$tmp/liar"
sed 's/<spearman value="0.6000"/<spearman value="0.9"/' "$fixtures/good/results.xml" >"$tmp/liar/results.xml"
"$KASGEN" report "$tmp/liar" >"$tmp/out" 2>"$tmp/err" || fail "liar: exit $?"
grep -q 'candidates): 0.600' "$tmp/out" || fail "liar: recomputed Spearman"
grep -q 'warning: the file says Spearman 0.9000' "$tmp/err" || fail "liar: no warning"

# Malformed files: exit 1, error located at the right line, no crash, no plot.
expect_error() { # dir line message
  local d=$1 line=$2 msg=$3 rc=0
  cp -r "$fixtures/$d" "$tmp/$d"
  "$KASGEN" report "$tmp/$d" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" = 1 ] || fail "$d: exit $rc, expected 1"
  grep -q "$tmp/$d/results.xml:$line:.*error: .*$msg" "$tmp/err" || { cat "$tmp/err" >&2; fail "$d: message"; }
  [ ! -e "$tmp/$d/plot.png" ] || fail "$d: plot drawn from a bad file"
}
expect_error malformed 6 'malformed XML'
expect_error missing-attr 6 'lacks the attribute measured-ns'
expect_error bad-number 7 'melem-s="5000x" of <candidate> is not a number'
expect_error duplicate-rank 8 'predicted-rank 2 appears twice'
expect_error unknown-element 9 'unknown element <kandidate>'
expect_error no-candidate 3 'has no <candidate>'

# No results file at all: a clear error, exit 1.
mkdir "$tmp/empty"
rc=0; "$KASGEN" report "$tmp/empty" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "empty: exit $rc"
grep -q "results.xml.*error: cannot read" "$tmp/err" || fail "empty: message"
echo "report: all checks passed"
