#!/usr/bin/env python3
"""Session 45: where the held-out errors come from (TABLE.md, "What the residuals show").

Usage: residuals.py DUMP BASE.npy          each run's bias and error, held out and plain
       residuals.py DUMP BASE.npy SPEC ... also, per spec, its bias and Spearman under the
                                           H100's all-runs fit with each constant set back to
                                           its plain value, and the fit without the spec

bias: the geometric mean of predicted over measured, minus 1; err: the mean relative error;
deb: the error left once each prediction is divided by the run's median ratio (the shape).
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "h200-2026-11-29-s44"))
sys.path.insert(0, HERE)
import loss_forms as lf  # noqa: E402
import phase_forms as pf  # noqa: E402

# the H100's 34 runs, fitted on all of them (phase_forms.py's all-fit line for base)
ALL_FIT = dict(a=0.957, r1=1.535, rs=1.162, l=0.782, p=1.785, s=-1.177, u=0.125, v=1.487)
ALL_LIN = np.array([0.5509, 0, 0])


def figures(p, m):
    q = p / m
    return (100 * (np.exp(np.mean(np.log(q))) - 1), 100 * np.mean(np.abs(q - 1)),
            100 * np.mean(np.abs(q / np.median(q) - 1)))


def table(D, base):
    plain = lf.plain_pred(D)
    print("%-28s %6s %6s %6s | %6s %6s %6s" % ("run", "bias", "err", "deb", "pbias", "perr",
                                               "pdeb"))
    for r, (_, src) in enumerate(D.runs):
        sel = D.run == r
        print("%-28s %6.1f %6.1f %6.1f | %6.1f %6.1f %6.1f" % (
            (src.split("/")[-2],) + figures(base[sel], D.meas[sel]) +
            figures(plain[sel], D.meas[sel])))


def constants(D, spec):
    F = pf.FORMS["base"]
    sel = D.spec == spec
    m = D.meas[sel]

    def say(label, t, lin):
        p = pf.predict(D, F, t, lin)[sel]
        print("    %-12s bias %5.1f%%  Spearman %.3f" % (label, figures(p, m)[0],
                                                        pf.spearman(p, m)))
    print(spec)
    say("all-fit", ALL_FIT, ALL_LIN)
    for k in ALL_FIT:
        t = dict(ALL_FIT)
        t[k] = pf.START[k]
        say("%s plain" % k, t, ALL_LIN)
    say("b = 1", ALL_FIT, np.array([1.0, 0, 0]))
    t, lin = pf.calib_fit(D, F, ~sel)
    print("    fitted without it: " + pf.fmt_t(t, lin, F))
    say("without it", t, lin)


def main():
    D = pf.Data(sys.argv[1])
    table(D, np.load(sys.argv[2]))
    for spec in sys.argv[3:]:
        constants(D, spec)


if __name__ == "__main__":
    main()
