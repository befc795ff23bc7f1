#!/usr/bin/env bash
# layers.sh — kasgen's source files call each other without a circle: from the object files of
# the build, which file defines each function (nm: T) and which files use it (nm: U), the graph
# "file A calls a function of file B" must be acyclic, so that every stage can be read, tested
# and replaced on top of the ones below it (README's "Source layout").  It also holds that no
# stage file implements a command: cmd_* functions live in main.c and the cli_*.c files only,
# and that every source file has its row in the tables of source files (README, docs/design.md).
set -u
BUILD=${BUILD:-build}
objs=$(ls "$BUILD"/obj/*.o 2>/dev/null | grep -v runtime_files) || true
[ -n "$objs" ] || { echo "FAIL: no objects in $BUILD/obj (build first)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for o in $objs; do
  f=$(basename "$o" .o)
  nm "$o" | awk -v f="$f" '$2 == "T" { print $3, f }' >>"$tmp/defs"
  nm "$o" | awk -v f="$f" '$1 == "U" { print $2, f }' >>"$tmp/uses"
done
# Edges "user defining-file" between different files.
awk 'NR == FNR { def[$1] = $2; next } ($1 in def) && def[$1] != $2 { print $2, def[$1] }' \
  "$tmp/defs" "$tmp/uses" | sort -u >"$tmp/edges"
fails=0
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/cycle"; then
  echo "FAIL: the source files call each other in a circle:"
  sed 's/^/    /' "$tmp/cycle"
  fails=$((fails + 1))
fi
bad=$(awk '$1 ~ /^cmd_/ && $2 != "main" && $2 !~ /^cli_/ { print $2 ": " $1 }' "$tmp/defs")
[ -z "$bad" ] || { echo "FAIL: commands implemented in stage files: $bad"; fails=$((fails + 1)); }
n=$(wc -l <"$tmp/edges")
[ "$n" -ge 40 ] || { echo "FAIL: only $n edges: the call graph was not read"; fails=$((fails + 1)); }
# Every source file has its row in README's "Source layout" and in docs/design.md §4's table.
for f in src/*.c; do
  for doc in README.md docs/design.md; do
    grep -q "^| .*\`$(basename "$f")\`" "$doc" ||
      { echo "FAIL: $doc's table of source files has no row for $f"; fails=$((fails + 1)); }
  done
done
((fails == 0)) && echo "layers: $n calls between files, no circle; commands only in cli files; every file in the tables"
((fails == 0))
