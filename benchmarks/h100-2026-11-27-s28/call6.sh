#!/usr/bin/env bash
# Calls 6 and 7 (session 28, on an H200): issue #14's refresh of benchmarks/nvidia-h200.xml on the
# current library, one precision per call (PART=double, then PART=single): bench/out's kasbench
# (`make -C bench/out` on the host with the same CUDA 13.0, carried xz-packed as kasbench.xz),
# run directly, its half written to $OUT; the halves are joined on the host as bench/benchdb.sh
# joins them.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,memory.total,ecc.mode.current --format=csv,noheader
xz -dc kasbench.xz > /tmp/kasbench && chmod +x /tmp/kasbench
/tmp/kasbench "$OUT" "${PART:?PART=single or double}" 2> >(tr '\r' '\n' | tail -5 >&2)
ls -la "$OUT"
