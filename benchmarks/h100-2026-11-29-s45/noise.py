#!/usr/bin/env python3
"""Session 45: are the held-out Spearman failures within the harness's noise?

Usage: noise.py DUMP PRED.npy SPEC ...
DUMP: phase_forms.py's dump (the measured candidates in order, with their run's results file);
PRED.npy: held-out predictions of those candidates (loss_forms.py or phase_forms.py's cache).

Per spec: the candidates' measured span; each candidate's noise band, round-max-ns over
round-min-ns of its results row (the harness's 9 rounds of 30 repetitions; measured-ns is their
median); the candidate pairs whose bands overlap (the run cannot order them); of the pairs the
held-out prediction orders against the measured times (discordant), how many overlap, and their
measured gaps; and the
Spearman of the prediction against times drawn uniformly within each band (1000 draws: the
rounds' extremes, wider than a median's own spread), beside the Spearman of the measured
medians against such draws (how far the run agrees with itself).  A finding about the target,
not a fix: the counts stay as calibrate prints them.
"""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "h200-2026-11-29-s44"))
import phase_forms as pf  # noqa: E402

ROW = re.compile(r'<candidate [^>]*?measured-ns="([^"]+)"[^>]*?round-min-ns="([^"]+)"'
                 r'[^>]*?round-max-ns="([^"]+)"')


def bands(results, meas):
    """round-min and round-max of each measured time, matched by the row's measured-ns."""
    rows = [tuple(map(float, m.groups())) for m in ROW.finditer(open(results).read())]
    lo, hi = np.zeros(len(meas)), np.zeros(len(meas))
    for i, m in enumerate(meas):
        j = min(range(len(rows)), key=lambda r: abs(rows[r][0] - m))
        assert abs(rows[j][0] - m) <= 1e-5 * m, (results, m)
        lo[i], hi[i] = rows[j][1], rows[j][2]
    return lo, hi


def report(D, pred, name, rng):
    for r, (spec, src) in enumerate(D.runs):
        if spec != name:
            continue
        sel = D.run == r
        m, p = D.meas[sel], pred[sel]
        lo, hi = bands(src, m)
        n = len(m)
        i, j = np.triu_indices(n, 1)
        overlap = (lo[i] <= hi[j]) & (lo[j] <= hi[i])
        discord = np.sign(m[i] - m[j]) * np.sign(p[i] - p[j]) < 0
        draws = lo + (hi - lo) * rng.random((1000, n))
        rho_p = np.array([pf.spearman(p, d) for d in draws])
        rho_m = np.array([pf.spearman(m, d) for d in draws])
        print("%-28s span %5.1f%%  band median %.2f%% (max %.2f%%)  pairs overlapping %d of %d  "
              "discordant %d, of them overlapping %d" % (
                  spec, 100 * (m.max() / m.min() - 1), 100 * np.median(hi / lo - 1),
                  100 * np.max(hi / lo - 1), overlap.sum(), len(i), discord.sum(),
                  (discord & overlap).sum()))
        gap = np.abs(m[i] - m[j]) / np.minimum(m[i], m[j])
        print("%-28s discordant pairs' measured gap: median %.2f%%, %d of them above 2%%" % (
            "", 100 * np.median(gap[discord]), (gap[discord] > 0.02).sum()))
        print("%-28s Spearman held out %.3f; against draws within the bands: %.3f "
              "(5-95%%: %.3f-%.3f, >= 0.8 in %.0f%%); the medians against the draws: %.3f" % (
                  "", pf.spearman(p, m), rho_p.mean(), *np.percentile(rho_p, [5, 95]),
                  100 * np.mean(rho_p >= 0.8), rho_m.mean()))


def main():
    D = pf.Data(sys.argv[1])
    pred = np.load(sys.argv[2])
    rng = np.random.default_rng(45)
    for name in sys.argv[3:]:
        report(D, pred, name, rng)


if __name__ == "__main__":
    main()
