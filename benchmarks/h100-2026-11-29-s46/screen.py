#!/usr/bin/env python3
"""Session 46: forms46.py's forms held out (leave one spec out), faster than phase_forms.held_out:
each held-out fit starts from the constants fitted on all runs (not from the plain model, as
calibrate does) and stops when a sweep gains less than 1e-6 of the loss (calibrate: 1e-12), and
the golden-section searches stop at 1e-4 (1e-5).  A screen: on the base form it gives, on
both GPUs, calibrate's held-out counts (screen_h100.txt's and screen_h200.txt's second lines);
a form it would keep is to be confirmed by phase_forms.held_out and by calibrate itself.
Usage: screen.py DUMP FORM...   (FORM: a key of forms46.FORMS; 'base' too)"""
import sys
import os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import forms46 as f46
import phase_forms as pf


def calib_fit_from(D, form, mask, start, tol):
    t = dict(start)
    lin, best_e = pf.fit_linear(D, form, t, mask)
    golden = 0.6180339887498949
    for sweep in range(50):
        before = best_e
        for nm, lo, hi in form.scales:
            step = (hi - lo) / 40
            c = dict(t)
            bt, bl = t, lin

            def at(x):
                tt = dict(c)
                tt[nm] = x
                l_, e_ = pf.fit_linear(D, form, tt, mask)
                return tt, l_, e_
            for i in range(41):
                tt, l_, e = at(lo + i * step)
                if e < best_e:
                    best_e, bt, bl = e, tt, l_
            a_, b_ = max(lo, bt[nm] - step), min(hi, bt[nm] + step)
            x1, x2 = b_ - golden * (b_ - a_), a_ + golden * (b_ - a_)
            f1, f2 = at(x1), at(x2)
            while b_ - a_ > 1e-4:
                if f1[2] < f2[2]:
                    b_, x2, f2 = x2, x1, f1
                    x1 = b_ - golden * (b_ - a_)
                    f1 = at(x1)
                else:
                    a_, x1, f1 = x1, x2, f2
                    x2 = a_ + golden * (b_ - a_)
                    f2 = at(x2)
            for f in (f1, f2):
                if f[2] < best_e:
                    best_e, bt, bl = f[2], f[0], f[1]
            t, lin = bt, bl
        if before - best_e <= tol * before:
            break
    return t, lin


if __name__ == "__main__":
    D = pf.Data(sys.argv[1])
    base_fig, _ = pf.held_out(D, f46.FORMS["base"], sys.argv[1] + ".base.npy")
    print(f46.line("base (exact)", base_fig), flush=True)
    for key in sys.argv[2:]:
        form = f46.FORMS[key]
        start = dict(pf.START)
        for nm, lo, hi in form.extra:
            start[nm] = pf.START.get(nm, lo)
        t0, _ = calib_fit_from(D, form, np.ones(D.nc, bool), start, 1e-6)
        pred = np.zeros(D.nc)
        for s in sorted(set(D.spec)):
            te = D.spec == s
            t, lin = calib_fit_from(D, form, ~te, t0, 1e-6)
            pred[te] = pf.predict(D, form, t, lin)[te]
        fig = pf.figures(D, pred)
        print(f46.line(form.name + " [screen]", fig), flush=True)
        t, lin = calib_fit_from(D, form, np.ones(D.nc, bool), t0, 1e-6)
        print("    all-fit: " + " ".join("%s=%.3f" % (n, t[n]) for n, _, _ in form.scales) + " " +
              " ".join("%s=%.4g" % (n, x) for n, x in zip("bwcx", lin)), flush=True)
        f46.compare(D, base_fig, fig)
