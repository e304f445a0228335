/* maximum, minimum and clamp of signed zeros as XLA:CPU computes them
 * (src/kernels/xla_arith.h): maximum(+0, -0) = +0 and minimum(+0, -0) = -0
 * in either operand order, in every float type, element-wise (scalar
 * tail and vector body, fused and not), in clamp, reduce (the vector
 * folds included), reduce-window and scatter. Also the wrap-around of
 * integer reduce add and multiply (undefined behaviour in C, checked
 * under UBSan). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kt_hlo.h"

#define KT_N 37 /* a vector body and a scalar tail */

static const char* const kt_float_types[] = {"f16", "bf16", "f32", "f64"};

/* "{0, -0, 0, ...}" of n values, starting with a -0 when `neg_first`. */
static void kt_zeros(char* buf, size_t cap, int n, bool neg_first) {
  size_t at = 0;
  at += (size_t)snprintf(buf + at, cap - at, "{");
  for (int i = 0; i < n; ++i) {
    bool neg = (i % 2 == 0) == neg_first;
    at += (size_t)snprintf(buf + at, cap - at, "%s%s", i ? ", " : "", neg ? "-0" : "0");
  }
  snprintf(buf + at, cap - at, "}");
}

/* Whether every element of t is a zero of the sign asked. */
static bool kt_all_zero(kc_tensor* t, bool negative) {
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  int64_t n = 1;
  for (int32_t d = 0; d < dl->ndim; ++d) n *= dl->shape[d];
  size_t width = dl->dtype.bits / 8;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t bits = 0;
    memcpy(&bits, (const unsigned char*)dl->data + (size_t)i * width, width);
    uint64_t sign = UINT64_C(1) << (dl->dtype.bits - 1);
    if (bits != (negative ? sign : 0)) return false;
  }
  return true;
}

/* Every element of `t` is a zero of the sign asked, or the test fails
 * with the message. */
#define KT_ZEROS(t, negative, ...)                                   \
  do {                                                               \
    if (!kt_all_zero((t), (negative))) kt__fail(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

KC_TEST(hlo_minmax_signed_zeros_elementwise) {
  char a[512], b[512], text[2048];
  for (size_t t = 0; t < sizeof kt_float_types / sizeof kt_float_types[0]; ++t) {
    const char* ty = kt_float_types[t];
    for (int order = 0; order < 2; ++order) {
      kt_zeros(a, sizeof a, KT_N, order == 0);
      kt_zeros(b, sizeof b, KT_N, order != 0);
      /* Unfused, and as the head of a fused chain (negate twice gives the
       * value back, sign included). */
      snprintf(text, sizeof text,
               "HloModule m\nENTRY main {\n"
               "  a = %s[%d] constant(%s)\n  b = %s[%d] constant(%s)\n"
               "  mx = %s[%d] maximum(a, b)\n  mn = %s[%d] minimum(a, b)\n"
               "  bx = %s[%d] maximum(b, a)\n  nx = %s[%d] negate(bx)\n"
               "  fx = %s[%d] negate(nx)\n"
               "  bn = %s[%d] minimum(b, a)\n  nn = %s[%d] negate(bn)\n"
               "  fn = %s[%d] negate(nn)\n"
               "  sa = %s[] constant(0)\n  sb = %s[] constant(-0)\n"
               "  smx = %s[] maximum(sb, sa)\n  smn = %s[] minimum(sa, sb)\n"
               "  ROOT r = (%s[%d], %s[%d], %s[%d], %s[%d], %s[], %s[]) "
               "tuple(mx, mn, fx, fn, smx, smn)\n}\n",
               ty, KT_N, a, ty, KT_N, b, ty, KT_N, ty, KT_N, ty, KT_N, ty, KT_N, ty, KT_N,
               ty, KT_N, ty, KT_N, ty, KT_N, ty, ty, ty, ty, ty, KT_N, ty, KT_N, ty, KT_N,
               ty, KT_N, ty, ty);
      kc_tensor* outs[6];
      kt_run_text(text, outs, 6);
      KT_ZEROS(outs[0], false, "%s maximum, order %d", ty, order);
      KT_ZEROS(outs[1], true, "%s minimum, order %d", ty, order);
      KT_ZEROS(outs[2], false, "%s fused maximum, order %d", ty, order);
      KT_ZEROS(outs[3], true, "%s fused minimum, order %d", ty, order);
      KT_ZEROS(outs[4], false, "%s scalar maximum", ty);
      KT_ZEROS(outs[5], true, "%s scalar minimum", ty);
      kt_release(outs, 6);
    }
  }
}

KC_TEST(hlo_minmax_signed_zeros_clamp_and_reductions) {
  char a[512], text[4096];
  for (size_t t = 0; t < sizeof kt_float_types / sizeof kt_float_types[0]; ++t) {
    const char* ty = kt_float_types[t];
    for (int order = 0; order < 2; ++order) {
      kt_zeros(a, sizeof a, KT_N, order == 0);
      /* clamp(+0, x, +0) and clamp(-0, x, -0) of mixed zeros; reduce and
       * reduce-window of mixed zeros from an init of the other sign;
       * scatter of mixed zeros into one element. */
      snprintf(text, sizeof text,
               "HloModule m\n"
               "mx { x = %s[] parameter(0)\n  y = %s[] parameter(1)\n"
               "  ROOT r = %s[] maximum(x, y) }\n"
               "mn { x = %s[] parameter(0)\n  y = %s[] parameter(1)\n"
               "  ROOT r = %s[] minimum(x, y) }\n"
               "ENTRY main {\n"
               "  a = %s[%d] constant(%s)\n"
               "  pz = %s[] constant(0)\n  nz = %s[] constant(-0)\n"
               "  c1 = %s[%d] clamp(pz, a, pz)\n  c2 = %s[%d] clamp(nz, a, nz)\n"
               "  rx = %s[] reduce(a, nz), dimensions={0}, to_apply=mx\n"
               "  rn = %s[] reduce(a, pz), dimensions={0}, to_apply=mn\n"
               "  wx = %s[1] reduce-window(a, nz), window={size=%d}, to_apply=mx\n"
               "  wn = %s[1] reduce-window(a, pz), window={size=%d}, to_apply=mn\n"
               "  zero = s32[] constant(0)\n  i = s32[%d,1] broadcast(zero), dimensions={}\n"
               "  o = %s[1] broadcast(nz), dimensions={}\n"
               "  sx = %s[1] scatter(o, i, a), update_window_dims={}, "
               "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
               "index_vector_dim=1, to_apply=mx\n"
               "  ROOT r = (%s[%d], %s[%d], %s[], %s[], %s[1], %s[1], %s[1]) "
               "tuple(c1, c2, rx, rn, wx, wn, sx)\n}\n",
               ty, ty, ty, ty, ty, ty, ty, KT_N, a, ty, ty, ty, KT_N, ty, KT_N, ty, ty, ty,
               KT_N, ty, KT_N, KT_N, ty, ty, ty, KT_N, ty, KT_N, ty, ty, ty, ty, ty);
      kc_tensor* outs[7];
      kt_run_text(text, outs, 7);
      KT_ZEROS(outs[0], false, "%s clamp to +0", ty);
      KT_ZEROS(outs[1], true, "%s clamp to -0", ty);
      KT_ZEROS(outs[2], false, "%s reduce maximum, order %d", ty, order);
      KT_ZEROS(outs[3], true, "%s reduce minimum, order %d", ty, order);
      KT_ZEROS(outs[4], false, "%s reduce-window maximum", ty);
      KT_ZEROS(outs[5], true, "%s reduce-window minimum", ty);
      KT_ZEROS(outs[6], false, "%s scatter maximum", ty);
      kt_release(outs, 7);
    }
  }
}

/* A reduce's integer add and multiply wrap around, as XLA's do; in C a
 * signed overflow would be undefined (UBSan checks it in `make asan`). */
KC_TEST(hlo_reduce_integer_overflow_wraps) {
  kc_tensor* outs[5];
  kt_run_text(
      "HloModule m\n"
      "add32 { x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT r = s32[] add(x, y) }\n"
      "mul32 { x = s32[] parameter(0)\n  y = s32[] parameter(1)\n"
      "  ROOT r = s32[] multiply(x, y) }\n"
      "add64 { x = s64[] parameter(0)\n  y = s64[] parameter(1)\n  ROOT r = s64[] add(x, y) }\n"
      "ENTRY main {\n"
      "  big = s32[] constant(2147483647)\n  a = s32[20] broadcast(big), dimensions={}\n"
      "  p16 = s32[] constant(65536)\n  m = s32[20] broadcast(p16), dimensions={}\n"
      "  big64 = s64[] constant(9223372036854775807)\n"
      "  b = s64[20] broadcast(big64), dimensions={}\n"
      "  one = s32[] constant(1)\n  three = s32[] constant(3)\n  zero = s64[] constant(0)\n"
      "  ra = s32[] reduce(a, one), dimensions={0}, to_apply=add32\n"
      "  rm = s32[] reduce(m, three), dimensions={0}, to_apply=mul32\n"
      "  rb = s64[] reduce(b, zero), dimensions={0}, to_apply=add64\n"
      "  rw = s32[1] reduce-window(a, one), window={size=20}, to_apply=add32\n"
      "  a2 = s32[20,3] broadcast(big), dimensions={}\n"
      "  rk = s32[3] reduce(a2, one), dimensions={0}, to_apply=add32\n"
      "  ROOT r = (s32[], s32[], s64[], s32[1], s32[3]) tuple(ra, rm, rb, rw, rk)\n}\n",
      outs, 5);
  /* 1 + 20 * (2^31 - 1) mod 2^32 = 1 - 20 = -19; 3 * 2^(16*20) mod 2^32 =
   * 0; 20 * (2^63 - 1) mod 2^64 = -20. */
  KC_CHECK_INT(*(const int32_t*)kt_data(outs[0]), -19);
  KC_CHECK_INT(*(const int32_t*)kt_data(outs[1]), 0);
  KC_CHECK_INT(*(const int64_t*)kt_data(outs[2]), -20);
  KC_CHECK_INT(*(const int32_t*)kt_data(outs[3]), -19);
  /* Along a kept last dimension, row by row. */
  for (int k = 0; k < 3; ++k) KC_CHECK_INT(((const int32_t*)kt_data(outs[4]))[k], -19);
  kt_release(outs, 5);
}
