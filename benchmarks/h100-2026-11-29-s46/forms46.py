#!/usr/bin/env python3
"""Session 46: forms not tried before, held out (leave one spec out) as kasgen calibrate does it.

Usage: forms46.py DUMP FORM...   (DUMP: session 44's phase dump, see
../h200-2026-11-29-s44/phase_forms.py; base's held-out predictions cached in DUMP.base.npy)
Each form is calibrate.c's (phase_forms.py's `base`) with one more constant: a scanned one
(coordinate descent like the others) or a linear one (solved with b, w, c by the same
non-negative least squares).  This script's main holds them out with calibrate's own start and
tolerance (phase_forms.held_out): 8 minutes or more a form at the session's load, so TABLE.md's
rows are screen.py's, which imports FORMS from here.
"""
import sys, os
HERE = os.path.dirname(os.path.abspath(__file__))
for sub in ("h200-2026-11-29-s44", "h100-2026-11-29-s45"):
    sys.path.insert(0, os.path.join(HERE, "..", sub))
import numpy as np
import phase_forms as pf


def io_prime(D, t, save_scale=1.0):
    K = D.K
    rest = K["io"] - K["r1"] - K["rs"] - K["lines"]
    if save_scale != 1.0:
        savep = D.ksum(D.P["save"]) - K["r1"] - K["rs"]
        rest = rest + (save_scale - 1) * savep
    return pf.io_cal(t, K["r1"], K["rs"], K["cov"], rest, K["lines"], K["wf"], D.kreq)


class Form46(pf.Form):
    """kind: 'ug' unhidden share u + g * barriers (capped at 1); 'ws' a scale on the saves that
    are not request-bound; 'f' a scale on the grid floor; 'lin' a linear feature per kernel
    (feat), its constant x >= 0 solved with b, w, c; 'launch' the candidate's launches as such a
    feature."""
    def __init__(self, name, kind, extra=(), feat=None):
        super().__init__(name, extra)
        self.kind, self.feat = kind, feat

    def kernel_parts(self, D, t):
        io = io_prime(D, t, t.get("ws", 1.0) if self.kind == "ws" else 1.0)
        C = D.K["compute"]
        share = t["u"]
        if self.kind == "ug":
            share = np.minimum(1, t["u"] + t["g"] * D.K["nbar"])
        return io, C, t["a"] * (np.maximum(io, C) + share * np.minimum(io, C))

    def features(self, D, t):
        K = D.K
        io, C, work = self.kernel_parts(D, t)
        floor = K["floor"] * (t["f"] if self.kind == "f" else 1.0)
        fixed = D.csum(np.hypot(work, floor) + K["spill"])
        X = [D.csum(K["barrier"]), D.csum(K["bw"]), D.nk]
        if self.kind == "lin":
            X.append(D.csum(self.feat(D, t, io, C, work)))
        if self.kind == "launch":
            X.append(D.launch)
        return fixed, np.array(X)


def tpe(D):
    return D.K["threads"] / D.K["e"]


FORMS = {
    "base": pf.FORMS["base"],
    "ug": Form46("ug: u + g*barriers", "ug", [("g", 0, 0.5)]),
    "ws": Form46("ws: plain saves scaled", "ws", [("ws", 0.25, 4)]),
    "f": Form46("f: floor scaled", "f", [("f", 0.25, 4)]),
    "nbar_min": Form46("lin: barriers * a*min(IO',C)", "lin",
                       feat=lambda D, t, io, C, w: D.K["nbar"] * t["a"] * np.minimum(io, C)),
    "bar_comp": Form46("lin: barrier term * C/IO'", "lin",
                       feat=lambda D, t, io, C, w: D.K["barrier"] * C / np.maximum(io, 1e-12)),
    "multi_work": Form46("lin: work of kernels of several threads per element", "lin",
                         feat=lambda D, t, io, C, w: w * (tpe(D) > 1)),
    "bar_work_blocks": Form46("lin: barriers * work / blocks per SM", "lin",
                              feat=lambda D, t, io, C, w: D.K["nbar"] * w / D.K["blocks"]),
}

def last_phase_save_staged_out(D):
    """The save of a staged-out kernel's last phase (its copy-out), per kernel."""
    last = np.r_[D.k_of_p[1:] != D.k_of_p[:-1], True]
    out = np.zeros(D.nkern)
    out[D.k_of_p[last]] = D.P["save"][last]
    return out * (D.K["staged"] >= 2)


def load_save(D):
    return D.ksum(D.P["load"]), D.ksum(D.P["save"])


FORMS.update({
    "stage_out": Form46("lin: staged copy-out's save, serial", "lin",
                        feat=lambda D, t, io, C, w: last_phase_save_staged_out(D)),
    "mixed": Form46("lin: min(loads, saves)", "lin",
                    feat=lambda D, t, io, C, w: np.minimum(*load_save(D))),
    "bar_bal": Form46("lin: barrier term * min(IO',C)/max(IO',C)", "lin",
                      feat=lambda D, t, io, C, w: D.K["barrier"] * np.minimum(io, C) /
                      np.maximum(np.maximum(io, C), 1e-12)),
    "nbar_min_blocks": Form46("lin: barriers * a*min(IO',C) / blocks per SM", "lin",
                              feat=lambda D, t, io, C, w: D.K["nbar"] * t["a"] *
                              np.minimum(io, C) / D.K["blocks"]),
})

FORMS.update({
    "launch": Form46("lin: the launches once more (a scale on them, 1 + x)", "launch"),
    "multi_io": Form46("lin: IO' * (1 - 1 / threads per element)", "lin",
                       feat=lambda D, t, io, C, w: io * (1 - 1 / tpe(D))),
})


def compare(D, base_fig, fig):
    for r in sorted(fig):
        b, f = base_fig[r], fig[r]
        lost = []
        for lab, ok in (("rho", lambda x: x[3] <= 0.1 or x[0] >= 0.8),
                        ("gap", lambda x: x[1] <= 0.02), ("err", lambda x: x[2] <= 0.05)):
            if ok(b) != ok(f):
                lost.append("%s %s" % (lab, "gained" if ok(f) else "LOST"))
        if lost or abs(f[2] - b[2]) > 0.005 or abs(f[0] - b[0]) > 0.03:
            print("    %-34s rho %.3f->%.3f gap %.1f%%->%.1f%% err %.1f%%->%.1f%% %s" %
                  (D.runs[r][1].split("/")[-2], b[0], f[0], 100 * b[1], 100 * f[1], 100 * b[2],
                   100 * f[2], ", ".join(lost)), flush=True)


def line(nm, fig):
    t = pf.tally(fig)
    return "%-50s Spearman %d of %d, #1 %d of %d, error %d of %d (mean %.2f%%)" % (
        nm, t[0], t[1], t[2], t[4], t[3], t[4], t[5])


if __name__ == "__main__":
    D = pf.Data(sys.argv[1])
    base_fig, _ = pf.held_out(D, FORMS["base"], sys.argv[1] + ".base.npy")
    print(line("base", base_fig), flush=True)
    for key in sys.argv[2:]:
        form = FORMS[key]
        fig, consts = pf.held_out(D, form, None)
        t, lin = pf.calib_fit(D, form, np.ones(D.nc, bool))
        print(line(form.name, fig), flush=True)
        lnames = ["b", "w", "c", "x"]
        print("    all-fit: " + " ".join("%s=%.3f" % (n, t[n]) for n, _, _ in form.scales) + " " +
              " ".join("%s=%.4g" % (n, x) for n, x in zip(lnames, lin)), flush=True)
        compare(D, base_fig, fig)
