#!/bin/bash
# Session 45: the calibration's loss, shrinkage toward the plain model, and the Spearman
# failures against the harness's noise, held out over the stored measurements (no GPU run).
# Dumps: a detached checkout of main at 1ac34fc with ../h200-2026-11-29-s44/phase_dump.patch
# applied (the terms are identical, line for line, to session 44's dumps of b68813e), on copies
# of the committed databases, KASGEN_CACHE warm.  /tmp/ho/h100 and /tmp/ho/h200: the H100's 34
# and the H200's 64 stored runs (benchmarks/RESULTS.md, sessions 35-43).  Calibrate's own
# held-out counts from these dumps' stdout: H100 30 of 33, 33 of 34, 22 of 34 (4.82%); H200
# 44, 54, 25 of 64 (7.46%).
set -e
S=benchmarks/h200-2026-11-29-s44
O=benchmarks/h100-2026-11-29-s45
D=/tmp/model45
git apply $S/phase_dump.patch
make -j2 build/kasgen
cp benchmarks/nvidia-h100-80gb-hbm3.xml $D/d100db.xml
cp benchmarks/nvidia-h200.xml $D/d200db.xml
for g in 100 200; do
  KASGEN_DUMP_PHASES=1 KASGEN_CACHE=/tmp/kcache build/kasgen calibrate /tmp/ho/h$g \
    --db $D/d${g}db.xml --held-out --ptxas > $D/d$g.txt 2> $D/d$g.err
done
# the base's held-out predictions, computed once (phase_forms.py caches them beside the dump;
# as run, copied from session 44's cache of the identical dump)
.venv/bin/python $S/phase_forms.py $D/d100.err base > /dev/null
.venv/bin/python $S/phase_forms.py $D/d200.err base > /dev/null
P=$O/loss_forms.py
.venv/bin/python $P $D/d100.err --shrink > $O/shrink_h100.txt
.venv/bin/python $P $D/d200.err --shrink > $O/shrink_h200.txt
# each form is one process (two cores shared with other sessions: ~15-30 min each)
.venv/bin/python $P $D/d100.err run huber log > $O/loss_h100.txt
.venv/bin/python $P $D/d100.err abs > $O/loss_abs_h100.txt
.venv/bin/python $P $D/d200.err run huber log > $O/loss_h200.txt
.venv/bin/python $O/noise.py $D/d100.err $D/d100.err.base.npy chain12 layers5_12 \
  stvenant_element2_unrolled stvk_point11 stvk_tet tet20 > $O/noise_h100.txt
.venv/bin/python $O/residuals.py $D/d100.err $D/d100.err.base.npy shell5_12 chain12 layers5_12 \
  > $O/residuals_h100.txt
