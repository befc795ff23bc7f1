#!/usr/bin/env bash
# Session 39: rebuilds the two sets of measured runs the held-out tables are computed on, from
# the committed tarballs and folders (one folder per run, with results.xml and index.txt).
#   bash benchmarks/h200-2026-11-28-s39/sets.sh H100_DIR H200_DIR
# H100_DIR: the H100's 34 top-30 runs (sessions 24, 26, 27, 32, 33, 34), one per spec.
# H200_DIR: the H200's 64 runs: p_<spec> the plain top 30 (sessions 34-36), v_<spec> the top 10
# with block shapes (session 37).
#   kasgen calibrate H100_DIR --db benchmarks/nvidia-h100-80gb-hbm3.xml --held-out --ptxas
#   kasgen calibrate H200_DIR --db benchmarks/nvidia-h200.xml --held-out --ptxas
# (session 40: with ptxas's registers, as the H100's; session 39 judged the H200 without)
set -euo pipefail
h100=${1:?the H100 folder to make} h200=${2:?the H200 folder to make}
b=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for c in h100-2026-11-27-s26/callA h100-2026-11-27-s26/callB h100-2026-11-27-s27/call3 \
  h100-2026-11-27-s27/call4 h100-2026-11-27-s32/call1 h100-2026-11-28-s33/call1 \
  h100-2026-11-28-s34/call3 h100-2026-11-28-s34/call4 h100-2026-11-28-s35/call1 \
  h100-2026-11-28-s35/call2 h100-2026-11-28-s35/call3 h200-2026-11-28-s36/call1 \
  h200-2026-11-28-s37/call4 h200-2026-11-28-s37/call5; do
  mkdir -p "$tmp/$c"
  tar -xzf "$b/$c/r.tar.gz" -C "$tmp/$c"
done
mkdir -p "$h100" "$h200"
for s in bigfusion bigfusion_full branches12 chain12 chain55_8 chain8_33 geometry13 plate5_12 \
  stvenant stvenant_inner stvenant_pair stvk_point11 synctest tangent_pair16 tet20; do
  cp -r "$b/h100-2026-11-26-s24/tune/$s" "$h100/"
done
for s in face_tractions13 strain_sum17 quad_stress15 vertex_forces10 stress_rows14; do
  d=$tmp/h100-2026-11-27-s26/callA/r/new/$s
  [ -d "$d" ] || d=$tmp/h100-2026-11-27-s26/callB/r/new/$s
  cp -r "$d" "$h100/"
done
for s in coupling_blocks17 gradients_loop20 laplace_blocks24 pair_blocks18 quadrature \
  stvenant_element2_unrolled stvk_tet vertex_stiffness15; do
  d=$tmp/h100-2026-11-27-s27/call3/r/t30/$s
  [ -d "$d" ] || d=$tmp/h100-2026-11-27-s27/call4/r/t30/$s
  cp -r "$d" "$h100/"
done
cp -r "$tmp"/h100-2026-11-27-s32/call1/r/t30/{face_blocks12,green_blocks17} \
  "$tmp"/h100-2026-11-28-s33/call1/r/t30/{edge_blocks13,quad_fluxes17} \
  "$tmp"/h100-2026-11-28-s34/call4/r/h/{shell5_12,layers5_12} "$h100/"
# The folders named h100-...-s34/s35 hold the H200's runs of those sessions (call3 and 1-3).
for d in "$tmp"/h100-2026-11-28-s34/call3/r/h2/* "$tmp"/h100-2026-11-28-s35/call*/r/h2/* \
  "$tmp"/h200-2026-11-28-s36/call1/r/s35/h2/stvk_tet; do
  [ -f "$d/results.xml" ] && cp -r "$d" "$h200/p_$(basename "$d")"
done
for d in "$tmp"/h200-2026-11-28-s37/call4/r/s37/var/* "$tmp"/h200-2026-11-28-s37/call5/r/s37/var2/*; do
  [ -f "$d/results.xml" ] && cp -r "$d" "$h200/v_$(basename "$d")"
done
echo "$(ls "$h100" | wc -l) H100 runs in $h100, $(ls "$h200" | wc -l) H200 runs in $h200"
