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

/* "did you mean 'F'?" at the spec's declaration of the input or output whose name is closest
 * to name (len bytes), as for an unknown name in the spec itself (spec.c). */
static void hint_argument(const Dag *dag, const char *name, size_t len) {
  NameHint h;
  name_hint_start(&h, name, len);
  for (int k = 0; k < dag->nin_args + dag->nout_args; k++)
    name_hint_offer(&h, dag_arg_name(dag, dag_api_arg(dag, k)), k);
  if (h.best)
    diag_note(dag->spec->vars[dag_api_arg(dag, h.best_id)->var].loc, "did you mean '%s'?", h.best);
}

/* Whether name (len bytes) indexes an input or output array ("f[0]"): the array is laid out
 * whole, as the spec's 'input' and 'return' lines name it whole (spec.c says the same). */
static bool names_array_element(const Dag *dag, const char *name, size_t len, SrcLoc where,
                                Layout l) {
  const char *bracket = memchr(name, '[', len);
  if (!bracket) return false;
  size_t array_len = (size_t)(bracket - name);
  for (int k = 0; k < dag->nin_args + dag->nout_args; k++) {
    const char *var = dag_arg_name(dag, dag_api_arg(dag, k));
    if (strlen(var) != array_len || strncmp(var, name, array_len)) continue;
    diag_error(where, "'%.*s' names an element of array %s; arrays are laid out whole: write "
               "%s=%s", (int)len, name, var, var, target_layout_name(l));
    return true;
  }
  return false;
}

/* Applies one item of the --layout list; false after an error at where. */
static bool apply_layout_item(Target *t, const Dag *dag, const LayoutItem *it, SrcLoc where) {
  if (!it->named) {
    for (int k = 0; k < t->ninputs; k++) t->inputs[k] = it->layout;
    for (int k = 0; k < t->noutputs; k++) t->outputs[k] = it->layout;
    return true;
  }
  if (set_named(t, dag, it->text, it->name_len, it->layout)) return true;
  if (names_array_element(dag, it->text, it->name_len, where, it->layout)) return false;
  diag_error(where, "'%.*s' names no input or output of spec %s", (int)it->name_len, it->text,
             dag->spec->name);
  hint_argument(dag, it->text, it->name_len);
  return false;
}

Target *target_new(const Dag *dag, Precision precision, const char *layouts) {
  return target_new_at(dag, precision, layouts, (SrcLoc){.file = "--layout"});
}

Target *target_new_at(const Dag *dag, Precision precision, const char *layouts, SrcLoc where) {
  if (!target_layouts_check(layouts ? layouts : "", where)) return NULL;
  Target *t = xcalloc(1, sizeof *t);
  t->precision = precision;
  t->w = target_vector_width(precision);
  t->ninputs = dag->nin_args;
  t->noutputs = dag->nout_args;
  t->inputs = xcalloc((size_t)dag->nin_args + 1, sizeof *t->inputs);
  t->outputs = xcalloc((size_t)dag->nout_args + 1, sizeof *t->outputs);
  bool ok = true;
  LayoutItem it;
  for (const char *s = layouts ? layouts : ""; ok && *s;)
    ok = layout_item_next(&s, &it) && apply_layout_item(t, dag, &it, where); /* words checked */
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

/* "NAME=l" for each array of dag that t lays out as l, comma-separated (malloc'ed). */
static char *named_items(const Target *t, const Dag *dag, Layout l) {
  StrBuf sb;
  sb_init(&sb);
  for (int k = 0; k < dag->nin_args + dag->nout_args; k++)
    if (target_arg_layout(t, dag, k) == l)
      sb_printf(&sb, "%s%s=%s", sb.len ? "," : "", dag_arg_name(dag, dag_api_arg(dag, k)),
                target_layout_name(l));
  return sb_take(&sb);
}

char *target_layout_option(const Target *t, const Dag *dag) {
  char *components = named_items(t, dag, LAYOUT_COMPONENT);
  if (!*components) {
    free(components);
    return xstrdup("element");
  }
  char *elements = named_items(t, dag, LAYOUT_ELEMENT);
  char *by_component = xasprintf("component%s%s", *elements ? "," : "", elements);
  free(elements);
  bool shorter = strlen(by_component) < strlen(components);
  free(shorter ? components : by_component);
  return shorter ? by_component : components;
}

bool target_same_layouts(const Target *a, const Target *b, const Dag *dag) {
  for (int k = 0; k < dag->nin_args + dag->nout_args; k++)
    if (target_arg_layout(a, dag, k) != target_arg_layout(b, dag, k)) return false;
  return true;
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
