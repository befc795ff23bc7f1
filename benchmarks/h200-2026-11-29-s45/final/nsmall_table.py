#!/usr/bin/env python3
"""Session 45, device call 2: three specs the n sweep did not see, each ranked at --n N (the
model at n: folder SPEC-nN-model) and at the default n (the ranking every n got before:
SPEC-nN-fixed), both folders' harnesses run at n = N on the H200.  Prints, per spec and n, the
measured time of each ranking's #1, of the best of each ranking's top 10 (what `kasgen tune`
can ship), and of the best of both, and each ranking's mean relative error."""
import glob, os
import xml.etree.ElementTree as ET

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nsmall")


def rows(path):
    x = ET.parse(path).getroot()
    return [(float(e.get("predicted-ns")), float(e.get("measured-ns")), e.get("correct"))
            for e in x.findall("candidate") if e.get("name") != "unfused"]


print(f"{'spec':10} {'n':>7} | {'#1 at n':>8} {'#1 2^22':>8} | {'top10 n':>8} {'top10 22':>8} |"
      f" {'best':>7} | {'err n':>6} {'err 22':>6}")
for m in sorted(glob.glob(os.path.join(here, "*-model.xml"))):
    spec, n, _ = os.path.basename(m)[:-4].rsplit("-", 2)
    a, b = rows(m), rows(m.replace("-model", "-fixed"))
    assert all(r[2] == "1" for r in a + b)
    best = min(r[1] for r in a + b)
    err = lambda c: 100 * sum(abs(p / t - 1) for p, t, _ in c) / len(c)
    print(f"{spec:10} {n[1:]:>7} | {a[0][1]:8.4f} {b[0][1]:8.4f} | {min(r[1] for r in a):8.4f} "
          f"{min(r[1] for r in b):8.4f} | {best:7.4f} | {err(a):5.1f}% {err(b):5.1f}%")
