#!/usr/bin/env bash
# bench/benchdb.sh — `make benchdb` on a GPU machine: builds the micro-benchmark program that
# `kasgen bench --out bench/out` emitted on the host (it needs only the CUDA toolkit, gcc and
# make), runs it, and writes benchmarks/<gpu-slug>.xml (docs/timingdb.md): every routine in single
# and double precision, on element-major arrays (at the precision's 16-byte vector width and, for
# the contiguous routines, at W = 1) and on component-major ones.
#   BENCH_DIR=dir  another emitted folder;  ARCH=sm_XX  another GPU architecture (default sm_90).
#   PART=single or PART=double  time one precision only, into benchmarks/<gpu-slug>.<part>.xml
#   (for machines that limit the length of one command); once both halves are there they are
#   joined into benchmarks/<gpu-slug>.xml and removed.
#   PART=join  only that join, of halves copied into benchmarks/ from a machine that does not keep
#   one command's files for the next (needs neither the toolkit nor bench/out).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_DIR:-bench/out}
part=${PART:-}
case "$part" in
  "" | single | double | join) ;;
  *) echo "benchdb: PART must be single, double or join, not '$part'" >&2; exit 2 ;;
esac
if [ "$part" != join ]; then
  if [ ! -f "$dir/Makefile" ]; then
    echo "benchdb: $dir/Makefile missing: run 'kasgen bench --out $dir' on the host first" >&2
    exit 1
  fi
  command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
  make -C "$dir" -j"$(nproc)" ARCH="${ARCH:-sm_90}"
  mkdir -p benchmarks
  if [ -z "$part" ]; then
    exec "$dir/build/kasbench" "$PWD/benchmarks"
  fi
  "$dir/build/kasbench" "$PWD/benchmarks" "$part"
fi

# Both halves there: the device and provenance of the first, the routines of both.
joined=0
for single in benchmarks/*.single.xml; do
  [ -f "$single" ] || continue
  double=${single%.single.xml}.double.xml
  [ -f "$double" ] || continue
  whole=${single%.single.xml}.xml
  {
    sed '/<routine /,$d' "$single"
    for half in "$single" "$double"; do
      sed -n '/<routine /,/<\/kasgen-timings>/p' "$half" | sed '/<\/kasgen-timings>/d'
    done
    echo '</kasgen-timings>'
  } >"$whole.tmp"
  mv "$whole.tmp" "$whole"
  rm -f "$single" "$double"
  echo "benchdb: joined both precisions into $whole"
  joined=$((joined + 1))
done
if [ "$part" = join ] && [ "$joined" = 0 ]; then
  echo "benchdb: no benchmarks/<gpu>.single.xml with its .double.xml to join" >&2
  exit 1
fi
