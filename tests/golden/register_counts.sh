#!/usr/bin/env bash
# register_counts.sh — ptxas's register count of every kernel of the top-10 candidates (and the
# unfused form) of the seed specs, as `kasgen SPEC --top 10` generates them:
#
#   tests/golden/register_counts.sh > counts.txt          one line per kernel:
#                                                          spec candidate kernel registers spills
#   tests/golden/register_counts.sh --compare FILE         the same, checked against FILE: exit 1
#                                                          when a kernel needs more registers or
#                                                          spills more, or the kernels differ
#
# Kernels are numbered 1.. in launch order whatever base the generated names use.  Needs nvcc
# (no GPU); takes a few minutes (one nvcc run per spec).  tests/golden/registers.txt holds the
# counts of the code generator before the architecture refactoring (issue #15).
set -eu
: "${KASGEN:?set KASGEN to the kasgen binary}"
cd "$(dirname "$0")/../.."
NVCC=${NVCC:-$(tools/find-nvcc.sh)} # tools/find-nvcc.sh decides
export KASGEN_LIBRARY=${KASGEN_LIBRARY:-$PWD/library}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

counts() {
  for spec in stvenant stvenant_inner bigfusion bigfusion_full synctest; do
    "$KASGEN" "specs/$spec.spec" --top 10 --out "$tmp" >/dev/null
    make -s -C "$tmp/$spec" compile-check NVCC="$NVCC" \
      NVCCFLAGS="-O3 -arch=sm_90 -Xptxas -v" >"$tmp/$spec.ptxas" 2>&1
    # ptxas names the entry function, then (a few lines on) its spills and registers.
    awk -v spec="$spec" '
      /Compiling entry function/ {
        match($0, /kas_(cand[0-9]+|unfused)_k[0-9]+/)
        name = substr($0, RSTART, RLENGTH); split(name, part, "_")
        cand = part[2]; k = substr(part[3], 2) + 0; spills = 0
      }
      /bytes spill stores/ { spills = $5 + 0 }
      /Used [0-9]+ registers/ && cand != "" {
        match($0, /Used [0-9]+ registers/); regs = substr($0, RSTART + 5, RLENGTH - 15) + 0
        print spec, cand, k, regs, spills; cand = ""
      }' "$tmp/$spec.ptxas" | sort -k2,2 -k3,3n |
      awk '{ if ($2 != last) { n = 0; last = $2 } print $1, $2, ++n, $4, $5 }'
  done
}

if [ "${1:-}" = --compare ]; then
  golden=$2
  counts >"$tmp/now.txt"
  join -j1 <(awk '{print $1"/"$2"/"$3, $4, $5}' "$golden" | sort) \
           <(awk '{print $1"/"$2"/"$3, $4, $5}' "$tmp/now.txt" | sort) >"$tmp/joined"
  [ "$(wc -l <"$tmp/joined")" = "$(wc -l <"$golden")" ] &&
    [ "$(wc -l <"$tmp/now.txt")" = "$(wc -l <"$golden")" ] ||
    { echo "the kernels differ from $golden"; diff <(cut -d' ' -f1-3 "$golden") \
        <(cut -d' ' -f1-3 "$tmp/now.txt") | head; exit 1; }
  awk '{ d = $4 - $2; more += d > 0 || $5 > $3; fewer += d < 0; before += $2; after += $4 }
       END { printf "%d kernels: %d fewer registers, %d more; total %d -> %d registers\n",
             NR, fewer, more, before, after; exit more > 0 }' "$tmp/joined"
  awk '$4 != $2 || $5 != $3 { print "  " $1 ": " $2 " -> " $4 " registers, spills " $3 " -> " $5 }' \
    "$tmp/joined"
else
  counts
fi
