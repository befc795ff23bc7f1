#!/usr/bin/env bash
# codegen.sh — the generated code of every seed spec builds and is right, with no GPU:
#   kasgen SPEC --top 10 --out TMP; every candidate compiled by nvcc -arch=sm_90 (one nvcc
#   invocation per spec, through common/all_kernels.cu), the embedding API and the C FEM driver
#   compiled and linked, and `make check-cpu` (every candidate run thread by thread on the CPU,
#   both thread orders, against the float64 CPU graph).  Then the output-folder promise: a second
#   run over a built folder works and keeps the run outputs; a foreign file makes kasgen refuse
#   (exit 1) and leaves it, and everything else, untouched.
# At most 2 parallel jobs (the CI machine has 2 cores).
set -eu
: "${KASGEN:?set KASGEN to the kasgen binary}"
root=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
NVCC=${NVCC:-$(tools/find-nvcc.sh 2>/dev/null || true)} # tools/find-nvcc.sh decides
have_nvcc=1
[ -x "$NVCC" ] || { have_nvcc=0; echo "note: no nvcc; GPU compilation not checked" >&2; }
export NVCC

for spec in stvenant stvenant_inner bigfusion bigfusion_full synctest; do
  out="$tmp/$spec"
  "$KASGEN" "specs/$spec.spec" --top 10 --out "$tmp" >"$tmp/$spec.log" 2>&1 \
    || { cat "$tmp/$spec.log"; fail "$spec: kasgen exit $?"; }
  for f in Makefile index.txt plot.gp .kasgen-manifest common/harness.cu common/kas_candidates.h \
           common/all_kernels.cu common/cpu_graph.c common/check_cpu.cpp cand01/kernels.cu \
           unfused/kernels.cu "embed/kas_$spec.h" "embed/kas_$spec.cu"; do
    [ -s "$out/$f" ] || fail "$spec: $f missing"
  done
  # The chosen fusions as a picture: one cluster per kernel of the candidate.
  grep -q 'subgraph cluster_k0' "$out/cand01/fusion.dot" || fail "$spec: cand01/fusion.dot has no kernel cluster"
  if command -v dot >/dev/null; then [ -s "$out/cand01/fusion.svg" ] || fail "$spec: no fusion.svg"; fi
  ncand=$(ls -d "$out"/cand[0-9]* | wc -l)
  [ "$ncand" -ge 1 ] && [ "$ncand" -le 10 ] || fail "$spec: $ncand candidates"
  grep -q "^#define KAS_NCANDIDATES $((ncand + 1))$" "$out/common/kas_candidates.h" \
    || fail "$spec: kas_candidates.h does not list $ncand candidates + unfused"
  # The manifest lists exactly the files present.
  diff <(grep -v '^#' "$out/.kasgen-manifest") <(cd "$out" && find . -type f ! -name .kasgen-manifest | sed 's|^\./||' | LC_ALL=C sort) \
    || fail "$spec: manifest and folder differ"

  targets=check-cpu
  ((have_nvcc)) && targets="compile-check check-cpu"
  make -C "$out" -j2 $targets NVCC="$NVCC" >"$tmp/$spec.make" 2>&1 \
    || { tail -40 "$tmp/$spec.make"; fail "$spec: make $targets"; }
  grep -q "^$spec: $((ncand + 1)) of $((ncand + 1)) candidates passed" "$tmp/$spec.make" \
    || { tail -20 "$tmp/$spec.make"; fail "$spec: check-cpu did not pass every candidate"; }
  if ((have_nvcc)); then
    [ -s "$out/build/all_kernels.o" ] || fail "$spec: no all_kernels.o"
    # The C FEM driver: gcc for the C side, nvcc for the embedded winner; links with -lcudart.
    make -C tests/fem_driver GEN="$out" BUILD_DIR="$tmp/fem-$spec" -j2 >"$tmp/$spec.fem" 2>&1 \
      || { tail -30 "$tmp/$spec.fem"; fail "$spec: fem_driver build"; }
    [ -x "$tmp/fem-$spec/fem_driver" ] || fail "$spec: no fem_driver binary"
  fi
  echo "$spec: $ncand candidates + unfused generated, compiled, checked on the CPU"
done

# Second run over a built folder (build/ from make, results.xml copied back): works, rewrites
# kasgen's files, leaves the run outputs alone.
out="$tmp/synctest"
echo '<kasgen-results/>' >"$out/results.xml"
echo 'stale' >"$out/index.txt"
"$KASGEN" specs/synctest.spec --top 10 --out "$tmp" >/dev/null 2>&1 || fail "second run: exit $?"
grep -q 'candidates, best predicted first' "$out/index.txt" || fail "second run did not rewrite index.txt"
[ "$(cat "$out/results.xml")" = '<kasgen-results/>' ] || fail "second run touched results.xml"
[ -x "$out/build/check_cpu" ] || fail "second run removed build/"

# Fewer candidates: the files of the dropped ones (kasgen's own) go away.
"$KASGEN" specs/synctest.spec --top 1 --out "$tmp" >/dev/null 2>&1 || fail "--top 1 rerun: exit $?"
[ -d "$out/cand01" ] && [ ! -e "$out/cand02" ] || fail "--top 1 rerun: stale candidates left"

# A foreign file: refusal, exit 1, before anything is written.
echo 'my notes' >"$out/cand01/notes.txt"
sums_before=$(cd "$out" && find . -type f ! -path './build/*' -exec md5sum {} + | sort)
rc=0
"$KASGEN" specs/synctest.spec --top 10 --out "$tmp" >"$tmp/refuse.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "foreign file: exit $rc, expected 1"
grep -q "cand01/notes.txt: error: a file not written by kasgen" "$tmp/refuse.log" \
  || { cat "$tmp/refuse.log"; fail "foreign file: message does not name the file"; }
sums_after=$(cd "$out" && find . -type f ! -path './build/*' -exec md5sum {} + | sort)
[ "$sums_before" = "$sums_after" ] || fail "foreign file: the folder changed"
echo "codegen: all checks passed"
