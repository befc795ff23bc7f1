#!/usr/bin/env bash
# stdio.sh — "-" as the standard input or output (issue #9), through the real binary: a spec from
# the standard input (check, fusions, plan, the main job with --name), named <stdin> in
# diagnostics; --db -; check --dot - (the DAG alone on stdout, accepted by Graphviz); and the
# usage errors: two "-" inputs in one command, --dot - where stdout holds the ranking, the main
# job's SPEC - without --name, a bad --name, --out - and --library -.  Each result is compared
# with the same command on the file.  Run from the repository root with $KASGEN set.
set -u
: "${KASGEN:?set KASGEN to the kasgen binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# k ARGS... [< input]: kasgen under a time limit; stdout in $tmp/out, stderr in $tmp/err, status
# in $rc.
k() { rc=0; timeout 20 "$KASGEN" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?; }
expect() { # RC STDERR-REGEX NAME
  [ "$rc" = "$1" ] || { fail "$3: exit $rc, expected $1"; sed 's/^/    /' "$tmp/err" | head -5; return; }
  [ -z "$2" ] || grep -qE -- "$2" "$tmp/err" || { fail "$3: no message matching '$2'"; sed 's/^/    /' "$tmp/err" | head -5; }
}
spec=specs/stvenant.spec
db=benchmarks/nvidia-h100-80gb-hbm3.xml

# --- a spec on the standard input -----------------------------------------------------------------
k check "$spec"
sed "s|^$spec:|<stdin>:|" "$tmp/out" >"$tmp/want"
k check - <"$spec"
expect 0 "" "check - <file"
cmp -s "$tmp/want" "$tmp/out" || fail "check - differs from check FILE (but for the name)"
k check - < <(cat "$spec") # a pipe, not a file
expect 0 "" "check - from a pipe"
cmp -s "$tmp/want" "$tmp/out" || fail "check - from a pipe differs"
k fusions "$spec" --max-fusion 3; cp "$tmp/out" "$tmp/want"
k fusions - --max-fusion 3 <"$spec"
expect 0 "" "fusions -"
cmp -s "$tmp/want" "$tmp/out" || fail "fusions - differs from fusions FILE"
k plan "$spec" --top 5; cp "$tmp/out" "$tmp/want"
k plan - --top 5 <"$spec"
expect 0 "" "plan -"
cmp -s "$tmp/want" "$tmp/out" || fail "plan - differs from plan FILE"
# Diagnostics name it <stdin>, with the source line.
printf 'matrix3x3 A, C;\ninput A;\nC = madd3(A, A);\nreturn C;\n' >"$tmp/bad.spec"
k check - <"$tmp/bad.spec"
expect 1 "^<stdin>:3:5: error: unknown function 'madd3'$" "a bad spec on stdin"
grep -q '^     3 | C = madd3(A, A);$' "$tmp/err" || fail "a bad spec on stdin: no source line"
grep -q "note: did you mean 'madd33'?" "$tmp/err" || fail "a bad spec on stdin: no hint"
k check - </dev/null
expect 1 "^<stdin>:1:1: error: empty spec" "an empty stdin"
k check - <specs
expect 1 "^<stdin>: error: cannot read: it is a folder" "a folder on stdin"
printf 'matrix3x3 A;\0' >"$tmp/nul.spec"
k check - <"$tmp/nul.spec"
expect 1 "^<stdin>: error: binary file" "a binary stdin"

# --- the main job: SPEC - needs --name, which names the folder and the C API ------------------------
k - --no-db --top 1 --out "$tmp/gen" <"$spec"
expect 2 "a spec read from the standard input needs --name NAME" "SPEC - without --name"
[ -e "$tmp/gen" ] && fail "SPEC - without --name wrote something"
k - --name elem_force --no-db --top 1 --out "$tmp/gen" <"$spec"
expect 0 "" "SPEC - --name elem_force"
[ -f "$tmp/gen/elem_force/embed/kas_elem_force.h" ] || fail "--name: no embed/kas_elem_force.h"
grep -q 'kas_status kas_elem_force(' "$tmp/gen/elem_force/embed/kas_elem_force.h" || fail "--name: C API not named"
ls "$tmp/gen" >"$tmp/ls"; [ "$(cat "$tmp/ls")" = elem_force ] || fail "--name: folders $(cat "$tmp/ls")"
grep -q '^<stdin>: 4 calls' "$tmp/out" || fail "SPEC -: the ranking does not name <stdin>"
# --name also renames a spec read from a file.
k "$spec" --name other --no-db --top 1 --out "$tmp/gen"
expect 0 "" "SPEC FILE --name other"
[ -f "$tmp/gen/other/embed/kas_other.h" ] || fail "--name with a file: no kas_other.h"
for bad in 'a b' '../up' '-x' '' "$(printf 'n%.0s' {1..65})"; do
  k "$spec" --name "$bad" --no-db --out "$tmp/gen"
  expect 2 "invalid value '.*' for --name: a name is 1 to 64 letters" "--name '$bad'"
done
k plan "$spec" --name x
expect 2 "option --name does not apply to 'plan'" "plan --name"

# --- --db - -------------------------------------------------------------------------------------------
k plan "$spec" --db "$db" --top 3; cp "$tmp/out" "$tmp/want"
k plan "$spec" --db - --top 3 <"$db"
expect 0 "" "plan --db -"
cmp -s "$tmp/want" "$tmp/out" || fail "plan --db - differs from plan --db FILE"
k "$spec" --db - --top 1 --out "$tmp/gen2" <"$db"
expect 0 "" "generate --db -"
grep -q '^predicting for NVIDIA H100 80GB HBM3 from <stdin> ' "$tmp/out" || fail "--db -: the ranking does not name <stdin>"
printf '<kasgen-timing version="1">\n<oops\n' >"$tmp/bad.xml"
k plan "$spec" --db - <"$tmp/bad.xml"
expect 1 "^<stdin>:[0-9]+(:[0-9]+)?: error: " "a bad database on stdin"

# --- two inputs from the standard input: a usage error, before anything is read ---------------------
k plan - --db - <"$spec"
expect 2 "SPEC and --db are both '-', but the standard input holds only one of them" "plan - --db -"
[ -s "$tmp/out" ] && fail "plan - --db - printed something"
k - --db - --name x --out "$tmp/gen3" <"$spec"
expect 2 "SPEC and --db are both '-'" "generate - --db -"
[ -e "$tmp/gen3" ] && fail "generate - --db - wrote something"

# --- --dot -: the DAG alone for check; refused where stdout holds the ranking ------------------------
k check "$spec" --dot "$tmp/g.dot"
k check "$spec" --dot -
expect 0 "" "check --dot -"
cmp -s "$tmp/g.dot" "$tmp/out" || fail "check --dot - is not exactly the DOT file"
if command -v dot >/dev/null; then
  dot -Tsvg "$tmp/out" -o "$tmp/g.svg" || fail "dot rejects check --dot -"
fi
k check - --dot - <"$spec"
expect 0 "" "check - --dot -"
head -1 "$tmp/out" | grep -q '^digraph ' || fail "check - --dot -: not DOT"
k plan "$spec" --dot -
expect 2 "--dot -: the standard output holds the ranking; give --dot a file name" "plan --dot -"
[ -s "$tmp/out" ] && fail "plan --dot - printed something"
k "$spec" --dot - --out "$tmp/gen4"
expect 2 "--dot -: the standard output holds the ranking" "generate --dot -"
[ -e "$tmp/gen4" ] && fail "generate --dot - wrote something"

# --- folders are never "-" -------------------------------------------------------------------------
mkdir "$tmp/cwd"
rc=0; (cd "$tmp/cwd" && exec timeout 20 "$KASGEN" "$OLDPWD/$spec" --out - >"$tmp/out" 2>"$tmp/err") || rc=$?
expect 2 "--out names a folder; '-' cannot be one" "--out -"
[ -e "$tmp/cwd/-" ] && fail "--out - made a folder named -"
k list --library -
expect 2 "--library names a folder; '-' cannot be one" "--library -"
k units --out -
expect 2 "--out names a folder" "units --out -"

# --- a file named "-" is still reachable as ./- ------------------------------------------------------
(cd "$tmp" && cp "$OLDPWD/$spec" ./- && timeout 20 "$KASGEN" check ./- >out 2>err </dev/null) ||
  fail "check ./- (a file named -)"

if ((fails)); then echo "$fails failure(s)"; exit 1; fi
echo "stdio: all checks passed"
