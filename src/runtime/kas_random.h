/*
 * kas_random.h — the test data of every checker kasgen generates (check_cpu, harness,
 * check_gpu): reproducible, and never zero, so that a kernel that forgets to load or to multiply
 * cannot pass.  Copied into common/ of every generated folder from kasgen's src/runtime/.
 */
#ifndef KAS_RANDOM_H
#define KAS_RANDOM_H
#include <stdint.h>

/* xorshift64*: a fixed seed, so a failure reproduces. */
static uint64_t kas_rng_state = 0x9E3779B97F4A7C15ull;

static inline double kas_uniform(void) {
  kas_rng_state ^= kas_rng_state >> 12;
  kas_rng_state ^= kas_rng_state << 25;
  kas_rng_state ^= kas_rng_state >> 27;
  return (double)((kas_rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* A value in [0.5, 1.5), negated with probability 1/2 when is_signed: never zero.  In double
 * precision every bit is random (a float-valued double would hide a computation in float). */
static inline double kas_random_double(int is_signed) {
  double v = 0.5 + kas_uniform();
  return is_signed && kas_uniform() < 0.5 ? -v : v;
}

/* The same rounded to float: the single-precision checkers' data. */
static inline float kas_random_value(int is_signed) {
  float v = (float)(0.5 + kas_uniform());
  return is_signed && kas_uniform() < 0.5 ? -v : v;
}
#endif
