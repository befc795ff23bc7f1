#!/usr/bin/env bash
# tests/fuzz/fuzz_ini.sh — builds the implementation-INI fuzz target (tests/fuzz/fuzz_ini.c) with
# clang -fsanitize=fuzzer,address,undefined directly from the sources it needs, seeds a corpus
# with the real library's and the fixtures' INI files, and runs it.
#
#   tests/fuzz/fuzz_ini.sh [seconds]     (default 600; 0 = build only)
#
# Output: build-fuzz/fuzz_ini, corpus in build-fuzz/corpus-ini, crashes as build-fuzz/crash-*,
# the log in build-fuzz/fuzz_ini.log.  Run from anywhere; `nice` it on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${FUZZ_OUT:-build-fuzz}
seconds=${1:-600}
mkdir -p "$out/corpus-ini"
cc=${FUZZ_CC:-clang}
flags=(-std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Isrc
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
"$cc" "${flags[@]}" -o "$out/fuzz_ini" tests/fuzz/fuzz_ini.c src/library.c src/ini_file.c src/pattern.c \
  src/instantiate.c src/binding.c src/util.c $(pkg-config --libs inih 2>/dev/null || echo -linih)
echo "built $out/fuzz_ini"
[ "$seconds" = 0 ] && exit 0
# Seeds: every implementation INI of the library and the fixtures, plus the other INI files and
# the .cu files (for the extractor and the rule checker).
for f in library/*/*.ini library/types.ini tests/fixtures/*/*/*.ini tests/fixtures/*/types.ini \
         library/*/*.cu tests/fixtures/*/*/*.cu; do
  [ -f "$f" ] && cp "$f" "$out/corpus-ini/seed-$(echo "$f" | tr '/' '_')"
done
# -close_fd_mask=2 silences the loader's diagnostics; libFuzzer keeps its own copy of stderr
# for crash reports.  -max_len: the longest real INI file is about 2 KB.
"$out/fuzz_ini" "$out/corpus-ini" -max_total_time="$seconds" -max_len=8192 -timeout=20 \
  -close_fd_mask=2 -artifact_prefix="$out/" -print_final_stats=1 2>&1 | tee "$out/fuzz_ini.log" | tail -40
