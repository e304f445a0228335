/* Internal helpers shared by every module. Never installed. */
#ifndef KCALL_INTERNAL_COMMON_H_
#define KCALL_INTERNAL_COMMON_H_

#include <stdint.h>
#include <string.h>

#include "kcall/base.h"

#define KC__UNUSED(x) ((void)(x))
#define KC__LIKELY(x) __builtin_expect(!!(x), 1)
#define KC__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define KC__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Allocation through a possibly-NULL allocator, of `count` objects of
 * `size` bytes, with overflow checked (NULL on overflow). */
static inline void* kc__alloc_array(const kc_allocator* alloc, size_t count,
                                    size_t size) {
  if (size != 0 && count > SIZE_MAX / size) return NULL;
  return kc_allocator_alloc(alloc, count * size, 0);
}

/* The system allocator (kc_allocator_system() returns its address). */
extern const kc_allocator kc__system_allocator;

/* The shared out-of-memory status (see base.h). */
kc_status* kc__status_oom(void);

#endif /* KCALL_INTERNAL_COMMON_H_ */
