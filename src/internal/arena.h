/* A bump allocator: many small allocations freed together. Not
 * thread-safe. Never installed. */
#ifndef KCALL_INTERNAL_ARENA_H_
#define KCALL_INTERNAL_ARENA_H_

#include <stddef.h>

#include "kcall/abi.h"

typedef struct kc__arena_chunk kc__arena_chunk;

typedef struct kc__arena {
  kc__arena_chunk* head;
  size_t used; /* in head */
  size_t cap;  /* of head */
} kc__arena;

/* `size` bytes aligned to 16, zeroed; NULL when out of memory. */
void* kc__arena_alloc(kc__arena* a, size_t size);

/* A copy of `size` bytes (NULL data with size 0 gives a valid pointer). */
void* kc__arena_dup(kc__arena* a, const void* data, size_t size);

/* A NUL-terminated copy of a view. */
char* kc__arena_strdup(kc__arena* a, kc_string_view s);

void kc__arena_free(kc__arena* a);

#endif /* KCALL_INTERNAL_ARENA_H_ */
