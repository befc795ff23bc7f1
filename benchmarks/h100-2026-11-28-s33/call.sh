#!/usr/bin/env bash
# Session 33 call on the H100: the top 30 of the two held-out specs written after the
# calibration's requests-overlap and coverage-slope were chosen (benchmarks/specs/edge_blocks13.spec,
# quad_fluxes17.spec), made on the host with `SPECS=... bench/prepare_tune.sh gpu/s33/t30 30`
# (ptxas's registers) and carried packed as gpu-pack.tar.xz (tar -cJf gpu-pack.tar.xz gpu/s33).
# Session 26's call script:
#   LIMIT=300 SAN="t30/edge_blocks13 t30/quad_fluxes17" \
#     bash benchmarks/h100-2026-11-28-s33/call.sh t30/edge_blocks13 t30/quad_fluxes17
FOLDERS=gpu/s33/ exec bash "$(dirname "$0")/../h100-2026-11-27-s26/call.sh" "$@"
