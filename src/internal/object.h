/* Layouts of the library's own objects. Never installed. */
#ifndef KCALL_INTERNAL_OBJECT_H_
#define KCALL_INTERNAL_OBJECT_H_

#include "internal/common.h"
#include "internal/owner.h"
#include "kcall/func.h"
#include "kcall/tensor.h"
#include "kcall/value.h"

static inline void kc__object_init(kc_object* obj, int32_t type_index,
                                   void (*deleter)(kc_object*)) {
  obj->ref_count = 1;
  obj->type_index = type_index;
  obj->reserved = 0;
  obj->deleter = deleter;
}

/* Strings and bytes share one layout; data is always NUL-terminated. */
struct kc_str {
  kc_object header;
  const kc_allocator* alloc;
  size_t size;
  char data[];
};
struct kc_bytes {
  struct kc_str as_str;
};

struct kc_array {
  kc_object header;
  const kc_allocator* alloc;
  size_t size;
  kc_any items[];
};

struct kc_func {
  kc_object header;
  kc_packed_fn fn;
  void* self;
  kc_deleter_fn self_deleter;
  const kc_allocator* alloc;
  kc__owned owned; /* the plugin it belongs to, if any (owner.h) */
  uint64_t writes; /* kc_func_set_writes; read and written atomically */
};

#endif /* KCALL_INTERNAL_OBJECT_H_ */
