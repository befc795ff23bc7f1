#!/usr/bin/env bash
# report.sh — `kasgen report DIR` on results files as a GPU run writes them: the table and the
# figures (Spearman, gap, error) over the correct candidates, as tune counts them, the
# predicted best said WRONG when it is, never a NaN (names in UTF-8 as they are), the precision and
# layout the run's code was generated for ("not recorded" in older files), plot.png when
# gnuplot exists, and located errors
# (file:line:col) with exit 1 for every kind of malformed file in tests/fixtures/results/.  Also
# `kasgen report FILE` (the plot beside the file, a user's file of that name kept, no plot and a
# note where the folder is not writable, links and FIFOs refused) and `kasgen report -` (the
# table from the standard input, no plot).
set -eu
: "${KASGEN:?set KASGEN to the kasgen binary}"
fixtures=tests/fixtures/results
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# The report in $tmp/out with each sentence on one line: the figures' sentences are wrapped within
# 80 columns, each further line indented by two spaces.
joined() { awk 'NR > 1 && /^  [^ ]/ { sub(/^ +/, " "); printf "%s", $0; next }
  NR > 1 { print "" } { printf "%s", $0 } END { print "" }' "$tmp/out"; }
# every line within 80 columns, but the plot's path
narrow() { grep -v '^wrote ' "$tmp/out" | awk 'length($0) > 80 { print; exit 1 }'; }

# A good file: table rows (each candidate's figures, then its kernels on a line of their own, as
# the harness's table has them), ranks, WRONG flag, Spearman recomputed over the correct
# candidates (tune's rule: WRONG cand04 left out; times 0.10 0.12 0.13 vs 0.105 0.100 0.315 ->
# 0.500).
cp -r "$fixtures/good" "$tmp/good"
"$KASGEN" report "$tmp/good" >"$tmp/out" 2>"$tmp/err" || fail "good: exit $?"
# row NAME: the line after the figures of candidate NAME (its kernels)
row() { grep -A1 "^$1 " "$tmp/out" | sed -n 2p; }
grep -q '^cand01 .* 1 \+2$' "$tmp/out" &&
  [ "$(row cand01)" = '          mvmul33_1+svmul3_1 | ttmul411_2+ttmul3212_1' ] ||
  fail "good: cand01 row"
[ "$(row cand04)" = 'WRONG     mvmul33_1+svmul3_1+ttmul411_1 | ttmul3212_3' ] ||
  fail "good: wrong candidate not flagged"
grep -q '^unfused .* - \+-$' "$tmp/out" || fail "good: unfused row should be unranked"
joined | grep -q "Spearman rank correlation (predicted vs measured, 3 candidates; 1 WRONG left \
out): 0.500" || fail "good: Spearman"
# The harness's own figure (0.6000, over every ranked row, WRONG ones too) is no disagreement.
[ ! -s "$tmp/err" ] || { cat "$tmp/err" >&2; fail "good: diagnostics"; }
[ "$(grep -cE '^(cand|unfused)' "$tmp/out")" = 6 ] || fail "good: expected 5 rows and the header"
sed -n 3p "$tmp/out" | grep -qx '532 bytes/element compulsory, copy bandwidth 2950.0 GB/s' &&
  grep -qx 'the predicted best ran 5.0% slower than the measured best (within 5%)' "$tmp/out" ||
  fail "good: the run's figures or the predicted best's"
if command -v gnuplot >/dev/null; then
  [ -s "$tmp/good/plot.png" ] || fail "good: no plot.png"
  head -c 8 "$tmp/good/plot.png" | od -An -c | grep -q 'P   N   G' || fail "good: plot.png is not a PNG"
fi

# A WRONG candidate is never the measured best, nor the predicted best, in the figures (as tune
# counts them): the H200 stvenant run with its predicted and measured best, cand01, made WRONG.
# Before: "10 candidates: 0.624" and "the predicted best ran 0.0% slower" (the WRONG cand01).
mkdir "$tmp/wrong1"
sed '/name="cand01"/s/correct="1"/correct="0"/' "$fixtures/h200-stvenant/results.xml" \
  >"$tmp/wrong1/results.xml"
"$KASGEN" report "$tmp/wrong1" >"$tmp/out" 2>"$tmp/err" || fail "wrong1: exit $?"
joined | grep -qx "the predicted best, cand01, is WRONG: the figures below leave it out, as \
they leave out every WRONG candidate" || fail "wrong1: not said WRONG"
joined | grep -q 'predicted vs measured, 7 candidates; 1 WRONG left out): ' ||
  fail "wrong1: Spearman over the WRONG one: $(grep -A1 Spearman "$tmp/out")"
joined | grep -qx "the predicted best of the correct ones ran 0.0% slower than the measured best \
(within 5%)" || fail "wrong1: gap: $(grep -A2 'relative error' "$tmp/out")"
# those three sentences within 80 columns (109, 88 and 89 before)
narrow || fail "wrong1: a line longer than 80 columns"
# The element's measured best, cand09, WRONG: the gap is to cand06, the fastest correct one
# (0.516129 / 0.442459: 16.7%), not to cand09 (52.9% before).
mkdir "$tmp/wrong9"
sed '/name="cand09"/s/correct="1"/correct="0"/' "$fixtures/h200-stvenant_element/results.xml" \
  >"$tmp/wrong9/results.xml"
"$KASGEN" report "$tmp/wrong9" >"$tmp/out" 2>"$tmp/err" || fail "wrong9: exit $?"
grep -q '^the predicted best ran 16.7% slower than the measured best (NOT within 5%)$' \
  "$tmp/out" || fail "wrong9: gap: $(grep 'relative error' "$tmp/out")"
grep -q 'is WRONG' "$tmp/out" && fail "wrong9: the predicted best, cand01, said WRONG"
# Every ranked candidate WRONG: no figures, no NaN.
mkdir "$tmp/allwrong"
sed 's/correct="1"/correct="0"/' "$fixtures/h200-stvenant/results.xml" >"$tmp/allwrong/results.xml"
"$KASGEN" report "$tmp/allwrong" >"$tmp/out" 2>"$tmp/err" || fail "allwrong: exit $?"
joined | grep -qx "Spearman rank correlation: n/a (fewer than two correct ranked candidates; \
8 WRONG left out)" || fail "allwrong: Spearman line"
narrow || fail "allwrong: a line longer than 80 columns (91 before)"
grep -qiw 'nan%\?' "$tmp/out" && fail "allwrong: a NaN figure"

# Reversed order: -1; a trailing slash on DIR is fine.
cp -r "$fixtures/perfect" "$tmp/perfect"
"$KASGEN" report "$tmp/perfect/" >"$tmp/out" 2>&1 || fail "perfect: exit $?"
grep -q 'candidates): -1.000' "$tmp/out" || fail "perfect: Spearman should be -1"
grep -q 'on Test & GPU' "$tmp/out" || fail "perfect: XML entity in device name"

# Names in UTF-8 print as they are (octal escapes before: \303\234nterelement), a backslash still
# escaped so that no name shows an escape it does not hold; the plot is drawn with them.
mkdir "$tmp/utf8"
sed -e 's/spec="stvenant"/spec="Ünterelement"/' \
  -e 's/name="NVIDIA H100 80GB HBM3"/name="NVIDIA µGPU a\\b"/' \
  "$fixtures/good/results.xml" >"$tmp/utf8/results.xml"
"$KASGEN" report "$tmp/utf8" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err" >&2; fail "utf8: exit $?"; }
grep -qF 'Ünterelement on NVIDIA µGPU a\134b: n = 4194304' "$tmp/out" ||
  fail "utf8: header '$(head -1 "$tmp/out")'"
if command -v gnuplot >/dev/null; then
  head -c 8 "$tmp/utf8/plot.png" | od -An -c | grep -q 'P   N   G' || fail "utf8: no plot.png"
fi

# A real file, written by the generated harness of specs/stvenant.spec on an H200: the round trip.
cp -r "$fixtures/h200-stvenant" "$tmp/h200"
"$KASGEN" report "$tmp/h200" >"$tmp/out" 2>"$tmp/err" || fail "h200: exit $?"
grep -qx 'stvenant on NVIDIA H200: n = 4194304' "$tmp/out" &&
  grep -q '^532 bytes/element compulsory' "$tmp/out" || fail "h200: header"
# written before the harness recorded the precision and layout: the header says so, guessing none
grep -qx 'precision not recorded, layout not recorded (the file of an older harness)' "$tmp/out" ||
  fail "h200: precision and layout not said to be unrecorded"
grep -q 'candidates): 0.976' "$tmp/out" || fail "h200: Spearman"
[ ! -s "$tmp/err" ] || { cat "$tmp/err" >&2; fail "h200: diagnostics on a harness-written file"; }

# The element of 128 calls, measured on an H200 (session 42): each row's kernels shortened to a
# line (1500 characters before), the last call and the count kept; every line within 80 columns
# (159 before: the kernels followed the figures), but the path of the plot written.
cp -r "$fixtures/h200-stvenant_element" "$tmp/element"
"$KASGEN" report "$tmp/element" >"$tmp/out" 2>"$tmp/err" || fail "element: exit $?"
narrow || fail "element: a line longer than 80 columns"
row cand10 | grep -qx ' *mvmul33_1+svmul3_1+.*+...+madd33_3 (128 calls)' || fail "element: cand10"
row cand09 | grep -q '+...+madd33_1 (32 calls; N = 0..3 in 4 groups)$' || fail "element: groups"
row unfused | grep -q ' | ... | madd33_1 (128 kernels)$' || fail "element: unfused"
grep -q 'candidates): -0.430' "$tmp/out" || fail "element: Spearman"
# its <run> says the precision but not the layout (the harness of session 42); the header says
# what it recorded, as a file that records both does (not said before)
sed -n 2p "$tmp/out" |
  grep -qx 'precision single, layout not recorded (the file of an older harness)' ||
  fail "element: header's precision and layout '$(sed -n 2p "$tmp/out")'"
mkdir "$tmp/recorded"
sed 's/ precision="single" / precision="double" layout="component,vec3DPhi=element" /' \
  "$fixtures/h200-stvenant_element/results.xml" >"$tmp/recorded/results.xml"
"$KASGEN" report "$tmp/recorded" >"$tmp/out" 2>"$tmp/err" || fail "recorded: exit $?"
sed -n 2p "$tmp/out" | grep -qx 'precision double, layout component,vec3DPhi=element' ||
  fail "recorded: header's precision and layout '$(sed -n 2p "$tmp/out")'"

# A file whose stored Spearman disagrees with its ranks: the recomputed value wins, with a warning.
mkdir "$tmp/liar"
sed 's/<spearman value="0.6000"/<spearman value="0.9"/' "$fixtures/good/results.xml" >"$tmp/liar/results.xml"
"$KASGEN" report "$tmp/liar" >"$tmp/out" 2>"$tmp/err" || fail "liar: exit $?"
joined | grep -q 'candidates; 1 WRONG left out): 0.500' || fail "liar: recomputed Spearman"
grep -q 'warning: the file says Spearman 0.9000' "$tmp/err" || fail "liar: no warning"

# Malformed files: exit 1, error located at the right line and column (an attribute's value, or
# the start of the element lacking one), no crash, no plot.
expect_error() { # dir line:column message
  local d=$1 line=$2 msg=$3 rc=0
  cp -r "$fixtures/$d" "$tmp/$d"
  "$KASGEN" report "$tmp/$d" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" = 1 ] || fail "$d: exit $rc, expected 1"
  grep -q "$tmp/$d/results.xml:$line: error: .*$msg" "$tmp/err" || { cat "$tmp/err" >&2; fail "$d: message"; }
  [ ! -e "$tmp/$d/plot.png" ] || fail "$d: plot drawn from a bad file"
}
expect_error malformed 6:1 'not well-formed XML'
expect_error missing-attr 6:3 'lacks the attribute measured-ns'
expect_error bad-number 7:140 'melem-s="5000x" of <candidate> is not a number'
expect_error duplicate-rank 8:211 'predicted-rank 2 appears twice'
expect_error unknown-element 9:3 'unknown element <kandidate>'
expect_error no-candidate 3:1 'has no <candidate>'
#    Values no run gives, as a hand edit makes them (before: read, and shown as "meas 0.0000",
#    "copy bandwidth 0.0 GB/s"): copy-gbs 0, n 0, measured-ns 0 on a correct candidate.
edited_error() { # name, sed script, line:column, message
  mkdir "$tmp/$1" && sed "$2" "$fixtures/good/results.xml" >"$tmp/$1/results.xml"
  local rc=0
  "$KASGEN" report "$tmp/$1" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" = 1 ] && grep -q "$tmp/$1/results.xml:$3: error: $4" "$tmp/err" ||
    { cat "$tmp/err" >&2; fail "$1: exit $rc, or message"; }
}
edited_error copy0 's/copy-gbs="2950.00"/copy-gbs="0"/' 4:50 'copy-gbs of <device> is not positive'
edited_error n0 '5s/ n="4194304"/ n="0"/' 5:11 'n="0" of <run> is not an integer in \[1, '
edited_error measured0 '6s/measured-ns="0.21"/measured-ns="0"/' '6:[0-9]*' \
  'measured-ns of a correct <candidate> is 0'

# No results file at all: a clear error, exit 1.
mkdir "$tmp/empty"
rc=0; "$KASGEN" report "$tmp/empty" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "empty: exit $rc"
grep -q "results.xml.*error: cannot read" "$tmp/err" || fail "empty: message"
# --- report FILE: the same table; the plot beside the file -----------------------------------------
is_png() { head -c 8 "$1" | od -An -c | grep -q 'P   N   G'; }
"$KASGEN" report "$tmp/good" >"$tmp/want" 2>/dev/null || fail "good again: exit $?"
mkdir "$tmp/files"
cp "$fixtures/good/results.xml" "$tmp/files/h100-run1.xml"
"$KASGEN" report "$tmp/files/h100-run1.xml" >"$tmp/out" 2>"$tmp/err" || fail "FILE: exit $?"
[ ! -s "$tmp/err" ] || { cat "$tmp/err" >&2; fail "FILE: diagnostics"; }
diff <(grep -v '^wrote \|^gnuplot' "$tmp/want") <(grep -v '^wrote \|^gnuplot' "$tmp/out") >/dev/null ||
  fail "FILE: the table differs from the folder's"
if command -v gnuplot >/dev/null; then
  [ "$(tail -1 "$tmp/out")" = "wrote $tmp/files/h100-run1.png" ] || fail "FILE: last line '$(tail -1 "$tmp/out")'"
  is_png "$tmp/files/h100-run1.png" || fail "FILE: no PNG beside the file"
  # results.xml given as a file draws plot.png, as its folder's report does.
  "$KASGEN" report "$tmp/good/results.xml" >"$tmp/out" 2>&1 || fail "results.xml as a FILE: exit $?"
  [ "$(tail -1 "$tmp/out")" = "wrote $tmp/good/plot.png" ] || fail "results.xml as a FILE: '$(tail -1 "$tmp/out")'"
  # A name without .xml gets .png added; one in the working folder is named without ./
  cp "$fixtures/good/results.xml" "$tmp/files/run2"
  (cd "$tmp/files" && "$KASGEN" report run2 >"$tmp/out" 2>&1) || fail "FILE run2: exit $?"
  [ "$(tail -1 "$tmp/out")" = "wrote run2.png" ] || fail "FILE run2: '$(tail -1 "$tmp/out")'"
  is_png "$tmp/files/run2.png" || fail "FILE run2: no run2.png"
  # A second report replaces its own earlier plot.
  "$KASGEN" report "$tmp/files/h100-run1.xml" >/dev/null 2>&1 || fail "FILE again: exit $?"
fi
# A user's file where the plot would go is kept: exit 1, the table printed, the file unchanged.
cp "$fixtures/good/results.xml" "$tmp/files/notes.xml"
echo "my notes" >"$tmp/files/notes.png"
rc=0; "$KASGEN" report "$tmp/files/notes.xml" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "notes.png in the way: exit $rc"
grep -q "notes.png: error: exists and is not a PNG image: not replaced" "$tmp/err" || fail "notes.png: message"
[ "$(cat "$tmp/files/notes.png")" = "my notes" ] || fail "notes.png was overwritten"
joined | grep -q 'left out): 0.500' || fail "notes.png in the way: no table"
ls "$tmp/files" | grep -q kasgen-tmp && fail "a temporary file was left behind"
# A link or a FIFO as the results file is refused; a missing one is named.
ln -s "$tmp/files/h100-run1.xml" "$tmp/files/link.xml"
rc=0; "$KASGEN" report "$tmp/files/link.xml" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "link: exit $rc"
grep -q "link.xml: error: cannot read: a symbolic link" "$tmp/err" || fail "link: message"
mkfifo "$tmp/files/fifo.xml"
rc=0; timeout 20 "$KASGEN" report "$tmp/files/fifo.xml" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "FIFO: exit $rc"
grep -q "fifo.xml: error: cannot read: it is a FIFO" "$tmp/err" || fail "FIFO: message"
rc=0; "$KASGEN" report "$tmp/files/none.xml" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "missing FILE: exit $rc"
grep -q "none.xml: error: cannot open: No such file or directory" "$tmp/err" || fail "missing FILE: message"
# A malformed file: located errors, as for a folder.
cp "$fixtures/bad-number/results.xml" "$tmp/files/bad.xml"
rc=0; "$KASGEN" report "$tmp/files/bad.xml" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "bad FILE: exit $rc"
grep -q "bad.xml:7:140: error: melem-s=\"5000x\"" "$tmp/err" || fail "bad FILE: message"
[ ! -e "$tmp/files/bad.png" ] || fail "bad FILE: a plot was drawn"

# --- a folder kasgen may not write in: the table, a note, no plot, exit 0 ----------------------------
# As root every folder is writable, so the report runs as nobody there (setpriv).
mkdir -m 755 "$tmp/ro" && cp "$fixtures/good/results.xml" "$tmp/ro/run.xml" && chmod 644 "$tmp/ro/run.xml"
chmod 755 "$tmp"
as_user=()
if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null && as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
else
  chmod 555 "$tmp/ro"
fi
if [ "$(id -u)" != 0 ] || [ ${#as_user[@]} -gt 0 ]; then
  for target in "$tmp/ro/run.xml" "$tmp/ro"; do
    [ "$target" = "$tmp/ro" ] && cp "$tmp/ro/run.xml" "$tmp/ro/results.xml" 2>/dev/null
    rc=0; "${as_user[@]}" "$KASGEN" report "$target" >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ "$rc" = 0 ] || { cat "$tmp/err" >&2; fail "read-only folder ($target): exit $rc"; }
    grep -q "^$tmp/ro: note: cannot write in this folder (Permission denied): no plot drawn$" "$tmp/err" ||
      fail "read-only folder ($target): note '$(cat "$tmp/err")'"
    joined | grep -q 'left out): 0.500' || fail "read-only folder ($target): no table"
  done
  [ -z "$(ls "$tmp/ro" | grep -v '\.xml$')" ] || fail "something was written in the read-only folder"
else
  echo "report: read-only folder not checked (root without setpriv)"
fi
chmod 755 "$tmp/ro"

# --- report -: the table from the standard input, nothing written ----------------------------------
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && "$KASGEN" report - >"$tmp/out" 2>"$tmp/err") <"$fixtures/good/results.xml" ||
  fail "report -: exit $?"
[ ! -s "$tmp/err" ] || { cat "$tmp/err" >&2; fail "report -: diagnostics"; }
diff <(grep -v '^wrote \|^gnuplot' "$tmp/want") "$tmp/out" >/dev/null || fail "report -: not exactly the table"
[ -z "$(ls -A "$tmp/cwd")" ] || fail "report - wrote $(ls -A "$tmp/cwd")"
rc=0; "$KASGEN" report - <"$fixtures/duplicate-rank/results.xml" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "report - of a bad file: exit $rc"
grep -q "^<stdin>:8:211: error: predicted-rank 2 appears twice" "$tmp/err" || fail "report - of a bad file: message"
# --- a regenerated folder keeps results.xml: the note at generation, the warning in report -------
# Before, report printed an earlier run's precision and rows as the folder's, silently.
gen="$tmp/regen/stvenant"
"$KASGEN" specs/stvenant.spec --no-db --top 3 --out "$tmp/regen" >/dev/null 2>"$tmp/err" ||
  fail "regen: generation: exit $?"
grep -q "results.xml: note: kept" "$tmp/err" && fail "regen: a note with no results.xml"
digest=$(sed -n 's/^     "\([0-9a-f]\{16\}\)",$/\1/p' "$gen/common/kas_candidates.h" | head -1)
[ -n "$digest" ] || fail "regen: no code digest in kas_candidates.h"
# every ranked row of this code: no warning
sed "s/<candidate /<candidate code=\"$digest\" /" "$fixtures/good/results.xml" >"$gen/results.xml"
"$KASGEN" report "$gen" >"$tmp/out" 2>"$tmp/err" || fail "regen: report: exit $?"
grep -q "previous generation" "$tmp/err" && fail "regen: warned about the folder's own code"
# rows of other code, then the folder regenerated in double precision over them
sed 's/<candidate /<candidate code="0123456789abcdef" /; s/<run /<run precision="single" /' \
  "$fixtures/good/results.xml" >"$gen/results.xml"
cp "$gen/results.xml" "$tmp/kept.xml"
"$KASGEN" report "$gen" >"$tmp/out" 2>"$tmp/err" || fail "regen: report of other code: exit $?"
grep -q "warning: these results are of a previous generation, not of the code the folder holds \
now; 4 of their 4 ranked candidates' code digests are none of the folder's candidates' now" \
  "$tmp/err" || fail "regen: other code: $(cat "$tmp/err")"
"$KASGEN" specs/stvenant.spec --no-db --top 3 --precision double --out "$tmp/regen" \
  >/dev/null 2>"$tmp/err" || fail "regen: double: exit $?"
grep -q "^$gen/results.xml: note: kept from a run before this generation" "$tmp/err" ||
  fail "regen: no note of the kept results.xml: $(cat "$tmp/err")"
cmp -s "$gen/results.xml" "$tmp/kept.xml" || fail "regen: results.xml changed"
"$KASGEN" report "$gen" >"$tmp/out" 2>"$tmp/err" || fail "regen: report after double: exit $?"
grep -q "they measured single-precision code, the folder holds double" "$tmp/err" ||
  fail "regen: precision not said: $(cat "$tmp/err")"
# --- a run at another n than its predictions' (before: judged silently, 95% "error") -----------
sed 's/<run n="4194304"/<run n="4096"/' "$fixtures/good/results.xml" >"$tmp/n4096.xml"
"$KASGEN" report "$tmp/n4096.xml" >"$tmp/out" 2>"$tmp/err" || fail "n4096: exit $?"
grep -q "n4096.xml: note: this run is at n = 4096; its predictions are for the n its folder was \
generated at, which a results file does not record (4194304 unless --n was given)" "$tmp/err" ||
  fail "n4096: no note: $(cat "$tmp/err")"
cp "$fixtures/good/results.xml" "$tmp/n4194304.xml" # its plot is drawn beside it
"$KASGEN" report "$tmp/n4194304.xml" >"$tmp/out" 2>"$tmp/err" || fail "good: exit $?"
grep -q "this run is at n" "$tmp/err" && fail "good: a note on n at the default n"
# in a folder, the n its header says its predictions are for
sed 's/ n="4194304"/ n="4096"/' "$tmp/kept.xml" >"$gen/results.xml"
"$KASGEN" report "$gen" >"$tmp/out" 2>"$tmp/err" || fail "n4096 in a folder: exit $?"
grep -q "note: this run is at n = 4096, but the predictions are for n = 4194304 (the folder's \
generation)" "$tmp/err" || fail "n4096 in a folder: no note: $(cat "$tmp/err")"
echo "report: all checks passed"
