#!/usr/bin/env bash
# Call 4 (session 28): issue #13's element-major half on the current generator (last verified in
# session 22): call 3's steps on the ten element-major folders (`bench/prepare_gpu.sh gpu/s28em`
# with CONFIGS="single-element double-element" UNITS=0, harnesses built on the host) carried
# packed in gpu-pack.tar.xz.
exec env CONFIGS="single-element double-element" DIR=gpu/s28em \
  bash "$(dirname "$0")/call3.sh"
