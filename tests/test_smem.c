/*
 * test_smem.c — shared-memory allocation: properties on random live ranges, checked by brute
 * force over every step and byte (no two simultaneously live buffers share a byte, everything
 * lies inside the peak, offsets are 16-byte aligned), and known small cases.
 */
#include "testutil.h"

#include <stdlib.h>

static int align16(int b) { return (b + 15) & ~15; }

/* Brute force: per step, mark every byte of every live buffer; a byte marked twice fails. */
static void check_allocation(const int *bytes, const int *first, const int *last, int n,
                             const int *off, int peak) {
  int maxstep = 0;
  for (int b = 0; b < n; b++) {
    if (bytes[b] <= 0) {
      assert_int_equal(off[b], -1);
      continue;
    }
    assert_true(off[b] >= 0);
    assert_int_equal(off[b] % 16, 0);
    assert_true(off[b] + bytes[b] <= peak);
    if (last[b] > maxstep) maxstep = last[b];
  }
  assert_int_equal(peak % 16, 0);
  unsigned char *owner = malloc((size_t)peak + 1);
  int lower_bound = 0;
  for (int s = 0; s <= maxstep; s++) {
    for (int k = 0; k <= peak; k++) owner[k] = 0;
    int live = 0;
    for (int b = 0; b < n; b++) {
      if (bytes[b] <= 0 || first[b] > s || last[b] < s) continue;
      live += align16(bytes[b]);
      for (int k = off[b]; k < off[b] + bytes[b]; k++) {
        assert_int_equal(owner[k], 0);
        owner[k] = 1;
      }
    }
    if (live > lower_bound) lower_bound = live;
  }
  assert_true(peak >= lower_bound);
  free(owner);
}

static void test_random_property(void **state) {
  (void)state;
  srand(12345);
  for (int iter = 0; iter < 2000; iter++) {
    int n = 1 + rand() % 12;
    int bytes[12], first[12], last[12], off[12];
    for (int b = 0; b < n; b++) {
      bytes[b] = rand() % 5 == 0 ? 0 : 4 * (1 + rand() % 300);
      first[b] = rand() % 15;
      last[b] = first[b] + rand() % 6;
    }
    int peak = smem_allocate(bytes, first, last, n, off);
    check_allocation(bytes, first, last, n, off, peak);
  }
}

/* Disjoint live ranges share bytes; overlapping ones do not. */
static void test_reuse(void **state) {
  (void)state;
  int bytes[3] = {1000, 1000, 100}, first[3] = {0, 3, 1}, last[3] = {2, 5, 4}, off[3];
  int peak = smem_allocate(bytes, first, last, 3, off);
  assert_int_equal(off[0], 0);
  assert_int_equal(off[1], 0);   /* reuses buffer 0's bytes */
  assert_int_equal(off[2], 1008); /* aligned after both */
  assert_int_equal(peak, 1008 + 112);
}

static void test_registers_and_empty(void **state) {
  (void)state;
  int bytes[2] = {0, 36}, first[2] = {0, 0}, last[2] = {1, 1}, off[2];
  assert_int_equal(smem_allocate(bytes, first, last, 2, off), 48);
  assert_int_equal(off[0], -1);
  assert_int_equal(off[1], 0);
  assert_int_equal(smem_allocate(bytes, first, last, 0, off), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_property),
      cmocka_unit_test(test_reuse),
      cmocka_unit_test(test_registers_and_empty),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
