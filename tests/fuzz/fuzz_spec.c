/*
 * fuzz_spec.c — libFuzzer target for the front end: any byte string goes through spec_parse
 * against a fixed fake library (the signatures of docs/design.md §5.2, see front_fake_library.h);
 * whatever parses is also turned into a DAG, written as DOT and has its fusions enumerated, so
 * that the parser's promises (consistent SSA references, <= KAS_MAX_SPEC_CALLS calls, a DAG for
 * any spec of <= KAS_MAX_NODES) are exercised downstream.
 * Built by tests/fuzz/build.sh with the sources compiled in directly (no libkasgen.a, no INI
 * loader): this file defines the library look-ups the parser needs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "front_fake_library.h"

KType *library_find_type(const Library *lib, const char *name) {
  for (int i = 0; i < lib->ntypes; i++)
    if (!strcasecmp(lib->types[i].name, name)) return &lib->types[i];
  return NULL;
}

Function *library_find_function(const Library *lib, const char *name) {
  for (int i = 0; i < lib->nfuncs; i++)
    if (!strcmp(lib->funcs[i].name, name)) return &lib->funcs[i];
  return NULL;
}

/* The parser's "did you mean" look-ups, over the fake library (as library.c does them). */
const Function *library_closest_function(const Library *lib, const char *name, size_t len) {
  NameHint h;
  name_hint_start(&h, name, len);
  for (int f = 0; f < lib->nfuncs; f++) name_hint_offer(&h, lib->funcs[f].name, f);
  return h.best ? &lib->funcs[h.best_id] : NULL;
}

const KType *library_closest_type(const Library *lib, const char *name, size_t len) {
  NameHint h;
  name_hint_start(&h, name, len);
  for (int t = 0; t < lib->ntypes; t++) name_hint_offer(&h, lib->types[t].name, t);
  return h.best ? &lib->types[h.best_id] : NULL;
}

static Library *lib;
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  lib = fake_library();
  devnull = fopen("/dev/null", "w");
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* Spec text never holds NUL (read_text_file rejects it): parse up to the first one. */
  char *text = xstrndup((const char *)data, size);
  diag_reset();
  Spec *sp = spec_parse("fuzz.spec", text, lib);
  if (sp) {
    if (sp->nstmts < 1 || sp->nstmts > KAS_MAX_SPEC_CALLS) abort();
    Dag *dag = dag_build(sp);
    if (!dag && sp->nstmts <= KAS_MAX_NODES) abort();
    if (dag) {
      dag_write_dot(dag, devnull);
      FusionSet fs = fusion_enumerate(dag, 3);
      for (int i = 0; i < fs.n; i++)
        if (!fusion_is_convex(dag, fusion_set_get(&fs, i))) abort();
      fusion_set_free(&fs);
      dag_free(dag);
    }
    spec_print_structure(sp, devnull);
    for (int i = 0; i < sp->nstmts; i++) free(spec_statement_text(sp, i));
    spec_free(sp);
  } else if (diag_error_count() == 0) {
    abort(); /* rejected without saying why */
  }
  free(text);
  return 0;
}
