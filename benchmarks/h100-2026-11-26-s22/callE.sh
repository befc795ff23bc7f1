#!/usr/bin/env bash
# Call E (session 22): what call D's budget left out (the timed tables of single-element
# stvenant_element, stvk_tet, stvenant_inner, synctest; four sub-range timings), then the top 30
# of three held-out specs for the model (harness --rounds 9).  Results tarred into $OUT.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
D="single-element/stvenant_element single-element/stvk_tet single-element/stvenant_inner single-element/synctest"
S="double-element/bigfusion double-component/bigfusion double-component/synctest single-element/stvenant"
T="stvk_point11 chain55_8 geometry13"
mkdir -p $OUT/r
t0=$SECONDS
for f in $D $S; do make -C gpu/D/$f -j16 build/harness > /dev/null 2>&1 || echo "BUILD FAIL $f"; done
for s in $T; do make -C gpu/test/$s -j16 build/harness > /dev/null 2>&1 || echo "BUILD FAIL $s"; done
echo "built in $((SECONDS - t0)) s"
for f in $D; do tag=${f/\//_}
  (cd gpu/D/$f && ./build/harness N=4194304) > $OUT/r/run_$tag.log 2>&1 && echo "ok run $f" || echo "FAIL run $f"
  cp gpu/D/$f/results.xml $OUT/r/results_$tag.xml
done
for f in $S; do tag=${f/\//_}
  (cd gpu/D/$f && ./build/harness --offset 1 N=4194304) > $OUT/r/subrange_$tag.log 2>&1 && echo "ok subrange $f" || echo "FAIL subrange $f"
  cp gpu/D/$f/results.xml $OUT/r/subrange_$tag.xml
done
for s in $T; do mkdir -p $OUT/r/test/$s
  (cd gpu/test/$s && ./build/harness N=4194304 --rounds 9) > $OUT/r/test/$s/run.log 2>&1 && echo "ok test $s" || echo "FAIL test $s"
  cp gpu/test/$s/results.xml gpu/test/$s/index.txt $OUT/r/test/$s/
done
echo "total $((SECONDS - t0)) s"
cd $OUT && tar czf r.tar.gz r && rm -rf r
