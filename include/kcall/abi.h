/*
 * kcall/abi.h — every type that crosses the plugin boundary, and the host
 * API table a plugin receives.
 *
 * This is the plugin-facing header. It includes only <stddef.h>,
 * <stdint.h> and <stdbool.h>, is valid C11 and C++, and is all a plugin
 * needs: a plugin built against it reaches the host only through the
 * kc_host_api table handed to its entry point, so it need not link libkcall.
 *
 * ABI rules (docs/abi.md has the long form):
 *   - Every struct that crosses the boundary and may grow starts with
 *     `size_t struct_size`. Fields are only ever appended. A reader reads a
 *     field only if it lies inside the struct_size it was given
 *     (KC_STRUCT_HAS below).
 *   - kc_host_api is append-only. A plugin built against a newer minor than
 *     the host offers sees the host's (smaller) struct_size and api_minor and
 *     must not call past them.
 *   - Layouts of shipped structs are frozen by static assertions in the
 *     library.
 *
 * Ownership, once for the whole API:
 *   - A `_create` function returns an owned object or status; the caller
 *     releases it (`kc_object_release`, `kc_status_destroy`).
 *   - Arguments are borrowed for the duration of the call.
 *   - Accessors (`_get_*`) return borrowed pointers that live as long as the
 *     object they came from.
 *   - `_destroy(NULL)` and `_release(NULL)` are no-ops.
 *   - A value written to an `out_*` or `ret` parameter is owned by the
 *     caller.
 */
#ifndef KCALL_ABI_H_
#define KCALL_ABI_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Export macros                                                             */
/* ------------------------------------------------------------------------ */

/* KC_API marks a function exported from libkcall. The library is built with
 * -fvisibility=hidden; nothing else is visible. */
#if defined(_WIN32)
#if defined(KC_BUILDING_LIBRARY)
#define KC_API __declspec(dllexport)
#else
#define KC_API
#endif
#else
#define KC_API __attribute__((visibility("default")))
#endif

/* KC_PLUGIN_EXPORT marks the one symbol a plugin exports. */
#ifdef __cplusplus
#define KC_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define KC_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* True when `field` of `type` lies wholly inside the struct_size that `p`
 * (a pointer to that type) declares. Read a field only when this holds. */
#define KC_STRUCT_HAS(p, type, field)                                         \
  ((p)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* Version of the plugin API (the kc_host_api table and kc_plugin_info).
 * A different major is refused; a newer plugin minor is capped to the
 * host's. */
#define KC_API_VERSION_MAJOR 1
#define KC_API_VERSION_MINOR 0

/* ------------------------------------------------------------------------ */
/* DLPack 1.x, declared from the DLPack specification, layout for layout.    */
/* Skipped when the official dlpack.h was included first.                    */
/* ------------------------------------------------------------------------ */
#ifndef DLPACK_MAJOR_VERSION
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1
#define DLPACK_EXTERN_C
#define DLPACK_DLL

typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

#ifdef __cplusplus
typedef enum : int32_t {
#else
typedef enum {
#endif
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
  kDLFloat8_e3m4 = 7U,
  kDLFloat8_e4m3 = 8U,
  kDLFloat8_e4m3b11fnuz = 9U,
  kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U,
  kDLFloat8_e5m2 = 12U,
  kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U,
  kDLFloat6_e3m2fn = 16U,
  kDLFloat4_e2m1fn = 17U
} DLDataTypeCode;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides; /* in elements; NULL means compact row-major */
  uint64_t byte_offset;
} DLTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1ULL << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1ULL << 1)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1ULL << 2)

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
#endif /* DLPACK_MAJOR_VERSION */

/* ------------------------------------------------------------------------ */
/* Status                                                                    */
/* ------------------------------------------------------------------------ */

/* The 17 canonical codes, written once. X(NAME, value). */
#define KC_STATUS_CODES(X)                                                     \
  X(OK, 0)                                                                     \
  X(CANCELLED, 1)                                                              \
  X(UNKNOWN, 2)                                                                \
  X(INVALID_ARGUMENT, 3)                                                       \
  X(DEADLINE_EXCEEDED, 4)                                                      \
  X(NOT_FOUND, 5)                                                              \
  X(ALREADY_EXISTS, 6)                                                         \
  X(PERMISSION_DENIED, 7)                                                      \
  X(RESOURCE_EXHAUSTED, 8)                                                     \
  X(FAILED_PRECONDITION, 9)                                                    \
  X(ABORTED, 10)                                                               \
  X(OUT_OF_RANGE, 11)                                                          \
  X(UNIMPLEMENTED, 12)                                                         \
  X(INTERNAL, 13)                                                              \
  X(UNAVAILABLE, 14)                                                           \
  X(DATA_LOSS, 15)                                                             \
  X(UNAUTHENTICATED, 16)

typedef enum kc_status_code {
#define KC__CODE_ENUM(name, value) KC_##name = value,
  KC_STATUS_CODES(KC__CODE_ENUM)
#undef KC__CODE_ENUM
} kc_status_code;

/* An error: code, message, and context added while it propagates. NULL is
 * success. Opaque; see base.h for the functions. */
typedef struct kc_status kc_status;

/* ------------------------------------------------------------------------ */
/* Strings and allocators                                                    */
/* ------------------------------------------------------------------------ */

/* A borrowed run of bytes. Not necessarily NUL-terminated. */
typedef struct kc_string_view {
  const char* data;
  size_t size;
} kc_string_view;

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

/* An allocator: one function and its state, in the style of Lua's
 * lua_Alloc. `fn(self, NULL, 0, n, align)` allocates n bytes aligned to
 * `align` (a power of two; 0 means the platform's default);
 * `fn(self, p, old, 0, align)` frees p (returns NULL); both sizes non-zero
 * reallocates. Returns NULL when out of memory. `old_size` and `align` are
 * the values p was allocated with. Must be thread-safe. */
typedef struct kc_allocator {
  void* self;
  void* (*fn)(void* self, void* ptr, size_t old_size, size_t new_size,
              size_t alignment);
} kc_allocator;

/* ------------------------------------------------------------------------ */
/* Values                                                                    */
/* ------------------------------------------------------------------------ */

/* Type indices of kc_any, written once. X(NAME, value, "printed name").
 * Indices below KC_TYPE_OBJECT_BEGIN are plain values held in the payload;
 * indices from KC_TYPE_OBJECT_BEGIN on are reference-counted objects. */
#define KC_POD_TYPES(X)                                                        \
  X(NONE, 0, "none")                                                           \
  X(BOOL, 1, "bool")                                                           \
  X(INT, 2, "int")                                                             \
  X(FLOAT, 3, "float")                                                         \
  X(OPAQUE_PTR, 4, "opaque_ptr")                                               \
  X(DTYPE, 5, "dtype")                                                         \
  X(DEVICE, 6, "device")                                                       \
  X(RAW_STR, 7, "str")                                                         \
  X(DLTENSOR_PTR, 8, "tensor")                                                 \
  X(SMALL_STR, 9, "str")
#define KC_OBJECT_TYPES(X)                                                     \
  X(STR, 64, "str")                                                            \
  X(BYTES, 65, "bytes")                                                        \
  X(FUNC, 66, "function")                                                      \
  X(ARRAY, 67, "array")                                                        \
  X(TENSOR, 68, "tensor")                                                      \
  X(MODULE, 69, "module")

typedef enum kc_type_index {
#define KC__TYPE_ENUM(name, value, text) KC_TYPE_##name = value,
  KC_POD_TYPES(KC__TYPE_ENUM) KC_OBJECT_TYPES(KC__TYPE_ENUM)
#undef KC__TYPE_ENUM
  KC_TYPE_OBJECT_BEGIN = 64
} kc_type_index;

/* Longest string held inline in a kc_any (KC_TYPE_SMALL_STR), excluding
 * the terminating NUL that is always stored after it. */
#define KC_SMALL_STR_MAX 7

/* The header every heap object starts with. `ref_count` is updated only
 * with atomic operations (kc_object_retain / kc_object_release). The
 * deleter frees the object when the count reaches zero. */
typedef struct kc_object {
  int64_t ref_count;
  int32_t type_index;
  uint32_t reserved;
  void (*deleter)(struct kc_object* self);
} kc_object;

/* A 16-byte tagged value. `small_len` is the length of an inline string
 * (KC_TYPE_SMALL_STR) and 0 otherwise. Which payload member is valid
 * follows from type_index:
 *   BOOL, INT           v_int64        FLOAT        v_float64
 *   OPAQUE_PTR          v_ptr          DTYPE        v_dtype
 *   DEVICE              v_device       RAW_STR      v_c_str (borrowed)
 *   DLTENSOR_PTR        v_dltensor (borrowed)       SMALL_STR  v_small
 *   >= OBJECT_BEGIN     v_obj (a reference is held by whoever owns the any)
 */
typedef struct kc_any {
  int32_t type_index;
  uint32_t small_len;
  union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    kc_object* v_obj;
    const char* v_c_str;
    DLTensor* v_dltensor;
    DLDataType v_dtype;
    DLDevice v_device;
    char v_small[8];
  } u;
} kc_any;

/* Object handles. Each starts with a kc_object header, so a pointer to one
 * converts to kc_object* with KC_OBJECT(p). */
typedef struct kc_str kc_str;     /* immutable UTF-8 text, NUL-terminated */
typedef struct kc_bytes kc_bytes; /* immutable bytes */
typedef struct kc_array kc_array; /* immutable array of kc_any */
typedef struct kc_tensor kc_tensor; /* DLPack tensor with owned storage */
typedef struct kc_func kc_func;   /* packed function */
/* A pool of worker threads (kcall/runtime.h). */
typedef struct kc_thread_pool kc_thread_pool;
#define KC_OBJECT(p) ((kc_object*)(void*)(p))

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
/* Packed functions                                                          */
/* ------------------------------------------------------------------------ */

/* The one calling convention of a packed function. `args` are borrowed for
 * the call; `ret` arrives as none and, on success, receives a value the
 * caller owns. On failure the function returns a status and leaves `ret`
 * none (the caller releases anything left there). */
typedef kc_status* (*kc_packed_fn)(void* self, const kc_any* args,
                                   int32_t nargs, kc_any* ret);

/* Destructor of user data crossing the boundary. */
typedef void (*kc_deleter_fn)(void* self);

/* The frozen first fields of every function object. Exposed so that a call
 * compiles to two loads and an indirect call (kc_func_call in func.h);
 * the rest of the object is private. */
typedef struct kc_func_prefix {
  kc_object header;
  kc_packed_fn fn;
  void* self;
} kc_func_prefix;

/* Flags for kc_func_registry_register. */
#define KC_REGISTER_OVERRIDE 1u

/* ------------------------------------------------------------------------ */
/* The host API table                                                        */
/* ------------------------------------------------------------------------ */

/* The functions a plugin may call, each the same as the library function of
 * the same name (without the table): see base.h, value.h, tensor.h and
 * func.h for their contracts. Append-only: new entries go at the end, and a
 * plugin checks KC_STRUCT_HAS(host, kc_host_api, entry) before it calls an
 * entry newer than the API minor it requires. */
typedef struct kc_host_api {
  size_t struct_size;
  uint32_t api_major;
  uint32_t api_minor;
  /* NULL-terminated names of the optional features this host offers. */
  const char* const* features;
  const kc_allocator* system_allocator;

  /* status (base.h) */
  kc_status* (*status_create)(kc_status_code code, const char* fmt, ...);
  kc_status* (*status_add_context)(kc_status* status, const char* fmt, ...);
  kc_status_code (*status_get_code)(const kc_status* status);
  const char* (*status_get_message)(const kc_status* status);
  void (*status_destroy)(kc_status* status);

  /* values (value.h) */
  void (*object_retain)(kc_object* obj);
  void (*object_release)(kc_object* obj);
  void (*any_retain)(const kc_any* value);
  void (*any_release)(kc_any* value);
  kc_status* (*any_from_string)(const kc_allocator* alloc, kc_string_view s,
                                kc_any* out_value);
  bool (*any_get_string)(const kc_any* value, kc_string_view* out_view);
  kc_status* (*str_create)(const kc_allocator* alloc, kc_string_view s,
                           kc_str** out_str);
  kc_status* (*bytes_create)(const kc_allocator* alloc, const void* data,
                             size_t size, kc_bytes** out_bytes);
  kc_status* (*array_create)(const kc_allocator* alloc, const kc_any* items,
                             size_t count, kc_array** out_array);
  size_t (*array_get_size)(const kc_array* array);
  const kc_any* (*array_get_item)(const kc_array* array, size_t index);

  /* tensors (tensor.h) */
  kc_status* (*tensor_create)(const kc_allocator* alloc, const int64_t* shape,
                              int32_t ndim, DLDataType dtype, DLDevice device,
                              kc_tensor** out_tensor);
  const DLTensor* (*tensor_get_dltensor)(const kc_tensor* tensor);

  /* packed functions and their registry (func.h) */
  kc_status* (*func_create)(const kc_allocator* alloc, kc_packed_fn fn,
                            void* self, kc_deleter_fn self_deleter,
                            kc_func** out_func);
  kc_status* (*func_call)(const kc_func* func, const kc_any* args,
                          int32_t nargs, kc_any* out_ret);
  kc_status* (*func_registry_register)(kc_string_view name, kc_func* func,
                                       uint32_t flags);
  kc_status* (*func_registry_lookup)(kc_string_view name, kc_func** out_func);

  /* typed argument helpers (func.h) */
  kc_status* (*args_check_count)(const char* fn_name, int32_t nargs,
                                 int32_t min_count, int32_t max_count);
  kc_status* (*args_get_int)(const char* fn_name, const kc_any* args,
                             int32_t nargs, int32_t index, int64_t* out_value);
  kc_status* (*args_get_float)(const char* fn_name, const kc_any* args,
                               int32_t nargs, int32_t index, double* out_value);
  kc_status* (*args_get_bool)(const char* fn_name, const kc_any* args,
                              int32_t nargs, int32_t index, bool* out_value);
  kc_status* (*args_get_string)(const char* fn_name, const kc_any* args,
                                int32_t nargs, int32_t index,
                                kc_string_view* out_value);
  kc_status* (*args_get_func)(const char* fn_name, const kc_any* args,
                              int32_t nargs, int32_t index,
                              kc_func** out_value);
  kc_status* (*args_get_dltensor)(const char* fn_name, const kc_any* args,
                                  int32_t nargs, int32_t index,
                                  DLTensor** out_value);
  kc_status* (*args_get_opaque)(const char* fn_name, const kc_any* args,
                                int32_t nargs, int32_t index,
                                void** out_value);
} kc_host_api;

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

/* ------------------------------------------------------------------------ */
/* The plugin entry point                                                    */
/* ------------------------------------------------------------------------ */

/* What a plugin says about itself. The plugin owns it (usually a static
 * object); it must stay valid while the plugin is loaded. */
typedef struct kc_plugin_info {
  size_t struct_size;     /* sizeof(kc_plugin_info) as the plugin saw it */
  uint32_t api_major;     /* KC_API_VERSION_MAJOR the plugin was built with */
  uint32_t api_minor;     /* KC_API_VERSION_MINOR the plugin was built with */
  const char* name;       /* NUL-terminated, non-empty */
  const char* version;    /* the plugin's own version text; may be NULL */
  /* NULL, or a NULL-terminated list of host features the plugin cannot do
   * without; loading fails, naming the first one missing. */
  const char* const* required_features;
  /* Registers what the plugin offers. Called once, after the version check.
   * Everything registered during the call is published only if it returns
   * NULL; on a status nothing it registered remains. */
  kc_status* (*init)(const kc_host_api* host);
} kc_plugin_info;

/* The one symbol a plugin exports. It receives the host's table (to read
 * its version and features) and returns the plugin's info; it must not
 * register anything itself (that is init's job). */
#define KC_PLUGIN_ENTRY_NAME kc_plugin_entry
#define KC_PLUGIN_ENTRY_SYMBOL "kc_plugin_entry"
typedef const kc_plugin_info* (*kc_plugin_entry_fn)(const kc_host_api* host);

/* The entry point's prototype, so that a plugin compiled with
 * -Wmissing-prototypes needs nothing more than KC_PLUGIN_ENTRY. */
KC_PLUGIN_EXPORT const kc_plugin_info* KC_PLUGIN_ENTRY_NAME(
    const kc_host_api* host);

/* Declares the entry point in a plugin:
 *   KC_PLUGIN_ENTRY(host) { (void)host; return &my_info; } */
#define KC_PLUGIN_ENTRY(host_param)                                           \
  KC_PLUGIN_EXPORT const kc_plugin_info* KC_PLUGIN_ENTRY_NAME(                 \
      const kc_host_api* host_param)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_ABI_H_ */
