#!/usr/bin/env bash
# loops.sh — loops and arrays through the real binary and the real library:
#   - the unrolled twins in specs/ are what tests/unroll_spec.sh makes of their loop specs today;
#   - `check` shows the arrays, the loop tree and each call's provenance, and a loop spec lists
#     exactly the calls of its unrolled twin (an independent, textual unrolling);
#   - the DAG limit (1024 calls): the 128-call element spec plans; a loop past the limit is
#     shown by `check`, and `fusions` and `plan` refuse it with a located error;
#   - array inputs/outputs: `fusions` and `plan` work; `kasgen SPEC --top 10` on each array spec and
#     its unrolled twin: every candidate checked on the CPU in both thread orders and compiled by
#     nvcc, the embed compiled by nvcc, and the two embeds' host entries (the winners run thread by
#     thread) agree on the same data (tests/fem_driver/twin_host.c, linked by gcc, no libstdc++);
#   - `--loops groups`: a loop's iterations in groups of threads (the element, gradients_loop20),
#     checked on the CPU in both thread orders and compiled; not a loop-carried sum;
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

# launch_figures GEN: the ranking the main job printed ($tmp/out), GEN/index.txt and each
# kernel's launch in GEN/candNN/kernels.cu give every kernel one count of threads per block,
# one shared memory, the bytes it is launched with (staged copies and groups' copies in: the
# ranking and index.txt once left them out, 35712 B for the element's #1 launched with 100224),
# and one count of barriers.  A kernel of groups launches all its groups' threads (dim3(64, 1,
# 4): 256), which the ranking once gave as one group's (threads=64).
launch_figures() {
  local gen=$1 c k threads bytes x y z
  local ranked='.*  threads=([0-9]+)  shared=([0-9]+) B .*  ([0-9]+ of [0-9]+) barriers  .*'
  local listed='^  ([a-z0-9]+) +kernel ([0-9]+): E=[0-9]+, ([0-9]+) threads, ([0-9]+) B shared, '
  listed+='([0-9]+ of [0-9]+) barriers,.*'
  # past 10 calls the ranking gives the unfused form one line, its kernels in index.txt only
  local shown=cat
  grep -q 'its kernels are listed for at most' "$tmp/out" && shown='grep -v ^unfused'
  diff <(sed -nE "s/$ranked/\1 \2 \3/p" "$tmp/out") \
    <(sed -nE "s/$listed/\1 \3 \4 \5/p" "$gen/index.txt" | $shown | cut -d' ' -f2-) \
    >"$tmp/figures.diff" ||
    { head -5 "$tmp/figures.diff"; fail "$gen: the ranking and index.txt differ (< ranking)"; }
  while read -r c k threads bytes; do
    local launch=".*kas_${c}_k$k<<<[^>]*, dim3\(([0-9]+), ([0-9]+), ([0-9]+)\), $bytes, stream>>>.*"
    x= y= z=
    read -r x y z < <(sed -nE "s/$launch/\1 \2 \3/p" "$gen/$c/kernels.cu")
    [ -n "$z" ] || {
      fail "$gen: $c's kernel $k is not launched with the $bytes bytes index.txt says"
      continue
    }
    [ $((x * y * z)) = "$threads" ] ||
      fail "$gen: $c's kernel $k is launched with $((x * y * z)) threads, index.txt says $threads"
  done < <(sed -nE "s/$listed/\1 \2 \3 \4/p" "$gen/index.txt")
}

# expect_rc WANT CMD...: runs CMD, keeps stdout/stderr in $tmp/out, $tmp/err
expect_rc() {
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" = "$want" ] || { fail "exit $rc, wanted $want: $*"; sed 's/^/    /' "$tmp/err" | head -5; }
}

# make_passes GEN NAME TARGETS LABEL: make TARGETS in the generated folder GEN succeeds and
# every candidate of spec NAME passes its CPU check.
make_passes() {
  if make -C "$1" -j2 $3 NVCC="$NVCC" >"$tmp/make.log" 2>&1; then
    grep -Eq "^$2: ([0-9]+) of \1 candidates passed" "$tmp/make.log" ||
      fail "$4: not every candidate passed the CPU check"
  else
    tail -20 "$tmp/make.log"
    fail "$4: make $3"
  fi
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
# The limits' messages as printed are the ones docs/spec-language.md lists (they once said 1024
# where the parser holds 4096), the number of calls and the call named abstracted.
documented() {
  local msg
  msg=$(sed -n 's/^[^ ]*: error: //p' "$tmp/err" | head -1 |
    sed -E 's/the spec has [0-9]+ after/the spec has N after/
            s/\(call #1024 is .*\)$/(call #1024 is ...)/')
  grep -qF "| \`$msg\` |" docs/spec-language.md || fail "docs/spec-language.md does not list '$msg'"
}
expect_rc 1 "$K" plan "$tmp/big.spec"
documented
{ printf 'vector3 v;\nscalar s;\ninput v;\n'
  for ((i = 0; i < 4097; i++)); do echo 's = venorm3(v);'; done
  echo 'return s;'; } >"$tmp/huge.spec"
expect_rc 1 "$K" check "$tmp/huge.spec"
grep -q "^$tmp/huge.spec:4100:1: error: too many calls: a spec holds at most 4096$" "$tmp/err" ||
  fail "check huge: no error at the 4097th call"
documented
grep -q '^At most 4096 calls (after unrolling)' docs/man/kasgen-spec.5 ||
  fail "kasgen-spec(5) does not say 4096 calls"

targets=check-cpu
[ -x "$NVCC" ] && targets="compile-check check-cpu"

# --- arrays at the API, end to end -----------------------------------------------------------
expect_rc 0 "$K" fusions specs/quadrature.spec --max-fusion 1
[ "$(tail -1 "$tmp/out")" = "23 valid fusions" ] || fail "quadrature: fusions of 1 call"
expect_rc 0 "$K" plan specs/quadrature.spec --top 2 --max-fusion 1 --no-db --variants 0
[ "$(wc -l <"$tmp/out")" = 1 ] || fail "quadrature: plan with singletons only has one partition"
# Every candidate of each array spec (and the unrolled twin's winner): checked on the CPU in both
# thread orders against the CPU graph, compiled by nvcc; then the two winners' embeds, run through
# their host entries (kas_<stem>_host_arrays) on the same data, agree.
array_specs="quadrature stvenant_element"
for s in $array_specs; do
  for spec in "$s" "${s}_unrolled"; do
    # The twin only for its winner (its embed): every candidate is the array spec's job.
    top=10 make_targets=$targets
    [ "$spec" = "$s" ] || top=1 make_targets=check-cpu
    expect_rc 0 "$K" "specs/$spec.spec" --top $top --out "$tmp/arr"
    gen="$tmp/arr/$spec"
    launch_figures "$gen"
    # One pointer per array: 3 arguments, F[1] at float 9 of F's record of 72; the winner, one
    # kernel reading all of F, copies the block's records of F into shared memory in one run
    # (staging.c) and reads F[1] there.
    [ "$s" != quadrature ] || { grep -q '^#define KAS_NINPUTS 3$' "$gen/common/kas_candidates.h" &&
      grep -q 'kas_stage_in<4>(st_F, g_F + e0 \* 72, ' "$gen/cand01/kernels.cu" &&
      grep -q '(st_F + 9, ' "$gen/cand01/kernels.cu" && grep -q 'in\[0\] + e \* 72 + 9;' \
      "$gen/common/cpu_graph.c"; } || fail "$spec: not one pointer per array, staged"
    # The winner keeps the sum over q as a loop (roll.c), on the GPU and on the CPU alike.
    [ "$spec" != quadrature ] || { grep -q '^  #pragma unroll 1$' "$gen/cand01/kernels.cu" &&
      grep -q '^  for (int q = [0-9]; q < [0-9]; q++) {$' "$gen/cand01/kernels.cu" &&
      grep -q 'for (int q = ' "$gen/cand01/kernels_host.cpp" &&
      grep -q 'loops kept: q = ' "$gen/index.txt"; } || fail "$spec: the winner keeps no loop"
    make_passes "$gen" "$spec" "$make_targets" "$spec"
    # (the twins' long stems still stretch some embed lines past 100 columns: only the array specs)
    long=$([ "$spec" = "$s" ] && bash tests/long_lines.sh "$gen")
    [ -z "$long" ] || fail "$spec: generated lines over 100 columns: $(head -1 <<<"$long")"
    [ -x "$NVCC" ] && { "$NVCC" -O3 -arch=sm_90 -Xcompiler -fno-threadsafe-statics -c \
      -o "$tmp/arr/$spec.o" "$gen/embed/kas_$spec.cu" >"$tmp/nvcc.log" 2>&1 &&
      ! grep -qi warning "$tmp/nvcc.log" || { cat "$tmp/nvcc.log"; fail "$spec: the embed"; }; }
  done
  if [ -x "$NVCC" ]; then
    up=$(tr a-z A-Z <<<"$s")
    cuda=$(dirname "$(dirname "$NVCC")")
    cc -O2 -std=c11 -Wall -Wextra -Werror -DA_HEADER="\"kas_$s.h\"" -DA="$s" -DA_UP="$up" \
      -DB_HEADER="\"kas_${s}_unrolled.h\"" -DB="${s}_unrolled" -DB_UP="${up}_UNROLLED" \
      -I"$tmp/arr/$s/embed" -I"$tmp/arr/${s}_unrolled/embed" tests/fem_driver/twin_host.c \
      "$tmp/arr/$s.o" "$tmp/arr/${s}_unrolled.o" -L"$cuda/lib64" -lcudart \
      -Wl,-rpath,"$cuda/lib64" -lm -o "$tmp/twin" >"$tmp/cc.log" 2>&1 ||
      { cat "$tmp/cc.log"; fail "$s: the twin driver does not build (gcc, no libstdc++)"; }
    if "$tmp/twin" >"$tmp/twin.log"; then
      grep -q "^PASS: $s and ${s}_unrolled" "$tmp/twin.log" || fail "$s: twin driver verdict"
    else
      cat "$tmp/twin.log"
      fail "$s: the array spec and its unrolled twin differ"
    fi
  fi
done

# --loops unroll: no kernel keeps a loop, and the ranking says none
expect_rc 0 "$K" specs/quadrature.spec --top 3 --loops unroll --out "$tmp/unrolled"
grep -l 'for (int q = ' "$tmp"/unrolled/quadrature/*/kernels*.c* && fail "--loops unroll: a loop kept"
grep -q 'loops kept' "$tmp/unrolled/quadrature/index.txt" "$tmp/out" && fail "--loops unroll: said kept"
expect_rc 2 "$K" specs/quadrature.spec --loops sometimes
# --loops keep: the element's kernels keep their loops (the model does not, at their occupancy),
# which load their vec3DPhi elements again; every candidate correct on the CPU in both thread
# orders, and compiled
expect_rc 0 "$K" specs/stvenant_element.spec --top 3 --loops keep --out "$tmp/kept"
gen="$tmp/kept/stvenant_element"
# the ranking on the terminal and the harness's table shorten a kernel of 128 calls (each line
# was 1500 characters); index.txt's table keeps them whole, its Kernels section too
awk 'length($0) > 200 { exit 1 }' "$tmp/out" && grep -q ' ... madd33#127} (128 calls)$' "$tmp/out" ||
  fail "the ranking's lines of a 128-call kernel are not shortened"
grep -q '^     "mvmul33_1+svmul3_1+[^ ]*+...+madd33_1 (128 calls)",$' "$gen/common/kas_candidates.h" ||
  fail "kas_candidates.h: no short form of the kernels for the harness's table"
awk '$1 == 1 { exit !(length($0) > 1000 && index($0, "...") == 0) }' "$gen/index.txt" ||
  fail "index.txt: the table's kernels shortened"
grep -q 'loops kept: [MN] = ' "$gen/index.txt" &&
  grep -q 'float r_vec3DPhi_[MN]\[3\];' "$gen"/cand*/kernels.cu ||
  fail "--loops keep: the element keeps no loop that loads vec3DPhi again"
make_passes "$gen" stvenant_element "$targets" "--loops keep"

# --loops groups: the element's vertex loop runs one iteration per group of threads (threads.c):
# the kernel names its group's iteration N and moves vec3DPhi[N] and matTangent[N][M] by it, the
# groups share the one copy of ten4Help1 that every thread of the block copies in at the start
# (staging.c), and then no barrier of the plan is made; correct on the CPU in both thread
# orders (each group's threads interleaved with the others'), and compiled.  gradients_loop20's
# groups each have their shared memory.  A spec with no such loop keeps its usual ranking.
expect_rc 0 "$K" check specs/stvenant_element.spec
grep -qx 'groups: N = 0..3 (4 groups of 32 calls); N = 0..3, M = 0..3 (16 groups of 11 calls)' \
  "$tmp/out" || fail "check: the element's loops that groups can run"
expect_rc 0 "$K" check specs/quadrature.spec
grep -q '^groups:' "$tmp/out" && fail "check: quadrature's summing loop said to run in groups"
expect_rc 0 "$K" specs/stvenant_element.spec --loops groups --out "$tmp/groups"
gen="$tmp/groups/stvenant_element"
launch_figures "$gen"
grep -q 'no kernel runs a loop' "$tmp/err" && fail "--loops groups: the element said it has none"
grep -q 'groups: N = 0..3, one iteration per group of [0-9]* threads, one copy' "$gen/index.txt" ||
  fail "--loops groups: the element's ranking shows no kernel of groups sharing one copy"
grep -q 'const int N = (int)threadIdx.z' "$gen/cand01/kernels.cu" &&
  grep -q 'st_vec3DPhi + 3 \* N' "$gen/cand01/kernels.cu" &&
  grep -q 'kas_stage_in<4>(s_ten4Help1_0, g_ten4Help1 + e0 \* 81, ' "$gen/cand01/kernels.cu" ||
  fail "--loops groups: the element's kernel does not run iteration N per group"
grep -q 'one group loads\|Barrier: ' "$gen/cand01/kernels.cu" &&
  fail "--loops groups: the element's kernel loads ten4Help1 in one group, or keeps a barrier"
make_passes "$gen" stvenant_element "$targets" "--loops groups"
# --explain says the kernel's figures too, and why the plan's barriers it lists are not made.
launched=$(sed -nE 's/^  cand01 +kernel 1: .*, ([0-9]+) B shared, 0 of ([0-9]+) barriers,.*/\1 \2/p' \
  "$gen/index.txt")
expect_rc 0 "$K" plan specs/stvenant_element.spec --loops groups --top 1 --explain 1
grep -q "}: E=[0-9]*, [0-9]* threads, ${launched% *} B shared, 0 of ${launched#* } possible barriers kept$" \
  "$tmp/out" && grep -q 'the plan.s barriers below guard nothing and are not made' "$tmp/out" ||
  fail "--explain of the kernel of groups: not index.txt's figures ($launched), or no note"
expect_rc 0 "$K" benchmarks/specs/gradients_loop20.spec --top 3 --loops groups --out "$tmp/groups"
gen="$tmp/groups/gradients_loop20"
grep -q 'groups: N = 0..3' "$gen/index.txt" || fail "--loops groups: gradients_loop20 has no groups"
make_passes "$gen" gradients_loop20 "$targets" "--loops groups, gradients_loop20"
expect_rc 0 "$K" specs/quadrature.spec --top 3 --loops groups --out "$tmp/groups"
grep -q 'groups:' "$tmp/groups/quadrature/index.txt" && fail "--loops groups: quadrature's summing loop in groups"
# ... and says so, and why, where it ranked the usual candidates silently: at each loop, or for
# a spec with none, or for --max-fusion below the spec's calls.
no_groups='note: --loops groups: no kernel runs a loop.s iterations in groups of threads; the '
grep -q "^specs/quadrature.spec: $no_groups" "$tmp/err" &&
  grep -q '^specs/quadrature.spec:14:1: note: loop q cannot run its iterations in groups of threads: calls of the spec are outside it' \
    "$tmp/err" || fail "--loops groups: quadrature: no note saying why no kernel of groups"
expect_rc 0 "$K" plan specs/stvenant.spec --loops groups --top 1
grep -q "^specs/stvenant.spec: $no_groups" "$tmp/err" &&
  grep -q '^specs/stvenant.spec: note: the spec has no loop' "$tmp/err" ||
  fail "--loops groups: stvenant: no note saying it has no loop"
expect_rc 0 "$K" plan specs/stvenant_element.spec --loops groups --top 1 --max-fusion 100
grep -q 'holds every call (128), more than --max-fusion 100' "$tmp/err" ||
  fail "--loops groups --max-fusion 100: no note"

# Names in generated code: an array element and a plain variable that would share one (B[1] and
# B_1: B_1_0) are refused with a located error before anything is written; a value of a kernel of
# groups and a plain variable that would (f[N] and f_N: f_N_0) leave that kernel out, with a
# note, and the rest is written.
expect_rc 1 "$K" tests/specs/names_array_plain.spec --out "$tmp/names"
grep -q "plain.spec:3:11: error: array element 'B\[1\]' would be named B_1_0 in .*, as 'B_1' is" \
  "$tmp/err" || fail "names: B[1] and B_1 not refused"
[ -e "$tmp/names" ] && fail "names: a folder written for a refused spec"
expect_rc 0 "$K" tests/specs/names_group_plain.spec --loops groups --top 3 --out "$tmp/names"
grep -q "plain.spec:10:1: note: loop N's iterations .* f\[N\] and f_N.0 would both be named f_N_0" \
  "$tmp/err" || fail "names: no note on f[N] and f_N"
grep -q 'groups:' "$tmp/names/names_group_plain/index.txt" &&
  fail "names: a kernel of groups offered with f[N] and f_N both f_N_0"

# --- loops over plain variables, end to end ---------------------------------------------------
expect_rc 0 "$K" tests/specs/loop_plain.spec --top 3 --out "$tmp/gen"
gen="$tmp/gen/loop_plain"
make_passes "$gen" loop_plain "$targets" loop_plain

if ((fails)); then echo "$fails failure(s)"; exit 1; fi
echo "loops: all checks passed"
