#!/usr/bin/env python3
"""Session 38: the tables of calls 1-3 (benchmarks/RESULTS.md), from the results files.

Usage: analyse.py NEW S37CAL S37VAR
NEW:    call1-3's r/s38/cal/<spec>/ unpacked (this calibration's own top 10, with block shapes)
S37CAL: session 37's calls 1-3 r/s37/cal/<spec>/ (its calibration's top 10, no shapes)
S37VAR: session 37's calls 4-5 r/s37/var*/<spec>/ (the plain model's top 10 with shapes)
Each figure is the model's own: its predicted-ns against measured-ns of its correct ranked rows.
"""
import glob, math, os, re, sys
from scipy.stats import spearmanr

def rows(f):
    out = []
    for m in re.finditer(r'<candidate ([^>]*)/>', open(f).read()):
        a = dict(re.findall(r'([\w-]+)="([^"]*)"', m[1]))
        if a['predicted-rank'] != '0' and a['correct'] == '1':
            out.append((int(a['predicted-rank']), float(a['predicted-ns']), float(a['measured-ns'])))
    return sorted(out)

def figs(r):  # rho, #1 gap, mean error, #1 measured, best measured, span
    p = [x[1] for x in r]; m = [x[2] for x in r]; b = min(m)
    return (spearmanr(p, m)[0], m[p.index(min(p))] / b - 1,
            sum(abs(x - y) / y for x, y in zip(p, m)) / len(m), m[0], b, max(m) / b - 1)

def runs(pattern):
    return {os.path.basename(d): d for d in glob.glob(pattern) if os.path.exists(d + '/results.xml')}

new, s37, var = (runs(os.path.join(a, '*')) for a in sys.argv[1:4])
models = (('plain + shapes', var), ('session 37 calibration', s37), ('this calibration + shapes', new))
print('| spec | ' + ' | '.join(f'{k}: rho / #1 gap / error' for k, _ in models) +
      ' | #1 measured, ns (same order) | best measured |')
print('|---|---|---|---|---|---:|')
tally = {k: [0] * 6 for k, _ in models}
for S in sorted(new):
    cells, ones, bests = [], [], []
    for k, src in models:
        if S not in src:
            cells.append('–'); ones.append('–'); continue
        rho, gap, err, one, best, span = figs(rows(src[S] + '/results.xml'))
        bests.append(best); ones.append(f'{one:.4f}')
        bold = lambda x, bad: f'**{x}**' if bad else x
        cells.append(' / '.join((bold(f'{rho:.3f}', span > 0.1 and rho < 0.8),
                                 bold(f'{100 * gap:.1f}%', gap > 0.02), bold(f'{100 * err:.1f}%', err > 0.05))))
        t = tally[k]; t[0] += 1; t[1] += span > 0.1; t[2] += span > 0.1 and rho >= 0.8
        t[3] += gap <= 0.02; t[4] += err <= 0.05; t[5] += err
    print(f'| {S} | ' + ' | '.join(cells) + f' | {" / ".join(ones)} | {min(bests):.4f} |')
print()
for k, t in tally.items():
    print(f'{k}: {t[0]} runs, Spearman >= 0.8 on {t[2]} of {t[1]}, #1 within 2% on {t[3]} of {t[0]}, '
          f'error <= 5% on {t[4]} of {t[0]} (mean {100 * t[5] / t[0]:.2f}%)')
common = [S for S in new if S in var and S in s37]
best_all = {S: min(figs(rows(src[S] + '/results.xml'))[4] for _, src in models) for S in common}
for k, src in models:
    one = [figs(rows(src[S] + '/results.xml'))[3] / best_all[S] for S in common]
    top = [figs(rows(src[S] + '/results.xml'))[4] / best_all[S] for S in common]
    geo = lambda v: 100 * (math.exp(sum(map(math.log, v)) / len(v)) - 1)
    print(f'{k}, over the best of all three on {len(common)} specs: #1 {geo(one):.2f}% slower '
          f'(geometric mean), within 2% on {sum(x <= 1.02 for x in one)}; best of its top 10 '
          f'{geo(top):.2f}%, the best of all on {sum(x <= 1.005 for x in top)}')
