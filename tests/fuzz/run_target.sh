#!/usr/bin/env bash
# tests/fuzz/run_target.sh — seeds and runs one of the fuzz targets for the inputs that cross
# machines and the output folder (issue #16), after tests/fuzz/build.sh has built it:
#
#   tests/fuzz/run_target.sh timingdb|results|outdir [seconds]     (default 600)
#
# Seeds: the database fixtures and the head of the real H100 database (timingdb); the results
# fixtures and the benchmarks' results files (results); nothing (outdir builds its trees from
# random bytes).  Corpus in build-fuzz/corpus-<target>, crashes in build-fuzz/artifacts/, the log
# in build-fuzz/fuzz_<target>.log.  One job, niced: the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:?usage: run_target.sh timingdb|results|outdir [seconds]}
seconds=${2:-600}
out=${FUZZ_OUT:-build-fuzz}
corpus=$out/corpus-$target
mkdir -p "$corpus" "$out/artifacts"
flags=(-max_total_time="$seconds" -close_fd_mask=2 -timeout=20 -print_final_stats=1
       -artifact_prefix="$out/artifacts/")
case $target in
timingdb)
  for f in tests/fixtures/db/*.xml; do cp "$f" "$corpus/seed-$(basename "$f")"; done
  python3 - "$corpus/seed-h100-head.xml" <<'PY'
import sys
parts = open('benchmarks/nvidia-h100-80gb-hbm3.xml').read().split('<routine')
head = parts[0] + ''.join('<routine' + p for p in parts[1:15])
head = head[:head.rindex('</routine>') + len('</routine>')] + '\n</kasgen-timings>\n'
open(sys.argv[1], 'w').write(head)
PY
  flags+=(-dict=tests/fuzz/xml.dict -max_len=16384) ;;
results)
  for f in tests/fixtures/results/*/results.xml benchmarks/*/*.xml; do
    cp "$f" "$corpus/seed-$(echo "$f" | tr / _)"
  done
  flags+=(-dict=tests/fuzz/xml.dict -max_len=16384) ;;
outdir)
  flags+=(-max_len=512) ;;
*) echo "unknown target $target" >&2; exit 2 ;;
esac
nice -n 10 "$out/fuzz_$target" "$corpus" "${flags[@]}" 2>&1 | tee "$out/fuzz_$target.log" | tail -25
