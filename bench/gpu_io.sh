#!/usr/bin/env bash
# bench/gpu_io.sh — issue #13 on a GPU in one call of the device tool (at most 9 minutes): both
# precisions and both layouts of every seed spec, on a machine with only the CUDA toolkit, gcc
# and make.  The host prepares the spec folders (kasgen cannot be built on the GPU machine):
#     bench/prepare_gpu.sh gpu            # UNITS=0 skips the unit kernels, which this does not run
# then, on the GPU machine, from the repository root (gpu/ carried along):
#     bench/gpu_io.sh gpu "$OUT"
# What it does, in this order, each step skipped (and said so in the table) when the time left
# (BUDGET seconds from the start, default 520) would not cover it:
#   1. starts building the timing-database benchmark (bench/out, `make benchdb`'s program) in
#      the background, at low priority (BENCHDB=0: no database, step 5 skipped too);
#   2. builds every configuration's spec folders (gpu/<precision>-<layout>/<spec>/) in parallel;
#      a folder whose build/harness exists is kept as it is (built on the host with the same
#      CUDA compiler: `make -C FOLDER build/harness`, so the GPU's time goes to the GPU);
#   3. the checks, JOBS folders at a time (default 6: they are bound by the CPU reference, and
#      sharing the GPU cannot change a result): correctness of the top 10 and `unfused` at n = 1,
#      7, 1000003, 4194304 and on sub-ranges from element 1 (the harness's --sizes, as `make
#      sizes`); compute-sanitizer memcheck, racecheck and synccheck at n = SANITIZE_N (default
#      20011);
#   4. the timings, one folder at a time with the GPU to itself: the timed table at n = N
#      (default 4194304) with the copy bandwidth measured in the same run (as `make run`); the
#      sub-range from element 1 (pointers aligned to their type only) timed against whole
#      arrays of the same n in the same run (as `make subrange`).  TIMED="config/spec ..." and
#      SUBRANGE="config/spec ..." limit each to those folders (empty: none).  The harness runs
#      directly: make would rebuild one built on the host (its record of the compiler's command
#      is not carried);
#   5. the timing database in both precisions (bench/benchdb.sh PART=single, then PART=double;
#      the halves are joined into benchmarks/<gpu>.xml, copied to OUT/);
#   6. the table (bench/gpu_summary.sh) to stdout and OUT/summary.md; logs and results files in
#      OUT/gpu_io_logs.tar.gz.
# Exit status 1 when a check failed, 0 otherwise (skipped steps are listed, not failures).
set -uo pipefail
src=$(cd "${1:?folder prepared by bench/prepare_gpu.sh}" && pwd) # the checks run from elsewhere
out=${2:?output folder}
budget=${BUDGET:-520}
sanitize_n=${SANITIZE_N:-20011}
timed_n=${N:-4194304} # the size of the timed table (the folders' `make run` default)
here=$(cd "$(dirname "$0")" && pwd)
logs=$(mktemp -d)/logs
mkdir -p "$logs" "$out"
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
status=0
left() { echo $((budget - SECONDS)); }
pack() { tar -czf "$out/gpu_io_logs.tar.gz" -C "$(dirname "$logs")" logs; }
# step NAME SECONDS-IT-NEEDS COMMAND...: runs it when that much time is left, else records a skip.
step() {
  local name=$1 need=$2
  shift 2
  if (($(left) < need)); then
    echo "SKIP  $name (needs ~${need} s, $(left) s left)" | tee -a "$logs/skipped.txt"
    return 0
  fi
  local t0=$SECONDS
  if timeout "$(left)" "$@" >"$logs/$name.log" 2>&1; then
    echo "ok    $name ($((SECONDS - t0)) s)"
  else
    echo "FAIL  $name ($((SECONDS - t0)) s)"
    status=1
    tail -15 "$logs/$name.log"
  fi
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/gpu.txt"
nvcc --version | tail -2 >>"$logs/gpu.txt"

# 1. The benchmark program, built while the GPU is busy with the specs.
# (its own session, so that a build still running when the time is spent can be stopped whole)
bench_pid=""
if [ "${BENCHDB:-1}" != 0 ]; then
  setsid bash -c 'nice -n 10 make -C bench/out -j"$(nproc)" ARCH="$1" >"$2/benchdb_build.log" 2>&1
                  echo $? >"$2/benchdb_build.rc"' _ "${ARCH:-sm_90}" "$logs" &
  bench_pid=$!
fi

# 2. Every folder's harness (kept where the host built it).
folders=""
for d in "$src"/*/*/; do
  d=${d%/}
  config=$(basename "$(dirname "$d")")
  case $config in units*) continue ;; esac
  [ -f "$d/Makefile" ] && folders="$folders $config/$(basename "$d")"
done
[ -n "$folders" ] || { echo "gpu_io: no spec folders in $src" >&2; exit 1; }
printf '%s\n' $folders | xargs -P "$(nproc)" -I{} sh -c \
  'test -x "$1/{}/build/harness" && exit 0
   make -C "$1/{}" -j2 build/harness >"$2/build_$(echo {} | tr / _).log" 2>&1 ||
   echo "build failed: {}"' _ "$src" "$logs" | tee "$logs/build_failures.txt"
[ -s "$logs/build_failures.txt" ] && status=1
echo "built $(echo $folders | wc -w) folders at $SECONDS s"

# 3. The checks, several folders at once.  One folder's checks, each a log of its own; a
# failure is written to checks_failed.txt (the jobs run in subshells).
check_folder() {
  local f=$1 tag=${1/\//_} h=$src/$1/build/harness
  local -a san=(compute-sanitizer --error-exitcode 1)
  (cd "$src/$f" && "$h" --sizes 1,7,1000003,4194304 && "$h" --offset 1 --sizes 1,7,1000003) \
    >"$logs/sizes_$tag.log" 2>&1 || echo "sizes_$tag" >>"$logs/checks_failed.txt"
  "${san[@]}" --tool memcheck "$h" --check-only N="$sanitize_n" >"$logs/memcheck_$tag.log" 2>&1 ||
    echo "memcheck_$tag" >>"$logs/checks_failed.txt"
  "${san[@]}" --tool racecheck --racecheck-report all "$h" --check-only N="$sanitize_n" \
    >"$logs/racecheck_$tag.log" 2>&1 || echo "racecheck_$tag" >>"$logs/checks_failed.txt"
  "${san[@]}" --tool synccheck "$h" --check-only N="$sanitize_n" >"$logs/synccheck_$tag.log" \
    2>&1 || echo "synccheck_$tag" >>"$logs/checks_failed.txt"
  echo "checked $f ($SECONDS s)"
}
export -f check_folder
export src logs sanitize_n
t0=$SECONDS
printf '%s\n' $folders |
  timeout "$(left)" xargs -P "${JOBS:-6}" -I{} bash -c 'check_folder "$1"' _ {}
if [ "$?" != 0 ]; then
  echo "SKIP  checks not finished in the time left" | tee -a "$logs/skipped.txt"
  pkill -f "$src/.*/build/harness" 2>/dev/null # what xargs left running would skew the timings
fi
echo "checks of $(echo $folders | wc -w) folders: $((SECONDS - t0)) s"
if [ -s "$logs/checks_failed.txt" ]; then
  status=1
  echo "FAILED CHECKS:"; cat "$logs/checks_failed.txt"
fi
pack

# 4. The timings, one folder at a time.
for f in ${TIMED-$folders}; do
  tag=${f/\//_}
  step "run_$tag" 15 bash -c 'cd "$1" && ./build/harness N="$2"' _ "$src/$f" "$timed_n"
  cp "$src/$f/results.xml" "$logs/results_$tag.xml" 2>/dev/null
  pack
done
for f in ${SUBRANGE-$folders}; do
  tag=${f/\//_}
  step "subrange_$tag" 20 bash -c 'cd "$1" && ./build/harness --offset 1 N="$2"' _ \
    "$src/$f" "$timed_n"
  cp "$src/$f/results.xml" "$logs/subrange_$tag.xml" 2>/dev/null
  pack
done

# 5. The timing database, one precision at a time (each half is written whole or not at all).
if [ -n "$bench_pid" ]; then
  while kill -0 "$bench_pid" 2>/dev/null && (($(left) > 90)); do sleep 5; done
  if kill -0 "$bench_pid" 2>/dev/null; then
    kill -- -"$bench_pid" 2>/dev/null
    echo "SKIP  benchdb (its build was not done at $SECONDS s)" | tee -a "$logs/skipped.txt"
  elif [ "$(cat "$logs/benchdb_build.rc" 2>/dev/null)" = 0 ]; then
    for part in single double; do
      step "benchdb_$part" 90 env PART="$part" bash "$here/benchdb.sh"
    done
    find benchmarks -name '*.xml' -newer "$logs/gpu.txt" -exec cp {} "$out/" \;
  else
    echo "FAIL  benchdb build"; tail -15 "$logs/benchdb_build.log"; status=1
  fi
else
  echo "SKIP  benchdb (BENCHDB=0)" | tee -a "$logs/skipped.txt"
fi

# 6. The table.
bash "$here/gpu_summary.sh" "$logs" | tee "$out/summary.md" "$logs/summary.md"
[ -f "$logs/skipped.txt" ] && { echo; echo "Skipped:"; cat "$logs/skipped.txt"; } |
  tee -a "$out/summary.md"
echo "total $SECONDS s"
pack
exit $status
