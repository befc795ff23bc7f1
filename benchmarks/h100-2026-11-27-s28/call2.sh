#!/usr/bin/env bash
# Call 2 (session 28): which load instruction reads misaligned component-major rows best
# (loads/loads.cu), the SASS load instructions each kind compiles to, and its checks under
# compute-sanitizer memcheck.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
d=benchmarks/h100-2026-11-27-s28/loads
nvcc -O3 -arch=sm_90 -lineinfo -o /tmp/loads $d/loads.cu || exit 1
cuobjdump -sass /tmp/loads | grep -o 'LDG[.A-Z0-9_]*' | sort | uniq -c > "$OUT/loads_sass.txt"
cat "$OUT/loads_sass.txt"
/tmp/loads | tee "$OUT/loads_call2.txt"
compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/loads quick > "$OUT/loads_memcheck.txt" 2>&1
echo "memcheck rc=$? $(tail -1 "$OUT/loads_memcheck.txt")"
