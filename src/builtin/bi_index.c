/* The built-in ops that index with a tensor of integers: kc.Embedding
 * (rows of a table) and kc.CrossEntropy (a label per row), with their
 * gradients and tangents. Every index is checked before anything is
 * written: OUT_OF_RANGE naming the first that is out of range. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "builtin/builtin_internal.h"
#include "internal/common.h"
#include "kernels/reduce.h"
#include "kernels/vmath.h"

/* Elements of a row the f32 path takes through a buffer at a time. */
#define KC__IX_BLOCK 1024

/* ---- indices ---------------------------------------------------------------------------- */

static inline int64_t kc__ix_index(const DLTensor* t, int64_t i) {
  const void* p = kc__bi_data(t);
  return t->dtype.bits == 32 ? ((const int32_t*)p)[i] : ((const int64_t*)p)[i];
}

/* Every index of `t` in [0, bound): OUT_OF_RANGE naming the first that is
 * not. */
static kc_status* kc__ix_check_indices(const DLTensor* t, const char* what, int64_t bound,
                                       const char* of) {
  int64_t n = kc__bi_numel(t);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = kc__ix_index(t, i);
    if (v < 0 || v >= bound) {
      return kc_status_create(KC_OUT_OF_RANGE, "%s: item %lld is %lld, expected 0 .. %lld (%s)",
                              what, (long long)i, (long long)v, (long long)bound - 1, of);
    }
  }
  return NULL;
}

/* ---- Embedding -------------------------------------------------------------------------- */

typedef struct kc__ix_embed_job {
  size_t row_bytes, elem;
  int64_t dim, count; /* the table's row length, the number of indices */
  const DLTensor* indices;
  const char* table;
  char* y;
  const void* dy;
  bool f32;
} kc__ix_embed_job;

static void kc__ix_embed_rows(void* ctx, int64_t begin, int64_t end) {
  const kc__ix_embed_job* j = ctx;
  for (int64_t i = begin; i < end; ++i) {
    memcpy(j->y + (size_t)i * j->row_bytes,
           j->table + (size_t)kc__ix_index(j->indices, i) * j->row_bytes, j->row_bytes);
  }
}

/* kc.Embedding(table, indices) -> y: y[i..., :] = table[indices[i...], :]. */
static kc_status* kc__ix_embed_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  const DLTensor* table = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* idx = kc_kernel_ctx_get_input(ctx, 1);
  KC_RETURN_IF_ERROR(
      kc__ix_check_indices(idx, "kc.Embedding: indices", table->shape[0], "the table's rows"));
  kc__ix_embed_job j = {.elem = table->dtype.bits / 8,
                        .dim = table->shape[1],
                        .indices = idx,
                        .table = kc__bi_data(table),
                        .y = kc__bi_data(kc_kernel_ctx_get_output(ctx, 0))};
  j.row_bytes = (size_t)j.dim * j.elem;
  kc_thread_pool_parallel_for(kc_kernel_ctx_get_thread_pool(ctx), kc__bi_numel(idx), j.dim / 4 + 1,
                              kc__ix_embed_rows, &j);
  return NULL;
}

/* The gradient: each column block of dtable summed from dy's rows in index
 * order by one task, so the result does not depend on the threads. */
static void kc__ix_embed_grad_cols(void* ctx, int64_t begin, int64_t end) {
  const kc__ix_embed_job* j = ctx;
  int64_t c0 = begin * KC__IX_BLOCK, c1 = end * KC__IX_BLOCK < j->dim ? end * KC__IX_BLOCK : j->dim;
  for (int64_t i = 0; i < j->count; ++i) {
    int64_t row = kc__ix_index(j->indices, i);
    if (j->f32) {
      float* d = (float*)j->y + row * j->dim;
      const float* g = (const float*)j->dy + i * j->dim;
      for (int64_t c = c0; c < c1; ++c) d[c] += g[c];
    } else {
      double* d = (double*)j->y + row * j->dim;
      const double* g = (const double*)j->dy + i * j->dim;
      for (int64_t c = c0; c < c1; ++c) d[c] += g[c];
    }
  }
}

/* kc.EmbeddingGrad(table, indices, dy) -> dtable: dy's rows added into the
 * rows the indices name, zeros elsewhere. */
static kc_status* kc__ix_embed_grad_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  const DLTensor* table = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* idx = kc_kernel_ctx_get_input(ctx, 1);
  DLTensor* dt = kc_kernel_ctx_get_output(ctx, 0);
  KC_RETURN_IF_ERROR(
      kc__ix_check_indices(idx, "kc.EmbeddingGrad: indices", table->shape[0], "the table's rows"));
  kc__ix_embed_job j = {.dim = table->shape[1],
                        .count = kc__bi_numel(idx),
                        .indices = idx,
                        .y = kc__bi_data(dt),
                        .dy = kc__bi_data(kc_kernel_ctx_get_input(ctx, 2)),
                        .f32 = kc__bi_is_f32(table)};
  memset(j.y, 0, (size_t)kc__bi_numel(dt) * (table->dtype.bits / 8));
  kc_thread_pool_parallel_for(kc_kernel_ctx_get_thread_pool(ctx),
                              (j.dim + KC__IX_BLOCK - 1) / KC__IX_BLOCK,
                              j.count * KC__IX_BLOCK / 4 + 1, kc__ix_embed_grad_cols, &j);
  return NULL;
}

/* Embedding's output shape, indices' dims then the table's row length. */
static kc_status* kc__ix_embed_out_shape(kc_shape_ctx* ctx, const kc_shape_handle** out) {
  const kc_shape_handle *table = NULL, *dim = NULL;
  KC_RETURN_IF_ERROR(kc_shape_ctx_with_rank(ctx, kc_shape_ctx_get_input(ctx, 0), 2, &table),
                     "table");
  KC_RETURN_IF_ERROR(kc_shape_ctx_subshape(ctx, table, 1, 2, &dim));
  return kc_shape_ctx_concatenate(ctx, kc_shape_ctx_get_input(ctx, 1), dim, out);
}

static kc_status* kc__ix_embed_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle* y = NULL;
  KC_RETURN_IF_ERROR(kc__ix_embed_out_shape(ctx, &y));
  return kc_shape_ctx_set_output(ctx, 0, y);
}

static kc_status* kc__ix_embed_grad_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle *y = NULL, *same = NULL;
  KC_RETURN_IF_ERROR(kc__ix_embed_out_shape(ctx, &y));
  KC_RETURN_IF_ERROR(kc_shape_ctx_merge(ctx, y, kc_shape_ctx_get_input(ctx, 2), &same),
                     "dy against indices' dims and the table's row length");
  return kc_shape_ctx_set_output(ctx, 0, kc_shape_ctx_get_input(ctx, 0));
}

/* ---- CrossEntropy ----------------------------------------------------------------------- */

enum { KC__IX_MEAN, KC__IX_SUM, KC__IX_NONE };

static kc_status* kc__ix_reduction(const kc_op_attrs* attrs, int* out) {
  kc_string_view r = {0};
  KC_RETURN_IF_ERROR(kc_op_attrs_get_string(attrs, "reduction", &r));
  *out = r.size == 4 && !memcmp(r.data, "mean", 4)  ? KC__IX_MEAN
         : r.size == 3 && !memcmp(r.data, "sum", 3) ? KC__IX_SUM
                                                    : KC__IX_NONE;
  return NULL;
}

/* Rows of `classes` logits with a label each. */
typedef struct kc__ix_ce_job {
  bool f32;
  int reduction;
  int64_t classes, rows;
  const void *logits, *t; /* t: the cotangent of the loss, or the logits' tangent */
  const DLTensor* labels;
  void* out;
  double* per_row; /* the reductions' per-row values, summed after */
} kc__ix_ce_job;

/* The row's max and log of the sum of e^(x - max). */
static void kc__ix_ce_lse(const kc__ix_ce_job* j, int64_t base, double* m, double* lse) {
  if (j->f32) {
    const float* x = (const float*)j->logits + base;
    float mx = kc__max_f32_relaxed(x, j->classes, NULL), t[KC__IX_BLOCK];
    double s = 0;
    for (int64_t from = 0; from < j->classes; from += KC__IX_BLOCK) {
      int64_t c = j->classes - from < KC__IX_BLOCK ? j->classes - from : KC__IX_BLOCK;
      for (int64_t k = 0; k < c; ++k) t[k] = x[from + k] - mx;
      kc__vmath_f32(KC__VM_EXP, t, t, c);
      s += kc__sum_f32_wide(t, c);
    }
    *m = mx;
    *lse = log(s);
    return;
  }
  double mx = -INFINITY, s = 0;
  for (int64_t c = 0; c < j->classes; ++c) {
    double v = kc__bi_get(j->logits, j->f32, base + c);
    if (v > mx || v != v) mx = v;
  }
  for (int64_t c = 0; c < j->classes; ++c) s += exp(kc__bi_get(j->logits, j->f32, base + c) - mx);
  *m = mx;
  *lse = log(s);
}

/* loss of row r = logsumexp(x) - x[label]; its tangent sum_c (p_c -
 * onehot_c) t_c. */
static void kc__ix_ce_rows(void* ctx, int64_t begin, int64_t end) {
  const kc__ix_ce_job* j = ctx;
  for (int64_t r = begin; r < end; ++r) {
    int64_t base = r * j->classes, label = kc__ix_index(j->labels, r);
    double m = 0, lse = 0, v = 0;
    kc__ix_ce_lse(j, base, &m, &lse);
    if (!j->t) {
      v = m + lse - kc__bi_get(j->logits, j->f32, base + label);
    } else {
      for (int64_t c = 0; c < j->classes; ++c) {
        v += exp(kc__bi_get(j->logits, j->f32, base + c) - m - lse) *
             kc__bi_get(j->t, j->f32, base + c);
      }
      v -= kc__bi_get(j->t, j->f32, base + label);
    }
    j->per_row[r] = v;
  }
}

/* dlogits of row r = (p - onehot) times the row's cotangent. */
static void kc__ix_ce_grad_rows(void* ctx, int64_t begin, int64_t end) {
  const kc__ix_ce_job* j = ctx;
  double g0 = kc__bi_get(j->t, j->f32, 0);
  if (j->reduction == KC__IX_MEAN) g0 /= (double)j->rows;
  for (int64_t r = begin; r < end; ++r) {
    int64_t base = r * j->classes, label = kc__ix_index(j->labels, r);
    double g = j->reduction == KC__IX_NONE ? kc__bi_get(j->t, j->f32, r) : g0;
    double m = 0, lse = 0;
    kc__ix_ce_lse(j, base, &m, &lse);
    if (j->f32) {
      const float* x = (const float*)j->logits + base;
      float* d = (float*)j->out + base;
      float mf = (float)m, lf = (float)lse, gf = (float)g;
      for (int64_t c = 0; c < j->classes; ++c) d[c] = (x[c] - mf) - lf;
      kc__vmath_f32(KC__VM_EXP, d, d, j->classes);
      for (int64_t c = 0; c < j->classes; ++c) d[c] *= gf;
      d[label] -= gf;
      continue;
    }
    for (int64_t c = 0; c < j->classes; ++c) {
      double p = exp(kc__bi_get(j->logits, j->f32, base + c) - m - lse);
      kc__bi_set(j->out, j->f32, base + c, (p - (c == label)) * g);
    }
  }
}

static kc_status* kc__ix_ce_prepare(kc_kernel_ctx* ctx, const char* op, kc__ix_ce_job* j) {
  const DLTensor* logits = kc_kernel_ctx_get_input(ctx, 0);
  j->labels = kc_kernel_ctx_get_input(ctx, 1);
  KC_RETURN_IF_ERROR(kc__ix_reduction(kc_kernel_ctx_get_attrs(ctx), &j->reduction));
  j->f32 = kc__bi_is_f32(logits);
  j->logits = kc__bi_data(logits);
  j->classes = logits->shape[logits->ndim - 1];
  j->rows = kc__bi_numel(j->labels);
  char what[64];
  snprintf(what, sizeof what, "%s: labels", op);
  return kc__ix_check_indices(j->labels, what, j->classes, "the classes");
}

/* kc.CrossEntropy(logits, labels) -> loss and kc.CrossEntropyJvp(logits,
 * labels, tlogits) -> tloss: per row, then reduced. */
static kc_status* kc__ix_ce_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  kc__ix_ce_job j = {0};
  bool jvp = kc_kernel_ctx_get_input_count(ctx) > 2;
  KC_RETURN_IF_ERROR(kc__ix_ce_prepare(ctx, jvp ? "kc.CrossEntropyJvp" : "kc.CrossEntropy", &j));
  if (jvp) j.t = kc__bi_data(kc_kernel_ctx_get_input(ctx, 2));
  KC_RETURN_IF_ERROR(kc_kernel_ctx_allocate_temp(
      ctx, (size_t)(j.rows ? j.rows : 1) * sizeof(double), 0, (void**)&j.per_row));
  kc_thread_pool_parallel_for(kc_kernel_ctx_get_thread_pool(ctx), j.rows, j.classes * 8 + 1,
                              kc__ix_ce_rows, &j);
  void* out = kc__bi_data(kc_kernel_ctx_get_output(ctx, 0));
  if (j.reduction == KC__IX_NONE) {
    for (int64_t r = 0; r < j.rows; ++r) kc__bi_set(out, j.f32, r, j.per_row[r]);
    return NULL;
  }
  double s = 0;
  for (int64_t r = 0; r < j.rows; ++r) s += j.per_row[r];
  kc__bi_set(out, j.f32, 0, j.reduction == KC__IX_MEAN ? s / (double)j.rows : s);
  return NULL;
}

/* kc.CrossEntropyGrad(logits, labels, dloss) -> dlogits. */
static kc_status* kc__ix_ce_grad_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  kc__ix_ce_job j = {0};
  KC_RETURN_IF_ERROR(kc__ix_ce_prepare(ctx, "kc.CrossEntropyGrad", &j));
  j.t = kc__bi_data(kc_kernel_ctx_get_input(ctx, 2));
  j.out = kc__bi_data(kc_kernel_ctx_get_output(ctx, 0));
  kc_thread_pool_parallel_for(kc_kernel_ctx_get_thread_pool(ctx), j.rows, j.classes * 12 + 1,
                              kc__ix_ce_grad_rows, &j);
  return NULL;
}

/* The loss's shape: logits [..., C] with labels [...]; the loss labels'
 * shape with reduction 'none', else a scalar. */
static kc_status* kc__ix_ce_loss_shape(kc_shape_ctx* ctx, const kc_shape_handle** out) {
  const kc_shape_handle *logits = NULL, *lead = NULL;
  KC_RETURN_IF_ERROR(
      kc_shape_ctx_with_rank_at_least(ctx, kc_shape_ctx_get_input(ctx, 0), 1, &logits), "logits");
  int32_t rank = kc_shape_handle_get_rank(logits);
  const kc_shape_handle* labels = kc_shape_ctx_get_input(ctx, 1);
  if (rank >= 0) {
    KC_RETURN_IF_ERROR(kc_shape_ctx_subshape(ctx, logits, 0, rank - 1, &lead));
    KC_RETURN_IF_ERROR(kc_shape_ctx_merge(ctx, lead, labels, &labels),
                       "labels against logits' dims but the last (the classes)");
  }
  int reduction = 0;
  KC_RETURN_IF_ERROR(kc__ix_reduction(kc_shape_ctx_get_attrs(ctx), &reduction));
  if (reduction == KC__IX_NONE) {
    *out = labels;
    return NULL;
  }
  return kc_shape_ctx_make_shape(ctx, 0, NULL, out);
}

static kc_status* kc__ix_ce_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle* loss = NULL;
  KC_RETURN_IF_ERROR(kc__ix_ce_loss_shape(ctx, &loss));
  if (kc_shape_ctx_get_input_count(ctx) > 2) { /* the tangent */
    const kc_shape_handle* same = NULL;
    KC_RETURN_IF_ERROR(kc_shape_ctx_merge(ctx, kc_shape_ctx_get_input(ctx, 0),
                                          kc_shape_ctx_get_input(ctx, 2), &same),
                       "tlogits against logits");
  }
  return kc_shape_ctx_set_output(ctx, 0, loss);
}

static kc_status* kc__ix_ce_grad_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle *loss = NULL, *same = NULL;
  KC_RETURN_IF_ERROR(kc__ix_ce_loss_shape(ctx, &loss));
  KC_RETURN_IF_ERROR(kc_shape_ctx_merge(ctx, loss, kc_shape_ctx_get_input(ctx, 2), &same),
                     "dloss against the loss");
  return kc_shape_ctx_set_output(ctx, 0, kc_shape_ctx_get_input(ctx, 0));
}

/* ---- the table -------------------------------------------------------------------------- */

#define KC__IX_INDEX_ATTRS \
  { KC__BI_T, "Tidx: {i32, i64}", NULL }
#define KC__IX_CE_ATTRS \
  { KC__BI_T, "Tidx: {i32, i64}", "reduction: {'mean', 'sum', 'none'} = 'mean'", NULL }

const kc__bi_op kc__bi_index_ops[] = {
    {.name = "kc.Embedding",
     .inputs = KC__BI_LIST("table: T", "indices: Tidx"),
     .outputs = {"y: T", NULL},
     .attrs = KC__IX_INDEX_ATTRS,
     .doc = "y[i..., :] = table[indices[i...], :]: rows of table [rows, dim] gathered, y "
            "indices' shape plus [dim]. An index outside 0 .. rows - 1 is OUT_OF_RANGE.",
     .shape_fn = kc__ix_embed_shape,
     .gradient = "kc.EmbeddingGrad(table, indices, grad(y)) -> grad(table)",
     .jvp = "kc.Embedding(tangent(table), indices) -> tangent(y)",
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__ix_embed_compute},
    {.name = "kc.EmbeddingGrad",
     .inputs = KC__BI_LIST("table: T", "indices: Tidx", "dy: T"),
     .outputs = {"dtable: T", NULL},
     .attrs = KC__IX_INDEX_ATTRS,
     .doc = "The gradient of kc.Embedding: dy's rows added into the rows of a zero table "
            "that the indices name (a scatter-add, the same result on any number of threads).",
     .shape_fn = kc__ix_embed_grad_shape,
     .gradient = "kc.Embedding(grad(dtable), indices) -> grad(dy)",
     .jvp = "kc.EmbeddingGrad(table, indices, tangent(dy)) -> tangent(dtable)",
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__ix_embed_grad_compute},
    {.name = "kc.CrossEntropy",
     .inputs = KC__BI_LIST("logits: T", "labels: Tidx"),
     .outputs = {"loss: T", NULL},
     .attrs = KC__IX_CE_ATTRS,
     .doc = "loss = logsumexp(logits) - logits[label] for each row of logits [..., classes] "
            "and its label in labels [...] (0 .. classes - 1, else OUT_OF_RANGE); the mean "
            "or sum over the rows (a scalar), or each row's with reduction 'none'.",
     .shape_fn = kc__ix_ce_shape,
     .gradient = "kc.CrossEntropyGrad(logits, labels, grad(loss)) -> grad(logits)",
     .jvp = "kc.CrossEntropyJvp(logits, labels, tangent(logits)) -> tangent(loss)",
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__ix_ce_compute},
    {.name = "kc.CrossEntropyGrad",
     .inputs = KC__BI_LIST("logits: T", "labels: Tidx", "dloss: T"),
     .outputs = {"dlogits: T", NULL},
     .attrs = KC__IX_CE_ATTRS,
     .doc = "The gradient of kc.CrossEntropy: (softmax(logits) - onehot(label)) times each "
            "row's cotangent (dloss / rows with reduction 'mean').",
     .shape_fn = kc__ix_ce_grad_shape,
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__ix_ce_grad_compute},
    {.name = "kc.CrossEntropyJvp",
     .inputs = KC__BI_LIST("logits: T", "labels: Tidx", "tlogits: T"),
     .outputs = {"tloss: T", NULL},
     .attrs = KC__IX_CE_ATTRS,
     .doc = "The tangent of kc.CrossEntropy: sum((softmax(logits) - onehot(label)) tlogits) "
            "for each row, reduced as the loss is.",
     .shape_fn = kc__ix_ce_shape,
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__ix_ce_compute},
};
const size_t kc__bi_index_op_count = sizeof kc__bi_index_ops / sizeof kc__bi_index_ops[0];
