#!/usr/bin/env python3
"""Session 46: candidates of one run whose kernels' terms are identical (so every form of the
model predicts them alike) and how far apart they were measured.
Usage: ties.py DUMP SPEC..."""
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "h200-2026-11-29-s44"))
import numpy as np
import phase_forms as pf

D = pf.Data(sys.argv[1])
K = D.K
for spec in sys.argv[2:]:
    for r, (s, src) in enumerate(D.runs):
        if src.split("/")[-2] != spec:
            continue
        groups = {}
        for c in np.nonzero(D.run == r)[0]:
            ks = np.nonzero(D.cand_of_k == c)[0]
            key = tuple(sorted(tuple(round(K[n][k], 9) for n in pf.KC) for k in ks))
            groups.setdefault(key, []).append(D.meas[c])
        tied = [g for g in groups.values() if len(g) > 1]
        spans = [max(g) / min(g) - 1 for g in tied]
        print("%-28s %2d candidates, %d groups of identical terms holding %d; measured spread "
              "within them: %s" % (spec, int((D.run == r).sum()), len(tied), sum(map(len, tied)),
                                   ", ".join("%.1f%%" % (100 * x) for x in sorted(spans))))
