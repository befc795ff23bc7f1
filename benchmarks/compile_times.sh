#!/usr/bin/env bash
# compile_times.sh — how long nvcc takes on each candidate kasgen emits (issue #11: "nvcc compile
# time of any candidate <= 60 s"): one Markdown table row per (spec, --loops choice) with the
# candidates' count, the slowest candidate's seconds and name, the median, and the lines of the
# slowest kernels.cu.  Each candidate's kernels.cu is compiled alone, as the generated Makefile
# compiles it (nvcc -O3 -arch=sm_90 -lineinfo -c), one at a time, wall-clock seconds.
#
#   benchmarks/compile_times.sh [SPEC...]   (default: specs/stvenant_element.spec
#                                            specs/quadrature.spec)
# LOOPS="model keep unroll groups" (the default) are the --loops choices; TOP (default 10) the
# candidates per run; NVCC the compiler (default nvcc on PATH, else /usr/local/cuda/bin/nvcc).
# Run from the repository root after `make all`; KASGEN overrides the binary.
set -u
K=${KASGEN:-build/kasgen}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$K" ] || { echo "compile_times.sh: no $K (make all first)" >&2; exit 2; }
[ -x "$NVCC" ] || { echo "compile_times.sh: no nvcc ($NVCC)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ $# -eq 0 ]; then set -- specs/stvenant_element.spec specs/quadrature.spec; fi

echo "| spec | --loops | candidates | slowest s | slowest | median s | its lines |"
echo "|---|---|---:|---:|---|---:|---:|"
for spec in "$@"; do
  name=$(basename "$spec" .spec)
  for loops in ${LOOPS:-model keep unroll groups}; do
    out=$tmp/$loops
    if ! "$K" "$spec" --top "${TOP:-10}" --loops "$loops" --out "$out" >"$tmp/log" 2>&1; then
      echo "| $name | $loops | kasgen failed: $(grep -m1 error: "$tmp/log") | | | | |"
      continue
    fi
    : >"$tmp/times"
    for cu in "$out/$name"/cand*/kernels.cu; do
      cand=$(basename "$(dirname "$cu")")
      t0=$(date +%s.%N)
      "$NVCC" -O3 -arch=sm_90 -lineinfo -I "$out/$name/common" -c -o "$tmp/k.o" "$cu" ||
        { echo "| $name | $loops | nvcc failed on $cand | | | | |"; continue 2; }
      t1=$(date +%s.%N)
      echo "$(echo "$t1 - $t0" | bc) $cand $(wc -l <"$cu")" >>"$tmp/times"
    done
    sort -n "$tmp/times" >"$tmp/sorted"
    count=$(wc -l <"$tmp/sorted")
    read -r slow cand lines < <(tail -1 "$tmp/sorted")
    median=$(awk -v n="$count" 'NR == int((n + 1) / 2) { print $1 }' "$tmp/sorted")
    printf '| %s | %s | %d | %.1f | %s | %.1f | %d |\n' "$name" "$loops" "$count" "$slow" \
      "$cand" "$median" "$lines"
    rm -rf "$out"
  done
done
