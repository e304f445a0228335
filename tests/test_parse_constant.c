/* Tests of HLO constants' literals (src/program/frontend/parse_constant.c): every
 * element type, nested braces, inf and NaN with and without a payload, and
 * the errors of a literal that does not fit its shape or type. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kt_hlo.h"

/* The one output of the module whose root is the constant `instr`. */
static kc_tensor* kt_constant(const char* instr) {
  char text[256];
  snprintf(text, sizeof text, "HloModule c\nENTRY main {\n  ROOT c = %s\n}\n", instr);
  kc_tensor* out = NULL;
  kt_run_text(text, &out, 1);
  return out;
}

KC_TEST(parse_constants) {
  static const char* const texts[] = {
      "s32[2,2]{1,0} constant({{1, 2}, {3, -4}})",
      "s8[3] constant({-128, 0, 127})",
      "s16[2] constant({-32768, 32767})",
      "s64[2] constant({-9223372036854775808, 9223372036854775807})",
      "u8[2] constant({0, 255})",
      "u16[1] constant({65535})",
      "u32[1] constant({4294967295})",
      "u64[1] constant({18446744073709551615})",
      "pred[3] constant({true, false, 1})",
      "f32[] constant(-2.5)",
      "f32[4] constant({inf, -inf, 1e-05, 3})",
      "f64[2] constant({0.1, -1.5e+300})",
      "f32[0] constant({})",
  };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; ++i) {
    kc_tensor* out = kt_constant(texts[i]);
    kt_release(&out, 1);
  }

  /* The bytes, row-major in the shape's dtype, as running shows them. */
  kc_tensor* out = kt_constant("s32[2,2]{1,0} constant({{1, 2}, {3, -4}})");
  const int32_t* iv = kt_data(out);
  KC_CHECK(iv[0] == 1 && iv[1] == 2 && iv[2] == 3 && iv[3] == -4);
  kt_release(&out, 1);

  out = kt_constant("f32[5] constant({inf, -inf, nan, -2.5, 1e-05})");
  const float* fv = kt_data(out);
  KC_CHECK(isinf(fv[0]) && fv[0] > 0);
  KC_CHECK(isinf(fv[1]) && fv[1] < 0);
  KC_CHECK(isnan(fv[2]));
  KC_CHECK(fv[3] == -2.5f && fv[4] == 1e-05f);
  kt_release(&out, 1);

  out = kt_constant("s8[3] constant({-128, 7, 127})");
  const int8_t* bv = kt_data(out);
  KC_CHECK(bv[0] == -128 && bv[1] == 7 && bv[2] == 127);
  kt_release(&out, 1);

  out = kt_constant("pred[3] constant({true, false, true})");
  const uint8_t* pv = kt_data(out);
  KC_CHECK(pv[0] == 1 && pv[1] == 0 && pv[2] == 1);
  kt_release(&out, 1);

  out = kt_constant("u64[1] constant(18446744073709551615)");
  KC_CHECK(*(const uint64_t*)kt_data(out) == UINT64_MAX);
  kt_release(&out, 1);

  out = kt_constant("f64[] constant(0.1)");
  KC_CHECK(*(const double*)kt_data(out) == 0.1);
  kt_release(&out, 1);
}

/* The bits of element i of a constant's float output, zero-extended. */
static uint64_t kt_bits_at(kc_tensor* t, size_t i) {
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  size_t width = dl->dtype.bits / 8;
  uint64_t bits = 0;
  memcpy(&bits, (const unsigned char*)dl->data + i * width, width);
  return bits;
}

/* XLA prints a NaN whose significand is not the default quiet NaN's as
 * nan(0xPAYLOAD), the payload being the significand field's bits: every
 * float type keeps those bits, and the sign of -nan(...); a plain nan is
 * the default quiet NaN. */
KC_TEST(parse_constant_nan_payloads) {
  static const struct {
    const char* instr;
    uint64_t bits[3];
  } cases[] = {
      {"f16[3] constant({nan(0x3ff), -nan(0x1), nan})", {0x7fff, 0xfc01, 0x7e00}},
      {"bf16[3] constant({nan(0x7f), -nan(0x1), nan})", {0x7fff, 0xff81, 0x7fc0}},
      {"f32[3] constant({nan(0x7fffff), -nan(0x400001), nan})",
       {0x7fffffff, 0xffc00001, 0x7fc00000}},
      {"f64[3] constant({nan(0xfffffffffffff), -nan(0x8000000000001), nan})",
       {0x7fffffffffffffffull, 0xfff8000000000001ull, 0x7ff8000000000000ull}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    kc_tensor* out = kt_constant(cases[i].instr);
    for (size_t k = 0; k < 3; ++k) KC_CHECK(kt_bits_at(out, k) == cases[i].bits[k]);
    kt_release(&out, 1);
  }
  /* Each part of a complex constant, the real one first. */
  kc_tensor* out = kt_constant("c64[] constant((nan(0x1), -nan(0x7fffff)))");
  KC_CHECK(kt_bits_at(out, 0) == 0xffffffff7f800001ull);
  kt_release(&out, 1);
  /* A payload the significand cannot hold, or none at all. */
  static const struct {
    const char* instr;
    const char* message;
  } bad[] = {
      {"f16[] constant(nan(0x400))",
       "NaN payload 0x400 does not fit the 10 significand bits of f16"},
      {"bf16[] constant(nan(0x80))", "does not fit the 7 significand bits of bf16"},
      {"f32[] constant(nan(0x800000))", "does not fit the 23 significand bits of f32"},
      {"f64[] constant(-nan(0x10000000000000))", "52 significand bits of f64"},
      {"c64[] constant((1, nan(0x800000)))", "23 significand bits of f32"},
      {"f32[] constant(nan(0))", "expected a value of type f32, got 'nan'"},
      {"f32[] constant(nan(1.5))", "expected a value of type f32"},
      {"f32[] constant(nan(0x1)", "expected"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    char text[256];
    snprintf(text, sizeof text, "HloModule c\nENTRY main {\n  ROOT c = %s\n}\n", bad[i].instr);
    KT_PARSE_FAILS(text, bad[i].message);
  }
}

KC_TEST(parse_constant_errors) {
  static const struct {
    const char* instr;
    const char* message;
  } cases[] = {
      {"f32[3] constant({1, 2})", "line 3, column 28: expected 3 values for f32[3], got 2"},
      {"f32[2] constant({1, 2, 3})",
       "line 3, column 35: expected '}' or ')' after the 2 values of f32[2], got '3'"},
      {"s32[] constant(2.5)", "line 3, column 27: expected a value of type s32, got '2.5'"},
      {"s8[] constant(128)", "expected a value of type s8, got '128'"},
      {"s8[] constant(-129)", "expected a value of type s8, got '-129'"},
      {"u8[] constant(-1)", "expected a value of type u8, got '-1'"},
      {"u32[] constant(4294967296)", "expected a value of type u32, got '4294967296'"},
      {"s64[] constant(9223372036854775808)", "expected a value of type s64"},
      {"pred[] constant(2)", "expected a value of type pred (true or false), got '2'"},
      {"f32[] constant(abc)", "expected a value of type f32, got 'abc'"},
      {"f32[] constant(-)", "expected a value of type f32, got '-'"},
      {"c64[] constant(1)", "line 3, column 27: expected a value of type c64, got '1'"},
      {"c64[] constant((1 2))", "expected ',', got '2'"},
      {"c128[] constant((1, 2, 3))", "expected ')', got ','"},
      {"f16[] constant(x)", "expected a value of type f16, got 'x'"},
      {"(f32[], f32[]) constant((1, 2))", "tuple constants are not supported"},
      {"f32[2] constant({1, 2)", "expected ',' or '}', got ')'"},
      {"f32[] constant(1", "expected ')', got '}'"},
      {"f32[1000] constant({...})",
       "line 3, column 32: expected the constant's values, got '...': the dump "
       "left out a large constant"},
      /* The bytes grow with the values read, not with the shape. */
      {"s32[100000000000] constant({1})", "expected 100000000000 values for "
                                         "s32[100000000000], got 1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char text[256];
    snprintf(text, sizeof text, "HloModule c\nENTRY main {\n  ROOT c = %s\n}\n",
             cases[i].instr);
    KT_PARSE_FAILS(text, cases[i].message);
  }
}

