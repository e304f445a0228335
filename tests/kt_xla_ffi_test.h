/* Helpers of the XLA FFI tests (test_xla_ffi.c, _state.c, _runtime.c):
 * compiling and running one-call programs, registering handlers, reading
 * errors back, and the simplest handler. */
#ifndef KCALL_TESTS_KT_XLA_FFI_TEST_H_
#define KCALL_TESTS_KT_XLA_FFI_TEST_H_

#include <stdio.h>
#include <string.h>

#include "kt_xla_ffi.h"
#include "test.h"

/* ---- helpers ------------------------------------------------------------------- */

static inline kc_executable* kt_compile_text(const char* text, kc_thread_pool* pool) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_compile_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.thread_pool = pool;
  kc_executable* exe = NULL;
  kc_status* st = kc_program_compile(p, &o, &exe);
  kc_program_destroy(p);
  KC_CHECK_OK(st);
  return exe;
}

/* The status of compiling `text` (which must parse). */
static inline kc_status* kt_compile_status(const char* text) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  kc_status* st = kc_program_compile(p, NULL, &exe);
  kc_program_destroy(p);
  kc_executable_destroy(exe);
  return st;
}

static inline kc_tensor* kt_tensor(DLDataType dtype, int32_t rank, const int64_t* dims) {
  kc_tensor* t = NULL;
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), dims, rank, dtype, kc_device_cpu(), &t));
  memset(kc_tensor_get_dltensor(t)->data, 0,
         kc_dtype_get_size(dtype) * (size_t)(rank ? dims[0] : 1) *
             (size_t)(rank > 1 ? dims[1] : 1));
  return t;
}

static inline kc_tensor* kt_f32s(int64_t n, float base) {
  kc_tensor* t = kt_tensor(kc_dtype_make(kDLFloat, 32, 1), 1, &n);
  float* d = kc_tensor_get_dltensor(t)->data;
  for (int64_t i = 0; i < n; ++i) d[i] = base + (float)i;
  return t;
}

static inline void* kt_data(const kc_tensor* t) { return kc_tensor_get_dltensor(t)->data; }

static inline void kt_release(kc_tensor** ts, size_t n) {
  for (size_t i = 0; i < n; ++i) kc_object_release(KC_OBJECT(ts[i]));
}

/* Runs a one-input executable; outputs into out[]. */
static inline kc_status* kt_run(const kc_executable* exe, const kc_tensor* x, kc_tensor** out) {
  const DLTensor* ins[1] = {kc_tensor_get_dltensor(x)};
  kc_execute_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.allocator = kt_alloc();
  return kc_executable_execute(exe, ins, 1, &o, out);
}

/* `fn` for the instantiate and execute stages of target `name`. */
static inline void kt_register_both(const char* name, kc_xla_ffi_handler_fn fn) {
  kc_xla_ffi_handlers h;
  memset(&h, 0, sizeof h);
  h.struct_size = sizeof h;
  h.instantiate = fn;
  h.execute = fn;
  KC_CHECK_OK(kc_xcall_register_xla_ffi(kc_sv(name), KC_PLATFORM_HOST, &h, 0));
}

static inline void kt_register(const char* name, XLA_FFI_Handler* fn) {
  KC_CHECK_OK(kc_xcall_register_xla_ffi_handler(kc_sv(name), KC_PLATFORM_HOST,
                                                (kc_xla_ffi_handler_fn)(void (*)(void))fn,
                                                0));
}

#define KT_FN(fn) ((kc_xla_ffi_handler_fn)(void (*)(void))(fn))

/* A one-call program: y = target(x), x f32[N]. */
static inline void kt_one_call(char* buf, size_t cap, const char* target, int n,
                        const char* config) {
  snprintf(buf, cap,
           "HloModule one\n"
           "ENTRY main {\n"
           "  x = f32[%d]{0} parameter(0)\n"
           "  ROOT y = f32[%d]{0} custom-call(f32[%d]{0} x), custom_call_target=\"%s\", "
           "api_version=API_VERSION_TYPED_FFI%s%s\n"
           "}\n",
           n, n, n, target, config ? ", backend_config=" : "", config ? config : "");
}

/* Destroys an error made by kcall's table, returning its code. */
static inline int kt_take_code(const XLA_FFI_Api* api, XLA_FFI_Error* e, char* msg, size_t cap) {
  if (!e) return 0;
  XLA_FFI_Error_GetMessage_Args g;
  memset(&g, 0, sizeof g);
  g.struct_size = KC__XLA_SIZE(XLA_FFI_Error_GetMessage_Args, message);
  g.error = e;
  api->XLA_FFI_Error_GetMessage(&g);
  if (msg) snprintf(msg, cap, "%s", g.message);
  /* The code is not readable through the API; the tests read it from
   * statuses. Here any error counts as 1. */
  XLA_FFI_Error_Destroy_Args d;
  memset(&d, 0, sizeof d);
  d.struct_size = KC__XLA_SIZE(XLA_FFI_Error_Destroy_Args, error);
  d.error = e;
  api->XLA_FFI_Error_Destroy(&d);
  return 1;
}

/* ---- the simplest handler ------------------------------------------------------- */

/* y = x + delta (an f32 attribute, 1 when absent). */
static inline XLA_FFI_Error* kt_add_one(XLA_FFI_CallFrame* f) {
  KT_XLA_METADATA(f);
  if (f->stage != XLA_FFI_ExecutionStage_EXECUTE) return NULL;
  if (f->args.size != 1 || f->rets.size != 1) {
    return kt_xla_error(f, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                        "add_one: expected one operand and one result");
  }
  const XLA_FFI_Buffer* x = kt_xla_arg(f, 0);
  XLA_FFI_Buffer* y = kt_xla_ret(f, 0);
  if (x->dtype != XLA_FFI_DataType_F32 || y->dtype != XLA_FFI_DataType_F32) {
    return kt_xla_error(f, XLA_FFI_Error_Code_INVALID_ARGUMENT, "add_one: expected f32");
  }
  float delta = kt_xla_attr_f32(&f->attrs, "delta", 1.0f);
  const float* in = x->data;
  float* out = y->data;
  for (int64_t i = 0; i < kt_xla_count(x); ++i) out[i] = in[i] + delta;
  return NULL;
}

/* From test_xla_ffi_state.c, for test_xla_ffi_runtime.c: a state type
 * (registered by kt_register_types), the handlers that log the four
 * stages, and the check that a handler's reported version is recorded. */
extern XLA_FFI_TypeId kt_counter_id;
void kt_register_types(void);
extern const kc_xla_ffi_handlers kt_stage_handlers;
void kt_check_version(const char* name, int32_t major, int32_t minor);

#endif  /* KCALL_TESTS_KT_XLA_FFI_TEST_H_ */
