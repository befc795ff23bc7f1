export PATH=/usr/local/cuda/bin:$PATH
mkdir -p $OUT/r
pack() { tar -czf $OUT/call2.tar.gz -C $OUT r; }
t0=$SECONDS
for f in gpu-final/single-element/stvenant_element gpu-final/single-element/stvenant gpu-final/single-element/stvenant_inner gpu13/*/*; do make -C $f -j16 build/harness > /dev/null 2>&1 & done; wait
echo "built $((SECONDS-t0)) s"
for s in stvenant_element stvenant stvenant_inner; do timeout 150 make -C gpu-final/single-element/$s run > $OUT/r/run_$s.log 2>&1; echo "run $s rc=$? $((SECONDS-t0)) s"; grep -E "^cand01 |^unfused " $OUT/r/run_$s.log | cut -c1-75; done; pack
for f in gpu13/*/*; do tag=$(echo $f | tr / _); timeout 100 make -C $f subrange > $OUT/r/subrange_$tag.log 2>&1; echo "subrange $f rc=$? $((SECONDS-t0)) s"; grep -E "sub-range|aligned|whole" $OUT/r/subrange_$tag.log | tail -3 | cut -c1-110; done; pack
HARNESS=0 HEXES=80 PASSES=3 timeout $((560 - SECONDS)) bash examples/hyperelastic/gpu_run.sh gpu-final/single-element/stvk_tet $OUT/r/hyper > $OUT/r/hyper.log 2>&1; echo "hyper rc=$? $((SECONDS-t0)) s"; tail -25 $OUT/r/hyper/summary.txt 2>/dev/null; pack
