#!/usr/bin/env bash
# search_times.sh — how long `kasgen SPEC --top 10` takes, emission included, on the machine it
# runs on (docs/search.md): one Markdown table row per spec with its calls, the search's mode
# (exact, intervals), the limits that cut it (as kasgen names them on stderr), the wall-clock
# and CPU (user + system) seconds and peak memory (/usr/bin/time -f '%e %U %S %M'; on a shared
# machine the CPU seconds are the steadier figure), and the gap between the predicted #1 and
# the compulsory-traffic bound.  Specs with arrays at the API are not emitted yet: they are timed
# with `kasgen plan SPEC --top 10` and marked so.
#
#   benchmarks/search_times.sh [SPEC...]     (default: specs/*.spec, benchmarks/specs/*.spec,
#                                             tests/specs/big40.spec)
# CHAINS="256 1024" adds chains of that many calls `B = madd33(B, A)` (written to a temporary
# folder as chainN.spec): the search's longest kernels per call (docs/search.md, "Long specs").
# Run from the repository root after `make all`; KASGEN overrides the binary.  Speed targets
# (issue #10, 2-core CI machine): every seed spec <= 0.5 s, <= 12 calls <= 1 s, the 36-call
# element <= 5 s, the 128-call one <= 30 s, both under 2 GB.
set -u
K=${KASGEN:-build/kasgen}
[ -x "$K" ] || { echo "search_times.sh: no $K (make all first)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "search_times.sh: needs /usr/bin/time (GNU time)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ $# -eq 0 ]; then set -- specs/*.spec benchmarks/specs/*.spec tests/specs/big40.spec; fi
for calls in ${CHAINS:-}; do
  { echo 'matrix3x3 A, B;'; echo 'input A;'; echo 'B = madd33(A, A);'
    echo "for i in 0..$((calls - 1)) { B = madd33(B, A); }"; echo 'return B;'
  } >"$tmp/chain$calls.spec"
  set -- "$@" "$tmp/chain$calls.spec"
done

# The limits named in kasgen's notes, comma-separated ("none" when nothing cut the search).
limits_of() {
  local l=()
  grep -q "the exact search's limit\|could be in the top" "$1" && l+=("intervals of statement order")
  grep -q 'note: --max-fusion' "$1" && l+=("--max-fusion")
  grep -q 'note: --time-limit' "$1" && l+=("--time-limit")
  grep -q 'chosen by a beam of width' "$1" && l+=("beam width")
  local IFS=";"  # joined by ";"
  [ ${#l[@]} -gt 0 ] && echo "${l[*]}" || echo none
}

echo "| spec | calls | mode | limits hit | wall s | CPU s | peak MB | #1 above bound |"
echo "|---|---:|---|---|---:|---:|---:|---:|"
for spec in "$@"; do
  label=$spec  # a chain of CHAINS by its name, not its temporary folder
  [ "${spec#"$tmp"/}" = "$spec" ] || label="$(basename "$spec") (CHAINS)"
  calls=$("$K" check "$spec" 2>/dev/null | sed -n '1s/.*: ok: \([0-9]*\) calls.*/\1/p')
  [ -n "$calls" ] || { echo "| $label | ? | check failed | | | | | |"; continue; }
  rm -rf "$tmp/out"
  how=emitted
  if ! "$K" plan "$spec" --top 1 --max-fusion 1 --no-db >/dev/null 2>&1; then
    echo "| $label | $calls | plan failed | | | | | |"
    continue
  fi
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$K" "$spec" --top 10 --out "$tmp/out" \
    >/dev/null 2>"$tmp/err"
  if grep -q 'is an array: code generation for arrays is not written yet' "$tmp/err"; then
    how="plan only (arrays)"
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$K" plan "$spec" --top 10 >/dev/null 2>"$tmp/err"
  fi
  read -r secs user sys kb <"$tmp/time"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  mode=$(sed -n 's/.*note: search: \(exact\|exhaustive\) over.*/\1/p' "$tmp/err" | head -1)
  [ -n "$mode" ] || mode=intervals
  gap=$(sed -n 's/.*predicted #1 is \([0-9.]*%\) above the compulsory-traffic bound.*/\1/p' "$tmp/err")
  printf '| %s | %s | %s, %s | %s | %s | %s | %d | %s |\n' "$label" "$calls" "$mode" "$how" \
    "$(limits_of "$tmp/err")" "$secs" "$cpu" "$((kb / 1024))" "${gap:-?}"
done
