/*
 * bounds.c — lower bounds of predicted times from compulsory traffic (docs/search.md, "Bounds").
 *
 * A kernel running the calls of a node set F must read every value F reads but does not produce
 * (once: combine.c loads each once) and write every value F produces that is needed outside it
 * (returned, or read by a call not in F: once).  model.c never predicts a load or a save faster
 * than its bytes at the database's copy bandwidth, and the rest of a kernel's time only adds, so
 * these compulsory bytes over the copy bandwidth bound every plan of F from below
 * (tests/test_bounds.c checks it on every plan of the seed specs).
 *
 * Merging kernels never adds compulsory bytes (a value read by both is read once; a value
 * passed from one to the other stays inside), so the bound of any set of calls treated as one
 * kernel bounds every partition of it into kernels as well -- one launch at least.
 *
 * Under a calibration (docs/model.md, "Calibration") the model scales parts of that time down,
 * and the bound with it: least_calibrated_io says by how much at most.
 */
#include "kasgen.h"

#include <math.h>

CompulsoryBytes bound_traffic(const Dag *dag, const NodeSet *nodes, int real_bytes) {
  CompulsoryBytes t = {0, 0};
  for (int v = 0; v < dag->nvalues; v++) {
    const Value *val = &dag->values[v];
    bool produced_inside = val->producer >= 0 && nodeset_has(nodes, val->producer);
    bool read_inside = false, read_outside = false;
    for (int c = 0; c < val->nconsumers; c++) {
      if (nodeset_has(nodes, val->consumers[c])) read_inside = true;
      else read_outside = true;
    }
    double bytes = (double)real_bytes * dag_value_floats(dag, v);
    if (!produced_inside && read_inside) t.loads += bytes;
    else if (produced_inside && (val->is_output || read_outside)) t.saves += bytes;
  }
  return t;
}

double bound_bytes(const Dag *dag, const NodeSet *nodes, int real_bytes) {
  CompulsoryBytes t = bound_traffic(dag, nodes, real_bytes);
  return t.loads + t.saves;
}

/* (x^p + y^p)^(1/p) as model_calibrated_work combines the requests with the other moves. */
static double overlapped(double x, double y, double p) {
  return p > 1 && x > 0 && y > 0 ? pow(pow(x, p) + pow(y, p), 1 / p) : x + y;
}

/* The least factor the calibration puts on the time of a save whose requests set it:
 * r1 on one thread's, rs * (1 + s * (share - 1/2)) on several threads' with the record's share
 * saved in (0, 1], so at least rs * (1 - |s| / 2) (positive: |s| < 2 in the store). */
static double least_request_factor(const ModelCalibration *c) {
  return fmin(c->requests_one_scale,
              c->requests_shared_scale * (1 - fabs(c->coverage_slope) / 2));
}

/* The least IO' (docs/model.md, "Calibration") of a kernel whose loads take at least loads_ns
 * and whose saves at least saves_ns at the copy bandwidth.  IO' >= (REQ^p + REST^p)^(1/p) (the
 * wavefront floor only raises it).  Only saves can be request-bound (model.c's MoveCost), and
 * their REQ is at least f * X of their time X (least_request_factor); the loads, the other
 * saves and the lines (l > 0) are in REST at factor 1 or more: REST >= Y.  X + Y is at least
 * loads_ns + saves_ns = B, and X at most saves_ns, so IO' >= min over X in [0, saves_ns] of
 * g(X) = ((f X)^p + (B - X)^p)^(1/p).  g is convex; unconstrained its least point is
 * X* = B / (1 + f^q), q = p / (p - 1) (where f^p X^(p-1) = (B - X)^(p-1); Hoelder's bound
 * B / ((1/f)^q + 1)^(1/q)), so the least over the interval is at X* clipped to it.  With p = 1
 * (q infinite) g is linear: X = saves_ns where f < 1, else 0.  Plain constants (f = 1, p = 1)
 * give B, the uncalibrated bound. */
static double least_calibrated_io(const ModelCalibration *c, double loads_ns, double saves_ns) {
  double f = least_request_factor(c), p = c->requests_overlap, all = loads_ns + saves_ns;
  double x = p > 1 ? fmin(saves_ns, all / (1 + pow(f, p / (p - 1)))) : f < 1 ? saves_ns : 0;
  return overlapped(f * x, all - x, p);
}

/* A kernel's time under a calibration is hypot(a * WORK, floor) + b * barriers
 * + w * barrier_warps + spills + c with a > 0, WORK >= IO' (u >= 0) and b, w, spills >= 0, so
 * at least a * least IO' + c; c is paid once per kernel, and a partition has one at least. */
double bound_ns_of_traffic(const TimingDb *db, CompulsoryBytes t) {
  /* A prediction sums the same quotients in another order: keep clear of the last bits. */
  const double margin = 1 - 1e-9;
  const ModelCalibration *c = &db->calib;
  if (!c->present) return (t.loads + t.saves) / db->dev.copy_gbs * margin;
  double io = least_calibrated_io(c, t.loads / db->dev.copy_gbs, t.saves / db->dev.copy_gbs);
  return c->work_scale * io * margin + c->kernel_ns;
}

double bound_kernel_ns(const SearchContext *ctx, const NodeSet *nodes) {
  int real_bytes = target_real_bytes(ctx->target->precision);
  return bound_ns_of_traffic(ctx->db, bound_traffic(ctx->dag, nodes, real_bytes));
}
