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
 */
#include "kasgen.h"

double bound_bytes(const Dag *dag, const NodeSet *nodes, int real_bytes) {
  double bytes = 0;
  for (int v = 0; v < dag->nvalues; v++) {
    const Value *val = &dag->values[v];
    bool produced_inside = val->producer >= 0 && nodeset_has(nodes, val->producer);
    bool read_inside = false, read_outside = false;
    for (int c = 0; c < val->nconsumers; c++) {
      if (nodeset_has(nodes, val->consumers[c])) read_inside = true;
      else read_outside = true;
    }
    if ((!produced_inside && read_inside) ||
        (produced_inside && (val->is_output || read_outside)))
      bytes += (double)real_bytes * dag_value_floats(dag, v);
  }
  return bytes;
}

double bound_ns_of_bytes(const TimingDb *db, double bytes) {
  /* A prediction sums the same quotients in another order: keep clear of the last bits. */
  return bytes / db->dev.copy_gbs * (1 - 1e-9);
}

double bound_kernel_ns(const SearchContext *ctx, const NodeSet *nodes) {
  int real_bytes = target_real_bytes(ctx->target->precision);
  return bound_ns_of_bytes(ctx->db, bound_bytes(ctx->dag, nodes, real_bytes));
}
