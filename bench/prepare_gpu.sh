#!/usr/bin/env bash
# bench/prepare_gpu.sh DIR — on the host: emits what bench/gpu_verify.sh runs on the GPU machine
# (the top 10 of every seed spec and every standalone unit kernel) into DIR (default gpu/).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-gpu}
kasgen=${KASGEN:-./kasgen}
for s in stvenant stvenant_inner bigfusion bigfusion_full synctest; do
  "$kasgen" "specs/$s.spec" --top 10 --out "$dir" >"$dir.$s.log"
done
"$kasgen" units --out "$dir/units" >/dev/null
rm -f "$dir".*.log
echo "prepared $dir: $(ls "$dir" | tr '\n' ' ')"
