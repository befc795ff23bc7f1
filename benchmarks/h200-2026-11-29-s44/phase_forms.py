#!/usr/bin/env python3
"""Session 44: a kernel's cost from its barrier-separated phases, held out (leave one spec out).

Usage: phase_forms.py DUMP [FORM ...]
DUMP: what `KASGEN_DUMP_PHASES=1 kasgen calibrate RUNS --db DB --held-out --ptxas` prints on
stderr when built with phase_dump.patch (this folder; not committed to src/): per run
`S index spec source`, per measured candidate `C nkernels measured-ns run`, per kernel `K` with
the ModelTerms and plan figures named in KC, then one `PH` line per phase (the plan's steps
between barriers, in order; a staged copy-in is the first phase, a staged copy-out the last)
with the fields named in PC, then `L launch-ns ok`.

'base' is the calibrated form of src/calibrate.c (a, r1, rs, l, p, s, u, v by coordinate descent
over the same scans and golden-section searches, b, w, c by the same non-negative weighted least
squares); it reproduces `kasgen calibrate --held-out`'s counts.  The other forms change the work
term as named in FORMS below; held out as calibrate does it (a spec's runs predicted by the
constants fitted on the other specs' runs).
"""
import sys
import numpy as np

KC = ("work floor barrier spill io compute r1 rs cov lines bw wf blocks occ threads e groups "
      "nbar nph staged sms").split()
PC = "load save r1 rs cov compute wf loadph saveph".split()


def load(fn):
    runs, cands, ks, phs = [], [], [], []
    cur = None
    for line in open(fn):
        f = line.split()
        if not f or f[0] not in ("S", "C", "K", "PH", "L"):
            continue
        if f[0] == "S":
            runs.append((f[2], f[3] if len(f) > 3 else ""))
        elif f[0] == "C":
            cur = {"nk": int(f[1]), "meas": float(f[2]), "run": int(f[3]), "ks": []}
        elif f[0] == "K":
            cur["ks"].append((dict(zip(KC, map(float, f[1:]))), []))
        elif f[0] == "PH":
            cur["ks"][-1][1].append(list(map(float, f[1:])))
        elif f[0] == "L":
            if int(f[2]) and len(cur["ks"]) == cur["nk"]:
                cur["launch"] = float(f[1])
                cands.append(cur)
            cur = None
    return runs, cands


class Data:
    def __init__(self, fn):
        self.runs, cands = load(fn)
        self.meas = np.array([c["meas"] for c in cands])
        self.launch = np.array([c["launch"] for c in cands])
        self.run = np.array([c["run"] for c in cands])
        self.spec = np.array([self.runs[c["run"]][0] for c in cands])
        self.nk = np.array([c["nk"] for c in cands], float)
        self.cand_of_k = np.array([i for i, c in enumerate(cands) for _ in c["ks"]])
        self.K = {n: np.array([k[n] for c in cands for k, _ in c["ks"]]) for n in KC}
        ph = [(ki, p) for ki, (k, pl) in enumerate(k for c in cands for k in c["ks"]) for p in pl]
        self.k_of_p = np.array([ki for ki, _ in ph])
        self.P = {n: np.array([p[j] for _, p in ph]) for j, n in enumerate(PC)}
        self.nc = len(cands)
        self.plain_excess = {}
        self.nkern = len(self.K["work"])
        # the kernel's slice lines, spread over its phases by their loads
        lsum = self.ksum(self.P["load"])
        share = np.where(lsum[self.k_of_p] > 0, self.P["load"] / np.maximum(lsum[self.k_of_p], 1e-300),
                         0)
        self.P["lines"] = self.K["lines"][self.k_of_p] * share
        self.kreq = np.nonzero((self.K["r1"] > 0) | (self.K["rs"] > 0))[0]
        self.preq = np.nonzero((self.P["r1"] > 0) | (self.P["rs"] > 0))[0]
        # checks: the phases add up to the kernel's io and compute
        io = self.ksum(self.P["load"] + self.P["save"]) + self.K["lines"]
        assert np.allclose(io, self.K["io"], rtol=1e-6, atol=1e-9), np.max(np.abs(io - self.K["io"]))
        assert np.allclose(self.ksum(self.P["compute"]), self.K["compute"], rtol=1e-6, atol=1e-9)

    def ksum(self, v):
        return np.bincount(self.k_of_p, weights=v, minlength=self.nkern)

    def csum(self, v):
        return np.bincount(self.cand_of_k, weights=v, minlength=self.nc)


def io_cal(t, r1, rs, cov, rest_bytes, lines, wf, req_at):
    """IO' of calibrate.c (model_calibrated_work) from its parts; req_at: the indices where
    there are requests (elsewhere REQ is 0 and IO' is REST)."""
    rest = rest_bytes + t["l"] * lines
    io = rest.copy()
    if len(req_at):
        r1, rs, cov, rst = r1[req_at], rs[req_at], cov[req_at], rest[req_at]
        req = t["r1"] * r1 + t["rs"] * (rs + t["s"] * (cov - rs / 2))
        p = t["p"]
        if p > 1:
            with np.errstate(all="ignore"):
                soft = (np.maximum(req, 0) ** p + np.maximum(rst, 0) ** p) ** (1 / p)
            io[req_at] = np.where((req > 0) & (rst > 0), soft, req + rst)
        else:
            io[req_at] = req + rst
    return np.maximum(io, t["v"] * wf)


def kernel_work(D, t):
    K = D.K
    io = io_cal(t, K["r1"], K["rs"], K["cov"], K["io"] - K["r1"] - K["rs"] - K["lines"], K["lines"],
                K["wf"], D.kreq)
    return np.maximum(io, K["compute"]) + t["u"] * np.minimum(io, K["compute"])


def phase_work(D, t, inflight=False):
    P = D.P
    ld = P["loadph"] if inflight else P["load"]
    sv = P["saveph"] if inflight else P["save"]
    io = io_cal(t, P["r1"], P["rs"], P["cov"], ld + sv - P["r1"] - P["rs"], P["lines"], P["wf"],
                D.preq)
    return D.ksum(np.maximum(io, P["compute"]) + t["u"] * np.minimum(io, P["compute"]))


# ---- forms: (nonlinear scales beyond base's, linear features beyond b, w, c, the work) -------
BASE_SCALES = [("a", .5, 1.5), ("r1", .25, 4), ("rs", .25, 4), ("l", .25, 4), ("p", 1, 4),
               ("s", -1.99, 1.99), ("u", 0, 1), ("v", 0, 2)]
START = dict(a=1, r1=1, rs=1, l=1, p=1, s=0, u=0, v=0)


def hide(D, t, how):
    B = D.K["blocks"]
    if how == "q":
        return t["q"] * np.ones_like(B)
    if how == "q/blocks":
        return np.minimum(1, t["q"] / B)
    if how == "blocks^-q":
        return B ** -t["q"]
    if how == "q(1-occ)":
        return t["q"] * (1 - D.K["occ"])
    raise ValueError(how)


def plain_excess(D, inflight=False):
    """The phases' excess over the kernel's max with the plain model's terms (every scale 1, no
    overlap, slope or unhidden share): what ModelTerms could carry as one number."""
    if inflight not in D.plain_excess:
        D.plain_excess[inflight] = excess(D, dict(START), inflight)
    return D.plain_excess[inflight]


class Form:
    def __init__(self, name, extra=(), linear=(), blend=None, inflight=False, plain=False):
        self.name, self.extra, self.linear, self.plain = name, list(extra), list(linear), plain
        self.blend, self.inflight = blend, inflight
        self.scales = BASE_SCALES + self.extra

    def work(self, D, t):
        M = kernel_work(D, t)
        if self.blend is None:
            return t["a"] * M
        if self.plain:
            return t["a"] * (M + hide(D, t, self.blend) * plain_excess(D, self.inflight))
        S = phase_work(D, t, self.inflight)
        return t["a"] * (M + hide(D, t, self.blend) * (S - M))

    def features(self, D, t):
        """Per candidate: what the work leaves (fixed part) and the linear features."""
        K = D.K
        fixed = D.csum(np.hypot(self.work(D, t), K["floor"]) + K["spill"])
        X = [D.csum(K["barrier"]), D.csum(K["bw"]), D.nk]
        for lf in self.linear:
            X.append(D.csum(lf(D, t)))
        return fixed, np.array(X)


def fit_linear(D, form, t, mask):
    fixed, X = form.features(D, t)
    m = D.meas[mask]
    rest = (m - D.launch[mask] - fixed[mask])
    w = 1 / m ** 2
    Xm = X[:, mask]
    A = (Xm * w) @ Xm.T
    v = (Xm * w) @ rest
    rr = np.sum(w * rest * rest)
    n = len(X)
    try:  # the unconstrained minimum, where feasible, is the constrained one
        x = np.linalg.solve(A, v)
        if np.all(x >= 0):
            return x, max(rr - 2 * x @ v + x @ A @ x, 0)
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
    return best, max(best_e, 0)


def calib_fit(D, form, mask):
    t = dict(START)
    for nm, lo, hi in form.extra:
        t[nm] = START.get(nm, lo)
    lin, best_e = fit_linear(D, form, t, mask)
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
                l_, e_ = fit_linear(D, form, tt, mask)
                return tt, l_, e_
            for i in range(41):
                tt, l_, e = at(lo + i * step)
                if e < best_e:
                    best_e, bt, bl = e, tt, l_
            a_, b_ = max(lo, bt[nm] - step), min(hi, bt[nm] + step)
            x1, x2 = b_ - golden * (b_ - a_), a_ + golden * (b_ - a_)
            f1, f2 = at(x1), at(x2)
            while b_ - a_ > 1e-5:
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
        if before - best_e <= 1e-12 * before:
            break
    return t, lin


def predict(D, form, t, lin):
    fixed, X = form.features(D, t)
    return D.launch + fixed + lin @ X


def spearman(x, y):
    from scipy.stats import rankdata
    a, b = rankdata(x), rankdata(y)
    a, b = a - a.mean(), b - b.mean()
    d = np.sqrt((a * a).sum() * (b * b).sum())
    return (a * b).sum() / d if d > 0 else np.nan


def figures(D, pred):
    out = {}
    for r in range(len(D.runs)):
        sel = D.run == r
        if not sel.any():
            continue
        m, p = D.meas[sel], pred[sel]
        span = m.max() / m.min() - 1
        out[r] = (spearman(p, m), m[np.argmin(p)] / m.min() - 1, np.mean(np.abs(p - m) / m), span)
    return out


def tally(fig):
    ranked = [f for f in fig.values() if f[3] > 0.10]
    return (sum(f[0] >= 0.8 for f in ranked), len(ranked), sum(f[1] <= 0.02 for f in fig.values()),
            sum(f[2] <= 0.05 for f in fig.values()), len(fig),
            100 * np.mean([f[2] for f in fig.values()]))


def held_out(D, form, cache=None):
    """Figures of form held out; cache: a file of its held-out predictions (base's, computed once
    per dump)."""
    import os
    if cache and os.path.exists(cache):
        return figures(D, np.load(cache)), None
    pred = np.zeros(D.nc)
    consts = {}
    for s in sorted(set(D.spec)):
        te = D.spec == s
        t, lin = calib_fit(D, form, ~te)
        pred[te] = predict(D, form, t, lin)[te]
        consts[s] = (t, lin)
    if cache:
        np.save(cache, pred)
    return figures(D, pred), consts


def fmt_t(t, lin, form):
    names = [n for n, _, _ in form.scales]
    s = " ".join("%s=%.3f" % (n, t[n]) for n in names)
    lnames = ["b", "w", "c"] + ["lin%d" % i for i in range(len(form.linear))]
    return s + " " + " ".join("%s=%.4g" % (n, x) for n, x in zip(lnames, lin))


def excess(D, t, inflight=False):
    return phase_work(D, t, inflight) - kernel_work(D, t)


FORMS = {
    "base": Form("base"),
    # phases' max summed, blended with the kernel's max by a share h of the phases' excess
    "phase h=q": Form("phase h=q", [("q", 0, 1)], blend="q"),
    "phase h=q/blocks": Form("phase h=q/blocks", [("q", 0, 4)], blend="q/blocks"),
    "phase h=blocks^-q": Form("phase h=blocks^-q", [("q", 0, 4)], blend="blocks^-q"),
    "phase h=q(1-occ)": Form("phase h=q(1-occ)", [("q", 0, 1)], blend="q(1-occ)"),
    # the excess outside the hypot, linear (its constant with b, w, c)
    "phase excess/blocks linear": Form("phase excess/blocks linear",
                                       linear=[lambda D, t: excess(D, t) / D.K["blocks"]]),
    "phase excess linear": Form("phase excess linear", linear=[lambda D, t: excess(D, t)]),
    # each phase's loads in flight on their own (not the whole kernel's): Little's law per phase
    "inflight h=q": Form("inflight h=q", [("q", 0, 1)], blend="q", inflight=True),
    "inflight h=q/blocks": Form("inflight h=q/blocks", [("q", 0, 4)], blend="q/blocks",
                                inflight=True),
    # the excess counted once with the plain terms (one number per kernel in ModelTerms)
    "plain excess h=q": Form("plain excess h=q", [("q", 0, 1)], blend="q", plain=True),
    "plain excess h=q/blocks": Form("plain excess h=q/blocks", [("q", 0, 4)], blend="q/blocks",
                                    plain=True),
    "plain excess/blocks linear": Form("plain excess/blocks linear",
                                       linear=[lambda D, t: plain_excess(D) / D.K["blocks"]]),
    "plain excess linear": Form("plain excess linear", linear=[lambda D, t: plain_excess(D)]),
    "inflight excess linear": Form("inflight excess linear",
                                   linear=[lambda D, t: excess(D, t, True)]),
}

if __name__ == "__main__":
    D = Data(sys.argv[1])
    names = sys.argv[2:] or list(FORMS)
    print("%s: %d runs, %d candidates, %d kernels, %d phases" % (sys.argv[1], len(D.runs), D.nc,
                                                                 D.nkern, len(D.k_of_p)))
    base_fig = None
    if names[0] != "base":
        names = ["base"] + names
    for nm in names:
        form = FORMS[nm]
        fig, consts = held_out(D, form, sys.argv[1] + ".base.npy" if nm == "base" else None)
        t, lin = calib_fit(D, form, np.ones(D.nc, bool))
        print("%-28s Spearman %d of %d, #1 %d of %d, error %d of %d (mean %.2f%%)" %
              ((nm,) + tally(fig)[:3] + (tally(fig)[4], tally(fig)[3], tally(fig)[4],
                                         tally(fig)[5])), flush=True)
        print("    all-fit: " + fmt_t(t, lin, form), flush=True)
        if base_fig is None:
            base_fig = fig
            continue
        for r in sorted(fig):
            b, f = base_fig[r], fig[r]
            lost = []
            for j, (lab, ok) in enumerate((("rho", lambda x: x[3] <= 0.1 or x[0] >= 0.8),
                                           ("gap", lambda x: x[1] <= 0.02),
                                           ("err", lambda x: x[2] <= 0.05))):
                if ok(b) != ok(f):
                    lost.append("%s %s" % (lab, "gained" if ok(f) else "LOST"))
            if lost or abs(f[2] - b[2]) > 0.01:
                print("    %-34s rho %.3f->%.3f gap %.1f%%->%.1f%% err %.1f%%->%.1f%% %s" %
                      (D.runs[r][1].split("/")[-2], b[0], f[0], 100 * b[1], 100 * f[1], 100 * b[2],
                       100 * f[2], ", ".join(lost)), flush=True)
