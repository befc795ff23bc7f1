/*
 * staging.c — which array arguments a kernel moves whole through shared memory.
 *
 * An array is stored per element contiguously (docs/loops.md): element e's `F[8]` of 3x3
 * matrices is the 72 reals at p + e*72, and `F[q]` is 9 of them.  A routine moving one slice
 * touches 9 reals of every 72, so its warps use a fraction of each sector they request and the
 * slices of one record are fetched again and again: measured on the H100, the quadrature spec ran
 * at 30% of the copy bandwidth with per-thread slice loads and 56% with block-wide ones.  A
 * kernel that reads at least half of the elements of an input array instead copies the block's
 * chunk of whole records (E * 72 contiguous reals) into shared memory in one coalesced run, and
 * its slice routines read that copy (92% of copy for the quadrature spec); an output array whose
 * every element the kernel writes is assembled there and copied out at the end.  Arrays used less
 * are not staged: copying whole records for one slice would move bytes nobody reads.
 * Component-major arrays need none of this for reading (their slices are rows).
 *
 * Rows of any alignment are another matter.  A sub-range of a component-major array whose leading
 * dimension moves each row differently (ld odd) cannot be peeled into alignment, and a warp's 32
 * consecutive reals written from mid-sector share a sector at each end with the next warp: on
 * the H100, double rows written so ran 7% slower than aligned ones (loads misaligned alike cost
 * 2.5%; benchmarks/RESULTS.md, session 23).  So a kernel of the plan for arrays of any alignment
 * may assemble each component-major output that it writes whole in shared memory (plan.stage_rows),
 * component c of the block's element j at c * E + j, and copy every row out from the sector
 * boundary at or before its start (kas_stage_out_rows): only the block's two ends write part of a
 * sector.  Measured in the same micro-benchmark: 102.4-103.0% of the aligned time.  The copy costs
 * shared memory and a barrier at the kernel's end (stvenant's one-kernel candidate in double, 2
 * blocks per SM, ran 47% slower with its 30 rows staged), so unaligned.c stages only where the
 * model predicts it pays and 4 or more blocks stay resident.
 *
 * A kernel of threads.c's groups that share one copy of the plan's shared memory gets that copy
 * the same way, every thread of the block copying the records straight into the plan's buffers
 * (fill_one_copy, below), where otherwise the first group would load it alone.
 */
#include <stdlib.h>

#include "kasgen.h"

/* Per API argument (dag_api_arg numbering), how many of its values the plan loads (an input)
 * or saves (an output): one pass over the buffers, a value having at most one. */
static int *values_moved(const Dag *dag, const KernelPlan *p) {
  int *moved = xcalloc((size_t)(dag->nin_args + dag->nout_args + 1), sizeof *moved);
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *buf = &p->buffers[b];
    const Value *v = &dag->values[buf->value];
    if (v->arg < 0) continue;
    /* a value of threads.c's groups moves one element per group */
    int groups2 = dag->groups2 > 1 ? dag->groups2 : 1;
    int elements = (v->group_stride ? dag->groups / groups2 : 1) * (v->group_stride2 ? groups2 : 1);
    if (v->producer < 0 && buf->load) moved[v->arg] += elements;
    else if (v->producer >= 0 && buf->save) moved[dag->nin_args + v->arg] += elements;
  }
  return moved;
}

/* Shared memory that rows' copies may bring a block to: beyond it the occupancy they cost would
 * outweigh the partial sectors they save (the micro-benchmark's copies were 18 KB). */
#define ROW_STAGING_MAX_SMEM (48 * 1024)

/* Appends a copy, one per argument at most (most kernels stage nothing: the room is made at the
 * first). */
static void add_copy(Staging *s, const Dag *dag, StagedArray a) {
  if (!s->v) s->v = xmalloc(sizeof *s->v * (size_t)(dag->nin_args + dag->nout_args));
  s->v[s->n++] = a;
}

/* Whether buffer b of one-copy plan p is filled by the block's copy: an input that a contiguous
 * routine loads whole (element-major, not a slice), into shared memory in chunk order, which is
 * the order of a plain copy of the block's records. */
static bool fillable(const Dag *dag, const Target *t, const KernelPlan *p, int b) {
  const Buffer *buf = &p->buffers[b];
  if (buf->place != PLACE_SHARED || !buf->load || !buf->load->contiguous) return false;
  GlobalBinding g = target_binding(t, dag, buf->value);
  return g.layout == LAYOUT_ELEMENT && g.record == g.size;
}

/* In a kernel of threads.c's groups that share one copy of the plan's shared memory, the first
 * group alone would load that copy (its routines are written for one group's threads) while the
 * others wait at the barrier after it.  Instead every thread of the block copies the records,
 * asynchronously, straight into the buffers, before the arrays' copies (first in s->v): measured
 * on the H100 (benchmarks/RESULTS.md, session 31), the element's kernel of 4 groups, its 81-real
 * ten4Help1 so copied, ran at 99.5-99.8% of the copy bandwidth, against 78.0% loaded by the first
 * group, and 83.4-84.0% with the 12-real vec3DPhi's copy issued before it.  Where the copies fill
 * every shared buffer, no step writes shared memory and the plan's barriers guard nothing.  The
 * values filled are plain variables (record == size), so no array's copy holds them too. */
static void fill_one_copy(Staging *s, const Dag *dag, const Target *t, const KernelPlan *p) {
  s->fills_buffers = true;
  for (int b = 0; b < p->nbuffers; b++) {
    const Buffer *buf = &p->buffers[b];
    if (buf->place != PLACE_SHARED) continue;
    if (!fillable(dag, t, p, b)) {
      s->fills_buffers = false;
      continue;
    }
    const Value *v = &dag->values[buf->value];
    GlobalBinding g = target_binding(t, dag, buf->value);
    add_copy(s, dag, (StagedArray){v->arg, false, g.size, buf->offset, 1, 1, false, b});
  }
}

Staging staging_of(const Dag *dag, const Target *t, const KernelPlan *p) {
  Staging s = {0};
  int rb = target_real_bytes(p->precision);
  /* threads.c's groups each have the plan's shared memory, or share one copy; the staged copies
   * serve them all */
  bool grouped = dag_groups(dag) > 1;
  int copies = threads_smem_copies(dag, p);
  int at = (p->smem_bytes + 15) / 16 * 16 * copies;
  int *moved_of = values_moved(dag, p);
  if (grouped && copies == 1) fill_one_copy(&s, dag, t, p);
  for (int k = 0; k < dag->nin_args + dag->nout_args; k++) {
    const DagArg *a = dag_api_arg(dag, k);
    bool output = k >= dag->nin_args;
    bool rows = target_arg_layout(t, dag, k) == LAYOUT_COMPONENT;
    if (rows ? !(output && p->stage_rows) : a->nvalues < 2) continue;
    /* An output is staged only whole (the copy-out writes every real of the records); an
     * input when the kernel reads at least half of it (the copy reads the rest for nothing). */
    int moved = moved_of[k];
    if (output ? moved < a->nvalues : 2 * moved < a->nvalues) continue;
    int bytes = (p->e * a->record * rb + 15) / 16 * 16;
    if (rows && at + bytes > ROW_STAGING_MAX_SMEM) continue;
    add_copy(&s, dag, (StagedArray){k, output, a->record, at, moved, a->nvalues, rows, -1});
    at += bytes;
  }
  free(moved_of);
  s.smem_bytes = s.n || grouped ? at : p->smem_bytes;
  return s;
}

void staging_free(Staging *s) {
  free(s->v);
  *s = (Staging){0};
}

const StagedArray *staging_find(const Staging *s, const Dag *dag, int value) {
  const Value *v = &dag->values[value];
  if (v->arg < 0) return NULL;
  int k = v->producer < 0 ? v->arg : dag->nin_args + v->arg;
  for (int i = 0; i < s->n; i++)
    if (s->v[i].arg == k) return &s->v[i];
  return NULL;
}

bool staging_fills(const Staging *s, int b) {
  for (int i = 0; i < s->n; i++)
    if (s->v[i].buffer == b) return true;
  return false;
}

int staging_plan_barriers(const Staging *s, const KernelPlan *p) {
  return s->fills_buffers ? 0 : p->barriers;
}

int staging_kernel_barriers(const Dag *dag, const Target *t, const KernelPlan *p) {
  Staging s = staging_of(dag, t, p);
  int barriers = staging_plan_barriers(&s, p);
  staging_free(&s);
  return barriers;
}

int staging_kernel_smem(const Dag *dag, const Target *t, const KernelPlan *p) {
  Staging s = staging_of(dag, t, p);
  int bytes = s.smem_bytes;
  staging_free(&s);
  return bytes;
}

int staging_io_width(const Staging *s, const Dag *dag, const Target *t, const IoRoutine *io,
                     int value, int w) {
  GlobalBinding b = target_binding(t, dag, value);
  return binding_io_width(io, &b, staging_find(s, dag, value) != NULL, w);
}

int staging_copy_width(const KernelPlan *p, const StagedArray *a) {
  return !a->rows && p->w > 1 && p->e * a->record % p->w == 0 ? p->w : 1;
}

bool staging_holds_rows(const Staging *s) {
  for (int i = 0; i < s->n; i++)
    if (s->v[i].rows) return true;
  return false;
}

bool staging_has_rows(const Dag *dag, const Target *t, const KernelPlan *p) {
  Staging s = staging_of(dag, t, p);
  bool rows = staging_holds_rows(&s);
  staging_free(&s);
  return rows;
}

bool staging_moves_vectors(const Dag *dag, const Target *t, const KernelPlan *p) {
  Staging s = staging_of(dag, t, p);
  bool vectors = false;
  for (int i = 0; i < s.n; i++) vectors |= staging_copy_width(p, &s.v[i]) > 1;
  staging_free(&s);
  return vectors;
}
