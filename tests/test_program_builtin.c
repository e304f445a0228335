/* Programs built with the C builder (src/program/builder.c,
 * compiler/verify.c): the built-in instructions (element-wise, broadcast,
 * reshape, convert, integer division), the verifier's errors, and results
 * that the program does not compute (a parameter, a constant, a tuple
 * returned whole). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kt_program.h"

/* ---- built-in instructions --------------------------------------------------------- */

KC_TEST(program_elementwise_broadcast_reshape_convert) {
  kc_program_builder* b = NULL;
  kc_shape* v3 = KT_F32(1, (int64_t)3);
  kc_shape* m23 = KT_F32(2, (int64_t)2, (int64_t)3);
  kc_shape* m32 = KT_F32(2, (int64_t)3, (int64_t)2);
  kc_shape* i23 = kt_array(kDLInt, 32, 2, (int64_t)2, (int64_t)3);
  int32_t x, m, bc, sum, mx, ng, ex, lg, rs, cv, dv, tup;
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("ops"), &b));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, v3, KC_SV_LIT("x"), &x));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 1, m23, KC_SV_LIT("m"), &m));
  int64_t dims[1] = {1};
  KC_CHECK_OK(kc_program_builder_add_broadcast(b, m23, x, dims, 1, KC_SV_LIT("bc"), &bc));
  int32_t ops[2] = {bc, m};
  KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_ADD, m23, ops, 2, KC_SV_LIT("sum"), &sum));
  KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_MAXIMUM, m23, ops, 2, KC_SV_LIT("mx"), &mx));
  KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_NEGATE, m23, &sum, 1, KC_SV_LIT("ng"), &ng));
  KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_EXPONENTIAL, m23, &m, 1, KC_SV_LIT("ex"), &ex));
  KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_LOG, m23, &ex, 1, KC_SV_LIT("lg"), &lg));
  KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_RESHAPE, m32, &ng, 1, KC_SV_LIT("rs"), &rs));
  KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_CONVERT, i23, &sum, 1, KC_SV_LIT("cv"), &cv));
  int32_t div_ops[2] = {cv, cv};
  KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_DIVIDE, i23, div_ops, 2, KC_SV_LIT("dv"), &dv));
  int32_t parts[5] = {mx, lg, rs, cv, dv};
  KC_CHECK_OK(kc_program_builder_add_tuple(b, parts, 5, KC_SV_LIT("tup"), &tup));
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile(p, &exe));
  kc_tensor* xt = kt_iota(3, 1.0f); /* 1 2 3 */
  int64_t six = 6;
  kc_tensor* mt = kt_iota(six, -2.0f); /* -2 -1 0 / 1 2 3 */
  /* m is f32[2,3]: view the 6-element iota as 2x3. */
  const int64_t shape23[2] = {2, 3};
  kc_tensor* mv = NULL;
  KC_CHECK_OK(kc_tensor_create_view(mt, 2, shape23, NULL, 0, &mv));
  const DLTensor* ins[2] = {kc_tensor_get_dltensor(xt), kc_tensor_get_dltensor(mv)};
  kc_tensor* out[5] = {NULL};
  kc_execute_options o = kt_opts();
  KC_CHECK_OK(kc_executable_execute(exe, ins, 2, &o, out));
  /* bc = [[1,2,3],[1,2,3]]; m = [[-2,-1,0],[1,2,3]] */
  static const float want_mx[6] = {1, 2, 3, 1, 2, 3};
  static const float want_rs[6] = {1, -1, -3, -2, -4, -6};
  static const int32_t want_cv[6] = {-1, 1, 3, 2, 4, 6};
  for (int i = 0; i < 6; ++i) {
    KC_CHECK(kt_f32(out[0])[i] == want_mx[i]);
    KC_CHECK(fabsf(kt_f32(out[1])[i] - ((float)i - 2.0f)) < 1e-5f);
    KC_CHECK(kt_f32(out[2])[i] == want_rs[i]);
    KC_CHECK_INT(((const int32_t*)kc_tensor_get_dltensor(out[3])->data)[i], want_cv[i]);
    KC_CHECK_INT(((const int32_t*)kc_tensor_get_dltensor(out[4])->data)[i], 1);
  }
  KC_CHECK_INT(kc_tensor_get_dltensor(out[2])->shape[0], 3);
  for (int i = 0; i < 5; ++i) kc_object_release(KC_OBJECT(out[i]));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  kc_object_release(KC_OBJECT(mv));
  kc_object_release(KC_OBJECT(mt));
  kc_object_release(KC_OBJECT(xt));
  kc_shape_destroy(v3);
  kc_shape_destroy(m23);
  kc_shape_destroy(m32);
  kc_shape_destroy(i23);
}

KC_TEST(program_integer_division_is_defined) {
  kc_program_builder* b = NULL;
  kc_shape* s = kt_array(kDLInt, 32, 1, (int64_t)3);
  int32_t x, y, q;
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("div"), &b));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, s, KC_SV_LIT("x"), &x));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 1, s, KC_SV_LIT("y"), &y));
  int32_t ops[2] = {x, y};
  KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_DIVIDE, s, ops, 2, KC_SV_LIT("q"), &q));
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile(p, &exe));
  int32_t xs[3] = {7, INT32_MIN, 5}, ys[3] = {0, -1, 2};
  int64_t n = 3;
  DLTensor tx = {xs, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, &n, NULL, 0};
  DLTensor ty = {ys, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, &n, NULL, 0};
  const DLTensor* ins[2] = {&tx, &ty};
  kc_tensor* out = NULL;
  kc_execute_options o = kt_opts();
  KC_CHECK_OK(kc_executable_execute(exe, ins, 2, &o, &out));
  const int32_t* r = kc_tensor_get_dltensor(out)->data;
  KC_CHECK_INT(r[0], -1);
  KC_CHECK_INT(r[1], INT32_MIN);
  KC_CHECK_INT(r[2], 2);
  kc_object_release(KC_OBJECT(out));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  kc_shape_destroy(s);
}

KC_TEST(program_verifier_errors) {
  kc_program_builder* b = NULL;
  kc_shape* s4 = KT_F32(1, (int64_t)4);
  kc_shape* s8 = KT_F32(1, (int64_t)8);
  kc_shape* c4 = kt_array(kDLComplex, 64, 1, (int64_t)4);
  int32_t x, y, z;
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("bad"), &b));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, s4, KC_SV_LIT("x"), &x));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 1, s8, KC_SV_LIT("y"), &y));
  int32_t ops[2] = {x, y};
  KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_ADD, s4, ops, 2, KC_SV_LIT("add.3"), &z));
  KC_CHECK_OK(kc_program_builder_set_location(b, z, 4, 3));
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  kc_executable* exe = NULL;
  KC_CHECK_CODE(kt_compile(p, &exe), KC_INVALID_ARGUMENT,
                "instruction 'add.3' (line 4): operand 1: expected f32[4], got f32[8]");
  kc_program_destroy(p);

  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("half"), &b));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, c4, KC_SV_LIT("x"), &x));
  int32_t twice[2] = {x, x};
  KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_MAXIMUM, c4, twice, 2, KC_SV_LIT("e"), &z));
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  KC_CHECK_CODE(kt_compile(p, &exe), KC_UNIMPLEMENTED, "maximum", "c64");
  kc_program_destroy(p);

  /* Builder-level refusals. */
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("dup"), &b));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, s4, KC_SV_LIT("x"), &x));
  KC_CHECK_CODE(kc_program_builder_add_parameter(b, 1, s4, KC_SV_LIT("x"), &y),
                KC_INVALID_ARGUMENT, "'x' already exists");
  KC_CHECK_CODE(kc_program_builder_add_op(b, KC_OP_ADD, s4, ops, 2, KC_SV_LIT("a"), &z),
                KC_INVALID_ARGUMENT, "operand 1", "below 1");
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 2, s4, KC_SV_LIT("gap"), &y));
  KC_CHECK_CODE(kc_program_builder_finish(b, &p), KC_INVALID_ARGUMENT,
                "parameter number 2", "exactly once");
  uint8_t bytes[3] = {0};
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("const"), &b));
  KC_CHECK_CODE(kc_program_builder_add_constant(b, s4, bytes, 3, KC_SV_LIT("c"), &x),
                KC_INVALID_ARGUMENT, "16 bytes", "got an array and 3 bytes");
  kc_program_builder_destroy(b);
  kc_shape_destroy(s4);
  kc_shape_destroy(s8);
  kc_shape_destroy(c4);
}

/* Results that are not computed by the program (a parameter, a constant,
 * a reshape of a parameter) or that repeat a buffer are copied into their
 * own output tensors. */
KC_TEST(program_root_edge_cases) {
  kc_program_builder* b = NULL;
  kc_shape* s4 = KT_F32(1, (int64_t)4);
  kc_shape* s22 = KT_F32(2, (int64_t)2, (int64_t)2);
  int32_t x, c, r, neg, tup;
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("roots"), &b));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, s4, KC_SV_LIT("x"), &x));
  static const float k[4] = {9, 8, 7, 6};
  KC_CHECK_OK(kc_program_builder_add_constant(b, s4, k, sizeof k, KC_SV_LIT("c"), &c));
  KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_RESHAPE, s22, &x, 1, KC_SV_LIT("r"), &r));
  KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_NEGATE, s4, &x, 1, KC_SV_LIT("neg"), &neg));
  int32_t parts[6] = {x, x, c, r, neg, neg};
  KC_CHECK_OK(kc_program_builder_add_tuple(b, parts, 6, KC_SV_LIT("tup"), &tup));
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile(p, &exe));
  kc_tensor* in = kt_iota(4, 1.0f);
  const DLTensor* ins[1] = {kc_tensor_get_dltensor(in)};
  kc_tensor* out[6] = {NULL};
  kc_execute_options o = kt_opts();
  KC_CHECK_OK(kc_executable_execute(exe, ins, 1, &o, out));
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < i; ++j) KC_CHECK(kt_f32(out[i]) != kt_f32(out[j]));
    KC_CHECK(kt_f32(out[i]) != kt_f32(in));
  }
  for (int e = 0; e < 4; ++e) {
    KC_CHECK(kt_f32(out[0])[e] == 1.0f + (float)e);
    KC_CHECK(kt_f32(out[1])[e] == 1.0f + (float)e);
    KC_CHECK(kt_f32(out[2])[e] == k[e]);
    KC_CHECK(kt_f32(out[3])[e] == 1.0f + (float)e);
    KC_CHECK(kt_f32(out[4])[e] == -1.0f - (float)e);
    KC_CHECK(kt_f32(out[5])[e] == -1.0f - (float)e);
  }
  KC_CHECK_INT(kc_tensor_get_dltensor(out[3])->ndim, 2);
  /* Writing an output leaves the others and the next run untouched. */
  ((float*)kc_tensor_get_dltensor(out[4])->data)[0] = 100;
  KC_CHECK(kt_f32(out[5])[0] == -1.0f);
  for (int i = 0; i < 6; ++i) kc_object_release(KC_OBJECT(out[i]));
  KC_CHECK_OK(kc_executable_execute(exe, ins, 1, &o, out));
  KC_CHECK(kt_f32(out[2])[0] == 9.0f);
  for (int i = 0; i < 6; ++i) kc_object_release(KC_OBJECT(out[i]));
  char plan[2048];
  KC_CHECK(kc_executable_format_plan(exe, plan, sizeof plan) < sizeof plan);
  KC_CHECK_CONTAINS(plan, "plan of 'roots'");
  KC_CHECK_CONTAINS(plan, "output #5");
  KC_CHECK_STR(kc_executable_get_instruction_name(exe, 0), "x");
  KC_CHECK(kc_executable_get_instruction_name(exe, 99) == NULL);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  kc_object_release(KC_OBJECT(in));
  kc_shape_destroy(s4);
  kc_shape_destroy(s22);
}

/* A tuple result returned whole: its leaves are written by the call
 * straight into the output tensors. */
static void two_results(void* out, const void** ins) {
  void** res = out;
  const float* x = ins[0];
  float* a = res[0];
  float* b = res[1];
  for (int i = 0; i < 4; ++i) {
    a[i] = x[i] * 2;
    b[i] = x[i] * 3;
  }
}

KC_TEST(program_tuple_result_is_the_output) {
  KC_CHECK_OK(kc_xcall_register(KC_SV_LIT("two_results"), KC_PLATFORM_HOST,
                                KC_XCALL_API_ORIGINAL, (void (*)(void))two_results, 0));
  kc_shape* s4 = KT_F32(1, (int64_t)4);
  kc_shape* pair = kt_tuple(2, s4, s4);
  kc_program_builder* b = NULL;
  int32_t x, cc;
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("pair"), &b));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, s4, KC_SV_LIT("x"), &x));
  kc_custom_call_desc d = kt_call("two_results", &x, 1, pair, KC_XCALL_API_ORIGINAL);
  KC_CHECK_OK(kc_program_builder_add_custom_call(b, &d, KC_SV_LIT("cc"), &cc));
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile(p, &exe));
  kc_executable_info info;
  info.struct_size = sizeof info;
  kc_executable_query(exe, &info);
  KC_CHECK_INT((int64_t)info.temp_bytes, 0); /* nothing but the outputs */
  KC_CHECK_INT((int64_t)info.output_bytes, 32);
  kc_tensor* in = kt_iota(4, 1.0f);
  const DLTensor* ins[1] = {kc_tensor_get_dltensor(in)};
  kc_tensor* out[2] = {NULL, NULL};
  kc_execute_options o = kt_opts();
  KC_CHECK_OK(kc_executable_execute(exe, ins, 1, &o, out));
  for (int e = 0; e < 4; ++e) {
    KC_CHECK(kt_f32(out[0])[e] == 2.0f * (1.0f + (float)e));
    KC_CHECK(kt_f32(out[1])[e] == 3.0f * (1.0f + (float)e));
  }
  kc_object_release(KC_OBJECT(out[0]));
  kc_object_release(KC_OBJECT(out[1]));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  kc_object_release(KC_OBJECT(in));
  kc_shape_destroy(s4);
  kc_shape_destroy(pair);
}
