#!/usr/bin/env bash
# bench/prepare_gpu.sh DIR — on the host: emits what bench/gpu_verify.sh runs on the GPU machine
# into DIR (default gpu/): the top 10 of every seed spec in single and double precision, with
# every array element-major and with every array component-major, each configuration in a folder
# of its own (DIR/<precision>-<layout>/<spec>/), and every standalone unit kernel in both
# precisions (DIR/units-<precision>/<function>/).
#   CONFIGS="single-element double-component"   only these configurations (default: all four)
#   SPECS="stvenant synctest"                     only these seed specs (default: all five)
#   UNITS=0                                       no unit kernels (bench/gpu_io.sh runs none)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-gpu}
kasgen=${KASGEN:-./kasgen}
configs=${CONFIGS:-"single-element double-element single-component double-component"}
specs=${SPECS:-"stvenant stvenant_inner bigfusion bigfusion_full synctest"}
mkdir -p "$dir"
for c in $configs; do
  precision=${c%-*} layout=${c#*-}
  for s in $specs; do
    "$kasgen" "specs/$s.spec" --top 10 --precision "$precision" --layout "$layout" \
      --out "$dir/$c" >"$dir.$c.$s.log" 2>&1 || { cat "$dir.$c.$s.log"; exit 1; }
  done
done
if [ "${UNITS:-1}" != 0 ]; then
  for p in single double; do
    "$kasgen" units --precision "$p" --out "$dir/units-$p" >/dev/null
  done
fi
rm -f "$dir".*.log
echo "prepared $dir: $(ls "$dir" | tr '\n' ' ')"
