#!/usr/bin/env bash
# Session 34 call 4, on an H100 (kind nvidia-h100-x1): call 2 again, the top 30 of shell5_12 and
# layers5_12 made on the host at 411bc39 (`SPECS=... bench/prepare_tune.sh gpu/s34/h 30`), carried
# packed as gpu-pack.tar.xz.  Session 26's call script:
#   LIMIT=120 SAN="h/shell5_12 h/layers5_12" \
#     bash benchmarks/h100-2026-11-28-s34/call4.sh h/shell5_12 h/layers5_12
FOLDERS=gpu/s34/ exec bash "$(dirname "$0")/../h100-2026-11-27-s26/call.sh" "$@"
