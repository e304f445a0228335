/* tvm-ffi functions as kcall functions: a module's exported symbols, function
 * objects crossing as values, and tvm-ffi functions as custom-call targets. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"
#include "internal/object.h"
#include "kcall/xcall.h"
#include "tvmffi/tvmffi_internal.h"

/* What a kcall function calling tvm-ffi holds. */
typedef struct kc__tvm_fn {
  const kc__tvm_api* api;
  kc__tvm_safe_call call; /* called as call(self, ...) */
  void* self;             /* the function object, or NULL for a symbol */
  /* A function object for the symbol, made the first time the function
   * crosses back to tvm-ffi as a value. */
  _Atomic(void*) symbol_obj;
  char name[]; /* "tvm-ffi function 'NAME'" */
} kc__tvm_fn;

static void kc__tvm_fn_free(void* self) {
  kc__tvm_fn* f = self;
  if (f->self) f->api->object_dec_ref(f->self);
  void* obj = atomic_load(&f->symbol_obj);
  if (obj) f->api->object_dec_ref(obj);
  kc__free(f);
}

/* kc__tvm_call for arguments that need temporaries, or more than eight. */
__attribute__((noinline)) static kc_status* kc__tvm_call_general(const kc__tvm_fn* f, const kc_any* args,
                                       int32_t nargs, kc_any* ret) {
  const kc__tvm_api* api = f->api;
  if (nargs < 0) {
    return kc_status_create(KC_INVALID_ARGUMENT, "%s: %d arguments", f->name,
                            nargs);
  }
  kc__tvm_any inline_args[8];
  kc__tvm_any* targs = inline_args;
  if ((size_t)nargs > KC__ARRAY_SIZE(inline_args)) {
    targs = kc__malloc((size_t)nargs * sizeof *targs);
    if (!targs) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  kc__tvm_scratch scratch;
  kc__tvm_scratch_init(&scratch, nargs);
  kc_status* st = NULL;
  for (int32_t i = 0; i < nargs && !st; ++i) {
    st = kc__tvm_arg_from_kc(api, &args[i], &targs[i], &scratch, i, f->name);
  }
  if (!st) {
    kc__tvm_any result;
    memset(&result, 0, sizeof result);
    int rc = f->call(f->self, targs, nargs, &result);
    st = rc == 0 ? kc__kc_from_tvm_owned(api, &result, ret, f->name)
                 : kc__tvm_error_to_status(api, rc, f->name);
  }
  kc__tvm_scratch_done(api, &scratch);
  if (targs != inline_args) kc__free(targs);
  return st;
}

/* The kc_packed_fn of every kcall function calling tvm-ffi: plain values
 * and tensors go straight through (a tensor without strides as a copy on
 * the stack that has them). */
static kc_status* kc__tvm_call(void* self, const kc_any* args, int32_t nargs,
                               kc_any* ret) {
  const kc__tvm_fn* f = self;
  kc__tvm_any targs[8];
  kc__tvm_fast_view views[8];
  if (KC__LIKELY(nargs <= 8)) {
    int32_t i = 0;
    for (; i < nargs && kc__tvm_arg_fast(&args[i], &targs[i]); ++i) {
      if (KC__UNLIKELY(kc__tvm_needs_strides(&targs[i]))) {
        if (((const DLTensor*)targs[i].u.v_ptr)->ndim > KC__TVM_FAST_RANK) break;
        kc__tvm_lend_strided(&targs[i], &views[i].dl, views[i].strides);
      }
    }
    if (KC__LIKELY(i == nargs)) {
      kc__tvm_any result;
      result.type_index = KC__TVM_NONE;
      result.small_len = 0;
      result.u.v_int64 = 0;
      int rc = f->call(f->self, targs, nargs, &result);
      if (KC__UNLIKELY(rc != 0)) return kc__tvm_error_to_status(f->api, rc, f->name);
      /* *ret arrives none (kc_packed_fn). */
      if (result.type_index == KC__TVM_NONE) return NULL;
      if (KC__LIKELY(kc__tvm_result_is_plain(&result)) &&
          kc__pod_to_kc(&result, ret)) {
        return NULL;
      }
      return kc__kc_from_tvm_owned(f->api, &result, ret, f->name);
    }
  }
  return kc__tvm_call_general(f, args, nargs, ret);
}

/* A record calling `call(self, ...)`; `self` (a function object, or NULL)
 * is adopted only on success. */
static kc_status* kc__tvm_fn_new(const kc__tvm_api* api, kc__tvm_safe_call call,
                                 void* self, const char* name, kc__tvm_fn** out) {
  int len = snprintf(NULL, 0, "tvm-ffi function %s", KC__QS(name));
  kc__tvm_fn* f = kc__calloc(1, sizeof *f + (size_t)len + 1);
  if (!f) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  f->api = api;
  f->call = call;
  f->self = self;
  atomic_init(&f->symbol_obj, NULL);
  snprintf(f->name, (size_t)len + 1, "tvm-ffi function %s", KC__QS(name));
  *out = f;
  return NULL;
}

static kc_status* kc__tvm_fn_make(const kc__tvm_api* api, kc__tvm_safe_call call,
                                  void* self, const char* name, kc_func** out) {
  kc__tvm_fn* f = NULL;
  KC_RETURN_IF_ERROR(kc__tvm_fn_new(api, call, self, name, &f));
  kc_status* st = kc_func_create(NULL, kc__tvm_call, f, kc__tvm_fn_free, out);
  if (st) {
    f->self = NULL; /* the caller keeps its reference on failure */
    kc__tvm_fn_free(f);
  }
  return st;
}

kc_status* kc__tvm_symbol_to_kc(const kc__tvm_api* api, kc__tvm_safe_call fn,
                                const char* name, kc_func** out) {
  return kc__tvm_fn_make(api, fn, NULL, name, out);
}

/* The function object's own safe call, which tvm-ffi calls with the object
 * as `self` (what TVMFFIFunctionCall does). */
static int kc__tvm_object_call(void* self, const kc__tvm_any* args,
                               int32_t nargs, kc__tvm_any* result) {
  const kc__tvm_function_cell* cell = KC__TVM_CELL(self);
  return cell->safe_call(self, args, nargs, result);
}

kc_status* kc__tvm_func_to_kc(const kc__tvm_api* api, void* obj,
                              kc_func** out) {
  kc_func* wrapped = kc__tvm_unwrap_kc(obj);
  if (wrapped) {
    kc_object_retain(KC_OBJECT(wrapped));
    *out = wrapped;
    return NULL;
  }
  api->object_inc_ref(obj);
  kc_status* st = kc__tvm_fn_make(api, kc__tvm_object_call, obj,
                                  "(a function value)", out);
  if (st) api->object_dec_ref(obj);
  return st;
}

void* kc__tvm_fn_object(const kc__tvm_api* api, const kc_func* func,
                        kc_status** out_status) {
  if (func->fn != kc__tvm_call) return NULL;
  kc__tvm_fn* f = func->self;
  if (f->self) {
    api->object_inc_ref(f->self);
    return f->self;
  }
  void* obj = atomic_load_explicit(&f->symbol_obj, memory_order_acquire);
  if (!obj) {
    void* made = NULL;
    int rc = api->function_create(NULL, f->call, NULL, &made);
    if (rc != 0) {
      *out_status = kc__tvm_error_to_status(api, rc, f->name);
      return NULL;
    }
    if (atomic_compare_exchange_strong(&f->symbol_obj, &obj, made)) {
      obj = made;
    } else {
      api->object_dec_ref(made); /* another thread's is kept */
    }
  }
  api->object_inc_ref(obj);
  return obj;
}

/* ---- modules --------------------------------------------------------------- */

typedef struct kc__tvm_site kc__tvm_site;
static kc_status* kc__tvm_site_make(const kc_xcall_frame* frame,
                                    kc__tvm_site** out);
static void kc__tvm_site_free(void* state);

static kc_status* kc__tvm_symbol_run(kc_xcall_frame* frame);

kc_status* kc__tvm_register_module(void* handle, const char* names,
                                   const char* prefix) {
  kc_status* st = NULL;
  const kc__tvm_api* api = kc__tvm_api_get(&st);
  if (!api) return st;
  size_t prefix_len = strlen(prefix);
  for (const char* n = names; *n; n += strlen(n) + 1) {
    char symbol[512];
    char full[512];
    if (snprintf(symbol, sizeof symbol, "__tvm_ffi_%s", n) >= (int)sizeof symbol ||
        prefix_len + 1 + strlen(n) >= sizeof full) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "exported function %s: the name is too long",
                              KC__QS(n));
    }
    snprintf(full, sizeof full, "%s.%s", prefix, n);
    void* sym = dlsym(handle, symbol);
    if (!sym) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "exported function %s: dlsym cannot find %s",
                              KC__QS(n), symbol);
    }
    kc__tvm_safe_call call;
    memcpy(&call, &sym, sizeof call);
    kc_func* f = NULL;
    KC_RETURN_IF_ERROR(kc__tvm_symbol_to_kc(api, call, full, &f));
    st = kc_func_registry_register(kc_sv(full), f, 0);
    kc_object_release(KC_OBJECT(f));
    if (st) {
      return kc_status_add_context(st, "registering exported function %s",
                                   KC__QS(n));
    }
    /* The target calls the symbol through a record of its own, not the
     * function object: a target holding the plugin's function would keep
     * the plugin from unloading. */
    kc__tvm_fn* t = NULL;
    KC_RETURN_IF_ERROR(kc__tvm_fn_new(api, call, NULL, full, &t));
    kc_xcall_signature sig = {.struct_size = sizeof sig,
                              .flags = KC_XCALL_SIG_OPEN};
    KC_RETURN_IF_ERROR(kc_xcall_register_typed(kc_sv(full), KC_PLATFORM_HOST,
                                               &sig, kc__tvm_symbol_run, t,
                                               kc__tvm_fn_free, 0),
                       "registering exported function %s as a custom-call "
                       "target",
                       KC__QS(n));
  }
  return NULL;
}

/* ---- custom-call targets ----------------------------------------------------- */

/* What a target calling a kcall function keeps: the function, and per call
 * site the attributes as kcall values (state). */
struct kc__tvm_site {
  int32_t num_attrs;
  kc_any attrs[];
};

static void kc__tvm_site_free(void* state) {
  kc__tvm_site* site = state;
  for (int32_t i = 0; i < site->num_attrs; ++i) kc_any_release(&site->attrs[i]);
  kc__free(site);
}

static kc_status* kc__tvm_site_make(const kc_xcall_frame* frame,
                                    kc__tvm_site** out) {
  kc__tvm_site* site =
      kc__calloc(1, sizeof *site + (size_t)frame->num_attrs * sizeof(kc_any));
  if (!site) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_status* st = NULL;
  for (int32_t i = 0; i < frame->num_attrs && !st; ++i) {
    const kc_attr* a = &frame->attrs[i];
    kc_any* v = &site->attrs[site->num_attrs];
    switch (a->type) {
      case KC_ATTR_BOOL:
        *v = (kc_any){.type_index = KC_TYPE_BOOL, .u.v_int64 = a->v.b};
        break;
      case KC_ATTR_I8: case KC_ATTR_I16: case KC_ATTR_I32: case KC_ATTR_I64:
        *v = (kc_any){.type_index = KC_TYPE_INT, .u.v_int64 = a->v.i64};
        break;
      case KC_ATTR_U8: case KC_ATTR_U16: case KC_ATTR_U32: case KC_ATTR_U64:
        if (a->v.u64 > (uint64_t)INT64_MAX) {
          st = kc_status_create(KC_INVALID_ARGUMENT,
                                "attribute %.*s: %llu does not fit tvm-ffi's "
                                "int (64-bit signed)",
                                (int)a->name.size, a->name.data,
                                (unsigned long long)a->v.u64);
        }
        *v = (kc_any){.type_index = KC_TYPE_INT, .u.v_int64 = (int64_t)a->v.u64};
        break;
      case KC_ATTR_F32:
        *v = (kc_any){.type_index = KC_TYPE_FLOAT, .u.v_float64 = a->v.f32};
        break;
      case KC_ATTR_F64:
        *v = (kc_any){.type_index = KC_TYPE_FLOAT, .u.v_float64 = a->v.f64};
        break;
      case KC_ATTR_STRING: {
        kc_str* s = NULL;
        st = kc_str_create(NULL, a->v.str, &s);
        if (!st) *v = (kc_any){.type_index = KC_TYPE_STR, .u.v_obj = KC_OBJECT(s)};
        break;
      }
      default:
        st = kc_status_create(KC_INVALID_ARGUMENT,
                              "attribute %.*s is an array or a dictionary: a "
                              "tvm-ffi target takes integers, floats, "
                              "booleans and strings",
                              (int)a->name.size, a->name.data);
    }
    if (!st) site->num_attrs++;
  }
  if (st) {
    kc__tvm_site_free(site);
    return st;
  }
  *out = site;
  return NULL;
}

/* What both kinds of target do: at INSTANTIATE, the call site's
 * attributes as kcall values; at EXECUTE, call(user, operands, results,
 * attributes), the buffers as DLTensor*, the result dropped. */
static kc_status* kc__tvm_target_run(kc_xcall_frame* frame, kc_packed_fn call) {
  if (frame->stage == KC_XCALL_STAGE_INSTANTIATE) {
    kc__tvm_site* site = NULL;
    KC_RETURN_IF_ERROR(kc__tvm_site_make(frame, &site));
    frame->state = site;
    frame->state_deleter = kc__tvm_site_free;
    return NULL;
  }
  const kc__tvm_site* site = frame->state;
  int32_t n = frame->num_args + frame->num_results + site->num_attrs;
  kc_any inline_args[16];
  kc_any* args = inline_args;
  if ((size_t)n > KC__ARRAY_SIZE(inline_args)) {
    args = kc__malloc((size_t)n * sizeof *args);
    if (!args) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  int32_t k = 0;
  for (int32_t i = 0; i < frame->num_args; ++i) {
    args[k++] = kc_any_dltensor(&frame->args[i]);
  }
  for (int32_t i = 0; i < frame->num_results; ++i) {
    args[k++] = kc_any_dltensor(&frame->results[i]);
  }
  for (int32_t i = 0; i < site->num_attrs; ++i) args[k++] = site->attrs[i];
  kc_any ret = kc_any_none();
  kc_status* st = call(frame->user, args, n, &ret);
  kc_any_release(&ret);
  if (args != inline_args) kc__free(args);
  return st;
}

static kc_status* kc__call_kc_func(void* func, const kc_any* args,
                                   int32_t nargs, kc_any* ret) {
  return kc_func_call(func, args, nargs, ret);
}

/* A target calling a kcall function (kc_tvm_ffi_register_target). */
static kc_status* kc__tvm_target(kc_xcall_frame* frame) {
  return kc__tvm_target_run(frame, kc__call_kc_func);
}

/* A module function's own target: straight to the symbol. */
static kc_status* kc__tvm_symbol_run(kc_xcall_frame* frame) {
  return kc__tvm_target_run(frame, kc__tvm_call);
}

static void kc__release_func(void* f) { kc_object_release(f); }

kc_status* kc_tvm_ffi_register_target(kc_string_view target,
                                      kc_platform platform,
                                      kc_string_view func_name,
                                      uint32_t flags) {
  if (!target.data || !func_name.data) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_tvm_ffi_register_target: %s is NULL",
                            target.data ? "func_name" : "target");
  }
  if (platform != KC_PLATFORM_HOST) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "tvm-ffi target %s: platform %s: tvm-ffi targets "
                            "run on the host only",
                            KC__Q(target), kc_platform_name(platform));
  }
  kc_func* f = NULL;
  KC_RETURN_IF_ERROR(kc_func_registry_lookup_retained(func_name, &f),
                     "tvm-ffi target %s", KC__Q(target));
  kc_xcall_signature sig = {.struct_size = sizeof sig, .flags = KC_XCALL_SIG_OPEN};
  return kc_status_add_context(
      kc_xcall_register_typed(target, platform, &sig, kc__tvm_target, f,
                              kc__release_func, flags),
      "registering tvm-ffi target %s", KC__Q(target));
}
