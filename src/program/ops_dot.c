/* dot: any batch and contracting dimensions. Both operands are brought to
 * [batch, rows, contracted] and [batch, contracted, columns] (copied only
 * when they are not already so), then multiplied: f32 by a packed,
 * vectorised kernel on the thread pool, other types by plain loops. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"
#include "program/ops.h"

#define KC__DOT_MAX_RANK KC_TENSOR_MAX_NDIM

typedef struct kc__dot_plan {
  DLDataType dtype;
  size_t esize;
  int64_t batch, m, n, k;
  /* Copies of the operands into the canonical order, or rank -1 where
   * the operand is in that order already. */
  kc__box lhs_box, rhs_box;
} kc__dot_plan;

/* ---- checking -------------------------------------------------------------------- */

static kc_status* kc__dims_list(const kc__instr* in, const char* name, int32_t rank,
                                bool* used, const int64_t** out, size_t* out_count) {
  KC__TRY(kc__op_attr_ints(in, name, true, out, out_count));
  for (size_t i = 0; i < *out_count; ++i) {
    int64_t d = (*out)[i];
    if (d < 0 || d >= rank || used[d]) {
      return kc__op_bad(in, KC_INVALID_ARGUMENT,
                        "attribute %s: entry %zu: expected a dimension of 0 to %d not named "
                        "before, got %lld",
                        name, i, rank - 1, (long long)d);
    }
    used[d] = true;
  }
  return NULL;
}

/* The box that copies `s` into the order batch dims, free dims, then
 * contracted dims (contracted_last) or batch, contracted, free; rank -1
 * when that order is the operand's own. */
static void kc__canonical_box(const kc_shape* s, const int64_t* batch, size_t nb,
                              const int64_t* contracted, size_t nc, const bool* used,
                              bool contracted_last, kc__box* box) {
  int32_t rank = kc_shape_get_rank(s);
  int64_t order[KC__DOT_MAX_RANK];
  int32_t n = 0;
  for (size_t i = 0; i < nb; ++i) order[n++] = batch[i];
  if (!contracted_last) {
    for (size_t i = 0; i < nc; ++i) order[n++] = contracted[i];
  }
  for (int32_t d = 0; d < rank; ++d) {
    if (!used[d]) order[n++] = d;
  }
  if (contracted_last) {
    for (size_t i = 0; i < nc; ++i) order[n++] = contracted[i];
  }
  bool identity = true;
  for (int32_t i = 0; i < rank; ++i) identity = identity && order[i] == i;
  memset(box, 0, sizeof *box);
  if (identity) {
    box->rank = -1;
    return;
  }
  int64_t in_stride[KC__DOT_MAX_RANK];
  kc__op_strides(s, in_stride);
  box->rank = rank;
  int64_t stride = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    box->dims[i] = kc_shape_get_dims(s)[order[i]];
    box->src_stride[i] = in_stride[order[i]];
    box->dst_stride[i] = stride;
    stride *= box->dims[i];
  }
}

static kc_status* kc__dot_read(const kc_program* p, const kc__instr* in, kc__dot_plan* plan) {
  const kc_shape* a = kc__op_operand(p, in, 0);
  const kc_shape* b = kc__op_operand(p, in, 1);
  KC__TRY(kc__op_expect_array(in, a, "operand 0"));
  KC__TRY(kc__op_expect_array(in, b, "operand 1"));
  KC__TRY(kc__op_expect_array(in, in->shape, "the result"));
  DLDataType t = kc_shape_get_dtype(a);
  char ta[32], tb[32], tr[32];
  if (!kc_dtype_equal(t, kc_shape_get_dtype(b)) ||
      !kc_dtype_equal(t, kc_shape_get_dtype(in->shape))) {
    return kc__op_bad(in, KC_UNIMPLEMENTED,
                      "dot of %s and %s giving %s: only operands and a result of one element "
                      "type are supported",
                      kc__op_dtype_text(t, ta, sizeof ta),
                      kc__op_dtype_text(kc_shape_get_dtype(b), tb, sizeof tb),
                      kc__op_dtype_text(kc_shape_get_dtype(in->shape), tr, sizeof tr));
  }
  bool supported = t.lanes == 1 && ((t.code == kDLFloat && (t.bits == 32 || t.bits == 64)) ||
                                    ((t.code == kDLInt || t.code == kDLUInt) &&
                                     (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)));
  if (!supported) {
    return kc__op_bad(in, KC_UNIMPLEMENTED,
                      "dot: element type %s is not supported (f32, f64 and the integer types)",
                      kc__op_dtype_text(t, ta, sizeof ta));
  }
  int32_t ra = kc_shape_get_rank(a), rb = kc_shape_get_rank(b);
  bool used_a[KC__DOT_MAX_RANK] = {false}, used_b[KC__DOT_MAX_RANK] = {false};
  const int64_t *lb, *rbd, *lc, *rc;
  size_t nlb, nrb, nlc, nrc;
  KC__TRY(kc__dims_list(in, "lhs_batch_dims", ra, used_a, &lb, &nlb));
  KC__TRY(kc__dims_list(in, "rhs_batch_dims", rb, used_b, &rbd, &nrb));
  KC__TRY(kc__dims_list(in, "lhs_contracting_dims", ra, used_a, &lc, &nlc));
  KC__TRY(kc__dims_list(in, "rhs_contracting_dims", rb, used_b, &rc, &nrc));
  if (nlb != nrb || nlc != nrc) {
    return kc__op_bad(in, KC_INVALID_ARGUMENT,
                      "expected as many %s dimensions on both sides, got %zu and %zu",
                      nlb != nrb ? "batch" : "contracting", nlb != nrb ? nlb : nlc,
                      nlb != nrb ? nrb : nrc);
  }
  const int64_t* da = kc_shape_get_dims(a);
  const int64_t* db = kc_shape_get_dims(b);
  int64_t dims[KC__DOT_MAX_RANK];
  int32_t nd = 0;
  plan->batch = plan->m = plan->n = plan->k = 1;
  for (size_t i = 0; i < nlb; ++i) {
    if (da[lb[i]] != db[rbd[i]]) {
      return kc__op_bad(in, KC_INVALID_ARGUMENT,
                        "batch dimension %zu: lhs dimension %lld has %lld elements, rhs "
                        "dimension %lld has %lld",
                        i, (long long)lb[i], (long long)da[lb[i]], (long long)rbd[i],
                        (long long)db[rbd[i]]);
    }
    dims[nd++] = da[lb[i]];
    plan->batch *= da[lb[i]];
  }
  for (size_t i = 0; i < nlc; ++i) {
    if (da[lc[i]] != db[rc[i]]) {
      return kc__op_bad(in, KC_INVALID_ARGUMENT,
                        "contracting dimension %zu: lhs dimension %lld has %lld elements, "
                        "rhs dimension %lld has %lld",
                        i, (long long)lc[i], (long long)da[lc[i]], (long long)rc[i],
                        (long long)db[rc[i]]);
    }
    plan->k *= da[lc[i]];
  }
  for (int32_t d = 0; d < ra; ++d) {
    if (!used_a[d]) {
      dims[nd++] = da[d];
      plan->m *= da[d];
    }
  }
  for (int32_t d = 0; d < rb; ++d) {
    if (!used_b[d]) {
      dims[nd++] = db[d];
      plan->n *= db[d];
    }
  }
  const kc_shape* r = in->shape;
  bool ok = kc_shape_get_rank(r) == nd &&
            (nd == 0 || memcmp(kc_shape_get_dims(r), dims, (size_t)nd * sizeof(int64_t)) == 0);
  if (!ok) {
    kc_shape* want = NULL;
    KC__TRY(kc_shape_create_array(t, dims, nd, &want));
    char w[256], g[256];
    kc_shape_format(want, w, sizeof w);
    kc_shape_format(r, g, sizeof g);
    kc_shape_destroy(want);
    return kc__op_bad(in, KC_INVALID_ARGUMENT,
                      "expected a result of %s (batch, lhs free, rhs free dimensions), got %s",
                      w, g);
  }
  plan->dtype = t;
  plan->esize = kc_dtype_get_size(t);
  kc__canonical_box(a, lb, nlb, lc, nlc, used_a, true, &plan->lhs_box);
  kc__canonical_box(b, rbd, nrb, rc, nrc, used_b, false, &plan->rhs_box);
  return NULL;
}

static kc_status* kc__dot_verify(const kc_program* p, const kc__instr* in) {
  kc__dot_plan plan;
  return kc__dot_read(p, in, &plan);
}

static kc_status* kc__dot_prepare(const kc_program* p, const kc__instr* in,
                                  const kc__prepare_ctx* ctx, const void** out) {
  kc__dot_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  KC__TRY(kc__dot_read(p, in, plan));
  *out = plan;
  return NULL;
}

/* ---- f32: packed panels, 6 rows at a time ------------------------------------------ */

#define KC__MR 6
#define KC__KC 256 /* contracted elements per pass: a panel's slice stays in L1 */

typedef float kc__v16 __attribute__((vector_size(64)));

/* C[rows x NR] (row stride ldc, only `cols` columns written) = (or, with
 * `accumulate`, +=) A[rows x k] (row stride lda) times a packed panel
 * slice of B (k x NR, NR = 16 * NV). One body for each vector width. */
#define KC__MICRO_PARAMS                                                        \
  const float *a, int64_t lda, const float *panel, int64_t k, float *c,         \
      int64_t ldc, int64_t rows, int64_t cols, int accumulate

#define KC__MICRO_BODY(NV)                                                      \
  kc__v16 acc[KC__MR][NV];                                                      \
  for (int r = 0; r < KC__MR; ++r)                                              \
    for (int v = 0; v < NV; ++v) acc[r][v] = (kc__v16){0};                      \
  if (rows == KC__MR) {                                                         \
    for (int64_t i = 0; i < k; ++i) {                                           \
      kc__v16 b[NV];                                                            \
      memcpy(b, panel + i * 16 * NV, sizeof b);                                 \
      for (int r = 0; r < KC__MR; ++r) {                                        \
        float x = a[r * lda + i];                                               \
        for (int v = 0; v < NV; ++v) acc[r][v] += x * b[v];                     \
      }                                                                         \
    }                                                                           \
  } else {                                                                      \
    for (int64_t i = 0; i < k; ++i) {                                           \
      kc__v16 b[NV];                                                            \
      memcpy(b, panel + i * 16 * NV, sizeof b);                                 \
      for (int64_t r = 0; r < rows; ++r) {                                      \
        float x = a[r * lda + i];                                               \
        for (int v = 0; v < NV; ++v) acc[r][v] += x * b[v];                     \
      }                                                                         \
    }                                                                           \
  }                                                                             \
  for (int64_t r = 0; r < rows; ++r) {                                          \
    float out[16 * NV];                                                         \
    memcpy(out, acc[r], sizeof out);                                            \
    float* row = c + r * ldc;                                                   \
    if (accumulate) {                                                           \
      for (int64_t j = 0; j < cols; ++j) row[j] += out[j];                      \
    } else {                                                                    \
      memcpy(row, out, (size_t)cols * sizeof(float));                           \
    }                                                                           \
  }

typedef void (*kc__micro_fn)(KC__MICRO_PARAMS);

/* AVX-512: two 16-float registers a row, 12 accumulators. AVX2: one
 * 16-float vector (two registers) a row, as many registers as it has. */
#if defined(__x86_64__)
__attribute__((target("avx512f"))) static void kc__micro_f32_avx512(KC__MICRO_PARAMS) {
  KC__MICRO_BODY(2)
}
__attribute__((target("avx2,fma"))) static void kc__micro_f32_avx2(KC__MICRO_PARAMS) {
  KC__MICRO_BODY(1)
}
#endif
static void kc__micro_f32_plain(KC__MICRO_PARAMS) { KC__MICRO_BODY(1) }
#undef KC__MICRO_BODY

/* A kernel and the width of the panels it takes. The choice is made by
 * hand rather than with target_clones: its ifunc resolver runs before
 * ThreadSanitizer's runtime has started, and crashes it. */
typedef struct kc__micro {
  kc__micro_fn fn;
  int64_t nr;
} kc__micro;

static kc__micro kc__micro_f32_pick(void) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return (kc__micro){kc__micro_f32_avx512, 32};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return (kc__micro){kc__micro_f32_avx2, 16};
  }
#endif
  return (kc__micro){kc__micro_f32_plain, 16};
}

/* The kernel for this CPU, picked once. */
static pthread_once_t kc__micro_once = PTHREAD_ONCE_INIT;
static kc__micro kc__micro_chosen;

static void kc__micro_choose(void) { kc__micro_chosen = kc__micro_f32_pick(); }

static kc__micro kc__micro_f32(void) {
  pthread_once(&kc__micro_once, kc__micro_choose);
  return kc__micro_chosen;
}

typedef struct kc__gemm_job {
  kc__micro micro;
  const float* a;
  const float* panels; /* ceil(n / nr) panels of k x nr */
  float* c;
  int64_t m, n, k;
} kc__gemm_job;

/* Rows [begin, end) in blocks of 6: for each slice of the contracted
 * dimension, each panel against every block, so that the panel's slice
 * stays in L1 while the rows pass. */
static void kc__gemm_rows(void* ctx, int64_t begin, int64_t end) {
  const kc__gemm_job* job = ctx;
  int64_t nr = job->micro.nr;
  int64_t panels = (job->n + nr - 1) / nr;
  for (int64_t k0 = 0; k0 < job->k || (k0 == 0 && job->k == 0); k0 += KC__KC) {
    int64_t kc = job->k - k0 < KC__KC ? job->k - k0 : KC__KC;
    for (int64_t p = 0; p < panels; ++p) {
      int64_t j = p * nr;
      int64_t cols = job->n - j < nr ? job->n - j : nr;
      const float* slice = job->panels + p * job->k * nr + k0 * nr;
      for (int64_t blk = begin; blk < end; ++blk) {
        int64_t i = blk * KC__MR;
        int64_t rows = job->m - i < KC__MR ? job->m - i : KC__MR;
        job->micro.fn(job->a + i * job->k + k0, job->k, slice, kc, job->c + i * job->n + j,
                      job->n, rows, cols, k0 > 0);
      }
    }
    if (job->k == 0) break;
  }
}

static kc_status* kc__gemm_f32(const float* a, const float* b, float* c, int64_t m, int64_t n,
                               int64_t k, kc_thread_pool* pool) {
  kc__micro micro = kc__micro_f32();
  int64_t nr = micro.nr;
  int64_t panels = (n + nr - 1) / nr;
  float* packed = malloc((size_t)(panels * k * nr) * sizeof *packed + 1);
  if (!packed) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory packing a dot");
  for (int64_t p = 0; p < panels; ++p) {
    int64_t j = p * nr;
    int64_t cols = n - j < nr ? n - j : nr;
    float* dst = packed + p * k * nr;
    for (int64_t i = 0; i < k; ++i) {
      memcpy(dst + i * nr, b + i * n + j, (size_t)cols * sizeof(float));
      for (int64_t z = cols; z < nr; ++z) dst[i * nr + z] = 0.0f;
    }
  }
  kc__gemm_job job = {micro, a, packed, c, m, n, k};
  int64_t blocks = (m + KC__MR - 1) / KC__MR;
  /* A block of 6 rows costs about 6 * n * k multiply-adds, ~0.02 ns each. */
  int64_t cost = KC__MR * n * k / 50 + 1;
  if (!pool && blocks * cost > 200000) pool = kc_thread_pool_get_default();
  if (pool) {
    kc_thread_pool_parallel_for(pool, blocks, cost, kc__gemm_rows, &job);
  } else {
    kc__gemm_rows(&job, 0, blocks);
  }
  free(packed);
  return NULL;
}

/* ---- other types: plain loops ---------------------------------------------------------- */

#define KC__DOT_LOOP(T, W)                                                            \
  static void kc__gemm_##T(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k) { \
    for (int64_t i = 0; i < m; ++i) {                                                  \
      T* row = c + i * n;                                                              \
      for (int64_t j = 0; j < n; ++j) row[j] = 0;                                      \
      for (int64_t p = 0; p < k; ++p) {                                                \
        W x = (W)a[i * k + p];                                                         \
        const T* brow = b + p * n;                                                     \
        for (int64_t j = 0; j < n; ++j) row[j] = (T)((W)row[j] + x * (W)brow[j]);      \
      }                                                                                \
    }                                                                                  \
  }
KC__DOT_LOOP(double, double)
KC__DOT_LOOP(uint8_t, uint64_t)
KC__DOT_LOOP(uint16_t, uint64_t)
KC__DOT_LOOP(uint32_t, uint64_t)
KC__DOT_LOOP(uint64_t, uint64_t)
#undef KC__DOT_LOOP

static kc_status* kc__dot_kernel(const kc__kernel_ctx* ctx, void* out, const void* const* ins) {
  const kc__dot_plan* plan = ctx->data;
  size_t es = plan->esize;
  const char* a = ins[0];
  const char* b = ins[1];
  char* scratch = NULL;
  size_t a_bytes = (size_t)(plan->batch * plan->m * plan->k) * es;
  size_t b_bytes = (size_t)(plan->batch * plan->k * plan->n) * es;
  if (plan->lhs_box.rank >= 0 || plan->rhs_box.rank >= 0) {
    scratch = malloc(a_bytes + b_bytes + 1);
    if (!scratch) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory in a dot");
    if (plan->lhs_box.rank >= 0) {
      kc__box_copy(&plan->lhs_box, a, scratch, es);
      a = scratch;
    }
    if (plan->rhs_box.rank >= 0) {
      kc__box_copy(&plan->rhs_box, b, scratch + a_bytes, es);
      b = scratch + a_bytes;
    }
  }
  kc_status* st = NULL;
  int64_t m = plan->m, n = plan->n, k = plan->k;
  for (int64_t i = 0; i < plan->batch && !st; ++i) {
    const void* ai = a + (size_t)(i * m * k) * es;
    const void* bi = b + (size_t)(i * k * n) * es;
    void* ci = (char*)out + (size_t)(i * m * n) * es;
    if (plan->dtype.code == kDLFloat && plan->dtype.bits == 32) {
      st = kc__gemm_f32(ai, bi, ci, m, n, k, ctx->pool);
    } else if (plan->dtype.code == kDLFloat) {
      kc__gemm_double(ai, bi, ci, m, n, k);
    } else if (es == 1) {
      kc__gemm_uint8_t(ai, bi, ci, m, n, k);
    } else if (es == 2) {
      kc__gemm_uint16_t(ai, bi, ci, m, n, k);
    } else if (es == 4) {
      kc__gemm_uint32_t(ai, bi, ci, m, n, k);
    } else {
      kc__gemm_uint64_t(ai, bi, ci, m, n, k);
    }
  }
  free(scratch);
  return st;
}

static const char* const kc__dot_attrs[] = {"lhs_batch_dims", "rhs_batch_dims",
                                            "lhs_contracting_dims", "rhs_contracting_dims",
                                            NULL};

const kc__op_def kc__ops_dot[] = {
    {KC_OP_DOT, "dot", 2, 2, 0, kc__dot_attrs, NULL, kc__dot_verify, kc__dot_prepare,
     kc__dot_kernel},
};
const size_t kc__ops_dot_count = KC__ARRAY_SIZE(kc__ops_dot);
