/*
 * target.c — what generated code is made for (docs/design.md §5.4): the real type (--precision),
 * the layout of every array the caller passes (--layout), the width of vector accesses, and how
 * a routine addresses one array in global memory (GlobalBinding).
 *
 * The names of precisions and layouts and the addressing of one array (GlobalBinding) are in
 * binding.c, below the DAG, where instantiate.c can use them.
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>

static const Target DEFAULT_TARGET = {.precision = PREC_SINGLE, .w = 4};

const Target *target_default(void) { return &DEFAULT_TARGET; }

/* "element" or "component" at s (length len); false for anything else. */
static bool parse_layout_word(const char *s, size_t len, Layout *out) {
  if (len == 7 && !strncmp(s, "element", 7)) *out = LAYOUT_ELEMENT;
  else if (len == 9 && !strncmp(s, "component", 9)) *out = LAYOUT_COMPONENT;
  else return false;
  return true;
}

/* Sets the layout of the API argument (input or output, a plain variable or a whole array) named
 * `name` (len bytes); false when none is. */
static bool set_named(Target *t, const Dag *dag, const char *name, size_t len, Layout l) {
  bool found = false;
  for (int k = 0; k < dag->nin_args + dag->nout_args; k++) {
    const char *var = dag_arg_name(dag, dag_api_arg(dag, k));
    if (strlen(var) != len || strncmp(var, name, len)) continue;
    if (k < dag->nin_args) t->inputs[k] = l;
    else t->outputs[k - dag->nin_args] = l;
    found = true;
  }
  return found;
}

/* One item of the --layout list: "element", "component" or "NAME=element|component". */
static bool apply_layout_item(Target *t, const Dag *dag, const char *item, size_t len) {
  const char *eq = memchr(item, '=', len);
  const char *word = eq ? eq + 1 : item;
  size_t wlen = eq ? len - (size_t)(eq - item) - 1 : len;
  Layout l;
  if (!parse_layout_word(word, wlen, &l)) {
    diag_error((SrcLoc){.file = "--layout"}, "'%.*s': expected element, component or "
               "NAME=element|component", (int)len, item);
    return false;
  }
  if (!eq) {
    for (int k = 0; k < t->ninputs; k++) t->inputs[k] = l;
    for (int k = 0; k < t->noutputs; k++) t->outputs[k] = l;
    return true;
  }
  if (set_named(t, dag, item, (size_t)(eq - item), l)) return true;
  diag_error((SrcLoc){.file = "--layout"}, "'%.*s' names no input or output of spec %s",
             (int)(eq - item), item, dag->spec->name);
  return false;
}

Target *target_new(const Dag *dag, Precision precision, const char *layouts) {
  Target *t = xcalloc(1, sizeof *t);
  t->precision = precision;
  t->w = target_vector_width(precision);
  t->ninputs = dag->nin_args;
  t->noutputs = dag->nout_args;
  t->inputs = xcalloc((size_t)dag->nin_args + 1, sizeof *t->inputs);
  t->outputs = xcalloc((size_t)dag->nout_args + 1, sizeof *t->outputs);
  bool ok = true;
  for (const char *s = layouts ? layouts : ""; ok && *s;) {
    size_t len = strcspn(s, ",");
    ok = apply_layout_item(t, dag, s, len);
    s += len + (s[len] == ',');
  }
  if (ok) return t;
  target_free(t);
  return NULL;
}

Target *target_unaligned(const Target *t) {
  Target *u = xcalloc(1, sizeof *u);
  *u = *t;
  u->w = 1;
  u->inputs = xcalloc((size_t)t->ninputs + 1, sizeof *u->inputs);
  u->outputs = xcalloc((size_t)t->noutputs + 1, sizeof *u->outputs);
  if (t->inputs) memcpy(u->inputs, t->inputs, sizeof *u->inputs * (size_t)t->ninputs);
  if (t->outputs) memcpy(u->outputs, t->outputs, sizeof *u->outputs * (size_t)t->noutputs);
  u->misaligned_rows = target_has_component(t);
  return u;
}

void target_free(Target *t) {
  if (!t) return;
  free(t->inputs);
  free(t->outputs);
  free(t);
}

bool target_has_component(const Target *t) {
  for (int k = 0; t->inputs && k < t->ninputs; k++)
    if (t->inputs[k] == LAYOUT_COMPONENT) return true;
  for (int k = 0; t->outputs && k < t->noutputs; k++)
    if (t->outputs[k] == LAYOUT_COMPONENT) return true;
  return false;
}

Layout target_arg_layout(const Target *t, const Dag *dag, int k) {
  if (k < dag->nin_args) return t->inputs && k < t->ninputs ? t->inputs[k] : LAYOUT_ELEMENT;
  k -= dag->nin_args;
  return t->outputs && k < t->noutputs ? t->outputs[k] : LAYOUT_ELEMENT;
}

Layout target_value_layout(const Target *t, const Dag *dag, int value) {
  const Value *v = &dag->values[value];
  if (v->arg < 0) return LAYOUT_ELEMENT;
  return target_arg_layout(t, dag, v->producer < 0 ? v->arg : dag->nin_args + v->arg);
}

GlobalBinding target_binding(const Target *t, const Dag *dag, int value) {
  const Value *v = &dag->values[value];
  int size = dag_value_floats(dag, value);
  if (v->arg < 0) return (GlobalBinding){LAYOUT_ELEMENT, size, size, 0};
  return (GlobalBinding){target_value_layout(t, dag, value), size, v->arg_record, v->arg_offset};
}

bool target_allows(const Target *t, const Dag *dag, int value, const IoRoutine *io) {
  if (!io->contiguous) return true;
  /* An element-major slice of a record is served too: instantiate.c moves its strided chunk. */
  return target_value_layout(t, dag, value) == LAYOUT_ELEMENT;
}
