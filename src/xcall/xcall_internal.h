/* Custom-call targets: internals shared with the program compiler. */
#ifndef KCALL_XCALL_XCALL_INTERNAL_H_
#define KCALL_XCALL_XCALL_INTERNAL_H_

#include "kcall/xcall.h"

/* Type index of target objects; internal, never seen in a kc_any. */
#define KC__TYPE_XCALL_TARGET 1024

struct kc_xcall_status {
  bool failed;
  char* message; /* malloc'd; NULL when none */
  size_t size;
};

typedef struct kc__xcall_target {
  kc_object header;
  char* name;
  kc_platform platform;
  kc_xcall_api api;
  void (*fn)(void);           /* legacy conventions */
  kc_xcall_handler_fn handler; /* TYPED */
  void* user;
  kc_deleter_fn user_deleter;
  kc_xcall_signature signature; /* TYPED: arrays below, owned */
} kc__xcall_target;

/* The target registered under (name, platform), or NULL; lock-free.
 * Borrowed until kc_xcall_registry_reset(). */
const kc__xcall_target* kc__xcall_find(kc_string_view name,
                                       kc_platform platform);

/* NOT_FOUND for (name, platform), with the nearest registered targets. */
kc_status* kc__xcall_not_found(kc_string_view name, kc_platform platform);

#endif /* KCALL_XCALL_XCALL_INTERNAL_H_ */
