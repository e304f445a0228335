/* Uniform quantized types in StableHLO (src/program/frontend/stablehlo/quant.c),
 * held as their storage integers: uniform_quantize (round half to even,
 * clamped to the storage range, a range of its own), uniform_dequantize,
 * per-axis scales, requantization, the other ops as
 * dequantize_op_quantize, parameters; and the refusals. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kt_hlo.h"

/* round_nearest_even(clamp(x / scale + zp, lo, hi)) */
static int kt_quantize(float x, float scale, int zp, int lo, int hi) {
  float v = x / scale + (float)zp;
  if (v < (float)lo) v = (float)lo;
  if (v > (float)hi) v = (float)hi;
  return (int)nearbyintf(v);
}

KC_TEST(stablehlo_uniform_quantize_rounds_and_clamps) {
  kc_tensor* out[3];
  kt_run_text(
      "func.func @main() -> (tensor<8xi8>, tensor<8xi8>, tensor<8xui8>) {\n"
      "  %x = stablehlo.constant dense<[0.25, 0.75, 1.25, -0.25, 100.0, -100.0, 0.6, 3.0]> : "
      "tensor<8xf32>\n"
      "  %0 = stablehlo.uniform_quantize %x : (tensor<8xf32>) -> "
      "tensor<8x!quant.uniform<i8:f32, 0.5:3>>\n"
      "  %1 = stablehlo.uniform_quantize %x : (tensor<8xf32>) -> "
      "tensor<8x!quant.uniform<i8<-7:7>:f32, 0.5>>\n"
      "  %2 = stablehlo.uniform_quantize %x : (tensor<8xf32>) -> "
      "tensor<8x!quant.uniform<ui8:f32, 0.25:128>>\n"
      "  %b0 = stablehlo.bitcast_convert %0 : (tensor<8x!quant.uniform<i8:f32, 0.5:3>>) -> "
      "tensor<8xi8>\n"
      "  %b1 = stablehlo.bitcast_convert %1 : (tensor<8x!quant.uniform<i8<-7:7>:f32, 0.5>>) -> "
      "tensor<8xi8>\n"
      "  %b2 = stablehlo.bitcast_convert %2 : (tensor<8x!quant.uniform<ui8:f32, 0.25:128>>) -> "
      "tensor<8xui8>\n"
      "  return %b0, %b1, %b2 : tensor<8xi8>, tensor<8xi8>, tensor<8xui8>\n}\n",
      out, 3);
  static const float x[8] = {0.25f, 0.75f, 1.25f, -0.25f, 100.0f, -100.0f, 0.6f, 3.0f};
  const int8_t* q0 = kt_data(out[0]);
  const int8_t* q1 = kt_data(out[1]);
  const uint8_t* q2 = kt_data(out[2]);
  for (int i = 0; i < 8; ++i) {
    KC_CHECK_INT(q0[i], kt_quantize(x[i], 0.5f, 3, -128, 127));
    KC_CHECK_INT(q1[i], kt_quantize(x[i], 0.5f, 0, -7, 7));
    KC_CHECK_INT(q2[i], kt_quantize(x[i], 0.25f, 128, 0, 255));
  }
  /* ties to even: 0.25 / 0.5 + 3 = 3.5 -> 4, 0.75 / 0.5 + 3 = 4.5 -> 4 */
  KC_CHECK_INT(q0[0], 4);
  KC_CHECK_INT(q0[1], 4);
  kt_release(out, 3);
}

/* A per-axis type along dimension 1, dequantized; requantized to another
 * per-tensor type; an add of two quantized tensors (dequantized, added,
 * quantized); a compare of quantized values; a parameter of a quantized
 * type takes its storage integers. */
KC_TEST(stablehlo_quantized_per_axis_requantize_add_compare) {
  const char* text =
      "func.func @main(%p: tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:-4}>>) -> "
      "(tensor<2x2xf32>, tensor<2x2xi8>, tensor<2x2xi8>, tensor<2x2xi1>) {\n"
      "  %d = stablehlo.uniform_dequantize %p : (tensor<2x2x!quant.uniform<i8:f32:1, "
      "{0.5:0, 0.25:-4}>>) -> tensor<2x2xf32>\n"
      "  %r = stablehlo.uniform_quantize %p : (tensor<2x2x!quant.uniform<i8:f32:1, "
      "{0.5:0, 0.25:-4}>>) -> tensor<2x2x!quant.uniform<i8:f32, 0.1:1>>\n"
      "  %a = stablehlo.add %r, %r : (tensor<2x2x!quant.uniform<i8:f32, 0.1:1>>, "
      "tensor<2x2x!quant.uniform<i8:f32, 0.1:1>>) -> tensor<2x2x!quant.uniform<i8:f32, 0.2:0>>\n"
      "  %c = stablehlo.compare GT, %r, %a : (tensor<2x2x!quant.uniform<i8:f32, 0.1:1>>, "
      "tensor<2x2x!quant.uniform<i8:f32, 0.2:0>>) -> tensor<2x2xi1>\n"
      "  %rb = stablehlo.bitcast_convert %r : (tensor<2x2x!quant.uniform<i8:f32, 0.1:1>>) -> "
      "tensor<2x2xi8>\n"
      "  %ab = stablehlo.bitcast_convert %a : (tensor<2x2x!quant.uniform<i8:f32, 0.2:0>>) -> "
      "tensor<2x2xi8>\n"
      "  return %d, %rb, %ab, %c : tensor<2x2xf32>, tensor<2x2xi8>, tensor<2x2xi8>, "
      "tensor<2x2xi1>\n}\n";
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  const kc_shape* in = kc_program_get_parameter_shape(p, 0);
  KC_CHECK(kc_shape_get_dtype(in).code == kDLInt && kc_shape_get_dtype(in).bits == 8);
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  int8_t q[4] = {3, 10, -2, -128};
  int64_t dims[2] = {2, 2};
  DLTensor t = {.data = q, .device = {kDLCPU, 0}, .ndim = 2, .dtype = {kDLInt, 8, 1},
                .shape = dims};
  const DLTensor* args[1] = {&t};
  kc_tensor* out[4] = {NULL};
  KC_CHECK_OK(kc_executable_execute(exe, args, 1, NULL, out));
  const float* d = kt_data(out[0]);
  const int8_t* r = kt_data(out[1]);
  const int8_t* a = kt_data(out[2]);
  const uint8_t* c = kt_data(out[3]);
  static const float scale[2] = {0.5f, 0.25f};
  static const int zp[2] = {0, -4};
  for (int i = 0; i < 4; ++i) {
    float want_d = (float)(q[i] - zp[i % 2]) * scale[i % 2];
    KC_CHECK(d[i] == want_d);
    int want_r = kt_quantize(want_d, 0.1f, 1, -128, 127);
    KC_CHECK_INT(r[i], want_r);
    float back = (float)(want_r - 1) * 0.1f;
    int want_a = kt_quantize(back + back, 0.2f, 0, -128, 127);
    KC_CHECK_INT(a[i], want_a);
    KC_CHECK_INT(c[i], back > (float)want_a * 0.2f);
  }
  kt_release(out, 4);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

KC_TEST(stablehlo_quantized_refusals) {
  KT_PARSE_FAILS("func.func @main(%p: tensor<2x!quant.uniform<i4:f32, 0.5>>) -> tensor<2xf32> {\n"
                 "  %d = stablehlo.uniform_dequantize %p : (tensor<2x!quant.uniform<i4:f32, 0.5>>)"
                 " -> tensor<2xf32>\n  return %d : tensor<2xf32>\n}\n",
                 "line 1", "!quant.uniform<i4:f32, 0.5>: expected a uniform quantized type",
                 "STORAGE i8, i16, i32, ui8, ui16 or ui32");
  KT_PARSE_FAILS("func.func @main(%p: tensor<2x3x!quant.uniform<i8:f32:1, {0.5, 0.25}>>) -> "
                 "tensor<2x3xf32> {\n"
                 "  %d = stablehlo.uniform_dequantize %p : (tensor<2x3x!quant.uniform<i8:f32:1, "
                 "{0.5, 0.25}>>) -> tensor<2x3xf32>\n  return %d : tensor<2x3xf32>\n}\n",
                 "expected one scale per index of dimension 1, got 2");
  KT_PARSE_FAILS("func.func @main(%p: tensor<2x!quant.uniform<i8:f32, -0.5:1>>) -> tensor<2xf32> {\n"
                 "  %d = stablehlo.uniform_dequantize %p : (tensor<2x!quant.uniform<i8:f32, -0.5:1>>)"
                 " -> tensor<2xf32>\n  return %d : tensor<2xf32>\n}\n",
                 "positive scales");
  KT_PARSE_FAILS(
      "func.func @main(%p: tensor<4x!quant.uniform<i8:f32, 0.5>>) -> "
      "tensor<!quant.uniform<i8:f32, 0.5>> {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i8>\n"
      "  %zq = stablehlo.bitcast_convert %z : (tensor<i8>) -> tensor<!quant.uniform<i8:f32, 0.5>>\n"
      "  %r = stablehlo.reduce(%p init: %zq) applies stablehlo.add across dimensions = [0] : "
      "(tensor<4x!quant.uniform<i8:f32, 0.5>>, tensor<!quant.uniform<i8:f32, 0.5>>) -> "
      "tensor<!quant.uniform<i8:f32, 0.5>>\n"
      "  return %r : tensor<!quant.uniform<i8:f32, 0.5>>\n}\n",
      "line 4", "reduce of a quantized type is not supported");
}
