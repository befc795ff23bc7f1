/*
 * fuzz_ini.c — libFuzzer target for the implementation-INI parser of src/library.c: arbitrary
 * text goes through library_parse_impl_ini_text (inih, our line reader, key/section checks,
 * the pattern syntax, the expression parser, and pattern evaluation at several block sizes)
 * against a fixed two-parameter function, and through the .cu extractor and rule checker
 * (instantiate_find, instantiate_check_rules).
 * Nothing may crash, leak, hit undefined behaviour or hang; errors are expected and ignored.
 * Build and run with tests/fuzz/fuzz_ini.sh.
 */
#include "kasgen.h"

#include <stdlib.h>
#include <string.h>

/* A function shaped like mmul33/mvmul33 without reading any library folder. */
static KType matrix = {.name = (char *)"matrix3x3", .size = 9};
static KType vector = {.name = (char *)"vector3", .size = 3};
static Function fz = {.name = (char *)"fz", .params = {&matrix, &vector}, .nparams = 2,
                      .result = &matrix};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0'; /* an embedded NUL just ends the text, as read_text_file would refuse it */
  Impl impl;
  if (library_parse_impl_ini_text("fz/fz_1.ini", text, &fz, &impl)) {
    /* Valid metadata: the derived symbols must be well formed. */
    if (strcmp(impl.compute_symbol, "d_fz_1_compute") != 0) abort();
    for (int j = 0; j < impl.nloads; j++)
      if (!impl.loads[j].symbol || impl.loads[j].arg < 0 || impl.loads[j].arg >= 2) abort();
  }
  library_impl_free(&impl);
  size_t b, e;
  if (instantiate_find(text, "d_fz_1_compute", &b, &e) && (b > e || e > size)) abort();
  instantiate_check_rules("fz/fz_1.cu", text, "d_fz_1_compute");
  free(text);
  diag_reset();
  return 0;
}
