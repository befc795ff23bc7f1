#!/usr/bin/env bash
# deps.sh — `make deps`: installs what kasgen's build and test suite need, where it is missing.
#   1. Debian packages, with apt-get (as root; nothing to do, and no root needed, when all are
#      present);
#   2. the project's Python environment .venv (scikit-fem and its needs, pinned in
#      tools/requirements.txt), which the tests use as $PYTHON;
#   3. a CUDA compiler able to build sm_90, from PyPI into .venv/cuda, only when the machine has
#      none (tools/find-nvcc.sh decides; a toolkit already installed keeps being used).
# Every step checks before it acts, so a second run does nothing and needs no network.
#
#   tools/deps.sh            (PYTHON3=... chooses the interpreter the venv is made from)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
PYTHON3=${PYTHON3:-python3}
venv=$root/.venv
marker=$venv/.kasgen-venv # says the folder is ours to update (a user's own .venv is left alone)

# What the build (C11, inih, libxml2, lp_solve), the tests (cmocka, Graphviz, gnuplot, groff
# for the man pages, python3-venv for .venv, cmake for the embed's CMake snippet) and
# `make fuzz` (clang) need.
debian_packages=(build-essential pkg-config libinih-dev libxml2-dev liblpsolve55-dev
                 libcmocka-dev gnuplot-nox graphviz clang groff-base python3 python3-venv cmake)

die() { echo "make deps: error: $*" >&2; exit 1; }

install_debian_packages() {
  command -v dpkg-query >/dev/null ||
    die "not a Debian system (no dpkg-query): install the equivalents of: ${debian_packages[*]}"
  local missing=() p
  for p in "${debian_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "make deps: all Debian packages present"
    return
  fi
  [ "$(id -u)" = 0 ] ||
    die "run as root to install: ${missing[*]} (or: sudo apt-get install ${missing[*]})"
  echo "make deps: installing Debian packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

pip_install() {
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --progress-bar off \
    --only-binary=:all: "$@"
}

# Makes .venv (or remakes it when its interpreter no longer runs, e.g. after a Python upgrade).
make_venv() {
  if [ -e "$venv" ] && [ ! -e "$marker" ]; then
    die "$venv exists but was not made by 'make deps'; move it away and run 'make deps' again"
  fi
  if [ -e "$marker" ] && "$venv/bin/python" -c 'import sys' 2>/dev/null; then return; fi
  echo "make deps: creating the Python environment $venv"
  rm -rf "$venv"
  # The marker first: a venv left half made by an interrupted run is still ours to remake.
  mkdir "$venv"
  touch "$marker"
  "$PYTHON3" -m venv "$venv" || die "'$PYTHON3 -m venv' failed (Debian: apt-get install python3-venv)"
}

# Installs a requirements file unless the same file was installed last time (stamp = a copy).
install_requirements() {
  local req=$1 stamp=$venv/.kasgen-$(basename "$1" .txt)
  if cmp -s "$req" "$stamp"; then return; fi
  echo "make deps: installing $(basename "$req") into $venv"
  pip_install -r "$req"
  cp "$req" "$stamp"
}

# The PyPI toolkit lives in site-packages/nvidia/cu13 (bin, include, lib, nvvm).  Wheels cannot
# hold symbolic links, so add the two a CUDA_HOME has (lib64, libcudart.so), and give it the
# fixed name .venv/cuda that tools/find-nvcc.sh looks for.
link_cuda_home() {
  local site cu
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
  cu=$site/nvidia/cu13
  [ -x "$cu/bin/nvcc" ] || die "the CUDA wheels did not install $cu/bin/nvcc"
  ln -sfn lib "$cu/lib64"
  ln -sfn libcudart.so.13 "$cu/lib/libcudart.so"
  ln -sfn "$cu" "$venv/cuda"
}

install_cuda_if_missing() {
  local nvcc
  if nvcc=$(tools/find-nvcc.sh 2>/dev/null) && [ "$nvcc" != "$venv/cuda/bin/nvcc" ]; then
    echo "make deps: using the CUDA compiler $nvcc"
    return
  fi
  [ -z "${NVCC:-}" ] || die "NVCC=$NVCC cannot build sm_90; unset NVCC and run 'make deps' again"
  install_requirements tools/requirements-cuda.txt
  link_cuda_home
  nvcc=$(tools/find-nvcc.sh) || die "the CUDA compiler installed into $venv/cuda does not work"
  echo "make deps: using the CUDA compiler $nvcc ($("$nvcc" --version | tail -1))"
}

install_debian_packages
make_venv
install_requirements tools/requirements.txt
install_cuda_if_missing
