/*
 * front_fake_library.h — a hand-built Library for the front-end tests (spec, DAG, fusions): the
 * types of library/types.ini and the signatures of docs/design.md §5.2, no implementations.  It
 * keeps those tests independent of the INI loader; the seed specs are also checked against the
 * real library where it is present.
 */
#ifndef KAS_FRONT_FAKE_LIBRARY_H
#define KAS_FRONT_FAKE_LIBRARY_H
#include <stdlib.h>
#include <string.h>

#include "kasgen.h"

static const struct {
  const char *name;
  int size;
} fake_types[] = {{"scalar", 1},     {"vector3", 3},      {"vector5", 5},
                  {"matrix3x3", 9},  {"matrix5x5", 25},   {"tensor3x3x3", 27},
                  {"tensor3x3x3x3", 81}};

/* name, result, params (NULL-terminated) */
static const char *const fake_functions[][5] = {
    {"mmul33", "matrix3x3", "matrix3x3", "matrix3x3", NULL},
    {"mmul55", "matrix5x5", "matrix5x5", "matrix5x5", NULL},
    {"madd33", "matrix3x3", "matrix3x3", "matrix3x3", NULL},
    {"madd55", "matrix5x5", "matrix5x5", "matrix5x5", NULL},
    {"mvmul33", "vector3", "matrix3x3", "vector3", NULL},
    {"venorm3", "scalar", "vector3", NULL, NULL},
    {"smmul33", "matrix3x3", "matrix3x3", "scalar", NULL},
    {"smmul55", "matrix5x5", "matrix5x5", "scalar", NULL},
    {"svmul3", "vector3", "vector3", "scalar", NULL},
    {"smimul33", "matrix3x3", "scalar", NULL, NULL},
    {"vvmulabs3", "scalar", "vector3", "vector3", NULL},
    {"ttmul411", "tensor3x3x3", "tensor3x3x3x3", "vector3", NULL},
    {"ttmul311", "matrix3x3", "tensor3x3x3", "vector3", NULL},
    {"ttmul3212", "tensor3x3x3", "tensor3x3x3", "matrix3x3", NULL},
};

static inline KType *fake_type(Library *lib, const char *name) {
  for (int i = 0; i < lib->ntypes; i++)
    if (!strcmp(lib->types[i].name, name)) return &lib->types[i];
  abort(); /* a typo in the table above */
}

static inline Library *fake_library(void) {
  Library *lib = xcalloc(1, sizeof *lib);
  lib->dir = xstrdup("(fake)");
  lib->ntypes = (int)(sizeof fake_types / sizeof fake_types[0]);
  lib->types = xcalloc((size_t)lib->ntypes, sizeof(KType));
  for (int i = 0; i < lib->ntypes; i++)
    lib->types[i] = (KType){.name = xstrdup(fake_types[i].name), .size = fake_types[i].size};
  lib->nfuncs = (int)(sizeof fake_functions / sizeof fake_functions[0]);
  lib->funcs = xcalloc((size_t)lib->nfuncs, sizeof(Function));
  for (int f = 0; f < lib->nfuncs; f++) {
    Function *fn = &lib->funcs[f];
    fn->name = xstrdup(fake_functions[f][0]);
    fn->result = fake_type(lib, fake_functions[f][1]);
    for (int p = 2; p < 5 && fake_functions[f][p]; p++)
      fn->params[fn->nparams++] = fake_type(lib, fake_functions[f][p]);
  }
  return lib;
}

static inline void fake_library_free(Library *lib) {
  for (int i = 0; i < lib->ntypes; i++) free(lib->types[i].name);
  for (int f = 0; f < lib->nfuncs; f++) free(lib->funcs[f].name);
  free(lib->types);
  free(lib->funcs);
  free(lib->dir);
  free(lib);
}
#endif
