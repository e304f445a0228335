/* The system allocator and the counting allocator. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"

/* Alignment malloc guarantees on this platform. */
#define KC__MALLOC_ALIGN (_Alignof(max_align_t))

static void* kc__system_fn(void* self, void* ptr, size_t old_size,
                           size_t new_size, size_t alignment) {
  KC__UNUSED(self);
  if (new_size == 0) {
    free(ptr);
    return NULL;
  }
  if (alignment <= KC__MALLOC_ALIGN) {
    return ptr ? realloc(ptr, new_size) : malloc(new_size);
  }
  /* aligned_alloc wants the size to be a multiple of the alignment. */
  size_t rounded = (new_size + alignment - 1) & ~(alignment - 1);
  if (rounded < new_size) return NULL;
  void* fresh = aligned_alloc(alignment, rounded);
  if (fresh && ptr) {
    memcpy(fresh, ptr, old_size < new_size ? old_size : new_size);
    free(ptr);
  }
  return fresh;
}

const kc_allocator kc__system_allocator = {NULL, kc__system_fn};

const kc_allocator* kc_allocator_system(void) { return &kc__system_allocator; }

void* kc_allocator_alloc(const kc_allocator* alloc, size_t size,
                         size_t alignment) {
  if (size == 0) return NULL;
  if (alignment & (alignment - 1)) return NULL;
  if (!alloc) alloc = &kc__system_allocator;
  return alloc->fn(alloc->self, NULL, 0, size, alignment);
}

void kc_allocator_free(const kc_allocator* alloc, void* ptr, size_t size,
                       size_t alignment) {
  if (!ptr) return;
  if (!alloc) alloc = &kc__system_allocator;
  alloc->fn(alloc->self, ptr, size, 0, alignment);
}

/* ---- kcall's own allocations ----------------------------------------------- */

/* The internal allocator; NULL while it is the system's. */
static _Atomic(const kc_allocator*) kc__internal_allocator = NULL;

const kc_allocator* kc_allocator_set_internal(const kc_allocator* alloc) {
  if (alloc && !alloc->fn) return NULL; /* refused: nothing to allocate with */
  if (alloc == &kc__system_allocator) alloc = NULL;
  const kc_allocator* before = atomic_exchange(&kc__internal_allocator, alloc);
  return before ? before : &kc__system_allocator;
}

const kc_allocator* kc_allocator_get_internal(void) {
  const kc_allocator* a = atomic_load(&kc__internal_allocator);
  return a ? a : &kc__system_allocator;
}

/* The 16 bytes before each block: its allocator, and its whole size
 * (header and padding included) with, in the top byte, log2 of the
 * block's offset from what the allocator returned (16, or the
 * alignment asked for). */
typedef struct kc__mem_header {
  const kc_allocator* alloc;
  uint64_t size_and_shift;
} kc__mem_header;
_Static_assert(sizeof(kc__mem_header) == 16, "kcall's block header");
#define KC__MEM_HEADER 16
#define KC__MEM_SIZE_MASK ((UINT64_C(1) << 56) - 1)

/* `size` bytes `offset` past the start of a fresh block (offset a power
 * of two, at least the header's size, and the block's alignment). */
static void* kc__mem_get(size_t size, size_t offset) {
  if (size > SIZE_MAX - offset || size + offset > KC__MEM_SIZE_MASK) {
    return NULL;
  }
  const kc_allocator* a = kc_allocator_get_internal();
  size_t total = size + offset;
  char* block = a->fn(a->self, NULL, 0, total,
                      offset > KC__MEM_HEADER ? offset : 0);
  if (!block) return NULL;
  char* p = block + offset;
  kc__mem_header h = {a, (uint64_t)total |
                             ((uint64_t)__builtin_ctzll(offset) << 56)};
  memcpy(p - KC__MEM_HEADER, &h, sizeof h);
  return p;
}

static kc__mem_header kc__mem_header_of(const void* p) {
  kc__mem_header h;
  memcpy(&h, (const char*)p - KC__MEM_HEADER, sizeof h);
  return h;
}

void* kc__malloc(size_t size) {
  return kc__mem_get(size ? size : 1, KC__MEM_HEADER);
}

void* kc__calloc(size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / size) return NULL;
  void* p = kc__malloc(count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

void* kc__aligned_alloc(size_t alignment, size_t size) {
  if (alignment == 0 || (alignment & (alignment - 1))) return NULL;
  return kc__mem_get(size ? size : 1,
                     alignment > KC__MEM_HEADER ? alignment : KC__MEM_HEADER);
}

void kc__free(void* ptr) {
  if (!ptr) return;
  kc__mem_header h = kc__mem_header_of(ptr);
  size_t offset = (size_t)1 << (h.size_and_shift >> 56);
  size_t total = (size_t)(h.size_and_shift & KC__MEM_SIZE_MASK);
  h.alloc->fn(h.alloc->self, (char*)ptr - offset, total, 0,
              offset > KC__MEM_HEADER ? offset : 0);
}

void* kc__realloc(void* ptr, size_t size) {
  if (!ptr) return kc__malloc(size);
  if (size == 0) {
    kc__free(ptr);
    return NULL;
  }
  kc__mem_header h = kc__mem_header_of(ptr);
  size_t total = (size_t)(h.size_and_shift & KC__MEM_SIZE_MASK);
  if (size > SIZE_MAX - KC__MEM_HEADER ||
      size + KC__MEM_HEADER > KC__MEM_SIZE_MASK) {
    return NULL;
  }
  /* Grown by the allocator that made it (kc__aligned_alloc's blocks are
   * not for this). */
  char* block = h.alloc->fn(h.alloc->self, (char*)ptr - KC__MEM_HEADER,
                            total, size + KC__MEM_HEADER, 0);
  if (!block) return NULL;
  h.size_and_shift = (uint64_t)(size + KC__MEM_HEADER) |
                     ((uint64_t)__builtin_ctzll(KC__MEM_HEADER) << 56);
  memcpy(block, &h, sizeof h);
  return block + KC__MEM_HEADER;
}

char* kc__strndup(const char* s, size_t n) {
  size_t len = strnlen(s, n);
  char* copy = kc__malloc(len + 1);
  if (!copy) return NULL;
  memcpy(copy, s, len);
  copy[len] = '\0';
  return copy;
}

char* kc__strdup(const char* s) { return kc__strndup(s, SIZE_MAX); }

/* ---- caching allocator ------------------------------------------------------ */

/* Blocks freed are kept per thread, in size classes (four to each power of
 * two from 64 bytes to 64 MiB), as singly linked lists threaded through
 * the blocks themselves, and given again by the next allocation of the
 * class: no lock, no system call, no fresh page. Every block is 64-byte
 * aligned; larger alignments and sizes go to the system allocator. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KC__SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KC__SANITIZED 1
#endif
#endif

#define KC__CACHE_ALIGN 64
#define KC__CACHE_MAX ((size_t)64 << 20)
#define KC__CACHE_CLASSES 81 /* 64 bytes, then 4 per octave up to 64 MiB */
#define KC__CACHE_DEFAULT_MB 256

typedef struct kc__cache {
  void* free[KC__CACHE_CLASSES];
  size_t bytes;  /* kept in `free` */
  int state;     /* 1: in use (its destructor armed), 2: closed */
} kc__cache;

/* The calling thread's cache, made on its first allocation. The pointer
 * is initial-exec TLS (8 bytes of the static TLS block, which a library
 * loaded by dlopen may use): each access is one load, not a call to
 * __tls_get_addr. */
static _Thread_local kc__cache* kc__tcache
    __attribute__((tls_model("initial-exec")));
static pthread_key_t kc__cache_key;
static pthread_once_t kc__cache_once = PTHREAD_ONCE_INIT;
static size_t kc__cache_cap; /* bytes a thread keeps; 0: no caching */

/* Thread exit after the destructor ran, or no memory for a cache: the
 * thread allocates from the system. */
static kc__cache kc__cache_closed = {.state = 2};

/* The class of `size` (1 .. KC__CACHE_MAX) and the size of its blocks. */
static unsigned kc__cache_class(size_t size, size_t* out_size) {
  if (size <= 64) {
    *out_size = 64;
    return 0;
  }
  unsigned o = 63u - (unsigned)__builtin_clzll((unsigned long long)(size - 1));
  size_t step = (size_t)1 << (o - 2);
  size_t rounded = (size + step - 1) & ~(step - 1);
  *out_size = rounded;
  return (o - 6) * 4 + (unsigned)(rounded >> (o - 2)) - 4;
}

static void kc__cache_drain(kc__cache* c) {
  for (unsigned i = 0; i < KC__CACHE_CLASSES; ++i) {
    while (c->free[i]) {
      void* p = c->free[i];
      memcpy(&c->free[i], p, sizeof p);
      free(p);
    }
  }
  c->bytes = 0;
}

/* Thread exit: what the thread kept is freed, and later frees on it (other
 * destructors releasing tensors) go straight to the system. */
static void kc__cache_thread_exit(void* arg) {
  kc__cache* c = arg;
  kc__cache_drain(c);
  free(c);
  kc__tcache = &kc__cache_closed;
}

/* Set once the key exists, so that unloading knows there is one. */
static bool kc__cache_key_made;

static void kc__cache_init(void) {
#ifdef KC__SANITIZED
  /* Reused blocks would hide a use after free from the sanitizer: off
   * unless the environment asks for caching (the allocator's own tests
   * do, to run it under the sanitizers). */
  size_t mb = 0;
#else
  size_t mb = KC__CACHE_DEFAULT_MB;
#endif
  const char* env = getenv("KCALL_HOST_CACHE_MB");
  if (env && *env) {
    char* end = NULL;
    unsigned long long v = strtoull(env, &end, 10);
    if (end && *end == '\0') mb = (size_t)v;
  }
  kc__cache_cap = mb > (SIZE_MAX >> 20) ? SIZE_MAX : mb << 20;
  if (pthread_key_create(&kc__cache_key, kc__cache_thread_exit) != 0) {
    kc__cache_cap = 0;
  } else {
    kc__cache_key_made = true;
  }
}

/* The library unloads (dlclose, or the process exits): the unloading
 * thread's blocks go back to the system, and the key goes, so that no
 * thread exiting later runs a destructor in unloaded code. Other threads'
 * caches are not touched: one may still be running (a process exits
 * around its threads), and freeing under it would corrupt the heap. */
__attribute__((destructor)) static void kc__cache_unload(void) {
  if (!kc__cache_key_made) return;
  kc__cache* c = kc__tcache;
  if (c && c->state == 1) {
    (void)pthread_setspecific(kc__cache_key, NULL);
    kc__cache_drain(c);
    free(c);
  }
  kc__tcache = &kc__cache_closed;
  (void)pthread_key_delete(kc__cache_key);
  kc__cache_key_made = false;
}

static kc__cache* kc__cache_make(void) {
  pthread_once(&kc__cache_once, kc__cache_init);
  kc__cache* c = NULL;
  if (kc__cache_cap > 0) c = calloc(1, sizeof *c);
  if (c && pthread_setspecific(kc__cache_key, c) != 0) {
    free(c);
    c = NULL;
  }
  if (c) c->state = 1;
  kc__tcache = c ? c : &kc__cache_closed;
  return kc__tcache;
}

static void* kc__caching_fn(void* self, void* ptr, size_t old_size,
                            size_t new_size, size_t alignment);

/* A reallocation: a new block, the old one freed. Out of line, so that
 * allocations and frees need no stack frame. */
__attribute__((noinline)) static void* kc__caching_realloc(
    void* ptr, size_t old_size, size_t new_size, size_t alignment) {
  void* fresh = kc__caching_fn(NULL, NULL, 0, new_size, alignment);
  if (fresh) {
    memcpy(fresh, ptr, old_size < new_size ? old_size : new_size);
    kc__caching_fn(NULL, ptr, old_size, 0, alignment);
  }
  return fresh;
}

/* What the cache does not keep: the system's, out of line. */
__attribute__((noinline)) static void* kc__caching_bypass(
    void* ptr, size_t old_size, size_t new_size, size_t alignment) {
  if (!ptr) {
    void* fresh = NULL;
    if (alignment <= KC__CACHE_ALIGN) {
      size_t block = 0;
      if (new_size > KC__CACHE_MAX) return kc__system_fn(NULL, NULL, 0, new_size, alignment);
      (void)kc__cache_class(new_size ? new_size : 1, &block);
      return posix_memalign(&fresh, KC__CACHE_ALIGN, block) == 0 ? fresh : NULL;
    }
    return kc__system_fn(NULL, NULL, 0, new_size, alignment);
  }
  return kc__system_fn(NULL, ptr, old_size, new_size, alignment);
}

static void* kc__caching_fn(void* self, void* ptr, size_t old_size,
                            size_t new_size, size_t alignment) {
  KC__UNUSED(self);
  kc__cache* c = kc__tcache;
  if (KC__UNLIKELY(!c)) c = kc__cache_make();
  if (KC__UNLIKELY(ptr && new_size)) {
    return kc__caching_realloc(ptr, old_size, new_size, alignment);
  }
  size_t size = ptr ? old_size : new_size;
  if (KC__UNLIKELY(alignment > KC__CACHE_ALIGN || size > KC__CACHE_MAX)) {
    return kc__caching_bypass(ptr, old_size, new_size, alignment);
  }
  size_t block = 0;
  unsigned cls = kc__cache_class(size ? size : 1, &block);
  if (ptr) {
    if (c->state == 1 && c->bytes + block <= kc__cache_cap) {
      memcpy(ptr, &c->free[cls], sizeof ptr);
      c->free[cls] = ptr;
      c->bytes += block;
    } else {
      free(ptr);
    }
    return NULL;
  }
  void* p = c->free[cls];
  if (KC__LIKELY(p != NULL)) {
    memcpy(&c->free[cls], p, sizeof p);
    c->bytes -= block;
    return p;
  }
  return kc__caching_bypass(NULL, 0, block, alignment);
}

static const kc_allocator kc__caching_allocator = {NULL, kc__caching_fn};

const kc_allocator* kc_allocator_caching(void) { return &kc__caching_allocator; }

void kc_allocator_caching_trim(void) {
  if (kc__tcache && kc__tcache->state == 1) kc__cache_drain(kc__tcache);
}

/* ---- counting allocator --------------------------------------------------- */

/* Each block is preceded by a header recording its size and alignment, so
 * that a free with the wrong size is caught rather than trusted. The header
 * takes max(alignment, sizeof header) bytes to keep the payload aligned. */
typedef struct kc__block_header {
  size_t size;
  size_t alignment;
  uint64_t magic;
} kc__block_header;

#define KC__BLOCK_MAGIC 0x6b63616c6c6f6321ull

struct kc_counting_allocator {
  kc_allocator as_allocator;
  int64_t live_blocks;
  int64_t live_bytes;
  int64_t peak_bytes;
  int64_t total_allocs;
  int64_t total_frees;
  int64_t failed_allocs;
  int64_t bad_frees;
  int64_t fail_after; /* < 0: never fail */
};

static int64_t kc__add(int64_t* p, int64_t d) {
  return __atomic_add_fetch(p, d, __ATOMIC_RELAXED);
}
static int64_t kc__load(const int64_t* p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static size_t kc__header_room(size_t alignment) {
  size_t room = sizeof(kc__block_header);
  if (alignment > room) room = alignment;
  return (room + KC__MALLOC_ALIGN - 1) & ~(KC__MALLOC_ALIGN - 1);
}

/* Takes one unit of the failure budget; false when the allocation must
 * fail. */
static bool kc__take_budget(kc_counting_allocator* c) {
  int64_t left = __atomic_load_n(&c->fail_after, __ATOMIC_RELAXED);
  while (left >= 0) {
    if (left == 0) return false;
    if (__atomic_compare_exchange_n(&c->fail_after, &left, left - 1, false,
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      return true;
    }
  }
  return true;
}

static void kc__counting_free(kc_counting_allocator* c, void* ptr,
                              size_t size, size_t alignment) {
  size_t room = kc__header_room(alignment);
  kc__block_header* h = (kc__block_header*)((char*)ptr - sizeof *h);
  if (h->magic != KC__BLOCK_MAGIC || h->size != size ||
      h->alignment != alignment) {
    kc__add(&c->bad_frees, 1);
    size = h->size;
    room = kc__header_room(h->alignment);
    alignment = h->alignment;
  }
  h->magic = 0;
  kc__add(&c->live_blocks, -1);
  kc__add(&c->live_bytes, -(int64_t)size);
  kc__add(&c->total_frees, 1);
  kc__system_fn(NULL, (char*)ptr - room, room + size, 0,
                alignment > KC__MALLOC_ALIGN ? room : 0);
}

static void* kc__counting_alloc(kc_counting_allocator* c, size_t size,
                                size_t alignment) {
  if (!kc__take_budget(c)) {
    kc__add(&c->failed_allocs, 1);
    return NULL;
  }
  size_t room = kc__header_room(alignment);
  if (size > SIZE_MAX - room) return NULL;
  char* base = kc__system_fn(NULL, NULL, 0, room + size,
                             alignment > KC__MALLOC_ALIGN ? room : 0);
  if (!base) return NULL;
  kc__block_header* h = (kc__block_header*)(base + room - sizeof *h);
  h->size = size;
  h->alignment = alignment;
  h->magic = KC__BLOCK_MAGIC;
  kc__add(&c->live_blocks, 1);
  kc__add(&c->total_allocs, 1);
  int64_t live = kc__add(&c->live_bytes, (int64_t)size);
  int64_t peak = kc__load(&c->peak_bytes);
  while (live > peak &&
         !__atomic_compare_exchange_n(&c->peak_bytes, &peak, live, false,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return base + room;
}

static void* kc__counting_fn(void* self, void* ptr, size_t old_size,
                             size_t new_size, size_t alignment) {
  kc_counting_allocator* c = self;
  if (new_size == 0) {
    if (ptr) kc__counting_free(c, ptr, old_size, alignment);
    return NULL;
  }
  void* fresh = kc__counting_alloc(c, new_size, alignment);
  if (fresh && ptr) {
    memcpy(fresh, ptr, old_size < new_size ? old_size : new_size);
    kc__counting_free(c, ptr, old_size, alignment);
  }
  return fresh;
}

kc_status* kc_counting_allocator_create(kc_counting_allocator** out) {
  if (!out) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_counting_allocator_create: out is NULL");
  }
  *out = NULL;
  kc_counting_allocator* c = calloc(1, sizeof *c);
  if (!c) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory creating a counting allocator");
  }
  c->as_allocator.self = c;
  c->as_allocator.fn = kc__counting_fn;
  c->fail_after = -1;
  *out = c;
  return NULL;
}

const kc_allocator* kc_counting_allocator_get_allocator(
    kc_counting_allocator* counter) {
  return counter ? &counter->as_allocator : NULL;
}

void kc_counting_allocator_query(const kc_counting_allocator* c,
                                 kc_alloc_stats* out) {
  if (!c || !out) return;
  kc_alloc_stats s;
  s.struct_size = out->struct_size;
  s.live_blocks = kc__load(&c->live_blocks);
  s.live_bytes = kc__load(&c->live_bytes);
  s.peak_bytes = kc__load(&c->peak_bytes);
  s.total_allocs = kc__load(&c->total_allocs);
  s.total_frees = kc__load(&c->total_frees);
  s.failed_allocs = kc__load(&c->failed_allocs);
  s.bad_frees = kc__load(&c->bad_frees);
  size_t n = out->struct_size < sizeof s ? out->struct_size : sizeof s;
  memcpy(out, &s, n);
}

void kc_counting_allocator_set_fail_after(kc_counting_allocator* c,
                                          int64_t count) {
  if (!c) return;
  __atomic_store_n(&c->fail_after, count < 0 ? -1 : count, __ATOMIC_RELAXED);
}

void kc_counting_allocator_destroy(kc_counting_allocator* c) { free(c); }
