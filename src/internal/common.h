/* Internal helpers shared by every module. Never installed. */
#ifndef KCALL_INTERNAL_COMMON_H_
#define KCALL_INTERNAL_COMMON_H_

#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "kcall/base.h"

#define KC__UNUSED(x) ((void)(x))
#define KC__LIKELY(x) __builtin_expect(!!(x), 1)
#define KC__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define KC__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Early returns: KC_RETURN_IF_ERROR(expr) or KC_RETURN_IF_ERROR(expr,
 * "context", ...), from kcall/abi_helpers.h. */

/* Allocation through a possibly-NULL allocator, of `count` objects of
 * `size` bytes, with overflow checked (NULL on overflow). */
static inline void* kc__alloc_array(const kc_allocator* alloc, size_t count,
                                    size_t size) {
  if (size != 0 && count > SIZE_MAX / size) return NULL;
  return kc_allocator_alloc(alloc, count * size, 0);
}

/* kcall's own allocations: every block the library makes for itself
 * (objects, tables, strings, scratch) comes from these, which take it
 * from the internal allocator (kc_allocator_set_internal; the system
 * allocator unless set) and record in a header before the block which
 * allocator made it and how big it is, so that kc__free returns it to
 * the right one whatever is set by then. They behave as their C library
 * namesakes (kc__realloc(p, 0) frees and returns NULL); a block from one
 * of them is freed with kc__free, never kc__free(), and memory the C library
 * makes (realpath) never with kc__free. kc__aligned_alloc takes a power
 * of two; its blocks are not for kc__realloc. allocator.c. */
void* kc__malloc(size_t size);
void* kc__calloc(size_t count, size_t size);
void* kc__realloc(void* ptr, size_t size);
void* kc__aligned_alloc(size_t alignment, size_t size);
char* kc__strdup(const char* s);
char* kc__strndup(const char* s, size_t n);
void kc__free(void* ptr);

/* Opens the file at `path` for reading (binary) into *out_file, the
 * caller's to fclose. `expected` says what it should be, for the message
 * when it is a directory ("a .npy file"): INVALID_ARGUMENT then,
 * kc_status_code_from_errno's code otherwise ("cannot open 'PATH': No
 * such file or directory"). base/files.c. */
kc_status* kc__file_open_read(const char* path, const char* expected, FILE** out_file);

/* A builder's first error, kept as text so that the caller keeps owning
 * the status it was handed, and replayed when the builder is finished. */
typedef struct kc__first_error {
  kc_status_code code; /* KC_OK while none */
  char* text;          /* context and message, without the code */
} kc__first_error;

/* Records `st` if it is the first error; returns `st` unchanged. */
kc_status* kc__first_error_note(kc__first_error* e, kc_status* st);

/* The same, recording the error after a label saying where it happened
 * (printf-style): "call 3 (kc_op_builder_add_attr_v2): ...". */
kc_status* kc__first_error_note_at(kc__first_error* e, kc_status* st,
                                   const char* fmt, ...) KC_PRINTF(3, 4);

/* A new status equal to the recorded one, or NULL if there was none. */
kc_status* kc__first_error_replay(const kc__first_error* e);

void kc__first_error_deinit(kc__first_error* e);

/* printf into buf at *len, snprintf-style: *len counts past the end, and
 * buf stays NUL-terminated when cap > 0. */
void kc__appendf(char* buf, size_t cap, size_t* len, const char* fmt, ...)
    KC_PRINTF(4, 5);

/* `text` quoted for a message (kc_sv_format_quoted) in storage that lives
 * until the end of the enclosing block, for an argument of printf-style
 * calls:  kc_status_create(KC_NOT_FOUND, "no target %s", KC__Q(name)).
 * KC__QS takes a C string. */
#define KC__Q(text) kc__quote((char[KC_QUOTED_CAP]){0}, (text))
#define KC__QS(cstr) KC__Q(kc_sv(cstr))
static inline const char* kc__quote(char* buf, kc_string_view text) {
  kc_sv_format_quoted(text, buf, KC_QUOTED_CAP);
  return buf;
}

/* The system allocator (kc_allocator_system() returns its address). */
extern const kc_allocator kc__system_allocator;

/* Writes a deferred message (kc__malloc'd; NULL when out of memory) from the
 * context copied into the status. */
typedef char* (*kc__message_fn)(const void* ctx);

/* A status whose message is written by fn(ctx) only when it is first read
 * (kc_status_get_message, kc_status_format), so that a caller who drops
 * it unread pays for one allocation and nothing else. `ctx_size` bytes at
 * `ctx` are copied into the status (aligned as malloc aligns). Until it is
 * read, the message reflects whatever fn reads then: fn must only read
 * state that outlives the status, or copies in ctx. */
kc_status* kc__status_create_deferred(kc_status_code code, kc__message_fn fn,
                                      const void* ctx, size_t ctx_size);

/* A status whose message is what `prefix_fmt` formats, ": ", then what
 * `fmt` formats from `args`, each at its full length: for error helpers
 * that put where the error is in front of their caller's message.
 *   kc__status_create_prefixed_v(KC_INVALID_ARGUMENT, fmt, args,
 *                                "op %s: input %s", name, spec) */
kc_status* kc__status_create_prefixed_v(kc_status_code code, const char* fmt,
                                        va_list args, const char* prefix_fmt, ...)
    KC_PRINTF(4, 5);

/* The shared out-of-memory status (see base.h). */
kc_status* kc__status_oom(void);

#endif /* KCALL_INTERNAL_COMMON_H_ */
