/*
 * fusion.c — valid fusions (docs/design.md §6 step 1): every convex set of at most k DAG nodes.
 *
 * A set F is convex when no node outside F lies on a path between two nodes of F, i.e. when
 *   (desc(F) ∩ anc(F)) \ F = ∅,
 * desc/anc being the nodes reachable from / reaching some node of F.  Such a set can run as one
 * kernel: nothing it needs is computed by a kernel that itself needs F.  Disconnected sets are
 * convex too (horizontal fusion).
 *
 * Enumeration grows sets by adding nodes in increasing index order, which is topological.  Two
 * facts make that exact and output-sensitive instead of visiting all 2^n subsets:
 *   1. If F is not convex, no extension of F by nodes above max(F) is: a violating node v lies on
 *      a path into some w ∈ F, so v < w <= max(F), it can never be added, and desc/anc only grow.
 *   2. If F is convex, so is F minus its largest node (a violation of the smaller set lies below
 *      one of its nodes, hence is not the removed maximum, and violates F as well).
 * So every convex set is reached through convex prefixes only, and a branch dies at its first
 * non-convex extension: the work is O(number of convex sets × n) bitset operations.  A
 * depth-first walk of this trie visits the sets of each size in lexicographic order, so bucketing
 * by size gives the documented order without sorting.
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>

static NodeSet bit(int i) { return (NodeSet)1 << i; }

static NodeSet union_of(const NodeSet *per_node, NodeSet set, int n) {
  NodeSet u = 0;
  for (int i = 0; i < n; i++)
    if (set & bit(i)) u |= per_node[i];
  return u;
}

/* Works for any DAG (no ordering assumption): F is convex iff no node v outside F is reached
 * from F and reaches F. */
bool fusion_is_convex(const Dag *dag, NodeSet set) {
  NodeSet outside_desc = union_of(dag->reach, set, dag->nnodes) & ~set;
  for (int v = 0; v < dag->nnodes; v++)
    if ((outside_desc & bit(v)) && (dag->reach[v] & set)) return false;
  return true;
}

/* anc[v] = nodes from which v is reachable. */
static NodeSet *ancestors(const Dag *dag) {
  NodeSet *anc = xcalloc((size_t)dag->nnodes, sizeof(NodeSet));
  for (int u = 0; u < dag->nnodes; u++)
    for (int v = 0; v < dag->nnodes; v++)
      if (dag->reach[u] & bit(v)) anc[v] |= bit(u);
  return anc;
}

static bool is_topologically_numbered(const Dag *dag) {
  for (int i = 0; i < dag->nnodes; i++) {
    NodeSet at_or_below = i == 63 ? ~(NodeSet)0 : bit(i + 1) - 1;
    if (dag->succ[i] & at_or_below) return false;
  }
  return true;
}

typedef struct {
  const Dag *dag;
  NodeSet *anc;
  int max_size;
  FusionSet *by_size; /* by_size[s]: the convex sets of s nodes, lexicographic */
  long total;
  bool truncated;
} Enumerator;

static void push_set(FusionSet *fs, NodeSet s) {
  if (fs->n == fs->cap) {
    fs->cap = fs->cap ? 2 * fs->cap : 64;
    fs->sets = xrealloc(fs->sets, sizeof(NodeSet) * (size_t)fs->cap);
  }
  fs->sets[fs->n++] = s;
}

/* Extends the convex set `set` (size `size`, largest node `last`, whose descendants and
 * ancestors are desc and anc) by each larger node, keeping the convex extensions. */
static void extend(Enumerator *en, NodeSet set, int size, int last, NodeSet desc, NodeSet anc) {
  const Dag *dag = en->dag;
  for (int j = last + 1; j < dag->nnodes && !en->truncated; j++) {
    NodeSet s = set | bit(j);
    NodeSet d = desc | dag->reach[j], a = anc | en->anc[j];
    if (d & a & ~s) continue; /* not convex, and no extension of it will be (fact 1) */
    if (en->total >= KAS_MAX_FUSIONS) {
      en->truncated = true;
      return;
    }
    push_set(&en->by_size[size + 1], s);
    en->total++;
    if (size + 1 < en->max_size) extend(en, s, size + 1, j, d, a);
  }
}

FusionSet fusion_enumerate(const Dag *dag, int max_size) {
  FusionSet out = {0};
  if (max_size > dag->nnodes) max_size = dag->nnodes;
  if (max_size <= 0) return out;
  if (!is_topologically_numbered(dag)) {
    diag_error((SrcLoc){0}, "internal: DAG nodes are not numbered in topological order");
    out.truncated = true;
    return out;
  }
  Enumerator en = {.dag = dag, .anc = ancestors(dag), .max_size = max_size};
  en.by_size = xcalloc((size_t)max_size + 1, sizeof(FusionSet));
  extend(&en, 0, 0, -1, 0, 0);
  out.cap = (int)en.total;
  out.sets = xmalloc(sizeof(NodeSet) * (size_t)(en.total ? en.total : 1));
  for (int s = 1; s <= max_size; s++) {
    memcpy(out.sets + out.n, en.by_size[s].sets, sizeof(NodeSet) * (size_t)en.by_size[s].n);
    out.n += en.by_size[s].n;
    free(en.by_size[s].sets);
  }
  if (en.truncated) {
    out.truncated = true;
    diag_error((SrcLoc){0},
               "more than %d valid fusions of at most %d calls; use a smaller --max-fusion",
               KAS_MAX_FUSIONS, max_size);
  }
  free(en.by_size);
  free(en.anc);
  return out;
}

void fusion_set_free(FusionSet *fs) {
  free(fs->sets);
  *fs = (FusionSet){0};
}
