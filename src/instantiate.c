/*
 * instantiate.c — turns an elementary function's device routine into the variant a fused kernel
 * calls (seed 004, §4.4 and Kód 4.5): the definition is cut out of the implementation's .cu text,
 * renamed <symbol>_e<E>_<suffix> (one 's'/'r' per pattern argument), its block-size constants
 * <UPPER>_BX/BY/BZ become numbers, and each access-pattern placeholder (APLS, APINn, APOUT)
 * becomes the pattern's start expression when the buffer is in shared memory or 0 when it is in
 * registers.  The target's placeholders go too (docs/library-format.md): `real` becomes float or
 * double, `W` the vector width, and GIDX(e, c), the index of component c of element e in the
 * routine's array, the binding's formula ("e * 9 + c", or "e + c * ld" for a component-major
 * array, whose routine then takes the leading dimension as a last parameter, size_t ld).
 *
 * Substitution works on identifiers, never on substrings (APIN1 must not touch APIN10, and
 * MMUL33_2_BY must not touch MMUL33_2_BYTES); comments, string and character literals are copied
 * untouched, so a placeholder mentioned in a comment stays as written.
 */
#include "kasgen.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static bool ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Length of the comment, string or character literal starting at s, or 0 if none starts there.
 * Unterminated ones run to the end of the text. */
static size_t skip_length(const char *s) {
  if (s[0] == '/' && s[1] == '/') {
    const char *e = strchr(s, '\n');
    return e ? (size_t)(e - s) : strlen(s);
  }
  if (s[0] == '/' && s[1] == '*') {
    const char *e = strstr(s + 2, "*/");
    return e ? (size_t)(e - s) + 2 : strlen(s);
  }
  if (s[0] == '"' || s[0] == '\'') {
    size_t k = 1;
    while (s[k] && s[k] != s[0] && s[k] != '\n') k += s[k] == '\\' && s[k + 1] ? 2 : 1;
    return s[k] == s[0] ? k + 1 : k;
  }
  return 0;
}

/* Length of a preprocessor line (with backslash continuations) starting at s, or 0. */
static size_t directive_length(const char *text, const char *s) {
  const char *b = s;
  while (b > text && (b[-1] == ' ' || b[-1] == '\t')) b--;
  if (*s != '#' || !(b == text || b[-1] == '\n')) return 0;
  size_t k = 0;
  while (s[k] && !(s[k] == '\n' && (k == 0 || s[k - 1] != '\\'))) k++;
  return k;
}

/* Skips whitespace and comments. */
static const char *skip_blank(const char *s) {
  for (;;) {
    while (isspace((unsigned char)*s)) s++;
    if ((s[0] == '/' && (s[1] == '/' || s[1] == '*'))) s += skip_length(s);
    else return s;
  }
}

static const char *line_start(const char *text, const char *p) {
  while (p > text && p[-1] != '\n') p--;
  return p;
}

/* Length of what the scan of a definition steps over at s: a comment, a string or character
 * literal, or a preprocessor line; 0 for anything else. */
static size_t skipped_length(const char *text, const char *s) {
  size_t skip = skip_length(s);
  return skip ? skip : directive_length(text, s);
}

/* Every bracket pair of one kind in a text, found in one pass with a stack (so that a text of
 * thousands of unclosed "KAS_DEV void f(" lines costs one pass, not one pass per line).  open[k]
 * and close[k] are offsets; close[k] is SIZE_MAX for a bracket never closed.  open[] ascends. */
typedef struct {
  size_t *open, *close;
  size_t n;
} BracketPairs;

static BracketPairs bracket_pairs(const char *text, char open, char close) {
  BracketPairs bp = {0};
  size_t cap = 0, depth = 0, *stack = NULL;
  for (const char *s = text; *s;) {
    size_t skip = skipped_length(text, s);
    if (skip) {
      s += skip;
      continue;
    }
    if (*s == open) {
      if (bp.n == cap) {
        cap = cap ? 2 * cap : 64;
        bp.open = xrealloc(bp.open, cap * sizeof *bp.open);
        bp.close = xrealloc(bp.close, cap * sizeof *bp.close);
        stack = xrealloc(stack, cap * sizeof *stack);
      }
      bp.open[bp.n] = (size_t)(s - text);
      bp.close[bp.n] = SIZE_MAX;
      stack[depth++] = bp.n++;
    } else if (*s == close && depth > 0) {
      bp.close[stack[--depth]] = (size_t)(s - text);
    }
    s++;
  }
  free(stack);
  return bp;
}

/* Given s at an opening bracket of bp's kind, the position after its match, or NULL. */
static const char *matching(const BracketPairs *bp, const char *text, const char *s) {
  size_t at = (size_t)(s - text), lo = 0, hi = bp->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (bp->open[mid] < at) lo = mid + 1;
    else hi = mid;
  }
  if (lo == bp->n || bp->open[lo] != at || bp->close[lo] == SIZE_MAX) return NULL;
  return text + bp->close[lo] + 1;
}

/* Given s at an opening bracket, the position after its match (comments, literals and
 * directives skipped), or NULL.  For one routine's text, scanned once: a library file's many
 * definitions go through bracket_pairs instead. */
static const char *match_bracket(const char *s, char open, char close) {
  const char *text = s;
  int depth = 0;
  while (*s) {
    size_t skip = skipped_length(text, s);
    if (skip) {
      s += skip;
      continue;
    }
    if (*s == open) depth++;
    if (*s == close && --depth == 0) return s + 1;
    s++;
  }
  return NULL;
}

static void bracket_pairs_free(BracketPairs *bp) {
  free(bp->open);
  free(bp->close);
}

/* Whether the identifier at s..e (the symbol, at top level after KAS_DEV) begins a definition:
 * a parameter list, then a body.  Sets *close to the end of the body. */
static bool definition_at(const char *text, const char *e, BracketPairs pairs[2],
                          const char **close) {
  if (!pairs[0].open && !pairs[1].open) { /* first candidate: index the text once */
    pairs[0] = bracket_pairs(text, '(', ')');
    pairs[1] = bracket_pairs(text, '{', '}');
  }
  const char *paren = skip_blank(e);
  const char *after = *paren == '(' ? matching(&pairs[0], text, paren) : NULL;
  const char *brace = after ? skip_blank(after) : NULL;
  if (!brace || *brace != '{') return false;
  *close = matching(&pairs[1], text, brace);
  return *close != NULL;
}

bool instantiate_find(const char *text, const char *symbol, size_t *begin, size_t *end) {
  size_t symlen = strlen(symbol);
  const char *kas_dev = NULL; /* the KAS_DEV of the declaration being read at top level */
  BracketPairs pairs[2] = {{0}, {0}};
  bool found = false;
  int depth = 0;
  for (const char *s = text; *s && !found;) {
    size_t skip = skipped_length(text, s);
    if (skip) {
      s += skip;
      continue;
    }
    if (ident_start(*s) && (s == text || !ident_char(s[-1]))) {
      const char *e = s;
      while (ident_char(*e)) e++;
      size_t len = (size_t)(e - s);
      if (depth == 0 && len == 7 && !strncmp(s, "KAS_DEV", 7)) kas_dev = s;
      const char *close;
      if (depth == 0 && kas_dev && len == symlen && !strncmp(s, symbol, len) &&
          definition_at(text, e, pairs, &close)) {
        *begin = (size_t)(line_start(text, kas_dev) - text);
        *end = (size_t)(close - text);
        found = true;
      }
      s = e;
      continue;
    }
    if (*s == '{') depth++;
    if (*s == '}' && depth > 0 && --depth == 0) kas_dev = NULL;
    if (*s == ';' && depth == 0) kas_dev = NULL;
    s++;
  }
  bracket_pairs_free(&pairs[0]);
  bracket_pairs_free(&pairs[1]);
  return found;
}

/* Identifiers a routine may not use (docs/library-format.md "Device code"): barriers and shared
 * declarations are kasgen's, and the thread's position comes only from its tx/ty/tz parameters
 * (a fused kernel may run it with recomputed coordinates). */
static const char *forbidden_identifier(const char *s, size_t len) {
  static const char *const exact[] = {"__shared__", "threadIdx", "blockIdx", "blockDim",
                                      "gridDim", NULL};
  for (int k = 0; exact[k]; k++)
    if (strlen(exact[k]) == len && !strncmp(s, exact[k], len)) return exact[k];
  if (len >= 6 && !strncmp(s, "__sync", 6)) return "a barrier (__sync...)";
  if (len >= 6 && !strncmp(s, "atomic", 6)) return "an atomic";
  return NULL;
}

/* Line numbers of ascending positions in one text, counted as the positions advance: a routine
 * with thousands of forbidden identifiers costs one pass, not one per message. */
typedef struct {
  const char *at;
  int line;
} LineCounter;

static int line_at(LineCounter *lc, const char *p) {
  for (; lc->at < p; lc->at++) lc->line += *lc->at == '\n';
  return lc->line;
}

bool instantiate_check_rules(const char *path, const char *text, const char *symbol) {
  size_t b, e;
  if (!instantiate_find(text, symbol, &b, &e)) return true; /* absence is reported elsewhere */
  bool ok = true;
  LineCounter lines = {text, 1};
  for (const char *s = text + b; s < text + e;) {
    size_t skip = skip_length(s);
    if (skip) {
      s += skip;
      continue;
    }
    if (ident_start(*s) && (s == text || !ident_char(s[-1]))) {
      const char *end = s;
      while (ident_char(*end)) end++;
      const char *what = forbidden_identifier(s, (size_t)(end - s));
      if (what) {
        diag_error((SrcLoc){.file = path, .text = text, .line = line_at(&lines, s),
                            .col = (int)(s - line_start(text, s)) + 1},
                   "%s uses %s; routines may not (docs/library-format.md, \"Device code\")", symbol,
                   what);
        ok = false;
      }
      s = end;
      continue;
    }
    s++;
  }
  size_t b2, e2;
  if (instantiate_find(text + e, symbol, &b2, &e2)) {
    diag_error((SrcLoc){.file = path, .text = text, .line = line_at(&lines, text + e + b2),
                        .col = 1},
               "%s defined twice", symbol);
    ok = false;
  }
  return ok;
}

/* Where library_check found symbol's definition; NULL when it did not look. */
static const TextSpan *recorded_definition(const Impl *impl, const char *symbol) {
  if (impl->compute_symbol && !strcmp(symbol, impl->compute_symbol))
    return impl->compute_def.found ? &impl->compute_def : NULL;
  const IoRoutine *io[2] = {impl->loads, impl->saves};
  int n[2] = {impl->nloads, impl->nsaves};
  for (int k = 0; k < 2; k++)
    for (int j = 0; j < n[k]; j++)
      if (io[k][j].symbol && !strcmp(symbol, io[k][j].symbol))
        return io[k][j].def.found ? &io[k][j].def : NULL;
  return NULL;
}

char *instantiate_extract(const Impl *impl, const char *symbol) {
  const TextSpan *known = impl->cu_text ? recorded_definition(impl, symbol) : NULL;
  if (known) return xstrndup(impl->cu_text + known->begin, known->end - known->begin);
  size_t b, e;
  if (!impl->cu_text || !instantiate_find(impl->cu_text, symbol, &b, &e)) {
    diag_error((SrcLoc){.file = impl->cu_path}, "no definition of %s (KAS_DEV void %s(...) {...})",
               symbol, symbol);
    return NULL;
  }
  return xstrndup(impl->cu_text + b, e - b);
}

/* The pattern arguments of a routine: their placeholders and patterns, in parameter order. */
typedef struct {
  const char *symbol;
  int n;
  char names[KAS_MAX_ARGS + 1][16];
  const Pattern *patterns[KAS_MAX_ARGS + 1];
} RoutineArgs;

static bool routine_args(const Impl *impl, RoutineKind kind, int io_index, RoutineArgs *ra) {
  memset(ra, 0, sizeof *ra);
  if (kind == ROUTINE_COMPUTE) {
    ra->symbol = impl->compute_symbol;
    for (int k = 0; k < impl->fn->nparams; k++) {
      snprintf(ra->names[k], sizeof ra->names[k], "APIN%d", k);
      ra->patterns[k] = &impl->in[k];
    }
    ra->n = impl->fn->nparams + 1;
    snprintf(ra->names[ra->n - 1], sizeof ra->names[0], "APOUT");
    ra->patterns[ra->n - 1] = &impl->out;
    return true;
  }
  int count = kind == ROUTINE_LOAD ? impl->nloads : impl->nsaves;
  if (io_index < 0 || io_index >= count) {
    diag_error((SrcLoc){.file = impl->ini_path}, "%s has no %s routine %d", impl->name,
               kind == ROUTINE_LOAD ? "load" : "save", io_index);
    return false;
  }
  const IoRoutine *r = kind == ROUTINE_LOAD ? &impl->loads[io_index] : &impl->saves[io_index];
  ra->symbol = r->symbol;
  ra->n = 1;
  snprintf(ra->names[0], sizeof ra->names[0], "APLS");
  ra->patterns[0] = &r->ls;
  return true;
}

/* Whether an identifier of length len at s is a placeholder (APLS, APIN<digits>, APOUT). */
static bool is_placeholder(const char *s, size_t len) {
  if ((len == 4 && !strncmp(s, "APLS", 4)) || (len == 5 && !strncmp(s, "APOUT", 5))) return true;
  if (len < 5 || strncmp(s, "APIN", 4) != 0) return false;
  for (size_t k = 4; k < len; k++)
    if (!isdigit((unsigned char)s[k])) return false;
  return true;
}

/* Block size named by the identifier <UPPER>_BX/BY/BZ, or 0. */
static int block_constant(const char *s, size_t len, const char *upper, BlockShape shape) {
  size_t ul = strlen(upper);
  if (len != ul + 3 || strncmp(s, upper, ul) != 0 || s[ul] != '_' || s[ul + 1] != 'B') return 0;
  switch (s[ul + 2]) {
  case 'X': return shape.bx;
  case 'Y': return shape.by;
  case 'Z': return shape.bz;
  default: return 0;
  }
}

/* ---- a start expression as C text ------------------------------------------------------------ */

/* How loosely the top level of an expression binds, which decides whether it needs parentheses
 * where a placeholder stood. */
typedef enum { BINDS_ATOM, BINDS_PRODUCT, BINDS_SUM, BINDS_LOOSE } Binding;

static bool is_operand_end(char c) { return ident_char(c) || c == ')'; }

/* Length of the operator at s: two characters for <= >= == != && ||, else one. */
static size_t operator_length(const char *s) {
  static const char *const pairs[] = {"<=", ">=", "==", "!=", "&&", "||", NULL};
  for (int k = 0; pairs[k]; k++)
    if (!strncmp(s, pairs[k], 2)) return 2;
  return 1;
}

/* Appends the start expression with BX/BY/BZ as numbers and one space around each binary
 * operator ("ty*9+tx*3" -> "ty * 9 + tx * 3"); returns how its top level binds. */
static Binding put_expression(StrBuf *sb, const char *src, BlockShape shape) {
  Binding b = BINDS_ATOM;
  int depth = 0;
  char prev = 0; /* the last character written that is not a space */
  for (const char *s = src; *s;) {
    if (isspace((unsigned char)*s)) {
      s++;
    } else if (ident_char(*s)) {
      const char *e = s;
      while (ident_char(*e)) e++;
      if (e - s == 2 && s[0] == 'B' && (s[1] == 'X' || s[1] == 'Y' || s[1] == 'Z'))
        sb_printf(sb, "%d", s[1] == 'X' ? shape.bx : s[1] == 'Y' ? shape.by : shape.bz);
      else if (e - s == 1 && s[0] == 'W')
        sb_printf(sb, "%d", shape.w);
      else
        sb_printf(sb, "%.*s", (int)(e - s), s);
      prev = e[-1];
      s = e;
    } else if (*s == '(' || *s == ')' || *s == ',') {
      depth += *s == '(' ? 1 : *s == ')' ? -1 : 0;
      if (*s == ',' && depth == 0) b = BINDS_LOOSE;
      sb_puts(sb, *s == ',' ? ", " : *s == '(' ? "(" : ")");
      prev = *s++;
    } else {
      size_t len = operator_length(s);
      bool binary = prev && is_operand_end(prev);
      Binding level = !binary ? (prev ? BINDS_ATOM : BINDS_LOOSE)
                      : len == 1 && strchr("*/%", *s) ? BINDS_PRODUCT
                      : len == 1 && strchr("+-", *s)  ? BINDS_SUM
                                                      : BINDS_LOOSE;
      if (depth == 0 && level > b) b = level;
      sb_printf(sb, binary ? " %.*s " : "%.*s", (int)len, s);
      prev = s[len - 1];
      s += len;
    }
  }
  return b;
}

/* The last character of the output that is not a blank. */
static char last_written(const StrBuf *sb) {
  for (size_t k = sb->len; k > 0; k--)
    if (sb->data[k - 1] != ' ' && sb->data[k - 1] != '\t') return sb->data[k - 1];
  return 0;
}

static const char *skip_blanks(const char *s) {
  while (*s == ' ' || *s == '\t') s++;
  return s;
}

/* Whether an expression binding as b can stand between prev and next without parentheses:
 * a sum inside an index, an argument or after '+'; a product also after '-' or before '*'. */
static bool bare_is_safe(Binding b, char prev, char next) {
  if (b == BINDS_ATOM) return true;
  if (b == BINDS_LOOSE) return false;
  bool after = strchr("[(,=+", prev) || (b == BINDS_PRODUCT && prev == '-');
  bool before = strchr("]),;+-", next) || (b == BINDS_PRODUCT && strchr("*/%", next));
  return prev && next && after && before;
}

/* A shared placeholder: the pattern's start expression, in parentheses only where needed. */
static void put_start(StrBuf *sb, const char *src, BlockShape shape, const char *after) {
  StrBuf e;
  sb_init(&e);
  Binding b = put_expression(&e, src, shape);
  bool bare = bare_is_safe(b, last_written(sb), *skip_blanks(after));
  sb_printf(sb, bare ? "%s" : "(%s)", e.data ? e.data : "0");
  sb_free(&e);
}

/* A register placeholder is 0: "APLS + k" becomes "k", "x + APLS]" becomes "x]", and a lone
 * one "0".  Returns how many characters after the placeholder it consumed. */
static size_t put_zero(StrBuf *sb, const char *after) {
  const char *p = skip_blanks(after);
  char prev = last_written(sb);
  if (*p == '+' && p[1] != '+' && p[1] != '=' && prev && strchr("[(,=", prev))
    return (size_t)(skip_blanks(p + 1) - after);
  size_t plus = sb->len;
  while (plus > 0 && (sb->data[plus - 1] == ' ' || sb->data[plus - 1] == '\t')) plus--;
  if (prev == '+' && *p && strchr("]),;", *p) && plus >= 2 && sb->data[plus - 2] != '+') {
    sb->len = plus - 1; /* "x + 0]" is "x]" */
    while (sb->len && (sb->data[sb->len - 1] == ' ' || sb->data[sb->len - 1] == '\t')) sb->len--;
    sb->data[sb->len] = '\0';
    return 0;
  }
  sb_putc(sb, '0');
  return 0;
}

/* ---- substitution ---------------------------------------------------------------------------- */

/* One routine being rewritten: what it is, what it becomes, and its array's binding (size and
 * record filled in). */
typedef struct {
  const Impl *impl;
  const RoutineArgs *ra;
  const RoutineRequest *rq;
  const char *new_name;
  GlobalBinding global;
  bool used_gidx; /* GIDX appeared (a component-major routine then takes ld) */
} Subst;

static char *substitute(Subst *st, const char *text);

/* An operand as C text ("e0 + tx", "k") with one space around binary operators, and how it
 * binds. */
static char *operand_text(const char *src, BlockShape shape, Binding *b) {
  StrBuf sb;
  sb_init(&sb);
  *b = put_expression(&sb, src, shape);
  return sb.data ? sb_take(&sb) : xstrdup("0");
}

/* "x" or "(x)": an operand of a product needs parentheses around a sum. */
static void put_factor(StrBuf *sb, const char *x, Binding b) {
  sb_printf(sb, b > BINDS_PRODUCT ? "(%s)" : "%s", x);
}

/* The index of component c of element e under the binding (docs/design.md §5.4):
 * element-major "e * record + c", component-major "e + c * ld"; a zero component and a unit
 * stride are left out.  Returns how the text binds. */
static Binding put_global_index(StrBuf *sb, const Subst *st, const char *e, const char *c) {
  Binding be, bc;
  char *et = operand_text(e, st->rq->shape, &be), *ct = operand_text(c, st->rq->shape, &bc);
  bool zero = !strcmp(ct, "0");
  Binding result = BINDS_SUM;
  if (st->global.layout == LAYOUT_COMPONENT) {
    sb_printf(sb, be == BINDS_LOOSE ? "(%s)" : "%s", et);
    if (!zero && !strcmp(ct, "1")) sb_puts(sb, " + ld");
    if (!zero && strcmp(ct, "1")) {
      sb_puts(sb, " + ");
      put_factor(sb, ct, bc);
      sb_puts(sb, " * ld");
    }
    if (zero) result = be;
  } else {
    int record = st->global.record;
    if (record != 1) put_factor(sb, et, be);
    else sb_printf(sb, be == BINDS_LOOSE ? "(%s)" : "%s", et);
    if (record != 1) sb_printf(sb, " * %d", record);
    if (!zero) sb_printf(sb, bc == BINDS_LOOSE ? " + (%s)" : " + %s", ct);
    if (zero) result = record != 1 ? BINDS_PRODUCT : be;
  }
  free(et);
  free(ct);
  return result;
}

/* GIDX(e, c) at s (the identifier) and its arguments: the binding's index, in parentheses only
 * where the context needs them.  Returns the characters consumed after the identifier, -1 after
 * a diagnostic. */
static long put_gidx(StrBuf *sb, Subst *st, const char *s) {
  const char *open = skip_blanks(s + 4);
  const char *close = *open == '(' ? match_bracket(open, '(', ')') : NULL;
  const char *comma = NULL;
  for (const char *p = open + 1, *depth_end = close; close && p < depth_end - 1; p++) {
    if (*p == '(') p = match_bracket(p, '(', ')') - 1;
    else if (*p == ',' && !comma) comma = p;
  }
  if (!close || !comma) {
    diag_error((SrcLoc){.file = st->impl->cu_path}, "%s: GIDX takes two arguments, GIDX(element, "
               "component)", st->ra->symbol);
    return -1;
  }
  char *e_src = xstrndup(open + 1, (size_t)(comma - open - 1));
  char *c_src = xstrndup(comma + 1, (size_t)(close - comma - 2));
  char *e = substitute(st, e_src), *c = e ? substitute(st, c_src) : NULL;
  long used = -1;
  if (e && c) {
    StrBuf idx;
    sb_init(&idx);
    Binding b = put_global_index(&idx, st, e, c);
    bool bare = bare_is_safe(b, last_written(sb), *skip_blanks(close));
    sb_printf(sb, bare ? "%s" : "(%s)", idx.data);
    sb_free(&idx);
    st->used_gidx = true;
    used = (long)(close - (s + 4));
  }
  free(e_src), free(c_src), free(e), free(c);
  return used;
}

/* Whether the routine is a load of component-major rows that reads through kas_row_load. */
static bool hinted_load(const RoutineRequest *rq, const GlobalBinding *b) {
  return rq->hint_rows && rq->kind == ROUTINE_LOAD && b->layout == LAYOUT_COMPONENT;
}

/* g[index] in a load of component-major rows for the plan for any alignment
 * (RoutineRequest.hint_rows): kas_row_load(&g[index]), which asks L2 for the whole 256-byte
 * block (library/kas_device.h says why).  after: the text following `g`.  Returns the characters
 * consumed after the identifier, -1 after a diagnostic. */
static long put_hinted_load(StrBuf *sb, Subst *st, const char *after) {
  const char *open = skip_blanks(after);
  const char *close = match_bracket(open, '[', ']');
  if (!close) {
    diag_error((SrcLoc){.file = st->impl->cu_path}, "%s: unbalanced g[...]", st->ra->symbol);
    return -1;
  }
  /* "[index]" whole, so that GIDX sees the brackets and leaves out needless parentheses */
  char *index_src = xstrndup(open, (size_t)(close - open));
  char *index = substitute(st, index_src);
  free(index_src);
  if (!index) return -1;
  sb_printf(sb, "kas_row_load(&g%s)", index);
  free(index);
  return (long)(close - after);
}

/* Rewrites one identifier of the routine (after: the text that follows it); returns the number
 * of following characters it consumed, or -1 + diagnostic for a foreign placeholder. */
static long put_identifier(StrBuf *sb, Subst *st, const char *s, size_t len, const char *after) {
  const RoutineArgs *ra = st->ra;
  const RoutineRequest *rq = st->rq;
  if (len == strlen(ra->symbol) && !strncmp(s, ra->symbol, len)) {
    sb_puts(sb, st->new_name);
    return 0;
  }
  int number = block_constant(s, len, st->impl->upper, rq->shape);
  if (number) {
    sb_printf(sb, "%d", number);
    return 0;
  }
  if (len == 4 && !strncmp(s, "real", 4)) {
    sb_puts(sb, target_real_name(rq->precision));
    return 0;
  }
  if (len == 4 && !strncmp(s, "GIDX", 4)) return put_gidx(sb, st, s);
  if (hinted_load(rq, &st->global) && len == 1 && *s == 'g' && *skip_blanks(after) == '[')
    return put_hinted_load(sb, st, after);
  if (len == 1 && *s == 'W') {
    if (rq->shape.w > 0) {
      sb_printf(sb, "%d", rq->shape.w);
      return 0;
    }
    diag_error((SrcLoc){.file = st->impl->cu_path}, "internal error: %s uses W, but no vector "
               "width was bound", ra->symbol);
    return -1;
  }
  if (!is_placeholder(s, len)) {
    sb_printf(sb, "%.*s", (int)len, s);
    return 0;
  }
  for (int k = 0; k < ra->n; k++)
    if (strlen(ra->names[k]) == len && !strncmp(s, ra->names[k], len)) {
      if (rq->place[k] == PLACE_REGISTER) return (long)put_zero(sb, after);
      put_start(sb, ra->patterns[k]->start_src, rq->shape, after);
      return 0;
    }
  diag_error((SrcLoc){.file = st->impl->cu_path}, "%s uses placeholder %.*s, which is not one of "
                                                  "its pattern arguments", ra->symbol, (int)len, s);
  return -1;
}

/* The text with the new name, the block sizes as numbers and every placeholder replaced (a whole
 * definition, or an argument of GIDX); NULL after a diagnostic. */
static char *substitute(Subst *st, const char *text) {
  StrBuf sb;
  sb_init(&sb);
  bool ok = true;
  for (const char *s = text; *s && ok;) {
    size_t skip = skip_length(s);
    if (skip) {
      sb_printf(&sb, "%.*s", (int)skip, s);
      s += skip;
    } else if (ident_start(*s) && (s == text || !ident_char(s[-1]))) {
      const char *end = s;
      while (ident_char(*end)) end++;
      long used = put_identifier(&sb, st, s, (size_t)(end - s), end);
      ok = used >= 0;
      s = end + (used > 0 ? used : 0);
    } else if (isdigit((unsigned char)*s)) { /* a number: keep "1e5f" or "0x1F" whole */
      const char *end = s;
      while (ident_char(*end) || *end == '.') end++;
      sb_printf(&sb, "%.*s", (int)(end - s), s);
      s = end;
    } else {
      sb_putc(&sb, *s++);
    }
  }
  if (ok) return sb.data ? sb_take(&sb) : xstrdup("");
  sb_free(&sb);
  return NULL;
}

/* ---- the coordinates a routine takes ------------------------------------------------------- */

static const char *const COORD_NAMES[3] = {"tx", "ty", "tz"};

/* Whether the line starting at s is only `(void)c;` for a coordinate c (and perhaps a comment);
 * returns c's index, or -1. */
static int discard_line(const char *s) {
  s = skip_blanks(s);
  if (strncmp(s, "(void)", 6)) return -1;
  for (int c = 0; c < 3; c++) {
    if (strncmp(s + 6, COORD_NAMES[c], 2) || s[8] != ';') continue;
    const char *rest = skip_blanks(s + 9);
    if (*rest == '\n' || !*rest || (rest[0] == '/' && (rest[1] == '*' || rest[1] == '/')))
      return c;
  }
  return -1;
}

static const char *line_end(const char *s) {
  const char *e = strchr(s, '\n');
  return e ? e + 1 : s + strlen(s);
}

/* The coordinates the body really uses: every identifier tx/ty/tz in its code, except in lines
 * that only discard one ((void)ty;). */
static unsigned coords_used(const char *body) {
  unsigned used = 0;
  for (const char *s = body; *s;) {
    if ((s == body || s[-1] == '\n') && discard_line(s) >= 0) {
      s = line_end(s);
      continue;
    }
    size_t skip = skip_length(s);
    if (skip) {
      s += skip;
    } else if (ident_start(*s) && (s == body || !ident_char(s[-1]))) {
      const char *e = s;
      while (ident_char(*e)) e++;
      for (int c = 0; c < 3; c++)
        if (e - s == 2 && !strncmp(s, COORD_NAMES[c], 2)) used |= 1u << c;
      s = e;
    } else {
      s++;
    }
  }
  return used;
}

/* The body without the lines that only discard a coordinate. */
static void put_body(StrBuf *sb, const char *body) {
  for (const char *s = body; *s;) {
    const char *e = line_end(s);
    if (discard_line(s) < 0) sb_printf(sb, "%.*s", (int)(e - s), s);
    s = e;
  }
}

/* One parameter with its blanks collapsed ("const float *KAS_RESTRICT g"). */
static char *normalized(const char *s, size_t len) {
  StrBuf sb;
  sb_init(&sb);
  for (size_t k = 0; k < len; k++) {
    if (isspace((unsigned char)s[k])) {
      if (sb.len && sb.data[sb.len - 1] != ' ') sb_putc(&sb, ' ');
    } else {
      sb_putc(&sb, s[k]);
    }
  }
  while (sb.len && sb.data[sb.len - 1] == ' ') sb.data[--sb.len] = '\0';
  return sb.data ? sb_take(&sb) : xstrdup("");
}

/* Whether a parameter is a coordinate the body does not use (dropped). */
static bool unused_coordinate(const char *param, unsigned used) {
  for (int c = 0; c < 3; c++)
    if (!strncmp(param, "int ", 4) && !strcmp(param + 4, COORD_NAMES[c])) return !(used >> c & 1);
  return false;
}

enum { MAX_LINE = 100 };

/* "KAS_DEV void name(p1, p2,\n                  p3) {": the parameters the body uses, then
 * extra (NULL: none), wrapped at MAX_LINE columns under the first one. */
static void put_signature(StrBuf *sb, const char *head, const char *params, size_t len,
                          unsigned used, const char *extra) {
  sb_printf(sb, "%s(", head);
  int indent = (int)strlen(head) + 1;
  if (indent > 60) indent = 4;
  size_t col = strlen(head) + 1;
  bool first = true;
  int depth = 0;
  for (size_t from = 0, k = 0; k <= len + (extra != NULL); k++) {
    if (k < len && (params[k] == '(' || params[k] == ')')) depth += params[k] == '(' ? 1 : -1;
    if (k < len && (params[k] != ',' || depth)) continue;
    char *p = k <= len ? normalized(params + from, k - from) : xstrdup(extra);
    from = k + 1;
    if (*p && !unused_coordinate(p, used)) {
      bool wrap = !first && col + 2 + strlen(p) + 3 > MAX_LINE; /* 3: ") {" */
      sb_printf(sb, "%s%*s%s", first ? "" : wrap ? ",\n" : ", ", wrap ? indent : 0, "", p);
      col = (wrap ? (size_t)indent : col + (first ? 0 : 2)) + strlen(p);
      first = false;
    }
    free(p);
  }
  sb_puts(sb, ") {");
}

/* Drops the coordinate parameters (tx, ty, tz) that the body only discards, with the lines that
 * discard them, and lays the signature out anew.  Returns the tidy text (or NULL when the text
 * does not have the expected `... name(params) {` form: the caller keeps it as it was). */
static char *drop_unused_coordinates(const char *text, const char *name, unsigned *coords,
                                     const char *extra) {
  const char *at = NULL;
  for (const char *s = strstr(text, name); s && !at; s = strstr(s + 1, name))
    if ((s == text || !ident_char(s[-1])) && !ident_char(s[strlen(name)])) at = s;
  const char *open = at ? skip_blank(at + strlen(name)) : NULL;
  const char *close = open && *open == '(' ? match_bracket(open, '(', ')') : NULL;
  const char *brace = close ? skip_blank(close) : NULL;
  if (!brace || *brace != '{') return NULL;
  const char *body = brace + 1;
  *coords = coords_used(body);
  StrBuf sb;
  sb_init(&sb);
  char *head = normalized(text, (size_t)(at - text) + strlen(name));
  put_signature(&sb, head, open + 1, (size_t)(close - 1 - (open + 1)), *coords, extra);
  free(head);
  put_body(&sb, body);
  return sb_take(&sb);
}

/* Whether the code (outside comments and literals) uses the identifier word. */
static bool uses_identifier(const char *text, const char *word) {
  size_t n = strlen(word);
  for (const char *s = text; *s;) {
    size_t skip = skip_length(s);
    if (skip) {
      s += skip;
    } else if (ident_start(*s) && (s == text || !ident_char(s[-1]))) {
      const char *e = s;
      while (ident_char(*e)) e++;
      if ((size_t)(e - s) == n && !strncmp(s, word, n)) return true;
      s = e;
    } else {
      s++;
    }
  }
  return false;
}

/* The load's or save's array binding with its size and record known; false + diagnostic when
 * a contiguous routine is asked for an array that is not. */
static bool routine_binding(const Impl *impl, const RoutineRequest *rq, GlobalBinding *out) {
  *out = rq->global;
  if (rq->kind == ROUTINE_COMPUTE) return true;
  const IoRoutine *io =
      rq->kind == ROUTINE_LOAD ? &impl->loads[rq->io_index] : &impl->saves[rq->io_index];
  const KType *t = rq->kind == ROUTINE_LOAD ? impl->fn->params[io->arg] : impl->fn->result;
  out->size = t ? t->size : 1;
  if (out->record <= 0) out->record = out->size;
  if (!io->contiguous || out->layout == LAYOUT_ELEMENT) return true;
  diag_error((SrcLoc){.file = impl->ini_path}, "internal error: %s moves a contiguous chunk, but "
             "its array is component-major", io->symbol);
  return false;
}

/* Whether a routine that copies the block's chunk as one run is asked for an element-major
 * slice of a larger record (`F[q]`: 9 reals of each element's 72): the chunk is then strided. */
static bool chunk_of_slice(const Impl *impl, const RoutineRequest *rq, const GlobalBinding *b) {
  if (rq->kind == ROUTINE_COMPUTE) return false;
  const IoRoutine *io =
      rq->kind == ROUTINE_LOAD ? &impl->loads[rq->io_index] : &impl->saves[rq->io_index];
  return binding_chunk_of_slice(io, b);
}

/* The lines moving real f of the chunk (element e0 + f / size) between global memory and the
 * shared buffer, indented by `in`. */
static void put_chunk_move(StrBuf *sb, const RoutineRequest *rq, const GlobalBinding *b,
                           const char *in) {
  sb_printf(sb, "%sconst size_t e = e0 + (size_t)(f / %d);\n", in, b->size);
  if (rq->kind == ROUTINE_LOAD)
    sb_printf(sb, "%ss[f] = e < n ? g[e * %d + f %% %d] : 0;\n", in, b->record, b->size);
  else
    sb_printf(sb, "%sconst real v = s[f]; /* read whatever n is: the read set stays fixed */"
                  "\n%sif (e < n) g[e * %d + f %% %d] = v;\n", in, in, b->record, b->size);
}

/* The text that replaces a contiguous routine for a slice.  The library's routine copies the
 * block's E * size reals as one run into the shared buffer in chunk order (real f is component
 * f % size of element e0 + f / size); a slice's reals are `record` apart per element, so kasgen
 * moves the same chunk order itself, with the library pattern's thread-to-real map at the
 * request's width W (binding_io_width): W-real groups lin, lin + T, ..., which the barrier
 * analysis relies on.  At W = 1 consecutive threads move consecutive reals (a warp's store
 * writes 32 of them); at W = 4 a warp's store writes every fourth real of 128.  The owner
 * routine's threads would each move their own element, `record` reals apart, and waste most of
 * every sector.  Elements >= n are zero-filled (load) or skipped (save), as in the library's
 * routines. */
static char *slice_chunk_text(const RoutineArgs *ra, const RoutineRequest *rq,
                              const GlobalBinding *b) {
  BlockShape sh = rq->shape;
  int threads = sh.bx * sh.by * sh.bz, reals = rq->e * b->size, w = sh.w > 0 ? sh.w : 1;
  int rounds = ((reals + w - 1) / w + threads - 1) / threads;
  StrBuf sb;
  sb_init(&sb);
  if (rq->kind == ROUTINE_LOAD)
    sb_printf(&sb, "KAS_DEV void %s(const real *KAS_RESTRICT g, KAS_BUF(real) s, int tx, int ty,"
                   " int tz,\n    size_t e0, size_t n) {\n", ra->symbol);
  else
    sb_printf(&sb, "KAS_DEV void %s(KAS_BUF(real) s, real *KAS_RESTRICT g, int tx, int ty, int tz,"
                   "\n    size_t e0, size_t n) {\n", ra->symbol);
  char *which = w > 1 ? xasprintf("reals %d * lin .. +%d, then %d further, ...", w, w - 1,
                                  w * threads)
                : rounds > 1 ? xasprintf("reals lin, lin + %d, ... (a warp's are consecutive)",
                                         threads)
                : xstrdup("real lin (a warp's are consecutive)");
  sb_printf(&sb, "  /* kasgen's, for an array slice: the block's chunk of %d-real values in "
                 "%d-real records,\n   * in chunk order, thread lin taking %s */\n", b->size,
            b->record, which);
  free(which);
  if (sh.bz > 1) sb_printf(&sb, "  const int lin = tx + %d * (ty + %d * tz);\n", sh.bx, sh.by);
  else if (sh.by > 1) sb_printf(&sb, "  const int lin = tx + %d * ty;\n", sh.bx);
  else sb_puts(&sb, "  const int lin = tx;\n");
  if (w > 1) {
    sb_printf(&sb, "#pragma unroll\n  for (int r = 0; r < %d; r++) {\n", rounds);
    sb_printf(&sb, "#pragma unroll\n    for (int b = 0; b < %d; b++) {\n", w);
    sb_printf(&sb, "      const int f = %d * (lin + r * %d) + b;\n", w, threads);
    if (rounds * threads * w > reals) sb_printf(&sb, "      if (f >= %d) break;\n", reals);
    put_chunk_move(&sb, rq, b, "      ");
    sb_puts(&sb, "    }\n  }\n}\n");
  } else if (rounds > 1) {
    sb_printf(&sb, "#pragma unroll\n  for (int r = 0; r < %d; r++) {\n"
                   "    const int f = lin + r * %d;\n", rounds, threads);
    if (reals % threads) sb_printf(&sb, "    if (f >= %d) break;\n", reals);
    put_chunk_move(&sb, rq, b, "    ");
    sb_puts(&sb, "  }\n}\n");
  } else { /* one round needs no loop */
    sb_puts(&sb, "  const int f = lin;\n");
    if (reals % threads) sb_printf(&sb, "  if (f >= %d) return;\n", reals);
    put_chunk_move(&sb, rq, b, "  ");
    sb_puts(&sb, "}\n");
  }
  return sb_take(&sb);
}

/* <symbol>_e<E>_<one s or r per pattern argument>, then what else makes its text differ:
 * _w<W> for a vector width other than the precision's 16 bytes, _cm for a component-major
 * array (_cm_l2_256 where its loads go through kas_row_load), _rec<R> for an element-major slice
 * of a record of R reals. */
static char *instance_name(const RoutineArgs *ra, const RoutineRequest *rq, const char *text,
                           const GlobalBinding *b) {
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "%s_e%d_", ra->symbol, rq->e);
  for (int k = 0; k < ra->n; k++) sb_putc(&sb, rq->place[k] == PLACE_REGISTER ? 'r' : 's');
  if (rq->shape.w != target_vector_width(rq->precision) && uses_identifier(text, "W"))
    sb_printf(&sb, "_w%d", rq->shape.w);
  if (uses_identifier(text, "GIDX") && b->layout == LAYOUT_COMPONENT)
    sb_puts(&sb, hinted_load(rq, b) ? "_cm_l2_256" : "_cm");
  else if (uses_identifier(text, "GIDX") && b->record != b->size)
    sb_printf(&sb, "_rec%d", b->record);
  return sb_take(&sb);
}

bool instantiate_routine(const Impl *impl, const RoutineRequest *rq, RoutineInstance *out) {
  RoutineArgs ra;
  if (!routine_args(impl, rq->kind, rq->io_index, &ra)) return false;
  Subst st = {.impl = impl, .ra = &ra, .rq = rq};
  if (!routine_binding(impl, rq, &st.global)) return false;
  bool slice = chunk_of_slice(impl, rq, &st.global);
  char *text = slice ? slice_chunk_text(&ra, rq, &st.global) : instantiate_extract(impl, ra.symbol);
  if (!text) return false;
  char *name = instance_name(&ra, rq, text, &st.global);
  if (slice) { /* its text depends on the record and the width */
    char *longer = rq->shape.w != target_vector_width(rq->precision)
                       ? xasprintf("%s_rec%d_w%d", name, st.global.record, rq->shape.w)
                       : xasprintf("%s_rec%d", name, st.global.record);
    free(name);
    name = longer;
  }
  st.new_name = name;
  char *substituted = substitute(&st, text);
  free(text);
  if (!substituted) {
    free(name);
    return false;
  }
  bool takes_ld = st.used_gidx && st.global.layout == LAYOUT_COMPONENT;
  unsigned coords = COORD_TX | COORD_TY | COORD_TZ;
  char *tidy = drop_unused_coordinates(substituted, name, &coords, takes_ld ? "size_t ld" : NULL);
  if (!tidy && takes_ld) {
    diag_error((SrcLoc){.file = impl->cu_path}, "%s: no parameter list to add ld to", ra.symbol);
    free(substituted);
    free(name);
    return false;
  }
  if (tidy) free(substituted);
  *out = (RoutineInstance){tidy ? tidy : substituted, name, coords, takes_ld};
  return true;
}

void routine_instance_free(RoutineInstance *ri) {
  free(ri->text);
  free(ri->name);
  *ri = (RoutineInstance){0};
}
