/* Tests of the HLO-text parser (kc_program_parse) and of shape text
 * (kc_shape_parse). What the program accessors do not show (constant
 * bytes, opaque bytes, typed attributes, locations) is checked by
 * compiling and running the parsed program. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_parse.h"

/* ---- modules ----------------------------------------------------------------- */

KC_TEST(parse_minimal_module) {
  kc_program* p = kt_parse(
      "HloModule m\n"
      "ENTRY e {\n"
      "  p = f32[4] parameter(0)\n"
      "  ROOT n = f32[4] negate(p)\n"
      "}\n");
  KC_CHECK_STR(kc_program_get_name(p), "m");
  KC_CHECK_INT(kc_program_get_instruction_count(p), 2);
  KC_CHECK_INT(kc_program_get_parameter_count(p), 1);
  KC_CHECK_STR(kc_program_get_parameter_name(p, 0), "p");
  kt_check_shape(kc_program_get_parameter_shape(p, 0), "f32[4]");
  kt_check_shape(kc_program_get_result_shape(p), "f32[4]");
  kc_program_destroy(p);
}

/* What jax.jit(...).lower(...).compile() dumps around a typed FFI call:
 * header attributes, a reducer computation to skip, percent names, typed
 * operands, layouts, metadata, sharding, frontend attributes, index
 * comments and a trailing comment. */
static const char kt_jax_dump[] =
    "HloModule jit_rms_norm, is_scheduled=true, entry_computation_layout={(f32[8,128]{1,0}, "
    "f32[128]{0})->(f32[8,128]{1,0}, f32[8]{0})}, allow_spmd_sharding_propagation_to_output={true}, "
    "frontend_attributes={fingerprint_before_lhs=\"4d2c\"}\n"
    "\n"
    "%region_0.4 (Arg_0.5: f32[], Arg_1.6: f32[]) -> f32[] {\n"
    "  %Arg_0.5 = f32[] parameter(0), metadata={op_name=\"jit(f)/reduce_sum\"}\n"
    "  %Arg_1.6 = f32[] parameter(1)\n"
    "  ROOT %add.7 = f32[] add(f32[] %Arg_0.5, f32[] %Arg_1.6), metadata={op_name=\"x\" "
    "source_file=\"/tmp/{odd}.py\" source_line=3}\n"
    "}, execution_thread=\"main\"\n"
    "\n"
    "ENTRY %main.12 (Arg_0.1: f32[8,128], Arg_1.2: f32[128]) -> (f32[8,128], f32[8]) {\n"
    "  %Arg_0.1 = f32[8,128]{1,0} parameter(0), sharding={replicated}, metadata={op_name=\"x\"}\n"
    "  %Arg_1.2 = f32[128]{0} parameter(1), sharding={devices=[1,2]0,1}, "
    "parameter_replication={false}\n"
    "  %constant.3 = f32[] constant(1e-05)\n"
    "  %broadcast.4 = f32[128]{0} broadcast(f32[] %constant.3), dimensions={}\n"
    "  %add.5 = f32[128]{0} add(f32[128]{0} %Arg_1.2, f32[128]{0} %broadcast.4), "
    "metadata={op_type=\"add\" op_name=\"jit(f)/add\" source_file=\"t.py\" source_line=10}, "
    "backend_config={\"outer_dimension_partitions\":[\"1\"]}\n"
    "  %custom-call.6 = (f32[8,128]{1,0}, f32[8]{0}) custom-call(f32[8,128]{1,0} %Arg_0.1, "
    "f32[128]{0} %add.5), custom_call_target=\"kt.rms_norm\", operand_layout_constraints="
    "{f32[8,128]{1,0}, f32[128]{0}}, api_version=API_VERSION_TYPED_FFI, "
    "metadata={op_name=\"jit(f)/ffi_call\"}, backend_config={eps = 1.000000e-05 : f32}, "
    "frontend_attributes={_xla_compute_type=\"host\"}\n"
    "  %get-tuple-element.7 = f32[8,128]{1,0} get-tuple-element((f32[8,128]{1,0}, f32[8]{0}) "
    "%custom-call.6), index=0, sharding={replicated}\n"
    "  %get-tuple-element.8 = f32[8]{0} get-tuple-element((f32[8,128]{1,0}, /*index=1*/f32[8]{0}) "
    "%custom-call.6), index=1\n"
    "  ROOT %tuple.9 = (f32[8,128]{1,0}, f32[8]{0}) tuple(f32[8,128]{1,0} %get-tuple-element.7, "
    "f32[8]{0} %get-tuple-element.8) // the result\n"
    "}\n"
    "\n";




KC_TEST(parse_jax_dump) {
  kc_program* p = kt_parse(kt_jax_dump);
  KC_CHECK_STR(kc_program_get_name(p), "jit_rms_norm");
  KC_CHECK_INT(kc_program_get_instruction_count(p), 9);
  KC_CHECK_INT(kc_program_get_parameter_count(p), 2);
  KC_CHECK_STR(kc_program_get_parameter_name(p, 0), "Arg_0.1");
  KC_CHECK_STR(kc_program_get_parameter_name(p, 1), "Arg_1.2");
  kt_check_shape(kc_program_get_parameter_shape(p, 0), "f32[8,128]");
  kt_check_shape(kc_program_get_result_shape(p), "(f32[8,128], f32[8])");

  kt_attr_record rec = {0, 0, NULL};
  kc_xcall_attr_spec eps = {"eps", KC_ATTR_F32, 0};
  kt_register_recorder("kt.rms_norm", &eps, 1, 2, 2, &rec);
  kc_executable* exe = kt_compile(p);
  KC_CHECK_INT(rec.calls, 1);
  KC_CHECK_INT(rec.num_attrs, 1);
  KC_CHECK(rec.attrs[0].type == KC_ATTR_F32);
  KC_CHECK(rec.attrs[0].v.f32 == 1e-05f);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

KC_TEST(parse_names_operands_and_root) {
  /* Names with and without '%', bare and typed operands, ROOT in the
   * middle, exp for exponential, comments anywhere. */
  kc_program* p = kt_parse(
      "// leading comment\n"
      "HloModule %names\n"
      "ENTRY main {\n"
      "  %x.1 = f32[2]{0} parameter(0)\n"
      "  y-2 = s32[2] parameter(1) /* block\n comment */\n"
      "  ROOT %cvt = f32[2] convert(s32[2]{0} y-2)\n"
      "  e = f32[2] exp(f32[2] %x.1)\n"
      "  _l = f32[2] log(e)\n"
      "  m = f32[2] maximum(_l, %cvt), metadata={}\n"
      "}\n");
  KC_CHECK_STR(kc_program_get_name(p), "names");
  KC_CHECK_INT(kc_program_get_instruction_count(p), 6);
  KC_CHECK_STR(kc_program_get_parameter_name(p, 1), "y-2");
  kt_check_shape(kc_program_get_parameter_shape(p, 1), "s32[2]");
  /* ROOT, not the last instruction, is the result. */
  kt_check_shape(kc_program_get_result_shape(p), "f32[2]");
  kc_program_destroy(p);

  p = kt_parse(
      "HloModule r\n"
      "ENTRY main {\n"
      "  a = s32[] parameter(0)\n"
      "  ROOT t = (s32[]) tuple(a)\n"
      "  b = s32[] negate(a)\n"
      "}\n");
  kt_check_shape(kc_program_get_result_shape(p), "(s32[])");
  kc_program_destroy(p);

  /* A byte-order mark and Windows line ends. */
  p = kt_parse("\xEF\xBB\xBFHloModule bom\r\nENTRY main {\r\n  x = f32[] parameter(0)\r\n}\r\n");
  KC_CHECK_STR(kc_program_get_name(p), "bom");
  kc_program_destroy(p);

  /* An instruction may be called ROOT. */
  p = kt_parse(
      "HloModule r\nENTRY main {\n  ROOT = s32[] parameter(0)\n"
      "  ROOT ROOT.1 = s32[] negate(ROOT)\n}\n");
  KC_CHECK_STR(kc_program_get_parameter_name(p, 0), "ROOT");
  kc_program_destroy(p);
}

KC_TEST(parse_every_elementwise_op) {
  /* Each opcode once; running it checks each became the right kind:
   * with a = {1, 2, 3} and b = {2, 2, 2}, every step up to `min` gives a
   * back, exp then log gives it again, negate gives -a. */
  kc_program* p = kt_parse(
      "HloModule ops\n"
      "ENTRY main {\n"
      "  a = f32[3] parameter(0)\n"
      "  b = f32[3] parameter(1)\n"
      "  add = f32[3] add(a, b)\n"
      "  sub = f32[3] subtract(add, b)\n"
      "  mul = f32[3] multiply(sub, b)\n"
      "  div = f32[3] divide(mul, b)\n"
      "  max = f32[3] maximum(div, a)\n"
      "  min = f32[3] minimum(max, a)\n"
      "  exp = f32[3] exponential(min)\n"
      "  log = f32[3] log(exp)\n"
      "  neg = f32[3] negate(log)\n"
      "  cvt = f64[3] convert(neg)\n"
      "  rs = f64[3,1] reshape(cvt)\n"
      "  ROOT bc = f64[2,3,1] broadcast(rs), dimensions={1,2}\n"
      "}\n");
  KC_CHECK_INT(kc_program_get_instruction_count(p), 14);
  kt_check_shape(kc_program_get_result_shape(p), "f64[2,3,1]");
  kc_executable* exe = kt_compile(p);
  float av[3] = {1, 2, 3}, bv[3] = {2, 2, 2};
  int64_t dims[1] = {3};
  DLTensor a = {av, {kDLCPU, 0}, 1, kc_dtype_make(kDLFloat, 32, 1), dims, NULL, 0};
  DLTensor b = {bv, {kDLCPU, 0}, 1, kc_dtype_make(kDLFloat, 32, 1), dims, NULL, 0};
  const DLTensor* in[2] = {&a, &b};
  kc_tensor* out = NULL;
  KC_CHECK_OK(kc_executable_execute(exe, in, 2, NULL, &out));
  const DLTensor* t = kc_tensor_get_dltensor(out);
  KC_CHECK_INT(t->ndim, 3);
  KC_CHECK(t->dtype.code == kDLFloat && t->dtype.bits == 64);
  const double* d = t->data;
  for (int i = 0; i < 6; ++i) KC_CHECK(fabs(d[i] + av[i % 3]) < 1e-5);
  kc_object_release(KC_OBJECT(out));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

KC_TEST(parse_skips_other_computations) {
  kc_program* p = kt_parse(
      "HloModule skip, entry_computation_layout={(f32[])->f32[]}\n"
      "%cmp (a: f32[], b: f32[]) -> pred[] {\n"
      "  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n"
      "  ROOT %c = pred[] compare(a, b), direction=LT, metadata={op_name=\"}{\"}\n"
      "}\n"
      "body.1 {\n"
      "  x = (s32[], f32[]) parameter(0)\n"
      "  ROOT w = (s32[], f32[]) while(x), condition=%cmp, body=body.1\n"
      "}\n"
      "fused_computation.2 (p: f32[4]) -> f32[4] {\n"
      "  ROOT d = f32[4]{0} dot(p, p), lhs_contracting_dims={0}\n"
      "}\n"
      "ENTRY %main (x: f32[]) -> f32[] {\n"
      "  x = f32[] parameter(0)\n"
      "  ROOT y = f32[] negate(x)\n"
      "}\n"
      "after.3 {\n"
      "  ROOT z = f32[] sort(x)\n"
      "}\n");
  KC_CHECK_INT(kc_program_get_instruction_count(p), 2);
  kc_program_destroy(p);

  /* A result layout in the signature is not taken for the body. */
  p = kt_parse(
      "HloModule sig\n"
      "ENTRY main (x: f32[4]{0}) -> (f32[4]{0}, s32[]) {\n"
      "  x = f32[4]{0} parameter(0)\n"
      "  c = s32[] constant(1)\n"
      "  ROOT t = (f32[4]{0}, s32[]) tuple(x, c)\n"
      "}\n");
  KC_CHECK_INT(kc_program_get_instruction_count(p), 3);
  kc_program_destroy(p);
  p = kt_parse(
      "HloModule sig\n"
      "%f (x: f32[4]{0}) -> f32[4]{0} {\n  ROOT x = f32[4]{0} parameter(0)\n}\n"
      "ENTRY main (x: f32[4]{0}) -> f32[4]{0} {\n"
      "  x = f32[4]{0} parameter(0)\n"
      "}\n");
  KC_CHECK_INT(kc_program_get_instruction_count(p), 1);
  kc_program_destroy(p);
}

/* ---- tuples ------------------------------------------------------------------ */

KC_TEST(parse_tuples_nested_three_deep) {
  /* Operands are defined before they are used. */
  KT_PARSE_FAILS(
      "HloModule nest\n"
      "ENTRY main {\n"
      "  p = (f32[2]{0}, (s32[], (f32[3], pred[1]))) parameter(0)\n"
      "  l1 = (s32[], (f32[3], pred[1])) get-tuple-element(p), index=1\n"
      "  l2 = (f32[3], pred[1]) get-tuple-element((s32[], (f32[3]{0}, pred[1])) l1), index=1\n"
      "  leaf = f32[3]{0} get-tuple-element(l2), index=0\n"
      "  n = f32[3] negate(leaf)\n"
      "  s = s32[] get-tuple-element(l1), index=0\n"
      "  f = f32[2] get-tuple-element(p), index=0\n"
      "  inner = (f32[3], s32[]) tuple(n, s)\n"
      "  mid = ((f32[3], s32[]), f32[2]) tuple(inner, f32[2] f)\n"
      "  ROOT top = (((f32[3], s32[]), f32[2]), pred[1]) tuple(mid, "
      "pred[1] get-tuple-element.9)\n"
      "  get-tuple-element.9 = pred[1] get-tuple-element(l2), index=1\n"
      "}\n",
      "line 12, column 70: expected the name of an instruction defined earlier, "
      "got 'get-tuple-element.9'");

  kc_program* p = kt_parse(
      "HloModule nest\n"
      "ENTRY main {\n"
      "  p = (f32[2]{0}, (s32[], (f32[3], pred[1]))) parameter(0)\n"
      "  l1 = (s32[], (f32[3], pred[1])) get-tuple-element(p), index=1\n"
      "  l2 = (f32[3], pred[1]) get-tuple-element((s32[], (f32[3]{0}, pred[1])) l1), index=1\n"
      "  leaf = f32[3]{0} get-tuple-element(l2), index=0\n"
      "  n = f32[3] negate(leaf)\n"
      "  s = s32[] get-tuple-element(l1), index=0\n"
      "  f = f32[2] get-tuple-element(p), index=0\n"
      "  b = pred[1] get-tuple-element(l2), index=1\n"
      "  inner = (f32[3], s32[]) tuple(n, s)\n"
      "  mid = ((f32[3], s32[]), f32[2]) tuple(inner, f32[2] f)\n"
      "  ROOT top = (((f32[3], s32[]), f32[2]), pred[1]) tuple(mid, pred[1] b)\n"
      "}\n");
  KC_CHECK_INT(kc_program_get_instruction_count(p), 11);
  kt_check_shape(kc_program_get_parameter_shape(p, 0),
                 "(f32[2], (s32[], (f32[3], pred[1])))");
  kt_check_shape(kc_program_get_result_shape(p),
                 "(((f32[3], s32[]), f32[2]), pred[1])");
  kc_program_destroy(p);
}

KC_TEST(parse_tuple_shape_errors) {
  KT_PARSE_FAILS(
      "HloModule t\nENTRY main {\n"
      "  p = (f32[2], s32[]) parameter(0)\n"
      "  g = f32[3] get-tuple-element(p), index=0\n}\n",
      "line 4, column 7: get-tuple-element 'g': expected f32[2] (element 0 of "
      "its operand), got f32[3]");
  KT_PARSE_FAILS(
      "HloModule t\nENTRY main {\n"
      "  p = (f32[2], s32[]) parameter(0)\n"
      "  g = f32[2] get-tuple-element(p), index=2\n}\n",
      "line 4, column 14: get-tuple-element 'g': index 2 is not an element of "
      "its operand's shape (f32[2], s32[])");
  KT_PARSE_FAILS(
      "HloModule t\nENTRY main {\n"
      "  p = f32[2] parameter(0)\n"
      "  g = f32[2] get-tuple-element(p), index=0\n}\n",
      "index 0 is not an element of its operand's shape f32[2]");
  KT_PARSE_FAILS(
      "HloModule t\nENTRY main {\n"
      "  p = (f32[2], s32[]) parameter(0)\n"
      "  g = f32[2] get-tuple-element(p)\n}\n",
      "line 4, column 14: get-tuple-element 'g': expected attribute index=N, got none");
  KT_PARSE_FAILS(
      "HloModule t\nENTRY main {\n"
      "  a = f32[2] parameter(0)\n"
      "  t = (f32[2], f32[3]) tuple(a, a)\n}\n",
      "line 4, column 7: tuple 't': expected (f32[2], f32[2]) (the tuple of its "
      "operands), got (f32[2], f32[3])");
  KT_PARSE_FAILS(
      "HloModule t\nENTRY main {\n"
      "  a = f32[2] parameter(0)\n"
      "  t = f32[2] tuple(a)\n}\n",
      "expected (f32[2]) (the tuple of its operands), got f32[2]");
}

/* ---- custom calls ------------------------------------------------------------ */

static char kt_opaque_seen[64];
static size_t kt_opaque_size;

static void kt_unified(void* out, const void** ins, const char* opaque,
                       size_t opaque_len, kc_xcall_status* status) {
  (void)ins;
  (void)status;
  kt_opaque_size = opaque_len;
  memcpy(kt_opaque_seen, opaque, opaque_len < sizeof kt_opaque_seen ? opaque_len
                                                                    : sizeof kt_opaque_seen);
  *(float*)out = 1.0f;
}

KC_TEST(parse_custom_call_opaque_bytes) {
  /* backend_config's HLO escapes decode to the bytes the target gets. */
  KC_CHECK_OK(kc_xcall_register(KC_SV_LIT("kt.unified"), KC_PLATFORM_HOST,
                                KC_XCALL_API_STATUS_RETURNING_UNIFIED,
                                (void (*)(void))kt_unified, 0));
  kc_program* p = kt_parse(
      "HloModule cc\nENTRY main {\n"
      "  ROOT r = f32[] custom-call(), custom_call_target=\"kt.unified\", "
      "api_version=API_VERSION_STATUS_RETURNING_UNIFIED, "
      "backend_config=\"a\\\"b\\\\c\\n\\t\\x41\\101\\0z\"\n}\n");
  kc_tensor* out = kt_run_no_inputs(p);
  static const char want[] = "a\"b\\c\n\tAA\0z";
  KC_CHECK_INT(kt_opaque_size, sizeof want - 1);
  KC_CHECK(memcmp(kt_opaque_seen, want, sizeof want - 1) == 0);
  kc_object_release(KC_OBJECT(out));
  kc_program_destroy(p);

  /* Braces for a legacy call are passed on as written. */
  p = kt_parse(
      "HloModule cc\nENTRY main {\n"
      "  ROOT r = f32[] custom-call(), custom_call_target=\"kt.unified\", "
      "backend_config={\"k\": [1, 2]}, api_version=API_VERSION_STATUS_RETURNING_UNIFIED\n}\n");
  out = kt_run_no_inputs(p);
  KC_CHECK_INT(kt_opaque_size, strlen("{\"k\": [1, 2]}"));
  KC_CHECK(memcmp(kt_opaque_seen, "{\"k\": [1, 2]}", kt_opaque_size) == 0);
  kc_object_release(KC_OBJECT(out));
  kc_program_destroy(p);
}

static int kt_side_effect_calls;
static void kt_side_effect(void* out, const void** ins) {
  (void)out;
  (void)ins;
  kt_side_effect_calls++;
}

KC_TEST(parse_custom_call_attributes) {
  KC_CHECK_OK(kc_xcall_register(KC_SV_LIT("kt.effect"), KC_PLATFORM_HOST,
                                KC_XCALL_API_ORIGINAL,
                                (void (*)(void))kt_side_effect, 0));
  /* Every attribute a custom call takes, in XLA's spelling; the side
   * effect keeps an unused call alive through dead-code removal. */
  kc_program* p = kt_parse(
      "HloModule cc\nENTRY main {\n"
      "  x = f32[4]{0} parameter(0)\n"
      "  y = (f32[4], s32[]) parameter(1)\n"
      "  unused = f32[4]{0} custom-call(x, y), custom_call_target=\"kt.effect\", "
      "custom_call_has_side_effect=true, schedule=SCHEDULE_EARLIEST, "
      "api_version=API_VERSION_ORIGINAL, operand_layout_constraints={f32[4]{0}, (f32[4]{0}, s32[])}, "
      "output_to_operand_aliasing={{}: (0, {})}\n"
      "  ROOT r = f32[4] negate(x)\n}\n");
  kc_executable* exe = kt_compile(p);
  kc_executable_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  kc_executable_query(exe, &info);
  KC_CHECK_INT(info.num_instructions, 4);
  KC_CHECK_INT(info.num_live_instructions, 4);
  kc_executable_destroy(exe);
  kc_program_destroy(p);

  /* Without the side effect the call is dropped. */
  p = kt_parse(
      "HloModule cc\nENTRY main {\n"
      "  x = f32[4]{0} parameter(0)\n"
      "  unused = f32[4]{0} custom-call(x), custom_call_target=\"kt.effect\", "
      "custom_call_has_side_effect=false, schedule=SCHEDULE_LATEST\n"
      "  ROOT r = f32[4] negate(x)\n}\n");
  exe = kt_compile(p);
  kc_executable_query(exe, &info);
  KC_CHECK_INT(info.num_live_instructions, 2);
  kc_executable_destroy(exe);
  kc_program_destroy(p);

  /* The aliasing reaches the compiler, which checks it. */
  p = kt_parse(
      "HloModule cc\nENTRY main {\n"
      "  x = f32[4]{0} parameter(0)\n"
      "  ROOT r = (f32[4], f32[4]) custom-call(x), custom_call_target=\"kt.effect\", "
      "output_to_operand_aliasing={{0}: (0, {}), {1}: (3, {1, 2})}, schedule=SCHEDULE_NONE\n}\n");
  kc_executable* bad = NULL;
  KC_CHECK_CODE(kc_program_compile(p, NULL, &bad), KC_INVALID_ARGUMENT, "(line 4)");
  KC_CHECK(bad == NULL);
  kc_program_destroy(p);

  p = kt_parse(
      "HloModule cc\nENTRY main {\n"
      "  x = f32[4]{0} parameter(0)\n"
      "  ROOT r = (f32[4], f32[4]) custom-call(x), custom_call_target=\"kt.effect\", "
      "output_to_operand_aliasing={}\n}\n");
  kc_program_destroy(p);
}

KC_TEST(parse_custom_call_errors) {
  static const struct {
    const char* attrs;
    const char* message;
  } cases[] = {
      {"", "line 4, column 19: custom-call 'r': expected attribute "
           "custom_call_target=\"...\", got none"},
      {", custom_call_target=foo", "line 4, column 54: expected a string, got 'foo'"},
      {", custom_call_target=\"a\", custom_call_target=\"b\"",
       "line 4, column 59: attribute 'custom_call_target' is given twice"},
      {", custom_call_target=\"t\", api_version=API_VERSION_FOO",
       "line 4, column 71: expected an API version (API_VERSION_ORIGINAL, "
       "API_VERSION_STATUS_RETURNING, API_VERSION_STATUS_RETURNING_UNIFIED or "
       "API_VERSION_TYPED_FFI), got 'API_VERSION_FOO'"},
      {", custom_call_target=\"t\", schedule=LATER",
       "expected SCHEDULE_NONE, SCHEDULE_LATEST or SCHEDULE_EARLIEST, got 'LATER'"},
      {", custom_call_target=\"t\", custom_call_has_side_effect=yes",
       "expected true or false, got 'yes'"},
      {", custom_call_target=\"t\", backend_config=12", "expected a string or '{', got '12'"},
      {", custom_call_target=\"t\", backend_config=\"\\q\"",
       "line 4, column 75: expected an escape (\\n, \\t, \\r, \\\\, \\\", \\', \\xHH, octal, ...), got '\\\\q'"},
      {", custom_call_target=\"t\", output_to_operand_aliasing={{0}: 0}",
       "expected '(', got '0'"},
      {", custom_call_target=\"t\", output_to_operand_aliasing={{0}: (-1, {})}",
       "expected an operand number (from 0 to 2147483647), got '-1'"},
      {", custom_call_target=\"t\", output_to_operand_aliasing={(0, {})}",
       "expected '{' starting an output index, got '('"},
      {", custom_call_target=\"t\" junk", "expected ',' or the end of the line, got 'junk'"},
      {", custom_call_target=\"t\", =1", "expected an attribute name, got '='"},
      {", custom_call_target=\"t\", metadata", "expected '=', got '}'"},
      {", custom_call_target=\"t",
       "unterminated string (a string must end on its line)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char text[512];
    snprintf(text, sizeof text,
             "HloModule cc\nENTRY main {\n  x = f32[4] parameter(0)\n"
             "  ROOT r = f32[4] custom-call(x)%s\n}\n",
             cases[i].attrs);
    KT_PARSE_FAILS(text, cases[i].message);
  }
}

/* ---- size -------------------------------------------------------------------- */

/* A module of `n` instructions: a parameter, then a chain of elementwise
 * operations with typed operands and metadata, as a large dump has. */
static char* kt_generate_module(int n) {
  size_t cap = (size_t)n * 160 + 256;
  char* text = malloc(cap);
  if (!text) return NULL;
  size_t len = (size_t)snprintf(text, cap,
                                "HloModule big, entry_computation_layout={(f32[16]{0})->f32[16]{0}}\n"
                                "ENTRY %%main {\n  %%v.0 = f32[16]{0} parameter(0)\n");
  static const char* const ops[] = {"add", "multiply", "negate", "maximum", "subtract"};
  for (int i = 1; i < n; ++i) {
    const char* op = ops[i % 5];
    char second[32] = "";
    if (strcmp(op, "negate") != 0) snprintf(second, sizeof second, ", v.%d", i / 2);
    len += (size_t)snprintf(text + len, cap - len,
                            "  %s%%v.%d = f32[16]{0} %s(f32[16]{0} %%v.%d%s), "
                            "metadata={op_name=\"jit(f)/%s\" source_line=%d}\n",
                            i == n - 1 ? "ROOT " : "", i, op, i - 1, second, op, i);
  }
  snprintf(text + len, cap - len, "}\n");
  return text;
}

KC_TEST(parse_ten_thousand_instructions) {
  char* text = kt_generate_module(10000);
  KC_CHECK(text != NULL);
  kc_program* p = NULL;
  kc_status* st = kc_program_parse(kc_sv(text), &p);
  free(text);
  KC_CHECK_OK(st);
  KC_CHECK_INT(kc_program_get_instruction_count(p), 10000);
  KC_CHECK_INT(kc_program_get_parameter_count(p), 1);
  kt_check_shape(kc_program_get_result_shape(p), "f32[16]");
  kc_program_destroy(p);
}

/* ---- called computations, copies and debug tables ------------------------------ */

/* A module as XLA prints it once optimized: debug tables after the header,
 * fused computations (one used twice, one nesting another), copies and a
 * bitcast. */
static const char kt_fused_module[] =
    "HloModule jit_f, is_scheduled=true, entry_computation_layout={()->f32[2,2]{1,0}}\n"
    "\n"
    "FileNames\n1 \"f.py\"\n\nFunctionNames\n1 \"<module>\"\n2 \"f\"\n\n"
    "FileLocations\n1 {file_name_id=1 function_name_id=2 line=3 end_line=3 column=4 "
    "end_column=9}\n\n"
    "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n\n"
    "%scale (p0: f32[4], p1: f32[4]) -> f32[4] {\n"
    "  %p0 = f32[4]{0} parameter(0)\n"
    "  %p1 = f32[4]{0} parameter(1)\n"
    "  ROOT %m = f32[4]{0} multiply(%p0, %p1), metadata={op_name=\"mul\" stack_frame_id=1}\n"
    "}\n"
    "\n"
    "%outer (a: f32[4]) -> f32[4] {\n"
    "  %a = f32[4]{0} parameter(0)\n"
    "  %two = f32[] constant(2)\n"
    "  %b = f32[4]{0} broadcast(%two), dimensions={}\n"
    "  %s = f32[4]{0} fusion(%a, %b), kind=kLoop, calls=%scale\n"
    "  ROOT %n = f32[4]{0} negate(%s)\n"
    "}\n"
    "\n"
    "ENTRY %main () -> f32[2,2] {\n"
    "  %x = f32[4]{0} constant({1, 2, 3, 4})\n"
    "  %y = f32[4]{0} fusion(%x, %x), kind=kLoop, calls=%scale\n"
    "  %z = f32[4]{0} call(%y), to_apply=%outer\n"
    "  %c = f32[4]{0} copy(%z)\n"
    "  ROOT %r = f32[2,2]{1,0} bitcast(%c)\n"
    "}\n";

KC_TEST(parse_fusion_call_copy_inline) {
  kc_program* p = kt_parse(kt_fused_module);
  kt_check_shape(kc_program_get_result_shape(p), "f32[2,2]");
  kc_tensor* out = kt_run_no_inputs(p);
  const float* v = kc_tensor_get_dltensor(out)->data;
  /* -(2 * x * x) */
  KC_CHECK(v[0] == -2.0f && v[1] == -8.0f && v[2] == -18.0f && v[3] == -32.0f);
  kc_object_release(KC_OBJECT(out));
  kc_program_destroy(p);
}

KC_TEST(parse_called_computation_errors) {
  static const char head[] = "HloModule m\n%c (p: f32[4]) -> f32[4] {\n"
                             "  %p = f32[4]{0} parameter(0)\n"
                             "  ROOT %n = f32[4]{0} negate(%p)\n}\n";
  static const struct {
    const char* entry;
    const char* message;
  } cases[] = {
      {"ENTRY e {\n x = f32[4] parameter(0)\n y = f32[4] fusion(x), calls=%d\n}\n",
       "line 8, column 30: fusion 'y': computation 'd' is not defined before it"},
      {"ENTRY e {\n x = f32[4] parameter(0)\n y = f32[4] fusion(x)\n}\n",
       "fusion 'y': expected attribute calls=COMPUTATION, got none"},
      {"ENTRY e {\n x = f32[4] parameter(0)\n y = f32[4] call(x), calls=%c\n}\n",
       "call 'y': expected attribute to_apply=COMPUTATION, got none"},
      {"ENTRY e {\n x = f32[4] parameter(0)\n y = f32[4] fusion(), calls=%c\n}\n",
       "parameter 'p': number 0, but the caller passes 0 operands"},
      {"ENTRY e {\n x = f32[2] parameter(0)\n y = f32[4] fusion(x), calls=%c\n}\n",
       "parameter 'p': expected f32[2] (operand 0 of the caller), got f32[4]"},
      {"ENTRY e {\n x = f32[4] parameter(0)\n y = f32[2,2] fusion(x), calls=%c\n}\n",
       "fusion 'y': expected computation 'c' to give f32[2,2], but its ROOT 'n' (line 4) is "
       "f32[4]"},
      {"ENTRY e {\n x = f32[4] parameter(0)\n y = f32[4] copy(x, x)\n}\n",
       "copy 'y': expected 1 operand, got 2"},
      {"ENTRY e {\n x = f32[4] parameter(0)\n y = f32[2] copy(x)\n}\n",
       "copy 'y': expected f32[4] (the shape of its operand), got f32[2]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char text[512];
    snprintf(text, sizeof text, "%s%s", head, cases[i].entry);
    KT_PARSE_FAILS(text, cases[i].message);
  }
  /* The error inside a called computation says which call reached it. */
  KT_PARSE_FAILS("HloModule m\n%c (p: f32[4]) -> f32[4] {\n"
                 "  %p = f32[4]{0} parameter(0)\n"
                 "  ROOT %n = f32[4]{0} tanhh(%p)\n}\n"
                 "ENTRY e {\n x = f32[4] parameter(0)\n y = f32[4] fusion(x), calls=%c\n}\n",
                 "line 4, column 23", "opcode 'tanhh' is not supported",
                 "in computation 'c', called by fusion 'y' at line 8");
  /* A computation that calls itself. */
  KT_PARSE_FAILS("HloModule m\n%c (p: f32[4]) -> f32[4] {\n"
                 "  %p = f32[4]{0} parameter(0)\n"
                 "  ROOT %n = f32[4]{0} fusion(%p), calls=%c\n}\n"
                 "ENTRY e {\n x = f32[4] parameter(0)\n y = f32[4] fusion(x), calls=%c\n}\n",
                 "computation 'c' calls itself");
  KT_PARSE_FAILS("HloModule m\n%c {\n ROOT x = f32[] constant(1)\n}\n%c {\n"
                 " ROOT x = f32[] constant(1)\n}\nENTRY e {\n ROOT y = f32[] constant(1)\n}\n",
                 "line 5, column 1: computation 'c' is defined twice");
  KT_PARSE_FAILS("HloModule m\nFileNames\n1 2\nENTRY e {\n ROOT y = f32[] constant(1)\n}\n",
                 "line 3, column 3: expected a string or '{...}' after the row number, got '2'",
                 "in debug table 'FileNames'");
}

KC_TEST(parse_inlined_names_are_scoped) {
  /* Two inlinings of one computation: their instructions get the callers'
   * names as prefixes, so errors and the plan say which copy is meant. */
  kc_program* p = kt_parse(kt_fused_module);
  kc_executable* exe = kt_compile(p);
  bool seen_y = false, seen_z = false;
  const char* name;
  for (size_t i = 0; (name = kc_executable_get_instruction_name(exe, i)) != NULL; ++i) {
    if (strcmp(name, "y/m") == 0) seen_y = true;
    if (strcmp(name, "z/s/m") == 0) seen_z = true;
  }
  KC_CHECK(seen_y && seen_z);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

/* ---- aliasing as XLA does it ------------------------------------------------- */

static bool kt_bump_same_buffer;

/* Updates its operand in place, as a handler may when its result aliases
 * the operand: it never writes through `out`. */
static void kt_bump_operand(void* out, const void** ins) {
  float* x = (float*)(uintptr_t)ins[0];
  kt_bump_same_buffer = (void*)x == out;
  for (int i = 0; i < 4; ++i) x[i] += 1.0f;
}

KC_TEST(parse_alias_operand_and_result_are_one_buffer) {
  KC_CHECK_OK(kc_xcall_register(KC_SV_LIT("kt_bump_operand"), KC_PLATFORM_HOST,
                                KC_XCALL_API_ORIGINAL, (void (*)(void))kt_bump_operand, 0));
  /* The aliased operand is a constant (whose bytes must not change) that
   * the root also returns, and then a parameter. */
  static const char* const texts[] = {
      "HloModule m\nENTRY e {\n x = f32[4] constant({1, 2, 3, 4})\n"
      " inc = f32[4] custom-call(x), custom_call_target=\"kt_bump_operand\", "
      "output_to_operand_aliasing={{}: (0, {})}\n"
      " ROOT t = (f32[4], f32[4]) tuple(inc, x)\n}\n",
      "HloModule m\nENTRY e {\n p = f32[4] parameter(0)\n"
      " inc = f32[4] custom-call(p), custom_call_target=\"kt_bump_operand\", "
      "output_to_operand_aliasing={{}: (0, {})}\n"
      " ROOT t = (f32[4], f32[4]) tuple(inc, p)\n}\n"};
  for (size_t k = 0; k < 2; ++k) {
    kc_program* p = kt_parse(texts[k]);
    kc_executable* exe = kt_compile(p);
    float in[4] = {1, 2, 3, 4};
    int64_t dims[1] = {4};
    DLTensor t;
    memset(&t, 0, sizeof t);
    t.data = in;
    t.device.device_type = kDLCPU;
    t.ndim = 1;
    t.dtype.code = kDLFloat;
    t.dtype.bits = 32;
    t.dtype.lanes = 1;
    t.shape = dims;
    const DLTensor* inputs[1] = {&t};
    for (int run = 0; run < 2; ++run) {
      kc_tensor* outs[2] = {NULL, NULL};
      kt_bump_same_buffer = false;
      KC_CHECK_OK(kc_executable_execute(exe, inputs, k, NULL, outs));
      KC_CHECK(kt_bump_same_buffer);
      const float* a = kc_tensor_get_dltensor(outs[0])->data;
      const float* b = kc_tensor_get_dltensor(outs[1])->data;
      KC_CHECK(a[0] == 2.0f && a[3] == 5.0f); /* updated through the operand */
      KC_CHECK(b[0] == 1.0f && b[3] == 4.0f); /* the operand's value unchanged */
      KC_CHECK(in[0] == 1.0f);                /* the caller's input too */
      kc_object_release(KC_OBJECT(outs[0]));
      kc_object_release(KC_OBJECT(outs[1]));
    }
    kc_executable_destroy(exe);
    kc_program_destroy(p);
  }
}
