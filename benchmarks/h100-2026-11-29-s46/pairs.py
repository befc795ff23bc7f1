#!/usr/bin/env python3
"""Session 46: a run's candidates in measured order beside base's held-out prediction, with each
kernel's terms (io compute wf lines r1 rs barrier bw threads e occupancy blocks barriers
staged), to see what the misordered ones share.  Usage: pairs.py DUMP DUMP.base.npy SPEC..."""
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "h200-2026-11-29-s44"))
import numpy as np, phase_forms as pf
D = pf.Data(sys.argv[1]); base = np.load(sys.argv[2])
K = D.K
for spec in sys.argv[3:]:
    r = [i for i, (s, src) in enumerate(D.runs) if src.split("/")[-2] == spec][0]
    idx = np.nonzero(D.run == r)[0]
    idx = idx[np.argsort(D.meas[idx])]
    print("==", spec)
    print("%4s %8s %8s %6s %3s | kernels: io comp wf lines r1 rs bar bw thr e occ blk nbar stg"
          % ("i", "meas", "pred", "p/m", "nk"))
    names = "io compute wf lines r1 rs barrier bw threads e occ blocks nbar staged".split()
    for c in idx:
        ks = np.nonzero(D.cand_of_k == c)[0]
        kd = " ; ".join("%.4f %.4f %.4f %.4f %.4f %.4f %.4f %.4f %d %d %.2f %d %d %d" %
                        tuple(K[n][k] for n in names) for k in ks)
        print("%4d %.5f %.5f %+5.1f%% %d | %s" % (c, D.meas[c], base[c],
                                                  100 * (base[c] / D.meas[c] - 1), len(ks), kd))
