#!/usr/bin/env bash
# Session 32, on an H200 only: the top 30 of the seed specs and the two held-out specs, ranked
# with the H200's database (DB=benchmarks/nvidia-h200.xml bench/prepare_tune.sh gpu/s32h/h200 30,
# ptxas's registers), carried packed as gpu-pack.tar.xz.  Exits at once on any other GPU, so that
# a call that lands on an H100 costs only its start.  Session 26's call script:
#   LIMIT=300 bash benchmarks/h100-2026-11-27-s32/call_h200.sh h200/synctest ...
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$name" in *H200*) ;; *) echo "not an H200: $name"; exit 3 ;; esac
FOLDERS=gpu/s32h/ exec bash "$(dirname "$0")/../h100-2026-11-27-s26/call.sh" "$@"
