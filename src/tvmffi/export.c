/* kcall functions as tvm-ffi functions: values crossing, and
 * kc_tvm_ffi_export into tvm-ffi's global registry. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"
#include "internal/object.h"
#include "tvmffi/tvmffi_internal.h"

/* What a tvm-ffi function calling kcall holds. */
typedef struct kc__tvm_wrap {
  kc_func* func; /* a reference */
  void* obj;     /* the tvm-ffi function object (not a reference) */
  char name[];   /* "kcall function 'NAME'" */
} kc__tvm_wrap;

/* The live wrappers, so that a function crossing back to kcall is the
 * original (kc__tvm_unwrap_kc). Few: each is a function value in flight or
 * an exported name. */
static pthread_mutex_t kc__wraps_mu = PTHREAD_MUTEX_INITIALIZER;
static kc__tvm_wrap** kc__wraps;
static size_t kc__wraps_count, kc__wraps_cap;

kc_func* kc__tvm_unwrap_kc(void* obj) {
  kc_func* found = NULL;
  pthread_mutex_lock(&kc__wraps_mu);
  for (size_t i = 0; i < kc__wraps_count && !found; ++i) {
    if (kc__wraps[i]->obj == obj) found = kc__wraps[i]->func;
  }
  pthread_mutex_unlock(&kc__wraps_mu);
  return found;
}

static void kc__tvm_wrap_free(void* self) {
  kc__tvm_wrap* w = self;
  pthread_mutex_lock(&kc__wraps_mu);
  for (size_t i = 0; i < kc__wraps_count; ++i) {
    if (kc__wraps[i] == w) {
      kc__wraps[i] = kc__wraps[--kc__wraps_count];
      break;
    }
  }
  pthread_mutex_unlock(&kc__wraps_mu);
  kc_object_release(KC_OBJECT(w->func));
  free(w);
}

/* The safe call of every tvm-ffi function calling kcall. */
static int kc__tvm_export_call(void* self, const kc__tvm_any* args,
                               int32_t nargs, kc__tvm_any* result) {
  const kc__tvm_wrap* w = self;
  const kc__tvm_api* api = kc__tvm_api_loaded();
  kc_any inline_args[8];
  kc_any* kargs = inline_args;
  if (nargs < 0) nargs = 0;
  if ((size_t)nargs > KC__ARRAY_SIZE(inline_args)) {
    kargs = malloc((size_t)nargs * sizeof *kargs);
    if (!kargs) {
      api->error_set_raised_from_cstr("MemoryError", "out of memory");
      return -1;
    }
  }
  kc__tvm_scratch scratch;
  scratch.bytes_used = scratch.tvm_used = scratch.kc_used = 0;
  scratch.more_bytes = NULL;
  scratch.more_tvm_objects = NULL;
  scratch.more_kc_values = NULL;
  scratch.capacity = (size_t)nargs;
  kc_status* st = NULL;
  for (int32_t i = 0; i < nargs && !st; ++i) {
    st = kc__kc_arg_from_tvm(api, &args[i], &kargs[i], &scratch, i, w->name);
  }
  kc_any ret = kc_any_none();
  if (!st) st = kc_func_call(w->func, kargs, nargs, &ret);
  if (KC__UNLIKELY(scratch.bytes_used | scratch.tvm_used | scratch.kc_used)) {
    kc__tvm_scratch_release(api, &scratch);
  }
  if (kargs != inline_args) free(kargs);
  if (!st) st = kc__tvm_from_kc_owned(api, &ret, result, w->name);
  if (KC__UNLIKELY(st != NULL)) return kc__tvm_raise_status(api, st);
  return 0;
}

static kc_status* kc__tvm_wrap_make(const kc__tvm_api* api, kc_func* func,
                                    const char* name, void** out) {
  int len = snprintf(NULL, 0, "kcall function %s", KC__QS(name));
  kc__tvm_wrap* w = calloc(1, sizeof *w + (size_t)len + 1);
  if (!w) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  snprintf(w->name, (size_t)len + 1, "kcall function %s", KC__QS(name));
  pthread_mutex_lock(&kc__wraps_mu);
  bool room = kc__wraps_count < kc__wraps_cap;
  if (!room) {
    size_t cap = kc__wraps_cap ? 2 * kc__wraps_cap : 16;
    kc__tvm_wrap** grown = realloc(kc__wraps, cap * sizeof *grown);
    if (grown) {
      kc__wraps = grown;
      kc__wraps_cap = cap;
      room = true;
    }
  }
  pthread_mutex_unlock(&kc__wraps_mu);
  if (!room) {
    free(w);
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  kc_object_retain(KC_OBJECT(func));
  w->func = func;
  void* obj = NULL;
  int rc = api->function_create(w, kc__tvm_export_call, kc__tvm_wrap_free, &obj);
  if (rc != 0) {
    kc_object_release(KC_OBJECT(func));
    free(w);
    return kc__tvm_error_to_status(api, rc, "tvm-ffi's TVMFFIFunctionCreate");
  }
  w->obj = obj;
  pthread_mutex_lock(&kc__wraps_mu);
  if (kc__wraps_count == kc__wraps_cap) {
    /* Taken by another thread meanwhile: grow again. */
    size_t cap = 2 * kc__wraps_cap;
    kc__tvm_wrap** grown = realloc(kc__wraps, cap * sizeof *grown);
    if (!grown) {
      pthread_mutex_unlock(&kc__wraps_mu);
      api->object_dec_ref(obj); /* runs kc__tvm_wrap_free */
      return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    }
    kc__wraps = grown;
    kc__wraps_cap = cap;
  }
  kc__wraps[kc__wraps_count++] = w;
  pthread_mutex_unlock(&kc__wraps_mu);
  *out = obj;
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
