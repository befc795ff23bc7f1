#!/usr/bin/env python3
"""Session 45: the n sweep's table (nsweep/SPEC/nN.xml, from nsweep_call.sh).
Per spec and n: the copy bandwidth's share of each candidate's time, the measured rank of the
predicted #1, and each candidate's time per launch (us), to read the fixed cost per kernel."""
import glob, os, sys
import xml.etree.ElementTree as ET

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "nsweep")
for spec in sorted(os.listdir(root)):
    runs = []
    for f in glob.glob(os.path.join(root, spec, "n*.xml")):
        x = ET.parse(f).getroot()
        n = int(x.find("run").get("n"))
        c = [(e.get("name"), int(e.get("nkernels")), float(e.get("predicted-ns")),
              float(e.get("measured-ns")), e.get("shapes"))
             for e in x.findall("candidate") if e.get("name") != "unfused"]
        runs.append((n, float(x.find("device").get("copy-gbs")), c))
    runs.sort()
    print(f"## {spec}")
    names = [c[0] for c in runs[0][2]]
    print("n        " + " ".join(f"{m[-2:]:>6}" for m in names) + "   best  #1's gap")
    for n, gbs, c in runs:
        best = min(x[3] for x in c)
        us = [x[3] * n / 1000 for x in c]
        print(f"{n:<8} " + " ".join(f"{u:6.1f}" for u in us) +
              f"   {min(c, key=lambda x: x[3])[0][-2:]:>4}  {100 * (c[0][3] / best - 1):5.1f}%")
    print("kernels  " + " ".join(f"{x[1]:6d}" for x in runs[0][2]))
    print()
