/*
 * test_brief.c — the shortening of long lists for tables (brief_list, brief_kernels in
 * src/util.c), which an element of 128 calls needs: a candidate's line was 1500 characters.
 * Against a brute force over every prefix: the longest run of leading items that fits the
 * width with "...", the last item and the count; a list that fits is left whole; each kernel
 * of several is shortened, and then the list of kernels.
 */
#include "testutil.h"

/* items random names "f<k>_<i>" of varying length, joined by sep */
static char *random_list(unsigned *state, int n, const char *sep) {
  StrBuf sb;
  sb_init(&sb);
  for (int i = 0; i < n; i++) {
    *state = *state * 1103515245u + 12345u;
    unsigned v = (*state >> 8) & 0xffff;
    sb_printf(&sb, "%sf%u_%u", i ? sep : "", v % 1000, 1 + v % 3);
  }
  return sb_take(&sb);
}

/* The brute force: of every prefix of j items (j = 1 .. n-2), the longest whose line fits,
 * else the first item alone. */
static char *oracle(const char *s, const char *sep, size_t width, const char *noun) {
  char *copy = xstrdup(s), *items[512];
  int n = 0;
  size_t seplen = strlen(sep);
  for (char *p = copy;;) {
    char *end = strstr(p, sep);
    items[n++] = p;
    if (!end) break;
    *end = '\0';
    p = end + seplen;
  }
  char *out = NULL;
  if (strlen(s) <= width || n < 3) out = xstrdup(s);
  for (int j = n - 2; j >= 1 && !out; j--) {
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < j; i++) sb_printf(&sb, "%s%s", i ? sep : "", items[i]);
    sb_printf(&sb, "%s...%s%s (%d %s)", sep, sep, items[n - 1], n, noun);
    if (sb.len <= width || j == 1) out = sb_take(&sb);
    sb_free(&sb);
  }
  free(copy);
  return out;
}

static void test_lists_against_brute_force(void **state) {
  (void)state;
  unsigned seed = 7;
  for (int trial = 0; trial < 2000; trial++) {
    int n = 1 + trial % 150;
    size_t width = 20 + (size_t)(trial * 37) % 120;
    const char *sep = trial % 2 ? "+" : " ";
    char *s = random_list(&seed, n, sep);
    char *got = brief_list(s, sep, width), *want = oracle(s, sep, width, "calls");
    assert_string_equal(got, want);
    if (strlen(s) <= width) assert_string_equal(got, s);
    free(got), free(want), free(s);
  }
}

static void test_one_kernel_is_a_list(void **state) {
  (void)state;
  unsigned seed = 11;
  for (int n = 1; n < 140; n++) {
    char *s = random_list(&seed, n, "+");
    char *got = brief_kernels(s, BRIEF_WIDTH), *want = oracle(s, "+", BRIEF_WIDTH, "calls");
    assert_string_equal(got, want);
    free(got), free(want), free(s);
  }
}

static void test_many_kernels(void **state) {
  (void)state;
  /* the unfused form of 128 calls: one call a kernel */
  unsigned seed = 3;
  char *unfused = random_list(&seed, 128, " | ");
  char *got = brief_kernels(unfused, BRIEF_WIDTH);
  assert_true(strlen(got) <= BRIEF_WIDTH);
  assert_non_null(strstr(got, " | ... | "));
  assert_non_null(strstr(got, "(128 kernels)"));
  assert_non_null(strstr(got, strrchr(unfused, ' ') + 1)); /* the last kernel stays */
  free(got), free(unfused);
  /* two kernels, each shortened to its share and then kept whole */
  char *a = random_list(&seed, 60, "+"), *b = random_list(&seed, 2, "+");
  char *two = xasprintf("%s | %s", a, b);
  got = brief_kernels(two, BRIEF_WIDTH);
  char *a_brief = oracle(a, "+", BRIEF_WIDTH / 2, "calls");
  char *want = xasprintf("%s | %s", a_brief, b);
  assert_string_equal(got, want);
  free(got), free(want), free(a_brief), free(two), free(a), free(b);
}

/* A kernel of groups ends in a note ("madd33_1 (N = 0..3 in 4 groups)"), said with the count. */
static void test_note_kept(void **state) {
  (void)state;
  unsigned seed = 5;
  char *chain = random_list(&seed, 40, "+");
  char *s = xasprintf("%s (N = 0..3 in 4 groups)", chain);
  char *got = brief_kernels(s, BRIEF_WIDTH);
  assert_non_null(strstr(got, " (40 calls; N = 0..3 in 4 groups)"));
  assert_null(strstr(got, ") ("));
  free(got), free(s);
  s = xstrdup("f1_1+f2_1 (N = 0..3 in 4 groups)");
  got = brief_kernels(s, BRIEF_WIDTH);
  assert_string_equal(got, s); /* short: as it was */
  free(got), free(s), free(chain);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lists_against_brute_force),
      cmocka_unit_test(test_one_kernel_is_a_list),
      cmocka_unit_test(test_many_kernels),
      cmocka_unit_test(test_note_kept),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
