#!/usr/bin/env bash
# Device call 2 (session 41): the same regression check on the six other specs of specs/
# (chain12, quadrature, quadrature_unrolled, stvenant_element, stvenant_element_unrolled,
# stvk_tet), top 10 in single precision element-major and double precision component-major
# (gpu/s41b: `kasgen specs/S.spec --top 10 --precision P --layout L`, harnesses built on the
# host), by bench/gpu_io.sh as call 1; then the FEM driver through the embedding API on three of
# them, the last launched in chunks of 1024 elements (the split n > 2^31 takes).
set -uo pipefail
tar -xJf gpu-pack.tar.xz || python3 -c "import tarfile; tarfile.open('gpu-pack.tar.xz').extractall()"
export PATH=/usr/local/cuda/bin:$PATH
BUDGET=420 BENCHDB=0 JOBS=8 SANITIZE_N=10007 SUBRANGE="single-element/stvk_tet" \
  bash bench/gpu_io.sh gpu/s41b "$OUT"
status=$?
fem() { # config/spec [embed flags]
  local tag=${1/\//_}
  echo "== fem_driver $1 ${2:-}"
  make -C tests/fem_driver GEN="$PWD/gpu/s41b/$1" STEM="${1#*/}" BUILD_DIR="build/$tag$3" \
    EMBED_FLAGS="${2:-}" run 2>&1 | tail -25 | tee "$OUT/fem_$tag$3.log"
  [ "${PIPESTATUS[0]}" = 0 ] || { echo "FAIL fem_driver $1"; status=1; }
}
fem single-element/stvenant_element "" ""
fem double-component/stvk_tet "" ""
fem single-element/stvk_tet -DKAS_EMBED_CHUNK_LOG2=10 _chunked
exit $status
