#!/usr/bin/env bash
# Session 39, call 5 on an H200: the top 10 that the calibration with u and v, held out, gives
# seven specs (prep5.sh: gpu/s39/uv/<spec>, carried packed as gpu-pack.tar.xz), built, checked,
# timed (ROUNDS rounds) and run under memcheck, racecheck and synccheck by session 26's script.
#   ROUNDS=5 bash benchmarks/h200-2026-11-28-s39/call5.sh
specs="bigfusion plate5_12 bigfusion_full stvenant_element2_unrolled laplace_blocks24 quadrature synctest"
# shellcheck disable=SC2086  # specs is a list of words
SAN="$specs" FOLDERS=gpu/s39/uv/ exec bash "$(dirname "$0")/../h100-2026-11-27-s26/call.sh" $specs
