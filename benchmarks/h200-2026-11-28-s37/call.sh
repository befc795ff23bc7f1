#!/usr/bin/env bash
# Session 37 calls, on an H200: the closed loop.  For each of the 34 specs of the H200 table, the
# model calibrated on the other 33 runs (held out: `kasgen calibrate` into a copy of
# benchmarks/nvidia-h200.xml without that spec's run) ranks the spec again, and its top 10 is
# timed: `kasgen SPEC --db HELD_OUT_DB --top 10 --out gpu/s37/cal`, carried packed as
# gpu-pack.tar.xz.  Session 26's call script, e.g.
#   LIMIT=60 ROUNDS=5 bash benchmarks/h200-2026-11-28-s37/call.sh s37/cal/bigfusion ...
#   SAN="s37/cal/bigfusion ..." bash benchmarks/h200-2026-11-28-s37/call.sh
FOLDERS=gpu/ exec bash "$(dirname "$0")/../h100-2026-11-27-s26/call.sh" "$@"
