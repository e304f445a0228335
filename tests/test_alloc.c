/* Tests of the allocators in kcall/base.h, and fault injection through the
 * counting allocator into the functions that allocate. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "test.h"

static kc_alloc_stats kt_stats(const kc_counting_allocator* counter) {
  kc_alloc_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  kc_counting_allocator_query(counter, &s);
  return s;
}

static bool kt_aligned(const void* p, size_t alignment) {
  return ((uintptr_t)p % alignment) == 0;
}

KC_TEST(alloc_system_alignments) {
  const kc_allocator* sys = kc_allocator_system();
  KC_CHECK(sys != NULL && sys->fn != NULL);
  const size_t alignments[] = {0, 8, 64, 4096};
  const size_t sizes[] = {1, 24, 100, 5000};
  for (size_t a = 0; a < 4; ++a) {
    for (size_t s = 0; s < 4; ++s) {
      unsigned char* p = kc_allocator_alloc(sys, sizes[s], alignments[a]);
      KC_CHECK(p != NULL);
      KC_CHECK(kt_aligned(p, alignments[a] ? alignments[a] : sizeof(void*)));
      memset(p, 0xab, sizes[s]); /* the whole block is usable */
      kc_allocator_free(sys, p, sizes[s], alignments[a]);
      /* NULL means the system allocator. */
      p = kc_allocator_alloc(NULL, sizes[s], alignments[a]);
      KC_CHECK(p != NULL);
      KC_CHECK(kt_aligned(p, alignments[a] ? alignments[a] : sizeof(void*)));
      memset(p, 0xcd, sizes[s]);
      kc_allocator_free(NULL, p, sizes[s], alignments[a]);
    }
  }
  KC_CHECK(kc_allocator_alloc(sys, 0, 0) == NULL);
  KC_CHECK(kc_allocator_alloc(sys, 0, 64) == NULL);
  kc_allocator_free(sys, NULL, 16, 0);
  kc_allocator_free(NULL, NULL, 0, 0);
}

KC_TEST(alloc_system_fn_reallocates) {
  const kc_allocator* sys = kc_allocator_system();
  char* p = sys->fn(sys->self, NULL, 0, 16, 0);
  KC_CHECK(p != NULL);
  memcpy(p, "0123456789abcde", 16);
  char* q = sys->fn(sys->self, p, 16, 4000, 0);
  KC_CHECK(q != NULL);
  KC_CHECK(memcmp(q, "0123456789abcde", 16) == 0);
  memset(q + 16, 1, 4000 - 16);
  KC_CHECK(sys->fn(sys->self, q, 4000, 0, 0) == NULL);
}

KC_TEST(alloc_counting_stats) {
  kc_counting_allocator* c = NULL;
  KC_CHECK_OK(kc_counting_allocator_create(&c));
  const kc_allocator* a = kc_counting_allocator_get_allocator(c);
  KC_CHECK(a != NULL && a->fn != NULL);
  kc_alloc_stats s = kt_stats(c);
  KC_CHECK_INT(s.live_blocks, 0);
  KC_CHECK_INT(s.total_allocs, 0);

  void* p100 = kc_allocator_alloc(a, 100, 0);
  void* p200 = kc_allocator_alloc(a, 200, 64);
  KC_CHECK(p100 && p200 && kt_aligned(p200, 64));
  s = kt_stats(c);
  KC_CHECK_INT(s.live_blocks, 2);
  KC_CHECK_INT(s.live_bytes, 300);
  KC_CHECK_INT(s.peak_bytes, 300);
  KC_CHECK_INT(s.total_allocs, 2);
  KC_CHECK_INT(s.total_frees, 0);

  kc_allocator_free(a, p100, 100, 0);
  void* p50 = kc_allocator_alloc(a, 50, 4096);
  KC_CHECK(p50 && kt_aligned(p50, 4096));
  s = kt_stats(c);
  KC_CHECK_INT(s.live_blocks, 2);
  KC_CHECK_INT(s.live_bytes, 250);
  KC_CHECK_INT(s.peak_bytes, 300);
  KC_CHECK_INT(s.total_allocs, 3);
  KC_CHECK_INT(s.total_frees, 1);

  kc_allocator_free(a, p200, 200, 64);
  kc_allocator_free(a, p50, 50, 4096);
  s = kt_stats(c);
  KC_CHECK_INT(s.live_blocks, 0);
  KC_CHECK_INT(s.live_bytes, 0);
  KC_CHECK_INT(s.peak_bytes, 300);
  KC_CHECK_INT(s.total_frees, 3);
  KC_CHECK_INT(s.failed_allocs, 0);
  KC_CHECK_INT(s.bad_frees, 0);
  kc_counting_allocator_destroy(c);
  kc_counting_allocator_destroy(NULL);
}

KC_TEST(alloc_counting_reallocates) {
  kc_counting_allocator* c = NULL;
  KC_CHECK_OK(kc_counting_allocator_create(&c));
  const kc_allocator* a = kc_counting_allocator_get_allocator(c);
  char* p = a->fn(a->self, NULL, 0, 8, 0);
  KC_CHECK(p != NULL);
  memcpy(p, "abcdefg", 8);
  char* q = a->fn(a->self, p, 8, 64, 0);
  KC_CHECK(q != NULL && memcmp(q, "abcdefg", 8) == 0);
  kc_alloc_stats s = kt_stats(c);
  KC_CHECK_INT(s.live_blocks, 1);
  KC_CHECK_INT(s.live_bytes, 64);
  a->fn(a->self, q, 64, 0, 0);
  s = kt_stats(c);
  KC_CHECK_INT(s.live_blocks, 0);
  KC_CHECK_INT(s.live_bytes, 0);
  kc_counting_allocator_destroy(c);
}

KC_TEST(alloc_counting_query_respects_struct_size) {
  kc_counting_allocator* c = NULL;
  KC_CHECK_OK(kc_counting_allocator_create(&c));
  void* p = kc_allocator_alloc(kc_counting_allocator_get_allocator(c), 10, 0);
  kc_alloc_stats s;
  memset(&s, 0x5a, sizeof s);
  s.struct_size = offsetof(kc_alloc_stats, live_bytes);
  kc_counting_allocator_query(c, &s);
  KC_CHECK_INT(s.live_blocks, 1);
  kc_alloc_stats untouched;
  memset(&untouched, 0x5a, sizeof untouched);
  KC_CHECK(memcmp((char*)&s + offsetof(kc_alloc_stats, live_bytes),
                  (char*)&untouched + offsetof(kc_alloc_stats, live_bytes),
                  sizeof s - offsetof(kc_alloc_stats, live_bytes)) == 0);
  kc_allocator_free(kc_counting_allocator_get_allocator(c), p, 10, 0);
  kc_counting_allocator_destroy(c);
}

KC_TEST(alloc_counting_fail_after) {
  kc_counting_allocator* c = NULL;
  KC_CHECK_OK(kc_counting_allocator_create(&c));
  const kc_allocator* a = kc_counting_allocator_get_allocator(c);
  kc_counting_allocator_set_fail_after(c, 2);
  void* p1 = kc_allocator_alloc(a, 8, 0);
  void* p2 = kc_allocator_alloc(a, 8, 0);
  void* p3 = kc_allocator_alloc(a, 8, 0);
  void* p4 = kc_allocator_alloc(a, 8, 64);
  KC_CHECK(p1 && p2);
  KC_CHECK(p3 == NULL && p4 == NULL);
  kc_alloc_stats s = kt_stats(c);
  KC_CHECK_INT(s.live_blocks, 2);
  KC_CHECK_INT(s.total_allocs, 2);
  KC_CHECK_INT(s.failed_allocs, 2);

  kc_counting_allocator_set_fail_after(c, -1);
  void* p5 = kc_allocator_alloc(a, 8, 0);
  KC_CHECK(p5 != NULL);
  kc_counting_allocator_set_fail_after(c, 0);
  KC_CHECK(kc_allocator_alloc(a, 8, 0) == NULL);
  kc_counting_allocator_set_fail_after(c, -1);

  kc_allocator_free(a, p1, 8, 0);
  kc_allocator_free(a, p2, 8, 0);
  kc_allocator_free(a, p5, 8, 0);
  s = kt_stats(c);
  KC_CHECK_INT(s.live_blocks, 0);
  KC_CHECK_INT(s.failed_allocs, 3);
  kc_counting_allocator_destroy(c);
}

KC_TEST(alloc_counting_reports_bad_frees) {
  kc_counting_allocator* c = NULL;
  KC_CHECK_OK(kc_counting_allocator_create(&c));
  const kc_allocator* a = kc_counting_allocator_get_allocator(c);
  void* p = kc_allocator_alloc(a, 16, 0);
  KC_CHECK(p != NULL);
  kc_allocator_free(a, p, 32, 0);
  kc_alloc_stats s = kt_stats(c);
  KC_CHECK_INT(s.bad_frees, 1);
  kc_counting_allocator_destroy(c);
}

/* ---- fault injection ------------------------------------------------------------ */
/*
 * Each loop makes the n-th allocation of kt_alloc() fail, for n = 0, 1, ...
 * until the operation completes without meeting a failure. Every attempt must
 * either succeed or answer RESOURCE_EXHAUSTED, and after cleanup nothing of
 * kt_alloc() may remain.
 */

#define KT_FAULT_LIMIT 1000

static bool kt_fault_step(int64_t n, kc_status* st, bool* saw_failure) {
  kc_status_code code = kc_status_get_code(st);
  if (code != KC_OK && code != KC_RESOURCE_EXHAUSTED) {
    char buf[512];
    kt__fail(__FILE__, __LINE__, "fail_after=%lld: unexpected status %s",
             (long long)n, kt_status_text(st, buf, sizeof buf));
  }
  if (code != KC_OK) *saw_failure = true;
  kc_status_destroy(st);
  return code == KC_OK;
}

static int64_t kt_failed_allocs(void) {
  return kt_stats(kt_counter()).failed_allocs;
}

KC_TEST(fault_injection_array_of_strings) {
  const char* texts[] = {"a string long enough to be an object",
                         "another string that is not small", "tiny"};
  int64_t n = 0;
  for (; n < KT_FAULT_LIMIT; ++n) {
    int64_t failed_before = kt_failed_allocs();
    kc_counting_allocator_set_fail_after(kt_counter(), n);
    bool saw_failure = false;
    kc_any items[3];
    size_t made = 0;
    for (; made < 3; ++made) {
      items[made] = kc_any_int(-1);
      if (!kt_fault_step(n, kc_any_from_string(kt_alloc(), kc_sv(texts[made]),
                                               &items[made]),
                         &saw_failure)) {
        KC_CHECK_INT(items[made].type_index, KC_TYPE_NONE);
        break;
      }
    }
    kc_array* array = NULL;
    if (made == 3 &&
        kt_fault_step(n, kc_array_create(kt_alloc(), items, 3, &array),
                      &saw_failure)) {
      KC_CHECK_INT(kc_array_get_size(array), 3);
      kc_string_view v;
      KC_CHECK(kc_any_get_string(kc_array_get_item(array, 1), &v));
      KC_CHECK(kt_sv_is(v, texts[1]));
    } else if (made == 3) {
      KC_CHECK(array == NULL);
    }
    kc_counting_allocator_set_fail_after(kt_counter(), -1);
    for (size_t i = 0; i < made; ++i) kc_any_release(&items[i]);
    kc_object_release(KC_OBJECT(array));
    KC_CHECK_INT(kt_live_blocks(), 0);
    if (!saw_failure && kt_failed_allocs() == failed_before) break;
  }
  KC_CHECK(n > 0 && n < KT_FAULT_LIMIT);
}

static kc_status* kt_nop(void* self, const kc_any* args, int32_t nargs,
                         kc_any* ret) {
  (void)self;
  (void)args;
  (void)nargs;
  (void)ret;
  return NULL;
}

KC_TEST(fault_injection_registry_list) {
  const char* names[] = {"fi.alpha", "fi.beta_long_name", "fi.c", "other.x"};
  for (size_t i = 0; i < 4; ++i) {
    kc_func* f = NULL;
    KC_CHECK_OK(kc_func_create(kt_alloc(), kt_nop, NULL, NULL, &f));
    KC_CHECK_OK(kc_func_registry_register(kc_sv(names[i]), f, 0));
    kc_object_release(KC_OBJECT(f));
  }
  /* The registry keeps the functions; only the lists must come and go. */
  int64_t baseline = kt_live_blocks();
  int64_t n = 0;
  for (; n < KT_FAULT_LIMIT; ++n) {
    int64_t failed_before = kt_failed_allocs();
    kc_counting_allocator_set_fail_after(kt_counter(), n);
    bool saw_failure = false;
    kc_array* list = NULL;
    if (kt_fault_step(n, kc_func_registry_list(kt_alloc(), kc_sv("fi."), &list),
                      &saw_failure)) {
      KC_CHECK_INT(kc_array_get_size(list), 3);
    } else {
      KC_CHECK(list == NULL);
    }
    kc_counting_allocator_set_fail_after(kt_counter(), -1);
    kc_object_release(KC_OBJECT(list));
    KC_CHECK_INT(kt_live_blocks(), baseline);
    if (!saw_failure && kt_failed_allocs() == failed_before) break;
  }
  KC_CHECK(n > 0 && n < KT_FAULT_LIMIT);
}

KC_TEST(fault_injection_tensor_create_and_export) {
  const int64_t shape[] = {3, 5, 7};
  DLDataType f32 = kc_dtype_make(kDLFloat, 32, 1);
  int64_t n = 0;
  for (; n < KT_FAULT_LIMIT; ++n) {
    int64_t failed_before = kt_failed_allocs();
    kc_counting_allocator_set_fail_after(kt_counter(), n);
    bool saw_failure = false;
    kc_tensor* t = NULL;
    DLManagedTensorVersioned* managed = NULL;
    if (kt_fault_step(n, kc_tensor_create(kt_alloc(), shape, 3, f32,
                                          kc_device_cpu(), &t),
                      &saw_failure)) {
      if (!kt_fault_step(n, kc_tensor_export_dlpack(t, &managed),
                         &saw_failure)) {
        KC_CHECK(managed == NULL);
      }
    } else {
      KC_CHECK(t == NULL);
    }
    kc_counting_allocator_set_fail_after(kt_counter(), -1);
    kc_object_release(KC_OBJECT(t));
    if (managed) managed->deleter(managed);
    KC_CHECK_INT(kt_live_blocks(), 0);
    if (!saw_failure && kt_failed_allocs() == failed_before) break;
  }
  KC_CHECK(n > 0 && n < KT_FAULT_LIMIT);
}

KC_TEST(fault_injection_bytes_and_str) {
  const char data[] = "some bytes that are copied into the object";
  int64_t n = 0;
  for (; n < KT_FAULT_LIMIT; ++n) {
    int64_t failed_before = kt_failed_allocs();
    kc_counting_allocator_set_fail_after(kt_counter(), n);
    bool saw_failure = false;
    kc_bytes* b = NULL;
    kc_str* s = NULL;
    if (kt_fault_step(n, kc_bytes_create(kt_alloc(), data, sizeof data, &b),
                      &saw_failure)) {
      kt_fault_step(n, kc_str_create(kt_alloc(), kc_sv(data), &s),
                    &saw_failure);
    }
    kc_counting_allocator_set_fail_after(kt_counter(), -1);
    kc_object_release(KC_OBJECT(b));
    kc_object_release(KC_OBJECT(s));
    KC_CHECK_INT(kt_live_blocks(), 0);
    if (!saw_failure && kt_failed_allocs() == failed_before) break;
  }
  KC_CHECK(n > 0 && n < KT_FAULT_LIMIT);
}

/* ---- the caching allocator ------------------------------------------------ */

/* Sanitizer builds do not cache (kcall/base.h): the tests of reuse skip
 * there, saying so. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KT_SANITIZED 1
#endif
#endif
#ifdef KT_SANITIZED
#define KT_NEEDS_CACHING() \
  kt_skip("a sanitizer build: the caching allocator does not cache")
#else
#define KT_NEEDS_CACHING() ((void)0)
#endif

KC_TEST(caching_allocator_reuses_a_freed_block) {
  KT_NEEDS_CACHING();
  const kc_allocator* a = kc_allocator_caching();
  KC_CHECK(a == kc_allocator_caching());
  void* p = kc_allocator_alloc(a, 100, 0);
  KC_CHECK(p != NULL);
  KC_CHECK(((uintptr_t)p & 63) == 0);
  memset(p, 0xab, 100);
  kc_allocator_free(a, p, 100, 0);
  /* Same class (97..112 bytes), same thread: the same block. */
  void* q = kc_allocator_alloc(a, 110, 16);
  KC_CHECK(q == p);
  kc_allocator_free(a, q, 110, 16);
  /* Another class: another block. */
  void* r = kc_allocator_alloc(a, 4096 + 1, 0);
  KC_CHECK(r != NULL && r != p);
  kc_allocator_free(a, r, 4096 + 1, 0);
  kc_allocator_caching_trim();
  void* s = kc_allocator_alloc(a, 100, 0);
  KC_CHECK(s != NULL);
  kc_allocator_free(a, s, 100, 0);
}

KC_TEST(caching_allocator_bypasses_what_it_does_not_keep) {
  const kc_allocator* a = kc_allocator_caching();
  /* A larger alignment, and a block over 64 MiB, go to the system. */
  void* p = kc_allocator_alloc(a, 256, 4096);
  KC_CHECK(p != NULL && ((uintptr_t)p & 4095) == 0);
  kc_allocator_free(a, p, 256, 4096);
  size_t big = ((size_t)64 << 20) + 1;
  void* q = kc_allocator_alloc(a, big, 0);
  KC_CHECK(q != NULL);
  ((char*)q)[big - 1] = 1;
  kc_allocator_free(a, q, big, 0);
  /* Reallocation keeps the contents, across classes. */
  char* r = kc_allocator_alloc(a, 10, 0);
  KC_CHECK(r != NULL);
  memcpy(r, "0123456789", 10);
  char* grown = a->fn(a->self, r, 10, 100000, 0);
  KC_CHECK(grown != NULL && memcmp(grown, "0123456789", 10) == 0);
  kc_allocator_free(a, grown, 100000, 0);
  KC_CHECK(kc_allocator_alloc(a, 0, 0) == NULL);
}

static void* kt_free_elsewhere(void* block) {
  /* Freed on another thread: that thread keeps it until it exits. */
  kc_allocator_free(kc_allocator_caching(), block, 1000, 0);
  void* again = kc_allocator_alloc(kc_allocator_caching(), 1000, 0);
  return again == block ? block : NULL;
}

KC_TEST(caching_allocator_blocks_move_between_threads) {
  KT_NEEDS_CACHING();
  void* p = kc_allocator_alloc(kc_allocator_caching(), 1000, 0);
  KC_CHECK(p != NULL);
  pthread_t t;
  KC_CHECK(pthread_create(&t, NULL, kt_free_elsewhere, p) == 0);
  void* seen = NULL;
  KC_CHECK(pthread_join(t, &seen) == 0);
  /* The thread took the block again, and never freed it: ours to free. */
  KC_CHECK(seen == p);
  kc_allocator_free(kc_allocator_caching(), p, 1000, 0);
}

KC_TEST(caching_allocator_keeps_at_most_its_cap) {
  KT_NEEDS_CACHING();
  setenv("KCALL_HOST_CACHE_MB", "1", 1); /* read once, at the first use */
  const kc_allocator* a = kc_allocator_caching();
  void* blocks[3];
  for (int i = 0; i < 3; ++i) blocks[i] = kc_allocator_alloc(a, 400000, 0);
  for (int i = 0; i < 3; ++i) kc_allocator_free(a, blocks[i], 400000, 0);
  /* Two 448 KiB blocks fit in 1 MiB, the third went back to the system;
   * the two kept come back last freed first. */
  void* x = kc_allocator_alloc(a, 400000, 0);
  void* y = kc_allocator_alloc(a, 400000, 0);
  KC_CHECK(x == blocks[1] && y == blocks[0]);
  kc_allocator_free(a, x, 400000, 0);
  kc_allocator_free(a, y, 400000, 0);
}

KC_TEST(tensors_reuse_storage_through_the_caching_allocator) {
  KT_NEEDS_CACHING();
  int64_t shape[1] = {1000};
  kc_tensor* t = NULL;
  KC_CHECK_OK(kc_tensor_create(NULL, shape, 1, kc_dtype_make(kDLFloat, 32, 1),
                               kc_device_cpu(), &t));
  void* data = kc_tensor_get_dltensor(t)->data;
  KC_CHECK(((uintptr_t)data & (KC_TENSOR_ALIGNMENT - 1)) == 0);
  kc_object_release(KC_OBJECT(t));
  KC_CHECK_OK(kc_tensor_create(NULL, shape, 1, kc_dtype_make(kDLFloat, 32, 1),
                               kc_device_cpu(), &t));
  KC_CHECK(kc_tensor_get_dltensor(t)->data == data);
  kc_object_release(KC_OBJECT(t));
}

/* The cache asked for explicitly: these run in the sanitizer builds too
 * (KCALL_HOST_CACHE_MB set turns caching on there), so that ASan checks
 * the blocks it keeps and hands back, and TSan the threads sharing them. */
static void kt_ask_for_caching(void) {
  setenv("KCALL_HOST_CACHE_MB", "64", 1); /* read once, at the first use */
}

static long kt_minor_faults(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

KC_TEST(caching_allocator_large_tensors_take_no_fresh_pages) {
  kt_ask_for_caching();
  /* 1M f32, 4 MiB: from the system every time, each call would fault in
   * its 1,024 pages anew. */
  int64_t shape[1] = {1 << 20};
  kc_tensor* t = NULL;
  KC_CHECK_OK(kc_tensor_create(NULL, shape, 1, kc_dtype_make(kDLFloat, 32, 1),
                               kc_device_cpu(), &t));
  float* data = kc_tensor_get_dltensor(t)->data;
  memset(data, 1, (size_t)4 << 20);
  kc_object_release(KC_OBJECT(t));
  long before = kt_minor_faults();
  for (int i = 0; i < 20; ++i) {
    KC_CHECK_OK(kc_tensor_create(NULL, shape, 1,
                                 kc_dtype_make(kDLFloat, 32, 1),
                                 kc_device_cpu(), &t));
    float* again = kc_tensor_get_dltensor(t)->data;
    KC_CHECK(again == data);
    memset(again, 2, (size_t)4 << 20);
    kc_object_release(KC_OBJECT(t));
  }
  long faults = kt_minor_faults() - before;
  /* A few for the test's own stack or a timer, never a page per call. */
  if (faults >= 20) {
    kt__fail(__FILE__, __LINE__, "%ld minor page faults in 20 calls", faults);
  }
  kc_allocator_caching_trim();
}

/* Eager calls' outputs and the tensors made by several threads, handed
 * from one thread to another through a shared slot array, checked and
 * released there: every block moves between the threads' caches. */
enum { KT_CACHE_THREADS = 4, KT_CACHE_ROUNDS = 1500, KT_CACHE_SLOTS = 16 };

typedef struct kt_cache_share {
  pthread_mutex_t mu;
  kc_tensor* slots[KT_CACHE_SLOTS];
  atomic_int bad;
} kt_cache_share;

typedef struct kt_cache_worker {
  kt_cache_share* share;
  int id;
} kt_cache_worker;

static void* kt_cache_worker_main(void* arg) {
  kt_cache_worker* w = arg;
  static const int64_t sizes[] = {1, 7, 64, 300, 4096, 20000, 65536};
  for (int r = 0; r < KT_CACHE_ROUNDS; ++r) {
    int64_t n = sizes[(r + w->id) % 7];
    kc_tensor* t = NULL;
    kc_status* st = kc_tensor_create(NULL, &n, 1, kc_dtype_make(kDLInt, 32, 1),
                                     kc_device_cpu(), &t);
    if (st) {
      kc_status_destroy(st);
      atomic_fetch_add(&w->share->bad, 1);
      continue;
    }
    int32_t* p = kc_tensor_get_dltensor(t)->data;
    int32_t tag = w->id * 1000000 + r;
    for (int64_t i = 0; i < n; ++i) p[i] = tag;
    /* Swap it for what another thread left in the slot. */
    pthread_mutex_lock(&w->share->mu);
    kc_tensor** slot = &w->share->slots[(r * 7 + w->id) % KT_CACHE_SLOTS];
    kc_tensor* theirs = *slot;
    *slot = t;
    pthread_mutex_unlock(&w->share->mu);
    if (!theirs) continue;
    const DLTensor* d = kc_tensor_get_dltensor(theirs);
    const int32_t* q = d->data;
    for (int64_t i = 1; i < d->shape[0]; ++i) {
      if (q[i] != q[0]) {
        atomic_fetch_add(&w->share->bad, 1);
        break;
      }
    }
    kc_object_release(KC_OBJECT(theirs));
  }
  return NULL;
}

KC_TEST(caching_allocator_threads_share_tensors) {
  kt_ask_for_caching();
  kt_cache_share share;
  memset(&share, 0, sizeof share);
  pthread_mutex_init(&share.mu, NULL);
  atomic_init(&share.bad, 0);
  pthread_t threads[KT_CACHE_THREADS];
  kt_cache_worker workers[KT_CACHE_THREADS];
  for (int i = 0; i < KT_CACHE_THREADS; ++i) {
    workers[i] = (kt_cache_worker){.share = &share, .id = i};
    KC_CHECK(pthread_create(&threads[i], NULL, kt_cache_worker_main,
                            &workers[i]) == 0);
  }
  for (int i = 0; i < KT_CACHE_THREADS; ++i) {
    KC_CHECK(pthread_join(threads[i], NULL) == 0);
  }
  KC_CHECK_INT(atomic_load(&share.bad), 0);
  for (int i = 0; i < KT_CACHE_SLOTS; ++i) {
    kc_object_release(KC_OBJECT(share.slots[i]));
  }
  kc_allocator_caching_trim();
  pthread_mutex_destroy(&share.mu);
}

KC_TEST(alloc_internal_set_and_refused) {
  kc_counting_allocator* c = NULL;
  KC_CHECK_OK(kc_counting_allocator_create(&c));
  const kc_allocator* counting = kc_counting_allocator_get_allocator(c);
  KC_CHECK(kc_allocator_get_internal() == kc_allocator_system());
  KC_CHECK(kc_allocator_set_internal(counting) == kc_allocator_system());
  KC_CHECK(kc_allocator_get_internal() == counting);
  /* A status is an allocation of the library's own: it comes from the
   * internal allocator, and goes back to it. */
  kc_status_destroy(kc_status_create(KC_UNKNOWN, "from the internal allocator"));
  KC_CHECK(kt_stats(c).total_allocs >= 1);
  KC_CHECK_INT(kt_stats(c).live_blocks, 0);
  /* No fn: refused, nothing changes. */
  const kc_allocator broken = {NULL, NULL};
  KC_CHECK(kc_allocator_set_internal(&broken) == NULL);
  KC_CHECK(kc_allocator_get_internal() == counting);
  /* A block made under one allocator goes back to it after another is
   * set. */
  kc_status* kept = kc_status_create(KC_UNKNOWN, "made under the counter");
  KC_CHECK(kc_allocator_set_internal(NULL) == counting);
  KC_CHECK(kc_allocator_get_internal() == kc_allocator_system());
  KC_CHECK_INT(kt_stats(c).live_blocks, 2); /* the status and its text */
  kc_status_destroy(kept);
  KC_CHECK_INT(kt_stats(c).live_blocks, 0);
  kc_counting_allocator_destroy(c);
}
