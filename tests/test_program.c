/* Programs built with the C builder: compile checks, each custom-call
 * convention, tuples, aliasing, dead code, failures, threads. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "test.h"

/* ---- helpers ------------------------------------------------------------------- */

static kc_shape* kt_array(uint8_t code, uint8_t bits, int32_t rank, ...) {
  int64_t dims[8] = {0};
  va_list ap;
  va_start(ap, rank);
  for (int32_t i = 0; i < rank; ++i) dims[i] = va_arg(ap, int64_t);
  va_end(ap);
  kc_shape* s = NULL;
  kc_status* st = kc_shape_create_array(kc_dtype_make(code, bits, 1), dims, rank, &s);
  if (st) kc_status_destroy(st);
  return s;
}
#define KT_F32(...) kt_array(kDLFloat, 32, __VA_ARGS__)

static kc_shape* kt_tuple(size_t n, ...) {
  const kc_shape* elems[8];
  va_list ap;
  va_start(ap, n);
  for (size_t i = 0; i < n; ++i) elems[i] = va_arg(ap, const kc_shape*);
  va_end(ap);
  kc_shape* s = NULL;
  kc_status* st = kc_shape_create_tuple(elems, n, &s);
  if (st) kc_status_destroy(st);
  return s;
}

static kc_custom_call_desc kt_call(const char* target, const int32_t* operands,
                                   size_t n, const kc_shape* result,
                                   int32_t api) {
  kc_custom_call_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.target = kc_sv(target);
  d.operands = operands;
  d.num_operands = n;
  d.result_shape = result;
  d.api_version = api;
  return d;
}

/* An f32 tensor of `n` elements holding base + i. */
static kc_tensor* kt_iota(int64_t n, float base) {
  kc_tensor* t = NULL;
  kc_status* st = kc_tensor_create(kt_alloc(), &n, 1, kc_dtype_make(kDLFloat, 32, 1),
                                   kc_device_cpu(), &t);
  if (st) {
    kc_status_destroy(st);
    return NULL;
  }
  float* d = kc_tensor_get_dltensor(t)->data;
  for (int64_t i = 0; i < n; ++i) d[i] = base + (float)i;
  return t;
}

static const float* kt_f32(const kc_tensor* t) {
  return kc_tensor_get_dltensor(t)->data;
}

static kc_status* kt_compile(kc_program* p, kc_executable** out) {
  return kc_program_compile(p, NULL, out);
}

static kc_execute_options kt_opts(void) {
  kc_execute_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.allocator = kt_alloc();
  return o;
}

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
