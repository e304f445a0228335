/* The thread pool (kcall/runtime.h): coverage of parallel loops, a 10^7-
 * element reduction split many ways, nesting, concurrent submitters, worker
 * ids and scheduled closures. Meant to run under ThreadSanitizer too. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "test.h"

static kc_thread_pool* kt_pool(int32_t size) {
  kc_thread_pool* p = NULL;
  KC_CHECK_OK(kc_thread_pool_create(size, &p));
  KC_CHECK_INT(kc_thread_pool_get_size(p), size);
  return p;
}

KC_TEST(threadpool_create_sizes) {
  kc_thread_pool* p = NULL;
  KC_CHECK_CODE(kc_thread_pool_create(0, &p), KC_INVALID_ARGUMENT,
                "thread pool size: expected 1 to 256, got 0");
  KC_CHECK_CODE(kc_thread_pool_create(KC_THREAD_POOL_MAX_SIZE + 1, &p),
                KC_INVALID_ARGUMENT, "got 257");
  KC_CHECK_CODE(kc_thread_pool_create(2, NULL), KC_INVALID_ARGUMENT,
                "out_pool is NULL");
  for (int32_t n = 1; n <= 5; ++n) kc_thread_pool_destroy(kt_pool(n));
  kc_thread_pool_destroy(NULL);
}

KC_TEST(threadpool_default_size_from_env) {
  /* Each test runs in a process of its own: the default pool is made here,
   * after the variable is set. */
  setenv("KCALL_NUM_THREADS", "3", 1);
  kc_thread_pool* d = kc_thread_pool_get_default();
  KC_CHECK(d == kc_thread_pool_get_default());
  KC_CHECK_INT(kc_thread_pool_get_size(d), 3);
  KC_CHECK_INT(kc_thread_pool_get_size(NULL), 3);
  kc_thread_pool_destroy(d); /* a no-op for the default pool */
  KC_CHECK_INT(kc_thread_pool_get_size(d), 3);
}

/* ---- coverage
 * ------------------------------------------------------------------ */

typedef struct kt_cover {
  atomic_int* hits;
  atomic_int calls;
} kt_cover;

static void kt_cover_range(void* ctx, int64_t begin, int64_t end) {
  kt_cover* c = ctx;
  atomic_fetch_add(&c->calls, 1);
  for (int64_t i = begin; i < end; ++i) atomic_fetch_add(&c->hits[i], 1);
}

KC_TEST(threadpool_parallel_for_covers_each_unit_once) {
  static const int64_t totals[] = {1, 2, 3, 7, 64, 1000, 4099};
  static const int64_t costs[] = {0, 1, 100, 10000, 1000000};
  atomic_int* hits = calloc(4099, sizeof *hits);
  for (int32_t size = 1; size <= 4; ++size) {
    kc_thread_pool* p = kt_pool(size);
    for (size_t t = 0; t < sizeof totals / sizeof *totals; ++t) {
      for (size_t c = 0; c < sizeof costs / sizeof *costs; ++c) {
        for (int64_t i = 0; i < totals[t]; ++i) atomic_store(&hits[i], 0);
        kt_cover cover = {hits, 0};
        kc_thread_pool_parallel_for(p, totals[t], costs[c], kt_cover_range,
                                    &cover);
        for (int64_t i = 0; i < totals[t]; ++i) {
          int got = atomic_load(&hits[i]);
          if (got != 1) {
            free(hits);
            kc_thread_pool_destroy(p);
            kt__fail(__FILE__, __LINE__,
                     "size %d, total %lld, cost %lld: unit %lld ran %d times",
                     size, (long long)totals[t], (long long)costs[c],
                     (long long)i, got);
          }
        }
        /* Cheap loops are not split at all. */
        if (costs[c] <= 1 && totals[t] < 1000) {
          KC_CHECK_INT(atomic_load(&cover.calls), 1);
        }
      }
    }
    kt_cover none = {hits, 0};
    kc_thread_pool_parallel_for(p, 0, 1, kt_cover_range, &none);
    kc_thread_pool_parallel_for(p, -5, 1, kt_cover_range, &none);
    KC_CHECK_INT(atomic_load(&none.calls), 0);
    kc_thread_pool_destroy(p);
  }
  free(hits);
}

/* ---- a 10^7-element reduction
 * --------------------------------------------------- */

#define KT_N 10000000

typedef struct kt_reduce {
  const int32_t* values;
  int64_t partial[KC_THREAD_POOL_MAX_SIZE]; /* one per worker id */
  atomic_int busy[KC_THREAD_POOL_MAX_SIZE]; /* a worker id in use */
  atomic_int id_clash;
  int32_t size;
} kt_reduce;

static void kt_reduce_range(void* ctx, int64_t begin, int64_t end,
                            int32_t worker_id) {
  kt_reduce* r = ctx;
  if (worker_id < 0 || worker_id >= r->size ||
      atomic_exchange(&r->busy[worker_id], 1) != 0) {
    atomic_store(&r->id_clash, 1);
    return;
  }
  int64_t acc = 0;
  for (int64_t i = begin; i < end; ++i) acc += r->values[i];
  r->partial[worker_id] += acc; /* only this id's owner touches it */
  atomic_store(&r->busy[worker_id], 0);
}

KC_TEST(threadpool_reduction_of_ten_million) {
  int32_t* values = malloc(KT_N * sizeof *values);
  KC_CHECK(values != NULL);
  int64_t expected = 0;
  for (int64_t i = 0; i < KT_N; ++i) {
    values[i] = (int32_t)(i % 1000) - 300;
    expected += values[i];
  }
  static const int32_t sizes[] = {1, 2, 3, 4, 8};
  static const int64_t costs[] = {1, 3, 50, 1000, 100000000};
  kt_reduce* r = calloc(1, sizeof *r);
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
    kc_thread_pool* p = kt_pool(sizes[s]);
    for (size_t c = 0; c < sizeof costs / sizeof *costs; ++c) {
      memset(r, 0, sizeof *r);
      r->values = values;
      r->size = sizes[s];
      kc_thread_pool_parallel_for_with_worker_id(p, KT_N, costs[c],
                                                 kt_reduce_range, r);
      int64_t total = 0;
      for (int32_t i = 0; i < sizes[s]; ++i) total += r->partial[i];
      KC_CHECK_INT(atomic_load(&r->id_clash), 0);
      KC_CHECK_INT(total, expected);
    }
    kc_thread_pool_destroy(p);
  }
  free(r);
  free(values);
}

/* ---- nesting
 * ------------------------------------------------------------------------ */

typedef struct kt_nest {
  kc_thread_pool* pool;
  atomic_int inner_units;
  atomic_int inner_calls;
  atomic_int bad_id;
} kt_nest;

typedef struct kt_inner {
  kt_nest* nest;
  int32_t outer_id;
} kt_inner;

static void kt_inner_range(void* ctx, int64_t begin, int64_t end,
                           int32_t worker_id) {
  kt_inner* in = ctx;
  atomic_fetch_add(&in->nest->inner_calls, 1);
  atomic_fetch_add(&in->nest->inner_units, (int)(end - begin));
  if (worker_id != in->outer_id) atomic_store(&in->nest->bad_id, 1);
}

static void kt_outer_range(void* ctx, int64_t begin, int64_t end,
                           int32_t worker_id) {
  kt_nest* n = ctx;
  for (int64_t i = begin; i < end; ++i) {
    kt_inner in = {n, worker_id};
    /* Expensive enough to split, were it not nested: runs inline instead
     * of waiting for workers that are all busy with the outer loop. */
    kc_thread_pool_parallel_for_with_worker_id(n->pool, 100, 1000000,
                                               kt_inner_range, &in);
  }
}

KC_TEST(threadpool_nested_parallel_for_runs_inline) {
  kt_nest n;
  n.pool = kt_pool(4);
  atomic_init(&n.inner_units, 0);
  atomic_init(&n.inner_calls, 0);
  atomic_init(&n.bad_id, 0);
  kc_thread_pool_parallel_for_with_worker_id(n.pool, 64, 1000000,
                                             kt_outer_range, &n);
  KC_CHECK_INT(atomic_load(&n.inner_units), 64 * 100);
  KC_CHECK_INT(atomic_load(&n.inner_calls), 64); /* one range each */
  KC_CHECK_INT(atomic_load(&n.bad_id), 0);
  kc_thread_pool_destroy(n.pool);
}

/* ---- four threads submitting at once
 * ------------------------------------------------- */

typedef struct kt_submitter {
  kc_thread_pool* pool;
  const int32_t* values;
  int64_t n;
  int64_t expected;
  int failures;
} kt_submitter;

static void kt_sum_range(void* ctx, int64_t begin, int64_t end,
                         int32_t worker_id) {
  kt_reduce* r = ctx;
  int64_t acc = 0;
  for (int64_t i = begin; i < end; ++i) acc += r->values[i];
  r->partial[worker_id] += acc;
}

static void* kt_submit(void* arg) {
  kt_submitter* s = arg;
  kt_reduce* r = calloc(1, sizeof *r);
  for (int round = 0; round < 200; ++round) {
    memset(r->partial, 0, sizeof r->partial);
    r->values = s->values;
    kc_thread_pool_parallel_for_with_worker_id(s->pool, s->n, 50 + round,
                                               kt_sum_range, r);
    int64_t total = 0;
    for (int32_t i = 0; i < kc_thread_pool_get_size(s->pool); ++i) {
      total += r->partial[i];
    }
    if (total != s->expected) s->failures++;
  }
  free(r);
  return NULL;
}

KC_TEST(threadpool_four_submitters_at_once) {
  enum { kN = 20000 };
  int32_t* values = malloc(kN * sizeof *values);
  int64_t expected = 0;
  for (int i = 0; i < kN; ++i) expected += values[i] = i % 7;
  kc_thread_pool* p = kt_pool(3);
  kt_submitter subs[4];
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i) {
    subs[i] = (kt_submitter){p, values, kN, expected, 0};
    KC_CHECK(pthread_create(&threads[i], NULL, kt_submit, &subs[i]) == 0);
  }
  for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
  for (int i = 0; i < 4; ++i) KC_CHECK_INT(subs[i].failures, 0);
  kc_thread_pool_destroy(p);
  free(values);
}

/* ---- scheduled closures
 * ----------------------------------------------------------------- */

typedef struct kt_task_counts {
  atomic_int ran;
  atomic_int deleted;
} kt_task_counts;

static void kt_task_run(void* self) {
  atomic_fetch_add(&((kt_task_counts*)self)->ran, 1);
}
static void kt_task_delete(void* self) {
  atomic_fetch_add(&((kt_task_counts*)self)->deleted, 1);
}

KC_TEST(threadpool_schedule_runs_and_deletes_every_closure) {
  kt_task_counts counts;
  atomic_init(&counts.ran, 0);
  atomic_init(&counts.deleted, 0);
  kc_thread_pool* p = kt_pool(3);
  kc_closure c = {sizeof c, kt_task_run, &counts, kt_task_delete};
  for (int i = 0; i < 500; ++i) KC_CHECK_OK(kc_thread_pool_schedule(p, &c));
  for (int i = 0; i < 500; ++i) {
    KC_CHECK_OK(kc_thread_pool_schedule_with_hint(p, &c, i % 2, i % 2 + 1));
  }
  /* A range holding no worker is ignored. */
  KC_CHECK_OK(kc_thread_pool_schedule_with_hint(p, &c, 7, 9));
  kc_thread_pool_destroy(p); /* runs what is still queued */
  KC_CHECK_INT(atomic_load(&counts.ran), 1001);
  KC_CHECK_INT(atomic_load(&counts.deleted), 1001);
}

KC_TEST(threadpool_schedule_refused_still_deletes) {
  kt_task_counts counts;
  atomic_init(&counts.ran, 0);
  atomic_init(&counts.deleted, 0);
  kc_closure no_fn = {sizeof no_fn, NULL, &counts, kt_task_delete};
  KC_CHECK_CODE(kc_thread_pool_schedule(NULL, &no_fn), KC_INVALID_ARGUMENT,
                "closure.fn is NULL");
  KC_CHECK_CODE(kc_thread_pool_schedule(NULL, NULL), KC_INVALID_ARGUMENT,
                "closure is NULL");
  KC_CHECK_INT(atomic_load(&counts.deleted), 1);
  /* An older, shorter closure without a deleter field is read as such. */
  kc_closure old = {offsetof(kc_closure, deleter), kt_task_run, &counts,
                    kt_task_delete};
  kc_thread_pool* p = kt_pool(1);
  KC_CHECK_OK(kc_thread_pool_schedule(p, &old));
  kc_thread_pool_destroy(p);
  KC_CHECK_INT(atomic_load(&counts.ran), 1);
  KC_CHECK_INT(atomic_load(&counts.deleted), 1);
}

/* A task that starts a parallel loop on the pool that runs it. */
typedef struct kt_loop_task {
  kc_thread_pool* pool;
  atomic_int units;
} kt_loop_task;

static void kt_count_units(void* ctx, int64_t begin, int64_t end) {
  atomic_fetch_add(&((kt_loop_task*)ctx)->units, (int)(end - begin));
}

static void kt_loop_task_run(void* self) {
  kt_loop_task* t = self;
  kc_thread_pool_parallel_for(t->pool, 1000, 100000, kt_count_units, t);
}

KC_TEST(threadpool_loop_inside_a_task) {
  kt_loop_task t;
  t.pool = kt_pool(2);
  atomic_init(&t.units, 0);
  kc_closure c = {sizeof c, kt_loop_task_run, &t, NULL};
  for (int i = 0; i < 20; ++i) KC_CHECK_OK(kc_thread_pool_schedule(t.pool, &c));
  kc_thread_pool_destroy(t.pool);
  KC_CHECK_INT(atomic_load(&t.units), 20 * 1000);
}
