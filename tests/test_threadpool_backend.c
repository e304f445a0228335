/* Pools on another runtime's parallel loop (kc_thread_pool_create_on):
 * coverage, worker ids, nesting, a backend that runs nothing, tasks,
 * refusals and the deleter. The backend here is a small runtime of its
 * own: `threads` pthreads per loop, taking chunks of `grain` units from a
 * shared counter, as an OpenMP team or PyTorch's pool would. Meant to run
 * under ThreadSanitizer too. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "test.h"

typedef struct kt_runtime {
  int32_t threads;
  atomic_int loops;     /* parallel_for calls */
  atomic_int deletes;   /* deleter calls */
  int64_t last_grain;   /* written by the calling thread */
  bool run_nothing;     /* parallel_for returns 1 and runs no range */
} kt_runtime;

typedef struct kt_team {
  int64_t total, grain;
  atomic_llong next;
  kc_range_fn fn;
  void* ctx;
} kt_team;

static void* kt_team_member(void* arg) {
  kt_team* t = arg;
  for (;;) {
    int64_t begin = atomic_fetch_add(&t->next, t->grain);
    if (begin >= t->total) return NULL;
    int64_t end = begin + t->grain < t->total ? begin + t->grain : t->total;
    t->fn(t->ctx, begin, end);
  }
}

static int kt_runtime_parallel_for(void* self, int64_t total, int64_t grain,
                                   kc_range_fn fn, void* ctx) {
  kt_runtime* r = self;
  atomic_fetch_add(&r->loops, 1);
  r->last_grain = grain;
  if (r->run_nothing) return 1;
  kt_team team = {total, grain, 0, fn, ctx};
  pthread_t helpers[8];
  for (int32_t i = 1; i < r->threads; ++i) {
    KC_CHECK(pthread_create(&helpers[i], NULL, kt_team_member, &team) == 0);
  }
  kt_team_member(&team); /* the calling thread works too */
  for (int32_t i = 1; i < r->threads; ++i) pthread_join(helpers[i], NULL);
  return 0;
}

static void kt_runtime_delete(void* self) {
  atomic_fetch_add(&((kt_runtime*)self)->deletes, 1);
}

static kc_thread_pool* kt_pool_on(kt_runtime* r) {
  kc_thread_pool_backend b = {sizeof b, r, r->threads,
                              kt_runtime_parallel_for, kt_runtime_delete};
  kc_thread_pool* pool = NULL;
  KC_CHECK_OK(kc_thread_pool_create_on(&b, &pool));
  KC_CHECK_INT(kc_thread_pool_get_size(pool), r->threads);
  return pool;
}

/* Each unit counted once; each range records the id it ran with. */
enum { KT_UNITS = 100000 };
typedef struct kt_cover {
  atomic_int hits[KT_UNITS];
  atomic_int running[8]; /* ranges running with each id */
  atomic_int bad_ids;
  int32_t size;
} kt_cover;

static void kt_cover_ids(void* ctx, int64_t begin, int64_t end, int32_t id) {
  kt_cover* c = ctx;
  if (id < 0 || id >= c->size || atomic_fetch_add(&c->running[id], 1) != 0) {
    atomic_fetch_add(&c->bad_ids, 1);
  }
  for (int64_t i = begin; i < end; ++i) atomic_fetch_add(&c->hits[i], 1);
  if (id >= 0 && id < c->size) atomic_fetch_sub(&c->running[id], 1);
}

static void kt_cover_plain(void* ctx, int64_t begin, int64_t end) {
  kt_cover* c = ctx;
  for (int64_t i = begin; i < end; ++i) atomic_fetch_add(&c->hits[i], 1);
}

static int kt_count_hits(kt_cover* c, int want) {
  int wrong = 0;
  for (int i = 0; i < KT_UNITS; ++i) wrong += atomic_load(&c->hits[i]) != want;
  return wrong;
}

/* Runs a worker-id loop of KT_UNITS units of 1 us on `pool` (of `size`)
 * and checks that each unit ran once and the ids were sound. The
 * caller frees the cover. */
static kt_cover* kt_cover_once(kc_thread_pool* pool, int32_t size) {
  kt_cover* c = calloc(1, sizeof *c);
  c->size = size;
  kc_thread_pool_parallel_for_with_worker_id(pool, KT_UNITS, 1000,
                                             kt_cover_ids, c);
  KC_CHECK_INT(kt_count_hits(c, 1), 0);
  KC_CHECK_INT(atomic_load(&c->bad_ids), 0);
  return c;
}

KC_TEST(threadpool_backend_runs_loops_on_its_threads) {
  kt_runtime r = {.threads = 4};
  kc_thread_pool* pool = kt_pool_on(&r);
  /* Split, every unit once, ids below 4 and never two running ranges
   * with one id. */
  kt_cover* c = kt_cover_once(pool, 4);
  KC_CHECK_INT(atomic_load(&r.loops), 1);
  KC_CHECK(r.last_grain >= 10 && r.last_grain <= KT_UNITS / 4);
  kc_thread_pool_parallel_for(pool, KT_UNITS, 1000, kt_cover_plain, c);
  KC_CHECK_INT(atomic_load(&r.loops), 2);
  KC_CHECK_INT(kt_count_hits(c, 2), 0);
  /* A cheap loop runs on the calling thread, without the backend. */
  kc_thread_pool_parallel_for(pool, 100, 1, kt_cover_plain, c);
  KC_CHECK_INT(atomic_load(&r.loops), 2);
  KC_CHECK_INT(atomic_load(&c->hits[99]), 3);
  KC_CHECK_INT(atomic_load(&c->hits[100]), 2);
  free(c);
  kc_thread_pool_destroy(pool);
  KC_CHECK_INT(atomic_load(&r.deletes), 1);
}

/* A loop inside each range of a loop: inline, with the outer range's id. */
typedef struct kt_nest {
  kc_thread_pool* pool;
  atomic_int inner_units;
  atomic_int id_mismatch;
} kt_nest;

typedef struct kt_inner {
  kt_nest* n;
  int32_t outer_id;
} kt_inner;

static void kt_nest_inner(void* ctx, int64_t begin, int64_t end, int32_t id) {
  kt_inner* in = ctx;
  if (id != in->outer_id) atomic_fetch_add(&in->n->id_mismatch, 1);
  atomic_fetch_add(&in->n->inner_units, (int)(end - begin));
}

static void kt_nest_outer(void* ctx, int64_t begin, int64_t end, int32_t id) {
  kt_nest* n = ctx;
  for (int64_t i = begin; i < end; ++i) {
    kt_inner in = {n, id};
    kc_thread_pool_parallel_for_with_worker_id(n->pool, 1000, 1000,
                                               kt_nest_inner, &in);
  }
}

KC_TEST(threadpool_backend_nested_loops_run_inline) {
  kt_runtime r = {.threads = 3};
  kt_nest n = {.pool = kt_pool_on(&r)};
  kc_thread_pool_parallel_for_with_worker_id(n.pool, 64, 100000,
                                             kt_nest_outer, &n);
  KC_CHECK_INT(atomic_load(&r.loops), 1); /* the inner loops: inline */
  KC_CHECK_INT(atomic_load(&n.inner_units), 64 * 1000);
  KC_CHECK_INT(atomic_load(&n.id_mismatch), 0);
  kc_thread_pool_destroy(n.pool);
}

KC_TEST(threadpool_backend_that_runs_nothing_leaves_the_loop_to_kcall) {
  kt_runtime r = {.threads = 2, .run_nothing = true};
  kc_thread_pool* pool = kt_pool_on(&r);
  kt_cover* c = kt_cover_once(pool, 2);
  KC_CHECK_INT(atomic_load(&r.loops), 1);
  free(c);
  kc_thread_pool_destroy(pool);
}

static atomic_int kt_task_ran;
static void kt_task(void* self) {
  (void)self;
  atomic_store(&kt_task_ran, 1);
}

KC_TEST(threadpool_backend_tasks_run_on_the_default_pool) {
  kt_runtime r = {.threads = 2};
  kc_thread_pool* pool = kt_pool_on(&r);
  kc_closure task = {sizeof task, kt_task, NULL, NULL};
  KC_CHECK_OK(kc_thread_pool_schedule(pool, &task));
  for (int i = 0; i < 10000 && !atomic_load(&kt_task_ran); ++i) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  KC_CHECK_INT(atomic_load(&kt_task_ran), 1);
  KC_CHECK_INT(atomic_load(&r.loops), 0);
  kc_thread_pool_destroy(pool);
}

KC_TEST(threadpool_backend_refusals_call_the_deleter) {
  kt_runtime r = {.threads = 2};
  kc_thread_pool* pool = NULL;
  kc_thread_pool_backend b = {sizeof b, &r, 0, kt_runtime_parallel_for,
                              kt_runtime_delete};
  KC_CHECK_CODE(kc_thread_pool_create_on(&b, &pool), KC_INVALID_ARGUMENT,
                "kc_thread_pool_create_on: backend.size: expected 1 to 256, "
                "got 0");
  b.size = KC_THREAD_POOL_MAX_SIZE + 1;
  KC_CHECK_CODE(kc_thread_pool_create_on(&b, &pool), KC_INVALID_ARGUMENT,
                "got 257");
  b.size = 2;
  b.parallel_for = NULL;
  KC_CHECK_CODE(kc_thread_pool_create_on(&b, &pool), KC_INVALID_ARGUMENT,
                "backend.parallel_for is NULL");
  b.parallel_for = kt_runtime_parallel_for;
  b.struct_size = sizeof(size_t);
  KC_CHECK_CODE(kc_thread_pool_create_on(&b, &pool), KC_INVALID_ARGUMENT,
                "backend.struct_size is too small");
  KC_CHECK(pool == NULL);
  KC_CHECK_INT(atomic_load(&r.deletes), 3); /* not for the short struct */
  KC_CHECK_CODE(kc_thread_pool_create_on(NULL, &pool), KC_INVALID_ARGUMENT,
                "backend is NULL");
  b.struct_size = sizeof b;
  KC_CHECK_CODE(kc_thread_pool_create_on(&b, NULL), KC_INVALID_ARGUMENT,
                "out_pool is NULL");
  KC_CHECK_INT(atomic_load(&r.deletes), 4);
}
