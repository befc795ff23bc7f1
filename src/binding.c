/*
 * binding.c — the words of a target that need no DAG (docs/design.md §5.4): the real types,
 * vector widths and layout names, the reading of a --layout text, and how a routine addresses
 * one array in global memory (GlobalBinding); instantiate.c uses them, target.c builds on them,
 * results.c reads a results file's layout with them.
 *
 * Every load and save routine addresses global memory through one placeholder, GIDX(e, c), the
 * index of component c of element e from the routine's array pointer; kasgen binds it per array
 * (instantiate.c turns it into "e * 9 + c" or "e + c * ld").  The binding also carries where a
 * value sits in a larger element record (an array slice), so that element-major and
 * component-major slices are addressed by the same two strides and a base offset.
 */
#include "kasgen.h"

#include <string.h>

bool binding_contiguous(const GlobalBinding *b) {
  return b->layout == LAYOUT_ELEMENT && (b->record == 0 || b->record == b->size);
}

bool binding_chunk_of_slice(const IoRoutine *io, const GlobalBinding *b) {
  return io->contiguous && !binding_contiguous(b);
}

/* In global memory the chunk code moves one real per thread at a time (a slice sits at any
 * offset: no wider access), thread lin taking reals lin, lin + T, ...: a warp's store then
 * writes 32 consecutive reals of the chunk.  At W = 4 each store wrote every fourth real,
 * leaving every sector it touched written in part, one L2 write request each (docs/model.md,
 * "Slices saved straight"); on the H100, gradients_loop20's candidates 5-8 with W = 1 chunks
 * ran at 0.20-0.21 ns per element, where those ranked there with W = 4 ran at 0.37-0.40.  A
 * staged array's chunk is copied between two shared buffers, where no such request exists: it
 * keeps the plan's width (stvk_tet's one-kernel candidate, whose two staged chunks were the only
 * difference, measured 4% slower at W = 1 in the same run; benchmarks/RESULTS.md, session 26). */
int binding_io_width(const IoRoutine *io, const GlobalBinding *b, bool staged, int w) {
  return binding_chunk_of_slice(io, b) && !staged ? 1 : w;
}

size_t binding_address(const GlobalBinding *b, size_t e, int c, size_t ld) {
  size_t record = b->record > 0 ? (size_t)b->record : (size_t)b->size;
  if (b->layout == LAYOUT_COMPONENT) return (size_t)b->offset * ld + e + (size_t)c * ld;
  return (size_t)b->offset + e * record + (size_t)c;
}

int target_real_bytes(Precision p) { return p == PREC_DOUBLE ? 8 : 4; }

const char *target_real_name(Precision p) { return p == PREC_DOUBLE ? "double" : "float"; }

const char *target_precision_name(Precision p) { return p == PREC_DOUBLE ? "double" : "single"; }

int target_vector_width(Precision p) { return 16 / target_real_bytes(p); }

const char *target_layout_name(Layout l) {
  return l == LAYOUT_COMPONENT ? "component" : "element";
}

/* "element" or "component" at s (length len); false for anything else. */
static bool parse_layout_word(const char *s, size_t len, Layout *out) {
  if (len == 7 && !strncmp(s, "element", 7)) *out = LAYOUT_ELEMENT;
  else if (len == 9 && !strncmp(s, "component", 9)) *out = LAYOUT_COMPONENT;
  else return false;
  return true;
}

bool layout_item_next(const char **s, LayoutItem *it) {
  size_t len = strcspn(*s, ",");
  const char *eq = memchr(*s, '=', len);
  *it = (LayoutItem){.text = *s, .len = len, .name_len = eq ? (size_t)(eq - *s) : 0,
                     .named = eq != NULL};
  const char *word = eq ? eq + 1 : *s;
  *s += len + ((*s)[len] == ',');
  return parse_layout_word(word, len - (size_t)(word - it->text), &it->layout);
}

bool target_layouts_valid(const char *layouts, const char **bad, int *bad_len) {
  LayoutItem it;
  for (const char *s = layouts; *s;)
    if (!layout_item_next(&s, &it)) {
      *bad = it.text, *bad_len = (int)it.len;
      return false;
    }
  return true;
}

/* "did you mean 'F=component'?" after a misspelt layout word in the item bad[0 .. len-1]. */
static void hint_layout_word(const char *bad, int len, SrcLoc where) {
  const char *eq = memchr(bad, '=', (size_t)len);
  const char *word = eq ? eq + 1 : bad;
  NameHint h;
  name_hint_start(&h, word, (size_t)(bad + len - word));
  name_hint_offer(&h, "element", 0);
  name_hint_offer(&h, "component", 1);
  if (h.best) diag_note(where, "did you mean '%.*s%s'?", (int)(word - bad), bad, h.best);
}

bool target_layouts_check(const char *layouts, SrcLoc where) {
  const char *bad;
  int bad_len;
  if (target_layouts_valid(layouts, &bad, &bad_len)) return true;
  diag_error(where, "'%.*s': expected element, component or NAME=element|component", bad_len,
             bad);
  hint_layout_word(bad, bad_len, where);
  return false;
}
