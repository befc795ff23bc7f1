#!/usr/bin/env bash
# Session 36 calls, on an H200: stvk_tet's top 30 timed (the one spec of issue #14's table that
# sessions 34 and 35 could not time there) and compute-sanitizer memcheck, racecheck and synccheck
# (n = 10007) over the folders of the H200 table, which had been checked against the CPU only.
# The folders: gpu/s35/h2/<spec> (session 35's 26 and stvk_tet) and gpu/s36/h2/<spec> (session 34's
# seven, generated again by the same command, `kasgen SPEC --top 30 --uncalibrated --db
# benchmarks/nvidia-h200.xml --out gpu/s36/h2`, which gives the kernels session 34 measured),
# carried packed as gpu-pack.tar.xz.  Session 26's call script:
#   LIMIT=300 SAN="s35/h2/stvk_tet s35/h2/branches12 ..." bash .../call.sh s35/h2/stvk_tet
# Calls 3 and 4 timed gpu/s36/x/<spec>, the top 30 that the experiment on_chip_scale.patch ranks:
#   LIMIT=90 SAN="s36/x/..." bash .../call.sh s36/x/coupling_blocks17 ... (call 4: LIMIT=60 ROUNDS=5)
FOLDERS=gpu/ exec bash "$(dirname "$0")/../h100-2026-11-27-s26/call.sh" "$@"
