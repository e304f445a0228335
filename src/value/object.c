/* Reference counting shared by every object. */
#include "internal/object.h"

void kc_object_retain(kc_object* obj) {
  if (obj) __atomic_fetch_add(&obj->ref_count, 1, __ATOMIC_RELAXED);
}

void kc_object_release(kc_object* obj) {
  if (!obj) return;
  /* acq_rel: the release half publishes this thread's writes to whichever
   * thread frees; the acquire half lets that thread see them. (A separate
   * acquire fence would be cheaper on the non-final path but is invisible
   * to ThreadSanitizer.) */
  if (__atomic_fetch_sub(&obj->ref_count, 1, __ATOMIC_ACQ_REL) == 1) {
    if (obj->deleter) obj->deleter(obj);
  }
}

int64_t kc_object_get_ref_count(const kc_object* obj) {
  return obj ? __atomic_load_n(&obj->ref_count, __ATOMIC_RELAXED) : 0;
}
