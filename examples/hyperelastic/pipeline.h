/*
 * pipeline.h — what the hyperelastic driver asks of a mode (CPU: assemble_cpu.c, GPU:
 * assemble_gpu.cu): the element geometry once, then gather -> element (kasgen's embed API) ->
 * assembly, timed stage by stage.  The driver is the same C program in both modes.
 */
#ifndef HYPERELASTIC_PIPELINE_H
#define HYPERELASTIC_PIPELINE_H

#include "csr.h"
#include "mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const Mesh *mesh;
  const Csr *csr;
  const double *u; /* nodal displacements, 3 per node */
  float lambda, mu;
} Problem;

/* Milliseconds of one pass, per stage (the median over the passes, stage by stage). */
typedef struct {
  double gather, element, assembly;
} StageTimes;

/* Runs `passes` passes and leaves the last one's assembled internal force (nrows doubles) and
 * stiffness values (nnz doubles, in csr order) in force and values.  Returns 0, or 1 after
 * printing what failed. */
int pipeline_run(const Problem *p, int passes, double *force, double *values, StageTimes *t);

/* What ran, for the report: "GPU: ..." or "CPU: ...", naming the element code. */
const char *pipeline_description(void);

#ifdef __cplusplus
}
#endif
#endif
