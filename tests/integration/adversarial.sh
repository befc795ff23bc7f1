#!/usr/bin/env bash
# adversarial.sh — the reproducers of issue #16 (reliability and security), through the command
# line: nothing from an input file is ever executed, no file outside the output folder (or of the
# user's inside it) is changed or deleted, no input crashes kasgen or makes it hang, every failed
# write exits 1 naming what was lost, and every refusal says clearly what is wrong.  Each case
# runs under `timeout 20` so that a hang is a failure, not a stuck suite.  The search's own
# limits (64 independent calls, big40, chain12 --top 1000) are tested with the search.
set -u
: "${KASGEN:?set KASGEN to the kasgen binary}"
: "${KASGEN_LIBRARY:?set KASGEN_LIBRARY to the library folder}"
export KASGEN_LIBRARY
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
repo=$OLDPWD
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# k ARGS...: kasgen with a 20 s limit; output in $tmp/out and $tmp/err, status in $rc.
k() { rc=0; timeout 20 "$KASGEN" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?; }
expect() { # expect RC MESSAGE-REGEX NAME: the last k's status and a line of its stderr
  [ "$rc" = "$1" ] || { fail "$3: exit $rc, expected $1"; sed 's/^/    /' "$tmp/err" | head -5 >&2; return; }
  [ -z "$2" ] || grep -qE -- "$2" "$tmp/err" || { fail "$3: no message matching '$2'"; sed 's/^/    /' "$tmp/err" | head -5 >&2; }
}
spec=$repo/specs/synctest.spec
gen() { k "$spec" --no-db --top 1 --out "$1"; } # a generated folder: $1/synctest
# lib_with DIR FILE MAKER: the fixture library copied to DIR, with FILE replaced by `MAKER FILE`
lib_with() { cp -r "$repo/tests/fixtures/lib_ok" "$1" && rm "$1/$2" && "$3" "$1/$2"; }

# ---- nothing from a results file is executed ------------------------------------------------
mkdir inj
# gnuplot commands after a quote that would close the title's string (';' separates commands)
inject_spec="x'; system \\&quot;touch PWNED1\\&quot;; \`touch PWNED2\`; print '"
inject_gpu="y'; system 'touch PWNED3'; set output '\/tmp\/x'"
sed -e "s/spec=\"stvenant\"/spec=\"$inject_spec\"/" \
    -e "s/name=\"NVIDIA H100 80GB HBM3\"/name=\"$inject_gpu\"/" \
    "$repo/tests/fixtures/results/good/results.xml" >inj/results.xml
grep -q "x'; system &quot;touch PWNED1" inj/results.xml || fail "injection fixture not built"
k report inj
expect 0 "" "report of a results file with commands in its names"
ls PWNED* inj/PWNED* "$repo"/PWNED* >/dev/null 2>&1 && fail "report executed a command from results.xml"
if command -v gnuplot >/dev/null; then
  head -c 4 inj/plot.png | grep -q PNG || fail "report: no plot drawn for the injection file"
fi
# A control character in a name (a newline starts a gnuplot command or forges a line of output,
# a C1 code U+009B a terminal escape): refused at its line, before anything is printed or run.
mkdir ctl
sed -e 's/spec="stvenant"/spec="x\&#10;system \&quot;touch PWNED4\&quot;\&#10;`touch PWNED5`"/' \
    "$repo/tests/fixtures/results/good/results.xml" >ctl/results.xml
k report ctl
expect 1 'ctl/results.xml:3: error: the attribute spec of <kasgen-results> holds a control '\
'character \(\\n\)' "report: a newline in the spec's name"
grep -q 'PWNED' "$tmp/out" && fail "report printed a name holding a newline"
ls PWNED* ctl/PWNED* "$repo"/PWNED* >/dev/null 2>&1 && fail "report executed a command from a name"
sed -e 's/name="NVIDIA H100 80GB HBM3"/name="GPU\&#155;31mred"/' \
    "$repo/tests/fixtures/results/good/results.xml" >ctl/results.xml
k report ctl
expect 1 'ctl/results.xml:4: error: the attribute name of <device> holds a control character '\
'\(U\+009B\)' "report: a C1 code in the device's name"
# A file's own name holding a newline and an escape: shown with '?' for them, forging nothing.
k report "$(printf 'ctl/x\nerror: forged\033[2J')"
expect 1 '^ctl/x\?error: forged\?\[2J: error: cannot open' "report: control characters in a name"
grep -q $'^error: forged\|\033' "$tmp/err" && fail "a file's name forged a line or an escape"
# A right-to-left override (U+202E) would show the name reversed: "Trojan Source".
sed -e 's/spec="stvenant"/spec="stv\&#8238;tnanev"/' \
    "$repo/tests/fixtures/results/good/results.xml" >ctl/results.xml
k report ctl
expect 1 'ctl/results.xml:3: error: the attribute spec of <kasgen-results> holds a control '\
'character \(U\+202E\)' "report: a bidirectional override in the spec's name"
# A DTD (entities) in a results file: refused where it starts, quickly.
mkdir ent
{ echo '<?xml version="1.0"?>'; echo '<!DOCTYPE r [<!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaa">]>'
  printf '<kasgen-results version="1" spec="'; for i in $(seq 4000); do printf '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'; done
  echo '"/>'; } >ent/results.xml
k report ent
expect 1 "ent/results.xml:2:[0-9]+: error: a document type declaration" "report: 40,000 entity references"

# ---- nothing of the user's is lost ----------------------------------------------------------
mkdir u && echo keep >u/important.txt
gen o1; d=o1/synctest
expect 0 "" "first generation"
# 1. a symbolic link where a run output lives, and a manifest entry through it
ln -s ../../u "$d/build"
echo 'build/important.txt' >>"$d/.kasgen-manifest"
gen o1
expect 1 "\.kasgen-manifest:[0-9]+:1: error: manifest entry 'build/important.txt' is not a path kasgen writes \(a run output" "manifest through a linked run output"
[ "$(cat u/important.txt 2>/dev/null)" = keep ] || fail "a file outside the folder was deleted through build/"
rm "$d/build"; sed -i '/^build\//d' "$d/.kasgen-manifest"
# 2. a manifest listing results.xml
echo measured >"$d/results.xml"; echo 'results.xml' >>"$d/.kasgen-manifest"
gen o1
expect 1 "manifest entry 'results.xml' is not a path kasgen writes" "manifest listing results.xml"
[ "$(cat "$d/results.xml")" = measured ] || fail "results.xml was deleted"
sed -i '/^results.xml$/d' "$d/.kasgen-manifest"
# 3. a user's file named like a temporary file
echo notes >"$d/.notes.kasgen-tmp-abc123"
gen o1
expect 1 "\.notes\.kasgen-tmp-abc123: error: a file not written by kasgen" "user file named like a temporary"
[ "$(cat "$d/.notes.kasgen-tmp-abc123")" = notes ] || fail "a user's temp-like file was deleted"
rm "$d/.notes.kasgen-tmp-abc123"
gen o1
expect 0 "" "rerun over the cleaned folder"
# 4. plot.png a symbolic link to a user's file: report replaces the link, not the file
mkdir rep && cp "$repo/tests/fixtures/results/good/results.xml" rep/ && echo mine >u/picture.png
ln -s ../u/picture.png rep/plot.png
k report rep
expect 0 "" "report with plot.png a link"
[ "$(cat u/picture.png)" = mine ] || fail "report wrote through the plot.png link"
# 5. specs named ...spec and ..spec stay inside --out, in sanitized folders
mkdir -p outer/o5 && echo 'users own' >outer/Makefile && printf 'Makefile\n' >outer/.kasgen-manifest
cp "$spec" ./...spec && cp "$spec" ./..spec
k ./...spec --no-db --top 1 --out outer/o5
expect 0 "warning: the spec's name is not a plain file name; its output and generated code are named '__'" "...spec"
k ./..spec --no-db --top 1 --out outer/o5
expect 0 "named '_'" "..spec"
[ -f outer/o5/__/Makefile ] && [ -f outer/o5/_/Makefile ] || fail "...spec/..spec: not in sanitized folders"
[ "$(cat outer/Makefile)" = 'users own' ] && [ "$(cat outer/.kasgen-manifest)" = Makefile ] \
  || fail "...spec wrote outside --out"
[ "$(ls -A outer/o5 | tr '\n' ' ')" = "_ __ " ] || fail "...spec: files directly in --out: $(ls -A outer/o5)"
# 6. the output folder itself a symbolic link
mkdir o6 && ln -s ../u o6/synctest
gen o6
expect 1 "o6/synctest: error: exists and is not a folder \(a symbolic link\)" "output folder is a link"
# refused before the search (cli_check_output): no ranking printed, no search note
[ -s "$tmp/out" ] && fail "output folder a link: ranked before the refusal"
grep -q "note: search:" "$tmp/err" && fail "output folder a link: searched before the refusal"
[ "$(ls u | tr '\n' ' ')" = "important.txt picture.png " ] || fail "files appeared in the link's target"

# ---- no crash ---------------------------------------------------------------------------------
db() { # db FILE WARP NS: a database with that warp size and one routine timed at NS
  sed -e "s/warp-size=\"32\"/warp-size=\"$2\"/" -e "s/ns=\"1.0\"/ns=\"$3\"/" \
    "$repo/tests/fixtures/db/good.xml" >"$1"
}
db warp.xml 2147483647 1.0
k plan "$spec" --db warp.xml
expect 1 "warp.xml:8: error: attribute 'warp-size' must be an integer in \[1, 1024\]" "warp-size 2^31-1"
db warp30.xml 1073741824 1.0
k plan "$spec" --db warp30.xml
expect 1 "warp30.xml:8: error: attribute 'warp-size'" "warp-size 2^30"
db slow.xml 32 1e300
k plan "$spec" --db slow.xml
expect 1 "slow.xml:11: error: attribute 'ns' = 1e\+300 is outside" "timings of 1e300"
grep -q "launchable" "$tmp/err" && fail "timings of 1e300 blamed on the spec"
# Numbers are plain decimals: strtod's hex floats and strtol's leading spaces are refused.
db hex.xml 32 0x1p3
k plan "$spec" --db hex.xml
expect 1 "hex.xml:11: error: attribute 'ns' must be a finite non-negative number" "a hex float"
db space.xml " 32" 1.0
k plan "$spec" --db space.xml
expect 1 "space.xml:8: error: attribute 'warp-size' must be an integer in \[1, 1024\], not ' 32'" \
  "an integer after a space"
# The database's names are printed too ("predicting for <device>"): a newline is refused.
sed 's/name="Test GPU"/name="Test\&#10;forged line"/' "$repo/tests/fixtures/db/good.xml" >ctl.xml
k "$spec" --db ctl.xml --top 1 --out o_ctl
expect 1 "ctl.xml:8: error: the attribute name of <device> holds a control character \(\\\\n\)" \
  "database: a newline in the device's name"
grep -q 'forged line' "$tmp/out" && fail "a device name holding a newline was printed"

# ---- bounded work on any input -----------------------------------------------------------------
{ echo '<?xml version="1.0"?>'; echo '<!DOCTYPE k [<!ENTITY e "eeeeeeeeeeeeeeeeeeee">]>'
  printf '<kasgen-timings version="1"><device name="'; for i in $(seq 4000); do printf '&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;'; done
  echo '"/></kasgen-timings>'; } >entities.xml
k plan "$spec" --db entities.xml
expect 1 "entities.xml:2:[0-9]+: error: a document type declaration" "database with 40,000 entity references"
python3 - "$repo/tests/fixtures/db/good.xml" >many.xml <<'EOF'
import sys
head = open(sys.argv[1]).read().split('<routine')[0]
print(head + ''.join('<routine impl="x%d_1" kind="load" index="0" placement="shared"><point e="32" '
                     'extra-smem="0" ns="1"/></routine>\n' % i for i in range(100000)) + '</kasgen-timings>')
EOF
k plan "$spec" --db many.xml --top 1
expect 0 "" "database of 100,000 routines"
cp -r "$repo/tests/fixtures/lib_ok" lib35
{ for i in $(seq 35000); do echo 'KAS_DEV void d_vcopy3_1_compute(KAS_BUF a,'; done
  cat "$repo/tests/fixtures/lib_ok/vcopy3/vcopy3_1.cu"; } >lib35/vcopy3/vcopy3_1.cu
k list --library lib35
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail ".cu of 35,000 unclosed definitions: exit $rc"
cp -r "$repo/tests/fixtures/lib_ok" libtypes
python3 -c "print(''.join('[t%d]\nsize = 1\n' % i for i in range(100000)), end='')" >>libtypes/types.ini
k list --library libtypes
expect 1 "types.ini:[0-9]+:1: error: more than 1000 types" "types.ini of 100,000 types"
gen o7
python3 -c "print(''.join('cand%06d/kernels.cu\n' % i for i in range(200000)), end='')" >>o7/synctest/.kasgen-manifest
gen o7
expect 0 "" "manifest of 200,000 lines"
[ "$(wc -l <o7/synctest/.kasgen-manifest)" -lt 100 ] || fail "the 200,000 stale entries stayed in the manifest"
mkdir big
python3 - >big/results.xml <<'EOF'
n = 150000
print('<?xml version="1.0"?>\n<kasgen-results version="1" spec="big">\n<device name="G" copy-gbs="3000"/>\n'
      '<run n="100" reps="3" input-copies="1" bytes-per-element="8"/>')
for i in range(1, n + 1):
    print('<candidate name="c%d" kernels="a_1" nkernels="1" predicted-ns="%g" measured-ns="%g" melem-s="5" '
          'compulsory-gbs="1" copy-percent="1" predicted-rank="%d" measured-rank="%d" correct="1" error="0"/>'
          % (i, 1 + i * 1e-6, 2 - i * 1e-6, i, n + 1 - i))
print('</kasgen-results>')
EOF
k report big
expect 0 "" "report of 150,000 rows"
grep -q 'candidates): -1.000' "$tmp/out" || fail "report of 150,000 rows: Spearman"
mkfifo fifo.spec fifo.xml
k fifo.spec
expect 1 "fifo.spec: error: cannot read: it is a FIFO \(named pipe\), not a regular file" "FIFO as the spec"
k plan "$spec" --db fifo.xml
expect 1 "fifo.xml: error: cannot read: it is a FIFO" "FIFO as the database"
lib_with libfifo vcopy3/vcopy3_1.cu mkfifo
k list --library libfifo
expect 1 "vcopy3_1.cu: error: cannot read: it is a FIFO" "FIFO as a library .cu"

# ---- failed writes exit 1 and say what was lost ---------------------------------------------------
k check "$spec" --dot /dev/full
expect 1 "/dev/full: error: write failed: No space left on device; the DAG picture is lost" "--dot /dev/full"
k "$spec" --no-db --top 1 --out o8 --dot /dev/full
expect 1 "the DAG picture is lost" "generate --dot /dev/full"
rc=0; timeout 20 "$KASGEN" plan "$spec" --no-db >/dev/full 2>"$tmp/err" || rc=$?
expect 1 "cannot write the standard output: No space left on device" "plan >/dev/full"
# A disk that fills up half way (a file size limit; SIGXFSZ ignored, so writes fail with EFBIG):
# exit 1 naming the file, and the rerun accepts the folder, kasgen's own files all listed.
rc=0; (trap '' XFSZ; ulimit -f 8; exec timeout 20 "$KASGEN" "$spec" --no-db --top 1 --out o9) >"$tmp/out" 2>"$tmp/err" || rc=$?
expect 1 "error: cannot write: File too large; this file is lost" "disk full during generation"
gen o9
expect 0 "" "rerun after a disk-full failure"
make -s -C o9/synctest check-cpu >"$tmp/out" 2>&1 || fail "rerun after disk full: generated code does not pass check-cpu"
# A spec path holding */ (and a newline) stays inside the generated comments: the code compiles.
mkdir -p "p*" && cp "$spec" "p*/synctest.spec"
k "p*/synctest.spec" --no-db --top 1 --out o10
expect 0 "" "spec path with */"
grep -q 'from p\*\\057synctest.spec' o10/synctest/cand01/kernels.cu || fail "spec path not escaped in the banner"
make -s -C o10/synctest check-cpu >"$tmp/out" 2>&1 || { fail "spec path with */: generated code does not compile"; tail -5 "$tmp/out"; }

# ---- clear messages ---------------------------------------------------------------------------
mkdir folder.spec folder.xml
k folder.spec
expect 1 "folder.spec: error: cannot read: it is a folder, not a regular file" "folder as the spec"
k plan "$spec" --db folder.xml
expect 1 "folder.xml: error: cannot read: it is a folder" "folder as the database"
# A database cut off inside a start tag (a copy interrupted): not well-formed, said where it
# ends, and no error about the attributes the cut took away.  The message is libxml2's first
# error, the cause (the tag left open), not its last, a consequence (before: "Premature end of
# data in tag kasgen-timings").
head -n 5 "$repo/benchmarks/nvidia-h200.xml" >cut.xml
k plan "$spec" --db cut.xml
expect 1 "cut.xml:6:1: error: not well-formed XML: Couldn't find end of Start Tag device line 3" \
  "database cut mid-tag"
grep -q 'lacks the attribute' "$tmp/err" && fail "database cut mid-tag: the cut attributes blamed"
grep -q 'Premature end' "$tmp/err" && fail "database cut mid-tag: a consequence reported"
# A results file whose <run> misses its '/' and whose first <candidate> is left open: the first
# error, where that tag should have ended (6:28), not the last at the end of the file (7:1,
# "Premature end of data", before).
mkdir open
sed -e '5s|"/>$|">|' -e '7,$d' \
  -e 's|<candidate name="cand01" .*|<candidate name="cand01" </kasgen-results>|' \
  "$repo/tests/fixtures/results/good/results.xml" >open/results.xml
k report open
expect 1 "open/results.xml:6:28: error: not well-formed XML: error parsing attribute name" \
  "a start tag left open"
grep -q 'Premature end' "$tmp/err" && fail "a start tag left open: a consequence reported"
lib_with libdir vcopy3/vcopy3_1.cu mkdir
k list --library libdir
expect 1 "vcopy3_1.cu: error: cannot read: it is a folder" "folder as a library .cu"
lib_with libini vcopy3/vcopy3_1.ini mkdir
k list --library libini
expect 1 "vcopy3_1.ini: error: cannot read: it is a folder" "folder as an INI file"
k ""
expect 1 "error: an empty file name was given where a file to read is expected" "kasgen \"\""
k report ""
expect 1 "error: an empty name was given; expected the folder holding results.xml, or a results file" "kasgen report \"\""
# The line shown under a message is the input's own: a control character in it prints as '?'
# (an escape sequence there would reach the terminal), one a byte so the caret stays in place.
printf 'bogus \033[2J line\n' >esc.spec && cat "$spec" >>esc.spec
k check esc.spec
expect 1 "esc.spec:1:7: error: stray byte 0x1b" "a spec line holding an escape"
grep -q "$(printf '\033')" "$tmp/err" && fail "an escape sequence in a spec reached the terminal"
grep -q '^     1 | bogus ?\[2J line$' "$tmp/err" || fail "a spec's line shown without its '?'"
mkdir esc && sed 's/name="NVIDIA H100 80GB HBM3"/name="GPU\x9b31m"/' \
  "$repo/tests/fixtures/results/good/results.xml" >esc/results.xml
k report esc
expect 1 "esc/results.xml:4:[0-9]+: error: not well-formed XML" "a raw C1 byte in a results file"
grep -q 'name="GPU?31m"' "$tmp/err" || fail "a results file's line shown without its '?'"

[ "$fails" = 0 ] && echo "adversarial: all checks passed"
exit "$((fails > 0))"
