#!/usr/bin/env bash
# Session 34 call 2 (asked of the H100, given an H200; call 4 ran it again on an H100): the top 30 of the two held-out specs written after the
# calibration's one-warp scale was chosen (benchmarks/specs/shell5_12.spec, layers5_12.spec),
# made on the host at 411bc39 with `SPECS=... bench/prepare_tune.sh gpu/s34/h 30` (ptxas's
# registers) and carried packed as gpu-pack.tar.xz (tar -cJf gpu-pack.tar.xz gpu/s34).
# Session 26's call script:
#   LIMIT=250 SAN="h/shell5_12 h/layers5_12" \
#     bash benchmarks/h100-2026-11-28-s34/call2.sh h/shell5_12 h/layers5_12
FOLDERS=gpu/s34/ exec bash "$(dirname "$0")/../h100-2026-11-27-s26/call.sh" "$@"
