"""Session 46, device call 1: the model's ranking at n (SPEC-mN) against the default ranking
(SPEC-fixed timed at n), at n = 16384 and 131072, and how the default ranking's candidates
moved with n.  Reads callA/*.xml; prints a markdown table."""
import glob, os, sys
import xml.etree.ElementTree as ET

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "callA")


def rows(path):
    root = ET.parse(path).getroot()
    out = []
    for c in root.iter("candidate"):
        if c.get("correct") != "1" or not c.get("name").startswith("cand"):
            continue  # the unfused form is a reference, not a candidate
        out.append((int(c.get("predicted-rank")), float(c.get("measured-ns")),
                    float(c.get("predicted-ns")), c.get("shapes")))
    return sorted(out)


def main():
    specs = sorted({os.path.basename(p).split("-")[0] for p in glob.glob(HERE + "/*-fixed-*.xml")})
    print("| spec | n | model #1 | default #1 | model top-12 best | default top-12 best |"
          " model #1 / best |")
    print("|---|---|---|---|---|---|---|")
    gaps = {16384: [], 131072: []}
    for s in specs:
        for n in (16384, 131072):
            m = rows(f"{HERE}/{s}-m{n}.xml")
            f = rows(f"{HERE}/{s}-fixed-n{n}.xml")
            best = min(min(r[1] for r in m), min(r[1] for r in f))
            gap = m[0][1] / best - 1
            gaps[n].append((m[0][1] / f[0][1]))
            print(f"| {s} | {n} | {m[0][1]:.4f} | {f[0][1]:.4f} | {min(r[1] for r in m):.4f} |"
                  f" {min(r[1] for r in f):.4f} | {100 * gap:+.1f}% |")
    for n, g in gaps.items():
        prod = 1.0
        for x in g:
            prod *= x
        print(f"\nn = {n}: the model's #1 over the default #1, geometric mean "
              f"{prod ** (1 / len(g)):.3f} over {len(g)} specs")


if __name__ == "__main__":
    sys.exit(main())
