/* Element-wise work split across the thread pool (split.h). */
#include "kernels/split.h"

/* Elements of a unit: the ranges keep whole vectors and cache lines. */
#define KC__SPLIT_BLOCK 4096

/* Below this much work the pool's hand-over (a few microseconds a
 * participant) costs about what the split would save. */
#define KC__SPLIT_MIN_NS 50000.0

typedef struct kc__split_job {
  kc_range_fn body;
  void* ctx;
  int64_t n;
} kc__split_job;

static void kc__split_blocks(void* p, int64_t begin, int64_t end) {
  const kc__split_job* job = p;
  int64_t last = end * KC__SPLIT_BLOCK;
  job->body(job->ctx, begin * KC__SPLIT_BLOCK, last < job->n ? last : job->n);
}

void kc__split_run(kc_thread_pool* pool, int64_t n, double ns_per_element,
                   kc_range_fn body, void* ctx) {
  if (n <= 0) return;
  if ((double)n * ns_per_element < KC__SPLIT_MIN_NS) {
    body(ctx, 0, n);
    return;
  }
  kc__split_job job = {body, ctx, n};
  int64_t blocks = (n + KC__SPLIT_BLOCK - 1) / KC__SPLIT_BLOCK;
  int64_t cost = (int64_t)(ns_per_element * KC__SPLIT_BLOCK) + 1;
  kc_thread_pool_parallel_for(pool, blocks, cost, kc__split_blocks, &job);
}

void kc__split_items(kc_thread_pool* pool, int64_t n, double ns_per_item,
                     kc_range_fn body, void* ctx) {
  if (n <= 0) return;
  if (!pool || n == 1 || (double)n * ns_per_item < KC__SPLIT_MIN_NS) {
    body(ctx, 0, n);
    return;
  }
  kc_thread_pool_parallel_for(pool, n, (int64_t)ns_per_item + 1, body, ctx);
}
