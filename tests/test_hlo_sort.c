/* sort, topk (and XLA:CPU's TopK custom call), bitcast-convert,
 * reduce-precision and opt-barrier, from HLO text: results, including
 * the orders of NaN and -0 JAX's comparators give, and the refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_hlo.h"

/* Element i of an s32 / f32 / u32 output equals want[i] (bits for
 * floats, so -0 and NaN count). */
static void kt_check_s32(kc_tensor* t, const int32_t* want, size_t n) {
  const int32_t* got = kt_data(t);
  for (size_t i = 0; i < n; ++i) KC_CHECK_INT(got[i], want[i]);
}

static void kt_check_u32(kc_tensor* t, const uint32_t* want, size_t n) {
  const uint32_t* got = kt_data(t);
  for (size_t i = 0; i < n; ++i) KC_CHECK_INT((int64_t)got[i], (int64_t)want[i]);
}

static void kt_check_f32_bits(kc_tensor* t, const float* want, size_t n) {
  const float* got = kt_data(t);
  for (size_t i = 0; i < n; ++i) {
    uint32_t g, w;
    memcpy(&g, &got[i], 4);
    memcpy(&w, &want[i], 4);
    if (isnan(want[i]) && isnan(got[i])) continue;
    KC_CHECK_INT((int64_t)g, (int64_t)w);
  }
}

/* ---- sort ------------------------------------------------------------------ */

KC_TEST(hlo_sort_multi_operand_stable_custom_comparator) {
  /* Keys compared by key / 2 (a comparator of its own: the general path);
   * equal halves keep their order, and the values travel with them. */
  kc_tensor* outs[2];
  kt_run_text("HloModule m\n"
         "cmp {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n"
         " c = f32[] parameter(2)\n d = f32[] parameter(3)\n"
         " two = s32[] constant(2)\n ha = s32[] divide(a, two)\n hb = s32[] divide(b, two)\n"
         " ROOT lt = pred[] compare(ha, hb), direction=LT\n}\n"
         "ENTRY e {\n k = s32[6] constant({5, 2, 4, 3, 0, 1})\n"
         " v = f32[6] constant({0, 1, 2, 3, 4, 5})\n"
         " ROOT s = (s32[6], f32[6]) sort(k, v), dimensions={0}, is_stable=true, to_apply=cmp\n}\n",
         outs, 2);
  static const int32_t keys[] = {0, 1, 2, 3, 5, 4};
  static const float vals[] = {4, 5, 1, 3, 0, 2};
  kt_check_s32(outs[0], keys, 6);
  kt_check_f32_bits(outs[1], vals, 6);
  kt_release(outs, 2);
}

/* JAX's comparator for floats: -0 made +0 and NaN made +NaN, then a
 * total-order LT, as jnp.sort lowers it and as XLA:CPU rewrites it (bits
 * as s32). `extra` is appended to the root's operand to make it a
 * comparator kcall does not recognise (so its computation runs). */
static const char* kt_jax_lowered_cmp =
    "cmp {\n x = f32[] parameter(0)\n y = f32[] parameter(1)\n"
    " i = s32[] parameter(2)\n j = s32[] parameter(3)\n"
    " nan = f32[] constant(nan)\n zero = f32[] constant(0)\n"
    " nx = pred[] compare(x, x), direction=NE\n ex = pred[] compare(x, zero), direction=EQ\n"
    " sx = f32[] select(ex, zero, x)\n cx = f32[] select(nx, nan, sx)\n"
    " ny = pred[] compare(y, y), direction=NE\n ey = pred[] compare(y, zero), direction=EQ\n"
    " sy = f32[] select(ey, zero, y)\n cy = f32[] select(ny, nan, sy)\n";

static const char* kt_jax_optimized_tail =
    " z = s32[] constant(0)\n m = s32[] constant(2147483647)\n"
    " bx = s32[] bitcast(cx)\n by = s32[] bitcast(cy)\n"
    " xx = s32[] xor(m, bx)\n xy = s32[] xor(m, by)\n"
    " lx = pred[] compare(bx, z), direction=LT\n ly = pred[] compare(by, z), direction=LT\n"
    " kx = s32[] select(lx, xx, bx)\n ky = s32[] select(ly, xy, by)\n";

static void kt_check_jax_order(const char* root) {
  char text[4096];
  snprintf(text, sizeof text,
           "HloModule m\n%s%s%s}\n"
           "ENTRY e {\n x = f32[8] constant({3, nan, -0, 1, -nan, 0, -inf, inf})\n"
           " i = s32[8] iota(), iota_dimension=0\n"
           " ROOT s = (f32[8], s32[8]) sort(x, i), dimensions={0}, is_stable=true, "
           "to_apply=cmp\n}\n",
           kt_jax_lowered_cmp, strstr(root, "kx") ? kt_jax_optimized_tail : "", root);
  kc_tensor* outs[2];
  kt_run_text(text, outs, 2);
  /* -0 and 0 are equal (kept in index order); NaNs of either sign last. */
  static const int32_t idx[] = {6, 2, 5, 3, 0, 7, 1, 4};
  kt_check_s32(outs[1], idx, 8);
  const float* got = kt_data(outs[0]);
  KC_CHECK(got[0] == -INFINITY && signbit(got[1]) && !signbit(got[2]) && got[5] == INFINITY);
  KC_CHECK(isnan(got[6]) && isnan(got[7]) && signbit(got[7]));
  kt_release(outs, 2);
}

KC_TEST(hlo_sort_jax_float_order_nan_and_negative_zero) {
  /* As JAX lowers it, as XLA:CPU optimizes it, and both run as their
   * computations (the root's extra `and` with true hides the pattern). */
  kt_check_jax_order(" ROOT lt = pred[] compare(cx, cy), direction=LT, type=TOTALORDER\n");
  kt_check_jax_order(" ROOT lt = pred[] compare(kx, ky), direction=LT\n");
  kt_check_jax_order(" lt = pred[] compare(cx, cy), direction=LT, type=TOTALORDER\n"
                     " t = pred[] constant(true)\n ROOT r = pred[] and(lt, t)\n");
  kt_check_jax_order(" lt = pred[] compare(kx, ky), direction=LT\n"
                     " t = pred[] constant(true)\n ROOT r = pred[] and(lt, t)\n");
}

KC_TEST(hlo_sort_total_order_descending_and_dimension_0) {
  /* A plain TOTALORDER compare: -NaN < -inf < -0 < +0 < NaN. */
  kc_tensor* outs[1];
  kt_run_text("HloModule m\ncmp {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
         " ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER\n}\n"
         "ENTRY e {\n x = f32[6] constant({0, nan, -0, -inf, -nan, 1})\n"
         " ROOT s = f32[6] sort(x), dimensions={0}, to_apply=cmp\n}\n",
         outs, 1);
  const float* got = kt_data(outs[0]);
  KC_CHECK(isnan(got[0]) && signbit(got[0]));
  KC_CHECK(got[1] == -INFINITY && got[2] == 0 && signbit(got[2]) && got[3] == 0 &&
           !signbit(got[3]) && got[4] == 1 && isnan(got[5]) && !signbit(got[5]));
  kt_release(outs, 1);
  /* Descending (GT) along dimension 0 of s32[3,2], ties stable, with the
   * second operand carried along; and the same through the comparator's
   * computation. */
  for (int generic = 0; generic < 2; ++generic) {
    char text[2048];
    snprintf(text, sizeof text,
             "HloModule m\ncmp {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n"
             " c = u8[] parameter(2)\n d = u8[] parameter(3)\n%s}\n"
             "ENTRY e {\n x = s32[3,2] constant({{1, 7}, {5, 7}, {-3, 9}})\n"
             " y = u8[3,2] constant({{0, 1}, {2, 3}, {4, 5}})\n"
             " ROOT s = (s32[3,2], u8[3,2]) sort(x, y), dimensions={0}, to_apply=cmp\n}\n",
             generic ? " g = pred[] compare(a, b), direction=GT\n t = pred[] constant(true)\n"
                       " ROOT r = pred[] and(g, t)\n"
                     : " ROOT g = pred[] compare(a, b), direction=GT\n");
    kc_tensor* two[2];
    kt_run_text(text, two, 2);
    static const int32_t want[] = {5, 9, 1, 7, -3, 7};
    static const uint8_t carried[] = {2, 5, 0, 1, 4, 3};
    kt_check_s32(two[0], want, 6);
    const uint8_t* c = kt_data(two[1]);
    for (int i = 0; i < 6; ++i) KC_CHECK_INT(c[i], carried[i]);
    kt_release(two, 2);
  }
}

KC_TEST(hlo_sort_refusals_name_the_attribute) {
  static const char* cmp =
      "HloModule m\ncmp {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
      " ROOT lt = pred[] compare(a, b), direction=LT\n}\n";
  char text[1024];
  snprintf(text, sizeof text,
           "%sENTRY e {\n x = f32[2,3] parameter(0)\n"
           " ROOT s = f32[2,3] sort(x), dimensions={0, 1}, to_apply=cmp\n}\n", cmp);
  KT_COMPILE_FAILS(text, KC_INVALID_ARGUMENT, "dimensions", "one dimension", "got 2");
  snprintf(text, sizeof text,
           "%sENTRY e {\n x = f32[2,3] parameter(0)\n"
           " ROOT s = f32[2,3] sort(x), dimensions={2}, to_apply=cmp\n}\n", cmp);
  KT_COMPILE_FAILS(text, KC_INVALID_ARGUMENT, "dimensions", "0 to 1", "got 2");
  snprintf(text, sizeof text,
           "%sENTRY e {\n x = f32[3] parameter(0)\n"
           " ROOT s = f32[3] sort(x), dimensions={0}, is_stable=maybe, to_apply=cmp\n}\n", cmp);
  KT_PARSE_FAILS(text, "is_stable", "true or false", "maybe");
  snprintf(text, sizeof text,
           "%sENTRY e {\n x = f32[3] parameter(0)\n y = s32[3] parameter(1)\n"
           " ROOT s = (f32[3], s32[3]) sort(x, y), dimensions={0}, to_apply=cmp\n}\n", cmp);
  KT_COMPILE_FAILS(text, KC_INVALID_ARGUMENT, "to_apply 'cmp'", "4 scalar parameters");
  snprintf(text, sizeof text,
           "%sENTRY e {\n x = f32[3] parameter(0)\n"
           " ROOT s = f32[4] sort(x), dimensions={0}, to_apply=cmp\n}\n", cmp);
  KT_COMPILE_FAILS(text, KC_INVALID_ARGUMENT, "result 0", "f32[3]", "f32[4]");
}

/* The same for f64 and f16, as XLA:CPU rewrites it (s64 and s16 keys),
 * descending, with and without the key path. */
KC_TEST(hlo_sort_jax_float_order_f64_f16) {
  static const char* types[][3] = {{"f64", "s64", "9223372036854775807"},
                                   {"f16", "s16", "32767"}};
  for (int k = 0; k < 2; ++k) {
    for (int generic = 0; generic < 2; ++generic) {
      const char* f = types[k][0];
      const char* s = types[k][1];
      char text[4096];
      snprintf(text, sizeof text,
               "HloModule m\ncmp {\n x = %s[] parameter(0)\n y = %s[] parameter(1)\n"
               " i = s32[] parameter(2)\n j = s32[] parameter(3)\n"
               " nan = %s[] constant(nan)\n zero = %s[] constant(0)\n"
               " nx = pred[] compare(x, x), direction=NE\n ex = pred[] compare(x, zero), direction=EQ\n"
               " sx = %s[] select(ex, zero, x)\n cx = %s[] select(nx, nan, sx)\n"
               " ny = pred[] compare(y, y), direction=NE\n ey = pred[] compare(y, zero), direction=EQ\n"
               " sy = %s[] select(ey, zero, y)\n cy = %s[] select(ny, nan, sy)\n"
               " z = %s[] constant(0)\n m = %s[] constant(%s)\n"
               " bx = %s[] bitcast(cx)\n by = %s[] bitcast(cy)\n"
               " xx = %s[] xor(m, bx)\n xy = %s[] xor(m, by)\n"
               " lx = pred[] compare(bx, z), direction=LT\n ly = pred[] compare(by, z), direction=LT\n"
               " kx = %s[] select(lx, xx, bx)\n ky = %s[] select(ly, xy, by)\n"
               " lt = pred[] compare(kx, ky), direction=GT\n t = pred[] constant(true)\n"
               " ROOT r = pred[] and(lt, t)\n}\n"
               "ENTRY e {\n x = %s[8] constant({3, nan, -0, 1, -nan, 0, -inf, inf})\n"
               " i = s32[8] iota(), iota_dimension=0\n"
               " ROOT s = (%s[8], s32[8]) sort(x, i), dimensions={0}, is_stable=true, "
               "to_apply=cmp\n}\n",
               f, f, f, f, f, f, f, f, s, s, types[k][2], s, s, s, s, s, s, f, f);
      if (!generic) {
        /* The root itself: the key path. */
        char* at = strstr(text, " lt = pred[] compare(kx, ky), direction=GT\n");
        KC_CHECK(at != NULL);
        memcpy(at, "ROOT", 4);
        char* rest = strstr(at, " t = pred[] constant(true)\n ROOT r = pred[] and(lt, t)\n");
        KC_CHECK(rest != NULL);
        memmove(rest, strchr(rest, '}'), strlen(strchr(rest, '}')) + 1);
      }
      kc_tensor* outs[2];
      kt_run_text(text, outs, 2);
      /* Descending: NaNs first (index order), then inf .. -inf, 0 = -0. */
      static const int32_t idx[] = {1, 4, 7, 0, 3, 2, 5, 6};
      kt_check_s32(outs[1], idx, 8);
      kt_release(outs, 2);
    }
  }
}

/* ---- topk ------------------------------------------------------------------ */

KC_TEST(hlo_topk_ties_keep_index_order) {
  kc_tensor* outs[4];
  kt_run_text("HloModule m\nENTRY e {\n x = f32[2,5] constant({{1, 3, 3, 2, 3}, {-0, 0, nan, -1, 0}})\n"
         " t = (f32[2,3], s32[2,3]) topk(x), k=3, largest=true\n"
         " u = (f32[2,2], s32[2,2]) topk(x), k=2, largest=false\n"
         " tv = f32[2,3] get-tuple-element(t), index=0\n ti = s32[2,3] get-tuple-element(t), index=1\n"
         " uv = f32[2,2] get-tuple-element(u), index=0\n ui = s32[2,2] get-tuple-element(u), index=1\n"
         " ROOT r = (f32[2,3], s32[2,3], f32[2,2], s32[2,2]) tuple(tv, ti, uv, ui)\n}\n",
         outs, 4);
  /* Row 1 in total order: NaN > 0 = 0 > -0 > -1. */
  static const int32_t ti[] = {1, 2, 4, 2, 1, 4};
  static const int32_t ui[] = {0, 3, 3, 0};
  kt_check_s32(outs[1], ti, 6);
  kt_check_s32(outs[3], ui, 4);
  const float* tv = kt_data(outs[0]);
  KC_CHECK(tv[0] == 3 && tv[1] == 3 && tv[2] == 3 && isnan(tv[3]) && tv[4] == 0);
  const float* uv = kt_data(outs[2]);
  KC_CHECK(uv[0] == 1 && uv[1] == 2 && uv[2] == -1 && uv[3] == 0 && signbit(uv[3]));
  kt_release(outs, 4);
}

KC_TEST(hlo_topk_custom_call_of_xla_cpu) {
  /* What XLA:CPU makes of lax.top_k: a custom call "TopK" naming its
   * comparator; k is the result's minor dimension. */
  kc_tensor* outs[2];
  kt_run_text("HloModule m\ncmp {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
         " c = s32[] parameter(2)\n d = s32[] parameter(3)\n"
         " ROOT g = pred[] compare(a, b), direction=GT\n}\n"
         "ENTRY e {\n x = f32[6] constant({3, 1, 2, 5, 2, 0})\n"
         " ROOT t = (f32[2], s32[2]) custom-call(x), custom_call_target=\"TopK\", "
         "called_computations={cmp}\n}\n",
         outs, 2);
  static const float v[] = {5, 3};
  static const int32_t i[] = {3, 0};
  kt_check_f32_bits(outs[0], v, 2);
  kt_check_s32(outs[1], i, 2);
  kt_release(outs, 2);
}

KC_TEST(hlo_topk_refusals) {
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n x = f32[4] parameter(0)\n"
                   " ROOT t = (f32[5], s32[5]) topk(x), k=5, largest=true\n}\n",
                   KC_INVALID_ARGUMENT, "attribute k", "0 to 4", "got 5");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n x = f32[4] parameter(0)\n"
                   " ROOT t = (f32[2], s32[2]) topk(x), largest=true\n}\n",
                   KC_INVALID_ARGUMENT, "attribute k=N");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n x = f32[4] parameter(0)\n"
                   " ROOT t = (f32[2], s64[2]) topk(x), k=2\n}\n",
                   KC_INVALID_ARGUMENT, "(f32[2], s32[2])", "s64[2]");
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n x = f32[4] parameter(0)\n"
                 " ROOT t = (f32[2], s32[2]) topk(x), k=two\n}\n",
                 "an integer for attribute k");
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n x = f32[4] parameter(0)\n"
                 " ROOT t = f32[2] custom-call(x), custom_call_target=\"TopK\"\n}\n",
                 "TopK", "(values, indices)");
}

/* ---- bitcast-convert, opt-barrier ------------------------------------------------ */

KC_TEST(hlo_bitcast_convert_same_and_different_widths) {
  kc_tensor* outs[4];
  kt_run_text("HloModule m\nENTRY e {\n f = f32[2] constant({1, -2})\n"
         " a = u32[2] bitcast-convert(f)\n"
         " b = u8[2,4] bitcast-convert(a)\n"
         " h = u16[2,2] constant({{1, 2}, {65535, 0}})\n"
         " c = u32[2] bitcast-convert(h)\n"
         " s = f32[] constant(-0)\n d = s32[] bitcast(s)\n"
         " ROOT r = (u32[2], u8[2,4], u32[2], s32[]) tuple(a, b, c, d)\n}\n",
         outs, 4);
  static const uint32_t a[] = {0x3f800000u, 0xc0000000u};
  static const uint32_t c[] = {0x00020001u, 0x0000ffffu};
  kt_check_u32(outs[0], a, 2);
  static const uint8_t b[] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}; /* little-endian */
  const uint8_t* got = kt_data(outs[1]);
  for (int i = 0; i < 8; ++i) KC_CHECK_INT(got[i], b[i]);
  kt_check_u32(outs[2], c, 2);
  KC_CHECK_INT(*(const int32_t*)kt_data(outs[3]), INT32_MIN);
  kt_release(outs, 4);
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n x = u16[3] parameter(0)\n"
                   " ROOT y = u32[] bitcast-convert(x)\n}\n",
                   KC_INVALID_ARGUMENT, "last dimension is 2", "u16[3]");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n x = u32[3] parameter(0)\n"
                   " ROOT y = u8[3] bitcast-convert(x)\n}\n",
                   KC_INVALID_ARGUMENT, "u8[3,4]", "got u8[3]");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n x = pred[3] parameter(0)\n"
                   " ROOT y = u8[3] bitcast-convert(x)\n}\n",
                   KC_INVALID_ARGUMENT, "pred");
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n x = f32[3] parameter(0)\n"
                 " ROOT y = s16[3] bitcast(x)\n}\n",
                 "bitcast", "32 bits", "16 bits");
}

KC_TEST(hlo_opt_barrier_is_its_operand) {
  kc_tensor* outs[2];
  kt_run_text("HloModule m\nENTRY e {\n a = f32[2] constant({1, 2})\n b = s32[] constant(7)\n"
         " t = (f32[2], s32[]) tuple(a, b)\n"
         " o = (f32[2], s32[]) opt-barrier(t)\n"
         " x = f32[2] get-tuple-element(o), index=0\n y = s32[] get-tuple-element(o), index=1\n"
         " ROOT r = (f32[2], s32[]) tuple(x, y)\n}\n",
         outs, 2);
  static const float v[] = {1, 2};
  kt_check_f32_bits(outs[0], v, 2);
  KC_CHECK_INT(*(const int32_t*)kt_data(outs[1]), 7);
  kt_release(outs, 2);
}

/* ---- reduce-precision ---------------------------------------------------------- */

KC_TEST(hlo_reduce_precision_rounding_overflow_nan) {
  kc_tensor* outs[3];
  /* bf16's layout (e8 m7): ties to even. f16's (e5 m10): overflow to
   * inf, below the smallest normal to zero of the sign. A NaN's payload
   * stays, even with no mantissa bits (as XLA:CPU). */
  kt_run_text("HloModule m\nENTRY e {\n"
         " x = f32[6] constant({1.00390625, 1.01171875, 1.0078125, 3.0e38, -1.5, 1.0039064})\n"
         " b = f32[6] reduce-precision(x), exponent_bits=8, mantissa_bits=7\n"
         " y = f32[6] constant({65520, 65504, 1e-05, -1e-05, 6.103515625e-05, -inf})\n"
         " h = f32[6] reduce-precision(y), exponent_bits=5, mantissa_bits=10\n"
         " n = u32[2] constant({2143289345, 4290772993})\n"
         " nf = f32[2] bitcast-convert(n)\n"
         " r1 = f32[2] reduce-precision(nf), exponent_bits=8, mantissa_bits=7\n"
         " r0 = f32[2] reduce-precision(nf), exponent_bits=8, mantissa_bits=0\n"
         " c = f32[4] concatenate(r1, r0), dimensions={0}\n"
         " ROOT r = (f32[6], f32[6], f32[4]) tuple(b, h, c)\n}\n",
         outs, 3);
  static const float b[] = {1.0f, 1.015625f, 1.0078125f, 3.00405527047391e+38f, -1.5f, 1.0078125f};
  kt_check_f32_bits(outs[0], b, 6);
  static const float h[] = {INFINITY, 65504.0f, 0.0f, -0.0f, 6.103515625e-05f, -INFINITY};
  kt_check_f32_bits(outs[1], h, 6);
  const uint32_t* c = kt_data(outs[2]);
  KC_CHECK_INT((int64_t)c[0], 0x7fc00001);
  KC_CHECK_INT((int64_t)c[1], (int64_t)0xffc00001u);
  KC_CHECK_INT((int64_t)c[2], 0x7fc00001);
  KC_CHECK_INT((int64_t)c[3], (int64_t)0xffc00001u);
  kt_release(outs, 3);
  /* f16 operands are rounded in their own layout: to e5 m2. */
  kc_tensor* one[1];
  kt_run_text("HloModule m\nENTRY e {\n x = f16[3] constant({1.125, 1.375, 1.0009765625})\n"
         " y = f16[3] reduce-precision(x), exponent_bits=5, mantissa_bits=2\n"
         " ROOT z = f32[3] convert(y)\n}\n",
         one, 1);
  static const float f[] = {1.0f, 1.5f, 1.0f};
  kt_check_f32_bits(one[0], f, 3);
  kt_release(one, 1);
}

KC_TEST(hlo_reduce_precision_refusals) {
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n x = f32[2] parameter(0)\n"
                   " ROOT y = f32[2] reduce-precision(x), mantissa_bits=7\n}\n",
                   KC_INVALID_ARGUMENT, "exponent_bits=N");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n x = f32[2] parameter(0)\n"
                   " ROOT y = f32[2] reduce-precision(x), exponent_bits=0, mantissa_bits=7\n}\n",
                   KC_INVALID_ARGUMENT, "attribute exponent_bits", "got 0");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n x = f32[2] parameter(0)\n"
                   " ROOT y = f32[2] reduce-precision(x), exponent_bits=8, mantissa_bits=-1\n}\n",
                   KC_INVALID_ARGUMENT, "attribute mantissa_bits", "got -1");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n x = s32[2] parameter(0)\n"
                   " ROOT y = s32[2] reduce-precision(x), exponent_bits=8, mantissa_bits=7\n}\n",
                   KC_UNIMPLEMENTED, "reduce-precision of s32");
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n x = f32[2] parameter(0)\n"
                 " ROOT y = f32[2] reduce-precision(x), exponent_bits=e8, mantissa_bits=7\n}\n",
                 "an integer for attribute exponent_bits");
}

KC_TEST(hlo_sort_built_with_add_instruction) {
  /* The comparator, a program of its own: s32 a > b. */
  kc_program* cmp = NULL;
  KC_CHECK_OK(kc_program_parse(KC_SV_LIT("HloModule c\nENTRY c {\n a = s32[] parameter(0)\n"
                                         " b = s32[] parameter(1)\n"
                                         " ROOT g = pred[] compare(a, b), direction=GT\n}\n"),
                               &cmp));
  kc_program_builder* b = NULL;
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("m"), &b));
  kc_shape* s = NULL;
  KC_CHECK_OK(kc_shape_parse(KC_SV_LIT("s32[5]"), &s));
  int32_t x = -1, id = -1;
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, s, KC_SV_LIT("x"), &x));
  int64_t dim = 0;
  kc_attr attrs[2];
  memset(attrs, 0, sizeof attrs);
  attrs[0].name = KC_SV_LIT("dimensions");
  attrs[0].type = KC_ATTR_ARRAY;
  attrs[0].elem_type = KC_ATTR_I64;
  attrs[0].v.array.data = &dim;
  attrs[0].v.array.count = 1;
  attrs[1].name = KC_SV_LIT("is_stable");
  attrs[1].type = KC_ATTR_BOOL;
  attrs[1].v.b = true;
  kc_attr_dict dict = {2, attrs};
  kc_instruction_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = KC_OP_SORT;
  d.result_shape = s;
  d.operands = &x;
  d.num_operands = 1;
  d.attrs = &dict;
  d.computations = &cmp;
  d.num_computations = 1;
  KC_CHECK_OK(kc_program_builder_add_instruction(b, &d, KC_SV_LIT("s"), &id));
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  int32_t in[5] = {4, -2, 9, 4, 0};
  int64_t shape[1] = {5};
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = in;
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype = (DLDataType){kDLInt, 32, 1};
  t.shape = shape;
  const DLTensor* ins[1] = {&t};
  kc_tensor* out = NULL;
  KC_CHECK_OK(kc_executable_execute(exe, ins, 1, NULL, &out));
  static const int32_t want[] = {9, 4, 4, 0, -2};
  kt_check_s32(out, want, 5);
  kc_object_release(KC_OBJECT(out));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  kc_program_destroy(cmp);
  kc_shape_destroy(s);
}
