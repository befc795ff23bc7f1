#!/usr/bin/env bash
# Session 38 calls, on an H200: the calibration with a cost per warp at barriers
# (barrier-warp-ns), held out.  For each of the 34 specs of the H200 table, the constants that
# `kasgen calibrate RUNS --held-out` fitted on the other specs' runs (RUNS: the 34 plain top-30
# runs of sessions 34-36 and the 30 runs with block shapes of session 37; prep.sh) rank the spec
# again, and its top 10 (five of them block shapes of the #1, the default) is timed:
# `kasgen SPEC --db HELD_OUT_DB --top 10 --out gpu/s38/cal`, carried packed as gpu-pack.tar.xz.
# Session 26's call script, e.g.
#   LIMIT=120 ROUNDS=5 SAN="s38/cal/bigfusion ..." bash benchmarks/h200-2026-11-28-s38/call.sh \
#     s38/cal/bigfusion ...
FOLDERS=gpu/ exec bash "$(dirname "$0")/../h100-2026-11-27-s26/call.sh" "$@"
