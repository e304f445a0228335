/* Element-wise work split across the thread pool. Never installed. */
#ifndef KCALL_KERNELS_SPLIT_H_
#define KCALL_KERNELS_SPLIT_H_

#include <stdint.h>

#include "kcall/runtime.h"

/* Runs body(ctx, begin, end) over ranges that together cover [0, n)
 * exactly once, each a multiple of 4096 elements long but the last, and
 * returns when all have run. `ns_per_element` estimates the cost of one
 * element: below about 50 microseconds of work in all, the caller runs the
 * whole range itself (no pool is touched); above, the ranges go to `pool`
 * (NULL: the default pool) as kc_thread_pool_parallel_for shares them.
 * `body` must write only the elements of its range. */
void kc__split_run(kc_thread_pool* pool, int64_t n, double ns_per_element,
                   kc_range_fn body, void* ctx);

/* Runs body(ctx, begin, end) over ranges that together cover [0, n)
 * items (rows, batch elements: units that cannot be cut) exactly once:
 * on the caller alone below about 50 microseconds of work in all
 * (n * ns_per_item) or when `pool` is NULL, else over `pool` as
 * kc_thread_pool_parallel_for shares them. `body` must write only what
 * its items own. */
void kc__split_items(kc_thread_pool* pool, int64_t n, double ns_per_item,
                     kc_range_fn body, void* ctx);

#endif /* KCALL_KERNELS_SPLIT_H_ */
