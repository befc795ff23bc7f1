/*
 * generation.c — the options a folder was generated with, recorded in DIR/<spec>/generation.ini
 * by the main job (and again by tune's re-emission) and read back by `kasgen tune` and
 * `kasgen calibrate`.  A GPU run is matched to the search that made it, so that search must be
 * repeated with the same database, precision, layouts, loops and limits; a user who generated
 * with --precision double or --db should not have to say so again, nor be told that "the
 * library, the database or the model changed" when only an option is missing.
 *
 *   ; generation.ini — written by kasgen ...
 *   [generation]
 *   db = /home/user/kasgen/benchmarks/nvidia-h200.xml
 *   precision = double
 *   layout = component
 *   loops = model
 *   variants = 5
 *   time-limit = 60
 *   n = 4194304
 *
 * (time-limit only where it was given: besides the search, it bounds --ptxas's nvcc runs,
 * which get 5 minutes without it, and a repeat of the generation bounds them as it did.)
 * Keys are kasgen's long option names (options.c sets them, with the command line's checks); a
 * flag is recorded as "yes" when it was on.  A library or database the user named is recorded by
 * its absolute path, and so is the database chosen for this machine's GPU (local_gpu.c), which
 * tune and calibrate never look for; the defaults are not, and are found again as they were.  An
 * option given on tune's or calibrate's command line wins over the file.  A folder written
 * before the file existed has none: tune then reads --variants from index.txt, and the precision
 * and layouts from results.xml's <run> where it says them (cli_tune.c).
 */
#include "kasgen.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GENERATION_SECTION "generation"

/* ---- writing ------------------------------------------------------------------------------ */

/* Whether inih reads value back as written: one line, no space at either end (inih strips
 * them), and no " ;" (an inline comment). */
static bool round_trips(const char *value) {
  size_t len = strlen(value);
  if (!len || value[0] == ' ' || value[0] == '\t' || value[len - 1] == ' ' ||
      value[len - 1] == '\t' || strstr(value, " ;") || strstr(value, "\t;"))
    return false;
  for (const char *s = value; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f) return false;
  return true;
}

/* "key = value", or a comment saying why it cannot be recorded (tune then needs it given). */
static void put_value(StrBuf *sb, const char *key, const char *value) {
  if (round_trips(value)) sb_printf(sb, "%s = %s\n", key, value);
  else sb_printf(sb, "; %s not recorded: its value does not fit on an INI line (give --%s)\n",
                 key, key);
}

/* A path the user gave, made absolute, so that tune may run from another folder. */
static void put_path(StrBuf *sb, const char *key, const char *path) {
  char *absolute = absolute_path(path);
  put_value(sb, key, absolute);
  free(absolute);
}

static const char *loops_name(LoopChoice loops) {
  switch (loops) {
  case LOOPS_KEEP: return "keep";
  case LOOPS_UNROLL: return "unroll";
  case LOOPS_GROUPS: return "groups";
  default: return "model";
  }
}

/* The line of a generation whose database was read from the standard input: tune and calibrate
 * cannot find it again (generation_db_unknown). */
#define DB_NOT_RECORDED "; db not recorded: it was read from the standard input (give --db)"

char *generation_ini_text(const CliOptions *o, const Session *s) {
  StrBuf sb;
  sb_init(&sb);
  sb_printf(&sb, "; generation.ini — written by kasgen %s: the options this folder was\n"
                 "; generated with.  kasgen tune and kasgen calibrate read them to repeat its\n"
                 "; search; an option given to them wins.\n[" GENERATION_SECTION "]\n",
            KASGEN_VERSION);
  /* the default library and database are found again as they were (beside the binary) */
  if (o->library_dir) put_path(&sb, "library", s->lib->dir);
  if (o->no_db || s->db->analytic) sb_puts(&sb, "no-db = yes\n");
  else if (is_stdio_path(o->db_path))
    sb_puts(&sb, DB_NOT_RECORDED "\n");
  else if (o->db_path) put_path(&sb, "db", o->db_path);
  else if (s->db->for_local_gpu) put_path(&sb, "db", s->db->path); /* not found again elsewhere */
  if (o->no_calibration) sb_puts(&sb, "uncalibrated = yes\n");
  sb_printf(&sb, "precision = %s\n", o->precision == PREC_DOUBLE ? "double" : "single");
  if (o->layouts) put_value(&sb, "layout", o->layouts);
  sb_printf(&sb, "loops = %s\n", loops_name(o->loops));
  sb_printf(&sb, "variants = %d\n", o->variants < 0 ? SEARCH_VARIANTS : o->variants);
  if (o->max_fusion > 0) sb_printf(&sb, "max-fusion = %d\n", o->max_fusion);
  if (o->beam_width > 0) sb_printf(&sb, "beam-width = %d\n", o->beam_width);
  /* only when given: it also bounds --ptxas's nvcc runs, which without it get 5 minutes */
  if ((o->given | o->recorded) & OPT_TIME_LIMIT)
    sb_printf(&sb, "time-limit = %g\n", o->time_limit);
  if (o->exhaustive) sb_puts(&sb, "exhaustive = yes\n");
  if (o->ptxas) sb_puts(&sb, "ptxas = yes\n");
  sb_printf(&sb, "n = %ld\n", o->n);
  return sb_take(&sb);
}

/* ---- reading ------------------------------------------------------------------------------ */

typedef struct {
  CliOptions *o;
  const char *const *skip; /* keys left to the command (NULL-terminated) */
  GenerationRecord *rec;
  bool ok;
} Reader;

static bool listed(const char *const *names, const char *name) {
  for (; names && *names; names++)
    if (!strcmp(*names, name)) return true;
  return false;
}

static void on_section(IniFile *f, const char *name, SrcLoc loc) {
  Reader *r = f->user;
  if (strcmp(name, GENERATION_SECTION)) {
    diag_error(loc, "unknown section [%s]; generation.ini has one, [" GENERATION_SECTION "]",
               name);
    r->ok = false;
  }
}

/* Whether the key came earlier in the file (each option once, as on a command line). */
static bool seen_before(const GenerationRecord *rec, const char *key) {
  for (int i = 0; i < rec->nkeys; i++)
    if (!strcmp(rec->keys[i], key)) return true;
  return false;
}

static void on_pair(IniFile *f, const char *section, const char *key, const char *value,
                    SrcLoc key_loc, SrcLoc value_loc) {
  Reader *r = f->user;
  GenerationRecord *rec = r->rec;
  if (strcmp(section, GENERATION_SECTION)) {
    if (!*section) diag_error(key_loc, "'%s' before the [" GENERATION_SECTION "] section", key);
    r->ok = false; /* a key of an unknown section: its header was reported */
    return;
  }
  if (seen_before(rec, key)) {
    diag_error(key_loc, "'%s' is given twice", key);
    r->ok = false;
    return;
  }
  /* the options keep pointers to their values: the record owns them until it is freed */
  rec->keys = xrealloc(rec->keys, (size_t)(rec->nkeys + 1) * sizeof *rec->keys);
  rec->values = xrealloc(rec->values, (size_t)(rec->nkeys + 1) * sizeof *rec->values);
  rec->keys[rec->nkeys] = xstrdup(key);
  char *kept = rec->values[rec->nkeys++] = xstrdup(value);
  if (listed(r->skip, key)) return;
  switch (option_set_recorded(r->o, key, kept)) {
  case RECORDED_SET: /* a layout naming no argument of the spec is an error at its value */
    if (!strcmp(key, "layout")) r->o->layouts_at = value_loc;
    return;
  case RECORDED_GIVEN: return;
  case RECORDED_UNKNOWN:
    diag_error(key_loc, "'%s' is not an option a generation records", key);
    break;
  case RECORDED_BAD_VALUE: /* a layout list names its bad item, as on the command line */
    if (!strcmp(key, "layout")) target_layouts_check(value, value_loc);
    else {
      char *rule = option_value_rule(option_bit(key));
      diag_error(value_loc, "'%s' is not a value of --%s%s", value, key, rule);
      free(rule);
    }
    break;
  }
  r->ok = false;
}

bool generation_read(const char *dir, CliOptions *o, const char *const *skip,
                     GenerationRecord *rec) {
  memset(rec, 0, sizeof *rec);
  char *path = xasprintf("%s/generation.ini", dir);
  struct stat st;
  if (lstat(path, &st) != 0 && errno == ENOENT) { /* a folder from before the file */
    free(path);
    return true;
  }
  char *text = read_text_file(path, NULL);
  Reader r = {.o = o, .skip = skip, .rec = rec, .ok = text != NULL};
  if (text) {
    IniFile f = {.path = path, .text = text, .on_pair = on_pair, .on_section = on_section,
                 .user = &r};
    r.ok = ini_run(&f) && r.ok;
  }
  rec->found = r.ok;
  rec->path = path, rec->text = text;
  return r.ok;
}

bool generation_db_unknown(const GenerationRecord *rec) {
  return !rec->found || (rec->text && strstr(rec->text, "\n" DB_NOT_RECORDED "\n"));
}

void generation_record_free(GenerationRecord *rec) {
  for (int i = 0; i < rec->nkeys; i++) free(rec->keys[i]), free(rec->values[i]);
  free(rec->keys);
  free(rec->values);
  free(rec->path);
  free(rec->text);
  memset(rec, 0, sizeof *rec);
}
