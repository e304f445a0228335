/*
 * kcall/abi_helpers.h — the inline helpers built only on the plugin ABI:
 * value constructors, string views, dtype and device helpers, the argument
 * readers a plugin calls with its host table, and the loop that registers
 * a list of packed functions.
 *
 * kcall/abi.h declares the ABI itself (the types that cross the plugin
 * boundary, the host API table, the entry point) and includes this header
 * at its end, so a plugin includes <kcall/abi.h> alone and gets both. This
 * header may also be included on its own: it includes kcall/abi.h first.
 * Like abi.h it needs only <stddef.h>, <stdint.h> and <stdbool.h>, is
 * valid C11 and C++, and calls the library only through the kc_host_api
 * table it is given. Everything here compiles into the plugin that uses
 * it, so it may change without changing the ABI; kc_func_entry, the one
 * type here, is still recorded and checked with abi.h's (docs/abi.md).
 */
#ifndef KCALL_ABI_HELPERS_H_
#define KCALL_ABI_HELPERS_H_

#include "kcall/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* DLPack dtypes and devices                                                 */
/* ------------------------------------------------------------------------ */

/* Same code, bits and lanes. */
static inline bool kc_dtype_equal(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
/* A dtype from its DLPack fields: kc_dtype_make(kDLFloat, 32, 1) is f32. */
static inline DLDataType kc_dtype_make(uint8_t code, uint8_t bits,
                                       uint16_t lanes) {
  DLDataType t;
  t.code = code;
  t.bits = bits;
  t.lanes = lanes;
  return t;
}
/* cpu:0. */
static inline DLDevice kc_device_cpu(void) {
  DLDevice d;
  d.device_type = kDLCPU;
  d.device_id = 0;
  return d;
}

/* ------------------------------------------------------------------------ */
/* Status                                                                    */
/* ------------------------------------------------------------------------ */

/* Evaluates `expr` (a kc_status*); on failure returns the status from the
 * enclosing function, after adding the printf-style context when one is
 * given (at most 14 arguments after the format):
 *   KC_RETURN_IF_ERROR(parse(text));
 *   KC_RETURN_IF_ERROR(load(path), "while loading '%s'", path);
 * The form with a context calls kc_status_add_context: kcall/base.h
 * declares it for hosts, kcall/plugin_api.h for plugins. */
#define KC_RETURN_IF_ERROR(...)                                               \
  KC__RETURN_IF_ERROR_PICK(__VA_ARGS__, KC__RETURN_IF_ERROR_CTX,              \
      KC__RETURN_IF_ERROR_CTX, KC__RETURN_IF_ERROR_CTX,                       \
      KC__RETURN_IF_ERROR_CTX, KC__RETURN_IF_ERROR_CTX,                       \
      KC__RETURN_IF_ERROR_CTX, KC__RETURN_IF_ERROR_CTX,                       \
      KC__RETURN_IF_ERROR_CTX, KC__RETURN_IF_ERROR_CTX,                       \
      KC__RETURN_IF_ERROR_CTX, KC__RETURN_IF_ERROR_CTX,                       \
      KC__RETURN_IF_ERROR_CTX, KC__RETURN_IF_ERROR_CTX,                       \
      KC__RETURN_IF_ERROR_CTX, KC__RETURN_IF_ERROR_CTX,                       \
      KC__RETURN_IF_ERROR_BARE, unused)(__VA_ARGS__)
/* The 17th argument names the form: BARE for `expr` alone, else CTX. */
#define KC__RETURN_IF_ERROR_PICK(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, \
                                 a12, a13, a14, a15, a16, form, ...)          \
  form
#define KC__RETURN_IF_ERROR_BARE(expr)                                        \
  do {                                                                        \
    kc_status* kc__st = (expr);                                               \
    if (kc__st) return kc__st;                                                \
  } while (0)
#define KC__RETURN_IF_ERROR_CTX(expr, ...)                                    \
  do {                                                                        \
    kc_status* kc__st = (expr);                                               \
    if (kc__st) return kc_status_add_context(kc__st, __VA_ARGS__);            \
  } while (0)

/* ------------------------------------------------------------------------ */
/* Strings                                                                   */
/* ------------------------------------------------------------------------ */

/* A view of a string literal: KC_SV_LIT("mylib.add"). */
#define KC_SV_LIT(lit) ((kc_string_view){(lit), sizeof(lit) - 1})

/* A view of a NUL-terminated string (NULL gives the empty view). */
static inline kc_string_view kc_sv(const char* s) {
  kc_string_view v = {s, 0};
  if (s) {
    while (s[v.size]) ++v.size;
  }
  return v;
}

/* ------------------------------------------------------------------------ */
/* Values                                                                    */
/* ------------------------------------------------------------------------ */

/* Constructors for plain values. None of them allocates. */
static inline kc_any kc_any_none(void) {
  kc_any v;
  v.type_index = KC_TYPE_NONE;
  v.small_len = 0;
  v.u.v_int64 = 0;
  return v;
}
static inline kc_any kc_any_bool(bool b) {
  kc_any v = kc_any_none();
  v.type_index = KC_TYPE_BOOL;
  v.u.v_int64 = b ? 1 : 0;
  return v;
}
static inline kc_any kc_any_int(int64_t i) {
  kc_any v = kc_any_none();
  v.type_index = KC_TYPE_INT;
  v.u.v_int64 = i;
  return v;
}
static inline kc_any kc_any_float(double d) {
  kc_any v = kc_any_none();
  v.type_index = KC_TYPE_FLOAT;
  v.u.v_float64 = d;
  return v;
}
static inline kc_any kc_any_opaque(void* p) {
  kc_any v = kc_any_none();
  v.type_index = KC_TYPE_OPAQUE_PTR;
  v.u.v_ptr = p;
  return v;
}
static inline kc_any kc_any_dtype(DLDataType t) {
  kc_any v = kc_any_none();
  v.type_index = KC_TYPE_DTYPE;
  v.u.v_dtype = t;
  return v;
}
static inline kc_any kc_any_device(DLDevice d) {
  kc_any v = kc_any_none();
  v.type_index = KC_TYPE_DEVICE;
  v.u.v_device = d;
  return v;
}
/* A borrowed NUL-terminated string; valid only as an argument (never as a
 * returned value, which must own its storage). */
static inline kc_any kc_any_cstr(const char* s) {
  kc_any v = kc_any_none();
  v.type_index = KC_TYPE_RAW_STR;
  v.u.v_c_str = s;
  return v;
}
/* A borrowed DLTensor; valid only as an argument. */
static inline kc_any kc_any_dltensor(DLTensor* t) {
  kc_any v = kc_any_none();
  v.type_index = KC_TYPE_DLTENSOR_PTR;
  v.u.v_dltensor = t;
  return v;
}
/* Wraps an object without taking a reference: the result borrows `obj`. */
static inline kc_any kc_any_object(kc_object* obj) {
  kc_any v = kc_any_none();
  if (obj) {
    v.type_index = obj->type_index;
    v.u.v_obj = obj;
  }
  return v;
}
static inline bool kc_any_is_object(const kc_any* v) {
  return v->type_index >= KC_TYPE_OBJECT_BEGIN;
}

/* ------------------------------------------------------------------------ */
/* Argument readers                                                          */
/* ------------------------------------------------------------------------ */
/*
 * kc_args_try_*: the inline checks behind every argument reader. Each
 * returns true and writes *out when args[index] exists and holds the type
 * (or one the reader converts); otherwise false, writing nothing. They
 * never allocate and never call the library.
 *
 * kc_host_args_*: the readers a plugin uses. The check that succeeds is
 * inline; only a failure (or a value the inline check does not cover, a
 * string or tensor object) calls through the host table, which builds the
 * status ("mylib.add: argument 1: expected int, got str"). Hosts use the
 * same readers without the table: kc_args_get_* in kcall/func.h.
 */

static inline bool kc_args_try_int(const kc_any* args, int32_t nargs,
                                   int32_t index, int64_t* out) {
  if (!out || !args || index < 0 || index >= nargs) return false;
  int32_t t = args[index].type_index;
  if (t != KC_TYPE_INT && t != KC_TYPE_BOOL) return false;
  *out = args[index].u.v_int64;
  return true;
}

/* An int converts to float. */
static inline bool kc_args_try_float(const kc_any* args, int32_t nargs,
                                     int32_t index, double* out) {
  if (!out || !args || index < 0 || index >= nargs) return false;
  if (args[index].type_index == KC_TYPE_FLOAT) {
    *out = args[index].u.v_float64;
  } else if (args[index].type_index == KC_TYPE_INT) {
    *out = (double)args[index].u.v_int64;
  } else {
    return false;
  }
  return true;
}

/* An int converts to bool (non-zero is true). */
static inline bool kc_args_try_bool(const kc_any* args, int32_t nargs,
                                    int32_t index, bool* out) {
  if (!out || !args || index < 0 || index >= nargs) return false;
  int32_t t = args[index].type_index;
  if (t != KC_TYPE_BOOL && t != KC_TYPE_INT) return false;
  *out = args[index].u.v_int64 != 0;
  return true;
}

static inline bool kc_args_try_func(const kc_any* args, int32_t nargs,
                                    int32_t index, kc_func** out) {
  if (!out || !args || index < 0 || index >= nargs) return false;
  if (args[index].type_index != KC_TYPE_FUNC) return false;
  *out = (kc_func*)(void*)args[index].u.v_obj;
  return true;
}

/* None reads as NULL. */
static inline bool kc_args_try_opaque(const kc_any* args, int32_t nargs,
                                      int32_t index, void** out) {
  if (!out || !args || index < 0 || index >= nargs) return false;
  int32_t t = args[index].type_index;
  if (t != KC_TYPE_OPAQUE_PTR && t != KC_TYPE_NONE) return false;
  *out = t == KC_TYPE_NONE ? NULL : args[index].u.v_ptr;
  return true;
}

/* A borrowed DLTensor* (not a tensor object: its layout is private). */
static inline bool kc_args_try_dltensor(const kc_any* args, int32_t nargs,
                                        int32_t index, DLTensor** out) {
  if (!out || !args || index < 0 || index >= nargs) return false;
  if (args[index].type_index != KC_TYPE_DLTENSOR_PTR ||
      !args[index].u.v_dltensor) {
    return false;
  }
  *out = args[index].u.v_dltensor;
  return true;
}

/* A borrowed C string or an inline small string (not a string object). */
static inline bool kc_args_try_string(const kc_any* args, int32_t nargs,
                                      int32_t index, kc_string_view* out) {
  if (!out || !args || index < 0 || index >= nargs) return false;
  const kc_any* a = &args[index];
  if (a->type_index == KC_TYPE_SMALL_STR) {
    out->data = a->u.v_small;
    out->size = a->small_len;
  } else if (a->type_index == KC_TYPE_RAW_STR && a->u.v_c_str) {
    *out = kc_sv(a->u.v_c_str);
  } else {
    return false;
  }
  return true;
}

static inline kc_status* kc_host_args_check_count(const kc_host_api* host,
                                                  const char* fn_name,
                                                  int32_t nargs,
                                                  int32_t min_count,
                                                  int32_t max_count) {
  if (nargs >= min_count && (max_count < 0 || nargs <= max_count)) return NULL;
  return host->args_check_count(fn_name, nargs, min_count, max_count);
}

#define KC__HOST_READER(kind, type)                                            \
  static inline kc_status* kc_host_args_get_##kind(                            \
      const kc_host_api* host, const char* fn_name, const kc_any* args,        \
      int32_t nargs, int32_t index, type* out_value) {                         \
    if (kc_args_try_##kind(args, nargs, index, out_value)) return NULL;        \
    /* A local for the slow path keeps *out_value from escaping, so that   \
     * the caller's variable can stay in a register. */                    \
    type slow;                                                                 \
    kc_status* st = host->args_get_##kind(fn_name, args, nargs, index,         \
                                          out_value ? &slow : NULL);           \
    if (!st) *out_value = slow;                                                \
    return st;                                                                 \
  }
KC__HOST_READER(int, int64_t)
KC__HOST_READER(float, double)
KC__HOST_READER(bool, bool)
KC__HOST_READER(string, kc_string_view)
KC__HOST_READER(func, kc_func*)
KC__HOST_READER(dltensor, DLTensor*)
KC__HOST_READER(opaque, void*)
#undef KC__HOST_READER

/* ------------------------------------------------------------------------ */
/* Registering packed functions                                              */
/* ------------------------------------------------------------------------ */

/* One packed function to register: see kc_host_register_functions. */
typedef struct kc_func_entry {
  const char* name; /* NUL-terminated, e.g. "mylib.add" */
  kc_packed_fn fn;
} kc_func_entry;

/* Registers `count` functions through `host`, each created with `self` (and
 * no destructor: `self` must outlive the registrations, as the host table
 * or static data does). Stops at the first failure and returns its status;
 * called from a plugin's init, a failure discards every registration the
 * init made, so nothing is left half registered. */
static inline kc_status* kc_host_register_functions(
    const kc_host_api* host, const kc_func_entry* entries, size_t count,
    void* self) {
  for (size_t i = 0; i < count; ++i) {
    kc_func* func = NULL;
    kc_status* st = host->func_create(host->system_allocator, entries[i].fn,
                                      self, NULL, &func);
    if (st) return st;
    st = host->func_registry_register(kc_sv(entries[i].name), func, 0);
    host->object_release(KC_OBJECT(func)); /* the registry holds its own */
    if (st) return st;
  }
  return NULL;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_ABI_HELPERS_H_ */
