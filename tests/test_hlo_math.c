/* Element-wise math (src/program/instr/instr_math.c, instr_half.c,
 * instr_complex.c) through HLO text: floats, integers and pred, f16 and
 * bf16 rounding, complex arithmetic, and the refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_hlo.h"

KC_TEST(hlo_ops_math_floats) {
  static const char text[] =
      "HloModule m\nENTRY e {\n"
      "  x = f32[4] constant({-1.5, -0, 0.25, 4})\n"
      "  y = f32[4] constant({2, 3, 0.5, -2})\n"
      "  a = f32[4] tanh(x)\n  b = f32[4] rsqrt(y)\n  c = f32[4] logistic(x)\n"
      "  d = f32[4] sign(x)\n  e = f32[4] round-nearest-afz(x)\n"
      "  f = f32[4] round-nearest-even(x)\n  g = f32[4] power(y, x)\n"
      "  h = f32[4] remainder(x, y)\n  i = pred[4] is-finite(b)\n"
      "  j = f32[4] abs(x)\n  k = f32[4] atan2(x, y)\n"
      "  ROOT t = (f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], pred[4], "
      "f32[4], f32[4]) tuple(a, b, c, d, e, f, g, h, i, j, k)\n}\n";
  kc_tensor* outs[11];
  kt_run_text(text, outs, 11);
  static const float x[4] = {-1.5f, -0.0f, 0.25f, 4.0f};
  static const float y[4] = {2.0f, 3.0f, 0.5f, -2.0f};
  for (int i = 0; i < 4; ++i) {
    /* tanh and logistic are vector approximations within a few ulp
     * (test_hlo_math_ulp.c bounds them); 1e-6 relative is 8 ulp. */
    KC_CHECK(fabs(((const float*)kt_data(outs[0]))[i] - tanh(x[i])) <= 1e-6 * fabs(tanh(x[i])));
    KC_CHECK(signbit(((const float*)kt_data(outs[0]))[i]) == signbit(x[i]));
    float rs = ((const float*)kt_data(outs[1]))[i];
    KC_CHECK(isnan(rs) ? y[i] < 0 : rs == 1.0f / sqrtf(y[i]));
    double lg = 1.0 / (1.0 + exp(-(double)x[i]));
    KC_CHECK(fabs(((const float*)kt_data(outs[2]))[i] - lg) <= 1e-6 * lg);
    KC_CHECK(((const float*)kt_data(outs[4]))[i] == roundf(x[i]));
    KC_CHECK(((const float*)kt_data(outs[6]))[i] == powf(y[i], x[i]));
    KC_CHECK(((const float*)kt_data(outs[7]))[i] == fmodf(x[i], y[i]));
    KC_CHECK(((const float*)kt_data(outs[9]))[i] == fabsf(x[i]));
    KC_CHECK(((const float*)kt_data(outs[10]))[i] == atan2f(x[i], y[i]));
  }
  const float* sign = kt_data(outs[3]);
  KC_CHECK(sign[0] == -1.0f && sign[1] == 0.0f && signbit(sign[1]) && sign[2] == 1.0f);
  const float* even = kt_data(outs[5]);
  KC_CHECK(even[0] == -2.0f && even[2] == 0.0f); /* -1.5 and 0.25 to even */
  const uint8_t* finite = kt_data(outs[8]);
  KC_CHECK(finite[0] == 1 && finite[3] == 0); /* rsqrt(-2) is NaN */
  kt_release(outs, 11);
}

KC_TEST(hlo_ops_math_integers_and_pred) {
  static const char text[] =
      "HloModule m\nENTRY e {\n"
      "  a = s32[4] constant({-7, 5, 2, -1})\n  b = s32[4] constant({2, 0, 10, -3})\n"
      "  u = u8[2] constant({1, 200})\n  s = u8[2] constant({3, 9})\n"
      "  p = pred[2] constant({1, 0})\n  q = pred[2] constant({1, 1})\n"
      "  pw = s32[4] power(a, b)\n  rm = s32[4] remainder(a, b)\n"
      "  sl = u8[2] shift-left(u, s)\n  sr = s32[4] shift-right-arithmetic(a, b)\n"
      "  cl = u8[2] count-leading-zeros(u)\n  ab = s32[4] abs(a)\n"
      "  np = pred[2] not(p)\n  x = pred[2] xor(p, q)\n  n = s32[4] not(a)\n"
      "  v = u8[3] constant({128, 64, 200})\n  w = u8[3] constant({1, 1, 8})\n"
      "  su = u8[3] shift-right-arithmetic(v, w)\n"
      "  ROOT t = (s32[4], s32[4], u8[2], s32[4], u8[2], s32[4], pred[2], pred[2], s32[4], "
      "u8[3]) tuple(pw, rm, sl, sr, cl, ab, np, x, n, su)\n}\n";
  kc_tensor* outs[10];
  kt_run_text(text, outs, 10);
  const int32_t* pw = kt_data(outs[0]);
  const int32_t* rm = kt_data(outs[1]);
  const uint8_t* sl = kt_data(outs[2]);
  const int32_t* sr = kt_data(outs[3]);
  const uint8_t* cl = kt_data(outs[4]);
  const int32_t* ab = kt_data(outs[5]);
  const uint8_t* np = kt_data(outs[6]);
  const uint8_t* x = kt_data(outs[7]);
  const int32_t* n = kt_data(outs[8]);
  KC_CHECK(pw[0] == 49 && pw[1] == 1 && pw[2] == 1024 && pw[3] == -1); /* (-1)**-3 */
  KC_CHECK(rm[0] == -1 && rm[1] == 5 && rm[2] == 2 && rm[3] == -1);   /* x % 0 = x */
  KC_CHECK(sl[0] == 8 && sl[1] == 0);                                   /* shift past width */
  KC_CHECK(sr[0] == -2 && sr[1] == 5 && sr[2] == 0 && sr[3] == -1);
  KC_CHECK(cl[0] == 7 && cl[1] == 0);
  KC_CHECK(ab[0] == 7 && ab[3] == 1);
  KC_CHECK(np[0] == 0 && np[1] == 1 && x[0] == 0 && x[1] == 1);
  KC_CHECK(n[0] == 6 && n[3] == 0);
  /* Unsigned elements shift as the signed type of their width does. */
  const uint8_t* su = kt_data(outs[9]);
  KC_CHECK(su[0] == 0xC0 && su[1] == 0x20 && su[2] == 0xFF);
  kt_release(outs, 10);
}

KC_TEST(hlo_ops_math_refusals) {
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = s32[2] constant({1, 2})\n"
                   " ROOT t = s32[2] tanh(a)\n}\n",
                   KC_UNIMPLEMENTED,
                   "tanh: element type s32 is not supported (f16, bf16, f32, f64, c64 and "
                   "c128)");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = f32[2] constant({1, 2})\n"
                   " ROOT t = f32[2] shift-left(a, a)\n}\n",
                   KC_UNIMPLEMENTED, "shift-left: element type f32 is not supported");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = f32[2] constant({1, 2})\n"
                   " b = f32[3] constant({1, 2, 3})\n ROOT t = f32[2] power(a, b)\n}\n",
                   KC_INVALID_ARGUMENT, "operand 1: expected f32[2], got f32[3]");
}

KC_TEST(hlo_ops_f16_bf16_round_to_nearest_even) {
  static const char text[] =
      "HloModule m\nENTRY e {\n"
      /* 1 + 2^-11 is a tie between 1 and 1 + 2^-10 (even: 1); 65520 rounds to
       * infinity; 2^-25 * 3 is halfway between two subnormals (even: 2^-23) */
      "  x = f32[4] constant({1.00048828125, 65520, 8.940696716308594e-08, -2.5})\n"
      "  h = f16[4] convert(x)\n"
      "  b = bf16[4] convert(x)\n"
      "  s = f16[4] add(h, h)\n"
      "  hb = f32[4] convert(h)\n  bb = f32[4] convert(b)\n  sb = f32[4] convert(s)\n"
      "  c = bf16[2] constant({1.00390625, 3})\n  cb = f32[2] convert(c)\n"
      "  ROOT t = (f32[4], f32[4], f32[4], f32[2]) tuple(hb, bb, sb, cb)\n}\n";
  kc_tensor* outs[4];
  kt_run_text(text, outs, 4);
  const float* hb = kt_data(outs[0]);
  const float* bb = kt_data(outs[1]);
  const float* sb = kt_data(outs[2]);
  const float* cb = kt_data(outs[3]);
  KC_CHECK(hb[0] == 1.0f && isinf(hb[1]) && hb[2] == 0x1p-23f && hb[3] == -2.5f);
  KC_CHECK(bb[0] == 1.0f && bb[1] == 65536.0f && bb[3] == -2.5f);
  KC_CHECK(sb[0] == 2.0f && isinf(sb[1]) && sb[3] == -5.0f);
  KC_CHECK(cb[0] == 1.0f && cb[1] == 3.0f); /* a tie to even in the literal too */
  kt_release(outs, 4);
}

KC_TEST(hlo_ops_complex_arithmetic) {
  static const char text[] =
      "HloModule m\nENTRY e {\n"
      "  re = f32[2] constant({1, 0})\n  im = f32[2] constant({2, 3.141592653589793})\n"
      "  z = c64[2] complex(re, im)\n"
      "  w = c64[2] constant({(3, -1), (0, 1)})\n"
      "  p = c64[2] multiply(z, w)\n  q = c64[2] divide(z, w)\n  e = c64[2] exponential(z)\n"
      "  r = f32[2] real(p)\n  i = f32[2] imag(p)\n  qr = f32[2] real(q)\n  qi = f32[2] imag(q)\n"
      "  er = f32[2] real(e)\n"
      "  x = c128[2] convert(re)\n  xi = f64[2] imag(x)\n"
      "  ROOT t = (f32[2], f32[2], f32[2], f32[2], f32[2], f64[2]) tuple(r, i, qr, qi, er, xi)\n}\n";
  kc_tensor* outs[6];
  kt_run_text(text, outs, 6);
  const float* r = kt_data(outs[0]);
  const float* i = kt_data(outs[1]);
  const float* qr = kt_data(outs[2]);
  const float* qi = kt_data(outs[3]);
  const float* er = kt_data(outs[4]);
  const double* xi = kt_data(outs[5]);
  KC_CHECK(r[0] == 5.0f && i[0] == 5.0f);     /* (1+2i)(3-i) = 5+5i */
  /* (1+2i)/(3-i) = 0.1+0.7i, with XLA's rounding (0.1f less an ulp). */
  KC_CHECK(qr[0] == 0x1.999998p-4f && qi[0] == 0.7f);
  KC_CHECK(fabsf(r[1] + 3.1415927f) < 1e-6f); /* (pi i)(i) = -pi */
  KC_CHECK(fabsf(er[1] + 1.0f) < 1e-6f);      /* e^(pi i) = -1 */
  KC_CHECK(xi[0] == 0.0 && xi[1] == 0.0);
  (void)qr;
  kt_release(outs, 6);
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n z = c64[2] constant({(1, 2), (3, 4)})\n"
                   " ROOT r = f32[2] convert(z)\n}\n",
                   KC_UNIMPLEMENTED, "convert is not implemented for c64 -> f32");
  /* HLO text's complex maximum is built from other instructions
   * (test_parse_expand.c); the instruction itself refuses complex values. */
  {
    kc_program_builder* b = NULL;
    KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("m"), &b));
    kc_shape* c = NULL;
    int64_t two = 2;
    KC_CHECK_OK(kc_shape_create_array(kc_dtype_make(kDLComplex, 64, 1), &two, 1, &c));
    int32_t ids[2];
    KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, c, KC_SV_LIT("z"), &ids[0]));
    ids[1] = ids[0];
    int32_t root;
    KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_MAXIMUM, c, ids, 2, KC_SV_LIT("r"), &root));
    kc_program* p = NULL;
    KC_CHECK_OK(kc_program_builder_finish(b, &p));
    kc_executable* exe = NULL;
    KC_CHECK_CODE(kc_program_compile(p, NULL, &exe), KC_UNIMPLEMENTED,
                  "maximum is not implemented for c64 -> c64");
    kc_program_destroy(p);
    kc_shape_destroy(c);
  }
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = f32[2] constant({1, 2})\n"
                   " ROOT r = c128[2] complex(a, a)\n}\n",
                   KC_INVALID_ARGUMENT, "complex: expected two f32 (or f64) operands");
}
