#!/bin/bash
# Session 44: the phase forms, held out over the stored measurements (no GPU run).
# From a checkout of b68813e with phase_dump.patch applied (it prints per-kernel and per-phase
# terms on stderr when KASGEN_DUMP_PHASES is set; the figures calibrate prints are unchanged),
# then phase_forms.py over the dumps.  /tmp/ho/h100 and /tmp/ho/h200: the H100's 34 and the
# H200's 64 stored runs, with their databases (benchmarks/RESULTS.md, sessions 35-43).
set -e
git apply benchmarks/h200-2026-11-29-s44/phase_dump.patch
make -j2 build/kasgen
for gpu in h100 h200; do
  cp /tmp/ho/${gpu}db.xml /tmp/mp/d${gpu#h}db.xml
  KASGEN_DUMP_PHASES=1 build/kasgen calibrate /tmp/ho/$gpu --db /tmp/mp/d${gpu#h}db.xml \
    --held-out --ptxas > /tmp/mp/d${gpu#h}.txt 2> /tmp/mp/d${gpu#h}.err
done
# As run (each output file is two invocations, concatenated; the base's held-out predictions
# are cached beside the dump; "phase h=q/blocks" on the H100 was stopped unfinished for time).
P=benchmarks/h200-2026-11-29-s44/phase_forms.py
O=benchmarks/h200-2026-11-29-s44
.venv/bin/python $P /tmp/mp/d100.err base "phase h=q" > $O/phase_forms_h100.txt
.venv/bin/python $P /tmp/mp/d100.err "plain excess h=q" "inflight h=q" "phase excess linear" \
  >> $O/phase_forms_h100.txt
.venv/bin/python $P /tmp/mp/d200.err base "phase h=q" "phase h=q/blocks" > $O/phase_forms_h200.txt
.venv/bin/python $P /tmp/mp/d200.err "plain excess h=q" "inflight h=q" "phase excess linear" \
  >> $O/phase_forms_h200.txt
