/*
 * kcall/func.h — packed functions, the global function registry, and typed
 * argument helpers.
 *
 * A packed function has one signature (kc_packed_fn in kcall/abi.h):
 *   kc_status* fn(void* self, const kc_any* args, int32_t nargs, kc_any* ret)
 * A kc_func object (type KC_TYPE_FUNC) pairs such a callback with its `self`
 * and the destructor of `self`. Functions are values: they can be passed as
 * arguments and returned, and can close over state.
 */
#ifndef KCALL_FUNC_H_
#define KCALL_FUNC_H_

#include "kcall/tensor.h"
#include "kcall/value.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KC_RETURNS_NONNULL __attribute__((returns_nonnull))
#else
#define KC_RETURNS_NONNULL
#endif

/* ---- functions ------------------------------------------------------------ */

/* Creates a function object calling `fn` with `self`. `self_deleter`
 * (may be NULL) runs with `self` when the function is destroyed, and also
 * when creation fails, so `self` never leaks. INVALID_ARGUMENT for NULL fn
 * or out; RESOURCE_EXHAUSTED when memory runs out. */
KC_API kc_status* kc_func_create(const kc_allocator* alloc, kc_packed_fn fn,
                                 void* self, kc_deleter_fn self_deleter,
                                 kc_func** out_func);

/* Calls `func`. *out_ret is set to none first; on success it holds the
 * owned result (none when the function returns nothing); on failure the
 * function's status is returned and *out_ret is none. INVALID_ARGUMENT for
 * a NULL func or out_ret, or nargs < 0, or args NULL with nargs > 0.
 * Thread-safe as far as the callee is. Inline: the checks are a few
 * compares and the call is an indirect call through the object. */
static inline kc_status* kc_func_call(const kc_func* func, const kc_any* args,
                                      int32_t nargs, kc_any* out_ret);

/* The out-of-line kc_func_call, for code that cannot use inline functions
 * (FFI bindings) and for the plugin host table (`func_call`). Same checks,
 * same statuses, and the same contract on success and on a refused call,
 * with one difference: when the callee fails, *out_ret is what the callee
 * left there. This call relies on the convention of kc_packed_fn (abi.h),
 * that a failing function leaves `ret` none, instead of releasing *out_ret
 * itself, so that the call is a tail call: after the checks it jumps to the
 * function, which returns straight to the caller. A caller that may meet
 * functions breaking the convention releases *out_ret after a failure
 * (kc_any_release of none does nothing); the inline kc_func_call does that
 * release itself. */
KC_API kc_status* kc_func_call_noinline(const kc_func* func,
                                        const kc_any* args, int32_t nargs,
                                        kc_any* out_ret);

/* ---- which arguments a function writes ---------------------------------------- */
/*
 * A tensor argument is lent to the callee, which may read it and, unless it
 * declares otherwise, write it. Callers that know memory must not be
 * written, or cannot be written elementwise, check the declaration before
 * the call: the Python package refuses to lend read-only memory (a NumPy
 * array with writeable=False, a buffer over `bytes`, a kcall.Tensor whose
 * DLPack flags say read-only) or self-overlapping memory (a stride of 0
 * over more than one element, as np.broadcast_to makes, or strides that
 * reach one element twice) to an argument position the function may
 * write, unless the caller opts in (docs/python.md).
 *
 * The declaration is a mask of argument positions: bit i set means the
 * function may write the tensor at position i; bit 63 stands for position
 * 63 and every later one. A new function has KC_FUNC_WRITES_ALL (it may
 * write any tensor argument: the safe default). Set it once, before the
 * function is shared (registering with KC_REGISTER_WRITES_NONE sets 0).
 * The mask is advice to callers, not enforced on the callee: a function
 * that declares 0 and writes anyway is wrong. Reading and setting are
 * atomic and never fail. Functions made by the Python package for Python
 * callables keep the default. */
#define KC_FUNC_WRITES_ALL UINT64_MAX

/* Bit for argument `index` in a writes mask (positions past 63 share bit
 * 63). */
#define KC_FUNC_WRITES_ARG(index) \
  ((uint64_t)1 << ((index) < 63 ? (index) : 63))

/* Declares which tensor arguments `func` may write (see above). NULL func:
 * no-op. */
KC_API void kc_func_set_writes(kc_func* func, uint64_t arg_mask);

/* The mask kc_func_set_writes declared (KC_FUNC_WRITES_ALL when none was,
 * and for a NULL func). */
KC_API uint64_t kc_func_get_writes(const kc_func* func);

/* ---- the global registry ---------------------------------------------------- */
/*
 * One process-wide map from names to functions. Names are 1 to 255 bytes of
 * [A-Za-z0-9_.:-], e.g. "mylib.add" or "mylib::add".
 *
 * Thread safety: lookups take no lock and never block (they read an
 * atomically published table); register and remove serialise on one
 * mutex. A registration made while a plugin's init runs (on that thread)
 * is staged and published only when the init succeeds.
 *
 * Lifetimes: the registry holds one reference to each registered function.
 * Removing or overriding a name (or unloading the plugin that registered
 * it) drops that reference as soon as no lookup running on another thread
 * can still be reading the entry: a long-running host that re-registers
 * names keeps no garbage. So a function returned borrowed by
 * kc_func_registry_lookup is valid only while its name stays registered
 * to it; a caller that may race with remove, override or plugin unload
 * (on any thread) uses kc_func_registry_lookup_retained, which returns its
 * own reference.
 *
 * Misses are cheap: a lookup of a missing name allocates its NOT_FOUND
 * status and returns; the "did you mean" part of the message (the nearest
 * registered names) is computed only when the message is first read
 * (kc_status_get_message, kc_status_format), from the names registered
 * then, with bounded work (one pass of a few compares per name, and at
 * most 32 bounded edit distances).
 */

/* Registers `func` under `name`, taking a reference to it. A name already
 * present is refused with ALREADY_EXISTS unless `flags` has
 * KC_REGISTER_OVERRIDE, which replaces it. KC_REGISTER_WRITES_NONE
 * declares that `func` writes none of its tensor arguments
 * (kc_func_set_writes(func, 0), done once the registration succeeded).
 * INVALID_ARGUMENT for a NULL func or a malformed name (the message shows
 * the position of the first bad byte). */
KC_API kc_status* kc_func_registry_register(kc_string_view name,
                                            kc_func* func, uint32_t flags);

/* Finds `name`. On success *out_func is borrowed from the registry: it
 * stays valid while `name` stays registered to it, that is until the name
 * is removed or overridden, or the plugin that registered it is unloaded,
 * by any thread (retain it, or use kc_func_registry_lookup_retained, to
 * keep it beyond that). Allocates nothing and costs a hash and a probe
 * when the name is found. On a miss *out_func is NULL and the NOT_FOUND
 * status lists the nearest registered names (computed when its message is
 * first read; see above). INVALID_ARGUMENT for a NULL out_func. Lock-free
 * and thread-safe. */
KC_API kc_status* kc_func_registry_lookup(kc_string_view name,
                                          kc_func** out_func);

/* As kc_func_registry_lookup, but on success *out_func is a new reference,
 * taken before any concurrent remove, override or unload could drop the
 * registry's: the caller owns it and releases it with kc_object_release.
 * Safe against every concurrent change of the registry. Costs one atomic
 * increment more than kc_func_registry_lookup. */
KC_API kc_status* kc_func_registry_lookup_retained(kc_string_view name,
                                                   kc_func** out_func);

/* Removes `name`. NOT_FOUND (with the nearest names) when absent. The
 * registry's reference is dropped once no concurrent lookup can still be
 * reading the entry (at once when there is none), so the function's
 * deleter may run before this returns, on this thread. */
KC_API kc_status* kc_func_registry_remove(kc_string_view name);

/* An array (of strings) of the registered names that start with `prefix`
 * (empty: all), sorted. The array is owned by the caller and allocated from
 * `alloc` (NULL: system). */
KC_API kc_status* kc_func_registry_list(const kc_allocator* alloc,
                                        kc_string_view prefix,
                                        kc_array** out_names);

/* Removes every name and frees everything the registry holds, waiting
 * for lookups running on other threads to finish first. NOT thread-safe
 * with registration: no other thread may register or remove during the
 * call, and pointers from earlier lookups become invalid. For tests and
 * for embedders shutting down. */
KC_API void kc_func_registry_reset(void);

/* What the registries (functions, ops, kernels and custom-call targets,
 * together) hold beyond their live names, and the work their "did you
 * mean" searches did. For tests, monitoring and diagnostics. */
typedef struct kc_registry_stats {
  size_t struct_size;        /* set by the caller */
  /* Removed or replaced entries and tables not freed yet because a lookup
   * on another thread may still be reading them; a handful at most. */
  int64_t retired_objects;
  int64_t retired_bytes;
  int64_t reclaimed_objects; /* retired and freed since the process began */
  int64_t reader_threads;    /* per-thread lookup records (threads that
                                looked a name up, reused when they end) */
  int64_t suggestion_searches;      /* NOT_FOUND messages written */
  int64_t suggestion_names_scanned; /* names their cheap filters read */
  int64_t suggestion_distances;     /* bounded edit distances computed */
  int64_t suggestion_distance_cells; /* cells of those */
  /* 1 when lookups announce themselves with a plain store and writers
   * make that visible with membarrier(2) (Linux); 0 when lookups use an
   * atomic exchange (no membarrier, or KCALL_NO_MEMBARRIER set). Known
   * once a lookup has run. */
  int64_t lookups_use_membarrier;
} kc_registry_stats;

/* Fills `out` up to out->struct_size (a NULL out is a no-op). Counters
 * only grow, except retired_*. Thread-safe. */
KC_API void kc_registry_query_stats(kc_registry_stats* out);

/* ---- typed argument helpers -------------------------------------------------- */
/*
 * For the body of a packed function written in C. Each reads one argument;
 * the check that succeeds is inline (a compare or two), and only a failure
 * calls into the library to build a status whose message names the
 * function, the 0-based position, what was expected and what was found:
 *   "mylib.add: argument 1: expected int, got str"
 *   "mylib.add: expected 2 arguments, got 3"
 * `fn_name` is a NUL-terminated label used only in messages. Every reader
 * returns INVALID_ARGUMENT for a missing argument or a NULL out_value.
 */

/* INVALID_ARGUMENT unless min_count <= nargs <= max_count (max_count < 0:
 * no upper bound). */
static inline kc_status* kc_args_check_count(const char* fn_name,
                                             int32_t nargs, int32_t min_count,
                                             int32_t max_count);
/* An int (a bool is accepted as 0 or 1). */
static inline kc_status* kc_args_get_int(const char* fn_name,
                                         const kc_any* args, int32_t nargs,
                                         int32_t index, int64_t* out_value);
/* A float (an int is converted). */
static inline kc_status* kc_args_get_float(const char* fn_name,
                                           const kc_any* args, int32_t nargs,
                                           int32_t index, double* out_value);
/* A bool (an int is accepted: non-zero is true). */
static inline kc_status* kc_args_get_bool(const char* fn_name,
                                          const kc_any* args, int32_t nargs,
                                          int32_t index, bool* out_value);
/* A string of any kind; the view borrows from args[index]. */
static inline kc_status* kc_args_get_string(const char* fn_name,
                                            const kc_any* args, int32_t nargs,
                                            int32_t index,
                                            kc_string_view* out_value);
/* A function; borrowed from args[index]. */
static inline kc_status* kc_args_get_func(const char* fn_name,
                                          const kc_any* args, int32_t nargs,
                                          int32_t index, kc_func** out_value);
/* A tensor: a borrowed DLTensor* or a tensor object's DLTensor. */
static inline kc_status* kc_args_get_dltensor(const char* fn_name,
                                              const kc_any* args,
                                              int32_t nargs, int32_t index,
                                              DLTensor** out_value);
/* An opaque pointer (none gives NULL). */
static inline kc_status* kc_args_get_opaque(const char* fn_name,
                                            const kc_any* args, int32_t nargs,
                                            int32_t index, void** out_value);

/* What the readers call when a check fails: the status describing why
 * args[index] is not a `kind` ("int", "float", "bool", "str", "function",
 * "tensor", "opaque_ptr"), or why it is missing, or that the reader was
 * given no place to put it (out_value_given false). Never NULL. */
KC_API KC_RETURNS_NONNULL kc_status* kc_args_mismatch(const char* fn_name, const kc_any* args,
                                   int32_t nargs, int32_t index,
                                   const char* kind, bool out_value_given);

/* The status for an arity mismatch. Never NULL. */
KC_API KC_RETURNS_NONNULL kc_status* kc_args_count_mismatch(const char* fn_name, int32_t nargs,
                                         int32_t min_count,
                                         int32_t max_count);

/* ---- inline definitions -------------------------------------------------------- */

#if defined(__GNUC__)
#define KC__FAST(x) __builtin_expect(!!(x), 1)
#else
#define KC__FAST(x) (x)
#endif

static inline kc_status* kc_func_call(const kc_func* func, const kc_any* args,
                                      int32_t nargs, kc_any* out_ret) {
  if (!KC__FAST(func && out_ret && nargs >= 0 && (args || nargs == 0))) {
    return kc_func_call_noinline(func, args, nargs, out_ret);
  }
  const kc_func_prefix* f = (const kc_func_prefix*)(const void*)func;
  *out_ret = kc_any_none();
  kc_status* st = f->fn(f->self, args, nargs, out_ret);
  if (!KC__FAST(st == NULL)) kc_any_release(out_ret);
  return st;
}

static inline kc_status* kc_args_check_count(const char* fn_name,
                                             int32_t nargs, int32_t min_count,
                                             int32_t max_count) {
  if (KC__FAST(nargs >= min_count && (max_count < 0 || nargs <= max_count))) {
    return NULL;
  }
  return kc_args_count_mismatch(fn_name, nargs, min_count, max_count);
}

#define KC__ARG_FAIL(kind) \
  kc_args_mismatch(fn_name, args, nargs, index, kind, out_value != NULL)

static inline kc_status* kc_args_get_int(const char* fn_name,
                                         const kc_any* args, int32_t nargs,
                                         int32_t index, int64_t* out_value) {
  if (KC__FAST(kc_args_try_int(args, nargs, index, out_value))) return NULL;
  return KC__ARG_FAIL("int");
}

static inline kc_status* kc_args_get_float(const char* fn_name,
                                           const kc_any* args, int32_t nargs,
                                           int32_t index, double* out_value) {
  if (KC__FAST(kc_args_try_float(args, nargs, index, out_value))) return NULL;
  return KC__ARG_FAIL("float");
}

static inline kc_status* kc_args_get_bool(const char* fn_name,
                                          const kc_any* args, int32_t nargs,
                                          int32_t index, bool* out_value) {
  if (KC__FAST(kc_args_try_bool(args, nargs, index, out_value))) return NULL;
  return KC__ARG_FAIL("bool");
}

static inline kc_status* kc_args_get_string(const char* fn_name,
                                            const kc_any* args, int32_t nargs,
                                            int32_t index,
                                            kc_string_view* out_value) {
  if (KC__FAST(kc_args_try_string(args, nargs, index, out_value))) return NULL;
  if (out_value && args && index >= 0 && index < nargs &&
      kc_any_get_string(&args[index], out_value)) {
    return NULL; /* a string object */
  }
  return KC__ARG_FAIL("str");
}

static inline kc_status* kc_args_get_func(const char* fn_name,
                                          const kc_any* args, int32_t nargs,
                                          int32_t index, kc_func** out_value) {
  if (KC__FAST(kc_args_try_func(args, nargs, index, out_value))) return NULL;
  return KC__ARG_FAIL("function");
}

static inline kc_status* kc_args_get_dltensor(const char* fn_name,
                                              const kc_any* args,
                                              int32_t nargs, int32_t index,
                                              DLTensor** out_value) {
  if (KC__FAST(kc_args_try_dltensor(args, nargs, index, out_value))) {
    return NULL;
  }
  if (out_value && args && index >= 0 && index < nargs &&
      args[index].type_index == KC_TYPE_TENSOR) {
    *out_value = (DLTensor*)(uintptr_t)kc_tensor_get_dltensor(
        (const kc_tensor*)(const void*)args[index].u.v_obj);
    return NULL;
  }
  return KC__ARG_FAIL("tensor");
}

static inline kc_status* kc_args_get_opaque(const char* fn_name,
                                            const kc_any* args, int32_t nargs,
                                            int32_t index, void** out_value) {
  if (KC__FAST(kc_args_try_opaque(args, nargs, index, out_value))) return NULL;
  return KC__ARG_FAIL("opaque_ptr");
}

#undef KC__ARG_FAIL

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_FUNC_H_ */
