"""torch_reference.py -- the hyperelastic example's computation written as a PyTorch user would
write it, for timing against the example (issue #12, deliverable 5) and for checking its output:
the same mesh and displacements (tests/fem_reference/problem.py), the same gather (displacements
relative to each element's node 0, docs/stvk.md section 6), the St. Venant-Kirchhoff element as
batched tensor operations in float32 (docs/stvk.md section 2), and the assembly with index_add_
into a float64 force vector and the float64 values of a CSR matrix whose pattern is built once
(torch.unique of the (row, column) keys: sorted, so rows ascending and columns ascending).

The numeric core is written against the array functions that torch and numpy share (einsum, @,
swapaxes, asarray, eye, zeros, linalg), with the module passed in as `xp`: on a machine without
PyTorch, `--backend numpy` runs the very same lines with numpy, which is how CI checks them.

    python torch_reference.py --hexes 60 --passes 5 --compile        time on the GPU
    python torch_reference.py --hexes 12 --check OUT                 compare with the example's
                                                                     output folder OUT (1e-5)
    python torch_reference.py --backend numpy --hexes 12 --out DIR   write the example's format

Prints the median stage times, elements per second and the element share; exit status 1 when a
check fails.
"""
import argparse
import functools
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "fem_reference"))
import problem  # noqa: E402  (the test problem of docs/stvk.md section 5)


# ---- the user's code: gather, element, assembly ---------------------------------------------

def gather(xp, U, tets):
    """Per element, the displacements of its 4 nodes relative to node 0, in float32."""
    ue = U[tets]
    return xp.asarray(ue - ue[:, :1], dtype=xp.float32)


def geometry(xp, X, tets):
    """Shape-function gradients dphi (elements x 4 x 3) and volumes, from the reference nodes."""
    x = X[tets]
    J = xp.stack([x[:, 1] - x[:, 0], x[:, 2] - x[:, 0], x[:, 3] - x[:, 0]], -1)  # edges as columns
    G = xp.linalg.inv(J)  # rows: gradients of the barycentric coordinates 1..3
    dphi = xp.concatenate([-G.sum(1)[:, None], G], 1)
    return xp.asarray(dphi, dtype=xp.float32), xp.asarray(xp.linalg.det(J) / 6, dtype=xp.float32)


def element(xp, u, dphi, V, lam, mu):
    """Internal forces f (elements x 4 x 3) and tangent blocks K (elements x 4 x 4 x 3 x 3),
    K[e, N, M, i, k] = d f[e, N, i] / d u[e, M, k]."""
    I = xp.eye(3, dtype=u.dtype, device=u.device)
    H = xp.einsum("eni,enj->eij", u, dphi)
    F = I + H
    E = 0.5 * (H + xp.swapaxes(H, 1, 2) + xp.swapaxes(H, 1, 2) @ H)
    S = lam * xp.einsum("eii->e", E)[:, None, None] * I + 2 * mu * E
    P = F @ S
    f = V[:, None, None] * xp.einsum("eij,enj->eni", P, dphi)
    a = xp.einsum("eij,enj->eni", F, dphi)  # a_N = F dphi_N
    FFt = F @ xp.swapaxes(F, 1, 2)
    gg = xp.einsum("eni,emi->enm", dphi, dphi)
    gSg = xp.einsum("eni,eij,emj->enm", dphi, S, dphi)
    K = (lam * xp.einsum("eni,emk->enmik", a, a) + mu * xp.einsum("emi,enk->enmik", a, a)
         + (mu * gg)[:, :, :, None, None] * FFt[:, None, None] + gSg[:, :, :, None, None] * I)
    return f, V[:, None, None, None, None] * K


def index_add(xp, out, index, values):
    """out[index] += values, adding repeated indices (torch's index_add_, numpy's add.at)."""
    if xp is np:
        np.add.at(out, index, values)
        return out
    return out.index_add_(0, index, values)


def assemble(xp, f, K, force_index, slot, ndofs, nnz):
    """The float64 force vector and CSR values, every element added to its rows and slots."""
    force = xp.zeros(ndofs, dtype=xp.float64, device=f.device)
    values = xp.zeros(nnz, dtype=xp.float64, device=f.device)
    index_add(xp, force, force_index, xp.asarray(f.reshape(-1), dtype=xp.float64))
    index_add(xp, values, slot, xp.asarray(K.reshape(-1), dtype=xp.float64))
    return force, values


def csr_pattern(xp, tets, ndofs):
    """Once per mesh: the CSR pattern (keys row * ndofs + column, sorted and unique) and, for
    every entry of every element's K, its slot; the force index of every entry of f."""
    dofs = 3 * tets[:, :, None] + xp.asarray(np.arange(3), device=tets.device)  # e, N, i
    rows = dofs[:, :, None, :, None]  # e, N, M, i, k: row 3 node_N + i
    cols = dofs[:, None, :, None, :]  # column 3 node_M + k
    keys = (rows * ndofs + cols).reshape(-1)
    if xp is np:
        unique, slot = np.unique(keys, return_inverse=True)
    else:
        unique, slot = xp.unique(keys, sorted=True, return_inverse=True)
    return dofs.reshape(-1), slot.reshape(-1), unique


# ---- driving it: setup, timed passes, output, check -----------------------------------------

class Backend:
    def __init__(self, name, device, compiled):
        if name == "numpy":
            self.xp, self.device = np, "cpu"
        else:
            import torch
            torch.backends.cuda.matmul.allow_tf32 = False  # float32 products stay float32
            self.xp, self.device = torch, device
        self.stages = {"gather": functools.partial(gather, self.xp),
                       "element": functools.partial(element, self.xp),
                       "assembly": functools.partial(assemble, self.xp)}
        if compiled:
            self.stages = {k: self.xp.compile(v) for k, v in self.stages.items()}

    def array(self, a):
        return a if self.xp is np else self.xp.as_tensor(a, device=self.device)

    def sync(self):
        if self.xp is not np and self.device.startswith("cuda"):
            self.xp.cuda.synchronize()


def setup(be, n):
    X, tets = problem.nodes(n), problem.tetrahedra(n)
    U = problem.displacement(X)
    Xd, tetsd, Ud = be.array(X), be.array(tets), be.array(U)
    dphi, V = geometry(be.xp, Xd, tetsd)
    force_index, slot, keys = csr_pattern(be.xp, tetsd, 3 * len(X))
    return dict(n=n, X=X, U=U, tets=tets, Ud=Ud, tetsd=tetsd, dphi=dphi, V=V,
                force_index=force_index, slot=slot, keys=keys)


def one_pass(be, p, ms):
    """gather -> element -> assembly; appends the stage times (ms) to ms[stage]."""
    st = be.stages
    t0 = time.perf_counter()
    u = st["gather"](p["Ud"], p["tetsd"])
    be.sync()
    t1 = time.perf_counter()
    f, K = st["element"](u, p["dphi"], p["V"], problem.LAMBDA, problem.MU)
    be.sync()
    t2 = time.perf_counter()
    force, values = st["assembly"](f, K, p["force_index"], p["slot"], 3 * len(p["X"]),
                                   len(p["keys"]))
    be.sync()
    t3 = time.perf_counter()
    for name, t in (("gather", t1 - t0), ("element", t2 - t1), ("assembly", t3 - t2)):
        ms[name].append(1e3 * t)
    return force, values


def to_numpy(a):
    return a if isinstance(a, np.ndarray) else a.cpu().numpy()


def write_output(folder, p, force, values, run):
    """The example's plain format (examples/hyperelastic/README.md, "Output")."""
    os.makedirs(folder, exist_ok=True)
    n, X, U, tets = p["n"], p["X"], p["U"], p["tets"]
    keys = to_numpy(p["keys"])
    ndofs = 3 * len(X)
    with open(os.path.join(folder, "problem.txt"), "w") as f:
        f.write(f"# torch_reference.py: the problem (docs/stvk.md section 5) and what ran\n"
                f"hexes_per_edge {n}\nnodes {len(X)}\nelements {len(tets)}\ndofs {ndofs}\n"
                f"nonzeros {len(keys)}\nlambda {float(np.float32(problem.LAMBDA))!r}\n"
                f"mu {float(np.float32(problem.MU))!r}\nrun {run}\n")
    np.savetxt(os.path.join(folder, "nodes.txt"), np.column_stack([X, U]), fmt="%.17g",
               header="one line per node: X Y Z (reference) ux uy uz (displacement)")
    np.savetxt(os.path.join(folder, "elements.txt"), tets, fmt="%d",
               header="one line per tetrahedron: its 4 node indices (from 0)")
    np.savetxt(os.path.join(folder, "force.mtx"), force, fmt="%.17g", comments="",
               header=f"%%MatrixMarket matrix array real general\n% internal force\n{ndofs} 1")
    entries = np.column_stack([keys // ndofs + 1, keys % ndofs + 1, values])
    np.savetxt(os.path.join(folder, "stiffness.mtx"), entries, fmt=["%d", "%d", "%.17g"],
               comments="", header=f"%%MatrixMarket matrix coordinate real general\n"
               f"% tangent stiffness, CSR order\n{ndofs} {ndofs} {len(keys)}")


def read_example(folder):
    """The example's force vector and stiffness entries (row, column, value), numpy only."""
    def body(name):
        with open(os.path.join(folder, name)) as f:
            line = f.readline()
            while line.startswith("%"):
                line = f.readline()
            return np.loadtxt(f, ndmin=2 if name == "stiffness.mtx" else 1)
    return body("force.mtx"), body("stiffness.mtx")


def check_against(folder, p, force, values, tolerance):
    """Normwise relative differences from the example's output; the patterns must be equal."""
    e_force, e_stiff = read_example(folder)
    ndofs = 3 * len(p["X"])
    keys = to_numpy(p["keys"])
    e_keys = (e_stiff[:, 0].astype(np.int64) - 1) * ndofs + e_stiff[:, 1].astype(np.int64) - 1
    if len(e_force) != ndofs or not np.array_equal(e_keys, keys):
        print("FAIL: the example's output is not of this mesh (size or stiffness pattern)")
        return False
    ok = True
    for name, mine, theirs in (("force", force, e_force), ("stiffness", values, e_stiff[:, 2])):
        d = np.linalg.norm(mine - theirs) / np.linalg.norm(theirs)
        print(f"  {name}: normwise relative difference from the example {d:.2e} "
              f"(tolerance {tolerance:.0e})")
        ok &= bool(d <= tolerance)
    print("OK: agrees with the example" if ok else "FAIL: differs from the example")
    return ok


def median(v):
    return float(np.median(v))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--backend", choices=["torch", "numpy"], default="torch")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--hexes", type=int, default=12)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--compile", action="store_true", help="torch.compile each stage")
    ap.add_argument("--out", help="write the results in the example's format there")
    ap.add_argument("--check", help="compare with the example's output folder")
    ap.add_argument("--tolerance", type=float, default=1e-5)
    args = ap.parse_args()

    be = Backend(args.backend, args.device, args.compile)
    run = f"{args.backend}{' (torch.compile)' if args.compile else ''} on {be.device}"
    start = time.perf_counter()
    p = setup(be, args.hexes)
    be.sync()
    print(f"torch_reference, {run}: {len(p['tets'])} tetrahedra, {len(p['keys'])} nonzeros; "
          f"setup (geometry, pattern) {time.perf_counter() - start:.2f} s")
    ms = {"gather": [], "element": [], "assembly": []}
    one_pass(be, p, ms)  # warm-up (and compilation): not kept
    ms = {k: [] for k in ms}
    for _ in range(args.passes):
        force, values = one_pass(be, p, ms)
    t = {k: median(v) for k, v in ms.items()}
    total = sum(t.values())
    print(f"median of {args.passes} passes: gather {t['gather']:.3f} ms, element "
          f"{t['element']:.3f} ms, assembly {t['assembly']:.3f} ms, total {total:.3f} ms")
    print(f"elements per second: {len(p['tets']) / (total * 1e-3):.4g}")
    print(f"element share of the total time: {100 * t['element'] / total:.1f} %")
    force, values = to_numpy(force), to_numpy(values)
    if args.out:
        write_output(args.out, p, force, values, f"torch_reference.py, {run}")
    if args.check and not check_against(args.check, p, force, values, args.tolerance):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
