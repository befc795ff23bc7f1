#!/usr/bin/env bash
# loops.sh — loops and arrays through the real binary and the real library:
#   - the unrolled twins in specs/ are what tests/unroll_spec.sh makes of their loop specs today;
#   - `check` shows the arrays, the loop tree and each call's provenance, and a loop spec lists
#     exactly the calls of its unrolled twin (an independent, textual unrolling);
#   - the DAG limit (1024 calls): the 128-call element spec plans; a loop past the limit is
#     shown by `check`, and `fusions` and `plan` refuse it with a located error;
#   - array inputs/outputs: `fusions` and `plan` work, `kasgen SPEC` refuses before searching and
#     writes nothing;
#   - loops over plain variables run end to end: generated, checked on the CPU in both thread
#     orders, compiled by nvcc when it is there.
# Run from the repository root with $KASGEN set (tests/run.sh does).
set -u
K=${KASGEN:-build/kasgen}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect_rc WANT CMD...: runs CMD, keeps stdout/stderr in $tmp/out, $tmp/err
expect_rc() {
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" = "$want" ] || { fail "exit $rc, wanted $want: $*"; sed 's/^/    /' "$tmp/err" | head -5; }
}

# The calls `check` lists, without their provenance ("[N=1] ").
calls_of() { sed -n '/^calls:/,/^values:/p' "$1" | grep -v '^values:' | sed 's/^\(  [^ ]*  \)\[[^]]*\] /\1/'; }

# --- the twins are current, and list the same calls -------------------------------------------
for s in stvenant_element quadrature; do
  tests/unroll_spec.sh "specs/$s.spec" >"$tmp/twin.spec" 2>"$tmp/err" || fail "unroll_spec.sh $s failed"
  cmp -s "$tmp/twin.spec" "specs/${s}_unrolled.spec" ||
    fail "specs/${s}_unrolled.spec is stale: tests/unroll_spec.sh specs/$s.spec > specs/${s}_unrolled.spec"
  expect_rc 0 "$K" check "specs/$s.spec"
  [ -s "$tmp/err" ] && fail "check $s: unexpected diagnostics: $(head -1 "$tmp/err")"
  cp "$tmp/out" "$tmp/looped.txt"
  expect_rc 0 "$K" check "specs/${s}_unrolled.spec"
  calls_of "$tmp/looped.txt" >"$tmp/looped.calls"
  calls_of "$tmp/out" >"$tmp/unrolled.calls"
  [ "$(wc -l <"$tmp/looped.calls")" -gt 20 ] || fail "check $s: too few calls listed"
  diff "$tmp/looped.calls" "$tmp/unrolled.calls" >/dev/null || fail "check $s: calls differ from the unrolled twin"
  grep -q '^loops:' "$tmp/out" && fail "check ${s}_unrolled: shows loops"
done

# --- what check shows of the element spec -----------------------------------------------------
expect_rc 0 "$K" check specs/stvenant_element.spec
out="$tmp/out"
grep -q '^specs/stvenant_element.spec: ok: 128 calls' "$out" || fail "element: summary"
grep -Eq '^  matTangent\[4\]\[4\] +matrix3x3 +output +144 floats per element$' "$out" || fail "element: matTangent"
grep -Eq '^  vec3DPhi\[4\] +vector3 +input +12 floats per element$' "$out" || fail "element: vec3DPhi"
grep -Eq '^  for N in 0\.\.4 \{ +// line 17: 4 iterations of 32 calls$' "$out" || fail "element: outer loop"
grep -Eq '^    for M in 0\.\.4 \{ +// line 22: 4 iterations of 7 calls$' "$out" || fail "element: inner loop"
grep -Eq '^      matTangent\[N\]\[M\] = madd33\(matTangentHelp, mat33Help2\); +// line 29: 16 calls: #10 #17 #24 #31 #42 #49 \.\.\. #127$' "$out" ||
  fail "element: the source call of matTangent"
grep -qx '  mvmul33#32  \[N=1\] nodeStiffHelp.1 = mvmul33(mat33Help1, vec3DPhi\[1\])' "$out" || fail "element: call #32"
grep -qx '  madd33#127  \[N=3, M=3\] matTangent\[3\]\[3\] = madd33(matTangentHelp.31, mat33Help2.31)' "$out" ||
  fail "element: call #127"

# --- the DAG limit ----------------------------------------------------------------------------
expect_rc 0 "$K" plan specs/stvenant_element.spec --top 2
[ "$(wc -l <"$tmp/out")" -ge 2 ] || fail "plan element: fewer than 2 partitions"
printf 'vector3 v;\nscalar s;\ninput v;\nfor i in 0..1030 {\n  s = venorm3(v);\n}\nreturn s;\n' >"$tmp/big.spec"
expect_rc 0 "$K" check "$tmp/big.spec"
grep -q 'ok: 1030 calls' "$tmp/out" || fail "check big: summary"
for cmd in fusions plan; do
  expect_rc 1 "$K" "$cmd" "$tmp/big.spec"
  grep -q "^$tmp/big.spec:5:7: error: too many calls for the call DAG: the spec has 1030" "$tmp/err" ||
    fail "$cmd big: no located DAG-limit error"
done
expect_rc 1 "$K" check "$tmp/big.spec" --dot "$tmp/g.dot"
[ -e "$tmp/g.dot" ] && fail "check --dot wrote a DAG it does not have"

# --- arrays at the API: searched, not emitted -------------------------------------------------
expect_rc 0 "$K" fusions specs/quadrature.spec --max-fusion 1
[ "$(tail -1 "$tmp/out")" = "23 valid fusions" ] || fail "quadrature: fusions of 1 call"
expect_rc 0 "$K" plan specs/quadrature.spec --top 2 --max-fusion 1 --no-db
[ "$(wc -l <"$tmp/out")" = 1 ] || fail "quadrature: plan with singletons only has one partition"
start=$(date +%s)
expect_rc 1 "$K" specs/quadrature.spec --out "$tmp/gen"
grep -q "^specs/quadrature.spec:7:11: error: 'F' is an array: code generation for arrays is not written yet" "$tmp/err" ||
  fail "quadrature: no refusal naming the array"
[ -e "$tmp/gen" ] && fail "quadrature: the refused run wrote $tmp/gen"
(($(date +%s) - start <= 2)) || fail "quadrature: refused only after searching"

# --- loops over plain variables, end to end ---------------------------------------------------
expect_rc 0 "$K" tests/specs/loop_plain.spec --top 3 --out "$tmp/gen"
gen="$tmp/gen/loop_plain"
targets=check-cpu
[ -x "$NVCC" ] && targets="compile-check check-cpu"
if make -C "$gen" -j2 $targets NVCC="$NVCC" >"$tmp/make.log" 2>&1; then
  grep -q '^loop_plain: 4 of 4 candidates passed' "$tmp/make.log" || fail "loop_plain: not every candidate passed"
else
  tail -20 "$tmp/make.log"
  fail "loop_plain: make $targets"
fi

if ((fails)); then echo "$fails failure(s)"; exit 1; fi
echo "loops: all checks passed"
