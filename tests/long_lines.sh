#!/usr/bin/env bash
# long_lines.sh DIR — prints "file:line:text" for every line of generated source under DIR
# (.cu .cpp .c .h, Makefiles, gnuplot scripts, pkg-config and CMake files) longer than 100
# characters, nothing when there is none.  The integration tests that generate code use it:
# generated code keeps to 100 columns.
find "$1" -type f \( -name '*.cu' -o -name '*.cpp' -o -name '*.c' -o -name '*.h' \
  -o -name Makefile -o -name '*.gp' -o -name '*.pc' -o -name '*.cmake' \) \
  ! -path '*/build/*' -print0 |
  xargs -0 -r env LC_ALL=C.UTF-8 grep -nE '^.{101,}' || true
