#!/bin/bash
# Session 46: forms of the calibration not tried before, held out over the stored measurements
# (the H100's 34 runs, the H200's 64; no GPU run), and what the failing specs' terms show.
# Dumps: session 45's (/tmp/model45/d100.err, d200.err: ../h100-2026-11-29-s45/run.sh, made on
# this tree's terms with ../h200-2026-11-29-s44/phase_dump.patch), with base's cached held-out
# predictions (d*.err.base.npy), copied to $D.  Each line is one process, one at a time
# (2 cores shared with other sessions; at a load of 8-11 a screened form took 1-4 minutes).
set -e
O=benchmarks/h100-2026-11-29-s46
D=/tmp/s46w
P=.venv/bin/python
mkdir -p $D && cp /tmp/model45/d100.err /tmp/model45/d200.err /tmp/model45/*.base.npy $D/
# the forms, screened (screen.py says how it differs from calibrate's fit; 'base' checks it)
$P $O/screen.py $D/d100.err base nbar_min bar_comp multi_work bar_work_blocks ug ws f \
  > $O/screen_h100.txt
$P $O/screen.py $D/d100.err bar_bal nbar_min_blocks stage_out mixed >> $O/screen_h100.txt
$P $O/screen.py $D/d100.err launch multi_io >> $O/screen_h100.txt
$P $O/screen.py $D/d200.err base > $O/screen_h200.txt
$P $O/screen.py $D/d200.err mixed bar_comp ws >> $O/screen_h200.txt
# the level of each run's held-out error against plan features, per GPU
F="save/io rs/io wf/io staged tpe nbar"
$P $O/feat.py $D/d100.err $D/d100.err.base.npy $F > $O/feat_h100.txt
$P $O/feat.py $D/d200.err $D/d200.err.base.npy $F > $O/feat_h200.txt
# the Spearman failures: candidates in measured order with their kernels' terms, and ties
$P $O/pairs.py $D/d100.err $D/d100.err.base.npy chain12 layers5_12 stvenant_element2_unrolled \
  > $O/pairs_h100.txt
$P $O/ties.py $D/d100.err chain12 layers5_12 stvenant_element2_unrolled stvk_point11 stvk_tet \
  chain8_33 tet20 > $O/ties_h100.txt
# the one form that loses nothing on the H100, held out with calibrate's own start and tolerance
# (forms46.py's main: phase_forms.held_out; 8-10 minutes each at a load of 5-9)
$P $O/forms46.py $D/d200.err mixed > $O/exact_mixed_h200.txt
$P $O/forms46.py $D/d100.err mixed > $O/exact_mixed_h100.txt
