#!/usr/bin/env bash
# Call A (session 30): issue #11's iterations over groups of threads (src/threads.c) on the GPU.
# On the host at the commit named in benchmarks/RESULTS.md: `kasgen SPEC --top 10 --out
# gpu30/el` for stvenant_element, stvenant, stvenant_inner (the KAS way), gradients_loop20,
# pair_blocks18 and quad_stress15 (the four specs with a loop that groups can run, each with a
# group candidate in its top 2), harnesses built there with the same CUDA 13.0
# (`make -C FOLDER build/harness`), carried as gpu-pack.tar.xz.  Here: bench/gpu_io.sh's checks
# (every candidate at n = 1, 7, 1000003, 4194304 and on sub-ranges; memcheck, racecheck and
# synccheck at n = 10007) and timings (copy bandwidth of the same run), the element's sub-range
# too.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,ecc.mode.current --format=csv,noheader | tee "$OUT/gpu.txt"
tar -xJf gpu-pack.tar.xz
BUDGET=560 BENCHDB=0 JOBS=8 SANITIZE_N=10007 SUBRANGE="el/stvenant_element" \
  bash bench/gpu_io.sh gpu30 "$OUT"
