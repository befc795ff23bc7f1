#!/usr/bin/env bash
# bench/prepare_tune.sh DIR [TOP] — on the host, before bench/gpu_tune.sh: generates the top TOP
# (default 30) candidates of every spec in specs/ and benchmarks/specs/ that code can be
# generated for, into DIR/<spec>/ (default gpu-tune/), with ptxas's registers where nvcc is found
# (--ptxas; give `kasgen tune` and `kasgen calibrate` --ptxas too, so that they search the same
# way).  SPECS="a.spec b.spec" limits it to those specs; DB=FILE ranks them with another GPU's
# timing database (benchmarks/nvidia-h200.xml for an H200; give the same --db to calibrate, tune
# and model_eval.sh).  Specs that cannot be generated are listed and skipped.  Afterwards, on the
# GPU machine: bash bench/gpu_tune.sh DIR OUT; back here:
#     kasgen calibrate OUT --ptxas                     (fits the model to the runs)
#     cp OUT/<spec>/results.xml DIR/<spec>/ && kasgen tune DIR/<spec> --ptxas   (ships the measured best)
#     KASGEN_FLAGS=--ptxas benchmarks/model_eval.sh OUT                        (held-out figures)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-gpu-tune}
top=${2:-30}
kasgen=${KASGEN:-./kasgen}
mkdir -p "$dir"
for spec in ${SPECS:-specs/*.spec benchmarks/specs/*.spec}; do
  [ -f "$spec" ] || continue
  name=$(basename "$spec" .spec)
  if "$kasgen" "$spec" --top "$top" --uncalibrated --ptxas ${DB:+--db "$DB"} --out "$dir" \
    >"$dir/.$name.log" 2>&1; then
    echo "prepared $dir/$name ($(ls -d "$dir/$name"/cand* | wc -l) candidates)"
  else
    echo "skipped $spec: $(grep -m1 'error:' "$dir/.$name.log" || tail -1 "$dir/.$name.log")"
  fi
  rm -f "$dir/.$name.log"
done
