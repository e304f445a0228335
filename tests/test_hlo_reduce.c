/* reduce and reduce-window (src/program/instr/instr_reduce.c,
 * instr_reduce_window.c) through HLO text: native reducers and general
 * computations, the vector paths of long rows, variadic reduce, refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_hlo.h"

KC_TEST(hlo_ops_reduce_native_and_general) {
  /* Sums over rows, columns and everything with add (the native loop),
   * a max with a NaN, and a reducer that is not one op (the general
   * path): sum of squares. */
  static const char text[] =
      "HloModule m\n"
      "%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n"
      "%max (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n  ROOT %m = f32[] maximum(%b, %a)\n}\n"
      "%sumsq (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n  %bb = f32[] multiply(%b, %b)\n"
      "  ROOT %s = f32[] add(%a, %bb)\n}\n"
      "ENTRY e {\n"
      "  %x = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n"
      "  %zero = f32[] constant(0)\n"
      "  %rows = f32[2] reduce(%x, %zero), dimensions={1}, to_apply=%add\n"
      "  %cols = f32[3] reduce(%x, %zero), dimensions={0}, to_apply=%add\n"
      "  %all = f32[] reduce(%x, %zero), dimensions={0,1}, to_apply=%add\n"
      "  %n = f32[3] constant({1, nan, 2})\n"
      "  %low = f32[] constant(-inf)\n"
      "  %mx = f32[] reduce(%n, %low), dimensions={0}, to_apply=%max\n"
      "  %sq = f32[2] reduce(%x, %zero), dimensions={1}, to_apply=%sumsq\n"
      "  ROOT %t = (f32[2], f32[3], f32[], f32[], f32[2]) tuple(%rows, %cols, %all, %mx, %sq)\n"
      "}\n";
  kc_tensor* outs[5];
  kt_run_text(text, outs, 5);
  const float* rows = kt_data(outs[0]);
  const float* cols = kt_data(outs[1]);
  const float* all = kt_data(outs[2]);
  const float* mx = kt_data(outs[3]);
  const float* sq = kt_data(outs[4]);
  KC_CHECK(rows[0] == 6.0f && rows[1] == 15.0f);
  KC_CHECK(cols[0] == 5.0f && cols[1] == 7.0f && cols[2] == 9.0f);
  KC_CHECK(all[0] == 21.0f);
  KC_CHECK(isnan(mx[0]));
  KC_CHECK(sq[0] == 14.0f && sq[1] == 77.0f);
  kt_release(outs, 5);
}

KC_TEST(hlo_ops_reduce_long_rows_take_the_vector_paths) {
  /* Rows long enough for the vector loops (and a tail past them): sums of
   * 0..102 (exact in f32 and f64), maxima and minima, NaN in the vector
   * part and in the tail, and sums down columns. */
  static const char text[] =
      "HloModule m\n"
      "%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n"
      "%add64 (a: f64[], b: f64[]) -> f64[] {\n  %a = f64[] parameter(0)\n"
      "  %b = f64[] parameter(1)\n  ROOT %s = f64[] add(%a, %b)\n}\n"
      "%max (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n  ROOT %m = f32[] maximum(%a, %b)\n}\n"
      "%min (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n  ROOT %m = f32[] minimum(%a, %b)\n}\n"
      "ENTRY e {\n"
      "  %x = f32[2,103] iota(), iota_dimension=1\n"
      "  %y = f64[2,103] iota(), iota_dimension=1\n"
      "  %c = f32[103,5] iota(), iota_dimension=0\n"
      "  %zero = f32[] constant(0)\n"
      "  %zero64 = f64[] constant(0)\n"
      "  %low = f32[] constant(-inf)\n"
      "  %high = f32[] constant(inf)\n"
      "  %sum = f32[2] reduce(%x, %zero), dimensions={1}, to_apply=%add\n"
      "  %sum64 = f64[2] reduce(%y, %zero64), dimensions={1}, to_apply=%add64\n"
      "  %cols = f32[5] reduce(%c, %zero), dimensions={0}, to_apply=%add\n"
      "  %mx = f32[2] reduce(%x, %low), dimensions={1}, to_apply=%max\n"
      "  %mn = f32[2] reduce(%x, %high), dimensions={1}, to_apply=%min\n"
      /* 0/0 at 37 (in the vector loop) and at 101 (in the tail) */
      "  %s37 = f32[] constant(37)\n"
      "  %s101 = f32[] constant(101)\n"
      "  %k37 = f32[2,103] broadcast(%s37), dimensions={}\n"
      "  %k101 = f32[2,103] broadcast(%s101), dimensions={}\n"
      "  %d37 = f32[2,103] subtract(%x, %k37)\n"
      "  %d101 = f32[2,103] subtract(%x, %k101)\n"
      "  %n37 = f32[2,103] divide(%d37, %d37)\n"
      "  %n101 = f32[2,103] divide(%d101, %d101)\n"
      "  %x37 = f32[2,103] multiply(%x, %n37)\n"
      "  %x101 = f32[2,103] multiply(%x, %n101)\n"
      "  %mx37 = f32[2] reduce(%x37, %low), dimensions={1}, to_apply=%max\n"
      "  %mn101 = f32[2] reduce(%x101, %high), dimensions={1}, to_apply=%min\n"
      "  ROOT %t = (f32[2], f64[2], f32[5], f32[2], f32[2], f32[2], f32[2]) "
      "tuple(%sum, %sum64, %cols, %mx, %mn, %mx37, %mn101)\n"
      "}\n";
  kc_tensor* outs[7];
  kt_run_text(text, outs, 7);
  const float* sum = kt_data(outs[0]);
  const double* sum64 = kt_data(outs[1]);
  const float* cols = kt_data(outs[2]);
  const float* mx = kt_data(outs[3]);
  const float* mn = kt_data(outs[4]);
  const float* mx37 = kt_data(outs[5]);
  const float* mn101 = kt_data(outs[6]);
  for (int r = 0; r < 2; ++r) {
    KC_CHECK(sum[r] == 5253.0f);
    KC_CHECK(sum64[r] == 5253.0);
    KC_CHECK(mx[r] == 102.0f);
    KC_CHECK(mn[r] == 0.0f);
    KC_CHECK(isnan(mx37[r]));
    KC_CHECK(isnan(mn101[r]));
  }
  for (int k = 0; k < 5; ++k) KC_CHECK(cols[k] == 5253.0f);
  kt_release(outs, 7);
}

KC_TEST(hlo_ops_reduce_variadic_argmax) {
  /* jnp.argmax's reduce: (value, index) pairs, the larger value winning
   * and the lower index on ties. */
  static const char text[] =
      "HloModule m\n"
      "%argmax (a: f32[], i: s32[], b: f32[], j: s32[]) -> (f32[], s32[]) {\n"
      "  %a = f32[] parameter(0)\n  %i = s32[] parameter(1)\n"
      "  %b = f32[] parameter(2)\n  %j = s32[] parameter(3)\n"
      "  %gt = pred[] compare(%a, %b), direction=GT\n"
      "  %eq = pred[] compare(%a, %b), direction=EQ\n"
      "  %lt = pred[] compare(%i, %j), direction=LT\n"
      "  %tie = pred[] select(%eq, %lt, %eq)\n"
      "  %keep = pred[] select(%gt, %gt, %tie)\n"
      "  %v = f32[] select(%keep, %a, %b)\n"
      "  %k = s32[] select(%keep, %i, %j)\n"
      "  ROOT %r = (f32[], s32[]) tuple(%v, %k)\n}\n"
      "ENTRY e {\n"
      "  %x = f32[2,4] constant({{1, 7, 3, 7}, {9, 2, 9, 0}})\n"
      "  %ix = s32[2,4] iota(), iota_dimension=1\n"
      "  %ninf = f32[] constant(-inf)\n  %zero = s32[] constant(0)\n"
      "  %r = (f32[2], s32[2]) reduce(%x, %ix, %ninf, %zero), dimensions={1}, "
      "to_apply=%argmax\n"
      "  %v = f32[2] get-tuple-element(%r), index=0\n"
      "  %k = s32[2] get-tuple-element(%r), index=1\n"
      "  ROOT %t = (f32[2], s32[2]) tuple(%v, %k)\n"
      "}\n";
  kc_tensor* outs[2];
  kt_run_text(text, outs, 2);
  const float* v = kt_data(outs[0]);
  const int32_t* k = kt_data(outs[1]);
  KC_CHECK(v[0] == 7.0f && v[1] == 9.0f);
  KC_CHECK_INT(k[0], 1);
  KC_CHECK_INT(k[1], 0);
  kt_release(outs, 2);
}

KC_TEST(hlo_ops_reduce_refusals) {
  static const char head[] =
      "HloModule m\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n";
  static const struct {
    const char* entry;
    const char* message;
  } cases[] = {
      {"ENTRY e {\n x = f32[2,3] parameter(0)\n z = f32[] constant(0)\n"
       " ROOT r = f32[3] reduce(x, z), dimensions={1}, to_apply=%add\n}\n",
       "result 0: expected f32[2], got f32[3]"},
      {"ENTRY e {\n x = f32[2,3] parameter(0)\n z = f32[] constant(0)\n"
       " ROOT r = f32[2] reduce(x, z), dimensions={2}, to_apply=%add\n}\n",
       "attribute dimensions: entry 0: expected a distinct dimension of 0 to 1, got 2"},
      {"ENTRY e {\n x = f32[2,3] parameter(0)\n z = s32[] constant(0)\n"
       " ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=%add\n}\n",
       "operand 1 (initial value 0): expected f32[], got s32[]"},
      {"ENTRY e {\n x = f32[2,3] parameter(0)\n z = f32[] constant(0)\n"
       " ROOT r = f32[2] reduce(x, z), dimensions={1}\n}\n",
       "reduce: expected 1 called computation, got 0"},
      {"ENTRY e {\n x = s32[2,3] parameter(0)\n z = s32[] constant(0)\n"
       " ROOT r = s32[2] reduce(x, z), dimensions={1}, to_apply=%add\n}\n",
       "to_apply 'add': parameter 0: expected s32[], got f32[]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char text[1024];
    snprintf(text, sizeof text, "%s%s", head, cases[i].entry);
    KT_COMPILE_FAILS(text, KC_INVALID_ARGUMENT, "instruction 'r'", cases[i].message);
  }
}

KC_TEST(hlo_ops_reduce_window) {
  static const char text[] =
      "HloModule m\n"
      "%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n"
      "%addsq (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n  %bb = f32[] multiply(%b, %b)\n"
      "  ROOT %s = f32[] add(%a, %bb)\n}\n"
      "ENTRY e {\n"
      "  %x = f32[4] constant({1, 2, 3, 4})\n"
      "  %zero = f32[] constant(0)\n  %ten = f32[] constant(10)\n"
      /* a cumulative sum, as jnp.cumsum writes it */
      "  %c = f32[4] reduce-window(%x, %zero), window={size=4 pad=3_0}, to_apply=%add\n"
      /* padding is skipped, as in XLA: the initial value counts once */
      "  %p = f32[2] reduce-window(%x, %ten), window={size=3 stride=2 pad=1_0}, to_apply=%add\n"
      /* dilated: windows of x[0], x[2] and x[1], x[3]; a general reducer */
      "  %d = f32[2] reduce-window(%x, %zero), window={size=2 rhs_dilate=2}, to_apply=%addsq\n"
      "  ROOT %t = (f32[4], f32[2], f32[2]) tuple(%c, %p, %d)\n"
      "}\n";
  kc_tensor* outs[3];
  kt_run_text(text, outs, 3);
  const float* c = kt_data(outs[0]);
  const float* p = kt_data(outs[1]);
  const float* d = kt_data(outs[2]);
  KC_CHECK(c[0] == 1 && c[1] == 3 && c[2] == 6 && c[3] == 10);
  KC_CHECK(p[0] == 10 + 1 + 2 && p[1] == 10 + 2 + 3 + 4);
  KC_CHECK(d[0] == 1 + 9 && d[1] == 4 + 16);
  kt_release(outs, 3);
  kc_program* prog = NULL;
  KC_CHECK_CODE(kc_program_parse(KC_SV_LIT("HloModule m\n%add (a: f32[], b: f32[]) -> f32[] {\n"
                                           " %a = f32[] parameter(0)\n %b = f32[] parameter(1)\n"
                                           " ROOT %s = f32[] add(%a, %b)\n}\n"
                                           "ENTRY e {\n x = f32[4] parameter(0)\n"
                                           " z = f32[] constant(0)\n"
                                           " ROOT r = f32[4] reduce-window(x, z), "
                                           "window={size=2 rhs_reversal=1}, to_apply=%add\n}\n"),
                                &prog),
                KC_INVALID_ARGUMENT, "other window fields, such as rhs_reversal, are not supported");
  KC_CHECK(prog == NULL);
  KT_COMPILE_FAILS("HloModule m\n%add (a: f32[], b: f32[]) -> f32[] {\n"
                   " %a = f32[] parameter(0)\n %b = f32[] parameter(1)\n"
                   " ROOT %s = f32[] add(%a, %b)\n}\n"
                   "ENTRY e {\n x = f32[4] parameter(0)\n z = f32[] constant(0)\n"
                   " ROOT r = f32[4] reduce-window(x, z), window={size=2}, to_apply=%add\n}\n",
                   KC_INVALID_ARGUMENT, "expected a result of f32[3], got f32[4]");
}
