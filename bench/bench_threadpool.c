/*
 * The fork/join cost of kc_thread_pool_parallel_for on 2 threads, next to
 * an OpenMP `parallel for` of the same loop (num_threads(2)) in the same
 * run, for two bodies:
 *   - empty: what a loop costs beyond its work;
 *   - two units of 1 us each: the same, when both threads must work (a
 *     serial run of the body is the baseline: 2 us).
 * The pool is split into 2 ranges by a large cost per unit. For the empty
 * body the report also says how often a helper ran a range at all: the
 * caller may finish both before a helper arrives, and then the loop costs
 * only the queueing.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"
#include "kcall/kcall.h"

#ifdef KB_HAVE_OPENMP
#include <omp.h>
#endif

typedef struct loop_ctx {
  kc_thread_pool* pool;
  void (*body)(int64_t unit);
  atomic_int_fast64_t helped; /* calls in which a helper ran a range */
} loop_ctx;

static void empty_unit(int64_t unit) { (void)unit; }

/* Busy for 1 us: sleeping would hand the core back, which a real body
 * does not. */
static void busy_unit(int64_t unit) {
  (void)unit;
  double start = kb_now_ns();
  while (kb_now_ns() - start < 1000.0) {
  }
}

static void pool_range(void* ctx, int64_t begin, int64_t end,
                       int32_t worker_id) {
  loop_ctx* c = ctx;
  for (int64_t u = begin; u < end; ++u) c->body(u);
  if (worker_id != 0) {
    atomic_fetch_add_explicit(&c->helped, 1, memory_order_relaxed);
  }
}

static void run_pool(void* ctx, int64_t iters) {
  loop_ctx* c = ctx;
  for (int64_t i = 0; i < iters; ++i) {
    /* 1 ms a unit: always worth two ranges. */
    kc_thread_pool_parallel_for_with_worker_id(c->pool, 2, 1000000, pool_range,
                                               c);
  }
}

static void run_serial(void* ctx, int64_t iters) {
  loop_ctx* c = ctx;
  for (int64_t i = 0; i < iters; ++i) {
    c->body(0);
    c->body(1);
  }
}

#ifdef KB_HAVE_OPENMP
static void run_openmp(void* ctx, int64_t iters) {
  loop_ctx* c = ctx;
  for (int64_t i = 0; i < iters; ++i) {
#pragma omp parallel for num_threads(2) schedule(static)
    for (int64_t u = 0; u < 2; ++u) c->body(u);
  }
}
#endif

/* Lets idle spinners (the pool's, OpenMP's) go to sleep before the next
 * phase, so that one does not slow the other. */
static void settle(void) {
  struct timespec ts = {0, 50 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

int main(int argc, char** argv) {
  kc_thread_pool* pool = NULL;
  kc_status* st = kc_thread_pool_create(2, &pool);
  if (st) {
    fprintf(stderr, "bench_threadpool: cannot create a pool\n");
    kc_status_destroy(st);
    return 1;
  }
  loop_ctx c = {pool, empty_unit, 0};
  const int trials = 5;
  const int64_t empty_iters = 200000, busy_iters = 20000;

  kb_report r = {.name = "threadpool"};
  double pool_empty = kb_time_per_iter(run_pool, &c, empty_iters, trials);
  int64_t calls = (empty_iters + empty_iters / 10 + 1) * trials;
  double helped = (double)atomic_load(&c.helped) / (double)calls;
  c.body = busy_unit;
  settle();
  double pool_busy = kb_time_per_iter(run_pool, &c, busy_iters, trials);
  double serial_busy = kb_time_per_iter(run_serial, &c, busy_iters, trials);
  kb_report_add(&r, "parallel_for_empty_2threads_ns", pool_empty);
  kb_report_add(&r, "parallel_for_empty_helper_share", helped);
  kb_report_add(&r, "parallel_for_2x1us_2threads_ns", pool_busy);
  kb_report_add(&r, "serial_2x1us_ns", serial_busy);
  kb_report_add(&r, "parallel_for_2x1us_ratio_to_serial",
                pool_busy / serial_busy);
#ifdef KB_HAVE_OPENMP
  omp_set_dynamic(0);
  settle();
  c.body = empty_unit;
  double omp_empty = kb_time_per_iter(run_openmp, &c, empty_iters, trials);
  c.body = busy_unit;
  double omp_busy = kb_time_per_iter(run_openmp, &c, busy_iters, trials);
  kb_report_add(&r, "openmp_parallel_for_empty_2threads_ns", omp_empty);
  kb_report_add(&r, "parallel_for_empty_ratio_to_openmp",
                pool_empty / omp_empty);
  kb_report_add(&r, "openmp_parallel_for_2x1us_2threads_ns", omp_busy);
  kb_report_add(&r, "parallel_for_2x1us_ratio_to_openmp", pool_busy / omp_busy);
#endif
  int rc = kb_report_finish(&r, kb_json_arg(argc, argv));
#ifndef KB_HAVE_OPENMP
  printf("  openmp: skipped (%s)\n", KB_NO_OPENMP_REASON);
#endif
  printf("  targets: empty parallel_for on 2 threads <= 2 us (%s: %.0f ns)\n",
         pool_empty <= 2000.0 ? "met" : "MISSED", pool_empty);
  kc_thread_pool_destroy(pool);
  return rc;
}
