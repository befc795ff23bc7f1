#!/usr/bin/env bash
# Session 27, call 2 (issue #11): the StVenant element with its 9- and 3-thread implementations
# only, against its usual top 4, same run.  On the host, from the repository root: base/ by
# f68c1e8's kasgen, lib9/ by f68c1e8 plus an uncommitted model change (straight slice saves
# paying the sectors they touch, not landed: /work/notes, session 27), which changes predictions,
# not the kernels' code:
#   lib9 = a copy of library/ without the 1-thread implementation of each function the element
#          calls (so every kernel runs 3 or 9 threads per element)
# then: ROUNDS=5 bash benchmarks/h100-2026-11-27-s27/call.sh base/stvenant_element lib9/stvenant_element
set -euo pipefail
rm -rf /tmp/lib9 && cp -r library /tmp/lib9
for f in mvmul33 svmul3 ttmul411 ttmul3212 ttmul311 vvmulabs3 smimul33 smmul33 madd33; do
  rm /tmp/lib9/$f/${f}_1.ini /tmp/lib9/$f/${f}_1.cu
done
./kasgen specs/stvenant_element.spec --top 4 --out gpu/s27/base
./kasgen specs/stvenant_element.spec --top 6 --library /tmp/lib9 --out gpu/s27/lib9
