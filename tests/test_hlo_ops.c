/* The instructions of the instruction table (src/program/instr/) that have
 * no test file of their own, through HLO text and through
 * kc_program_builder_add_instruction: compare, select, clamp, iota, control
 * flow, data movement, dot, layouts, attributes; results, and the refusals
 * that keep a result from being silently wrong. Reduce: test_hlo_reduce.c;
 * math: test_hlo_math.c. */
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
  /* kc_program_builder_add_op's opcodes too, without attributes. */
  d.op = KC_OP_NEGATE;
  KC_CHECK_CODE(kc_program_builder_add_instruction(b, &d, KC_SV_LIT("x"), &id),
                KC_INVALID_ARGUMENT, "negate 'x': expected no attributes and no computations, got 2 and 0");
  /* Opcodes that are none of the table's, short structs and NULLs. */
  d.op = 9999;
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

/* kc_program_builder_add_instruction adds kc_program_builder_add_op's
 * opcodes as add_op does (which is a wrapper of it): pred add as or, the
 * operand count checked when added. */
KC_TEST(hlo_ops_add_instruction_adds_add_op_opcodes) {
  kc_shape* f = NULL;
  kc_shape* q = NULL;
  KC_CHECK_OK(kc_shape_parse(KC_SV_LIT("f32[3]"), &f));
  KC_CHECK_OK(kc_shape_parse(KC_SV_LIT("pred[3]"), &q));
  kc_program_builder* b = NULL;
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("m"), &b));
  int32_t x = -1, y = -1, px = -1, py = -1, sum = -1, neg = -1, any = -1, root = -1;
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, f, KC_SV_LIT("x"), &x));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 1, q, KC_SV_LIT("p"), &px));
  KC_CHECK_OK(kc_program_builder_add_constant(b, f, (const float[]){1, 2, 3}, 12,
                                              KC_SV_LIT("y"), &y));
  KC_CHECK_OK(kc_program_builder_add_constant(b, q, (const uint8_t[]){0, 1, 0}, 3,
                                              KC_SV_LIT("q"), &py));
  kc_instruction_desc d = {.struct_size = sizeof d, .op = KC_OP_ADD, .result_shape = f,
                           .operands = (const int32_t[]){x, y}, .num_operands = 2};
  KC_CHECK_OK(kc_program_builder_add_instruction(b, &d, KC_SV_LIT("sum"), &sum));
  d.num_operands = 1;
  KC_CHECK_CODE(kc_program_builder_add_instruction(b, &d, KC_SV_LIT("bad"), &root),
                KC_INVALID_ARGUMENT, "adding add 'bad': expected a known opcode, a result shape "
                "and 2 operands, got 1");
  d.op = KC_OP_NEGATE;
  d.operands = &sum;
  KC_CHECK_OK(kc_program_builder_add_instruction(b, &d, KC_SV_LIT("neg"), &neg));
  d.op = KC_OP_ADD;
  d.result_shape = q;
  d.operands = (const int32_t[]){px, py};
  d.num_operands = 2;
  KC_CHECK_OK(kc_program_builder_add_instruction(b, &d, KC_SV_LIT("any"), &any));
  KC_CHECK_OK(kc_program_builder_add_tuple(b, (const int32_t[]){neg, any}, 2, KC_SV_LIT("t"),
                                           &root));
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  /* pred add compiles (as or): add itself refuses pred. */
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  kc_tensor* in_x = NULL;
  kc_tensor* in_p = NULL;
  int64_t three = 3;
  KC_CHECK_OK(kc_tensor_create(NULL, &three, 1, kc_dtype_make(kDLFloat, 32, 1),
                               kc_device_cpu(), &in_x));
  KC_CHECK_OK(kc_tensor_create(NULL, &three, 1, kc_dtype_make(kDLBool, 8, 1),
                               kc_device_cpu(), &in_p));
  memcpy(kc_tensor_get_dltensor(in_x)->data, (const float[]){0.5f, 1.5f, 2.5f}, 12);
  memcpy(kc_tensor_get_dltensor(in_p)->data, (const uint8_t[]){1, 0, 0}, 3);
  const DLTensor* ins[2] = {kc_tensor_get_dltensor(in_x), kc_tensor_get_dltensor(in_p)};
  kc_tensor* outs[2] = {NULL, NULL};
  KC_CHECK_OK(kc_executable_execute(exe, ins, 2, NULL, outs));
  const float* r = kt_data(outs[0]);
  const uint8_t* o = kt_data(outs[1]);
  KC_CHECK(r[0] == -1.5f && r[1] == -3.5f && r[2] == -5.5f);
  KC_CHECK(o[0] == 1 && o[1] == 1 && o[2] == 0);
  kt_release(outs, 2);
  kc_object_release(KC_OBJECT(in_x));
  kc_object_release(KC_OBJECT(in_p));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  kc_shape_destroy(f);
  kc_shape_destroy(q);
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

/* Slices and transposes that are one contiguous run (copied by one
 * memcpy) next to ones that are not: leading rows, one element, a row of
 * a 3-D array, a transpose that only moves a dimension of 1; and the
 * inner columns, a stride, a transpose that moves a real dimension. */
KC_TEST(hlo_ops_moving_contiguous_runs) {
  static const char text[] =
      "HloModule m\nENTRY e {\n"
      "  x = s32[4,3] constant({{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}})\n"
      "  y = s32[2,2,3] reshape(x)\n"
      "  rows = s32[2,3] slice(x), slice={[1:3], [0:3]}\n"
      "  one = s32[1,1] slice(x), slice={[2:3], [1:2]}\n"
      "  mid = s32[1,1,3] slice(y), slice={[1:2], [0:1], [0:3]}\n"
      "  cols = s32[4,1] slice(x), slice={[0:4], [1:2]}\n"
      "  step = s32[2,3] slice(x), slice={[0:4:2], [0:3]}\n"
      "  v = s32[1,12] reshape(x)\n"
      "  tv = s32[12,1] transpose(v), dimensions={1,0}\n"
      "  tx = s32[3,4] transpose(x), dimensions={1,0}\n"
      "  ROOT o = (s32[2,3], s32[1,1], s32[1,1,3], s32[4,1], s32[2,3], s32[12,1], s32[3,4]) "
      "tuple(rows, one, mid, cols, step, tv, tx)\n}\n";
  kc_tensor* outs[7];
  kt_run_text(text, outs, 7);
  static const int32_t rows[] = {3, 4, 5, 6, 7, 8};
  static const int32_t one[] = {7};
  static const int32_t mid[] = {6, 7, 8};
  static const int32_t cols[] = {1, 4, 7, 10};
  static const int32_t step[] = {0, 1, 2, 6, 7, 8};
  static const int32_t tv[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  static const int32_t tx[] = {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11};
  kt_check_s32(outs[0], rows, 6);
  kt_check_s32(outs[1], one, 1);
  kt_check_s32(outs[2], mid, 3);
  kt_check_s32(outs[3], cols, 4);
  kt_check_s32(outs[4], step, 6);
  kt_check_s32(outs[5], tv, 12);
  kt_check_s32(outs[6], tx, 12);
  kt_release(outs, 7);
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
                                           " d = f32[2,2] exponential(a), "
                                           "result_accuracy={mode=HIGHEST}\n}\n"),
                                &p),
                KC_INVALID_ARGUMENT, "line 4, column 31",
                "exponential 'd': attribute 'result_accuracy' is not supported (it changes what "
                "the instruction computes, and kcall does not honour it)");
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
