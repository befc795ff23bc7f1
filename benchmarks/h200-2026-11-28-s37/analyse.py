#!/usr/bin/env python3
"""Session 37's tables, from the run folders (each SPEC/results.xml with SPEC/index.txt).

  analyse.py cal PLAIN CAL    the held-out calibrated top 10 (CAL) against the plain top 30 (PLAIN)
  analyse.py var PLAIN CAL VAR  the plain top 10 with --variants 5 (VAR) against both

Times of two runs are compared as % of the copy bandwidth measured in each run.  A plan's
identity: each kernel's calls (as a set), E and threads per block, from index.txt's "Kernels"
section."""
import math, os, re, sys, xml.etree.ElementTree as ET

def load(d):
    root = ET.parse(os.path.join(d, 'results.xml')).getroot()
    rows = {}
    for x in root.iter('candidate'):
        r = int(x.get('predicted-rank'))
        if r:
            rows[r] = dict(pred=float(x.get('predicted-ns')), meas=float(x.get('measured-ns')),
                           ok=x.get('correct') == '1', pct=float(x.get('copy-percent')))
    return rows

def plans(d):
    """rank -> (fusion key, shape key) from index.txt."""
    out = {}
    for line in open(os.path.join(d, 'index.txt')):
        m = re.match(r'\s+cand(\d+)\s+kernel \d+: E=(\d+), (\d+) threads,.*ns/element:(.*)', line)
        if m:
            calls = ' '.join(sorted(re.findall(r'\(#(\d+)\)', m.group(4))))
            f, s = out.setdefault(int(m.group(1)), ([], []))
            f.append(calls); s.append(f"E{m.group(2)}t{m.group(3)}")
    return {r: (' / '.join(sorted(f)), ' '.join(s)) for r, (f, s) in out.items()}

def spearman(a, b):
    def ranks(v):
        r = [0] * len(v)
        for k, i in enumerate(sorted(range(len(v)), key=lambda i: v[i])): r[i] = k
        return r
    ra, rb, n = ranks(a), ranks(b), len(a)
    return 1 - 6 * sum((x - y) ** 2 for x, y in zip(ra, rb)) / (n * (n * n - 1))

def best(rows): return max((v['pct'], r) for r, v in rows.items() if v['ok'])

def geo(xs): return math.exp(sum(map(math.log, xs)) / len(xs))

def cal_table(plain, cal):
    print("| spec | plain #1 | plain best (top 30) | held-out #1 | held-out best (top 10) | "
          "Spearman / #1 gap / mean error of the held-out top 10 |")
    print("|---|---:|---:|---:|---:|---|")
    t1, tb, n = [], [], [0, 0, 0, 0]
    for s in sorted(os.listdir(cal)):
        p, c = load(os.path.join(plain, s)), load(os.path.join(cal, s))
        pred = [c[r]['pred'] for r in sorted(c)]; meas = [c[r]['meas'] for r in sorted(c)]
        rho, gap = spearman(pred, meas), c[1]['meas'] / min(meas) - 1
        err = sum(abs(x - y) / y for x, y in zip(pred, meas)) / len(meas)
        span = max(meas) / min(meas) - 1
        pb, cb = best(p)[0], best(c)[0]
        t1.append(p[1]['pct'] / c[1]['pct']); tb.append(pb / cb)
        n[0] += span > 0.1; n[1] += span > 0.1 and rho >= 0.8; n[2] += gap <= 0.02; n[3] += err <= 0.05
        print(f"| {s} | {p[1]['pct']:.1f}% | {pb:.1f}% | {c[1]['pct']:.1f}% | {cb:.1f}% | "
              f"{rho:.3f} / {100 * gap:.1f}% / {100 * err:.1f}% |")
    k = len(t1)
    print(f"\nheld-out #1 against plain #1, time: geometric mean {geo(t1):.3f}; faster by more than 2% "
          f"on {sum(x < 0.98 for x in t1)}, slower by more than 2% on {sum(x > 1.02 for x in t1)} of {k}")
    print(f"best of the held-out top 10 against the best of the plain top 30: {geo(tb):.3f}")
    print(f"held-out top 10: Spearman >= 0.8 on {n[1]} of {n[0]} (span > 10%), #1 within 2% on "
          f"{n[2]} of {k}, mean error <= 5% on {n[3]} of {k}")

def var_table(plain, cal, var):
    print("| spec | plain #1 | plain best (top 30) | held-out best (top 10) | with variants: best (rank, shape) | its shapes of the #1, % of copy |")
    print("|---|---:|---:|---:|---|---|")
    g, g2 = [], []
    for s in sorted(os.listdir(var)):
        p, c, v = load(os.path.join(plain, s)), load(os.path.join(cal, s)), load(os.path.join(var, s))
        vp = plans(os.path.join(var, s))
        vb, vr = best(v)
        shapes = ', '.join(f"{vp[r][1]} {v[r]['pct']:.0f}" for r in sorted(v) if vp[r][0] == vp[1][0])
        pb, cb = best(p)[0], best(c)[0]
        g.append(pb / vb); g2.append(max(pb, cb) / vb)
        print(f"| {s} | {p[1]['pct']:.1f}% | {pb:.1f}% | {cb:.1f}% | {vb:.1f}% (cand{vr:02d}, "
              f"{vp[vr][1]}) | {shapes} |")
    print(f"\ntime of the best with variants over the best of the plain top 30: geometric mean "
          f"{geo(g):.3f}; over the better of the plain top 30 and the held-out top 10: {geo(g2):.3f}")

if __name__ == '__main__':
    if sys.argv[1] == 'cal': cal_table(*sys.argv[2:4])
    else: var_table(*sys.argv[2:5])
