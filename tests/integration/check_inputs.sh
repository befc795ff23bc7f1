#!/usr/bin/env bash
# check_inputs.sh — the CPU check passes well-posed hyperelastic computations and still catches
# wrong code.  Its inputs used to be +-[0.5, 1.5) in every entry, so that F^T F of a random F was
# nearly rank one and every candidate of C^-1, the unfused form included, failed.  Now
# (docs/generated.md, "The checks' inputs"): matrix3x3 inputs are drawn near the identity
# (types.ini check-inputs), elements whose float64 reference moves too far under one rounding of
# every argument are drawn again, and each output's tolerance follows what is left.
#   - tests/specs/hyper_inv.spec (C^-1 of F^T F) and tests/specs/neohooke.spec (a compressible
#     neo-Hookean stress, 76 calls, vector inputs) pass `make check-cpu` (both thread orders,
#     sub-ranges) in single and in double precision, every candidate and the unfused form;
#   - kas_candidates.h says how each input is drawn, in a comment and in a table;
#   - broken candidates still fail: F F for F^T F (a transposed argument), an inverse 1e-4 off,
#     and msub33's arguments swapped in the neo-Hookean stress, whose tolerance the data raise;
#     a broken unfused form fails with a note that blames the data or the library, not fusion;
#   - types.ini refuses check-inputs = near-identity on a type that is no square matrix.
# Run from the repository root with $KASGEN set (tests/run.sh does).
set -u
: "${KASGEN:?set KASGEN to the kasgen binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
lib=${KASGEN_LIBRARY:-library}

# gen SPEC PRECISION TOP: the spec's folder, $tmp/PRECISION/<stem>
gen() {
  "$KASGEN" "tests/specs/$1.spec" --library "$lib" --top "$3" --variants 0 --precision "$2" \
    --out "$tmp/$2" >"$tmp/$1-$2.gen" 2>&1 || { cat "$tmp/$1-$2.gen"; fail "kasgen $1 $2"; }
}

# passes SPEC PRECISION TOP: every candidate and the unfused form pass check-cpu
passes() {
  gen "$1" "$2" "$3"
  local log="$tmp/$1-$2.cpu" n=$(($3 + 1))
  make -s -C "$tmp/$2/$1" check-cpu >"$log" 2>&1 || { tail -5 "$log"; fail "$1 $2: check-cpu"; }
  grep -q "^$1: $n of $n candidates passed" "$log" || fail "$1 $2: not $n of $n passed"
  grep -q '^unfused  *PASS' "$log" || fail "$1 $2: the unfused form did not pass"
}

# breaks SPEC PRECISION SED-EXPRESSION WHAT: cand01's host form changed by the expression (which
# must change something) fails check-cpu, and the unfused form still passes
breaks() {
  local d="$tmp/$2/$1" log="$tmp/$1-$2-broken.cpu"
  cp "$d/cand01/kernels_host.cpp" "$tmp/kernels_host.orig"
  sed -i "$3" "$d/cand01/kernels_host.cpp"
  cmp -s "$d/cand01/kernels_host.cpp" "$tmp/kernels_host.orig" && fail "$4: the edit changed nothing"
  if make -s -C "$d" check-cpu >"$log" 2>&1; then fail "$4: check-cpu passed a broken candidate"; fi
  grep -q '^cand01  *FAIL' "$log" || fail "$4: cand01 not reported FAIL"
  grep -q '^unfused  *PASS' "$log" || fail "$4: the unfused form failed too"
  cp "$tmp/kernels_host.orig" "$d/cand01/kernels_host.cpp"
}

for p in single double; do
  passes hyper_inv $p 2
  passes neohooke $p 2
done

# How the inputs are drawn, said where the generated code's reader looks.
h="$tmp/single/hyper_inv/common/kas_candidates.h"
grep -q '^ \*   F (matrix3x3): identity + perturbation' "$h" || fail "kas_candidates.h: F's draw"
grep -q 'kas_input_near_identity\[.*\] = {3};' "$h" || fail "kas_candidates.h: near-identity table"
grep -q '^ \*   u (vector3 array): +-\[0.5, 1.5)' "$tmp/single/neohooke/common/kas_candidates.h" ||
  fail "kas_candidates.h: u's draw"

# Wrong code still fails.
transpose='s/acc += a\[\(tx \* 9 + \)\{0,1\}k \* 3 + i\]/acc += a[\1i * 3 + k]/'
breaks hyper_inv single "$transpose" "F F for F^T F"
breaks hyper_inv single 's/rdet = 1\.0 \//rdet = 1.0001 \//' "an inverse 1e-4 off"
breaks hyper_inv double "$transpose" "F F for F^T F, double"
breaks neohooke single 's/c\[k\] = a\[k\] - b\[k\];/c[k] = b[k] - a[k];/' "msub33's arguments swapped"

# A failing unfused form is said to be the data's fault (or the library's), not a fusion's.
d="$tmp/single/hyper_inv"
sed -i "$transpose" "$d/unfused/kernels_host.cpp"
make -s -C "$d" check-cpu >"$tmp/unfused.cpu" 2>&1 && fail "a broken unfused form passed"
grep -q '^note: the unfused form, the library.s functions called one by one, fails too' \
  "$tmp/unfused.cpu" || fail "no note for a failing unfused form"

# check-inputs = near-identity needs a square matrix type.
cp -r "$lib" "$tmp/lib"
printf '\n[sym3]\nsize = 6\ncheck-inputs = near-identity\n' >>"$tmp/lib/types.ini"
line=$(grep -c '' "$tmp/lib/types.ini")
if "$KASGEN" list --library "$tmp/lib" >"$tmp/list.out" 2>"$tmp/list.err"; then
  fail "types.ini: near-identity on size 6 accepted"
fi
want="types.ini:$line:16: error: check-inputs = near-identity needs a square matrix type, but"
grep -qF "$want 'sym3' has size 6" "$tmp/list.err" ||
  { cat "$tmp/list.err"; fail "types.ini: no positioned error for size 6"; }
sed -i 's/^check-inputs = near-identity$/check-inputs = nearly/' "$tmp/lib/types.ini"
"$KASGEN" list --library "$tmp/lib" >/dev/null 2>"$tmp/list.err" && fail "check-inputs = nearly accepted"
grep -q "error: check-inputs must be 'near-identity' or 'random', not 'nearly'" "$tmp/list.err" ||
  fail "types.ini: no error for an unknown check-inputs"

if ((fails)); then echo "$fails failure(s)"; exit 1; fi
echo "check_inputs: hyper_inv and neohooke pass check-cpu in single and double; 4 broken candidates fail"
