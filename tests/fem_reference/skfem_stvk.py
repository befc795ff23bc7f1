"""The St. Venant-Kirchhoff internal force (residual) and tangent stiffness (Jacobian), assembled
with scikit-fem's own forms on P1 tetrahedra: the independent side of the check of
examples/hyperelastic against kasgen's element (docs/stvk.md section 4).

Written as a scikit-fem user writes a hyperelastic model, from the weak form, not from the
closed-form element blocks of docs/stvk.md:
    residual  r(v)     = int P(F) : grad v dX,                 P = F S,  S = lam tr(E) I + 2 mu E
    Jacobian  a(du, v) = int (grad du S + F dS) : grad v dX,   dS = lam tr(dE) I + 2 mu dE,
                                                               dE = sym(F^T grad du)
with F = I + grad u and E = (F^T F - I) / 2.  Both are returned in the numbering of the example
(degree of freedom 3 * node + component), whatever numbering scikit-fem uses internally.
"""
import numpy as np
import skfem
from skfem.helpers import ddot, grad, identity, trace, transpose


def matmul(A, B):
    """Matrix product of two fields of 3x3 matrices (skfem.helpers.mul is matrix times vector)."""
    return np.einsum("ik...,kj...->ij...", A, B)


def deformation(w):
    """F and the second Piola-Kirchhoff stress S at the quadrature points of w['u']."""
    H = grad(w["u"])
    I = identity(H)
    F = I + H
    E = 0.5 * (matmul(transpose(F), F) - I)
    S = w["lam"] * trace(E) * I + 2.0 * w["mu"] * E
    return F, S


@skfem.LinearForm
def residual_form(v, w):
    F, S = deformation(w)
    return ddot(matmul(F, S), grad(v))


def stress_increment(F, dH, lam, mu):
    """dS for an increment dH of the displacement gradient."""
    dE = 0.5 * (matmul(transpose(F), dH) + matmul(transpose(dH), F))
    return lam * trace(dE) * identity(dH) + 2.0 * mu * dE


@skfem.BilinearForm
def jacobian_form(du, v, w):
    F, S = deformation(w)
    dP = matmul(grad(du), S) + matmul(F, stress_increment(F, grad(du), w["lam"], w["mu"]))
    return ddot(dP, grad(v))


@skfem.BilinearForm
def material_part_form(du, v, w):
    """The Jacobian without its geometric part grad du S: wrong on purpose, for self_check.py."""
    F, _ = deformation(w)
    return ddot(matmul(F, stress_increment(F, grad(du), w["lam"], w["mu"])), grad(v))


class StVKModel:
    """scikit-fem's basis of vector P1 on the mesh (X: nodes x 3, tets: elements x 4)."""

    def __init__(self, X, tets, lam, mu):
        mesh = skfem.MeshTet(np.ascontiguousarray(X.T), np.ascontiguousarray(tets.T))
        self.basis = skfem.Basis(mesh, skfem.ElementVector(skfem.ElementTetP1()))
        self.lam, self.mu = lam, mu
        # ours[k] = scikit-fem's degree of freedom of ours k = 3 * node + component
        self.ours = np.ascontiguousarray(self.basis.nodal_dofs.T).ravel()

    def _fields(self, u):
        """u (nodes x 3) as the interpolated field scikit-fem's forms read."""
        x = np.zeros(self.basis.N)
        x[self.ours] = u.ravel()
        return {"u": self.basis.interpolate(x), "lam": self.lam, "mu": self.mu}

    def residual(self, u):
        """Internal force vector, entry 3 * node + i."""
        return residual_form.assemble(self.basis, **self._fields(u))[self.ours]

    def jacobian(self, u, form=jacobian_form):
        """Tangent stiffness d residual / d u (scipy CSR), rows and columns 3 * node + i."""
        K = form.assemble(self.basis, **self._fields(u)).tocsr()
        return K[self.ours][:, self.ours].tocsr()
