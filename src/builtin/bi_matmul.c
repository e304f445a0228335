/* kc.MatMul, its gradient and its tangent: batched products with
 * transposes, f32 on the GEMM of src/kernels/gemm_f32.c, f64 on a loop of
 * its own. */
#include <string.h>

#include "builtin/builtin_internal.h"
#include "internal/common.h"
#include "kernels/gemm_f32.h"

/* The attributes every op of the family reads. */
typedef struct kc__mm_attrs {
  bool ta, tb;
} kc__mm_attrs;

static kc_status* kc__mm_create(kc_kernel_construct_ctx* ctx, void** out) {
  const kc_op_attrs* attrs = kc_kernel_construct_ctx_get_attrs(ctx);
  bool ta = false, tb = false;
  KC_RETURN_IF_ERROR(kc_op_attrs_get_bool(attrs, "transpose_a", &ta));
  KC_RETURN_IF_ERROR(kc_op_attrs_get_bool(attrs, "transpose_b", &tb));
  /* Four instances at most: the flags are the instance. */
  *out = (void*)(intptr_t)((ta ? 1 : 0) | (tb ? 2 : 0));
  return NULL;
}

static kc__mm_attrs kc__mm_attrs_of(const void* kernel) {
  int bits = kc__bi_code(kernel);
  return (kc__mm_attrs){.ta = bits & 1, .tb = (bits & 2) != 0};
}

/* ---- shapes ---------------------------------------------------------------------- */

/* The product's shape, [..., M, N], of a [..., M, K] (or [..., K, M]) and
 * b [..., K, N] (or [..., N, K]) given as inputs `ia` and `ia + 1`; the
 * leading dims broadcast. */
static kc_status* kc__mm_product_shape(kc_shape_ctx* ctx, const kc_shape_handle** out) {
  const kc_op_attrs* attrs = kc_shape_ctx_get_attrs(ctx);
  bool ta = false, tb = false;
  KC_RETURN_IF_ERROR(kc_op_attrs_get_bool(attrs, "transpose_a", &ta));
  KC_RETURN_IF_ERROR(kc_op_attrs_get_bool(attrs, "transpose_b", &tb));
  const kc_shape_handle *a = NULL, *b = NULL;
  KC_RETURN_IF_ERROR(kc_shape_ctx_with_rank_at_least(ctx, kc_shape_ctx_get_input(ctx, 0), 2, &a),
                     "kc.MatMul: a");
  KC_RETURN_IF_ERROR(kc_shape_ctx_with_rank_at_least(ctx, kc_shape_ctx_get_input(ctx, 1), 2, &b),
                     "kc.MatMul: b");
  int32_t ra = kc_shape_handle_get_rank(a), rb = kc_shape_handle_get_rank(b);
  if (ra > KC__BI_MAX_RANK || rb > KC__BI_MAX_RANK) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc.MatMul: ranks %d and %d: at most %d", ra, rb,
                            KC__BI_MAX_RANK);
  }
  int64_t m = kc_shape_handle_get_dim(a, ta ? ra - 1 : ra - 2);
  int64_t ka = kc_shape_handle_get_dim(a, ta ? ra - 2 : ra - 1);
  int64_t kb = kc_shape_handle_get_dim(b, tb ? rb - 1 : rb - 2);
  int64_t n = kc_shape_handle_get_dim(b, tb ? rb - 2 : rb - 1);
  int64_t k = 0;
  KC_RETURN_IF_ERROR(kc_shape_ctx_merge_dim(ctx, ka, kb, &k),
                     "kc.MatMul: the contracted dims of a (transpose_a=%s) and b "
                     "(transpose_b=%s)",
                     ta ? "true" : "false", tb ? "true" : "false");
  const kc_shape_handle *ba = NULL, *bb = NULL, *batch = NULL, *mn = NULL;
  KC_RETURN_IF_ERROR(kc_shape_ctx_subshape(ctx, a, 0, ra - 2, &ba));
  KC_RETURN_IF_ERROR(kc_shape_ctx_subshape(ctx, b, 0, rb - 2, &bb));
  KC_RETURN_IF_ERROR(kc_shape_ctx_broadcast(ctx, ba, bb, &batch),
                     "kc.MatMul: the batch dims of a and b");
  int64_t dims[2] = {m, n};
  KC_RETURN_IF_ERROR(kc_shape_ctx_make_shape(ctx, 2, dims, &mn));
  return kc_shape_ctx_concatenate(ctx, batch, mn, out);
}

static kc_status* kc__mm_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle* out = NULL;
  KC_RETURN_IF_ERROR(kc__mm_product_shape(ctx, &out));
  return kc_shape_ctx_set_output(ctx, 0, out);
}

/* kc.MatMulGrad: dproduct must be the product's shape; da a's, db b's. */
static kc_status* kc__mm_grad_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle *p = NULL, *same = NULL;
  KC_RETURN_IF_ERROR(kc__mm_product_shape(ctx, &p));
  KC_RETURN_IF_ERROR(kc_shape_ctx_merge(ctx, p, kc_shape_ctx_get_input(ctx, 2), &same),
                     "kc.MatMulGrad: dproduct against the product of a and b");
  KC_RETURN_IF_ERROR(kc_shape_ctx_set_output(ctx, 0, kc_shape_ctx_get_input(ctx, 0)));
  return kc_shape_ctx_set_output(ctx, 1, kc_shape_ctx_get_input(ctx, 1));
}

/* kc.MatMulJvp: each tangent its primal's shape. */
static kc_status* kc__mm_jvp_shape(kc_shape_ctx* ctx) {
  for (int32_t i = 0; i < 2; ++i) {
    const kc_shape_handle* same = NULL;
    KC_RETURN_IF_ERROR(kc_shape_ctx_merge(ctx, kc_shape_ctx_get_input(ctx, i),
                                          kc_shape_ctx_get_input(ctx, i + 2), &same),
                       "kc.MatMulJvp: %s's tangent", i ? "b" : "a");
  }
  return kc__mm_shape(ctx);
}

/* ---- one product -------------------------------------------------------------------- */

typedef struct kc__mm_f64_job {
  const double *a, *b;
  double* c;
  bool ta, tb;
  int64_t m, n, k;
} kc__mm_f64_job;

/* Rows [begin, end) of C (m x n) = op(A) op(B), i-p-j order so that the
 * innermost loop runs along rows of B and C when B is not transposed. */
static void kc__mm_f64_rows(void* ctx, int64_t begin, int64_t end) {
  const kc__mm_f64_job* j = ctx;
  int64_t m = j->m, n = j->n, k = j->k;
  for (int64_t i = begin; i < end; ++i) {
    double* c = j->c + i * n;
    memset(c, 0, (size_t)n * sizeof *c);
    for (int64_t p = 0; p < k; ++p) {
      double aip = j->ta ? j->a[p * m + i] : j->a[i * k + p];
      if (j->tb) {
        for (int64_t q = 0; q < n; ++q) c[q] += aip * j->b[q * k + p];
      } else {
        const double* brow = j->b + p * n;
        for (int64_t q = 0; q < n; ++q) c[q] += aip * brow[q];
      }
    }
  }
}

/* kc__bi_products (builtin_internal.h). */
kc_status* kc__bi_products(bool f32, kc__bi_operand a, int64_t a_step, kc__bi_operand b,
                           int64_t b_step, void* c, int64_t batch, int64_t m, int64_t n,
                           int64_t k, kc_thread_pool* pool) {
  if (f32) {
    const kc__gemm_f32_kernel* kern = kc__gemm_f32_kernel_best();
    if (a_step == m * k && b_step == k * n) {
      return kc__gemm_f32_batched(kern, a.p, a.t, b.p, b.t, c, batch, m, n, k, pool);
    }
    for (int64_t i = 0; i < batch; ++i) {
      KC_RETURN_IF_ERROR(kc__gemm_f32_batched(kern, (const float*)a.p + i * a_step, a.t,
                                              (const float*)b.p + i * b_step, b.t,
                                              (float*)c + i * m * n, 1, m, n, k, pool));
    }
    return NULL;
  }
  for (int64_t i = 0; i < batch; ++i) {
    kc__mm_f64_job job = {.a = (const double*)a.p + i * a_step,
                          .b = (const double*)b.p + i * b_step,
                          .c = (double*)c + i * m * n,
                          .ta = a.t,
                          .tb = b.t,
                          .m = m,
                          .n = n,
                          .k = k};
    kc_thread_pool_parallel_for(pool, m, 2 * n * k + 1, kc__mm_f64_rows, &job);
  }
  return NULL;
}

/* ---- batch dims ----------------------------------------------------------------------- */

/* How the batch dims of the two operands of a product line up with the
 * output's: the output's batch count, and, per output batch element, the
 * element of each operand (strides 0 where it is broadcast). */
typedef struct kc__mm_batch {
  int32_t rank;
  int64_t dims[KC__BI_MAX_RANK];
  int64_t sa[KC__BI_MAX_RANK], sb[KC__BI_MAX_RANK];
  int64_t count;   /* elements of the output's batch */
  int64_t a_count; /* elements of a's batch, and of b's */
  int64_t b_count;
} kc__mm_batch;

static void kc__mm_batch_of(const DLTensor* a, const DLTensor* b, const DLTensor* out,
                            kc__mm_batch* bt) {
  bt->rank = out->ndim - 2;
  memcpy(bt->dims, out->shape, (size_t)bt->rank * sizeof(int64_t));
  /* Batch strides in whole matrices: broadcast strides of the leading
   * dims. */
  DLTensor ab = *a, bb = *b;
  ab.ndim = a->ndim - 2;
  bb.ndim = b->ndim - 2;
  kc__bi_broadcast_strides(&ab, bt->rank, bt->dims, bt->sa);
  kc__bi_broadcast_strides(&bb, bt->rank, bt->dims, bt->sb);
  bt->count = 1;
  for (int32_t i = 0; i < bt->rank; ++i) bt->count *= bt->dims[i];
  bt->a_count = bt->b_count = 1;
  for (int32_t i = 0; i < ab.ndim; ++i) bt->a_count *= a->shape[i];
  for (int32_t i = 0; i < bb.ndim; ++i) bt->b_count *= b->shape[i];
}

/* out = op(a) op(b) for every batch element: one batched product when
 * both operands have the output's batch, one tall product when b has no
 * batch and a is not transposed, a product per element otherwise. */
static kc_status* kc__mm_run(const DLTensor* a, bool ta, const DLTensor* b, bool tb, DLTensor* out,
                             kc_thread_pool* pool) {
  bool f32 = kc__bi_is_f32(out);
  int64_t m = out->shape[out->ndim - 2], n = out->shape[out->ndim - 1];
  int64_t k = ta ? a->shape[a->ndim - 2] : a->shape[a->ndim - 1];
  kc__mm_batch bt;
  kc__mm_batch_of(a, b, out, &bt);
  if (bt.count == 0 || m == 0 || n == 0) return NULL;
  if (k == 0) {
    memset(kc__bi_data(out), 0, (size_t)(bt.count * m * n) * (f32 ? 4 : 8));
    return NULL;
  }
  kc__bi_operand oa = {kc__bi_data(a), ta}, ob = {kc__bi_data(b), tb};
  if (bt.a_count == bt.count && bt.b_count == bt.count) {
    return kc__bi_products(f32, oa, m * k, ob, k * n, kc__bi_data(out), bt.count, m, n, k, pool);
  }
  if (bt.b_count == 1 && bt.a_count == bt.count && !ta) {
    return kc__bi_products(f32, oa, 0, ob, 0, kc__bi_data(out), 1, bt.count * m, n, k, pool);
  }
  size_t esize = f32 ? 4 : 8;
  for (int64_t i = 0; i < bt.count; ++i) {
    int64_t ia = kc__bi_offset(i, bt.rank, bt.dims, bt.sa);
    int64_t ib = kc__bi_offset(i, bt.rank, bt.dims, bt.sb);
    kc__bi_operand ai = {(const char*)oa.p + (size_t)(ia * m * k) * esize, ta};
    kc__bi_operand bi = {(const char*)ob.p + (size_t)(ib * k * n) * esize, tb};
    KC_RETURN_IF_ERROR(kc__bi_products(f32, ai, 0, bi, 0,
                                       (char*)kc__bi_data(out) + (size_t)(i * m * n) * esize, 1, m,
                                       n, k, pool));
  }
  return NULL;
}

static kc_status* kc__mm_compute(void* kernel, kc_kernel_ctx* ctx) {
  kc__mm_attrs at = kc__mm_attrs_of(kernel);
  return kc__mm_run(kc_kernel_ctx_get_input(ctx, 0), at.ta, kc_kernel_ctx_get_input(ctx, 1), at.tb,
                    kc_kernel_ctx_get_output(ctx, 0), kc_kernel_ctx_get_thread_pool(ctx));
}

/* ---- the gradient ------------------------------------------------------------------ */

/* d = op(x) op(y) summed into the shape of d, whose batch dims may be
 * fewer than the product's (the operand was broadcast): the products are
 * made in a scratch tensor of the full batch, then summed. */
static kc_status* kc__mm_into(kc_kernel_ctx* ctx, const DLTensor* x, bool tx, const DLTensor* y,
                              bool ty, const DLTensor* full, DLTensor* d) {
  kc_thread_pool* pool = kc_kernel_ctx_get_thread_pool(ctx);
  if (kc__bi_numel(d) == kc__bi_numel(full)) {
    DLTensor v = *d;
    v.shape = full->shape;
    v.ndim = full->ndim;
    return kc__mm_run(x, tx, y, ty, &v, pool);
  }
  size_t esize = kc__bi_is_f32(d) ? 4 : 8;
  void* tmp = NULL;
  KC_RETURN_IF_ERROR(kc_kernel_ctx_allocate_temp(ctx, (size_t)kc__bi_numel(full) * esize, 0, &tmp));
  DLTensor v = *full;
  v.data = tmp;
  v.byte_offset = 0;
  v.dtype = d->dtype;
  KC_RETURN_IF_ERROR(kc__mm_run(x, tx, y, ty, &v, pool));
  /* Sum over the batch elements d was broadcast along. */
  int32_t rank = full->ndim;
  int64_t strides[KC__BI_MAX_RANK];
  kc__bi_broadcast_strides(d, rank, full->shape, strides);
  int64_t nd = kc__bi_numel(d), nf = kc__bi_numel(full);
  if (esize == 4) {
    float* out = kc__bi_data(d);
    const float* src = tmp;
    memset(out, 0, (size_t)nd * esize);
    for (int64_t i = 0; i < nf; ++i) out[kc__bi_offset(i, rank, full->shape, strides)] += src[i];
  } else {
    double* out = kc__bi_data(d);
    const double* src = tmp;
    memset(out, 0, (size_t)nd * esize);
    for (int64_t i = 0; i < nf; ++i) out[kc__bi_offset(i, rank, full->shape, strides)] += src[i];
  }
  return NULL;
}

/* kc.MatMulGrad(a, b, dproduct) -> (da, db). With p = op(a) op(b):
 *   da = dp op(b)^T, or (ta) op(b) dp^T;
 *   db = op(a)^T dp, or (tb) dp^T op(a);
 * each summed over the batch dims its operand was broadcast along. */
static kc_status* kc__mm_grad_compute(void* kernel, kc_kernel_ctx* ctx) {
  kc__mm_attrs at = kc__mm_attrs_of(kernel);
  const DLTensor* a = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* b = kc_kernel_ctx_get_input(ctx, 1);
  const DLTensor* dp = kc_kernel_ctx_get_input(ctx, 2);
  DLTensor* da = kc_kernel_ctx_get_output(ctx, 0);
  DLTensor* db = kc_kernel_ctx_get_output(ctx, 1);
  int32_t r = dp->ndim;
  /* The full-batch shapes of da and db: dp's batch, then a's (b's) last
   * two dims. */
  int64_t fa[KC__BI_MAX_RANK], fb[KC__BI_MAX_RANK];
  memcpy(fa, dp->shape, (size_t)r * sizeof(int64_t));
  memcpy(fb, dp->shape, (size_t)r * sizeof(int64_t));
  fa[r - 2] = a->shape[a->ndim - 2];
  fa[r - 1] = a->shape[a->ndim - 1];
  fb[r - 2] = b->shape[b->ndim - 2];
  fb[r - 1] = b->shape[b->ndim - 1];
  DLTensor full_a = *dp, full_b = *dp;
  full_a.shape = fa;
  full_b.shape = fb;
  bool need[2];
  KC_RETURN_IF_ERROR(kc__bi_needed(ctx, need, 2));
  if (!need[0]) {
    memset(kc__bi_data(da), 0, (size_t)kc__bi_numel(da) * (kc__bi_is_f32(da) ? 4 : 8));
  } else if (at.ta) {
    KC_RETURN_IF_ERROR(kc__mm_into(ctx, b, at.tb, dp, true, &full_a, da));
  } else {
    KC_RETURN_IF_ERROR(kc__mm_into(ctx, dp, false, b, !at.tb, &full_a, da));
  }
  if (!need[1]) {
    memset(kc__bi_data(db), 0, (size_t)kc__bi_numel(db) * (kc__bi_is_f32(db) ? 4 : 8));
    return NULL;
  }
  if (at.tb) return kc__mm_into(ctx, dp, true, a, at.ta, &full_b, db);
  return kc__mm_into(ctx, a, !at.ta, dp, false, &full_b, db);
}

/* kc.MatMulJvp(a, b, ta, tb) -> t = op(ta) op(b) + op(a) op(tb). */
static kc_status* kc__mm_jvp_compute(void* kernel, kc_kernel_ctx* ctx) {
  kc__mm_attrs at = kc__mm_attrs_of(kernel);
  const DLTensor* a = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* b = kc_kernel_ctx_get_input(ctx, 1);
  DLTensor* t = kc_kernel_ctx_get_output(ctx, 0);
  kc_thread_pool* pool = kc_kernel_ctx_get_thread_pool(ctx);
  KC_RETURN_IF_ERROR(kc__mm_run(kc_kernel_ctx_get_input(ctx, 2), at.ta, b, at.tb, t, pool));
  size_t esize = kc__bi_is_f32(t) ? 4 : 8;
  int64_t n = kc__bi_numel(t);
  if (n == 0) return NULL;
  void* tmp = NULL;
  KC_RETURN_IF_ERROR(kc_kernel_ctx_allocate_temp(ctx, (size_t)n * esize, 0, &tmp));
  DLTensor second = *t;
  second.data = tmp;
  second.byte_offset = 0;
  KC_RETURN_IF_ERROR(kc__mm_run(a, at.ta, kc_kernel_ctx_get_input(ctx, 3), at.tb, &second, pool));
  if (esize == 4) {
    float* out = kc__bi_data(t);
    const float* s = tmp;
    for (int64_t i = 0; i < n; ++i) out[i] += s[i];
  } else {
    double* out = kc__bi_data(t);
    const double* s = tmp;
    for (int64_t i = 0; i < n; ++i) out[i] += s[i];
  }
  return NULL;
}

#define KC__MM_ATTRS \
  { KC__BI_T, "transpose_a: bool = false", "transpose_b: bool = false", NULL }
/* MatMulGrad's: also which of da and db the caller uses (kcall/op.h). */
#define KC__MM_GRAD_ATTRS                                                                    \
  {                                                                                          \
    KC__BI_T, "transpose_a: bool = false", "transpose_b: bool = false", KC__BI_NEEDED, NULL \
  }

const kc__bi_op kc__bi_matmul_ops[] = {
    {.name = "kc.MatMul",
     .inputs = {"a: T", "b: T", NULL},
     .outputs = {"product: T", NULL},
     .attrs = KC__MM_ATTRS,
     .doc = "The matrix product of a [..., M, K] and b [..., K, N] (each of the "
            "last two dims swapped by transpose_a, transpose_b), the leading dims "
            "broadcast as NumPy's matmul does: [..., M, N].",
     .shape_fn = kc__mm_shape,
     .gradient = "kc.MatMulGrad(a, b, grad(product)) -> (grad(a), grad(b))",
     .jvp = "kc.MatMulJvp(a, b, tangent(a), tangent(b)) -> tangent(product)",
     .batching = KC_OP_BATCH_ELEMENTWISE,
     .compute = kc__mm_compute,
     .create = kc__mm_create},
    {.name = "kc.MatMulGrad",
     .inputs = {"a: T", "b: T", "dproduct: T", NULL},
     .outputs = {"da: T", "db: T", NULL},
     .attrs = KC__MM_GRAD_ATTRS,
     .doc = "The gradient of kc.MatMul: da = dproduct op(b)^T and db = op(a)^T "
            "dproduct (transposed back where a or b was), summed over the batch "
            "dims a or b was broadcast along.",
     .shape_fn = kc__mm_grad_shape,
     .batching = KC_OP_BATCH_ELEMENTWISE,
     .compute = kc__mm_grad_compute,
     .create = kc__mm_create},
    {.name = "kc.MatMulJvp",
     .inputs = {"a: T", "b: T", "ta: T", "tb: T", NULL},
     .outputs = {"t: T", NULL},
     .attrs = KC__MM_ATTRS,
     .doc = "The tangent of kc.MatMul: t = op(ta) op(b) + op(a) op(tb).",
     .shape_fn = kc__mm_jvp_shape,
     .batching = KC_OP_BATCH_ELEMENTWISE,
     .compute = kc__mm_jvp_compute,
     .create = kc__mm_create},
};
const size_t kc__bi_matmul_op_count = sizeof kc__bi_matmul_ops / sizeof kc__bi_matmul_ops[0];
