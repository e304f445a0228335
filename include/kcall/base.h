/*
 * kcall/base.h — status objects, allocators, string views, dtypes, devices.
 *
 * Ownership rules for the whole library are stated once in kcall/abi.h.
 * Every function here is thread-safe unless it says otherwise.
 */
#ifndef KCALL_BASE_H_
#define KCALL_BASE_H_

#include <stdarg.h>

#include "kcall/abi.h"

/* kcall/plugin_api.h, included before this header in plugin mode (its
 * default), made this file a plugin's. */
#if defined(KC__PLUGIN_API_PLUGIN_MODE)
#error "kcall/plugin_api.h in plugin mode cannot be combined with the host's headers (kcall/kcall.h, kcall/base.h, ...): a plugin includes kcall/abi.h and kcall/plugin_api.h only; a host includes its headers before kcall/plugin_api.h, or defines KC_PLUGIN_API_HOST"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================== */
/* Status                                                                   */
/* ======================================================================== */
/*
 * Every fallible call returns kc_status*: NULL on success, otherwise an
 * owned status the caller must pass on or free with kc_status_destroy.
 * The success path allocates nothing.
 *
 * A status holds a code, a message (the innermost description of what went
 * wrong) and a chain of context strings added as it propagates outwards.
 * kc_status_format prints "CODE: outer: inner: message", for example
 * "INVALID_ARGUMENT: in custom call 'foo' (node 3): argument 1: expected f32,
 * got f64".
 *
 * If memory runs out while a status is being created or extended, a shared
 * static RESOURCE_EXHAUSTED status is returned instead; destroying it is a
 * no-op, so callers need not tell the difference.
 */

/* Creates a status with `code` and a printf-style message. Returns NULL
 * when code is KC_OK. An unknown code is stored as KC_UNKNOWN. */
KC_API kc_status* kc_status_create(kc_status_code code, const char* fmt, ...)
    KC_PRINTF(2, 3);
KC_API kc_status* kc_status_create_v(kc_status_code code, const char* fmt,
                                     va_list args);

/* Adds a context string (printf-style) outside those already present and
 * returns `status` (possibly replaced by the shared out-of-memory status).
 * NULL passes through unchanged, so
 *   return kc_status_add_context(f(), "while loading '%s'", path);
 * is correct whether f succeeds or not. */
KC_API kc_status* kc_status_add_context(kc_status* status, const char* fmt,
                                        ...) KC_PRINTF(2, 3);
KC_API kc_status* kc_status_add_context_v(kc_status* status, const char* fmt,
                                          va_list args);

/* The code; KC_OK for NULL. */
KC_API kc_status_code kc_status_get_code(const kc_status* status);

/* The innermost message, without code or context; "" for NULL. Borrowed:
 * lives as long as the status. */
KC_API const char* kc_status_get_message(const kc_status* status);

/* Number of context strings, and the i-th one counted from the outermost
 * (0) inwards. Out of range or NULL status gives NULL. Borrowed. */
KC_API size_t kc_status_get_context_count(const kc_status* status);
KC_API const char* kc_status_get_context(const kc_status* status,
                                         size_t index);

/* Writes "CODE: context...: message" into buf (always NUL-terminated when
 * cap > 0) and returns the length the full text needs, excluding the NUL,
 * as snprintf does. NULL status prints "OK". */
KC_API size_t kc_status_format(const kc_status* status, char* buf,
                               size_t cap);

/* Frees a status. NULL is a no-op. */
KC_API void kc_status_destroy(kc_status* status);

/* The name of a code ("INVALID_ARGUMENT"); "UNKNOWN" for a value outside
 * the canonical set. Static storage. */
KC_API const char* kc_status_code_name(kc_status_code code);

/* The code that says why a file operation failed with errno `err`:
 * NOT_FOUND (ENOENT, ENOTDIR), PERMISSION_DENIED (EACCES, EPERM, EROFS),
 * INVALID_ARGUMENT (EISDIR, ENAMETOOLONG, ELOOP), RESOURCE_EXHAUSTED
 * (ENOSPC, EDQUOT, EMFILE, ENFILE, ENOMEM), ALREADY_EXISTS (EEXIST),
 * UNAVAILABLE (EINTR, EAGAIN), else UNKNOWN. What the library's file
 * functions (kc_tensor_read_npy, kc_program_parse_file) return. */
KC_API kc_status_code kc_status_code_from_errno(int err);

/* KC_RETURN_IF_ERROR(expr) and KC_RETURN_IF_ERROR(expr, fmt, ...), which
 * return a failed status (with context added in the second form), are in
 * kcall/abi_helpers.h, which kcall/abi.h includes. */

/* ======================================================================== */
/* Allocators                                                               */
/* ======================================================================== */
/*
 * Allocating entry points take a `const kc_allocator*`; NULL means the
 * system allocator. The allocator must outlive everything allocated from it.
 */

/* The system allocator (malloc/free, aligned_alloc for large alignments).
 * Static storage; never NULL. */
KC_API const kc_allocator* kc_allocator_system(void);

/* kcall's caching host allocator, what tensors created with a NULL
 * allocator take their object and storage from (kcall/tensor.h), so that
 * eager calls reuse memory instead of taking fresh pages each time. A
 * freed block of up to 64 MiB is kept by the thread that freed it, in a
 * size class (four per power of two, from 64 bytes), and handed out again
 * by the next allocation of that class on that thread: no lock, no system
 * call. A thread keeps at most KCALL_HOST_CACHE_MB megabytes (read once,
 * at the first allocation; default 256; 0 turns caching off); what is
 * over goes back to the system, and what a thread keeps is freed when it
 * exits. When the library unloads (dlclose, or the process exits), the
 * unloading thread's blocks are freed; a thread still running then keeps
 * its blocks until the process ends (freeing them under it could corrupt
 * the heap). Blocks are 64-byte aligned; a larger alignment or size goes
 * straight to the system allocator. Builds with AddressSanitizer or
 * ThreadSanitizer do not cache unless KCALL_HOST_CACHE_MB is set (a
 * reused block would hide a use after free). Static storage; never NULL;
 * thread-safe. */
KC_API const kc_allocator* kc_allocator_caching(void);

/* Frees the blocks the calling thread keeps in the caching allocator. */
KC_API void kc_allocator_caching_trim(void);

/* The internal allocator: where the library takes the memory it makes
 * for itself (registries, ops, programs and their compiled plans,
 * statuses, strings, scratch; everything no entry point was given an
 * allocator for), the system allocator unless set. Sets it and returns
 * the one it replaces; NULL sets the system allocator back. An allocator
 * whose fn is NULL is refused: nothing changes and NULL is returned. Each block
 * records the allocator that made it and goes back to that one, so a
 * change applies to blocks made after it, and an allocator must outlive
 * every block it gave (for a test: set it, run, release what was made,
 * set the old one back). Where an allocation fails, the call that made it
 * returns RESOURCE_EXHAUSTED and leaves everything as it was, which a
 * counting allocator that fails the n-th allocation
 * (kc_counting_allocator_set_fail_after) checks for every n. Exceptions,
 * which do not go through it: tensor storage and tensor objects created
 * with a NULL allocator (they come from kc_allocator_caching), what the
 * C library and dlopen allocate for themselves, the CUDA backend's device
 * and pinned memory, and the Python extension's objects (CPython's
 * allocator). Thread-safe: the allocator is read once per allocation.
 * kc_allocator_get_internal returns the one set (never NULL). */
KC_API const kc_allocator* kc_allocator_set_internal(const kc_allocator* alloc);
KC_API const kc_allocator* kc_allocator_get_internal(void);

/* Allocates `size` bytes aligned to `alignment` (0: the platform default)
 * from `alloc` (NULL: system). Returns NULL when out of memory or when
 * size is 0. */
KC_API void* kc_allocator_alloc(const kc_allocator* alloc, size_t size,
                                size_t alignment);

/* Frees memory from kc_allocator_alloc; size and alignment must be those it
 * was allocated with. NULL ptr is a no-op. */
KC_API void kc_allocator_free(const kc_allocator* alloc, void* ptr,
                              size_t size, size_t alignment);

/* A counting allocator for tests and leak checks: wraps the system
 * allocator, counts live blocks and bytes, and can be told to fail. */
typedef struct kc_counting_allocator kc_counting_allocator;

typedef struct kc_alloc_stats {
  size_t struct_size;
  int64_t live_blocks;  /* allocations not yet freed */
  int64_t live_bytes;
  int64_t peak_bytes;
  int64_t total_allocs; /* successful allocations, ever */
  int64_t total_frees;
  int64_t failed_allocs; /* allocations refused by set_fail_after */
  int64_t bad_frees;     /* frees whose size or alignment did not match */
} kc_alloc_stats;

/* Creates a counting allocator (itself from the system allocator).
 * Returns RESOURCE_EXHAUSTED when memory runs out. */
KC_API kc_status* kc_counting_allocator_create(kc_counting_allocator** out);

/* The kc_allocator to pass to allocating functions. Borrowed; lives as long
 * as `counter`. */
KC_API const kc_allocator* kc_counting_allocator_get_allocator(
    kc_counting_allocator* counter);

/* Snapshot of the counters. out->struct_size must be set by the caller;
 * fields beyond it are not written. */
KC_API void kc_counting_allocator_query(const kc_counting_allocator* counter,
                                        kc_alloc_stats* out);

/* After `count` more successful allocations, every further allocation
 * fails (returns NULL). A negative count turns failure off. */
KC_API void kc_counting_allocator_set_fail_after(
    kc_counting_allocator* counter, int64_t count);

/* Frees the counter (not the blocks still live). NULL is a no-op. */
KC_API void kc_counting_allocator_destroy(kc_counting_allocator* counter);

/* ======================================================================== */
/* String views                                                             */
/* ======================================================================== */

/* True when both views hold the same bytes (a NULL data pointer with size 0
 * equals any other empty view). */
KC_API bool kc_sv_equal(kc_string_view a, kc_string_view b);

/* Most bytes of quoted text kc_sv_format_quoted shows between its quotes. */
#define KC_QUOTE_MAX_SHOWN 80
/* A buffer of this size always holds what kc_sv_format_quoted writes. */
#define KC_QUOTED_CAP 128

/* Writes `text` quoted for a message into buf, snprintf-style (returns the
 * length the whole quote needs, which is below KC_QUOTED_CAP). Every
 * message of kcall that shows text it was given (a name, a token, a spec,
 * a path, bytes of a file) shows it this way, so that it stays readable
 * and short whatever the text holds:
 *   - between single quotes: 'x: T';
 *   - each byte that would not show as itself escaped: \n \t \r, \\ and
 *     \' for the backslash and the quote, \xNN for other control bytes,
 *     for bytes that are not UTF-8 and for the UTF-8 of C1 controls, line
 *     separators and direction controls; other UTF-8 is kept as it is;
 *   - a text whose quoted form would pass KC_QUOTE_MAX_SHOWN bytes shows
 *     its start and its end, the elision outside the quotes, and its
 *     length in bytes:  'abcdefgh'...'xyz' (1048576 bytes)
 * A NULL data pointer reads as the empty text (''). Thread-safe;
 * allocates nothing. */
KC_API size_t kc_sv_format_quoted(kc_string_view text, char* buf, size_t cap);

/* ======================================================================== */
/* Dtypes (DLPack codes)                                                    */
/* ======================================================================== */
/*
 * Text forms. Canonical (what kc_dtype_format prints): bool, i8 i16 i32 i64,
 * u8 u16 u32 u64, f16 f32 f64, bf16, c64 c128, f8e4m3fn f8e5m2 (and the other
 * float8/6/4 kinds under their DLPack names), opaque64; a vector type adds
 * "x<lanes>" (f32x4). Also accepted by kc_dtype_parse: the numpy-style long
 * names (float32, int64, uint8, bfloat16, complex64, bool_, float8_e4m3fn,
 * float8_e5m2, float8_e4m3fnuz, float8_e4m3b11fnuz, float8_e5m2fnuz), half,
 * float, double, int, long.
 */

/* Parses text into a dtype. INVALID_ARGUMENT naming the text and listing
 * the accepted forms when it is not one. */
KC_API kc_status* kc_dtype_parse(kc_string_view text, DLDataType* out_dtype);

/* Prints the canonical name into buf, snprintf-style (returns the length
 * needed). A dtype with no name prints as "dtype(code=C,bits=B,lanes=L)". */
KC_API size_t kc_dtype_format(DLDataType dtype, char* buf, size_t cap);

/* Bytes taken by one element: (bits * lanes + 7) / 8. */
KC_API size_t kc_dtype_get_size(DLDataType dtype);

/* kc_dtype_equal and kc_dtype_make are inline in kcall/abi_helpers.h. */


/* ======================================================================== */
/* Devices                                                                  */
/* ======================================================================== */

/* Parses "cpu", "cuda", "cuda:1", "cuda_host", "rocm:0", ... into a device
 * (the id defaults to 0). INVALID_ARGUMENT naming the text otherwise. */
KC_API kc_status* kc_device_parse(kc_string_view text, DLDevice* out_device);

/* Prints "cpu:0", "cuda:1", ... snprintf-style. */
KC_API size_t kc_device_format(DLDevice device, char* buf, size_t cap);

/* kc_device_cpu is inline in kcall/abi_helpers.h. */


#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_BASE_H_ */
