#!/usr/bin/env bash
# Call G (session 22): issue #11's comparison in one run: the top 10 of stvenant_element against
# the KAS way (the best stvenant candidate per vertex, the best stvenant_inner per pair), the
# folders of call D (d6214b4), timed one after another in the same run.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for s in stvenant stvenant_inner stvenant_element; do make -C gpu/D/single-element/$s -j16 build/harness > /dev/null 2>&1 || echo "BUILD FAIL $s"; done
for s in stvenant stvenant_inner stvenant_element; do
  (cd gpu/D/single-element/$s && ./build/harness N=4194304) > $OUT/run_$s.log 2>&1 && echo "ok $s" || echo "FAIL $s"
  cp gpu/D/single-element/$s/results.xml $OUT/results_$s.xml
done
