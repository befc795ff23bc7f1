#!/usr/bin/env bash
# synopses.sh — the synopses the docs show are the programs' own:
#   - kasgen(1)'s SYNOPSIS is the command table of src/main.c, as `kasgen --help` prints it: every
#     command with its operand and exactly the options it accepts, in the table's order.
#     kasgen(1) says that a command takes only the options its synopsis shows, so a synopsis
#     missing one (tune's --precision, calibrate's --library, plan's --uncalibrated were)
#     misleads.  Both are turned into one line per command, "kasgen plan SPEC [--top N] ...";
#   - docs/generated.md's harness synopsis is the usage the harness prints (src/runtime/
#     harness.cu; --rounds and --offset were missing).
# Run from the repository root with $KASGEN set (tests/run.sh does).
set -u
K=${KASGEN:-build/kasgen}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# --help's usage block, continuation lines joined.
"$K" --help >"$tmp/help" || fail "kasgen --help failed"
awk '/^$/ { exit }
     { sub(/^usage: /, ""); sub(/^ +/, "") }
     /^kasgen/ { if (line) print line; line = $0; next }
     { line = line " " $0 }
     END { print line }' "$tmp/help" >"$tmp/from_help"

# The man page's .SY blocks in the same words: .B a command, .I/.IR the operand (upper case,
# "dir | file | -" as DIR|FILE|-), .OP an option.  The last block (--help, help, --version) is
# not a command of the table.
awk '/^\.SH SYNOPSIS/ { on = 1; next }
     /^\.SH/ { on = 0 }
     !on { next }
     { gsub(/\\-/, "-") }
     /^\.SY / { line = "kasgen"; next }
     /^\.YS/ { if (line !~ /--help/) print line; next }
     /^\.B / { line = line " " $2; next }
     /^\.IR? / { s = $0; sub(/^\.IR? /, "", s); gsub(/[" ]/, "", s); line = line " " toupper(s)
                 next }
     /^\.OP / { s = $0; sub(/^\.OP /, "", s); line = line " [" s "]"; next }
     { line = line " " $0 }' docs/man/kasgen.1 >"$tmp/from_man"

[ "$(wc -l <"$tmp/from_help")" -ge 10 ] || fail "--help's usage has fewer than 10 commands"
diff -u "$tmp/from_help" "$tmp/from_man" >"$tmp/diff" ||
  { fail "kasgen(1)'s SYNOPSIS is not --help's usage (- help, + man):"; sed 's/^/    /' "$tmp/diff"; }

# Each command's own help shows the same line as the whole usage.
while read -r _ cmd _; do
  case "$cmd" in SPEC) continue ;; esac
  "$K" "$cmd" --help | awk 'NR == 1 { sub(/^usage: /, ""); l = $0; next }
                            /^$/ { exit } { sub(/^ +/, ""); l = l " " $0 } END { print l }' \
    >"$tmp/one"
  grep -qxF -f "$tmp/one" "$tmp/from_help" || fail "kasgen $cmd --help: $(cat "$tmp/one")"
done <"$tmp/from_help"

# The harness: its usage message (string literals joined) against generated.md's code block.
sed -n '/"usage: %s \[N/,/\\n"/p' src/runtime/harness.cu | grep -o '"[^"]*"' | tr -d '"\n' |
  sed 's/^usage: %s /build\/harness /; s/\\n$//' >"$tmp/harness_usage"
awk '/^## The harness/ { on = 1; next }
     on && /^```$/ { if (in_block) exit; in_block = 1; next }
     in_block { sub(/^ +/, ""); line = line (line ? " " : "") $0 }
     END { print line }' docs/generated.md >"$tmp/harness_doc"
[ -s "$tmp/harness_usage" ] && [ "$(cat "$tmp/harness_usage")" = "$(cat "$tmp/harness_doc")" ] ||
  fail "generated.md's harness synopsis '$(cat "$tmp/harness_doc")' is not its usage" \
    "'$(cat "$tmp/harness_usage")'"

[ "$fails" = 0 ] && echo "synopses: all checks passed"
exit $((fails > 0))
