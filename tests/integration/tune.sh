#!/usr/bin/env bash
# tune.sh — `kasgen tune DIR` and `kasgen calibrate DIR` on results files written by this test
# (synthetic measurements of a real generated folder), and ptxas's register counts:
#   - a measured best faster than the predicted best by more than the spread is shipped: the
#     embed wraps it (its symbols, the reason in the header);
#   - one faster by less than the spread of the rounds keeps the predicted best;
#   - bad results files (a bad number, a hex float or leading space, an absurd time or rank, a
#     newline in a name, a precision or layout the command line would refuse, kernels the search
#     no longer gives, another spec's results, nothing correct, no file) get
#     located errors and exit 1, and leave the embed as it was; a time of 0 is never the
#     measured best; an index.txt naming "-" is not read from stdin, one that is a FIFO is
#     refused once;
#   - calibrate neither follows nor replaces a link planted at its store's temporary name, reads
#     no results file through a link or a spec named by a path, and no store with --db -;
#   - calibrate --held-out says when no run could be held out (one spec's runs alone);
#   - calibrate fits and stores constants beside a copy of the database; tune then predicts with
#     them; a malformed store (a constant out of range or a hex float, another version or none,
#     two <calibration>s) is a located error; calibrate sets a store out of range aside and
#     replaces it, stores no fit out of range, and warns of a run under 50 us per launch (the
#     H200's stvenant at n = 4096, which fitted barrier-scale 296); a run, or a store's run,
#     measured on another GPU than the database's is refused by calibrate and warned of by tune;
#     --held-out judges each spec by the other's fit and stores nothing;
#   - with nvcc, the main job with --ptxas reads registers from ptxas and a rerun compiles
#     nothing (cache); without --ptxas nvcc is never run; an nvcc that hangs is stopped at what
#     --time-limit left (tune: the one the folder's generation.ini records; the default is not
#     recorded);
#   - a kernel of groups of threads (threads.c) measured best ships too;
#   - rows of a run the search now ranks otherwise are found by their kernels and calls, or in
#     older files by their kernels and predictions;
#   - a block shape of the #1 (--variants) measured best ships, tune reading K from index.txt;
#     a row whose block shapes or code are another rank's is not taken for its rank's candidate;
#   - calibrate finds the rows of a run generated with a calibration by searching with it;
#   - a folder's generation.ini: tune and calibrate search again with the options it records
#     (precision, layout, database, n), an option on the command line winning; a bad record is
#     a located error (exit 1), a --layout given that names no argument of the spec bad usage
#     (exit 2);
#   - a results file says what its code was generated for (<run precision= layout=>, from
#     kas_candidates.h): one copied out of its folder is searched so (calibrate finds every row
#     of a double-precision component-major run), and so is a folder without generation.ini;
#     a run of other code than the search's (an option given, or generation.ini) is an error
#     at the file's attribute naming both;
#   - the table fits 80 columns: the element's rows with their kernels on lines of their own, a
#     one-call spec's on one line each;
#   - a folder carries its spec's text (<spec>.spec): tune and calibrate search with it, without
#     --spec, for a folder generated from the standard input, named by --name, or whose spec
#     moved; a spec edited since gets one note and the copy is searched (--spec FILE wins); a
#     folder without the copy is searched as before; a copy missing, a FIFO, a folder, a link or
#     malformed is an error naming it.
set -eu
: "${KASGEN:?set KASGEN to the kasgen binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# The choice's sentence in tune's output FILE on one line: it is wrapped within 80 columns, each
# further line indented by two spaces.
choice_in() {
  awk '/^choice: / {
    c = $0
    while ((getline l) > 0 && l ~ /^  [^ ]/) { sub(/^ +/, "", l); c = c " " l }
    print c; exit }' "$1"
}
export KASGEN_CACHE="$tmp/cache"
db="$tmp/db.xml"
cp benchmarks/nvidia-h100-80gb-hbm3.xml "$db"
dir="$tmp/gen/synctest"
"$KASGEN" specs/synctest.spec --top 4 --db "$db" --out "$tmp/gen" >/dev/null

# results.xml with measured times (ns per element) and round spreads for cand01..cand04, in the
# harness's format; the kernels come from the folder's own index.txt.
gpu="NVIDIA H100 80GB HBM3" # the GPU of the database copies: calibrate refuses another's runs
results_head() { # spec, bytes per element
  echo '<?xml version="1.0" encoding="UTF-8"?>'
  echo "<kasgen-results version=\"1\" spec=\"$1\">"
  echo "  <device name=\"$gpu\" copy-gbs=\"3000\"/>"
  echo "  <run n=\"4194304\" reps=\"30\" rounds=\"5\" input-copies=\"2\"" \
    "bytes-per-element=\"$2\"${run_attrs:-}/>"
}
# run_attrs=' precision="..." layout="..."' before write_results: what <run> says the code was
# generated for, as the harness writes it (absent from older files).
write_results() { # file, then per candidate "measured min max correct"
  local f=$1; shift
  {
    results_head synctest 72
    local rank=1
    for m in "$@"; do
      set -- $m
      local kernels pred
      kernels=$(awk -v r="$rank" '$1 == r { for (i = 5; i <= NF; i++) printf "%s%s", $i, i < NF ? " " : ""; exit }' "$dir/index.txt")
      pred=$(awk -v r="$rank" '$1 == r { print $3; exit }' "$dir/index.txt")
      echo "  <candidate name=\"cand0$rank\" kernels=\"$kernels\" nkernels=\"1\" predicted-ns=\"$pred\" measured-ns=\"$1\" melem-s=\"1\" compulsory-gbs=\"1\" copy-percent=\"1\" predicted-rank=\"$rank\" measured-rank=\"$rank\" correct=\"$4\" error=\"1e-8\" round-min-ns=\"$2\" round-max-ns=\"$3\"/>"
      rank=$((rank + 1))
    done
    echo '</kasgen-results>'
  } >"$f"
}
header="$dir/embed/kas_synctest.h"
source="$dir/embed/kas_synctest.cu"

# 1. cand03 measured 10% faster than cand01, spreads 1%: cand03 ships.
write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1" \
  "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
"$KASGEN" tune "$dir" --db "$db" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "tune: exit $?"; }
grep -q '^   1    1  cand01 ' "$tmp/out" || fail "side-by-side table: cand01 row"
grep -q '^as generated: spearman ' "$tmp/out" || fail "figures"
grep -q "Chosen by kasgen tune: cand03 measured best on $gpu" "$header" || fail "header: choice"
grep -q 'kas_synctest_cand03_launch' "$source" || fail "embed does not wrap cand03"
grep -q '^Embedding: .* wrap cand03 (chosen by kasgen tune' "$dir/index.txt" ||
  fail "index.txt does not name the shipped candidate"
! grep -q 'kas_synctest_cand01_' "$source" || fail "embed still wraps cand01"
[ -f "$dir/results.xml" ] || fail "results.xml removed"
[ -f "$dir/cand01/kernels.cu" ] || fail "candidates removed"
awk 'length > 100 { exit 1 }' "$header" || fail "header lines over 100 columns"

# 2. cand02 faster than cand01 by 0.0005, within cand02's spread of 0.002: cand01 stays.
write_results "$dir/results.xml" "0.0300 0.0299 0.0301 1" "0.0295 0.0285 0.0305 1" \
  "0.040 0.0399 0.0401 1" "0.041 0.0409 0.0411 1"
"$KASGEN" tune "$dir" --db "$db" >"$tmp/out" 2>&1 || fail "tune (noise): exit $?"
choice_in "$tmp/out" |
  grep -q '^choice: cand02 .*within the run-to-run spread (0.0020 ns): the predicted best stays' ||
  fail "noise: the predicted best should stay"
grep -q 'Chosen by kasgen tune: cand02 measured 0.0295' "$header" || fail "noise: header"
grep -q 'kas_synctest_cand01_launch' "$source" || fail "noise: embed does not wrap cand01"

# 3. The predicted best is wrong: the measured best ships even within the spread.
write_results "$dir/results.xml" "0.0300 0.0299 0.0301 0" "0.0301 0.0285 0.0305 1" \
  "0.040 0.0399 0.0401 1" "0.041 0.0409 0.0411 1"
"$KASGEN" tune "$dir" --db "$db" >"$tmp/out" 2>&1 || fail "tune (wrong): exit $?"
grep -q 'kas_synctest_cand02_launch' "$source" || fail "wrong: embed does not wrap cand02"
#    said so, with no "faster" against the WRONG one's time (before: "(-0.3% faster, and the
#    predicted best is WRONG")
choice_in "$tmp/out" | grep -q "^choice: cand02 measured best on .* (0.0301 ns per element); \
the predicted best cand01 is WRONG.$" ||
  { grep -A2 choice "$tmp/out"; fail "wrong: the choice's words"; }
#    --variants K other than the folder's is bad usage: the run's candidates are the folder's
#    K's (before: accepted, then "the search no longer gives"); the folder's own K is fine
rc=0; "$KASGEN" tune "$dir" --db "$db" --variants 3 >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q 'error: --variants 3: .*synctest was generated with --variants 5' \
  "$tmp/err" || { cat "$tmp/err" >&2; fail "--variants: exit $rc"; }
grep -q 'kas_synctest_cand02_launch' "$source" || fail "--variants: the embed changed"
cp "$source" "$tmp/source.before"

# 4. Bad files: located errors, exit 1, the embed untouched.
expect_error() { # what, message
  local rc=0
  "$KASGEN" tune "$dir" --db "$db" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" = 1 ] || fail "$1: exit $rc, expected 1"
  grep -q "$2" "$tmp/err" || { cat "$tmp/err" >&2; fail "$1: message"; }
  cmp -s "$source" "$tmp/source.before" || fail "$1: the embed changed"
}
sed -i 's/measured-ns="0.040"/measured-ns="0.04x"/' "$dir/results.xml"
expect_error "bad number" 'results.xml:7:.*error: measured-ns="0.04x" of <candidate> is not a number'
#    What strtod takes besides plain decimals is no number: a hex float, a leading space.
sed -i 's/measured-ns="0.04x"/measured-ns="0x1p-5"/' "$dir/results.xml"
expect_error "hex float" \
  'results.xml:7:.*error: measured-ns="0x1p-5" of <candidate> is not a number'
sed -i 's/measured-ns="0x1p-5"/measured-ns=" 0.04"/' "$dir/results.xml"
expect_error "leading space" \
  'results.xml:7:.*error: measured-ns=" 0.04" of <candidate> is not a number'
#    A plain decimal beyond a double's range is that, not "not a number" (before).
sed -i 's/measured-ns=" 0.04"/measured-ns="1e400"/' "$dir/results.xml"
expect_error "1e400" 'results.xml:7:.*error: measured-ns="1e400" of <candidate> is out of range'
write_results "$dir/results.xml" "0.030 0.0299 0.0302 0" "0.031 0.0309 0.0312 0" \
  "0.027 0.0269 0.0271 0" "0.032 0.0319 0.0322 0"
expect_error "nothing correct" 'results.xml: error: no ranked candidate of this run is correct'
grep -qiw 'nan%\?' "$tmp/out" && fail "nothing correct: NaN figures: $(grep -i spearman "$tmp/out")"
grep -q '^as generated: no figures (no correct candidate measured)$' "$tmp/out" ||
  fail "nothing correct: the figures' line"
write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1" \
  "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
# cand03 (line 7) measured with another implementation of its first call than the search gives
sed -i -E '7{/kernels="madd33_1/{s/kernels="madd33_1/kernels="madd33_3/;b};s/kernels="madd33_[0-9]+/kernels="madd33_1/}' \
  "$dir/results.xml"
expect_error "other kernels" 'results.xml:7:.*error: the search no longer gives the candidate measured as cand03'
grep -q 'changed since the run was generated' "$tmp/err" && ! grep -q '\<DIR\>' "$tmp/err" ||
  fail "other kernels: the message names a literal DIR"
#    Another spec's results copied into the folder: that is the error, at the file's spec
#    attribute, not "the search no longer gives" followed by a warning (before).
cp "$dir/results.xml" "$tmp/results.synctest"
sed -i 's/spec="synctest"/spec="stvenant_element"/' "$dir/results.xml"
expect_error "other spec" \
  "results.xml:2:[0-9]*: error: the results are of spec 'stvenant_element', but the spec searched is 'synctest'"
grep -q 'no longer gives' "$tmp/err" && fail "other spec: the search's error too"
#    report warns of it too (before: the other spec's table, silently)
"$KASGEN" report "$dir" >/dev/null 2>"$tmp/err" || fail "other spec: report exit $?"
grep -q "results.xml:2:[0-9]*: warning: the results are of spec 'stvenant_element', but the folder's index.txt names spec 'synctest'" \
  "$tmp/err" || { cat "$tmp/err" >&2; fail "other spec: report does not warn"; }
rm -f "$dir/plot.png"
cp "$tmp/results.synctest" "$dir/results.xml"
sed -i 's/round-min-ns="0.0309"/round-min-ns="0.04"/' "$dir/results.xml"
expect_error "min above max" 'results.xml:6:.*error: round-min-ns is larger than round-max-ns'
#    A newline in the GPU's name (the table's head and the choice print it): refused at its line.
write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1" \
  "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
sed -i 's/<device name="/<device name="forged\&#10;/' "$dir/results.xml"
expect_error "newline in a name" \
  'results.xml:3:.*error: the attribute name of <device> holds a control character'
write_results "$dir/results.xml" "1e-300 1e-300 1e-300 1" "0.031 0.0309 0.0312 1" \
  "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
expect_error "absurd time" 'results.xml:5:.*error: measured-ns of <candidate> is outside 0 and \[1e-6, 1e6\]'
#    What the code was generated for, in the command line's words only: else an error at the
#    value's column (before, the precision was not read, and tune went on).
run_attrs=' precision="half"' write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" \
  "0.031 0.0309 0.0312 1" "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
expect_error "bad precision" \
  'results.xml:4:92: error: precision="half" of <run> is neither single nor double'
run_attrs=' layout="component,rows"' write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" \
  "0.031 0.0309 0.0312 1" "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
expect_error "bad layout" \
  "results.xml:4:89: error: layout=\"component,rows\" of <run>: 'rows' is not element, component"
write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1" \
  "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
sed -i '5s/predicted-rank="1"/predicted-rank="2147483647"/' "$dir/results.xml"
expect_error "rank beyond --top" 'results.xml: error: a candidate ranked 2147483647: more than the 100000'
#    A folder written before the spec's copy (no synctest.spec, no "Spec copy:" line in
#    index.txt) is searched with the spec index.txt's first line names, as before; the checks up
#    to --spec FILE are of such folders (a tune that succeeds writes the copy: old_style again).
#    index.txt naming the standard input as its spec ("-") is not read from it.
write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1" \
  "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
grep -q '^Spec copy: synctest.spec, ' "$dir/index.txt" && cmp -s specs/synctest.spec "$dir/synctest.spec" ||
  fail "the folder has no copy of its spec, or index.txt does not say so"
cp "$dir/index.txt" "$tmp/index.before"
old_style() { sed -i '/^Spec copy: /d' "$dir/index.txt" && rm -f "$dir/synctest.spec"; }
old_style
sed -i '1s/ ([^)]*), / (-), /' "$dir/index.txt"
rc=0
sleep 30 | timeout 20 "$KASGEN" tune "$dir" --db "$db" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'index.txt:1:.*error: cannot tell the spec from this line' "$tmp/err" ||
  { cat "$tmp/err"; fail "index.txt naming -: exit $rc"; }
cp "$tmp/index.before" "$dir/index.txt"
old_style
#    index.txt records the spec's absolute path: tune runs from any folder (before: the path as
#    given, specs/synctest.spec, "cannot read" elsewhere).
(cd "$tmp" && "$KASGEN" tune "$dir" --db "$db" >/dev/null 2>"$tmp/err") ||
  { cat "$tmp/err"; fail "tune from another folder: exit $?"; }
#    A spec that cannot be read (a relative path of an older folder, from elsewhere) or that came
#    from the standard input: said at index.txt's line, with a note naming --spec FILE.
old_style
sed -i '1s/ ([^)]*), / (specs\/synctest.spec), /' "$dir/index.txt"
rc=0; (cd "$tmp" && "$KASGEN" tune "$dir" --db "$db" >/dev/null 2>"$tmp/err") || rc=$?
[ "$rc" = 1 ] && grep -q 'index.txt:1: error: .* was generated from the spec specs/synctest.spec, which cannot be read' "$tmp/err" &&
  grep -q 'note: name the spec .* was generated from with --spec FILE' "$tmp/err" ||
  { cat "$tmp/err"; fail "a spec that cannot be read: exit $rc"; }
sed -i '1s/ ([^)]*), / (<stdin>), /' "$dir/index.txt"
rc=0; "$KASGEN" tune "$dir" --db "$db" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'index.txt:1: error: .* was generated from the standard input: its spec is not on disk' "$tmp/err" &&
  grep -q 'note: name the spec .* with --spec FILE' "$tmp/err" ||
  { cat "$tmp/err"; fail "a spec from the standard input: exit $rc"; }
"$KASGEN" tune "$dir" --db "$db" --spec specs/synctest.spec >/dev/null 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "--spec FILE: exit $?"; }
cp "$tmp/index.before" "$dir/index.txt"
cp "$source" "$tmp/source.before" # shipped anew by the runs above: the errors below keep it
#    A renamed copy of the folder (synctest-h100/ beside synctest/) is written again: its
#    index.txt names the spec (before: "must be named synctest", after the whole table).  One
#    whose index.txt names another spec is refused before the table, and left as it was.
cp -r "$dir" "$tmp/synctest-h100"
"$KASGEN" tune "$tmp/synctest-h100" --db "$db" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "renamed folder: exit $?"; }
grep -q "^wrote $tmp/synctest-h100/embed/ around cand03" "$tmp/out" ||
  fail "renamed folder: not written"
sed -i '1s/: spec synctest /: spec other /' "$tmp/synctest-h100/index.txt"
cp -r "$tmp/synctest-h100" "$tmp/renamed.before"
rc=0; "$KASGEN" tune "$tmp/synctest-h100" --db "$db" --spec specs/synctest.spec \
  >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'synctest-h100: error: not written again: .* does not name spec synctest' \
  "$tmp/err" || { cat "$tmp/err"; fail "another spec's folder: exit $rc"; }
grep -q '^choice:\|^ *1 ' "$tmp/out" && fail "another spec's folder: the table printed first"
diff -r "$tmp/renamed.before" "$tmp/synctest-h100" >/dev/null || fail "another spec's folder: changed"
#    index.txt a FIFO: refused without waiting for a writer, and said once (its spec and its
#    --variants line were read apart).
rm "$dir/index.txt" && mkfifo "$dir/index.txt"
rc=0
timeout 20 "$KASGEN" tune "$dir" --db "$db" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && [ "$(grep -c 'index.txt: error: cannot read: it is a FIFO' "$tmp/err")" = 1 ] ||
  { cat "$tmp/err"; fail "index.txt a FIFO: exit $rc, or not said once"; }
rm "$dir/index.txt" && cp "$tmp/index.before" "$dir/index.txt"
rm "$dir/results.xml"
expect_error "no file" 'results.xml: error: cannot read'
#    A measured time of 0 (nothing measured) on a candidate said correct is a located error
#    (before: read, and shown as "meas 0.0000"); on a wrong one it reads, and is never shipped.
write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1" \
  "0 0 0 1" "0.032 0.0319 0.0322 1"
expect_error "correct, measured 0" \
  'results.xml:7:[0-9]*: error: measured-ns of a correct <candidate> is 0'
#    A copy bandwidth of 0 or none, n of 0: located errors (before: "copy bandwidth 0.0 GB/s").
write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1"
sed -i 's/copy-gbs="3000"/copy-gbs="0"/' "$dir/results.xml"
expect_error "copy-gbs 0" 'results.xml:3:[0-9]*: error: copy-gbs of <device> is not positive'
sed -i 's/copy-gbs="0"/copy-gbs="3000"/; s/<run n="4194304"/<run n="0"/' "$dir/results.xml"
expect_error "n 0" 'results.xml:4:[0-9]*: error: n="0" of <run> is not an integer in \[1, '
write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1" \
  "0 0 0 0" "0.032 0.0319 0.0322 1"
"$KASGEN" tune "$dir" --db "$db" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "tune, a zero time: exit"; }
grep -q '^choice: cand03' "$tmp/out" && fail "tune shipped a candidate measured 0 ns"
rm "$dir/results.xml"

# 5. calibrate: two runs in a folder of <spec>.xml files; the constants are stored beside the
# database copy and used by tune's "model now".
mkdir "$tmp/runs"
cp benchmarks/h100-2026-11-23/synctest.xml benchmarks/h100-2026-11-23/bigfusion.xml "$tmp/runs/"
"$KASGEN" calibrate "$tmp/runs" --db "$db" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "calibrate: exit $?"; }
store="$tmp/db.measured.xml"
grep -q '<calibration work-scale="[0-9.]*" requests-one-scale="[0-9.]*" requests-shared-scale="[0-9.]*" lines-scale="[0-9.]*" requests-overlap="[0-9.]*" coverage-slope="-\?[0-9.]*" unhidden-share="[0-9.]*" wavefront-scale="[0-9.]*" barrier-scale=' "$store" || fail "calibrate: no constants stored"
grep -q 'fitted-on="bigfusion synctest"' "$store" || fail "calibrate: fitted-on"
grep -q 'these are fitted figures, not predictions' "$tmp/out" || fail "calibrate: fitted figures not labelled"
grep -q ' barrier-warp-ns="[0-9.]*" kernel-ns=' "$store" || fail "calibrate: no cost per warp stored"
#    --held-out: each spec's run judged by the constants fitted on the other's; nothing stored.
#    Of these older files the search still gives 4 of bigfusion's rows and 1 of synctest's:
#    synctest is judged by bigfusion's fit, and bigfusion, with 1 sample elsewhere, by none.
cp benchmarks/nvidia-h100-80gb-hbm3.xml "$tmp/dbh.xml"
"$KASGEN" calibrate "$tmp/runs" --db "$tmp/dbh.xml" --held-out >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "calibrate --held-out: exit"; }
[ ! -e "$tmp/dbh.measured.xml" ] || fail "calibrate --held-out stored a calibration"
grep -q "^bigfusion  *4  *[0-9.]*% | .* | (too few samples elsewhere)  $tmp/runs/bigfusion.xml\$" \
  "$tmp/out" || { cat "$tmp/out"; fail "calibrate --held-out: bigfusion's row"; }
grep -q "^synctest  *1  *[0-9.]*% | .* |  *nan  *[0-9.]*%  *[0-9.]*%  *$tmp/runs/synctest.xml\$" \
  "$tmp/out" || { cat "$tmp/out"; fail "calibrate --held-out: synctest's row"; }
grep -q '^held out: Spearman >= 0.8 on 0 of 0 (span > 10%), predicted #1 within 2% on [01] of 1, mean error <= 5% on [01] of 1' "$tmp/out" ||
  { cat "$tmp/out"; fail "calibrate --held-out: no summary"; }
#    One spec's runs alone: none can be held out (nothing left to fit on), which is said, not
#    a mean error of 0.00% over 0 runs.
mkdir "$tmp/runs1" && cp "$tmp/runs/bigfusion.xml" "$tmp/runs1/"
"$KASGEN" calibrate "$tmp/runs1" --db "$tmp/dbh.xml" --held-out >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "calibrate --held-out, one spec: exit"; }
grep -q '^held out: no runs to hold out (leaving any spec out leaves too few samples to fit on)$' \
  "$tmp/out" || { cat "$tmp/out"; fail "calibrate --held-out, one spec: no 'no runs to hold out'"; }
grep -q '^held out: .*mean 0.00%' "$tmp/out" &&
  fail "calibrate --held-out, one spec: a mean over 0 runs"
#    A store of constants out of range (barrier-scale 296: what calibrate stored before
#    2026-11-29 from an H200 run at n = 4096) is refused by every other command, which says how
#    to get past it, but calibrate sets it aside (a warning) and replaces it; a run this small is
#    warned of, and a fit out of range is not stored (before: stored, then refused by all).
sed 's/barrier-scale="[0-9.]*"/barrier-scale="296.1751"/' "$store" >"$tmp/dbh.measured.xml"
rc=0
"$KASGEN" plan specs/synctest.spec --db "$tmp/dbh.xml" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] &&
  grep -q 'dbh.measured.xml:4: error: .*(barrier-scale 296.1751 is outside \[0, 100\];' "$tmp/err" &&
  grep -q 'note: --uncalibrated sets the store aside; kasgen calibrate replaces it' "$tmp/err" ||
  { cat "$tmp/err"; fail "a store out of range: plan's exit $rc or message"; }
"$KASGEN" calibrate "$tmp/runs" --db "$tmp/dbh.xml" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "calibrate over a store out of range: exit"; }
grep -q 'dbh.measured.xml:4: warning: .*(barrier-scale 296.1751 .*calibrate sets them aside' \
  "$tmp/err" || { cat "$tmp/err"; fail "calibrate over a store out of range: no warning"; }
! grep -q 'per launch' "$tmp/err" || fail "calibrate: runs of 4194304 elements warned of as small"
"$KASGEN" plan specs/synctest.spec --db "$tmp/dbh.xml" >/dev/null 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "the replaced store is refused"; }
mkdir "$tmp/small"
sed 's/<run n="4194304"/<run n="4096"/' "$tmp/runs/synctest.xml" >"$tmp/small/synctest.xml"
cp "$tmp/runs/bigfusion.xml" "$tmp/small/"
"$KASGEN" calibrate "$tmp/small" --db "$tmp/dbh.xml" --held-out >/dev/null 2>"$tmp/err" || true
grep -q 'small/synctest.xml: warning: n = 4096: .* takes 0.1 us per launch, under 50 us' \
  "$tmp/err" && [ "$(grep -c 'per launch' "$tmp/err")" = 1 ] ||
  { cat "$tmp/err"; fail "calibrate: a run of 4096 elements not warned of (or another one)"; }
#    The review's case: stvenant's top 12 on the H200, its run at n = 4096 (session 45), whose
#    fit had barrier-scale 296 (2026-11-29): not stored, the store beside the database as it
#    was, exit 1.  Whatever the fit gives, calibrate never stores what plan then refuses.
cp benchmarks/nvidia-h200.xml "$tmp/h200c.xml"
"$KASGEN" specs/stvenant.spec --db "$tmp/h200c.xml" --top 12 --variants 2 --out "$tmp/n4096" \
  >/dev/null 2>&1 || fail "stvenant on the H200: generate"
cp benchmarks/h200-2026-11-29-s45/nsweep/stvenant/n4096.xml "$tmp/n4096/stvenant/results.xml"
echo '<kasgen-measured version="1"/>' >"$tmp/h200c.measured.xml"
rc=0
"$KASGEN" calibrate "$tmp/n4096" --db "$tmp/h200c.xml" >/dev/null 2>"$tmp/err" || rc=$?
grep -q 'warning: n = 4096: .* per launch, under 50 us' "$tmp/err" ||
  { cat "$tmp/err"; fail "the H200 run at n = 4096 not warned of"; }
if grep -q 'h200c.measured.xml: error: not written: the fitted [a-z-]* [0-9.-]* is outside ' \
  "$tmp/err"; then
  [ "$rc" = 1 ] && [ "$(cat "$tmp/h200c.measured.xml")" = '<kasgen-measured version="1"/>' ] ||
    fail "a fit out of range: exit $rc, or the store changed"
else
  [ "$rc" = 0 ] || { cat "$tmp/err"; fail "the H200 run at n = 4096: calibrate exit $rc"; }
fi
"$KASGEN" plan specs/stvenant.spec --db "$tmp/h200c.xml" >/dev/null 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "the H200 run at n = 4096: the store is then refused"; }
write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1" \
  "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
"$KASGEN" tune "$dir" --db "$db" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "tune (calibrated): exit"; }
grep -q '^model now (calibrated): ' "$tmp/out" || fail "tune: calibrated model not used"
"$KASGEN" tune "$dir" --db "$db" --uncalibrated >"$tmp/out" 2>&1 || fail "tune --uncalibrated"
grep -q '^model now: ' "$tmp/out" || fail "tune --uncalibrated still calibrated"
sed -i 's/work-scale="[0-9.]*"/work-scale="-1"/' "$store"
rc=0
"$KASGEN" plan specs/synctest.spec --db "$db" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "bad store: exit $rc"
grep -q 'db.measured.xml:4:.*error: the calibration.s constants are out of range' "$tmp/err" \
  || { cat "$tmp/err"; fail "bad store: message"; }
sed -i 's/work-scale="-1"/work-scale="1"/; s/kernel-ns="[0-9.]*"/kernel-ns="-100"/' "$store"
rc=0
"$KASGEN" plan specs/synctest.spec --db "$db" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'error: the calibration.s constants are out of range' "$tmp/err" \
  || { cat "$tmp/err"; fail "negative kernel-ns: exit $rc"; }
#    A store of another version or of none, holding two <calibration>s or an unknown element, is
#    refused at its line.
sed -i 's/kernel-ns="-100"/kernel-ns="0"/' "$store"
cp "$store" "$tmp/store.good"
store_refused() { # what, message: plan refuses the store as it is now, which is then restored
  rc=0
  "$KASGEN" plan specs/synctest.spec --db "$db" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" = 1 ] && grep -q "$2" "$tmp/err" || { cat "$tmp/err"; fail "$1: exit $rc"; }
  cp "$tmp/store.good" "$store"
}
sed -i 's/<kasgen-measured version="1">/<kasgen-measured version="2">/' "$store"
store_refused "store version 2" \
  "db.measured.xml:3:.*error: store version '2'; this kasgen reads version 1"
sed -i 's/<kasgen-measured version="1">/<kasgen-measured>/' "$store"
store_refused "store without a version" \
  'db.measured.xml:3:.*error: <kasgen-measured> lacks the attribute version'
sed -i '/<calibration /{p;s/kernel-ns="[0-9.]*"/kernel-ns="50"/}' "$store"
store_refused "two calibrations" \
  'db.measured.xml:5:.*error: more than one <calibration> (the first at line 4)'
sed -i 's/work-scale="[0-9.]*"/work-scale="0x1p0"/' "$store"
store_refused "a hex float in the store" \
  'db.measured.xml:4:.*error: work-scale of <calibration> is not a number'
sed -i 's/<calibration /<calibraton /' "$store"
store_refused "a misspelt element" \
  'db.measured.xml:4:.*error: unknown element <calibraton>; a store holds <calibration> and <spec>'
sed 's/work-scale="1"/work-scale="-1"/' "$store" >"$tmp/planted.measured.xml" # refused if read
rm "$store"
#    The database from the standard input has no store beside it: none is read, none written.
(cd "$tmp" && cp planted.measured.xml "./<stdin>.measured.xml" && "$KASGEN" plan "$OLDPWD/specs/synctest.spec" \
  --library "$OLDPWD/library" --db - <"$db" >"$tmp/out" 2>"$tmp/err") ||
  { cat "$tmp/err"; fail "--db -: a store in the working folder was read"; }
rc=0
"$KASGEN" calibrate "$tmp/runs" --db - <"$db" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'give --db FILE, not the standard input' "$tmp/err" ||
  { cat "$tmp/err"; fail "calibrate --db -: exit $rc"; }
#    The store's temporary file: a link planted at its name is neither followed nor replaced.
echo precious >"$tmp/precious"
ln -s "$tmp/precious" "$store.kasgen-tmp"
rc=0
"$KASGEN" calibrate "$tmp/runs" --db "$db" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'kasgen-tmp: error: exists and is not a regular file' "$tmp/err" ||
  { cat "$tmp/err"; fail "calibrate through a planted link: exit $rc"; }
[ "$(cat "$tmp/precious")" = precious ] && [ -L "$store.kasgen-tmp" ] && [ ! -L "$store" ] ||
  fail "calibrate wrote through a planted link"
rm "$store.kasgen-tmp"
#    A results file naming a spec by a path, or a link in the folder, is refused.
sed 's/spec="synctest"/spec="..\/..\/synctest"/' benchmarks/h100-2026-11-23/synctest.xml \
  >"$tmp/runs/synctest.xml"
rc=0
"$KASGEN" calibrate "$tmp/runs" --db "$db" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q "names its spec '../../synctest', which is not a spec's name" "$tmp/err" ||
  { cat "$tmp/err"; fail "calibrate: a spec named by a path: exit $rc"; }
rm "$tmp/runs/synctest.xml"
ln -s "$PWD/benchmarks/h100-2026-11-23/synctest.xml" "$tmp/runs/synctest.xml"
rc=0
"$KASGEN" calibrate "$tmp/runs" --db "$db" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'synctest.xml: error: not a regular file' "$tmp/err" ||
  { cat "$tmp/err"; fail "calibrate: a linked results file: exit $rc"; }
rm "$tmp/runs/synctest.xml"
rm -f "$tmp/runs/bigfusion.xml"
rc=0
"$KASGEN" calibrate "$tmp/runs" --db "$db" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'error: no results here' "$tmp/err" || fail "calibrate: empty folder"
#    A run measured on another GPU than the database's (their <device name>s): calibrate refuses
#    it naming both, tune warns; so with a store fitted on another GPU's run.
#    (With bigfusion's run beside it there are samples enough: only the GPU stops calibrate.)
cp benchmarks/nvidia-h100-80gb-hbm3.xml "$tmp/dbg.xml"
cp benchmarks/h100-2026-11-23/bigfusion.xml "$tmp/runs/"
sed 's/<device name="NVIDIA H100 80GB HBM3"/<device name="NVIDIA H200"/' \
  benchmarks/h100-2026-11-23/synctest.xml >"$tmp/runs/synctest.xml"
rc=0
"$KASGEN" calibrate "$tmp/runs" --db "$tmp/dbg.xml" >/dev/null 2>"$tmp/err" || rc=$?
other="measured on 'NVIDIA H200', but the database $tmp/dbg.xml is of 'NVIDIA H100 80GB HBM3'"
[ "$rc" = 1 ] && grep -qF "synctest.xml:3: error: this run was $other" "$tmp/err" ||
  { cat "$tmp/err"; fail "calibrate: a run of another GPU: exit $rc"; }
[ ! -e "$tmp/dbg.measured.xml" ] || fail "calibrate stored a fit on another GPU's run"
gpu="NVIDIA H200" write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" \
  "0.031 0.0309 0.0312 1" "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
"$KASGEN" tune "$dir" --db "$tmp/dbg.xml" >/dev/null 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "tune, a run of another GPU: exit"; }
grep -qF "results.xml:3: warning: this run was $other" "$tmp/err" ||
  { cat "$tmp/err"; fail "tune: no warning for a run of another GPU"; }
#    ... and one the search does not reproduce (cand01's and cand02's kernels swapped: the
#    search gives cand01's at rank 2): the other GPU comes first, as the likely reason, then the
#    error; the table shows no figures for the rows it says are missing (before: the warning
#    last, and cand01 shown with the model's figure of the candidate found at rank 2).
k1=$(sed -n 5p "$dir/results.xml" | grep -o ' kernels="[^"]*"')
k2=$(sed -n 6p "$dir/results.xml" | grep -o ' kernels="[^"]*"')
[ "$k1" != "$k2" ] || fail "tune, swapped rows: cand01 and cand02 have the same kernels"
sed -i "5s/$k1/$k2/; 6s/$k2/$k1/" "$dir/results.xml"
rc=0
"$KASGEN" tune "$dir" --db "$tmp/dbg.xml" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || { cat "$tmp/err"; fail "tune, swapped rows of another GPU: exit $rc"; }
reason=$(grep -n "results.xml:3: warning: this run was measured on 'NVIDIA H200', but the search \
uses the database $tmp/dbg.xml, of 'NVIDIA H100 80GB HBM3'" "$tmp/err" | cut -d: -f1)
missing=$(grep -n "error: the search no longer gives the candidate measured as cand01" \
  "$tmp/err" | cut -d: -f1)
[ -n "$reason" ] && [ -n "$missing" ] && [ "$reason" -lt "$missing" ] ||
  { cat "$tmp/err"; fail "tune, swapped rows: the other GPU not said first"; }
[ "$(grep -c 'this run was measured on' "$tmp/err")" = 1 ] || fail "tune: the GPU said twice"
grep -qE '^ +1 +1 +cand01 +[0-9.]+ +-$' "$tmp/out" ||
  { cat "$tmp/out"; fail "tune, swapped rows: figures for cand01, said missing"; }
gpu="NVIDIA H200" write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" \
  "0.031 0.0309 0.0312 1" "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
cat >"$tmp/dbg.measured.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<kasgen-measured version="1">
  <calibration work-scale="1" barrier-scale="0" kernel-ns="0" specs="1" candidates="1"
               fitted-on="synctest"/>
  <spec name="synctest" device="NVIDIA H200">
    <candidate name="cand01" predicted-rank="1" kernels="madd33_1" measured-ns="0.03"/>
  </spec>
</kasgen-measured>
XML
cp "$tmp/dbg.measured.xml" "$tmp/dbg.before"
cp benchmarks/h100-2026-11-23/synctest.xml "$tmp/runs/"
rc=0
"$KASGEN" calibrate "$tmp/runs" --db "$tmp/dbg.xml" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -qF "dbg.measured.xml:5: error: the calibration was fitted on a run $other" \
  "$tmp/err" || { cat "$tmp/err"; fail "calibrate: a store of another GPU: exit $rc"; }
cmp -s "$tmp/dbg.measured.xml" "$tmp/dbg.before" || fail "calibrate replaced another GPU's store"
write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1" \
  "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
"$KASGEN" tune "$dir" --db "$tmp/dbg.xml" >/dev/null 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "tune, a store of another GPU: exit"; }
grep -qF "dbg.measured.xml:5: warning: the calibration was fitted on a run $other" "$tmp/err" ||
  { cat "$tmp/err"; fail "tune: no warning for a store of another GPU"; }
rm "$tmp/runs/synctest.xml" "$tmp/runs/bigfusion.xml"

# 6. A kernel of groups of threads (threads.c; quad_stress15's cand02, a loop's iterations side
#    by side) measured best ships like any other: the results name it as the harness does.
dir="$tmp/gen/quad_stress15"
cp benchmarks/nvidia-h100-80gb-hbm3.xml "$tmp/db7.xml" # no calibration beside it
"$KASGEN" benchmarks/specs/quad_stress15.spec --top 2 --variants 0 --db "$tmp/db7.xml" --out "$tmp/gen" >/dev/null
grep -q '^2 .*(q = 0..2 in 3 groups)$' "$dir/index.txt" || fail "groups: cand02 is not the kernel of groups"
write_results "$dir/results.xml" "0.040 0.0399 0.0402 1" "0.030 0.0299 0.0301 1"
sed -i 's/spec="synctest"/spec="quad_stress15"/' "$dir/results.xml"
"$KASGEN" tune "$dir" --db "$tmp/db7.xml" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "groups: tune exit"; }
# the model now, uncalibrated, predicts the kernel of groups as the search did (on its own DAG)
awk '$3 == "cand02" { found = 1; if ($4 != $5) exit 1 } END { exit !found }' "$tmp/out" ||
  { cat "$tmp/out"; fail "groups: the model now predicts the kernel of groups otherwise"; }
grep -q 'Chosen by kasgen tune: cand02 measured best' "$dir/embed/kas_quad_stress15.h" ||
  fail "groups: the kernel of groups measured best did not ship"
grep -q 'const int q = (int)threadIdx.z' "$dir/embed/kas_quad_stress15.cu" ||
  fail "groups: the embed does not run the groups' kernel"

# 7. A run the search no longer ranks alike: pair_blocks18's candidates 7 and 8 split the loop's
#    iterations differently between the same kernels (one kernel string), and the run below
#    predates the search's candidates 1 and 2 (its ranks are theirs minus 2).  calibrate finds
#    every row by the kernels and the prediction the run recorded; a row predicted halfway between
#    the two is ambiguous and left out, unless it gives its calls.
gen8="$tmp/gen8/pair_blocks18"
"$KASGEN" benchmarks/specs/pair_blocks18.spec --top 12 --variants 0 --db "$tmp/db7.xml" --out "$tmp/gen8" >/dev/null
"$KASGEN" plan benchmarks/specs/pair_blocks18.spec --top 12 --variants 0 --db "$tmp/db7.xml" >"$tmp/plan8"
kernels_of() { awk -v r="$1" '$1 == r { for (i = 5; i <= NF; i++) printf "%s%s", $i, i < NF ? " " : ""; exit }' "$gen8/index.txt"; }
[ "$(kernels_of 7)" = "$(kernels_of 8)" ] || fail "twins: candidates 7 and 8 no longer share their kernels"
calls_of() { awk -v r="$1" '$1 == r { for (i = 3; i <= NF; i++) printf "%s%s", $i, i < NF ? " " : ""; exit }' "$tmp/plan8"; }
write_run8() { # file, the prediction to record for the search's candidate 8, then optionally
               # the candidate whose calls its row gives (the others give their own), or none
  {
    results_head pair_blocks18 284
    for r in 3 4 5 6 7 8 9 10 11 12; do
      local pred k calls=""
      pred=$(awk -v r="$r" '$1 == r { print $2 }' "$tmp/plan8")
      [ "$r" = 8 ] && pred=$2
      k=$(kernels_of "$r")
      if [ $# -ge 3 ]; then
        calls=" calls=\"$(calls_of "$r")\""
        [ "$r" = 8 ] && calls=" calls=\"$(calls_of "$3")\""
      fi
      echo "  <candidate name=\"c$r\" kernels=\"$k\"$calls nkernels=\"1\" predicted-ns=\"$pred\" measured-ns=\"0.$r\" melem-s=\"1\" compulsory-gbs=\"1\" copy-percent=\"1\" predicted-rank=\"$((r - 2))\" measured-rank=\"$((r - 2))\" correct=\"1\" error=\"1e-8\"/>"
    done
    echo '</kasgen-results>'
  } >"$1"
}
mkdir "$tmp/runs8"
write_run8 "$tmp/runs8/pair_blocks18.xml" "$(awk '$1 == 8 { print $2 }' "$tmp/plan8")"
"$KASGEN" calibrate "$tmp/runs8" --db "$tmp/db7.xml" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "twins: calibrate exit"; }
grep -q 'pair_blocks18.xml: 10 measured candidates of pair_blocks18$' "$tmp/out" ||
  { cat "$tmp/out"; fail "twins: a row of the run was not found"; }
halfway=$(awk '$1 == 7 { a = $2 } $1 == 8 { b = $2 } END { printf "%.9g", (a + b) / 2 }' "$tmp/plan8")
write_run8 "$tmp/runs8/pair_blocks18.xml" "$halfway"
"$KASGEN" calibrate "$tmp/runs8" --db "$tmp/db7.xml" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "twins: calibrate exit (halfway)"; }
grep -q 'pair_blocks18.xml: 9 measured candidates of pair_blocks18 (1 left out' "$tmp/out" ||
  { cat "$tmp/out"; fail "twins: an ambiguous row was given a candidate"; }
# A row that gives its calls (as the harness writes them) names one candidate: the halfway row
# is found, and a row whose calls are another kernel's is not.
write_run8 "$tmp/runs8/pair_blocks18.xml" "$halfway" 8
"$KASGEN" calibrate "$tmp/runs8" --db "$tmp/db7.xml" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "twins: calibrate exit (calls)"; }
grep -q 'pair_blocks18.xml: 10 measured candidates of pair_blocks18$' "$tmp/out" ||
  { cat "$tmp/out"; fail "twins: a row with its calls was not found"; }
write_run8 "$tmp/runs8/pair_blocks18.xml" "$halfway" 3
"$KASGEN" calibrate "$tmp/runs8" --db "$tmp/db7.xml" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "twins: calibrate exit (other calls)"; }
grep -q 'pair_blocks18.xml: 9 measured candidates of pair_blocks18 (1 left out' "$tmp/out" ||
  { cat "$tmp/out"; fail "twins: a row was matched to a candidate of other calls"; }

# 8. --variants (the default): synctest's top 4 holds the #1 in other block shapes, which index.txt
#    names; one measured fastest ships, and the embed header says what it is.  tune repeats the
#    search with the folder's K: without the index line and generation.ini (an older folder) the
#    run is not found, with --variants given it is.
dir="$tmp/gen9/synctest"
cp benchmarks/nvidia-h100-80gb-hbm3.xml "$tmp/db9.xml" # no calibration beside it
"$KASGEN" specs/synctest.spec --top 4 --db "$tmp/db9.xml" --out "$tmp/gen9" >/dev/null 2>"$tmp/err"
grep -q 'note: --variants 5: ranks .* are rank 1 with its kernel 1 in other block shapes' "$tmp/err" ||
  { cat "$tmp/err"; fail "variants: no note"; }
variant=$(sed -n 's/^Variants: --variants 5: \(cand0[2-4]\).* are cand01 with its kernel 1 in other block shapes\.$/\1/p' "$dir/index.txt")
[ -n "$variant" ] || { cat "$dir/index.txt"; fail "variants: index.txt does not name them"; }
timed() { # rank -> "measured min max correct": the variant 0.02 ns, the others 0.03
  if [ "cand0$1" = "$variant" ]; then echo "0.02 0.02 0.02 1"; else echo "0.03 0.03 0.03 1"; fi
}
write_results "$dir/results.xml" "$(timed 1)" "$(timed 2)" "$(timed 3)" "$(timed 4)"
"$KASGEN" tune "$dir" --db "$tmp/db9.xml" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "variants: tune exit"; }
grep -q "Chosen by kasgen tune: $variant measured best" "$dir/embed/kas_synctest.h" ||
  fail "variants: the measured best shape did not ship"
tr -d '\n*' <"$dir/embed/kas_synctest.h" | tr -s ' ' | grep -q 'It is cand01 with its kernel 1 in another block shape: E = [0-9]*, [0-9]* threads per block' ||
  fail "variants: the header does not say which shape"
sed -i '/^Variants: /d' "$dir/index.txt"
rm -f "$dir/generation.ini" # which records K too (section 11)
rc=0
"$KASGEN" tune "$dir" --db "$tmp/db9.xml" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'error: the search no longer gives the candidate' "$tmp/err" ||
  { cat "$tmp/err"; fail "variants: a folder without the line was searched with variants"; }
"$KASGEN" tune "$dir" --db "$tmp/db9.xml" --variants 5 >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "variants: tune --variants 5 exit"; }
#    The harness writes each row's block shapes (the candidate table's, in rank order): a row
#    whose shapes are another variant's is not the candidate of its rank, which shares its calls.
shapes_of() { grep -o '"{E=[^"]*}"' "$dir/common/kas_candidates.h" | sed -n "$1p" | tr -d '"'; }
[ "$(shapes_of 1)" != "$(shapes_of 2)" ] || fail "variants: the table gives one shape twice"
give() { # attribute, the function of a rank giving its value, then per row the rank whose
  local attr=$1 of=$2 r=1 # value the row gives
  shift 2
  for k in "$@"; do
    sed -i "s|name=\"cand0$r\" |&$attr=\"$($of "$k")\" |" "$dir/results.xml"
    r=$((r + 1))
  done
}
with_shapes() { give shapes shapes_of "$@"; }
write_results "$dir/results.xml" "$(timed 1)" "$(timed 2)" "$(timed 3)" "$(timed 4)"
with_shapes 1 2 3 4
grep -q 'cand02" shapes="{E=' "$dir/results.xml" || fail "variants: shapes not written"
"$KASGEN" tune "$dir" --db "$tmp/db9.xml" --variants 5 >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "variants: tune with shapes exit"; }
grep -q "Chosen by kasgen tune: $variant measured best" "$dir/embed/kas_synctest.h" ||
  fail "variants: with shapes, the measured best shape did not ship"
write_results "$dir/results.xml" "$(timed 1)" "$(timed 2)" "$(timed 3)" "$(timed 4)"
with_shapes 1 3 2 4
rc=0
"$KASGEN" tune "$dir" --db "$tmp/db9.xml" --variants 5 >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'error: the search no longer gives the candidate measured as cand02' "$tmp/err" ||
  { cat "$tmp/err"; fail "variants: a row of another block shape was taken for its rank's"; }
#    And its code's digest: a row whose kernels' code is not its rank's (the same
#    implementations, calls and shapes; the code of the load and save routines differs) is not
#    taken for it either.
code_of() { grep -o '"[0-9a-f]\{16\}"' "$dir/common/kas_candidates.h" | sed -n "$1p" | tr -d '"'; }
with_code() { give code code_of "$@"; }
[ "$(code_of 1)" != "$(code_of 2)" ] && [ -n "$(code_of 4)" ] || fail "code: no digests in the table"
write_results "$dir/results.xml" "$(timed 1)" "$(timed 2)" "$(timed 3)" "$(timed 4)"
with_shapes 1 2 3 4 && with_code 1 2 3 4
"$KASGEN" tune "$dir" --db "$tmp/db9.xml" --variants 5 >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "code: tune with digests exit"; }
write_results "$dir/results.xml" "$(timed 1)" "$(timed 2)" "$(timed 3)" "$(timed 4)"
with_shapes 1 2 3 4 && with_code 1 2 3 4
sed -i "s|code=\"$(code_of 2)\"|code=\"0123456789abcdef\"|" "$dir/results.xml"
rc=0
"$KASGEN" tune "$dir" --db "$tmp/db9.xml" --variants 5 >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'error: the search no longer gives the candidate measured as cand02' "$tmp/err" ||
  { cat "$tmp/err"; fail "code: a row of other code was taken for its rank's"; }

# 9. calibrate finds a run generated with a calibration as it ran: the search with that
#     calibration, which here ranks synctest's shapes otherwise than the uncalibrated model (a
#     large cost per warp at barriers), gives every row; the uncalibrated one does not.
cp benchmarks/nvidia-h100-80gb-hbm3.xml "$tmp/db10.xml"
cat >"$tmp/db10.measured.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<kasgen-measured version="1">
  <calibration work-scale="1" barrier-scale="1" barrier-warp-ns="2000" kernel-ns="0" specs="1" candidates="4" fitted-on="test"/>
</kasgen-measured>
XML
"$KASGEN" plan specs/synctest.spec --top 4 --db "$tmp/db10.xml" 2>/dev/null | cut -d' ' -f3- >"$tmp/cal10"
"$KASGEN" plan specs/synctest.spec --top 4 --db "$tmp/db10.xml" --uncalibrated 2>/dev/null | cut -d' ' -f3- >"$tmp/plain10"
! cmp -s "$tmp/cal10" "$tmp/plain10" || fail "calibrated run: the calibration ranks synctest as without it"
rm -rf "$tmp/gen9"
"$KASGEN" specs/synctest.spec --top 4 --db "$tmp/db10.xml" --out "$tmp/gen9" >/dev/null 2>&1 ||
  fail "calibrated run: generate"
write_results "$dir/results.xml" "0.03 0.03 0.03 1" "0.031 0.031 0.031 1" "0.032 0.032 0.032 1" \
  "0.033 0.033 0.033 1"
with_shapes 1 2 3 4 && with_code 1 2 3 4
mkdir -p "$tmp/runs10" && cp -r "$dir" "$tmp/runs10/"
"$KASGEN" calibrate "$tmp/runs10" --db "$tmp/db10.xml" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "calibrated run: calibrate exit"; }
grep -q 'synctest/results.xml: 4 measured candidates of synctest$' "$tmp/out" ||
  { cat "$tmp/out"; fail "calibrated run: not every row found"; }
#     The store records which candidate ran as the row names it: its block shapes and code.
grep -q "<candidate name=\"cand02\" predicted-rank=\"2\" kernels=\"[^\"]*\" shapes=\"$(shapes_of 2)\" code=\"$(code_of 2)\" measured-ns=\"0.031\"/>" \
  "$tmp/db10.measured.xml" || { cat "$tmp/db10.measured.xml"; fail "calibrated run: the store lacks shapes or code"; }

# 10. ptxas: registers read from the compiler, cached; without nvcc, said once.
if [ -n "${NVCC:-}" ]; then
  "$KASGEN" specs/synctest.spec --top 4 --db benchmarks/nvidia-h100-80gb-hbm3.xml --ptxas \
    --out "$tmp/p" >"$tmp/out" 2>&1 || fail "ptxas: exit"
  grep -q 'registers per thread (ptxas)' "$tmp/out" || fail "ptxas: registers not read"
  n1=$(ls "$KASGEN_CACHE" | wc -l)
  [ "$n1" -ge 1 ] || fail "ptxas: nothing cached"
  touch "$tmp/stamp"
  "$KASGEN" specs/synctest.spec --top 4 --db benchmarks/nvidia-h100-80gb-hbm3.xml --ptxas \
    --out "$tmp/p" >"$tmp/out2" 2>&1 || fail "ptxas rerun: exit"
  [ -z "$(find "$KASGEN_CACHE" -newer "$tmp/stamp")" ] || fail "ptxas rerun compiled again"
  # the search's note carries its own run time (seconds), which differs between runs
  same() { grep -v -e '^wrote' -e 'note: search: ' "$1"; }
  diff <(same "$tmp/out") <(same "$tmp/out2") || fail "ptxas rerun differs"
  # stvenant's #2 spills: ptxas's stores and loads are shown apart (they were shown added, as
  # "SPILLS 108 bytes per thread"), and the header drops the estimate's caveat
  "$KASGEN" specs/stvenant.spec --top 3 --ptxas --out "$tmp/p" >"$tmp/out" 2>&1 ||
    fail "ptxas stvenant: exit"
  grep -Eq '\(ptxas\)  spills: [0-9]+ bytes stored, [0-9]+ loaded per thread \(penalized\)$' \
    "$tmp/out" || fail "ptxas stvenant: no spill line"
  ! grep -q 'may hide spills' "$tmp/out" || fail "ptxas stvenant: the estimate's caveat"
fi
NVCC=/nonexistent/nvcc "$KASGEN" specs/synctest.spec --top 4 --ptxas --out "$tmp/q" >"$tmp/out" 2>"$tmp/err" \
  || fail "no nvcc: exit"
[ "$(grep -c 'no nvcc found' "$tmp/err")" = 1 ] || fail "no nvcc: not said once"
grep -q 'registers per thread (estimated)' "$tmp/out" || fail "no nvcc: estimate not kept"
#     An nvcc that hangs (the review: a library routine that #includes a FIFO; before, 30 minutes
#     per nvcc run) is stopped at what --time-limit left after the search, said, and the estimate
#     kept; a limit the search spent runs no nvcc.  Its sleep is killed with it (process group).
printf '#!/bin/sh\nsleep 120\n' >"$tmp/hung_nvcc" && chmod +x "$tmp/hung_nvcc"
start=$(date +%s)
NVCC="$tmp/hung_nvcc" KASGEN_CACHE="$tmp/hung_cache" timeout 60 "$KASGEN" specs/synctest.spec \
  --top 4 --ptxas --time-limit 3 --out "$tmp/h" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "a hung nvcc: exit"; }
[ $(($(date +%s) - start)) -le 20 ] || fail "a hung nvcc: not stopped at --time-limit 3"
said='took longer than what --time-limit left, [0-9.]* s; stopped, keeping the estimated'
grep -q "hung_nvcc: warning: .* $said registers" "$tmp/err" &&
  grep -q 'registers per thread (estimated)' "$tmp/out" ||
  { cat "$tmp/err"; fail "a hung nvcc: not said, or the estimate not kept"; }
NVCC="$tmp/hung_nvcc" KASGEN_CACHE="$tmp/hung_cache" timeout 60 "$KASGEN" specs/synctest.spec \
  --top 4 --ptxas --time-limit 0.001 --out "$tmp/h" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "--time-limit spent: exit"; }
grep -q 'warning: the search spent --time-limit: ptxas is not run' "$tmp/err" ||
  { cat "$tmp/err"; fail "--time-limit spent: not said"; }
#     tune repeats the generation with its generation.ini's --time-limit, which bounds nvcc as it
#     did there (before, a recorded limit counted as not given: 5 minutes per hung nvcc)
NVCC="$tmp/hung_nvcc" KASGEN_CACHE="$tmp/hung_cache" timeout 60 "$KASGEN" specs/synctest.spec \
  --top 4 --ptxas --time-limit 3 --db "$db" --out "$tmp/h3" >/dev/null 2>&1 ||
  fail "a hung nvcc, --time-limit 3: exit"
grep -qx 'time-limit = 3' "$tmp/h3/synctest/generation.ini" || fail "--time-limit 3 not recorded"
saved_dir=$dir
dir="$tmp/h3/synctest"
write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1" \
  "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
start=$(date +%s)
NVCC="$tmp/hung_nvcc" KASGEN_CACHE="$tmp/hung_cache" timeout 60 "$KASGEN" tune "$dir" \
  >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "tune, a hung nvcc: exit"; }
[ $(($(date +%s) - start)) -le 20 ] || fail "tune, a hung nvcc: not stopped at the recorded 3 s"
grep -q "hung_nvcc: warning: .* $said registers" "$tmp/err" ||
  { cat "$tmp/err"; fail "tune, a hung nvcc: the recorded --time-limit's cut not said"; }
dir=$saved_dir
n0=$(ls "$KASGEN_CACHE" 2>/dev/null | wc -l)
"$KASGEN" specs/stvenant.spec --top 4 --out "$tmp/r" >"$tmp/out" 2>&1 || fail "default: exit"
grep -q 'registers per thread (estimated)' "$tmp/out" || fail "default: ptxas ran without --ptxas"
! grep -q 'time-limit' "$tmp/r/stvenant/generation.ini" || fail "default: a --time-limit recorded"
#     the header says what the figures assume: the n the model predicts for (each launch shared
#     among them), the estimate's caveat; --n changes the n and the times
grep -qx "ns/elem at n = 4194304 elements, each kernel's launch shared among them" "$tmp/out" &&
  grep -qx 'registers are estimated and may hide spills (--ptxas)' "$tmp/out" ||
  fail "default: the ranking's assumptions not stated"
t22=$(awk '$1 == 1 && $2 ~ /^[0-9.]+$/ {print $2; exit}' "$tmp/out")
"$KASGEN" specs/stvenant.spec --top 1 --n 1000 --out "$tmp/r" >"$tmp/out" 2>&1 || fail "--n: exit"
grep -qx "ns/elem at n = 1000 elements, each kernel's launch shared among them" "$tmp/out" ||
  fail "--n 1000: the ranking does not say the model's n"
t3=$(awk '$1 == 1 && $2 ~ /^[0-9.]+$/ {print $2; exit}' "$tmp/out")
awk -v a="$t22" -v b="$t3" 'BEGIN {exit !(a > 0 && b > 2 * a)}' ||
  fail "--n 1000: the #1's ns/elem ($t3) is not the model's at n = 1000 (2^22: $t22)"
! grep -q 'sizes the harness only' "$tmp/out" || fail "--n 1000: the old remark"
[ "$(ls "$KASGEN_CACHE" 2>/dev/null | wc -l)" = "$n0" ] || fail "default: nvcc ran without --ptxas"
# 11. generation.ini: a folder records the options it was generated with, and tune and calibrate
#     search again with them.  A double-precision, component-major folder with its own database
#     and harness size is tuned with no option given (before, tune searched in single precision
#     and said "the library, the database or the model changed"), and stays as it was.
gen11="$tmp/gen11"
"$KASGEN" specs/synctest.spec --top 4 --db "$db" --precision double --layout component --n 1000 \
  --out "$gen11" >/dev/null 2>&1 || fail "generation.ini: generate"
ini="$gen11/synctest/generation.ini"
{ grep -qx "db = $(realpath "$db")" "$ini" && grep -qx 'precision = double' "$ini" &&
  grep -qx 'layout = component' "$ini" && grep -qx 'n = 1000' "$ini"; } ||
  { cat "$ini"; fail "generation.ini: the options are not recorded"; }
cp "$ini" "$tmp/ini.before"
saved_dir=$dir
dir="$gen11/synctest"
write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1" \
  "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
"$KASGEN" tune "$dir" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "generation.ini: tune with no option: exit"; }
grep -q 'kas_synctest_cand03_launch' "$dir/embed/kas_synctest.cu" ||
  fail "generation.ini: the measured best is not shipped"
grep -q 'const double \*' "$dir/embed/kas_synctest.h" || fail "generation.ini: embed not in double"
grep -q 'Harness default n = 1000\.' "$dir/index.txt" || fail "generation.ini: n not kept"
cmp -s "$ini" "$tmp/ini.before" || fail "generation.ini: tune changed the record"
#     calibrate searches each run folder again with its record (its database aside).
cp benchmarks/nvidia-h100-80gb-hbm3.xml "$tmp/db11.xml"
mkdir -p "$tmp/runs11" && cp -r "$dir" "$tmp/runs11/"
"$KASGEN" calibrate "$tmp/runs11" --db "$tmp/db11.xml" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "generation.ini: calibrate exit"; }
grep -q 'synctest/results.xml: 4 measured candidates of synctest$' "$tmp/out" ||
  { cat "$tmp/out"; fail "generation.ini: calibrate did not find the double-precision rows"; }
#     The harness writes what the code was generated for into <run> (kas_candidates.h's
#     KAS_LAYOUTS, its real type): a results file copied out of its folder (DIR/<spec>.xml,
#     beside no generation.ini) is searched in double precision, component-major, and every row
#     is found by its block shapes and code (before, calibrate searched it in single precision,
#     element-major, and found none).
grep -qx '#define KAS_LAYOUTS "component"' "$dir/common/kas_candidates.h" ||
  fail "kas_candidates.h does not say the arrays are component-major"
measured11() { # the run of the folder's code, as the harness writes it, with attributes $1
  run_attrs=$1 write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1" \
    "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
  with_shapes 1 2 3 4 && with_code 1 2 3 4
}
measured11 ' precision="double" layout="component"'
#     (and at the n the harness runs by default, the folder's --n 1000: the n it was ranked at)
mkdir -p "$tmp/runs12" &&
  sed 's/<run n="4194304"/<run n="1000"/' "$dir/results.xml" >"$tmp/runs12/synctest.xml"
cp benchmarks/nvidia-h100-80gb-hbm3.xml "$tmp/db12.xml"
"$KASGEN" calibrate "$tmp/runs12" --db "$tmp/db12.xml" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "a copied results file: calibrate exit"; }
grep -q 'runs12/synctest.xml: 4 measured candidates of synctest$' "$tmp/out" ||
  { cat "$tmp/out"; fail "a copied results file: not every double, component-major row found"; }
#     A bad record: a located error, exit 1, the embed untouched; a FIFO does not hang.
cp "$dir/embed/kas_synctest.cu" "$tmp/source11"
bad_record() { # what, message
  local rc=0
  timeout 20 "$KASGEN" tune "$dir" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
  [ "$rc" = 1 ] || fail "generation.ini, $1: exit $rc, expected 1"
  grep -q "$2" "$tmp/err" || { cat "$tmp/err" >&2; fail "generation.ini, $1: message"; }
  cmp -s "$dir/embed/kas_synctest.cu" "$tmp/source11" || fail "generation.ini, $1: embed changed"
}
printf '[generation]\ntop = 3\n' >"$ini"
bad_record "unknown key" "generation.ini:2:1: error: 'top' is not an option a generation records"
printf '[generation]\nprecision = quad\n' >"$ini"
bad_record "bad value" "generation.ini:2:13: error: 'quad' is not a value of --precision"
printf '[generation]\nn = 5\nn = 6\n' >"$ini"
bad_record "twice" "generation.ini:3:1: error: 'n' is given twice"
printf '[options]\nn = 5\n' >"$ini"
bad_record "section" "generation.ini:1:1: error: unknown section \[options\]"
printf '[generation]\ntime-limit = 0x10\n' >"$ini"
bad_record "hex float" "generation.ini:2:14: error: '0x10' is not a value of --time-limit"
printf '[generation]\nexhaustive = 1\n' >"$ini"
bad_record "flag" "generation.ini:2:14: error: '1' is not a value of --exhaustive"
printf '[generation]\nlayout = nosuch=component\n' >"$ini" # an argument the spec lacks
bad_record "layout's name" "generation.ini:2:10: error: .*nosuch"
! grep -q 'did you mean' "$tmp/err" || fail "generation.ini, layout's name: a hint for 'nosuch'"
printf '[generation]\nlayout = component,a=element\n' >"$ini" # close to the spec's A
bad_record "layout's misspelt name" \
  "generation.ini:2:10: error: 'a' names no input or output of spec synctest"
grep -q "synctest.spec:3:11: note: did you mean 'A'?" "$tmp/err" ||
  { cat "$tmp/err"; fail "generation.ini, layout's misspelt name: no hint (before: none)"; }
printf '[generation]\nlayout = component,rows\n' >"$ini" # a word --layout does not take
bad_record "layout's word" "generation.ini:2:10: error: 'rows': expected element, component or"
rm "$ini" && mkfifo "$ini"
bad_record "FIFO" "generation.ini: error: cannot read: it is a FIFO"
rm "$ini"
#     A run of other code than the search's is an error at the file's attribute naming both,
#     not "the search no longer gives the candidate": tune given --precision single (before,
#     tune found the rows by their implementations and shipped single-precision code as
#     measured), a record and a file that disagree (a results file of another generation).
cp "$tmp/ini.before" "$ini"
#     The same --layout given on the command line is bad usage (exit 2), as it is to the main
#     job: a name the spec lacks (before, exit 1 like a bad file) or a word it does not take;
#     the embed and calibrate's store untouched.
cp "$tmp/db11.measured.xml" "$tmp/store11"
bad_layout_option() { # what, message, kasgen's arguments
  local what=$1 msg=$2 rc=0
  shift 2
  "$KASGEN" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
  [ "$rc" = 2 ] && grep -qF -- "$msg" "$tmp/err" || { cat "$tmp/err"; fail "$what: exit $rc"; }
  cmp -s "$dir/embed/kas_synctest.cu" "$tmp/source11" || fail "$what: embed changed"
  cmp -s "$tmp/db11.measured.xml" "$tmp/store11" || fail "$what: the store changed"
}
bad_layout_option "tune --layout nosuch=component" \
  "--layout: error: 'nosuch' names no input or output of spec synctest" \
  tune "$dir" --layout nosuch=component
bad_layout_option "tune --layout rows" "--layout: error: 'rows': expected element" \
  tune "$dir" --layout rows
bad_layout_option "calibrate --layout nosuch=component" \
  "--layout: error: 'nosuch' names no input or output of spec synctest" \
  calibrate "$tmp/runs11" --db "$tmp/db11.xml" --layout nosuch=component
other_code() { # what, message, tune's options
  local what=$1 msg=$2 rc=0
  shift 2
  "$KASGEN" tune "$dir" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" = 1 ] && grep -qF "$msg" "$tmp/err" || { cat "$tmp/err"; fail "$what: exit $rc"; }
  ! grep -q 'the search no longer gives' "$tmp/err" || fail "$what: the generic message"
  cmp -s "$dir/embed/kas_synctest.cu" "$tmp/source11" || fail "$what: embed changed"
}
other_code "--precision single given" "results.xml:4:92: error: this run measured the code of \
--precision double, but tune searches with --precision single (given to tune)" --precision single
measured11 ' precision="single" layout="component"'
other_code "another generation's precision" "results.xml:4:92: error: this run measured the code \
of --precision single, but tune searches with --precision double (as the folder's \
generation.ini records it)"
measured11 ' precision="double" layout="component,F=element"'
other_code "another generation's layout" "results.xml:4:108: error: this run measured the code \
of --layout A=component, but tune searches with --layout component (as the folder's"
#     An option given on the command line wins over the record where the results file does not
#     say otherwise (an older one; the rows name only implementations, which single precision's
#     candidates share: the folder is written again in single precision, and so recorded).  Three
#     rows: at this n the 4th is a tie of two block shapes (6.8180 ns) that each precision breaks
#     its own way, and the two 4ths differ in their implementations.
write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1" \
  "0.027 0.0269 0.0271 1"
"$KASGEN" tune "$dir" --precision single >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "generation.ini: tune --precision single: exit"; }
grep -q 'const float \*' "$dir/embed/kas_synctest.h" && grep -qx 'precision = single' "$ini" ||
  fail "generation.ini: --precision single given to tune did not win"
#     A folder without generation.ini (older) whose results file says what its code was: tune
#     searches it so (with the database and n given), and ships double-precision code.
"$KASGEN" specs/synctest.spec --top 4 --db "$db" --precision double --layout component \
  --out "$gen11" >/dev/null 2>&1 || fail "generate again"
rm "$ini"
measured11 ' precision="double" layout="component"'
"$KASGEN" tune "$dir" --db "$db" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "no generation.ini, a results file saying double: tune exit"; }
grep -q 'const double \*' "$dir/embed/kas_synctest.h" && grep -qx 'precision = double' "$ini" &&
  grep -qx 'layout = component' "$ini" || fail "no generation.ini: not searched as measured"
dir=$saved_dir
#     A folder that does not record its database (generated with --db -, or without
#     generation.ini): tune searches with the database of the GPU its results name, and says so
#     (before: the default, the H100's, and "the search no longer gives the candidate measured as
#     cand01"); for a GPU kasgen has no database of, an error asking for --db.  The H200's run of
#     stvenant at n = 2^21 (session 45).
"$KASGEN" specs/stvenant.spec --db - --top 12 --variants 2 --out "$tmp/stdin_db" \
  <benchmarks/nvidia-h200.xml >/dev/null 2>&1 || fail "--db -: generate"
sdir="$tmp/stdin_db/stvenant"
grep -qx '; db not recorded: it was read from the standard input (give --db)' \
  "$sdir/generation.ini" || fail "--db -: generation.ini"
cp benchmarks/h200-2026-11-29-s45/nsweep/stvenant/n2097152.xml "$sdir/results.xml"
cp "$sdir/generation.ini" "$tmp/stdin.ini"
"$KASGEN" tune "$sdir" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "a database not recorded: tune exit"; }
said='results.xml:3: note: the folder does not record the timing database .*: tune searches with'
grep -q "$said .*/nvidia-h200.xml, the database of 'NVIDIA H200'" "$tmp/err" &&
  grep -q '^wrote .*stvenant/embed/ around cand01' "$tmp/out" ||
  { cat "$tmp/err" "$tmp/out"; fail "a database not recorded: not the H200's, or not said"; }
grep -q '^db = .*/nvidia-h200.xml$' "$sdir/generation.ini" ||
  fail "a database not recorded: the folder written again does not record the one searched"
cp "$tmp/stdin.ini" "$sdir/generation.ini"
sed -i 's/name="NVIDIA H200"/name="NVIDIA Z100"/' "$sdir/results.xml"
rc=0
"$KASGEN" tune "$sdir" >"$tmp/out" 2>"$tmp/err" || rc=$?
said='results.xml:3: error: the folder does not record the timing database'
[ "$rc" = 1 ] && grep -q "$said .* none for 'NVIDIA Z100', .*: give --db FILE" "$tmp/err" &&
  ! grep -q 'no longer gives' "$tmp/err" ||
  { cat "$tmp/err"; fail "a database not recorded, an unknown GPU: exit $rc or message"; }
sed -i 's/name="NVIDIA Z100"/name="NVIDIA H200"/' "$sdir/results.xml"
rm "$sdir/generation.ini"
"$KASGEN" tune "$sdir" >"$tmp/out" 2>"$tmp/err" &&
  grep -q 'tune searches with .*/nvidia-h200.xml' "$tmp/err" ||
  { cat "$tmp/err"; fail "no generation.ini: not the H200's database"; }
#     calibrate, given no --db, fits the database of the runs' GPU, as tune picks it (before, the
#     default database, which refused the H200's run); --held-out: nothing stored beside it.
mkdir "$tmp/h200runs" && cp -r "$sdir" "$tmp/h200runs/"
"$KASGEN" calibrate "$tmp/h200runs" --held-out >"$tmp/out" 2>"$tmp/err" || true
grep -q "note: calibrate fits .*/nvidia-h200.xml, the database of 'NVIDIA H200', the GPU that" \
  "$tmp/err" && ! grep -q 'was measured on .* but the database' "$tmp/err" ||
  { cat "$tmp/err"; fail "calibrate without --db on an H200 run: not the H200's database"; }
#     runs of two GPUs: no one database fits them, said before any search
cp benchmarks/h100-2026-11-23/synctest.xml "$tmp/h200runs/"
rc=0
"$KASGEN" calibrate "$tmp/h200runs" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q "synctest.xml:3: error: this run was measured on 'NVIDIA H100 80GB HBM3', \
.*stvenant/results.xml on 'NVIDIA H200': calibrate fits one GPU's database" "$tmp/err" ||
  { cat "$tmp/err"; fail "calibrate without --db, runs of two GPUs: exit $rc or message"; }

# 12. The table within 80 columns.  The element's run on an H200 (session 42, tests/fixtures):
#     each row's figures, every one kept, then its kernels of 128 calls on a line of their own
#     under the candidate's name (150 columns before, the kernels after the figures), and the
#     figures that judge the model on two lines each (120 before), the choice's sentence on
#     three lines (one of 195 before); only the embed's path may be longer.  A spec whose
#     every row fits (one call) keeps each row on one line.
cp benchmarks/nvidia-h200.xml "$tmp/h200.xml" # no calibration beside it
"$KASGEN" specs/stvenant_element.spec --top 10 --db "$tmp/h200.xml" --out "$tmp/wide" \
  >/dev/null 2>&1 || fail "wide: generate"
cp tests/fixtures/results/h200-stvenant_element/results.xml "$tmp/wide/stvenant_element/"
"$KASGEN" tune "$tmp/wide/stvenant_element" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "wide: tune exit"; }
grep -v '^wrote ' "$tmp/out" | awk 'length > 80 { print; exit 1 }' ||
  fail "wide: a line of tune's output over 80 columns"
choice_in "$tmp/out" | grep -qx "choice: cand09 measured best on NVIDIA H200: 0.3375 ns per \
element against 0.5161 for the predicted best cand01 (52.9% faster; run-to-run spread \
measured)\. The spread of the two was 0\.0033 ns\." &&
  [ "$(grep -A3 '^choice: ' "$tmp/out" | grep -c '^  ')" = 2 ] ||
  { grep -A3 '^choice: ' "$tmp/out"; fail "wide: the choice's sentence not whole on 3 lines"; }
[ "$(awk '$3 ~ /^cand[0-9]+$/ && NF == 7' "$tmp/out" | wc -l)" = 10 ] ||
  fail "wide: not 10 rows of 7 figures"
grep -A1 '^   9    1  cand09 ' "$tmp/out" | sed -n 2p |
  grep -qx ' \{11\}mvmul33_1+svmul3_1+...+madd33_1 (32 calls; N = 0..3 in 4 groups)' ||
  fail "wide: cand09's kernels not on the line under its figures"
grep -qx 'model now: spearman -0.430, mean relative error [0-9.]*%' "$tmp/out" &&
  grep -qx '  predicted best 52.9% slower than the measured best (10 candidates)' "$tmp/out" ||
  fail "wide: the model's figures"
mkdir "$tmp/one"
printf 'matrix3x3 A, B;\nscalar s;\ninput A, s;\nB = smmul33(A, s);\nreturn B;\n' \
  >"$tmp/one/one.spec"
"$KASGEN" "$tmp/one/one.spec" --top 4 --db "$db" --out "$tmp/one" >/dev/null 2>&1 ||
  fail "one call: generate"
dir="$tmp/one/one"
one_call() { # cand02's correctness; tune's output in $tmp/out
  write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 $1" \
    "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
  sed -i 's/spec="synctest"/spec="one"/' "$dir/results.xml"
  "$KASGEN" tune "$dir" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "one call: tune exit"; }
}
one_call 1
grep -qx 'pred meas  candidate  pred ns/e  model now  meas ns/e    spread  kernels' "$tmp/out" &&
  grep -q '^   2    2  cand02 .* [0-9.]*  smmul33_[0-9]$' "$tmp/out" ||
  { cat "$tmp/out"; fail "one call: rows not on one line each"; }
one_call 0 # "  WRONG" after the kernels would make a line of 83: WRONG in the margin
grep -A1 '^   2    2  cand02 .* [0-9.]*$' "$tmp/out" | sed -n 2p |
  grep -qx 'WRONG      smmul33_[0-9]' ||
  { cat "$tmp/out"; fail "one call, cand02 wrong: not flagged in the margin"; }
dir=$saved_dir

# 13. A folder carries its spec's text (DIR/<spec>.spec, named in index.txt): tune and calibrate
#     search with it, so that a folder tunes wherever it went and whatever became of its spec
#     (before, they read the spec index.txt's first line names: a folder generated from the
#     standard input, or whose spec moved, needed --spec FILE; an edited spec gave "the search
#     no longer gives the candidate", or tuned against a spec that was not the one measured).
cp benchmarks/nvidia-h100-80gb-hbm3.xml "$tmp/db13.xml" # no calibration beside it
measured13() { # the run of $dir's code, as the harness writes it: cand03 the measured best
  write_results "$dir/results.xml" "0.030 0.0299 0.0302 1" "0.031 0.0309 0.0312 1" \
    "0.027 0.0269 0.0271 1" "0.032 0.0319 0.0322 1"
  with_shapes 1 2 3 4 && with_code 1 2 3 4 # the code digests: the spec's text and path in them
}
tune13() { # what; tune must succeed, ship cand03 and write the copy back unchanged ($2)
  "$KASGEN" tune "$dir" --db "$tmp/db13.xml" >"$tmp/out" 2>"$tmp/err" </dev/null ||
    { cat "$tmp/err"; fail "$1: tune exit"; }
  grep -q 'kas_synctest_cand03_launch' "$dir/embed/kas_synctest.cu" ||
    fail "$1: the measured best did not ship"
  cmp -s "$2" "$dir/synctest.spec" || fail "$1: the folder's copy of its spec changed"
}
#     From the standard input: the copy is the text read; tune needs no --spec, and index.txt
#     still says where the spec came from.
"$KASGEN" - --name synctest --top 4 --db "$tmp/db13.xml" --out "$tmp/gen13" \
  <specs/synctest.spec >/dev/null 2>&1 || fail "stdin: generate"
dir="$tmp/gen13/synctest"
cmp -s specs/synctest.spec "$dir/synctest.spec" || fail "stdin: the copy is not the text read"
grep -qx 'synctest.spec' "$dir/.kasgen-manifest" || fail "stdin: the copy is not in the manifest"
measured13
tune13 "stdin" specs/synctest.spec
head -1 "$dir/index.txt" | grep -q ': spec synctest (<stdin>), ' || fail "stdin: index.txt's origin"
! grep -q 'note: changed since' "$tmp/err" || fail "stdin: a note of a changed spec"
#     A folder named with --name: its copy bears the name, which tune searches under (before,
#     the spec file's stem: "the results are of spec 'mine', but the spec searched is
#     'synctest'"); tuned from another folder, where the path the code names (the relative
#     specs/synctest.spec) leads nowhere, its digests still match.
"$KASGEN" specs/synctest.spec --name mine --top 4 --db "$tmp/db13.xml" --out "$tmp/gen13" \
  >/dev/null 2>&1 || fail "--name: generate"
dir="$tmp/gen13/mine"
measured13
sed -i 's/spec="synctest"/spec="mine"/' "$dir/results.xml"
(cd "$tmp" && "$KASGEN" tune "$dir" --db "$tmp/db13.xml" >"$tmp/out" 2>"$tmp/err") ||
  { cat "$tmp/err"; fail "--name: tune exit"; }
grep -q 'kas_mine_cand03_launch' "$dir/embed/kas_mine.cu" && cmp -s specs/synctest.spec "$dir/mine.spec" ||
  fail "--name: the measured best did not ship, or the copy changed"
#     A spec moved away after the generation: tune and calibrate read the copy, with no note;
#     index.txt keeps naming where the spec was.
mkdir "$tmp/specs13" && cp specs/synctest.spec "$tmp/specs13/synctest.spec"
"$KASGEN" "$tmp/specs13/synctest.spec" --top 4 --db "$tmp/db13.xml" --out "$tmp/gen13b" \
  >/dev/null 2>&1 || fail "moved: generate"
dir="$tmp/gen13b/synctest"
measured13
mv "$tmp/specs13/synctest.spec" "$tmp/specs13/kept.spec"
tune13 "moved" "$tmp/specs13/kept.spec"
! grep -q 'note: changed since' "$tmp/err" || fail "moved: a note of a changed spec"
head -1 "$dir/index.txt" | grep -qF "specs13/synctest.spec), " || fail "moved: index.txt's origin"
cp benchmarks/nvidia-h100-80gb-hbm3.xml "$tmp/db13c.xml"
mkdir "$tmp/runs13" && cp -r "$dir" "$tmp/runs13/"
"$KASGEN" calibrate "$tmp/runs13" --db "$tmp/db13c.xml" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "moved: calibrate exit"; }
grep -q 'runs13/synctest/results.xml: 4 measured candidates of synctest$' "$tmp/out" ||
  { cat "$tmp/out"; fail "moved: calibrate did not find every row"; }
#     The spec edited since (its last call's arguments): tune says so once, and searches with the
#     copy, whose code the run measured (every row found by its code digest); --spec FILE still
#     wins, and the edited spec's search does not give the run's candidates.
sed 's/^F = madd33(A, M_3);$/F = madd33(M_3, M_3);/' "$tmp/specs13/kept.spec" \
  >"$tmp/specs13/synctest.spec"
! cmp -s "$tmp/specs13/kept.spec" "$tmp/specs13/synctest.spec" || fail "edited: not edited"
tune13 "edited" "$tmp/specs13/kept.spec"
[ "$(grep -c 'note: changed since' "$tmp/err")" = 1 ] &&
  grep -qF "specs13/synctest.spec: note: changed since $dir was generated from it: the run measured the code of the folder's copy, $dir/synctest.spec, which is searched" \
    "$tmp/err" || { cat "$tmp/err"; fail "edited: no note, or not one"; }
cp "$dir/embed/kas_synctest.cu" "$tmp/source13"
rc=0
"$KASGEN" tune "$dir" --db "$tmp/db13.xml" --spec "$tmp/specs13/synctest.spec" >"$tmp/out" \
  2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'error: the search no longer gives the candidate' "$tmp/err" ||
  { cat "$tmp/err"; fail "edited: --spec FILE did not search the edited spec"; }
"$KASGEN" calibrate "$tmp/runs13" --db "$tmp/db13c.xml" >"$tmp/out" 2>"$tmp/err" ||
  { cat "$tmp/err"; fail "edited: calibrate exit"; }
grep -q 'runs13/synctest/results.xml: 4 measured candidates of synctest$' "$tmp/out" &&
  [ "$(grep -c 'note: changed since' "$tmp/err")" = 1 ] ||
  { cat "$tmp/out" "$tmp/err"; fail "edited: calibrate"; }
#     A folder written before the copy (neither the file nor index.txt's line) is searched with
#     the spec the first line names, as before: the edited one's search no longer gives the run's
#     candidates; the original one's does, and the folder then gets its copy.
sed -i '/^Spec copy: /d' "$dir/index.txt" && rm "$dir/synctest.spec"
rc=0
"$KASGEN" tune "$dir" --db "$tmp/db13.xml" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'error: the search no longer gives the candidate' "$tmp/err" ||
  { cat "$tmp/err"; fail "old folder, edited spec: exit $rc"; }
cmp -s "$dir/embed/kas_synctest.cu" "$tmp/source13" || fail "old folder, edited spec: embed changed"
cp "$tmp/specs13/kept.spec" "$tmp/specs13/synctest.spec"
tune13 "old folder" "$tmp/specs13/kept.spec"
grep -q '^Spec copy: synctest.spec, ' "$dir/index.txt" || fail "old folder: no copy line written"
#     A copy that cannot be read or parsed is an error naming it (exit 1, the embed untouched),
#     never a fall back to the spec it came from; nothing in it is run.
bad_copy() { # what, message
  local rc=0
  timeout 20 "$KASGEN" tune "$dir" --db "$tmp/db13.xml" >"$tmp/out" 2>"$tmp/err" </dev/null ||
    rc=$?
  [ "$rc" = 1 ] && grep -qF -- "$2" "$tmp/err" || { cat "$tmp/err"; fail "copy $1: exit $rc"; }
  cmp -s "$dir/embed/kas_synctest.cu" "$tmp/source13" || fail "copy $1: embed changed"
  rm -rf "$dir/synctest.spec" && cp "$tmp/specs13/kept.spec" "$dir/synctest.spec"
}
copy13="$dir/synctest.spec"
rm "$copy13"
bad_copy "missing" "$copy13: error: cannot read: No such file or directory"
grep -q 'note: name the spec .* with --spec FILE' "$tmp/err" || fail "copy missing: no note"
rm "$copy13" && mkfifo "$copy13"
bad_copy "a FIFO" "$copy13: error: cannot read: it is a FIFO"
rm "$copy13" && mkdir "$copy13"
bad_copy "a folder" "$copy13: error: cannot read: it is a folder"
rm "$copy13" && ln -s "$tmp/specs13/kept.spec" "$copy13"
bad_copy "a link" "$copy13: error: cannot read: it is a symbolic link"
if [ "$(id -u)" != 0 ]; then # root reads any file
  chmod 0 "$copy13"
  bad_copy "unreadable" "$copy13: error: cannot read: Permission denied"
fi
sed -i 's/^M_2 = madd33(A, M_1);$/M_2 = madd3x(A, M_1);/' "$copy13"
bad_copy "misspelt" "$copy13:8:7: error: unknown function 'madd3x'"
printf 'matrix3x3 A, F;\ninput A;\nF = madd33(A, A); $(touch %s/PWNED) `touch %s/PWNED`\nreturn F;\n' \
  "$tmp" "$tmp" >"$copy13"
bad_copy "of shell words" "$copy13:3:"
[ ! -e "$tmp/PWNED" ] || fail "copy of shell words: something ran"
dir=$saved_dir

echo "tune: all checks passed"
