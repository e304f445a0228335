/*
 * Epoch-based reclamation: freeing what lock-free readers may still hold.
 *
 * Registry readers (lookups) take no lock: they load a table and an entry
 * and compare names while a writer may be replacing or removing that
 * entry. A writer therefore never frees an entry it unlinked; it retires
 * it here, and the entry is freed once no reader can still hold it.
 *
 * How a reader says it may hold something: it brackets its loads with
 * kc__read_lock / kc__read_unlock (a "read section"). Each thread has a
 * record with an epoch word: 0 outside a section; inside, the global
 * epoch it saw when it entered, with bit 0 set. Entering must not let the
 * loads that follow be seen before the record says "inside". On Linux
 * that is the writers' cost (an asymmetric fence): a reader enters with a
 * plain store, and a writer, before it reads the records, has the kernel
 * run a full barrier on every thread of the process (membarrier,
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED, a few microseconds, skipped when no
 * other thread has a record). Where membarrier is refused (old kernels,
 * seccomp, valgrind), a reader enters with an atomic exchange on its own
 * record instead, a full barrier that costs some 10 ns more per lookup.
 * Leaving is one release store. Sections nest: an inner one finds its
 * record already saying "inside" and leaves it alone.
 *
 * How a writer frees: after unlinking an object (so that no new reader
 * can find it), it retires it, stamped with the global epoch read after
 * the unlink. The global epoch advances (by 2) only when every thread
 * inside a section entered at the current epoch. An object retired at
 * epoch t is freed once the global epoch reaches t + 4, two advances
 * later: a reader that could have loaded it entered at an epoch <= t, and
 * the second advance waits for that reader to have left. With no reader
 * inside a section, both advances happen at once and a retired object is
 * freed by the call that retired it.
 *
 * Why epochs and not hazard pointers: a lookup loads two pointers (table,
 * then entry) and would need a hazard slot, a fence and a re-check for
 * each; an epoch costs one store per lookup whatever it loads, and
 * writers, who pay for the fence, are rare. The price is that one reader stuck inside a section would hold
 * back every free; sections here are a few loads and compares long and
 * never run user code, so none is ever stuck.
 *
 * Rules for code inside a read section: no user code (callbacks,
 * deleters), no registry mutex, no kc__reclaim_synchronize (it would wait
 * for the section itself). Objects found inside a section may be retained
 * there (the registries hold a reference until the entry is freed), and
 * then outlive it.
 *
 * Retired objects are freed by kc__reclaim_collect, which writers call
 * after releasing their locks (freeing runs object deleters, which may
 * call back into the registries).
 */
#ifndef KCALL_INTERNAL_RECLAIM_H_
#define KCALL_INTERNAL_RECLAIM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal/common.h"

/* Something waiting to be freed; embedded in what is retired. */
typedef struct kc__retired {
  struct kc__retired* next;
  uint64_t epoch;
  size_t bytes;
  void* base; /* the allocation it is part of, for free_fn */
  void (*free_fn)(struct kc__retired* self);
} kc__retired;

/* A thread's record. Padded to a cache line: other threads read `epoch`
 * when they try to advance the global epoch. */
typedef struct kc__reader {
  uint64_t epoch; /* atomic: 0, or the epoch entered at with bit 0 set;
                     written by its thread only */
  uint32_t in_use; /* atomic: claimed by a live thread */
  uint32_t unused;
  struct kc__reader* next; /* in the list of every record; never removed */
  char pad[64 - 2 * sizeof(uint64_t) - sizeof(void*)];
} kc__reader;

/* An open read section: the thread's record, and whether this section is
 * the outermost one (the one that leaves). */
typedef struct kc__section {
  kc__reader* r;
  bool outer;
} kc__section;

extern uint64_t kc__global_epoch; /* atomic; even, starts at 2 */
/* Atomic, set once before any record exists: writers use membarrier. */
extern int kc__reclaim_light;
/* Initial-exec: a lookup reads it with one %fs-relative load instead of a
 * call to __tls_get_addr. It costs 8 bytes of the static TLS surplus that
 * glibc keeps for libraries loaded with dlopen. */
#if defined(__GNUC__)
#define KC__TLS_FAST __attribute__((tls_model("initial-exec")))
#else
#define KC__TLS_FAST
#endif
extern _Thread_local kc__reader* kc__tls_reader KC__TLS_FAST;

/* The calling thread's record, made (or reused) on first use. Never NULL:
 * when memory runs out it waits for some and retries, since a reader
 * without a record could not be protected. */
kc__reader* kc__reader_attach(void);

/* Opens a read section, for kc__read_unlock. */
static inline kc__section kc__read_lock(void) {
  kc__section s = {kc__tls_reader, false};
  if (KC__UNLIKELY(!s.r)) s.r = kc__reader_attach();
  if (__atomic_load_n(&s.r->epoch, __ATOMIC_RELAXED) == 0) {
    s.outer = true;
    uint64_t e = __atomic_load_n(&kc__global_epoch, __ATOMIC_RELAXED);
    if (KC__LIKELY(__atomic_load_n(&kc__reclaim_light, __ATOMIC_RELAXED))) {
      __atomic_store_n(&s.r->epoch, e | 1, __ATOMIC_RELAXED);
      __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the compiler's part */
    } else {
      __atomic_exchange_n(&s.r->epoch, e | 1, __ATOMIC_SEQ_CST);
    }
  }
  return s;
}

static inline void kc__read_unlock(kc__section s) {
  if (s.outer) __atomic_store_n(&s.r->epoch, 0, __ATOMIC_RELEASE);
}

/* True when the calling thread is inside a read section. */
static inline bool kc__read_locked(void) {
  return kc__tls_reader &&
         __atomic_load_n(&kc__tls_reader->epoch, __ATOMIC_RELAXED) != 0;
}

/* Retires `r`, part of the allocation at `base` (`bytes` long, for the
 * counters): free_fn(r) runs once no read
 * section that could have loaded it is still open. Call it after the
 * unlink, with or without a registry mutex held; then, without any mutex,
 * call kc__reclaim_collect. */
void kc__retire(kc__retired* r, void* base, size_t bytes,
                void (*free_fn)(kc__retired*));

/* Advances the epoch as far as open read sections allow and frees what
 * became safe to free. Must not be called with a registry mutex held or
 * inside a read section. */
void kc__reclaim_collect(void);

/* Waits until every read section open at the time of the call has closed
 * (every object retired before the call may then be freed), without
 * freeing anything. False (without waiting) when the calling thread is
 * itself inside a read section. */
bool kc__reclaim_synchronize(void);

/* Counters, for kc_registry_query_stats. */
typedef struct kc__reclaim_counts {
  int64_t retired;   /* retired and not yet freed */
  int64_t retired_bytes;
  int64_t freed;     /* since the process started */
  int64_t readers;   /* thread records */
  uint64_t epoch;
  bool membarrier;   /* readers enter with a plain store */
} kc__reclaim_counts;

void kc__reclaim_counts_get(kc__reclaim_counts* out);

#endif /* KCALL_INTERNAL_RECLAIM_H_ */
