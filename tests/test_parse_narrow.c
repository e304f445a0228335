/* HLO's integer types narrower than a byte (s2, s4, u2, u4) in programs
 * (src/program/frontend/parse_narrow.c), held one to a byte of s8 or u8:
 * every element-wise instruction on every pair of values of each type
 * against the narrow type's own arithmetic (kt_narrow.h, shared with the
 * StableHLO reader's test); conversions, parameters, constants, and what
 * is refused. */
#include <stdio.h>
#include <string.h>

#include "kt_hlo.h"
#include "kt_narrow.h"

/* HLO's spelling of the ops kt_narrow.h names as StableHLO does. */
static void kt_hlo_op_name(const char* mlir, char* out, size_t cap) {
  snprintf(out, cap, "%s", mlir);
  for (char* c = out; *c; ++c) {
    if (*c == '_') *c = '-';
  }
}

/* s4 for i4, u2 for ui2. */
static const char* kt_hlo_type(const kt_narrow* t) {
  static const char* const names[2][2] = {{"u2", "u4"}, {"s2", "s4"}};
  return names[t->sign][t->bits == 4];
}

KC_TEST(hlo_narrow_integers_wrap_like_their_type) {
  for (size_t ti = 0; ti < sizeof kTypes / sizeof kTypes[0]; ++ti) {
    const kt_narrow* t = &kTypes[ti];
    const char* ty = kt_hlo_type(t);
    char as[2048], bs[2048];
    int a[256], b[256];
    int pairs = kt_narrow_pairs(t, a, b, as, bs, sizeof as);
    static char text[16384];
    size_t len = 0;
    len += (size_t)snprintf(text + len, sizeof text - len,
                            "HloModule m\nENTRY e {\n a = %s[%d] constant({%s})\n"
                            " b = %s[%d] constant({%s})\n",
                            ty, pairs, as, ty, pairs, bs);
    char op[64];
    for (int k = 0; k < KT_NUM_BINARY; ++k) {
      kt_hlo_op_name(kBinary[k], op, sizeof op);
      len += (size_t)snprintf(text + len, sizeof text - len, " r%d = %s[%d] %s(a, b)\n", k, ty,
                              pairs, op);
    }
    for (int k = 0; k < KT_NUM_UNARY; ++k) {
      kt_hlo_op_name(kUnary[k], op, sizeof op);
      len += (size_t)snprintf(text + len, sizeof text - len, " u%d = %s[%d] %s(a)\n", k, ty,
                              pairs, op);
    }
    len += (size_t)snprintf(text + len, sizeof text - len, " ROOT t = (");
    for (int k = 0; k < KT_NUM_BINARY + KT_NUM_UNARY; ++k) {
      len += (size_t)snprintf(text + len, sizeof text - len, "%s%s[%d]", k ? ", " : "", ty,
                              pairs);
    }
    len += (size_t)snprintf(text + len, sizeof text - len, ") tuple(");
    for (int k = 0; k < KT_NUM_BINARY; ++k) {
      len += (size_t)snprintf(text + len, sizeof text - len, "%sr%d", k ? ", " : "", k);
    }
    for (int k = 0; k < KT_NUM_UNARY; ++k) {
      len += (size_t)snprintf(text + len, sizeof text - len, ", u%d", k);
    }
    snprintf(text + len, sizeof text - len, ")\n}\n");
    kc_tensor* out[KT_NUM_BINARY + KT_NUM_UNARY] = {NULL};
    kt_run_text(text, out, KT_NUM_BINARY + KT_NUM_UNARY);
    kt_narrow_check_all(out, t, a, b, pairs);
  }
}

/* Conversions into s4 and u4 (from wider integers their low bits, from
 * floats the value clamped, NaN 0), a bitcast-convert between s4 and u4,
 * iota, a reduction whose computation wraps, and a fusion. */
KC_TEST(hlo_narrow_integer_conversions) {
  kc_tensor* out[7] = {NULL};
  kt_run_text("HloModule m\n"
              "add {\n x = s4[] parameter(0)\n y = s4[] parameter(1)\n"
              " ROOT s = s4[] add(x, y)\n}\n"
              "fused {\n p = s4[4] parameter(0)\n q = s4[4] multiply(p, p)\n"
              " ROOT n = s4[4] negate(q)\n}\n"
              "ENTRY e {\n"
              " w = s32[6] constant({7, 8, 15, 16, -9, 300})\n"
              " c0 = s4[6] convert(w)\n"
              " f = f32[6] constant({2.9, -2.9, 100, -100, nan, 15.5})\n"
              " c1 = u4[6] convert(f)\n"
              " d = f64[6] convert(f)\n"
              " c2 = s4[6] convert(d)\n"
              " s = s4[4] constant({-8, -1, 0, 7})\n"
              " c3 = u4[4] bitcast-convert(s)\n"
              " i = s4[20] iota(), iota_dimension=0\n"
              " z = s4[] constant(0)\n"
              " r = s4[] reduce(i, z), dimensions={0}, to_apply=add\n"
              " fu = s4[4] fusion(s), kind=kLoop, calls=fused\n"
              " ROOT t = (s4[6], u4[6], s4[6], u4[4], s4[20], s4[], s4[4]) "
              "tuple(c0, c1, c2, c3, i, r, fu)\n}\n",
              out, 7);
  static const kt_narrow i4 = {"i4", 4, true}, u4 = {"ui4", 4, false};
  static const int w0[6] = {7, -8, -1, 0, 7, -4}, w1[6] = {2, 0, 15, 0, 0, 15};
  static const int w2[6] = {2, -2, 7, -8, 0, 7}, w3[4] = {8, 15, 0, 7};
  kt_check_bytes(out[0], &i4, w0, 6, "convert from s32");
  kt_check_bytes(out[1], &u4, w1, 6, "convert from f32");
  kt_check_bytes(out[2], &i4, w2, 6, "convert from f64");
  kt_check_bytes(out[3], &u4, w3, 4, "bitcast-convert from s4");
  int w4[20], sum = 0;
  for (int i = 0; i < 20; ++i) {
    w4[i] = kt_wrap(&i4, i);
    sum = kt_wrap(&i4, sum + w4[i]);
  }
  kt_check_bytes(out[4], &i4, w4, 20, "iota");
  int w5[1] = {sum};
  kt_check_bytes(out[5], &i4, w5, 1, "reduce");
  static const int s[4] = {-8, -1, 0, 7};
  int w6[4];
  for (int i = 0; i < 4; ++i) w6[i] = kt_wrap(&i4, -kt_wrap(&i4, s[i] * s[i]));
  kt_check_bytes(out[6], &i4, w6, 4, "fusion");
  kt_release(out, 7);
}

/* An entry parameter of s4 takes s8 elements, of which its low bits
 * count; a constant out of the type's range and what a byte cannot stand
 * for are refused. */
KC_TEST(hlo_narrow_integer_parameters_and_refusals) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(KC_SV_LIT("HloModule m\nENTRY e {\n x = s4[4] parameter(0)\n"
                                         " one = s4[4] constant({1, 1, 1, 1})\n"
                                         " ROOT y = s4[4] add(x, one)\n}\n"),
                               &p));
  const kc_shape* in = kc_program_get_parameter_shape(p, 0);
  KC_CHECK(kc_shape_get_dtype(in).code == kDLInt && kc_shape_get_dtype(in).bits == 8);
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  int8_t x[4] = {0x17, -1, 0x07, (int8_t)0xF8}; /* low bits 7, -1, 7, -8 */
  int64_t four = 4;
  DLTensor t = {.data = x, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLInt, 8, 1},
                .shape = &four};
  const DLTensor* args[1] = {&t};
  kc_tensor* out[1] = {NULL};
  KC_CHECK_OK(kc_executable_execute(exe, args, 1, NULL, out));
  static const kt_narrow i4 = {"i4", 4, true};
  static const int want[4] = {-8, 0, -8, -7};
  kt_check_bytes(out[0], &i4, want, 4, "parameter + 1");
  kt_release(out, 1);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n c = s4[2] constant({1, 8})\n}\n",
                 "constant 'c': element 1, 8, is out of the range of s4 (-8 to 7)");
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n c = u2[2] constant({3, 4})\n}\n",
                 "element 1, 4, is out of the range of u2 (0 to 3)");
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n x = s4[4] parameter(0)\n"
                 " ROOT y = s4[4] custom-call(x), custom_call_target=\"f\"\n}\n",
                 "line 4", "custom-call 'y': s2, s4, u2 and u4 are held one to a byte",
                 "a custom call's operands and results");
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n x = s4[2] parameter(0)\n"
                 " ROOT y = s8[] bitcast-convert(x)\n}\n",
                 "bitcast-convert 'y'", "a bitcast between types of different widths");
  /* kc_shape_parse, outside a program, keeps to the types kcall holds. */
  kc_shape* shape = NULL;
  KC_CHECK_CODE(kc_shape_parse(KC_SV_LIT("s4[2]"), &shape), KC_INVALID_ARGUMENT,
                "element type 's4' is not supported");
}

/* HLO's f8 floats (parse_float8.c), held as their bits in u8: constants
 * encoded (f8e4m3fn: 1 is 0x38, 0.125 0x20, 448 0x7E, NaN 0x7F, -0 0x80),
 * arithmetic in f32 rounded once (1 + 0.125 = 0x39), conversions (one
 * that overflows f8e4m3fn gives NaN), a dot into f32, a compare,
 * a reduce whose computation adds f8 values, data moved as bits; and the
 * refusals. */
KC_TEST(hlo_float8_constants_arithmetic_and_moves) {
  kc_tensor* out[8] = {NULL};
  kt_run_text("HloModule m\n"
              "add {\n a = f8e4m3fn[] parameter(0)\n b = f8e4m3fn[] parameter(1)\n"
              " ROOT s = f8e4m3fn[] add(a, b)\n}\n"
              "ENTRY e {\n"
              " c = f8e4m3fn[5] constant({1, 0.125, 448, nan, -0})\n"
              " one = f8e4m3fn[] constant(1)\n ob = f8e4m3fn[5] broadcast(one), dimensions={}\n"
              " s = f8e4m3fn[5] add(c, ob)\n"
              " w = f32[3] constant({1000, -1000, 0.3})\n"
              " n = f8e4m3fn[3] convert(w)\n i = f8e5m2[3] convert(w)\n"
              " k = f8e4m3fn[2] slice(c), slice={[0:2]}\n"
              " d = f32[] dot(k, k), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
              " g = pred[5] compare(c, ob), direction=GT\n"
              " z = f8e4m3fn[] constant(0)\n"
              " r = f8e4m3fn[] reduce(k, z), dimensions={0}, to_apply=add\n"
              " ROOT t = (f8e4m3fn[5], f8e4m3fn[5], f8e4m3fn[3], f8e5m2[3], f8e4m3fn[2], f32[], "
              "pred[5], f8e4m3fn[]) tuple(c, s, n, i, k, d, g, r)\n}\n",
              out, 8);
  static const uint8_t c[5] = {0x38, 0x20, 0x7E, 0x7F, 0x80};
  /* 1+1 = 2 (0x40), 0.125+1 = 1.125 (0x39), 448+1 rounds to 448 (0x7E),
   * NaN, -0+1 = 1 */
  static const uint8_t s[5] = {0x40, 0x39, 0x7E, 0x7F, 0x38};
  /* 1000 overflows f8e4m3fn (NaN, keeping the sign) and rounds to 1024 in
   * f8e5m2 (0x64); 0.3 rounds to 0.3125 in both (0x2A, 0x35) */
  static const uint8_t n[3] = {0x7F, 0xFF, 0x2A}, i8[3] = {0x64, 0xE4, 0x35};
  static const uint8_t g[5] = {0, 0, 1, 0, 0};
  KC_CHECK(memcmp(kt_data(out[0]), c, 5) == 0);
  KC_CHECK(memcmp(kt_data(out[1]), s, 5) == 0);
  KC_CHECK(memcmp(kt_data(out[2]), n, 3) == 0);
  KC_CHECK(memcmp(kt_data(out[3]), i8, 3) == 0);
  KC_CHECK(memcmp(kt_data(out[4]), c, 2) == 0);
  KC_CHECK(*(const float*)kt_data(out[5]) == 1.0f + 0.125f * 0.125f);
  KC_CHECK(memcmp(kt_data(out[6]), g, 5) == 0);
  KC_CHECK(*(const uint8_t*)kt_data(out[7]) == 0x39); /* 0 + 1 + 0.125 */
  kt_release(out, 8);
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n x = f8e4m3fn[4] parameter(0)\n"
                 " ROOT y = f8e4m3fn[4] custom-call(x), custom_call_target=\"f\"\n}\n",
                 "custom-call 'y' of f8E4M3FN is not supported (kcall holds f8E4M3FN values as "
                 "their bits");
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n x = f8e4m3fn[4] parameter(0)\n"
                 " ROOT y = f16[2] bitcast-convert(x)\n}\n",
                 "bitcast-convert 'y' of f8E4M3FN is not supported");
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n c = f4e2m1fn[2] constant({1, nan})\n}\n",
                 "constant 'c': element 1 is NaN, which f4E2M1FN has not");
}
