#!/usr/bin/env bash
# Host side of session 46's second device call (callB_call.sh), with kasgen after the session's
# merges and the H200's database:
#   gpu/s46b/io/single-element/stvenant: the README's main job (top 10), checked and timed;
#   gpu/s46b/io/{single,double}-element/neohooke, hyper_inv: the reviewer's hyperelastic specs
#     (tests/specs/), whose checks failed every candidate before the well-conditioned inputs and
#     the data's tolerance (9962171), checked on the GPU in both precisions;
#   gpu/s46b/nsmall/SPEC-nN-{new,old}: four specs no small-n data had (branches12, geometry13,
#     strain_sum17, green_blocks17), ranked at --n N by this build (new) and by 19e3498 (old,
#     $OLD_KASGEN with its library, $OLD_LIBRARY: the model before the routine-floor fix, de71652),
#     both timed at N.
set -euo pipefail
cd "$(dirname "$0")/../.."
k=${KASGEN:-build/kasgen}
old=${OLD_KASGEN:-/tmp/s46/kasgen_19e3498}
out=gpu/s46b
h200=benchmarks/nvidia-h200.xml
rm -rf "$out"
mkdir -p "$out/io/single-element" "$out/io/double-element" "$out/nsmall"
"$k" specs/stvenant.spec --top 10 --db $h200 --out "$out/io/single-element" >/dev/null 2>&1
for p in single double; do
  for s in neohooke hyper_inv; do
    "$k" tests/specs/$s.spec --top 5 --variants 0 --precision $p --db $h200 \
      --out "$out/io/$p-element" >/dev/null 2>&1
  done
done
gen_small() { # binary tag spec n
  "$1" "benchmarks/specs/$3.spec" --top 12 --variants 4 --db $h200 --n "$4" \
    --out "$out/nsmall/t" >/dev/null 2>&1
  mv "$out/nsmall/t/$3" "$out/nsmall/$3-n$4-$2"
  rmdir "$out/nsmall/t"
}
for s in branches12 geometry13 strain_sum17 green_blocks17; do
  for n in 16384 131072; do
    gen_small "$k" new $s $n
    KASGEN_LIBRARY=${OLD_LIBRARY:-/tmp/s46/lib_19e3498/library} gen_small "$old" old $s $n
  done
done
for d in "$out"/io/*/*/ "$out"/nsmall/*/; do make -s -C "$d" build/harness >/dev/null; done
ls -d "$out"/io/*/*/build/harness "$out"/nsmall/*/build/harness | wc -l
