/* The instructions the front ends build from others
 * (src/program/frontend/parse_expand.c, map.c, expr.c): map, as HLO text
 * and StableHLO write it (its computation's scalar instructions added
 * again on whole arrays), HLO's mulhi, and the complex forms of maximum,
 * minimum, atan2, cbrt and logistic in HLO text. Results against C, and
 * the refusals: dimensions out of order, operands that do not fit, a
 * computation that is not element-wise. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kt_hlo.h"

/* Three operands, a constant (broadcast), compare, select and convert. */
KC_TEST(hlo_map_three_operands_constant_select) {
  kc_tensor* outs[1];
  kt_run_text("HloModule m\n"
              "f {\n"
              " a = f32[] parameter(0)\n b = f32[] parameter(1)\n k = s32[] parameter(2)\n"
              " two = f32[] constant(2)\n"
              " m = f32[] multiply(a, two)\n"
              " g = pred[] compare(m, b), direction=GT\n"
              " kf = f32[] convert(k)\n"
              " ROOT s = f32[] select(g, m, kf)\n"
              "}\n"
              "ENTRY e {\n"
              " x = f32[2,3] constant({{1, 2, 3}, {-1, -2, 0.5}})\n"
              " y = f32[2,3] constant({{1, 5, 5}, {0, 0, 0}})\n"
              " z = s32[2,3] constant({{7, 8, 9}, {10, 11, 12}})\n"
              " ROOT r = f32[2,3] map(x, y, z), dimensions={0,1}, to_apply=f\n"
              "}\n",
              outs, 1);
  static const float x[6] = {1, 2, 3, -1, -2, 0.5f}, y[6] = {1, 5, 5, 0, 0, 0};
  const float* got = kt_data(outs[0]);
  for (int i = 0; i < 6; ++i) {
    float m = x[i] * 2;
    KC_CHECK(got[i] == (m > y[i] ? m : (float)(7 + i)));
  }
  kt_release(outs, 1);
}

/* Rank 0; a computation whose ROOT is a parameter; one used twice. */
KC_TEST(hlo_map_scalar_identity_and_reuse) {
  kc_tensor* outs[2];
  kt_run_text("HloModule m\n"
              "id {\n a = s64[] parameter(0)\n ROOT b = s64[] parameter(1)\n}\n"
              "sq {\n a = f64[] parameter(0)\n ROOT m = f64[] multiply(a, a)\n}\n"
              "ENTRY e {\n"
              " x = s64[] constant(3)\n y = s64[] constant(-4)\n"
              " v = f64[4] constant({1.5, -2, 0, 3})\n"
              " r = s64[] map(x, y), dimensions={}, to_apply=id\n"
              " s = f64[4] map(v), dimensions={0}, to_apply=sq\n"
              " t = f64[4] map(s), dimensions={0}, to_apply=sq\n"
              " ROOT out = (s64[], f64[4]) tuple(r, t)\n"
              "}\n",
              outs, 2);
  KC_CHECK_INT(*(const int64_t*)kt_data(outs[0]), -4);
  static const double v[4] = {1.5, -2, 0, 3};
  const double* t = kt_data(outs[1]);
  for (int i = 0; i < 4; ++i) KC_CHECK(t[i] == v[i] * v[i] * v[i] * v[i]);
  kt_release(outs, 2);
}

KC_TEST(hlo_map_refusals) {
  static const char* const add =
      "HloModule m\nadd {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
      " ROOT s = f32[] add(a, b)\n}\n";
  char text[1024];
  snprintf(text, sizeof text,
           "%sENTRY e {\n x = f32[2,3] parameter(0)\n"
           " ROOT r = f32[2,3] map(x, x), dimensions={1,0}, to_apply=add\n}\n",
           add);
  KT_PARSE_FAILS(text, "line 9", "instruction 'r': map: ", "dimensions: expected every dimension",
                 "got {1,0}");
  snprintf(text, sizeof text,
           "%sENTRY e {\n x = f32[2,3] parameter(0)\n"
           " ROOT r = f32[2,3] map(x), dimensions={0,1}, to_apply=add\n}\n",
           add);
  KT_PARSE_FAILS(text, "takes 2 parameters, but map has 1 operands");
  snprintf(text, sizeof text,
           "%sENTRY e {\n x = f32[2,3] parameter(0)\n y = f32[3,2] parameter(1)\n"
           " ROOT r = f32[2,3] map(x, y), dimensions={0,1}, to_apply=add\n}\n",
           add);
  KT_PARSE_FAILS(text, "operand 1: expected the result's dimensions", "f32[3,2]");
  snprintf(text, sizeof text,
           "%sENTRY e {\n x = f32[2,3] parameter(0)\n y = s32[2,3] parameter(1)\n"
           " ROOT r = f32[2,3] map(x, y), dimensions={0,1}, to_apply=add\n}\n",
           add);
  KT_PARSE_FAILS(text, "operand 1", "(f32[])", "s32[2,3]");
  snprintf(text, sizeof text,
           "%sENTRY e {\n x = f32[2,3] parameter(0)\n"
           " ROOT r = f64[2,3] map(x, x), dimensions={0,1}, to_apply=add\n}\n",
           add);
  KT_PARSE_FAILS(text, "its computation returns f32[], which is not an element of f64[2,3]");
  KT_PARSE_FAILS("HloModule m\nf {\n a = f32[] parameter(0)\n"
                 " ROOT c = f32[] custom-call(a), custom_call_target=\"g\"\n}\n"
                 "ENTRY e {\n x = f32[4] parameter(0)\n"
                 " ROOT r = f32[4] map(x), dimensions={0}, to_apply=f\n}\n",
                 "custom-call 'c' of its computation 'f' is not element-wise");
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n x = f32[4] parameter(0)\n"
                 " ROOT r = f32[4] map(x), dimensions={0}\n}\n",
                 "to_apply=COMPUTATION");
}

/* StableHLO's map (pretty region, a constant inside), and one refused. */
KC_TEST(stablehlo_map) {
  kc_tensor* outs[1];
  kt_run_text("func.func @main() -> tensor<3xf32> {\n"
              "  %a = stablehlo.constant dense<[1.0, -2.0, 4.0]> : tensor<3xf32>\n"
              "  %b = stablehlo.constant dense<[0.5, 0.5, 3.0]> : tensor<3xf32>\n"
              "  %r = \"stablehlo.map\"(%a, %b) ({\n"
              "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
              "      %c = stablehlo.constant dense<1.0> : tensor<f32>\n"
              "      %s = stablehlo.add %x, %c : tensor<f32>\n"
              "      %m = stablehlo.maximum %s, %y : tensor<f32>\n"
              "      stablehlo.return %m : tensor<f32>\n"
              "  }) {dimensions = array<i64: 0>} : (tensor<3xf32>, tensor<3xf32>) -> "
              "tensor<3xf32>\n"
              "  return %r : tensor<3xf32>\n}\n",
              outs, 1);
  const float* got = kt_data(outs[0]);
  KC_CHECK(got[0] == 2.0f && got[1] == 0.5f && got[2] == 5.0f);
  kt_release(outs, 1);
  KT_PARSE_FAILS("func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
                 "  %r = \"stablehlo.map\"(%a) ({\n"
                 "    ^bb0(%x: tensor<f32>):\n"
                 "      %s = stablehlo.add %x, %x : tensor<f32>\n"
                 "      stablehlo.return %s : tensor<f32>\n"
                 "  }) {dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<3xf32>\n"
                 "  return %r : tensor<3xf32>\n}\n",
                 "line 2", "dimensions: expected every dimension of the rank-1 result in order",
                 "got {1}");
}

/* mulhi of every integer width, signed and unsigned, against the product
 * in 128 bits. */
KC_TEST(hlo_mulhi_every_width) {
  static const int64_t sv[6] = {INT64_MIN, -3, -1, 0, 7, INT64_MAX};
  static const int widths[4] = {8, 16, 32, 64};
  for (int w = 0; w < 4; ++w) {
    for (int sign = 0; sign < 2; ++sign) {
      int bits = widths[w];
      /* Values at the type's edges: its min, -3, -1, 0, 7, its max. */
      int64_t v[6];
      for (int i = 0; i < 6; ++i) {
        int64_t x = sv[i];
        if (bits < 64 && (i == 0 || i == 5)) x = i == 0 ? -(INT64_C(1) << (bits - 1))
                                                       : (INT64_C(1) << (bits - 1)) - 1;
        if (!sign && x < 0) x = (int64_t)((uint64_t)x & (bits == 64 ? ~0ull : (1ull << bits) - 1));
        v[i] = x;
      }
      char ty[8], text[1024], list_a[256] = "", list_b[256] = "";
      snprintf(ty, sizeof ty, "%c%d", sign ? 's' : 'u', bits);
      for (int i = 0; i < 6; ++i) {
        char one[48];
        snprintf(one, sizeof one, "%s%s", i ? ", " : "", "");
        strcat(list_a, one);
        strcat(list_b, one);
        if (sign) {
          snprintf(one, sizeof one, "%lld", (long long)v[i]);
        } else {
          snprintf(one, sizeof one, "%llu", (unsigned long long)v[i]);
        }
        strcat(list_a, one);
        if (sign) {
          snprintf(one, sizeof one, "%lld", (long long)v[5 - i]);
        } else {
          snprintf(one, sizeof one, "%llu", (unsigned long long)v[5 - i]);
        }
        strcat(list_b, one);
      }
      snprintf(text, sizeof text,
               "HloModule m\nENTRY e {\n a = %s[6] constant({%s})\n b = %s[6] constant({%s})\n"
               " ROOT h = %s[6] mulhi(a, b)\n}\n",
               ty, list_a, ty, list_b, ty);
      kc_tensor* outs[1];
      kt_run_text(text, outs, 1);
      const void* got = kt_data(outs[0]);
      for (int i = 0; i < 6; ++i) {
        __int128 p = sign ? (__int128)v[i] * (__int128)v[5 - i]
                          : (__int128)((unsigned __int128)(uint64_t)v[i] *
                                       (unsigned __int128)(uint64_t)v[5 - i]);
        int64_t want;
        if (sign) {
          want = (int64_t)(p >> bits);
          if (bits < 64) want = (int64_t)((uint64_t)want << (64 - bits)) >> (64 - bits);
        } else {
          unsigned __int128 u = (unsigned __int128)p;
          want = (int64_t)(uint64_t)(u >> bits);
          if (bits < 64) want &= (int64_t)((1ull << bits) - 1);
        }
        int64_t g = 0;
        switch (bits) {
          case 8: g = sign ? (int64_t)((const int8_t*)got)[i] : (int64_t)((const uint8_t*)got)[i]; break;
          case 16: g = sign ? (int64_t)((const int16_t*)got)[i] : (int64_t)((const uint16_t*)got)[i]; break;
          case 32: g = sign ? (int64_t)((const int32_t*)got)[i] : (int64_t)((const uint32_t*)got)[i]; break;
          default: g = ((const int64_t*)got)[i]; break;
        }
        if (g != want) {
          fprintf(stderr, "mulhi %s element %d\n", ty, i);
          KC_CHECK_INT(g, want);
        }
      }
      kt_release(outs, 1);
    }
  }
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n a = f32[2] parameter(0)\n"
                 " ROOT h = f32[2] mulhi(a, a)\n}\n",
                 "line 4", "instruction 'h'",
                 "mulhi: expected an integer result (s8..s64, u8..u64), got f32[2]");
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n a = s32[2] parameter(0)\n b = s16[2] parameter(1)\n"
                 " ROOT h = s32[2] mulhi(a, b)\n}\n",
                 "mulhi: operand 1: expected the result's shape s32[2], got s16[2]");
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n a = s32[2] parameter(0)\n"
                 " ROOT h = s32[2] mulhi(a)\n}\n",
                 "mulhi 'h': expected 2 operands, got 1");
}

/* maximum, minimum, atan2, cbrt and logistic of c64 and c128 in HLO text,
 * against C's complex functions (max and min exactly). */
KC_TEST(hlo_complex_forms) {
  kc_tensor* outs[5];
  kt_run_text("HloModule m\nENTRY e {\n"
              " a = c128[4] constant({(1, 2), (1, 3), (-2, 0), (nan, 1)})\n"
              " b = c128[4] constant({(1, 3), (0, 9), (-2, -1), (0, 0)})\n"
              " mx = c128[4] maximum(a, b)\n mn = c128[4] minimum(a, b)\n"
              " t = c128[4] atan2(a, b)\n c = c128[4] cbrt(a)\n l = c128[4] logistic(a)\n"
              " ROOT r = (c128[4], c128[4], c128[4], c128[4], c128[4]) tuple(mx, mn, t, c, l)\n"
              "}\n",
              outs, 5);
  static const double complex a[4] = {1 + 2 * I, 1 + 3 * I, -2 + 0 * I, 0};
  static const double complex b[4] = {1 + 3 * I, 0 + 9 * I, -2 - 1 * I, 0};
  const double complex* mx = kt_data(outs[0]);
  const double complex* mn = kt_data(outs[1]);
  const double complex* t = kt_data(outs[2]);
  const double complex* c = kt_data(outs[3]);
  const double complex* l = kt_data(outs[4]);
  /* Lexicographic: (1,2) < (1,3); (1,3) > (0,9); (-2,0) > (-2,-1); a NaN
   * part compares false, so the second operand is taken both ways. */
  KC_CHECK(mx[0] == b[0] && mn[0] == a[0]);
  KC_CHECK(mx[1] == a[1] && mn[1] == b[1]);
  KC_CHECK(mx[2] == a[2] && mn[2] == b[2]);
  KC_CHECK(mx[3] == 0 && mn[3] == 0);
  for (int i = 0; i < 3; ++i) {
    /* atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)) */
    double complex want_t = -I * clog((b[i] + I * a[i]) / csqrt(b[i] * b[i] + a[i] * a[i]));
    double complex want_c = cpow(cabs(a[i]), 1.0 / 3) * cexp(I * carg(a[i]) / 3);
    double complex want_l = 1 / (1 + cexp(-a[i]));
    KC_CHECK(cabs(t[i] - want_t) < 1e-12 * (1 + cabs(want_t)));
    KC_CHECK(cabs(c[i] - want_c) < 1e-12 * (1 + cabs(want_c)));
    KC_CHECK(cabs(l[i] - want_l) < 1e-12 * (1 + cabs(want_l)));
  }
  kt_release(outs, 5);
  /* c64 too, and inside a fusion. */
  kc_tensor* f[1];
  kt_run_text("HloModule m\nfused {\n p = c64[2] parameter(0)\n q = c64[2] parameter(1)\n"
              " ROOT m = c64[2] maximum(p, q)\n}\n"
              "ENTRY e {\n a = c64[2] constant({(1, 5), (2, 0)})\n"
              " b = c64[2] constant({(1, 6), (1, 9)})\n"
              " ROOT r = c64[2] fusion(a, b), kind=kLoop, calls=fused\n}\n",
              f, 1);
  const float complex* fm = kt_data(f[0]);
  KC_CHECK(fm[0] == 1 + 6 * I && fm[1] == 2 + 0 * I);
  kt_release(f, 1);
}

/* scan: two inputs (one scanned along dimension 0 of a matrix), two
 * carries, forwards and reversed, against the loop in C. */
KC_TEST(hlo_scan_inputs_carries_reverse) {
  for (int reverse = 0; reverse < 2; ++reverse) {
    char text[1536];
    snprintf(text, sizeof text,
             "HloModule m\n"
             "body {\n x = f32[2] parameter(0)\n w = s32[] parameter(1)\n"
             " acc = f32[2] parameter(2)\n n = s32[] parameter(3)\n"
             " s = f32[2] add(acc, x)\n wf = f32[] convert(w)\n"
             " wb = f32[2] broadcast(wf), dimensions={}\n y = f32[2] multiply(s, wb)\n"
             " one = s32[] constant(1)\n n1 = s32[] add(n, one)\n"
             " ROOT t = (f32[2], f32[2], s32[]) tuple(y, s, n1)\n}\n"
             "ENTRY e {\n"
             " xs = f32[3,2] constant({{1, 2}, {3, 4}, {5, 6}})\n"
             " ws = s32[3] constant({10, 20, 30})\n"
             " a0 = f32[2] constant({0.5, -1})\n n0 = s32[] constant(7)\n"
             " ROOT r = (f32[3,2], f32[2], s32[]) scan(xs, ws, a0, n0), dimensions={0}, "
             "num_carries=2, is_reverse=%s, to_apply=body\n}\n",
             reverse ? "true" : "false");
    kc_tensor* outs[3];
    kt_run_text(text, outs, 3);
    static const float xs[3][2] = {{1, 2}, {3, 4}, {5, 6}};
    static const int ws[3] = {10, 20, 30};
    float acc[2] = {0.5f, -1}, ys[3][2];
    for (int step = 0; step < 3; ++step) {
      int t = reverse ? 2 - step : step;
      for (int i = 0; i < 2; ++i) {
        acc[i] += xs[t][i];
        ys[t][i] = acc[i] * (float)ws[t];
      }
    }
    KC_CHECK(memcmp(kt_data(outs[0]), ys, sizeof ys) == 0);
    KC_CHECK(memcmp(kt_data(outs[1]), acc, sizeof acc) == 0);
    KC_CHECK_INT(*(const int32_t*)kt_data(outs[2]), 10);
    kt_release(outs, 3);
  }
  static const char* const body =
      "HloModule m\nbody {\n x = f32[] parameter(0)\n c = f32[] parameter(1)\n"
      " s = f32[] add(x, c)\n ROOT t = (f32[], f32[]) tuple(s, s)\n}\n";
  char text[1024];
  snprintf(text, sizeof text,
           "%sENTRY e {\n xs = f32[4] parameter(0)\n c = f32[2] parameter(1)\n"
           " ROOT r = (f32[4], f32[2]) scan(xs, c), dimensions={0}, num_carries=1, "
           "to_apply=body\n}\n",
           body);
  KT_PARSE_FAILS(text, "instruction 'r'", "called by scan 'r'",
                 "parameter 'c': expected f32[2] (operand 1 of the caller), got f32[]");
  snprintf(text, sizeof text,
           "%sENTRY e {\n xs = f32[4097] parameter(0)\n c = f32[] parameter(1)\n"
           " ROOT r = (f32[4097], f32[]) scan(xs, c), dimensions={0}, num_carries=1, "
           "to_apply=body\n}\n",
           body);
  KT_PARSE_FAILS(text, "scan: 4097 steps; kcall unrolls scans of 1 to 4096 steps");
  snprintf(text, sizeof text,
           "%sENTRY e {\n xs = f32[4] parameter(0)\n c = f32[] parameter(1)\n"
           " ROOT r = (f32[3], f32[]) scan(xs, c), dimensions={0}, num_carries=1, "
           "to_apply=body\n}\n",
           body);
  KT_PARSE_FAILS(text, "scan: output 0 is not an array with dimension 0 of the scan's length");
  snprintf(text, sizeof text,
           "%sENTRY e {\n xs = f32[4] parameter(0)\n c = f32[] parameter(1)\n"
           " ROOT r = (f32[4], f32[]) scan(xs, c), dimensions={0}, to_apply=body\n}\n",
           body);
  KT_PARSE_FAILS(text, "scan: expected dimensions={d}, num_carries=K");
}

/* ragged-dot: rows [0, 2) times group 0, [2, 3) group 1, row 3 past the
 * groups gives zeros; a ragged contracting dimension is refused. */
KC_TEST(hlo_ragged_dot_rows_take_their_group) {
  kc_tensor* outs[1];
  kt_run_text("HloModule m\nENTRY e {\n"
              " l = f32[4,2] constant({{1, 2}, {3, 4}, {5, 6}, {7, 8}})\n"
              " r = f32[2,2,3] constant({{{1, 0, 1}, {0, 1, 1}}, {{2, 0, 0}, {0, 0, 3}}})\n"
              " g = s32[2] constant({2, 1})\n"
              " ROOT d = f32[4,3] ragged-dot(l, r, g), lhs_contracting_dims={1}, "
              "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}\n}\n",
              outs, 1);
  static const float want[12] = {1, 2, 3, 3, 4, 7, 10, 0, 18, 0, 0, 0};
  KC_CHECK(memcmp(kt_data(outs[0]), want, sizeof want) == 0);
  kt_release(outs, 1);
  KT_PARSE_FAILS("HloModule m\nENTRY e {\n l = f32[4,6] parameter(0)\n r = f32[6,3] parameter(1)\n"
                 " g = s32[2] parameter(2)\n"
                 " ROOT d = f32[2,4,3] ragged-dot(l, r, g), lhs_contracting_dims={1}, "
                 "rhs_contracting_dims={0}, lhs_ragged_dims={1}\n}\n",
                 "instruction 'd': ragged-dot: a ragged contracting dimension is not supported");
}

/* Scans inside a scan's body unroll into a program that would grow without
 * bound: refused once it holds more than a million instructions. */
KC_TEST(hlo_scan_nest_is_bounded) {
  const char* text =
      "HloModule m\n"
      "inner {\n x = f32[] parameter(0)\n c = f32[] parameter(1)\n s = f32[] add(x, c)\n"
      " ROOT t = (f32[], f32[]) tuple(s, s)\n}\n"
      "outer {\n x = f32[4096] parameter(0)\n c = f32[] parameter(1)\n"
      " r = (f32[4096], f32[]) scan(x, c), dimensions={0}, num_carries=1, to_apply=inner\n"
      " y = f32[4096] get-tuple-element(r), index=0\n z = f32[] get-tuple-element(r), index=1\n"
      " ROOT t = (f32[4096], f32[]) tuple(y, z)\n}\n"
      "ENTRY e {\n x = f32[4096,4096] parameter(0)\n c = f32[] parameter(1)\n"
      " ROOT r = (f32[4096,4096], f32[]) scan(x, c), dimensions={0}, num_carries=1, "
      "to_apply=outer\n}\n";
  kc_program* p = NULL;
  KC_CHECK_CODE(kc_program_parse(kc_sv(text), &p), KC_RESOURCE_EXHAUSTED, "instruction 'r'",
                "scan: unrolled, the program would hold more than 1048576 instructions");
  KC_CHECK(p == NULL);
}

/* A dot's algorithm in HLO text: operands rounded to its precision types
 * (bf16 here: 1 + 2^-10 becomes 1), the accumulation and component counts
 * checked. */
KC_TEST(hlo_dot_algorithm) {
  kc_tensor* outs[2];
  kt_run_text("HloModule m\nENTRY e {\n"
              " a = f32[1,2] constant({{1.0009765625, 3}})\n"
              " b = f32[2,1] constant({{1}, {1.0009765625}})\n"
              " d = f32[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
              "algorithm=dot_bf16_bf16_f32\n"
              " x = f32[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
              "algorithm=dot_f32_f32_f32\n"
              " ROOT r = (f32[1,1], f32[1,1]) tuple(d, x)\n}\n",
              outs, 2);
  KC_CHECK(*(const float*)kt_data(outs[0]) == 4.0f);
  KC_CHECK(*(const float*)kt_data(outs[1]) == 1.0009765625f + 3 * 1.0009765625f);
  kt_release(outs, 2);
  static const char* const head =
      "HloModule m\nENTRY e {\n a = f32[2,2] parameter(0)\n"
      " ROOT d = f32[2,2] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}, ";
  char text[512];
  snprintf(text, sizeof text, "%salgorithm=dot_bf16_bf16_f32_x3\n}\n", head);
  KT_PARSE_FAILS(text, "line 4", "dot 'd': algorithm 'dot_bf16_bf16_f32_x3' is not supported");
  snprintf(text, sizeof text, "%salgorithm=dot_bf16_bf16_bf16\n}\n", head);
  KT_PARSE_FAILS(text, "accumulation in bf16 is not supported for a result of this type "
                       "(kcall accumulates it in f32)");
  snprintf(text, sizeof text, "%salgorithm=dot_any_f8_any_f8_f32\n}\n", head);
  KT_PARSE_FAILS(text, "algorithm 'dot_any_f8_any_f8_f32' is not supported");
}
