/*
 * spec.c — the lexer and recursive-descent parser of kasgen's spec language (docs/design.md §3,
 * docs/loops.md).
 *
 * A spec is declarations, one `input` line, calls and loops, and one `return` line:
 *
 *   matrix3x3 A, acc, G[8];
 *   input A, G;
 *   acc = madd33(A, A);
 *   for q in 0..8 {
 *     acc = madd33(acc, G[q]);
 *   }
 *   return acc;
 *
 * The parser checks the spec against the library while it reads (types, functions, arity,
 * argument and result types, array indices against the loop ranges) and records the calls as
 * written (SourceCall) and the loop tree (SpecLoop).  Each top-level call or loop, once read,
 * is unrolled in order into statements in SSA form: every assignment makes a new version of its
 * variable, an argument names the version current where it is read, and each array element is
 * a variable of its own that is assigned once.  Every statement keeps its provenance (source
 * call, loop, iteration values), so later stages can roll the loops back up.
 *
 * Errors are GCC-style with the source line and a caret; the parser recovers at `;` and `}` so
 * that one run reports every independent mistake, and gives up after MAX_ERRORS (a 10 MB line
 * of garbage must not print 10 million errors).  Lookups are hashed and every table is capped,
 * so that huge or hostile inputs stay linear in time and bounded in memory.
 */
#include "kasgen.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* MAX_VARS: a spec reads at most KAS_MAX_SPEC_CALLS * KAS_MAX_ARGS values, and real specs
 * declare dozens of names; the caps bound time and memory on hostile input.  Array elements are
 * variables too, counted apart (MAX_ARRAY_ELEMENTS).  Every non-empty loop holds a call, so
 * MAX_LOOPS never binds a spec that unrolls within KAS_MAX_SPEC_CALLS.  MAX_LITERAL keeps index
 * arithmetic (literal + loop variable) far from int overflow. */
enum {
  MAX_ERRORS = 20,
  MAX_WARNINGS = 20,
  MAX_NAME_SHOWN = 64,
  MAX_VARS = 10000,
  MAX_ARRAY_ELEMENTS = 16384,
  MAX_LOOPS = 4096,
  MAX_LITERAL = 1000000,
};

/* ---- lexer -------------------------------------------------------------------------------- */

/* TK_REAL: a number with a fraction or an exponent, which no place of the grammar takes; lexed
 * whole so that "0.5" is one mistake, explained where it stands (an argument: parse_args). */
typedef enum { TK_IDENT, TK_NUM, TK_REAL, TK_PUNCT, TK_EOF } TokKind;

typedef struct {
  TokKind kind;
  const char *start;
  int len;
  int line, col;
} Token;

typedef struct Parser Parser;

typedef struct {
  const char *text, *p;
  int line, col;
} Lexer;

static void lex_error(Parser *ps, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void lex_advance(Lexer *lx) {
  if (*lx->p == '\n') {
    lx->line++;
    lx->col = 1;
  } else {
    lx->col++;
  }
  lx->p++;
}

static bool is_ident_start(int c) { return isalpha(c) || c == '_'; }
static bool is_ident_char(int c) { return isalnum(c) || c == '_'; }

/* Skips blanks and comments.  An unterminated block comment is reported at its opening and
 * ends the input (everything after it is inside the comment). */
static void skip_space_and_comments(Parser *ps, Lexer *lx) {
  for (;;) {
    unsigned char c = (unsigned char)*lx->p;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      lex_advance(lx);
    } else if (c == '/' && lx->p[1] == '/') {
      while (*lx->p && *lx->p != '\n') lex_advance(lx);
    } else if (c == '/' && lx->p[1] == '*') {
      int line = lx->line, col = lx->col;
      lex_advance(lx);
      lex_advance(lx);
      while (*lx->p && !(lx->p[0] == '*' && lx->p[1] == '/')) lex_advance(lx);
      if (!*lx->p) {
        lex_error(ps, line, col, "unterminated comment");
        return;
      }
      lex_advance(lx);
      lex_advance(lx);
    } else {
      return;
    }
  }
}

static bool is_punct(int c) { return c && strchr(",;()=[]{}+-", c); }

/* The length of a real number's fraction and exponent after its integer digits at p ("0.5",
 * "2e3", "1.5e-3"; not the ".." of a range), 0 when there are none. */
static int real_tail_len(const char *p) {
  const char *q = p;
  if (q[0] == '.' && q[1] != '.')
    for (q++; isdigit((unsigned char)*q);) q++;
  int sign = (q[0] == 'e' || q[0] == 'E') && (q[1] == '+' || q[1] == '-');
  if ((q[0] == 'e' || q[0] == 'E') && isdigit((unsigned char)q[1 + sign]))
    for (q += 1 + sign; isdigit((unsigned char)*q);) q++;
  return (int)(q - p);
}

/* token = IDENT | NUM | REAL | "," | ";" | "(" | ")" | "=" | "[" | "]" | "{" | "}" | "+" | "-"
 *       | ".." | EOF
 * IDENT = [A-Za-z_][A-Za-z0-9_]*, NUM = [0-9]+ (indices, extents, loop bounds), REAL = NUM with
 * a fraction or an exponent (never valid; see TokKind).  Any other byte is reported as stray
 * and skipped. */
static Token lex_next(Parser *ps, Lexer *lx) {
  for (;;) {
    skip_space_and_comments(ps, lx);
    Token t = {.start = lx->p, .line = lx->line, .col = lx->col};
    unsigned char c = (unsigned char)*lx->p;
    if (!c) {
      t.kind = TK_EOF;
      return t;
    }
    if (is_ident_start(c) || isdigit(c)) {
      bool ident = is_ident_start(c);
      while (ident ? is_ident_char((unsigned char)*lx->p) : isdigit((unsigned char)*lx->p))
        lex_advance(lx);
      int tail = ident ? 0 : real_tail_len(lx->p);
      for (int k = 0; k < tail; k++) lex_advance(lx);
      t.kind = ident ? TK_IDENT : tail ? TK_REAL : TK_NUM;
      t.len = (int)(lx->p - t.start);
      return t;
    }
    lex_advance(lx);
    if (is_punct(c) || (c == '.' && *lx->p == '.')) {
      if (c == '.') lex_advance(lx);
      t.kind = TK_PUNCT;
      t.len = c == '.' ? 2 : 1;
      return t;
    }
    if (isprint(c)) {
      lex_error(ps, t.line, t.col, "stray '%c' in spec", c);
    } else {
      /* One report per run of non-ASCII bytes: a UTF-8 character is one mistake. */
      bool bom = utf8_bom_len(t.start) > 0;
      while (c >= 0x80 && (unsigned char)*lx->p >= 0x80) lex_advance(lx);
      if (bom)
        lex_error(ps, t.line, t.col, "stray UTF-8 byte order mark in spec (only the start of the "
                  "file may hold one)");
      else
        lex_error(ps, t.line, t.col,
                  "stray byte 0x%02x in spec (only comments may hold non-ASCII text)", c);
    }
  }
}

/* ---- parser state ------------------------------------------------------------------------- */

/* bad and assign_failed keep one mistake from being reported again as its consequences:
 * a name whose declaration was reported is still declared, so that its uses do not say
 * "undeclared"; a variable that a call with an error (or a call in a loop that never runs)
 * meant to assign is not reported as "never assigned" or "used before it is assigned". */
typedef struct {
  int def_stmt;      /* statement defining the current version, -1 for input / none */
  bool read, returned;
  bool bad;           /* declared with an error (reported): its uses are not checked */
  bool assign_failed; /* a call that assigns it (or an element) had an error (reported) */
  int input_line, input_col; /* where it was listed as input */
} VarState;

/* Per source call, what was already reported about its instances (one report per mistake as
 * written, not one per iteration). */
enum {
  FLAG_ARG_UNASSIGNED = 1, /* << argument index */
  FLAG_ASSIGNED_TWICE = 1 << KAS_MAX_ARGS,
  FLAG_UNUSED_WARNED = 1 << (KAS_MAX_ARGS + 1),
};

struct Parser {
  Lexer lx;
  Token tok, next; /* current token and one token of lookahead */
  int prev_end_line, prev_end_col; /* just after the previous token (for "expected ';'") */
  const Library *lib;
  Spec *spec;
  VarState *vs;
  int vars_cap;
  int ndeclared; /* declared names (plain variables and arrays) */
  int nelements; /* array elements declared */
  int *hash; /* open addressing over the declared names' var indices, -1 = empty */
  int hash_cap;
  bool *stmt_result_read; /* per statement */
  unsigned *source_flags; /* per source call, FLAG_* */
  int open_loops[KAS_MAX_LOOP_DEPTH]; /* the loops being read, outermost first */
  bool open_broken[KAS_MAX_LOOP_DEPTH]; /* its header or range had an error: never runs */
  SrcLoc open_var_locs[KAS_MAX_LOOP_DEPTH]; /* where each one's variable is named */
  int nopen;
  bool seen_input, seen_return, seen_stmt, missing_input_reported;
  bool too_many_vars_reported, too_many_elements_reported;
  bool unterminated; /* an unterminated loop was reported: the bodies around it end too */
  bool capped; /* too many calls or loops: reported, nothing more is read or unrolled */
  int lex_error_line; /* syntax errors on this line follow a stray character: not reported */
  int errors, warnings;
  bool stopped; /* too many errors: the lexer returns EOF from now on */
};

/* Makes room for entry n of an array that grows by doubling (capacity 8, 16, 32, ...). */
static void *grow(void *p, int n, size_t size) {
  if (n && (n < 8 || (n & (n - 1)))) return p;
  return xrealloc(p, size * (n ? 2 * (size_t)n : 8));
}

static SrcLoc loc_at(const Parser *ps, int line, int col) {
  return (SrcLoc){.file = ps->spec->path, .text = ps->spec->text, .line = line, .col = col};
}

static SrcLoc tok_loc(const Parser *ps, Token t) { return loc_at(ps, t.line, t.col); }

/* From now on the lexer sees the end of the file. */
static void stop_reading(Parser *ps) {
  ps->lx.p = ps->lx.text + strlen(ps->lx.text);
  ps->tok.kind = ps->next.kind = TK_EOF;
}

static void vreport(Parser *ps, bool is_error, SrcLoc loc, const char *fmt, va_list ap) {
  if (ps->stopped) return;
  if (!is_error) {
    if (++ps->warnings > MAX_WARNINGS) return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    diag_warning(loc, "%s", msg);
    if (ps->warnings == MAX_WARNINGS)
      diag_note((SrcLoc){.file = ps->spec->path}, "further warnings are not shown");
    return;
  }
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  diag_error(loc, "%s", msg);
  if (++ps->errors >= MAX_ERRORS) {
    diag_note((SrcLoc){.file = ps->spec->path}, "too many errors; stopping");
    ps->stopped = true;
    stop_reading(ps);
  }
}

static void error_at(Parser *ps, SrcLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void error_at(Parser *ps, SrcLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(ps, true, loc, fmt, ap);
  va_end(ap);
}

static void warn_at(Parser *ps, SrcLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void warn_at(Parser *ps, SrcLoc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(ps, false, loc, fmt, ap);
  va_end(ap);
}

static void note_at(Parser *ps, SrcLoc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note_at(Parser *ps, SrcLoc loc, const char *fmt, ...) {
  if (ps->stopped) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_note(loc, "%s", msg);
}

static void lex_error(Parser *ps, int line, int col, const char *fmt, ...) {
  ps->lex_error_line = line;
  va_list ap;
  va_start(ap, fmt);
  vreport(ps, true, loc_at(ps, line, col), fmt, ap);
  va_end(ap);
}

/* A token's text for messages, cut to MAX_NAME_SHOWN characters (names can be megabytes). */
typedef struct {
  char s[MAX_NAME_SHOWN + 16];
} Shown;

static Shown show_tok(Token t) {
  Shown r;
  if (t.kind == TK_EOF)
    snprintf(r.s, sizeof r.s, "end of file");
  else if (t.len > MAX_NAME_SHOWN)
    snprintf(r.s, sizeof r.s, "'%.*s...'", MAX_NAME_SHOWN, t.start);
  else
    snprintf(r.s, sizeof r.s, "'%.*s'", t.len, t.start);
  return r;
}

static void advance(Parser *ps) {
  ps->prev_end_line = ps->tok.line;
  ps->prev_end_col = ps->tok.col + ps->tok.len;
  ps->tok = ps->next;
  ps->next = lex_next(ps, &ps->lx);
}

static bool tok_is(Token t, const char *s) {
  return t.kind != TK_EOF && t.len == (int)strlen(s) && !strncmp(t.start, s, (size_t)t.len);
}

static bool tok_is_keyword(Token t) {
  return t.kind == TK_IDENT && (tok_is(t, "input") || tok_is(t, "return") || tok_is(t, "for"));
}

static bool tok_is_name(Token t) { return t.kind == TK_IDENT && !tok_is_keyword(t); }

/* Where to report at the current token: at the end of the file, just after the last token
 * (as GCC does), rather than on a line past the text. */
static SrcLoc here(const Parser *ps) {
  if (ps->tok.kind == TK_EOF && ps->prev_end_line)
    return loc_at(ps, ps->prev_end_line, ps->prev_end_col);
  return tok_loc(ps, ps->tok);
}

/* Reports a syntax error at the current token unless a stray character on the same line
 * already explains it. */
static void syntax_error(Parser *ps, const char *expected) {
  if (ps->tok.line == ps->lex_error_line) return;
  error_at(ps, here(ps), "expected %s, found %s", expected, show_tok(ps->tok).s);
}

/* Error recovery: skip to just after the next `;`, or to a token that starts or ends something
 * the caller reads (`input`, `return`, `for`, `}`): a missing `;` must not swallow the return
 * line, a loop, or the end of a loop body. */
static void sync_to_semicolon(Parser *ps) {
  while (ps->tok.kind != TK_EOF) {
    if (tok_is(ps->tok, ";")) {
      advance(ps);
      return;
    }
    if (tok_is_keyword(ps->tok) || tok_is(ps->tok, "}")) return;
    advance(ps);
  }
}

/* The `;` ending a line.  When it is missing the line is otherwise complete, so report it just
 * after the previous token (as GCC does) and go on without skipping anything. */
static void expect_semicolon(Parser *ps) {
  if (tok_is(ps->tok, ";")) {
    advance(ps);
    return;
  }
  if (ps->tok.line != ps->lex_error_line)
    error_at(ps, loc_at(ps, ps->prev_end_line, ps->prev_end_col), "expected ';' before %s",
             show_tok(ps->tok).s);
}

/* NUM as an int; a literal above MAX_LITERAL is reported and clamped.  false if reported. */
static bool number_value(Parser *ps, Token t, int *out) {
  long v = 0;
  for (int i = 0; i < t.len && v <= MAX_LITERAL; i++) v = 10 * v + (t.start[i] - '0');
  if (v > MAX_LITERAL) {
    error_at(ps, tok_loc(ps, t), "integer %s is too large: at most %d", show_tok(t).s,
             MAX_LITERAL);
    *out = MAX_LITERAL;
    return false;
  }
  *out = (int)v;
  return true;
}

/* ---- variables ---------------------------------------------------------------------------- */

static unsigned long hash_name(const char *p, int len) {
  unsigned long h = 1469598103934665603UL; /* FNV-1a */
  for (int i = 0; i < len; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211UL;
  return h;
}

/* The declared variable or array of that name (never an element), or -1. */
static int find_var(const Parser *ps, const char *p, int len) {
  if (!ps->hash_cap) return -1;
  unsigned long mask = (unsigned long)ps->hash_cap - 1;
  for (unsigned long h = hash_name(p, len) & mask;; h = (h + 1) & mask) {
    int v = ps->hash[h];
    if (v < 0) return -1;
    const char *name = ps->spec->vars[v].name;
    if ((int)strlen(name) == len && !strncmp(name, p, (size_t)len)) return v;
  }
}

static void hash_insert(Parser *ps, int v) {
  unsigned long mask = (unsigned long)ps->hash_cap - 1;
  const char *name = ps->spec->vars[v].name;
  unsigned long h = hash_name(name, (int)strlen(name)) & mask;
  while (ps->hash[h] >= 0) h = (h + 1) & mask;
  ps->hash[h] = v;
}

/* Keeps the table at most half full, so probes stay short. */
static void hash_grow(Parser *ps) {
  if (2 * (ps->ndeclared + 1) <= ps->hash_cap) return;
  free(ps->hash);
  ps->hash_cap = ps->hash_cap ? 2 * ps->hash_cap : 64;
  ps->hash = xmalloc(sizeof(int) * (size_t)ps->hash_cap);
  for (int i = 0; i < ps->hash_cap; i++) ps->hash[i] = -1;
  for (int v = 0; v < ps->spec->nvars; v++)
    if (ps->spec->vars[v].array < 0) hash_insert(ps, v);
}

/* A new variable (name malloc'ed by the caller); declared names also go into the hash. */
static int new_var(Parser *ps, char *name, KType *type, SrcLoc loc, int array, int elem) {
  Spec *sp = ps->spec;
  if (array < 0) hash_grow(ps); /* first: a rebuild must not insert the new name too */
  if (sp->nvars == ps->vars_cap) {
    ps->vars_cap = ps->vars_cap ? 2 * ps->vars_cap : 16;
    sp->vars = xrealloc(sp->vars, sizeof(SpecVar) * (size_t)ps->vars_cap);
    ps->vs = xrealloc(ps->vs, sizeof(VarState) * (size_t)ps->vars_cap);
  }
  int v = sp->nvars++;
  sp->vars[v] = (SpecVar){.name = name, .type = type, .loc = loc, .nelems = 1,
                          .first_elem = -1, .array = array, .elem = elem};
  ps->vs[v] = (VarState){.def_stmt = -1};
  if (array < 0) {
    ps->ndeclared++;
    hash_insert(ps, v);
  }
  return v;
}

/* "B[1][2]": the name of element `flat` of an array. */
static char *element_name(const SpecVar *arr, int flat) {
  StrBuf sb;
  sb_init(&sb);
  sb_puts(&sb, arr->name);
  int stride = arr->nelems;
  for (int d = 0; d < arr->ndims; d++) {
    stride /= arr->dims[d];
    sb_printf(&sb, "[%d]", flat / stride % arr->dims[d]);
  }
  return sb_take(&sb);
}

/* Declares a plain variable (ndims 0) or an array followed by its elements. */
static void declare(Parser *ps, Token name, KType *type, const int *dims, int ndims) {
  SrcLoc loc = tok_loc(ps, name);
  int v = new_var(ps, xstrndup(name.start, (size_t)name.len), type, loc, -1, 0);
  if (!ndims) return;
  SpecVar *arr = &ps->spec->vars[v];
  arr->ndims = ndims;
  for (int d = 0; d < ndims; d++) {
    arr->dims[d] = dims[d];
    arr->nelems *= dims[d];
  }
  arr->first_elem = v + 1;
  int nelems = arr->nelems;
  ps->nelements += nelems;
  for (int k = 0; k < nelems; k++)
    new_var(ps, element_name(&ps->spec->vars[v], k), type, loc, v, k);
}

/* The open loop whose variable has this name, innermost first; -1 if none. */
static int find_open_loop(const Parser *ps, Token name) {
  for (int i = ps->nopen - 1; i >= 0; i--) {
    const char *var = ps->spec->loops[ps->open_loops[i]].var;
    if (var && (int)strlen(var) == name.len && !strncmp(var, name.start, (size_t)name.len))
      return ps->open_loops[i];
  }
  return -1;
}

/* ---- spelling hints: "note: did you mean 'X'?" at X's declaration, after the error about an
 * unknown name (NameHint in util.c: the closest name, within 2 edits and less than half the
 * name; at most MAX_ERRORS searches per spec, since each follows an error). */

/* Among the declared variables and arrays (not their elements). */
static void hint_variable(Parser *ps, Token name) {
  NameHint h;
  name_hint_start(&h, name.start, (size_t)name.len);
  const Spec *sp = ps->spec;
  for (int v = 0; v < sp->nvars; v++)
    if (sp->vars[v].array < 0) name_hint_offer(&h, sp->vars[v].name, v);
  if (h.best) note_at(ps, sp->vars[h.best_id].loc, "did you mean '%s'?", h.best);
}

/* Among the variables of the loops around the index. */
static void hint_loop_variable(Parser *ps, Token name) {
  NameHint h;
  name_hint_start(&h, name.start, (size_t)name.len);
  for (int i = 0; i < ps->nopen; i++)
    name_hint_offer(&h, ps->spec->loops[ps->open_loops[i]].var, i);
  if (h.best) note_at(ps, ps->open_var_locs[h.best_id], "did you mean '%s'?", h.best);
}

static void hint_function(Parser *ps, Token name) {
  const Function *fn = library_closest_function(ps->lib, name.start, (size_t)name.len);
  if (fn) note_at(ps, fn->loc, "did you mean '%s'?", fn->name);
}

static void hint_type(Parser *ps, Token name) {
  const KType *t = library_closest_type(ps->lib, name.start, (size_t)name.len);
  if (t) note_at(ps, t->loc, "did you mean '%s'?", t->name);
}

/* Looks up a variable named by a token; reports it if undeclared. */
static int lookup_var(Parser *ps, Token name) {
  int v = find_var(ps, name.start, name.len);
  if (v >= 0 && ps->vs[v].bad) return -1; /* its declaration's error explains this use */
  if (v >= 0) return v;
  /* Past the cap on names, any undeclared name may be one that was not declared for it. */
  if (ps->too_many_vars_reported) return -1;
  if (find_open_loop(ps, name) >= 0) {
    error_at(ps, tok_loc(ps, name), "%s is a loop variable: it can only index an array",
             show_tok(name).s);
  } else {
    error_at(ps, tok_loc(ps, name), "undeclared variable %s", show_tok(name).s);
    hint_variable(ps, name);
  }
  return -1;
}

/* ---- declarations ------------------------------------------------------------------------- */

/* extents = ("[" NUM "]")*     at most KAS_MAX_DIMS, each >= 1, MAX_ARRAY_ELEMENTS in all
 * false after a syntax error; a bad extent is reported and read as 1, extra dimensions are
 * reported and dropped. */
static bool parse_extents(Parser *ps, int *dims, int *ndims) {
  *ndims = 0;
  while (tok_is(ps->tok, "[")) {
    advance(ps);
    if (ps->tok.kind != TK_NUM) {
      syntax_error(ps, "an array extent (a number)");
      return false;
    }
    int n;
    number_value(ps, ps->tok, &n);
    if (n < 1) {
      error_at(ps, tok_loc(ps, ps->tok), "an array extent must be at least 1");
      n = 1;
    }
    if (*ndims == KAS_MAX_DIMS)
      error_at(ps, tok_loc(ps, ps->tok), "an array has at most %d dimensions", KAS_MAX_DIMS);
    else
      dims[(*ndims)++] = n;
    advance(ps);
    if (!tok_is(ps->tok, "]")) {
      syntax_error(ps, "']'");
      return false;
    }
    advance(ps);
  }
  return true;
}

/* Whether a declared name fits the caps; reports the first name past each cap. */
static bool within_var_caps(Parser *ps, Token name, const int *dims, int ndims) {
  if (ps->ndeclared >= MAX_VARS) {
    if (!ps->too_many_vars_reported)
      error_at(ps, tok_loc(ps, name), "too many variables: a spec declares at most %d",
               MAX_VARS);
    ps->too_many_vars_reported = true;
    return false;
  }
  long nelems = 1;
  for (int d = 0; d < ndims; d++) nelems *= dims[d]; /* each <= MAX_LITERAL: capped below */
  if (ndims && (nelems > MAX_ARRAY_ELEMENTS || ps->nelements + nelems > MAX_ARRAY_ELEMENTS)) {
    if (!ps->too_many_elements_reported)
      error_at(ps, tok_loc(ps, name),
               "too many array elements: a spec declares at most %d in all", MAX_ARRAY_ELEMENTS);
    ps->too_many_elements_reported = true;
    return false;
  }
  return true;
}

/* Declares a name whose declaration was reported (bad extents, too many elements) as a plain
 * variable marked bad: later lines that use it are not reported as using an undeclared name.
 * Not past the cap on names, nor a second time. */
static void declare_bad(Parser *ps, Token name, KType *type) {
  if (ps->ndeclared >= MAX_VARS || find_var(ps, name.start, name.len) >= 0) return;
  declare(ps, name, type, NULL, 0);
  ps->vs[ps->spec->nvars - 1].bad = true;
}

/* A keyword where a declared name goes ("matrix3x3 A, for, B;"): reported as such, and
 * skipped with its extents so that the rest of the declaration is still read.  Only where the
 * keyword is followed by what follows a name, so that a declaration missing its ';' before the
 * 'input' line is reported as that.  Returns 0 when the token is not such a keyword, 1 when
 * it was skipped, -1 after a syntax error in its extents. */
static int skip_keyword_name(Parser *ps) {
  if (!tok_is_keyword(ps->tok) ||
      !(tok_is(ps->next, ",") || tok_is(ps->next, ";") || tok_is(ps->next, "[")))
    return 0;
  error_at(ps, tok_loc(ps, ps->tok), "%s is a keyword: it cannot name a variable",
           show_tok(ps->tok).s);
  advance(ps);
  int dims[KAS_MAX_DIMS], ndims;
  return parse_extents(ps, dims, &ndims) ? 1 : -1;
}

/* decl       = TYPE declarator ("," declarator)* ";"
 * declarator = IDENT extents
 * TYPE is a type name of the library, matched case-insensitively.  A keyword as a declarator is
 * reported and skipped (skip_keyword_name). */
static void parse_declaration(Parser *ps) {
  Token type_tok = ps->tok;
  char *type_name = xstrndup(type_tok.start, (size_t)type_tok.len);
  KType *type = library_find_type(ps->lib, type_name);
  free(type_name);
  if (!type) {
    error_at(ps, tok_loc(ps, type_tok), "unknown type %s", show_tok(type_tok).s);
    hint_type(ps, type_tok);
  }
  if (ps->seen_input)
    error_at(ps, tok_loc(ps, type_tok), "declaration after the 'input' line");
  advance(ps);
  for (;;) {
    int keyword = skip_keyword_name(ps);
    if (keyword < 0) {
      sync_to_semicolon(ps);
      return;
    }
    if (keyword) {
      if (!tok_is(ps->tok, ",")) break;
      advance(ps);
      continue;
    }
    if (!tok_is_name(ps->tok)) {
      syntax_error(ps, "a variable name");
      sync_to_semicolon(ps);
      return;
    }
    Token name = ps->tok;
    advance(ps);
    int dims[KAS_MAX_DIMS], ndims;
    if (!parse_extents(ps, dims, &ndims)) {
      /* the names after it are still declared: on to the next ',' of this line */
      declare_bad(ps, name, type);
      while (ps->tok.kind != TK_EOF && !tok_is(ps->tok, ",") && !tok_is(ps->tok, ";") &&
             !tok_is_keyword(ps->tok) && !tok_is(ps->tok, "}"))
        advance(ps);
      if (!tok_is(ps->tok, ",")) break;
      advance(ps);
      continue;
    }
    int old = find_var(ps, name.start, name.len);
    if (old >= 0) {
      error_at(ps, tok_loc(ps, name), "duplicate declaration of %s", show_tok(name).s);
      note_at(ps, ps->spec->vars[old].loc, "previous declaration is here");
    } else if (within_var_caps(ps, name, dims, ndims)) {
      declare(ps, name, type, dims, ndims);
    } else {
      declare_bad(ps, name, type);
    }
    if (!tok_is(ps->tok, ",")) break;
    advance(ps);
  }
  expect_semicolon(ps);
}

/* ---- input and return lines --------------------------------------------------------------- */

/* Parses IDENT ("," IDENT)* ";" calling on_name for each declared name.  Arrays are named
 * whole: an index here is reported and skipped. */
static void parse_name_list(Parser *ps, void (*on_name)(Parser *, int var, Token name)) {
  for (;;) {
    if (!tok_is_name(ps->tok)) {
      syntax_error(ps, "a variable name");
      sync_to_semicolon(ps);
      return;
    }
    Token name = ps->tok;
    int v = lookup_var(ps, name);
    advance(ps);
    if (tok_is(ps->tok, "[")) {
      error_at(ps, tok_loc(ps, ps->tok),
               "arrays are named whole in 'input' and 'return' lines: write %s without an index",
               show_tok(name).s);
      while (ps->tok.kind != TK_EOF && !tok_is(ps->tok, ",") && !tok_is(ps->tok, ";"))
        advance(ps);
    } else if (v >= 0) {
      on_name(ps, v, name);
    }
    if (!tok_is(ps->tok, ",")) break;
    advance(ps);
  }
  expect_semicolon(ps);
}

/* The values a declared name stands for: itself, or its elements. */
static int first_value_var(const SpecVar *var, int v) { return var->ndims ? var->first_elem : v; }

static void add_input(Parser *ps, int v, Token name) {
  Spec *sp = ps->spec;
  if (sp->vars[v].is_input) {
    error_at(ps, tok_loc(ps, name), "%s is already an input", show_tok(name).s);
    return;
  }
  int first = first_value_var(&sp->vars[v], v), n = sp->vars[v].nelems;
  for (int k = first; k < first + n; k++) {
    if (sp->vars[k].nversions > 0) {
      error_at(ps, tok_loc(ps, name), "%s is assigned before the 'input' line",
               show_tok(name).s);
      return;
    }
  }
  sp->input_args = grow(sp->input_args, sp->ninput_args, sizeof(int));
  sp->input_args[sp->ninput_args++] = v;
  sp->vars[v].is_input = true;
  ps->vs[v].input_line = name.line;
  ps->vs[v].input_col = name.col;
  for (int k = first; k < first + n; k++) {
    sp->vars[k].is_input = true;
    sp->vars[k].nversions = 1; /* version 0 is the input value */
    sp->inputs = grow(sp->inputs, sp->ninputs, sizeof(int));
    sp->inputs[sp->ninputs++] = k;
  }
}

/* input = "input" IDENT ("," IDENT)* ";" */
static void parse_input(Parser *ps) {
  Token kw = ps->tok;
  if (ps->seen_input && !ps->missing_input_reported)
    error_at(ps, tok_loc(ps, kw), "duplicate 'input' line");
  ps->seen_input = true;
  advance(ps);
  parse_name_list(ps, add_input);
}

/* Reports the first element of an output array that no call assigns, and how many more. */
static bool array_fully_assigned(Parser *ps, int v, Token name) {
  const SpecVar *arr = &ps->spec->vars[v];
  int missing = 0, first_missing = -1;
  for (int k = 0; k < arr->nelems; k++) {
    if (ps->spec->vars[arr->first_elem + k].nversions) continue;
    if (!missing++) first_missing = arr->first_elem + k;
  }
  if (!missing) return true;
  if (ps->vs[v].assign_failed) return false; /* a call's error (reported) explains it */
  if (missing == 1)
    error_at(ps, tok_loc(ps, name), "element '%s' of output array %s is never assigned",
             ps->spec->vars[first_missing].name, show_tok(name).s);
  else
    error_at(ps, tok_loc(ps, name),
             "element '%s' of output array %s is never assigned (nor are %d more)",
             ps->spec->vars[first_missing].name, show_tok(name).s, missing - 1);
  return false;
}

/* The output value(s) of a returned name, in flat order. */
static void record_outputs(Parser *ps, int v, Token name) {
  Spec *sp = ps->spec;
  sp->output_args = grow(sp->output_args, sp->noutput_args, sizeof(int));
  sp->output_args[sp->noutput_args++] = v;
  sp->vars[v].is_output = true;
  int first = first_value_var(&sp->vars[v], v), n = sp->vars[v].nelems;
  for (int k = first; k < first + n; k++) {
    if (ps->vs[k].def_stmt >= 0) ps->stmt_result_read[ps->vs[k].def_stmt] = true;
    sp->vars[k].is_output = true;
    sp->outputs = grow(sp->outputs, sp->noutputs, sizeof(VarRef));
    sp->outputs[sp->noutputs++] =
        (VarRef){.var = k, .version = sp->vars[k].nversions - 1, .loc = tok_loc(ps, name)};
  }
}

static void add_output(Parser *ps, int v, Token name) {
  VarState *s = &ps->vs[v];
  if (s->returned) {
    error_at(ps, tok_loc(ps, name), "%s is returned twice", show_tok(name).s);
    return;
  }
  s->returned = true;
  const SpecVar *var = &ps->spec->vars[v];
  if (!var->ndims && var->nversions == 0) {
    if (!s->assign_failed)
      error_at(ps, tok_loc(ps, name), "output %s is never assigned", show_tok(name).s);
    return;
  }
  /* Inputs cannot be assigned, so a returned input would pass through unchanged: no kernel
   * writes it, and generated APIs would name it twice.  The caller already has it. */
  if (var->is_input) {
    error_at(ps, tok_loc(ps, name), "output %s is an input: no call computes it",
             show_tok(name).s);
    return;
  }
  if (var->ndims && !array_fully_assigned(ps, v, name)) return;
  record_outputs(ps, v, name);
}

/* return = "return" IDENT ("," IDENT)* ";"   (the last line of a spec) */
static void parse_return(Parser *ps) {
  Token kw = ps->tok;
  ps->seen_return = true;
  /* First: it explains any "never assigned" that follows.  A spec whose only loops are empty
   * has calls as written but none after unrolling. */
  if (!ps->seen_stmt || (!ps->errors && ps->spec->nstmts == 0))
    error_at(ps, tok_loc(ps, kw), "no calls before the 'return' line: nothing to compute");
  advance(ps);
  parse_name_list(ps, add_output);
}

/* ---- references: variables and array elements as written ---------------------------------- */

/* "N+1", "N-2", "N", "3" */
static void index_text(StrBuf *sb, const Spec *sp, const SpecIndex *ix) {
  if (ix->loop < 0) {
    sb_printf(sb, "%d", ix->offset);
    return;
  }
  sb_puts(sb, sp->loops[ix->loop].var ? sp->loops[ix->loop].var : "?");
  if (ix->offset) sb_printf(sb, "%+d", ix->offset);
}

/* Whether a loop around is one whose header's error (reported) left its variable unknown: any
 * unknown name in an index may be that variable. */
static bool unnamed_open_loop(const Parser *ps) {
  for (int i = 0; i < ps->nopen; i++)
    if (!ps->spec->loops[ps->open_loops[i]].var) return true;
  return false;
}

/* index = NUM | IDENT (("+" | "-") NUM)?      IDENT: the variable of an enclosing loop
 * Returns -1 after a syntax error, 0 after another error, 1 when the index is good. */
static int parse_index(Parser *ps, SpecIndex *ix) {
  *ix = (SpecIndex){.loop = -1, .loc = tok_loc(ps, ps->tok)};
  if (ps->tok.kind == TK_NUM) {
    bool ok = number_value(ps, ps->tok, &ix->offset);
    advance(ps);
    return ok;
  }
  if (!tok_is_name(ps->tok)) {
    syntax_error(ps, "an index (a number or a loop variable)");
    return -1;
  }
  ix->loop = find_open_loop(ps, ps->tok);
  if (ix->loop < 0 && !unnamed_open_loop(ps)) {
    error_at(ps, tok_loc(ps, ps->tok), "unknown loop variable %s", show_tok(ps->tok).s);
    hint_loop_variable(ps, ps->tok);
  }
  advance(ps);
  if (!tok_is(ps->tok, "+") && !tok_is(ps->tok, "-")) return ix->loop >= 0;
  int sign = tok_is(ps->tok, "-") ? -1 : 1;
  advance(ps);
  if (ps->tok.kind != TK_NUM) {
    syntax_error(ps, "a number");
    return -1;
  }
  int n;
  bool ok = number_value(ps, ps->tok, &n);
  ix->offset = sign * n;
  advance(ps);
  return ok && ix->loop >= 0;
}

/* Whether index ix of dimension d stays inside the array for every value of its loop. */
static bool check_index_range(Parser *ps, const SpecVar *arr, int d, const SpecIndex *ix) {
  const SpecLoop *loop = ix->loop >= 0 ? &ps->spec->loops[ix->loop] : NULL;
  if (loop && loop->lo >= loop->hi) return true; /* the range is reported; never unrolled */
  int low = loop ? loop->lo + ix->offset : ix->offset;
  int high = loop ? loop->hi - 1 + ix->offset : ix->offset;
  int extent = arr->dims[d];
  if (low >= 0 && high < extent) return true;
  StrBuf what;
  sb_init(&what);
  sb_puts(&what, "index ");
  index_text(&what, ps->spec, ix);
  sb_puts(&what, " is out of range for ");
  if (arr->ndims > 1) sb_printf(&what, "dimension %d of ", d + 1);
  sb_printf(&what, "'%s' (indices 0 to %d)", arr->name, extent - 1);
  if (loop)
    sb_printf(&what, ": it reaches %d when %s = %d", low < 0 ? low : high, loop->var,
              low < 0 ? loop->lo : loop->hi - 1);
  error_at(ps, ix->loc, "%s", what.data);
  sb_free(&what);
  return false;
}

/* An array takes exactly one index per dimension, a plain variable none.  ref->idx holds the
 * first KAS_MAX_DIMS indices; `fourth` is where index KAS_MAX_DIMS + 1 is, if written. */
static bool check_indices(Parser *ps, Token name, int v, const SourceRef *ref, int nidx,
                          SrcLoc fourth) {
  const SpecVar *var = &ps->spec->vars[v];
  if (!var->ndims && nidx) {
    error_at(ps, ref->idx[0].loc, "%s is not an array: it takes no index", show_tok(name).s);
    return false;
  }
  if (var->ndims && !nidx) {
    error_at(ps, tok_loc(ps, name), "array %s used without an index", show_tok(name).s);
    return false;
  }
  if (nidx != var->ndims) {
    SrcLoc first_extra = var->ndims < KAS_MAX_DIMS ? ref->idx[var->ndims].loc : fourth;
    error_at(ps, var->ndims < nidx ? first_extra : tok_loc(ps, name),
             "%s has %d dimension%s, but %d ind%s given", show_tok(name).s, var->ndims,
             var->ndims == 1 ? "" : "s", nidx, nidx == 1 ? "ex was" : "ices were");
    return false;
  }
  bool ok = true;
  for (int d = 0; d < nidx; d++) ok &= check_index_range(ps, var, d, &ref->idx[d]);
  return ok;
}

/* ref = IDENT ("[" index "]")*
 * Returns -1 after a syntax error (the caller recovers), 0 after another error (ref->var is
 * -1), 1 when the reference is good. */
static int parse_ref(Parser *ps, SourceRef *ref) {
  Token name = ps->tok;
  *ref = (SourceRef){.var = -1, .loc = tok_loc(ps, name)};
  int v = lookup_var(ps, name);
  advance(ps);
  bool ok = v >= 0;
  int nidx = 0;
  SrcLoc fourth = {0};
  while (tok_is(ps->tok, "[")) {
    advance(ps);
    if (nidx == KAS_MAX_DIMS) fourth = tok_loc(ps, ps->tok);
    SpecIndex ix;
    int r = parse_index(ps, &ix);
    if (r < 0) return -1;
    ok &= r > 0;
    if (!tok_is(ps->tok, "]")) {
      syntax_error(ps, "']'");
      return -1;
    }
    advance(ps);
    if (nidx < KAS_MAX_DIMS) ref->idx[nidx] = ix;
    nidx++;
  }
  if (!ok || !check_indices(ps, name, v, ref, nidx, fourth)) return 0;
  ref->var = v;
  ref->nidx = nidx;
  return 1;
}

/* ---- calls as written --------------------------------------------------------------------- */

static const char *type_name_of(const KType *t) { return t ? t->name : "?"; }

static bool same_type(const KType *a, const KType *b) {
  return a == b || (a && b && !strcasecmp(a->name, b->name));
}

/* Checks arity and argument types of a call. */
static void check_call(Parser *ps, const Function *fn, Token fn_tok, const SourceRef *args,
                       int nargs) {
  if (nargs != fn->nparams) {
    error_at(ps, tok_loc(ps, fn_tok), "'%s' takes %d argument%s, but %d %s given", fn->name,
             fn->nparams, fn->nparams == 1 ? "" : "s", nargs, nargs == 1 ? "was" : "were");
    return;
  }
  for (int i = 0; i < nargs; i++) {
    if (args[i].var < 0) continue;
    const SpecVar *var = &ps->spec->vars[args[i].var];
    if (var->type && !same_type(var->type, fn->params[i]))
      error_at(ps, args[i].loc, "argument %d of '%s' must be %s, but '%s' is %s", i + 1,
               fn->name, type_name_of(fn->params[i]), var->name, var->type->name);
  }
}

/* Checks the assigned variable: not an input, of the function's result type.  false when the
 * call cannot define it. */
static bool check_result(Parser *ps, const SourceRef *res, const Function *fn) {
  const SpecVar *var = &ps->spec->vars[res->var];
  if (var->is_input) {
    error_at(ps, res->loc, "cannot assign to input '%s'", var->name);
    note_at(ps, loc_at(ps, ps->vs[res->var].input_line, ps->vs[res->var].input_col),
            "declared as input here");
    return false;
  }
  if (fn && var->type && !same_type(var->type, fn->result))
    error_at(ps, res->loc, "'%s' returns %s, but '%s' is %s", fn->name, type_name_of(fn->result),
             var->name, var->type->name);
  return true;
}

/* Parses the argument list after "(": (ref ("," ref)*)? ")".  Stores at most KAS_MAX_ARGS
 * arguments but counts all, so arity errors name the real count.  false after a syntax error. */
static bool parse_args(Parser *ps, SourceRef *args, int *nargs) {
  *nargs = 0;
  if (tok_is(ps->tok, ")")) {
    advance(ps);
    return true;
  }
  for (;;) {
    if (!tok_is_name(ps->tok)) {
      bool number = ps->tok.kind == TK_NUM || ps->tok.kind == TK_REAL;
      syntax_error(ps, "an argument name");
      if (number)
        note_at(ps, here(ps), "a spec has no constants: declare one as a variable and list it on "
                              "the input line (read per element: its bytes are memory traffic)");
      return false;
    }
    SourceRef ignored, *arg = *nargs < KAS_MAX_ARGS ? &args[*nargs] : &ignored;
    if (parse_ref(ps, arg) < 0) return false;
    (*nargs)++;
    if (tok_is(ps->tok, ")")) {
      advance(ps);
      return true;
    }
    if (!tok_is(ps->tok, ",")) {
      syntax_error(ps, "',' or ')'");
      return false;
    }
    advance(ps);
  }
}

/* Every statement (a call or a loop) needs the input line before it. */
static void begin_statement(Parser *ps) {
  if (!ps->seen_input && !ps->missing_input_reported) {
    error_at(ps, tok_loc(ps, ps->tok), "missing 'input' line before the first call");
    ps->missing_input_reported = true;
  }
  ps->seen_stmt = true;
}

/* Past KAS_MAX_SPEC_CALLS nothing more is read: the spec is refused anyway, and this bounds
 * the memory that a huge loop body could take before it is unrolled.  loop_calls: what the
 * loop at loc unrolls to (saturated), 0 for a call. */
static void too_many_calls(Parser *ps, SrcLoc loc, long loop_calls) {
  if (loop_calls > KAS_MAX_SPEC_CALLS)
    error_at(ps, loc, "too many calls: this loop unrolls to more than %d, the most a spec holds",
             KAS_MAX_SPEC_CALLS);
  else if (loop_calls)
    error_at(ps, loc,
             "too many calls: this loop unrolls to %ld, which with the %d before it exceeds the "
             "%d a spec holds",
             loop_calls, ps->spec->nstmts, KAS_MAX_SPEC_CALLS);
  else
    error_at(ps, loc, "too many calls: a spec holds at most %d", KAS_MAX_SPEC_CALLS);
  ps->capped = true;
  stop_reading(ps);
}

static int add_source(Parser *ps, const SourceCall *sc) {
  Spec *sp = ps->spec;
  if (sp->nsources >= KAS_MAX_SPEC_CALLS) {
    too_many_calls(ps, sc->result.loc, 0);
    return -1;
  }
  sp->sources = grow(sp->sources, sp->nsources, sizeof(SourceCall));
  ps->source_flags = grow(ps->source_flags, sp->nsources, sizeof(unsigned));
  ps->source_flags[sp->nsources] = 0;
  sp->sources[sp->nsources] = *sc;
  return sp->nsources++;
}

/* call = ref "=" IDENT "(" (ref ("," ref)*)? ")" ";"
 * Returns the source call, or -1 after a syntax error.  A call with other errors is kept, so
 * that its result counts as assigned and one mistake is reported once. */
static int read_call(Parser *ps, int loop) {
  begin_statement(ps);
  SourceCall sc = {.loop = loop};
  bool ref_read = parse_ref(ps, &sc.result) >= 0;
  if (ref_read && !tok_is(ps->tok, "=")) syntax_error(ps, "'='");
  if (!ref_read || !tok_is(ps->tok, "=")) {
    sync_to_semicolon(ps);
    return -1;
  }
  advance(ps);
  if (!tok_is_name(ps->tok)) {
    syntax_error(ps, "a function name");
    sync_to_semicolon(ps);
    return -1;
  }
  Token fn_tok = ps->tok;
  char *fn_name = xstrndup(fn_tok.start, (size_t)fn_tok.len);
  sc.fn = library_find_function(ps->lib, fn_name);
  free(fn_name);
  /* "Y[0] = acc;": not an unknown function and a missing "(", but a copy, which the language
   * does not have (every assignment is a call of the library). */
  if (!sc.fn && !tok_is(ps->next, "(") &&
      (find_var(ps, fn_tok.start, fn_tok.len) >= 0 || find_open_loop(ps, fn_tok) >= 0)) {
    error_at(ps, tok_loc(ps, fn_tok),
             "%s is a variable, not a function: a spec has no plain copies (every assignment "
             "calls a function); assign the call that computes %s here instead",
             show_tok(fn_tok).s, show_tok(fn_tok).s);
    sync_to_semicolon(ps);
    return -1;
  }
  if (!sc.fn) {
    error_at(ps, tok_loc(ps, fn_tok), "unknown function %s", show_tok(fn_tok).s);
    hint_function(ps, fn_tok);
  }
  sc.loc = tok_loc(ps, fn_tok);
  advance(ps);
  if (!tok_is(ps->tok, "(")) {
    syntax_error(ps, "'('");
    sync_to_semicolon(ps);
    return -1;
  }
  advance(ps);
  if (!parse_args(ps, sc.args, &sc.nargs)) {
    sync_to_semicolon(ps);
    return -1;
  }
  if (sc.fn) check_call(ps, sc.fn, fn_tok, sc.args, sc.nargs);
  if (sc.result.var >= 0 && !check_result(ps, &sc.result, sc.fn)) sc.result.var = -1;
  if (sc.nargs > KAS_MAX_ARGS) sc.nargs = KAS_MAX_ARGS; /* reported: no function takes more */
  expect_semicolon(ps);
  return add_source(ps, &sc);
}

/* A call as read_call reads it.  When it will not assign its variable (an error in the call,
 * or a loop around it that never runs because its header was wrong), the variable is marked,
 * so that the error is not followed by "never assigned" or "used before it is assigned". */
static int parse_call(Parser *ps, int loop) {
  Token name = ps->tok;
  int src = read_call(ps, loop);
  bool runs = true;
  for (int i = 0; i < ps->nopen; i++) runs &= !ps->open_broken[i];
  if (src < 0 || ps->spec->sources[src].result.var < 0 || !runs) {
    int v = find_var(ps, name.start, name.len);
    if (v >= 0) ps->vs[v].assign_failed = true;
  }
  return src;
}

/* ---- loops --------------------------------------------------------------------------------- */

static long sat_calls(long n) { return n > KAS_MAX_SPEC_CALLS ? KAS_MAX_SPEC_CALLS + 1 : n; }

/* Statements an item unrolls to, saturated at KAS_MAX_SPEC_CALLS + 1. */
static long item_calls(const Spec *sp, SpecItem it) {
  if (!it.is_loop) return 1;
  const SpecLoop *l = &sp->loops[it.index];
  long trips = l->hi > l->lo ? l->hi - l->lo : 0;
  return sat_calls(trips * l->calls_per_iteration); /* both <= KAS_MAX_SPEC_CALLS + 1 */
}

/* Appends an item to a body (a loop's or the top level), recording its position there. */
static void append_item(Spec *sp, SpecItem **body, int *nbody, SpecItem it) {
  if (it.is_loop)
    sp->loops[it.index].pos = *nbody;
  else
    sp->sources[it.index].pos = *nbody;
  *body = grow(*body, *nbody, sizeof(SpecItem));
  (*body)[(*nbody)++] = it;
}

/* header = IDENT "in" NUM ".." NUM "{"      (after "for"; false after a syntax error) */
static bool parse_loop_header(Parser *ps, Token *var, Token *lo, Token *hi) {
  if (!tok_is_name(ps->tok)) {
    syntax_error(ps, "a loop variable name");
    return false;
  }
  *var = ps->tok;
  advance(ps);
  const char *expected[] = {"in", NULL, "..", NULL, "{"};
  const char *what[] = {"'in'", "the first bound (a number)", "'..'",
                        "the end bound (a number)", "'{'"};
  for (int i = 0; i < 5; i++) {
    bool ok = expected[i] ? tok_is(ps->tok, expected[i]) : ps->tok.kind == TK_NUM;
    if (!ok) {
      syntax_error(ps, what[i]);
      return false;
    }
    if (i == 1) *lo = ps->tok;
    if (i == 3) *hi = ps->tok;
    advance(ps);
  }
  return true;
}

/* After a bad loop header: on to its body's "{" (read then, the loop not run), else past the
 * line.  True when a body follows. */
static bool recover_loop_header(Parser *ps) {
  while (ps->tok.kind != TK_EOF && !tok_is_keyword(ps->tok) && !tok_is(ps->tok, "}")) {
    if (tok_is(ps->tok, "{")) {
      advance(ps);
      return true;
    }
    if (tok_is(ps->tok, ";")) {
      advance(ps);
      return false;
    }
    advance(ps);
  }
  return false;
}

/* The loop variable must not hide a variable or the variable of an enclosing loop, and the
 * range must run at least once. */
static void check_loop(Parser *ps, Token var, Token lo_tok, Token hi_tok, int *lo, int *hi) {
  if (find_var(ps, var.start, var.len) >= 0)
    error_at(ps, tok_loc(ps, var), "loop variable %s has the name of a declared variable",
             show_tok(var).s);
  int outer = find_open_loop(ps, var);
  if (outer >= 0) {
    error_at(ps, tok_loc(ps, var), "loop variable %s is already the variable of an enclosing loop",
             show_tok(var).s);
    note_at(ps, ps->spec->loops[outer].loc, "the enclosing loop is here");
  }
  bool lo_ok = number_value(ps, lo_tok, lo); /* both bounds are checked */
  bool ok = number_value(ps, hi_tok, hi) && lo_ok;
  if (ok && *lo == *hi)
    error_at(ps, tok_loc(ps, lo_tok),
             "empty range %d..%d: the loop would never run (a range lo..hi is half-open)", *lo,
             *hi);
  else if (ok && *lo > *hi)
    error_at(ps, tok_loc(ps, lo_tok), "reversed range %d..%d: a range lo..hi needs lo < hi",
             *lo, *hi);
  if (!ok || *lo >= *hi) *lo = *hi = 0; /* reported: the loop is read but never run */
}

/* A nested loop too deep to read: its tokens are skipped up to its matching "}", or to an
 * `input` or `return` line (which no loop holds). */
static void skip_block(Parser *ps) {
  long depth = 0;
  while (ps->tok.kind != TK_EOF && !tok_is(ps->tok, "input") && !tok_is(ps->tok, "return")) {
    if (tok_is(ps->tok, "{")) depth++;
    if (tok_is(ps->tok, "}") && --depth <= 0) {
      advance(ps);
      return;
    }
    if (depth == 0 && tok_is(ps->tok, ";")) {
      advance(ps);
      return;
    }
    advance(ps);
  }
}

static int new_loop(Parser *ps, int parent, Token for_tok) {
  Spec *sp = ps->spec;
  sp->loops = grow(sp->loops, sp->nloops, sizeof(SpecLoop));
  sp->loops[sp->nloops] = (SpecLoop){.parent = parent, .depth = ps->nopen,
                                     .loc = tok_loc(ps, for_tok)};
  return sp->nloops++;
}

static SpecItem parse_item(Parser *ps, int loop);

static void report_unterminated(Parser *ps, int loop) {
  error_at(ps, ps->spec->loops[loop].loc, "unterminated loop: no '}' closes it before %s",
           show_tok(ps->tok).s);
  ps->unterminated = true;
}

/* body = "{" item* "}"      (the "{" already read)
 * Returns the number of items written, good or not. */
static int parse_body(Parser *ps, int loop) {
  for (int nitems = 0;; nitems++) {
    Token t = ps->tok;
    if (ps->stopped || ps->capped) return nitems;
    if (tok_is(t, "}")) {
      advance(ps);
      return nitems;
    }
    if (t.kind == TK_EOF || tok_is(t, "input") || tok_is(t, "return")) {
      report_unterminated(ps, loop);
      return nitems;
    }
    SpecItem it = parse_item(ps, loop);
    if (it.index >= 0) {
      SpecLoop *l = &ps->spec->loops[loop];
      append_item(ps->spec, &l->body, &l->nbody, it);
    }
    if (ps->unterminated) return nitems + 1;
  }
}

/* loop = "for" IDENT "in" NUM ".." NUM body      (lo..hi is half-open, lo < hi) */
static int parse_loop(Parser *ps, int parent) {
  Token for_tok = ps->tok;
  begin_statement(ps);
  advance(ps);
  if (ps->spec->nloops == MAX_LOOPS) { /* like too many calls: nothing more is read */
    error_at(ps, tok_loc(ps, for_tok), "too many loops: a spec holds at most %d", MAX_LOOPS);
    ps->capped = true;
    stop_reading(ps);
    return -1;
  }
  if (ps->nopen == KAS_MAX_LOOP_DEPTH) {
    error_at(ps, tok_loc(ps, for_tok), "loops nest at most %d deep", KAS_MAX_LOOP_DEPTH);
    skip_block(ps);
    return -1;
  }
  Token var = {0}, lo_tok = {0}, hi_tok = {0};
  bool header_ok = parse_loop_header(ps, &var, &lo_tok, &hi_tok);
  if (!header_ok && !recover_loop_header(ps)) return -1;
  int l = new_loop(ps, parent, for_tok);
  /* A header with an error still names its variable when it got that far, so that the body's
   * indices do not report it unknown; such a loop, like one with a bad range, never runs
   * (lo = hi = 0: its indices are not range-checked). */
  if (var.start) ps->spec->loops[l].var = xstrndup(var.start, (size_t)var.len);
  if (header_ok)
    check_loop(ps, var, lo_tok, hi_tok, &ps->spec->loops[l].lo, &ps->spec->loops[l].hi);
  ps->open_broken[ps->nopen] = ps->spec->loops[l].lo >= ps->spec->loops[l].hi;
  ps->open_var_locs[ps->nopen] = tok_loc(ps, var);
  ps->open_loops[ps->nopen++] = l;
  int written = parse_body(ps, l);
  ps->nopen--;
  SpecLoop *loop = &ps->spec->loops[l];
  long calls = 0;
  for (int i = 0; i < loop->nbody; i++)
    calls = sat_calls(calls + item_calls(ps->spec, loop->body[i]));
  loop->calls_per_iteration = (int)calls;
  if (!written && !ps->unterminated) warn_at(ps, loop->loc, "empty loop body");
  return l;
}

/* item = loop | call      (or a mistake, reported: index -1) */
static SpecItem parse_item(Parser *ps, int loop) {
  Token t = ps->tok;
  if (tok_is(t, "for")) return (SpecItem){.is_loop = true, .index = parse_loop(ps, loop)};
  if (t.kind == TK_IDENT && (tok_is(ps->next, "=") || tok_is(ps->next, "[")))
    return (SpecItem){.index = parse_call(ps, loop)};
  if (t.kind == TK_IDENT && ps->next.kind == TK_IDENT && loop >= 0)
    error_at(ps, tok_loc(ps, t), "declaration inside a loop: declarations go before 'input'");
  else if (t.kind == TK_IDENT && ps->next.kind == TK_IDENT)
    error_at(ps, tok_loc(ps, t), "declaration after the calls");
  else if (loop >= 0)
    syntax_error(ps, "a call, 'for' or '}'");
  else
    syntax_error(ps, "a declaration, 'input', a call or 'return'");
  sync_to_semicolon(ps); /* moves: the token is none of those it stops at */
  return (SpecItem){.index = -1};
}

/* ---- unrolling ----------------------------------------------------------------------------- */

/* The loop around statement provenance `loop` (innermost) at nesting depth d. */
static int loop_at_depth(const Spec *sp, int loop, int d) {
  while (loop >= 0 && sp->loops[loop].depth > d) loop = sp->loops[loop].parent;
  return loop;
}

/* " (when N = 1, M = 2)" for messages about one iteration; "" at top level. */
static void iteration_text(StrBuf *sb, const Spec *sp, int loop, const int *iter, int depth,
                           const char *open, const char *assign, const char *close) {
  if (!depth) return;
  sb_puts(sb, open);
  for (int d = 0; d < depth; d++) {
    const char *var = sp->loops[loop_at_depth(sp, loop, d)].var;
    sb_printf(sb, "%s%s%s%d", d ? ", " : "", var ? var : "?", assign, iter[d]);
  }
  sb_puts(sb, close);
}

static char *when_text(const Spec *sp, const Statement *st) {
  StrBuf sb;
  sb_init(&sb);
  iteration_text(&sb, sp, st->loop, st->iter, st->depth, " (when ", " = ", ")");
  sb_puts(&sb, "");
  return sb_take(&sb);
}

/* The variable a reference names in one iteration: the plain variable, or the element its
 * indices select (ranges were checked as written); -1 if the reference had an error. */
static int instance_var(const Spec *sp, const SourceRef *ref, const int *iter) {
  if (ref->var < 0) return -1;
  const SpecVar *var = &sp->vars[ref->var];
  if (!var->ndims) return ref->var;
  int flat = 0;
  for (int d = 0; d < var->ndims; d++) {
    const SpecIndex *ix = &ref->idx[d];
    int i = ix->offset + (ix->loop >= 0 ? iter[sp->loops[ix->loop].depth] : 0);
    if (i < 0 || i >= var->dims[d]) return -1;
    flat = flat * var->dims[d] + i;
  }
  return var->first_elem + flat;
}

/* Resolves argument a of a statement to the version current at this read. */
static void read_arg(Parser *ps, Statement *st, int a) {
  const SourceCall *sc = &ps->spec->sources[st->source];
  int v = instance_var(ps->spec, &sc->args[a], st->iter);
  st->args[a] = (VarRef){.var = v, .loc = sc->args[a].loc};
  if (v < 0) return;
  ps->vs[v].read = true;
  if (ps->spec->vars[v].nversions == 0) {
    unsigned flag = (unsigned)FLAG_ARG_UNASSIGNED << a;
    int declared = ps->spec->vars[v].array >= 0 ? ps->spec->vars[v].array : v;
    if (!(ps->source_flags[st->source] & flag) && !ps->vs[declared].assign_failed) {
      char *when = when_text(ps->spec, st);
      error_at(ps, sc->args[a].loc, "'%s' is used before it is assigned%s",
               ps->spec->vars[v].name, when);
      free(when);
    }
    ps->source_flags[st->source] |= flag;
    return;
  }
  st->args[a].version = ps->spec->vars[v].nversions - 1;
  if (ps->vs[v].def_stmt >= 0) ps->stmt_result_read[ps->vs[v].def_stmt] = true;
}

/* An array element is assigned once: a second assignment is reported (once per call as
 * written) with the first. */
static bool may_assign(Parser *ps, const Statement *st, int v) {
  const SpecVar *var = &ps->spec->vars[v];
  if (var->array < 0 || var->nversions == 0) return true;
  if (!(ps->source_flags[st->source] & FLAG_ASSIGNED_TWICE)) {
    const Statement *first = &ps->spec->stmts[ps->vs[v].def_stmt];
    char *when = when_text(ps->spec, st), *first_when = when_text(ps->spec, first);
    error_at(ps, ps->spec->sources[st->source].result.loc,
             "array element '%s' is assigned twice%s: an array element is assigned once",
             var->name, when);
    note_at(ps, first->result.loc, "first assigned here%s", first_when);
    free(when);
    free(first_when);
  }
  ps->source_flags[st->source] |= FLAG_ASSIGNED_TWICE;
  return false;
}

/* One statement: source call src at the loop variable values iter[0 .. depth-1]. */
static void instantiate(Parser *ps, int src, const int *iter, int depth) {
  Spec *sp = ps->spec;
  SourceCall *sc = &sp->sources[src];
  Statement st = {.fn = sc->fn, .nargs = sc->nargs, .loc = sc->loc, .source = src,
                  .loop = sc->loop, .depth = depth};
  memcpy(st.iter, iter, sizeof(int) * (size_t)depth);
  for (int a = 0; a < sc->nargs; a++) read_arg(ps, &st, a);
  int v = instance_var(sp, &sc->result, iter);
  if (v < 0 || !may_assign(ps, &st, v)) return;
  st.result = (VarRef){.var = v, .version = sp->vars[v].nversions++, .loc = sc->result.loc};
  ps->vs[v].def_stmt = sp->nstmts;
  sp->stmts = grow(sp->stmts, sp->nstmts, sizeof(Statement));
  ps->stmt_result_read = grow(ps->stmt_result_read, sp->nstmts, sizeof(bool));
  ps->stmt_result_read[sp->nstmts] = false;
  if (!sc->ninstances++) sc->first_stmt = sp->nstmts;
  sp->stmts[sp->nstmts++] = st;
}

/* Unrolls an item in order: a call once, a loop's body once per value of its variable. */
static void unroll_item(Parser *ps, SpecItem it, int *iter, int depth) {
  if (!it.is_loop) {
    instantiate(ps, it.index, iter, depth);
    return;
  }
  const SpecLoop *l = &ps->spec->loops[it.index];
  if (!l->calls_per_iteration) return; /* nothing to run, however many iterations */
  for (int v = l->lo; v < l->hi; v++) {
    iter[depth] = v;
    for (int i = 0; i < l->nbody; i++) unroll_item(ps, l->body[i], iter, depth + 1);
  }
}

static void unroll_top_item(Parser *ps, SpecItem it) {
  if (it.index < 0 || ps->capped) return;
  long calls = item_calls(ps->spec, it);
  if (ps->spec->nstmts + calls > KAS_MAX_SPEC_CALLS) {
    SrcLoc loc = it.is_loop ? ps->spec->loops[it.index].loc
                            : ps->spec->sources[it.index].result.loc;
    too_many_calls(ps, loc, it.is_loop ? calls : 0);
    return;
  }
  int iter[KAS_MAX_LOOP_DEPTH] = {0};
  unroll_item(ps, it, iter, 0);
}

/* ---- the whole spec ----------------------------------------------------------------------- */

/* After the return line only the end of the file may follow. */
static void parse_after_return(Parser *ps) {
  if (ps->tok.kind == TK_EOF) return;
  if (ps->tok.line != ps->lex_error_line)
    error_at(ps, tok_loc(ps, ps->tok), "expected end of file after the 'return' line, found %s",
             show_tok(ps->tok).s);
}

/* A top-level call or loop: recorded, then unrolled at once (later lines read its results). */
static void parse_top_item(Parser *ps) {
  SpecItem it = parse_item(ps, -1);
  ps->unterminated = false;
  if (it.index < 0) return;
  Spec *sp = ps->spec;
  append_item(sp, &sp->body, &sp->nbody, it);
  unroll_top_item(ps, it);
}

/* spec = decl* input (call | loop)* return EOF
 * The order is checked with messages rather than by the grammar, so that a misplaced line is
 * reported as such and parsing goes on. */
static void parse_spec(Parser *ps) {
  if (ps->tok.kind == TK_EOF) {
    if (!ps->errors)
      error_at(ps, loc_at(ps, 1, 1),
               "empty spec: expected declarations, an 'input' line, calls and a 'return' line");
    return;
  }
  while (ps->tok.kind != TK_EOF && !ps->stopped) {
    Token t = ps->tok;
    if (tok_is(t, "input")) {
      parse_input(ps); /* after calls only if "missing 'input' line" was already reported */
    } else if (tok_is(t, "return")) {
      parse_return(ps);
      parse_after_return(ps);
      return;
    } else if (t.kind == TK_IDENT && ps->next.kind == TK_IDENT && !ps->seen_stmt &&
               !tok_is(t, "for")) {
      parse_declaration(ps);
    } else if (tok_is(t, "}")) {
      error_at(ps, tok_loc(ps, t), "'}' without a loop to close");
      advance(ps);
    } else {
      parse_top_item(ps);
    }
  }
  if (ps->capped) return; /* the rest was not read */
  if (!ps->seen_input && !ps->missing_input_reported)
    error_at(ps, here(ps), "missing 'input' line");
  if (!ps->seen_return) error_at(ps, here(ps), "missing 'return' line");
}

/* Whether a declared name (or any element of an array) is read, assigned, returned. */
static void var_usage(const Parser *ps, int v, bool *read, bool *assigned) {
  const SpecVar *var = &ps->spec->vars[v];
  int first = first_value_var(var, v);
  *read = *assigned = false;
  for (int k = first; k < first + var->nelems; k++) {
    *read |= ps->vs[k].read;
    *assigned |= ps->spec->vars[k].nversions > 0;
  }
}

/* Warnings about things that are legal but almost certainly mistakes; a call in a loop is
 * warned about once, for its first iteration whose result nobody reads. */
static void warn_unused(Parser *ps) {
  const Spec *sp = ps->spec;
  for (int v = 0; v < sp->nvars; v++) {
    if (sp->vars[v].array >= 0) continue;
    bool read, assigned;
    var_usage(ps, v, &read, &assigned);
    if (sp->vars[v].is_input && !read && !ps->vs[v].returned)
      warn_at(ps, sp->vars[v].loc, "input '%s' is never used", sp->vars[v].name);
    else if (!sp->vars[v].is_input && !assigned && !read && !ps->vs[v].returned)
      warn_at(ps, sp->vars[v].loc, "variable '%s' is declared but never used",
              sp->vars[v].name);
  }
  for (int i = 0; i < sp->nstmts; i++) {
    const Statement *st = &sp->stmts[i];
    if (ps->stmt_result_read[i] || (ps->source_flags[st->source] & FLAG_UNUSED_WARNED)) continue;
    ps->source_flags[st->source] |= FLAG_UNUSED_WARNED;
    char *when = when_text(sp, st);
    warn_at(ps, st->result.loc, "the value assigned to '%s' here is never used%s",
            sp->vars[st->result.var].name, when);
    free(when);
  }
}

/* "dir/stvenant.spec" -> "stvenant".  The stem names the output folder, generated files, C
 * identifiers and a gnuplot title, so it keeps only [A-Za-z0-9_-] (others become '_', a leading
 * '-' too, an empty stem becomes "spec"): "...spec" would otherwise be "..", a folder outside
 * --out, and a quote or newline would reach the generated scripts. */
static char *file_stem(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strrchr(base, '.');
  size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  if (len == 0) return xstrdup("spec");
  char *stem = xstrndup(base, len);
  bool changed = false;
  for (char *c = stem; *c; c++) {
    bool ok = isalnum((unsigned char)*c) || *c == '_' || (*c == '-' && c != stem);
    if (!ok) *c = '_', changed = true;
  }
  if (changed) {
    char *shown = terminal_text(path);
    diag_warning((SrcLoc){.file = shown}, "the spec's name is not a plain file name; its output "
                 "and generated code are named '%s'", stem);
    free(shown);
  }
  return stem;
}

/* stem: the spec's name (owned by the Spec), from its file name or given. */
static Spec *parse_named(const char *path, char *stem, const char *text, const Library *lib) {
  Spec *sp = xcalloc(1, sizeof *sp);
  sp->path = xstrdup(path);
  sp->name = stem;
  sp->text = xstrdup(text);
  Parser ps = {.lib = lib, .spec = sp};
  /* A leading byte order mark is skipped; columns count from after it (util.c shows the line
   * without it). */
  ps.lx = (Lexer){.text = sp->text, .p = sp->text + utf8_bom_len(sp->text), .line = 1, .col = 1};
  ps.tok = lex_next(&ps, &ps.lx);
  ps.next = lex_next(&ps, &ps.lx);
  parse_spec(&ps);
  if (!ps.errors) warn_unused(&ps);
  int errors = ps.errors;
  free(ps.vs);
  free(ps.hash);
  free(ps.stmt_result_read);
  free(ps.source_flags);
  if (errors) {
    spec_free(sp);
    return NULL;
  }
  return sp;
}

Spec *spec_parse(const char *path, const char *text, const Library *lib) {
  return parse_named(path, file_stem(path), text, lib);
}

/* "-" is the standard input: named STDIN_NAME in messages, SPEC_STDIN_STEM otherwise (the main
 * job asks for --name instead, cli_load_spec). */
Spec *spec_load(const char *path, const Library *lib) {
  char *text = read_text_file(path, NULL);
  if (!text) return NULL;
  Spec *sp = is_stdio_path(path) ? parse_named(STDIN_NAME, xstrdup(SPEC_STDIN_STEM), text, lib)
                                 : spec_parse(path, text, lib);
  free(text);
  return sp;
}

void spec_free(Spec *spec) {
  if (!spec) return;
  for (int v = 0; v < spec->nvars; v++) free(spec->vars[v].name);
  for (int l = 0; l < spec->nloops; l++) {
    free(spec->loops[l].var);
    free(spec->loops[l].body);
  }
  free(spec->vars);
  free(spec->stmts);
  free(spec->outputs);
  free(spec->inputs);
  free(spec->input_args);
  free(spec->output_args);
  free(spec->sources);
  free(spec->loops);
  free(spec->body);
  free(spec->path);
  free(spec->read_from);
  free(spec->name);
  free(spec->text);
  free(spec);
}

/* ---- showing the structure (kasgen check) ---------------------------------------------------- */

char *spec_value_label(const Spec *spec, VarRef r) {
  const SpecVar *var = &spec->vars[r.var];
  if (var->nversions == 1) return xstrdup(var->name);
  return xasprintf("%s.%d", var->name, r.version);
}

char *spec_statement_text(const Spec *spec, int stmt) {
  const Statement *st = &spec->stmts[stmt];
  StrBuf sb;
  sb_init(&sb);
  iteration_text(&sb, spec, st->loop, st->iter, st->depth, "[", "=", "] ");
  char *label = spec_value_label(spec, st->result);
  sb_printf(&sb, "%s = %s(", label, st->fn ? st->fn->name : "?");
  free(label);
  for (int a = 0; a < st->nargs; a++) {
    label = spec_value_label(spec, st->args[a]);
    sb_printf(&sb, "%s%s", a ? ", " : "", label);
    free(label);
  }
  sb_puts(&sb, ")");
  return sb_take(&sb);
}

bool spec_statement_in_loop(const Spec *spec, int stmt, int loop) {
  for (int l = spec->stmts[stmt].loop; l >= 0; l = spec->loops[l].parent)
    if (l == loop) return true;
  return false;
}

/* "dphi[N+1]" */
/* r as written ("dphi[N+1]"); with a statement st, the indices of loops other than `loop` take
 * their values in st's iteration. */
static void ref_text(StrBuf *sb, const Spec *sp, const SourceRef *r, const Statement *st,
                     int loop) {
  sb_puts(sb, r->var >= 0 ? sp->vars[r->var].name : "?");
  for (int d = 0; d < r->nidx; d++) {
    const SpecIndex *ix = &r->idx[d];
    sb_putc(sb, '[');
    if (st && ix->loop >= 0 && ix->loop != loop)
      sb_printf(sb, "%d", st->iter[sp->loops[ix->loop].depth] + ix->offset);
    else
      index_text(sb, sp, ix);
    sb_putc(sb, ']');
  }
}

/* "ns = mvmul33(inv1, dphi[N])": source call sc, its references as ref_text writes them. */
static void source_text(StrBuf *sb, const Spec *sp, const SourceCall *sc, const Statement *st,
                        int loop) {
  ref_text(sb, sp, &sc->result, st, loop);
  sb_printf(sb, " = %s(", sc->fn ? sc->fn->name : "?");
  for (int a = 0; a < sc->nargs; a++) {
    if (a) sb_puts(sb, ", ");
    ref_text(sb, sp, &sc->args[a], st, loop);
  }
  sb_putc(sb, ')');
}

char *spec_ref_text(const Spec *spec, const SourceRef *r, int stmt, int loop) {
  StrBuf sb;
  sb_init(&sb);
  ref_text(&sb, spec, r, &spec->stmts[stmt], loop);
  return sb_take(&sb);
}

char *spec_source_text(const Spec *spec, int stmt, int loop) {
  const Statement *st = &spec->stmts[stmt];
  StrBuf sb;
  sb_init(&sb);
  source_text(&sb, spec, &spec->sources[st->source], st, loop);
  return sb_take(&sb);
}

static void print_arrays(const Spec *sp, FILE *out) {
  bool any = false;
  for (int v = 0; v < sp->nvars; v++) {
    const SpecVar *var = &sp->vars[v];
    if (!var->ndims) continue;
    if (!any) fputs("arrays:\n", out);
    any = true;
    StrBuf sb;
    sb_init(&sb);
    sb_puts(&sb, var->name);
    for (int d = 0; d < var->ndims; d++) sb_printf(&sb, "[%d]", var->dims[d]);
    fprintf(out, "  %-20s %-14s %-12s %d floats per element\n", sb.data, var->type->name,
            var->is_input ? "input" : var->is_output ? "output" : "intermediate",
            var->nelems * var->type->size);
    sb_free(&sb);
  }
}

/* "#0 #32 #64 #96", the first few and the last of a source call's statements. */
static void print_instances(const Spec *sp, int src, FILE *out) {
  const SourceCall *sc = &sp->sources[src];
  int shown = 0;
  fprintf(out, "%d call%s:", sc->ninstances, sc->ninstances == 1 ? "" : "s");
  for (int i = sc->first_stmt; i < sp->nstmts && shown < sc->ninstances; i++) {
    if (sp->stmts[i].source != src) continue;
    shown++;
    if (shown <= 6 || shown == sc->ninstances) fprintf(out, " #%d", i);
    else if (shown == 7) fputs(" ...", out);
  }
}

static void print_item(const Spec *sp, SpecItem it, int indent, FILE *out);

static void print_loop(const Spec *sp, int l, int indent, FILE *out) {
  const SpecLoop *loop = &sp->loops[l];
  char *head = xasprintf("for %s in %d..%d {", loop->var, loop->lo, loop->hi);
  fprintf(out, "%*s%-*s // line %d: %d iterations of %d call%s\n", indent, "", 56 - indent, head,
          loop->loc.line, loop->hi - loop->lo, loop->calls_per_iteration,
          loop->calls_per_iteration == 1 ? "" : "s");
  free(head);
  for (int i = 0; i < loop->nbody; i++) print_item(sp, loop->body[i], indent + 2, out);
  fprintf(out, "%*s}\n", indent, "");
}

static void print_item(const Spec *sp, SpecItem it, int indent, FILE *out) {
  if (it.is_loop) {
    print_loop(sp, it.index, indent, out);
    return;
  }
  const SourceCall *sc = &sp->sources[it.index];
  StrBuf sb;
  sb_init(&sb);
  source_text(&sb, sp, sc, NULL, -1);
  sb_putc(&sb, ';');
  fprintf(out, "%*s%-*s // line %d: ", indent, "", 56 - indent, sb.data, sc->loc.line);
  print_instances(sp, it.index, out);
  fputc('\n', out);
  sb_free(&sb);
}

void spec_print_structure(const Spec *spec, FILE *out) {
  print_arrays(spec, out);
  if (!spec->nloops) return;
  fputs("loops:\n", out);
  for (int i = 0; i < spec->nbody; i++)
    if (spec->body[i].is_loop) print_item(spec, spec->body[i], 2, out);
}
