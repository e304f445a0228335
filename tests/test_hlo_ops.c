/* The instructions of the op table (src/program/ops*.c), through HLO text
 * and through kc_program_builder_add_instruction: results, and the
 * refusals that keep a result from being silently wrong. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_hlo.h"

KC_TEST(hlo_ops_compare_every_direction) {
  kc_tensor* outs[7];
  kt_run_text(
      "HloModule m\nENTRY e {\n"
      " a = f32[4] constant({1, 2, 3, nan})\n"
      " b = f32[4] constant({2, 2, 2, 2})\n"
      " eq = pred[4] compare(a, b), direction=EQ\n"
      " ne = pred[4] compare(a, b), direction=NE\n"
      " lt = pred[4] compare(a, b), direction=LT\n"
      " le = pred[4] compare(a, b), direction=LE\n"
      " gt = pred[4] compare(a, b), direction=GT, type=FLOAT\n"
      " ge = pred[4] compare(a, b), direction=GE\n"
      " tl = pred[4] compare(b, a), direction=LT, type=TOTALORDER\n"
      " ROOT t = (pred[4], pred[4], pred[4], pred[4], pred[4], pred[4], pred[4]) "
      "tuple(eq, ne, lt, le, gt, ge, tl)\n}\n",
      outs, 7);
  static const uint8_t want[7][4] = {
      {0, 1, 0, 0}, {1, 0, 1, 1}, {1, 0, 0, 0}, {1, 1, 0, 0},
      {0, 0, 1, 0}, {0, 1, 1, 0}, {0, 0, 1, 1} /* NaN is above 2 in total order */};
  for (int k = 0; k < 7; ++k) {
    const uint8_t* got = kt_data(outs[k]);
    for (int i = 0; i < 4; ++i) {
      if (got[i] != want[k][i]) {
        KC_CHECK_INT(k * 10 + i, -1); /* names the output and element */
      }
    }
  }
  kt_release(outs, 7);
  /* Integers: signed and unsigned order. */
  kc_tensor* ints[2];
  kt_run_text("HloModule m\nENTRY e {\n"
              " a = s32[2] constant({-1, 5})\n b = s32[2] constant({1, 5})\n"
              " c = u8[2] constant({255, 0})\n d = u8[2] constant({1, 0})\n"
              " x = pred[2] compare(a, b), direction=LT, type=SIGNED\n"
              " y = pred[2] compare(c, d), direction=GT, type=UNSIGNED\n"
              " ROOT t = (pred[2], pred[2]) tuple(x, y)\n}\n",
              ints, 2);
  const uint8_t* x = kt_data(ints[0]);
  const uint8_t* y = kt_data(ints[1]);
  KC_CHECK(x[0] == 1 && x[1] == 0 && y[0] == 1 && y[1] == 0);
  kt_release(ints, 2);
}

KC_TEST(hlo_ops_select_clamp_iota) {
  kc_tensor* outs[4];
  kt_run_text("HloModule m\nENTRY e {\n"
              " i = s32[2,3] iota(), iota_dimension=1\n"
              " j = f32[2,3] iota(), iota_dimension=0\n"
              " one = s32[] constant(1)\n"
              " ones = s32[2,3] broadcast(one), dimensions={}\n"
              " p = pred[2,3] compare(i, ones), direction=GT\n"
              " s = s32[2,3] select(p, i, ones)\n"
              " lo = f32[] constant(0.25)\n hi = f32[] constant(0.5)\n"
              " c = f32[2,3] clamp(lo, j, hi)\n"
              " ROOT t = (s32[2,3], f32[2,3], s32[2,3], f32[2,3]) tuple(i, j, s, c)\n}\n",
              outs, 4);
  const int32_t* i = kt_data(outs[0]);
  const float* j = kt_data(outs[1]);
  const int32_t* s = kt_data(outs[2]);
  const float* c = kt_data(outs[3]);
  static const int32_t want_i[6] = {0, 1, 2, 0, 1, 2};
  static const float want_j[6] = {0, 0, 0, 1, 1, 1};
  static const int32_t want_s[6] = {1, 1, 2, 1, 1, 2};
  static const float want_c[6] = {0.25f, 0.25f, 0.25f, 0.5f, 0.5f, 0.5f};
  for (int k = 0; k < 6; ++k) {
    KC_CHECK_INT(i[k], want_i[k]);
    KC_CHECK(j[k] == want_j[k]);
    KC_CHECK_INT(s[k], want_s[k]);
    KC_CHECK(c[k] == want_c[k]);
  }
  kt_release(outs, 4);
}

KC_TEST(hlo_ops_refusals) {
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = f32[2] constant({1, 2})\n"
                   " ROOT c = pred[2] compare(a, a), direction=LESS\n}\n",
                   KC_INVALID_ARGUMENT, "instruction 'c' (line 4)",
                   "attribute direction: expected EQ, NE, LT, LE, GT or GE, got 'LESS'");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = f32[2] constant({1, 2})\n"
                   " ROOT c = pred[2] compare(a, a)\n}\n",
                   KC_INVALID_ARGUMENT, "expected attribute direction=WORD, got none");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = s32[2] constant({1, 2})\n"
                   " ROOT c = pred[2] compare(a, a), direction=LT, type=UNSIGNED\n}\n",
                   KC_INVALID_ARGUMENT,
                   "attribute type: expected SIGNED for s32 operands, got 'UNSIGNED'");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = f32[2] constant({1, 2})\n"
                   " ROOT c = f32[2] compare(a, a), direction=LT\n}\n",
                   KC_INVALID_ARGUMENT, "expected a pred result with the dims of f32[2]");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = f32[2] constant({1, 2})\n"
                   " b = f32[3] constant({1, 2, 3})\n"
                   " ROOT c = pred[2] compare(a, b), direction=LT\n}\n",
                   KC_INVALID_ARGUMENT, "operand 1: expected f32[2], got f32[3]");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n ROOT i = s32[2,3] iota()\n}\n",
                   KC_INVALID_ARGUMENT, "expected attribute iota_dimension=N, got none");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n ROOT i = s32[2,3] iota(), iota_dimension=2\n}\n",
                   KC_INVALID_ARGUMENT,
                   "attribute iota_dimension: expected 0 to 1 (the result's rank is 2), "
                   "got 2");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = f32[2] constant({1, 2})\n"
                   " p = pred[3] constant({1, 0, 1})\n"
                   " ROOT s = f32[2] select(p, a, a)\n}\n",
                   KC_INVALID_ARGUMENT,
                   "operand 0: expected the dims of f32[2] (or a scalar) of type pred, got "
                   "pred[3]");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = f32[2] constant({1, 2})\n"
                   " ROOT s = f32[2] select(a, a)\n}\n",
                   KC_INVALID_ARGUMENT, "select: expected 3 operands, got 2");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = c64[2] parameter(0)\n"
                   " ROOT c = pred[2] compare(a, a), direction=LT\n}\n",
                   KC_INVALID_ARGUMENT,
                   "attribute direction: expected EQ or NE for c64 operands");
}

KC_TEST(hlo_ops_builder_checks) {
  kc_program_builder* b = NULL;
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("m"), &b));
  kc_shape* s = NULL;
  KC_CHECK_OK(kc_shape_parse(KC_SV_LIT("s32[4]"), &s));
  int64_t dim = 0;
  kc_attr attrs[2];
  memset(attrs, 0, sizeof attrs);
  attrs[0].name = KC_SV_LIT("iota_dimension");
  attrs[0].type = KC_ATTR_I64;
  attrs[0].v.i64 = dim;
  attrs[1].name = KC_SV_LIT("bogus");
  attrs[1].type = KC_ATTR_I64;
  kc_attr_dict dict = {2, attrs};
  kc_instruction_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = KC_OP_IOTA;
  d.result_shape = s;
  d.attrs = &dict;
  int32_t id = -1;
  KC_CHECK_OK(kc_program_builder_add_instruction(b, &d, KC_SV_LIT("i"), &id));
  KC_CHECK_INT(id, 0);
  /* Opcodes with calls of their own, short structs and NULLs. */
  d.op = KC_OP_ADD;
  KC_CHECK_CODE(kc_program_builder_add_instruction(b, &d, KC_SV_LIT("x"), &id),
                KC_INVALID_ARGUMENT, "an opcode it does not add");
  d.op = KC_OP_IOTA;
  d.struct_size = 8;
  KC_CHECK_CODE(kc_program_builder_add_instruction(b, &d, KC_SV_LIT("x"), &id),
                KC_INVALID_ARGUMENT, "a short struct_size");
  KC_CHECK_CODE(kc_program_builder_add_instruction(b, NULL, KC_SV_LIT("x"), &id),
                KC_INVALID_ARGUMENT, "got NULL");
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  kc_executable* exe = NULL;
  /* An attribute the instruction does not read is refused, never ignored. */
  KC_CHECK_CODE(kc_program_compile(p, NULL, &exe), KC_INVALID_ARGUMENT,
                "instruction 'i'", "iota: attribute 'bogus' is not one it reads");
  kc_program_destroy(p);
  kc_shape_destroy(s);
}

/* A loop as jax.lax.fori_loop lowers it: v + (0 + 1 + ... + 9). */
static const char kt_while_module[] =
    "HloModule m\n"
    "%cond (s: (s32[], f32[2])) -> pred[] {\n"
    "  %s = (s32[], f32[2]) parameter(0)\n"
    "  %i = s32[] get-tuple-element(%s), index=0\n"
    "  %n = s32[] constant(10)\n"
    "  ROOT %lt = pred[] compare(%i, %n), direction=LT\n"
    "}\n"
    "%body (s: (s32[], f32[2])) -> (s32[], f32[2]) {\n"
    "  %s = (s32[], f32[2]) parameter(0)\n"
    "  %i = s32[] get-tuple-element(%s), index=0\n"
    "  %v = f32[2] get-tuple-element(%s), index=1\n"
    "  %one = s32[] constant(1)\n"
    "  %j = s32[] add(%i, %one)\n"
    "  %f = f32[] convert(%i)\n"
    "  %fb = f32[2] broadcast(%f), dimensions={}\n"
    "  %w = f32[2] add(%v, %fb)\n"
    "  ROOT %t = (s32[], f32[2]) tuple(%j, %w)\n"
    "}\n"
    "ENTRY e {\n"
    "  %z = s32[] constant(0)\n"
    "  %v = f32[2] constant({0.5, 1})\n"
    "  %init = (s32[], f32[2]) tuple(%z, %v)\n"
    "  %w = (s32[], f32[2]) while(%init), condition=%cond, body=%body\n"
    "  %again = (s32[], f32[2]) while(%w), condition=%cond, body=%body\n"
    "  %r = f32[2] get-tuple-element(%w), index=1\n"
    "  %r2 = f32[2] get-tuple-element(%again), index=1\n"
    "  ROOT %t = (f32[2], f32[2]) tuple(%r, %r2)\n"
    "}\n";

KC_TEST(hlo_ops_while_loop) {
  kc_tensor* outs[2];
  kt_run_text(kt_while_module, outs, 2);
  const float* r = kt_data(outs[0]);
  const float* r2 = kt_data(outs[1]);
  KC_CHECK(r[0] == 45.5f && r[1] == 46.0f);
  /* The second loop starts where the first stopped: its condition is
   * false at once, and the state comes through unchanged. */
  KC_CHECK(r2[0] == 45.5f && r2[1] == 46.0f);
  kt_release(outs, 2);
}

KC_TEST(hlo_ops_conditional_branches) {
  static const char text[] =
      "HloModule m\n"
      "%neg (x: f32[2]) -> f32[2] {\n  %x = f32[2] parameter(0)\n"
      "  ROOT %n = f32[2] negate(%x)\n}\n"
      "%dbl (x: f32[2]) -> f32[2] {\n  %x = f32[2] parameter(0)\n"
      "  ROOT %d = f32[2] add(%x, %x)\n}\n"
      "ENTRY e {\n"
      "  %v = f32[2] constant({1, 2})\n"
      "  %w = f32[2] constant({3, 4})\n"
      "  %t = pred[] constant(true)\n"
      "  %f = pred[] constant(false)\n"
      "  %a = f32[2] conditional(%t, %v, %w), true_computation=%neg, false_computation=%dbl\n"
      "  %b = f32[2] conditional(%f, %v, %w), true_computation=%neg, false_computation=%dbl\n"
      "  %zero = s32[] constant(0)\n  %five = s32[] constant(5)\n"
      "  %c = f32[2] conditional(%zero, %v, %w), branch_computations={%neg, %dbl}\n"
      "  %d = f32[2] conditional(%five, %v, %w), branch_computations={%neg, %dbl}\n"
      "  ROOT %r = (f32[2], f32[2], f32[2], f32[2]) tuple(%a, %b, %c, %d)\n"
      "}\n";
  kc_tensor* outs[4];
  kt_run_text(text, outs, 4);
  const float* a = kt_data(outs[0]);
  const float* b = kt_data(outs[1]);
  const float* c = kt_data(outs[2]);
  const float* d = kt_data(outs[3]);
  KC_CHECK(a[0] == -1.0f && a[1] == -2.0f); /* true: neg(v) */
  KC_CHECK(b[0] == 6.0f && b[1] == 8.0f);   /* false: dbl(w) */
  KC_CHECK(c[0] == -1.0f && c[1] == -2.0f); /* index 0 */
  KC_CHECK(d[0] == 6.0f && d[1] == 8.0f);   /* out of range: the last branch */
  kt_release(outs, 4);
}

KC_TEST(hlo_ops_control_refusals) {
  KT_COMPILE_FAILS("HloModule m\n%c (x: f32[2]) -> f32[2] {\n %x = f32[2] parameter(0)\n"
                   " ROOT %n = f32[2] negate(%x)\n}\n"
                   "ENTRY e {\n v = f32[2] constant({1, 2})\n"
                   " ROOT w = f32[2] while(v), condition=%c, body=%c\n}\n",
                   KC_INVALID_ARGUMENT, "instruction 'w' (line 8)",
                   "condition 'c': expected a result of pred[], got f32[2]");
  KT_COMPILE_FAILS("HloModule m\n%c (x: f32[2]) -> f32[2] {\n %x = f32[2] parameter(0)\n"
                   " ROOT %n = f32[2] negate(%x)\n}\n"
                   "ENTRY e {\n v = f32[2] constant({1, 2})\n"
                   " ROOT w = f32[2] while(v), body=%c\n}\n",
                   KC_INVALID_ARGUMENT, "while: expected 2 called computations, got 1");
  KT_COMPILE_FAILS("HloModule m\n%c (x: f32[3]) -> f32[3] {\n %x = f32[3] parameter(0)\n"
                   " ROOT %n = f32[3] negate(%x)\n}\n"
                   "ENTRY e {\n v = f32[2] constant({1, 2})\n p = pred[] constant(true)\n"
                   " ROOT c = f32[2] conditional(p, v, v), true_computation=%c, "
                   "false_computation=%c\n}\n",
                   KC_INVALID_ARGUMENT, "branch 0 'c': expected a parameter of f32[2], got f32[3]");
  KT_COMPILE_FAILS("HloModule m\n%c (x: f32[2]) -> f32[2] {\n %x = f32[2] parameter(0)\n"
                   " ROOT %n = f32[2] negate(%x)\n}\n"
                   "ENTRY e {\n v = f32[2] constant({1, 2})\n p = f32[] constant(1)\n"
                   " ROOT c = f32[2] conditional(p, v, v), true_computation=%c, "
                   "false_computation=%c\n}\n",
                   KC_INVALID_ARGUMENT, "operand 0: expected pred[] or s32[], got f32[]");
  /* Errors inside a called computation name it. */
  kc_program* p = NULL;
  KC_CHECK_CODE(kc_program_parse(KC_SV_LIT("HloModule m\n%c (x: f32[2]) -> pred[] {\n"
                                           " %x = f32[2] parameter(0)\n"
                                           " ROOT %n = pred[] bogus(%x)\n}\n"
                                           "ENTRY e {\n v = f32[2] constant({1, 2})\n"
                                           " ROOT w = f32[2] while(v), condition=%c, "
                                           "body=%c\n}\n"),
                                &p),
                KC_INVALID_ARGUMENT, "in computation 'c', called at line 8",
                "opcode 'bogus' is not supported");
  KC_CHECK(p == NULL);
}

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

/* Compares an s32 output with `want`, naming the first difference. */
static void kt_check_s32(kc_tensor* t, const int32_t* want, size_t n) {
  const DLTensor* d = kc_tensor_get_dltensor(t);
  int64_t count = 1;
  for (int32_t i = 0; i < d->ndim; ++i) count *= d->shape[i];
  KC_CHECK_INT(count, (int64_t)n);
  const int32_t* got = d->data;
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      fprintf(stderr, "element %zu: expected %d, got %d\n", i, want[i], got[i]);
      KC_CHECK(got[i] == want[i]);
      return;
    }
  }
}

KC_TEST(hlo_ops_moving_elements) {
  static const char text[] =
      "HloModule m\nENTRY e {\n"
      "  x = s32[2,3] constant({{0, 1, 2}, {3, 4, 5}})\n"
      "  t = s32[3,2] transpose(x), dimensions={1,0}\n"
      "  s = s32[2,2] slice(x), slice={[0:2], [0:3:2]}\n"
      "  r = s32[2,3] reverse(x), dimensions={1}\n"
      "  c = s32[2,6] concatenate(x, r), dimensions={1}\n"
      "  z = s32[] constant(-1)\n"
      "  p = s32[3,7] pad(x, z), padding=0_1x1_1_1\n"
      "  q = s32[2,1] pad(x, z), padding=0_0x-1_-1\n"
      "  one = s32[] constant(1)\n  five = s32[] constant(5)\n"
      "  d = s32[1,2] dynamic-slice(x, one, five), dynamic_slice_sizes={1,2}\n"
      "  u = s32[1,2] constant({{8, 9}})\n"
      "  w = s32[2,3] dynamic-update-slice(x, u, one, one)\n"
      "  ROOT o = (s32[3,2], s32[2,2], s32[2,3], s32[2,6], s32[3,7], s32[2,1], s32[1,2], "
      "s32[2,3]) tuple(t, s, r, c, p, q, d, w)\n}\n";
  kc_tensor* outs[8];
  kt_run_text(text, outs, 8);
  static const int32_t t[] = {0, 3, 1, 4, 2, 5};
  static const int32_t s[] = {0, 2, 3, 5};
  static const int32_t r[] = {2, 1, 0, 5, 4, 3};
  static const int32_t c[] = {0, 1, 2, 2, 1, 0, 3, 4, 5, 5, 4, 3};
  static const int32_t p[] = {-1, 0, -1, 1, -1, 2, -1,  /* interior 1, low 1, high 1 */
                              -1, 3, -1, 4, -1, 5, -1,  /* */
                              -1, -1, -1, -1, -1, -1, -1};
  static const int32_t q[] = {1, 4}; /* negative padding crops */
  static const int32_t d[] = {4, 5}; /* start 5 is clamped to 1 */
  static const int32_t w[] = {0, 1, 2, 3, 8, 9};
  kt_check_s32(outs[0], t, 6);
  kt_check_s32(outs[1], s, 4);
  kt_check_s32(outs[2], r, 6);
  kt_check_s32(outs[3], c, 12);
  kt_check_s32(outs[4], p, 21);
  kt_check_s32(outs[5], q, 2);
  kt_check_s32(outs[6], d, 2);
  kt_check_s32(outs[7], w, 6);
  kt_release(outs, 8);
}

KC_TEST(hlo_ops_moving_refusals) {
  static const struct {
    const char* body;
    const char* message;
  } cases[] = {
      {" ROOT t = s32[3,2] transpose(x), dimensions={1,1}\n",
       "attribute dimensions: expected a permutation of 0 to 1, got 1 at entry 1"},
      {" ROOT t = s32[2,3] transpose(x), dimensions={1,0}\n",
       "expected a result of s32[3,2], got s32[2,3]"},
      {" ROOT s = s32[2,2] slice(x), slice={[0:2], [2:4]}\n",
       "slice of dimension 1: expected 0 <= start <= limit <= 3 and a stride of at least 1, "
       "got [2:4:1]"},
      {" ROOT s = s32[2] slice(x), slice={[0:2]}\n",
       "attribute start_indices: expected 2 entries (the operand's rank), got 1"},
      {" z = f32[] constant(0)\n ROOT p = s32[2,3] pad(x, z), padding=0_0x0_0\n",
       "operand 1 (the padding value): expected a scalar of the operand's type, got f32[]"},
      /* Padding so large its arithmetic would overflow int64 (found by fuzzing). */
      {" z = s32[] constant(0)\n ROOT p = s32[2,3] pad(x, z), "
       "padding=0_0_8574853690513424385x0_0\n",
       "padding of dimension 0: low 0, high 0 and interior 8574853690513424385 are too large "
       "for a dimension of 2"},
      {" z = s32[] constant(0)\n ROOT p = s32[2,3] pad(x, z), "
       "padding=-4611686018427387904_4611686018427387904x0_0\n",
       "padding of dimension 0: low -4611686018427387904, high 4611686018427387904"},
      {" z = s32[] constant(0)\n ROOT c = s32[4,3] concatenate(x, z), dimensions={0}\n",
       "operand 1 (dims other than 0 as operand 0's): expected s32[2,3], got s32[]"},
      {" i = f32[] constant(0)\n ROOT d = s32[1,1] dynamic-slice(x, i, i), "
       "dynamic_slice_sizes={1,1}\n",
       "operand 1 (start of dimension 0): expected an integer scalar"},
      {" i = s32[] constant(0)\n ROOT d = s32[3,1] dynamic-slice(x, i, i), "
       "dynamic_slice_sizes={3,1}\n",
       "dimension 0: expected a slice of 0 to 2 elements, got 3"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char text[512];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n x = s32[2,3] constant({{0, 1, 2}, {3, 4, 5}})\n%s}\n",
             cases[i].body);
    KT_COMPILE_FAILS(text, KC_INVALID_ARGUMENT, cases[i].message);
  }
  kc_program* p = NULL;
  KC_CHECK_CODE(kc_program_parse(KC_SV_LIT("HloModule m\nENTRY e {\n x = s32[2] parameter(0)\n"
                                           " z = s32[] constant(0)\n"
                                           " ROOT p = s32[4] pad(x, z), padding=1x2\n}\n"),
                                &p),
                KC_INVALID_ARGUMENT, "line 5, column 37",
                "expected a padding such as 0_1x2_3 (low_high or low_high_interior per "
                "dimension), got '1x2'");
}

/* dot against a reference computed here, for f32 shapes that exercise the
 * kernel's row and column tails and a batch, and for f64 and s32. */
KC_TEST(hlo_ops_dot_matches_reference) {
  static const struct {
    int64_t b, m, k, n;
  } sizes[] = {{1, 1, 1, 1}, {1, 7, 5, 17}, {2, 13, 9, 33}, {1, 64, 70, 48}};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    int64_t B = sizes[s].b, M = sizes[s].m, K = sizes[s].k, N = sizes[s].n;
    char text[1024];
    /* lhs [B, K, M] contracted on 1 (so it is copied into order), rhs
     * [B, K, N] in order. */
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n a = f32[%lld,%lld,%lld] parameter(0)\n"
             " b = f32[%lld,%lld,%lld] parameter(1)\n"
             " ROOT d = f32[%lld,%lld,%lld] dot(a, b), lhs_batch_dims={0}, "
             "lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}\n}\n",
             (long long)B, (long long)K, (long long)M, (long long)B, (long long)K,
             (long long)N, (long long)B, (long long)M, (long long)N);
    kc_program* p = NULL;
    KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
    kc_executable* exe = NULL;
    KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
    float* a = malloc((size_t)(B * K * M) * sizeof *a);
    float* b = malloc((size_t)(B * K * N) * sizeof *b);
    KC_CHECK(a && b);
    for (int64_t i = 0; i < B * K * M; ++i) a[i] = (float)((i * 7) % 11) - 5.0f;
    for (int64_t i = 0; i < B * K * N; ++i) b[i] = (float)((i * 3) % 13) * 0.5f;
    int64_t da[3] = {B, K, M}, db[3] = {B, K, N};
    DLTensor ta, tb;
    memset(&ta, 0, sizeof ta);
    memset(&tb, 0, sizeof tb);
    ta.data = a;
    tb.data = b;
    ta.device.device_type = tb.device.device_type = kDLCPU;
    ta.ndim = tb.ndim = 3;
    ta.dtype = tb.dtype = (DLDataType){kDLFloat, 32, 1};
    ta.shape = da;
    tb.shape = db;
    const DLTensor* ins[2] = {&ta, &tb};
    kc_tensor* out = NULL;
    KC_CHECK_OK(kc_executable_execute(exe, ins, 2, NULL, &out));
    const float* c = kt_data(out);
    /* Small integers and halves: every sum is exact in f32. */
    for (int64_t bi = 0; bi < B; ++bi) {
      for (int64_t i = 0; i < M; ++i) {
        for (int64_t j = 0; j < N; ++j) {
          float want = 0;
          for (int64_t q = 0; q < K; ++q) {
            want += a[(bi * K + q) * M + i] * b[(bi * K + q) * N + j];
          }
          if (c[(bi * M + i) * N + j] != want) {
            fprintf(stderr, "size %zu: element [%lld,%lld,%lld]: expected %g, got %g\n", s,
                    (long long)bi, (long long)i, (long long)j, (double)want,
                    (double)c[(bi * M + i) * N + j]);
            KC_CHECK(false);
          }
        }
      }
    }
    kc_object_release(KC_OBJECT(out));
    free(a);
    free(b);
    kc_executable_destroy(exe);
    kc_program_destroy(p);
  }
  kc_tensor* outs[2];
  kt_run_text("HloModule m\nENTRY e {\n"
              " a = s32[2,2] constant({{1, -2}, {3, 4}})\n b = s32[2] constant({5, 6})\n"
              " x = f64[2,2] constant({{0.5, 1}, {2, 4}})\n"
              " i = s32[2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
              " f = f64[2,2] dot(x, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
              " ROOT t = (s32[2], f64[2,2]) tuple(i, f)\n}\n",
              outs, 2);
  const int32_t* iv = kt_data(outs[0]);
  const double* fv = kt_data(outs[1]);
  KC_CHECK(iv[0] == -7 && iv[1] == 39);
  KC_CHECK(fv[0] == 4.25 && fv[1] == 8.5 && fv[2] == 8.5 && fv[3] == 17.0); /* x^T x */
  kt_release(outs, 2);
}

KC_TEST(hlo_ops_dot_refusals) {
  static const struct {
    const char* body;
    kc_status_code code;
    const char* message;
  } cases[] = {
      {" ROOT d = f32[3,2] dot(a, a), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n",
       KC_INVALID_ARGUMENT,
       "contracting dimension 0: lhs dimension 0 has 2 elements, rhs dimension 1 has 3"},
      {" ROOT d = f32[2,2] dot(a, a), lhs_contracting_dims={1}\n", KC_INVALID_ARGUMENT,
       "expected as many contracting dimensions on both sides, got 1 and 0"},
      {" ROOT d = f32[2,2] dot(a, a), lhs_contracting_dims={1,1}, "
       "rhs_contracting_dims={0,1}\n",
       KC_INVALID_ARGUMENT,
       "attribute lhs_contracting_dims: entry 1: expected a dimension of 0 to 1 not named "
       "before, got 1"},
      {" b = f32[3,4] parameter(1)\n ROOT d = f32[4,2] dot(a, b), lhs_contracting_dims={1}, "
       "rhs_contracting_dims={0}\n",
       KC_INVALID_ARGUMENT,
       "expected a result of f32[2,4] (batch, lhs free, rhs free dimensions), got f32[4,2]"},
      {" b = f64[3,4] parameter(1)\n ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, "
       "rhs_contracting_dims={0}\n",
       KC_UNIMPLEMENTED, "dot: operand 1: element type f64 does not convert exactly to f32"},
      {" b = f32[3,4] parameter(1)\n ROOT d = s32[2,4] dot(a, b), lhs_contracting_dims={1}, "
       "rhs_contracting_dims={0}\n",
       KC_UNIMPLEMENTED, "dot: operand 0: element type f32 does not convert exactly to s32"},
      {" b = f32[3,4] parameter(1)\n ROOT d = pred[2,4] dot(a, b), lhs_contracting_dims={1}, "
       "rhs_contracting_dims={0}\n",
       KC_UNIMPLEMENTED, "dot: result element type pred is not supported"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char text[512];
    snprintf(text, sizeof text, "HloModule m\nENTRY e {\n a = f32[2,3] parameter(0)\n%s}\n",
             cases[i].body);
    KT_COMPILE_FAILS(text, cases[i].code, cases[i].message);
  }
}

/* Layouts: kcall computes on logical values; bytes are reinterpreted by a
 * bitcast and seen by custom calls, which get them in the layouts written. */
static float kt_seen[6];

static void kt_capture(void* out, const void** ins) {
  memcpy(kt_seen, ins[0], sizeof kt_seen);
  memcpy(out, ins[0], sizeof kt_seen);
}

KC_TEST(hlo_ops_layouts_bitcast_and_custom_calls) {
  KC_CHECK_OK(kc_xcall_register(KC_SV_LIT("kt_capture"), KC_PLATFORM_HOST,
                                KC_XCALL_API_ORIGINAL, (void (*)(void))kt_capture, 0));
  kc_tensor* outs[3];
  kt_run_text("HloModule m\nENTRY e {\n"
              "  x = f32[2,3]{1,0} constant({{1, 2, 3}, {4, 5, 6}})\n"
              /* the same bytes read column-major: x transposed */
              "  b = f32[3,2]{0,1} bitcast(x)\n"
              /* handed over column-major: the bytes 1..6 again */
              "  c = f32[2,3]{1,0} custom-call(b), custom_call_target=\"kt_capture\", "
              "operand_layout_constraints={f32[3,2]{0,1}}\n"
              /* a result written column-major */
              "  d = f32[2,3]{0,1} custom-call(x), custom_call_target=\"kt_capture\"\n"
              "  ROOT t = (f32[3,2], f32[2,3], f32[2,3]) tuple(b, c, d)\n}\n",
              outs, 3);
  static const float want_b[6] = {1, 4, 2, 5, 3, 6};
  static const float want_c[6] = {1, 2, 3, 4, 5, 6};
  static const float want_d[6] = {1, 3, 5, 2, 4, 6};
  const float* b = kt_data(outs[0]);
  const float* c = kt_data(outs[1]);
  const float* d = kt_data(outs[2]);
  for (int i = 0; i < 6; ++i) {
    KC_CHECK(b[i] == want_b[i]);
    KC_CHECK(c[i] == want_c[i]);
    KC_CHECK(d[i] == want_d[i]);
  }
  kt_release(outs, 3);
  /* Layouts kcall cannot honour are refused, never ignored. */
  kc_program* p = NULL;
  KC_CHECK_CODE(kc_program_parse(KC_SV_LIT("HloModule m\nENTRY e {\n"
                                           " x = f32[2,3] parameter(0)\n"
                                           " t = (f32[2,3], f32[2,3]) tuple(x, x)\n"
                                           " ROOT c = ((f32[2,3]{0,1}), f32[2,3]) custom-call(t), "
                                           "custom_call_target=\"kt_capture\"\n}\n"),
                                &p),
                KC_INVALID_ARGUMENT,
                "custom-call 'c': non-default layouts in a tuple result are supported only "
                "for a tuple of at most 8 arrays");
  KC_CHECK(p == NULL);
  KC_CHECK_CODE(kc_program_parse(KC_SV_LIT("HloModule m\nENTRY e {\n"
                                           " x = f32[2,3] parameter(0)\n"
                                           " ROOT c = f32[2,3] custom-call(x), "
                                           "custom_call_target=\"kt_capture\", "
                                           "operand_layout_constraints={f32[2,3]{0,1}, "
                                           "f32[2,3]{1,0}}\n}\n"),
                                &p),
                KC_INVALID_ARGUMENT,
                "operand_layout_constraints: expected 1 shapes (one per operand), got 2");
  KC_CHECK(p == NULL);
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
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n z = c64[2] constant({(1, 2), (3, 4)})\n"
                   " ROOT r = c64[2] maximum(z, z)\n}\n",
                   KC_UNIMPLEMENTED, "maximum is not implemented for c64 -> c64");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = f32[2] constant({1, 2})\n"
                   " ROOT r = c128[2] complex(a, a)\n}\n",
                   KC_INVALID_ARGUMENT, "complex: expected two f32 (or f64) operands");
}

KC_TEST(hlo_ops_attributes_skipped_or_refused) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(KC_SV_LIT("HloModule m\nENTRY e {\n"
                                         " a = f32[2] parameter(0), metadata={op_name=\"a\"}\n"
                                         " b = f32[2] negate(a), metadata={op_name=\"b\"}, "
                                         "sharding={replicated}\n}\n"),
                               &p));
  KC_CHECK_INT((int64_t)kc_program_get_skipped_attribute_count(p), 2);
  size_t count = 0;
  KC_CHECK_STR(kc_program_get_skipped_attribute(p, 0, &count), "metadata");
  KC_CHECK_INT((int64_t)count, 2);
  KC_CHECK_STR(kc_program_get_skipped_attribute(p, 1, &count), "sharding");
  KC_CHECK_INT((int64_t)count, 1);
  KC_CHECK(kc_program_get_skipped_attribute(p, 2, NULL) == NULL);
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  KC_CHECK(kc_executable_get_program(exe) == p);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  p = NULL;
  KC_CHECK_CODE(kc_program_parse(KC_SV_LIT("HloModule m\nENTRY e {\n a = f32[2,2] parameter(0)\n"
                                           " d = f32[2,2] dot(a, a), lhs_contracting_dims={1}, "
                                           "rhs_contracting_dims={0}, algorithm=dot_bf16_bf16_f32\n}\n"),
                                &p),
                KC_INVALID_ARGUMENT, "line 4, column 78",
                "dot 'd': attribute 'algorithm' is not supported (it changes what the "
                "instruction computes, and kcall does not honour it)");
  KC_CHECK(p == NULL);
}

/* Optional attributes: a typed handler declares defaults, which it gets
 * where a call site leaves the attribute out. */
static float kt_eps_seen;
static int64_t kt_mode_seen;
static char kt_name_seen[16];

static kc_status* kt_optional_attrs(kc_xcall_frame* f) {
  if (f->stage != KC_XCALL_STAGE_EXECUTE) return NULL;
  kt_eps_seen = f->attrs[0].v.f32;
  kt_mode_seen = f->attrs[1].v.i64;
  snprintf(kt_name_seen, sizeof kt_name_seen, "%.*s", (int)f->attrs[2].v.str.size,
           f->attrs[2].v.str.data);
  memcpy(f->results[0].data, f->args[0].data, 4 * sizeof(float));
  return NULL;
}

KC_TEST(hlo_ops_typed_optional_attributes) {
  kc_xcall_buffer_spec any = {kc_dtype_make(0, 0, 0), -1};
  kc_xcall_attr_spec specs[3] = {{"eps", KC_ATTR_F32, 0}, {"mode", KC_ATTR_I64, 0},
                                 {"name", KC_ATTR_STRING, 0}};
  char name[] = "dflt";
  kc_attr defaults[3];
  memset(defaults, 0, sizeof defaults);
  defaults[0].type = KC_ATTR_F32; /* eps defaults to 0.5; mode is required */
  defaults[0].v.f32 = 0.5f;
  defaults[2].type = KC_ATTR_STRING;
  defaults[2].v.str = kc_sv(name);
  kc_xcall_signature sig;
  memset(&sig, 0, sizeof sig);
  sig.struct_size = sizeof sig;
  sig.num_args = 1;
  sig.args = &any;
  sig.num_results = 1;
  sig.results = &any;
  sig.num_attrs = 3;
  sig.attrs = specs;
  sig.attr_defaults = defaults;
  KC_CHECK_OK(kc_xcall_register_typed(KC_SV_LIT("kt.optional"), KC_PLATFORM_HOST, &sig,
                                      kt_optional_attrs, NULL, NULL, 0));
  name[0] = 'X'; /* the default was copied */
  /* The registered signature shows which attributes are optional, and
   * their defaults (kcall inspect prints this). */
  kc_xcall_target_desc desc = {.struct_size = sizeof desc};
  KC_CHECK_OK(kc_xcall_lookup(KC_SV_LIT("kt.optional"), KC_PLATFORM_HOST, &desc));
  char text[160];
  kc_xcall_signature_format(desc.signature, text, sizeof text);
  KC_CHECK_STR(text, "(any[*]) -> (any[*]) {eps: f32 = 0.5, mode: i64, name: str = 'dflt'}");
  kc_tensor* out = NULL;
  kt_run_text("HloModule m\nENTRY e {\n x = f32[4] constant({1, 2, 3, 4})\n"
              " ROOT y = f32[4] custom-call(x), custom_call_target=\"kt.optional\", "
              "api_version=API_VERSION_TYPED_FFI, backend_config={mode = 3 : i64}\n}\n",
              &out, 1);
  KC_CHECK(kt_eps_seen == 0.5f && kt_mode_seen == 3);
  KC_CHECK_STR(kt_name_seen, "dflt");
  kc_object_release(KC_OBJECT(out));
  kt_run_text("HloModule m\nENTRY e {\n x = f32[4] constant({1, 2, 3, 4})\n"
              " ROOT y = f32[4] custom-call(x), custom_call_target=\"kt.optional\", "
              "api_version=API_VERSION_TYPED_FFI, backend_config={eps = 2.0 : f32, mode = 1 : "
              "i64, name = \"given\"}\n}\n",
              &out, 1);
  KC_CHECK(kt_eps_seen == 2.0f && kt_mode_seen == 1);
  KC_CHECK_STR(kt_name_seen, "given");
  kc_object_release(KC_OBJECT(out));
  /* The required one is still required; a default of another type is refused. */
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n x = f32[4] constant({1, 2, 3, 4})\n"
                   " ROOT y = f32[4] custom-call(x), custom_call_target=\"kt.optional\", "
                   "api_version=API_VERSION_TYPED_FFI, backend_config={}\n}\n",
                   KC_INVALID_ARGUMENT, "attribute 'mode': expected i64, got none");
  defaults[1].type = KC_ATTR_F64;
  KC_CHECK_CODE(kc_xcall_register_typed(KC_SV_LIT("kt.optional2"), KC_PLATFORM_HOST, &sig,
                                        kt_optional_attrs, NULL, NULL, 0),
                KC_INVALID_ARGUMENT, "attribute 1 ('mode')");
}

/* Array defaults print their items, cut after 8 with the count. */
KC_TEST(hlo_ops_typed_signature_format_shows_array_defaults) {
  kc_xcall_buffer_spec any = {kc_dtype_make(0, 0, 0), -1};
  kc_xcall_attr_spec specs[2] = {{"short", KC_ATTR_ARRAY, KC_ATTR_F64},
                                 {"long", KC_ATTR_ARRAY, KC_ATTR_U8}};
  static const double shorts[2] = {0.25, -1e300};
  static const uint8_t longs[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 255};
  kc_attr defaults[2];
  memset(defaults, 0, sizeof defaults);
  defaults[0].type = KC_ATTR_ARRAY;
  defaults[0].elem_type = KC_ATTR_F64;
  defaults[0].v.array.data = shorts;
  defaults[0].v.array.count = 2;
  defaults[1].type = KC_ATTR_ARRAY;
  defaults[1].elem_type = KC_ATTR_U8;
  defaults[1].v.array.data = longs;
  defaults[1].v.array.count = 10;
  kc_xcall_signature sig = {.struct_size = sizeof sig, .num_args = 1, .args = &any,
                            .num_results = 1, .results = &any, .num_attrs = 2,
                            .attrs = specs, .attr_defaults = defaults};
  char text[200];
  kc_xcall_signature_format(&sig, text, sizeof text);
  KC_CHECK_STR(text, "(any[*]) -> (any[*]) {short: array<f64> = [0.25, -1e+300], "
                     "long: array<u8> = [1, 2, 3, 4, 5, 6, 7, 8, ... (10 items)]}");
}

KC_TEST(hlo_ops_sharding_annotations_are_identity) {
  kc_tensor* out = NULL;
  kt_run_text("HloModule m\nENTRY e {\n x = f32[2] constant({1, 2})\n"
              " s = f32[2] custom-call(x), custom_call_target=\"Sharding\", "
              "sharding={replicated}\n"
              " ROOT r = f32[2] custom-call(s), custom_call_target=\"xla.sdy.FuncResultSharding\"\n"
              "}\n",
              &out, 1);
  const float* v = kt_data(out);
  KC_CHECK(v[0] == 1.0f && v[1] == 2.0f);
  kc_object_release(KC_OBJECT(out));
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n x = f32[2] constant({1, 2})\n"
                   " ROOT r = f32[2] custom-call(x), custom_call_target=\"Shardingx\"\n}\n",
                   KC_NOT_FOUND, "Shardingx");
}

KC_TEST(hlo_slice_with_a_stride_past_its_dimension) {
  /* One element, whatever the stride (no overflow for the largest). */
  kc_tensor* out = NULL;
  kt_run_text("HloModule m\nENTRY e {\n c = f32[3] constant({1, 2, 3})\n"
              " ROOT s = f32[1] slice(c), slice={[1:3:9223372036854775807]}\n}\n",
              &out, 1);
  KC_CHECK(((const float*)kt_data(out))[0] == 2);
  kt_release(&out, 1);
}
