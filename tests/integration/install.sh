#!/usr/bin/env bash
# install.sh — `make install` and `make uninstall` into a temporary DESTDIR: the installed binary
# runs a spec with the library and the timing database found from the prefix alone; both man
# pages render without a warning; uninstall leaves the tree exactly as it was, except for what a
# user added or changed under the prefix, which stays; a second install replaces the first; a
# missing or tampered install record removes nothing.  Run from the repository root.
set -euo pipefail
: "${KASGEN:?set KASGEN to the kasgen binary}"
repo=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
dest=$tmp/dest
prefix=/opt/kasgen-test
top=$dest$prefix
build=${BUILD:-build}

make_q() { make -s -C "$repo" BUILD="$build" SAN="${SAN:-0}" "$@"; }

# Every path under DESTDIR with a checksum for files: the "tree" that must come back.
snapshot() {
  (cd "$dest" && find . | LC_ALL=C sort | while read -r p; do
    if [ -f "$p" ]; then echo "$p $(sha256sum <"$p" | cut -d' ' -f1)"; else echo "$p"; fi
  done)
}

# Something of the user's under the prefix before install: it must survive everything.
mkdir -p "$top/bin" "$top/share/man/man1"
echo '#!/bin/sh' >"$top/bin/other-tool"
echo '.TH OTHER 1' >"$top/share/man/man1/other.1"
before=$(snapshot)

make_q install DESTDIR="$dest" PREFIX="$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "make install"; }
for f in bin/kasgen share/kasgen/library/types.ini share/kasgen/library/mmul33/mmul33_2.cu \
         share/kasgen/benchmarks/nvidia-h100-80gb-hbm3.xml share/man/man1/kasgen.1 \
         share/man/man5/kasgen-spec.5 share/doc/kasgen/README.md share/doc/kasgen/design.md \
         share/doc/kasgen/spec-language.md share/doc/kasgen/library-format.md \
         share/kasgen/install-manifest; do
  [ -s "$top/$f" ] || fail "make install did not write $f"
done
[ -x "$top/bin/kasgen" ] || fail "installed kasgen is not executable"
nfiles=$(grep -c '^file ' "$top/share/kasgen/install-manifest")

# The installed binary, run from elsewhere with no hint: library and database from the prefix.
mkdir "$tmp/elsewhere"
(cd "$tmp/elsewhere" && env -u KASGEN_LIBRARY "$top/bin/kasgen" list >"$tmp/list.out") ||
  fail "installed kasgen list"
grep -q "^library $top/bin/../share/kasgen/library:\|^library $top/share/kasgen/library:" "$tmp/list.out" ||
  { head -1 "$tmp/list.out"; fail "installed kasgen does not use the installed library"; }
(cd "$tmp/elsewhere" && env -u KASGEN_LIBRARY "$top/bin/kasgen" "$repo/specs/synctest.spec" --top 2 \
  --out "$tmp/out" >"$tmp/run.out" 2>&1) || { cat "$tmp/run.out"; fail "installed kasgen on synctest"; }
grep -q "from $top/.*share/kasgen/benchmarks/nvidia-h100-80gb-hbm3.xml" "$tmp/run.out" ||
  { head -3 "$tmp/run.out"; fail "installed kasgen does not use the installed timing database"; }
[ -s "$tmp/out/synctest/cand01/kernels.cu" ] || fail "installed kasgen wrote no candidate"
# index.txt names the database by its absolute path, without the binary's "bin/..": it is read
# from inside the folder, where a path as found means nothing.
grep -qx "Prediction: $top/share/kasgen/benchmarks/nvidia-h100-80gb-hbm3.xml.  .*" \
  "$tmp/out/synctest/index.txt" || { sed -n 2p "$tmp/out/synctest/index.txt"; fail "index.txt db path"; }

# The checkout's binary (build/kasgen) from elsewhere, with no hint: the checkout's library
# (../library beside the binary) as the checkout's database (../benchmarks); it failed to find
# the library though it found the database.
checkout_bin=$(realpath "$KASGEN")
(cd "$tmp/elsewhere" && env -u KASGEN_LIBRARY "$checkout_bin" list >"$tmp/list.out") ||
  fail "the checkout's kasgen list from elsewhere finds no library"
grep -q "^library $(dirname "$checkout_bin")/../library:" "$tmp/list.out" ||
  { head -1 "$tmp/list.out"; fail "the checkout's kasgen does not use the checkout's library"; }
(cd "$tmp/elsewhere" && env -u KASGEN_LIBRARY KASGEN_GPU= "$checkout_bin" \
  "$repo/specs/synctest.spec" --top 2 --out "$tmp/out2" >"$tmp/run.out" 2>&1) ||
  { cat "$tmp/run.out"; fail "the checkout's kasgen on synctest from elsewhere"; }
grep -qx "Prediction: $repo/benchmarks/nvidia-h100-80gb-hbm3.xml.  .*" \
  "$tmp/out2/synctest/index.txt" || { sed -n 2p "$tmp/out2/synctest/index.txt"; fail "db path"; }

# The man pages render with every groff warning on, and say what they are.
for page in share/man/man1/kasgen.1 share/man/man5/kasgen-spec.5; do
  warnings=$(groff -ww -man -Tutf8 -z "$top/$page" 2>&1) || fail "groff failed on $page"
  [ -z "$warnings" ] || fail "$page: $warnings"
done
page_text() { groff -man -Tascii "$1" | tr -s ' '; } # grep -q on a pipe would break pipefail
[[ "$(page_text "$top/share/man/man1/kasgen.1")" == *"kasgen - generate fused CUDA"* ]] ||
  fail "kasgen.1 has no NAME line"
[[ "$(page_text "$top/share/man/man5/kasgen-spec.5")" == *"kasgen-spec - the language"* ]] ||
  fail "kasgen-spec.5 has no NAME line"

# Installing again replaces the first install: same record, nothing doubled.
make_q install DESTDIR="$dest" PREFIX="$prefix" >/dev/null || fail "second make install"
[ "$(grep -c '^file ' "$top/share/kasgen/install-manifest")" = "$nfiles" ] ||
  fail "a second install recorded a different number of files"

make_q uninstall DESTDIR="$dest" PREFIX="$prefix" >"$tmp/uninstall.log" || fail "make uninstall"
grep -q "($nfiles files removed, 0 kept)" "$tmp/uninstall.log" ||
  { cat "$tmp/uninstall.log"; fail "uninstall did not report $nfiles files removed"; }
[ "$(snapshot)" = "$before" ] ||
  { diff <(echo "$before") <(snapshot) | head || true; fail "uninstall did not restore the tree"; }

# A user's own file under an installed folder and a changed installed file both stay.
make_q install DESTDIR="$dest" PREFIX="$prefix" >/dev/null || fail "third make install"
echo mine >"$top/share/kasgen/library/my-notes.txt"
echo "local edit" >>"$top/share/doc/kasgen/README.md"
make_q uninstall DESTDIR="$dest" PREFIX="$prefix" >"$tmp/uninstall2.log" 2>&1 || fail "make uninstall 2"
grep -q "kept $top/share/doc/kasgen/README.md (changed since it was installed)" "$tmp/uninstall2.log" ||
  { cat "$tmp/uninstall2.log"; fail "uninstall did not say it kept the changed README"; }
[ "$(cat "$top/share/kasgen/library/my-notes.txt")" = mine ] || fail "uninstall removed a user's file"
grep -q "local edit" "$top/share/doc/kasgen/README.md" || fail "uninstall removed a changed file"
[ ! -e "$top/bin/kasgen" ] && [ ! -e "$top/share/kasgen/library/types.ini" ] ||
  fail "uninstall left installed files"
rm "$top/share/kasgen/library/my-notes.txt" "$top/share/doc/kasgen/README.md"
rmdir "$top/share/kasgen/library" "$top/share/kasgen" "$top/share/doc/kasgen" "$top/share/doc"

# No record: nothing to do, an error, nothing touched.
rc=0
make_q uninstall DESTDIR="$dest" PREFIX="$prefix" >"$tmp/none.log" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "uninstall without an install record succeeded"
grep -q "no kasgen install recorded" "$tmp/none.log" || { cat "$tmp/none.log"; fail "no clear message"; }
[ "$(snapshot)" = "$before" ] || fail "a failed uninstall changed the tree"

# A tampered record that points outside the prefix: refused before anything is removed.
make_q install DESTDIR="$dest" PREFIX="$prefix" >/dev/null || fail "fourth make install"
echo "victim" >"$tmp/victim"
echo "file $(sha256sum <"$tmp/victim" | cut -d' ' -f1) ../../../victim" \
  >>"$top/share/kasgen/install-manifest"
rc=0
make_q uninstall DESTDIR="$dest" PREFIX="$prefix" >"$tmp/tamper.log" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "uninstall followed a record pointing outside the prefix"
grep -q "refusing the path" "$tmp/tamper.log" || { cat "$tmp/tamper.log"; fail "no refusal message"; }
[ -e "$tmp/victim" ] && [ -e "$top/bin/kasgen" ] || fail "a refused uninstall removed files"

# A relative PREFIX is refused.
rc=0
make_q install DESTDIR="$dest" PREFIX=relative >"$tmp/rel.log" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "PREFIX must be an absolute path" "$tmp/rel.log" ||
  { cat "$tmp/rel.log"; fail "a relative PREFIX was accepted"; }
echo "install: $nfiles files installed, run from the prefix, man pages clean, uninstall exact"
