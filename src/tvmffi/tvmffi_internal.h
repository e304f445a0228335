/* What the files of the tvm-ffi module share: libtvm_ffi's functions, found
 * at run time, and the conversions between kcall's values and tvm-ffi's.
 * Never installed. */
#ifndef KCALL_TVMFFI_TVMFFI_INTERNAL_H_
#define KCALL_TVMFFI_TVMFFI_INTERNAL_H_

#include "internal/common.h"
#include "kcall/func.h"
#include "kcall/tvm_ffi.h"
#include <string.h>

#include "tvmffi/tvm_ffi_abi.h"

/* The functions of libtvm_ffi kcall calls (tvm/ffi/c_api.h). */
typedef struct kc__tvm_api {
  const char* path; /* of the library, as the loader knows it */
  int (*object_inc_ref)(void* obj);
  int (*object_dec_ref)(void* obj);
  int (*function_create)(void* self, kc__tvm_safe_call safe_call,
                         void (*deleter)(void* self), void** out);
  int (*function_get_global)(const kc__tvm_byte_array* name, void** out);
  int (*function_set_global)(const kc__tvm_byte_array* name, void* f,
                             int allow_override);
  void (*error_move_from_raised)(void** out);
  void (*error_set_raised_from_cstr)(const char* kind, const char* message);
  int (*string_from_byte_array)(const kc__tvm_byte_array* in, kc__tvm_any* out);
  int (*bytes_from_byte_array)(const kc__tvm_byte_array* in, kc__tvm_any* out);
  int (*tensor_from_dlpack_versioned)(DLManagedTensorVersioned* from,
                                      int32_t require_alignment,
                                      int32_t require_contiguous, void** out);
  int (*tensor_to_dlpack_versioned)(void* from, DLManagedTensorVersioned** out);
  const kc__tvm_type_info* (*get_type_info)(int32_t type_index);
} kc__tvm_api;

/* libtvm_ffi's functions, finding and loading the library the first time
 * (kcall/tvm_ffi.h says where it looks). NULL with *out_status set
 * (FAILED_PRECONDITION saying what to install) when there is none. Once
 * found, the table lives for the life of the process. */
const kc__tvm_api* kc__tvm_api_get(kc_status** out_status);

/* The table once it is loaded, else NULL; a load and a compare. */
const kc__tvm_api* kc__tvm_api_loaded(void);

/* A kcall status for a tvm-ffi call that returned `rc` (non-zero): the
 * raised error, moved out of tvm-ffi's thread-local slot and released
 * ("KIND: MESSAGE" with the code the kind maps to), or CANCELLED for -2.
 * `what` names the function. */
kc_status* kc__tvm_error_to_status(const kc__tvm_api* api, int rc,
                                   const char* what);

/* Raises `st` as tvm-ffi's error (kcall/tvm_ffi.h says which kind) and
 * destroys it; returns -1 for the safe call to return. */
int kc__tvm_raise_status(const kc__tvm_api* api, kc_status* st);

/* The payload-only types, which are the same values on both sides. */
static inline bool kc__pod_to_tvm(const kc_any* in, kc__tvm_any* out) {
  static const int32_t map[] = {
      [KC_TYPE_NONE] = KC__TVM_NONE,
      [KC_TYPE_BOOL] = KC__TVM_BOOL,
      [KC_TYPE_INT] = KC__TVM_INT,
      [KC_TYPE_FLOAT] = KC__TVM_FLOAT,
      [KC_TYPE_OPAQUE_PTR] = KC__TVM_OPAQUE_PTR,
      [KC_TYPE_DTYPE] = KC__TVM_DTYPE,
      [KC_TYPE_DEVICE] = KC__TVM_DEVICE,
      [KC_TYPE_RAW_STR] = KC__TVM_RAW_STR,
      [KC_TYPE_DLTENSOR_PTR] = KC__TVM_DLTENSOR_PTR,
      [KC_TYPE_SMALL_STR] = KC__TVM_SMALL_STR,
  };
  if (in->type_index < 0 || in->type_index >= (int32_t)KC__ARRAY_SIZE(map)) {
    return false;
  }
  out->type_index = map[in->type_index];
  out->small_len = in->small_len;
  memcpy(&out->u, &in->u, sizeof out->u);
  if (in->type_index == KC_TYPE_NONE) out->u.v_int64 = 0;
  return true;
}

/* The payload-only types of tvm-ffi, which are the same values in kcall. */
static inline bool kc__pod_to_kc(const kc__tvm_any* in, kc_any* out) {
  int32_t t;
  switch (in->type_index) {
    case KC__TVM_NONE: t = KC_TYPE_NONE; break;
    case KC__TVM_INT: t = KC_TYPE_INT; break;
    case KC__TVM_BOOL: t = KC_TYPE_BOOL; break;
    case KC__TVM_FLOAT: t = KC_TYPE_FLOAT; break;
    case KC__TVM_OPAQUE_PTR: t = KC_TYPE_OPAQUE_PTR; break;
    case KC__TVM_DTYPE: t = KC_TYPE_DTYPE; break;
    case KC__TVM_DEVICE: t = KC_TYPE_DEVICE; break;
    case KC__TVM_DLTENSOR_PTR: t = KC_TYPE_DLTENSOR_PTR; break;
    case KC__TVM_RAW_STR: t = KC_TYPE_RAW_STR; break;
    case KC__TVM_SMALL_STR:
      if (in->small_len > KC_SMALL_STR_MAX) return false;
      t = KC_TYPE_SMALL_STR;
      break;
    default: return false;
  }
  out->type_index = t;
  out->small_len = t == KC_TYPE_SMALL_STR ? in->small_len : 0;
  memcpy(&out->u, &in->u, sizeof out->u);
  if (t == KC_TYPE_SMALL_STR) out->u.v_small[in->small_len] = '\0';
  return true;
}

/* A result that is a plain value on both sides (no object, no view). */
static inline bool kc__tvm_result_is_plain(const kc__tvm_any* r) {
  return r->type_index < KC__TVM_OBJECT_BEGIN &&
         r->type_index != KC__TVM_RAW_STR &&
         r->type_index != KC__TVM_DLTENSOR_PTR &&
         r->type_index != KC__TVM_BYTE_ARRAY_PTR;
}

/* tvm-ffi's DLPack requires strides on every tensor of rank > 0 (its
 * TensorView::stride reads them unchecked), where DLPack lets a compact
 * tensor leave them NULL, as kcall's tensors, NumPy's arrays through
 * kcall.Tensor, program buffers and XLA's do. Such a DLTensor* is lent to
 * tvm-ffi as a copy whose strides are the compact ones. */
static inline bool kc__tvm_needs_strides(const kc__tvm_any* a) {
  return a->type_index == KC__TVM_DLTENSOR_PTR && a->u.v_ptr &&
         ((const DLTensor*)a->u.v_ptr)->ndim > 0 && !((const DLTensor*)a->u.v_ptr)->strides;
}

/* Points `a` at `copy`, a copy of its DLTensor with the compact strides
 * written to `strides` (room for its ndim). */
static inline void kc__tvm_lend_strided(kc__tvm_any* a, DLTensor* copy, int64_t* strides) {
  const DLTensor* t = a->u.v_ptr;
  *copy = *t;
  uint64_t running = 1; /* unsigned: a product past 2^63 wraps, defined */
  for (int32_t d = t->ndim; d-- > 0;) {
    strides[d] = (int64_t)running;
    running *= (uint64_t)t->shape[d];
  }
  copy->strides = strides;
  a->u.v_ptr = copy;
}

/* A DLTensor lent with strides on kc__tvm_call's fast path: ranks up to
 * KC__TVM_FAST_RANK, on the stack; higher ones take the general path. */
enum { KC__TVM_FAST_RANK = 6 };
typedef struct kc__tvm_fast_view {
  DLTensor dl;
  int64_t strides[KC__TVM_FAST_RANK];
} kc__tvm_fast_view;

/* The arguments that convert without temporaries: plain values (a
 * DLTensor* among them, needing strides or not: kc__tvm_needs_strides). */
static inline bool kc__tvm_arg_fast(const kc_any* in, kc__tvm_any* out) {
  return kc__pod_to_tvm(in, out);
}

static inline bool kc__kc_arg_fast(const kc__tvm_any* in, kc_any* out) {
  if (in->type_index == KC__TVM_TENSOR) {
    out->type_index = KC_TYPE_DLTENSOR_PTR;
    out->small_len = 0;
    out->u.v_dltensor = KC__TVM_CELL(in->u.v_obj);
    return true;
  }
  return kc__pod_to_kc(in, out);
}

/* Temporaries made while converting arguments, released after the call. */
typedef struct kc__tvm_scratch {
  kc__tvm_byte_array bytes[8]; /* byte-array arguments, the first eight */
  kc__tvm_byte_array* more_bytes;
  size_t bytes_used;
  void* tvm_objects[4]; /* tvm-ffi objects made for the call (functions) */
  void** more_tvm_objects;
  size_t tvm_used;
  kc_any kc_values[4]; /* kcall values made for the call */
  kc_any* more_kc_values;
  size_t kc_used;
  /* DLTensors lent with strides (kc__tvm_lend_strided), each a block of
   * its own: the DLTensor, then its strides. */
  void* views[4];
  void** more_views;
  size_t views_used;
  size_t capacity; /* of each more_* array: nargs */
} kc__tvm_scratch;

/* An empty scratch for a call of `nargs` arguments. */
static inline void kc__tvm_scratch_init(kc__tvm_scratch* s, int32_t nargs) {
  s->bytes_used = s->tvm_used = s->kc_used = s->views_used = 0;
  s->more_bytes = NULL;
  s->more_tvm_objects = NULL;
  s->more_kc_values = NULL;
  s->more_views = NULL;
  s->capacity = (size_t)nargs;
}

/* Releases what the call's conversions made, when they made anything. */
void kc__tvm_scratch_release(const kc__tvm_api* api, kc__tvm_scratch* s);
static inline void kc__tvm_scratch_done(const kc__tvm_api* api, kc__tvm_scratch* s) {
  if (KC__UNLIKELY(s->bytes_used | s->tvm_used | s->kc_used | s->views_used)) {
    kc__tvm_scratch_release(api, s);
  }
}

/* kcall value -> a tvm-ffi argument (a view valid until the scratch is
 * released). `index` and `fn` name the argument in errors. */
kc_status* kc__tvm_arg_from_kc(const kc__tvm_api* api, const kc_any* in,
                               kc__tvm_any* out, kc__tvm_scratch* s,
                               int32_t index, const char* fn);

/* tvm-ffi argument (a view) -> a kcall argument, valid until the scratch is
 * released. */
kc_status* kc__kc_arg_from_tvm(const kc__tvm_api* api, const kc__tvm_any* in,
                               kc_any* out, kc__tvm_scratch* s, int32_t index,
                               const char* fn);

/* An owned tvm-ffi result -> an owned kcall value; `in` is consumed (left
 * none) whatever happens. */
kc_status* kc__kc_from_tvm_owned(const kc__tvm_api* api, kc__tvm_any* in,
                                 kc_any* out, const char* fn);

/* An owned kcall value -> an owned tvm-ffi value; `in` is consumed. */
kc_status* kc__tvm_from_kc_owned(const kc__tvm_api* api, kc_any* in,
                                 kc__tvm_any* out, const char* fn);

/* A kc_func calling the tvm-ffi function object `obj` (a new reference is
 * taken), or the function a kcall wrapper `obj` was made from (the wrapper
 * is then unwrapped). */
kc_status* kc__tvm_func_to_kc(const kc__tvm_api* api, void* obj,
                              kc_func** out);

/* A kc_func calling `fn(NULL, ...)`, a function a tvm-ffi module exports;
 * `name` (copied) names it in errors. */
kc_status* kc__tvm_symbol_to_kc(const kc__tvm_api* api, kc__tvm_safe_call fn,
                                const char* name, kc_func** out);

/* When `func` calls tvm-ffi: its function object (a new reference; made
 * once for a module's symbol). NULL otherwise, or when tvm-ffi fails
 * (*out_status says so then). */
void* kc__tvm_fn_object(const kc__tvm_api* api, const kc_func* func,
                        kc_status** out_status);

/* A new reference to a tvm-ffi function object calling `func`: the object
 * `func` wraps when it calls a tvm-ffi function, else a new tvm-ffi
 * function holding a reference to `func`. */
kc_status* kc__tvm_func_from_kc(const kc__tvm_api* api, kc_func* func,
                                void** out);

/* The kcall function a tvm-ffi function object wraps (borrowed; the object
 * holds it), or NULL when it is not a kcall wrapper. */
kc_func* kc__tvm_unwrap_kc(void* obj);

/* Registers, under PREFIX.NAME, a kcall function for each name in `names`
 * (NUL-separated, ending with an empty name), each the symbol __tvm_ffi_NAME
 * of the dlopen handle `handle`. Called by the plugin loader inside its
 * staged registration. */
kc_status* kc__tvm_register_module(void* handle, const char* names,
                                   const char* prefix);

#endif /* KCALL_TVMFFI_TVMFFI_INTERNAL_H_ */
