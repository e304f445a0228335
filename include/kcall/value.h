/*
 * kcall/value.h — kc_any values, reference-counted objects, strings, bytes
 * and arrays.
 *
 * kc_any (declared in kcall/abi.h) is a 16-byte tagged value. Plain values
 * (none, bool, int, float, pointers, dtype, device, short strings) live in
 * its payload; everything else is a heap object whose header (kc_object)
 * carries an atomic reference count, its type index and its deleter.
 *
 * Ownership: an any that holds an object holds one reference to it when it
 * is owned (a returned value, an array item); an argument any borrows.
 * kc_any_retain takes a reference for a copy; kc_any_release drops it.
 * All functions here are thread-safe; objects are immutable after creation,
 * so they may be shared between threads freely.
 */
#ifndef KCALL_VALUE_H_
#define KCALL_VALUE_H_

#include "kcall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The printed name of a type index ("int", "str", "function"); "unknown"
 * for an index kcall does not define. Static storage. */
KC_API const char* kc_type_name(int32_t type_index);

/* ---- objects ------------------------------------------------------------ */

/* Adds a reference. NULL is a no-op. */
KC_API void kc_object_retain(kc_object* obj);

/* Drops a reference; the last one runs the object's deleter. NULL is a
 * no-op. */
KC_API void kc_object_release(kc_object* obj);

/* The current count (for tests and diagnostics; racy by nature). */
KC_API int64_t kc_object_get_ref_count(const kc_object* obj);

/* ---- any ---------------------------------------------------------------- */

/* Takes a reference for the object `value` holds, if any, so that a struct
 * copy of *value becomes an owned value. Plain values are unaffected. */
KC_API void kc_any_retain(const kc_any* value);

/* Drops the reference `value` holds, if any, and sets it to none. */
KC_API void kc_any_release(kc_any* value);

/* Makes an owned string value: inline (SMALL_STR) when it has at most
 * KC_SMALL_STR_MAX bytes, otherwise a kc_str object from `alloc` (NULL:
 * system). RESOURCE_EXHAUSTED when memory runs out; *out_value is none
 * then. */
KC_API kc_status* kc_any_from_string(const kc_allocator* alloc,
                                     kc_string_view s, kc_any* out_value);

/* If `value` is a string of any kind (RAW_STR, SMALL_STR, STR object),
 * sets *out_view to its text and returns true; else returns false. The
 * view borrows from `value` (for SMALL_STR, from the kc_any itself). */
KC_API bool kc_any_get_string(const kc_any* value, kc_string_view* out_view);

/* If `value` holds a function (KC_TYPE_FUNC), sets *out_func to it and
 * returns true; otherwise returns false and leaves *out_func unchanged
 * (also for a NULL value or out_func). The handle is borrowed: it lives as
 * long as the reference `value` holds or borrows; kc_object_retain keeps
 * it longer. Allocates nothing. Plugins reach it through the host table
 * (API 1.1, kcall/plugin_api.h) or read function arguments with
 * kc_host_args_get_func (abi_helpers.h). */
KC_API bool kc_any_get_func(const kc_any* value, kc_func** out_func);

/* ---- strings and bytes --------------------------------------------------- */

/* Creates a string object holding a copy of `s` (NUL-terminated after
 * s.size bytes). INVALID_ARGUMENT for NULL data with non-zero size or NULL
 * out; RESOURCE_EXHAUSTED when memory runs out. */
KC_API kc_status* kc_str_create(const kc_allocator* alloc, kc_string_view s,
                                kc_str** out_str);

/* The text of a string object. Borrowed; lives as long as the object. */
KC_API kc_string_view kc_str_get_view(const kc_str* str);

/* Creates a bytes object holding a copy of `size` bytes at `data`. Errors
 * as kc_str_create. */
KC_API kc_status* kc_bytes_create(const kc_allocator* alloc, const void* data,
                                  size_t size, kc_bytes** out_bytes);

/* The contents of a bytes object (`data` may be NULL when size is 0).
 * Borrowed. */
KC_API kc_string_view kc_bytes_get_view(const kc_bytes* bytes);

/* ---- arrays -------------------------------------------------------------- */

/* Creates an immutable array holding a copy of `count` values (each object
 * retained). Borrowed values (RAW_STR, DLTENSOR_PTR) cannot be stored:
 * INVALID_ARGUMENT naming the position; RESOURCE_EXHAUSTED when memory runs
 * out. */
KC_API kc_status* kc_array_create(const kc_allocator* alloc,
                                  const kc_any* items, size_t count,
                                  kc_array** out_array);

/* Number of items; 0 for NULL. */
KC_API size_t kc_array_get_size(const kc_array* array);

/* The item at `index`, borrowed from the array; NULL when out of range. */
KC_API const kc_any* kc_array_get_item(const kc_array* array, size_t index);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_VALUE_H_ */
