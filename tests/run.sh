#!/usr/bin/env bash
# Runs every test of kasgen from the repository root and ends with one line "N passed, N failed".
# Unit tests are cmocka binaries in $BUILD/tests; integration tests are tests/integration/*.sh
# (each gets $KASGEN, the binary under test, and exits non-zero on failure).
# They also get $NVCC, the CUDA compiler tools/find-nvcc.sh chooses (empty when there is none),
# and $PYTHON, the interpreter of the Python environment `make deps` makes (.venv).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
# The suites start their own makes with their own -j; under `make -j2 test` the parent's jobserver
# flags would reach them without the jobserver and make them warn (which emit_cpu counts).
unset MAKEFLAGS MFLAGS
NVCC=${NVCC:-$(tools/find-nvcc.sh 2>/dev/null || true)}
export NVCC
export PYTHON=${PYTHON:-$PWD/.venv/bin/python}
echo "nvcc: ${NVCC:-none (make deps installs one)}; python: $PYTHON"
export KASGEN="$PWD/$BUILD/kasgen"
export KASGEN_LIBRARY="$PWD/library"
# The default database does not depend on this machine's GPU (src/local_gpu.c): the suites
# expect the H100's; gpu_db.sh sets its own.
export KASGEN_GPU=
export SAN=${SAN:-0}
# ptxas's register reports (src/ptxas.c) are cached for the run only, never in the user's home.
KASGEN_CACHE=$(mktemp -d)
export KASGEN_CACHE
trap 'rm -rf "$KASGEN_CACHE"' EXIT
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
passed=0 failed=0 failures=()
run_one() {
  local name=$1; shift
  local log; log=$(mktemp)
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1)); echo "PASS $name"
  else
    failed=$((failed + 1)); failures+=("$name"); echo "FAIL $name"; sed 's/^/    /' "$log" | tail -40
  fi
  rm -f "$log"
}
for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  run_one "$(basename "$t")" "$t"
done
for t in tests/integration/*.sh; do
  [ -f "$t" ] || continue
  run_one "$(basename "$t" .sh)" bash "$t"
done
((failed)) && printf 'failed: %s\n' "${failures[@]}"
echo "$passed passed, $failed failed"
((failed == 0))
