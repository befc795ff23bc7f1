#!/bin/bash
# Session 27, call 1 (issue #11 experiment): the vertex kernel over virtual elements (e, N)
# against the hand-written split kernel, same run.  Run from the repository root.
set -u
d=benchmarks/h100-2026-11-27-s27/virtual
nvcc -O3 -arch=sm_90 -o /tmp/bcast $d/bcast.cu &
nvcc -O3 -arch=sm_90 -o /tmp/split benchmarks/h100-2026-11-26-s23/split/element_split.cu &
wait
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
/tmp/bcast; /tmp/split
compute-sanitizer --tool memcheck /tmp/bcast --check-only 2>&1 | tail -3
