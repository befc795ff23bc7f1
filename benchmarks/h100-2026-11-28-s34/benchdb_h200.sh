#!/usr/bin/env bash
# Session 34: how benchmarks/nvidia-h200.xml was refreshed, from the committed bench/out (on the
# host at 411bc39 `kasgen bench --out bench/out` rewrote it unchanged).
# On the H200 (two device calls, each under the 600 s limit; 215 s and 195 s):
#   PART=single make benchdb; cp benchmarks/nvidia-h200.single.xml $OUT/
#   PART=double make benchdb; cp benchmarks/nvidia-h200.double.xml $OUT/
# The device's working tree did not keep the first call's untracked output for the second, so
# bench/benchdb.sh could not join the halves there; this joins them on the host as it would:
#   bash benchmarks/h100-2026-11-28-s34/benchdb_h200.sh SINGLE.xml DOUBLE.xml > benchmarks/nvidia-h200.xml
set -euo pipefail
single=$1 double=$2
sed '/<routine /,$d' "$single"
for half in "$single" "$double"; do
  sed -n '/<routine /,/<\/kasgen-timings>/p' "$half" | sed '/<\/kasgen-timings>/d'
done
echo '</kasgen-timings>'
