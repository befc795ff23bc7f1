#!/usr/bin/env bash
# cli_front.sh — the front-end commands through the real binary and the real library: exit codes
# (0 ok, 1 bad input, 2 bad usage), --help/--version, each command's own help and options (an
# option that does not apply is a usage error), --out looked at before the search, `check` on
# every seed spec, every malformed
# spec's located error, --dot accepted by Graphviz, `list`, and `fusions` counts equal to an
# independent brute-force count (awk, from the edges `check` prints).  Run from the repo root
# with $KASGEN set (tests/run.sh does both).
set -u
K=${KASGEN:-build/kasgen}
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

# --- usage and exit codes ---------------------------------------------------------------------
expect_rc 0 "$K" --help
grep -q '^usage: kasgen' "$tmp/out" || fail "--help prints no usage"
expect_rc 0 "$K" --version
grep -qx 'kasgen [0-9.]*' "$tmp/out" || fail "--version prints '$(cat "$tmp/out")'"
expect_rc 2 "$K" check
expect_rc 2 "$K" check specs/stvenant.spec specs/synctest.spec
expect_rc 2 "$K" --bogus-option specs/stvenant.spec
expect_rc 2 "$K" fusions specs/synctest.spec --max-fusion 0
expect_rc 2 "$K" list extra-argument
expect_rc 1 "$K" check "$tmp/no_such.spec"
grep -q 'no_such.spec: error: cannot read' "$tmp/err" || fail "missing file: no located error"
printf 'matrix3x3 A;\0\1garbage' >"$tmp/binary.spec"
expect_rc 1 "$K" check "$tmp/binary.spec"
expect_rc 1 "$K" list --library "$tmp"
: >"$tmp/empty.spec"
expect_rc 1 "$K" check "$tmp/empty.spec"
grep -q 'empty.spec:1:1: error: empty spec' "$tmp/err" || fail "empty spec message"

# --- one table of commands: each has its own help and rejects options that do not apply ---------
commands="check fusions plan list units bench report"
for c in $commands; do
  expect_rc 0 "$K" "$c" --help
  grep -q "^usage: kasgen $c" "$tmp/out" || fail "$c --help: no usage line"
  [ "$(grep -c '^usage:' "$tmp/out")" = 1 ] || fail "$c --help shows more than its own usage"
  cp "$tmp/out" "$tmp/help1"
  expect_rc 0 "$K" help "$c"
  cmp -s "$tmp/out" "$tmp/help1" || fail "kasgen help $c differs from kasgen $c --help"
done
expect_rc 0 "$K" --help
for c in $commands; do
  grep -q "^       kasgen $c" "$tmp/out" || fail "--help does not list $c"
done
expect_rc 0 "$K" help
grep -q '^usage: kasgen SPEC' "$tmp/out" || fail "kasgen help: no general usage"
expect_rc 2 "$K" help no-such-command
grep -q "no command 'no-such-command'" "$tmp/err" || fail "help of an unknown command"
# plan's help lists exactly its options, --out not among them (--n is: it drives the model)
expect_rc 0 "$K" plan --help
for opt in top max-fusion library db no-db dot explain n; do
  grep -q "^  --$opt " "$tmp/out" || fail "plan --help does not describe --$opt"
done
grep -q -- '--out' "$tmp/out" && fail "plan --help offers an option plan does not take"
# options that do not apply: usage error naming the option and the command, nothing run
expect_rc 2 "$K" fusions specs/stvenant.spec --top 3
grep -q "option --top does not apply to 'fusions'" "$tmp/err" || fail "fusions --top: message"
[ -s "$tmp/out" ] && fail "fusions --top printed results"
expect_rc 2 "$K" plan specs/stvenant.spec --out "$tmp/never"
grep -q "option --out does not apply to 'plan'" "$tmp/err" || fail "plan --out: message"
[ -e "$tmp/never" ] && fail "plan --out created its folder"
expect_rc 2 "$K" --top 3 check specs/stvenant.spec  # options may precede the command
grep -q "option --top does not apply to 'check'" "$tmp/err" || fail "check --top: message"
expect_rc 2 "$K" list --no-db
expect_rc 2 "$K" report "$tmp" --library library
expect_rc 2 "$K" units --explain 1
expect_rc 2 "$K" fusions specs/stvenant.spec --top=0
grep -q "invalid value '0' for --top" "$tmp/err" || fail "--top=0: message"
# values are plain decimals: no hex float, no leading space (as in the files kasgen reads)
expect_rc 2 "$K" plan specs/stvenant.spec --time-limit 0x10
grep -q "invalid value '0x10' for --time-limit" "$tmp/err" || fail "--time-limit 0x10: message"
expect_rc 2 "$K" plan specs/stvenant.spec --top " 3"
# a number out of range: the message says the range, and the range is the one enforced (its
# ends accepted, one past them refused)
# and plan --help says the same range under the option's help: "                  N: TAIL"
help_range() { # OPTION TAIL
  "$K" plan --help | awk -v opt="$1" -v tail="$2" '
    $1 == opt { arg = $2; next }
    arg != "" && /^                  [A-Z]+: / {
      found = $0 == sprintf("%18s%s: %s", "", arg, tail)
      exit
    }
    END { exit !found }' || fail "plan --help does not say '$2' for $1"
}
range_check() { # OPTION MAX MESSAGE_TAIL: MAX accepted by plan, MAX + 1 refused saying so
  local opt=$1 max=$2 tail=$3
  expect_rc 0 "$K" plan specs/synctest.spec --variants 0 "$opt" "$max"
  expect_rc 2 "$K" plan specs/synctest.spec "$opt" "$((max + 1))"
  grep -qxF "kasgen: error: invalid value '$((max + 1))' for $opt: $tail" "$tmp/err" ||
    fail "$opt $((max + 1)): message '$(cat "$tmp/err")'"
  help_range "$opt" "$tail"
}
range_check --top 100000 "an integer from 1 to 100000"
range_check --beam-width 1000 "an integer from 1 to 1000"
range_check --max-fusion 1024 "an integer from 1 to 1024 (the calls the DAG holds at most)"
expect_rc 0 "$K" plan specs/synctest.spec --variants 100000 --top 1
# --n 0 would predict for no elements and record n = 0 beside a harness defaulting to 4194304
expect_rc 2 "$K" plan specs/synctest.spec --n 0
grep -qxF "kasgen: error: invalid value '0' for --n: an integer from 1 to 1099511627776 (2^40)" \
  "$tmp/err" || fail "--n 0: message '$(cat "$tmp/err")'"
expect_rc 0 "$K" plan specs/synctest.spec --variants 0 --n 1
expect_rc 2 "$K" plan specs/synctest.spec --variants -1
grep -qF "invalid value '-1' for --variants: an integer from 0 to 100000" "$tmp/err" ||
  fail "--variants -1: message"
expect_rc 2 "$K" plan specs/synctest.spec --time-limit 1e9
grep -qxF "kasgen: error: invalid value '1e9' for --time-limit: seconds from 0 (no limit) to \
604800 (a week)" "$tmp/err" || fail "--time-limit 1e9: message '$(cat "$tmp/err")'"
help_range --time-limit "seconds from 0 (no limit) to 604800 (a week)"
expect_rc 0 "$K" plan specs/synctest.spec --time-limit 6.048e5
expect_rc 2 "$K" plan specs/synctest.spec --loops sometimes
grep -qF "invalid value 'sometimes' for --loops: model, keep, unroll or groups" "$tmp/err" ||
  fail "--loops sometimes: message"
# a repeated option takes its last value (kasgen(1), OPTIONS)
expect_rc 0 "$K" plan specs/stvenant.spec --variants 0 --top 5 --top 2
[ "$(wc -l <"$tmp/out")" = 2 ] || fail "--top 5 --top 2: $(wc -l <"$tmp/out") candidates"
expect_rc 0 "$K" plan specs/stvenant.spec --variants 0 --top 2 --top 5
[ "$(wc -l <"$tmp/out")" = 5 ] || fail "--top 2 --top 5: $(wc -l <"$tmp/out") candidates"
expect_rc 0 "$K" plan specs/stvenant.spec --top 1 --no-db --precision single --precision double
grep -q "1064 bytes per element" "$tmp/err" || fail "--precision single --precision double: single"

# --- --out is looked at before the search: a bad one fails at once, writing nothing ------------
: >"$tmp/a-file"
expect_rc 1 "$K" specs/stvenant.spec --out "$tmp/a-file"
grep -q "a-file/stvenant: error: cannot be created: .*a-file is not a folder" "$tmp/err" ||
  fail "--out FILE: message '$(head -1 "$tmp/err")'"
[ -s "$tmp/out" ] && fail "--out FILE: the ranking was printed before the error"
mkdir -p "$tmp/gen"
: >"$tmp/gen/stvenant"
expect_rc 1 "$K" specs/stvenant.spec --out "$tmp/gen"
grep -q "gen/stvenant: error: exists and is not a folder" "$tmp/err" || fail "--out: target file"
[ -s "$tmp/out" ] && fail "--out with a file target: the ranking was printed"
[ -f "$tmp/gen/stvenant" ] && [ ! -s "$tmp/gen/stvenant" ] || fail "the target file was touched"
expect_rc 1 "$K" units --out "$tmp/a-file/units"
grep -q "cannot be created: .*a-file is not a folder" "$tmp/err" || fail "units --out: message"
expect_rc 1 "$K" bench --out "$tmp/a-file"
grep -q "a-file: error: exists and is not a folder" "$tmp/err" || fail "bench --out: message"
[ ! -s "$tmp/a-file" ] || fail "bench wrote into the file"

# --- check on the seed specs ------------------------------------------------------------------
for s in specs/*.spec tests/specs/*.spec; do
  expect_rc 0 "$K" check "$s"
  grep -q ': ok: ' "$tmp/out" || fail "check $s: no summary"
  [ -s "$tmp/err" ] && fail "check $s: unexpected diagnostics: $(head -1 "$tmp/err")"
done
expect_rc 0 "$K" check specs/stvenant.spec
grep -q '^  mvmul33#0 -> svmul3#1  (vec3NodeStiff.0)$' "$tmp/out" || fail "stvenant edge missing"
grep -q '4 calls, 9 values, 5 inputs, 2 outputs, 3 edges' "$tmp/out" || fail "stvenant summary"
grep -Eq '^  vec3NodeStiff.1 +vector3 +from svmul3#1, read by ttmul411#2, returned$' "$tmp/out" ||
  fail "stvenant: value line of vec3NodeStiff.1"

# --- malformed specs: the first error is the one their first line names -----------------------
# A second line "// errors: N" also gives how many errors the spec has in all: where one
# mistake must not be followed by errors that are only its consequences.
nbad=0
for s in tests/bad_specs/*.spec; do
  want=$(sed -n '1s|^// expect: \([0-9]*:[0-9]*\): \(.*\)$|\1|p' "$s")
  msg=$(sed -n '1s|^// expect: \([0-9]*:[0-9]*\): \(.*\)$|\2|p' "$s")
  [ -n "$want" ] || { fail "$s has no expect line"; continue; }
  expect_rc 1 "$K" check "$s"
  first=$(grep -m1 ': error: ' "$tmp/err")
  case "$first" in
    "$s:$want: error: "*"$msg"*) nbad=$((nbad + 1)) ;;
    *) fail "$s: first error '$first', wanted '$s:$want: error: ...$msg'" ;;
  esac
  nwant=$(sed -n '2s|^// errors: \([0-9]*\)$|\1|p' "$s")
  nerr=$(grep -c ': error: ' "$tmp/err")
  [ -z "$nwant" ] || [ "$nerr" = "$nwant" ] ||
    fail "$s: $nerr errors, wanted $nwant: $(grep ': error: ' "$tmp/err" | sed -n 2p)"
done
[ "$nbad" -ge 20 ] || fail "only $nbad malformed specs checked"
# a number as an argument (a FEM user's material constant): the note says how to pass one
for s in real_argument integer_argument; do
  expect_rc 1 "$K" check "tests/bad_specs/$s.spec"
  grep -q "note: a spec has no constants: declare one as a variable and list it on the input \
line" "$tmp/err" || fail "$s: no note on constants"
done

# --- --dot ------------------------------------------------------------------------------------
expect_rc 0 "$K" check specs/bigfusion_full.spec --dot "$tmp/g.dot"
grep -q 'n4 \[shape=box, label="madd55#4"\]' "$tmp/g.dot" || fail "dot: madd55 node missing"
if command -v dot >/dev/null; then
  dot -Tsvg "$tmp/g.dot" -o "$tmp/g.svg" || fail "dot rejects the DAG file"
fi
expect_rc 1 "$K" check specs/synctest.spec --dot "$tmp/no/such/dir/g.dot"

# --- list -------------------------------------------------------------------------------------
expect_rc 0 "$K" list
for f in mmul33 mmul55 madd33 madd55 mvmul33 venorm3 smmul33 smmul55 svmul3 smimul33 \
         vvmulabs3 ttmul411 ttmul311 ttmul3212; do
  grep -q "^  $f(" "$tmp/out" || fail "list: no function $f"
done
grep -q '^  tensor3x3x3x3 *81 floats$' "$tmp/out" || fail "list: tensor3x3x3x3 size"

# --- fusions: the count equals a brute force over every subset --------------------------------
# From `check`: the number of calls and the edges "f#i -> g#j"; a subset is convex when no path
# leaves it and comes back (DFS from each outside successor).  Prints, for k = 1..n, the number
# of convex subsets of at most k nodes, one per line.
brute_counts() { # SPEC
  "$K" check "$1" | awk '
    /^calls:/ { in_calls = 1; next }
    /^edges:/ { in_calls = 0; next }
    in_calls && /^  [a-z0-9_]+#[0-9]+ / { n++ }
    / -> / { split($1, a, "#"); split($3, b, "#"); adj[a[2], b[2]] = 1 }
    function reaches(v, set,    w) {   # can v reach a member of set?
      if (seen[v]) return 0
      seen[v] = 1
      for (w = 0; w < n; w++)
        if ((v, w) in adj && (index(set, "," w ",") || reaches(w, set))) return 1
      return 0
    }
    END {
      for (m = 1; m < 2 ^ n; m++) {
        set = ","; size = 0
        for (i = 0; i < n; i++) if (int(m / 2 ^ i) % 2) { set = set i ","; size++ }
        ok = 1
        for (u = 0; u < n && ok; u++) {
          if (!index(set, "," u ",")) continue
          for (v = 0; v < n && ok; v++)
            if ((u, v) in adj && !index(set, "," v ",")) {
              delete seen
              if (reaches(v, set)) ok = 0
            }
        }
        by_size[size] += ok
      }
      for (k = 1; k <= n; k++) { total += by_size[k]; print total }
    }'
}
for s in specs/synctest.spec specs/stvenant.spec specs/stvenant_inner.spec specs/bigfusion.spec \
         specs/bigfusion_full.spec specs/chain12.spec; do
  brute_counts "$s" >"$tmp/brute"
  n=$(wc -l <"$tmp/brute")
  for k in 1 3 6; do
    expect_rc 0 "$K" fusions "$s" --max-fusion "$k"
    got=$(tail -1 "$tmp/out")
    want="$(sed -n "$((k < n ? k : n))p" "$tmp/brute") valid fusions"
    [ "$got" = "$want" ] || fail "fusions $s k=$k: '$got', brute force '$want'"
    lines=$(($(wc -l <"$tmp/out") - 1))
    [ "$lines ${got%% *}" = "$lines $lines" ] || fail "fusions $s: $lines lines for '$got'"
  done
done
expect_rc 0 "$K" fusions specs/synctest.spec
[ "$(tail -1 "$tmp/out")" = "10 valid fusions" ] || fail "synctest: 4+3+2+1 intervals expected"
grep -qx 'madd33#0 madd33#1 madd33#2 madd33#3' "$tmp/out" || fail "synctest: whole chain missing"

if ((fails)); then echo "$fails failure(s)"; exit 1; fi
echo "cli_front: all checks passed ($nbad malformed specs)"
