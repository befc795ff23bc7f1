#!/usr/bin/env bash
# bench/out is what `kasgen bench` emits for the committed library; it is committed because the
# GPU machine that runs `make benchdb` cannot build kasgen.  This test fails when the library (or
# the bench emitter) changed and bench/out was not regenerated: run `kasgen bench --out bench/out`.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$KASGEN" bench --out "$tmp/out" >/dev/null
diff -r -x build -x .kasgen-manifest bench/out "$tmp/out" >"$tmp/diff" || {
  head -40 "$tmp/diff"
  echo "bench/out is stale: run 'kasgen bench --out bench/out' and commit it" >&2
  exit 1
}
long=$(bash tests/long_lines.sh bench/out)
[ -z "$long" ] || { echo "bench/out has lines over 100 columns:"; head -5 <<<"$long"; exit 1; }
echo "bench/out matches kasgen bench"
