/*
 * testutil.h — what every cmocka test of kasgen includes: cmocka itself (which needs these
 * headers first) and paths to the repository's library and specs.
 */
#ifndef KAS_TESTUTIL_H
#define KAS_TESTUTIL_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kasgen.h"

/* Tests run from the repository root (tests/run.sh cds there). */
#define TEST_LIBRARY "library"
#define TEST_SPECS "specs"
#endif
