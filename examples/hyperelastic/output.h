/*
 * output.h — writes what the hyperelastic example computed, in the plain formats that README.md
 * documents ("Output"): the problem, the mesh and displacements as text, the internal-force
 * vector and the CSR stiffness matrix as Matrix Market files.
 */
#ifndef HYPERELASTIC_OUTPUT_H
#define HYPERELASTIC_OUTPUT_H

#include "pipeline.h"

/* Writes DIR/problem.txt, nodes.txt, elements.txt, force.mtx and stiffness.mtx (DIR must exist).
 * Returns 0, or -1 after printing which file failed. */
int output_write(const char *dir, const Problem *p, const double *force, const double *values);

#endif
