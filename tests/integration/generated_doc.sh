#!/usr/bin/env bash
# generated_doc.sh — docs/generated.md's contract of a candidate's entry points is the generated
# code's (it had drifted: launches without ld, a KasCandidate without shapes, code and brief):
#   - the prototypes of kas_candNN_launch, _workspace_bytes, _launch_host and
#     _host_workspace_bytes that the doc gives are those of cand01/kernels.cu and
#     cand01/kernels_host.cpp, compared as return type, name and parameter types (a candidate
#     leaves a parameter it does not use unnamed), for a candidate with workspace and plans of
#     both alignments (stvenant) and one with neither (synctest);
#   - the doc's KasCandidate has the members of common/kas_candidates.h's, in order, with their
#     types (function pointers: their parameter types);
#   - the names the doc says kas_candidates.h gives ("exactly these names") are the ones it
#     declares (macros, arrays, types, enum constants; not the include guard or the per-candidate
#     functions).
set -eu
: "${KASGEN:?set KASGEN to the kasgen binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
doc=docs/generated.md

# The doc's part on candidates: from "Every candidate file" to the Makefile's section, the lines
# of its C code blocks alone.
sed -n '/^Every candidate file/,/^## The Makefile/p' "$doc" |
  awk '/^```/ { inside = !inside; next } inside' >"$tmp/doc.c"
[ -s "$tmp/doc.c" ] || fail "no C code under 'Every candidate file' in $doc"

# protos FILE...: each prototype of a kas_<cand>_launch, _launch_host, _workspace_bytes or
# _host_workspace_bytes, one a line, as "RET NAME(TYPE,TYPE)": comments out, parameter names
# out, the candidate's name as candNN, spaces only where C needs them.
protos() {
  cat "$@" | perl -0ne '
    s{/\*.*?\*/}{}gs;
    my $entry = qr/kas_\w+?_(?:launch_host|launch|host_workspace_bytes|workspace_bytes)/;
    while (/(?:extern "C" )?\b(int|void|size_t)\s+($entry)\s*\(([^)]*)\)\s*[;{]/g) {
      my ($ret, $name, $params) = ($1, $2, $3);
      next if $name =~ /_(aligned|any)_/;
      $name =~ s/^kas_(cand\d\d|candNN)_/kas_candNN_/;
      my @types = map {
        my $p = $_; $p =~ s/\s+/ /g; $p =~ s/^ | $//g;
        $p =~ s/^(.*?[ *])\s*[A-Za-z_]\w*$/$1/ if $p =~ /[ *]/;
        $p =~ s/\s*\*\s*/*/g; $p =~ s/^ | $//g; $p
      } split /,/, $params;
      print "$ret $name(", join(",", @types), ")\n";
    }' | sort -u
}

# members FILE: KasCandidate's members, one a line, as protos writes function pointers' types;
# #ifdef and #endif lines kept in place.
members() {
  perl -0ne '
    /typedef struct \{(.*?)\} KasCandidate;/s or die "no KasCandidate in $ARGV\n";
    my $body = $1;
    $body =~ s{/\*.*?\*/}{}gs;
    $body =~ s/^\s*(#\w+.*?)\s*$/$1;/mg;
    for my $m (split /;/, $body) {
      $m =~ s/\s+/ /g; $m =~ s/^ | $//g;
      next if $m eq "";
      if ($m =~ /^(.*?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)$/) {
        my ($ret, $name) = ($1, $2);
        my @types = map {
          my $p = $_; $p =~ s/^ | $//g;
          $p =~ s/^(.*?[ *])\s*[A-Za-z_]\w*$/$1/ if $p =~ /[ *]/;
          $p =~ s/\s*\*\s*/*/g; $p =~ s/^ | $//g; $p
        } split /,/, $3;
        $ret =~ s/ $//;
        $m = "$ret (*$name)(" . join(",", @types) . ")";
      }
      $m =~ s/\s*\*\s*/*/g unless $m =~ /^#/;
      print "$m\n";
    }' "$1"
}

# names FILE: what a C text declares at file scope: macros, arrays, typedefs, enum constants.
names() {
  perl -0ne '
    s{/\*.*?\*/}{}gs;
    print "$1\n" while /^#define (\w+)/mg;
    print "$1\n" while /^static const [^=;\[]*?\b(\w+)\[/mg;
    print "$1\n" while /^typedef [^;{]*?\b(\w+);/mg;
    print "$1\n" while /^\} (\w+);/mg;
    while (/^enum \{([^}]*)\}/mg) { my $e = $1; print "$1\n" while $e =~ /(\w+)\s*=/g; }
  ' "$1" | grep -vx 'KAS_CANDIDATES_H\|KAS_CANDIDATES_DEVICE\|KAS_CANDIDATES_HOST' | sort -u
}

protos "$tmp/doc.c" >"$tmp/doc.protos"
[ "$(wc -l <"$tmp/doc.protos")" = 4 ] || { cat "$tmp/doc.protos"; fail "the doc: not 4 prototypes"; }
for spec in stvenant synctest; do
  "$KASGEN" "specs/$spec.spec" --top 1 --variants 0 --out "$tmp" >"$tmp/$spec.log" 2>&1 ||
    { cat "$tmp/$spec.log"; fail "kasgen $spec"; }
  protos "$tmp/$spec/cand01/kernels.cu" "$tmp/$spec/cand01/kernels_host.cpp" \
    >"$tmp/$spec.protos"
  diff -u "$tmp/doc.protos" "$tmp/$spec.protos" >&2 ||
    fail "$spec: the launch functions differ from $doc's (- doc, + generated)"
done
grep -q 'void \* /\* no workspace \*/' "$tmp/synctest/cand01/kernels.cu" ||
  fail "synctest's cand01 names its unused workspace: pick a spec whose candidate does not"

members "$tmp/doc.c" >"$tmp/doc.members"
members "$tmp/stvenant/common/kas_candidates.h" >"$tmp/gen.members"
diff -u "$tmp/doc.members" "$tmp/gen.members" >&2 ||
  fail "KasCandidate's members differ from $doc's (- doc, + generated)"
grep -qx 'const char\*brief' "$tmp/gen.members" || fail "the member check sees no brief"

# The block after "and gets (exactly these names):".
sed -n '/^and gets (exactly these names):/,/^The header also declares/p' "$doc" |
  awk '/^```/ { inside = !inside; next } inside' >"$tmp/names.c"
names "$tmp/names.c" >"$tmp/doc.names"
names "$tmp/stvenant/common/kas_candidates.h" >"$tmp/gen.names"
diff -u "$tmp/doc.names" "$tmp/gen.names" >&2 ||
  fail "the names kas_candidates.h declares differ from $doc's (- doc, + generated)"
grep -qx kas_input_layouts "$tmp/gen.names" || fail "the name check sees no kas_input_layouts"

# The embedding API: the functions the doc gives for element-major arguments are those of
# embed/kas_stvenant.h generated so (above); with --layout component, the doc's second block
# (the calls that take ld) replaces their namesakes; the doc's KAS_<STEM>_ macros are the
# header's, in either layout.
# embed_protos FILE STEM: "RET NAME(TYPE,...)" per prototype, the stem as STEM, each run of
# pointers to one real (the inputs, the outputs) as one "const float*..." or "float*...".
embed_protos() {
  STEM=$2 perl -0ne '
    s{/\*.*?\*/}{}gs;
    while (/^(kas_status|size_t|int|const char\s*\*)\s*(kas_[\w<>]+)\s*\(([^)]*)\)\s*;/mg) {
      my ($ret, $name, $params) = ($1, $2, $3);
      $ret =~ s/\s*\*\s*/*/g;
      $name =~ s/^kas_(?:<stem>|$ENV{STEM})/kas_STEM/;
      my @types;
      for my $p (split /,/, $params) {
        $p =~ s/\s+/ /g; $p =~ s/^ | $//g;
        $p =~ s/<(?:input|output)>\.\.\.$//;
        $p =~ s/^(.*?[ *])\s*[A-Za-z_]\w*$/$1/ if $p =~ /[ *]/;
        $p =~ s/\s*\*\s*/*/g; $p =~ s/^ | $//g;
        $p .= "..." if $p eq "const float*" || $p eq "float*";
        push @types, $p unless @types && $types[-1] eq $p && $p =~ /\.\.\.$/;
      }
      print "$ret $name(", join(",", @types), ")\n";
    }' "$1" | sort
}
embed_doc=$(sed -n '/The header declares exactly these functions/,/The header.s macros/p' "$doc")
awk '/^```/ { block++; next } block == 1' <<<"$embed_doc" >"$tmp/embed_elem.c"
awk '/^```/ { block++; next } block == 3' <<<"$embed_doc" >"$tmp/embed_ld.c"
embed_protos "$tmp/embed_elem.c" "<stem>" >"$tmp/doc.embed_elem"
embed_protos "$tmp/embed_ld.c" "<stem>" >"$tmp/doc.embed_ld"
[ "$(wc -l <"$tmp/doc.embed_elem")" = 8 ] && [ "$(wc -l <"$tmp/doc.embed_ld")" = 4 ] ||
  fail "the doc's embedding API: not 8 functions and 4 that take ld"
sed 's/(.*//' "$tmp/doc.embed_ld" | sed 's/$/(/' >"$tmp/ld.names"
{ grep -v -F -f "$tmp/ld.names" "$tmp/doc.embed_elem"; cat "$tmp/doc.embed_ld"; } |
  sort >"$tmp/doc.embed_component"
grep -q 'size_t,size_t,void\*,void\*)$' "$tmp/doc.embed_component" ||
  fail "the check of the embedding API sees no ld"
"$KASGEN" specs/stvenant.spec --top 1 --variants 0 --layout component --out "$tmp/cm" \
  >"$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; fail "kasgen stvenant --layout component"; }
macros() { sed -n "s/^#define $1_\([A-Z_]*\).*/\1/p" "$2" | grep -vx H | sort; } # H: guard
sed -n '/The header.s macros/,/^`_INPUT_REALS`/p' "$doc" >"$tmp/doc.macros.c"
macros 'KAS_<STEM>' "$tmp/doc.macros.c" >"$tmp/doc.macros"
grep -qx LD "$tmp/doc.macros" || fail "the macro check sees no KAS_<STEM>_LD in the doc"
for layout in elem component; do
  header=$tmp/stvenant/embed/kas_stvenant.h
  [ $layout = component ] && header=$tmp/cm/stvenant/embed/kas_stvenant.h
  embed_protos "$header" stvenant >"$tmp/gen.embed_$layout"
  diff -u "$tmp/doc.embed_$layout" "$tmp/gen.embed_$layout" >&2 ||
    fail "embed/kas_stvenant.h ($layout): its functions differ from $doc's (- doc, + generated)"
  macros KAS_STVENANT "$header" >"$tmp/gen.macros"
  diff -u "$tmp/doc.macros" "$tmp/gen.macros" >&2 ||
    fail "embed/kas_stvenant.h ($layout): its KAS_STVENANT_ macros differ from $doc's"
done

echo "generated_doc: $(wc -l <"$tmp/doc.protos") prototypes, $(wc -l <"$tmp/doc.members")" \
  "KasCandidate lines and $(wc -l <"$tmp/doc.names") names as the doc says;" \
  "the embedding API's $(wc -l <"$tmp/doc.embed_elem") functions and" \
  "$(wc -l <"$tmp/doc.macros") macros in both layouts"
