#!/usr/bin/env python3
"""Session 45: the calibration's loss against issue #14's targets, held out (leave one spec out).

Usage: loss_forms.py DUMP [FORM ...]      (DUMP: as for ../h200-2026-11-29-s44/phase_forms.py)
       loss_forms.py DUMP --shrink         (plain^(1-λ) · calibrated^λ over the base's held-out
                                            predictions, for a grid of λ: an upper bound, see below)

The model's form is calibrate.c's (phase_forms.py's 'base': the same scans, golden-section
searches and non-negative least squares for b, w, c); only what the fit minimizes changes:

  base     Σ ((t - m) / m)^2 over all candidates (calibrate.c)
  run      the same, each run's mean counting once (a candidate's weight 1 / candidates of its run)
  huber    Huber's loss of the relative error, δ = 5% (quadratic within, linear beyond)
  abs      Σ |t - m| / m
  log      Σ log(t / m)^2
  run+huber, run+log  the two combined

The linear constants under a robust or log loss are solved by iteratively reweighted least
squares (4 rounds from the squared loss's weights), the scales' searches compare the true loss.
Every figure is held out as calibrate does it: a spec's runs predicted by constants fitted on the
other specs' runs only.

--shrink: the geometric blend of the plain model's and the held-out calibrated predictions for
λ on a grid.  Counting each λ's figures over all specs and picking the best is a choice made on
the held-out specs themselves, so a λ that gains here is only a candidate for a nested choice;
a grid on which no λ gains without losing rules the blend out (a nested choice picks, per spec,
one of these λ).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "h200-2026-11-29-s44"))
import phase_forms as pf  # noqa: E402

HUBER = 0.05
IRLS_ROUNDS = 4


class LossForm(pf.Form):
    def __init__(self, name, per_run=False, loss="sq"):
        super().__init__(name)
        self.per_run, self.loss = per_run, loss

    def base_weight(self, D):
        """Each candidate's weight in the loss (before the relative scaling)."""
        if not self.per_run:
            return np.ones(D.nc)
        counts = np.bincount(D.run, minlength=len(D.runs)).astype(float)
        return counts.mean() / counts[D.run]

    def loss_of(self, r):
        """The loss of relative errors r (t - m) / m, elementwise."""
        if self.loss == "sq":
            return r * r
        if self.loss == "huber":
            a = np.abs(r)
            return np.where(a <= HUBER, r * r, 2 * HUBER * a - HUBER * HUBER)
        if self.loss == "abs":
            return np.abs(r)
        if self.loss == "log":
            return np.log1p(np.maximum(r, -0.999)) ** 2
        raise ValueError(self.loss)

    def irls_weight(self, r, pred, m):
        """The weight on ((t - m) / m)^2 that makes the squared loss match this one at r."""
        if self.loss == "huber":
            return np.minimum(1, HUBER / np.maximum(np.abs(r), 1e-12))
        if self.loss == "abs":
            return 1 / np.maximum(np.abs(r), 1e-3)
        if self.loss == "log":  # log(t/m) ~ (t - m) / sqrt(t m) near t = m
            return m / np.maximum(pred, 1e-12 * m)
        return np.ones_like(r)


def nnls3(A, v, rr):
    """min over theta >= 0 of rr - 2 theta.v + theta' A theta (phase_forms.fit_linear's)."""
    n = len(v)
    try:
        x = np.linalg.solve(A, v)
        if np.all(x >= 0):
            return x
    except np.linalg.LinAlgError:
        pass
    best, best_e = np.zeros(n), rr
    for s in range(1, 1 << n):
        idx = [r for r in range(n) if s >> r & 1]
        try:
            x = np.linalg.solve(A[np.ix_(idx, idx)], v[idx])
        except np.linalg.LinAlgError:
            continue
        if np.any(x < 0):
            continue
        th = np.zeros(n)
        th[idx] = x
        e = rr - 2 * th @ v + th @ A @ th
        if e < best_e:
            best_e, best = e, th
    return best


def fit_linear(D, form, t, mask):
    """b, w, c >= 0 for the scales t, and the loss there."""
    fixed, X = form.features(D, t)
    m = D.meas[mask]
    rest = m - D.launch[mask] - fixed[mask]
    Xm = X[:, mask]
    w0 = form.bw[mask] / m ** 2
    w = w0
    for _ in range(IRLS_ROUNDS if form.loss != "sq" else 1):
        A = (Xm * w) @ Xm.T
        v = (Xm * w) @ rest
        x = nnls3(A, v, np.sum(w * rest * rest))
        pred = m - rest + x @ Xm
        r = (pred - m) / m
        w = w0 * form.irls_weight(r, pred, m)
    return x, np.sum(form.bw[mask] * form.loss_of(r))


def calib_fit(D, form, mask):
    """phase_forms.calib_fit with this module's fit_linear (the same search)."""
    saved = pf.fit_linear
    pf.fit_linear = fit_linear
    try:
        return pf.calib_fit(D, form, mask)
    finally:
        pf.fit_linear = saved


def held_out(D, form):
    pred = np.zeros(D.nc)
    for s in sorted(set(D.spec)):
        te = D.spec == s
        t, lin = calib_fit(D, form, ~te)
        pred[te] = pf.predict(D, form, t, lin)[te]
    return pred


FORMS = {
    "base": LossForm("base"),
    "run": LossForm("run", per_run=True),
    "huber": LossForm("huber", loss="huber"),
    "abs": LossForm("abs", loss="abs"),
    "log": LossForm("log", loss="log"),
    "run+huber": LossForm("run+huber", per_run=True, loss="huber"),
    "run+log": LossForm("run+log", per_run=True, loss="log"),
}


def plain_pred(D):
    """The uncalibrated model (model_combine_terms without a calibration)."""
    K = D.K
    return D.launch + D.csum(np.hypot(K["work"], K["floor"]) + K["barrier"] + K["spill"])


def line(name, fig):
    t = pf.tally(fig)
    return "%-12s Spearman %d of %d, #1 %d of %d, error %d of %d (mean %.2f%%)" % (
        name, t[0], t[1], t[2], t[4], t[3], t[4], t[5])


def changes(D, base_fig, fig):
    out = []
    for r in sorted(fig):
        b, f = base_fig[r], fig[r]
        moved = []
        for lab, ok in (("rho", lambda x: x[3] <= 0.1 or x[0] >= 0.8),
                        ("gap", lambda x: x[1] <= 0.02), ("err", lambda x: x[2] <= 0.05)):
            if ok(b) != ok(f):
                moved.append("%s %s" % (lab, "gained" if ok(f) else "LOST"))
        if moved or abs(f[2] - b[2]) > 0.01:
            out.append("    %-28s rho %.3f->%.3f gap %.1f%%->%.1f%% err %.1f%%->%.1f%% %s" % (
                D.runs[r][1].split("/")[-2], b[0], f[0], 100 * b[1], 100 * f[1], 100 * b[2],
                100 * f[2], ", ".join(moved)))
    return out


def main():
    D = pf.Data(sys.argv[1])
    names = sys.argv[2:] or list(FORMS)
    cache = sys.argv[1] + ".base.npy"  # phase_forms.py's base predictions, computed once
    base = np.load(cache) if os.path.exists(cache) else held_out(D, FORMS["base"])
    base_fig = pf.figures(D, base)
    print("%s: %d runs, %d candidates" % (sys.argv[1], len(D.runs), D.nc))
    print(line("plain", pf.figures(D, plain_pred(D))))
    print(line("base", base_fig), flush=True)
    if names == ["--shrink"]:
        plain = plain_pred(D)
        for lam in np.arange(0, 1.0001, 0.1):
            fig = pf.figures(D, plain ** (1 - lam) * base ** lam)
            print(line("λ=%.1f" % lam, fig))
            print("\n".join(changes(D, base_fig, fig)), flush=True)
        return
    for nm in names:
        if nm == "base":
            continue
        form = FORMS[nm]
        form.bw = form.base_weight(D)
        pred = held_out(D, form)
        np.save("%s.%s.npy" % (sys.argv[1], nm), pred)
        fig = pf.figures(D, pred)
        t, lin = calib_fit(D, form, np.ones(D.nc, bool))
        print(line(nm, fig))
        print("    all-fit: " + pf.fmt_t(t, lin, form))
        print("\n".join(changes(D, base_fig, fig)), flush=True)


FORMS["base"].bw = None
if __name__ == "__main__":
    main()
