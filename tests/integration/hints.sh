#!/usr/bin/env bash
# hints.sh — "did you mean" notes (issue #9), through the real binary: every spec of tests/hints/
# gives exactly the diagnostics of its .expected file (errors, notes at the declarations of the
# closest names, source lines and carets; LIBRARY stands for the library folder), a library with
# a misspelt type gets its note, an unknown command or option on the command line gets its
# note and exit 2, and so does a --layout name the spec lacks (its note at the argument's
# declaration).  A spec with 10,000 names and 10,000 misspelt uses stays fast.  Run from the
# repository root with $KASGEN and $KASGEN_LIBRARY set (tests/run.sh does both).
set -u
: "${KASGEN:?set KASGEN to the kasgen binary}"
: "${KASGEN_LIBRARY:?set KASGEN_LIBRARY to the library folder}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# k ARGS...: kasgen under a time limit; stdout in $tmp/out, stderr in $tmp/err, status in $rc
k() { rc=0; timeout 20 "$KASGEN" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?; }
# same_err NAME: stderr equals the text on standard input
same_err() {
  cat >"$tmp/want"
  diff -u "$tmp/want" "$tmp/err" >"$tmp/diff" || { fail "$1: stderr differs"; sed 's/^/    /' "$tmp/diff"; }
}

# --- specs: the exact diagnostics --------------------------------------------------------------
n=0
for spec in tests/hints/*.spec; do
  k check "$spec"
  [ "$rc" = 1 ] || fail "$spec: exit $rc, expected 1"
  sed "s|$KASGEN_LIBRARY|LIBRARY|g" "$tmp/err" >"$tmp/err.lib" && mv "$tmp/err.lib" "$tmp/err"
  same_err "$spec" <"${spec%.spec}.expected"
  n=$((n + 1))
done
[ "$n" -ge 6 ] || fail "only $n hint specs"
# The notes are not there when nothing is wrong with the names.
grep -L 'did you mean' tests/hints/*.expected | grep -qv no_hint && fail "a .expected file without a note"

# --- the library: a misspelt type in function.ini -----------------------------------------------
k list --library tests/fixtures/bad_unknown_type
same_err "library type" <<'EOF'
tests/fixtures/bad_unknown_type/vcopy3/function.ini:4:10: error: unknown type 'vektor3' (see types.ini)
     4 | params = vektor3
       |          ^
tests/fixtures/bad_unknown_type/types.ini:5:1: note: did you mean 'vector3'?
     5 | [vector3]
       | ^
EOF

# --- the command line ---------------------------------------------------------------------------
k pln specs/stvenant.spec
[ "$rc" = 2 ] || fail "kasgen pln SPEC: exit $rc"
same_err "kasgen pln SPEC" <<'EOF'
kasgen: error: unknown command 'pln'
kasgen: note: did you mean 'plan'?
EOF
k pln
[ "$rc" = 2 ] || fail "kasgen pln: exit $rc"
same_err "kasgen pln" <<'EOF'
kasgen: error: unknown command 'pln'
kasgen: note: did you mean 'plan'?
EOF
k chekc specs/stvenant.spec
same_err "kasgen chekc" <<'EOF'
kasgen: error: unknown command 'chekc'
kasgen: note: did you mean 'check'?
EOF
k frobnicate specs/stvenant.spec
[ "$rc" = 2 ] || fail "kasgen frobnicate SPEC: exit $rc"
same_err "kasgen frobnicate SPEC" <<'EOF'
kasgen: error: unknown command 'frobnicate'
kasgen: note: kasgen --help lists the commands
EOF
k help reprot
[ "$rc" = 2 ] || fail "kasgen help reprot: exit $rc"
same_err "kasgen help reprot" <<'EOF'
kasgen: error: no command 'reprot'
kasgen: note: did you mean 'report'?
EOF
# A word far from every command is a spec: the file's own error, exit 1, no hint.
k frobnicate
[ "$rc" = 1 ] || fail "kasgen frobnicate: exit $rc"
grep -q "^frobnicate: error: cannot read" "$tmp/err" || fail "kasgen frobnicate: message"
# A file named like a command typo is a spec, not a command.
(cd "$tmp" && cp "$OLDPWD/specs/synctest.spec" pln && "$KASGEN" check pln >out 2>err) ||
  fail "a spec file named 'pln' is not read as a spec"
k plan specs/stvenant.spec --tpo 3
[ "$rc" = 2 ] || fail "--tpo: exit $rc"
same_err "--tpo" <<'EOF'
kasgen: error: unknown option '--tpo'
kasgen: note: did you mean '--top'?
usage: kasgen [COMMAND] [SPEC|DIR|FILE] [OPTIONS]; kasgen --help lists them
EOF
k plan specs/stvenant.spec --max-fsuion=3
same_err "--max-fsuion=3" <<'EOF'
kasgen: error: unknown option '--max-fsuion'
kasgen: note: did you mean '--max-fusion'?
usage: kasgen [COMMAND] [SPEC|DIR|FILE] [OPTIONS]; kasgen --help lists them
EOF
k plan specs/stvenant.spec --frobnicate
same_err "--frobnicate" <<'EOF'
kasgen: error: unknown option '--frobnicate'
usage: kasgen [COMMAND] [SPEC|DIR|FILE] [OPTIONS]; kasgen --help lists them
EOF
k plan specs/stvenant.spec --d x
[ "$rc" = 2 ] || fail "--d: exit $rc"
same_err "--d (ambiguous)" <<'EOF'
kasgen: error: option '--d' is ambiguous; it could be --db, --dot
usage: kasgen [COMMAND] [SPEC|DIR|FILE] [OPTIONS]; kasgen --help lists them
EOF
k plan specs/stvenant.spec --top
same_err "--top without a value" <<'EOF'
kasgen: error: option '--top' needs a value (N)
usage: kasgen [COMMAND] [SPEC|DIR|FILE] [OPTIONS]; kasgen --help lists them
EOF
k plan specs/stvenant.spec --no-db=yes
same_err "--no-db=yes" <<'EOF'
kasgen: error: option '--no-db' takes no value
usage: kasgen [COMMAND] [SPEC|DIR|FILE] [OPTIONS]; kasgen --help lists them
EOF
k plan specs/stvenant.spec -x
same_err "-x" <<'EOF'
kasgen: error: unknown option '-x'
usage: kasgen [COMMAND] [SPEC|DIR|FILE] [OPTIONS]; kasgen --help lists them
EOF
k plan specs/stvenant.spec -top 3
same_err "-top (one dash)" <<'EOF'
kasgen: error: unknown option '-t'
kasgen: note: did you mean '--top'?
usage: kasgen [COMMAND] [SPEC|DIR|FILE] [OPTIONS]; kasgen --help lists them
EOF
k plan specs/stvenant.spec --no-db -xh
same_err "--no-db -xh" <<'EOF'
kasgen: error: unknown option '-x'
usage: kasgen [COMMAND] [SPEC|DIR|FILE] [OPTIONS]; kasgen --help lists them
EOF
# A misspelt layout word: the item as it would be right (before, the error alone); a word far
# from both gets no note.
k plan specs/stvenant.spec --layout mat33HelpF=compnent
[ "$rc" = 2 ] || fail "--layout mat33HelpF=compnent: exit $rc"
same_err "--layout mat33HelpF=compnent" <<'EOF'
--layout: error: 'mat33HelpF=compnent': expected element, component or NAME=element|component
--layout: note: did you mean 'mat33HelpF=component'?
usage: kasgen [COMMAND] [SPEC|DIR|FILE] [OPTIONS]; kasgen --help lists them
EOF
k plan specs/stvenant.spec --layout rows
grep -q "did you mean" "$tmp/err" && fail "--layout rows: a note"
# A --layout name the spec lacks: bad usage (2), with the note at the closest input or output's
# declaration (before, the error alone); a name far from every argument gets none.
k plan specs/stvenant.spec --layout component,vec3Dphi=element
[ "$rc" = 2 ] || fail "--layout vec3Dphi=element: exit $rc"
same_err "--layout vec3Dphi=element" <<'EOF'
--layout: error: 'vec3Dphi' names no input or output of spec stvenant
specs/stvenant.spec:5:15: note: did you mean 'vec3DPhi'?
     5 | vector3       vec3DPhi, vec3NodeStiff;
       |               ^
EOF
k specs/synctest.spec --layout a=component --out "$tmp/layout"
[ "$rc" = 2 ] || fail "--layout a=component: exit $rc"
same_err "--layout a=component" <<'EOF'
--layout: error: 'a' names no input or output of spec synctest
specs/synctest.spec:3:11: note: did you mean 'A'?
     3 | matrix3x3 A, M_1, M_2, M_3, F;
       |           ^
EOF
[ ! -e "$tmp/layout" ] || fail "--layout a=component: an output folder was written"
k plan specs/stvenant.spec --layout nosuch=element
[ "$rc" = 2 ] && ! grep -q 'did you mean' "$tmp/err" || fail "--layout nosuch=element: a note"
# Unique abbreviations still work (getopt_long's own rule).
k plan specs/stvenant.spec --to 1 --no-d
[ "$rc" = 0 ] && [ "$(wc -l <"$tmp/out")" = 1 ] || fail "--to 1 --no-d: exit $rc"

# --- bounded work: 10,000 names of 63 characters, 10,000 misspelt uses --------------------------
awk 'BEGIN {
  pad = sprintf("%58s", ""); gsub(/ /, "a", pad)
  printf "matrix3x3 "
  for (i = 0; i < 10000; i++) printf "%sn%s%04d", (i ? ", " : ""), pad, i
  printf ";\ninput n%s0000;\n", pad
  for (i = 0; i < 10000; i++) printf "n%s0001 = madd33(m%s%04d, n%s0000);\n", pad, pad, i, pad
  printf "return n%s0001;\n", pad
}' >"$tmp/typos.spec"
start=$(date +%s%N)
k check "$tmp/typos.spec"
ms=$((($(date +%s%N) - start) / 1000000))
[ "$rc" = 1 ] || fail "10,000 typos: exit $rc"
[ "$(grep -c 'did you mean' "$tmp/err")" -ge 10 ] || fail "10,000 typos: too few notes"
grep -q "note: did you mean 'na*0000'?" "$tmp/err" || fail "10,000 typos: the first note"
[ "$ms" -lt 10000 ] || fail "10,000 typos took $ms ms"
echo "10,000 names and 10,000 typos: $ms ms"

if ((fails)); then echo "$fails failure(s)"; exit 1; fi
echo "hints: all checks passed ($n specs)"
