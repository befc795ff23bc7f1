#!/usr/bin/env bash
# Host side of device call 1 (session 43), with kasgen at the session's end, the H200's database:
#   gpu/s43a/single-element/stvenant: the README's main job (top 10), checked and timed;
#   gpu/s43a/single-element/stvenant_element: the element's top 10, whose harness table now
#     fits 80 columns (its kernels on a line of their own), timed at n = 1048576;
#   gpu/s43a/single-element/{prefixes,words,types,renamed} and double-component/taken: the specs
#     of tests/integration/names.sh, whose arguments kasgen renames in the generated code
#     (w_q -> v_w_q, size_t -> size_t_, n_ -> n_2, ...): checked on the GPU, sanitizers included.
set -euo pipefail
cd "$(dirname "$0")/../.."
k=${KASGEN:-build/kasgen}
out=gpu/s43a
h200=benchmarks/nvidia-h200.xml
rm -rf "$out"
mkdir -p "$out/single-element" "$out/double-component" "$out/specs"
"$k" specs/stvenant.spec --top 10 --db $h200 --out "$out/single-element" >/dev/null
"$k" specs/stvenant_element.spec --top 10 --db $h200 --out "$out/single-element" >/dev/null
spec() { # NAME MATRIX SCALAR OUTPUT, as names.sh writes them
  printf 'matrix3x3 %s, %s;\nscalar %s;\ninput %s, %s;\n%s = smmul33(%s, %s);\nreturn %s;\n' \
    "$2" "$4" "$3" "$2" "$3" "$4" "$2" "$3" "$4" >"$out/specs/$1.spec"
}
spec prefixes w_q __w kas_out
spec words size_t dim3 blocks1
spec types float3 int32_t cudaStream_t
spec taken n n_ ld
spec renamed _F v_w w_
for s in prefixes words types renamed; do
  "$k" "$out/specs/$s.spec" --top 10 --db $h200 --out "$out/single-element" >/dev/null
done
"$k" "$out/specs/taken.spec" --top 10 --db $h200 --precision double --layout component \
  --out "$out/double-component" >/dev/null
for d in "$out"/*-*/*/; do make -s -C "$d" build/harness >/dev/null & done
wait
ls -d "$out"/*-*/*/build/harness | wc -l
