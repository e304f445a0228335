/*
 * kcall/typed.h — typed packed functions for plugins written in C.
 *
 * A packed function reads its arguments out of kc_any values and writes its
 * result into one. For the common signatures this header writes that
 * function around a plain C function:
 *
 *   static int64_t add(int64_t a, int64_t b) { return a + b; }
 *   KC_TYPED_FUNC(mylib_add, "mylib.add", int, add, int, int)
 *
 * defines `mylib_add`, a kc_packed_fn that checks it was given exactly two
 * arguments, reads both as ints, calls add and returns its result as an
 * int. A wrong call is refused before add runs, with a status naming the
 * function and the argument:
 *
 *   INVALID_ARGUMENT  "mylib.add: expected 2 arguments, got 3"
 *   INVALID_ARGUMENT  "mylib.add: argument 1: expected int, got str"
 *   OUT_OF_RANGE      "mylib.scale: argument 0: expected an int in
 *                      [-2147483648, 2147483647], got 4294967296"
 *   INVALID_ARGUMENT  "mylib.fill: argument 0: expected a tensor of f32,
 *                      got one of f64"
 *
 * KC_TYPED_ENTRY(mylib_add) is its entry for kc_host_register_typed, which
 * registers a list of them in a plugin's init:
 *
 *   static const kc_func_entry kFuncs[] = {KC_TYPED_ENTRY(mylib_add)};
 *   return kc_host_register_typed(host, kFuncs, 1);
 *
 * The wrappers reach the host only through the kc_host_api table that is
 * their `self` (kc_host_register_typed creates them so), with the entries
 * and inline readers abi.h already has; this header adds nothing to the
 * table and needs no library symbol. Like abi.h it includes only
 * <stddef.h>, <stdint.h> and <stdbool.h>, and is valid C11 and C++ (C++
 * plugins have kcall::register_func in kcall/kcall.hpp, which also takes
 * lambdas and state).
 *
 * ---- KC_TYPED_FUNC(ID, NAME, RESULT, FN, ARG...) ----------------------
 *
 * ID is the name of the packed function to define (static, at file scope);
 * NAME the registered name, a string literal, used in every message; FN the
 * C function; RESULT and each ARG a tag from the tables below. One to six
 * ARG tags; KC_TYPED_FUNC0(ID, NAME, RESULT, FN) for none.
 *
 *   ARG tag      FN takes          accepts (anything else is refused)
 *   int          int64_t           int; bool as 0 or 1
 *   i32          int32_t           int (or bool) in int32_t's range, else
 *                                  OUT_OF_RANGE
 *   float        double            float; int, converted
 *   f32          float             float or int, converted; a finite value
 *                                  beyond float's range is OUT_OF_RANGE
 *   bool         bool              bool; int, non-zero is true
 *   str          kc_string_view    any string; borrowed for the call
 *   cstr         const char*       any string (kcall's strings are all
 *                                  NUL-terminated); borrowed for the call
 *   func         kc_func*          function; borrowed for the call (call it
 *                                  with host->func_call)
 *   opaque       void*             opaque pointer; none gives NULL
 *   tensor       DLTensor*         tensor, any dtype and device; borrowed
 *   f32_tensor   DLTensor*         tensor of f32 in host memory (see
 *   f64_tensor                     kc_host_check_tensor), likewise f64,
 *   i32_tensor                     i32 and i64
 *   i64_tensor
 *
 *   RESULT tag   FN is                                      returns
 *   void         void FN(args)                              none
 *   int          int64_t FN(args)                           int
 *   float        double FN(args)                            float
 *   bool         bool FN(args)                              bool
 *   str          kc_string_view FN(args)                    a copy, as str
 *   cstr         const char* FN(args)                       a copy; NULL
 *                                                           gives none
 *   status       kc_status* FN(const kc_host_api* host, args)   none, or
 *                                                           FN's status
 *   any          kc_status* FN(const kc_host_api* host, args, kc_any* ret)
 *                                                           what FN puts
 *                                                           in *ret
 *
 * The status and any forms are for functions that can fail or return
 * objects: they get the host table (to create statuses, strings, tensors,
 * functions) before their arguments. An `any` function follows the packed
 * convention: *ret arrives as none and receives an owned value; on failure
 * the wrapper releases whatever was left there. The other forms cannot fail
 * once their arguments are read.
 *
 * Costs: the checks that succeed are inline compares (str and tensor
 * objects, whose layout is private, take one call through the table);
 * nothing is allocated except a returned string longer than
 * KC_SMALL_STR_MAX. Thread safety is FN's.
 */
#ifndef KCALL_TYPED_H_
#define KCALL_TYPED_H_

#include "kcall/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Registration                                                              */
/* ------------------------------------------------------------------------ */

/* An entry for kc_host_register_typed: {ID's NAME, ID}. */
#define KC_TYPED_ENTRY(id) {id##_name, id}

/* Registers `count` packed functions (typed wrappers or any others that
 * take the host table as their `self`) through `host`, each created with
 * `host` as its `self`. Stops at the first failure and returns its status;
 * in a plugin's init a failure discards every registration the init made.
 * Statuses as kc_func_registry_register: ALREADY_EXISTS for a name taken,
 * INVALID_ARGUMENT for a malformed one. */
static inline kc_status* kc_host_register_typed(const kc_host_api* host,
                                                const kc_func_entry* entries,
                                                size_t count) {
  return kc_host_register_functions(host, entries, count,
                                    (void*)(uintptr_t)host);
}

/* ------------------------------------------------------------------------ */
/* Tensor checks                                                             */
/* ------------------------------------------------------------------------ */

static inline char* kc__typed_put_uint(char* p, unsigned v) {
  char digits[10];
  int d = 0;
  do {
    digits[d++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (d) *p++ = digits[--d];
  return p;
}

/* "f32", "i64", "u8", "bf16", "c64", "bool", "f32x4": the name of `t` as
 * kcall prints dtypes, into `buf` (NUL-terminated; at most 37 bytes). */
static inline void kc__typed_dtype_name(DLDataType t, char buf[48]) {
  static const char* const kPrefix[] = {"i",  "u", "f",   "opaque",
                                        "bf", "c", "bool"};
  char* p = buf;
  if (t.code < 7) {
    for (const char* s = kPrefix[t.code]; *s; ++s) *p++ = *s;
    if (t.code != kDLBool || t.bits != 8) p = kc__typed_put_uint(p, t.bits);
    if (t.lanes != 1) {
      *p++ = 'x';
      p = kc__typed_put_uint(p, t.lanes);
    }
  } else {
    static const char* const kParts[] = {"dtype(code=", ",bits=", ",lanes="};
    const unsigned values[] = {t.code, t.bits, t.lanes};
    for (int k = 0; k < 3; ++k) {
      for (const char* s = kParts[k]; *s; ++s) *p++ = *s;
      p = kc__typed_put_uint(p, values[k]);
    }
    *p++ = ')';
  }
  *p = '\0';
}

/* True for memory the CPU can read: CPU, CUDA and ROCm pinned host
 * memory, CUDA managed memory. */
static inline bool kc_dldevice_is_host_memory(DLDevice device) {
  return device.device_type == kDLCPU ||
         device.device_type == kDLCUDAHost ||
         device.device_type == kDLROCMHost ||
         device.device_type == kDLCUDAManaged;
}

/* Checks argument `index` of `fn_name`, the tensor `t`, for C code that
 * reads its data: its dtype must be `dtype` (dtype.bits == 0: any), its
 * rank `ndim` (negative: any), and its memory host memory
 * (kc_dldevice_is_host_memory). NULL when it is; otherwise an owned
 * INVALID_ARGUMENT status naming the function, the argument, what was
 * expected and what was found ("mylib.fill: argument 0: expected a tensor
 * of f32, got one of f64"). */
static inline kc_status* kc_host_check_tensor(const kc_host_api* host,
                                              const char* fn_name,
                                              int32_t index,
                                              const DLTensor* t,
                                              DLDataType dtype, int32_t ndim) {
  char want[48];
  char got[48];
  if (!t) {
    return host->status_create(KC_INVALID_ARGUMENT,
                               "%s: argument %d: expected a tensor, got NULL",
                               fn_name, (int)index);
  }
  if (dtype.bits != 0 &&
      (t->dtype.code != dtype.code || t->dtype.bits != dtype.bits ||
       t->dtype.lanes != dtype.lanes)) {
    kc__typed_dtype_name(dtype, want);
    kc__typed_dtype_name(t->dtype, got);
    return host->status_create(KC_INVALID_ARGUMENT,
                               "%s: argument %d: expected a tensor of %s, got "
                               "one of %s",
                               fn_name, (int)index, want, got);
  }
  if (ndim >= 0 && t->ndim != ndim) {
    return host->status_create(KC_INVALID_ARGUMENT,
                               "%s: argument %d: expected a tensor of rank "
                               "%d, got rank %d",
                               fn_name, (int)index, (int)ndim, (int)t->ndim);
  }
  if (!kc_dldevice_is_host_memory(t->device)) {
    return host->status_create(KC_INVALID_ARGUMENT,
                               "%s: argument %d: expected a tensor in host "
                               "memory, got one on device type %d (id %d)",
                               fn_name, (int)index, (int)t->device.device_type,
                               (int)t->device.device_id);
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Argument readers, one per ARG tag (used by the wrappers)                  */
/* ------------------------------------------------------------------------ */

typedef int64_t kc__typed_int;
typedef int32_t kc__typed_i32;
typedef double kc__typed_float;
typedef float kc__typed_f32;
typedef bool kc__typed_bool;
typedef kc_string_view kc__typed_str;
typedef const char* kc__typed_cstr;
typedef kc_func* kc__typed_func;
typedef void* kc__typed_opaque;
typedef DLTensor* kc__typed_tensor;
typedef DLTensor* kc__typed_f32_tensor;
typedef DLTensor* kc__typed_f64_tensor;
typedef DLTensor* kc__typed_i32_tensor;
typedef DLTensor* kc__typed_i64_tensor;

#define KC__TYPED_ALIAS(tag, kind, type)                                     \
  static inline kc_status* kc__typed_get_##tag(                              \
      const kc_host_api* host, const char* fn_name, const kc_any* args,      \
      int32_t nargs, int32_t index, type* out) {                             \
    return kc_host_args_get_##kind(host, fn_name, args, nargs, index, out);  \
  }
KC__TYPED_ALIAS(int, int, int64_t)
KC__TYPED_ALIAS(float, float, double)
KC__TYPED_ALIAS(bool, bool, bool)
KC__TYPED_ALIAS(str, string, kc_string_view)
KC__TYPED_ALIAS(func, func, kc_func*)
KC__TYPED_ALIAS(opaque, opaque, void*)
KC__TYPED_ALIAS(tensor, dltensor, DLTensor*)
#undef KC__TYPED_ALIAS

static inline kc_status* kc__typed_get_i32(const kc_host_api* host,
                                           const char* fn_name,
                                           const kc_any* args, int32_t nargs,
                                           int32_t index, int32_t* out) {
  int64_t v = 0;
  kc_status* st = kc_host_args_get_int(host, fn_name, args, nargs, index, &v);
  if (st) return st;
  if (v < INT32_MIN || v > INT32_MAX) {
    return host->status_create(KC_OUT_OF_RANGE,
                               "%s: argument %d: expected an int in "
                               "[-2147483648, 2147483647], got %lld",
                               fn_name, (int)index, (long long)v);
  }
  *out = (int32_t)v;
  return NULL;
}

static inline kc_status* kc__typed_get_f32(const kc_host_api* host,
                                           const char* fn_name,
                                           const kc_any* args, int32_t nargs,
                                           int32_t index, float* out) {
  /* FLT_MAX, written out: this header includes no <float.h>. */
  const double kMax = 3.40282346638528859811704183484516925e+38;
  double v = 0;
  kc_status* st = kc_host_args_get_float(host, fn_name, args, nargs, index, &v);
  if (st) return st;
  /* inf and nan convert as they are; only finite overflow is refused
   * (v - v is 0 exactly when v is finite). */
  if (v - v == 0 && (v > kMax || v < -kMax)) {
    return host->status_create(KC_OUT_OF_RANGE,
                               "%s: argument %d: expected a float within f32 "
                               "range (magnitude at most 3.40282e+38), got %g",
                               fn_name, (int)index, v);
  }
  *out = (float)v;
  return NULL;
}

static inline kc_status* kc__typed_get_cstr(const kc_host_api* host,
                                            const char* fn_name,
                                            const kc_any* args, int32_t nargs,
                                            int32_t index, const char** out) {
  kc_string_view v = {NULL, 0};
  kc_status* st = kc_host_args_get_string(host, fn_name, args, nargs, index, &v);
  if (st) return st;
  *out = v.data ? v.data : "";
  return NULL;
}

#define KC__TYPED_TENSOR(tag, dtype_code, dtype_bits)                        \
  static inline kc_status* kc__typed_get_##tag(                              \
      const kc_host_api* host, const char* fn_name, const kc_any* args,      \
      int32_t nargs, int32_t index, DLTensor** out) {                        \
    DLTensor* t = NULL;                                                      \
    DLDataType want;                                                         \
    want.code = (uint8_t)(dtype_code);                                       \
    want.bits = (uint8_t)(dtype_bits);                                       \
    want.lanes = 1;                                                          \
    kc_status* st =                                                          \
        kc_host_args_get_dltensor(host, fn_name, args, nargs, index, &t);    \
    if (!st) st = kc_host_check_tensor(host, fn_name, index, t, want, -1);   \
    if (!st) *out = t;                                                       \
    return st;                                                               \
  }
KC__TYPED_TENSOR(f32_tensor, kDLFloat, 32)
KC__TYPED_TENSOR(f64_tensor, kDLFloat, 64)
KC__TYPED_TENSOR(i32_tensor, kDLInt, 32)
KC__TYPED_TENSOR(i64_tensor, kDLInt, 64)
#undef KC__TYPED_TENSOR

/* In C11, <stdbool.h> makes `bool` a macro for _Bool, which a tag passed
 * through the wrapper macros becomes before it is pasted. */
typedef bool kc__typed__Bool;
#define kc__typed_get__Bool kc__typed_get_bool
#define KC__TYPED_RESULT__Bool KC__TYPED_RESULT_bool

/* ------------------------------------------------------------------------ */
/* Results, one per RESULT tag                                               */
/* ------------------------------------------------------------------------ */
/* Each ends the wrapper. PLAIN is FN's argument list, HOST the same with
 * the host table first, ANY with the host first and `ret` last. */

#define KC__TYPED_RESULT_void(fn, plain, host_args, any_args) \
  (void)ret;                                                  \
  fn plain;                                                   \
  return NULL;
#define KC__TYPED_RESULT_int(fn, plain, host_args, any_args) \
  *ret = kc_any_int(fn plain);                               \
  return NULL;
#define KC__TYPED_RESULT_float(fn, plain, host_args, any_args) \
  *ret = kc_any_float(fn plain);                               \
  return NULL;
#define KC__TYPED_RESULT_bool(fn, plain, host_args, any_args) \
  *ret = kc_any_bool(fn plain);                               \
  return NULL;
#define KC__TYPED_RESULT_str(fn, plain, host_args, any_args) \
  return kc__host->any_from_string(NULL, fn plain, ret);
#define KC__TYPED_RESULT_cstr(fn, plain, host_args, any_args)   \
  {                                                             \
    const char* kc__text = fn plain;                            \
    if (!kc__text) return NULL;                                 \
    return kc__host->any_from_string(NULL, kc_sv(kc__text), ret); \
  }
#define KC__TYPED_RESULT_status(fn, plain, host_args, any_args) \
  (void)ret;                                                    \
  return fn host_args;
#define KC__TYPED_RESULT_any(fn, plain, host_args, any_args) \
  {                                                          \
    kc_status* kc__fail = fn any_args;                       \
    if (kc__fail) kc__host->any_release(ret);                \
    return kc__fail;                                         \
  }

/* ------------------------------------------------------------------------ */
/* The wrappers                                                              */
/* ------------------------------------------------------------------------ */

/* The start of every wrapper: its name, its signature, the host, the arity
 * check (n arguments exactly). */
#define KC__TYPED_BEGIN(id, name, n)                                          \
  static const char id##_name[] = name;                                       \
  static kc_status* id(void* self, const kc_any* args, int32_t nargs,         \
                       kc_any* ret) {                                         \
    const kc_host_api* kc__host = (const kc_host_api*)self;                   \
    kc_status* kc__st =                                                       \
        kc_host_args_check_count(kc__host, id##_name, nargs, n, n);           \
    (void)args;

/* A zero initialiser that neither language warns about. */
#ifdef __cplusplus
#define KC__TYPED_ZERO {}
#else
#define KC__TYPED_ZERO {0}
#endif

/* Declares argument i of tag t and reads it if nothing failed before. */
#define KC__TYPED_ARG(id, t, i)                                               \
  kc__typed_##t kc__a##i = KC__TYPED_ZERO;                                    \
  if (!kc__st) {                                                              \
    kc__st = kc__typed_get_##t(kc__host, id##_name, args, nargs, i, &kc__a##i); \
  }

#define KC__TYPED_READ_1(id, t0) KC__TYPED_ARG(id, t0, 0)
#define KC__TYPED_READ_2(id, t0, t1) \
  KC__TYPED_READ_1(id, t0) KC__TYPED_ARG(id, t1, 1)
#define KC__TYPED_READ_3(id, t0, t1, t2) \
  KC__TYPED_READ_2(id, t0, t1) KC__TYPED_ARG(id, t2, 2)
#define KC__TYPED_READ_4(id, t0, t1, t2, t3) \
  KC__TYPED_READ_3(id, t0, t1, t2) KC__TYPED_ARG(id, t3, 3)
#define KC__TYPED_READ_5(id, t0, t1, t2, t3, t4) \
  KC__TYPED_READ_4(id, t0, t1, t2, t3) KC__TYPED_ARG(id, t4, 4)
#define KC__TYPED_READ_6(id, t0, t1, t2, t3, t4, t5) \
  KC__TYPED_READ_5(id, t0, t1, t2, t3, t4) KC__TYPED_ARG(id, t5, 5)

#define KC__TYPED_ARGS_1 kc__a0
#define KC__TYPED_ARGS_2 KC__TYPED_ARGS_1, kc__a1
#define KC__TYPED_ARGS_3 KC__TYPED_ARGS_2, kc__a2
#define KC__TYPED_ARGS_4 KC__TYPED_ARGS_3, kc__a3
#define KC__TYPED_ARGS_5 KC__TYPED_ARGS_4, kc__a4
#define KC__TYPED_ARGS_6 KC__TYPED_ARGS_5, kc__a5

#define KC__TYPED_FUNC_N(n, id, name, rtag, fn, ...)                    \
  KC__TYPED_BEGIN(id, name, n)                                          \
  KC__TYPED_READ_##n(id, __VA_ARGS__) if (kc__st) return kc__st;        \
  KC__TYPED_RESULT_##rtag(fn, (KC__TYPED_ARGS_##n),                     \
                          (kc__host, KC__TYPED_ARGS_##n),               \
                          (kc__host, KC__TYPED_ARGS_##n, ret))          \
  }

/* The number of arguments (1 to 6) of a variadic macro. */
#define KC__TYPED_COUNT(...) KC__TYPED_COUNT_(__VA_ARGS__, 6, 5, 4, 3, 2, 1, 0)
#define KC__TYPED_COUNT_(a, b, c, d, e, f, n, ...) n

#define KC__TYPED_DISPATCH(n, id, name, rtag, fn, ...) \
  KC__TYPED_FUNC_N(n, id, name, rtag, fn, __VA_ARGS__)

/* See the top of this header. */
#define KC_TYPED_FUNC(id, name, rtag, fn, ...)                               \
  KC__TYPED_DISPATCH(KC__TYPED_COUNT(__VA_ARGS__), id, name, rtag, fn,       \
                     __VA_ARGS__)

#define KC_TYPED_FUNC0(id, name, rtag, fn)                   \
  KC__TYPED_BEGIN(id, name, 0)                               \
  if (kc__st) return kc__st;                                 \
  KC__TYPED_RESULT_##rtag(fn, (), (kc__host), (kc__host, ret)) \
  }

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_TYPED_H_ */
