#!/usr/bin/env bash
# Session 32 call on the H100: the top 30 of the two held-out specs written after the
# calibration's IO scales (benchmarks/specs/face_blocks12.spec, green_blocks17.spec), made on the
# host with `SPECS=... bench/prepare_tune.sh gpu/s32/t30 30` (ptxas's registers) and carried
# packed as gpu-pack.tar.xz (tar -cJf gpu-pack.tar.xz gpu/s32).  Session 26's call script:
#   LIMIT=300 bash benchmarks/h100-2026-11-27-s32/call.sh t30/face_blocks12 t30/green_blocks17
FOLDERS=gpu/s32/ exec bash "$(dirname "$0")/../h100-2026-11-27-s26/call.sh" "$@"
