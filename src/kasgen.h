/*
 * kasgen.h — the core types of kasgen and the interface of every pipeline stage.
 *
 * kasgen is a pipeline (docs/design.md §4); data flows one way:
 *
 *   spec text --spec.c--> Spec --dag.c--> Dag --fusion.c--> FusionSet
 *     --linearize.c/smem.c/placement.c/sync.c (via combine.c)--> KernelPlan[]
 *     --model.c (timingdb.c)--> predicted times --select.c--> Candidate[]
 *     --emit.c (emit_common.c, emit_cuda.c, emit_embed.c)--> generated/<spec>/
 *   library/ --library.c (pattern.c, instantiate.c)--> Library
 *
 * search.c drives the middle stages with one SearchContext, which owns every cache they use.
 * main.c holds the table of commands; the cli_*.c files run them.  The programs kasgen writes
 * into generated folders are real files in src/runtime/, built into the binary.
 *
 * One header holds all core structures (chibicc's style) so that a reader finds every type in one
 * place.  Each stage's functions are declared under the stage's file name.  A stage never modifies
 * the output of an earlier stage: it reads it and builds its own.  No file calls back into a file
 * that calls it (tests/integration/layers.sh).
 */
#ifndef KASGEN_H
#define KASGEN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define KASGEN_VERSION "0.1.0"

/* Limits.  A fusion is a set of DAG nodes (NodeSet, below), so a spec has at most
 * KAS_MAX_NODES calls. */
#define KAS_MAX_NODES 1024
#define KAS_MAX_ARGS 6       /* inputs of one elementary function (stvk_kmat33 takes 5) */
#define KAS_MAX_THREADS 1024 /* threads per block on every CUDA GPU we target */
/* Dynamic shared memory per block: what every kernel may use without opting in (a launch needs
 * cudaFuncSetAttribute beyond it), and the per-block maximum with opt-in on Hopper, which the
 * search assumes when a timing database does not give the device's. */
#define KAS_SMEM_WITHOUT_OPTIN (48 * 1024)
#define KAS_SMEM_OPTIN_FALLBACK (227 * 1024)

/* A set of DAG nodes: bit i of the 1024 is node i.  A fixed size, so that sets are plain values
 * (assigned, compared, stored in arrays) whatever the DAG; the helpers below are the only way
 * the code touches the words. */
#define NODESET_WORDS (KAS_MAX_NODES / 64)
typedef struct {
  uint64_t w[NODESET_WORDS];
} NodeSet;

static inline NodeSet nodeset_empty(void) {
  NodeSet s = {{0}};
  return s;
}
static inline NodeSet nodeset_of(int i) { /* {i} */
  NodeSet s = {{0}};
  s.w[i >> 6] = (uint64_t)1 << (i & 63);
  return s;
}
static inline bool nodeset_has(const NodeSet *s, int i) { return (s->w[i >> 6] >> (i & 63)) & 1; }
static inline void nodeset_add(NodeSet *s, int i) { s->w[i >> 6] |= (uint64_t)1 << (i & 63); }
static inline void nodeset_remove(NodeSet *s, int i) { s->w[i >> 6] &= ~((uint64_t)1 << (i & 63)); }
static inline NodeSet nodeset_union(NodeSet a, NodeSet b) {
  for (int k = 0; k < NODESET_WORDS; k++) a.w[k] |= b.w[k];
  return a;
}
static inline NodeSet nodeset_inter(NodeSet a, NodeSet b) {
  for (int k = 0; k < NODESET_WORDS; k++) a.w[k] &= b.w[k];
  return a;
}
static inline NodeSet nodeset_minus(NodeSet a, NodeSet b) { /* a \ b */
  for (int k = 0; k < NODESET_WORDS; k++) a.w[k] &= ~b.w[k];
  return a;
}
static inline void nodeset_unite(NodeSet *a, const NodeSet *b) { /* a |= b */
  for (int k = 0; k < NODESET_WORDS; k++) a->w[k] |= b->w[k];
}
static inline bool nodeset_is_empty(const NodeSet *a) {
  uint64_t any = 0;
  for (int k = 0; k < NODESET_WORDS; k++) any |= a->w[k];
  return any == 0;
}
static inline bool nodeset_equal(const NodeSet *a, const NodeSet *b) {
  uint64_t diff = 0;
  for (int k = 0; k < NODESET_WORDS; k++) diff |= a->w[k] ^ b->w[k];
  return diff == 0;
}
static inline bool nodeset_intersects(const NodeSet *a, const NodeSet *b) {
  uint64_t any = 0;
  for (int k = 0; k < NODESET_WORDS; k++) any |= a->w[k] & b->w[k];
  return any != 0;
}
static inline bool nodeset_subset(const NodeSet *a, const NodeSet *b) { /* a ⊆ b */
  uint64_t out = 0;
  for (int k = 0; k < NODESET_WORDS; k++) out |= a->w[k] & ~b->w[k];
  return out == 0;
}
static inline int nodeset_count(const NodeSet *a) {
  int n = 0;
  for (int k = 0; k < NODESET_WORDS; k++) n += __builtin_popcountll(a->w[k]);
  return n;
}
/* The smallest member >= from, or -1: `for (int v = nodeset_next(&s, 0); v >= 0;
 * v = nodeset_next(&s, v + 1))` visits the members in increasing order. */
static inline int nodeset_next(const NodeSet *a, int from) {
  if (from < 0) from = 0;
  for (int k = from >> 6; k < NODESET_WORDS; k++) {
    uint64_t w = a->w[k];
    if (k == from >> 6) w &= ~(uint64_t)0 << (from & 63);
    if (w) return k * 64 + __builtin_ctzll(w);
  }
  return -1;
}
/* The largest member, or -1. */
static inline int nodeset_last(const NodeSet *a) {
  for (int k = NODESET_WORDS - 1; k >= 0; k--)
    if (a->w[k]) return k * 64 + 63 - __builtin_clzll(a->w[k]);
  return -1;
}
/* {lo, ..., hi - 1} (empty when hi <= lo). */
static inline NodeSet nodeset_range(int lo, int hi) {
  NodeSet s = {{0}};
  for (int k = 0; k < NODESET_WORDS; k++) {
    int a = lo - k * 64, b = hi - k * 64; /* the range within word k: [a, b) clamped to [0, 64) */
    if (a < 0) a = 0;
    if (b > 64) b = 64;
    if (a >= b) continue;
    uint64_t upto_b = b == 64 ? ~(uint64_t)0 : ((uint64_t)1 << b) - 1;
    s.w[k] = upto_b & (~(uint64_t)0 << a);
  }
  return s;
}
/* A total order on sets (by their highest differing node: the set holding it is larger), for
 * sorting and canonical tie-breaks. */
static inline int nodeset_compare(const NodeSet *a, const NodeSet *b) {
  for (int k = NODESET_WORDS - 1; k >= 0; k--)
    if (a->w[k] != b->w[k]) return a->w[k] < b->w[k] ? -1 : 1;
  return 0;
}
static inline uint64_t nodeset_hash(const NodeSet *a) {
  uint64_t h = 1469598103934665603ull;
  for (int k = 0; k < NODESET_WORDS; k++) h = (h ^ a->w[k]) * 1099511628211ull ^ (h >> 29);
  return h;
}

/* ------------------------------------------------------------------------------------------ */
/* util.c: memory, strings, diagnostics                                                       */
/* ------------------------------------------------------------------------------------------ */

/* Diagnostics are GCC-style: "file:line:col: error: msg", then the source line and a caret when
 * the caller has the text.  Errors are counted; a stage returns false/NULL after reporting. */
typedef struct {
  const char *file; /* file name as given by the user */
  const char *text; /* whole file contents, or NULL when the line cannot be shown */
  int line, col;    /* 1-based; 0 = unknown */
} SrcLoc;
/* A place in a file, for messages (1-based; 0: unknown). */
typedef struct {
  int line, col;
} TextPlace;

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
/* A best-first queue (a binary min-heap) of fixed-size entries, each a struct whose first two
 * members are those of a QueueKey: least key first, ties to the earlier pushed, so that a
 * search's order never depends on the heap's shape.  Set size (the entry's sizeof) before the
 * first push; queue_pop needs n > 0. */
typedef struct {
  double key;
  long order; /* set by queue_push */
} QueueKey;
typedef struct {
  unsigned char *v; /* cap + 1 entries: the last is scratch space */
  size_t size;
  int n, cap;
  long pushed;
} BestFirstQueue;
void queue_push(BestFirstQueue *q, const void *entry);
void queue_pop(BestFirstQueue *q, void *out);
double queue_least_key(const BestFirstQueue *q);
void queue_free(BestFirstQueue *q);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* qsort's comparison of two char * by strcmp. */
int compare_strings(const void *a, const void *b);
/* Reads a whole file; on failure reports "file: error: cannot read: <reason>" and returns NULL.
 * Files containing NUL bytes are rejected with a located error (they are never text).  The path
 * "-" is the standard input (a pipe, a terminal or a file; not a folder), named STDIN_NAME in
 * messages and read at most once per run: a second "-" is refused. */
char *read_text_file(const char *path, size_t *len_out);
#define STDIN_NAME "<stdin>"
/* The most candidates a generation ranks (--top), and shapes it adds (--variants): tune and
 * calibrate search a run's ranks again, so a results file ranking beyond it is refused. */
#define MAX_TOP 100000
bool is_stdio_path(const char *path); /* "-": the standard input or output */
/* What messages call an input: STDIN_NAME for "-", otherwise the path itself. */
const char *input_name(const char *path);
/* path made absolute and without "." and ".." (realpath), for a file that records it and is read
 * from elsewhere; a copy of path itself where realpath fails ("-", a file gone).  Malloc'ed. */
char *absolute_path(const char *path);
/* The folder part of path, as written: "dir" of "dir/name", "/" of "/name", "." when path has
 * no '/'.  Malloc'ed. */
char *path_folder(const char *path);
/* The first "folder/name", for name in names[0..count), that accept takes, folder being the
 * binary's: argv0's as given (when argv0 names a folder), then the running executable's
 * (/proc/self/exe: kasgen run through $PATH, or through a link from elsewhere).  The path
 * keeps argv0's spelling ("build/../library" for build/kasgen).  Malloc'ed; NULL if none. */
char *find_beside_binary(const char *argv0, const char *const names[], size_t count,
                         bool (*accept)(const char *path));
/* The same for a file already open on fd (name is for messages): refuses anything but a regular
 * file (a FIFO, a device, a folder) with a message saying what it is. */
char *read_text_fd(int fd, const char *name, size_t *len_out);
/* A number of a data file (a timing database, a results file, the calibration store) written as
 * a plain decimal: an optional sign, digits with an optional point and exponent for
 * parse_decimal ("12", "0.5", ".5", "1e-6"), digits alone for parse_decimal_long.  Nothing else
 * is read (no leading spaces, hex floats, inf or nan, which strtod takes); false as well beyond
 * the type's range.  *out is set only on success. */
bool parse_decimal(const char *s, double *out);
bool parse_decimal_long(const char *s, long *out);
/* Whether s is written as parse_decimal reads it, whatever its range: where parse_decimal
 * refuses such a number, it is out of a double's range ("1e400"), not malformed. */
bool is_plain_decimal(const char *s);
/* What the messages refusing such a number say it must be. */
#define PLAIN_DECIMAL "a plain decimal such as 0.25 or 1e-6"
/* The length in bytes of the control character that p starts with (a C0 code, DEL, a C1 code
 * U+0080-U+009F, or a bidirectional override or isolate U+202A-U+202E, U+2066-U+2069, in UTF-8:
 * what a terminal may act on or reorder), 0 when p starts with none. */
int control_char_len(const char *p);
/* The length in bytes of the valid UTF-8 character p starts with (1 for ASCII and the NUL), 0
 * when p starts with none: a stray byte, a truncated or overlong sequence, a surrogate or a code
 * point beyond U+10FFFF. */
int utf8_char_len(const char *p);
/* 3 when text starts with a UTF-8 BOM, else 0: what the spec lexer, ini_run and diagnostics'
 * source lines skip (util.c says why). */
int utf8_bom_len(const char *text);
/* Text from an input (a spec's or a GPU's name in a results file) made safe to print on a
 * terminal: valid UTF-8 as it is ("Ünterelement", "µ"), but each byte of a control character
 * (control_char_len), each byte that is not valid UTF-8, and a backslash written as a
 * three-digit octal escape ("\033", "\342\200\256", "\134"): nothing in it can act on the
 * terminal, and nothing in it reads as an escape that is not one. */
char *terminal_text(const char *s);
/* Text from an input (a spec path, a library's free text) made safe to embed in generated code:
 * the result means the same bytes inside a C string literal and cannot end or open a comment
 * (printable ASCII only; backslash, quote, '?', a '/' next to a '*' and every other byte are
 * written as three-digit octal escapes).  Every emitter embeds input strings through it. */
char *c_safe_text(const char *s);
/* FNV-1a (64 bits) of the string s, continuing from h (14695981039346656037 to start). */
uint64_t fnv1a(uint64_t h, const char *s);
/* Checked output to a file the user named (--dot): output_open reports and returns NULL;
 * output_close reports "write failed: <reason>; <what> is lost" and returns false when any write
 * to f or its close failed. */
FILE *output_open(const char *path);
/* A new file at path, written and then renamed into place by the caller: created exclusively,
 * never through a symbolic link; an earlier run's regular file there is replaced, anything else
 * refused (reported, NULL). */
FILE *output_open_temp(const char *path);
bool output_close(FILE *f, const char *path, const char *what);
/* Flushes stdout at the end of a command: returns status, or 1 (after an error saying the output
 * is lost) when any write to stdout failed (a full disk, a closed pipe). */
int stdout_checked(int status);
void diag_error(SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_warning(SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_note(SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* diag_warning, unless the same line (place and text) was warned about before in this run. */
void diag_warning_once(SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether key was passed here before in this run (remembered until exit); remembers it if not:
 * for a caller that says several such keys in one line of its own. */
bool diag_said_before(const char *key);
int diag_error_count(void);
/* The error just reported is in a value the command line gave, though only a file read since
 * could show it (a --layout name the spec lacks): the command failed for bad usage, and main
 * exits 2 (EXIT_USAGE), not 1, as for a value it refuses on sight. */
void diag_blame_command_line(void);
bool diag_command_line_blamed(void);
void diag_reset(void); /* also restarts the count of spelling-hint searches and the blame */
/* Seconds on a monotonic clock (for time budgets), less the time kasgen stood stopped by
 * Ctrl-Z, SIGTTIN or SIGTTOU: a search stopped and continued is not cut for the pause. */
double clock_seconds(void);
/* Adds a stop's seconds to what clock_seconds leaves out: interrupt.c's handler, when kasgen is
 * continued (async-signal-safe: a lock-free atomic add). */
void clock_add_stopped(double seconds);

/* Spelling hints ("did you mean 'mmul33'?") for an unknown name: the closest of the names a
 * caller offers, by Damerau-Levenshtein distance (optimal string alignment; letter case does not
 * count), accepted when the distance is at most HINT_MAX_DISTANCE and less than half the unknown
 * name's length.  Ties go to the fewer edits counting letter case, then to the name first in
 * strcmp order, so the hint never depends on the order names are offered in.  Work is bounded
 * on hostile input: a name longer than HINT_MAX_NAME gets no hint, a candidate whose length
 * differs by more than the accepted distance costs one comparison, any other costs a band of
 * 2 * HINT_MAX_DISTANCE + 1 cells per character, and a run searches at most HINT_MAX_SEARCHES
 * times (later unknown names get no hint). */
enum { HINT_MAX_DISTANCE = 2, HINT_MAX_NAME = 64, HINT_MAX_SEARCHES = 100 };
typedef struct {
  const char *name; /* the unknown name (not necessarily NUL-terminated) */
  size_t len;
  int limit;          /* the largest accepted distance; -1: no hint will be given */
  const char *best;   /* the closest name offered so far, NULL while none is close enough */
  int best_distance;  /* ignoring case */
  int best_case_cost; /* counting case (capped) */
  int best_id;        /* the caller's id of best */
} NameHint;
void name_hint_start(NameHint *h, const char *name, size_t len);
void name_hint_offer(NameHint *h, const char *candidate, int id);
/* The edit distance behind the hints, or cap + 1 when it exceeds cap (cap <= HINT_MAX_DISTANCE;
 * strings longer than HINT_MAX_NAME + cap count as far from everything). */
int edit_distance_capped(const char *a, size_t alen, const char *b, size_t blen, int cap,
                         bool fold_case);
/* Progress on stderr, only when stderr is a terminal. */
void progress(const char *what, long done, long total);
void progress_done(void);

/* A growable string buffer used by every emitter. */
typedef struct {
  char *data;
  size_t len, cap;
} StrBuf;
void sb_init(StrBuf *sb);
void sb_putc(StrBuf *sb, char c);
void sb_puts(StrBuf *sb, const char *s);
void sb_printf(StrBuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(StrBuf *sb);
char *sb_take(StrBuf *sb); /* returns the string and resets the buffer */

/* Long lists shortened for a table's line (an element's kernel has 128 calls): at most width
 * characters where they can be, the leading items, "...", the last item and the count.
 * brief_list: items split by sep ("a b ... z (128 calls)"); brief_kernels: a candidate's
 * kernels as "a+b | c+d", each kernel shortened, then the list of kernels. */
char *brief_list(const char *s, const char *sep, size_t width);
char *brief_kernels(const char *kernels, size_t width);
/* text's words (split at spaces) appended to sb from column col, each after a space but for
 * one at column 0; a word that would end past column width starts a new line instead, begun by
 * `next` ("\n *" inside a comment), which leaves the column at next_col.  A word longer than a
 * line stands alone on its line.  Columns count UTF-8 characters.  Returns the column where the
 * text ends. */
size_t sb_wrap_words(StrBuf *sb, const char *text, size_t col, size_t width, const char *next,
                     size_t next_col);
/* text wrapped so (from column 0), each further line indented by two spaces; no final newline.
 * malloc'ed.  The long sentences of report and tune within 80 columns. */
char *wrapped_text(const char *text, size_t width);
#define BRIEF_WIDTH 80 /* the widest list a table's line shows */
/* The harness's table shows a candidate's kernels on a line of their own under its figures,
 * from the column after its name (print_table, src/runtime/harness.cu): its brief
 * (kas_candidates.h) is shortened so that the line fits 80 columns.  kasgen report prints the
 * same table from the run's results file (report.c). */
#define HARNESS_BRIEF_WIDTH (80 - 10)

/* ------------------------------------------------------------------------------------------ */
/* spawn.c: running another program (gnuplot, nvcc, nvidia-smi, dot) without a shell           */
/* ------------------------------------------------------------------------------------------ */

/* Where the program's standard output or error goes. */
typedef enum {
  SPAWN_INHERIT,  /* kasgen's own (the default) */
  SPAWN_DEV_NULL, /* /dev/null */
  SPAWN_TO_FD,    /* the descriptor fd */
  SPAWN_CAPTURE,  /* kasgen's memory, at most max bytes (SpawnResult) */
} SpawnSink;
typedef struct {
  SpawnSink sink;
  int fd;     /* SPAWN_TO_FD */
  size_t max; /* SPAWN_CAPTURE */
} SpawnOutput;
typedef struct {
  /* Bytes fed on the standard input (then closed), or NULL for /dev/null (the program is not in
   * the terminal's foreground group: reading the terminal would stop it).  A program that stops
   * reading gets the rest no more: kasgen ignores SIGPIPE while it writes. */
  const char *input;
  size_t input_len;
  SpawnOutput out, err;
  /* > 0: the program is killed (SIGKILL), with every process of its group, and reaped this
   * many seconds after it started. */
  double timeout_s;
} SpawnOptions;
typedef enum {
  SPAWN_EXITED,      /* status: its exit status */
  SPAWN_SIGNALLED,   /* status: the signal it died of */
  SPAWN_TIMED_OUT,   /* killed at the deadline */
  SPAWN_NOT_STARTED, /* error: posix_spawn's (ENOENT: not installed) */
  SPAWN_BROKEN,      /* error: a pipe could not be made, or waiting for the program failed */
} SpawnEnd;
typedef struct {
  char *data; /* NUL-terminated (malloc'ed), NULL where nothing was captured */
  size_t len;
  bool cut; /* the output was longer than max: data holds its first max bytes */
} SpawnCapture;
typedef struct {
  SpawnEnd end;
  int status, error;
  SpawnCapture out, err;
} SpawnResult;
/* Runs argv[0] (on $PATH unless it holds a '/') with the arguments argv (NULL-terminated), as
 * opt says, and waits for it.  The program leads a process group of its own, which the deadline
 * and an interruption of kasgen kill (interrupt.c). */
SpawnResult spawn_run(char *const argv[], const SpawnOptions *opt);
/* The same in two steps, so that several programs run at once: spawn_start never waits (its
 * deadline counts from here); spawn_finish feeds the input, reads the outputs and waits, and
 * frees s.  Capturing outputs are read until they end: a program that leaves a process behind
 * holding one open is waited for until the deadline. */
typedef struct Spawn Spawn;
Spawn *spawn_start(char *const argv[], const SpawnOptions *opt);
SpawnResult spawn_finish(Spawn *s);
void spawn_result_free(SpawnResult *r); /* the captures */

/* ------------------------------------------------------------------------------------------ */
/* interrupt.c: Ctrl-C stops kasgen with the programs it started and its temporary files, Ctrl-Z */
/* stops and continues them with it                                                           */
/* ------------------------------------------------------------------------------------------ */

/* main: SIGINT, SIGTERM and SIGHUP (those not ignored) stop the programs' groups, remove the
 * temporaries, and end kasgen by the signal; SIGTSTP (Ctrl-Z), SIGTTIN and SIGTTOU stop the
 * programs' groups and kasgen, and continue the groups when kasgen is continued. */
void interrupt_install(void);
/* Blocks those signals (*before: the mask before), and sets the mask back. */
void interrupt_hold(sigset_t *before);
void interrupt_release(const sigset_t *before);
/* A running program's group (spawn.c), from its start until it is reaped. */
void interrupt_add_group(pid_t pgid);
void interrupt_drop_group(pid_t pgid);
/* A temporary file or folder (path relative to dirfd, or AT_FDCWD), removed when kasgen is
 * interrupted; dirfd stays open until it is dropped.  Folders are removed after the files
 * registered later, so a folder's files go first. */
void interrupt_add_temporary(int dirfd, const char *path);
void interrupt_drop_temporary(int dirfd, const char *path);

/* ------------------------------------------------------------------------------------------ */
/* pattern.c: access-pattern expressions, access sets, compatibility (docs/design.md §5.3)        */
/* ------------------------------------------------------------------------------------------ */

/* Integer expressions over tx ty tz bx by bz BX BY BZ i W (BX..BZ are the block sizes of the
 * implementation the pattern belongs to, W the reals per vector access).  Operators: + - * / %
 * unary -, parentheses, integer literals.  Division truncates toward zero as in C; division or
 * modulo by zero is an error. */
typedef struct Expr Expr;

typedef struct {
  long tx, ty, tz, bx, by, bz; /* thread and block coordinates */
  long BX, BY, BZ;             /* the implementation's block shape for this instantiation */
  long i;                      /* loop index of block/stride */
  long W;                      /* reals per vector access (BlockShape.w) */
} ExprEnv;

/* Parses src; on error reports at loc (col advanced to the offending character) and returns NULL. */
Expr *expr_parse(const char *src, SrcLoc loc);
/* Evaluates; returns false and reports at loc for division by zero or overflow. */
bool expr_eval(const Expr *e, const ExprEnv *env, long *out, SrcLoc loc);
void expr_free(Expr *e);

typedef enum { PAT_LS, PAT_IN, PAT_OUT } PatternRole;

/* One access pattern: thread t touches start(t) + sum_{c<k} stride(c) + b, k < count,
 * 0 <= b < block(k).  block and stride are evaluated with the same thread coordinates as start
 * and with i = k. */
typedef struct {
  char *start_src, *block_src, *stride_src;
  Expr *start, *block, *stride;
  int count; /* the count when it does not depend on the block shape, else -1 */
  char *count_src;  /* count expression (over BX BY BZ only), e.g. "(BY*9+3)/4" or "3" */
  Expr *count_expr;
  bool noreg;
  bool uses_w; /* an expression mentions W: the pattern needs a vector width to be evaluated */
  SrcLoc loc; /* where the pattern was written (INI file and line, col of the value) */
  SrcLoc start_loc, block_loc, stride_loc, count_loc; /* each expression's first character */
} Pattern;

/* The offsets one thread touches, sorted ascending, duplicates removed. */
typedef struct {
  long start;
  long *offsets;
  int n;
} AccessSet;

/* The shape of an instantiation: its block, and the width of its vector accesses (the pattern
 * variable W: reals per 16-byte access, 4 floats or 2 doubles, or 1 where arrays may be aligned
 * to their element type only; 0 = not bound, which a pattern using W refuses to evaluate). */
typedef struct {
  int bx, by, bz; /* block shape of the instantiation, all > 0 */
  int w;          /* W */
} BlockShape;

/* Computes thread `lin`'s access set (lin = tx + BX*(ty + BY*tz)).  false + diagnostic on an
 * evaluation error. */
bool pattern_access_set(const Pattern *p, BlockShape shape, int lin, AccessSet *out);
void access_set_free(AccessSet *s);
/* Two patterns are compatible for a shape when every thread has the same start and the same
 * offsets under both (the start must match too, because a register buffer is indexed relative
 * to it).  Patterns evaluated under different shapes with different thread counts are never
 * compatible. */
bool patterns_compatible(const Pattern *a, BlockShape sa, const Pattern *b, BlockShape sb);
/* Largest (offset - start) + 1 over all threads: the register array length of the buffer;
 * -1 + diagnostic on an evaluation error. */
int pattern_register_extent(const Pattern *p, BlockShape shape);
/* Parses a pattern value `start "e", block "e", stride "e", count "e"|N, noreg 0|1` (the
 * keywords in this order); loc points at the value's first character.  false + diagnostic. */
bool pattern_parse(const char *value, SrcLoc loc, Pattern *out);
void pattern_free(Pattern *p);
/* The number of rounds under a block shape (count evaluated with that BX BY BZ); -1 + diagnostic
 * on an evaluation error. */
long pattern_count(const Pattern *p, BlockShape shape);
/* Whether expression e mentions variable name ("tx", "BX", "i", ...). */
bool expr_uses(const Expr *e, const char *name);

/* ------------------------------------------------------------------------------------------ */
/* library.c: types.ini, function.ini, implementation INI files (docs/design.md §5)               */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
  char *name; /* lower case */
  int size;   /* floats */
  /* `check-inputs = near-identity`: k for a k x k matrix type (size k*k), whose values the
   * generated checks draw as the identity plus a small perturbation (a deformation gradient near
   * the reference: well-conditioned); 0 for any other type, drawn as +-[0.5, 1.5) */
  int near_identity;
  SrcLoc loc;
  SrcLoc check_loc; /* the check-inputs value, where a size that is no square is reported */
} KType;

typedef struct Function Function;
typedef struct Impl Impl;

typedef enum { ROUTINE_LOAD, ROUTINE_COMPUTE, ROUTINE_SAVE } RoutineKind;

/* Where a routine's definition lies in its implementation's cu_text: library_check finds it once,
 * and instantiation copies it from there instead of searching the text for every instance. */
typedef struct {
  size_t begin, end; /* offsets into cu_text */
  bool found;        /* false: not looked up (instantiation then searches) */
} TextSpan;

/* A load or save device function: d_<f>_<i>_load_<j> or d_<f>_<i>_save_<j>. */
typedef struct {
  RoutineKind kind;
  int index;     /* j */
  int arg;       /* loads: which compute input this load fills; saves: -1 */
  char *variant; /* "coalesced", "owner", ... (free text, shown to users) */
  char *symbol;  /* d_mmul33_2_load_0 */
  Pattern ls;    /* LSPATTERN: offsets of the buffer this thread writes (load) / reads (save) */
  bool contiguous; /* `contiguous = 1`: it moves the block's chunk as one run of E * size reals,
                      so it serves only arrays whose elements lie back to back (element-major,
                      no gap: GlobalBinding.record == size) */
  TextSpan def;    /* its definition in the implementation's cu_text */
} IoRoutine;

struct Impl {
  Function *fn;
  int index;   /* i in <f>_<i> */
  char *name;  /* "mmul33_2" */
  char *upper; /* "MMUL33_2": prefix of the block-size constants in the code */
  /* Block shape: dims[d] > 0 is fixed, 0 is `size` = elements per block E. Exactly one dim is
   * `size`; threads per element = product of the fixed dims. */
  int dims[3];
  int size_dim;      /* 0, 1 or 2 */
  int recommended_e; /* 0 if none */
  int batch;         /* elements per thread processed sequentially; 1 for all current impls */
  Pattern in[KAS_MAX_ARGS]; /* INPATTERN n */
  Pattern out;              /* OUTPATTERN */
  IoRoutine *loads;
  int nloads;
  IoRoutine *saves;
  int nsaves;
  char *compute_symbol; /* d_mmul33_2_compute */
  TextSpan compute_def; /* its definition in cu_text */
  char *cu_path;        /* .cu file with the device functions */
  char *cu_text;        /* its contents */
  char *ini_path;
};

struct Function {
  char *name;
  KType *params[KAS_MAX_ARGS];
  int nparams;
  KType *result;
  char *formula;    /* what it computes, plain text from function.ini; NULL when not given */
  char *ref_path;   /* CPU reference source file (C, double precision) */
  char *ref_symbol; /* e.g. ref_mmul33 */
  Impl *impls;
  int nimpls;
  SrcLoc loc;
  bool checked; /* library_check has checked its implementations */
};

typedef struct {
  char *dir;
  KType *types;
  int ntypes;
  Function *funcs;
  int nfuncs;
  char **texts; /* owned: the INI texts that the SrcLocs of types, functions and patterns show */
  int ntexts;
} Library;

/* Loads every INI and .cu under dir; reports all errors found (file:line) and returns NULL if any. */
Library *library_load(const char *dir);
/* library_load without checking the implementations (their access patterns evaluated at
 * sample block sizes, their .cu files searched for every routine: half of a small spec's run):
 * a command that uses some functions checks only those, by library_check. */
Library *library_open(const char *dir);
/* Checks every implementation of the functions flagged in used (indexed as lib->funcs; NULL:
 * every function) not checked yet: its patterns and its routines' definitions.  False after
 * reporting errors. */
bool library_check(Library *lib, const bool *used);
void library_free(Library *lib);
KType *library_find_type(const Library *lib, const char *name); /* case-insensitive */
Function *library_find_function(const Library *lib, const char *name);
/* The function or type whose name is closest to name[0 .. len-1] (a spelling hint, see
 * NameHint), or NULL when none is close enough. */
const Function *library_closest_function(const Library *lib, const char *name, size_t len);
const KType *library_closest_type(const Library *lib, const char *name, size_t len);
/* Thread count of impl at E elements per block, and its block shape. */
int impl_threads(const Impl *impl, int e);
BlockShape impl_shape(const Impl *impl, int e);
/* Resolves the library folder: --library, $KASGEN_LIBRARY, library/ beside the binary,
 * ../share/kasgen/library beside it, ./library (the first holding types.ini).  A folder named by
 * --library or $KASGEN_LIBRARY must be valid; NULL + diagnostic if nothing fits. */
char *library_locate(const char *cli_dir, const char *argv0);
/* Parses the text of one implementation INI file against an already loaded function (its
 * signature gives the buffer sizes) without reading the .cu file: the fuzzing entry point and
 * the core of library_load.  Returns false after reporting every error found. */
bool library_parse_impl_ini_text(const char *path, const char *text, Function *fn, Impl *out);
void library_impl_free(Impl *impl);

/* ------------------------------------------------------------------------------------------ */
/* target.c: what generated code is made for (docs/design.md §5.4): the real type, the layout of  */
/* every array the caller passes, the vector width, and how a routine addresses an array       */
/* ------------------------------------------------------------------------------------------ */

typedef enum { PREC_SINGLE = 0, PREC_DOUBLE = 1 } Precision;
/* element-major: element e of a value of s reals at p + e*s (array of structures);
 * component-major: component c of element e at p[c*ld + e] (structure of arrays). */
typedef enum { LAYOUT_ELEMENT = 0, LAYOUT_COMPONENT = 1 } Layout;

/* How generated code addresses one array in global memory: component c of element e lives at
 *   element-major:   p + offset + e * record + c
 *   component-major: p + offset * ld + e + c * ld
 * from the pointer p the caller passes, ld being the leading dimension (a run-time value, n by
 * default).  record is the reals of one element's record: the value's size, or the whole record
 * of an array whose slice the value is; offset is the slice's place in it (0 for a plain
 * variable).  The zero binding is a plain element-major variable (record = size). */
typedef struct {
  Layout layout;
  int size;   /* reals of the value per element */
  int record; /* reals per element record (>= offset + size); 0 = size */
  int offset; /* reals from the record's start */
} GlobalBinding;

/* Whether routines that move the block's chunk as one run may serve the array: element-major
 * and no gap between elements. */
bool binding_contiguous(const GlobalBinding *b);
/* Reals from p to component c of element e (the formula above); the unit tests' oracle. */
size_t binding_address(const GlobalBinding *b, size_t e, int c, size_t ld);
/* Whether contiguous routine io, asked for array b, moves a slice of element-major records with
 * kasgen's own chunk code (instantiate.c) instead of the library's text. */
bool binding_chunk_of_slice(const IoRoutine *io, const GlobalBinding *b);
/* The vector width (W) routine io runs at for array b in a plan of width w: 1 for a chunk of a
 * slice moved to or from global memory, w otherwise (staged: the kernel's shared copy of the
 * records).  The barrier analysis, the code and the model all take it from here. */
int binding_io_width(const IoRoutine *io, const GlobalBinding *b, bool staged, int w);

/* ------------------------------------------------------------------------------------------ */
/* instantiate.c: device-function text extraction and placeholder substitution (Kód 4.5)       */
/* ------------------------------------------------------------------------------------------ */

/* Placement of one pattern argument of a routine. */
typedef enum { PLACE_SHARED = 0, PLACE_REGISTER = 1 } Placement;

/* Extracts the full definition of device function `symbol` from the implementation's .cu text
 * (from the line holding its qualifiers to the matching brace).  NULL + diagnostic if absent. */
char *instantiate_extract(const Impl *impl, const char *symbol);
/* Finds the definition of `symbol` in C/CUDA text: [*begin, *end) runs from the start of the line
 * holding KAS_DEV to the matching closing brace, skipping comments and string literals.  false
 * when there is no definition (a declaration or a call does not count). */
bool instantiate_find(const char *text, const char *symbol, size_t *begin, size_t *end);
/* Checks the definition of symbol against the device-code rules of docs/library-format.md: no
 * barriers (__sync*), no __shared__, no threadIdx/blockIdx/blockDim/gridDim, no atomics (outside
 * comments and strings), and only one definition.  false + diagnostic (path:line:col). */
bool instantiate_check_rules(const char *path, const char *text, const char *symbol);
/* What instantiate_routine makes: one routine of an implementation at E elements per block,
 * with a placement per pattern argument. */
typedef struct {
  RoutineKind kind;
  int io_index;     /* load/save j; 0 for the compute */
  int e;            /* elements per block: the new name's _e<E> */
  BlockShape shape; /* the implementation's block at E (impl_shape(impl, e)) and the vector width:
                       the numbers its block-size constants, BX/BY/BZ and W become */
  Placement place[KAS_MAX_ARGS + 1]; /* per pattern argument, in argument order */
  Precision precision; /* what `real` becomes */
  GlobalBinding global; /* load/save: how GIDX(e, c) addresses its array (zero: element-major) */
  bool hint_rows; /* a load of component-major rows reads g[...] through kas_row_load (_cm_l2_256);
                     other routines ignore it */
} RoutineRequest;

/* The thread coordinates a routine takes. */
enum { COORD_TX = 1, COORD_TY = 2, COORD_TZ = 4 };

typedef struct {
  char *text;      /* the definition */
  char *name;      /* <symbol>_e<E>_<suffix> */
  unsigned coords; /* the coordinate parameters it keeps (COORD_*), in the order tx, ty, tz */
  bool takes_ld;   /* its last parameter is size_t ld (a component-major array) */
} RoutineInstance;

/* The routine instantiated: renamed <symbol>_e<E>_<suffix> (suffix: one 's'/'r' per pattern
 * argument, in argument order), the block-size constants <UPPER>_BX/BY/BZ replaced by numbers,
 * and APLS/APINn/APOUT by the pattern's start expression (shared; parenthesized only where the
 * context needs it) or by 0 (register; "APLS + k" becomes "k").  A coordinate parameter (tx, ty,
 * tz) that the body only discards ("(void)ty;") is dropped with the lines that discard it, and
 * the signature is laid out anew within 100 columns.  false after a diagnostic. */
bool instantiate_routine(const Impl *impl, const RoutineRequest *rq, RoutineInstance *out);
void routine_instance_free(RoutineInstance *ri);

/* ------------------------------------------------------------------------------------------ */
/* spec.c: lexer and parser of the spec language (docs/design.md §3)                              */
/* ------------------------------------------------------------------------------------------ */

/* Limits of the spec language.  Loops are unrolled by the parser (docs/loops.md), so these
 * bound what hostile input can make it build: statements after unrolling, loop nesting, array
 * dimensions.  The DAG holds fewer calls still (KAS_MAX_NODES; dag_build says so). */
#define KAS_MAX_SPEC_CALLS 4096  /* unrolled statements per spec */
#define KAS_MAX_LOOP_DEPTH 8     /* loops nested in loops */
#define KAS_MAX_DIMS 3           /* dimensions of an array */

/* A declared name, or one element of a declared array.  Each array element is a variable of its
 * own for SSA purposes: `vector3 dphi[4];` makes the array variable dphi (ndims 1, which holds
 * no value itself and never appears in a VarRef) followed at once by its four elements
 * "dphi[0]" .. "dphi[3]" (vars first_elem .. first_elem + 3, in flat C order). */
typedef struct {
  char *name;  /* as declared; an element: "dphi[1]", "B[0][3]" */
  KType *type; /* of the variable, or of one element of an array */
  SrcLoc loc;  /* declaration (an element: its array's) */
  bool is_input;
  bool is_output;
  int ndims;              /* an array: 1..KAS_MAX_DIMS; otherwise 0 */
  int dims[KAS_MAX_DIMS]; /* an array's extents, outermost first */
  int nelems;             /* an array: product of dims; otherwise 1 */
  int first_elem;         /* an array: var index of its element 0; otherwise -1 */
  int array;              /* an element: var index of its array; otherwise -1 */
  int elem;               /* an element: flat C-order index in its array; otherwise 0 */
  int nversions;          /* SSA versions: an input has 1, each assignment adds 1 */
} SpecVar;

/* A reference to one SSA version of a variable. version 0 of an input is its input value. */
typedef struct {
  int var;
  int version;
  SrcLoc loc;
} VarRef;

/* An unrolled call.  Besides what the DAG needs it keeps its provenance: the source call it is
 * an instance of and the values of the loop variables of the loops around that call, outermost
 * first.  Two statements are the same source statement in different iterations exactly when
 * their `source` is equal and their iter[] differ; source equal implies the same loop nest. */
typedef struct {
  Function *fn;
  VarRef result; /* the new version this statement defines */
  VarRef args[KAS_MAX_ARGS];
  int nargs;
  SrcLoc loc;    /* the function name in the source */
  int source;    /* index into spec->sources */
  int loop;      /* innermost enclosing loop (index into spec->loops), -1 at top level */
  int depth;     /* number of enclosing loops: iter[0 .. depth-1] are valid */
  int iter[KAS_MAX_LOOP_DEPTH]; /* iter[d]: value of the variable of the enclosing loop of
                                   depth d (spec->loops[..].depth == d) */
} Statement;

/* One index of an array reference as written: a literal (loop -1, value offset), or a loop
 * variable plus a constant (v[N-1]: loop = N's loop, offset -1). */
typedef struct {
  int loop;
  int offset;
  SrcLoc loc;
} SpecIndex;

/* A variable as written in a call, before unrolling: a plain variable, or an array with one
 * index per dimension. */
typedef struct {
  int var; /* a plain variable or an array, never an element */
  int nidx; /* 0, or the array's ndims */
  SpecIndex idx[KAS_MAX_DIMS];
  SrcLoc loc;
} SourceRef;

/* A call as written in the source.  Its instances are statements with this `source`: one at
 * top level, one per iteration of the loops around it. */
typedef struct {
  Function *fn;
  SourceRef result;
  SourceRef args[KAS_MAX_ARGS];
  int nargs;
  SrcLoc loc;      /* the function name */
  int loop;        /* innermost enclosing loop, -1 at top level */
  int pos;         /* position in the enclosing body (loops[loop].body, or spec->body) */
  int first_stmt;  /* its first instance */
  int ninstances;
} SourceCall;

/* An item of a body: a source call or a loop. */
typedef struct {
  bool is_loop;
  int index; /* into spec->loops or spec->sources */
} SpecItem;

/* A loop of the source: `for var in lo..hi { body }`.  Unrolling keeps order, so the statements
 * of one iteration are contiguous (calls_per_iteration of them, in body order, nested loops
 * unrolled in place), and so are the iterations of one instance of the loop (ascending). */
typedef struct {
  char *var;       /* the loop variable */
  int lo, hi;      /* half-open: var = lo, lo + 1, ..., hi - 1 */
  int parent;      /* enclosing loop, -1 at top level */
  int depth;       /* 0 at top level; a statement's iter[depth] is this loop's variable */
  int pos;         /* position in the enclosing body */
  SrcLoc loc;      /* the `for` keyword */
  SpecItem *body;
  int nbody;
  int calls_per_iteration; /* unrolled statements of one iteration */
} SpecLoop;

typedef struct {
  char *path;      /* as the main job was given it: the generated code names it in comments */
  char *read_from; /* the file read, where tune or calibrate read it elsewhere; NULL: path */
  char *name; /* file stem: "stvenant" */
  char *text;
  SpecVar *vars;
  int nvars;
  Statement *stmts; /* unrolled, in execution order */
  int nstmts;
  VarRef *outputs; /* the version current at the return statement; an array: each element */
  int noutputs;
  int *inputs; /* var indices in the order of the `input` line; an array: each element, flat C
                  order.  One per DAG input value. */
  int ninputs;
  int *input_args;  /* the `input` line's names (plain variables or arrays): the arguments of
                       generated APIs, in order */
  int ninput_args;
  int *output_args; /* the `return` line's names, in order */
  int noutput_args;
  SourceCall *sources; /* the calls as written, in source order */
  int nsources;
  SpecLoop *loops;     /* in source order (a parent before its children) */
  int nloops;
  SpecItem *body;      /* the top level: calls and loops in source order */
  int nbody;
} Spec;

/* Parses and checks a spec against the library. NULL after reporting every error found. */
Spec *spec_parse(const char *path, const char *text, const Library *lib);
/* Reads and parses the file at path; "-" is the standard input, called STDIN_NAME in messages
 * and named SPEC_STDIN_STEM. */
Spec *spec_load(const char *path, const Library *lib);
#define SPEC_STDIN_STEM "stdin"
void spec_free(Spec *spec);
/* "name" when the variable has one version, "name.k" when it is reassigned (the DAG's value
 * label); malloc'ed. */
char *spec_value_label(const Spec *spec, VarRef r);
/* A statement as `kasgen check` shows it: "[N=1, M=2] ns.2 = mvmul33(inv1, dphi[1])", without
 * the bracket at top level; malloc'ed. */
char *spec_statement_text(const Spec *spec, int stmt);
/* A reference of statement stmt's source call, "dphi[N+1]", and the call, "ns = mvmul33(inv1,
 * dphi[N])", as written but for the variables of loops other than `loop` (-1: every one), which
 * take their values in stmt's iteration; malloc'ed. */
char *spec_ref_text(const Spec *spec, const SourceRef *r, int stmt, int loop);
char *spec_source_text(const Spec *spec, int stmt, int loop);
/* Whether statement stmt was unrolled from loop (directly or in a loop nested in it). */
bool spec_statement_in_loop(const Spec *spec, int stmt, int loop);
/* The arrays (extents, element type, input/output, floats per element) and the loops (ranges,
 * bodies as written, the unrolled calls of each source call); nothing for a spec with neither. */
void spec_print_structure(const Spec *spec, FILE *out);

/* ------------------------------------------------------------------------------------------ */
/* dag.c: the call DAG                                                                         */
/* ------------------------------------------------------------------------------------------ */

/* A value is one SSA version: produced by a node (or an input of the spec), read by nodes. */
typedef struct {
  int var, version;
  int producer;  /* node index, -1 for a spec input */
  int *consumers; /* node indices, ascending, each once */
  int nconsumers;
  bool is_output; /* returned by the spec */
  KType *type;
  char *label; /* "vec3NodeStiff.1" for messages and code */
  /* Where an input or output value lives in the generated API (and the CPU graph, the harness
   * and the embed API): argument `arg` (an index into dag->in_args for an input, producer -1,
   * or into dag->out_args for an output; a value is never both), at float `arg_offset` of that
   * argument's per-element record of `arg_record` floats.  A plain variable: offset 0, record
   * = type size; array element k: offset k * type size, record = elements * type size.  An
   * intermediate value: arg -1, offset 0, record 0. */
  int arg;
  int arg_offset;
  int arg_record;
  /* In the DAG of one iteration of a loop run by groups of threads (threads.c): the reals group
   * g finds this value further into its argument's record, per g (arg_offset is group 0's);
   * 0 for a value every group shares, and in any other DAG. */
  int group_stride;
  int group_stride2; /* the same per iteration of the inner loop of groups (Dag.group_loop2) */
} Value;

/* One argument of the generated API: a plain input or output variable, or a whole array (one
 * pointer; element e's record is `record` floats at p + e * record). */
typedef struct {
  int var;      /* the spec variable: plain, or the array */
  KType *type;  /* of one value */
  int nvalues;  /* 1, or the array's element count */
  int *values;  /* the dag value of each element, flat C order */
  int record;   /* floats per mesh element: nvalues * type size */
} DagArg;

typedef struct {
  Function *fn;
  int stmt; /* index of the statement = node index */
  int args[KAS_MAX_ARGS]; /* value indices */
  int nargs;
  int result; /* value index */
} DagNode;

typedef struct {
  const Spec *spec;
  DagNode *nodes;
  int nnodes;
  Value *values;
  int nvalues;
  NodeSet *succ;  /* direct successors per node */
  NodeSet *pred;  /* direct predecessors */
  NodeSet *reach; /* nodes reachable from each node (excluding itself) */
  int *inputs;    /* value indices of the spec's inputs, in `input`-line order */
  int ninputs;
  int *outputs;   /* value indices of the returned versions, in `return` order */
  int noutputs;
  DagArg *in_args;  /* the API's input arguments, in `input`-line order */
  int nin_args;
  DagArg *out_args; /* the API's output arguments, in `return`-line order */
  int nout_args;
  /* threads.c's DAG of one iteration of loop group_loop, whose iterations group_first ..
   * group_first + groups - 1 run side by side in groups of threads; groups 0 for a spec's DAG.
   * Its nodes are the iteration's calls (stmt: the spec's statement of iteration group_first),
   * its API arguments the spec's. */
  int groups, group_loop, group_first;
  /* With an inner loop in groups too: group g runs iteration group_first + g / groups2 of
   * group_loop and group_first2 + g % groups2 of group_loop2 (groups2 1, group_loop2 -1: none). */
  int groups2, group_loop2, group_first2;
} Dag;
/* Node indices are statement order, hence topological: every edge goes from a lower index to a
 * higher one (fusion.c relies on it).  Values: the inputs first (input-line order), then one per
 * statement, value ninputs + i produced by node i. */

/* NULL after a located error when the spec has more calls than a DAG holds (KAS_MAX_NODES). */
Dag *dag_build(const Spec *spec);
/* Fills dag->reach from dag->succ (every edge from a lower node index to a higher one). */
void dag_close_reach(Dag *dag);
/* Adds node to value v's consumers (nodes come in ascending order; f(x, x) adds it once). */
void dag_add_consumer(Value *v, int node);
/* The groups of threads a kernel planned on dag runs per block: threads.c's DAG's, else 1. */
static inline int dag_groups(const Dag *dag) { return dag->groups > 1 ? dag->groups : 1; }
void dag_free(Dag *dag);
/* Floats per element of a value (its type's size), and its label for messages and comments
 * ("vec3NodeStiff.1"; the variable's name when the DAG was built without labels). */
int dag_value_floats(const Dag *dag, int value);
const char *dag_value_label(const Dag *dag, int value);
/* "<variable>_<version>", a value's name in generated code: unique because the version after the
 * last '_' is a plain number, but for an array element ("B_1_2_0" for B[1][2]) or a value of
 * threads.c's groups ("f_N_0" for f[N]), which a plain variable B_1_2 or f_N would share. */
char *dag_value_ident(const Dag *dag, int value);
/* A name that two values of dag would share in generated code (malloc'ed; they are values *a and
 * *b), or NULL when every value's is its own. */
char *dag_duplicate_ident(const Dag *dag, int *a, int *b);
/* API argument k of the generated code, inputs first: in_args[k] for k < nin_args, else
 * out_args[k - nin_args]; and its name (the spec's plain variable or array). */
const DagArg *dag_api_arg(const Dag *dag, int k);
const char *dag_arg_name(const Dag *dag, const DagArg *arg);
void dag_write_dot(const Dag *dag, FILE *out);
/* The same DAG with the calls of each kernel drawn in a labelled cluster (a chosen partition). */
typedef struct {
  NodeSet nodes;
  const char *label;
} DotKernel;
void dag_write_dot_kernels(const Dag *dag, const DotKernel *kernels, int nkernels, FILE *out);

/* target.c, continued: the target of one generation (--precision, --layout). */
typedef struct {
  Precision precision;
  int w;            /* reals per vector access of contiguous routines (the pattern variable W):
                       16 bytes (4 floats, 2 doubles); 1 for arrays aligned to their type only */
  Layout *inputs;   /* per API input argument (dag->in_args: a plain variable or a whole array),
                       in `input` order (NULL: all element-major) */
  Layout *outputs;  /* per API output argument (dag->out_args), in `return` order */
  int ninputs, noutputs;
  bool misaligned_rows; /* component-major rows may start mid-sector (the plan for arrays of
                           any alignment): the model charges the sectors they share, and a
                           kernel may stage its outputs' rows (staging.c) */
} Target;

/* single precision, every array element-major, 16-byte vector accesses: what kasgen made before
 * it knew targets, and what a NULL target means wherever one is taken. */
const Target *target_default(void);
int target_real_bytes(Precision p);                 /* 4, 8 */
const char *target_real_name(Precision p);          /* "float", "double" */
const char *target_precision_name(Precision p);     /* "single", "double" */
int target_vector_width(Precision p);               /* reals per 16 bytes: 4, 2 */
const char *target_layout_name(Layout l);           /* "element", "component" */
/* One item of a --layout text: "element", "component" or "NAME=element|component". */
typedef struct {
  const char *text;     /* the item, len bytes (not terminated: the list goes on) */
  size_t len, name_len; /* name_len: of the NAME before '=' */
  bool named;           /* NAME=...; else the layout of every array */
  Layout layout;
} LayoutItem;
/* The item at *s, *s moved past it and its comma; false when its word is neither element nor
 * component.  The one reading of --layout: the command line's (target_new) and the results
 * file's (results.c). */
bool layout_item_next(const char **s, LayoutItem *it);
/* Whether every item of a --layout text is one target_new reads, its names aside (they are
 * checked against a spec); else *bad and *bad_len give the first item that is not. */
bool target_layouts_valid(const char *layouts, const char **bad, int *bad_len);
/* The same, with an error at where naming the first item that is not (the command line's
 * --layout, a value in generation.ini, target_new's). */
bool target_layouts_check(const char *layouts, SrcLoc where);
/* A target for dag: precision, then the layouts from a --layout text (NULL: all element-major):
 * a comma-separated list of `element`, `component` (every array) and `NAME=element|component`
 * (the spec input or output NAME), later items overriding earlier ones.  NULL after a
 * diagnostic naming the bad item. */
Target *target_new(const Dag *dag, Precision precision, const char *layouts);
/* The same, its diagnostics at where (target_new's: at "--layout"; a results file's: at its
 * layout attribute). */
Target *target_new_at(const Dag *dag, Precision precision, const char *layouts, SrcLoc where);
/* The --layout value that gives t's layouts for dag, written one way whatever way it was given:
 * the shorter of the component-major arrays named ("element" when none is: "A=component,
 * B=component") and "component" with the element-major ones named ("component,C=element"),
 * the first on a tie.  malloc'ed. */
char *target_layout_option(const Target *t, const Dag *dag);
/* Whether a and b lay out every API argument of dag alike. */
bool target_same_layouts(const Target *a, const Target *b, const Dag *dag);
/* The same target for arrays of any alignment: w = 1, and component-major rows that may start
 * mid-sector (misaligned_rows, when there are component-major arrays). */
Target *target_unaligned(const Target *t);
void target_free(Target *t);
/* Whether any array of the target is component-major (its code then takes a leading dimension). */
bool target_has_component(const Target *t);
/* The layout of API argument k (dag_api_arg numbering: inputs, then outputs). */
Layout target_arg_layout(const Target *t, const Dag *dag, int k);
/* The layout of a value's global array: its API argument's (an array element: the whole
 * array's), element-major for intermediates (the workspace is kasgen's own).  Its binding
 * places an array element at its offset in the array's record. */
Layout target_value_layout(const Target *t, const Dag *dag, int value);
GlobalBinding target_binding(const Target *t, const Dag *dag, int value);
/* Whether load or save routine io may move the value (a contiguous routine needs a contiguous
 * binding). */
bool target_allows(const Target *t, const Dag *dag, int value, const IoRoutine *io);

/* ------------------------------------------------------------------------------------------ */
/* fusion.c: valid (convex) fusions, docs/design.md §6 step 1                                     */
/* ------------------------------------------------------------------------------------------ */

/* The sets are stored packed: each in the nwords low words that the DAG's nodes need (one word
 * up to 64 calls), so that millions of fusions of a small spec cost what they did as 64-bit
 * masks.  fusion_set_get unpacks one. */
typedef struct {
  uint64_t *words; /* set i is words[i * nwords ... i * nwords + nwords - 1] */
  int nwords;
  int n, cap;
  bool truncated; /* more than the limit: sets is incomplete (fusion_enumerate reported it) */
  bool timed_out; /* the deadline came first (fusion_enumerate_until): sets is incomplete */
} FusionSet;
#define KAS_MAX_FUSIONS 20000000

static inline NodeSet fusion_set_get(const FusionSet *fs, int i) {
  NodeSet s = {{0}};
  for (int k = 0; k < fs->nwords; k++) s.w[k] = fs->words[(size_t)i * (size_t)fs->nwords + k];
  return s;
}
bool fusion_is_convex(const Dag *dag, NodeSet set);
/* All convex, non-empty node sets of size <= max_size, in a deterministic order (by size, then
 * by lowest node indices).  More than KAS_MAX_FUSIONS is an error (reported; truncated set). */
FusionSet fusion_enumerate(const Dag *dag, int max_size);
/* The same, stopping silently once more than `limit` sets exist (truncated set, no diagnostic):
 * the search asks whether exact search is affordable. */
FusionSet fusion_enumerate_limited(const Dag *dag, int max_size, long limit);
/* ... and stopping at a clock_seconds() deadline too (0: none), silently, with timed_out set:
 * --exhaustive's count of millions of fusions runs under the search's time budget. */
FusionSet fusion_enumerate_until(const Dag *dag, int max_size, long limit, double deadline);
/* How many there are, counted without keeping them (no memory for 20 million sets): at most
 * limit, limit + 1 for more; -1 when the deadline came first. */
long fusion_count_until(const Dag *dag, int max_size, long limit, double deadline);
void fusion_set_free(FusionSet *fs);

/* ------------------------------------------------------------------------------------------ */
/* timingdb.c: per-GPU timing database (docs/design.md §8); schema in docs/timingdb.md            */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
  int e;           /* elements per block */
  int extra_smem;  /* bytes of extra dynamic shared memory */
  double ns;       /* nanoseconds per element */
} TimingPoint;

/* One routine's timings.  The fields before points are its key: a routine is timed per
 * placement, precision, layout of the array it moves and vector width (schema version 2;
 * docs/timingdb.md).  A key for timingdb_find leaves points NULL. */
typedef struct {
  char *impl;      /* "mmul33_2" */
  RoutineKind kind;
  int index;       /* load/save j; 0 for compute */
  Placement placement; /* where the routine's pattern buffer lived while timed */
  Precision precision; /* the real type it moved (a version-1 database: single) */
  Layout layout;   /* of the array a load or save moved; element for a compute */
  int width;       /* the W it was instantiated with (version 1: 4) */
  TimingPoint *points;
  int npoints;
  /* The loader's index for fast lookups (NULL in a routine built by hand, which is looked up
   * point by point, with the same result): the points sorted by (e, extra_smem), ties in file
   * order; the distinct E values ascending, and where each one's points start in by_e
   * (e_start[ne] = npoints). */
  TimingPoint *by_e;
  int *e_values, *e_start;
  int ne;
  double min_ns; /* the least ns of any point: no interpolated value is below it */
} RoutineTiming;

typedef struct {
  char *name, *slug;
  int sm_count, smem_per_sm, smem_per_block_optin, regs_per_sm, regs_per_block;
  int max_threads_per_sm, max_blocks_per_sm, max_threads_per_block, warp_size;
  long l2_bytes;
  double copy_gbs;          /* measured device-to-device copy bandwidth, (read+write) GB/s */
  double launch_overhead_ns;
} DeviceLimits;

/* The model's constants fitted to measured fused kernels of one GPU (`kasgen calibrate`,
 * calibrate.c, docs/model.md), read from <database>.measured.xml beside the database:
 *   t(kernel) = hypot(work_scale * (max(IO', COMPUTE) + unhidden_share * min(IO', COMPUTE)),
 *                     floor) + barrier_scale * barriers + barrier_warp_ns * barrier_warps
 *               + spills + kernel_ns
 *   IO' = max((REQ^p + REST^p)^(1/p), wavefront_scale * wavefronts), p = requests_overlap
 *         (1: their sum)
 *   REQ = requests_one_scale * requests_one
 *         + requests_shared_scale * (requests_shared + coverage_slope * (requests_shared_covered
 *                                                        - requests_shared / 2))
 *   REST = IO - requests_one - requests_shared - lines + lines_scale * lines
 * Without a calibration (present false) the factors are 1, p 1, coverage_slope,
 * unhidden_share, wavefront_scale, barrier_warp_ns and kernel_ns 0. */
typedef struct {
  bool present;
  double work_scale;    /* on a kernel's memory or compute time */
  double requests_one_scale, requests_shared_scale; /* on ModelTerms' parts of IO, */
  double lines_scale;                               /* relative to the rest */
  double requests_overlap; /* p >= 1: how far the requests' time overlaps the other moves */
  double coverage_slope;   /* how the rate of several threads' requests varies with the share
                              of the record the kernel saves */
  double barrier_scale; /* on its barrier time */
  double barrier_warp_ns; /* on ModelTerms.barrier_warps: a barrier's wait per warp of the block */
  double unhidden_share;  /* in [0, 1]: the share of the lesser of IO' and COMPUTE that the
                             greater does not hide */
  double wavefront_scale; /* on ModelTerms.wavefronts, a floor under IO' (0: none) */
  double kernel_ns;     /* a fixed cost per kernel, ns per element */
  int nspecs, ncandidates; /* what it was fitted on */
} ModelCalibration;

/* The first run (<spec device>) of the calibration store beside a database measured on another
 * GPU than the database's, found by the same reading as the constants (calibration_read): what
 * tune warns of and calibrate refuses (calibration_same_gpu).  device NULL when there is none.
 * The strings are owned: other_gpu_run_free. */
typedef struct {
  char *device;
  char *store, *text; /* the store's path and text, for a located message */
  int line;           /* where the run's <spec> starts */
} OtherGpuRun;
void other_gpu_run_free(OtherGpuRun *run);

typedef struct {
  char *path;
  DeviceLimits dev;
  ModelCalibration calib;
  OtherGpuRun calib_other_gpu; /* read with calib (cli_load_timingdb) */
  char *date, *nvcc_version;
  RoutineTiming *routines;
  int nroutines;
  int *by_min_ns; /* routine indices by ascending min_ns (the loader's; NULL when built by hand) */
  bool analytic; /* true when no database was read: built-in H100 limits, analytic model */
  bool for_local_gpu; /* the default, chosen as this machine's GPU's (cli_load_timingdb) */
} TimingDb;

/* xml_input.c: parses an XML file that crossed machines (a database, a results file) held in
 * memory: no network, no DTD (a <!DOCTYPE> is refused where it starts, so no entity is ever
 * expanded).  NULL after a located error. */
struct _xmlDoc;
struct _xmlNode;
struct _xmlDoc *xml_read_untrusted(const char *path, const char *text, size_t len);
/* The line where an element of such a document starts, also past libxml2's 65535; 0 unknown. */
long xml_line(const struct _xmlNode *node);
/* Where in text, the document's source, a message about an element of it points: its start
 * tag's '<' (a message about the element: an attribute it lacks, one too many); the value of its
 * attribute attr (about that value), or the element's '<' where its tag does not hold attr.  The
 * line alone where the text does not show the tag. */
TextPlace xml_element_place(const char *text, const struct _xmlNode *node);
TextPlace xml_attr_place(const char *text, const struct _xmlNode *node, const char *attr);

/* The same reading as a stream, for files too large to hold as a tree (a timing database of
 * 100,000 elements): no tree is built; each element's start tag reaches `start` and its end tag
 * `end`, with its depth (0 for the root), the line where its start tag ends (as xml_line gives)
 * and its attributes as NUL-terminated strings, valid during the call only.  Text is ignored.
 * A handler returns false to stop the reading (too many errors).  false after a located error
 * of the XML itself (what the handlers report is theirs to count). */
typedef struct {
  const char *name;
  int depth, line;
  int nattrs;
  const char *const *attr_names;
  const char *const *attr_values;
} XmlElement;
typedef struct {
  void *ctx;
  bool (*start)(void *ctx, const XmlElement *el);
  bool (*end)(void *ctx, const XmlElement *el); /* name, depth and line; no attributes */
} XmlHandler;
bool xml_stream_untrusted(const char *path, const char *text, size_t len, const XmlHandler *h);
/* The value of an element's attribute, or NULL. */
const char *xml_attr(const XmlElement *el, const char *name);

/* The database in the file at path, or on the standard input for "-" (--db -), which messages,
 * db->path and the ranking call STDIN_NAME; NULL after a located error. */
TimingDb *timingdb_load(const char *path);
/* The schema version this kasgen writes; it also reads version 1 (single precision,
 * element-major, W = 4 throughout). */
#define TIMINGDB_VERSION 2
TimingDb *timingdb_analytic(void);          /* H100 limits, no routine timings */
void timingdb_free(TimingDb *db);
/* ns per element of the routine key names at (e, extra_smem), interpolated; false if absent. */
bool timingdb_lookup(const TimingDb *db, const RoutineTiming *key, int e, int extra_smem,
                     double *ns_out);
/* Whether the database times any routine of this precision, layout and width (0: any). */
bool timingdb_has(const TimingDb *db, Precision precision, Layout layout, int width);
/* benchmarks/nvidia-h100-80gb-hbm3.xml beside the binary (dir of argv0 or of /proc/self/exe:
 * benchmarks/, ../benchmarks/, ../share/kasgen/benchmarks/), else ./benchmarks/; the first that
 * exists (malloc'ed), or NULL when none does. */
char *timingdb_default_path(const char *argv0);
/* A GPU's name as its database's file is named: "NVIDIA H200" -> "nvidia-h200" (lower-case
 * letters and digits, one '-' for each run of others; as kasbench names the file it writes). */
char *timingdb_slug(const char *gpu_name);
/* <slug>.xml beside the default database, when it exists (malloc'ed), else NULL. */
char *timingdb_path_for_gpu(const char *default_path, const char *gpu_name);

/* local_gpu.c: this machine's GPU's name ($KASGEN_GPU, else nvidia-smi; malloc'ed), or NULL
 * when there is none, it cannot be told, or there are several of different names. */
char *local_gpu_name(void);
/* Parses a database held in memory (path names it in messages); NULL after a located error. */
TimingDb *timingdb_parse(const char *path, const char *text, size_t len);
/* The entry of the routine key names (with >= 1 point), or NULL; and its interpolated, clamped
 * ns per element. */
const RoutineTiming *timingdb_find(const TimingDb *db, const RoutineTiming *key);
double timingdb_routine_ns(const RoutineTiming *r, int e, int extra_smem);

/* ------------------------------------------------------------------------------------------ */
/* The kernel plan: one fusion with every decision made (combine.c and the stages it drives)   */
/* ------------------------------------------------------------------------------------------ */

/* A buffer of the kernel: one Value that lives inside the kernel.  It names the routines that
 * move it to and from global memory, so that no consumer has to look them up again. */
typedef struct {
  int value;        /* index into dag->values */
  Placement place;  /* register or shared */
  int offset;       /* shared: byte offset into the dynamic shared array; register: -1 */
  int bytes;        /* shared: E * type size * 4 */
  int reg_floats;   /* register: floats per thread (pattern_register_extent) */
  const IoRoutine *load; /* the load routine filling it from global memory; NULL when a call
                            of the kernel produces it */
  int load_call;    /* position (in order[]) of the call whose implementation provides `load` */
  int producer;     /* position of the call producing it; -1 when loaded */
  const IoRoutine *save; /* the producer's save routine writing it to global memory (a kernel
                            output); NULL when it stays inside */
  int first_use, last_use; /* live range in steps (see KernelPlan.steps) */
  char *why;        /* human-readable reason for the placement (--explain) */
} Buffer;

/* A step is one routine call in the kernel body, in emission order.  It holds what it calls and
 * the buffer of each of the routine's pattern arguments. */
typedef struct {
  RoutineKind kind;
  int call;              /* position in KernelPlan.order */
  const Impl *impl;      /* the implementation providing the routine: KernelPlan.impl[call] */
  const IoRoutine *io;   /* load/save: the routine; compute: NULL */
  int buf[KAS_MAX_ARGS + 1]; /* buffers in the routine's argument order: compute: the inputs,
                                then the output; load/save: buf[0] */
  int nbuf;
  bool barrier_before;   /* __syncthreads() before this step */
  char *barrier_why;     /* why it stays (--explain), NULL if none */
  bool recompute_coords; /* thread coordinates differ from the kernel's block shape */
} Step;

typedef struct {
  NodeSet nodes;
  int *order;      /* node indices in execution order (linearization) */
  int ncalls;
  Impl **impl;     /* per call */
  int e;           /* elements per block */
  BlockShape block;/* kernel block shape (the largest call's) */
  int threads;
  Buffer *buffers;
  int nbuffers;
  Step *steps;
  int nsteps;
  int smem_bytes;  /* peak dynamic shared memory */
  int barriers, barriers_possible;
  int regs_estimate; /* registers per thread (from nvcc report when known, else estimate) */
  bool regs_from_ptxas; /* regs_estimate and the spills are ptxas's (ptxas.c) */
  /* ptxas: bytes of spill stores and of spill loads per thread (0 when not known); the model
   * charges their sum as local-memory traffic (docs/model.md, "Barriers and spills") */
  int spill_stores, spill_loads;
  double predicted_ns_per_elem;
  Precision precision; /* of the search's target: what its buffers hold */
  int w;               /* the target's vector width: the W of its routines */
  bool stage_rows;     /* its component-major outputs written whole go out of shared memory
                          from sectors (staging.c; unaligned.c sets it where it pays) */
  bool hint_rows;      /* its loads of component-major rows ask L2 for whole 256-byte blocks
                          (kas_row_load; unaligned.c sets it in the plan for any alignment) */
  bool partial;        /* the first calls of a fusion, costed while combine.c's beam builds it:
                          outputs that the whole fusion will stage are not staged yet */
  unsigned keep_runs;  /* bit r: its run r (roll_find's order) is written as a loop (the model
                          decides: model_keep_loops; 0: every loop unrolled) */
} KernelPlan;

/* staging.c: element-major array arguments a kernel moves whole through shared memory.
 * A kernel that loads at least half of the elements of an input array (or saves every element
 * of an output array) copies the block's chunk of whole records in one coalesced run, and its
 * routines move the elements' slices from and to that copy instead of global memory, where the
 * slices are strided by the record (docs/loops.md, "Arrays in memory").  The one copy that a
 * kernel of threads.c's groups shares is copied in so too, into the plan's own buffers. */
typedef struct {
  int arg;        /* dag_api_arg numbering: inputs, then outputs */
  bool output;    /* copied out at the kernel's end (an output array), else in at its start */
  int record;     /* reals per element */
  int offset;     /* bytes into the dynamic shared array, after the plan's own buffers */
  int moved;      /* values of the array the kernel's routines move, of */
  int nvalues;    /* all of them (an input is staged when it reads at least half) */
  bool rows;      /* component-major: the copy holds component c of the block's element j at
                     c * E + j, and goes out row by row from sector boundaries */
  int buffer;     /* the plan's shared buffer that the copy fills in its load's stead (offset is
                     then the buffer's), or -1: the copy has a place of its own */
} StagedArray;
typedef struct {
  StagedArray *v;
  int n;
  int smem_bytes; /* the plan's shared memory (each group's, threads.c) plus the copies, 16-byte
                     aligned */
  bool fills_buffers; /* every shared buffer of the plan is filled by a copy (StagedArray.buffer)
                         before the first step, and no step writes one: the plan's barriers,
                         which order its steps' shared accesses, guard nothing */
} Staging;
/* The arrays kernel plan p stages; free with staging_free. */
Staging staging_of(const Dag *dag, const Target *t, const KernelPlan *p);
void staging_free(Staging *s);
/* The staged array holding value v, or NULL (a value of an argument the kernel does not stage). */
const StagedArray *staging_find(const Staging *s, const Dag *dag, int value);
/* Whether a copy of s fills the plan's shared buffer b (its load is then not made). */
bool staging_fills(const Staging *s, int b);
/* The barriers of plan p that its kernel makes: none where s's copies fill every shared buffer
 * (Staging.fills_buffers), else the plan's. */
int staging_plan_barriers(const Staging *s, const KernelPlan *p);
/* The same for a plan under target t, its Staging made and freed. */
int staging_kernel_barriers(const Dag *dag, const Target *t, const KernelPlan *p);
/* The shared memory the kernel of plan p under target t is launched with (Staging.smem_bytes:
 * the plan's, for each group of threads.c that has its own, and the staged copies), the one
 * figure the ranking, index.txt and the kernel's comment show. */
int staging_kernel_smem(const Dag *dag, const Target *t, const KernelPlan *p);
/* The vector width routine io moves dag value `value` at in a kernel of width w that stages s:
 * binding_io_width with the value's binding and whether s stages it. */
int staging_io_width(const Staging *s, const Dag *dag, const Target *t, const IoRoutine *io,
                     int value, int w);
/* Reals per access of a staged array's copy on the GPU: the plan's vector width when the block's
 * chunk is whole vectors (every block's chunk then starts 16-byte aligned), else 1. */
int staging_copy_width(const KernelPlan *p, const StagedArray *a);
/* Whether plan p, under target t, writes a component-major output from sectors (p->stage_rows). */
bool staging_has_rows(const Dag *dag, const Target *t, const KernelPlan *p);
/* The same question of a Staging already built (a caller that also needs its shared memory). */
bool staging_holds_rows(const Staging *s);
/* Whether plan p copies some staged array 16 bytes at a time (it then needs aligned pointers). */
bool staging_moves_vectors(const Dag *dag, const Target *t, const KernelPlan *p);

/* Which runs of alike loop iterations (roll.c) kernels write as loops: those the model keeps
 * (the default), every one, or none; and whether a loop's iterations may run in groups of
 * threads (threads.c): where the model ranks them so (the default), or wherever a loop allows
 * (groups, for comparisons: the ranking then holds only such candidates). */
typedef enum { LOOPS_MODEL, LOOPS_KEEP, LOOPS_UNROLL, LOOPS_GROUPS } LoopChoice;

/* roll.c: loops a kernel keeps (docs/loops.md, "Loops kept in kernels").  A run is `count`
 * consecutive iterations of spec loop `loop`, alike, as steps [from, from + count * body) of the
 * plan; the emitter writes the first iteration's steps inside `for (var = first; ...)`.  A
 * loop-carried value is read from carry_in[c] (defined before the run) and made in carry_out[c]
 * (defined in the first iteration), copied into carry_in[c] at the end of every iteration. */
typedef struct {
  int at, slot; /* the body's step position and the buffer slot that reads it */
  int buffer;   /* the first iteration's buffer, loaded before the run */
  int stride;   /* the growth of its array offset per iteration */
  int shares;   /* the reload whose loop-local buffer the slot reads: itself when it loads */
} RollReload;
typedef struct {
  int loop;
  int first, count;
  int from, body;
  int *carry_in, *carry_out;
  int ncarry;
  RollReload *reloads; /* array elements loaded before the run, one per iteration (the element's
                          vec3DPhi[M]): the loop loads each iteration's again, from the staged
                          copy of the array, into a buffer of the loop's own */
  int nreload;
  bool end_barrier; /* each iteration ends with a barrier: it writes shared memory that the next
                       one writes again, and the body does not start with one */
} RollRun;
/* The runs of plan p, in step order, whether or not it keeps them (at most ROLL_MAX_RUNS); free
 * with roll_runs_free.  roll_kept: those it keeps (p->keep_runs). */
#define ROLL_MAX_RUNS 32
int roll_find(const Dag *dag, const Target *t, const KernelPlan *p, RollRun **runs);
int roll_kept(const Dag *dag, const Target *t, const KernelPlan *p, RollRun **runs);
void roll_runs_free(RollRun *runs, int n);
/* Per buffer, the buffer whose name it takes in the kept loops: a buffer that a later iteration
 * of a run defines is its first iteration's twin; any other is itself.  malloc'ed. */
int *roll_aliases(const KernelPlan *p, const RollRun *runs, int nruns);
/* "loops kept: q = 3..6 (line 12), N = 1..3 (line 20)" (iterations 3 to 6 and 1 to 3, the
 * spec's lines of their loops) for a plan that keeps loops, else NULL; malloc'ed. */
char *roll_summary(const Dag *dag, const Target *t, const KernelPlan *p);

/* threads.c: a spec loop's iterations side by side in groups of threads of one block (issue
 * #11; docs/loops.md, "Iterations over threads"). */
typedef struct {
  int loop;  /* the spec's loop (top level) */
  int first; /* its first iteration */
  int count; /* its iterations */
  int len;   /* calls per iteration */
  /* A loop directly inside it whose iterations run in groups too (loop2 -1, count2 1: none):
   * group (i, j) runs iteration first + i of the loop and first2 + j of this one, and the calls
   * of the loop's iteration outside this one (each group runs them for itself). */
  int loop2, first2, count2, len2;
  int pos0; /* where this loop's first iteration starts in an iteration of the loop */
} ThreadLoop;
/* The ways the iterations of dag's loop can run in groups of threads: the loop (at top level,
 * holding every call, no iteration reading another's values, every output an element the loop's
 * variable addresses, every iteration the first one moved by its strides: checked against the
 * DAG), and where a loop directly inside qualifies likewise, both.  Returns 0, 1 or 2. */
int threads_loops(const Dag *dag, ThreadLoop *out);
/* Where threads_loops finds none: a note at each top-level loop saying why it does not qualify
 * (the first condition it fails), or one saying the spec has no loop. */
void threads_note_none(const Dag *dag);
/* The DAG of group (0, 0)'s calls alone, with the spec's API (dag_free frees it). */
Dag *threads_dag(const Dag *dag, const ThreadLoop *t);
/* Whether the groups of kernel p (of threads_dag's DAG) share one copy of its shared memory:
 * every shared buffer of the plan holds an input that all groups read, loaded (by every thread
 * where staging.c fills it, else by group 0) with a barrier before anyone reads it, and in bytes
 * of its own.  Otherwise each group has a copy of the plan's shared memory. */
bool threads_one_copy(const Dag *dag, const KernelPlan *p);
/* How many copies of p's shared memory its kernel holds: 1, or one per group. */
int threads_smem_copies(const Dag *dag, const KernelPlan *p);
/* The threads of kernel p's block, p of DAG dag: p->threads, one group's (a plan of threads_dag's
 * DAG is of one group's calls), times the groups; p->threads where dag has none or is NULL (a
 * Candidate's dag for the spec's DAG).  What the kernel launches, index.txt and the rankings
 * show, and the model's occupancy counts. */
int threads_in_block(const Dag *dag, const KernelPlan *p);
/* What the loops kernel p keeps change for the model: the barriers it runs beyond the plan's
 * (end_barrier's, per iteration), and the bytes per thread of global loads that are not in flight
 * with the others (those of every iteration after a run's first; staging: the kernel's). */
typedef struct {
  int barriers;
  double loads_apart;
} RollCosts;
RollCosts roll_costs(const Dag *dag, const Target *t, const KernelPlan *p, const Staging *staging,
                     int real_bytes);

/* A candidate: a partition of the DAG into kernels, in an executable order. */
typedef struct {
  KernelPlan **kernels;
  int nkernels;
  double predicted_ns_per_elem; /* sum of kernels + launch overhead shared among the search's n */
  int rank; /* 1-based */
  const Dag *dag; /* the DAG its plans are of: NULL for the spec's; threads.c's DAG of one
                     iteration for a kernel whose groups of threads run a loop's iterations */
  int shape_of;   /* 0, or k: the predicted #1 with its kernel k (1-based) in another block
                     shape (--variants, search.c) */
} Candidate;
/* qsort's order of candidates (const Candidate *): predicted time, then the spec's DAG before
 * threads.c's, fewer kernels, and the kernels' calls. */
int candidate_compare(const void *a, const void *b);
/* The DAG candidate c's plans are of (spec_dag, the spec's, unless it is threads.c's). */
const Dag *candidate_dag(const Dag *spec_dag, const Candidate *c);
/* "mvmul33_1+svmul3_2 | ttmul411_1": its implementations per kernel, in execution order, as
 * index.txt, the harness and results.xml name the candidate; a kernel of groups adds its loops
 * ("... (N = 0..3 in 4 groups)").  malloc'ed. */
char *candidate_kernels(const Candidate *c);
/* "{mvmul33#0 svmul3#1}": kernel plan p's calls as function#statement (the statement index, as
 * `kasgen fusions` numbers calls; a kernel of groups, threads.c, gives its first group's), in
 * execution order, appended to sb. */
void sb_kernel_calls(StrBuf *sb, const Dag *dag, const KernelPlan *p);
/* "{mvmul33#0 svmul3#1} {ttmul411#2}": each kernel's calls (sb_kernel_calls), as `kasgen plan`
 * prints the candidate and the harness writes it to results.xml; a candidate of groups adds
 * " in 4 groups (N = 0..3)".  Unlike candidate_kernels it tells apart candidates that split the
 * same calls otherwise between the same implementations.  malloc'ed. */
char *candidate_calls(const Dag *spec_dag, const Candidate *c);
/* "{E=32 threads=64} {E=8 threads=96}": each kernel's block shape, elements and threads per
 * block (of all its groups, threads.c), as the harness writes it to results.xml: it tells apart
 * the block shapes of one candidate (--variants), which share their calls.  malloc'ed. */
char *candidate_shapes(const Candidate *c);
/* "N = 0..3" or "N = 0..3, M = 0..3": the loops whose iterations the groups of threads.c's DAG d
 * run.  malloc'ed. */
char *candidate_group_loops(const Dag *d);

/* The search (docs/search.md): exact where the convex fusions are few enough, intervals of node
 * order beyond, every limit reported in SearchStats. */
#define SEARCH_EXACT_LIMIT 20000  /* convex fusions up to which the default search is exact */
#define SEARCH_COMBINE_LIMIT 1500 /* ... and fusions it may combine (those its bounds let in) */
#define SEARCH_BEAM_WIDTH 10     /* combine.c's beam: survivors per level beyond the diverse ones */
#define SEARCH_VARIANTS 5        /* --variants' default (docs/search.md, "Other block shapes") */

typedef struct {
  int top;           /* N */
  int max_fusion;    /* at most this many calls per kernel; 0 = any, up to the whole spec */
  bool progress;
  bool exhaustive;   /* combine every convex fusion, no bound (the reference the tests use) */
  double time_limit; /* seconds; 0 = none */
  long exact_limit;  /* exact search while the convex fusions number at most this (0: default) */
  int beam_width;    /* 0: SEARCH_BEAM_WIDTH */
  const Target *target; /* precision, layouts, vector width (NULL: target_default()) */
  LoopChoice loops;     /* which runs of loop iterations kernels keep as loops (--loops) */
  int variants;         /* of the top N, up to this many are the predicted #1 with its costliest
                           kernel in another block shape (--variants; 0: none) */
  long n;               /* elements the model predicts for (--n; 0: DEFAULT_ELEMENTS): each
                           kernel's launch is shared among them, and a grid of n / E blocks may
                           not fill the GPU (docs/model.md, "The element count") */
} SearchOptions;

typedef enum {
  SEARCH_EXACT,      /* every convex fusion whose bound lets it into the top N was combined */
  SEARCH_EXHAUSTIVE, /* every convex fusion was combined */
  SEARCH_INTERVALS   /* too many convex fusions: partitions into intervals of node order */
} SearchMode;

/* What the search did and what may have kept a better candidate out (cli_search.c says it). */
typedef struct {
  SearchMode mode;
  int max_fusion;       /* the cap on calls per kernel in force (the number of calls if none) */
  bool capped;          /* max_fusion < calls: bigger kernels were not considered */
  long fusions;         /* convex fusions of at most max_fusion calls (exact, exhaustive), or
                           the count at which the exact search gave up (intervals) */
  long exact_limit;
  bool too_many;        /* more convex fusions than exact_limit: intervals */
  long exhaustive_fusions; /* ... and how many --exhaustive would combine, counted up to
                              KAS_MAX_FUSIONS + 1 (it refuses more); -1: the time ran out */
  long candidates;      /* exact: fusions whose bound lets them into the top N */
  long combine_limit;   /* ... beyond which the search takes intervals instead */
  long combined;        /* fusions combined (one per signature) */
  long memo_hits;       /* fusions whose plan came from an isomorphic fusion's */
  long skipped;         /* exact: fusions whose bound kept them out of the top N, not combined */
  long unplanned;       /* fusions or segments left uncombined when the time ran out */
  bool timed_out;
  double time_limit;
  int beam_width;
  int beam_kernels;     /* kernels of the ranked candidates whose beam dropped children */
  double bound_ns;      /* no partition is predicted below this: the whole spec's compulsory
                           traffic's least time under the model in use, plus one launch */
  double bound_bytes;
  double bound_plain_ns; /* the same bytes at the copy bandwidth, plus one launch (bound_ns
                            without a calibration; with one, possibly above #1) */
  int variants_asked;   /* --variants K */
  int variants;         /* candidates that are the #1 in another block shape (at most K) */
  int partitions_out;   /* partitions of the top N that the variants took the place of */
  bool variants_cut;    /* the time budget ran out while the variants' shapes were planned */
  bool count_cut;       /* ... while --exhaustive counted the convex fusions (fusions: those
                           counted by then); only the single calls were combined */
  bool groups_cut;      /* ... before the kernels of groups of threads (threads.c) were planned */
  double seconds;
} SearchStats;

typedef struct {
  Candidate *cands;
  int ncands;
  Candidate *unfused; /* one kernel per call, best plan each (KAS's fallback); always present */
  KernelPlan **plans; /* every plan of the candidates (owned), for --explain and reports */
  int nplans;
  SearchStats stats;
  LoopChoice loops;   /* the search's: the plans for arrays of any alignment choose alike */
  Dag *group_dags[2]; /* threads.c's DAGs of one group's calls, which some candidates' plans
                         are of (owned), or NULL */
  long n;             /* the elements its predictions are for (SearchOptions.n, resolved) */
} SearchResult;
/* The candidate of r whose block shape variant v is (--variants): the one of the same partition
 * that is no variant (the #1 of the model, whose rank ptxas's registers may have moved); NULL if
 * none. */
const Candidate *candidate_shape_base(const SearchResult *r, const Candidate *v);

/* Thread mapping contract between plan construction (sync.c) and the emitters: a call whose
 * implementation has another block shape than the kernel runs on the kernel threads with linear
 * id lin = threadIdx.x + blockDim.x*(threadIdx.y + blockDim.y*threadIdx.z) < its thread count,
 * with tx = lin % BX, ty = lin / BX % BY, tz = lin / (BX*BY) in its own shape; so thread `lin` of
 * the call is thread `lin` of the kernel.  A load step's `call` is the call whose implementation
 * provides the load routine (Buffer.load_call); the step itself stands just before the first
 * call in order that reads the buffer, which may come earlier than load_call. */

/* linearize.c: execution order of a fusion minimizing peak shared memory, then barriers.
 * The problem is abstract (local call and value indices) so that it can be tested alone; the
 * caller owns the arrays.  Sets of local calls are NodeSets (bit c = local call c). */
#ifndef LIN_EXACT_CALLS
#define LIN_EXACT_CALLS 16 /* the subset DP's limit (O(2^n n)); above it, a greedy order */
#endif
typedef struct {
  int ncalls;
  const NodeSet *pred;      /* per call: the calls that must run before it */
  int nvals;
  const int *size;          /* per value: shared floats per element; 0 = in registers */
  const int *producer;      /* per value: local call producing it, -1 = loaded from global */
  const NodeSet *consumers; /* per value: the local calls reading it */
} LinearizeProblem;
/* Writes a topological order minimizing the peak of live shared floats (loads just before the
 * first reader, a buffer dies after its last reader or its save); among those, fewest barriers
 * under the conservative rule "a call reading a shared value produced since the last barrier
 * needs one" (exact for ncalls <= 10, else first found).  Above LIN_EXACT_CALLS calls the order
 * is greedy (the ready call that adds the least live memory, then frees the most) or the node
 * order, whichever has the lower peak: heuristic.  Returns false if pred is cyclic or ncalls is
 * not in 1..KAS_MAX_NODES. */
bool linearize_order(const LinearizeProblem *p, int *order_out, int *peak_out,
                     int *barriers_out);
/* Peak live shared floats and barrier count (same rules) of a given order; for tests/explain. */
void linearize_evaluate(const LinearizeProblem *p, const int *order, int *peak_out,
                        int *barriers_out);
/* linearize_order's order, remembered per problem (exact ones only: up to LIN_EXACT_CALLS
 * calls) in a cache the search context owns: partial plans of fusions sharing calls pose the
 * same problems.  NULL cache: no caching. */
typedef struct LinearizeCache LinearizeCache;
LinearizeCache *linearize_cache_new(void);
void linearize_cache_free(LinearizeCache *c);
bool linearize_order_cached(LinearizeCache *c, const LinearizeProblem *p, int *order_out);

/* smem.c: offsets of shared buffers with overlapping live ranges.  Buffers with bytes <= 0 get
 * offset -1.  Live ranges are inclusive [first, last] step intervals.  Each offset is a multiple
 * of 16; returns the peak (end of the highest buffer, multiple of 16). */
int smem_allocate(const int *bytes, const int *first, const int *last, int n, int *offset_out);

/* The search context: what one search (or one `kasgen units` run) computes once and reuses
 * while it builds plans.  It owns every cache and memo of the plan stages -- the access sets of
 * patterns and the pattern-pair relations (access_cache.c), the model's access profiles, grid
 * floors and missing-routine warnings (model.c) -- so that no stage keeps state of its own and
 * nothing needs clearing: the entries are keyed by the addresses of the library's patterns and
 * of the database, and a context lives no longer than they do.  search_context_new makes one (the
 * search driver, `units`, tests), the stages receive it, search_context_free ends it. */
typedef struct AccessCache AccessCache;
typedef struct ModelMemo ModelMemo;
typedef struct PlanMemo PlanMemo;
typedef struct {
  const Dag *dag;
  const TimingDb *db;
  const Target *target; /* never NULL: target_default() when none was given */
  AccessCache *access;  /* evaluates patterns at the target's vector width */
  ModelMemo *model;
  PlanMemo *plans;   /* the best plan of every fusion combined, by signature (plan_memo.c) */
  struct LinearizeCache *orders; /* exact linearizations, by problem (linearize.c) */
  double deadline;   /* clock_seconds() after which long loops stop; 0 = none */
  bool expired;      /* the deadline passed (sticky) */
  int beam_width;    /* survivors per level of combine.c's beam beyond the diverse ones */
  bool beam_pruned;  /* some beam of this search dropped children (the width limited it) */
  bool progress;     /* show long combines on stderr (a terminal: SearchOptions.progress) */
  LoopChoice loops; /* which runs kernels keep as loops (--loops) */
  long n;           /* elements the model predicts for: DEFAULT_ELEMENTS unless set
                       (SearchOptions.n); a launch's share and the grid's blocks depend on it */
} SearchContext;
/* search.c; target NULL = target_default(). */
SearchContext *search_context_new(const Dag *dag, const TimingDb *db, const Target *target);
void search_context_free(SearchContext *ctx);
/* The context a candidate's kernels are predicted in: NULL when it is ctx, else a new one (free
 * it) on the candidate's own DAG, as a kernel of groups has (threads.c), with ctx's database and
 * target and no warnings of missing routines (the search gave them). */
SearchContext *search_context_own(const SearchContext *ctx, const Candidate *c);
/* Whether the search's time budget is spent; once true it stays true. */
static inline bool search_expired(SearchContext *ctx) {
  if (!ctx->expired && ctx->deadline > 0 && clock_seconds() > ctx->deadline) ctx->expired = true;
  return ctx->expired;
}

/* access_cache.c: every thread's access set of a pattern at a shape, evaluated once per
 * context.  NULL after a diagnostic if an expression cannot be evaluated; else an array of
 * bx*by*bz sets indexed by linear thread id. */
AccessCache *access_cache_new(int w); /* shapes with w = 0 are evaluated at this W */
void access_cache_free(AccessCache *ac);
const AccessSet *access_sets(AccessCache *ac, const Pattern *p, BlockShape shape);
/* Register extent over all threads (largest offset - start + 1, at least 1); -1 when a thread
 * touches an offset below its start or the pattern cannot be evaluated. */
int access_extent(AccessCache *ac, const Pattern *p, BlockShape shape);
/* The first linear thread id whose accesses (start and offsets) differ under a and b, -1 when
 * none does, -2 when a pattern cannot be evaluated; memoized. */
int access_first_difference(AccessCache *ac, const Pattern *a, BlockShape sa, const Pattern *b,
                            BlockShape sb);
/* patterns_compatible over the cached sets (same definition, docs/design.md §5.3). */
bool access_compatible(AccessCache *ac, const Pattern *a, BlockShape sa, const Pattern *b,
                       BlockShape sb);
/* Whether every offset that reader r touches (any thread) is touched by writer w (some thread),
 * all of them inside [0, nfloats); memoized. */
bool access_covers(AccessCache *ac, const Pattern *w, BlockShape sw, const Pattern *r,
                   BlockShape sr, int nfloats);

/* placement.c: register vs shared per buffer.  One use of a buffer by a routine: */
typedef struct {
  const Pattern *pat;
  BlockShape shape; /* the routine's implementation's shape at E */
  const char *label; /* "mvmul33#0 OUTPATTERN", for why strings */
} PatternUse;
/* True (registers) when all uses have one thread count, are pairwise compatible and none says
 * noreg; *reg_floats = register extent.  *why (malloc'ed) says which rule decided; pass NULL
 * when no explanation is wanted (faster). */
bool placement_decide(AccessCache *ac, const PatternUse *uses, int nuses, int *reg_floats,
                      char **why);

/* sync.c: barriers.  The shared-memory accesses of one step, for exact conflict detection. */
typedef struct {
  const Pattern *pat;
  BlockShape shape;
  int base_float;  /* buffer offset / 4 */
  int nfloats;     /* buffer size in floats (accesses beyond it are a library error) */
  bool write;
  const char *buffer_label;
} SharedAccess;
typedef struct {
  SharedAccess acc[KAS_MAX_ARGS + 2];
  int n;
  const char *label; /* "ttmul3212#3" (function#position), or "load vec3DPhi" */
} StepAccesses;
/* Sets plan->steps[s].barrier_before/barrier_why, plan->barriers and barriers_possible from
 * the per-step accesses (one StepAccesses per step).  false after a diagnostic. */
bool sync_plan(AccessCache *ac, KernelPlan *plan, const StepAccesses *per_step);
/* A cheap estimate of the barrier count (per buffer and pattern compatibility, as seed 004
 * §4.5), for the beam search's partial plans; labels are not used. */
int sync_estimate(AccessCache *ac, const KernelPlan *plan, const StepAccesses *per_step);
/* combine.c: every implementation choice for one fusion, each a complete KernelPlan (ordered,
 * placed, allocated, synchronized, predicted through model.c).  keep_all = false prunes
 * dominated and clearly slow plans; true keeps every valid one (used by `kasgen units`). */
KernelPlan **combine_fusion(SearchContext *ctx, NodeSet nodes, bool keep_all, int *nplans_out);
void kernel_plan_free(KernelPlan *p);
/* A deep copy (its own arrays and strings), for a plan shared by several candidates. */
KernelPlan *kernel_plan_clone(const KernelPlan *p);
/* What rebuilds a complete plan: E, the implementation of each call (index into its function's
 * impls, calls in node order) and the load and save variant of each value, numbered as
 * combine.c numbers a fusion's values (by first appearance, call by call) -- so that a recipe
 * made for one fusion rebuilds the same plan for any fusion with the same signature
 * (plan_memo.c). */
typedef struct {
  int e;
  bool disjoint; /* shared buffers never share bytes */
  bool pruned;   /* the beam that found it dropped children (its width limited the search) */
  double predicted_ns_per_elem;
  int ncalls, nvals;
  int *impl, *load, *save; /* one allocation, at impl */
} PlanRecipe;
/* The best plan of each block shape (E and threads per block) of the fusion, best first, as
 * far as the beam's last level holds them (it keeps the best of every E): the other shapes of a
 * kernel that --variants offers a GPU run.  NULL (*nplans_out 0) when none is valid. */
KernelPlan **combine_shapes(SearchContext *ctx, NodeSet nodes, int *nplans_out);
/* The best plan's recipe of the fusion (the beam's; combine_fusion's first plan); false when it
 * has no valid plan or the search's time ran out during its beam. */
bool combine_best_recipe(SearchContext *ctx, NodeSet nodes, PlanRecipe *best);
/* The complete plan of a recipe made for these nodes or an isomorphic fusion: the same plan with
 * the same prediction, its own nodes, values and labels.  NULL if the recipe does not fit. */
KernelPlan *combine_build(SearchContext *ctx, NodeSet nodes, const PlanRecipe *r);
void plan_recipe_free(PlanRecipe *r);
/* The recipe that rebuilds plan p (its implementations, E and routine variants), to build the
 * same plan under another target (combine_build with another context); false if p's calls do
 * not match its nodes. */
bool combine_recipe_of(SearchContext *ctx, const KernelPlan *p, PlanRecipe *out);

/* bounds.c: lower bounds from compulsory traffic.  The bytes per element a kernel running the
 * calls of `nodes` must move (values read from outside once, values needed outside written
 * once; real_bytes per real, 4 or 8 by the precision), and the least time the database's model
 * gives them: at the copy bandwidth (a hair below, against rounding), under a calibration
 * (TimingDb.calib) scaled by the least factors its constants can put on them, plus its
 * kernel-ns.  No plan of those calls is predicted faster, and no partition of them into
 * kernels either. */
typedef struct {
  double loads, saves; /* bytes per element read from outside, written for outside */
} CompulsoryBytes;
CompulsoryBytes bound_traffic(const Dag *dag, const NodeSet *nodes, int real_bytes);
double bound_bytes(const Dag *dag, const NodeSet *nodes, int real_bytes); /* their sum */
double bound_ns_of_traffic(const TimingDb *db, CompulsoryBytes traffic);
double bound_kernel_ns(const SearchContext *ctx, const NodeSet *nodes);

/* plan_memo.c: the best plan of a fusion, combined once per canonical signature (the calls in
 * node order with their functions, each argument's source -- a call of the fusion or the k-th
 * distinct outside value --, which results escape), so that isomorphic fusions (an unrolled
 * loop's iterations) cost one combine.  The memo lives in the search context. */
PlanMemo *plan_memo_new(void);
void plan_memo_free(PlanMemo *m);
/* The best plan's predicted ns per element (without launch overhead); INFINITY when the fusion
 * has no valid plan or the time budget ran out before it was combined. */
double plan_memo_cost(SearchContext *ctx, NodeSet nodes);
/* Whether the fusion's signature was combined already (its cost costs no combine). */
bool plan_memo_known(SearchContext *ctx, NodeSet nodes);
/* The best plan's recipe (owned by the memo) or NULL; and the plan itself, built anew for these
 * nodes (the caller frees it). */
const PlanRecipe *plan_memo_recipe(SearchContext *ctx, NodeSet nodes);
KernelPlan *plan_memo_build(SearchContext *ctx, NodeSet nodes);
/* Combines done so far (one per signature), and lookups answered by the plan of another,
 * isomorphic fusion. */
void plan_memo_stats(const SearchContext *ctx, long *combined, long *isomorphic);

/* model.c: predicted nanoseconds per element of one kernel (docs/design.md §6 step 8,
 * docs/model.md), and the fixed cost of one launch. */
double model_predict_kernel(SearchContext *ctx, const KernelPlan *plan);
/* Keeps each run of p (roll.c) as a loop where the model does not predict that slower and the
 * kernel's occupancy is not low (one run at a time, in order; p->keep_runs and
 * p->predicted_ns_per_elem say the outcome); every run under LOOPS_KEEP, none under
 * LOOPS_UNROLL. */
void model_keep_loops(SearchContext *ctx, KernelPlan *p);
/* The terms of that prediction before calibration (ns per element); false when the plan cannot
 * launch.  model_predict_kernel combines them with the database's calibration
 * (model_combine_terms). */
typedef struct {
  double work;    /* max(IO, COMPUTE) */
  double floor;   /* the grid floor */
  double barrier; /* barrier time */
  double spill;   /* what spilled registers' local-memory traffic adds beyond work */
  /* What work is made of, for the calibration's scales (docs/model.md, "Calibration"): */
  double io, compute;   /* its two sides */
  double requests_one;    /* IO of slices whose L2 write requests set their time, saved by */
  double requests_shared; /* one thread per element / by several threads per element */
  double requests_shared_covered; /* the latter, each slice's weighted by the share of its
                                     record that the kernel saves straight (0-1] */
  double lines;           /* IO of the unused bytes of the lines that slice loads touch */
  /* Barriers times warps per block over the elements resident on the GPU: at each barrier a
   * block waits for its slowest warp, the longer the more warps it has (calibrated only:
   * ModelCalibration.barrier_warp_ns). */
  double barrier_warps;
  /* The L1 data-pipe wavefronts of the loads (per element) at L1's peak rate: a bound on the
   * loads' time that the database's routines, timed alone, do not show (calibrated only:
   * ModelCalibration.wavefront_scale). */
  double wavefronts;
} ModelTerms;
bool model_kernel_terms(SearchContext *ctx, const KernelPlan *plan, ModelTerms *out);
/* On: each routine's own time is recovered from the database with the kernel's grid floor at
 * the search's n, as session 45's model did, to find again the candidates of a run it ranked
 * at a small n (benchmarks/h200-2026-11-29-s46/eval_predict.c).  Off (the default): with the
 * floor the database timed it with.  The two differ where a block's life shared among n
 * (2000 ns / n) exceeds the timed floor: below about 2^19 elements, never at the default 2^22. */
void model_floor_as_session45(bool on);
double model_combine_terms(const ModelTerms *t, const ModelCalibration *c);
/* Its work term under a (present) calibration: work_scale * (max(IO', COMPUTE)
 * + unhidden_share * min(IO', COMPUTE)). */
double model_calibrated_work(const ModelTerms *t, const ModelCalibration *c);
/* search.c: the model's terms of candidate c's kernels at ctx's element count (each in
 * terms[], the caller's array of c->nkernels; a kernel of groups on its own DAG) and their
 * launches' share (*launch, model_launch_share_ns per kernel); false when a kernel cannot
 * launch. */
bool search_candidate_terms(SearchContext *ctx, const Candidate *c, ModelTerms *terms,
                            double *launch);
double model_launch_overhead_ns(const TimingDb *db);
/* One kernel's launch overhead shared among n elements (n <= 0: DEFAULT_ELEMENTS), ns per
 * element: what each kernel adds to a candidate's prediction. */
double model_launch_share_ns(const TimingDb *db, long n);
/* Blocks of plan p resident on one SM when each uses smem_bytes of shared memory. */
int model_resident_blocks(const TimingDb *db, const KernelPlan *plan, int smem_bytes);
/* model_predict_kernel returns INFINITY for a plan that cannot launch on the device (shared
 * memory over the per-block limit, too many threads, zero resident blocks): drop such plans.
 * Routines missing from a database are predicted analytically and warned about when the search
 * ends, one line per routine and kind, each variant once in the run (docs/model.md). */
/* Registers per thread: base + the register buffers live at once + temporaries; combine.c
 * fills KernelPlan.regs_estimate with it when no nvcc report is known. */
int model_estimate_registers(const KernelPlan *plan);
/* Bytes per element that memory moves, in lines of `line` bytes, to serve slices [lo[i], lo[i] +
 * len[i]) (reals of real_bytes) of every element's record of `record` reals, the records
 * contiguous (element-major): lines shared by neighbouring elements count once. */
double model_line_bytes(const int *lo, const int *len, int n, int record, int real_bytes,
                        int line);
/* Used bytes / touched 32-byte-sector bytes of a warp's global accesses through pattern p at a
 * block shape (1 = fully coalesced); memoized in the context. */
double model_access_efficiency(SearchContext *ctx, const Pattern *p, BlockShape shape);
/* L2 write requests of one warp's stores through pattern p to an array bound so (averaged over
 * the block's first and last warp; model.c's round_store_requests). */
double model_write_requests(SearchContext *ctx, const Pattern *p, BlockShape shape,
                            GlobalBinding binding);
/* L1 wavefronts of one warp's loads through pattern p from an array bound so, over all rounds
 * (averaged over the block's first and last warp; model.c's lines_wavefronts). */
double model_load_wavefronts(SearchContext *ctx, const Pattern *p, BlockShape shape,
                             GlobalBinding binding);
ModelMemo *model_memo_new(void); /* the model's part of a SearchContext */
/* The model then warns about a missing database's precision, layout or width, but not about
 * single missing routines (a planning that asks for the search's routines again). */
void model_memo_quiet(ModelMemo *m);
void model_memo_free(ModelMemo *m);

/* select.c: top-N exact covers of the DAG's nodes by the items' node sets with minimal total cost
 * (lp_solve), each next one excluded by a cut; covers whose kernels cannot be ordered (cyclic
 * quotient graph) are cut too.  Returns the number found; solutions_out[r] is a malloc'ed,
 * -1-terminated list of item indices. */
typedef struct {
  NodeSet nodes;
  double cost;
} SelectItem;
int select_top_partitions(const Dag *dag, const SelectItem *items, int nitems, int top,
                          int ***solutions_out);
/* Items with non-finite cost, empty sets or nodes outside the DAG are ignored; among items with
 * equal node sets only the cheapest takes part, so the solutions are distinct partitions, in
 * non-decreasing total cost, equal costs in a canonical order (fewer kernels, then the kernels'
 * node sets): the solver's order among ties would depend on the items it was given.  0 when no
 * cover exists.  _until stops solving at a clock_seconds() deadline (0: none), keeping what it
 * found (at least the best cover when one exists). */
int select_top_partitions_until(const Dag *dag, const SelectItem *items, int nitems, int top,
                                double deadline, int ***solutions_out);
/* Whether a partition's kernels can be ordered (its quotient graph is acyclic); uses dag->succ. */
bool select_partition_orderable(const Dag *dag, const NodeSet *kernels, int nkernels);

/* intervals.c: the `top` cheapest partitions of the calls into intervals of node order of at
 * most max_len calls (0: any), best first: a segment costs its best plan (plan_memo.c) plus
 * `overhead`, a partition the sum.  Exact among such partitions, evaluating only the segments
 * whose compulsory-traffic bound lets them into the top.  With `estimate`, the segments to
 * combine are chosen by their bound times the least cost/bound ratio seen for their length
 * instead (heuristic: far fewer combines on long specs).  Returns how many (fewer when there are
 * fewer; 0 when some call has no plan); *out is malloc'ed (intervals_free), *evaluated counts
 * the segments combined (not found in the memo). */
typedef struct {
  int *starts;  /* kernel k runs the calls starts[k] .. starts[k + 1] - 1 */
  int nkernels;
  double cost;
} IntervalPartition;
int intervals_top(SearchContext *ctx, int max_len, int top, double overhead, bool estimate,
                  bool progress, IntervalPartition **out, long *evaluated);
void intervals_free(IntervalPartition *parts, int n);
/* unaligned.c: a candidate's plan for arrays that are not 16-byte aligned: the same partition
 * planned at vector width 1 (one real per access, any alignment), its kernels in the same
 * order.  One planner serves every candidate of a search's target t (NULL: target_default()).
 * Where rows may start mid-sector (component-major arrays), a kernel stages its outputs' rows
 * when the model predicts that faster and at least 4 of its blocks stay resident per SM, and
 * reads its component-major rows through kas_row_load (KernelPlan.hint_rows).
 * unaligned_candidate returns NULL when the candidate moves no array 16 bytes at a time, stages
 * no rows and reads none (the plan would be the same), and after a diagnostic (then *failed is
 * set). */
typedef struct UnalignedPlanner UnalignedPlanner;
UnalignedPlanner *unaligned_planner_new(const Dag *dag, const TimingDb *db, const Target *t,
                                        LoopChoice loops);
/* The elements its plans are predicted for (SearchResult.n; DEFAULT_ELEMENTS until set). */
void unaligned_planner_elements(UnalignedPlanner *u, long n);
void unaligned_planner_free(UnalignedPlanner *u);
Candidate *unaligned_candidate(UnalignedPlanner *u, const Candidate *c, bool *failed);
void unaligned_candidate_free(Candidate *c); /* frees its plans too */
/* Whether buffer b is loaded from a component-major array: in the plan for any alignment its
 * rows go through kas_row_load. */
bool unaligned_reads_rows(const Dag *dag, const Target *t, const Buffer *b);
/* ptxas.c: for the top 30 candidates, the registers and spill bytes of every kernel from
 * ptxas's report (nvcc -Xptxas -v, cached by kernel text), put into the plans
 * (regs_from_ptxas), which are predicted again; the candidates are re-ranked.  Without nvcc it
 * says so once and changes nothing.  nvcc runs for at most time_left_s seconds (what
 * --time-limit left; <= 0: none left, nvcc is not run), NAN for kasgen's own bound of 5 minutes;
 * cut, it says so and keeps the estimate. */
void ptxas_rerank(const Dag *dag, const Library *lib, const TimingDb *db, const Target *t,
                  SearchResult *res, double time_left_s);

/* search.c: enumerate -> combine -> select; candidates in predicted order. */
SearchResult *search_run(const Dag *dag, const TimingDb *db, const SearchOptions *opt);
void search_result_free(SearchResult *r);

/* ------------------------------------------------------------------------------------------ */
/* emit_*.c: code generation (docs/design.md §7)                                               */
/* ------------------------------------------------------------------------------------------ */

/* runtime_files.c, generated at build time by src/embed.sh: the fixed programs and headers
 * kasgen writes into generated folders (harness.cu, check_cpu.cpp, check_gpu.cu, kas_check.h,
 * kas_gpu.h, kas_host.h, kas_random.h, bench_main.cu, bench_common.h), exactly as they are in
 * src/runtime/.  NULL for a name that is not one of them. */
const char *runtime_file(const char *name);

/* The element count a generated harness runs by default (--n). */
#define DEFAULT_ELEMENTS 4194304

typedef struct {
  const char *out_dir; /* parent; output goes to out_dir/<spec-stem>/ */
  /* The folder itself, of any name, instead (tune's re-emission into a folder it checked is the
   * spec's); NULL: out_dir/<spec-stem>/.  emit_dir_open's manifest check holds either way. */
  const char *folder;
  long default_n;      /* 0: DEFAULT_ELEMENTS */
  const Target *target; /* the search's (NULL: target_default()) */
  /* The candidate the embed wraps and why (`kasgen tune`: the measured best); NULL: the
   * predicted best, res->cands[0]. */
  const Candidate *embed;
  const char *embed_why;
  const char *generation_ini; /* generation.ini's text (NULL: no such file is written) */
  /* The spec index.txt's first line names: where tune read the folder's copy of the spec
   * (<stem>.spec), the one the folder was generated from, kept; NULL: the spec read. */
  const char *spec_origin;
} EmitOptions;

/* emit_files.c: the output folder.  It may be new, or hold only files listed in its
 * .kasgen-manifest (kasgen's own, overwritten); any other file, a symbolic link anywhere in it,
 * or a manifest naming a run output or a path outside makes emit_dir_open refuse before anything
 * is written, so nothing of the user's is ever overwritten or lost.  emit_dir_write keeps the
 * text; emit_dir_close writes the manifest first, then the files (never through a symbolic
 * link), then removes the previous run's leftovers: an interrupted run can always be rerun. */
typedef struct EmitDir EmitDir;
EmitDir *emit_dir_open(const char *path); /* NULL after a clear error */
/* emit_dir_open's refusals, made before any work; writes nothing. */
bool emit_dir_acceptable(const char *path);
bool emit_dir_write(EmitDir *d, const char *relpath, const char *text); /* makes subfolders */
/* What this run wrote to relpath so far (owned by d), or NULL. */
const char *emit_dir_text(const EmitDir *d, const char *relpath);
bool emit_dir_close(EmitDir *d); /* writes everything; false after an error; frees d */
/* Frees d writing nothing: one of several folders written together was refused (kasgen units
 * checks every function's folder before it writes any). */
void emit_dir_discard(EmitDir *d);
const char *emit_dir_path(const EmitDir *d);

/* emit_cuda.c: per candidate candNN/kernels.cu and candNN/kernels_host.cpp (docs/generated.md);
 * name is the candidate's ("cand01", "unfused"), which also prefixes its symbols.  t: the
 * target the candidate was searched for (NULL: target_default()); unaligned: its plan for
 * arrays of any alignment (unaligned.c), or NULL when it needs none: then its launch runs one or
 * the other by the pointers it is given. */
bool emit_cuda_candidate(EmitDir *d, const Dag *dag, const Target *t, const Candidate *cand,
                         const Candidate *unaligned, const char *name);
/* The text of a candidate's kernels.cu with its symbols prefixed kas_<prefix>_ (kernels
 * kas_<prefix>_k1.., kas_<prefix>_launch, kas_<prefix>_workspace_bytes); embedded: the
 * definitions alone, with C++ linkage, for a file that has its own banner and includes
 * kas_device.h itself (the embed).  NULL after a diagnostic. */
char *emit_cuda_kernels(const Dag *dag, const Target *t, const Candidate *cand,
                        const Candidate *unaligned, const char *name, const char *prefix,
                        bool embedded);
/* emit_cuda_kernels' embedded text, but each kernel launched by cudaLaunchKernelEx, whose
 * return is that launch's own error: the launch functions neither take nor clear an error that
 * the caller's earlier CUDA calls left pending (cudaGetLastError), as the embed, called from a
 * FEM code, must.  NULL after a diagnostic. */
char *emit_cuda_embed_kernels(const Dag *dag, const Target *t, const Candidate *cand,
                              const Candidate *unaligned, const char *name, const char *prefix);
/* "9f3c...": 16 hex digits of FNV-1a over candidate cand's kernels as emit_cuda_kernels writes
 * them (embedded, its symbols under one fixed prefix, for arrays aligned as t says): what the
 * harness writes to results.xml as `code`, so that tune and calibrate find the very kernels that
 * ran.  Two plans of the same implementations, calls and block shapes still differ in their
 * load and save routines (a calibration moves that choice).  malloc'ed; NULL after a
 * diagnostic. */
char *emit_code_digest(const Dag *dag, const Target *t, const Candidate *cand);
/* The host form of the same kernels (run thread by thread on the CPU; kas_<prefix>_launch_host,
 * kas_<prefix>_host_workspace_bytes), for the translation unit that holds emit_cuda_kernels'
 * embedded text of the same arguments: it shares that text's routines and helpers, which must
 * then be host and device functions (KAS_DEV).  NULL after a diagnostic. */
char *emit_cuda_host_kernels(const Dag *dag, const Target *t, const Candidate *cand,
                             const Candidate *unaligned, const char *name, const char *prefix);
/* Appends open item, item, ... close at an indentation of level (two spaces each), breaking
 * after a comma where a line would pass 100 columns; continuation lines go under the first
 * item, or 4 columns deeper than the statement when that is far to the right.  Every emitter
 * lays out argument and initializer lists with it. */
void emit_list(StrBuf *sb, int level, const char *open, char *const *items, int n,
               const char *close);
/* The API argument of a value: its position in the generated in[] (`input`-line order, =
 * dag->in_args) / out[] (`return`-line order, = dag->out_args) arrays, i.e. Value.arg; -1 if it
 * is not an input / output.  An array is one argument: its element values share the slot and
 * differ in Value.arg_offset. */
int emit_input_slot(const Dag *dag, int value);
int emit_output_slot(const Dag *dag, int value);
/* The C names generated code gives the spec's inputs (`input` order) and outputs (`return`
 * order): each variable's own name, with '_' appended while it would clash with a C or C++
 * keyword, a name of generated code (n, in, out, workspace, stream, ...) or a name given
 * before it. */
typedef struct {
  char **input, **output;
  int ninputs, noutputs;
} IoNames;
IoNames emit_io_names(const Dag *dag);
void emit_io_names_free(IoNames *names);

/* emit_common.c: the files the candidates of a spec share, in common/: kas_device.h (from the
 * library), kas_refs.c and cpu_graph.c (the CPU graph in double), and the fixed programs and
 * headers of src/runtime/ (check_cpu.cpp, harness.cu, kas_check.h, kas_gpu.h, kas_host.h,
 * kas_random.h). */
bool emit_common(EmitDir *d, const Dag *dag, const Library *lib);
/* Writes src/runtime/<name> (runtime_file) to folder/<name> ("": the output folder itself). */
bool emit_runtime_file(EmitDir *d, const char *folder, const char *name);

/* emit_embed.c: embed/kas_<stem>.h and .cu around the winner; why (plain text, NULL: "the
 * predicted best candidate") says in the header why this candidate was chosen. */
bool emit_embed(EmitDir *d, const Dag *dag, const Library *lib, const Target *t,
                const Candidate *winner, const Candidate *unaligned, const char *why);
/* Whether no other folder of parent (the --out of the main job) holds an embed whose C API is
 * the one spec `name` gets (specs a-b and a_b both get kas_a_b): else an error naming it, and
 * false.  A program that links both fails with multiple definitions. */
bool emit_embed_prefix_free(const char *parent, const char *name);
/* emit_embed_build.c: embed/kas_<stem>.pc (pkg-config) and embed/kas_<stem>.cmake (CMake). */
bool emit_embed_build_files(EmitDir *d, const Dag *dag, const char *stem);

/* emit.c: drives the emitters for one spec: the output folder, common/, every candidate, the
 * embed, and the files that list the candidates (kas_candidates.h, all_kernels.cu, Makefile,
 * plot.gp, index.txt, the fusion pictures).  Refuses (a clear error, nothing written) a DAG
 * holding array elements: code generation for arrays is not written yet; emit_supports_dag says
 * so (reporting it) before a search is spent on such a spec. */
bool emit_supports_dag(const Dag *dag);
bool emit_all(const Dag *dag, const Library *lib, const TimingDb *db, const SearchResult *res,
              const EmitOptions *opt);
/* One row of common/kas_candidates.h (docs/generated.md), which `kasgen units` writes too. */
typedef struct {
  char *name;             /* "cand01", "unfused", "cu_mmul33_2": its folder and symbol prefix */
  const Candidate *cand;
  int rank;               /* 1-based; 0 when not ranked (the unfused form) */
  char *kernels;          /* what its kernels are, for tables ("mvmul33_1+svmul3_1 | ...") */
  Candidate *unaligned;   /* its plan for arrays of any alignment (owned), or NULL */
} CandidateEntry;
/* t: the target of the candidates (NULL: target_default()), whose real type and layouts the
 * header names; db: the timing database of the predictions (NULL: the analytic model), whose
 * GPU the harness compares with its own. */
char *emit_candidates_header(const Dag *dag, const Target *t, const TimingDb *db,
                             const CandidateEntry *entries, int count, long default_n);
/* common/all_kernels.cu: every entry's kernels.cu in one translation unit, each in its own
 * namespace, for a compile check by one nvcc run. */
char *emit_all_kernels(const Dag *dag, const CandidateEntry *entries, int count);

/* ------------------------------------------------------------------------------------------ */
/* ini_file.c: INI files through inih, every key and value located                            */
/* ------------------------------------------------------------------------------------------ */

typedef struct IniFile IniFile;
/* Called for every key; section is "" before the first header.  key_loc/value_loc point at the
 * first character of the key and of the value in the file. */
typedef void (*PairFn)(IniFile *f, const char *section, const char *key, const char *value,
                       SrcLoc key_loc, SrcLoc value_loc);
/* Called for every well-formed "[name]" line, even when the section holds no key. */
typedef void (*SectionFn)(IniFile *f, const char *name, SrcLoc loc);

struct IniFile {
  const char *path, *text;
  size_t pos;           /* next unread byte of text */
  const char *line;     /* the line inih is parsing now */
  int lineno;           /* its number */
  PairFn on_pair;
  SectionFn on_section;
  void *user;
};

/* Where line:col of f is (line 0: the file as a whole). */
SrcLoc ini_file_loc(const IniFile *f, int line, int col);
/* Parses f->text, calling f's callbacks; syntax errors inih finds are reported as ours (and a
 * line longer than 8189 characters).  Returns false on any. */
bool ini_run(IniFile *f);

/* ------------------------------------------------------------------------------------------ */
/* Tools around the library and the GPU runs                                                  */
/* ------------------------------------------------------------------------------------------ */

/* bench.c: writes the micro-benchmark program for every routine of lib into out_dir (one CUDA
 * program, see bench.c); returns the number of benchmark kernels, -1 after a diagnostic. */
int bench_emit(const Library *lib, const char *out_dir);
/* emit_units.c: a standalone kernel cu_<f>_<i> plus harness for every implementation, in the
 * given precision, into out_dir/<function>/; returns the number of kernels (*nfunctions_out: of
 * how many functions), -1 after a diagnostic. */
int units_emit(const Library *lib, const char *out_dir, Precision precision,
               int *nfunctions_out);
/* results.c: the results file of a generated harness (results.xml; schema in results.c). */
typedef struct {
  char *name, *kernels;
  char *calls; /* each kernel's calls (candidate_calls), or NULL in files written before them */
  char *shapes; /* each kernel's block shape (candidate_shapes), or NULL in older files */
  char *code;   /* a digest of the kernels' code (emit_code_digest), or NULL in older files */
  long nkernels, predicted_rank, measured_rank, correct;
  double predicted_ns, measured_ns, melem_s, gbs, copy_pct, error;
  double round_min_ns, round_max_ns; /* the fastest and slowest round's median; NAN if absent */
  long line; /* of its <candidate>, for messages */
} ResultRow;
typedef struct {
  char *spec, *device;
  long device_line; /* of its <device>, for messages */
  double copy_gbs, file_spearman;
  long n, reps, rounds, copies, bytes_per_elem;
  /* What the run's code was generated for, as <run> says (absent from older files): the search
   * that finds its candidates again uses them (cli_tune.c). */
  bool has_precision;
  Precision precision;
  char *layouts;                    /* the --layout value (its items checked), or NULL */
  TextPlace precision_at, layout_at; /* of the attributes' values */
  TextPlace spec_at;                 /* of <kasgen-results spec=>'s value */
  ResultRow *rows;
  int nrows, cap;
} Results;
/* Parses a results file held in memory (path names it in messages); false after located errors
 * (and *r is then empty). */
bool results_parse(const char *path, const char *text, size_t len, Results *r);
void results_free(Results *r);
/* name in dirfd (AT_FDCWD: the working folder) as text, read only as a plain file (a link or a
 * FIFO is refused); path names it in messages.  NULL after a diagnostic. */
char *results_read(int dirfd, const char *name, const char *path, size_t *len);
/* folder/results.xml read and parsed; *path_out (malloc'ed) names it.  false after located
 * errors. */
bool results_load(const char *folder, Results *r, char **path_out);
/* The rows' indices in predicted order, ties in file order, unranked rows ("unfused") last (one
 * sort: a file may hold 150,000 rows); malloc'ed.  results_sort_by_rank puts the rows so. */
int *results_rank_order(const Results *r);
void results_sort_by_rank(Results *r);
/* Whether row x counts in a run's figures and as its measured best: ranked (not "unfused"),
 * correct, with a time measured.  report's figures, tune's and calibrate's samples all take this
 * rule: a WRONG candidate's time is no measurement of the computation. */
bool results_row_counts(const ResultRow *x);
/* Spearman's rank correlation of x and y (ties get their mean rank); NAN when n < 2 or one side
 * is constant. */
double rank_correlation(const double *x, const double *y, int n);
/* report.c: reads a results file copied back from a GPU run, prints the table and draws the plot
 * with gnuplot: operand is a folder (its results.xml; plot.png there), a file (the plot beside
 * it) or "-" (the standard input; no plot).  false after a located diagnostic. */
bool report_run(const char *operand);
/* The reader behind report_run, for tests and the fuzzer: parses a results file held in memory,
 * prints the table to out (unless NULL) and returns the gnuplot script in *script (malloc'ed,
 * unless script is NULL); false after located errors. */
bool report_text(const char *path, const char *text, size_t len, FILE *out, char **script);
/* report draws DIR/plot.png through a temporary file named with this prefix (a run output, which
 * the output folder's check tolerates and never touches). */
#define REPORT_TEMP_PREFIX ".plot.png.kasgen-tmp-"

/* ------------------------------------------------------------------------------------------ */
/* The command line: main.c holds the table of commands, the cli_*.c files run them            */
/* ------------------------------------------------------------------------------------------ */

/* Exit codes: 0 success, 1 bad input (spec, library, database, output folder), 2 bad usage. */
enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_USAGE = 2 };

typedef struct {
  const char *argv0;
  const char *command; /* "generate" (the main job), "check", "fusions", "list", "plan",
                          "bench", "report", "units" */
  const char *spec;    /* the operand: spec file, or folder for report */
  const char *library_dir, *db_path, *out_dir, *dot_path; /* "-": stdin or stdout (main.c) */
  const char *name; /* --name: the spec's name instead of its file's (required for SPEC -) */
  int top;        /* --top N (default 10) */
  int max_fusion; /* --max-fusion K (default 0: any) */
  double time_limit; /* --time-limit S (default 60; 0: none) */
  bool exhaustive;   /* --exhaustive */
  LoopChoice loops;  /* --loops model|keep|unroll (default model) */
  int beam_width;    /* --beam-width W (0: the default) */
  int variants;      /* --variants K (default SEARCH_VARIANTS; -1 until set, for tune) */
  int explain;    /* --explain R (0 = off) */
  long n;         /* --n: the elements the model predicts for, and the default problem size
                     written into generated harnesses (4194304) */
  bool no_db;     /* --no-db: use the analytic model even when a database exists */
  Precision precision; /* --precision single|double (default single) */
  const char *layouts; /* --layout: element, component, NAME=..., comma-separated (NULL: element) */
  SrcLoc layouts_at;   /* where layouts was read, for its errors (file NULL: --layout) */
  bool no_calibration; /* --uncalibrated: ignore the database's measured calibration */
  bool ptxas;          /* --ptxas: registers from the compiler for the top 30 (off by default:
                          one nvcc run per new kernel costs seconds, docs/model.md) */
  const char *spec_file; /* --spec FILE (tune, calibrate): the spec, where it cannot be found */
  /* tune, calibrate: the spec's path as the run's folder was generated from it, which its code
   * names (and so the code digests of its results file); NULL: the path read */
  const char *spec_as_given;
  bool held_out;         /* --held-out (calibrate): leave one spec out, store nothing */
  unsigned given;        /* the bits (OPT_*) of the options on the command line */
  unsigned recorded;     /* those set from a folder's generation.ini (option_set_recorded) */
} CliOptions;

/* options.c: the options, one bit each, in the order help lists them. */
enum {
  OPT_TOP = 1 << 0,
  OPT_OUT = 1 << 1,
  OPT_MAX_FUSION = 1 << 2,
  OPT_LIBRARY = 1 << 3,
  OPT_DB = 1 << 4,
  OPT_NO_DB = 1 << 5,
  OPT_DOT = 1 << 6,
  OPT_EXPLAIN = 1 << 7,
  OPT_N = 1 << 8,
  OPT_EXHAUSTIVE = 1 << 9,
  OPT_TIME_LIMIT = 1 << 10,
  OPT_BEAM_WIDTH = 1 << 11,
  OPT_PRECISION = 1 << 12,
  OPT_LAYOUT = 1 << 13,
  OPT_PTXAS = 1 << 14,
  OPT_NO_CALIBRATION = 1 << 15,
  OPT_SPEC = 1 << 16,
  OPT_NAME = 1 << 17,
  OPT_LOOPS = 1 << 18,
  OPT_VARIANTS = 1 << 19,
  OPT_HELD_OUT = 1 << 20,
};
#define NOPTIONS 21
/* The options that shape a generation's search and emission: what tune repeats, and what a
 * generated folder records (generation.c). */
#define RECORDED_OPTIONS                                                                        \
  (OPT_MAX_FUSION | OPT_TIME_LIMIT | OPT_EXHAUSTIVE | OPT_BEAM_WIDTH | OPT_LIBRARY | OPT_DB |      \
   OPT_NO_DB | OPT_NO_CALIBRATION | OPT_PTXAS | OPT_N | OPT_PRECISION | OPT_LAYOUT |             \
   OPT_LOOPS | OPT_VARIANTS)
/* --name NAME names folders, files and C identifiers: what a spec's file name keeps. */
#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
#define NAME_RULE ": a name is 1 to 64 letters, digits, '_' and '-' (not first)"

typedef struct {
  const char *name; /* long name, without the dashes */
  const char *arg;  /* the value's placeholder, NULL for a flag */
  unsigned bit;
  const char *help;
} OptionDoc;
extern const OptionDoc option_docs[NOPTIONS];
/* Stores one option's value (bit: one OPT_*); false for a value it does not take (out of range,
 * an unknown word, a --layout list target_new could not read). */
bool option_set(CliOptions *o, unsigned bit, const char *arg);
/* What values option_set takes for the option, as the tail of a message (": an integer from 1
 * to 100000"; "" where any text goes); malloc'ed. */
char *option_value_rule(unsigned bit);
/* The range of a numeric option ("an integer from 1 to 100000", "seconds from 0 (no limit) to
 * 604800 (a week)"), for option_value_rule and --help; malloc'ed; NULL for another option. */
char *option_number_rule(unsigned bit);
unsigned option_bit(const char *name); /* the OPT_* of --name; 0: no such option */

/* cli_front.c: shared loading for every command, and check / fusions / list. */
Library *cli_load_library(const CliOptions *o);
/* The spec of o->spec ("-": the standard input) named o->name when given. */
Spec *cli_load_spec(const CliOptions *o, const Library *lib);
/* The library, opened without checking its implementations, then the spec, then the checks of
 * the functions the spec calls: what a command that works on one spec needs (the other
 * functions are never used, and half of a small spec's run went to checking them).  False after the
 * failing step has reported; *lib and *spec are then what was loaded, or NULL. */
bool cli_load_library_and_spec(const CliOptions *o, Library **lib, Spec **spec);
TimingDb *cli_load_timingdb(const CliOptions *o); /* default database, --db, or analytic */
/* A cheap check, before any work, that output can go to folder path: it is a folder, or it can
 * be created (its nearest existing ancestor is a writable folder).  Writes nothing; false after
 * a diagnostic naming the path. */
bool cli_check_output(const char *path);
int cmd_check(const CliOptions *o);
int cmd_fusions(const CliOptions *o);
int cmd_list(const CliOptions *o);
/* cli_search.c: the main job (ranking, then emission) and plan / --explain.  A session is
 * everything one search needs, loaded in pipeline order: library, spec, DAG, database (with its
 * calibration unless --uncalibrated), the search, and the re-ranking by ptxas's register
 * counts (with --ptxas).  cli_open_session returns false after the failing stage has
 * reported; emits: the session will write the output folder (checked, with what the emitters
 * cannot write, before searching).  cli_close_session frees what was loaded. */
typedef struct {
  Library *lib;
  Spec *spec;
  Dag *dag;
  Target *target; /* --precision, --layout */
  TimingDb *db;
  SearchResult *res;
} Session;

/* options.c: an option read from a file (generation.c) by its long name, one of
 * RECORDED_OPTIONS, with the command line's checks of its value ("yes" for a flag); set, its
 * bit joins o->recorded (RECORDED_SET).
 * RECORDED_GIVEN: the command line gave it (or, for --db and --no-db, the other), which wins;
 * the file's value is not used. */
typedef enum { RECORDED_SET, RECORDED_GIVEN, RECORDED_UNKNOWN, RECORDED_BAD_VALUE } RecordedOption;
RecordedOption option_set_recorded(CliOptions *o, const char *name, const char *value);

/* generation.c: the options a folder was generated with, in DIR/<spec>/generation.ini. */
typedef struct {
  bool found;           /* the folder has the file */
  char **keys, **values; /* owned: the options read keep pointers to the values */
  int nkeys;
  char *path, *text; /* owned: the file, where CliOptions.layouts_at points */
} GenerationRecord;
/* The file's text for the options o of session s (the database and library it used). */
char *generation_ini_text(const CliOptions *o, const Session *s);
/* Reads dir/generation.ini, when there is one, into o: every option it records except those
 * named in skip (NULL-terminated, or NULL) and those the command line gave.  rec keeps the
 * values; free it after o.  false after located errors. */
bool generation_read(const char *dir, CliOptions *o, const char *const *skip,
                     GenerationRecord *rec);
/* Whether the folder's database is not known from rec: no generation.ini (a folder from before
 * it), or one that says the database was read from the standard input.  A generation.ini without
 * a db line is of the default database, which it finds again as it was. */
bool generation_db_unknown(const GenerationRecord *rec);
void generation_record_free(GenerationRecord *rec);
bool cli_open_session(const CliOptions *o, Session *s, bool emits);
void cli_close_session(Session *s);
int cmd_generate(const CliOptions *o);
int cmd_plan(const CliOptions *o);
/* cli_tools.c: units, bench, report. */
int cmd_units(const CliOptions *o);
int cmd_bench(const CliOptions *o);
int cmd_report(const CliOptions *o);
/* cli_tune.c: tune, calibrate. */
int cmd_tune(const CliOptions *o);
int cmd_calibrate(const CliOptions *o);
/* tune.c: what `kasgen tune` and `kasgen calibrate` (cli_tune.c) do with a run's results. */
/* The NAME of index.txt's first line, "kasgen V: spec NAME (PATH), ..." (text: the file's),
 * malloc'ed; NULL when that line names none.  report and tune tell a folder's spec by it. */
char *index_spec_name(const char *text);
/* index.txt's line of the spec's path as the main job was given it (emit.c writes it) */
#define SPEC_GIVEN_KEY "Spec given as: "
/* index.txt's line saying the folder holds the spec's text as read, <stem>.spec (emit.c) */
#define SPEC_COPY_KEY "Spec copy: "
/* What tune and calibrate read of a generated folder's index.txt, read once (tune_read_index). */
typedef struct {
  char *spec;   /* the spec to search it with (asked for: a folder without --spec): its copy,
                   DIR/<stem>.spec, where index.txt says it has one (SPEC_COPY_KEY; a note when
                   the spec copied, still there, differs from it), else the spec the first line
                   names (a folder written before the copy) */
  char *origin; /* with the copy, the first line's path, for a re-emission to keep; else NULL */
  char *given;  /* that path as the main job was given it, which the folder's code names; from a
                   folder written before the line, the first line's path; NULL: neither */
  char *name;   /* the first line's NAME (index_spec_name) */
  int variants; /* the --variants K it was generated with; 0 for a folder written before the
                   variants, or without index.txt */
} FolderIndex;
/* Reads DIR/index.txt into *fi (tune_index_free frees it).  spec_wanted: the spec is read from
 * it, and false returned, after an error, when the line names none that can be read or there
 * is no index.txt; else an index.txt that is not there is a folder without its lines (a folder
 * given with --spec), and false is returned only after an error reading one that is. */
bool tune_read_index(const char *dir, bool spec_wanted, FolderIndex *fi);
void tune_index_free(FolderIndex *fi);
/* The search's candidate (of the spec's DAG dag, for target t) of a ranked results row: the one
 * of its predicted rank, when it has the row's kernels (and, where the row gives them, its
 * calls, block shapes and code digest); unless strict, else of the candidates with those the one
 * predicted nearest to the row's predicted-ns (an older row: NULL when two predicted differently
 * are equally near); else NULL. */
const Candidate *tune_candidate_of(const Dag *dag, const Target *t, const SearchResult *res,
                                   const ResultRow *row, bool strict);
/* Whether what `what` says (at `at`: "this run was measured") happened on device, the GPU the
 * database db describes, as their names say: otherwise an error (refuse) or a warning naming
 * both.  true for the analytic model, which describes no measured GPU. */
bool tune_same_gpu(SrcLoc at, const char *what, const char *device, const TimingDb *db,
                   bool refuse);
/* A row's run-to-run spread: its slowest round's median minus its fastest's (0 when unknown). */
double tune_spread(const ResultRow *row);
/* A candidate predicted under calibration cal at ctx's element count (ctx->n: its launches'
 * share and its kernels' grids; tune and calibrate set the n the run measured). */
double tune_predict(SearchContext *ctx, const Candidate *c, const ModelCalibration *cal);
/* The figures the model is judged by, over n candidates' predicted and measured times. */
typedef struct {
  int n;
  double spearman; /* rank correlation of predicted and measured */
  double gap;      /* how much slower the predicted best ran than the measured best (0.02 = 2%) */
  double error;    /* mean of |predicted - measured| / measured */
} TuneFigures;
void tune_figures(const double *pred, const double *meas, int n, TuneFigures *f);
/* Whether the search gives every ranked row of the run at its rank (tune_candidate_of, strict);
 * unless quiet, a located error names the first row it does not. */
bool tune_reproduces(const Results *r, const Dag *dag, const Target *t, const SearchResult *res,
                     const char *rpath, bool quiet);
/* The predicted and measured ranks side by side, with the prediction under cal and the figures
 * (as generated, and of the model now). */
void tune_print_table(const Results *r, const Dag *dag, const TimingDb *db, const Target *t,
                      const SearchResult *res, const ModelCalibration *cal);
/* The candidate to ship: the measured best (correct, fastest median), unless the predicted best
 * is correct and slower by no more than the larger run-to-run spread of the two; why (malloc'ed)
 * says so.  false after an error (no correct candidate). */
typedef struct {
  const ResultRow *row;
  char *why;
} TuneChoice;
bool tune_choose(const Results *r, const char *rpath, TuneChoice *ch);

/* calibrate.c: the calibration store beside a timing database (<db>.measured.xml: measured
 * candidates and the fitted constants; schema in calibrate.c), and the fit.  Samples are
 * measured candidates with their model terms, grouped by spec. */
typedef struct CalibrationSamples CalibrationSamples;
CalibrationSamples *calibration_samples_new(void);
void calibration_samples_free(CalibrationSamples *all);
/* source: the results file the run's samples come from (for messages). */
void calibration_begin_spec(CalibrationSamples *all, const char *spec, const char *device,
                            const char *source);
void calibration_add(CalibrationSamples *all, SearchContext *ctx, const Candidate *c,
                     const ResultRow *row);
void calibration_end_spec(CalibrationSamples *all);
/* A sample given by its terms (calibration_add computes them): a candidate of nkernels kernels,
 * the launch share the search adds, its measured ns per element. */
void calibration_add_terms(CalibrationSamples *all, const ModelTerms *terms, int nkernels,
                           double launch, double measured);
int calibration_sample_count(const CalibrationSamples *all);
/* The constants minimizing the squared relative errors (docs/model.md); the root mean square
 * relative error with them and without any calibration. */
ModelCalibration calibration_fit(const CalibrationSamples *all, double *rms_fitted,
                                 double *rms_plain);
/* Leave one spec out: for each spec, the constants fitted on the other specs' runs
 * (calibration_fit), and each of its runs judged by them and by the plain model. */
typedef struct {
  const char *spec, *source; /* the run's (owned by the samples) */
  double span;               /* its candidates' measured times: slowest / fastest - 1 */
  TuneFigures plain, held_out; /* the uncalibrated model's figures, and the held-out fit's */
  bool fitted; /* false when the other specs had too few samples to fit (held_out is then
                  the plain model's) */
  ModelCalibration calibration; /* the held-out fit */
} HeldOutRun;
/* The constants of c (a fit) that lie on a limit of the fit's scan, each with its value and
 * range ("requests-one-scale 4.0000 (scanned 0.25 to 4), ..."; malloc'ed), or NULL when none
 * does: the runs did not determine them. */
char *calibration_at_limits(const ModelCalibration *c);
/* The runs with samples, in the order they were added (*nruns of them); free the array. */
HeldOutRun *calibration_held_out(const CalibrationSamples *all, int *nruns);
/* The store's path beside the database at db_path: <db_path without .xml>.measured.xml
 * (malloc'ed). */
char *calibration_store_path(const char *db_path);
/* Writes the store beside db (*path_out, malloc'ed, names it); false after an error. */
bool calibration_write(const TimingDb *db, const CalibrationSamples *all,
                       const ModelCalibration *c, char **path_out);
/* One reading of the store beside db: the calibration it holds into *out (present false when
 * there is none), and its first run measured on another GPU than db's into *other.  Either may
 * be NULL: out NULL reads no constants (nor checks them; the store's root still is).  false
 * after a located error in the store; then *out and *other hold nothing. */
bool calibration_read(const TimingDb *db, ModelCalibration *out, OtherGpuRun *other);
/* calibration_read for calibrate, which replaces the store: constants out of range (a kasgen
 * before 2026-11-29 could store them) are a warning and *out is left absent, so that calibrate
 * searches the runs without them rather than being refused by the store it replaces. */
bool calibration_read_to_refit(const TimingDb *db, ModelCalibration *out, OtherGpuRun *other);
/* Whether the runs of the store beside db were measured on db's GPU: other, as calibration_read
 * found it, is none (true), else tune_same_gpu says so (refuse as there). */
bool calibration_same_gpu(const TimingDb *db, const OtherGpuRun *other, bool refuse);

#endif
