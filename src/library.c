/*
 * library.c — loads the elementary-function library (docs/library-format.md is the format):
 * types.ini, every <f>/function.ini with its CPU reference, every <f>/<f>_<i>.ini implementation
 * with its .cu text and access patterns.
 *
 * INI files are parsed by inih through ini_file.c, which gives every key and value its line and
 * column.  Everything the loader accepts is
 * checked: unknown keys and sections are errors (typos must not pass silently), patterns must
 * evaluate and stay inside their buffer for several block sizes, and the .cu file must define
 * every routine.  All errors are reported (file:line:col) before library_load gives up.
 */
#include "kasgen.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define MAX_IO_ROUTINES 16
/* Types are looked up by a linear search (a library has a handful); a types.ini of 100,000 types
 * would make loading it, and every spec declaration, quadratic. */
#define MAX_TYPES 1000

/* ---- value helpers ----------------------------------------------------------------------- */

/* Parses a decimal integer in [lo, hi] that is the whole value. */
static bool parse_int(const char *value, SrcLoc loc, long lo, long hi, long *out) {
  const char *s = value;
  bool neg = *s == '-';
  if (neg) s++;
  long v = 0;
  if (!isdigit((unsigned char)*s)) goto bad;
  for (; isdigit((unsigned char)*s); s++) {
    if (v > (LONG_MAX - (*s - '0')) / 10) goto bad;
    v = v * 10 + (*s - '0');
  }
  if (*s != '\0') goto bad;
  if (neg) v = -v;
  if (v < lo || v > hi) {
    diag_error(loc, "%ld is out of range (%ld..%ld)", v, lo, hi);
    return false;
  }
  *out = v;
  return true;
bad:
  diag_error(loc, "expected an integer, found '%s'", value);
  return false;
}

static char *path_join(const char *dir, const char *name) { return xasprintf("%s/%s", dir, name); }

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void keep_text(Library *lib, char *text) {
  lib->texts = xrealloc(lib->texts, (size_t)(lib->ntexts + 1) * sizeof *lib->texts);
  lib->texts[lib->ntexts++] = text;
}

/* Whether `word` occurs in text as a whole identifier. */
static bool has_identifier(const char *text, const char *word) {
  size_t n = strlen(word);
  for (const char *p = strstr(text, word); p; p = strstr(p + 1, word)) {
    bool left = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
    bool right = !(isalnum((unsigned char)p[n]) || p[n] == '_');
    if (left && right) return true;
  }
  return false;
}

/* ---- types.ini ---------------------------------------------------------------------------- */

typedef struct {
  Library *lib;
  KType *current; /* type of the section being read, NULL outside a type */
  bool *has_size; /* per type */
  bool too_many;  /* MAX_TYPES reached and reported */
} TypesCtx;

/* [typename] */
static void types_section(IniFile *f, const char *name, SrcLoc loc) {
  TypesCtx *c = f->user;
  Library *lib = c->lib;
  c->current = NULL;
  bool ok = name[0] != '\0';
  for (const char *s = name; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') ok = false;
  if (!ok) {
    diag_error(loc, "bad type name '%s' (letters, digits and '_' only)", name);
    return;
  }
  if (lib->ntypes >= MAX_TYPES) {
    if (!c->too_many) diag_error(loc, "more than %d types", MAX_TYPES);
    c->too_many = true;
    return;
  }
  if (library_find_type(lib, name)) {
    diag_error(loc, "type '%s' defined twice", name);
    return;
  }
  lib->types = xrealloc(lib->types, (size_t)(lib->ntypes + 1) * sizeof *lib->types);
  c->has_size = xrealloc(c->has_size, (size_t)(lib->ntypes + 1) * sizeof *c->has_size);
  KType *t = &lib->types[lib->ntypes];
  c->has_size[lib->ntypes++] = false;
  t->name = xstrdup(name);
  for (char *s = t->name; *s; s++) *s = (char)tolower((unsigned char)*s);
  t->size = 0;
  t->near_identity = 0;
  t->loc = t->check_loc = loc;
  c->current = t;
}

/* check-inputs = near-identity | random: how the generated checks draw the type's values
 * (near_identity is resolved to the matrix order once the size is known, in load_types). */
static void types_check_inputs(KType *t, const char *value, SrcLoc loc) {
  if (!strcmp(value, "near-identity")) t->near_identity = -1;
  else if (!strcmp(value, "random")) t->near_identity = 0;
  else diag_error(loc, "check-inputs must be 'near-identity' or 'random', not '%s'", value);
  t->check_loc = loc;
}

/* The order k of a near-identity type: its size must be k*k. */
static void resolve_near_identity(KType *t) {
  if (!t->near_identity || !t->size) return;
  int k = 1;
  while (k * k < t->size) k++;
  if (k * k == t->size) {
    t->near_identity = k;
    return;
  }
  diag_error(t->check_loc, "check-inputs = near-identity needs a square matrix type, but '%s' "
             "has size %d (not k*k)", t->name, t->size);
  t->near_identity = 0;
}

/* size = N, check-inputs = ... */
static void types_pair(IniFile *f, const char *section, const char *key, const char *value,
                       SrcLoc key_loc, SrcLoc value_loc) {
  TypesCtx *c = f->user;
  if (!section[0]) {
    diag_error(key_loc, "key '%s' outside a [type] section", key);
    return;
  }
  if (!c->current) return; /* the section header was already reported */
  if (!strcmp(key, "check-inputs")) {
    types_check_inputs(c->current, value, value_loc);
    return;
  }
  if (strcmp(key, "size") != 0) {
    diag_error(key_loc, "unknown key '%s' in types.ini (expected size or check-inputs)", key);
    return;
  }
  int idx = (int)(c->current - c->lib->types);
  if (c->has_size[idx]) {
    diag_error(key_loc, "size given twice for type '%s'", c->current->name);
    return;
  }
  long v;
  if (parse_int(value, value_loc, 1, 4096, &v)) {
    c->current->size = (int)v;
    c->has_size[idx] = true;
  }
}

static void load_types(Library *lib) {
  char *path = path_join(lib->dir, "types.ini");
  char *text = read_text_file(path, NULL);
  if (!text) {
    free(path);
    return;
  }
  keep_text(lib, text);
  keep_text(lib, path); /* the path is kept too: every type's SrcLoc names it */
  TypesCtx c = {.lib = lib};
  IniFile f = {.path = path, .text = text, .on_pair = types_pair, .on_section = types_section,
               .user = &c};
  ini_run(&f);
  for (int t = 0; t < lib->ntypes; t++) {
    if (!c.has_size[t]) diag_error(lib->types[t].loc, "type '%s' lacks 'size'", lib->types[t].name);
    resolve_near_identity(&lib->types[t]);
  }
  if (lib->ntypes == 0) diag_error(ini_file_loc(&f, 0, 0), "no types defined");
  free(c.has_size);
}

/* ---- function.ini ------------------------------------------------------------------------- */

typedef struct {
  Library *lib;
  Function *fn;
  const char *folder; /* the function's folder name, which must equal `name` */
  bool in_function;   /* inside [function] */
  char *reference;
  SrcLoc seen[5];     /* name params result reference formula: where given (line 0 = absent) */
  SrcLoc header;      /* the [function] line */
} FunctionCtx;

/* Keys of [function] in the order of FunctionCtx.seen; all but formula are required. */
static const char *const function_keys[] = {"name", "params", "result", "reference", "formula"};
enum { FK_NAME, FK_PARAMS, FK_RESULT, FK_REFERENCE, FK_FORMULA, N_FUNCTION_KEYS };

static void function_section(IniFile *f, const char *name, SrcLoc loc) {
  FunctionCtx *c = f->user;
  c->in_function = !strcmp(name, "function");
  if (!c->in_function) diag_error(loc, "unknown section '[%s]' (expected [function])", name);
  else if (c->header.line) diag_error(loc, "section [function] given twice");
  else c->header = loc;
}

/* Resolves a type name at loc, or reports it. */
static KType *lookup_type(Library *lib, const char *name, SrcLoc loc) {
  KType *t = library_find_type(lib, name);
  if (t) return t;
  diag_error(loc, "unknown type '%s' (see types.ini)", name);
  const KType *close = library_closest_type(lib, name, strlen(name));
  if (close) diag_note(close->loc, "did you mean '%s'?", close->name);
  return NULL;
}

/* params = type ("," type)* */
static void function_params(FunctionCtx *c, const char *value, SrcLoc loc) {
  const char *s = value;
  for (;;) {
    while (*s == ' ' || *s == '\t') s++;
    const char *e = s;
    while (*e && *e != ',') e++;
    const char *t = e;
    while (t > s && (t[-1] == ' ' || t[-1] == '\t')) t--;
    SrcLoc at = loc;
    at.col += (int)(s - value);
    if (t == s) {
      diag_error(at, "expected a type name in params");
      return;
    }
    if (c->fn->nparams == KAS_MAX_ARGS) {
      diag_error(at, "more than %d parameters", KAS_MAX_ARGS);
      return;
    }
    char *name = xstrndup(s, (size_t)(t - s));
    KType *type = lookup_type(c->lib, name, at);
    free(name);
    if (!type) return;
    c->fn->params[c->fn->nparams++] = type;
    if (*e == '\0') return;
    s = e + 1;
  }
}

static void function_pair(IniFile *f, const char *section, const char *key, const char *value,
                          SrcLoc key_loc, SrcLoc value_loc) {
  FunctionCtx *c = f->user;
  if (!section[0]) {
    diag_error(key_loc, "key '%s' outside the [function] section", key);
    return;
  }
  if (!c->in_function) return;
  int k = -1;
  for (int i = 0; i < N_FUNCTION_KEYS; i++)
    if (!strcmp(key, function_keys[i])) k = i;
  if (k < 0) {
    diag_error(key_loc, "unknown key '%s' (expected name, params, result, reference, formula)",
               key);
    return;
  }
  if (c->seen[k].line) {
    diag_error(key_loc, "'%s' given twice (first at line %d)", key, c->seen[k].line);
    return;
  }
  c->seen[k] = key_loc;
  switch (k) {
  case FK_NAME:
    if (strcmp(value, c->folder) != 0)
      diag_error(value_loc, "function name '%s' does not match its folder '%s'", value, c->folder);
    else
      c->fn->loc = value_loc; /* where the function is declared, for messages that name it */
    break;
  case FK_PARAMS: function_params(c, value, value_loc); break;
  case FK_RESULT: c->fn->result = lookup_type(c->lib, value, value_loc); break;
  case FK_FORMULA:
    /* Shown by `kasgen list` under the signature: plain text, one line. */
    if (!value[0]) diag_error(value_loc, "formula is empty (say what the function computes)");
    else c->fn->formula = xstrdup(value);
    break;
  default:
    if (!value[0] || strchr(value, '/'))
      diag_error(value_loc, "reference must be a file name in the function's folder");
    else
      c->reference = xstrdup(value);
  }
}

/* Checks the CPU reference file: present and defining ref_<f>. */
static void check_reference(Function *fn, const char *fdir, FunctionCtx *c) {
  if (!c->reference) return;
  fn->ref_path = path_join(fdir, c->reference);
  fn->ref_symbol = xasprintf("ref_%s", fn->name);
  char *text = read_text_file(fn->ref_path, NULL);
  if (!text) {
    diag_note(c->seen[FK_REFERENCE], "reference named here");
    return;
  }
  if (!has_identifier(text, fn->ref_symbol))
    diag_error((SrcLoc){.file = fn->ref_path}, "does not define %s", fn->ref_symbol);
  free(text);
}

/* Reads <fdir>/function.ini into fn (name = folder). */
static bool load_function_ini(Library *lib, Function *fn, const char *fdir, const char *folder) {
  int errors = diag_error_count();
  char *path = path_join(fdir, "function.ini");
  char *text = read_text_file(path, NULL);
  if (!text) {
    free(path);
    return false;
  }
  keep_text(lib, text);
  keep_text(lib, path);
  fn->name = xstrdup(folder);
  fn->loc = (SrcLoc){.file = path, .text = text, .line = 1};
  FunctionCtx c = {.lib = lib, .fn = fn, .folder = folder};
  IniFile f = {.path = path, .text = text, .on_pair = function_pair,
               .on_section = function_section, .user = &c};
  if (ini_run(&f)) {
    if (!c.header.line) diag_error(ini_file_loc(&f, 0, 0), "no [function] section");
    for (int k = 0; k < FK_FORMULA && c.header.line; k++)
      if (!c.seen[k].line) diag_error(c.header, "[function] lacks '%s'", function_keys[k]);
    check_reference(fn, fdir, &c);
  }
  free(c.reference);
  return diag_error_count() == errors;
}

/* ---- implementation INI ------------------------------------------------------------------- */

/* Keys of [implementation] in the order of ImplCtx.seen. */
static const char *const impl_keys[] = {"function", "index", "source", "description", "GX", "GY",
                                        "GZ", "BX", "BY", "BZ", "recommended", "BATCH"};
enum { K_FUNCTION, K_INDEX, K_SOURCE, K_DESCRIPTION, K_GX, K_GY, K_GZ, K_BX, K_BY, K_BZ,
       K_RECOMMENDED, K_BATCH, NKEYS };

typedef enum { SEC_NONE, SEC_IMPL, SEC_COMPUTE, SEC_LOAD, SEC_SAVE, SEC_BAD } SectionKind;

/* An io routine while its section is read: which keys were given, and where. */
typedef struct {
  SrcLoc header, arg, variant, pattern, contiguous; /* line 0 = not given */
} IoSeen;

typedef struct {
  Function *fn;
  Impl *impl;
  SectionKind sec;
  int sec_index; /* j of [load j] / [save j] */
  SrcLoc seen[NKEYS];
  SrcLoc in_seen[KAS_MAX_ARGS], out_seen, compute_header, impl_header;
  IoSeen load_seen[MAX_IO_ROUTINES], save_seen[MAX_IO_ROUTINES];
  char *source;
  SrcLoc dims_loc[3];
} ImplCtx;

/* section = "implementation" | "compute" | ("load" | "save") " " integer */
static void impl_section(IniFile *f, const char *name, SrcLoc loc) {
  ImplCtx *c = f->user;
  c->sec = SEC_BAD;
  if (!strcmp(name, "implementation")) {
    if (c->impl_header.line) diag_error(loc, "section [implementation] given twice");
    c->impl_header = loc;
    c->sec = SEC_IMPL;
    return;
  }
  if (!strcmp(name, "compute")) {
    if (c->compute_header.line) diag_error(loc, "section [compute] given twice");
    c->compute_header = loc;
    c->sec = SEC_COMPUTE;
    return;
  }
  bool is_load = !strncmp(name, "load ", 5), is_save = !strncmp(name, "save ", 5);
  if (!is_load && !is_save) {
    diag_error(loc, "unknown section '[%s]' (expected [implementation], [compute], [load j], "
                    "[save j])", name);
    return;
  }
  long j;
  SrcLoc num_loc = loc;
  num_loc.col += 6;
  if (!parse_int(name + 5, num_loc, 0, MAX_IO_ROUTINES - 1, &j)) return;
  IoSeen *s = is_load ? &c->load_seen[j] : &c->save_seen[j];
  if (s->header.line) {
    diag_error(loc, "section [%s] given twice (first at line %d)", name, s->header.line);
    return;
  }
  s->header = loc;
  c->sec = is_load ? SEC_LOAD : SEC_SAVE;
  c->sec_index = (int)j;
}

/* A block dimension: a positive thread count, or `size`. */
static void impl_block_dim(ImplCtx *c, int d, const char *value, SrcLoc loc) {
  c->dims_loc[d] = loc;
  if (!strcmp(value, "size")) {
    c->impl->dims[d] = 0;
    return;
  }
  long v;
  c->impl->dims[d] = parse_int(value, loc, 1, KAS_MAX_THREADS, &v) ? (int)v : -1;
}

static void impl_key(ImplCtx *c, int k, const char *value, SrcLoc vloc) {
  Impl *im = c->impl;
  long v;
  switch (k) {
  case K_FUNCTION:
    if (strcmp(value, c->fn->name) != 0)
      diag_error(vloc, "function '%s' does not match the folder's function '%s'", value,
                 c->fn->name);
    break;
  case K_INDEX:
    if (parse_int(value, vloc, 0, 999, &v) && v != im->index)
      diag_error(vloc, "index %ld does not match the file name (%s)", v, im->name);
    break;
  case K_SOURCE:
    if (!value[0] || strchr(value, '/'))
      diag_error(vloc, "source must be a file name in the function's folder");
    else
      c->source = xstrdup(value);
    break;
  case K_DESCRIPTION: break;
  case K_GX:
    if (strcmp(value, "size") != 0) diag_error(vloc, "GX must be 'size' (the grid is 1-D)");
    break;
  case K_GY:
  case K_GZ:
    if (strcmp(value, "1") != 0) diag_error(vloc, "%s must be 1 (the grid is 1-D)", impl_keys[k]);
    break;
  case K_BX: case K_BY: case K_BZ: impl_block_dim(c, k - K_BX, value, vloc); break;
  case K_RECOMMENDED:
    if (parse_int(value, vloc, 1, KAS_MAX_THREADS, &v)) {
      if (v % 4) diag_error(vloc, "recommended must be a multiple of 4 (kasgen uses only such E)");
      else im->recommended_e = (int)v;
    }
    break;
  case K_BATCH:
    if (parse_int(value, vloc, 1, 1, &v)) im->batch = 1;
    break;
  }
}

static void impl_pair_impl(ImplCtx *c, const char *key, const char *value,
                           SrcLoc kloc, SrcLoc vloc) {
  int k = -1;
  for (int i = 0; i < NKEYS; i++)
    if (!strcmp(key, impl_keys[i])) k = i;
  if (k < 0) {
    diag_error(kloc, "unknown key '%s' in [implementation] (expected function, index, source, "
                     "description, GX GY GZ, BX BY BZ, recommended, BATCH)", key);
    return;
  }
  if (c->seen[k].line) {
    diag_error(kloc, "'%s' given twice (first at line %d)", key, c->seen[k].line);
    return;
  }
  c->seen[k] = kloc;
  impl_key(c, k, value, vloc);
}

/* Parses a pattern into *p unless one was given already (then reports at kloc). */
static void impl_pattern(Pattern *p, SrcLoc *seen, const char *key, const char *value,
                         SrcLoc kloc, SrcLoc vloc) {
  if (seen->line) {
    diag_error(kloc, "'%s' given twice (first at line %d)", key, seen->line);
    return;
  }
  *seen = kloc;
  pattern_parse(value, vloc, p);
}

/* INPATTERN n = pattern | OUTPATTERN = pattern */
static void impl_pair_compute(ImplCtx *c, const char *key, const char *value, SrcLoc kloc,
                              SrcLoc vloc) {
  if (!strcmp(key, "OUTPATTERN")) {
    impl_pattern(&c->impl->out, &c->out_seen, key, value, kloc, vloc);
    return;
  }
  if (strncmp(key, "INPATTERN", 9) != 0 || (key[9] != ' ' && key[9] != '\t')) {
    diag_error(kloc, "unknown key '%s' in [compute] (expected INPATTERN n, OUTPATTERN)", key);
    return;
  }
  const char *num = key + 10;
  while (*num == ' ' || *num == '\t') num++;
  SrcLoc nloc = kloc;
  nloc.col += (int)(num - key);
  long n;
  if (!parse_int(num, nloc, 0, c->fn->nparams - 1, &n)) return;
  impl_pattern(&c->impl->in[n], &c->in_seen[n], key, value, kloc, vloc);
}

/* Grows the impl's load or save array so that index j exists. */
static IoRoutine *io_slot(Impl *im, bool load, int j) {
  IoRoutine **arr = load ? &im->loads : &im->saves;
  int *n = load ? &im->nloads : &im->nsaves;
  if (j >= *n) {
    *arr = xrealloc(*arr, (size_t)(j + 1) * sizeof **arr);
    memset(*arr + *n, 0, (size_t)(j + 1 - *n) * sizeof **arr);
    for (int k = *n; k <= j; k++) {
      (*arr)[k].kind = load ? ROUTINE_LOAD : ROUTINE_SAVE;
      (*arr)[k].index = k;
      (*arr)[k].arg = -1;
    }
    *n = j + 1;
  }
  return &(*arr)[j];
}

/* [load j]: arg, variant, LSPATTERN.  [save j]: variant, LSPATTERN. */
static void impl_pair_io(ImplCtx *c, bool load, const char *key, const char *value, SrcLoc kloc,
                         SrcLoc vloc) {
  IoRoutine *r = io_slot(c->impl, load, c->sec_index);
  IoSeen *s = load ? &c->load_seen[c->sec_index] : &c->save_seen[c->sec_index];
  long v;
  if (!strcmp(key, "LSPATTERN")) {
    impl_pattern(&r->ls, &s->pattern, key, value, kloc, vloc);
  } else if (!strcmp(key, "variant")) {
    if (s->variant.line) {
      diag_error(kloc, "'variant' given twice (first at line %d)", s->variant.line);
      return;
    }
    s->variant = kloc;
    r->variant = xstrdup(value);
  } else if (load && !strcmp(key, "arg")) {
    if (s->arg.line) {
      diag_error(kloc, "'arg' given twice (first at line %d)", s->arg.line);
      return;
    }
    s->arg = kloc;
    if (parse_int(value, vloc, 0, c->fn->nparams - 1, &v)) r->arg = (int)v;
  } else if (!strcmp(key, "contiguous")) {
    if (s->contiguous.line) {
      diag_error(kloc, "'contiguous' given twice (first at line %d)", s->contiguous.line);
      return;
    }
    s->contiguous = kloc;
    if (parse_int(value, vloc, 0, 1, &v)) r->contiguous = v == 1;
  } else {
    diag_error(kloc, "unknown key '%s' in [%s %d] (expected %s)", key, load ? "load" : "save",
               c->sec_index,
               load ? "arg, variant, LSPATTERN, contiguous" : "variant, LSPATTERN, contiguous");
  }
}

static void impl_pair(IniFile *f, const char *section, const char *key, const char *value,
                      SrcLoc kloc, SrcLoc vloc) {
  ImplCtx *c = f->user;
  (void)section;
  switch (c->sec) {
  case SEC_NONE: diag_error(kloc, "key '%s' outside a section", key); break;
  case SEC_IMPL: impl_pair_impl(c, key, value, kloc, vloc); break;
  case SEC_COMPUTE: impl_pair_compute(c, key, value, kloc, vloc); break;
  case SEC_LOAD: impl_pair_io(c, true, key, value, kloc, vloc); break;
  case SEC_SAVE: impl_pair_io(c, false, key, value, kloc, vloc); break;
  case SEC_BAD: break; /* the header was reported */
  }
}

/* Required keys, block shape, patterns present, loads and saves complete. */
static void impl_check_keys(ImplCtx *c, SrcLoc file) {
  Impl *im = c->impl;
  static const int required[] = {K_FUNCTION, K_INDEX, K_GX, K_GY, K_GZ, K_BX, K_BY, K_BZ, K_BATCH};
  if (!c->impl_header.line) diag_error(file, "no [implementation] section");
  for (size_t k = 0; k < sizeof required / sizeof required[0] && c->impl_header.line; k++)
    if (!c->seen[required[k]].line)
      diag_error(c->impl_header, "[implementation] lacks '%s'", impl_keys[required[k]]);
  int nsize = 0, fixed = 1;
  bool dims_ok = im->dims[0] >= 0 && im->dims[1] >= 0 && im->dims[2] >= 0; /* else reported */
  for (int d = 0; d < 3 && dims_ok; d++) {
    if (!c->seen[K_BX + d].line) continue;
    if (im->dims[d] == 0) {
      nsize++;
      im->size_dim = d;
    } else {
      fixed *= im->dims[d];
    }
  }
  if (dims_ok && c->seen[K_BX].line && c->seen[K_BY].line && c->seen[K_BZ].line && nsize != 1)
    diag_error(c->seen[K_BX], "exactly one of BX BY BZ must be 'size' (found %d)", nsize);
  if (fixed > KAS_MAX_THREADS)
    diag_error(c->seen[K_BX], "%d threads per element exceed %d", fixed, KAS_MAX_THREADS);
  if (im->recommended_e && fixed * im->recommended_e > KAS_MAX_THREADS)
    diag_error(c->seen[K_RECOMMENDED], "recommended %d elements need %d threads (at most %d)",
               im->recommended_e, fixed * im->recommended_e, KAS_MAX_THREADS);
  if (!c->compute_header.line) diag_error(file, "no [compute] section");
  for (int n = 0; n < c->fn->nparams; n++)
    if (c->compute_header.line && !c->in_seen[n].line)
      diag_error(c->compute_header, "[compute] lacks 'INPATTERN %d'", n);
  if (c->compute_header.line && !c->out_seen.line)
    diag_error(c->compute_header, "[compute] lacks 'OUTPATTERN'");
}

static void impl_check_io(ImplCtx *c, bool load, SrcLoc file) {
  Impl *im = c->impl;
  IoSeen *seen = load ? c->load_seen : c->save_seen;
  const char *what = load ? "load" : "save";
  int n = 0;
  for (int j = 0; j < MAX_IO_ROUTINES; j++)
    if (seen[j].header.line) n = j + 1;
  for (int j = 0; j < n; j++) {
    if (!seen[j].header.line) {
      SrcLoc at = file;
      for (int k = j + 1; k < n && !at.line; k++) at = seen[k].header.line ? seen[k].header : at;
      diag_error(at, "[%s %d] missing (%s sections are numbered 0, 1, ...)", what, j, what);
      continue;
    }
    IoRoutine *r = io_slot(im, load, j);
    if (load && !seen[j].arg.line) diag_error(seen[j].header, "[load %d] lacks 'arg'", j);
    if (!seen[j].variant.line) diag_error(seen[j].header, "[%s %d] lacks 'variant'", what, j);
    if (!seen[j].pattern.line) diag_error(seen[j].header, "[%s %d] lacks 'LSPATTERN'", what, j);
    r->symbol = xasprintf("d_%s_%s_%d", im->name, what, j);
    if (!r->variant) r->variant = xstrdup("");
    if (r->ls.uses_w && !r->contiguous)
      diag_error(seen[j].pattern, "[%s %d]: LSPATTERN uses W, the width of a contiguous "
                 "routine's vector accesses; say 'contiguous = 1'", what, j);
  }
  if (!load && n == 0) diag_error(file, "no [save j] section (at least one save is needed)");
  if (load)
    for (int a = 0; a < c->fn->nparams; a++) {
      bool found = false;
      for (int j = 0; j < im->nloads; j++) found |= im->loads[j].arg == a;
      if (!found) diag_error(file, "no [load j] section with arg = %d", a);
    }
}

/* Checks one pattern under shape (E elements): evaluates for every thread, stays inside the
 * buffer of E*size floats, and (when must_cover) touches every float of it. */
static bool check_pattern(const Pattern *p, const char *what, BlockShape shape, int e, int size,
                          bool must_cover) {
  if (!p->start) return true; /* absent: reported already */
  if (shape.w != 4 && !p->uses_w) return true; /* the same at every width: checked at W = 4 */
  long floats = (long)e * size;
  bool *covered = must_cover ? xcalloc((size_t)floats, 1) : NULL;
  bool ok = true;
  int threads = shape.bx * shape.by * shape.bz;
  char at[32]; /* "E = 8", and the width where the pattern depends on it */
  snprintf(at, sizeof at, p->uses_w ? "E = %d, W = %d" : "E = %d", e, shape.w);
  for (int t = 0; t < threads && ok; t++) {
    AccessSet s;
    if (!pattern_access_set(p, shape, t, &s)) {
      diag_note(p->loc, "while evaluating %s for thread %d at %s", what, t, at);
      ok = false;
      break;
    }
    for (int k = 0; k < s.n && ok; k++) {
      if (s.offsets[k] < 0 || s.offsets[k] >= floats) {
        diag_error(p->loc, "%s: thread %d touches offset %ld, outside the buffer [0, %ld) at %s",
                   what, t, s.offsets[k], floats, at);
        ok = false;
      } else if (covered) {
        covered[s.offsets[k]] = true;
      }
    }
    access_set_free(&s);
  }
  for (long k = 0; ok && covered && k < floats; k++)
    if (!covered[k]) {
      diag_error(p->loc, "%s leaves offset %ld of the buffer untouched at %s (a load must "
                         "fill, a save and the compute output must cover the whole buffer)",
                 what, k, at);
      ok = false;
    }
  free(covered);
  return ok;
}

/* A compute's patterns index buffers, which hold one real per offset at every width: W has no
 * meaning there. */
static void impl_check_compute_width(Impl *im) {
  for (int n = 0; n <= im->fn->nparams; n++) {
    const Pattern *p = n < im->fn->nparams ? &im->in[n] : &im->out;
    if (p->start && p->uses_w)
      diag_error(p->loc, "%s uses W, which only a contiguous load or save may (the width of "
                 "its vector accesses)", n < im->fn->nparams ? "INPATTERN" : "OUTPATTERN");
  }
}

/* Every pattern at a few block sizes and vector widths: kasgen only uses E that are multiples
 * of 4 (contiguous routines move 16-byte vectors of W = 4 floats or 2 doubles, or W = 1 real
 * where arrays are not 16-byte aligned), so E = 4, 8, 32, 128 and the recommended E, where
 * threads fit, each at W = 4, 2, 1. */
static void impl_check_patterns(Impl *im) {
  const Function *fn = im->fn;
  if (!fn->result) return;
  impl_check_compute_width(im);
  int es[] = {4, 8, 32, 128, im->recommended_e};
  for (int k = 0; k < 15; k++) {
    int e = es[k / 3];
    bool dup = false;
    for (int j = 0; j < k / 3; j++) dup |= es[j] == e;
    if (e <= 0 || dup || impl_threads(im, e) > KAS_MAX_THREADS) continue;
    BlockShape shape = impl_shape(im, e);
    shape.w = 4 >> k % 3;
    bool ok = true;
    for (int n = 0; n < fn->nparams && ok; n++) {
      char what[32];
      snprintf(what, sizeof what, "INPATTERN %d", n);
      ok = check_pattern(&im->in[n], what, shape, e, fn->params[n]->size, false);
    }
    ok = ok && check_pattern(&im->out, "OUTPATTERN", shape, e, fn->result->size, true);
    for (int j = 0; j < im->nloads && ok; j++) {
      char what[32];
      snprintf(what, sizeof what, "LSPATTERN of [load %d]", j);
      int a = im->loads[j].arg;
      if (a >= 0) ok = check_pattern(&im->loads[j].ls, what, shape, e, fn->params[a]->size, true);
    }
    for (int j = 0; j < im->nsaves && ok; j++) {
      char what[32];
      snprintf(what, sizeof what, "LSPATTERN of [save %d]", j);
      ok = check_pattern(&im->saves[j].ls, what, shape, e, fn->result->size, true);
    }
    if (!ok) return; /* one block size's errors are enough */
  }
}

/* Derives name, index and upper-case prefix from the file name "<f>_<i>.ini". */
static void impl_names(Impl *im, const char *path, const Function *fn) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t len = strlen(base);
  if (len > 4 && !strcmp(base + len - 4, ".ini")) len -= 4;
  im->name = xstrndup(base, len);
  im->upper = xstrdup(im->name);
  for (char *s = im->upper; *s; s++) *s = (char)toupper((unsigned char)*s);
  size_t fl = strlen(fn->name);
  im->index = -1;
  if (!strncmp(im->name, fn->name, fl) && im->name[fl] == '_' && isdigit((unsigned char)im->name[fl + 1]))
    im->index = atoi(im->name + fl + 1);
}

/* The INI of one implementation; its patterns evaluated too when check_patterns is set. */
static bool parse_impl_ini(const char *path, const char *text, Function *fn, Impl *out,
                           bool check_patterns) {
  int errors = diag_error_count();
  memset(out, 0, sizeof *out);
  out->fn = fn;
  out->batch = 1;
  out->ini_path = xstrdup(path);
  impl_names(out, path, fn);
  out->compute_symbol = xasprintf("d_%s_compute", out->name);
  ImplCtx c = {.fn = fn, .impl = out};
  IniFile f = {.path = out->ini_path, .text = text, .on_pair = impl_pair,
               .on_section = impl_section, .user = &c};
  SrcLoc file = ini_file_loc(&f, 0, 0);
  if (ini_run(&f)) {
    impl_check_keys(&c, file);
    impl_check_io(&c, true, file);
    impl_check_io(&c, false, file);
    if (check_patterns && diag_error_count() == errors) impl_check_patterns(out);
  }
  char *dir = xstrdup(path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  out->cu_path = c.source ? (slash ? path_join(dir, c.source) : xstrdup(c.source))
                          : (slash ? xasprintf("%s/%s.cu", dir, out->name) : xasprintf("%s.cu", out->name));
  free(dir);
  free(c.source);
  return diag_error_count() == errors;
}

bool library_parse_impl_ini_text(const char *path, const char *text, Function *fn, Impl *out) {
  return parse_impl_ini(path, text, fn, out, true);
}

void library_impl_free(Impl *im) {
  for (int n = 0; n < KAS_MAX_ARGS; n++) pattern_free(&im->in[n]);
  pattern_free(&im->out);
  for (int j = 0; j < im->nloads; j++) {
    free(im->loads[j].variant);
    free(im->loads[j].symbol);
    pattern_free(&im->loads[j].ls);
  }
  for (int j = 0; j < im->nsaves; j++) {
    free(im->saves[j].variant);
    free(im->saves[j].symbol);
    pattern_free(&im->saves[j].ls);
  }
  free(im->loads);
  free(im->saves);
  free(im->name);
  free(im->upper);
  free(im->compute_symbol);
  free(im->cu_path);
  free(im->cu_text);
  free(im->ini_path);
  memset(im, 0, sizeof *im);
}

/* Reads the implementation's .cu file (library_check checks its routines). */
static void impl_read_cu(Impl *im) { im->cu_text = read_text_file(im->cu_path, NULL); }

/* Finds symbol's definition in the implementation's .cu text and records where it lies (or says
 * that there is none). */
static void find_definition(const Impl *im, const char *symbol, TextSpan *def) {
  def->found = instantiate_find(im->cu_text, symbol, &def->begin, &def->end);
  if (!def->found)
    diag_error((SrcLoc){.file = im->cu_path}, "no definition of %s (KAS_DEV void %s(...) { ... })",
               symbol, symbol);
}

/* Checks that the implementation's .cu file defines every routine, by the rules instantiation
 * relies on, and records where each definition lies. */
static void impl_check_cu(Impl *im) {
  if (!im->cu_text) return;
  find_definition(im, im->compute_symbol, &im->compute_def);
  for (int j = 0; j < im->nloads; j++)
    if (im->loads[j].symbol) find_definition(im, im->loads[j].symbol, &im->loads[j].def);
  for (int j = 0; j < im->nsaves; j++)
    if (im->saves[j].symbol) find_definition(im, im->saves[j].symbol, &im->saves[j].def);
  instantiate_check_rules(im->cu_path, im->cu_text, im->compute_symbol);
  for (int j = 0; j < im->nloads; j++)
    if (im->loads[j].symbol) instantiate_check_rules(im->cu_path, im->cu_text, im->loads[j].symbol);
  for (int j = 0; j < im->nsaves; j++)
    if (im->saves[j].symbol) instantiate_check_rules(im->cu_path, im->cu_text, im->saves[j].symbol);
}

/* ---- folders ------------------------------------------------------------------------------ */

/* Sorted entry names of dir (no dot files); NULL + diagnostic if it cannot be read. */
static char **list_dir(const char *dir, int *n_out) {
  *n_out = 0;
  DIR *d = opendir(dir);
  if (!d) {
    diag_error((SrcLoc){.file = dir}, "cannot open library folder");
    return NULL;
  }
  char **names = NULL;
  int n = 0;
  for (struct dirent *ent; (ent = readdir(d));) {
    if (ent->d_name[0] == '.') continue;
    names = xrealloc(names, (size_t)(n + 1) * sizeof *names);
    names[n++] = xstrdup(ent->d_name);
  }
  closedir(d);
  if (n) qsort(names, (size_t)n, sizeof *names, compare_strings);
  *n_out = n;
  return names;
}

static void free_names(char **names, int n) {
  for (int k = 0; k < n; k++) free(names[k]);
  free(names);
}

/* Whether name is "<f>_<digits>.ini". */
static bool is_impl_ini(const char *name, const char *fname) {
  size_t fl = strlen(fname), len = strlen(name);
  if (strncmp(name, fname, fl) != 0 || name[fl] != '_' || len < fl + 6) return false;
  if (strcmp(name + len - 4, ".ini") != 0) return false;
  for (size_t k = fl + 1; k < len - 4; k++)
    if (!isdigit((unsigned char)name[k])) return false;
  return true;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

static int cmp_impl(const void *a, const void *b) {
  int x = ((const Impl *)a)->index, y = ((const Impl *)b)->index;
  return (x > y) - (x < y); /* not x - y: indices near INT_MAX would overflow */
}

/* Every <f>_<i>.ini of the function's folder. */
static void load_impls(Library *lib, Function *fn, const char *fdir) {
  int n;
  char **names = list_dir(fdir, &n);
  for (int k = 0; k < n; k++) {
    if (!ends_with(names[k], ".ini") || !strcmp(names[k], "function.ini")) continue;
    char *path = path_join(fdir, names[k]);
    if (!is_impl_ini(names[k], fn->name)) {
      diag_error((SrcLoc){.file = path}, "unexpected INI file (expected function.ini or %s_<i>.ini)",
                 fn->name);
      free(path);
      continue;
    }
    char *text = read_text_file(path, NULL);
    if (text) {
      keep_text(lib, text);
      fn->impls = xrealloc(fn->impls, (size_t)(fn->nimpls + 1) * sizeof *fn->impls);
      Impl *im = &fn->impls[fn->nimpls++];
      if (parse_impl_ini(path, text, fn, im, false)) impl_read_cu(im);
    }
    free(path);
  }
  free_names(names, n);
  if (fn->nimpls > 1) qsort(fn->impls, (size_t)fn->nimpls, sizeof *fn->impls, cmp_impl);
}

static bool is_identifier(const char *s) {
  if (!isalpha((unsigned char)*s) && *s != '_') return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return false;
  return true;
}

/* Whether the folder holds any .ini file (a folder without one is not a function's). */
static bool folder_has_ini(const char *fdir) {
  int n = 0;
  char **names = list_dir(fdir, &n);
  bool any = false;
  for (int k = 0; k < n; k++) any |= ends_with(names[k], ".ini");
  free_names(names, n);
  return any;
}

static void load_functions(Library *lib) {
  int n;
  char **names = list_dir(lib->dir, &n);
  for (int k = 0; k < n; k++) {
    char *fdir = path_join(lib->dir, names[k]);
    if (is_dir(fdir) && folder_has_ini(fdir)) {
      char *fini = path_join(fdir, "function.ini");
      if (!is_identifier(names[k])) { /* the name goes into generated code as is */
        char *shown = terminal_text(names[k]);
        diag_error((SrcLoc){.file = fdir}, "function folder '%s': the name must be an identifier "
                   "([A-Za-z_][A-Za-z0-9_]*)", shown);
        free(shown);
      } else if (!is_file(fini)) {
        diag_error((SrcLoc){.file = fini}, "function folder without function.ini");
      } else {
        lib->funcs = xrealloc(lib->funcs, (size_t)(lib->nfuncs + 1) * sizeof *lib->funcs);
        Function *fn = &lib->funcs[lib->nfuncs++];
        memset(fn, 0, sizeof *fn);
        if (load_function_ini(lib, fn, fdir, names[k])) load_impls(lib, fn, fdir);
      }
      free(fini);
    }
    free(fdir);
  }
  free_names(names, n);
  /* Arrays were reallocated while loading: point every impl at its function now. */
  for (int f = 0; f < lib->nfuncs; f++)
    for (int i = 0; i < lib->funcs[f].nimpls; i++) lib->funcs[f].impls[i].fn = &lib->funcs[f];
}

Library *library_load(const char *dir) {
  Library *lib = library_open(dir);
  if (lib && !library_check(lib, NULL)) {
    library_free(lib);
    return NULL;
  }
  return lib;
}

bool library_check(Library *lib, const bool *used) {
  int errors = diag_error_count();
  for (int f = 0; f < lib->nfuncs; f++) {
    Function *fn = &lib->funcs[f];
    if ((used && !used[f]) || fn->checked) continue;
    for (int i = 0; i < fn->nimpls; i++) {
      impl_check_cu(&fn->impls[i]);
      impl_check_patterns(&fn->impls[i]);
    }
    fn->checked = true;
  }
  return diag_error_count() == errors;
}

Library *library_open(const char *dir) {
  int errors = diag_error_count();
  Library *lib = xcalloc(1, sizeof *lib);
  lib->dir = xstrdup(dir);
  if (!is_dir(dir)) {
    diag_error((SrcLoc){.file = dir}, "library folder not found");
    library_free(lib);
    return NULL;
  }
  load_types(lib);
  if (diag_error_count() == errors) load_functions(lib);
  if (diag_error_count() != errors) {
    library_free(lib);
    return NULL;
  }
  return lib;
}

void library_free(Library *lib) {
  if (!lib) return;
  for (int t = 0; t < lib->ntypes; t++) free(lib->types[t].name);
  free(lib->types);
  for (int f = 0; f < lib->nfuncs; f++) {
    Function *fn = &lib->funcs[f];
    for (int i = 0; i < fn->nimpls; i++) library_impl_free(&fn->impls[i]);
    free(fn->impls);
    free(fn->name);
    free(fn->ref_path);
    free(fn->ref_symbol);
    free(fn->formula);
  }
  free(lib->funcs);
  for (int k = 0; k < lib->ntexts; k++) free(lib->texts[k]);
  free(lib->texts);
  free(lib->dir);
  free(lib);
}

KType *library_find_type(const Library *lib, const char *name) {
  for (int t = 0; t < lib->ntypes; t++)
    if (!strcasecmp(lib->types[t].name, name)) return &lib->types[t];
  return NULL;
}

Function *library_find_function(const Library *lib, const char *name) {
  for (int f = 0; f < lib->nfuncs; f++)
    if (!strcmp(lib->funcs[f].name, name)) return &lib->funcs[f];
  return NULL;
}

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

int impl_threads(const Impl *impl, int e) {
  int t = 1;
  for (int d = 0; d < 3; d++) t *= d == impl->size_dim ? e : impl->dims[d];
  return t;
}

BlockShape impl_shape(const Impl *impl, int e) {
  int d[3];
  for (int k = 0; k < 3; k++) d[k] = k == impl->size_dim ? e : impl->dims[k];
  return (BlockShape){d[0], d[1], d[2], 0};
}

/* ---- locating the library ----------------------------------------------------------------- */

static bool looks_like_library(const char *dir) {
  char *t = path_join(dir, "types.ini");
  bool ok = is_file(t);
  free(t);
  return ok;
}

char *library_locate(const char *cli_dir, const char *argv0) {
  if (cli_dir) {
    if (looks_like_library(cli_dir)) return xstrdup(cli_dir);
    diag_error((SrcLoc){.file = cli_dir}, "--library: not a library folder (no types.ini)");
    return NULL;
  }
  const char *env = getenv("KASGEN_LIBRARY");
  if (env && env[0]) {
    if (looks_like_library(env)) return xstrdup(env);
    diag_error((SrcLoc){.file = env}, "$KASGEN_LIBRARY: not a library folder (no types.ini)");
    return NULL;
  }
  /* Beside the binary, as the timing database is searched: ./kasgen, build/kasgen in the
   * checkout (../library), or an installed bin/kasgen. */
  static const char *const beside[] = {"library", "../library", "../share/kasgen/library"};
  char *found = find_beside_binary(argv0, beside, sizeof beside / sizeof *beside,
                                   looks_like_library);
  if (found) return found;
  if (looks_like_library("library")) return xstrdup("library");
  diag_error((SrcLoc){0}, "cannot find the function library (tried --library, $KASGEN_LIBRARY, "
                          "library/, ../library and ../share/kasgen/library beside the binary, "
                          "./library)");
  return NULL;
}
