/*
 * kas_layout.h — the arrays every generated checker hands the candidates, laid out as the
 * candidates address them (kas_candidates.h: KAS_ELEMENT, element e of s reals at p + e*s;
 * KAS_COMPONENT, component c of element e at p[c*ld + e]), and the sub-range a FEM code passes:
 * elements [first, first + n) of arrays of ld >= first + n elements, given as p + the first
 * element's offset.  The CPU graph works on element-major doubles; these move values between the
 * two.  Plain C; copied into common/ of every generated folder from kasgen's src/runtime/.
 */
#ifndef KAS_LAYOUT_H
#define KAS_LAYOUT_H
#include <stddef.h>

/* Reals of an array of `total` elements of `size` reals (component-major: ld >= total). */
static inline size_t kas_array_reals(int component, int size, size_t total, size_t ld) {
  return component ? (size_t)size * ld : (size_t)size * total;
}

/* Reals from the array's start to component c of element e. */
static inline size_t kas_array_index(int component, int size, size_t e, int c, size_t ld) {
  return component ? (size_t)c * ld + e : e * (size_t)size + (size_t)c;
}

/* Writes n elements, element-major in `from` (values of any real type T), into the array at
 * elements [first, first + n). */
#define KAS_SCATTER(array, from, component, size, first, n, ld)                                 \
  do {                                                                                          \
    for (size_t kas_e = 0; kas_e < (n); kas_e++)                                                \
      for (int kas_c = 0; kas_c < (size); kas_c++)                                              \
        (array)[kas_array_index((component), (size), (first) + kas_e, kas_c, (ld))] =           \
            (from)[kas_e * (size_t)(size) + (size_t)kas_c];                                     \
  } while (0)

/* The reverse: elements [first, first + n) of the array into `to`, element-major. */
#define KAS_GATHER(to, array, component, size, first, n, ld)                                    \
  do {                                                                                          \
    for (size_t kas_e = 0; kas_e < (n); kas_e++)                                                \
      for (int kas_c = 0; kas_c < (size); kas_c++)                                              \
        (to)[kas_e * (size_t)(size) + (size_t)kas_c] =                                          \
            (array)[kas_array_index((component), (size), (first) + kas_e, kas_c, (ld))];        \
  } while (0)
#endif
