/* Types narrower than a byte in StableHLO (src/program/frontend/stablehlo/narrow.c).
 * The narrow integers i4, ui4, i2 and ui2, held one to a byte of s8 or u8:
 * every element-wise op is run on every pair of values of each type and
 * checked against the narrow type's own arithmetic computed here (wrapping
 * modulo 2^bits, XLA's division by zero and shift-by-too-much results);
 * then conversions, parameters, constants, and what is refused. i1 in
 * bitcast_convert, where it is one bit wide. The f8 floats
 * (src/program/frontend/stablehlo/float8.c), held as their bits: constants against
 * XLA's rounding, ops computed in f32. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kt_hlo.h"
#include "kt_narrow.h"

KC_TEST(stablehlo_narrow_integers_wrap_like_their_type) {
  for (size_t ti = 0; ti < sizeof kTypes / sizeof kTypes[0]; ++ti) {
    const kt_narrow* t = &kTypes[ti];
    char as[2048], bs[2048];
    int a[256], b[256];
    int pairs = kt_narrow_pairs(t, a, b, as, bs, sizeof as);
    static char text[16384];
    size_t len = 0;
    len += (size_t)snprintf(text + len, sizeof text - len, "func.func @main() -> (");
    for (int k = 0; k < KT_NUM_BINARY + KT_NUM_UNARY; ++k) {
      len += (size_t)snprintf(text + len, sizeof text - len, "%stensor<%dx%s>", k ? ", " : "",
                              pairs, t->mlir);
    }
    len += (size_t)snprintf(text + len, sizeof text - len,
                            ") {\n  %%a = stablehlo.constant dense<[%s]> : tensor<%dx%s>\n"
                            "  %%b = stablehlo.constant dense<[%s]> : tensor<%dx%s>\n",
                            as, pairs, t->mlir, bs, pairs, t->mlir);
    for (int k = 0; k < KT_NUM_BINARY; ++k) {
      len += (size_t)snprintf(text + len, sizeof text - len,
                              "  %%r%d = stablehlo.%s %%a, %%b : tensor<%dx%s>\n", k, kBinary[k],
                              pairs, t->mlir);
    }
    for (int k = 0; k < KT_NUM_UNARY; ++k) {
      len += (size_t)snprintf(text + len, sizeof text - len,
                              "  %%u%d = stablehlo.%s %%a : tensor<%dx%s>\n", k, kUnary[k], pairs,
                              t->mlir);
    }
    len += (size_t)snprintf(text + len, sizeof text - len, "  return");
    for (int k = 0; k < KT_NUM_BINARY; ++k) {
      len += (size_t)snprintf(text + len, sizeof text - len, "%s %%r%d", k ? "," : "", k);
    }
    for (int k = 0; k < KT_NUM_UNARY; ++k) {
      len += (size_t)snprintf(text + len, sizeof text - len, ", %%u%d", k);
    }
    len += (size_t)snprintf(text + len, sizeof text - len, " : ");
    for (int k = 0; k < KT_NUM_BINARY + KT_NUM_UNARY; ++k) {
      len += (size_t)snprintf(text + len, sizeof text - len, "%stensor<%dx%s>", k ? ", " : "",
                              pairs, t->mlir);
    }
    snprintf(text + len, sizeof text - len, "\n}\n");
    kc_tensor* out[KT_NUM_BINARY + KT_NUM_UNARY] = {NULL};
    kt_run_text(text, out, KT_NUM_BINARY + KT_NUM_UNARY);
    kt_narrow_check_all(out, t, a, b, pairs);
  }
}

/* Conversions into a narrow type: from a wider integer its low bits (as
 * between any integers), from a float the value clamped to the range (as
 * the conversion saturates), NaN 0; between i4 and ui4 by bitcast_convert
 * the same bits; iota and a reduction wrap. */
KC_TEST(stablehlo_narrow_integer_conversions) {
  kc_tensor* out[6] = {NULL};
  kt_run_text(
      "func.func @main() -> (tensor<6xi4>, tensor<6xui4>, tensor<6xi4>, tensor<4xui4>, "
      "tensor<20xi4>, tensor<i4>) {\n"
      "  %w = stablehlo.constant dense<[7, 8, 15, 16, -9, 300]> : tensor<6xi32>\n"
      "  %0 = stablehlo.convert %w : (tensor<6xi32>) -> tensor<6xi4>\n"
      "  %f = stablehlo.constant dense<[2.9, -2.9, 100.0, -100.0, 0x7FC00000, 15.5]> : "
      "tensor<6xf32>\n"
      "  %1 = stablehlo.convert %f : (tensor<6xf32>) -> tensor<6xui4>\n"
      "  %d = stablehlo.convert %f : (tensor<6xf32>) -> tensor<6xf64>\n"
      "  %2 = stablehlo.convert %d : (tensor<6xf64>) -> tensor<6xi4>\n"
      "  %s = stablehlo.constant dense<[-8, -1, 0, 7]> : tensor<4xi4>\n"
      "  %3 = stablehlo.bitcast_convert %s : (tensor<4xi4>) -> tensor<4xui4>\n"
      "  %4 = stablehlo.iota dim = 0 : tensor<20xi4>\n"
      "  %z = stablehlo.constant dense<0> : tensor<i4>\n"
      "  %5 = stablehlo.reduce(%4 init: %z) applies stablehlo.add across dimensions = [0] : "
      "(tensor<20xi4>, tensor<i4>) -> tensor<i4>\n"
      "  return %0, %1, %2, %3, %4, %5 : tensor<6xi4>, tensor<6xui4>, tensor<6xi4>, "
      "tensor<4xui4>, tensor<20xi4>, tensor<i4>\n}\n",
      out, 6);
  static const kt_narrow i4 = {"i4", 4, true}, u4 = {"ui4", 4, false};
  static const int w0[6] = {7, -8, -1, 0, 7, -4}, w1[6] = {2, 0, 15, 0, 0, 15};
  static const int w2[6] = {2, -2, 7, -8, 0, 7}, w3[4] = {8, 15, 0, 7};
  kt_check_bytes(out[0], &i4, w0, 6, "convert from i32");
  kt_check_bytes(out[1], &u4, w1, 6, "convert from f32");
  kt_check_bytes(out[2], &i4, w2, 6, "convert from f64");
  kt_check_bytes(out[3], &u4, w3, 4, "bitcast_convert from i4");
  int w4[20], sum = 0;
  for (int i = 0; i < 20; ++i) {
    w4[i] = kt_wrap(&i4, i);
    sum += w4[i];
  }
  kt_check_bytes(out[4], &i4, w4, 20, "iota");
  int w5[1] = {kt_wrap(&i4, sum)};
  kt_check_bytes(out[5], &i4, w5, 1, "reduce");
  kt_release(out, 6);
}

/* An entry parameter of a narrow type takes s8 (u8) elements, of which
 * its low bits count; a constant takes its type's values (a signless one
 * written as either a signed or an unsigned value, as MLIR reads it). */
KC_TEST(stablehlo_narrow_integer_parameters_and_constants) {
  const char* text =
      "func.func @main(%x: tensor<4xi4>) -> (tensor<4xi4>, tensor<4xi4>) {\n"
      "  %c = stablehlo.constant dense<[15, -8, 8, 1]> : tensor<4xi4>\n"
      "  %0 = stablehlo.add %x, %c : tensor<4xi4>\n"
      "  return %x, %0 : tensor<4xi4>, tensor<4xi4>\n}\n";
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  int64_t dims[1] = {4};
  kc_tensor* x = NULL;
  KC_CHECK_OK(
      kc_tensor_create(kt_alloc(), dims, 1, kc_dtype_make(kDLInt, 8, 1), kc_device_cpu(), &x));
  static const signed char xs[4] = {0x17, -1, 100, 3};
  memcpy(kc_tensor_get_dltensor(x)->data, xs, sizeof xs);
  const DLTensor* in[1] = {kc_tensor_get_dltensor(x)};
  kc_tensor* out[2] = {NULL, NULL};
  KC_CHECK_OK(kc_executable_execute(exe, in, 1, NULL, out));
  static const kt_narrow i4 = {"i4", 4, true};
  static const int w0[4] = {7, -1, 4, 3}, w1[4] = {6, 7, -4, 4};
  kt_check_bytes(out[0], &i4, w0, 4, "parameter");
  kt_check_bytes(out[1], &i4, w1, 4, "parameter + constant");
  kt_release(out, 2);
  kc_object_release(KC_OBJECT(x));
  kc_executable_destroy(exe);
  kc_program_destroy(p);

  KT_PARSE_FAILS(
      "func.func @main() -> tensor<2xi4> {\n"
      "  %c = stablehlo.constant dense<[1, 16]> : tensor<2xi4>\n"
      "  return %c : tensor<2xi4>\n}\n",
      "line 2", "constant: element 1, 16, is outside the range of i4 (-8..15)");
  KT_PARSE_FAILS(
      "func.func @main() -> tensor<2xui2> {\n"
      "  %c = stablehlo.constant dense<[1, 4]> : tensor<2xui2>\n"
      "  return %c : tensor<2xui2>\n}\n",
      "constant: element 1, 4, is outside the range of ui2 (0..3)");
}

/* What a byte cannot hold as the narrow type would is refused, naming the
 * op: a bitcast to or from another width (whose bits would be packed) and
 * a custom call (whose target would read bytes as another type). */
KC_TEST(stablehlo_narrow_integer_refusals) {
  KT_PARSE_FAILS(
      "func.func @main(%x: tensor<2xi4>) -> tensor<i8> {\n"
      "  %0 = stablehlo.bitcast_convert %x : (tensor<2xi4>) -> tensor<i8>\n"
      "  return %0 : tensor<i8>\n}\n",
      "line 2, column 8", "bitcast_convert: from 4-bit to 8-bit elements is not supported");
  KT_PARSE_FAILS(
      "func.func @main(%x: tensor<4xi4>) -> tensor<4xi4> {\n"
      "  %0 = stablehlo.custom_call @target(%x) : (tensor<4xi4>) -> tensor<4xi4>\n"
      "  return %0 : tensor<4xi4>\n}\n",
      "custom_call: an operand or result of a narrow integer type");
  KT_PARSE_FAILS(
      "func.func @main(%x: tensor<4xi4>) -> tensor<4xcomplex<f32>> {\n"
      "  %0 = stablehlo.convert %x : (tensor<4xi4>) -> tensor<4xcomplex<f32>>\n"
      "  %1 = stablehlo.convert %0 : (tensor<4xcomplex<f32>>) -> tensor<4xi4>\n"
      "  return %0 : tensor<4xcomplex<f32>>\n}\n",
      "line 3", "convert: from a complex type to i4 is not supported");
}

/* bitcast_convert to and from i1, one bit wide there: each element's bits,
 * little-endian, along a new last dimension, and back. */
KC_TEST(stablehlo_bitcast_convert_to_and_from_i1) {
  kc_tensor* out[3] = {NULL, NULL, NULL};
  kt_run_text(
      "func.func @main() -> (tensor<2x32xi1>, tensor<2xf32>, tensor<8xi1>) {\n"
      "  %x = stablehlo.constant dense<[1.5, -0.0]> : tensor<2xf32>\n"
      "  %0 = stablehlo.bitcast_convert %x : (tensor<2xf32>) -> tensor<2x32xi1>\n"
      "  %1 = stablehlo.bitcast_convert %0 : (tensor<2x32xi1>) -> tensor<2xf32>\n"
      "  %b = stablehlo.constant dense<-91> : tensor<i8>\n"
      "  %2 = stablehlo.bitcast_convert %b : (tensor<i8>) -> tensor<8xi1>\n"
      "  return %0, %1, %2 : tensor<2x32xi1>, tensor<2xf32>, tensor<8xi1>\n}\n",
      out, 3);
  static const float xs[2] = {1.5f, -0.0f};
  const unsigned char* bits = kt_data(out[0]);
  for (int i = 0; i < 2; ++i) {
    uint32_t u;
    memcpy(&u, &xs[i], sizeof u);
    for (int k = 0; k < 32; ++k) KC_CHECK_INT(bits[32 * i + k], (int64_t)(u >> k & 1));
  }
  KC_CHECK(memcmp(kt_data(out[1]), xs, sizeof xs) == 0);
  const unsigned char* b8 = kt_data(out[2]);
  for (int k = 0; k < 8; ++k) KC_CHECK_INT(b8[k], (int64_t)((uint8_t)-91 >> k & 1));
  kt_release(out, 3);
  KT_PARSE_FAILS(
      "func.func @main(%x: tensor<2xf32>) -> tensor<2x16xi1> {\n"
      "  %0 = stablehlo.bitcast_convert %x : (tensor<2xf32>) -> tensor<2x16xi1>\n"
      "  return %0 : tensor<2x16xi1>\n}\n",
      "line 2",
      "bitcast_convert: between i1 and a 32-bit type, expected the i1 side "
      "to have the other's dims and a last dimension of 32");
}

/* ---- the f8 floats ---------------------------------------------------------- */

static const char* const kF8Types[8] = {"f8E4M3FN",      "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ",
                                        "f8E4M3B11FNUZ", "f8E4M3", "f8E3M4",     "f8E8M0FNU"};

/* Constants of each f8 type, written as decimals, hold the bits XLA
 * rounds the same f32 values to (the float8 fixture of
 * tests/fixtures/stablehlo_bytecode: JAX's x.astype(f8) as bits, output
 * 3k for type k): every finite input. */
KC_TEST(stablehlo_float8_constants_round_as_xla_does) {
  char path[1024];
  snprintf(path, sizeof path, "%s/float8.input0.npy", KT_STABLEHLO_BYTECODE_DIR);
  kc_tensor* in = NULL;
  KC_CHECK_OK(kc_tensor_read_npy(path, NULL, &in));
  const DLTensor* x = kc_tensor_get_dltensor(in);
  const float* xs = x->data;
  int64_t n = x->shape[0];
  static char list[16384]; /* each value exactly: %.17g of the f32 */
  size_t len = 0;
  int count = 0;
  int64_t kept[512];
  for (int64_t i = 0; i < n && count < 512; ++i) {
    if (!isfinite(xs[i])) continue;
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%.17g", count ? ", " : "", xs[i]);
    kept[count++] = i;
  }
  for (int k = 0; k < 8; ++k) {
    static char text[20000];
    snprintf(text, sizeof text,
             "func.func @main() -> tensor<%dxui8> {\n"
             "  %%c = stablehlo.constant dense<[%s]> : tensor<%dx%s>\n"
             "  %%b = stablehlo.bitcast_convert %%c : (tensor<%dx%s>) -> tensor<%dxui8>\n"
             "  return %%b : tensor<%dxui8>\n}\n",
             count, list, count, kF8Types[k], count, kF8Types[k], count, count);
    kc_tensor* out = NULL;
    kt_run_text(text, &out, 1);
    snprintf(path, sizeof path, "%s/float8.output%d.npy", KT_STABLEHLO_BYTECODE_DIR, 3 * k);
    kc_tensor* want = NULL;
    KC_CHECK_OK(kc_tensor_read_npy(path, NULL, &want));
    const unsigned char* got = kt_data(out);
    const unsigned char* w = kc_tensor_get_dltensor(want)->data;
    for (int i = 0; i < count; ++i) {
      if (got[i] != w[kept[i]]) {
        kt__fail(__FILE__, __LINE__, "%s: %.9g encodes to %#x, XLA's %#x", kF8Types[k], xs[kept[i]],
                 got[i], w[kept[i]]);
        break;
      }
    }
    kc_object_release(KC_OBJECT(out));
    kc_object_release(KC_OBJECT(want));
  }
  kc_object_release(KC_OBJECT(in));
}

/* An f8 parameter takes its bits (u8), ops compute in f32 and round once;
 * what the f8 types cannot do is refused, naming the op and the type. */
KC_TEST(stablehlo_float8_ops_compute_in_f32) {
  kc_tensor* out[3] = {NULL, NULL, NULL};
  /* 1.5 * 1.25 = 1.875 (exact in e4m3fn: 0x3F); 448 + 448 overflows to
   * NaN (0x7F); the max of the two as f32. */
  kt_run_text(
      "func.func @main() -> (tensor<2xf8E4M3FN>, tensor<2xf32>) {\n"
      "  %a = stablehlo.constant dense<[1.5, 448.0]> : tensor<2xf8E4M3FN>\n"
      "  %b = stablehlo.constant dense<[1.25, 448.0]> : tensor<2xf8E4M3FN>\n"
      "  %p = stablehlo.multiply %a, %b : tensor<2xf8E4M3FN>\n"
      "  %s = stablehlo.add %a, %b : tensor<2xf8E4M3FN>\n"
      "  %0 = stablehlo.slice %p [0:1] : (tensor<2xf8E4M3FN>) -> tensor<1xf8E4M3FN>\n"
      "  %1 = stablehlo.slice %s [1:2] : (tensor<2xf8E4M3FN>) -> tensor<1xf8E4M3FN>\n"
      "  %2 = stablehlo.concatenate %0, %1, dim = 0 : (tensor<1xf8E4M3FN>, "
      "tensor<1xf8E4M3FN>) -> tensor<2xf8E4M3FN>\n"
      "  %m = stablehlo.maximum %a, %b : tensor<2xf8E4M3FN>\n"
      "  %3 = stablehlo.convert %m : (tensor<2xf8E4M3FN>) -> tensor<2xf32>\n"
      "  return %2, %3 : tensor<2xf8E4M3FN>, tensor<2xf32>\n}\n",
      out, 2);
  const unsigned char* bits = kt_data(out[0]);
  KC_CHECK_INT(bits[0], 0x3F);
  /* f8 to i4 saturates as a float does (100 -> 7), and i4 to f8 is exact. */
  kc_tensor* conv[2] = {NULL, NULL};
  kt_run_text(
      "func.func @main() -> (tensor<2xi4>, tensor<2xf8E5M2>) {\n"
      "  %a = stablehlo.constant dense<[100.0, -3.0]> : tensor<2xf8E5M2>\n"
      "  %0 = stablehlo.convert %a : (tensor<2xf8E5M2>) -> tensor<2xi4>\n"
      "  %1 = stablehlo.convert %0 : (tensor<2xi4>) -> tensor<2xf8E5M2>\n"
      "  return %0, %1 : tensor<2xi4>, tensor<2xf8E5M2>\n}\n",
      conv, 2);
  const signed char* i4 = kt_data(conv[0]);
  KC_CHECK(i4[0] == 7 && i4[1] == -3);
  const unsigned char* back = kt_data(conv[1]);
  KC_CHECK_INT(back[0], 0x47); /* 7.0 in e5m2 */
  KC_CHECK_INT(back[1], 0xC2); /* -3.0 */
  kt_release(conv, 2);
  KC_CHECK_INT(bits[1], 0x7F);
  const float* m = kt_data(out[1]);
  KC_CHECK(m[0] == 1.5f && m[1] == 448.0f);
  kt_release(out, 2);
  /* Ops with regions run on the bits, their regions computing in f32:
   * a sum (the init -1, then 2.5, -1, 448 and 1.5, each step rounded to
   * e4m3fn, whose values near 448 are 32 apart: 448) and a sort by f8
   * keys. */
  kt_run_text(
      "func.func @main() -> (tensor<f8E4M3FN>, tensor<4xf8E4M3FN>, tensor<4xi32>) {\n"
      "  %k = stablehlo.constant dense<[2.5, -1.0, 448.0, 1.5]> : tensor<4xf8E4M3FN>\n"
      "  %i = stablehlo.iota dim = 0 : tensor<4xi32>\n"
      "  %z = stablehlo.constant dense<-1.0> : tensor<f8E4M3FN>\n"
      "  %0 = stablehlo.reduce(%k init: %z) across dimensions = [0] : (tensor<4xf8E4M3FN>, "
      "tensor<f8E4M3FN>) -> tensor<f8E4M3FN>\n"
      "    reducer(%a: tensor<f8E4M3FN>, %b: tensor<f8E4M3FN>) {\n"
      "      %s = stablehlo.add %a, %b : tensor<f8E4M3FN>\n"
      "      stablehlo.return %s : tensor<f8E4M3FN>\n"
      "    }\n"
      "  %1:2 = \"stablehlo.sort\"(%k, %i) <{dimension = 0 : i64, is_stable = true}> ({\n"
      "  ^bb0(%p: tensor<f8E4M3FN>, %q: tensor<f8E4M3FN>, %r: tensor<i32>, %t: tensor<i32>):\n"
      "    %c = stablehlo.compare LT, %p, %q : (tensor<f8E4M3FN>, tensor<f8E4M3FN>) -> "
      "tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  }) : (tensor<4xf8E4M3FN>, tensor<4xi32>) -> (tensor<4xf8E4M3FN>, tensor<4xi32>)\n"
      "  return %0, %1#0, %1#1 : tensor<f8E4M3FN>, tensor<4xf8E4M3FN>, tensor<4xi32>\n}\n",
      out, 3);
  KC_CHECK_INT(((const unsigned char*)kt_data(out[0]))[0], 0x7E); /* 448 */
  static const int32_t order[4] = {1, 3, 0, 2};
  KC_CHECK(memcmp(kt_data(out[2]), order, sizeof order) == 0);
  static const unsigned char sorted[4] = {0xB8, 0x3C, 0x42, 0x7E}; /* -1, 1.5, 2.5, 448 */
  KC_CHECK(memcmp(kt_data(out[1]), sorted, sizeof sorted) == 0);
  kt_release(out, 3);
  KT_PARSE_FAILS(
      "func.func @main(%x: tensor<4xf8E5M2>) -> tensor<f8E5M2> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f8E5M2>\n"
      "  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions "
      "= [0] : (tensor<4xf8E5M2>, tensor<f8E5M2>) -> tensor<f8E5M2>\n"
      "  return %0 : tensor<f8E5M2>\n}\n",
      "line 3", "stablehlo.reduce of f8E5M2 is not supported");
  KT_PARSE_FAILS(
      "func.func @main() -> tensor<f4E2M1FN> {\n"
      "  %c = stablehlo.constant dense<0x7FC00000> : tensor<f4E2M1FN>\n"
      "  return %c : tensor<f4E2M1FN>\n}\n",
      "the bits in hex of an 8-bit float");
}
