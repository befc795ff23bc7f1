#!/usr/bin/env bash
# targets.sh — the targets generated code is made for (--precision, --layout; docs/design.md
# §5.4), with no GPU:
#   - every seed spec in double precision element-major, and in single and double precision with
#     every array component-major, each candidate run thread by thread on the CPU (make
#     check-cpu: both thread orders, whole arrays and a sub-range from element 1 whose pointers
#     are aligned to their type only, against the float64 CPU graph: 1e-5 normwise in single
#     precision, 1e-12 in double); single precision element-major is codegen.sh's;
#   - a mixed layout (--layout component,NAME=element) and its plans, check-cpu;
#   - double precision component-major compiled by nvcc -arch=sm_90 (compile-check), and the C
#     FEM driver built against its embed (a double, component-major API with a leading
#     dimension);
#   - the options' errors: an unknown precision or layout word, a name that is no input or
#     output, each exit 2 (bad usage) with a message naming it.
# At most 2 parallel jobs (the CI machine has 2 cores).
set -eu
: "${KASGEN:?set KASGEN to the kasgen binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
NVCC=${NVCC:-$(tools/find-nvcc.sh 2>/dev/null || true)} # tools/find-nvcc.sh decides
TOP=${TOP:-5}

# check-cpu of one spec in one configuration; prints the folder.
check_cpu() { # spec precision layout
  local out="$tmp/$2-${3//[=,]/_}"
  "$KASGEN" "specs/$1.spec" --top "$TOP" --precision "$2" --layout "$3" --out "$out" \
    >"$out.$1.log" 2>&1 || { cat "$out.$1.log"; fail "$1 $2 $3: kasgen exit"; }
  local n
  n=$(ls -d "$out/$1"/cand[0-9]* | wc -l)
  long=$(bash tests/long_lines.sh "$out/$1")
  [ -z "$long" ] || fail "$1 $2 $3: lines over 100 columns: $(head -3 <<<"$long")"
  grep -q "^Precision: $2; layouts: " "$out/$1/index.txt" || fail "$1 $2: index.txt says no target"
  make -C "$out/$1" -j2 check-cpu >"$out.$1.make" 2>&1 || { tail -30 "$out.$1.make"; fail "$1 $2 $3: check-cpu"; }
  grep -q "^$1: $((n + 1)) of $((n + 1)) candidates passed" "$out.$1.make" \
    || { tail -20 "$out.$1.make"; fail "$1 $2 $3: not every candidate passed"; }
  echo "$1, $2 precision, --layout $3: $n candidates + unfused pass check-cpu" >&2
  echo "$out/$1"
}

for spec in stvenant stvenant_inner bigfusion bigfusion_full synctest; do
  for target in "double element" "single component" "double component"; do
    # shellcheck disable=SC2086
    check_cpu "$spec" $target >/dev/null
  done
done

# Double precision: the check's tolerance is 1e-12, and the kernels hold doubles only.
dc=$tmp/double-component/stvenant
grep -q 'typedef double kas_real;' "$dc/common/kas_candidates.h" || fail "kas_real is not double"
# (code lines only: the comments' explanations count buffer sizes in "floats")
grep -v '^ *\(/\*\| \*\)' "$dc"/cand01/kernels.cu | grep -q '\bfloat\b' \
  && fail "a float in double-precision kernels"
grep -q 'KAS_COMPONENT' "$dc/common/kas_candidates.h" || fail "no component-major array listed"
grep -q '_cm(' "$dc/cand01/kernels.cu" || fail "no component-major routine in cand01"
grep -q 'kas_aligned16' "$dc/cand01/kernels.cu" \
  && fail "component-major arrays chose by alignment (no contiguous routine serves them)"

# A mixed layout: ten4Help1 element-major (coalesced vector loads may serve it), the rest not.
mixed=$(check_cpu stvenant single "component,ten4Help1=element")
grep -q '  ten4Help1          element-major' "$mixed/embed/kas_stvenant.h" \
  || fail "the embed does not document ten4Help1 element-major"
grep -q '  ten3Help2          component-major' "$mixed/embed/kas_stvenant.h" \
  || fail "the embed does not document ten3Help2 component-major"

# nvcc and the FEM driver: the double, component-major API with its leading dimension.
if [ -x "$NVCC" ]; then
  make -C "$dc" compile-check NVCC="$NVCC" >"$tmp/dc.nvcc" 2>&1 || { tail -20 "$tmp/dc.nvcc"; fail "nvcc"; }
  grep -q 'size_t n, size_t ld,$' "$dc/embed/kas_stvenant.h" || fail "no ld in the API"
  make -C tests/fem_driver GEN="$dc" BUILD_DIR="$tmp/fem" NVCC="$NVCC" -j2 >"$tmp/fem.log" 2>&1 \
    || { tail -20 "$tmp/fem.log"; fail "fem_driver against the double component-major embed"; }
  [ -x "$tmp/fem/fem_driver" ] || fail "no fem_driver binary"
  echo "double component-major: compiled by nvcc, FEM driver built" >&2
else
  echo "note: no nvcc; GPU compilation not checked" >&2
fi

# The options' errors.
expect() { # exit status, message, args...
  local want=$1 msg=$2
  shift 2
  local rc=0
  "$KASGEN" "$@" >"$tmp/err.out" 2>&1 || rc=$?
  [ "$rc" = "$want" ] || fail "$*: exit $rc, expected $want"
  grep -q -- "$msg" "$tmp/err.out" || { cat "$tmp/err.out"; fail "$*: no '$msg'"; }
}
expect 2 "invalid value 'half' for --precision" specs/synctest.spec --precision half --out "$tmp/x"
# A --layout value is the command line's, so a bad one is bad usage (2), as a bad --precision is:
# a list that is not one, said before the spec is read (a spec that does not exist is not
# reached), and a name the spec lacks, which only the spec shows, for every command that takes
# --layout (before, both were exit 1, bad input, after the spec was loaded).
expect 2 "'rows': expected element, component or NAME=element|component" \
  specs/synctest.spec --layout rows --out "$tmp/x"
expect 2 "^--layout: error: 'rows': expected element, component or NAME=element|component" \
  "$tmp/no-such.spec" --layout element,rows --out "$tmp/x"
grep -q 'no-such' "$tmp/err.out" && fail "--layout rows: the spec was read first"
expect 2 "'rows': expected element" plan "$tmp/no-such.spec" --layout rows
expect 2 "'B' names no input or output of spec synctest" \
  specs/synctest.spec --layout B=component --out "$tmp/x"
expect 2 "'B' names no input or output of spec synctest" \
  plan specs/synctest.spec --layout B=component
[ ! -e "$tmp/x/synctest" ] || fail "--layout B=component: a folder was written"
# an element of an input or output array: arrays are laid out whole, as the spec names them
expect 2 "^--layout: error: 'F\[0\]' names an element of array F; arrays are laid out whole: \
write F=component$" plan specs/quadrature.spec --layout 'S=element,F[0]=component'
expect 2 "'G\[0\]' names no input or output of spec quadrature" \
  plan specs/quadrature.spec --layout 'G[0]=component'
expect 2 "option --layout does not apply to 'units'" units --layout component --out "$tmp/x"
echo "targets: all checks passed"
