#!/usr/bin/env bash
# Call B: slice micro-benchmark (unrolled loads), then the single half of the timing database.
set -u
cd gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
./slice/slice | tee $OUT/slice.txt
xz -d -k bench/kasbench.xz && chmod +x bench/kasbench
mkdir -p $OUT/db
start=$(date +%s)
timeout 480 ./bench/kasbench $OUT/db single > $OUT/db/kasbench.log 2>&1; echo "rc $? in $(( $(date +%s) - start )) s" | tee -a $OUT/db/kasbench.log
tail -c 300 $OUT/db/kasbench.log; ls -la $OUT/db
