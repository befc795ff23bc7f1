#!/usr/bin/env bash
# Session 27 calls on the H100: session 26's call script on the folders gpu/s27/SET/SPEC, made on
# the host (call2/prepare.sh, prepare_345.sh) and carried packed as gpu-pack.tar.xz.  Each
# argument is SET/SPEC (t30/stvk_tet); ROUNDS, LIMIT, SAN and SIZES as there.
FOLDERS=gpu/s27/ exec bash "$(dirname "$0")/../h100-2026-11-27-s26/call.sh" "$@"
