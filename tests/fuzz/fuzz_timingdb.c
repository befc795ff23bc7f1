/*
 * fuzz_timingdb.c — libFuzzer target for the timing-database loader (src/timingdb.c through
 * src/xml_input.c): any bytes go through timingdb_parse.  A database that loads must keep the
 * loader's promises: every device limit inside the ranges the model's arithmetic is safe for,
 * every timing finite and bounded, the routines sorted and unique (each found by the binary search
 * at its own place), and interpolated lookups finite and bounded.  A rejected input must have
 * reported an error.  Build: tests/fuzz/build.sh; run: tests/fuzz/README.md.
 */
#include "kasgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void check_device(const DeviceLimits *d) {
  if (d->warp_size < 1 || d->warp_size > 1024 || d->sm_count < 1 || d->max_threads_per_sm < 1 ||
      d->max_blocks_per_sm < 1 || d->regs_per_sm < 1 || d->smem_per_sm < 1 ||
      !(d->copy_gbs > 0 && d->copy_gbs <= 1e6) || !(d->launch_overhead_ns >= 0) ||
      !(d->launch_overhead_ns <= 1e9) || d->l2_bytes < 0)
    abort();
}

static void check_routines(const TimingDb *db) {
  for (int i = 0; i < db->nroutines; i++) {
    const RoutineTiming *r = &db->routines[i];
    if (!r->impl || r->npoints < 1) abort();
    if (timingdb_find(db, r) != r) abort(); /* unique: its key finds itself */
    for (int p = 0; p < r->npoints; p++)
      if (!(r->points[p].ns >= 0 && r->points[p].ns <= 1e6) || r->points[p].e < 1) abort();
    static const int es[] = {1, 4, 32, 1024, 65536};
    for (size_t k = 0; k < sizeof es / sizeof *es; k++) {
      double ns = timingdb_routine_ns(r, es[k], (int)(k * 1000));
      if (!(ns >= 0 && ns <= 1e6)) abort();
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* As read_text_file hands it over: text up to the first NUL (files with one are refused),
   * NUL-terminated (diagnostics show its lines). */
  char *text = strndup((const char *)data, size);
  diag_reset();
  TimingDb *db = timingdb_parse("fuzz.xml", text, strlen(text));
  if (db) {
    check_device(&db->dev);
    check_routines(db);
    timingdb_free(db);
  } else if (diag_error_count() == 0) {
    abort(); /* rejected without saying why */
  }
  free(text);
  return 0;
}
