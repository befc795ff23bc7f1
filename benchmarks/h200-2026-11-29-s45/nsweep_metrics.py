#!/usr/bin/env python3
"""Session 45: the figures of nsweep_model.sh from its rows
(spec n name nkernels measured-ns file-predicted-ns model-ns, one per measured candidate)."""
import sys
from collections import defaultdict


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return num / den if den else float("nan")


def figures(pred, meas):
    best = min(meas)
    first = min(range(len(pred)), key=lambda i: (pred[i], i))
    err = sum(abs(p - m) / m for p, m in zip(pred, meas)) / len(meas)
    return spearman(pred, meas), meas[first] / best - 1, err


runs = defaultdict(list)
for line in open(sys.argv[1]):
    spec, n, name, nk, meas, old, new = line.split()
    runs[(spec, int(n))].append((name, int(nk), float(meas), float(old), float(new)))

ns = sorted({n for _, n in runs})
specs = sorted({s for s, _ in runs})
print("per spec and n: rho, the predicted #1's gap to the measured best, mean relative error;")
print("file = the predictions in the results files (the model at 2^22), now = the model at n\n")
print(f"{'spec':18} {'n':>8} | {'file: rho':>9} {'gap':>6} {'error':>7} | "
      f"{'now: rho':>8} {'gap':>6} {'error':>7} | #1 file -> now")
tot = defaultdict(lambda: [[], []])
for s in specs:
    for n in ns:
        c = runs.get((s, n))
        if not c:
            continue
        meas = [x[2] for x in c]
        fo = figures([x[3] for x in c], meas)
        fn = figures([x[4] for x in c], meas)
        tot[n][0].append(fo)
        tot[n][1].append(fn)
        first_old = min(c, key=lambda x: x[3])[0]
        first_new = min(c, key=lambda x: x[4])[0]
        print(f"{s:18} {n:8d} | {fo[0]:9.3f} {100*fo[1]:5.1f}% {100*fo[2]:6.1f}% | "
              f"{fn[0]:8.3f} {100*fn[1]:5.1f}% {100*fn[2]:6.1f}% | {first_old} -> {first_new}")
    print()

print("over the five specs, per n: mean rho, mean gap, mean error; runs with rho >= 0.8, "
      "#1 within 2%")
print(f"{'n':>8} | {'file: rho':>9} {'gap':>6} {'error':>7} {'rho>=.8':>7} {'gap<=2%':>7} | "
      f"{'now: rho':>8} {'gap':>6} {'error':>7} {'rho>=.8':>7} {'gap<=2%':>7}")
for n in ns:
    row = f"{n:8d} |"
    for k in (0, 1):
        f = tot[n][k]
        m = len(f)
        row += (f" {sum(x[0] for x in f)/m:9.3f} {100*sum(x[1] for x in f)/m:5.1f}%"
                f" {100*sum(x[2] for x in f)/m:6.1f}% {sum(x[0] >= 0.8 for x in f):4d}/{m}"
                f" {sum(x[1] <= 0.02 for x in f):4d}/{m} |")
    print(row.rstrip(" |"))
