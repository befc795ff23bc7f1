#!/usr/bin/env bash
# Session 34 call 3, on the H200 that call 2 landed on: the top 30 of the eight seed specs of 8-36
# calls (specs/: bigfusion, bigfusion_full, chain12, quadrature, stvenant, stvenant_inner,
# stvk_tet, synctest), ranked by the H200 database refreshed in this session's calls (PART=single
# and PART=double `make benchdb`, joined on the host) with the plain model and estimated registers:
# `kasgen SPEC --top 30 --uncalibrated --db benchmarks/nvidia-h200.xml --out gpu/s34/h2`, carried
# packed as gpu-pack.tar.xz.  Session 26's call script (timed at n = 4194304, 9 rounds):
#   LIMIT=120 bash benchmarks/h100-2026-11-28-s34/call3.sh h2/bigfusion ... h2/synctest
FOLDERS=gpu/s34/ exec bash "$(dirname "$0")/../h100-2026-11-27-s26/call.sh" "$@"
