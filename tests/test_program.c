/* Programs built with the C builder: compile checks, each custom-call
 * convention, tuples, aliasing, dead code, failures, threads. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "kt_program.h"

/* ---- targets ------------------------------------------------------------------- */

/* The seed's A[i] = B[i % 128] + C[i], in each host convention. */
static void seed_add(void* out, const void** ins) {
  float* a = out;
  const float* b = ins[0];
  const float* c = ins[1];
  for (int i = 0; i < 2048; ++i) a[i] = b[i % 128] + c[i];
}

static void seed_add_status(void* out, const void** ins, kc_xcall_status* st) {
  (void)st;
  seed_add(out, ins);
}

static void seed_add_unified(void* out, const void** ins, const char* opaque,
                             size_t opaque_len, kc_xcall_status* st) {
  /* The opaque bytes carry the element count as text. */
  char text[16] = {0};
  memcpy(text, opaque, opaque_len < 15 ? opaque_len : 15);
  if (atoi(text) != 2048) {
    kc_xcall_status_set_failure(st, "bad opaque", 10);
    return;
  }
  seed_add(out, ins);
}

static int kt_calls;
static void count_call(void* out, const void** ins) {
  (void)out;
  (void)ins;
  __atomic_fetch_add(&kt_calls, 1, __ATOMIC_RELAXED);
}

static void always_fails(void* out, const void** ins, kc_xcall_status* st) {
  (void)out;
  (void)ins;
  static const char msg[] = "the device caught fire";
  kc_xcall_status_set_failure(st, msg, sizeof msg - 1);
}

static kc_status* kt_register_seed(void) {
  KC_RETURN_IF_ERROR(kc_xcall_register(KC_SV_LIT("seed_add"), KC_PLATFORM_HOST,
                                       KC_XCALL_API_ORIGINAL, (void (*)(void))seed_add, 0),
                     "seed_add");
  KC_RETURN_IF_ERROR(kc_xcall_register(KC_SV_LIT("seed_add_status"), KC_PLATFORM_HOST,
                                       KC_XCALL_API_STATUS_RETURNING,
                                       (void (*)(void))seed_add_status, 0),
                     "seed_add_status");
  KC_RETURN_IF_ERROR(kc_xcall_register(KC_SV_LIT("seed_add_unified"), KC_PLATFORM_HOST,
                                       KC_XCALL_API_STATUS_RETURNING_UNIFIED,
                                       (void (*)(void))seed_add_unified, 0),
                     "seed_add_unified");
  KC_RETURN_IF_ERROR(kc_xcall_register(KC_SV_LIT("count_call"), KC_PLATFORM_HOST,
                                       KC_XCALL_API_ORIGINAL, (void (*)(void))count_call, 0),
                     "count_call");
  return kc_xcall_register(KC_SV_LIT("always_fails"), KC_PLATFORM_HOST,
                           KC_XCALL_API_STATUS_RETURNING,
                           (void (*)(void))always_fails, 0);
}

/* The seed program: two parameters and one custom call to `target`. */
static kc_program* kt_seed_program(const char* target, int32_t api,
                                   const char* opaque) {
  kc_program_builder* b = NULL;
  kc_program* p = NULL;
  kc_shape* s128 = KT_F32(1, (int64_t)128);
  kc_shape* s2048 = KT_F32(1, (int64_t)2048);
  int32_t p0 = -1, p1 = -1, cc = -1;
  kc_status* st = kc_program_builder_create(KC_SV_LIT("seed"), &b);
  if (!st) st = kc_program_builder_add_parameter(b, 0, s128, KC_SV_LIT("p0"), &p0);
  if (!st) st = kc_program_builder_add_parameter(b, 1, s2048, KC_SV_LIT("p1"), &p1);
  int32_t ops[2] = {p0, p1};
  kc_custom_call_desc d = kt_call(target, ops, 2, s2048, api);
  if (opaque) {
    d.opaque = opaque;
    d.opaque_size = strlen(opaque);
  }
  if (!st) st = kc_program_builder_add_custom_call(b, &d, KC_SV_LIT("cc"), &cc);
  if (!st) {
    st = kc_program_builder_finish(b, &p);
    b = NULL;
  }
  kc_program_builder_destroy(b);
  kc_shape_destroy(s128);
  kc_shape_destroy(s2048);
  if (st) kc_status_destroy(st);
  return p;
}

static void kt_check_seed(const char* target, int32_t api, const char* opaque) {
  KC_CHECK_OK(kt_register_seed());
  kc_program* p = kt_seed_program(target, api, opaque);
  KC_CHECK(p != NULL);
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile(p, &exe));
  kc_program_destroy(p); /* the executable keeps what it needs */
  kc_tensor* b = kt_iota(128, 1.0f);
  kc_tensor* c = kt_iota(2048, 0.5f);
  const DLTensor* in[2] = {kc_tensor_get_dltensor(b), kc_tensor_get_dltensor(c)};
  kc_tensor* out = NULL;
  kc_execute_options o = kt_opts();
  KC_CHECK_OK(kc_executable_execute(exe, in, 2, &o, &out));
  const float* a = kt_f32(out);
  for (int i = 0; i < 2048; ++i) {
    if (a[i] != (float)(i % 128) + 1.0f + (float)i + 0.5f) {
      KC_CHECK_INT(i, -1);
      break;
    }
  }
  kc_object_release(KC_OBJECT(out));
  kc_object_release(KC_OBJECT(b));
  kc_object_release(KC_OBJECT(c));
  kc_executable_destroy(exe);
}

/* ---- the conventions -------------------------------------------------------------- */

KC_TEST(program_seed_original) { kt_check_seed("seed_add", KC_XCALL_API_ORIGINAL, NULL); }

KC_TEST(program_seed_status_returning) {
  kt_check_seed("seed_add_status", KC_XCALL_API_STATUS_RETURNING, NULL);
}

KC_TEST(program_seed_unified_reads_opaque) {
  kt_check_seed("seed_add_unified", KC_XCALL_API_STATUS_RETURNING_UNIFIED, "2048");
}

KC_TEST(program_failure_stops_run_and_frees) {
  KC_CHECK_OK(kt_register_seed());
  kc_program_builder* b = NULL;
  kc_shape* s = KT_F32(1, (int64_t)4);
  int32_t x, a, f, z;
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("failing"), &b));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, s, KC_SV_LIT("x"), &x));
  int32_t two[2] = {x, x};
  KC_CHECK_OK(kc_program_builder_add_op(b, KC_OP_ADD, s, two, 2, KC_SV_LIT("a"), &a));
  kc_custom_call_desc d = kt_call("always_fails", &a, 1, s, KC_XCALL_API_STATUS_RETURNING);
  KC_CHECK_OK(kc_program_builder_add_custom_call(b, &d, KC_SV_LIT("boom"), &f));
  d = kt_call("count_call", &f, 1, s, KC_XCALL_API_ORIGINAL);
  KC_CHECK_OK(kc_program_builder_add_custom_call(b, &d, KC_SV_LIT("after"), &z));
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile(p, &exe));
  kc_tensor* in = kt_iota(4, 0);
  const DLTensor* ins[1] = {kc_tensor_get_dltensor(in)};
  kc_tensor* out = (kc_tensor*)(uintptr_t)1; /* must come back NULL */
  kc_execute_options o = kt_opts();
  kt_calls = 0;
  KC_CHECK_CODE(kc_executable_execute(exe, ins, 1, &o, &out), KC_INTERNAL,
                "in custom call 'always_fails' (instruction 'boom')",
                "the device caught fire");
  KC_CHECK(out == NULL);
  KC_CHECK_INT(kt_calls, 0); /* nothing after the failure ran */
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  kc_object_release(KC_OBJECT(in));
  kc_shape_destroy(s);
  KC_CHECK_INT(kt_live_blocks(), 0);
}

/* A typed handler: y = x * scale + bias[] (attrs), with state counting
 * executions and scratch it must find zero-initialised per call. */
typedef struct kt_typed_state {
  int64_t executions;
} kt_typed_state;

static void kt_state_free(void* state) { free(state); }

static kc_status* kt_scale_bias(kc_xcall_frame* f) {
  if (f->stage == KC_XCALL_STAGE_INSTANTIATE) {
    f->state = calloc(1, sizeof(kt_typed_state));
    f->state_deleter = kt_state_free;
    f->scratch_bytes = 256;
    return f->state ? NULL : kc_status_create(KC_RESOURCE_EXHAUSTED, "no state");
  }
  kt_typed_state* state = f->state;
  __atomic_fetch_add(&state->executions, 1, __ATOMIC_RELAXED);
  if (!f->scratch) return kc_status_create(KC_INTERNAL, "no scratch");
  float scale = f->attrs[0].v.f32;
  const double* bias = f->attrs[1].v.array.data;
  const float* x = f->args[0].data;
  float* y = f->results[0].data;
  int64_t n = f->args[0].shape[0];
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale + (float)bias[0];
  return NULL;
}

static kc_status* kt_register_typed(void) {
  static const kc_xcall_buffer_spec args[] = {{{kDLFloat, 32, 1}, 1}};
  static const kc_xcall_buffer_spec results[] = {{{kDLFloat, 32, 1}, 1}};
  static const kc_xcall_attr_spec attrs[] = {{"scale", KC_ATTR_F32, 0},
                                             {"bias", KC_ATTR_ARRAY, KC_ATTR_F64}};
  kc_xcall_signature sig = {.struct_size = sizeof sig, .num_args = 1, .args = args,
                            .num_results = 1, .results = results,
                            .num_attrs = 2, .attrs = attrs};
  return kc_xcall_register_typed(KC_SV_LIT("scale_bias"), KC_PLATFORM_HOST, &sig,
                                 kt_scale_bias, NULL, NULL, 0);
}

static kc_program* kt_typed_program(const kc_attr* attrs, size_t n_attrs,
                                    int32_t api, kc_status** out_st) {
  kc_program_builder* b = NULL;
  kc_shape* s = KT_F32(1, (int64_t)8);
  int32_t x, y;
  kc_program* p = NULL;
  kc_status* st = kc_program_builder_create(KC_SV_LIT("typed"), &b);
  if (!st) st = kc_program_builder_add_parameter(b, 0, s, KC_SV_LIT("x"), &x);
  kc_attr_dict dict = {n_attrs, attrs};
  kc_custom_call_desc d = kt_call("scale_bias", &x, 1, s, api);
  d.attrs = &dict;
  if (!st) st = kc_program_builder_add_custom_call(b, &d, KC_SV_LIT("sb"), &y);
  if (!st) {
    st = kc_program_builder_finish(b, &p);
    b = NULL;
  }
  kc_program_builder_destroy(b);
  kc_shape_destroy(s);
  *out_st = st;
  return p;
}

KC_TEST(program_typed_handler) {
  KC_CHECK_OK(kt_register_typed());
  static const double bias[] = {0.25};
  kc_attr attrs[2];
  memset(attrs, 0, sizeof attrs);
  attrs[0].name = KC_SV_LIT("bias"); /* out of order on purpose */
  attrs[0].type = KC_ATTR_ARRAY;
  attrs[0].elem_type = KC_ATTR_F64;
  attrs[0].v.array.data = bias;
  attrs[0].v.array.count = 1;
  attrs[1].name = KC_SV_LIT("scale");
  attrs[1].type = KC_ATTR_F32;
  attrs[1].v.f32 = 2.0f;
  kc_status* st = NULL;
  kc_program* p = kt_typed_program(attrs, 2, KC_XCALL_API_TYPED, &st);
  KC_CHECK_OK(st);
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile(p, &exe));
  kc_tensor* x = kt_iota(8, 1.0f);
  const DLTensor* ins[1] = {kc_tensor_get_dltensor(x)};
  kc_execute_options o = kt_opts();
  for (int run = 0; run < 3; ++run) {
    kc_tensor* y = NULL;
    KC_CHECK_OK(kc_executable_execute(exe, ins, 1, &o, &y));
    for (int i = 0; i < 8; ++i) KC_CHECK(kt_f32(y)[i] == (1.0f + (float)i) * 2.0f + 0.25f);
    kc_object_release(KC_OBJECT(y));
  }
  kc_executable_info info;
  info.struct_size = sizeof info;
  kc_executable_query(exe, &info);
  KC_CHECK(info.temp_bytes >= 256); /* the scratch is planned */
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  kc_object_release(KC_OBJECT(x));
}

KC_TEST(program_typed_signature_errors) {
  KC_CHECK_OK(kt_register_typed());
  kc_attr scale;
  memset(&scale, 0, sizeof scale);
  scale.name = KC_SV_LIT("scale");
  scale.type = KC_ATTR_F64; /* declared f32 */
  scale.v.f64 = 2.0;
  kc_status* st = NULL;
  kc_program* p = kt_typed_program(&scale, 1, KC_XCALL_API_TYPED, &st);
  KC_CHECK_OK(st);
  kc_executable* exe = NULL;
  KC_CHECK_CODE(kt_compile(p, &exe), KC_INVALID_ARGUMENT, "instruction 'sb'",
                "attribute 'scale': expected f32, got f64");
  kc_program_destroy(p);
  scale.type = KC_ATTR_F32;
  p = kt_typed_program(&scale, 1, KC_XCALL_API_TYPED, &st);
  KC_CHECK_OK(st);
  KC_CHECK_CODE(kt_compile(p, &exe), KC_INVALID_ARGUMENT,
                "attribute 'bias': expected array of f64, got none");
  kc_program_destroy(p);
  /* Called with a legacy API: the registration says TYPED. */
  p = kt_typed_program(NULL, 0, KC_XCALL_API_ORIGINAL, &st);
  KC_CHECK_OK(st);
  KC_CHECK_CODE(kt_compile(p, &exe), KC_FAILED_PRECONDITION, "API ORIGINAL",
                "registered for TYPED");
  KC_CHECK(exe == NULL);
  kc_program_destroy(p);
}

/* Every form a buffer spec takes, said the same way when a buffer does
 * not match it. */
static kc_status* kt_sig_handler(kc_xcall_frame* f) {
  (void)f;
  return NULL;
}

KC_TEST(program_typed_buffer_mismatches_say_what_was_expected) {
  static const kc_xcall_buffer_spec args[] = {{{kDLFloat, 32, 1}, 0},
                                              {{kDLFloat, 32, 1}, -1},
                                              {{0, 0, 0}, 1},
                                              {{0, 0, 0}, -1}};
  static const kc_xcall_buffer_spec results[] = {{{kDLInt, 64, 1}, 2}};
  kc_xcall_signature sig = {.struct_size = sizeof sig, .num_args = 4, .args = args,
                            .num_results = 1, .results = results};
  KC_CHECK_OK(kc_xcall_register_typed(KC_SV_LIT("kt.sig"), KC_PLATFORM_HOST, &sig,
                                      kt_sig_handler, NULL, NULL, 0));
  char buf[256];
  KC_CHECK(kc_xcall_signature_format(&sig, buf, sizeof buf) < sizeof buf);
  KC_CHECK_STR(buf, "(f32[], f32[*], any[?], any[*]) -> (i64[?,?])");
  static const struct {
    const char* shapes[4];
    const char* result;
    const char* message;
  } cases[] = {
      {{"f64[2]", "f32[2]", "f32[2]", "u8[]"}, "s64[2,2]",
       "argument 0: expected f32 of rank 0, got f64[2]"},
      {{"f32[]", "f64[2]", "f32[2]", "u8[]"}, "s64[2,2]",
       "argument 1: expected f32 of any rank, got f64[2]"},
      {{"f32[]", "f32[2,3]", "f32[2,3]", "u8[]"}, "s64[2,2]",
       "argument 2: expected any dtype of rank 1, got f32[2,3]"},
      {{"f32[]", "f32[]", "s8[7]", "u8[]"}, "s64[2]",
       "result 0: expected s64 of rank 2, got s64[2]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char text[512];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY main {\n a = %s parameter(0)\n b = %s parameter(1)\n"
             " c = %s parameter(2)\n d = %s parameter(3)\n"
             " ROOT r = %s custom-call(a, b, c, d), custom_call_target=\"kt.sig\", "
             "api_version=API_VERSION_TYPED_FFI\n}\n",
             cases[i].shapes[0], cases[i].shapes[1], cases[i].shapes[2],
             cases[i].shapes[3], cases[i].result);
    kc_program* p = NULL;
    KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
    kc_executable* exe = NULL;
    KC_CHECK_CODE(kt_compile(p, &exe), KC_INVALID_ARGUMENT, "instruction 'r' (line 7)",
                  "custom call 'kt.sig': ", cases[i].message);
    KC_CHECK(exe == NULL);
    kc_program_destroy(p);
  }
}

KC_TEST(program_unknown_target_suggests) {
  KC_CHECK_OK(kt_register_seed());
  kc_program* p = kt_seed_program("seed_ad", KC_XCALL_API_ORIGINAL, NULL);
  kc_executable* exe = NULL;
  KC_CHECK_CODE(kt_compile(p, &exe), KC_NOT_FOUND, "seed_ad@Host",
                "did you mean 'seed_add@Host'", "instruction 'cc'");
  kc_program_destroy(p);
  p = kt_seed_program("seed_add", KC_XCALL_API_ORIGINAL, NULL);
  /* No backend is named here (the runner's process has not set
   * KCALL_CUDA_BACKEND to a working one): compiling for CUDA is refused. */
  setenv("KCALL_CUDA_BACKEND", "/nonexistent/libkcall_cuda.so", 1);
  kc_compile_options co = {.struct_size = sizeof co, .platform = KC_PLATFORM_CUDA};
  KC_CHECK_CODE(kc_program_compile(p, &co, &exe), KC_FAILED_PRECONDITION, "no CUDA device");
  kc_program_destroy(p);
}

/* ---- tuples ---------------------------------------------------------------------- */

/* Operand (f32[2], (f32[3], (f32[4]))) three deep; result (f32[9], f32[16])
 * whose second element is scratch: out[0] = the nine operand values. */
static void nested(void* out, const void** ins) {
  void** root = (void**)(uintptr_t)ins[0];
  const float* a = root[0];
  void** mid = root[1];
  const float* b = mid[0];
  void** deep = mid[1];
  const float* c = deep[0];
  void** res = out;
  float* dst = res[0];
  float* scratch = res[1];
  for (int i = 0; i < 16; ++i) scratch[i] = -1; /* writable temp memory */
  for (int i = 0; i < 2; ++i) dst[i] = a[i];
  for (int i = 0; i < 3; ++i) dst[2 + i] = b[i];
  for (int i = 0; i < 4; ++i) dst[5 + i] = c[i];
}

KC_TEST(program_tuples_three_deep) {
  KC_CHECK_OK(kc_xcall_register(KC_SV_LIT("nested"), KC_PLATFORM_HOST,
                                KC_XCALL_API_ORIGINAL, (void (*)(void))nested, 0));
  kc_shape* s2 = KT_F32(1, (int64_t)2);
  kc_shape* s3 = KT_F32(1, (int64_t)3);
  kc_shape* s4 = KT_F32(1, (int64_t)4);
  kc_shape* s9 = KT_F32(1, (int64_t)9);
  kc_shape* s16 = KT_F32(1, (int64_t)16);
  kc_shape* deep = kt_tuple(1, s4);
  kc_shape* mid = kt_tuple(2, s3, deep);
  kc_shape* root = kt_tuple(2, s2, mid);
  kc_shape* res = kt_tuple(2, s9, s16);
  KC_CHECK_INT((int64_t)kc_shape_get_leaf_count(root), 3);
  KC_CHECK(kc_shape_get_leaf(root, 2) && kc_shape_get_dims(kc_shape_get_leaf(root, 2))[0] == 4);
  char text[128];
  kc_shape_format(root, text, sizeof text);
  KC_CHECK_STR(text, "(f32[2], (f32[3], (f32[4])))");

  kc_program_builder* b = NULL;
  int32_t p0, cc, gte;
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("tuples"), &b));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, root, KC_SV_LIT("p0"), &p0));
  kc_custom_call_desc d = kt_call("nested", &p0, 1, res, KC_XCALL_API_ORIGINAL);
  KC_CHECK_OK(kc_program_builder_add_custom_call(b, &d, KC_SV_LIT("cc"), &cc));
  KC_CHECK_OK(kc_program_builder_add_get_tuple_element(b, cc, 0, KC_SV_LIT("gte"), &gte));
  KC_CHECK_CODE(kc_program_builder_add_get_tuple_element(b, cc, 2, KC_SV_LIT("bad"), &gte),
                KC_INVALID_ARGUMENT, "index 2 is not an element of (f32[9], f32[16])");
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile(p, &exe));
  kc_executable_info info;
  info.struct_size = sizeof info;
  kc_executable_query(exe, &info);
  KC_CHECK_INT((int64_t)info.num_inputs, 3);
  KC_CHECK_INT((int64_t)info.num_outputs, 1);
  kc_tensor* a = kt_iota(2, 0);
  kc_tensor* bb = kt_iota(3, 10);
  kc_tensor* c = kt_iota(4, 20);
  const DLTensor* ins[3] = {kc_tensor_get_dltensor(a), kc_tensor_get_dltensor(bb),
                            kc_tensor_get_dltensor(c)};
  kc_tensor* out = NULL;
  kc_execute_options o = kt_opts();
  KC_CHECK_OK(kc_executable_execute(exe, ins, 3, &o, &out));
  static const float want[9] = {0, 1, 10, 11, 12, 20, 21, 22, 23};
  for (int i = 0; i < 9; ++i) KC_CHECK(kt_f32(out)[i] == want[i]);
  kc_object_release(KC_OBJECT(out));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  kc_object_release(KC_OBJECT(a));
  kc_object_release(KC_OBJECT(bb));
  kc_object_release(KC_OBJECT(c));
  kc_shape* all[] = {s2, s3, s4, s9, s16, deep, mid, root, res};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) kc_shape_destroy(all[i]);
}

/* ---- aliasing and dead code ------------------------------------------------------- */

static void add_one_in_place(void* out, const void** ins) {
  float* y = out;
  const float* x = ins[0];
  for (int i = 0; i < 4; ++i) y[i] = x[i] + 1; /* x may be y */
}

/* y = cc(src) with output {} aliased to operand 0. */
static kc_program* kt_alias_program(bool from_temp, bool side_effect_extra) {
  kc_program_builder* b = NULL;
  kc_shape* s = KT_F32(1, (int64_t)4);
  int32_t x = -1, src = -1, y = -1, extra = -1;
  kc_program* p = NULL;
  kc_status* st = kc_program_builder_create(KC_SV_LIT("alias"), &b);
  if (!st) st = kc_program_builder_add_parameter(b, 0, s, KC_SV_LIT("x"), &x);
  int32_t two[2] = {x, x};
  src = x;
  if (!st && from_temp) {
    st = kc_program_builder_add_op(b, KC_OP_ADD, s, two, 2, KC_SV_LIT("twice"), &src);
  }
  kc_output_operand_alias alias = {NULL, 0, 0, NULL, 0};
  kc_custom_call_desc d = kt_call("add_one", &src, 1, s, KC_XCALL_API_ORIGINAL);
  d.aliases = &alias;
  d.num_aliases = 1;
  if (!st) st = kc_program_builder_add_custom_call(b, &d, KC_SV_LIT("inc"), &y);
  if (!st && side_effect_extra) {
    kc_custom_call_desc e = kt_call("count_call", &x, 1, s, KC_XCALL_API_ORIGINAL);
    e.has_side_effect = true;
    st = kc_program_builder_add_custom_call(b, &e, KC_SV_LIT("effect"), &extra);
    kc_custom_call_desc g = kt_call("count_call", &x, 1, s, KC_XCALL_API_ORIGINAL);
    if (!st) st = kc_program_builder_add_custom_call(b, &g, KC_SV_LIT("dead"), &extra);
    if (!st) st = kc_program_builder_set_root(b, y);
  }
  if (!st) {
    st = kc_program_builder_finish(b, &p);
    b = NULL;
  }
  kc_program_builder_destroy(b);
  kc_shape_destroy(s);
  if (st) kc_status_destroy(st);
  return p;
}

static void kt_run_alias(bool from_temp, bool extra, float first) {
  kc_program* p = kt_alias_program(from_temp, extra);
  KC_CHECK(p != NULL);
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile(p, &exe));
  kc_tensor* x = kt_iota(4, 1.0f);
  const DLTensor* ins[1] = {kc_tensor_get_dltensor(x)};
  kc_tensor* y = NULL;
  kc_execute_options o = kt_opts();
  kt_calls = 0;
  KC_CHECK_OK(kc_executable_execute(exe, ins, 1, &o, &y));
  KC_CHECK(kt_f32(y)[0] == first);
  KC_CHECK(kt_f32(x)[0] == 1.0f); /* the caller's input is never written */
  if (extra) {
    KC_CHECK_INT(kt_calls, 1); /* the side effect ran, the dead call did not */
    kc_executable_info info;
    info.struct_size = sizeof info;
    kc_executable_query(exe, &info);
    KC_CHECK_INT((int64_t)info.num_instructions, 4);
    KC_CHECK_INT((int64_t)info.num_live_instructions, 3);
  }
  kc_object_release(KC_OBJECT(y));
  kc_object_release(KC_OBJECT(x));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

KC_TEST(program_alias_in_place_and_copy) {
  KC_CHECK_OK(kc_xcall_register(KC_SV_LIT("add_one"), KC_PLATFORM_HOST,
                                KC_XCALL_API_ORIGINAL, (void (*)(void))add_one_in_place, 0));
  KC_CHECK_OK(kt_register_seed());
  kt_run_alias(false, false, 2.0f); /* a parameter: copied in first */
  kt_run_alias(true, false, 3.0f);  /* a dying temporary: updated in place */
  kt_run_alias(false, true, 2.0f);  /* side effects survive dead-code removal */
}

KC_TEST(program_alias_errors) {
  KC_CHECK_OK(kc_xcall_register(KC_SV_LIT("add_one"), KC_PLATFORM_HOST,
                                KC_XCALL_API_ORIGINAL, (void (*)(void))add_one_in_place, 0));
  kc_program_builder* b = NULL;
  kc_shape* s = KT_F32(1, (int64_t)4);
  kc_shape* t = KT_F32(1, (int64_t)5);
  int32_t x, y;
  KC_CHECK_OK(kc_program_builder_create(KC_SV_LIT("alias_bad"), &b));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, t, KC_SV_LIT("x"), &x));
  kc_output_operand_alias alias = {NULL, 0, 0, NULL, 0};
  kc_custom_call_desc d = kt_call("add_one", &x, 1, s, KC_XCALL_API_ORIGINAL);
  d.aliases = &alias;
  d.num_aliases = 1;
  KC_CHECK_OK(kc_program_builder_add_custom_call(b, &d, KC_SV_LIT("inc"), &y));
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  kc_executable* exe = NULL;
  KC_CHECK_CODE(kt_compile(p, &exe), KC_INVALID_ARGUMENT,
                "output_to_operand_aliasing 0", "same shape", "instruction 'inc'");
  kc_program_destroy(p);
  kc_shape_destroy(s);
  kc_shape_destroy(t);
}

KC_TEST(program_input_checks) {
  KC_CHECK_OK(kt_register_seed());
  kc_program* p = kt_seed_program("seed_add", KC_XCALL_API_ORIGINAL, NULL);
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile(p, &exe));
  kc_tensor* b = kt_iota(128, 0);
  kc_tensor* wrong = kt_iota(100, 0);
  const DLTensor* ins[2] = {kc_tensor_get_dltensor(b), kc_tensor_get_dltensor(wrong)};
  kc_tensor* out = NULL;
  kc_execute_options o = kt_opts();
  KC_CHECK_CODE(kc_executable_execute(exe, ins, 1, &o, &out), KC_INVALID_ARGUMENT,
                "expected 2 inputs, got 1");
  KC_CHECK_CODE(kc_executable_execute(exe, ins, 2, &o, &out), KC_INVALID_ARGUMENT,
                "input 1: expected f32[2048], got f32[100]");
  DLTensor gpu = *kc_tensor_get_dltensor(b);
  gpu.device.device_type = kDLCUDA;
  ins[0] = &gpu;
  KC_CHECK_CODE(kc_executable_execute(exe, ins, 2, &o, &out), KC_INVALID_ARGUMENT,
                "input 0: expected f32[128], got a tensor on another device");
  KC_CHECK(out == NULL);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  kc_object_release(KC_OBJECT(b));
  kc_object_release(KC_OBJECT(wrong));
}

/* Allocation failures anywhere in compile and execute: a clean status and
 * nothing left behind. */
KC_TEST(program_execute_out_of_memory) {
  KC_CHECK_OK(kt_register_seed());
  kc_program* p = kt_seed_program("seed_add", KC_XCALL_API_ORIGINAL, NULL);
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile(p, &exe));
  kc_tensor* b = kt_iota(128, 0);
  kc_tensor* c = kt_iota(2048, 0);
  const DLTensor* ins[2] = {kc_tensor_get_dltensor(b), kc_tensor_get_dltensor(c)};
  int64_t before = kt_live_blocks();
  int failures = 0;
  for (int64_t k = 0; k < 8; ++k) {
    kc_executable* fresh = NULL;
    KC_CHECK_OK(kt_compile(p, &fresh)); /* a fresh run pool each time */
    kc_counting_allocator_set_fail_after(kt_counter(), k);
    kc_tensor* out = NULL;
    kc_execute_options o = kt_opts();
    kc_status* st = kc_executable_execute(fresh, ins, 2, &o, &out);
    kc_counting_allocator_set_fail_after(kt_counter(), -1);
    if (st) {
      KC_CHECK_INT(kc_status_get_code(st), KC_RESOURCE_EXHAUSTED);
      KC_CHECK(out == NULL);
      kc_status_destroy(st);
      failures++;
    } else {
      kc_object_release(KC_OBJECT(out));
    }
    kc_executable_destroy(fresh);
    KC_CHECK_INT(kt_live_blocks(), before);
  }
  KC_CHECK(failures > 0);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  kc_object_release(KC_OBJECT(b));
  kc_object_release(KC_OBJECT(c));
}

/* ---- threads ---------------------------------------------------------------------- */

typedef struct kt_thread_ctx {
  const kc_executable* exe;
  float base;
  int ok;
} kt_thread_ctx;

static void* kt_thread_main(void* arg) {
  kt_thread_ctx* ctx = arg;
  kc_tensor* b = kt_iota(128, ctx->base);
  kc_tensor* c = kt_iota(2048, 0);
  const DLTensor* ins[2] = {kc_tensor_get_dltensor(b), kc_tensor_get_dltensor(c)};
  ctx->ok = 1;
  for (int run = 0; run < 50 && ctx->ok; ++run) {
    kc_tensor* out = NULL;
    kc_execute_options o = kt_opts();
    kc_status* st = kc_executable_execute(ctx->exe, ins, 2, &o, &out);
    if (st) {
      kc_status_destroy(st);
      ctx->ok = 0;
      break;
    }
    for (int i = 0; i < 2048; i += 97) {
      if (kt_f32(out)[i] != ctx->base + (float)(i % 128) + (float)i) ctx->ok = 0;
    }
    kc_object_release(KC_OBJECT(out));
  }
  kc_object_release(KC_OBJECT(b));
  kc_object_release(KC_OBJECT(c));
  return NULL;
}

KC_TEST(program_four_threads_one_executable) {
  KC_CHECK_OK(kt_register_seed());
  kc_program* p = kt_seed_program("seed_add", KC_XCALL_API_ORIGINAL, NULL);
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile(p, &exe));
  pthread_t threads[4];
  kt_thread_ctx ctx[4];
  for (int i = 0; i < 4; ++i) {
    ctx[i].exe = exe;
    ctx[i].base = (float)(1000 * i);
    ctx[i].ok = 0;
    KC_CHECK_INT(pthread_create(&threads[i], NULL, kt_thread_main, &ctx[i]), 0);
  }
  for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
  for (int i = 0; i < 4; ++i) KC_CHECK_INT(ctx[i].ok, 1);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

/* ---- registry ---------------------------------------------------------------------- */

KC_TEST(xcall_registry_rules) {
  KC_CHECK_OK(kt_register_seed());
  KC_CHECK_CODE(kc_xcall_register(KC_SV_LIT("seed_add"), KC_PLATFORM_HOST,
                                  KC_XCALL_API_ORIGINAL, (void (*)(void))seed_add, 0),
                KC_ALREADY_EXISTS, "seed_add@Host");
  /* Another platform is another target. */
  KC_CHECK_OK(kc_xcall_register(KC_SV_LIT("seed_add"), KC_PLATFORM_CUDA,
                                KC_XCALL_API_ORIGINAL, (void (*)(void))seed_add, 0));
  KC_CHECK_OK(kc_xcall_register(KC_SV_LIT("__gpu$xla.thing"), KC_PLATFORM_HOST,
                                KC_XCALL_API_ORIGINAL, (void (*)(void))seed_add, 0));
  KC_CHECK_CODE(kc_xcall_register(KC_SV_LIT("x"), KC_PLATFORM_CUDA,
                                  KC_XCALL_API_STATUS_RETURNING_UNIFIED,
                                  (void (*)(void))seed_add, 0),
                KC_INVALID_ARGUMENT, "host convention");
  KC_CHECK_CODE(kc_xcall_register(KC_SV_LIT("bad name"), KC_PLATFORM_HOST,
                                  KC_XCALL_API_ORIGINAL, (void (*)(void))seed_add, 0),
                KC_INVALID_ARGUMENT, "byte 3");
  KC_CHECK_CODE(kc_xcall_register(KC_SV_LIT("x"), KC_PLATFORM_HOST, KC_XCALL_API_TYPED,
                                  (void (*)(void))seed_add, 0),
                KC_INVALID_ARGUMENT, "kc_xcall_register_typed");
  kc_platform pl;
  KC_CHECK_OK(kc_platform_parse(KC_SV_LIT("gpu"), &pl));
  KC_CHECK_INT(pl, KC_PLATFORM_CUDA);
  KC_CHECK_OK(kc_platform_parse(KC_SV_LIT("HOST"), &pl));
  KC_CHECK_INT(pl, KC_PLATFORM_HOST);
  KC_CHECK_CODE(kc_platform_parse(KC_SV_LIT("tpu"), &pl), KC_INVALID_ARGUMENT, "'tpu'");
  kc_xcall_target_desc desc;
  desc.struct_size = sizeof desc;
  KC_CHECK_OK(kc_xcall_lookup(KC_SV_LIT("seed_add_status"), KC_PLATFORM_HOST, &desc));
  KC_CHECK_INT(desc.api, KC_XCALL_API_STATUS_RETURNING);
  KC_CHECK(desc.signature == NULL);
  KC_CHECK_OK(kt_register_typed());
  KC_CHECK_OK(kc_xcall_lookup(KC_SV_LIT("scale_bias"), KC_PLATFORM_HOST, &desc));
  char text[128];
  kc_xcall_signature_format(desc.signature, text, sizeof text);
  KC_CHECK_STR(text, "(f32[?]) -> (f32[?]) {scale: f32, bias: array<f64>}");
  kc_array* names = NULL;
  KC_CHECK_OK(kc_xcall_registry_list(kt_alloc(), &names));
  KC_CHECK_INT((int64_t)kc_array_get_size(names), 8);
  kc_string_view first;
  KC_CHECK(kc_any_get_string(kc_array_get_item(names, 0), &first));
  KC_CHECK(kc_sv_equal(first, KC_SV_LIT("__gpu$xla.thing@Host")));
  kc_object_release(KC_OBJECT(names));
}

static int kt_user_freed;
static void kt_free_user(void* user) {
  (void)user;
  kt_user_freed++;
}

KC_TEST(xcall_typed_registration_errors_free_user) {
  kt_user_freed = 0;
  kc_xcall_attr_spec bad_attr = {NULL, KC_ATTR_F32, 0};
  kc_xcall_signature sig = {.struct_size = sizeof sig, .num_attrs = 1, .attrs = &bad_attr};
  KC_CHECK_CODE(kc_xcall_register_typed(KC_SV_LIT("t"), KC_PLATFORM_HOST, &sig,
                                        kt_scale_bias, &kt_user_freed, kt_free_user, 0),
                KC_INVALID_ARGUMENT, "attribute 0");
  KC_CHECK_INT(kt_user_freed, 1);
  sig.num_attrs = 0;
  sig.num_args = -1;
  KC_CHECK_CODE(kc_xcall_register_typed(KC_SV_LIT("t"), KC_PLATFORM_HOST, &sig,
                                        kt_scale_bias, &kt_user_freed, kt_free_user, 0),
                KC_INVALID_ARGUMENT, "negative");
  KC_CHECK_INT(kt_user_freed, 2);
  sig.num_args = 0;
  KC_CHECK_OK(kc_xcall_register_typed(KC_SV_LIT("t"), KC_PLATFORM_HOST, &sig,
                                      kt_scale_bias, &kt_user_freed, kt_free_user, 0));
  KC_CHECK_INT(kt_user_freed, 2);
  kc_xcall_registry_reset();
  KC_CHECK_INT(kt_user_freed, 3);
}
