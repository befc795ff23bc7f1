/*
 * spec.c — the lexer and recursive-descent parser of kasgen's spec language (docs/design.md §3).
 *
 * A spec is declarations, one `input` line, calls `var = f(args);`, and one `return` line:
 *
 *   matrix3x3 A, B, M1;
 *   input A, B;
 *   M1 = mmul33(A, B);
 *   return M1;
 *
 * The parser checks the spec against the library while it reads (types, functions, arity,
 * argument and result types) and turns it into SSA form: every assignment makes a new version
 * of its variable, and an argument names the version current where it is read.  Errors are
 * GCC-style with the source line and a caret; the parser recovers at `;` so that one run reports
 * every independent mistake, and gives up after MAX_ERRORS (a 10 MB line of garbage must not
 * print 10 million errors).  Lookups are hashed so that huge inputs stay linear.
 */
#include "kasgen.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* MAX_VARS: 64 calls read at most 64 * KAS_MAX_ARGS values, so 10000 declared names is far
 * beyond any real spec; the cap bounds time and memory on hostile input. */
enum { MAX_ERRORS = 20, MAX_WARNINGS = 20, MAX_NAME_SHOWN = 64, MAX_VARS = 10000 };

/* ---- lexer -------------------------------------------------------------------------------- */

typedef enum { TK_IDENT, TK_NUM, TK_PUNCT, TK_EOF } TokKind;

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

static bool is_punct(int c) { return c == ',' || c == ';' || c == '(' || c == ')' || c == '='; }

/* token = IDENT | NUM | "," | ";" | "(" | ")" | "=" | EOF
 * IDENT = [A-Za-z_][A-Za-z0-9_]*, NUM = [0-9]+ (reserved for loop bounds).  Any other byte is
 * reported as stray and skipped. */
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
      t.kind = ident ? TK_IDENT : TK_NUM;
      t.len = (int)(lx->p - t.start);
      return t;
    }
    lex_advance(lx);
    if (is_punct(c)) {
      t.kind = TK_PUNCT;
      t.len = 1;
      return t;
    }
    if (isprint(c)) {
      lex_error(ps, t.line, t.col, "stray '%c' in spec", c);
    } else {
      /* One report per run of non-ASCII bytes: a UTF-8 character is one mistake. */
      while (c >= 0x80 && (unsigned char)*lx->p >= 0x80) lex_advance(lx);
      lex_error(ps, t.line, t.col,
                "stray byte 0x%02x in spec (only comments may hold non-ASCII text)", c);
    }
  }
}

/* ---- parser state ------------------------------------------------------------------------- */

typedef struct {
  int nversions;     /* versions defined so far (an input has version 0 from the start) */
  int def_stmt;      /* statement defining the current version, -1 for input / none */
  bool read, returned;
  int input_line, input_col; /* where it was listed as input */
} VarState;

struct Parser {
  Lexer lx;
  Token tok, next; /* current token and one token of lookahead */
  int prev_end_line, prev_end_col; /* just after the previous token (for "expected ';'") */
  const Library *lib;
  Spec *spec;
  VarState *vs;
  int vars_cap;
  int *hash; /* open addressing over var indices, -1 = empty */
  int hash_cap;
  bool *stmt_result_read;
  int outputs_cap, inputs_cap;
  bool seen_input, seen_return, seen_stmt, missing_input_reported, too_many_reported;
  bool too_many_vars_reported;
  int lex_error_line; /* syntax errors on this line follow a stray character: not reported */
  int errors, warnings;
  bool stopped; /* too many errors: the lexer returns EOF from now on */
};

static SrcLoc loc_at(const Parser *ps, int line, int col) {
  return (SrcLoc){.file = ps->spec->path, .text = ps->spec->text, .line = line, .col = col};
}

static SrcLoc tok_loc(const Parser *ps, Token t) { return loc_at(ps, t.line, t.col); }

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
    ps->lx.p = ps->lx.text + strlen(ps->lx.text); /* the lexer sees EOF from now on */
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

/* Reports a syntax error at the current token unless a stray character on the same line
 * already explains it. */
/* Where to report at the current token: at the end of the file, just after the last token
 * (as GCC does), rather than on a line past the text. */
static SrcLoc here(const Parser *ps) {
  if (ps->tok.kind == TK_EOF && ps->prev_end_line)
    return loc_at(ps, ps->prev_end_line, ps->prev_end_col);
  return tok_loc(ps, ps->tok);
}

static void syntax_error(Parser *ps, const char *expected) {
  if (ps->tok.line == ps->lex_error_line) return;
  error_at(ps, here(ps), "expected %s, found %s", expected, show_tok(ps->tok).s);
}

/* Error recovery: skip to just after the next `;`, or to an `input`/`return` keyword (a missing
 * `;` must not swallow the return line). */
static void sync_to_semicolon(Parser *ps) {
  while (ps->tok.kind != TK_EOF) {
    if (tok_is(ps->tok, ";")) {
      advance(ps);
      return;
    }
    if (tok_is(ps->tok, "input") || tok_is(ps->tok, "return")) return;
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

/* ---- variables ---------------------------------------------------------------------------- */

static unsigned long hash_name(const char *p, int len) {
  unsigned long h = 1469598103934665603UL; /* FNV-1a */
  for (int i = 0; i < len; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211UL;
  return h;
}

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
  if (2 * (ps->spec->nvars + 1) <= ps->hash_cap) return;
  free(ps->hash);
  ps->hash_cap = ps->hash_cap ? 2 * ps->hash_cap : 64;
  ps->hash = xmalloc(sizeof(int) * (size_t)ps->hash_cap);
  for (int i = 0; i < ps->hash_cap; i++) ps->hash[i] = -1;
  for (int v = 0; v < ps->spec->nvars; v++) hash_insert(ps, v);
}

static int add_var(Parser *ps, Token name, KType *type) {
  Spec *sp = ps->spec;
  hash_grow(ps);
  if (sp->nvars == ps->vars_cap) {
    ps->vars_cap = ps->vars_cap ? 2 * ps->vars_cap : 16;
    sp->vars = xrealloc(sp->vars, sizeof(SpecVar) * (size_t)ps->vars_cap);
    ps->vs = xrealloc(ps->vs, sizeof(VarState) * (size_t)ps->vars_cap);
  }
  int v = sp->nvars++;
  sp->vars[v] = (SpecVar){.name = xstrndup(name.start, (size_t)name.len), .type = type,
                          .loc = tok_loc(ps, name)};
  ps->vs[v] = (VarState){.def_stmt = -1};
  hash_insert(ps, v);
  return v;
}

/* Looks up a variable named by the current token; reports it if undeclared. */
static int lookup_var(Parser *ps, Token name) {
  int v = find_var(ps, name.start, name.len);
  if (v < 0) error_at(ps, tok_loc(ps, name), "undeclared variable %s", show_tok(name).s);
  return v;
}

/* ---- declarations ------------------------------------------------------------------------- */

/* decl = TYPE IDENT ("," IDENT)* ";"
 * TYPE is a type name of the library, matched case-insensitively. */
static void parse_declaration(Parser *ps) {
  Token type_tok = ps->tok;
  char *type_name = xstrndup(type_tok.start, (size_t)type_tok.len);
  KType *type = library_find_type(ps->lib, type_name);
  free(type_name);
  if (!type) error_at(ps, tok_loc(ps, type_tok), "unknown type %s", show_tok(type_tok).s);
  if (ps->seen_input)
    error_at(ps, tok_loc(ps, type_tok), "declaration after the 'input' line");
  advance(ps);
  for (;;) {
    if (ps->tok.kind != TK_IDENT || tok_is_keyword(ps->tok)) {
      syntax_error(ps, "a variable name");
      sync_to_semicolon(ps);
      return;
    }
    int old = find_var(ps, ps->tok.start, ps->tok.len);
    if (old >= 0) {
      error_at(ps, tok_loc(ps, ps->tok), "duplicate declaration of %s", show_tok(ps->tok).s);
      if (!ps->stopped) diag_note(ps->spec->vars[old].loc, "previous declaration is here");
    } else if (ps->spec->nvars >= MAX_VARS) {
      if (!ps->too_many_vars_reported)
        error_at(ps, tok_loc(ps, ps->tok), "too many variables: a spec declares at most %d",
                 MAX_VARS);
      ps->too_many_vars_reported = true;
    } else {
      add_var(ps, ps->tok, type);
    }
    advance(ps);
    if (!tok_is(ps->tok, ",")) break;
    advance(ps);
  }
  expect_semicolon(ps);
}

/* ---- input and return lines --------------------------------------------------------------- */

/* Parses IDENT ("," IDENT)* ";" calling on_name for each declared name. */
static void parse_name_list(Parser *ps, void (*on_name)(Parser *, int var, Token name)) {
  for (;;) {
    if (ps->tok.kind != TK_IDENT || tok_is_keyword(ps->tok)) {
      syntax_error(ps, "a variable name");
      sync_to_semicolon(ps);
      return;
    }
    int v = lookup_var(ps, ps->tok);
    if (v >= 0) on_name(ps, v, ps->tok);
    advance(ps);
    if (!tok_is(ps->tok, ",")) break;
    advance(ps);
  }
  expect_semicolon(ps);
}

static void add_input(Parser *ps, int v, Token name) {
  Spec *sp = ps->spec;
  VarState *s = &ps->vs[v];
  if (sp->vars[v].is_input) {
    error_at(ps, tok_loc(ps, name), "%s is already an input", show_tok(name).s);
    return;
  }
  if (s->nversions > 0) {
    error_at(ps, tok_loc(ps, name), "%s is assigned before the 'input' line",
             show_tok(name).s);
    return;
  }
  sp->vars[v].is_input = true;
  s->nversions = 1; /* version 0 is the input value */
  s->input_line = name.line;
  s->input_col = name.col;
  if (sp->ninputs == ps->inputs_cap) {
    ps->inputs_cap = ps->inputs_cap ? 2 * ps->inputs_cap : 8;
    sp->inputs = xrealloc(sp->inputs, sizeof(int) * (size_t)ps->inputs_cap);
  }
  sp->inputs[sp->ninputs++] = v;
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

static void add_output(Parser *ps, int v, Token name) {
  Spec *sp = ps->spec;
  VarState *s = &ps->vs[v];
  if (s->returned) {
    error_at(ps, tok_loc(ps, name), "%s is returned twice", show_tok(name).s);
    return;
  }
  s->returned = true;
  if (s->nversions == 0) {
    error_at(ps, tok_loc(ps, name), "output %s is never assigned", show_tok(name).s);
    return;
  }
  /* Inputs cannot be assigned, so a returned input would pass through unchanged: no kernel
   * writes it, and generated APIs would name it twice.  The caller already has it. */
  if (sp->vars[v].is_input) {
    error_at(ps, tok_loc(ps, name), "output %s is an input: no call computes it",
             show_tok(name).s);
    return;
  }
  if (s->def_stmt >= 0) ps->stmt_result_read[s->def_stmt] = true;
  sp->vars[v].is_output = true;
  if (sp->noutputs == ps->outputs_cap) {
    ps->outputs_cap = ps->outputs_cap ? 2 * ps->outputs_cap : 8;
    sp->outputs = xrealloc(sp->outputs, sizeof(VarRef) * (size_t)ps->outputs_cap);
  }
  sp->outputs[sp->noutputs++] =
      (VarRef){.var = v, .version = s->nversions - 1, .loc = tok_loc(ps, name)};
}

/* return = "return" IDENT ("," IDENT)* ";"   (the last line of a spec) */
static void parse_return(Parser *ps) {
  Token kw = ps->tok;
  ps->seen_return = true;
  if (!ps->seen_stmt) /* first: it explains any "never assigned" that follows */
    error_at(ps, tok_loc(ps, kw), "no calls before the 'return' line: nothing to compute");
  advance(ps);
  parse_name_list(ps, add_output);
}

/* ---- statements --------------------------------------------------------------------------- */

/* Resolves one argument to the version current at this read. */
static bool resolve_arg(Parser *ps, Token name, VarRef *out) {
  int v = lookup_var(ps, name);
  if (v < 0) return false;
  VarState *s = &ps->vs[v];
  s->read = true;
  if (s->nversions == 0) {
    error_at(ps, tok_loc(ps, name), "%s is used before it is assigned", show_tok(name).s);
    return false;
  }
  if (s->def_stmt >= 0) ps->stmt_result_read[s->def_stmt] = true;
  *out = (VarRef){.var = v, .version = s->nversions - 1, .loc = tok_loc(ps, name)};
  return true;
}

static const char *type_name_of(const KType *t) { return t ? t->name : "?"; }

static bool same_type(const KType *a, const KType *b) {
  return a == b || (a && b && !strcasecmp(a->name, b->name));
}

/* Checks arity and argument types of a resolved call. */
static bool check_call(Parser *ps, const Function *fn, Token fn_tok, const VarRef *args,
                       const bool *arg_ok, int nargs) {
  if (nargs != fn->nparams) {
    error_at(ps, tok_loc(ps, fn_tok), "'%s' takes %d argument%s, but %d %s given", fn->name,
             fn->nparams, fn->nparams == 1 ? "" : "s", nargs, nargs == 1 ? "was" : "were");
    return false;
  }
  bool ok = true;
  for (int i = 0; i < nargs; i++) {
    if (!arg_ok[i]) continue;
    const SpecVar *var = &ps->spec->vars[args[i].var];
    if (var->type && !same_type(var->type, fn->params[i])) {
      error_at(ps, args[i].loc, "argument %d of '%s' must be %s, but '%s' is %s", i + 1,
               fn->name, type_name_of(fn->params[i]), var->name, var->type->name);
      ok = false;
    }
  }
  return ok;
}

/* Checks the assigned variable: declared, not an input, of the function's result type. */
static int check_result(Parser *ps, Token res_tok, const Function *fn) {
  int v = lookup_var(ps, res_tok);
  if (v < 0) return -1;
  const SpecVar *var = &ps->spec->vars[v];
  if (var->is_input) {
    error_at(ps, tok_loc(ps, res_tok), "cannot assign to input %s", show_tok(res_tok).s);
    if (!ps->stopped)
      diag_note(loc_at(ps, ps->vs[v].input_line, ps->vs[v].input_col), "declared as input here");
    return -1;
  }
  if (fn && var->type && !same_type(var->type, fn->result)) {
    error_at(ps, tok_loc(ps, res_tok), "'%s' returns %s, but %s is %s", fn->name,
             type_name_of(fn->result), show_tok(res_tok).s, var->type->name);
  }
  return v;
}

/* Parses the argument list after "(": (IDENT ("," IDENT)*)? ")".  Stores at most KAS_MAX_ARGS
 * resolved arguments but counts all, so arity errors name the real count. */
static bool parse_args(Parser *ps, VarRef *args, bool *arg_ok, int *nargs) {
  *nargs = 0;
  if (tok_is(ps->tok, ")")) {
    advance(ps);
    return true;
  }
  for (;;) {
    if (ps->tok.kind != TK_IDENT || tok_is_keyword(ps->tok)) {
      syntax_error(ps, "an argument name");
      return false;
    }
    if (*nargs < KAS_MAX_ARGS) {
      arg_ok[*nargs] = resolve_arg(ps, ps->tok, &args[*nargs]);
    } else {
      VarRef ignored;
      resolve_arg(ps, ps->tok, &ignored);
    }
    (*nargs)++;
    advance(ps);
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

/* Makes the assignment's new version current and records the statement. */
static void define_version(Parser *ps, int var, const Function *fn, Token res_tok,
                           Token fn_tok, const VarRef *args, int nargs) {
  Spec *sp = ps->spec;
  VarState *s = &ps->vs[var];
  VarRef result = {.var = var, .version = s->nversions++, .loc = tok_loc(ps, res_tok)};
  if (sp->nstmts >= KAS_MAX_NODES) {
    s->def_stmt = -1;
    if (!ps->too_many_reported)
      error_at(ps, tok_loc(ps, res_tok), "too many calls: a spec holds at most %d",
               KAS_MAX_NODES);
    ps->too_many_reported = true;
    return;
  }
  Statement *st = &sp->stmts[sp->nstmts];
  *st = (Statement){.fn = (Function *)fn, .result = result, .nargs = nargs,
                    .loc = tok_loc(ps, fn_tok)};
  for (int i = 0; i < nargs && i < KAS_MAX_ARGS; i++) st->args[i] = args[i];
  s->def_stmt = sp->nstmts++;
}

/* stmt      = call-stmt
 *           | "for" ...                     (loops: reserved, not supported yet)
 * call-stmt = IDENT "=" IDENT "(" (IDENT ("," IDENT)*)? ")" ";" */
static void parse_statement(Parser *ps) {
  if (tok_is(ps->tok, "for")) {
    error_at(ps, tok_loc(ps, ps->tok), "loops are not supported yet");
    sync_to_semicolon(ps);
    return;
  }
  if (!ps->seen_input && !ps->missing_input_reported) {
    error_at(ps, tok_loc(ps, ps->tok), "missing 'input' line before the first call");
    ps->missing_input_reported = true;
  }
  ps->seen_stmt = true;
  Token res_tok = ps->tok;
  advance(ps); /* the caller saw "=" next */
  advance(ps);
  if (ps->tok.kind != TK_IDENT || tok_is_keyword(ps->tok)) {
    syntax_error(ps, "a function name");
    sync_to_semicolon(ps);
    return;
  }
  Token fn_tok = ps->tok;
  char *fn_name = xstrndup(fn_tok.start, (size_t)fn_tok.len);
  const Function *fn = library_find_function(ps->lib, fn_name);
  free(fn_name);
  if (!fn) error_at(ps, tok_loc(ps, fn_tok), "unknown function %s", show_tok(fn_tok).s);
  advance(ps);
  if (!tok_is(ps->tok, "(")) {
    syntax_error(ps, "'('");
    sync_to_semicolon(ps);
    return;
  }
  advance(ps);
  VarRef args[KAS_MAX_ARGS];
  bool arg_ok[KAS_MAX_ARGS] = {0};
  int nargs;
  if (!parse_args(ps, args, arg_ok, &nargs)) {
    sync_to_semicolon(ps);
    return;
  }
  if (fn) check_call(ps, fn, fn_tok, args, arg_ok, nargs);
  /* The result is checked after the arguments: `x = f(x)` reads the old version of x. */
  int var = check_result(ps, res_tok, fn);
  if (var >= 0) define_version(ps, var, fn, res_tok, fn_tok, args, nargs);
  expect_semicolon(ps);
}

/* ---- the whole spec ----------------------------------------------------------------------- */

/* After the return line only the end of the file may follow. */
static void parse_after_return(Parser *ps) {
  if (ps->tok.kind == TK_EOF) return;
  if (ps->tok.line != ps->lex_error_line)
    error_at(ps, tok_loc(ps, ps->tok), "expected end of file after the 'return' line, found %s",
             show_tok(ps->tok).s);
}

/* spec = decl* input stmt* return EOF
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
    } else if (tok_is(t, "for")) {
      parse_statement(ps);
    } else if (t.kind == TK_IDENT && tok_is(ps->next, "=")) {
      parse_statement(ps);
    } else if (t.kind == TK_IDENT && ps->next.kind == TK_IDENT) {
      if (ps->seen_stmt) {
        error_at(ps, tok_loc(ps, t), "declaration after the calls");
        sync_to_semicolon(ps);
      } else {
        parse_declaration(ps);
      }
    } else {
      syntax_error(ps, "a declaration, 'input', a call or 'return'");
      advance(ps);
      sync_to_semicolon(ps);
    }
  }
  if (!ps->seen_input && !ps->missing_input_reported)
    error_at(ps, here(ps), "missing 'input' line");
  if (!ps->seen_return) error_at(ps, here(ps), "missing 'return' line");
}

/* Warnings about things that are legal but almost certainly mistakes. */
static void warn_unused(Parser *ps) {
  const Spec *sp = ps->spec;
  for (int v = 0; v < sp->nvars; v++) {
    const VarState *s = &ps->vs[v];
    if (sp->vars[v].is_input && !s->read && !s->returned)
      warn_at(ps, sp->vars[v].loc, "input '%s' is never used", sp->vars[v].name);
    else if (!sp->vars[v].is_input && !s->nversions && !s->read && !s->returned)
      warn_at(ps, sp->vars[v].loc, "variable '%s' is declared but never used",
              sp->vars[v].name);
  }
  for (int i = 0; i < sp->nstmts; i++)
    if (!ps->stmt_result_read[i])
      warn_at(ps, sp->stmts[i].result.loc, "the value assigned to '%s' here is never used",
              sp->vars[sp->stmts[i].result.var].name);
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
    char *shown = c_safe_text(path);
    diag_warning((SrcLoc){.file = shown}, "the spec's name is not a plain file name; its output "
                 "and generated code are named '%s'", stem);
    free(shown);
  }
  return stem;
}

Spec *spec_parse(const char *path, const char *text, const Library *lib) {
  Spec *sp = xcalloc(1, sizeof *sp);
  sp->path = xstrdup(path);
  sp->name = file_stem(path);
  sp->text = xstrdup(text);
  sp->stmts = xcalloc(KAS_MAX_NODES, sizeof(Statement));
  Parser ps = {.lib = lib, .spec = sp};
  ps.stmt_result_read = xcalloc(KAS_MAX_NODES, sizeof(bool));
  ps.lx = (Lexer){.text = sp->text, .p = sp->text, .line = 1, .col = 1};
  ps.tok = lex_next(&ps, &ps.lx);
  ps.next = lex_next(&ps, &ps.lx);
  parse_spec(&ps);
  if (!ps.errors) warn_unused(&ps);
  int errors = ps.errors;
  free(ps.vs);
  free(ps.hash);
  free(ps.stmt_result_read);
  if (errors) {
    spec_free(sp);
    return NULL;
  }
  return sp;
}

Spec *spec_load(const char *path, const Library *lib) {
  char *text = read_text_file(path, NULL);
  if (!text) return NULL;
  Spec *sp = spec_parse(path, text, lib);
  free(text);
  return sp;
}

void spec_free(Spec *spec) {
  if (!spec) return;
  for (int v = 0; v < spec->nvars; v++) free(spec->vars[v].name);
  free(spec->vars);
  free(spec->stmts);
  free(spec->outputs);
  free(spec->inputs);
  free(spec->path);
  free(spec->name);
  free(spec->text);
  free(spec);
}
