/* The narrow integers' own arithmetic (i2, i4, ui2, ui4; HLO's s2, s4, u2,
 * u4), which the StableHLO reader's and the HLO parser's programs are
 * checked against: test_stablehlo_narrow.c, test_parse_narrow.c. */
#ifndef KCALL_TESTS_KT_NARROW_H_
#define KCALL_TESTS_KT_NARROW_H_

#include <stdio.h>

#include "kt_hlo.h"

typedef struct kt_narrow {
  const char* mlir; /* its MLIR name; HLO writes s4 for i4, u4 for ui4 */
  unsigned bits;
  bool sign;
} kt_narrow;

static const kt_narrow kTypes[] __attribute__((unused)) = {
    {"i4", 4, true}, {"ui4", 4, false}, {"i2", 2, true}, {"ui2", 2, false}};

static inline int kt_lo(const kt_narrow* t) { return t->sign ? -(1 << (t->bits - 1)) : 0; }
static inline int kt_hi(const kt_narrow* t) {
  return t->sign ? (1 << (t->bits - 1)) - 1 : (1 << t->bits) - 1;
}

/* v's low bits as the type reads them. */
static inline int kt_wrap(const kt_narrow* t, int v) {
  int mask = (1 << t->bits) - 1;
  v &= mask;
  return t->sign && v >> (t->bits - 1) ? v - (1 << t->bits) : v;
}

/* The binary ops and what each gives on the narrow type (XLA's integer
 * rules: x / 0 is all ones, x % 0 is x, MIN / -1 is MIN, a shift by the
 * width or more (or by a negative amount) is 0, or the sign for an
 * arithmetic shift right). */
static const char* const kBinary[] __attribute__((unused)) = {"add",
                                      "subtract",
                                      "multiply",
                                      "divide",
                                      "remainder",
                                      "and",
                                      "or",
                                      "xor",
                                      "maximum",
                                      "minimum",
                                      "shift_left",
                                      "shift_right_arithmetic",
                                      "shift_right_logical"};
enum { KT_NUM_BINARY = sizeof kBinary / sizeof kBinary[0] };

static inline int kt_binary(const kt_narrow* t, int op, int a, int b) {
  int mask = (1 << t->bits) - 1;
  int min = kt_lo(t);
  bool too_far = b < 0 || b >= (int)t->bits;
  switch (op) {
    case 0:
      return kt_wrap(t, a + b);
    case 1:
      return kt_wrap(t, a - b);
    case 2:
      return kt_wrap(t, a * b);
    case 3:
      return b == 0 ? kt_wrap(t, -1) : (t->sign && a == min && b == -1) ? min : a / b;
    case 4:
      return b == 0 ? a : (t->sign && a == min && b == -1) ? 0 : a % b;
    case 5:
      return a & b;
    case 6:
      return a | b;
    case 7:
      return a ^ b;
    case 8:
      return a > b ? a : b;
    case 9:
      return a < b ? a : b;
    case 10:
      return too_far ? 0 : kt_wrap(t, (int)((unsigned)a << b));
    case 11:
      return too_far ? (a < 0 ? -1 : 0) : a >> b;
    default:
      return too_far ? 0 : kt_wrap(t, (a & mask) >> b);
  }
}

static const char* const kUnary[] __attribute__((unused)) = {"negate", "not", "abs", "popcnt", "count_leading_zeros",
                                     "sign"};
enum { KT_NUM_UNARY = sizeof kUnary / sizeof kUnary[0] };

static inline int kt_unary(const kt_narrow* t, int op, int a) {
  int mask = (1 << t->bits) - 1, u = a & mask, n = 0;
  switch (op) {
    case 0:
      return kt_wrap(t, -a);
    case 1:
      return kt_wrap(t, ~a);
    case 2:
      return kt_wrap(t, a < 0 ? -a : a);
    case 3:
      for (; u; u &= u - 1) ++n;
      return kt_wrap(t, n); /* 2, of an i2, is -2 */
    case 4:
      for (int bit = (int)t->bits - 1; bit >= 0 && !(u >> bit & 1); --bit) ++n;
      return kt_wrap(t, n);
    default:
      return (a > 0) - (a < 0);
  }
}

static inline void kt_check_bytes(kc_tensor* out, const kt_narrow* t, const int* want, int n,
                           const char* what) {
  const unsigned char* got = kt_data(out);
  for (int k = 0; k < n; ++k) {
    int g = t->sign ? (int)(signed char)got[k] : (int)got[k];
    if (g != want[k]) {
      kt__fail(__FILE__, __LINE__, "%s %s element %d: got %d, expected %d", what, t->mlir, k, g,
               want[k]);
      return;
    }
  }
}

/* Every pair (a[i], b[i]) of t's values, and the two lists as text
 * ("-8, -8, ..."); the count of pairs. */
static inline int kt_narrow_pairs(const kt_narrow* t, int* a, int* b, char* as, char* bs,
                                  size_t cap) {
  int lo = kt_lo(t), count = kt_hi(t) - lo + 1, pairs = count * count;
  size_t la = 0, lb = 0;
  for (int i = 0; i < pairs; ++i) {
    a[i] = lo + i / count;
    b[i] = lo + i % count;
    la += (size_t)snprintf(as + la, cap - la, "%s%d", i ? ", " : "", a[i]);
    lb += (size_t)snprintf(bs + lb, cap - lb, "%s%d", i ? ", " : "", b[i]);
  }
  return pairs;
}

/* out[k]: kBinary[k] of a and b, then kUnary[k] of a, each checked against
 * t's arithmetic; released. */
static inline void kt_narrow_check_all(kc_tensor** out, const kt_narrow* t, const int* a,
                                       const int* b, int pairs) {
  int want[256];
  for (int k = 0; k < KT_NUM_BINARY; ++k) {
    for (int i = 0; i < pairs; ++i) want[i] = kt_binary(t, k, a[i], b[i]);
    kt_check_bytes(out[k], t, want, pairs, kBinary[k]);
  }
  for (int k = 0; k < KT_NUM_UNARY; ++k) {
    for (int i = 0; i < pairs; ++i) want[i] = kt_unary(t, k, a[i]);
    kt_check_bytes(out[KT_NUM_BINARY + k], t, want, pairs, kUnary[k]);
  }
  kt_release(out, KT_NUM_BINARY + KT_NUM_UNARY);
}

#endif /* KCALL_TESTS_KT_NARROW_H_ */
