/*
 * tests/kt_xla_ffi.h — helpers for XLA FFI handlers written in C against
 * kcall's declarations of XLA's C API (src/xcall/xla_ffi_api.h), shared by
 * the test runner and the handler fixtures. They do by hand what XLA's C++
 * headers do for a handler: answer the metadata query, make errors, find
 * attributes by name.
 */
#ifndef KCALL_TESTS_KT_XLA_FFI_H_
#define KCALL_TESTS_KT_XLA_FFI_H_

#include <stdbool.h>
#include <string.h>

#include "xcall/xla_ffi_api.h"

/* The metadata extension of a call frame, or NULL when it is a call. */
/* A program calling the three handlers of kt_plugin_xla_ffi.so in a chain:
 * y = 2 (2 x + 1.5) on f32[3] (test_xla_ffi_runtime.c, test_faults.c). */
#define KT_XLA_PLUGIN_CHAIN_HLO                                                        \
  "HloModule plugin\n"                                                                 \
  "ENTRY main {\n"                                                                     \
  "  x = f32[3] parameter(0)\n"                                                        \
  "  a = f32[3] custom-call(x), custom_call_target=\"kt_xla.double\", "                \
  "api_version=API_VERSION_TYPED_FFI\n"                                                \
  "  b = f32[3] custom-call(a), custom_call_target=\"kt_xla.offset\", "                \
  "api_version=API_VERSION_TYPED_FFI, backend_config={offset = 1.500000e+00 : f32}\n"  \
  "  ROOT c = f32[3] custom-call(b), custom_call_target=\"kt_xla.via_api\", "          \
  "api_version=API_VERSION_TYPED_FFI\n"                                                \
  "}\n"

static inline XLA_FFI_Metadata* kt_xla_metadata(const XLA_FFI_CallFrame* frame) {
  for (XLA_FFI_Extension_Base* e = frame->extension_start; e; e = e->next) {
    if (e->type == XLA_FFI_Extension_Metadata) {
      return ((XLA_FFI_Metadata_Extension*)(void*)e)->metadata;
    }
  }
  return NULL;
}

/* Answers a metadata query with API major.minor, as a handler built with
 * that version of XLA's headers would. True when the frame was a query. */
static inline bool kt_xla_answer(const XLA_FFI_CallFrame* frame, int major, int minor) {
  XLA_FFI_Metadata* md = kt_xla_metadata(frame);
  if (!md) return false;
  md->api_version.struct_size = KC__XLA_API_VERSION_SIZE;
  md->api_version.extension_start = NULL;
  md->api_version.major_version = major;
  md->api_version.minor_version = minor;
  md->traits = 0;
  return true;
}

/* The common case: a handler built against API 0.3. */
#define KT_XLA_METADATA(frame) \
  do {                         \
    if (kt_xla_answer((frame), 0, 3)) return NULL; \
  } while (0)

static inline XLA_FFI_Error* kt_xla_error(const XLA_FFI_CallFrame* frame,
                                          XLA_FFI_Error_Code code, const char* message) {
  XLA_FFI_Error_Create_Args args;
  memset(&args, 0, sizeof args);
  args.struct_size = KC__XLA_SIZE(XLA_FFI_Error_Create_Args, errc);
  args.message = message;
  args.errc = code;
  return frame->api->XLA_FFI_Error_Create(&args);
}

/* Attribute `name` of `attrs` (sorted by name, so bisected), or NULL. */
static inline void* kt_xla_attr(const XLA_FFI_Attrs* attrs, const char* name,
                                XLA_FFI_AttrType* out_type) {
  size_t n = strlen(name);
  int64_t lo = 0, hi = attrs->size;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    const XLA_FFI_ByteSpan* s = attrs->names[mid];
    size_t m = s->len < n ? s->len : n;
    int c = m ? memcmp(s->ptr, name, m) : 0;
    if (c == 0) c = (s->len > n) - (s->len < n);
    if (c == 0) {
      if (out_type) *out_type = attrs->types[mid];
      return attrs->attrs[mid];
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

/* A scalar f32 attribute, or `fallback` when it is missing or another type. */
static inline float kt_xla_attr_f32(const XLA_FFI_Attrs* attrs, const char* name,
                                    float fallback) {
  XLA_FFI_AttrType type;
  const XLA_FFI_Scalar* s = kt_xla_attr(attrs, name, &type);
  if (!s || type != XLA_FFI_AttrType_SCALAR || s->dtype != XLA_FFI_DataType_F32) {
    return fallback;
  }
  return *(const float*)s->value;
}

/* The buffer of operand or result i. */
static inline XLA_FFI_Buffer* kt_xla_arg(const XLA_FFI_CallFrame* frame, int64_t i) {
  return (XLA_FFI_Buffer*)frame->args.args[i];
}
static inline XLA_FFI_Buffer* kt_xla_ret(const XLA_FFI_CallFrame* frame, int64_t i) {
  return (XLA_FFI_Buffer*)frame->rets.rets[i];
}

static inline int64_t kt_xla_count(const XLA_FFI_Buffer* b) {
  int64_t n = 1;
  for (int64_t d = 0; d < b->rank; ++d) n *= b->dims[d];
  return n;
}

/* XLA_FFI_State_Get of the instantiate stage's state of type `id`. */
static inline XLA_FFI_Error* kt_xla_state_get(XLA_FFI_CallFrame* f, XLA_FFI_TypeId* id,
                                              void** out) {
  XLA_FFI_State_Get_Args g;
  memset(&g, 0, sizeof g);
  g.struct_size = KC__XLA_SIZE(XLA_FFI_State_Get_Args, state);
  g.ctx = f->ctx;
  g.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
  g.type_id = id;
  XLA_FFI_Error* e = f->api->XLA_FFI_State_Get(&g);
  *out = g.state;
  return e;
}

/* XLA_FFI_State_Set of `state`, of type `id`, for `stage`. */
static inline XLA_FFI_Error* kt_xla_state_set(XLA_FFI_CallFrame* f,
                                              XLA_FFI_ExecutionStage stage,
                                              XLA_FFI_TypeId* id, void* state) {
  XLA_FFI_State_Set_Args s;
  memset(&s, 0, sizeof s);
  s.struct_size = KC__XLA_SIZE(XLA_FFI_State_Set_Args, state);
  s.ctx = f->ctx;
  s.stage = stage;
  s.type_id = id;
  s.state = state;
  return f->api->XLA_FFI_State_Set(&s);
}

#endif /* KCALL_TESTS_KT_XLA_FFI_H_ */
