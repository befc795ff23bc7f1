#!/usr/bin/env bash
# tests/fuzz/build.sh — builds kasgen's libFuzzer targets with clang (-fsanitize=fuzzer,address,
# undefined), compiling the sources each needs directly rather than linking the Makefile's
# libkasgen.a (which is built without the fuzzer instrumentation).  Binaries go to $FUZZ_OUT
# (default build-fuzz/).  Run them as tests/fuzz/README.md says.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${FUZZ_OUT:-build-fuzz}
mkdir -p "$out"
cc=${FUZZ_CC:-clang}
flags=(-std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Isrc -Itests
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)

# The front end: parser, DAG, fusion enumeration over a fake library (no INI loader).
"$cc" "${flags[@]}" -o "$out/fuzz_spec" tests/fuzz/fuzz_spec.c src/spec.c src/dag.c \
  src/fusion.c src/util.c
echo "built $out/fuzz_spec"

# The files that cross machines and the output folder (issue #16): the timing-database loader,
# the results-file reader behind `kasgen report`, and the output-folder logic.
xml_libs=$(pkg-config --libs libxml-2.0)
xml_cflags=$(pkg-config --cflags libxml-2.0)
"$cc" "${flags[@]}" $xml_cflags -o "$out/fuzz_timingdb" tests/fuzz/fuzz_timingdb.c src/timingdb.c src/binding.c \
  src/xml_input.c src/util.c $xml_libs -lm
echo "built $out/fuzz_timingdb"
# (options.c and binding.c: the command line's readers of <run>'s precision and layout;
# spawn.c: how report runs gnuplot)
"$cc" "${flags[@]}" $xml_cflags -o "$out/fuzz_results" tests/fuzz/fuzz_results.c src/report.c \
  src/results.c src/options.c src/binding.c src/xml_input.c src/spawn.c src/util.c $xml_libs -lm
echo "built $out/fuzz_results"
"$cc" "${flags[@]}" -o "$out/fuzz_outdir" tests/fuzz/fuzz_outdir.c src/emit_files.c src/util.c
echo "built $out/fuzz_outdir"

# The INI loader's target: its own script builds it (argument 0 = build only, no run).
if [ -f tests/fuzz/fuzz_ini.sh ]; then
  FUZZ_OUT="$out" FUZZ_CC="$cc" bash tests/fuzz/fuzz_ini.sh 0
fi
