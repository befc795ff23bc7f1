#!/usr/bin/env bash
# gpu_db.sh — the default timing database is this machine's GPU's (src/local_gpu.c,
# cli_load_timingdb): named by $KASGEN_GPU, else by nvidia-smi (faked here on $PATH), the
# main job predicts from benchmarks/<slug>.xml when it exists and records it in generation.ini
# (tune repeats the generation wherever it runs); a GPU without a database gets a warning and
# the H100's; none, two GPUs of different names, a name with control characters, a failing or a
# hanging nvidia-smi choose nothing and say nothing, in bounded time.  --db always wins.
set -u
: "${KASGEN:?set KASGEN to the kasgen binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
h200=$(realpath benchmarks/nvidia-h200.xml)

# gen LABEL: the main job on stvenant into $tmp/LABEL, its stdout and stderr kept there
gen() {
  "$KASGEN" specs/stvenant.spec --top 2 --out "$tmp/$1" >"$tmp/$1.out" 2>"$tmp/$1.err" ||
    fail "$1: exit $?"
}

KASGEN_GPU="NVIDIA H200" gen named
grep -q "^predicting for NVIDIA H200, this machine's GPU, from .*nvidia-h200.xml" "$tmp/named.out" ||
  fail "named: not the H200's database"
grep -qx "db = $h200" "$tmp/named/stvenant/generation.ini" || fail "named: db not recorded"
grep -q 'Prediction: .*nvidia-h200.xml' "$tmp/named/stvenant/index.txt" || fail "named: index.txt"
grep -q warning "$tmp/named.err" && fail "named: a warning"

KASGEN_GPU="NVIDIA RTX 4090" gen other
grep -q '^predicting for NVIDIA H100 80GB HBM3 from' "$tmp/other.out" || fail "other: not the H100's"
grep -q "warning: this machine's GPU is NVIDIA RTX 4090, but the predictions are for NVIDIA H100.*no nvidia-rtx-4090.xml beside it" \
  "$tmp/other.err" || fail "other: no warning"
grep -q '^db = ' "$tmp/other/stvenant/generation.ini" && fail "other: the default recorded"

KASGEN_GPU="NVIDIA H200" "$KASGEN" specs/stvenant.spec --top 2 --out "$tmp/given" \
  --db benchmarks/nvidia-h100-80gb-hbm3.xml >"$tmp/given.out" 2>&1 || fail "given: exit"
grep -q '^predicting for NVIDIA H100 80GB HBM3 from benchmarks/' "$tmp/given.out" || fail "given: --db lost"

# nvidia-smi on $PATH, faked: what it prints decides
mkdir "$tmp/bin"
smi() { printf '#!/bin/sh\n%s\n' "$1" >"$tmp/bin/nvidia-smi"; chmod +x "$tmp/bin/nvidia-smi"; }
unset KASGEN_GPU
smi 'printf "NVIDIA H200\nNVIDIA H200\n"'
PATH="$tmp/bin:$PATH" gen smi
grep -q "^predicting for NVIDIA H200, this machine's GPU," "$tmp/smi.out" || fail "smi: two H200s"
for case in 'printf "NVIDIA H200\nNVIDIA H100 80GB HBM3\n"' 'printf "NVIDIA H200\033[2J\n"' \
  'exit 3' 'printf ""' 'exec sleep 30'; do
  smi "$case"
  t0=$SECONDS
  PATH="$tmp/bin:$PATH" gen none
  grep -q '^predicting for NVIDIA H100 80GB HBM3 from' "$tmp/none.out" &&
    ! grep -q warning "$tmp/none.err" || fail "nvidia-smi '$case': not the default, quietly"
  ((SECONDS - t0 < 20)) || fail "nvidia-smi '$case': took $((SECONDS - t0)) s"
done
((fails == 0)) && echo "gpu_db: all checks passed"
((fails == 0))
