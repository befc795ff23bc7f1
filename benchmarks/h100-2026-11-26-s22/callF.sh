#!/usr/bin/env bash
# Call F (session 22): the H200's timing database, both halves (kasbench built on the host at
# d5c7219's bench/out), joined as bench/benchdb.sh joins them.
set -u
cd gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
xz -d -k -f bench/kasbench.xz && chmod +x bench/kasbench
mkdir -p $OUT/db
for part in double single; do
  start=$(date +%s)
  timeout 280 ./bench/kasbench $OUT/db $part 2>&1 | tr '\r' '\n' | grep -v "^kasbench: [0-9]*/" > $OUT/db/kasbench_$part.log
  echo "$part rc ${PIPESTATUS[0]} in $(( $(date +%s) - start )) s" | tee -a $OUT/db/kasbench_$part.log
done
ls -la $OUT/db
