"""Reads the output folder of examples/hyperelastic (the plain formats its README documents:
problem.txt, nodes.txt, elements.txt, force.mtx, stiffness.mtx), checking the format as it goes:
a file that breaks it raises FormatError naming the file and what is wrong.
"""
import os

import numpy as np
import scipy.sparse as sp


class FormatError(Exception):
    pass


def _expect(ok, path, what):
    if not ok:
        raise FormatError(f"{path}: {what}")


def read_problem(folder):
    """problem.txt: 'key value' lines after '#' comments -> dict of strings."""
    path = os.path.join(folder, "problem.txt")
    items = {}
    with open(path) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                key, _, value = line.rstrip("\n").partition(" ")
                items[key] = value
    for key in ("hexes_per_edge", "nodes", "elements", "dofs", "nonzeros", "lambda", "mu", "run"):
        _expect(key in items, path, f"no '{key}' line")
    return items


def read_mesh(folder, problem):
    """nodes.txt (X Y Z ux uy uz) and elements.txt (4 node indices from 0)."""
    nodes = np.loadtxt(os.path.join(folder, "nodes.txt"), ndmin=2)
    tets = np.loadtxt(os.path.join(folder, "elements.txt"), dtype=np.int64, ndmin=2)
    _expect(nodes.shape == (int(problem["nodes"]), 6), "nodes.txt", f"shape {nodes.shape}")
    _expect(tets.shape == (int(problem["elements"]), 4), "elements.txt", f"shape {tets.shape}")
    return nodes[:, :3], nodes[:, 3:], tets


def _matrix_market(path, kind):
    """The header of a Matrix Market file of the given kind, its size line, and the numbers."""
    with open(path) as f:
        banner = f.readline().split()
        _expect(banner[:1] == ["%%MatrixMarket"] and banner[1:] == ["matrix", kind, "real",
                "general"], path, f"banner {banner}, expected a real general {kind} matrix")
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        size = [int(s) for s in line.split()]
        data = np.loadtxt(f, ndmin=2 if kind == "coordinate" else 1)
    return size, data


def read_force(folder, dofs):
    path = os.path.join(folder, "force.mtx")
    size, data = _matrix_market(path, "array")
    _expect(size == [dofs, 1] and data.shape == (dofs,), path, f"size {size}, {data.shape[0]} "
            f"values, expected {dofs}")
    return data


def read_stiffness(folder, dofs, nonzeros):
    """stiffness.mtx -> scipy CSR, after checking that its entries are in CSR order: rows
    ascending, columns strictly ascending within a row, indices from 1."""
    path = os.path.join(folder, "stiffness.mtx")
    size, data = _matrix_market(path, "coordinate")
    _expect(size == [dofs, dofs, nonzeros] and data.shape == (nonzeros, 3), path,
            f"size {size}, data {data.shape}")
    rows, cols = data[:, 0].astype(np.int64) - 1, data[:, 1].astype(np.int64) - 1
    _expect(rows.min() >= 0 and cols.min() >= 0 and rows.max() < dofs and cols.max() < dofs,
            path, "an index out of range")
    step_row, step_col = np.diff(rows), np.diff(cols)
    _expect((step_row >= 0).all(), path, "rows not in ascending order")
    _expect((step_col[step_row == 0] > 0).all(), path, "columns not strictly ascending in a row")
    return sp.csr_matrix((data[:, 2], (rows, cols)), shape=(dofs, dofs))
