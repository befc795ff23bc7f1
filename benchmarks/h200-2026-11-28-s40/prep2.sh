#!/usr/bin/env bash
# Session 40, call 2's folders, made on the host: the H200 database's #1 of the specs whose #1
# the register rule of occupancy_subpartitions.patch changes (chain12, stvk_tet, stvk_point11;
# shell5_12's and stvenant_element_unrolled's #1 stayed the same kernels), under main (old) and
# main with the patch (new).  OLD and NEW: the two kasgen binaries.
#   OLD=... NEW=... bash prep2.sh
# Call 2 (on the H200): FOLDERS=gpu/s40b/ ROUNDS=9 SAN="new/chain12 new/stvk_tet new/stvk_point11"
#   bash benchmarks/h100-2026-11-27-s26/call.sh {old,new}/{chain12,stvk_tet,stvk_point11}
set -eu
: "${OLD:?main's kasgen}" "${NEW:?kasgen with the patch}"
for v in old new; do
  bin=$OLD; [ $v = new ] && bin=$NEW
  for s in chain12 stvk_tet stvk_point11; do
    f=specs/$s.spec; [ -f $f ] || f=benchmarks/specs/$s.spec
    "$bin" $f --db benchmarks/nvidia-h200.xml --top 1 --out gpu/s40b/$v >/dev/null
  done
done
