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

/* F is convex iff no node v outside F is reached from F and reaches F.  Works for any DAG (no
 * ordering assumption). */
bool fusion_is_convex(const Dag *dag, NodeSet set) {
  NodeSet desc = nodeset_empty();
  for (int v = nodeset_next(&set, 0); v >= 0; v = nodeset_next(&set, v + 1))
    nodeset_unite(&desc, &dag->reach[v]);
  NodeSet outside_desc = nodeset_minus(desc, set);
  for (int v = nodeset_next(&outside_desc, 0); v >= 0; v = nodeset_next(&outside_desc, v + 1))
    if (nodeset_intersects(&dag->reach[v], &set)) return false;
  return true;
}

/* anc[v] = nodes from which v is reachable. */
static NodeSet *ancestors(const Dag *dag) {
  NodeSet *anc = xcalloc((size_t)dag->nnodes, sizeof(NodeSet));
  for (int u = 0; u < dag->nnodes; u++)
    for (int v = nodeset_next(&dag->reach[u], 0); v >= 0; v = nodeset_next(&dag->reach[u], v + 1))
      nodeset_add(&anc[v], u);
  return anc;
}

static bool is_topologically_numbered(const Dag *dag) {
  for (int i = 0; i < dag->nnodes; i++) {
    NodeSet at_or_below = nodeset_range(0, i + 1);
    if (nodeset_intersects(&dag->succ[i], &at_or_below)) return false;
  }
  return true;
}

/* The enumeration touches only the words the DAG's nodes need (nwords), so that a spec of at
 * most 64 calls runs on single words, as fast as 64-bit masks. */
typedef struct {
  const Dag *dag;
  NodeSet *anc;
  int nwords;
  int max_size;
  long limit;
  double deadline; /* clock_seconds(); 0: none */
  FusionSet *by_size; /* by_size[s]: the convex sets of s nodes, lexicographic */
  long total;
  bool count_only; /* count the sets without keeping them (fusion_count_until) */
  long steps;      /* extensions tried, convex or not: when to look at the clock */
  bool truncated;
  bool timed_out;
} Enumerator;

/* Whether the deadline has passed, looked at every 2^16 extensions tried (20 million fusions
 * take about half a second: the clock is read every few hundred microseconds at most). */
static bool past_deadline(Enumerator *en) {
  if (en->deadline <= 0 || (++en->steps & 0xffff)) return false;
  en->timed_out = clock_seconds() > en->deadline;
  return en->timed_out;
}

static void push_set(FusionSet *fs, const uint64_t *words) {
  if (fs->n == fs->cap) {
    fs->cap = fs->cap ? 2 * fs->cap : 64;
    fs->words = xrealloc(fs->words, sizeof(uint64_t) * (size_t)fs->nwords * (size_t)fs->cap);
  }
  memcpy(fs->words + (size_t)fs->n * (size_t)fs->nwords, words, sizeof(uint64_t) * (size_t)fs->nwords);
  fs->n++;
}

/* Extends the convex set `set` (size `size`, largest node `last`, whose descendants and
 * ancestors are desc and anc) by each larger node, keeping the convex extensions. */
static void extend(Enumerator *en, const uint64_t *set, int size, int last, const uint64_t *desc,
                   const uint64_t *anc) {
  const Dag *dag = en->dag;
  int nw = en->nwords;
  uint64_t s[NODESET_WORDS], d[NODESET_WORDS], a[NODESET_WORDS];
  for (int j = last + 1; j < dag->nnodes && !en->truncated && !en->timed_out; j++) {
    if (past_deadline(en)) return;
    uint64_t violation = 0;
    for (int k = 0; k < nw; k++) {
      s[k] = set[k];
      d[k] = desc[k] | dag->reach[j].w[k];
      a[k] = anc[k] | en->anc[j].w[k];
    }
    s[j >> 6] |= (uint64_t)1 << (j & 63);
    for (int k = 0; k < nw; k++) violation |= d[k] & a[k] & ~s[k];
    if (violation) continue; /* not convex, and no extension of it will be (fact 1) */
    if (en->total >= en->limit) {
      en->truncated = true;
      return;
    }
    if (!en->count_only) push_set(&en->by_size[size + 1], s);
    en->total++;
    if (size + 1 < en->max_size) extend(en, s, size + 1, j, d, a);
  }
}

static int words_of(const Dag *dag) { return dag->nnodes > 0 ? (dag->nnodes + 63) / 64 : 1; }

static FusionSet enumerate(const Dag *dag, int max_size, long limit, double deadline) {
  int nwords = words_of(dag);
  FusionSet out = {.nwords = nwords};
  if (max_size > dag->nnodes) max_size = dag->nnodes;
  if (max_size <= 0) return out;
  if (!is_topologically_numbered(dag)) {
    diag_error((SrcLoc){0}, "internal: DAG nodes are not numbered in topological order");
    out.truncated = true;
    return out;
  }
  Enumerator en = {.dag = dag, .anc = ancestors(dag), .nwords = nwords, .max_size = max_size,
                   .limit = limit, .deadline = deadline};
  en.by_size = xcalloc((size_t)max_size + 1, sizeof(FusionSet));
  for (int s = 0; s <= max_size; s++) en.by_size[s].nwords = nwords;
  uint64_t zero[NODESET_WORDS] = {0};
  extend(&en, zero, 0, -1, zero, zero);
  out.cap = (int)en.total;
  out.words = xmalloc(sizeof(uint64_t) * (size_t)nwords * (size_t)(en.total ? en.total : 1));
  for (int s = 1; s <= max_size; s++) {
    memcpy(out.words + (size_t)out.n * (size_t)nwords, en.by_size[s].words,
           sizeof(uint64_t) * (size_t)nwords * (size_t)en.by_size[s].n);
    out.n += en.by_size[s].n;
    free(en.by_size[s].words);
  }
  out.truncated = en.truncated;
  out.timed_out = en.timed_out;
  free(en.by_size);
  free(en.anc);
  return out;
}

long fusion_count_until(const Dag *dag, int max_size, long limit, double deadline) {
  if (max_size > dag->nnodes) max_size = dag->nnodes;
  if (max_size <= 0) return 0;
  if (!is_topologically_numbered(dag)) return -1; /* enumerate() reports it */
  Enumerator en = {.dag = dag, .anc = ancestors(dag), .nwords = words_of(dag),
                   .max_size = max_size, .limit = limit, .deadline = deadline,
                   .count_only = true};
  uint64_t zero[NODESET_WORDS] = {0};
  extend(&en, zero, 0, -1, zero, zero);
  free(en.anc);
  return en.timed_out ? -1 : en.truncated ? limit + 1 : en.total;
}

FusionSet fusion_enumerate(const Dag *dag, int max_size) {
  FusionSet out = enumerate(dag, max_size, KAS_MAX_FUSIONS, 0);
  if (out.truncated && out.n > 0)
    diag_error((SrcLoc){0},
               "more than %d valid fusions of at most %d calls; use a smaller --max-fusion",
               KAS_MAX_FUSIONS, max_size);
  return out;
}

FusionSet fusion_enumerate_limited(const Dag *dag, int max_size, long limit) {
  return enumerate(dag, max_size, limit, 0);
}

FusionSet fusion_enumerate_until(const Dag *dag, int max_size, long limit, double deadline) {
  return enumerate(dag, max_size, limit, deadline);
}

void fusion_set_free(FusionSet *fs) {
  free(fs->words);
  *fs = (FusionSet){0};
}
