#!/usr/bin/env bash
# functions_doc.sh — docs/functions.md lists the whole library: for every function that
# `kasgen list` shows, a table row with its signature and its formula (as function.ini gives it,
# with '|' escaped for Markdown), and every one of its implementations.  Run by tests/run.sh with
# $KASGEN and $KASGEN_LIBRARY set.
set -u
KASGEN=${KASGEN:-./kasgen}
doc=docs/functions.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$KASGEN" list --library "${KASGEN_LIBRARY:-library}" >"$tmp/list" || fail "kasgen list exit $?"
# E of a block shape is not the E of a formula such as green33's E = (F^T F - I)/2: the list says
# which it means before the first shape
grep -qx 'functions (block: threads along x, y and z; E: elements per block):' "$tmp/list" ||
  fail "kasgen list does not say what E of a block shape is"
nfun=0 nimpl=0 fn=""
while IFS= read -r line; do
  if [[ $line =~ ^\ \ ([a-z0-9_]+)\((.*)\)\ -\>\ ([a-z0-9]+)$ ]]; then
    fn=${BASH_REMATCH[1]}
    row=$(grep -F "| \`$fn\` |" "$doc") || fail "$doc has no row for $fn"
    grep -qF "| (${BASH_REMATCH[2]}) → ${BASH_REMATCH[3]} |" <<<"$row" || fail "$fn: signature differs"
    nfun=$((nfun + 1))
  elif [[ $line =~ ^\ \ \ \ formula:\ (.*)$ ]]; then
    formula=${BASH_REMATCH[1]//|/\\|}
    grep -qF "\`$formula\`" <<<"$row" || fail "$fn: formula '$formula' not in its row"
  elif [[ $line =~ ^\ \ \ \ (${fn}_[0-9]+)\  ]]; then
    grep -qF "\`${BASH_REMATCH[1]}\`" <<<"$row" || fail "$fn: ${BASH_REMATCH[1]} not in its row"
    nimpl=$((nimpl + 1))
  fi
done <"$tmp/list"
((nfun >= 27 && nimpl >= 2 * nfun)) || fail "parsed only $nfun functions and $nimpl implementations"
rows=$(grep -c '^| `[a-z0-9_]*` | (' "$doc")
[ "$rows" = "$nfun" ] || fail "$doc has $rows function rows, the library $nfun functions"
echo "functions_doc: $nfun functions and $nimpl implementations documented"
