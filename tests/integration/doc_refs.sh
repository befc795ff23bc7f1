#!/usr/bin/env bash
# doc_refs.sh — every section of a document that kasgen's sources cite, in a message or a
# comment, as FILE.md, "Section" (or FILE.md "Section"), exists: a heading of FILE that begins
# with Section.  A message once sent library authors to "library/README.md, Device code", a
# section that was never there (the rules are docs/library-format.md's).  FILE is looked up as
# written, then under docs/.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# FILE<TAB>SECTION<TAB>WHERE, one a line; escaped quotes (in C strings) as plain ones.
grep -rnoP '[\w./-]+\.md,? \\?"[^"\\]+\\?"' src | sed 's/\\"/"/g' |
  perl -ne 'print "$3\t$4\t$1:$2\n" if /^([^:]+):(\d+):([\w.\/-]+\.md),? "([^"]+)"/' >"$tmp/refs"
[ "$(wc -l <"$tmp/refs")" -ge 10 ] || fail "only $(wc -l <"$tmp/refs") references found in src/"
bad=0 checked=0
while IFS=$'\t' read -r file section where; do
  doc=$file
  [ -f "$doc" ] || doc=docs/$file
  if [ ! -f "$doc" ]; then
    echo "$where: cites $file, which does not exist" >&2; bad=$((bad + 1)); continue
  fi
  # headings without their #s and backquotes
  if ! sed -n 's/^#\{1,6\} *//p' "$doc" | tr -d '`' |
    awk -v s="$section" 'index($0, s) == 1 { found = 1 } END { exit !found }'; then
    echo "$where: cites $file, \"$section\", which is no heading of $doc" >&2; bad=$((bad + 1))
  fi
  checked=$((checked + 1))
done <"$tmp/refs"
[ "$bad" = 0 ] || fail "$bad citation(s) of a missing document or section"
echo "doc_refs: $checked citations of a document's section, each found"
