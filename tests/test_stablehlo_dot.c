/* dot_general's `algorithm`, chlo.ragged_dot and chlo.scan in StableHLO
 * (src/program/frontend/stablehlo/lower_dot.c, lower_scan.c), against sums
 * computed here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kt_hlo.h"

/* x rounded to `mantissa` bits (nearest, ties to even), as
 * reduce_precision does for finite values in range. */
static float kt_round_mantissa(float x, int mantissa) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  int drop = 23 - mantissa;
  uint32_t half = (1u << (drop - 1)) - 1 + (u >> drop & 1);
  u = (u + half) & ~((1u << drop) - 1);
  memcpy(&x, &u, sizeof x);
  return x;
}

static const char kAlgorithmDot[] =
    "func.func @main() -> tensor<2x2xf32> {\n"
    "  %%a = stablehlo.constant dense<[[1.0009765625, 1.00048828125, 3.14159274], "
    "[-2.7182817, 0.333333343, 1.0e-3]]> : tensor<2x3xf32>\n"
    "  %%b = stablehlo.constant dense<[[1.00024414, 2.0], [0.1, -1.00000012], [7.5, 0.999]]> : "
    "tensor<3x2xf32>\n"
    "  %%0 = stablehlo.dot_general %%a, %%b, contracting_dims = [1] x [0], algorithm = "
    "<lhs_precision_type = %s, rhs_precision_type = %s, accumulation_type = f32, "
    "lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, "
    "allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x2xf32>) -> "
    "tensor<2x2xf32>\n"
    "  return %%0 : tensor<2x2xf32>\n}\n";

/* An algorithm with tf32 or bf16 precision types rounds the f32 operands
 * to them before the products; f32 leaves them as they are. */
KC_TEST(stablehlo_dot_general_algorithm_rounds_operands) {
  static const float a[2][3] = {{1.0009765625f, 1.00048828125f, 3.14159274f},
                                {-2.7182817f, 0.333333343f, 1.0e-3f}};
  static const float b[3][2] = {{1.00024414f, 2.0f}, {0.1f, -1.00000012f}, {7.5f, 0.999f}};
  static const struct {
    const char* type;
    int mantissa;
  } cases[] = {{"f32", 23}, {"tf32", 10}, {"bf16", 7}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    char text[2048];
    snprintf(text, sizeof text, kAlgorithmDot, cases[c].type, cases[c].type);
    kc_tensor* out = NULL;
    kt_run_text(text, &out, 1);
    const float* got = kt_data(out);
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        float want = 0;
        for (int k = 0; k < 3; ++k) {
          float x = a[i][k], y = b[k][j];
          if (cases[c].mantissa < 23) {
            x = kt_round_mantissa(x, cases[c].mantissa);
            y = kt_round_mantissa(y, cases[c].mantissa);
          }
          want += x * y;
        }
        if (fabsf(got[2 * i + j] - want) > 1e-6f * (1 + fabsf(want))) {
          kt__fail(__FILE__, __LINE__, "%s [%d][%d]: got %.9g, expected %.9g", cases[c].type, i, j,
                   got[2 * i + j], want);
        }
      }
    }
    kc_object_release(KC_OBJECT(out));
  }
  /* What kcall does not compute is refused, naming the field. */
  const char* bad =
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], "
      "algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, "
      "accumulation_type = f32, lhs_component_count = 3, rhs_component_count = 3, "
      "num_primitive_operations = 6, allow_imprecise_accumulation = false> : "
      "(tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>\n"
      "  return %0 : tensor<2x2xf32>\n}\n";
  KT_PARSE_FAILS(bad, "line 2", "dot_general: algorithm: lhs_component_count = 3 is not supported");
  char text[2048];
  snprintf(text, sizeof text, kAlgorithmDot, "f8E4M3FN", "f32");
  KT_PARSE_FAILS(text, "dot_general: algorithm: lhs_precision_type = f8E4M3FN is not supported");
  const char* acc =
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], "
      "algorithm = <lhs_precision_type = f32, rhs_precision_type = f32, "
      "accumulation_type = f16, lhs_component_count = 1, rhs_component_count = 1, "
      "num_primitive_operations = 1, allow_imprecise_accumulation = false> : "
      "(tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>\n"
      "  return %0 : tensor<2x2xf32>\n}\n";
  KT_PARSE_FAILS(acc,
                 "accumulation_type = f16 is not supported for a result of this type "
                 "(kcall accumulates it in f32)");
}

/* chlo.ragged_dot, a ragged lhs row dimension: each row times its group's
 * rhs; rows past the groups give zeros; batched; group sizes of i32. */
KC_TEST(stablehlo_chlo_ragged_dot_takes_each_rows_group) {
  enum { B = 2, M = 7, K = 3, G = 3, N = 2 };
  static const int sizes[G] = {2, 0, 4}; /* rows 0-1, none, 2-5; row 6 in none */
  float lhs[B][M][K], rhs[G][B][K][N];
  char ls[4096], rs[4096];
  size_t a = 0, b = 0;
  a += (size_t)snprintf(ls + a, sizeof ls - a, "[");
  for (int bi = 0; bi < B; ++bi) {
    a += (size_t)snprintf(ls + a, sizeof ls - a, "%s[", bi ? ", " : "");
    for (int m = 0; m < M; ++m) {
      a += (size_t)snprintf(ls + a, sizeof ls - a, "%s[", m ? ", " : "");
      for (int k = 0; k < K; ++k) {
        lhs[bi][m][k] = (float)((bi * 31 + m * 7 + k * 3) % 11) - 5.0f;
        a += (size_t)snprintf(ls + a, sizeof ls - a, "%s%g", k ? ", " : "", lhs[bi][m][k]);
      }
      a += (size_t)snprintf(ls + a, sizeof ls - a, "]");
    }
    a += (size_t)snprintf(ls + a, sizeof ls - a, "]");
  }
  snprintf(ls + a, sizeof ls - a, "]");
  b += (size_t)snprintf(rs + b, sizeof rs - b, "[");
  for (int g = 0; g < G; ++g) {
    b += (size_t)snprintf(rs + b, sizeof rs - b, "%s[", g ? ", " : "");
    for (int bi = 0; bi < B; ++bi) {
      b += (size_t)snprintf(rs + b, sizeof rs - b, "%s[", bi ? ", " : "");
      for (int k = 0; k < K; ++k) {
        b += (size_t)snprintf(rs + b, sizeof rs - b, "%s[", k ? ", " : "");
        for (int n = 0; n < N; ++n) {
          rhs[g][bi][k][n] = (float)((g * 13 + bi * 5 + k * 2 + n) % 7) - 3.0f;
          b += (size_t)snprintf(rs + b, sizeof rs - b, "%s%g", n ? ", " : "", rhs[g][bi][k][n]);
        }
        b += (size_t)snprintf(rs + b, sizeof rs - b, "]");
      }
      b += (size_t)snprintf(rs + b, sizeof rs - b, "]");
    }
    b += (size_t)snprintf(rs + b, sizeof rs - b, "]");
  }
  snprintf(rs + b, sizeof rs - b, "]");
  static char text[12288];
  snprintf(text, sizeof text,
           "func.func @main() -> tensor<2x7x2xf32> {\n"
           "  %%l = stablehlo.constant dense<%s> : tensor<2x7x3xf32>\n"
           "  %%r = stablehlo.constant dense<%s> : tensor<3x2x3x2xf32>\n"
           "  %%g = stablehlo.constant dense<[2, 0, 4]> : tensor<3xi32>\n"
           "  %%0 = \"chlo.ragged_dot\"(%%l, %%r, %%g) {ragged_dot_dimension_numbers = "
           "#chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], "
           "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], "
           "lhs_ragged_dimensions = [1], rhs_group_dimensions = [0]>} : (tensor<2x7x3xf32>, "
           "tensor<3x2x3x2xf32>, tensor<3xi32>) -> tensor<2x7x2xf32>\n"
           "  return %%0 : tensor<2x7x2xf32>\n}\n",
           ls, rs);
  kc_tensor* out = NULL;
  kt_run_text(text, &out, 1);
  const float* got = kt_data(out);
  for (int bi = 0; bi < B; ++bi) {
    for (int m = 0; m < M; ++m) {
      int g = 0, end = sizes[0];
      while (g < G && m >= end) end += ++g < G ? sizes[g] : 0;
      for (int n = 0; n < N; ++n) {
        float want = 0;
        for (int k = 0; k < K && g < G; ++k) want += lhs[bi][m][k] * rhs[g][bi][k][n];
        float have = got[(bi * M + m) * N + n];
        if (have != want) {
          kt__fail(__FILE__, __LINE__, "[%d][%d][%d]: got %g, expected %g", bi, m, n, have, want);
        }
      }
    }
  }
  kc_object_release(KC_OBJECT(out));
  /* A ragged contracting dimension (the second mode) is refused. */
  KT_PARSE_FAILS(
      "func.func @main(%l: tensor<4x6xf32>, %r: tensor<6x5xf32>, %g: tensor<2xi64>) "
      "-> tensor<2x4x5xf32> {\n"
      "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers = "
      "#chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
      "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0], "
      "lhs_ragged_dimensions = [1], rhs_group_dimensions = []>} : (tensor<4x6xf32>, "
      "tensor<6x5xf32>, tensor<2xi64>) -> tensor<2x4x5xf32>\n"
      "  return %0 : tensor<2x4x5xf32>\n}\n",
      "line 2", "chlo.ragged_dot: a ragged contracting dimension is not supported");
}

/* chlo.scan, unrolled: a running sum and product along dimension 1,
 * reversed, with a value from outside the region and two carries; the
 * generic form; what it refuses. */
KC_TEST(stablehlo_chlo_scan_runs_its_region_along_a_dimension) {
  static const char* const forms[2] = {
      "  %0:4 = chlo.scan(%x) inits(%s0, %p0) dimension=1 attributes {is_reverse = true} {\n",
      "  %0:4 = \"chlo.scan\"(%x, %s0, %p0) <{dimension = 1 : i64, is_reverse = true, "
      "operandSegmentSizes = array<i32: 1, 2>}> ({\n"};
  static const char* const tails[2] = {
      "  } : (tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x4xf32>, "
      "tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>)\n",
      "  }) : (tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x4xf32>, "
      "tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>)\n"};
  static const float x[2][4] = {{1, 2, 3, 4}, {-1, 0.5f, 2, -3}};
  for (int f = 0; f < 2; ++f) {
    char text[2048];
    snprintf(text, sizeof text,
             "func.func @main() -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xf32>, "
             "tensor<2xf32>) {\n"
             "  %%x = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 2.0, -3.0]]> : "
             "tensor<2x4xf32>\n"
             "  %%s0 = stablehlo.constant dense<0.0> : tensor<2xf32>\n"
             "  %%p0 = stablehlo.constant dense<1.0> : tensor<2xf32>\n"
             "  %%two = stablehlo.constant dense<2.0> : tensor<2xf32>\n"
             "%s"
             "  ^bb0(%%e: tensor<2xf32>, %%s: tensor<2xf32>, %%p: tensor<2xf32>):\n"
             "    %%1 = stablehlo.add %%s, %%e : tensor<2xf32>\n"
             "    %%2 = stablehlo.multiply %%p, %%e : tensor<2xf32>\n"
             "    %%3 = stablehlo.multiply %%1, %%two : tensor<2xf32>\n"
             "    stablehlo.return %%1, %%3, %%1, %%2 : tensor<2xf32>, tensor<2xf32>, "
             "tensor<2xf32>, tensor<2xf32>\n"
             "%s"
             "  return %%0#0, %%0#1, %%0#2, %%0#3 : tensor<2x4xf32>, tensor<2x4xf32>, "
             "tensor<2xf32>, tensor<2xf32>\n}\n",
             forms[f], tails[f]);
    kc_tensor* out[4] = {NULL};
    kt_run_text(text, out, 4);
    const float* sums = kt_data(out[0]);
    const float* twice = kt_data(out[1]);
    for (int r = 0; r < 2; ++r) {
      float s = 0, p = 1;
      for (int c = 3; c >= 0; --c) {
        s += x[r][c];
        p *= x[r][c];
        KC_CHECK(sums[r * 4 + c] == s);
        KC_CHECK(twice[r * 4 + c] == 2 * s);
      }
      KC_CHECK(((const float*)kt_data(out[2]))[r] == s);
      KC_CHECK(((const float*)kt_data(out[3]))[r] == p);
    }
    kt_release(out, 4);
  }
  KT_PARSE_FAILS(
      "func.func @main(%x: tensor<3xf32>, %c: tensor<f32>) -> tensor<3xf32> {\n"
      "  %0:2 = chlo.scan(%x) inits(%c) dimension=0 {\n"
      "  ^bb0(%e: tensor<f32>):\n"
      "    stablehlo.return %e, %e : tensor<f32>, tensor<f32>\n"
      "  } : (tensor<3xf32>, tensor<f32>) -> (tensor<3xf32>, tensor<f32>)\n"
      "  return %0#0 : tensor<3xf32>\n}\n",
      "chlo.scan: the region takes 1 arguments, expected 2");
  KT_PARSE_FAILS(
      "func.func @main(%x: tensor<5000xf32>, %c: tensor<f32>) -> tensor<5000xf32> {\n"
      "  %0:2 = chlo.scan(%x) inits(%c) dimension=0 {\n"
      "  ^bb0(%e: tensor<f32>, %s: tensor<f32>):\n"
      "    stablehlo.return %e, %e : tensor<f32>, tensor<f32>\n"
      "  } : (tensor<5000xf32>, tensor<f32>) -> (tensor<5000xf32>, tensor<f32>)\n"
      "  return %0#0 : tensor<5000xf32>\n}\n",
      "line 2",
      "chlo.scan over 5000 steps is not supported (kcall unrolls a scan: 1 "
      "to 4096 steps)");
}
