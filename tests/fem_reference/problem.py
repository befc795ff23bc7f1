"""The test problem of docs/stvk.md section 5, in Python: the structured tetrahedral mesh of the
unit cube (6 tetrahedra per hexahedron, Kuhn split), the displacement field and the material.

The twin of examples/hyperelastic/mesh.c, written from the same definition; compare.py checks
that the two agree node by node and element by element.
"""
import numpy as np

LAMBDA = 0.5769230769230769  # Young's modulus 1, Poisson's ratio 0.3
MU = 0.38461538461538464

# Axis orders (p, q, r) of the 6 tetrahedra of a hexahedron, and whether each is odd.
KUHN_AXES = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))
KUHN_ODD = (False, True, True, False, False, True)


def node_index(n, i, j, k):
    return i + (n + 1) * (j + (n + 1) * k)


def nodes(n):
    """Reference coordinates, shape (nnodes, 3): node (i, j, k) at (i/n, j/n, k/n)."""
    k, j, i = np.meshgrid(np.arange(n + 1), np.arange(n + 1), np.arange(n + 1), indexing="ij")
    return np.column_stack([i.ravel() / n, j.ravel() / n, k.ravel() / n])


def tetrahedra(n):
    """Node indices, shape (6 n^3, 4): element 6 h + t is tetrahedron t of hexahedron h."""
    k, j, i = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    corner = np.column_stack([i.ravel(), j.ravel(), k.ravel()])  # hexahedra in index order
    tets = np.empty((corner.shape[0], 6, 4), dtype=np.int64)
    for t, (p, q, _) in enumerate(KUHN_AXES):
        step1 = corner.copy()
        step1[:, p] += 1
        step2 = step1.copy()
        step2[:, q] += 1
        path = [corner, step1, step2, corner + 1]
        if KUHN_ODD[t]:
            path[1], path[2] = path[2], path[1]
        for v, c in enumerate(path):
            tets[:, t, v] = node_index(n, c[:, 0], c[:, 1], c[:, 2])
    return tets.reshape(-1, 4)


def displacement(X):
    """u(X) for points X of shape (npoints, 3): a twist growing with height plus two bulges."""
    theta = 0.3 * X[:, 2]
    xc, yc = X[:, 0] - 0.5, X[:, 1] - 0.5
    u = np.empty_like(X)
    u[:, 0] = xc * np.cos(theta) - yc * np.sin(theta) - xc + 0.05 * np.sin(np.pi * X[:, 2])
    u[:, 1] = xc * np.sin(theta) + yc * np.cos(theta) - yc
    u[:, 2] = 0.04 * np.sin(np.pi * X[:, 0]) * np.sin(np.pi * X[:, 1]) + 0.02 * X[:, 2] ** 2
    return u


def volumes(X, tets):
    """Signed volumes det(X1 - X0, X2 - X0, X3 - X0) / 6 of the elements."""
    x = X[tets]
    edges = np.stack([x[:, 1] - x[:, 0], x[:, 2] - x[:, 0], x[:, 3] - x[:, 0]], axis=1)
    return np.linalg.det(edges) / 6
