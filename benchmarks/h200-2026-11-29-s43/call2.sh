#!/usr/bin/env bash
# Device call 2 (session 43): pending.cu (which runtime calls clear a caller's pending error),
# then the element's embed after emit_smem_optin (the limit set only while the kernel lacks it),
# carried as gpu-pack2.tar.xz (el2/stvenant_element: kasgen specs/stvenant_element.spec --top 10
# --db benchmarks/nvidia-h200.xml): make ... errors and the FEM driver through the embed.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
here=$(cd "$(dirname "$0")" && pwd)
nvcc -arch=sm_90 "$here/pending.cu" -o /tmp/pending -lcuda && /tmp/pending
tar -xJf gpu-pack2.tar.xz
status=0
for t in errors run; do
  make -C tests/fem_driver GEN="$PWD/el2/stvenant_element" BUILD_DIR="$PWD/build/el2_$t" "$t" \
    >"/tmp/el2_$t.log" 2>&1 || { echo "FAIL $t"; status=1; }
  grep -v '^nvcc\|^/\|^make\|^  -X\|^rc=' "/tmp/el2_$t.log" | tail -12
done
exit $status
