/*
 * XLA's intra-op thread pool as a kcall pool, for the kernels of the ops
 * and targets XLA calls (kcall.jax): their parallel loops run on XLA's
 * threads (XLA_FFI_ThreadPool_Schedule / NumThreads), not on kcall's own
 * pool beside them, which on a machine with few cores would have two sets
 * of threads spin against each other.
 *
 * One pool for the process (kc_thread_pool_create_on), made at the first
 * call from an XLA whose API offers the pool and that has more than one
 * thread in it. Its loops schedule on the execution context of the call
 * running on the calling thread (a thread-local the adapter sets around
 * the kernel): a loop started elsewhere (a thread of the kernel's own)
 * runs on the calling thread. A loop's state is reference-counted, since
 * a task XLA starts late may find every range taken and the loop over.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "internal/common.h"
#include "kcall/runtime.h"
#include "kcall/xla_ffi.h"
#include "xcall/xla_ffi_adapter_internal.h"

/* Whether `api` has the entry `field` (and it is set). */
#define KC__XLA_HAS(api, field)                                          \
  ((api)->struct_size >= KC__XLA_SIZE(XLA_FFI_Api, field) && (api)->field != NULL)

/* The call whose kernel runs on this thread (kc__xla_pool_enter), and the
 * pool it runs on (NULL: none of XLA's). */
static _Thread_local const XLA_FFI_Api* kc__xla_call_api;
static _Thread_local XLA_FFI_ExecutionContext* kc__xla_call_ctx;
static _Thread_local kc_thread_pool* kc__xla_active;

typedef struct kc__xla_loop {
  atomic_int_fast64_t refs; /* the caller, and each task scheduled */
  atomic_int_fast64_t next; /* the next range to claim */
  atomic_int_fast64_t done; /* ranges run */
  int64_t total, range, num_ranges;
  kc_range_fn fn;
  void* ctx;
} kc__xla_loop;

static void kc__xla_loop_release(kc__xla_loop* l) {
  if (atomic_fetch_sub(&l->refs, 1) == 1) kc__free(l);
}

/* Claims and runs ranges until none is left. */
static void kc__xla_loop_work(kc__xla_loop* l) {
  for (;;) {
    int64_t r = atomic_fetch_add(&l->next, 1);
    if (r >= l->num_ranges) return;
    int64_t begin = r * l->range;
    int64_t end = begin + l->range < l->total ? begin + l->range : l->total;
    l->fn(l->ctx, begin, end);
    atomic_fetch_add(&l->done, 1);
  }
}

static void kc__xla_task(void* data) {
  kc__xla_loop_work(data);
  kc__xla_loop_release(data);
}

/* Schedules one task of `l` on the calling thread's XLA pool. */
static bool kc__xla_schedule(kc__xla_loop* l) {
  const XLA_FFI_Api* api = kc__xla_call_api;
  XLA_FFI_ThreadPool_Schedule_Args a = {
      .struct_size = KC__XLA_SIZE(XLA_FFI_ThreadPool_Schedule_Args, data),
      .ctx = kc__xla_call_ctx,
      .task = kc__xla_task,
      .data = l};
  XLA_FFI_Error* err = api->XLA_FFI_ThreadPool_Schedule(&a);
  if (!err) return true;
  XLA_FFI_Error_Destroy_Args x = {
      .struct_size = KC__XLA_SIZE(XLA_FFI_Error_Destroy_Args, error), .error = err};
  api->XLA_FFI_Error_Destroy(&x);
  return false;
}

/* kc_thread_pool_backend.parallel_for on XLA's pool. */
static int kc__xla_parallel_for(void* self, int64_t total, int64_t grain, kc_range_fn fn,
                                void* ctx) {
  int64_t threads = (int64_t)(intptr_t)self;
  if (!kc__xla_call_api || !kc__xla_call_ctx) return 1; /* not on a call's thread: kcall runs it */
  /* About four ranges a thread, none below the grain. */
  int64_t range = (total + 4 * threads - 1) / (4 * threads);
  if (range < grain) range = grain;
  if (range < 1) range = 1;
  int64_t num_ranges = (total + range - 1) / range;
  kc__xla_loop* l = kc__malloc(sizeof *l);
  if (!l) return 1;
  l->total = total;
  l->range = range;
  l->num_ranges = num_ranges;
  l->fn = fn;
  l->ctx = ctx;
  atomic_init(&l->next, 0);
  atomic_init(&l->done, 0);
  int64_t helpers = (threads - 1 < num_ranges - 1 ? threads - 1 : num_ranges - 1);
  atomic_init(&l->refs, 1 + helpers);
  for (int64_t i = 0; i < helpers; ++i) {
    if (!kc__xla_schedule(l)) {
      /* The tasks not scheduled hold no reference; this thread does
       * their share. */
      atomic_fetch_sub(&l->refs, helpers - i);
      break;
    }
  }
  kc__xla_loop_work(l);
  /* Ranges other threads claimed may still run. */
  while (atomic_load(&l->done) < num_ranges) sched_yield();
  kc__xla_loop_release(l);
  return 0;
}

static pthread_mutex_t kc__xla_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(kc_thread_pool*) kc__xla_pool;
static atomic_bool kc__xla_pool_tried;

/* XLA's pool size from the call's context; 0 when it offers none. */
static int64_t kc__xla_threads(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx) {
  if (!KC__XLA_HAS(api, XLA_FFI_ThreadPool_NumThreads) ||
      !KC__XLA_HAS(api, XLA_FFI_ThreadPool_Schedule)) {
    return 0;
  }
  int64_t n = 0;
  XLA_FFI_ThreadPool_NumThreads_Args a = {
      .struct_size = KC__XLA_SIZE(XLA_FFI_ThreadPool_NumThreads_Args, num_threads),
      .ctx = ctx,
      .num_threads = &n};
  XLA_FFI_Error* err = api->XLA_FFI_ThreadPool_NumThreads(&a);
  if (err) {
    XLA_FFI_Error_Destroy_Args x = {
        .struct_size = KC__XLA_SIZE(XLA_FFI_Error_Destroy_Args, error), .error = err};
    api->XLA_FFI_Error_Destroy(&x);
    return 0;
  }
  return n;
}

/* The process's pool on XLA's threads, made at the first call that can
 * (NULL: none). */
static kc_thread_pool* kc__xla_pool_get(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx) {
  kc_thread_pool* pool = atomic_load_explicit(&kc__xla_pool, memory_order_acquire);
  if (pool || atomic_load_explicit(&kc__xla_pool_tried, memory_order_acquire)) return pool;
  pthread_mutex_lock(&kc__xla_pool_mu);
  if (!atomic_load(&kc__xla_pool_tried)) {
    int64_t n = kc__xla_threads(api, ctx);
    if (n >= 2 && n <= KC_THREAD_POOL_MAX_SIZE) {
      kc_thread_pool_backend b = {.struct_size = sizeof b,
                                  .self = (void*)(intptr_t)n,
                                  .size = (int32_t)n,
                                  .parallel_for = kc__xla_parallel_for};
      kc_thread_pool* made = NULL;
      kc_status* st = kc_thread_pool_create_on(&b, &made);
      if (st) {
        kc_status_destroy(st); /* kcall's pool then; tried again later */
        pthread_mutex_unlock(&kc__xla_pool_mu);
        return NULL;
      }
      atomic_store_explicit(&kc__xla_pool, made, memory_order_release);
    }
    atomic_store_explicit(&kc__xla_pool_tried, true, memory_order_release);
  }
  pthread_mutex_unlock(&kc__xla_pool_mu);
  return atomic_load_explicit(&kc__xla_pool, memory_order_acquire);
}

void kc__xla_pool_enter(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx,
                        kc__xla_pool_call* saved) {
  saved->api = kc__xla_call_api;
  saved->ctx = kc__xla_call_ctx;
  saved->pool = kc__xla_active;
  /* kcall's own host runs its calls on kcall's pool already. */
  if (api == kc_xla_ffi_get_api() || !ctx) {
    kc__xla_active = NULL;
    return;
  }
  kc__xla_call_api = api;
  kc__xla_call_ctx = ctx;
  kc__xla_active = kc__xla_pool_get(api, ctx);
}

kc_thread_pool* kc__xla_pool_current(kc_thread_pool* fallback) {
  return kc__xla_active ? kc__xla_active : fallback;
}

void kc__xla_pool_leave(const kc__xla_pool_call* saved) {
  kc__xla_call_api = saved->api;
  kc__xla_call_ctx = saved->ctx;
  kc__xla_active = saved->pool;
}
