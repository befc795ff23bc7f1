#!/usr/bin/env bash
# Session 35 calls 1-3, on an H200: the top 30 of the specs of issue #14's H100 table that session
# 34 did not time on the H200 (stvk_tet again, the 22 of benchmarks/specs/ in the 30 runs, and the
# four written since: edge_blocks13, quad_fluxes17, shell5_12, layers5_12), ranked as session 34's
# seven were, by the refreshed H200 database with the plain model and estimated registers:
# `kasgen SPEC --top 30 --uncalibrated --db benchmarks/nvidia-h200.xml --out gpu/s35/h2`, carried
# packed as gpu-pack.tar.xz.  Session 26's call script (timed at n = 4194304, 9 rounds):
#   LIMIT=90 bash benchmarks/h100-2026-11-28-s35/call.sh h2/branches12 ... (calls 1, 2; call 3 LIMIT=150)
FOLDERS=gpu/s35/ exec bash "$(dirname "$0")/../h100-2026-11-27-s26/call.sh" "$@"
