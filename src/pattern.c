/*
 * pattern.c — access patterns (docs/design.md §5.3;
 * docs/library-format.md, "Implementation metadata"): a small integer expression language, the
 * pattern syntax of the implementation INI files, the offsets each thread of a block touches,
 * compatibility of two patterns, and register extents.
 *
 * Expressions are parsed once (at library load) into a tree and evaluated many times by the
 * search, so evaluation is a plain tree walk with overflow checks and no allocation.  Nothing is
 * cached globally: access sets are computed per call into scratch arrays.
 */
#include "kasgen.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Guards against hostile input: deep nesting would overflow the C stack, and a pattern with a
 * huge count would exhaust memory long before any real buffer (E * 81 floats) is reached. */
#define MAX_EXPR_DEPTH 200
#define MAX_PATTERN_OFFSETS (1L << 17)

/* ---- expression trees ------------------------------------------------------------------- */

typedef enum {
  EX_NUM, EX_VAR, EX_NEG, EX_ADD, EX_SUB, EX_MUL, EX_DIV, EX_MOD, EX_LT, EX_LE, EX_GT, EX_GE,
  EX_EQ, EX_NE, EX_AND, EX_OR, EX_COND, EX_MIN, EX_MAX
} ExprKind;

/* Variables, in the order of ExprEnv's fields. */
static const char *const var_names[] = {"tx", "ty", "tz", "bx", "by", "bz",
                                        "BX", "BY", "BZ", "i",  "W"};
enum { NVARS = sizeof var_names / sizeof var_names[0] };

struct Expr {
  ExprKind kind;
  long num;          /* EX_NUM */
  int var;           /* EX_VAR: index into var_names */
  int pos;           /* offset of the node's operator or first character in the source */
  Expr *a, *b, *c;   /* operands (c: the else branch of ?:) */
};

static Expr *new_node(ExprKind kind, int pos, Expr *a, Expr *b) {
  Expr *e = xcalloc(1, sizeof *e);
  e->kind = kind;
  e->pos = pos;
  e->a = a;
  e->b = b;
  return e;
}

void expr_free(Expr *e) {
  if (!e) return;
  expr_free(e->a);
  expr_free(e->b);
  expr_free(e->c);
  free(e);
}

/* The first node (in source order of the tree walk) naming variable `name`, or NULL. */
static const Expr *find_var(const Expr *e, const char *name) {
  if (!e) return NULL;
  if (e->kind == EX_VAR && strcmp(var_names[e->var], name) == 0) return e;
  const Expr *hit = find_var(e->a, name);
  if (!hit) hit = find_var(e->b, name);
  return hit ? hit : find_var(e->c, name);
}

bool expr_uses(const Expr *e, const char *name) { return find_var(e, name) != NULL; }

/* ---- parser ------------------------------------------------------------------------------ */

typedef struct {
  const char *src;
  int pos;
  int depth;
  SrcLoc loc; /* col = column of src[0] */
  bool failed;
} Parser;

static void parse_error(Parser *p, int pos, const char *fmt, const char *arg) {
  if (p->failed) return; /* report only the first error of an expression */
  p->failed = true;
  SrcLoc at = p->loc;
  if (at.col > 0) at.col += pos;
  diag_error(at, fmt, arg);
}

static void skip_space(Parser *p) {
  while (p->src[p->pos] == ' ' || p->src[p->pos] == '\t') p->pos++;
}

/* Consumes operator `op` if it comes next (and is not the prefix of a longer operator). */
static bool accept(Parser *p, const char *op) {
  skip_space(p);
  size_t n = strlen(op);
  if (strncmp(p->src + p->pos, op, n) != 0) return false;
  char next = p->src[p->pos + (int)n];
  if (n == 1 && (op[0] == '<' || op[0] == '>') && next == '=') return false;
  p->pos += (int)n;
  return true;
}

static void expect(Parser *p, const char *op) {
  if (!accept(p, op)) parse_error(p, p->pos, "expected '%s' in expression", op);
}

static Expr *parse_expr(Parser *p);

/* primary = number | variable | ("min" | "max") "(" expr "," expr ")" | "(" expr ")" */
static Expr *parse_primary(Parser *p) {
  skip_space(p);
  int pos = p->pos;
  const char *s = p->src + pos;
  if (isdigit((unsigned char)*s)) {
    long v = 0;
    while (isdigit((unsigned char)p->src[p->pos])) {
      int d = p->src[p->pos] - '0';
      if (v > (LONG_MAX - d) / 10) {
        parse_error(p, pos, "integer literal out of range%s", "");
        return NULL;
      }
      v = v * 10 + d;
      p->pos++;
    }
    if (isalpha((unsigned char)p->src[p->pos]) || p->src[p->pos] == '_') {
      parse_error(p, p->pos, "unexpected character after number%s", "");
      return NULL;
    }
    Expr *e = new_node(EX_NUM, pos, NULL, NULL);
    e->num = v;
    return e;
  }
  if (isalpha((unsigned char)*s) || *s == '_') {
    int len = 0;
    while (isalnum((unsigned char)s[len]) || s[len] == '_') len++;
    p->pos += len;
    if ((len == 3 && (!strncmp(s, "min", 3) || !strncmp(s, "max", 3)))) {
      ExprKind kind = s[1] == 'i' ? EX_MIN : EX_MAX;
      expect(p, "(");
      Expr *a = parse_expr(p);
      expect(p, ",");
      Expr *b = parse_expr(p);
      expect(p, ")");
      return new_node(kind, pos, a, b);
    }
    for (int v = 0; v < NVARS; v++)
      if ((int)strlen(var_names[v]) == len && !strncmp(s, var_names[v], (size_t)len)) {
        Expr *e = new_node(EX_VAR, pos, NULL, NULL);
        e->var = v;
        return e;
      }
    char *name = xstrndup(s, (size_t)len);
    parse_error(p, pos,
                "unknown variable '%s' (expected tx ty tz bx by bz BX BY BZ i W, min, max)", name);
    free(name);
    return NULL;
  }
  if (*s == '(') {
    p->pos++;
    Expr *e = parse_expr(p);
    expect(p, ")");
    return e;
  }
  if (*s == '\0')
    parse_error(p, pos, "expression ends where an operand was expected%s", "");
  else
    parse_error(p, pos, "expected a number, a variable or '(' in expression%s", "");
  return NULL;
}

/* unary = "-" unary | primary */
static Expr *parse_unary(Parser *p) {
  skip_space(p);
  int pos = p->pos;
  if (accept(p, "-")) {
    if (++p->depth > MAX_EXPR_DEPTH) {
      parse_error(p, pos, "expression nested too deeply%s", "");
      return NULL;
    }
    Expr *e = new_node(EX_NEG, pos, parse_unary(p), NULL);
    p->depth--;
    return e;
  }
  return parse_primary(p);
}

/* One level of left-associative binary operators: level = next (op next)* */
typedef struct {
  const char *op;
  ExprKind kind;
} BinOp;

static Expr *parse_binary(Parser *p, const BinOp *ops, Expr *(*next)(Parser *)) {
  Expr *e = next(p);
  for (;;) {
    if (p->failed) return e;
    skip_space(p);
    int pos = p->pos;
    const BinOp *found = NULL;
    for (const BinOp *o = ops; o->op; o++)
      if (accept(p, o->op)) {
        found = o;
        break;
      }
    if (!found) return e;
    e = new_node(found->kind, pos, e, next(p));
  }
}

/* mul = unary (("*" | "/" | "%") unary)* */
static Expr *parse_mul(Parser *p) {
  static const BinOp ops[] = {{"*", EX_MUL}, {"/", EX_DIV}, {"%", EX_MOD}, {NULL, 0}};
  return parse_binary(p, ops, parse_unary);
}
/* add = mul (("+" | "-") mul)* */
static Expr *parse_add(Parser *p) {
  static const BinOp ops[] = {{"+", EX_ADD}, {"-", EX_SUB}, {NULL, 0}};
  return parse_binary(p, ops, parse_mul);
}
/* relational = add (("<=" | ">=" | "<" | ">") add)* */
static Expr *parse_rel(Parser *p) {
  static const BinOp ops[] = {{"<=", EX_LE}, {">=", EX_GE}, {"<", EX_LT}, {">", EX_GT}, {NULL, 0}};
  return parse_binary(p, ops, parse_add);
}
/* equality = relational (("==" | "!=") relational)* */
static Expr *parse_eq(Parser *p) {
  static const BinOp ops[] = {{"==", EX_EQ}, {"!=", EX_NE}, {NULL, 0}};
  return parse_binary(p, ops, parse_rel);
}
/* logand = equality ("&&" equality)* */
static Expr *parse_and(Parser *p) {
  static const BinOp ops[] = {{"&&", EX_AND}, {NULL, 0}};
  return parse_binary(p, ops, parse_eq);
}
/* logor = logand ("||" logand)* */
static Expr *parse_or(Parser *p) {
  static const BinOp ops[] = {{"||", EX_OR}, {NULL, 0}};
  return parse_binary(p, ops, parse_and);
}

/* expr = logor ("?" expr ":" expr)? */
static Expr *parse_expr(Parser *p) {
  if (++p->depth > MAX_EXPR_DEPTH) {
    parse_error(p, p->pos, "expression nested too deeply%s", "");
    return NULL;
  }
  Expr *e = parse_or(p);
  skip_space(p);
  int pos = p->pos;
  if (!p->failed && accept(p, "?")) {
    Expr *then = parse_expr(p);
    expect(p, ":");
    Expr *otherwise = parse_expr(p);
    e = new_node(EX_COND, pos, e, then);
    e->c = otherwise;
  }
  p->depth--;
  return e;
}

Expr *expr_parse(const char *src, SrcLoc loc) {
  Parser p = {.src = src, .loc = loc};
  Expr *e = parse_expr(&p);
  skip_space(&p);
  if (!p.failed && p.src[p.pos] != '\0')
    parse_error(&p, p.pos, "unexpected character in expression%s", "");
  if (p.failed) {
    expr_free(e);
    return NULL;
  }
  return e;
}

/* ---- evaluation -------------------------------------------------------------------------- */

static bool eval_error(const Expr *e, SrcLoc loc, const char *msg) {
  if (loc.col > 0) loc.col += e->pos;
  diag_error(loc, "%s", msg);
  return false;
}

static long env_var(const ExprEnv *env, int var) {
  switch (var) {
  case 0: return env->tx;
  case 1: return env->ty;
  case 2: return env->tz;
  case 3: return env->bx;
  case 4: return env->by;
  case 5: return env->bz;
  case 6: return env->BX;
  case 7: return env->BY;
  case 8: return env->BZ;
  case 9: return env->i;
  default: return env->W;
  }
}

/* Arithmetic of two evaluated operands; false on overflow or division by zero. */
static bool eval_arith(const Expr *e, long a, long b, long *out, SrcLoc loc) {
  switch (e->kind) {
  case EX_ADD:
    if (__builtin_add_overflow(a, b, out)) return eval_error(e, loc, "integer overflow in '+'");
    return true;
  case EX_SUB:
    if (__builtin_sub_overflow(a, b, out)) return eval_error(e, loc, "integer overflow in '-'");
    return true;
  case EX_MUL:
    if (__builtin_mul_overflow(a, b, out)) return eval_error(e, loc, "integer overflow in '*'");
    return true;
  case EX_DIV:
  case EX_MOD:
    if (b == 0) return eval_error(e, loc, e->kind == EX_DIV ? "division by zero" : "modulo by zero");
    if (a == LONG_MIN && b == -1) return eval_error(e, loc, "integer overflow in division");
    *out = e->kind == EX_DIV ? a / b : a % b;
    return true;
  case EX_LT: *out = a < b; return true;
  case EX_LE: *out = a <= b; return true;
  case EX_GT: *out = a > b; return true;
  case EX_GE: *out = a >= b; return true;
  case EX_EQ: *out = a == b; return true;
  case EX_NE: *out = a != b; return true;
  case EX_MIN: *out = a < b ? a : b; return true;
  case EX_MAX: *out = a > b ? a : b; return true;
  default: return eval_error(e, loc, "internal error: bad expression node");
  }
}

bool expr_eval(const Expr *e, const ExprEnv *env, long *out, SrcLoc loc) {
  long a, b;
  switch (e->kind) {
  case EX_NUM: *out = e->num; return true;
  case EX_VAR: *out = env_var(env, e->var); return true;
  case EX_NEG:
    if (!expr_eval(e->a, env, &a, loc)) return false;
    if (a == LONG_MIN) return eval_error(e, loc, "integer overflow in unary '-'");
    *out = -a;
    return true;
  case EX_AND: /* short-circuit, as in C: "x != 0 && 8 / x" is safe */
  case EX_OR:
    if (!expr_eval(e->a, env, &a, loc)) return false;
    if ((e->kind == EX_AND) == (a == 0)) {
      *out = e->kind == EX_OR;
      return true;
    }
    if (!expr_eval(e->b, env, &b, loc)) return false;
    *out = b != 0;
    return true;
  case EX_COND:
    if (!expr_eval(e->a, env, &a, loc)) return false;
    return expr_eval(a ? e->b : e->c, env, out, loc);
  default:
    if (!expr_eval(e->a, env, &a, loc) || !expr_eval(e->b, env, &b, loc)) return false;
    return eval_arith(e, a, b, out, loc);
  }
}

/* ---- pattern syntax ---------------------------------------------------------------------- */

void pattern_free(Pattern *p) {
  free(p->start_src);
  free(p->block_src);
  free(p->stride_src);
  free(p->count_src);
  expr_free(p->start);
  expr_free(p->block);
  expr_free(p->stride);
  expr_free(p->count_expr);
  memset(p, 0, sizeof *p);
}

static SrcLoc loc_at(SrcLoc loc, int offset) {
  if (loc.col > 0) loc.col += offset;
  return loc;
}

/* Reads `"expr"` (or, when bare_int, a bare integer) at *pos; returns the text of the
 * expression and its offset in value. */
static char *pattern_operand(const char *value, int *pos, bool bare_int, SrcLoc loc, int *at) {
  int q = *pos;
  if (value[q] == '"') {
    const char *end = strchr(value + q + 1, '"');
    if (!end) {
      diag_error(loc_at(loc, q), "unterminated quoted expression");
      return NULL;
    }
    *at = q + 1;
    *pos = (int)(end - value) + 1;
    return xstrndup(value + q + 1, (size_t)(end - value - q - 1));
  }
  if (bare_int && isdigit((unsigned char)value[q])) {
    int e = q;
    while (isdigit((unsigned char)value[e])) e++;
    *at = q;
    *pos = e;
    return xstrndup(value + q, (size_t)(e - q));
  }
  diag_error(loc_at(loc, q), bare_int ? "expected a quoted expression or an integer (noreg: 0 or 1)"
                                      : "expected a quoted expression");
  return NULL;
}

/* Checks that an expression mentions none of the variables in `banned` (space-separated). */
static bool check_vars(const Expr *e, SrcLoc loc, const char *what, const char *const *banned) {
  for (; *banned; banned++) {
    const Expr *hit = find_var(e, *banned);
    if (hit) {
      diag_error(loc_at(loc, hit->pos), "%s may not use '%s'", what, *banned);
      return false;
    }
  }
  return true;
}

static const Expr *find_min_max(const Expr *e) {
  if (!e) return NULL;
  if (e->kind == EX_MIN || e->kind == EX_MAX) return e;
  const Expr *hit = find_min_max(e->a);
  if (!hit) hit = find_min_max(e->b);
  return hit ? hit : find_min_max(e->c);
}

static const char *const pattern_keys[] = {"start", "block", "stride", "count", "noreg"};

/* Stores one keyword's operand into the pattern; false + diagnostic. */
static bool pattern_set(Pattern *out, int key, char *src, SrcLoc at) {
  if (key == 4) {
    bool ok = !strcmp(src, "0") || !strcmp(src, "1");
    if (!ok) diag_error(at, "noreg must be 0 or 1");
    out->noreg = ok && src[0] == '1';
    free(src);
    return ok;
  }
  Expr *e = expr_parse(src, at);
  if (!e) {
    free(src);
    return false;
  }
  char **srcs[] = {&out->start_src, &out->block_src, &out->stride_src, &out->count_src};
  Expr **exprs[] = {&out->start, &out->block, &out->stride, &out->count_expr};
  SrcLoc *locs[] = {&out->start_loc, &out->block_loc, &out->stride_loc, &out->count_loc};
  *srcs[key] = src;
  *exprs[key] = e;
  *locs[key] = at;
  if (key == 0) { /* start is pasted verbatim into device and host code */
    const Expr *mm = find_min_max(e);
    if (mm) {
      diag_error(loc_at(at, mm->pos), "start may not use min/max (it is pasted into C code)");
      return false;
    }
    static const char *const banned[] = {"i", "bx", "by", "bz", NULL};
    return check_vars(e, at, "start", banned);
  }
  static const char *const count_banned[] = {"tx", "ty", "tz", "bx", "by", "bz", "i", NULL};
  if (key == 3) return check_vars(e, at, "count", count_banned);
  return true;
}

/* Whole-pattern form:
 *   pattern = item ("," item)*            each of the five keywords exactly once, any order
 *   item    = "start" quoted | "block" quoted | "stride" quoted
 *           | "count" (quoted | integer) | "noreg" ("0" | "1")
 *   quoted  = '"' expr '"'                                                                  */
bool pattern_parse(const char *value, SrcLoc loc, Pattern *out) {
  memset(out, 0, sizeof *out);
  out->loc = loc;
  bool seen[5] = {false};
  int pos = 0;
  for (;;) {
    while (value[pos] == ' ' || value[pos] == '\t') pos++;
    int key = -1, klen = 0;
    for (int k = 0; k < 5; k++) {
      int n = (int)strlen(pattern_keys[k]);
      if (!strncmp(value + pos, pattern_keys[k], (size_t)n) &&
          !isalnum((unsigned char)value[pos + n])) {
        key = k;
        klen = n;
      }
    }
    if (key < 0) {
      diag_error(loc_at(loc, pos), "expected start, block, stride, count or noreg in pattern");
      goto fail;
    }
    if (seen[key]) {
      diag_error(loc_at(loc, pos), "'%s' given twice in pattern", pattern_keys[key]);
      goto fail;
    }
    seen[key] = true;
    pos += klen;
    while (value[pos] == ' ' || value[pos] == '\t') pos++;
    int at = 0;
    char *src = pattern_operand(value, &pos, key >= 3, loc, &at);
    if (!src || !pattern_set(out, key, src, loc_at(loc, at))) goto fail;
    while (value[pos] == ' ' || value[pos] == '\t') pos++;
    if (value[pos] == '\0') break;
    if (value[pos] != ',') {
      diag_error(loc_at(loc, pos), "expected ',' between pattern items");
      goto fail;
    }
    pos++;
  }
  for (int k = 0; k < 5; k++)
    if (!seen[k]) {
      diag_error(loc, "pattern lacks '%s'", pattern_keys[k]);
      goto fail;
    }
  out->count = -1;
  const Expr *const exprs[] = {out->start, out->block, out->stride, out->count_expr};
  for (int k = 0; k < 4; k++) out->uses_w |= expr_uses(exprs[k], "W");
  if (!expr_uses(out->count_expr, "BX") && !expr_uses(out->count_expr, "BY") &&
      !expr_uses(out->count_expr, "BZ") && !expr_uses(out->count_expr, "W")) {
    long c;
    ExprEnv env = {0};
    if (!expr_eval(out->count_expr, &env, &c, out->count_loc)) goto fail;
    if (c < 0 || c > MAX_PATTERN_OFFSETS) {
      diag_error(out->count_loc, "count %ld out of range (0..%ld)", c, MAX_PATTERN_OFFSETS);
      goto fail;
    }
    out->count = (int)c;
  }
  return true;
fail:
  pattern_free(out);
  out->loc = loc;
  return false;
}

/* ---- access sets ------------------------------------------------------------------------- */

static ExprEnv thread_env(BlockShape shape, int lin) {
  ExprEnv env = {0};
  env.tx = lin % shape.bx;
  env.ty = (lin / shape.bx) % shape.by;
  env.tz = lin / (shape.bx * shape.by);
  env.BX = shape.bx;
  env.BY = shape.by;
  env.BZ = shape.bz;
  env.W = shape.w;
  return env;
}

/* A pattern that uses W cannot be evaluated at a shape that binds none (a caller's bug, said
 * where the pattern was written). */
static bool width_bound(const Pattern *p, BlockShape shape) {
  if (!p->uses_w || shape.w > 0) return true;
  diag_error(p->loc, "internal error: the pattern uses W, but no vector width was bound");
  return false;
}

long pattern_count(const Pattern *p, BlockShape shape) {
  if (p->count >= 0) return p->count;
  if (!width_bound(p, shape)) return -1;
  ExprEnv env = thread_env(shape, 0);
  long c;
  if (!expr_eval(p->count_expr, &env, &c, p->count_loc)) return -1;
  if (c < 0 || c > MAX_PATTERN_OFFSETS) {
    diag_error(p->count_loc, "count %ld out of range (0..%ld) for block %dx%dx%d", c,
               MAX_PATTERN_OFFSETS, shape.bx, shape.by, shape.bz);
    return -1;
  }
  return c;
}

/* A growable array of offsets reused across threads. */
typedef struct {
  long *v;
  long n, cap;
} Scratch;

static void scratch_push(Scratch *s, long x) {
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 64;
    s->v = xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
  }
  s->v[s->n++] = x;
}

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* Sorts and removes duplicates; patterns usually produce ascending offsets already. */
static void sort_unique(Scratch *s) {
  bool sorted = true;
  for (long k = 1; k < s->n && sorted; k++) sorted = s->v[k - 1] < s->v[k];
  if (sorted) return;
  qsort(s->v, (size_t)s->n, sizeof *s->v, cmp_long);
  long w = 0;
  for (long k = 0; k < s->n; k++)
    if (w == 0 || s->v[w - 1] != s->v[k]) s->v[w++] = s->v[k];
  s->n = w;
}

/* Computes thread lin's offsets into s (sorted, unique) and its start; false + diagnostic. */
static bool access_into(const Pattern *p, BlockShape shape, int lin, Scratch *s, long *start) {
  s->n = 0;
  if (!p->start || !p->block || !p->stride || !p->count_expr) {
    diag_error(p->loc, "access pattern used before it was parsed");
    return false;
  }
  if (!width_bound(p, shape)) return false;
  ExprEnv env = thread_env(shape, lin);
  long count = pattern_count(p, shape);
  if (count < 0 || !expr_eval(p->start, &env, start, p->start_loc)) return false;
  long acc = *start;
  /* Most blocks and strides do not depend on the round i: evaluated once, not per round (this
   * loop dominates the search's time on small specs). */
  bool block_varies = expr_uses(p->block, "i"), stride_varies = expr_uses(p->stride, "i");
  long block = 0, stride = 0;
  if (count > 0 && !block_varies && !expr_eval(p->block, &env, &block, p->block_loc)) return false;
  if (count > 1 && !stride_varies && !expr_eval(p->stride, &env, &stride, p->stride_loc))
    return false;
  for (long k = 0; k < count; k++) {
    env.i = k;
    if (block_varies && !expr_eval(p->block, &env, &block, p->block_loc)) return false;
    if (block < 0) {
      diag_error(p->block_loc, "block %ld is negative at i = %ld (thread %d)", block, k, lin);
      return false;
    }
    if (block > MAX_PATTERN_OFFSETS - s->n) {
      diag_error(p->block_loc, "thread %d touches more than %ld offsets", lin, MAX_PATTERN_OFFSETS);
      return false;
    }
    for (long b = 0; b < block; b++) {
      long off;
      if (__builtin_add_overflow(acc, b, &off)) {
        diag_error(p->block_loc, "offset overflows at i = %ld", k);
        return false;
      }
      scratch_push(s, off);
    }
    if (k + 1 < count) { /* stride(c) only for c < k: the last round's stride is never used */
      if (stride_varies && !expr_eval(p->stride, &env, &stride, p->stride_loc)) return false;
      if (__builtin_add_overflow(acc, stride, &acc)) {
        diag_error(p->stride_loc, "offset overflows at i = %ld", k);
        return false;
      }
    }
  }
  sort_unique(s);
  return true;
}

static int shape_threads(BlockShape s) { return s.bx * s.by * s.bz; }

bool pattern_access_set(const Pattern *p, BlockShape shape, int lin, AccessSet *out) {
  Scratch s = {0};
  *out = (AccessSet){0};
  if (!access_into(p, shape, lin, &s, &out->start)) {
    free(s.v);
    return false;
  }
  out->offsets = s.v;
  out->n = (int)s.n;
  return true;
}

void access_set_free(AccessSet *s) {
  free(s->offsets);
  s->offsets = NULL;
  s->n = 0;
}

static bool same_source(const char *a, const char *b) { return a && b && !strcmp(a, b); }

bool patterns_compatible(const Pattern *a, BlockShape sa, const Pattern *b, BlockShape sb) {
  int threads = shape_threads(sa);
  if (threads != shape_threads(sb) || !a->start || !b->start) return false;
  /* Same text under the same shape touches the same offsets: skip the enumeration. */
  if (sa.bx == sb.bx && sa.by == sb.by && sa.bz == sb.bz && same_source(a->start_src, b->start_src) &&
      same_source(a->block_src, b->block_src) && same_source(a->stride_src, b->stride_src) &&
      same_source(a->count_src, b->count_src))
    return true;
  Scratch x = {0}, y = {0};
  bool same = true;
  for (int t = 0; t < threads && same; t++) {
    long start_a, start_b;
    if (!access_into(a, sa, t, &x, &start_a) || !access_into(b, sb, t, &y, &start_b)) {
      same = false;
      break;
    }
    same = start_a == start_b && x.n == y.n &&
           (x.n == 0 || !memcmp(x.v, y.v, (size_t)x.n * sizeof *x.v));
  }
  free(x.v);
  free(y.v);
  return same;
}

int pattern_register_extent(const Pattern *p, BlockShape shape) {
  Scratch s = {0};
  long extent = 0;
  for (int t = 0; t < shape_threads(shape); t++) {
    long start;
    if (!access_into(p, shape, t, &s, &start)) {
      extent = -1;
      break;
    }
    if (s.n > 0 && s.v[s.n - 1] - start + 1 > extent) extent = s.v[s.n - 1] - start + 1;
  }
  free(s.v);
  return extent > INT_MAX ? INT_MAX : (int)extent;
}
