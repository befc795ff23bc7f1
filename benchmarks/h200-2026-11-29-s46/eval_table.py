#!/usr/bin/env python3
"""Session 46: the model at small n judged on the H200's measurements, before and after.
   eval_table.py ROWS
Rows are eval.sh's (set spec n name nkernels measured file-predicted before now kernels).  For each
run (a results file: set, spec, n): Spearman's rho of predicted against measured, the measured
gap of the predicted #1 to the measured best, the mean relative error; means per n and per spec
(all sets), and per set.  "pool": per spec and n, every row measured at that n in any folder
(the default ranking's and the one ranked at n), the #1 of the union judged the same way."""
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


def load(path, column):
    runs = defaultdict(dict)
    for line in open(path):
        f = line.split()
        runs[(f[0], f[1], int(f[2]))][f[3]] = (float(f[5]), float(f[column]))
    return runs


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def fmt(fs):
    return (f"{mean([f[0] for f in fs]):6.3f} {100 * mean([f[1] for f in fs]):5.1f}% "
            f"{100 * mean([f[2] for f in fs]):5.1f}%")


def main():
    before, after = load(sys.argv[1], 7), load(sys.argv[1], 8)
    pools = defaultdict(lambda: ([], [], []))  # (spec, n): measured, before, after
    per_run = []
    for key in sorted(before, key=lambda k: (k[1], k[2], k[0])):
        names = sorted(set(before[key]) & set(after.get(key, {})))
        if len(names) < 2:
            continue
        meas = [before[key][x][0] for x in names]
        fb = figures([before[key][x][1] for x in names], meas)
        fa = figures([after[key][x][1] for x in names], meas)
        per_run.append((key, len(names), fb, fa))
        if key[0] != "sweep":
            pool = pools[(key[1], key[2])]
            pool[0].extend(meas)
            pool[1].extend(before[key][x][1] for x in names)
            pool[2].extend(after[key][x][1] for x in names)
    head = "rho    gap   error"
    print(f"{'set':5} {'spec':17} {'n':>7} rows | before: {head} | after:  {head}")
    for (s, spec, n), m, fb, fa in per_run:
        print(f"{s:5} {spec:17} {n:7d} {m:4d} | {fmt([fb]):>26} | {fmt([fa]):>26}")
    for title, keyf, sets in (("set", lambda k: k[0], None), ("n", lambda k: k[2], None),
                              ("n, the sweep", lambda k: k[2], ("sweep",)),
                              ("n, held out", lambda k: k[2], ("fixed", "atn")),
                              ("spec", lambda k: k[1], None)):
        print(f"\nmeans per {title} (runs): before rho gap error | after rho gap error")
        groups = defaultdict(list)
        for key, _, fb, fa in per_run:
            if not sets or key[0] in sets:
                groups[keyf(key)].append((fb, fa))
        for g in sorted(groups):
            v = groups[g]
            print(f"  {str(g):17} {len(v):3d} | {fmt([x[0] for x in v])} | "
                  f"{fmt([x[1] for x in v])}")
    held = [(fb, fa) for key, _, fb, fa in per_run if key[0] != "sweep"]
    print(f"\nheld out (fixed and atn runs, {len(held)}): {fmt([x[0] for x in held])} | "
          f"{fmt([x[1] for x in held])}")
    print("\npool (per spec and n, every folder's rows measured at n): before | after")
    pooled = defaultdict(list)
    for (spec, n), (meas, pb, pa) in sorted(pools.items()):
        fb, fa = figures(pb, meas), figures(pa, meas)
        pooled["all"].append((fb, fa))
        pooled["n <= 24576" if n <= 24576 else "n > 24576"].append((fb, fa))
        print(f"  {spec:17} {n:7d} {len(meas):3d} | {fmt([fb])} | {fmt([fa])}")
    for g in ("all", "n <= 24576", "n > 24576"):
        v = pooled[g]
        print(f"  pools, {g:10} ({len(v)}) | {fmt([x[0] for x in v])} | {fmt([x[1] for x in v])}"
              f" | #1 over 10% behind: {sum(x[0][1] > 0.1 for x in v)} -> "
              f"{sum(x[1][1] > 0.1 for x in v)}")


main()
