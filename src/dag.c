/*
 * dag.c — the call DAG of a parsed spec: nodes are the calls (statement order, which is
 * topological), values are SSA versions (the inputs first, in input-line order, then one per
 * call), plus successor, predecessor and reachability bitsets that the fusion enumerator and the
 * selector use, the arguments of the generated API (a plain variable or a whole array each, with
 * every input and output value's place in its argument's per-element record), each value's
 * label and its name in generated code, and a Graphviz view of the whole thing.
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>

/* Number of versions per variable: inputs have version 0, each assignment one more. */
static int *count_versions(const Spec *spec) {
  int *n = xcalloc((size_t)spec->nvars, sizeof(int));
  for (int k = 0; k < spec->ninputs; k++) n[spec->inputs[k]] = 1;
  for (int i = 0; i < spec->nstmts; i++) {
    const VarRef *r = &spec->stmts[i].result;
    if (r->version + 1 > n[r->var]) n[r->var] = r->version + 1;
  }
  return n;
}

/* "name" when the variable has one version, "name.k" when it is reassigned. */
static char *version_label(const Spec *spec, const int *nversions, int var, int version) {
  if (nversions[var] == 1) return xstrdup(spec->vars[var].name);
  return xasprintf("%s.%d", spec->vars[var].name, version);
}

/* The value holding (var, version): an input (version 0 of an input variable) or a result. */
static int value_of(const Dag *dag, VarRef r) {
  const Spec *spec = dag->spec;
  if (r.version == 0 && spec->vars[r.var].is_input) {
    for (int k = 0; k < spec->ninputs; k++)
      if (spec->inputs[k] == r.var) return k;
  }
  for (int i = 0; i < spec->nstmts; i++)
    if (spec->stmts[i].result.var == r.var && spec->stmts[i].result.version == r.version)
      return spec->ninputs + i;
  return -1; /* the parser guarantees every reference resolves */
}

void dag_add_consumer(Value *v, int node) {
  if (v->nconsumers && v->consumers[v->nconsumers - 1] == node) return; /* f(x, x) */
  v->consumers = xrealloc(v->consumers, sizeof(int) * (size_t)(v->nconsumers + 1));
  v->consumers[v->nconsumers++] = node;
}

static void build_values(Dag *dag) {
  const Spec *spec = dag->spec;
  int *nversions = count_versions(spec);
  dag->nvalues = spec->ninputs + spec->nstmts;
  dag->values = xcalloc((size_t)dag->nvalues, sizeof(Value));
  for (int k = 0; k < spec->ninputs; k++) {
    int var = spec->inputs[k];
    dag->values[k] = (Value){.var = var, .producer = -1, .type = spec->vars[var].type,
                             .label = version_label(spec, nversions, var, 0)};
  }
  for (int i = 0; i < spec->nstmts; i++) {
    VarRef r = spec->stmts[i].result;
    dag->values[spec->ninputs + i] =
        (Value){.var = r.var, .version = r.version, .producer = i,
                .type = spec->vars[r.var].type,
                .label = version_label(spec, nversions, r.var, r.version)};
  }
  free(nversions);
}

/* Nodes, consumers and the direct edges. */
static void build_nodes(Dag *dag) {
  const Spec *spec = dag->spec;
  dag->nnodes = spec->nstmts;
  dag->nodes = xcalloc((size_t)dag->nnodes, sizeof(DagNode));
  dag->succ = xcalloc((size_t)dag->nnodes, sizeof(NodeSet));
  dag->pred = xcalloc((size_t)dag->nnodes, sizeof(NodeSet));
  dag->reach = xcalloc((size_t)dag->nnodes, sizeof(NodeSet));
  for (int i = 0; i < spec->nstmts; i++) {
    const Statement *st = &spec->stmts[i];
    DagNode *nd = &dag->nodes[i];
    *nd = (DagNode){.fn = st->fn, .stmt = i, .nargs = st->nargs, .result = spec->ninputs + i};
    for (int a = 0; a < st->nargs; a++) {
      int v = value_of(dag, st->args[a]);
      nd->args[a] = v;
      dag_add_consumer(&dag->values[v], i);
      int p = dag->values[v].producer;
      if (p >= 0) {
        nodeset_add(&dag->succ[p], i);
        nodeset_add(&dag->pred[i], p);
      }
    }
  }
}

/* Every edge goes from a lower index to a higher one, so one backward pass closes the
 * relation: reach[i] = union over direct successors j of {j} and reach[j]. */
void dag_close_reach(Dag *dag) {
  for (int i = dag->nnodes - 1; i >= 0; i--) {
    NodeSet r = dag->succ[i];
    for (int j = nodeset_next(&dag->succ[i], i + 1); j >= 0; j = nodeset_next(&dag->succ[i], j + 1))
      nodeset_unite(&r, &dag->reach[j]);
    dag->reach[i] = r;
  }
}

static void build_io(Dag *dag) {
  const Spec *spec = dag->spec;
  dag->ninputs = spec->ninputs;
  dag->inputs = xcalloc((size_t)spec->ninputs, sizeof(int));
  for (int k = 0; k < spec->ninputs; k++) dag->inputs[k] = k;
  dag->noutputs = spec->noutputs;
  dag->outputs = xcalloc((size_t)spec->noutputs, sizeof(int));
  for (int k = 0; k < spec->noutputs; k++) {
    int v = value_of(dag, spec->outputs[k]);
    dag->outputs[k] = v;
    dag->values[v].is_output = true;
  }
}

/* One API argument per name of the `input` (or `return`) line; its values are the variable's,
 * or the array's elements in flat C order, placed at k * type size in the element record. */
static DagArg *build_args(Dag *dag, const int *vars, int nvars, bool inputs) {
  const Spec *spec = dag->spec;
  DagArg *args = xcalloc((size_t)(nvars ? nvars : 1), sizeof(DagArg));
  for (int a = 0; a < nvars; a++) {
    const SpecVar *var = &spec->vars[vars[a]];
    int first = var->ndims ? var->first_elem : vars[a];
    DagArg *arg = &args[a];
    *arg = (DagArg){.var = vars[a], .type = var->type, .nvalues = var->nelems,
                    .record = var->nelems * var->type->size};
    arg->values = xcalloc((size_t)arg->nvalues, sizeof(int));
    for (int k = 0; k < arg->nvalues; k++) {
      int version = inputs ? 0 : spec->vars[first + k].nversions - 1;
      int value = value_of(dag, (VarRef){.var = first + k, .version = version});
      arg->values[k] = value;
      dag->values[value].arg = a;
      dag->values[value].arg_offset = k * var->type->size;
      dag->values[value].arg_record = arg->record;
    }
  }
  return args;
}

static void build_api(Dag *dag) {
  for (int v = 0; v < dag->nvalues; v++) dag->values[v].arg = -1;
  const Spec *spec = dag->spec;
  dag->nin_args = spec->ninput_args;
  dag->in_args = build_args(dag, spec->input_args, spec->ninput_args, true);
  dag->nout_args = spec->noutput_args;
  dag->out_args = build_args(dag, spec->output_args, spec->noutput_args, false);
}

/* The calls past the DAG's capacity: the first is named, with its loop iteration. */
static bool fits_the_dag(const Spec *spec) {
  if (spec->nstmts <= KAS_MAX_NODES) return true;
  char *text = spec_statement_text(spec, KAS_MAX_NODES);
  diag_error(spec->stmts[KAS_MAX_NODES].loc,
             "too many calls for the call DAG: the spec has %d after unrolling, the DAG holds "
             "at most %d for now (call #%d is %s)",
             spec->nstmts, KAS_MAX_NODES, KAS_MAX_NODES, text);
  free(text);
  return false;
}

Dag *dag_build(const Spec *spec) {
  if (!fits_the_dag(spec)) return NULL;
  Dag *dag = xcalloc(1, sizeof *dag);
  dag->spec = spec;
  build_values(dag);
  build_nodes(dag);
  dag_close_reach(dag);
  build_io(dag);
  build_api(dag);
  return dag;
}

void dag_free(Dag *dag) {
  if (!dag) return;
  for (int v = 0; v < dag->nvalues; v++) {
    free(dag->values[v].consumers);
    free(dag->values[v].label);
  }
  free(dag->values);
  free(dag->nodes);
  free(dag->succ);
  free(dag->pred);
  free(dag->reach);
  free(dag->inputs);
  free(dag->outputs);
  for (int a = 0; a < dag->nin_args; a++) free(dag->in_args[a].values);
  for (int a = 0; a < dag->nout_args; a++) free(dag->out_args[a].values);
  free(dag->in_args);
  free(dag->out_args);
  free(dag);
}

/* ---- Graphviz ----------------------------------------------------------------------------- */

/* Writes s as the inside of a DOT double-quoted string. */
static void dot_quoted(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

/* The DOT id of a value's source: the input box or the call that produced it. */
static void dot_source(FILE *out, const Dag *dag, int v) {
  if (dag->values[v].producer >= 0)
    fprintf(out, "n%d", dag->values[v].producer);
  else
    fprintf(out, "in%d", v);
}

/* The calls, each a box labelled function#index (and its implementation when known).  With
 * kernels, the calls of each kernel are drawn inside a cluster labelled with that kernel. */
static void dot_calls(FILE *out, const Dag *dag, const DotKernel *kernels, int nkernels) {
  NodeSet drawn = nodeset_empty();
  for (int k = 0; k < nkernels; k++) {
    fprintf(out, "  subgraph cluster_k%d {\n    style=rounded; color=\"#1b7837\"; label=", k);
    dot_quoted(out, kernels[k].label);
    fputs(";\n", out);
    for (int i = 0; i < dag->nnodes; i++) {
      if (!nodeset_has(&kernels[k].nodes, i)) continue;
      fprintf(out, "    n%d [shape=box, label=\"%s#%d\"];\n", i, dag->nodes[i].fn->name, i);
      nodeset_add(&drawn, i);
    }
    fputs("  }\n", out);
  }
  for (int i = 0; i < dag->nnodes; i++)
    if (!nodeset_has(&drawn, i))
      fprintf(out, "  n%d [shape=box, label=\"%s#%d\"];\n", i, dag->nodes[i].fn->name, i);
}

const DagArg *dag_api_arg(const Dag *dag, int k) {
  return k < dag->nin_args ? &dag->in_args[k] : &dag->out_args[k - dag->nin_args];
}

const char *dag_arg_name(const Dag *dag, const DagArg *arg) {
  return dag->spec->vars[arg->var].name;
}

int dag_value_floats(const Dag *dag, int value) {
  const KType *t = dag->values[value].type;
  return t ? t->size : 1;
}

const char *dag_value_label(const Dag *dag, int value) {
  const Value *v = &dag->values[value];
  if (v->label) return v->label;
  return dag->spec ? dag->spec->vars[v->var].name : "?";
}

/* A reference as an identifier with its version: "B[1][2]" -> "B_1_2_0", "v[i + 1]" ->
 * "v_ip1_0". */
static char *ref_ident(const char *ref, int version) {
  StrBuf sb;
  sb_init(&sb);
  for (const char *c = ref; *c; c++)
    if (*c == '[') sb_putc(&sb, '_');
    else if (*c == '+' || *c == '-') sb_putc(&sb, *c == '+' ? 'p' : 'm');
    else if (*c != ']' && *c != ' ') sb_putc(&sb, *c);
  sb_printf(&sb, "_%d", version);
  return sb_take(&sb);
}

char *dag_value_ident(const Dag *dag, int value) {
  const Value *v = &dag->values[value];
  /* threads.c: "vec3DPhi[N]" -> "vec3DPhi_N_0" */
  if (v->group_stride || v->group_stride2)
    return ref_ident(dag_value_label(dag, value), v->version);
  /* a plain variable, or an array element "B[1][2]" (assigned once): "B_1_2_0";
   * emit_supports_dag refuses a spec in which that name is also another value's */
  return ref_ident(dag->spec->vars[v->var].name, v->version);
}

static int by_ident(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char *dag_duplicate_ident(const Dag *dag, int *a, int *b) {
  char **names = xcalloc((size_t)dag->nvalues + 1, sizeof *names);
  for (int v = 0; v < dag->nvalues; v++) names[v] = dag_value_ident(dag, v);
  char **sorted = xmalloc(sizeof *names * (size_t)(dag->nvalues + 1));
  memcpy(sorted, names, sizeof *names * (size_t)dag->nvalues);
  qsort(sorted, (size_t)dag->nvalues, sizeof *sorted, by_ident);
  char *same = NULL;
  for (int i = 1; i < dag->nvalues && !same; i++)
    if (!strcmp(sorted[i - 1], sorted[i])) same = xstrdup(sorted[i]);
  *a = *b = -1;
  for (int v = 0; v < dag->nvalues && same && *b < 0; v++)
    if (!strcmp(names[v], same)) *(*a < 0 ? a : b) = v;
  for (int v = 0; v < dag->nvalues; v++) free(names[v]);
  free(names);
  free(sorted);
  return same;
}

/* Inputs (top), calls labelled function#index, outputs (bottom); edges carry value labels. */
void dag_write_dot(const Dag *dag, FILE *out) { dag_write_dot_kernels(dag, NULL, 0, out); }

void dag_write_dot_kernels(const Dag *dag, const DotKernel *kernels, int nkernels, FILE *out) {
  fputs("digraph ", out);
  dot_quoted(out, dag->spec->name);
  fputs(" {\n  graph [fontname=\"Helvetica\"];\n  node [fontname=\"Helvetica\"];\n"
        "  edge [fontname=\"Helvetica\", fontsize=10];\n",
        out);
  for (int k = 0; k < dag->ninputs; k++) {
    fprintf(out, "  in%d [shape=invhouse, label=", dag->inputs[k]);
    dot_quoted(out, dag->values[dag->inputs[k]].label);
    fputs("];\n", out);
  }
  dot_calls(out, dag, kernels, nkernels);
  for (int k = 0; k < dag->noutputs; k++) {
    fprintf(out, "  out%d [shape=house, label=", k);
    dot_quoted(out, dag->spec->vars[dag->values[dag->outputs[k]].var].name);
    fputs("];\n", out);
  }
  for (int v = 0; v < dag->nvalues; v++) {
    for (int c = 0; c < dag->values[v].nconsumers; c++) {
      fputs("  ", out);
      dot_source(out, dag, v);
      fprintf(out, " -> n%d [label=", dag->values[v].consumers[c]);
      dot_quoted(out, dag->values[v].label);
      fputs("];\n", out);
    }
  }
  for (int k = 0; k < dag->noutputs; k++) {
    fputs("  ", out);
    dot_source(out, dag, dag->outputs[k]);
    fprintf(out, " -> out%d;\n", k);
  }
  fputs("}\n", out);
}
