"""Checks what examples/hyperelastic wrote against scikit-fem (issue #12, deliverable 4):

  1. its mesh and displacements equal those of problem.py, the Python twin of the definition in
     docs/stvk.md section 5 (node by node, element by element);
  2. scikit-fem assembles the St. Venant-Kirchhoff residual and Jacobian on that mesh with its
     own forms (skfem_stvk.py);
  3. the example's force vector and CSR stiffness agree with them: normwise relative difference
     (Euclidean for the vector, Frobenius for the matrix) at most the tolerance.

    python tests/fem_reference/compare.py OUTPUT_FOLDER [--tolerance 1e-5] [--min-elements 5000]

Prints the figures; exit status 0 when everything agrees, 1 otherwise.
"""
import argparse
import os
import sys
import time

import numpy as np
import scipy.sparse.linalg as spla
import skfem

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import example_output  # noqa: E402
import problem  # noqa: E402
from skfem_stvk import StVKModel  # noqa: E402


def check_mesh(folder, info):
    """The example's mesh and displacements against problem.py's; returns them."""
    n = int(info["hexes_per_edge"])
    X, u, tets = example_output.read_mesh(folder, info)
    failures = []
    if not np.array_equal(X, problem.nodes(n)):
        failures.append("node coordinates differ from problem.py's")
    if not np.array_equal(tets, problem.tetrahedra(n)):
        failures.append("elements differ from problem.py's")
    u_diff = np.abs(u - problem.displacement(X)).max()
    if u_diff > 1e-14:  # the same formula; only libm's last bits may differ
        failures.append(f"displacements differ from problem.py's by {u_diff:.3g}")
    if problem.volumes(X, tets).min() <= 0:
        failures.append("an element has non-positive volume")
    for lam_or_mu, want in (("lambda", problem.LAMBDA), ("mu", problem.MU)):
        if abs(float(info[lam_or_mu]) - want) > 1e-7 * want:  # the example passes floats
            failures.append(f"{lam_or_mu} {info[lam_or_mu]} is not problem.py's {want}")
    return X, u, tets, u_diff, failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--min-elements", type=int, default=5000)
    args = ap.parse_args()

    info = example_output.read_problem(args.folder)
    X, u, tets, u_diff, failures = check_mesh(args.folder, info)
    print(f"example ({info['run']}):")
    print(f"  mesh: {len(X)} nodes, {len(tets)} tetrahedra; equal to problem.py's element by "
          f"element, displacements within {u_diff:.1e}")
    if len(tets) < args.min_elements:
        failures.append(f"{len(tets)} elements, fewer than {args.min_elements}")
    dofs, nnz = int(info["dofs"]), int(info["nonzeros"])
    force = example_output.read_force(args.folder, dofs)
    stiffness = example_output.read_stiffness(args.folder, dofs, nnz)

    start = time.perf_counter()
    model = StVKModel(X, tets, problem.LAMBDA, problem.MU)
    r, K = model.residual(u), model.jacobian(u)
    print(f"scikit-fem {skfem.__version__}: residual and Jacobian assembled in "
          f"{time.perf_counter() - start:.1f} s ({K.nnz} stored entries)")

    same_pattern = (abs(stiffness) + abs(K)).nnz == K.nnz == stiffness.nnz
    print(f"  stiffness pattern {'equal to' if same_pattern else 'DIFFERENT from'} scikit-fem's")
    if not same_pattern:
        failures.append("the stiffness pattern differs from scikit-fem's")
    d_force = np.linalg.norm(force - r) / np.linalg.norm(r)
    d_stiff = spla.norm(stiffness - K) / spla.norm(K)
    for name, d in (("force", d_force), ("stiffness", d_stiff)):
        print(f"  {name}: normwise relative difference {d:.2e} (tolerance {args.tolerance:.0e})")
        if not d <= args.tolerance:
            failures.append(f"{name} differs from scikit-fem's by {d:.3g}")
    for f in failures:
        print(f"FAIL: {f}")
    print("FAIL" if failures else "OK: the example agrees with scikit-fem")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
