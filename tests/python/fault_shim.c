/* Fails one chosen allocation of those libkcall makes for itself, for
 * tests/python/test_faults.py. Preloaded (LD_PRELOAD) into a Python that
 * then imports kcall: it links the package's libkcall.so.0, which the
 * extension then shares, and its constructor makes itself libkcall's
 * internal allocator (kc_allocator_set_internal) before anything else
 * runs. It counts every allocation (a call asking for bytes); the n-th
 * after kt_fault_arm(n) returns NULL, the others go to the system
 * allocator. KT_FAIL_AT=n arms it from the start, for `import kcall`. */
#include <stdatomic.h>
#include <stdlib.h>

#include <kcall/kcall.h>

static atomic_llong seen;        /* allocations since armed */
static atomic_llong fail_at = 0; /* the one to fail (1-based); 0: none */
static atomic_llong failed;      /* how many were failed */

static void* fault_fn(void* self, void* ptr, size_t old_size, size_t new_size,
                      size_t alignment) {
  const kc_allocator* sys = self;
  if (new_size > 0 && atomic_fetch_add(&seen, 1) + 1 == atomic_load(&fail_at)) {
    atomic_fetch_add(&failed, 1);
    return NULL;
  }
  return sys->fn(sys->self, ptr, old_size, new_size, alignment);
}

static kc_allocator fault_allocator;

__attribute__((constructor)) static void fault_install(void) {
  fault_allocator.self = (void*)kc_allocator_system();
  fault_allocator.fn = fault_fn;
  const char* at = getenv("KT_FAIL_AT");
  if (at) atomic_store(&fail_at, atoll(at));
  kc_allocator_set_internal(&fault_allocator);
}

/* Counts afresh and fails the n-th allocation from now (0: none). */
__attribute__((visibility("default"))) void kt_fault_arm(long long n) {
  atomic_store(&fail_at, 0);
  atomic_store(&seen, 0);
  atomic_store(&failed, 0);
  atomic_store(&fail_at, n);
}

/* Allocations since armed, and how many of them were failed. */
__attribute__((visibility("default"))) long long kt_fault_seen(void) {
  return atomic_load(&seen);
}
__attribute__((visibility("default"))) long long kt_fault_failed(void) {
  return atomic_load(&failed);
}
