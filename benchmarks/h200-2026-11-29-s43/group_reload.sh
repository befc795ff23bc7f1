#!/usr/bin/env bash
# Session 43, host only: the share g of kernels of groups' repeated loads (docs/model.md, "Groups
# of threads"), judged held out on both GPUs' sets of measured runs.  Applies group_reload.patch
# to a worktree of the current commit, builds one kasgen per g, and runs
#   kasgen calibrate SET --db DB --held-out --ptxas
# on the H100's 34 runs and the H200's 64 (benchmarks/h200-2026-11-28-s39/sets.sh makes them).
#   bash benchmarks/h200-2026-11-29-s43/group_reload.sh H100_SET H200_SET OUT_DIR
set -euo pipefail
h100=${1:?} h200=${2:?} out=${3:?}
root=$(cd "$(dirname "$0")/../.." && pwd)
wt=$(mktemp -d)
git -C "$root" worktree add --detach -f "$wt" HEAD >/dev/null
trap 'git -C "$root" worktree remove --force "$wt"' EXIT
git -C "$wt" apply "$root/benchmarks/h200-2026-11-29-s43/group_reload.patch"
mkdir -p "$out"
for g in 1 0.5 0.25 0; do
  (cd "$wt" && CFLAGS="-O2 -g -DGROUP_RELOAD_SHARE=$g" make -j2 BUILD="build-g$g" "build-g$g/kasgen" >/dev/null)
  for gpu in h100 h200; do
    set_dir=$h100 db=$root/benchmarks/nvidia-h100-80gb-hbm3.xml
    [ "$gpu" = h200 ] && set_dir=$h200 db=$root/benchmarks/nvidia-h200.xml
    cp "$db" "$out/$gpu-db.xml" # calibrate --held-out stores nothing; a copy all the same
    KASGEN_GPU= "$wt/build-g$g/kasgen" calibrate "$set_dir" --db "$out/$gpu-db.xml" --held-out \
      --ptxas >"$out/g${g}_$gpu.txt" 2>"$out/g${g}_$gpu.err"
    tail -n 1 "$out/g${g}_$gpu.txt"
  done
done
