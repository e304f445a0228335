/*
 * The CPU thread pool; see kcall/runtime.h for the contract.
 *
 * One mutex guards every queue of a pool. Tasks are intrusive nodes in
 * doubly linked lists: a shared FIFO plus one FIFO per worker for hinted
 * tasks. A parallel loop queues one helper node per worker it wants, on the
 * caller's stack; the caller then claims ranges itself, and when it runs
 * out it unlinks the helper nodes no worker has taken yet and waits only for
 * the helpers that did start. So a loop never waits on a busy pool, and the
 * nodes never outlive the caller's frame.
 *
 * `pending` counts queued nodes and is read without the lock by idle
 * workers, which spin on it for a while before they sleep on `wake`.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal/common.h"
#include "kcall/runtime.h"

/* A range should be worth about this many nanoseconds of work: well above
 * what handing it to another thread costs. */
#define KC__MIN_RANGE_COST_NS 10000
/* Ranges per thread: slack for uneven ranges and late helpers. */
#define KC__RANGES_PER_THREAD 4
/* How long an idle worker spins before it sleeps. */
#define KC__SPIN_NS 100000
/* Helper nodes a loop keeps on its stack before it allocates. */
#define KC__STACK_HELPERS 15

typedef struct kc__pf_job kc__pf_job;

typedef struct kc__task {
  struct kc__task* prev;
  struct kc__task* next;
  kc__pf_job* job;    /* a parallel loop's helper node, or NULL */
  bool queued;        /* helper nodes: still in a queue */
  kc_closure closure; /* scheduled tasks */
} kc__task;

struct kc__pf_job {
  kc_range_fn fn;
  kc_range_worker_fn worker_fn;
  void* ctx;
  int64_t block;
  int64_t total;
  int64_t nblocks;
  int64_t next_block; /* atomic */
  int32_t helpers;    /* helper nodes queued */
  int32_t claimed;    /* atomic; taken by workers (written under the lock) */
  int32_t active;     /* atomic; helpers that started and have not finished */
  int32_t next_id;    /* atomic; worker ids handed to helpers */
};

typedef struct kc__worker {
  kc_thread_pool* pool;
  int32_t index;
} kc__worker;

struct kc_thread_pool {
  int32_t size;
  int32_t num_workers;
  bool is_default;
  pthread_t* threads;
  kc__worker* workers;
  pthread_mutex_t mu;
  pthread_cond_t wake;
  kc__task global; /* sentinel of the shared queue */
  kc__task* local; /* sentinels of the per-worker queues */
  int64_t pending; /* atomic; nodes in all queues */
  int32_t sleepers;
  uint32_t next_hint;
  bool stopping;
  /* A pool of kc_thread_pool_create_on: no workers, no queues; its loops
   * run on the backend, its tasks on the default pool. */
  bool has_backend;
  kc_thread_pool_backend backend;
};

/* Loop nesting on this thread: inside a range, loops run inline. */
static _Thread_local int32_t kc__loop_depth;
static _Thread_local int32_t kc__loop_worker_id;

static void kc__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int64_t kc__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- queues (with mu held) --------------------------------------------- */

static void kc__queue_init(kc__task* sentinel) {
  sentinel->prev = sentinel->next = sentinel;
}

static void kc__queue_push(kc_thread_pool* pool, kc__task* sentinel,
                           kc__task* t) {
  t->prev = sentinel->prev;
  t->next = sentinel;
  sentinel->prev->next = t;
  sentinel->prev = t;
  __atomic_add_fetch(&pool->pending, 1, __ATOMIC_RELEASE);
}

static void kc__queue_unlink(kc_thread_pool* pool, kc__task* t) {
  t->prev->next = t->next;
  t->next->prev = t->prev;
  t->prev = t->next = t;
  __atomic_sub_fetch(&pool->pending, 1, __ATOMIC_RELAXED);
}

static kc__task* kc__queue_pop(kc_thread_pool* pool, kc__task* sentinel) {
  kc__task* t = sentinel->next;
  if (t == sentinel) return NULL;
  kc__queue_unlink(pool, t);
  return t;
}

/* Own queue first, then the shared one, then the other workers'. */
static kc__task* kc__pop_for(kc_thread_pool* pool, int32_t index) {
  kc__task* t = kc__queue_pop(pool, &pool->local[index]);
  if (!t) t = kc__queue_pop(pool, &pool->global);
  for (int32_t i = 1; !t && i < pool->num_workers; ++i) {
    t = kc__queue_pop(pool, &pool->local[(index + i) % pool->num_workers]);
  }
  if (t && t->job) {
    /* Counted under the lock, so that a loop's caller that takes the lock
     * afterwards sees every helper that will touch its frame. */
    t->queued = false;
    __atomic_add_fetch(&t->job->active, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&t->job->claimed, 1, __ATOMIC_RELEASE);
  }
  return t;
}

static void kc__wake(kc_thread_pool* pool, int32_t count) {
  for (int32_t i = 0; i < count && i < pool->sleepers; ++i) {
    pthread_cond_signal(&pool->wake);
  }
}

/* ---- running work ------------------------------------------------------ */

static void kc__run_ranges(kc__pf_job* job, int32_t worker_id) {
  int32_t saved_depth = kc__loop_depth;
  int32_t saved_id = kc__loop_worker_id;
  kc__loop_depth = saved_depth + 1;
  kc__loop_worker_id = worker_id;
  for (;;) {
    int64_t b = __atomic_fetch_add(&job->next_block, 1, __ATOMIC_RELAXED);
    if (b >= job->nblocks) break;
    int64_t begin = b * job->block;
    int64_t end =
        begin + job->block < job->total ? begin + job->block : job->total;
    if (job->worker_fn) {
      job->worker_fn(job->ctx, begin, end, worker_id);
    } else {
      job->fn(job->ctx, begin, end);
    }
  }
  kc__loop_depth = saved_depth;
  kc__loop_worker_id = saved_id;
}

static void kc__run_task(kc__task* t) {
  if (t->job) {
    kc__pf_job* job = t->job;
    int32_t id = __atomic_add_fetch(&job->next_id, 1, __ATOMIC_RELAXED);
    kc__run_ranges(job, id);
    /* The last touch of the caller's frame. */
    __atomic_sub_fetch(&job->active, 1, __ATOMIC_RELEASE);
    return;
  }
  t->closure.fn(t->closure.self);
  if (t->closure.deleter) t->closure.deleter(t->closure.self);
  kc__free(t);
}

/* Spins until something is queued or the spin time is over. */
static bool kc__spin_for_work(kc_thread_pool* pool) {
  int64_t start = kc__now_ns();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (__atomic_load_n(&pool->pending, __ATOMIC_ACQUIRE) > 0) return true;
      kc__cpu_relax();
    }
    if (kc__now_ns() - start > KC__SPIN_NS) return false;
  }
}

static void* kc__worker_main(void* arg) {
  kc__worker* w = arg;
  kc_thread_pool* pool = w->pool;
  pthread_mutex_lock(&pool->mu);
  for (;;) {
    kc__task* t = kc__pop_for(pool, w->index);
    if (t) {
      pthread_mutex_unlock(&pool->mu);
      kc__run_task(t);
      pthread_mutex_lock(&pool->mu);
      continue;
    }
    if (pool->stopping) break; /* stops only once every queue is empty */
    pthread_mutex_unlock(&pool->mu);
    bool found = kc__spin_for_work(pool);
    pthread_mutex_lock(&pool->mu);
    if (found || pool->stopping) continue;
    if (__atomic_load_n(&pool->pending, __ATOMIC_RELAXED) > 0) continue;
    pool->sleepers++;
    pthread_cond_wait(&pool->wake, &pool->mu);
    pool->sleepers--;
  }
  pthread_mutex_unlock(&pool->mu);
  return NULL;
}

/* ---- creation and destruction ------------------------------------------ */

static void kc__pool_free(kc_thread_pool* pool) {
  pthread_cond_destroy(&pool->wake);
  pthread_mutex_destroy(&pool->mu);
  kc__free(pool->threads);
  kc__free(pool->workers);
  kc__free(pool->local);
  kc__free(pool);
}

/* Stops and joins the first `started` workers. */
static void kc__pool_stop(kc_thread_pool* pool, int32_t started) {
  pthread_mutex_lock(&pool->mu);
  pool->stopping = true;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mu);
  for (int32_t i = 0; i < started; ++i) pthread_join(pool->threads[i], NULL);
}

kc_status* kc_thread_pool_create(int32_t size, kc_thread_pool** out_pool) {
  if (!out_pool) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_thread_pool_create: out_pool is NULL");
  }
  *out_pool = NULL;
  if (size < 1 || size > KC_THREAD_POOL_MAX_SIZE) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "thread pool size: expected 1 to %d, got %d",
                            KC_THREAD_POOL_MAX_SIZE, size);
  }
  int32_t nw = size > 1 ? size - 1 : 1;
  kc_thread_pool* pool = kc__calloc(1, sizeof *pool);
  if (!pool) goto oom;
  pool->size = size;
  pool->num_workers = nw;
  pool->threads = kc__calloc((size_t)nw, sizeof *pool->threads);
  pool->workers = kc__calloc((size_t)nw, sizeof *pool->workers);
  pool->local = kc__calloc((size_t)nw, sizeof *pool->local);
  if (!pool->threads || !pool->workers || !pool->local) {
    kc__free(pool->threads);
    kc__free(pool->workers);
    kc__free(pool->local);
    kc__free(pool);
    goto oom;
  }
  pthread_mutex_init(&pool->mu, NULL);
  pthread_cond_init(&pool->wake, NULL);
  kc__queue_init(&pool->global);
  for (int32_t i = 0; i < nw; ++i) kc__queue_init(&pool->local[i]);
  for (int32_t i = 0; i < nw; ++i) {
    pool->workers[i].pool = pool;
    pool->workers[i].index = i;
    int rc = pthread_create(&pool->threads[i], NULL, kc__worker_main,
                            &pool->workers[i]);
    if (rc != 0) {
      kc__pool_stop(pool, i);
      kc__pool_free(pool);
      return kc_status_create(KC_RESOURCE_EXHAUSTED,
                              "creating a thread pool of size %d: thread %d "
                              "could not start (error %d)",
                              size, i, rc);
    }
  }
  *out_pool = pool;
  return NULL;
oom:
  return kc_status_create(KC_RESOURCE_EXHAUSTED,
                          "out of memory creating a thread pool of size %d",
                          size);
}

kc_status* kc_thread_pool_create_on(const kc_thread_pool_backend* backend,
                                    kc_thread_pool** out_pool) {
  const char* bad = !out_pool ? "out_pool is NULL"
                    : !backend ? "backend is NULL"
                    : !KC_STRUCT_HAS(backend, kc_thread_pool_backend,
                                     parallel_for)
                        ? "backend.struct_size is too small"
                    : !backend->parallel_for ? "backend.parallel_for is NULL"
                                             : NULL;
  kc_thread_pool_backend b = {sizeof b, NULL, 0, NULL, NULL};
  if (backend) {
    size_t n = backend->struct_size < sizeof b ? backend->struct_size
                                               : sizeof b;
    memcpy(&b, backend, n);
    b.struct_size = sizeof b;
  }
  if (out_pool) *out_pool = NULL;
  char size_text[80];
  if (!bad && (b.size < 1 || b.size > KC_THREAD_POOL_MAX_SIZE)) {
    snprintf(size_text, sizeof size_text,
             "backend.size: expected 1 to %d, got %d", KC_THREAD_POOL_MAX_SIZE,
             b.size);
    bad = size_text;
  }
  kc_thread_pool* pool = bad ? NULL : kc__calloc(1, sizeof *pool);
  if (!pool) {
    if (b.deleter) b.deleter(b.self);
    if (bad) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "kc_thread_pool_create_on: %s", bad);
    }
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory creating a thread pool");
  }
  pool->size = b.size;
  pool->has_backend = true;
  pool->backend = b;
  *out_pool = pool;
  return NULL;
}

void kc_thread_pool_destroy(kc_thread_pool* pool) {
  if (!pool || pool->is_default) return;
  if (pool->has_backend) {
    if (pool->backend.deleter) pool->backend.deleter(pool->backend.self);
    kc__free(pool);
    return;
  }
  kc__pool_stop(pool, pool->num_workers);
  kc__pool_free(pool);
}

/* ---- the default pool -------------------------------------------------- */

static pthread_once_t kc__default_once = PTHREAD_ONCE_INIT;
static kc_thread_pool* kc__default_pool;
/* Stands in when the default pool cannot be created: no workers, so
 * everything runs on the calling thread. */
static kc_thread_pool kc__inline_pool = {.size = 1, .is_default = true};

static int32_t kc__default_size(void) {
  const char* env = getenv("KCALL_NUM_THREADS");
  if (env && *env) {
    char* end = NULL;
    long n = strtol(env, &end, 10);
    if (*end == '\0' && n >= 1) {
      return n > KC_THREAD_POOL_MAX_SIZE ? KC_THREAD_POOL_MAX_SIZE : (int32_t)n;
    }
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) return 1;
  return cores > KC_THREAD_POOL_MAX_SIZE ? KC_THREAD_POOL_MAX_SIZE
                                         : (int32_t)cores;
}

static void kc__default_create(void) {
  kc_thread_pool* pool = NULL;
  kc_status* st = kc_thread_pool_create(kc__default_size(), &pool);
  if (st) {
    kc_status_destroy(st);
    pool = &kc__inline_pool;
  }
  pool->is_default = true;
  kc__default_pool = pool;
}

kc_thread_pool* kc_thread_pool_get_default(void) {
  pthread_once(&kc__default_once, kc__default_create);
  return kc__default_pool;
}

int32_t kc_thread_pool_get_size(const kc_thread_pool* pool) {
  return pool ? pool->size : kc_thread_pool_get_default()->size;
}

/* ---- scheduling -------------------------------------------------------- */

static kc_status* kc__schedule(kc_thread_pool* pool, const kc_closure* closure,
                               int32_t start, int32_t limit, bool hinted) {
  if (!closure ||
      closure->struct_size < offsetof(kc_closure, self) + sizeof(void*) ||
      !closure->fn) {
    if (closure && KC_STRUCT_HAS(closure, kc_closure, deleter) &&
        closure->deleter) {
      closure->deleter(closure->self);
    }
    return kc_status_create(KC_INVALID_ARGUMENT, "scheduling a task: %s",
                            closure ? "closure.fn is NULL or struct_size too "
                                      "small"
                                    : "closure is NULL");
  }
  if (!pool || pool->has_backend) pool = kc_thread_pool_get_default();
  kc_closure c = {sizeof c, closure->fn, closure->self, NULL};
  if (KC_STRUCT_HAS(closure, kc_closure, deleter)) c.deleter = closure->deleter;
  if (pool->num_workers == 0) { /* the inline stand-in */
    c.fn(c.self);
    if (c.deleter) c.deleter(c.self);
    return NULL;
  }
  kc__task* t = kc__malloc(sizeof *t);
  if (!t) {
    if (c.deleter) c.deleter(c.self);
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory scheduling a task");
  }
  t->job = NULL;
  t->queued = true;
  t->closure = c;
  pthread_mutex_lock(&pool->mu);
  if (pool->stopping) {
    pthread_mutex_unlock(&pool->mu);
    kc__free(t);
    if (c.deleter) c.deleter(c.self);
    return kc_status_create(KC_FAILED_PRECONDITION,
                            "scheduling a task: the thread pool is being "
                            "destroyed");
  }
  kc__task* queue = &pool->global;
  if (hinted) {
    if (start < 0) start = 0;
    if (limit > pool->num_workers) limit = pool->num_workers;
    if (start < limit) {
      uint32_t span = (uint32_t)(limit - start);
      queue = &pool->local[start + (int32_t)(pool->next_hint++ % span)];
    }
  }
  kc__queue_push(pool, queue, t);
  kc__wake(pool, 1);
  pthread_mutex_unlock(&pool->mu);
  return NULL;
}

kc_status* kc_thread_pool_schedule(kc_thread_pool* pool,
                                   const kc_closure* closure) {
  return kc__schedule(pool, closure, 0, 0, false);
}

kc_status* kc_thread_pool_schedule_with_hint(kc_thread_pool* pool,
                                             const kc_closure* closure,
                                             int32_t start, int32_t limit) {
  return kc__schedule(pool, closure, start, limit, true);
}

/* ---- parallel loops ---------------------------------------------------- */

/* How many ranges a loop is split into: enough for every thread to get a
 * few, none worth less than KC__MIN_RANGE_COST_NS. */
static int64_t kc__range_count(int64_t total, int64_t cost_per_unit,
                               int32_t size) {
  if (cost_per_unit < 1) cost_per_unit = 1;
  int64_t by_cost = total;
  if (cost_per_unit < KC__MIN_RANGE_COST_NS) {
    int64_t units = (KC__MIN_RANGE_COST_NS + cost_per_unit - 1) / cost_per_unit;
    by_cost = total / units + (total % units != 0);
  }
  int64_t n = (int64_t)size * KC__RANGES_PER_THREAD;
  if (by_cost < n) n = by_cost;
  return n < 1 ? 1 : n;
}

static void kc__wait_helpers(kc_thread_pool* pool, kc__pf_job* job,
                             kc__task* nodes) {
  if (__atomic_load_n(&job->claimed, __ATOMIC_ACQUIRE) < job->helpers) {
    pthread_mutex_lock(&pool->mu);
    for (int32_t i = 0; i < job->helpers; ++i) {
      if (nodes[i].queued) kc__queue_unlink(pool, &nodes[i]);
    }
    pthread_mutex_unlock(&pool->mu);
  }
  /* Helpers that started are inside a range already: they finish soon. */
  for (unsigned spins = 0; __atomic_load_n(&job->active, __ATOMIC_ACQUIRE) > 0;
       ++spins) {
    if (spins < 4096) {
      kc__cpu_relax();
    } else {
      sched_yield();
    }
  }
}

/* A loop on a backend pool: each range runs with an id below the pool's
 * size that no other running range holds (a bit of `ids`), and counts the
 * units it ran. */
typedef struct kc__backend_job {
  kc_range_fn fn;
  kc_range_worker_fn worker_fn;
  void* ctx;
  int32_t size;
  uint64_t ids[KC_THREAD_POOL_MAX_SIZE / 64]; /* atomic */
  int64_t done;                               /* atomic */
} kc__backend_job;

/* Takes a free id. The backend runs at most about `size` ranges at once;
 * should it run more, a range waits for one to finish. */
static int32_t kc__backend_take_id(kc__backend_job* j) {
  for (unsigned spins = 0;; ++spins) {
    for (int32_t w = 0; w * 64 < j->size; ++w) {
      int32_t bits_here = j->size - w * 64 < 64 ? j->size - w * 64 : 64;
      uint64_t mask = bits_here == 64 ? ~UINT64_C(0)
                                      : (UINT64_C(1) << bits_here) - 1;
      uint64_t held = __atomic_load_n(&j->ids[w], __ATOMIC_RELAXED);
      while (~held & mask) {
        int32_t b = __builtin_ctzll(~held & mask);
        if (__atomic_compare_exchange_n(&j->ids[w], &held,
                                        held | UINT64_C(1) << b, false,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
          return w * 64 + b;
        }
      }
    }
    if (spins < 64) {
      kc__cpu_relax();
    } else {
      sched_yield();
    }
  }
}

static void kc__backend_range(void* ctx, int64_t begin, int64_t end) {
  kc__backend_job* j = ctx;
  int32_t id = kc__backend_take_id(j);
  int32_t saved_depth = kc__loop_depth, saved_id = kc__loop_worker_id;
  kc__loop_depth = saved_depth + 1;
  kc__loop_worker_id = id;
  if (j->worker_fn) {
    j->worker_fn(j->ctx, begin, end, id);
  } else {
    j->fn(j->ctx, begin, end);
  }
  kc__loop_depth = saved_depth;
  kc__loop_worker_id = saved_id;
  __atomic_and_fetch(&j->ids[id / 64], ~(UINT64_C(1) << (id % 64)),
                     __ATOMIC_RELEASE);
  __atomic_add_fetch(&j->done, end - begin, __ATOMIC_RELAXED);
}

/* Runs a loop of `ranges` ranges on the pool's backend. False when the
 * backend ran nothing (the caller runs the loop itself); a backend that
 * ran part of the loop and gave up breaks its contract, and kcall stops
 * rather than compute with ranges missing. */
static bool kc__backend_loop(kc_thread_pool* pool, int64_t total,
                             int64_t ranges, kc_range_fn fn,
                             kc_range_worker_fn worker_fn, void* ctx) {
  kc__backend_job job = {fn, worker_fn, ctx, pool->size, {0}, 0};
  int64_t grain = total / ranges + (total % ranges != 0);
  int rc = pool->backend.parallel_for(pool->backend.self, total, grain,
                                      kc__backend_range, &job);
  int64_t done = __atomic_load_n(&job.done, __ATOMIC_ACQUIRE);
  if (done == total) return true;
  if (rc != 0 && done == 0) return false;
  fprintf(stderr,
          "kcall: a thread pool backend ran %lld of %lld units of a loop "
          "and returned %d; its ranges must cover the loop exactly once\n",
          (long long)done, (long long)total, rc);
  abort();
}

static void kc__parallel_for(kc_thread_pool* pool, int64_t total,
                             int64_t cost_per_unit, kc_range_fn fn,
                             kc_range_worker_fn worker_fn, void* ctx) {
  if (total <= 0 || (!fn && !worker_fn)) return;
  if (!pool) pool = kc_thread_pool_get_default();
  int64_t ranges = pool->size > 1 && kc__loop_depth == 0
                       ? kc__range_count(total, cost_per_unit, pool->size)
                       : 1;
  if (ranges > 1 && pool->has_backend &&
      kc__backend_loop(pool, total, ranges, fn, worker_fn, ctx)) {
    return;
  }
  if (ranges == 1 || pool->has_backend) {
    int32_t id = kc__loop_worker_id < pool->size ? kc__loop_worker_id : 0;
    int32_t saved_depth = kc__loop_depth;
    kc__loop_depth = saved_depth + 1;
    if (worker_fn) {
      worker_fn(ctx, 0, total, id);
    } else {
      fn(ctx, 0, total);
    }
    kc__loop_depth = saved_depth;
    return;
  }
  kc__pf_job job = {fn, worker_fn, ctx, 0, total, 0, 0, 0, 0, 0, 0};
  job.block = total / ranges + (total % ranges != 0);
  job.nblocks = total / job.block + (total % job.block != 0);
  int64_t want = job.nblocks - 1;
  if (want > pool->size - 1) want = pool->size - 1;
  kc__task stack_nodes[KC__STACK_HELPERS];
  kc__task* nodes = stack_nodes;
  if (want > KC__STACK_HELPERS) {
    nodes = kc__malloc((size_t)want * sizeof *nodes);
    if (!nodes) {
      nodes = stack_nodes;
      want = KC__STACK_HELPERS;
    }
  }
  job.helpers = (int32_t)want;
  pthread_mutex_lock(&pool->mu);
  for (int32_t i = 0; i < job.helpers; ++i) {
    nodes[i].job = &job;
    nodes[i].queued = true;
    kc__queue_push(pool, &pool->global, &nodes[i]);
  }
  kc__wake(pool, job.helpers);
  pthread_mutex_unlock(&pool->mu);

  kc__run_ranges(&job, 0);
  kc__wait_helpers(pool, &job, nodes);
  if (nodes != stack_nodes) kc__free(nodes);
}

void kc_thread_pool_parallel_for(kc_thread_pool* pool, int64_t total,
                                 int64_t cost_per_unit, kc_range_fn fn,
                                 void* ctx) {
  kc__parallel_for(pool, total, cost_per_unit, fn, NULL, ctx);
}

void kc_thread_pool_parallel_for_with_worker_id(kc_thread_pool* pool,
                                                int64_t total,
                                                int64_t cost_per_unit,
                                                kc_range_worker_fn fn,
                                                void* ctx) {
  kc__parallel_for(pool, total, cost_per_unit, NULL, fn, ctx);
}
