#!/usr/bin/env bash
# find-nvcc.sh — the one place that decides which nvcc kasgen's build and tests use.
# Prints its path and exits 0; exits 1 (printing the reason on stderr) when there is none that
# can build for the architecture (default sm_90, the one the tests compile for).
#
#   tools/find-nvcc.sh [ARCH]
#
# Order: $NVCC when set (the user's choice: used as given, never replaced); nvcc on $PATH;
# /usr/local/cuda/bin/nvcc; the toolkit that `make deps` installs from PyPI into .venv/cuda.
# A toolkit already on the machine therefore keeps being used; one too old for ARCH is passed
# over, so that `make deps` installs one that can.
set -euo pipefail
arch=${1:-sm_90}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# True when $1 runs and lists $arch among the GPU codes it can build.
builds_arch() {
  [ -x "$1" ] && "$1" --list-gpu-code 2>/dev/null | grep -qx "$arch"
}

if [ -n "${NVCC:-}" ]; then
  nvcc=$(command -v "$NVCC" || true)
  if [ -n "$nvcc" ] && builds_arch "$nvcc"; then echo "$nvcc"; exit 0; fi
  echo "find-nvcc: NVCC=$NVCC cannot build $arch (unset NVCC to let kasgen choose)" >&2
  exit 1
fi
for candidate in "$(command -v nvcc || true)" /usr/local/cuda/bin/nvcc "$root/.venv/cuda/bin/nvcc"; do
  if [ -n "$candidate" ] && builds_arch "$candidate"; then echo "$candidate"; exit 0; fi
done
echo "find-nvcc: no nvcc that can build $arch (run 'make deps' to install one)" >&2
exit 1
