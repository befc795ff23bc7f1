#!/usr/bin/env bash
# gpu_run.sh — the hyperelastic example on a GPU machine (issue #12, deliverables 4 and 5), for a
# machine with only the CUDA toolkit, gcc, make and (for the comparison) Python with PyTorch.
# Run from the repository root, after kasgen (on the host) has generated specs/stvk_tet.spec:
#
#   ./kasgen specs/stvk_tet.spec --out generated            # on the host
#   examples/hyperelastic/gpu_run.sh generated/stvk_tet [RESULTS]   # on the GPU machine
#
# Steps, each logged under RESULTS (default: $OUT if set, else gpu_results):
#   1. the generated folder's harness (make run): every candidate checked, the winner's time and
#      its % of the copy bandwidth on its compulsory bytes -> harness.log, results.xml;
#   2. the example's GPU mode built with the embed folder's link line (make gpu);
#   3. a check run on CHECK_HEXES^3 hexahedra (default 12: 10,368 tetrahedra) writing its output
#      to RESULTS/check (compared with scikit-fem here if this Python has it, otherwise copy the
#      folder back and run the printed command on the host);
#   4. the timing run on HEXES^3 hexahedra (default 100: 6,000,000 tetrahedra; about 7 GB of GPU
#      memory for the example, 30-40 GB at the peak of the PyTorch version: fits an 80 GB H100);
#   5. torch_reference.py, eager and with torch.compile: checked against step 3's output at 1e-5,
#      then timed on the same mesh as step 4;
#   6. summary.txt: the lines to record in benchmarks/RESULTS.md.
# HEXES, CHECK_HEXES, PASSES (default 5), PYTHON (default python3), NVCC (default nvcc) override;
# HARNESS=0 skips step 1 (when the harness already ran in the same session).
# Exit status: 0 when every step ran and every check passed; 1 otherwise (PyTorch missing
# included: the comparison is part of the job).
set -u
gen=${1:?usage: gpu_run.sh GENERATED_FOLDER_OF_stvk_tet [RESULTS_FOLDER]}
gen=$(cd "$gen" && pwd) || exit 1
results=${2:-${OUT:-gpu_results}}
HEXES=${HEXES:-100}
CHECK_HEXES=${CHECK_HEXES:-12}
PASSES=${PASSES:-5}
PYTHON=${PYTHON:-python3}
NVCC=${NVCC:-nvcc}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$results"
results=$(cd "$results" && pwd)
failed=0
step() { echo "== $*"; }
bad() { echo "FAIL: $*"; failed=1; }

step "device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$results/device.txt"

step "1. the generated harness: candidates checked and timed, copy bandwidth"
if [ "${HARNESS:-1}" = 0 ]; then
  echo "skipped (HARNESS=0: the harness ran in the same session, e.g. bench/gpu_verify.sh)"
  : >"$results/harness.log"
else
  make -C "$gen" run NVCC="$NVCC" >"$results/harness.log" 2>&1 || bad "make -C $gen run"
  tail -25 "$results/harness.log"
  cp "$gen/results.xml" "$results/" 2>/dev/null || bad "no results.xml from the harness"
fi

step "2. the example's GPU mode"
make -C "$here" gpu GEN="$gen" NVCC="$NVCC" BUILD="$results/build" >"$results/build.log" 2>&1 ||
  { cat "$results/build.log"; bad "make gpu"; exit 1; }
example=$results/build/gpu/hyperelastic

step "3. check run: ${CHECK_HEXES}^3 hexahedra, output to $results/check"
mkdir -p "$results/check"
"$example" --hexes "$CHECK_HEXES" --passes 3 --out "$results/check" | tee "$results/check.log" ||
  { bad "the check run"; exit 1; }
compare="$root/tests/fem_reference/compare.py"
if "$PYTHON" -c 'import skfem' 2>/dev/null; then
  "$PYTHON" "$compare" "$results/check" | tee "$results/compare.log" || bad "scikit-fem disagrees"
else
  echo "note: no scikit-fem here: copy $results/check back and run on the host:"
  echo "      .venv/bin/python tests/fem_reference/compare.py <that folder>"
fi

step "4. timing run: ${HEXES}^3 hexahedra"
"$example" --hexes "$HEXES" --passes "$PASSES" | tee "$results/example.log" || bad "timing run"

step "5. the same computation in PyTorch"
if "$PYTHON" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
  torch_ref="$here/torch_reference.py"
  for mode in eager compiled; do
    flag=; [ $mode = compiled ] && flag=--compile
    "$PYTHON" "$torch_ref" $flag --hexes "$CHECK_HEXES" --passes 1 --check "$results/check" \
      | tee "$results/torch_check_$mode.log" || bad "PyTorch ($mode) disagrees with the example"
    "$PYTHON" "$torch_ref" $flag --hexes "$HEXES" --passes "$PASSES" \
      | tee "$results/torch_$mode.log" || bad "PyTorch ($mode) timing run"
  done
else
  bad "no PyTorch with CUDA for $PYTHON: the comparison was not run"
fi

step "6. summary"
{
  echo "device: $(tail -1 "$results/device.txt")"
  echo "harness:"; grep -E '^(cand01|unfused) |copy bandwidth' "$results/harness.log"
  for log in example torch_eager torch_compiled; do
    [ -f "$results/$log.log" ] || continue
    echo "$log:"; grep -E '^(mesh|torch_reference|median|elements per|element)' "$results/$log.log"
  done
  [ -f "$results/compare.log" ] && { echo "scikit-fem:"; grep -E 'difference|OK|FAIL' "$results/compare.log"; }
  echo "status: $([ $failed = 0 ] && echo 'every step passed' || echo 'SOME STEP FAILED')"
} | tee "$results/summary.txt"
exit $failed
