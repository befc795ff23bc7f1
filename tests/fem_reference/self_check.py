"""Checks that the scikit-fem side of the comparison can be trusted, on a small mesh of the test
problem (2^3 hexahedra, 48 tetrahedra, 81 degrees of freedom):

  1. the Jacobian is the derivative of the residual: every column of K against the central
     difference (r(u + h e_k) - r(u - h e_k)) / 2h (r is cubic in u, so only h^2 and rounding
     remain); and the check can fail: the Jacobian without its geometric part is far off;
  2. rigid-body invariance: a rigid motion of the reference configuration (u = (R - I) X + c)
     gives no internal force, and rotating a deformed configuration (x -> R x + c) rotates every
     nodal force (r -> R r);
  3. K is symmetric and a rigid translation is in its kernel.

    python tests/fem_reference/self_check.py      (exit status 1 on a failure)
"""
import os
import sys

import numpy as np
import scipy.sparse.linalg as spla

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import problem  # noqa: E402
from skfem_stvk import StVKModel, material_part_form  # noqa: E402

failures = []


def check(ok, what):
    print(f"  {'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        failures.append(what)


def rotation(axis, angle):
    """Rodrigues' rotation matrix."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    A = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * A + (1 - np.cos(angle)) * A @ A


def fd_error(model, u, K, h=1e-6):
    """max |K - K_fd| / max |K_fd| over all columns."""
    Kd = K.toarray()
    Kfd = np.empty_like(Kd)
    for k in range(u.size):
        step = np.zeros(u.size)
        step[k] = h
        step = step.reshape(u.shape)
        Kfd[:, k] = (model.residual(u + step) - model.residual(u - step)) / (2 * h)
    return np.abs(Kd - Kfd).max() / np.abs(Kfd).max()


def main():
    n = 2
    X, tets = problem.nodes(n), problem.tetrahedra(n)
    model = StVKModel(X, tets, problem.LAMBDA, problem.MU)
    u = problem.displacement(X)
    r, K = model.residual(u), model.jacobian(u)
    print(f"scikit-fem's St. Venant-Kirchhoff forms on {len(tets)} tetrahedra, {u.size} dofs:")

    err = fd_error(model, u, K)
    err_material = fd_error(model, u, model.jacobian(u, material_part_form))
    check(err < 1e-6, f"Jacobian = central differences of the residual: {err:.1e} of max |K|")
    check(err_material > 1e-3, f"the check can fail: without the geometric part {err_material:.1e}")

    R, c = rotation([1, 2, 3], 0.7), np.array([0.3, -0.2, 0.5])
    rigid = model.residual(X @ R.T + c - X)
    check(np.abs(rigid).max() < 1e-12 * np.abs(r).max(),
          f"rigid motion of the reference: |r| = {np.abs(rigid).max():.1e} "
          f"(deformed: {np.abs(r).max():.1e})")
    x = X + u
    r_rot = model.residual(x @ R.T + c - X)
    rot_err = np.abs(r_rot.reshape(-1, 3) - r.reshape(-1, 3) @ R.T).max() / np.abs(r).max()
    check(rot_err < 1e-12, f"rotated deformation rotates the nodal forces: {rot_err:.1e}")

    asym = spla.norm(K - K.T) / spla.norm(K)
    check(asym < 1e-12, f"K symmetric: |K - K^T| / |K| = {asym:.1e}")
    for axis in range(3):
        t = np.zeros((len(X), 3))
        t[:, axis] = 1
        kt = np.abs(K @ t.ravel()).max() / np.abs(K).max()
        check(kt < 1e-12, f"translation along axis {axis} in the kernel of K: {kt:.1e}")
    print("FAIL" if failures else "OK: scikit-fem's residual and Jacobian pass their own checks")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
