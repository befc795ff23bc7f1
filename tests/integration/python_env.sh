#!/usr/bin/env bash
# python_env.sh — the Python environment that `make deps` makes (.venv, tools/requirements.txt)
# works for the tests that compare kasgen with scikit-fem: $PYTHON runs, has the pinned
# versions, and scikit-fem assembles the P1 Laplace (Poisson) stiffness matrix of a small
# triangle mesh that is symmetric, has zero row sums (constants are in its kernel), is positive
# semidefinite with a one-dimensional kernel, and equals the matrix assembled here by hand from
# the element gradients.  Run from the repository root; tests/run.sh sets $PYTHON.
set -euo pipefail
PYTHON=${PYTHON:-$PWD/.venv/bin/python}
[ -x "$PYTHON" ] || { echo "FAIL: no Python environment at $PYTHON: run 'make deps'"; exit 1; }

# The versions installed are the ones pinned (a stale .venv would test against others).
"$PYTHON" - tools/requirements.txt <<'EOF'
import sys
from importlib.metadata import version
pins = [p for p in (l.split("#")[0].strip() for l in open(sys.argv[1])) if p]
wrong = []
for pin in pins:
    name, want = pin.split("==")
    if version(name) != want:
        wrong.append(f"{name} {version(name)} (pinned {want})")
if wrong:
    sys.exit("FAIL: .venv differs from tools/requirements.txt: " + ", ".join(wrong)
             + "; run 'make deps'")
print(f"{len(pins)} pinned packages at their versions")
EOF

"$PYTHON" - <<'EOF'
import sys
import numpy as np
import skfem
from skfem.models.poisson import laplace

mesh = skfem.MeshTri.init_sqsymmetric().refined(2)  # 81 nodes, 128 triangles on the unit square
basis = skfem.Basis(mesh, skfem.ElementTriP1())
K = laplace.assemble(basis).toarray()
n = mesh.p.shape[1]

def check(ok, what):
    if not ok:
        sys.exit(f"FAIL: {what}")

check(K.shape == (n, n), f"shape {K.shape}, expected ({n}, {n})")
check(np.allclose(K, K.T, atol=1e-12), "the stiffness matrix is not symmetric")
check(np.abs(K.sum(axis=1)).max() < 1e-12, "a row sum is not zero")
eig = np.linalg.eigvalsh(K)
check(eig[0] > -1e-12, f"not positive semidefinite (smallest eigenvalue {eig[0]:.3g})")
check(eig[1] > 1e-6, f"the kernel has more than one dimension (eigenvalues {eig[:2]})")

# The same matrix by hand: K_e = area * G G^T, G the gradients of the barycentric coordinates.
ref = np.zeros((n, n))
for tri in mesh.t.T:
    x = mesh.p[:, tri]
    jac = np.column_stack((x[:, 1] - x[:, 0], x[:, 2] - x[:, 0]))
    grads = np.linalg.solve(jac.T, np.array([[-1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]]))
    ref[np.ix_(tri, tri)] += 0.5 * abs(np.linalg.det(jac)) * grads.T @ grads
err = np.abs(K - ref).max()
check(err < 1e-12, f"scikit-fem and the hand assembly differ by {err:.3g}")
print(f"scikit-fem {skfem.__version__}: "
      f"P1 Laplace on {n} nodes, {mesh.t.shape[1]} triangles: symmetric, zero row sums, "
      f"kernel of dimension 1, equal to the hand assembly (max difference {err:.1e})")
EOF
