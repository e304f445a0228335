/*
 * kcall/runtime.h — the CPU thread pool.
 *
 * A pool has a size n: the number of threads a parallel loop runs on, the
 * calling thread included. It starts n - 1 worker threads (one when n is 1,
 * so that scheduled tasks always have somewhere to run).
 *
 *   - kc_thread_pool_schedule runs a closure on a worker, some time later;
 *   - kc_thread_pool_parallel_for splits [0, total) into ranges sized by
 *     the cost of a unit, runs them on the caller and up to n - 1 workers,
 *     and returns when all have run. The caller works too, so a loop never
 *     waits for a busy pool: it finishes alone if no worker is free.
 *
 * A parallel loop started from inside the body of another one (on any
 * pool) runs inline on the calling thread as one range: nesting cannot
 * deadlock and cannot oversubscribe the machine.
 *
 * Idle workers spin for a short while before they sleep, so that loops
 * started back to back do not pay for a wake-up each time.
 *
 * The process has one default pool (kc_thread_pool_get_default), created
 * on first use under pthread_once and never destroyed; besides the
 * registries it is the library's only global state. Its size is
 * KCALL_NUM_THREADS when that is set to a positive integer, otherwise the
 * number of online cores. Pools are not fork-safe: a child process must
 * not use a pool created before the fork.
 *
 * Every function here is thread-safe.
 */
#ifndef KCALL_RUNTIME_H_
#define KCALL_RUNTIME_H_

#include "kcall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest pool size. */
#define KC_THREAD_POOL_MAX_SIZE 256

/* Creates a pool of size `size` (see above): 1 <= size <=
 * KC_THREAD_POOL_MAX_SIZE, else INVALID_ARGUMENT. RESOURCE_EXHAUSTED when
 * memory or threads run out (nothing is left behind). The caller owns the
 * pool and destroys it with kc_thread_pool_destroy. */
KC_API kc_status* kc_thread_pool_create(int32_t size,
                                        kc_thread_pool** out_pool);

/* Another runtime's parallel loop (PyTorch's intra-op pool, an OpenMP
 * team) for a pool to run its loops on: kernels that a framework calls
 * then split their work over the framework's own threads, instead of
 * bringing a second set of threads to the same cores (on a machine with
 * few cores, two pools that spin while idle slow each other's loops
 * several times over).
 *
 *   size          how many threads the runtime's loops use (1 to
 *                 KC_THREAD_POOL_MAX_SIZE); read once, at creation.
 *   parallel_for  runs fn(ctx, begin, end) over ranges that together cover
 *                 [0, total) exactly once, each of at least `grain` units
 *                 (the last may be shorter), on the calling thread and the
 *                 runtime's, and returns when all have run. Never called
 *                 with total <= 0. It returns 0, or non-zero when it ran no
 *                 range at all (kcall then runs the loop on the calling
 *                 thread); failing after some ranges ran is not allowed.
 *   deleter       called with `self` when the pool is destroyed; may be
 *                 NULL.
 *
 * Appended fields are detected through struct_size (KC_STRUCT_HAS). */
typedef struct kc_thread_pool_backend {
  size_t struct_size;
  void* self;
  int32_t size;
  int (*parallel_for)(void* self, int64_t total, int64_t grain,
                      kc_range_fn fn, void* ctx);
  void (*deleter)(void* self);
} kc_thread_pool_backend;

/* Creates a pool whose parallel loops run on `backend` (copied; `self`
 * passes to the pool, which calls the deleter when it is destroyed, or at
 * once when creation fails). Its loops split as any pool's do (ranges of
 * about 10 microseconds, at most four per thread), nested loops run
 * inline, and kc_thread_pool_parallel_for_with_worker_id hands each
 * running range an id below `size` that no other running range holds.
 * Tasks scheduled on it (kc_thread_pool_schedule) run on the default pool.
 * INVALID_ARGUMENT for a NULL backend or parallel_for, a struct_size too
 * small, or a size out of range; RESOURCE_EXHAUSTED when out of memory.
 * The caller owns the pool and destroys it with kc_thread_pool_destroy,
 * after its last loop has returned. */
KC_API kc_status* kc_thread_pool_create_on(
    const kc_thread_pool_backend* backend, kc_thread_pool** out_pool);

/* Runs every task still queued, stops the workers and frees the pool (a
 * pool of kc_thread_pool_create_on has no workers: its backend's deleter
 * runs). Must not be called from one of the pool's own tasks or loops, nor
 * while another thread is still using the pool. NULL and the default pool
 * are no-ops. */
KC_API void kc_thread_pool_destroy(kc_thread_pool* pool);

/* The process-wide default pool, created on the first call (see above).
 * Never NULL: if it cannot be created, a pool of size 1 that runs
 * everything on the calling thread stands in. Borrowed; lives as long as
 * the process. */
KC_API kc_thread_pool* kc_thread_pool_get_default(void);

/* The pool's size (see above); NULL asks about the default pool. */
KC_API int32_t kc_thread_pool_get_size(const kc_thread_pool* pool);

/* Queues `closure` to run once on a worker of `pool` (NULL: the default
 * pool); the closure is copied (its struct_size says how much was given).
 * Ownership of closure->self passes to the pool, which calls
 * closure->deleter(self) after fn, or instead of fn when the task cannot be
 * queued: INVALID_ARGUMENT for a NULL closure or fn, FAILED_PRECONDITION
 * when the pool is being destroyed, RESOURCE_EXHAUSTED when out of memory.
 * Tasks queued this way start in the order they were queued (hinted ones
 * may start out of that order), and run concurrently. */
KC_API kc_status* kc_thread_pool_schedule(kc_thread_pool* pool,
                                          const kc_closure* closure);

/* As kc_thread_pool_schedule, preferring the workers whose index lies in
 * [start, limit) (0 <= index < size - 1, or 0 for a pool of size 1). A hint
 * is a preference: an idle worker outside the range takes the task rather
 * than leave it waiting. A range that holds no worker is ignored. */
KC_API kc_status* kc_thread_pool_schedule_with_hint(kc_thread_pool* pool,
                                                    const kc_closure* closure,
                                                    int32_t start,
                                                    int32_t limit);

/* Runs fn(ctx, begin, end) over ranges that together cover [0, total)
 * exactly once, on the caller and on workers of `pool` (NULL: the default
 * pool), and returns when all have run. `cost_per_unit` estimates the work
 * of one unit in nanoseconds (values below 1 count as 1); the loop is split
 * only into ranges worth at least about 10 microseconds each, at most four
 * per thread, so cheap loops run inline. total <= 0 does nothing. `fn`
 * must not unwind (no longjmp or C++ exception out of it). */
KC_API void kc_thread_pool_parallel_for(kc_thread_pool* pool, int64_t total,
                                        int64_t cost_per_unit, kc_range_fn fn,
                                        void* ctx);

/* As kc_thread_pool_parallel_for, also passing the id of the participant
 * that runs each range: 0 for the caller, 1 to size - 1 for the workers
 * that help, so `fn` may index per-thread scratch space of `size` entries
 * without locking. A nested (inline) loop passes the id of the range that
 * encloses it when that is below this pool's size, else 0. */
KC_API void kc_thread_pool_parallel_for_with_worker_id(kc_thread_pool* pool,
                                                       int64_t total,
                                                       int64_t cost_per_unit,
                                                       kc_range_worker_fn fn,
                                                       void* ctx);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_RUNTIME_H_ */
