#!/usr/bin/env bash
# five_args.sh — the widest library call end to end: tests/specs/stvk_block.spec calls
# stvk_kmat33 (5 parameters; KAS_MAX_ARGS is 6) and three more functions.  kasgen check lists the
# call with its 5 arguments; kasgen plan gives partitions of the 4 calls; kasgen emits the top 5
# (analytic model) with an embedding API that takes the 7 inputs in `input` order; and
# `make check-cpu` passes every candidate and the unfused form, each run thread by thread on the
# CPU in ascending and descending order against the float64 CPU graph.  Run by tests/run.sh with
# $KASGEN set.
set -u
KASGEN=${KASGEN:-./kasgen}
spec=tests/specs/stvk_block.spec
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$KASGEN" check "$spec" >"$tmp/check" 2>&1 || { cat "$tmp/check"; fail "check exit $?"; }
grep -q 'ok: 4 calls, 11 values, 7 inputs, 1 outputs' "$tmp/check" || fail "check summary"
grep -q 'stvk_kmat33#0  K.0 = stvk_kmat33(F, dN, dM, lambda, mu)$' "$tmp/check" ||
  fail "check does not show the 5-argument call"

"$KASGEN" plan "$spec" --top 5 --no-db >"$tmp/plan" 2>"$tmp/plan.err" ||
  { cat "$tmp/plan" "$tmp/plan.err"; fail "plan exit $?"; }
[ "$(wc -l <"$tmp/plan")" = 5 ] || { cat "$tmp/plan"; fail "plan did not print 5 candidates"; }
while read -r _ _ rest; do
  calls=$(grep -o '#[0-9]*' <<<"$rest" | sort | tr '\n' ' ')
  [ "$calls" = "#0 #1 #2 #3 " ] || fail "not a partition of the 4 calls: $rest"
done <"$tmp/plan"

"$KASGEN" "$spec" --top 5 --no-db --out "$tmp" >"$tmp/gen" 2>&1 || { cat "$tmp/gen"; fail "generate exit $?"; }
out="$tmp/stvk_block"
api='kas_stvk_block(const float \*F, const float \*S, const float \*dN, const float \*dM, '
api+='const float \*lambda, const float \*mu, const float \*V, float \*K, size_t n'
# The prototype may be wrapped over lines: compare it with its blanks collapsed.
tr -s ' \n' ' ' <"$out/embed/kas_stvk_block.h" | grep -q "$api" ||
  fail "the embedding API does not take the 7 inputs in order"

make -s -C "$out" check-cpu >"$tmp/cpu" 2>&1 || { cat "$tmp/cpu"; fail "check-cpu"; }
cat "$tmp/cpu"
grep -q '^stvk_block: 6 of 6 candidates passed' "$tmp/cpu" || fail "check-cpu did not pass 5 candidates + unfused"
grep -q '^cand01 .*stvk_kmat33_' "$tmp/cpu" || fail "cand01 does not run stvk_kmat33"
echo "five_args: check, plan, emission and check-cpu (both thread orders) of a 5-argument call"
