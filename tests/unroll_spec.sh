#!/usr/bin/env bash
# unroll_spec.sh SPEC — writes SPEC with its loops unrolled, as text, to stdout: each
# `for V in LO..HI {` ... `}` becomes its body repeated for V = LO .. HI-1 (a comment line names
# each iteration), with every array index that uses a loop variable (`x[V]`, `x[V+1]`, `x[V-1]`)
# replaced by its value.  The unrolled twins in specs/ are made by it (`make` does not run it;
# tests/integration/loops.sh checks that they are current):
#   tests/unroll_spec.sh specs/stvenant_element.spec > specs/stvenant_element_unrolled.spec
# It is an oracle for kasgen's parser, so it shares nothing with it: plain awk over lines.  It
# expects what specs/ holds: `for` headers, `}` and calls each on a line of their own; the
# leading comment block of SPEC is replaced by a note saying where the text comes from.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 SPEC" >&2; exit 2; }
awk -v src="$1" '
function fail(msg) { printf "%s:%d: %s\n", src, NR, msg > "/dev/stderr"; failed = 1; exit 1 }
# The code part of line s (before any // comment) with loop variables in indices evaluated.
function substitute(s,    code, comment, out, pos, start, len, inner, name, rest) {
  code = s; comment = ""
  pos = index(s, "//")
  if (pos) { code = substr(s, 1, pos - 1); comment = substr(s, pos) }
  out = ""
  while (match(code, /\[[^]]*\]/)) {
    start = RSTART; len = RLENGTH
    inner = substr(code, start + 1, len - 2)
    gsub(/[ \t]/, "", inner)
    if (match(inner, /^[A-Za-z_][A-Za-z0-9_]*/)) {
      name = substr(inner, 1, RLENGTH); rest = substr(inner, RLENGTH + 1)
      if (!(name in env)) fail("index uses " name ", which is not a loop variable here")
      inner = (env[name] + (rest == "" ? 0 : rest)) ""
    }
    out = out substr(code, 1, start - 1) "[" inner "]"
    code = substr(code, start + len)
  }
  return out code comment
}
# Writes lines first..last, each loop unrolled (recursively for nested loops); `outer` names
# the iterations of the loops around them ("N = 1, ").
function emit(first, last, outer,    i, v) {
  for (i = first; i <= last; i++) {
    if (kind[i] == "for") {
      for (v = lo[i]; v < hi[i]; v++) {
        env[var[i]] = v
        print "// " outer var[i] " = " v
        emit(i + 1, close_of[i] - 1, outer var[i] " = " v ", ")
      }
      delete env[var[i]]
      i = close_of[i]
    } else {
      line = text[i]
      sub(/^[ \t]+/, "", line)
      print substitute(line)
    }
  }
}
BEGIN { header = 1; depth = 0 }
header && /^[ \t]*\/\// { next }
{ header = 0; n++ }
/^[ \t]*for[ \t]/ {
  if (!match($0, /^[ \t]*for[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]+in[ \t]+[0-9]+\.\.[0-9]+[ \t]*\{[ \t]*(\/\/.*)?$/))
    fail("a for header must be alone on its line: for V in LO..HI {")
  kind[n] = "for"
  split($0, w, /[ \t]+|\.\.|\{/)
  for (k = 1; w[k] != "for"; k++) ;
  var[n] = w[k + 1]; lo[n] = w[k + 3] + 0; hi[n] = w[k + 4] + 0
  stack[++depth] = n
  next
}
/^[ \t]*\}[ \t]*$/ {
  if (!depth) fail("} without a loop")
  kind[n] = "close"; close_of[stack[depth--]] = n
  next
}
{ kind[n] = "line"; text[n] = $0 }
END {
  if (failed) exit 1
  if (depth) fail("unterminated loop")
  print "// Generated from " src " by tests/unroll_spec.sh (do not edit):"
  print "// the same spec with its loops unrolled, a comment line naming each iteration."
  emit(1, n, "")
}' "$1"
