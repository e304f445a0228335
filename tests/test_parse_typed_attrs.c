/* Typed custom-call attributes in HLO text
 * (src/program/frontend/parse_typed_attrs.c): the MLIR dictionary syntax as
 * XLA writes it, in backend_config and in a string, dense arrays and splats,
 * round trips through a typed handler, and the errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_parse.h"

/* ---- typed attributes -------------------------------------------------------- */

static const kc_attr* kt_find(const kt_attr_record* r, const kc_xcall_attr_spec* specs,
                              const char* name) {
  for (int32_t i = 0; i < r->num_attrs; ++i) {
    if (strcmp(specs[i].name, name) == 0) return &r->attrs[i];
  }
  kt__fail(__FILE__, __LINE__, "attribute '%s' not recorded", name);
  return NULL;
}

static const char kt_typed_module[] =
    "HloModule typed\n"
    "ENTRY main {\n"
    "  x = f32[4]{0} parameter(0)\n"
    "  ROOT r = f32[4]{0} custom-call(f32[4]{0} x), custom_call_target=\"kt.typed\", "
    "api_version=API_VERSION_TYPED_FFI, backend_config={\n"
    "    b = true, i1v = 0 : i1, i8v = -128 : i8, i16v = 32767 : i16, i32v = -5 : i32,\n"
    "    i64v = 9223372036854775807 : i64, si = -3 : si16,\n"
    "    u8v = 255 : ui8, u16v = 65535 : ui16, u32v = 4294967295 : ui32,\n"
    "    u64v = 18446744073709551615 : ui64,\n"
    "    f32v = 1.000000e-05 : f32, f64v = 2.5 : f64, fint = 3 : f32,\n"
    "    untyped_int = 7, untyped_float = 0.25, neg = -1,\n"
    "    s = \"a\\\"b\\\\c\\n\\t\\41\", empty_s = \"\",\n"
    "    arr64 = array<i64: 1, -2, 3>, arr32 = array<i32: 4, 5>, arr8 = array<i8: -1>,\n"
    "    arr16 = array<i16: 300>, arru8 = array<ui8: 1, 255>, arru16 = array<ui16: 65535>,\n"
    "    arru32 = array<ui32: 7>, arru64 = array<ui64: 18446744073709551615>,\n"
    "    arrf = array<f32: 0.5, 2.0>, arrd = array<f64: 1.5, -0.25>,\n"
    "    arrb = array<i1: true, false>, none = array<i64>,\n"
    "    nested = {a = 1 : i32, deeper = {name = \"x\"}}, nothing = {},\n"
    "    inf = 0x7F800000 : f32, ninf = 0xFFF0000000000000 : f64,\n"
    "    \"quoted name\" = false\n"
    "  }\n"
    "}\n";

static const kc_xcall_attr_spec kt_typed_specs[] = {
    {"b", KC_ATTR_BOOL, 0},          {"i1v", KC_ATTR_BOOL, 0},
    {"i8v", KC_ATTR_I8, 0},          {"i16v", KC_ATTR_I16, 0},
    {"i32v", KC_ATTR_I32, 0},        {"i64v", KC_ATTR_I64, 0},
    {"si", KC_ATTR_I16, 0},          {"u8v", KC_ATTR_U8, 0},
    {"u16v", KC_ATTR_U16, 0},        {"u32v", KC_ATTR_U32, 0},
    {"u64v", KC_ATTR_U64, 0},        {"f32v", KC_ATTR_F32, 0},
    {"f64v", KC_ATTR_F64, 0},        {"fint", KC_ATTR_F32, 0},
    {"untyped_int", KC_ATTR_I64, 0}, {"untyped_float", KC_ATTR_F64, 0},
    {"neg", KC_ATTR_I64, 0},         {"s", KC_ATTR_STRING, 0},
    {"empty_s", KC_ATTR_STRING, 0},  {"arr64", KC_ATTR_ARRAY, KC_ATTR_I64},
    {"arr32", KC_ATTR_ARRAY, KC_ATTR_I32}, {"arr8", KC_ATTR_ARRAY, KC_ATTR_I8},
    {"arr16", KC_ATTR_ARRAY, KC_ATTR_I16}, {"arru8", KC_ATTR_ARRAY, KC_ATTR_U8},
    {"arru16", KC_ATTR_ARRAY, KC_ATTR_U16}, {"arru32", KC_ATTR_ARRAY, KC_ATTR_U32},
    {"arru64", KC_ATTR_ARRAY, KC_ATTR_U64}, {"arrf", KC_ATTR_ARRAY, KC_ATTR_F32},
    {"arrd", KC_ATTR_ARRAY, KC_ATTR_F64},  {"arrb", KC_ATTR_ARRAY, KC_ATTR_BOOL},
    {"none", KC_ATTR_ARRAY, KC_ATTR_I64},  {"nested", KC_ATTR_DICT, 0},
    {"nothing", KC_ATTR_DICT, 0},    {"inf", KC_ATTR_F32, 0},
    {"ninf", KC_ATTR_F64, 0},        {"quoted name", KC_ATTR_BOOL, 0},
};

static void kt_check_typed_attrs(const kt_attr_record* r) {
  const kc_xcall_attr_spec* sp = kt_typed_specs;
  KC_CHECK_INT(r->num_attrs, (int32_t)(sizeof kt_typed_specs / sizeof kt_typed_specs[0]));
  KC_CHECK(kt_find(r, sp, "b")->v.b == true);
  KC_CHECK(kt_find(r, sp, "i1v")->v.b == false);
  KC_CHECK_INT(kt_find(r, sp, "i8v")->v.i64, -128);
  KC_CHECK_INT(kt_find(r, sp, "i16v")->v.i64, 32767);
  KC_CHECK_INT(kt_find(r, sp, "i32v")->v.i64, -5);
  KC_CHECK(kt_find(r, sp, "i64v")->v.i64 == INT64_MAX);
  KC_CHECK_INT(kt_find(r, sp, "si")->v.i64, -3);
  KC_CHECK(kt_find(r, sp, "u8v")->v.u64 == 255);
  KC_CHECK(kt_find(r, sp, "u16v")->v.u64 == 65535);
  KC_CHECK(kt_find(r, sp, "u32v")->v.u64 == 4294967295u);
  KC_CHECK(kt_find(r, sp, "u64v")->v.u64 == UINT64_MAX);
  KC_CHECK(kt_find(r, sp, "f32v")->v.f32 == 1e-05f);
  KC_CHECK(kt_find(r, sp, "f64v")->v.f64 == 2.5);
  KC_CHECK(kt_find(r, sp, "fint")->v.f32 == 3.0f);
  KC_CHECK_INT(kt_find(r, sp, "untyped_int")->v.i64, 7);
  KC_CHECK(kt_find(r, sp, "untyped_float")->v.f64 == 0.25);
  KC_CHECK_INT(kt_find(r, sp, "neg")->v.i64, -1);
  KC_CHECK(kt_sv_is(kt_find(r, sp, "s")->v.str, "a\"b\\c\n\tA"));
  KC_CHECK(kt_sv_is(kt_find(r, sp, "empty_s")->v.str, ""));

  const kc_attr* a = kt_find(r, sp, "arr64");
  KC_CHECK_INT(a->v.array.count, 3);
  const int64_t* i64 = a->v.array.data;
  KC_CHECK(i64[0] == 1 && i64[1] == -2 && i64[2] == 3);
  a = kt_find(r, sp, "arr32");
  const int32_t* i32 = a->v.array.data;
  KC_CHECK(a->v.array.count == 2 && i32[0] == 4 && i32[1] == 5);
  a = kt_find(r, sp, "arr8");
  KC_CHECK(a->v.array.count == 1 && ((const int8_t*)a->v.array.data)[0] == -1);
  a = kt_find(r, sp, "arr16");
  KC_CHECK(a->v.array.count == 1 && ((const int16_t*)a->v.array.data)[0] == 300);
  a = kt_find(r, sp, "arru8");
  const uint8_t* u8 = a->v.array.data;
  KC_CHECK(a->v.array.count == 2 && u8[0] == 1 && u8[1] == 255);
  a = kt_find(r, sp, "arru16");
  KC_CHECK(((const uint16_t*)a->v.array.data)[0] == 65535);
  a = kt_find(r, sp, "arru32");
  KC_CHECK(((const uint32_t*)a->v.array.data)[0] == 7);
  a = kt_find(r, sp, "arru64");
  KC_CHECK(((const uint64_t*)a->v.array.data)[0] == UINT64_MAX);
  a = kt_find(r, sp, "arrf");
  const float* f = a->v.array.data;
  KC_CHECK(a->v.array.count == 2 && f[0] == 0.5f && f[1] == 2.0f);
  a = kt_find(r, sp, "arrd");
  const double* d = a->v.array.data;
  KC_CHECK(a->v.array.count == 2 && d[0] == 1.5 && d[1] == -0.25);
  a = kt_find(r, sp, "arrb");
  const uint8_t* bools = a->v.array.data;
  KC_CHECK(a->v.array.count == 2 && bools[0] == 1 && bools[1] == 0);
  KC_CHECK_INT(kt_find(r, sp, "none")->v.array.count, 0);

  a = kt_find(r, sp, "nested");
  KC_CHECK_INT(a->v.dict.count, 2);
  const kc_attr* inner = kc_attr_dict_lookup(&a->v.dict, KC_SV_LIT("a"));
  KC_CHECK(inner && inner->type == KC_ATTR_I32 && inner->v.i64 == 1);
  inner = kc_attr_dict_lookup(&a->v.dict, KC_SV_LIT("deeper"));
  KC_CHECK(inner && inner->type == KC_ATTR_DICT && inner->v.dict.count == 1);
  KC_CHECK(kt_sv_is(inner->v.dict.entries[0].name, "name"));
  KC_CHECK(inner->v.dict.entries[0].type == KC_ATTR_STRING);
  KC_CHECK(kt_sv_is(inner->v.dict.entries[0].v.str, "x"));
  KC_CHECK_INT(kt_find(r, sp, "nothing")->v.dict.count, 0);

  float inf = kt_find(r, sp, "inf")->v.f32;
  KC_CHECK(isinf(inf) && inf > 0);
  double ninf = kt_find(r, sp, "ninf")->v.f64;
  KC_CHECK(isinf(ninf) && ninf < 0);
  KC_CHECK(kt_find(r, sp, "quoted name")->v.b == false);
}

KC_TEST(parse_typed_attributes_round_trip) {
  kt_attr_record rec = {0, 0, NULL};
  kt_register_recorder("kt.typed", kt_typed_specs,
                       (int32_t)(sizeof kt_typed_specs / sizeof kt_typed_specs[0]), 1, 1,
                       &rec);
  kc_program* p = kt_parse(kt_typed_module);
  kc_executable* exe = kt_compile(p);
  /* The compiled program keeps its own copy: check after the text and the
   * program are gone. */
  kc_program_destroy(p);
  KC_CHECK_INT(rec.calls, 1);
  kt_check_typed_attrs(&rec);
  kc_executable_destroy(exe);
}

KC_TEST(parse_typed_attributes_in_a_string) {
  /* Some writers quote the dictionary; for a typed call it is parsed. */
  kt_attr_record rec = {0, 0, NULL};
  static const kc_xcall_attr_spec specs[] = {
      {"eps", KC_ATTR_F32, 0}, {"name", KC_ATTR_STRING, 0}, {"dims", KC_ATTR_ARRAY, KC_ATTR_I64}};
  kt_register_recorder("kt.typed", specs, 3, 1, 1, &rec);
  kc_program* p = kt_parse(
      "HloModule typed\nENTRY main {\n  x = f32[4] parameter(0)\n"
      "  ROOT r = f32[4] custom-call(x), custom_call_target=\"kt.typed\", "
      "api_version=API_VERSION_TYPED_FFI, "
      "backend_config=\" {eps = 0.5 : f32, name = \\\"n\\\", dims = array<i64: 2, 3>}\"\n}\n");
  kc_executable* exe = kt_compile(p);
  KC_CHECK_INT(rec.num_attrs, 3);
  KC_CHECK(rec.attrs[0].v.f32 == 0.5f);
  KC_CHECK(kt_sv_is(rec.attrs[1].v.str, "n"));
  KC_CHECK_INT(rec.attrs[2].v.array.count, 2);
  kc_executable_destroy(exe);
  kc_program_destroy(p);

  /* An empty backend_config means no attributes. */
  rec.calls = 0;
  p = kt_parse(
      "HloModule typed\nENTRY main {\n  x = f32[4] parameter(0)\n"
      "  ROOT r = f32[4] custom-call(x), custom_call_target=\"kt.typed\", "
      "api_version=API_VERSION_TYPED_FFI, backend_config=\"\"\n}\n");
  kc_executable* none = NULL;
  KC_CHECK_CODE(kc_program_compile(p, NULL, &none), KC_INVALID_ARGUMENT,
                "attribute 'eps': expected f32, got none");
  kc_program_destroy(p);
}

KC_TEST(parse_dense_attributes) {
  /* NumPy arrays as JAX prints them: lists, splats, hex, any rank. */
  static const kc_xcall_attr_spec specs[] = {
      {"list", KC_ATTR_ARRAY, KC_ATTR_I64},  {"splat", KC_ATTR_ARRAY, KC_ATTR_I32},
      {"hex", KC_ATTR_ARRAY, KC_ATTR_I32},   {"hexsplat", KC_ATTR_ARRAY, KC_ATTR_I16},
      {"matrix", KC_ATTR_ARRAY, KC_ATTR_F32}, {"floats", KC_ATTR_ARRAY, KC_ATTR_F64},
      {"bools", KC_ATTR_ARRAY, KC_ATTR_BOOL}, {"empty", KC_ATTR_ARRAY, KC_ATTR_I32},
      {"scalar", KC_ATTR_ARRAY, KC_ATTR_U8}, {"zero", KC_ATTR_ARRAY, KC_ATTR_F32},
      {"unsigned", KC_ATTR_ARRAY, KC_ATTR_U64},
  };
  kt_attr_record rec = {0, 0, NULL};
  kt_register_recorder("kt.dense", specs, (int32_t)(sizeof specs / sizeof specs[0]), 1, 1,
                       &rec);
  kc_program* p = kt_parse(
      "HloModule dense\nENTRY main {\n  x = f32[4] parameter(0)\n"
      "  ROOT r = f32[4] custom-call(x), custom_call_target=\"kt.dense\", "
      "api_version=API_VERSION_TYPED_FFI, backend_config={"
      "list = dense<[1, -2, 3]> : tensor<3xi64>, splat = dense<7> : tensor<2x2xi32>, "
      "hex = dense<\"0x01000000FFFFFFFF\"> : tensor<2xi32>, "
      "hexsplat = dense<\"0x0201\"> : tensor<3xi16>, "
      "matrix = dense<[[1.000000e+00, 2.5], [-3.0, 0x7F800000]]> : tensor<2x2xf32>, "
      "floats = dense<[0x7FF8000000000000, -0.000000e+00]> : tensor<2xf64>, "
      "bools = dense<[true, false, true]> : tensor<3xi1>, empty = dense<> : tensor<0xi32>, "
      "scalar = dense<200> : tensor<ui8>, zero = dense<> : tensor<2x0xf32>, "
      "unsigned = dense<18446744073709551615> : tensor<1xui64>}\n}\n");
  kc_executable* exe = kt_compile(p);
  kc_program_destroy(p);
  KC_CHECK_INT(rec.num_attrs, (int32_t)(sizeof specs / sizeof specs[0]));
  const kc_attr* a = kt_find(&rec, specs, "list");
  const int64_t* i64 = a->v.array.data;
  KC_CHECK(a->v.array.count == 3 && i64[0] == 1 && i64[1] == -2 && i64[2] == 3);
  a = kt_find(&rec, specs, "splat");
  const int32_t* i32 = a->v.array.data;
  KC_CHECK(a->v.array.count == 4 && i32[0] == 7 && i32[3] == 7);
  a = kt_find(&rec, specs, "hex");
  i32 = a->v.array.data;
  KC_CHECK(a->v.array.count == 2 && i32[0] == 1 && i32[1] == -1);
  a = kt_find(&rec, specs, "hexsplat");
  const int16_t* i16 = a->v.array.data;
  KC_CHECK(a->v.array.count == 3 && i16[0] == 0x0102 && i16[2] == 0x0102);
  a = kt_find(&rec, specs, "matrix");
  const float* f = a->v.array.data;
  KC_CHECK(a->v.array.count == 4 && f[0] == 1.0f && f[1] == 2.5f && f[2] == -3.0f &&
           isinf(f[3]));
  a = kt_find(&rec, specs, "floats");
  const double* d = a->v.array.data;
  KC_CHECK(a->v.array.count == 2 && isnan(d[0]) && d[1] == 0.0 && signbit(d[1]));
  a = kt_find(&rec, specs, "bools");
  const uint8_t* b = a->v.array.data;
  KC_CHECK(a->v.array.count == 3 && b[0] == 1 && b[1] == 0 && b[2] == 1);
  KC_CHECK_INT(kt_find(&rec, specs, "empty")->v.array.count, 0);
  a = kt_find(&rec, specs, "scalar");
  KC_CHECK(a->v.array.count == 1 && ((const uint8_t*)a->v.array.data)[0] == 200);
  KC_CHECK_INT(kt_find(&rec, specs, "zero")->v.array.count, 0);
  a = kt_find(&rec, specs, "unsigned");
  KC_CHECK(a->v.array.count == 1 && ((const uint64_t*)a->v.array.data)[0] == UINT64_MAX);
  kc_executable_destroy(exe);
}

KC_TEST(parse_dense_splats) {
  /* A splat fills every element, however many the buffer's growth moves
   * it through (a hex splat once read its element from memory the growth
   * had freed). */
  static const kc_xcall_attr_spec specs[] = {
      {"hexsplat", KC_ATTR_ARRAY, KC_ATTR_I16}, {"splat", KC_ATTR_ARRAY, KC_ATTR_F64},
      {"bools", KC_ATTR_ARRAY, KC_ATTR_BOOL},   {"none", KC_ATTR_ARRAY, KC_ATTR_I16}};
  kt_attr_record rec = {0, 0, NULL};
  kt_register_recorder("kt.dense", specs, 4, 1, 1, &rec);
  kc_program* p = kt_parse(
      "HloModule dense\nENTRY main {\n  x = f32[4] parameter(0)\n"
      "  ROOT r = f32[4] custom-call(x), custom_call_target=\"kt.dense\", "
      "api_version=API_VERSION_TYPED_FFI, backend_config={"
      "hexsplat = dense<\"0x0201\"> : tensor<10x100xi16>, "
      "splat = dense<-2.5> : tensor<3x7x11xf64>, bools = dense<true> : tensor<1000xi1>, "
      "none = dense<\"0x0201\"> : tensor<0xi16>}\n}\n");
  kc_executable* exe = kt_compile(p);
  kc_program_destroy(p);
  const kc_attr* a = kt_find(&rec, specs, "hexsplat");
  KC_CHECK_INT(a->v.array.count, 1000);
  const int16_t* i16 = a->v.array.data;
  for (size_t i = 0; i < 1000; ++i) KC_CHECK_INT(i16[i], 0x0102);
  a = kt_find(&rec, specs, "splat");
  KC_CHECK_INT(a->v.array.count, 231);
  const double* d = a->v.array.data;
  for (size_t i = 0; i < 231; ++i) KC_CHECK(d[i] == -2.5);
  a = kt_find(&rec, specs, "bools");
  KC_CHECK_INT(a->v.array.count, 1000);
  const uint8_t* b = a->v.array.data;
  for (size_t i = 0; i < 1000; ++i) KC_CHECK_INT(b[i], 1);
  KC_CHECK_INT(kt_find(&rec, specs, "none")->v.array.count, 0);
  kc_executable_destroy(exe);
}

KC_TEST(parse_typed_attribute_errors) {
  static const struct {
    const char* config;
    const char* message;
  } cases[] = {
      {"{h = 1.0 : f16}", "line 4, column 120: f16 attributes are not supported"},
      {"{h = 1.0 : bf16}", "bf16 attributes are not supported"},
      {"{h = 1 : i7}", "expected an attribute type (i1, i8, i16, i32, i64, si8..si64, "
                       "ui8..ui64, f32, f64), got 'i7'"},
      {"{v = 128 : i8}", "expected an i8 integer, got '128'"},
      {"{v = -129 : i8}", "expected an i8 integer, got '-129'"},
      {"{v = -1 : ui8}", "expected a ui8 integer, got '-1'"},
      {"{v = 256 : ui8}", "expected a ui8 integer, got '256'"},
      {"{v = 1.5 : i32}", "expected an i32 integer, got '1.5'"},
      {"{v = 2 : i1}", "expected an i1 value (true, false, 0 or 1), got '2'"},
      {"{v = true : i32}", "expected an i32 integer, got 'true'"},
      {"{v = 9223372036854775808}", "expected an i64 integer"},
      {"{v = 0x1FFFFFFFF : f32}", "expected an f32 bit pattern, got '0x1FFFFFFFF'"},
      {"{v = array<i8: 1, 300>}", "expected an i8 integer, got '300'"},
      {"{v = array<i64 1>}", "expected ':' or '>', got '1'"},
      {"{v = array<i64: 1 2>}", "expected ',' or '>', got '2'"},
      {"{v = array<f16: 1>}", "f16 attributes are not supported"},
      {"{v = [1, 2]}", "expected an attribute value (a number, true, false, a string, "
                       "array<...>, dense<...> or {...}), got '['"},
      {"{v = dense<[1, 2]> : tensor<3xi32>}",
       "dense attribute: 2 elements for tensor type '3xi32', which holds 3"},
      {"{v = dense<[1, 2]> : tensor<?xi32>}", "tensor type '?xi32': expected static dims"},
      {"{v = dense<1.0> : tensor<2xf16>}", "tensor type '2xf16': f16 attributes are not supported"},
      {"{v = dense<[1, 2]> : vector<2xi32>}", "expected 'tensor' (the type of a dense "
                                              "attribute), got 'vector'"},
      {"{v = dense<[1, ]> : tensor<2xi32>}", "expected a dense element (a number, true or "
                                             "false), got ']'"},
      {"{v = dense<[1 2]> : tensor<2xi32>}", "expected ',' or ']', got '2'"},
      {"{v = dense<[300]> : tensor<1xi8>}", "expected an i8 integer, got '300'"},
      {"{v = dense<(1, 2)> : tensor<complex<f32>>}", "expected a dense element"},
      {"{v = dense<\"0x010203\"> : tensor<3xi16>}",
       "dense hex string: 3 bytes for 3 elements of 2 bytes"},
      {"{v = dense<\"0x01\"> : tensor<8xi1>}", "dense hex strings of i1 are not supported"},
      {"{v = dense<\"0xZZ\"> : tensor<1xi8>}", "expected a dense hex string"},
      {"{v = dense<1> : tensor<3xi32}", "tensor<...: expected '>' on the same line"},
      /* A splat is a few bytes of text for any number of elements. */
      {"{v = dense<1> : tensor<16777217xf32>}",
       "tensor type '16777217xf32': more than a dense attribute may hold (64 MiB)"},
      {"{v = dense<\"0x01\"> : tensor<99999999999x99999999999xi8>}",
       "more than a dense attribute may hold (64 MiB)"},
      {"{v = dense<7> : tensor<4294967296x4294967296x4294967296xi8>}",
       "more than a dense attribute may hold"},
      {"{v = \"\\q\"}", "expected an escape (\\\\, \\\", \\n, \\t or two hex digits)"},
      {"{v = 1, v = 2}", "attribute 'v' is given twice"},
      {"{v = 1 w = 2}", "expected ',' or '}', got 'w'"},
      {"{v 1}", "expected '=', got '1'"},
      {"{= 1}", "expected an attribute name, got '='"},
      {"\"{v = 1}}\"", "line 4, column 117: expected the end of backend_config, got '}'"},
      {"\"{v = 1\"", "expected ',' or '}', got end of input"},
      {"{v = 1", "line 6, column 1: expected an instruction or '}', got end of input"},
      {"\"{v = \"", "expected an attribute value"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char text[512];
    snprintf(text, sizeof text,
             "HloModule typed\nENTRY main {\n  x = f32[4] parameter(0)\n"
             "  ROOT r = f32[4] custom-call(x), custom_call_target=\"t\", "
             "api_version=API_VERSION_TYPED_FFI, backend_config=%s\n}\n",
             cases[i].config);
    KT_PARSE_FAILS(text, cases[i].message);
  }

  /* Dictionaries nested beyond the limit are refused, not recursed into. */
  char text[2048];
  size_t n = (size_t)snprintf(text, sizeof text,
                              "HloModule typed\nENTRY main {\n  ROOT r = f32[] custom-call(), "
                              "custom_call_target=\"t\", api_version=API_VERSION_TYPED_FFI, "
                              "backend_config=");
  for (int i = 0; i < 100; ++i) n += (size_t)snprintf(text + n, sizeof text - n, "{a = ");
  n += (size_t)snprintf(text + n, sizeof text - n, "1");
  for (int i = 0; i < 100; ++i) n += (size_t)snprintf(text + n, sizeof text - n, "}");
  snprintf(text + n, sizeof text - n, "\n}\n");
  KT_PARSE_FAILS(text, "dictionaries nested deeper than 64");

  /* Many keys: the duplicate check stays fast and still finds the one. */
  char* big = malloc(200000);
  KC_CHECK(big != NULL);
  n = (size_t)snprintf(big, 200000,
                       "HloModule typed\nENTRY main {\n  ROOT r = f32[] custom-call(), "
                       "custom_call_target=\"t\", api_version=API_VERSION_TYPED_FFI, "
                       "backend_config={");
  for (int i = 0; i < 5000; ++i) n += (size_t)snprintf(big + n, 200000 - n, "k%d = %d, ", i, i);
  n += (size_t)snprintf(big + n, 200000 - n, "k4321 = 0}\n}\n");
  KT_PARSE_FAILS(big, "attribute 'k4321' is given twice");
  free(big);
}
