/* Epoch-based reclamation; see reclaim.h. */
#include "internal/reclaim.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#endif

uint64_t kc__global_epoch = 2;
int kc__reclaim_light;
_Thread_local kc__reader* kc__tls_reader KC__TLS_FAST;

/* Every record ever made, pushed at the head and never removed: a record
 * of a thread that ended is reused by the next new thread. */
static kc__reader* kc__readers;

/* Writers' side: the retired list, and advancing the epoch, serialise on
 * this mutex. Readers never take it. */
static pthread_mutex_t kc__reclaim_mu = PTHREAD_MUTEX_INITIALIZER;
static kc__retired* kc__retired_head;
static int64_t kc__retired_count, kc__retired_bytes; /* under the mutex */
static int64_t kc__freed_count;                      /* atomic */
static int64_t kc__reader_count;                     /* atomic */

static pthread_once_t kc__once = PTHREAD_ONCE_INIT;
static pthread_key_t kc__key;

/* A thread that ends gives its record back. */
static void kc__reader_detach(void* arg) {
  kc__reader* r = arg;
  __atomic_store_n(&r->epoch, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&r->in_use, 0, __ATOMIC_RELEASE);
  kc__tls_reader = NULL;
}

/* In the child of a fork only the forking thread lives on: the records of
 * the others must not hold the epoch back forever. */
static void kc__after_fork_child(void) {
  for (kc__reader* r = __atomic_load_n(&kc__readers, __ATOMIC_ACQUIRE); r;
       r = r->next) {
    if (r == kc__tls_reader) continue;
    __atomic_store_n(&r->epoch, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&r->in_use, 0, __ATOMIC_RELAXED);
  }
}

static void kc__reclaim_init(void) {
  /* Without the key, records of ended threads are not reused (a leak of
   * one record per thread); without the handler, a fork taken inside a
   * read section would stop reclamation in the child. Both are only
   * degradations, so a failure here is not an error. */
  (void)pthread_key_create(&kc__key, kc__reader_detach);
  (void)pthread_atfork(NULL, NULL, kc__after_fork_child);
#if defined(__linux__) && defined(SYS_membarrier)
  /* Before any record exists, so every reader sees the mode it needs.
   * KCALL_NO_MEMBARRIER (for tests and diagnosis) keeps the exchange. */
  if (getenv("KCALL_NO_MEMBARRIER")) return;
  long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
      syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0) {
    __atomic_store_n(&kc__reclaim_light, 1, __ATOMIC_SEQ_CST);
  }
#endif
}

/* The writers' half of the asymmetric fence: after it, every thread's
 * earlier stores, a read-section entry among them, are visible. Needed
 * only when another thread has a record: a thread that takes one later
 * does so with a sequentially consistent exchange, after which it sees
 * every unlink made before. */
static void kc__fence_readers(void) {
#if defined(__linux__) && defined(SYS_membarrier)
  if (!__atomic_load_n(&kc__reclaim_light, __ATOMIC_RELAXED)) return;
  const kc__reader* self = kc__tls_reader;
  for (kc__reader* r = __atomic_load_n(&kc__readers, __ATOMIC_SEQ_CST); r;
       r = r->next) {
    if (r != self && __atomic_load_n(&r->in_use, __ATOMIC_SEQ_CST)) {
      (void)syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
      return;
    }
  }
#endif
}

kc__reader* kc__reader_attach(void) {
  pthread_once(&kc__once, kc__reclaim_init);
  kc__reader* r = __atomic_load_n(&kc__readers, __ATOMIC_ACQUIRE);
  for (; r; r = r->next) {
    uint32_t free_record = 0;
    if (__atomic_load_n(&r->in_use, __ATOMIC_RELAXED) == 0 &&
        __atomic_compare_exchange_n(&r->in_use, &free_record, 1, false,
                                    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
      break;
    }
  }
  while (!r) {
    r = kc__aligned_alloc(64, sizeof *r);
    if (!r) {
      sched_yield(); /* see reclaim.h: a reader cannot go unprotected */
      continue;
    }
    r->epoch = 0;
    r->unused = 0;
    r->in_use = 1;
    r->next = __atomic_load_n(&kc__readers, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&kc__readers, &r->next, r, true,
                                        __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
    __atomic_add_fetch(&kc__reader_count, 1, __ATOMIC_RELAXED);
  }
  kc__tls_reader = r;
  (void)pthread_setspecific(kc__key, r);
  return r;
}

/* With the mutex held: moves the global epoch on by one step if every
 * thread inside a read section entered at the current one. */
static bool kc__try_advance_locked(void) {
  uint64_t g = __atomic_load_n(&kc__global_epoch, __ATOMIC_SEQ_CST);
  kc__fence_readers();
  for (kc__reader* r = __atomic_load_n(&kc__readers, __ATOMIC_ACQUIRE); r;
       r = r->next) {
    uint64_t e = __atomic_load_n(&r->epoch, __ATOMIC_SEQ_CST);
    if ((e & 1) && (e & ~(uint64_t)1) != g) return false;
  }
  __atomic_store_n(&kc__global_epoch, g + 2, __ATOMIC_SEQ_CST);
  return true;
}

void kc__retire(kc__retired* r, void* base, size_t bytes,
                void (*free_fn)(kc__retired*)) {
  r->base = base;
  r->bytes = bytes;
  r->free_fn = free_fn;
  pthread_mutex_lock(&kc__reclaim_mu);
  /* Read after the unlink (a sequentially consistent store by the
   * caller): a reader that could still see the object entered at this
   * epoch or an earlier one. */
  r->epoch = __atomic_load_n(&kc__global_epoch, __ATOMIC_SEQ_CST);
  r->next = kc__retired_head;
  kc__retired_head = r;
  kc__retired_count++;
  kc__retired_bytes += (int64_t)bytes;
  pthread_mutex_unlock(&kc__reclaim_mu);
}

void kc__reclaim_collect(void) {
  pthread_mutex_lock(&kc__reclaim_mu);
  if (!kc__retired_head) {
    pthread_mutex_unlock(&kc__reclaim_mu);
    return;
  }
  /* Two steps free what was retired at the epoch current on entry. */
  if (kc__try_advance_locked()) kc__try_advance_locked();
  uint64_t g = __atomic_load_n(&kc__global_epoch, __ATOMIC_SEQ_CST);
  kc__retired* ready = NULL;
  kc__retired** link = &kc__retired_head;
  while (*link) {
    kc__retired* r = *link;
    if (g - r->epoch >= 4) {
      *link = r->next;
      r->next = ready;
      ready = r;
      kc__retired_count--;
      kc__retired_bytes -= (int64_t)r->bytes;
    } else {
      link = &r->next;
    }
  }
  pthread_mutex_unlock(&kc__reclaim_mu);
  /* Outside the mutex: freeing an entry releases its object, whose
   * deleter may register or remove names (and so retire and collect). */
  while (ready) {
    kc__retired* next = ready->next;
    ready->free_fn(ready);
    __atomic_add_fetch(&kc__freed_count, 1, __ATOMIC_RELAXED);
    ready = next;
  }
}

bool kc__reclaim_synchronize(void) {
  if (kc__read_locked()) return false;
  pthread_mutex_lock(&kc__reclaim_mu);
  uint64_t target = __atomic_load_n(&kc__global_epoch, __ATOMIC_SEQ_CST) + 4;
  while (__atomic_load_n(&kc__global_epoch, __ATOMIC_SEQ_CST) < target) {
    if (kc__try_advance_locked()) continue;
    /* A section is open: they last a few loads, so yield and look again
     * (without the mutex, so that other writers go on). */
    pthread_mutex_unlock(&kc__reclaim_mu);
    sched_yield();
    pthread_mutex_lock(&kc__reclaim_mu);
  }
  pthread_mutex_unlock(&kc__reclaim_mu);
  return true;
}

void kc__reclaim_counts_get(kc__reclaim_counts* out) {
  pthread_mutex_lock(&kc__reclaim_mu);
  out->retired = kc__retired_count;
  out->retired_bytes = kc__retired_bytes;
  pthread_mutex_unlock(&kc__reclaim_mu);
  out->freed = __atomic_load_n(&kc__freed_count, __ATOMIC_RELAXED);
  out->readers = __atomic_load_n(&kc__reader_count, __ATOMIC_RELAXED);
  out->epoch = __atomic_load_n(&kc__global_epoch, __ATOMIC_SEQ_CST);
  out->membarrier = __atomic_load_n(&kc__reclaim_light, __ATOMIC_RELAXED) != 0;
}
