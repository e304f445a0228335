/* kcall functions as tvm-ffi functions: values crossing, and
 * kc_tvm_ffi_export into tvm-ffi's global registry. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"
#include "internal/object.h"
#include "tvmffi/tvmffi_internal.h"

/* A tvm-ffi function calling kcall: a Function object of tvm-ffi's C ABI
 * (kcall/tvm_ffi.h), made here rather than by TVMFFIFunctionCreate, so that
 * a call goes from TVMFFIFunctionCall straight to kc__tvm_export_call, and a
 * function crossing back to kcall is recognised by its safe call. The
 * layout is the ABI's: the allocation header tvm-ffi defines before an
 * object (delete_space NULL: the deleter frees the block), preceded by a
 * word a frontend's allocator may keep there (zero: none), the object
 * header, the function cell; kcall's fields follow. */
typedef struct kc__tvm_wrap {
  void* frontend_word;             /* zero */
  void (*delete_space)(void* ptr); /* tvm-ffi's TVMFFIObjectAllocHeader */
  kc__tvm_object header;           /* the object starts here */
  kc__tvm_function_cell cell;
  kc_packed_fn fn; /* func's, read once: the call skips the kcall object */
  void* fn_self;
  const kc__tvm_api* api;
  kc_func* func; /* a reference, released when the strong count ends */
  char name[];   /* "kcall function 'NAME'" */
} kc__tvm_wrap;

#define KC__WRAP_OF(obj) \
  ((kc__tvm_wrap*)(void*)((char*)(obj) - offsetof(kc__tvm_wrap, header)))

/* tvm-ffi's object deleter flags. */
enum { KC__TVM_DELETE_STRONG = 1, KC__TVM_DELETE_WEAK = 2 };

static void kc__tvm_wrap_delete(void* obj, int flags) {
  kc__tvm_wrap* w = KC__WRAP_OF(obj);
  if (flags & KC__TVM_DELETE_STRONG) {
    kc_object_release(KC_OBJECT(w->func));
    w->func = NULL;
  }
  if (flags & KC__TVM_DELETE_WEAK) kc__free(w);
}

static int kc__tvm_export_call(void* self, const kc__tvm_any* args,
                               int32_t nargs, kc__tvm_any* result);

kc_func* kc__tvm_unwrap_kc(void* obj) {
  const kc__tvm_object* o = obj;
  if (o->type_index != KC__TVM_FUNCTION) return NULL;
  const kc__tvm_function_cell* cell = KC__TVM_CELL(obj);
  return cell->safe_call == kc__tvm_export_call ? KC__WRAP_OF(obj)->func : NULL;
}

/* kc__tvm_export_call for arguments that need temporaries, or more than
 * eight. */
__attribute__((noinline)) static int kc__tvm_export_call_general(
    const kc__tvm_wrap* w, const kc__tvm_any* args, int32_t nargs,
    kc__tvm_any* result) {
  const kc__tvm_api* api = w->api;
  kc_any inline_args[8];
  kc_any* kargs = inline_args;
  if (nargs < 0) nargs = 0;
  if ((size_t)nargs > KC__ARRAY_SIZE(inline_args)) {
    kargs = kc__malloc((size_t)nargs * sizeof *kargs);
    if (!kargs) {
      api->error_set_raised_from_cstr("MemoryError", "out of memory");
      return -1;
    }
  }
  kc__tvm_scratch scratch;
  kc__tvm_scratch_init(&scratch, nargs);
  kc_status* st = NULL;
  for (int32_t i = 0; i < nargs && !st; ++i) {
    st = kc__kc_arg_from_tvm(api, &args[i], &kargs[i], &scratch, i, w->name);
  }
  kc_any ret = kc_any_none();
  if (!st) st = kc_func_call(w->func, kargs, nargs, &ret);
  kc__tvm_scratch_done(api, &scratch);
  if (kargs != inline_args) kc__free(kargs);
  if (!st) st = kc__tvm_from_kc_owned(api, &ret, result, w->name);
  if (KC__UNLIKELY(st != NULL)) return kc__tvm_raise_status(api, st);
  return 0;
}

/* The safe call of every tvm-ffi function calling kcall (`self` is the
 * function object): plain values and tensors go straight through. */
static int kc__tvm_export_call(void* self, const kc__tvm_any* args,
                               int32_t nargs, kc__tvm_any* result) {
  const kc__tvm_wrap* w = KC__WRAP_OF(self);
  kc_any kargs[8];
  if (KC__LIKELY(nargs >= 0 && nargs <= 8)) {
    int32_t i = 0;
    while (i < nargs && kc__kc_arg_fast(&args[i], &kargs[i])) ++i;
    if (KC__LIKELY(i == nargs)) {
      kc_any ret = kc_any_none();
      kc_status* st = w->fn(w->fn_self, kargs, nargs, &ret);
      if (KC__UNLIKELY(st != NULL)) {
        kc_any_release(&ret);
        return kc__tvm_raise_status(w->api, st);
      }
      /* tvm-ffi hands `result` over as none (its callers construct it so). */
      if (ret.type_index == KC_TYPE_NONE) return 0;
      if (KC__LIKELY(ret.type_index < KC_TYPE_OBJECT_BEGIN) &&
          kc__pod_to_tvm(&ret, result) &&
          KC__LIKELY(kc__tvm_result_is_plain(result))) {
        return 0;
      }
      st = kc__tvm_from_kc_owned(w->api, &ret, result, w->name);
      return KC__UNLIKELY(st != NULL) ? kc__tvm_raise_status(w->api, st) : 0;
    }
  }
  return kc__tvm_export_call_general(w, args, nargs, result);
}

static kc_status* kc__tvm_wrap_make(const kc__tvm_api* api, kc_func* func,
                                    const char* name, void** out) {
  int len = snprintf(NULL, 0, "kcall function %s", KC__QS(name));
  kc__tvm_wrap* w = kc__calloc(1, sizeof *w + (size_t)len + 1);
  if (!w) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  snprintf(w->name, (size_t)len + 1, "kcall function %s", KC__QS(name));
  /* One strong and one weak reference, as tvm-ffi starts its objects. */
  w->header.combined_ref_count = ((uint64_t)1 << 32) | 1u;
  w->header.type_index = KC__TVM_FUNCTION;
  w->header.deleter = kc__tvm_wrap_delete;
  w->cell.safe_call = kc__tvm_export_call;
  w->cell.cpp_call = NULL; /* tvm-ffi's C++ then calls safe_call */
  kc_object_retain(KC_OBJECT(func));
  w->api = api;
  w->func = func;
  w->fn = func->fn;
  w->fn_self = func->self;
  *out = &w->header;
  return NULL;
}

kc_status* kc__tvm_func_from_kc(const kc__tvm_api* api, kc_func* func,
                                void** out) {
  kc_status* st = NULL;
  void* obj = kc__tvm_fn_object(api, func, &st);
  if (obj || st) {
    *out = obj;
    return st;
  }
  return kc__tvm_wrap_make(api, func, "(a function value)", out);
}

/* ---- kc_tvm_ffi_export ------------------------------------------------------ */

static kc_status* kc__export_one(const kc__tvm_api* api, kc_string_view name,
                                 bool allow_override) {
  kc_func* f = NULL;
  KC_RETURN_IF_ERROR(kc_func_registry_lookup_retained(name, &f));
  char cname[512];
  snprintf(cname, sizeof cname, "%.*s", (int)name.size, name.data);
  kc_status* st = NULL;
  void* obj = kc__tvm_fn_object(api, f, &st);
  if (!obj && !st) st = kc__tvm_wrap_make(api, f, cname, &obj);
  kc_object_release(KC_OBJECT(f));
  if (st) return st;
  kc__tvm_byte_array tname = {name.data, name.size};
  int rc = api->function_set_global(&tname, obj, allow_override ? 1 : 0);
  api->object_dec_ref(obj);
  if (rc != 0) {
    return kc__tvm_error_to_status(api, rc, "tvm-ffi's TVMFFIFunctionSetGlobal");
  }
  return NULL;
}

/* Whether tvm-ffi's registry has `name`. */
static bool kc__tvm_has_global(const kc__tvm_api* api, kc_string_view name) {
  kc__tvm_byte_array tname = {name.data, name.size};
  void* obj = NULL;
  if (api->function_get_global(&tname, &obj) != 0) {
    void* err = NULL;
    api->error_move_from_raised(&err);
    if (err) api->object_dec_ref(err);
    return false;
  }
  if (!obj) return false;
  api->object_dec_ref(obj);
  return true;
}

kc_status* kc_tvm_ffi_export(const char* name, bool allow_override,
                             size_t* out_count) {
  if (out_count) *out_count = 0;
  if (!name || !name[0]) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_tvm_ffi_export: expected a function name or "
                            "a prefix ending in '.', got %s",
                            name ? "\"\"" : "NULL");
  }
  kc_status* st = NULL;
  const kc__tvm_api* api = kc__tvm_api_get(&st);
  if (!api) return kc_status_add_context(st, "exporting %s to tvm-ffi", KC__QS(name));
  size_t len = strlen(name);
  kc_array* names = NULL;
  if (name[len - 1] == '.') {
    KC_RETURN_IF_ERROR(kc_func_registry_list(NULL, kc_sv(name), &names));
    if (kc_array_get_size(names) == 0) {
      kc_object_release(KC_OBJECT(names));
      return kc_status_create(KC_NOT_FOUND,
                              "exporting %s to tvm-ffi: no kcall function's "
                              "name starts with it",
                              KC__QS(name));
    }
  } else {
    kc_func* f = NULL;
    KC_RETURN_IF_ERROR(kc_func_registry_lookup(kc_sv(name), &f),
                       "exporting %s to tvm-ffi", KC__QS(name));
    kc_str* s = NULL;
    KC_RETURN_IF_ERROR(kc_str_create(NULL, kc_sv(name), &s));
    kc_any item = {.type_index = KC_TYPE_STR, .u.v_obj = KC_OBJECT(s)};
    st = kc_array_create(NULL, &item, 1, &names);
    kc_any_release(&item);
    if (st) return st;
  }
  size_t n = kc_array_get_size(names);
  /* Nothing is exported when a name is taken. */
  for (size_t i = 0; i < n && !allow_override && !st; ++i) {
    kc_string_view v = {0};
    kc_any_get_string(kc_array_get_item(names, i), &v);
    if (kc__tvm_has_global(api, v)) {
      st = kc_status_create(KC_ALREADY_EXISTS,
                            "exporting %s to tvm-ffi: tvm-ffi already has a "
                            "global function %s (pass allow_override to "
                            "replace it); nothing was exported",
                            KC__QS(name), KC__Q(v));
    }
  }
  size_t done = 0;
  for (size_t i = 0; i < n && !st; ++i) {
    kc_string_view v = {0};
    kc_any_get_string(kc_array_get_item(names, i), &v);
    st = kc_status_add_context(kc__export_one(api, v, allow_override),
                               "exporting %s to tvm-ffi", KC__Q(v));
    if (!st) ++done;
  }
  kc_object_release(KC_OBJECT(names));
  if (out_count) *out_count = done;
  return st;
}
