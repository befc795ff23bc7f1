#!/usr/bin/env bash
# Session 27, calls 3-5: the folders, made on the host at 1a873f1 (the neighbour estimate of the
# intervals search), from the repository root; then packed (tar -cJf gpu-pack.tar.xz gpu/s27)
# and run with call.sh:
#   call 3: LIMIT=300 bash call.sh t30/stvk_tet t30/laplace_blocks24 t30/gradients_loop20 \
#             t30/pair_blocks18
#   call 4: LIMIT=300 SAN="san/stvk_tet san/stvenant_element" \
#             SIZES="san/stvk_tet san/stvenant_element" bash call.sh t30/coupling_blocks17 \
#             t30/quadrature t30/stvenant_element2_unrolled t30/vertex_stiffness15 \
#             san/stvenant_element            (cut at 600 s before stvenant_element's sizes)
#   call 5: LIMIT=300 SIZES="san/stvenant_element" bash call.sh
set -euo pipefail
SPECS="benchmarks/specs/coupling_blocks17.spec benchmarks/specs/gradients_loop20.spec
  benchmarks/specs/laplace_blocks24.spec benchmarks/specs/pair_blocks18.spec
  specs/quadrature.spec benchmarks/specs/stvenant_element2_unrolled.spec specs/stvk_tet.spec
  benchmarks/specs/vertex_stiffness15.spec"
KASGEN=build/kasgen SPECS="$SPECS" bench/prepare_tune.sh gpu/s27/t30 30
build/kasgen specs/stvk_tet.spec --top 10 --out gpu/s27/san
build/kasgen specs/stvenant_element.spec --top 10 --out gpu/s27/san
