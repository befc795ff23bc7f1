"""Session 46, device call 2: the model at n after the routine-floor fix (de71652, "new")
against the model before it (19e3498, "old"), each ranking four specs that no small-n data had
(branches12, geometry13, strain_sum17, green_blocks17) at --n 16384 and 131072, both timed at
that n in one run.  Reads callB/nsmall/*.xml; prints a markdown table."""
import glob, os, sys
import xml.etree.ElementTree as ET

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "callB", "nsmall")


def rows(path):
    """(predicted rank, measured ns, predicted ns) of the correct candidates, rank order."""
    out = []
    for c in ET.parse(path).getroot().iter("candidate"):
        if c.get("correct") != "1" or not c.get("name").startswith("cand"):
            continue  # the unfused form is a reference, not a candidate
        out.append((int(c.get("predicted-rank")), float(c.get("measured-ns")),
                    float(c.get("predicted-ns"))))
    return sorted(out)


def spearman(r):
    pred = [x[2] for x in r]
    meas = [x[1] for x in r]
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        rk = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                rk[order[k]] = (i + j) / 2
            i = j + 1
        return rk
    a, b = ranks(pred), ranks(meas)
    n = len(a)
    ma, mb = sum(a) / n, sum(b) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    va = sum((x - ma) ** 2 for x in a) ** 0.5
    vb = sum((y - mb) ** 2 for y in b) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def error(r):
    return sum(abs(p / m - 1) for _, m, p in r) / len(r)


def main():
    print("| spec | n | old #1 | new #1 | best of both | old #1 gap | new #1 gap |"
          " old rho / error | new rho / error |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratio = {}
    for path in sorted(glob.glob(HERE + "/*-new.xml")):
        name = os.path.basename(path)[:-len("-new.xml")]
        spec, n = name.rsplit("-n", 1)
        new, old = rows(path), rows(path.replace("-new.xml", "-old.xml"))
        best = min(min(x[1] for x in new), min(x[1] for x in old))
        print(f"| {spec} | {n} | {old[0][1]:.4f} | {new[0][1]:.4f} | {best:.4f} |"
              f" {100 * (old[0][1] / best - 1):.1f}% | {100 * (new[0][1] / best - 1):.1f}% |"
              f" {spearman(old):.3f} / {100 * error(old):.1f}% |"
              f" {spearman(new):.3f} / {100 * error(new):.1f}% |")
        ratio.setdefault(n, []).append(new[0][1] / old[0][1])
    for n, r in sorted(ratio.items()):
        g = 1.0
        for x in r:
            g *= x
        print(f"\nn = {n}: the new #1's time over the old #1's, geometric mean "
              f"{g ** (1 / len(r)):.3f} over {len(r)} specs")


if __name__ == "__main__":
    sys.exit(main())
