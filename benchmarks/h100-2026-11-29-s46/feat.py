#!/usr/bin/env python3
"""Session 46: does the level of a run's held-out error (geometric mean of predicted / measured,
base's held-out predictions) follow something the plan knows?  Pearson and Spearman over the
runs of each feature's run mean; with feature names after the cache, a table sorted by level.
Usage: feat.py DUMP DUMP.base.npy [FEATURE...]"""
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "h200-2026-11-29-s44"))
import numpy as np, phase_forms as pf
from scipy.stats import spearmanr
D = pf.Data(sys.argv[1]); base = np.load(sys.argv[2])
K, P = D.K, D.P
io = K["io"]; tot = D.csum(np.maximum(io, K["compute"]))
feats = {
 "save/io": D.csum(D.ksum(P["save"])) / D.csum(io),
 "savep/io": D.csum(D.ksum(P["save"] - P["r1"] - P["rs"])) / D.csum(io),
 "load/io": D.csum(D.ksum(P["load"])) / D.csum(io),
 "r1/io": D.csum(K["r1"]) / D.csum(io),
 "rs/io": D.csum(K["rs"]) / D.csum(io),
 "lines/io": D.csum(K["lines"]) / D.csum(io),
 "comp/io": D.csum(K["compute"]) / D.csum(io),
 "wf/io": D.csum(K["wf"]) / D.csum(io),
 "floor/work": D.csum(K["floor"]) / D.csum(K["work"]),
 "bar/work": D.csum(K["barrier"]) / D.csum(K["work"]),
 "bw/work": D.csum(K["bw"]) / D.csum(K["work"]),
 "spill/work": D.csum(K["spill"]) / D.csum(K["work"]),
 "staged": D.csum(K["staged"] > 0) / D.nk,
 "tpe": D.csum(K["threads"] / K["e"]) / D.nk,
 "groups": D.csum(K["groups"]) / D.nk,
 "occ": D.csum(K["occ"]) / D.nk,
 "blocks": D.csum(K["blocks"]) / D.nk,
 "threads": D.csum(K["threads"]) / D.nk,
 "nk": D.nk, "nbar": D.csum(K["nbar"]) / D.nk,
 "io": D.csum(io), "meas": D.meas, "launch/meas": D.launch / D.meas,
 "work/meas": D.csum(K["work"]) / D.meas,
}
lev = []; F = {k: [] for k in feats}; names = []
for r, (s, src) in enumerate(D.runs):
    sel = D.run == r
    if not sel.any(): continue
    q = base[sel] / D.meas[sel]
    lev.append(np.exp(np.mean(np.log(q))) - 1); names.append(src.split("/")[-2])
    for k, v in feats.items(): F[k].append(np.mean(v[sel]))
lev = np.array(lev)
print("level: pred/meas - 1 per run (geo mean)")
for k in feats:
    x = np.array(F[k]); r = np.corrcoef(x, lev)[0, 1]; rs = spearmanr(x, lev)[0]
    print("%-12s pearson %+.2f spearman %+.2f" % (k, r, rs))
if len(sys.argv) > 3:
    for n, l, *fs in sorted(zip(names, lev, *[F[k] for k in sys.argv[3:]]), key=lambda z: z[1]):
        print("%-28s %+6.1f%% " % (n, 100 * l) + " ".join("%.3f" % f for f in fs))
