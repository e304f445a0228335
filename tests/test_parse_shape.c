/* Shape text (kc_shape_parse, src/program/frontend/parse_shape.c): every
 * text form, element type and layout, the errors, deep nesting. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_parse.h"

/* ---- shapes ------------------------------------------------------------------ */

KC_TEST(parse_shape_text_forms) {
  static const struct {
    const char* text;
    const char* printed;
  } cases[] = {
      {"f32[2,3]", "f32[2,3]"},
      {"f32[2,3]{1,0}", "f32[2,3]"},
      {"s32[]", "s32[]"},
      {"s32[]{}", "s32[]"},
      {"pred[4]", "pred[4]"},
      {"pred[4]{0}", "pred[4]"},
      {"u64[0]", "u64[0]"},
      {"f64[2,1,3]{2,1,0}", "f64[2,1,3]"},
      {"(f32[32], (f32[64], f32[128]), f32[256])",
       "(f32[32], (f32[64], f32[128]), f32[256])"},
      {"()", "()"},
      {"( f32[1]{0} , /*index=1*/ s8[2] )", "(f32[1], s8[2])"},
      {"(s16[], (u8[1], (u16[2], (u32[3]))))", "(s16[], (u8[1], (u16[2], (u32[3]))))"},
      /* kcall's own dtype names */
      {"i32[3]", "s32[3]"},
      {"bool[2]", "pred[2]"},
      {"float32[1]", "f32[1]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    kc_shape* s = NULL;
    KC_CHECK_OK(kc_shape_parse(kc_sv(cases[i].text), &s));
    kt_check_shape(s, cases[i].printed);
    kc_shape_destroy(s);
  }
}

KC_TEST(parse_shape_element_types) {
  static const struct {
    const char* name;
    uint8_t code;
    uint8_t bits;
  } types[] = {
      {"pred", kDLBool, 8},     {"s8", kDLInt, 8},        {"s16", kDLInt, 16},
      {"s32", kDLInt, 32},      {"s64", kDLInt, 64},      {"u8", kDLUInt, 8},
      {"u16", kDLUInt, 16},     {"u32", kDLUInt, 32},     {"u64", kDLUInt, 64},
      {"f16", kDLFloat, 16},    {"bf16", kDLBfloat, 16},  {"f32", kDLFloat, 32},
      {"f64", kDLFloat, 64},    {"c64", kDLComplex, 64},  {"c128", kDLComplex, 128},
  };
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
    char text[32];
    snprintf(text, sizeof text, "%s[2]", types[i].name);
    kc_shape* s = NULL;
    KC_CHECK_OK(kc_shape_parse(kc_sv(text), &s));
    DLDataType t = kc_shape_get_dtype(s);
    KC_CHECK_INT(t.code, types[i].code);
    KC_CHECK_INT(t.bits, types[i].bits);
    KC_CHECK_INT(t.lanes, 1);
    KC_CHECK_INT(kc_shape_get_rank(s), 1);
    kt_check_shape(s, text);
    kc_shape_destroy(s);
  }
}

KC_TEST(parse_shape_errors) {
  static const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"f32[2,3]{0,1}",
       "column 9: expected a layout: a permutation of 0 to 1, minor to major (only the "
       "row-major one is accepted here), got '{0,1}'"},
      {"f32[2]{0:T(8)}",
       "column 7: expected a layout: a permutation of 0 to 0, minor to major (tiling and "
       "memory spaces are not supported), got '{0:'"},
      {"f32[2,3]{1}", "got '{1}'"},
      {"f32[<=4]",
       "column 5: expected a dimension size, got '<': dynamic dimensions are "
       "not supported"},
      {"f32[?]", "column 5: expected a dimension size, got '?'"},
      {"f33[2]", "column 1: expected an element type"},
      {"token[]", "got 'token'"},
      {"f32[2", "column 6: expected ',' or ']', got end of input"},
      {"f32 [2] x", "column 9: expected the end of the shape, got 'x'"},
      {"(f32[2]", "column 8: expected ',' or ')', got end of input"},
      {"f32[-1]", "column 5: expected a dimension size (from 0 to"},
      {"f32[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,"
       "26,27,28,29,30,31,32,33]",
       "a shape of more than 32 dimensions"},
      {"f32[4611686018427387904,4]", "OUT_OF_RANGE"},
      {"", "column 1: expected an element type"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    kc_shape* s = NULL;
    kc_status* st = kc_shape_parse(kc_sv(cases[i].text), &s);
    KC_CHECK(st != NULL);
    KC_CHECK(s == NULL);
    char buf[512];
    kt_status_text(st, buf, sizeof buf);
    KC_CHECK_CONTAINS(buf, cases[i].message);
    KC_CHECK(strstr(buf, "line ") == NULL); /* one line: columns only */
    kc_status_destroy(st);
  }
  KC_CHECK_CODE(kc_shape_parse(kc_sv("f32[1]"), NULL), KC_INVALID_ARGUMENT, "NULL");
}

KC_TEST(parse_shape_nested_deeply) {
  /* Deep enough to be refused, not deep enough to be slow. */
  char text[4096];
  size_t n = 0;
  for (int i = 0; i < 200; ++i) text[n++] = '(';
  memcpy(text + n, "f32[]", 5);
  n += 5;
  for (int i = 0; i < 200; ++i) text[n++] = ')';
  text[n] = '\0';
  kc_shape* s = NULL;
  KC_CHECK_CODE(kc_shape_parse(kc_sv(text), &s), KC_INVALID_ARGUMENT,
                "nested deeper than 64");
  KC_CHECK(s == NULL);
}
