/* Tests of the HLO-text parser (kc_program_parse) and of shape text
 * (kc_shape_parse). What the program accessors do not show (constant
 * bytes, opaque bytes, typed attributes, locations) is checked by
 * compiling and running the parsed program. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* ---- helpers ----------------------------------------------------------------- */

static kc_program* kt_parse(const char* text) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  KC_CHECK(p != NULL);
  return p;
}

/* Parsing `text` fails with INVALID_ARGUMENT and a message holding every
 * needle; no program comes back. */
#define KT_PARSE_FAILS(text, ...)                                             \
  do {                                                                        \
    kc_program* kt_p_ = NULL;                                                 \
    KC_CHECK_CODE(kc_program_parse(kc_sv(text), &kt_p_), KC_INVALID_ARGUMENT, \
                  __VA_ARGS__);                                               \
    KC_CHECK(kt_p_ == NULL);                                                  \
  } while (0)

static void kt_check_shape(const kc_shape* s, const char* want) {
  char buf[512];
  KC_CHECK(s != NULL);
  kc_shape_format(s, buf, sizeof buf);
  KC_CHECK_STR(buf, want);
}

static kc_executable* kt_compile(const kc_program* p) {
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  KC_CHECK(exe != NULL);
  return exe;
}

/* Runs a program without parameters and returns its one output. */
static kc_tensor* kt_run_no_inputs(const kc_program* p) {
  kc_executable* exe = kt_compile(p);
  kc_tensor* out = NULL;
  kc_status* st = kc_executable_execute(exe, NULL, 0, NULL, &out);
  kc_executable_destroy(exe);
  KC_CHECK_OK(st);
  KC_CHECK(out != NULL);
  return out;
}

/* ---- shapes ------------------------------------------------------------------ */

KC_TEST(parse_shape_text_forms) {
  static const struct {
    const char* text;
    const char* printed;
  } cases[] = {
      {"f32[2,3]", "f32[2,3]"},
      {"f32[2,3]{1,0}", "f32[2,3]"},
      {"s32[]", "s32[]"},
      {"s32[]{}", "s32[]"},
      {"pred[4]", "pred[4]"},
      {"pred[4]{0}", "pred[4]"},
      {"u64[0]", "u64[0]"},
      {"f64[2,1,3]{2,1,0}", "f64[2,1,3]"},
      {"(f32[32], (f32[64], f32[128]), f32[256])",
       "(f32[32], (f32[64], f32[128]), f32[256])"},
      {"()", "()"},
      {"( f32[1]{0} , /*index=1*/ s8[2] )", "(f32[1], s8[2])"},
      {"(s16[], (u8[1], (u16[2], (u32[3]))))", "(s16[], (u8[1], (u16[2], (u32[3]))))"},
      /* kcall's own dtype names */
      {"i32[3]", "s32[3]"},
      {"bool[2]", "pred[2]"},
      {"float32[1]", "f32[1]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    kc_shape* s = NULL;
    KC_CHECK_OK(kc_shape_parse(kc_sv(cases[i].text), &s));
    kt_check_shape(s, cases[i].printed);
    kc_shape_destroy(s);
  }
}

KC_TEST(parse_shape_element_types) {
  static const struct {
    const char* name;
    uint8_t code;
    uint8_t bits;
  } types[] = {
      {"pred", kDLBool, 8},     {"s8", kDLInt, 8},        {"s16", kDLInt, 16},
      {"s32", kDLInt, 32},      {"s64", kDLInt, 64},      {"u8", kDLUInt, 8},
      {"u16", kDLUInt, 16},     {"u32", kDLUInt, 32},     {"u64", kDLUInt, 64},
      {"f16", kDLFloat, 16},    {"bf16", kDLBfloat, 16},  {"f32", kDLFloat, 32},
      {"f64", kDLFloat, 64},    {"c64", kDLComplex, 64},  {"c128", kDLComplex, 128},
  };
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
    char text[32];
    snprintf(text, sizeof text, "%s[2]", types[i].name);
    kc_shape* s = NULL;
    KC_CHECK_OK(kc_shape_parse(kc_sv(text), &s));
    DLDataType t = kc_shape_get_dtype(s);
    KC_CHECK_INT(t.code, types[i].code);
    KC_CHECK_INT(t.bits, types[i].bits);
    KC_CHECK_INT(t.lanes, 1);
    KC_CHECK_INT(kc_shape_get_rank(s), 1);
    kt_check_shape(s, text);
    kc_shape_destroy(s);
  }
}

KC_TEST(parse_shape_errors) {
  static const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"f32[2,3]{0,1}",
       "column 9: expected a layout: a permutation of 0 to 1, minor to major (only the "
       "row-major one is accepted here), got '{0,1}'"},
      {"f32[2]{0:T(8)}",
       "column 7: expected a layout: a permutation of 0 to 0, minor to major (tiling and "
       "memory spaces are not supported), got '{0:'"},
      {"f32[2,3]{1}", "got '{1}'"},
      {"f32[<=4]",
       "column 5: expected a dimension size, got '<': dynamic dimensions are "
       "not supported"},
      {"f32[?]", "column 5: expected a dimension size, got '?'"},
      {"f33[2]", "column 1: expected an element type"},
      {"token[]", "got 'token'"},
      {"f32[2", "column 6: expected ',' or ']', got end of input"},
      {"f32 [2] x", "column 9: expected the end of the shape, got 'x'"},
      {"(f32[2]", "column 8: expected ',' or ')', got end of input"},
      {"f32[-1]", "column 5: expected a dimension size (from 0 to"},
      {"f32[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,"
       "26,27,28,29,30,31,32,33]",
       "a shape of more than 32 dimensions"},
      {"f32[4611686018427387904,4]", "OUT_OF_RANGE"},
      {"", "column 1: expected an element type"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    kc_shape* s = NULL;
    kc_status* st = kc_shape_parse(kc_sv(cases[i].text), &s);
    KC_CHECK(st != NULL);
    KC_CHECK(s == NULL);
    char buf[512];
    kt_status_text(st, buf, sizeof buf);
    KC_CHECK_CONTAINS(buf, cases[i].message);
    KC_CHECK(strstr(buf, "line ") == NULL); /* one line: columns only */
    kc_status_destroy(st);
  }
  KC_CHECK_CODE(kc_shape_parse(kc_sv("f32[1]"), NULL), KC_INVALID_ARGUMENT, "NULL");
}

KC_TEST(parse_shape_nested_deeply) {
  /* Deep enough to be refused, not deep enough to be slow. */
  char text[4096];
  size_t n = 0;
  for (int i = 0; i < 200; ++i) text[n++] = '(';
  memcpy(text + n, "f32[]", 5);
  n += 5;
  for (int i = 0; i < 200; ++i) text[n++] = ')';
  text[n] = '\0';
  kc_shape* s = NULL;
  KC_CHECK_CODE(kc_shape_parse(kc_sv(text), &s), KC_INVALID_ARGUMENT,
                "nested deeper than 64");
  KC_CHECK(s == NULL);
}

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

/* Records the typed attributes a handler sees when it is instantiated. */
typedef struct kt_attr_record {
  int calls;
  int32_t num_attrs;
  const kc_attr* attrs;
} kt_attr_record;

static kc_status* kt_record_attrs(kc_xcall_frame* frame) {
  kt_attr_record* r = frame->user;
  if (frame->stage == KC_XCALL_STAGE_INSTANTIATE) {
    r->calls++;
    r->num_attrs = frame->num_attrs;
    r->attrs = frame->attrs;
  }
  return NULL;
}

static void kt_register_recorder(const char* name, const kc_xcall_attr_spec* attrs,
                                 int32_t num_attrs, int32_t num_args,
                                 int32_t num_results, kt_attr_record* record) {
  kc_xcall_buffer_spec any = {kc_dtype_make(0, 0, 0), -1};
  kc_xcall_buffer_spec specs[4] = {any, any, any, any};
  kc_xcall_signature sig;
  memset(&sig, 0, sizeof sig);
  sig.struct_size = sizeof sig;
  sig.num_args = num_args;
  sig.args = specs;
  sig.num_results = num_results;
  sig.results = specs;
  sig.num_attrs = num_attrs;
  sig.attrs = attrs;
  KC_CHECK_OK(kc_xcall_register_typed(kc_sv(name), KC_PLATFORM_HOST, &sig,
                                      kt_record_attrs, record, NULL, 0));
}

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

/* ---- module-level errors ----------------------------------------------------- */

KC_TEST(parse_module_errors) {
  static const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "line 1, column 1: expected 'HloModule', got end of input"},
      {"ENTRY main {}", "line 1, column 1: expected 'HloModule', got 'ENTRY'"},
      {"HloModule", "line 1, column 10: expected a module name, got end of input"},
      {"HloModule m, x", "line 1, column 15: expected '=', got end of input"},
      {"HloModule m\n", "line 2, column 1: expected an ENTRY computation, got end of input"},
      {"HloModule m\nc {\n ROOT x = f32[] parameter(0)\n}\n",
       "line 5, column 1: expected an ENTRY computation, got end of input"},
      {"HloModule m\nENTRY a {\n x = f32[] parameter(0)\n}\nENTRY b {\n y = f32[] parameter(0)\n}\n",
       "line 5, column 1: expected one ENTRY computation, got a second"},
      {"HloModule m\nENTRY main {\n}\n", "line 3, column 1: expected an instruction, got '}'"},
      {"HloModule m\nENTRY main {\n x = f32[] parameter(0)\n", "line 4, column 1: expected "
                                                               "an instruction or '}', got end of input"},
      {"HloModule m\n{", "line 2, column 1: expected a computation, got '{'"},
      {"HloModule m\nc (x: f32[]) -> f32[]\n", "line 3, column 1: expected '{', got end of input"},
      {"HloModule m\nc {\n x = f32[] parameter(0)\n", "line 4, column 1: expected a bracket "
                                                    "closing the '{' at line 2, column 3"},
      {"HloModule m\nENTRY main {\n x = f32[] parameter(0)\n /* never closed\n}\n",
       "line 4, column 2: unterminated comment"},
      {"HloModule m\nENTRY main {\n x = f32[] parameter(0), metadata={op_name=\"a}\n}\n",
       "line 3, column 44: unterminated string"},
      {"HloModule m\nENTRY main {\n x f32[] parameter(0)\n}\n",
       "line 3, column 4: expected '=', got 'f32'"},
      {"HloModule m\nENTRY main {\n x = f32[] 7(0)\n}\n",
       "line 3, column 12: expected an opcode, got '7'"},
      {"HloModule m\nENTRY main {\n x = f32[2,2] parameter(0)\n"
       " d = f32[2,2] frobnicate(x, x), lhs_contracting_dims={1}\n}\n",
       "line 4, column 15: instruction 'd': opcode 'frobnicate' is not supported "
       "(supported: parameter, constant, tuple, get-tuple-element, custom-call, add, "},
      {"HloModule m\nENTRY main {\n x = f32[] parameter(0)\n y = f32[] negate(z)\n}\n",
       "line 4, column 19: expected the name of an instruction defined earlier, got 'z'"},
      {"HloModule m\nENTRY main {\n x = f32[] parameter(0)\n x = f32[] negate(x)\n}\n",
       "line 4, column 2: instruction 'x' is defined twice (first at line 3)"},
      {"HloModule m\nENTRY main {\n ROOT x = f32[] parameter(0)\n ROOT y = f32[] negate(x)\n}\n",
       "line 4, column 2: expected one ROOT instruction, got a second (the first is 'x' at "
       "line 3)"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] negate(f32[8] x)\n}\n",
       "line 4, column 20: operand 'x': expected f32[4] (its shape at line 3), got f32[8]"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] negate(f32[4] 3)\n}\n",
       "line 4, column 27: expected an operand name, got '3'"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] negate(x, )\n}\n",
       "line 4, column 23: expected an operand (a name, or a shape and a name), got ')'"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] negate(x x)\n}\n",
       "line 4, column 22: expected ',' or ')', got 'x'"},
      {"HloModule m\nENTRY main {\n x = f32[4]{0,1} parameter(0)\n}\n",
       "line 3, column 12: expected a layout: a permutation of 0 to 0, minor to major (each "
       "dimension once), got '{0,1'"},
      {"HloModule m\nENTRY main {\n x = f32[2,3]{0,0} parameter(0)\n}\n",
       "line 3, column 14: expected a layout: a permutation of 0 to 1"},
      {"HloModule m\nENTRY main {\n x = f32[2,3]{1,0:T(8,128)} parameter(0)\n}\n",
       "tiling and memory spaces are not supported"},
      {"HloModule m\nENTRY main {\n x = f32[<=4] parameter(0)\n}\n",
       "line 3, column 10: expected a dimension size, got '<': dynamic dimensions are not "
       "supported"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(-1)\n}\n",
       "line 3, column 23: expected a parameter number (from 0 to"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0) y = f32[4] negate(x)\n}\n",
       "line 3, column 26: expected ',' or the end of the line, got 'y'"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] add(x)\n}\n",
       "line 4, column 13: add 'y': expected 2 operands, got 1"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] negate(x, x)\n}\n",
       "line 4, column 13: negate 'y': expected 1 operand, got 2"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[2,4] broadcast(x)\n}\n",
       "line 4, column 15: broadcast 'y': expected attribute dimensions={...}, got none"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n"
       " y = f32[2,4] broadcast(x), dimensions={1}, dimensions={1}\n}\n",
       "line 4, column 45: attribute 'dimensions' is given twice"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n"
       " y = f32[2,4] broadcast(x), dimensions=1\n}\n",
       "line 4, column 40: expected '{' starting the dimensions, got '1'"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n"
       " y = f32[4] get-tuple-element(x), index=a\n}\n",
       "line 4, column 41: expected a tuple index, got 'a'"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(1)\n}\n",
       "parameter number 1: expected each of 0 to 0 exactly once"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] parameter(0)\n}\n",
       "parameter number 0"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n y = f32[4] negate(x)\n}\n"
       "stray",
       "line 6, column 6: expected '{', got end of input"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0), sharding={\n}\n",
       "line 5, column 1: expected an instruction or '}', got end of input"},
      {"HloModule m\nENTRY main {\n x = f32[4] parameter(0)\n}\n\x01",
       "line 5, column 1: expected a computation, got byte 0x01"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    KT_PARSE_FAILS(cases[i].text, cases[i].message);
  }
  kc_program* p = NULL;
  KC_CHECK_CODE(kc_program_parse(KC_SV_LIT("HloModule m"), NULL), KC_INVALID_ARGUMENT,
                "NULL");
  KC_CHECK_CODE(kc_program_parse((kc_string_view){NULL, 3}, &p), KC_INVALID_ARGUMENT,
                "NULL");
}

/* A module whose text is `head`, `n` copies of `fill`, then `tail`;
 * malloc'd. */
static char* kt_module_with_run(const char* head, char fill, size_t n,
                                const char* tail) {
  size_t h = strlen(head), t = strlen(tail);
  char* text = malloc(h + n + t + 1);
  if (!text) return NULL;
  memcpy(text, head, h);
  memset(text + h, fill, n);
  memcpy(text + h + n, tail, t + 1);
  return text;
}

/* Parsing `text` fails; the message is short, ends with `tail` and holds
 * `needle`. */
static void kt_check_bounded_failure(const char* text, const char* needle,
                                     const char* tail) {
  kc_program* p = NULL;
  kc_status* st = kc_program_parse(kc_sv(text), &p);
  KC_CHECK(p == NULL);
  KC_CHECK_INT(kc_status_get_code(st), KC_INVALID_ARGUMENT);
  char buf[2048];
  size_t len = kc_status_format(st, buf, sizeof buf);
  kc_status_destroy(st);
  KC_CHECK(len < 2000); /* the list of supported opcodes included */
  KC_CHECK_CONTAINS(buf, needle);
  KC_CHECK(len >= strlen(tail) && strcmp(buf + len - strlen(tail), tail) == 0);
}

KC_TEST(parse_messages_bound_long_and_odd_text) {
  const size_t mb = (size_t)1 << 20;
  /* A megabyte opcode: cut in the middle, the explanation kept whole. */
  char* text = kt_module_with_run("HloModule m\nENTRY main {\n a = f32[2] parameter(0)\n"
                                  " ROOT b = f32[2] ", 'z', mb, "(a)\n}\n");
  KC_CHECK(text != NULL);
  kt_check_bounded_failure(text,
                           "line 4, column 18: instruction 'b': opcode "
                           "'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz'..."
                           "'zzzzzzzzzzzzzzzzzzzzzzzz' "
                           "(1048576 bytes) is not supported (supported: parameter, ",
                           ")");
  free(text);
  /* A megabyte instruction name, defined twice. */
  char* name = kt_module_with_run("", 'a', mb, "");
  KC_CHECK(name != NULL);
  size_t cap = 2 * mb + 256;
  text = malloc(cap);
  KC_CHECK(text != NULL);
  snprintf(text, cap,
           "HloModule m\nENTRY main {\n %s = f32[2] parameter(0)\n"
           " %s = f32[2] parameter(1)\n}\n",
           name, name);
  kt_check_bounded_failure(text, "line 4, column 2: instruction 'aaaa",
                           "(1048576 bytes) is defined twice (first at line 3)");
  /* ... used as an unknown operand, with its '%'. */
  snprintf(text, cap,
           "HloModule m\nENTRY main {\n x = f32[2] parameter(0)\n"
           " ROOT y = f32[2] negate(%%%s)\n}\n",
           name);
  kt_check_bounded_failure(text, "got '%aaaa", "'aaaaaaaaaaaaaaaaaaaaaaaa' (1048577 bytes)");
  free(text);
  free(name);
  /* Bytes that would not print are escaped. */
  KT_PARSE_FAILS("HloModule m\nENTRY main {\n x = f32[2] parameter(0)\n"
                 " y = f32[2] negate(\"a\x01\x7f" "b\\\"'\")\n}\n",
                 "got '\"a\\x01\\x7fb\\\\\"\\'\"'");
  KT_PARSE_FAILS("HloModule m\nENTRY main {\n x = f32[2] parameter(0)\n"
                 " y = f32[2] custom-call(x), custom_call_target=\"t\", "
                 "backend_config=\"\xff\\q\"\n}\n",
                 "got '\\\\q'");
  KT_PARSE_FAILS("HloModule m\nENTRY main {\n x = f32[2] parameter(0)\n"
                 " y = f32[2] negate(\"a\tb\")\n}\n",
                 "got '\"a\\tb\"'");
}

KC_TEST(compile_messages_bound_long_names) {
  /* The parser takes any length of name; what the compiler says of it
   * stays short. */
  const size_t mb = (size_t)1 << 20;
  char* target = kt_module_with_run("", 't', mb, "");
  char* name = kt_module_with_run("", 'n', mb, "");
  KC_CHECK(target != NULL && name != NULL);
  size_t cap = 2 * mb + 512;
  char* text = malloc(cap);
  KC_CHECK(text != NULL);
  snprintf(text, cap,
           "HloModule m\nENTRY main {\n x = f32[2] parameter(0)\n"
           " ROOT %s = f32[2] custom-call(x), custom_call_target=\"%s\"\n}\n",
           name, target);
  kc_program* p = kt_parse(text);
  kc_executable* exe = NULL;
  kc_status* st = kc_program_compile(p, NULL, &exe);
  KC_CHECK_INT(kc_status_get_code(st), KC_NOT_FOUND);
  char buf[4096];
  size_t len = kc_status_format(st, buf, sizeof buf);
  kc_status_destroy(st);
  KC_CHECK(len < 1024);
  KC_CHECK_CONTAINS(buf, "compiling 'm': ");
  KC_CHECK_CONTAINS(buf, "custom call 'tttt");
  KC_CHECK_CONTAINS(buf, "tttt' (1048576 bytes) (instruction 'nnnn");
  KC_CHECK_CONTAINS(buf, "nnnn' (1048576 bytes))");
  kc_program_destroy(p);
  free(text);
  free(name);
  free(target);
}

KC_TEST(parse_locations_reach_compile_errors) {
  /* Shapes that do not agree are the compiler's to find; it cites the line
   * the parser recorded. */
  kc_program* p = kt_parse(
      "HloModule loc\n"
      "ENTRY main {\n"
      "  a = f32[4] parameter(0)\n"
      "  b = f32[8] parameter(1)\n"
      "\n"
      "  ROOT c = f32[4] add(a, b)\n"
      "}\n");
  kc_executable* exe = NULL;
  KC_CHECK_CODE(kc_program_compile(p, NULL, &exe), KC_INVALID_ARGUMENT, "'c' (line 6)");
  kc_program_destroy(p);
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
       "fusion 'y': expected the shape of computation 'c' (f32[4], its ROOT 'n' at line 4), "
       "got f32[2,2]"},
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

