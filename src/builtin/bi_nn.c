/* The normalising built-in ops: kc.Softmax, kc.LogSoftmax, kc.LayerNorm and
 * kc.RMSNorm, with their gradients and tangents. Each works on lines:
 * softmax's along its axis (x viewed as [outer, n, inner]), the norms'
 * over x's trailing dims. Sums and statistics are taken in double. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "builtin/builtin_internal.h"
#include "internal/common.h"
#include "kernels/reduce.h"
#include "kernels/vmath.h"

enum {
  KC__NN_SOFTMAX,
  KC__NN_LOG_SOFTMAX,
  KC__NN_SOFTMAX_GRAD,     /* (y, dy) -> y (dy - <y, dy>) */
  KC__NN_LOG_SOFTMAX_GRAD, /* (y, dy) -> dy - e^y sum(dy) */
  KC__NN_LOG_SOFTMAX_JVP,  /* (y, tx) -> tx - <e^y, tx> */
  KC__NN_LAYER,            /* the norms: mean subtracted, a bias added */
  KC__NN_RMS,
};

/* Dim `axis` of a rank-`rank` tensor, negative ones counting from the
 * end; INVALID_ARGUMENT naming the attr when it is out of range. */
static kc_status* kc__nn_axis(const char* attr, int64_t axis, int32_t rank, int32_t* out) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "attr '%s': %lld is out of range for rank %d (expected %d .. %d)", attr,
                            (long long)axis, rank, -rank, rank - 1);
  }
  *out = (int32_t)a;
  return NULL;
}

/* ---- softmax ---------------------------------------------------------------------------- */

/* Lines of n elements, `inner` apart: line l starts at
 * (l / inner) n inner + l % inner. */
typedef struct kc__nn_line_job {
  int code;
  bool f32;
  const void *a, *b; /* b: the second input of the gradient and tangent ops */
  void* out;
  int64_t n, inner;
} kc__nn_line_job;

/* Any line, in double. */
static void kc__nn_line(const kc__nn_line_job* j, int64_t line) {
  const int64_t s = j->inner, base = (line / s) * j->n * s + line % s;
  const bool f = j->f32;
  double acc = 0;
  switch (j->code) {
    case KC__NN_SOFTMAX:
    case KC__NN_LOG_SOFTMAX: {
      double m = -INFINITY;
      for (int64_t k = 0; k < j->n; ++k) {
        double v = kc__bi_get(j->a, f, base + k * s);
        if (v > m || v != v) m = v;
      }
      for (int64_t k = 0; k < j->n; ++k) acc += exp(kc__bi_get(j->a, f, base + k * s) - m);
      double lse = log(acc);
      for (int64_t k = 0; k < j->n; ++k) {
        double v = kc__bi_get(j->a, f, base + k * s) - m;
        kc__bi_set(j->out, f, base + k * s, j->code == KC__NN_SOFTMAX ? exp(v) / acc : v - lse);
      }
      return;
    }
    case KC__NN_SOFTMAX_GRAD:
      for (int64_t k = 0; k < j->n; ++k) {
        acc += kc__bi_get(j->a, f, base + k * s) * kc__bi_get(j->b, f, base + k * s);
      }
      for (int64_t k = 0; k < j->n; ++k) {
        int64_t i = base + k * s;
        kc__bi_set(j->out, f, i, kc__bi_get(j->a, f, i) * (kc__bi_get(j->b, f, i) - acc));
      }
      return;
    case KC__NN_LOG_SOFTMAX_GRAD:
      for (int64_t k = 0; k < j->n; ++k) acc += kc__bi_get(j->b, f, base + k * s);
      for (int64_t k = 0; k < j->n; ++k) {
        int64_t i = base + k * s;
        kc__bi_set(j->out, f, i, kc__bi_get(j->b, f, i) - exp(kc__bi_get(j->a, f, i)) * acc);
      }
      return;
    default: /* KC__NN_LOG_SOFTMAX_JVP */
      for (int64_t k = 0; k < j->n; ++k) {
        int64_t i = base + k * s;
        acc += exp(kc__bi_get(j->a, f, i)) * kc__bi_get(j->b, f, i);
      }
      for (int64_t k = 0; k < j->n; ++k) {
        int64_t i = base + k * s;
        kc__bi_set(j->out, f, i, kc__bi_get(j->b, f, i) - acc);
      }
      return;
  }
}

/* Elements of a row the f32 path takes through a buffer at a time. */
#define KC__NN_BLOCK 1024

/* A contiguous f32 row (inner 1) on the vector exp. */
static void kc__nn_row_f32(const kc__nn_line_job* j, int64_t row) {
  const int64_t n = j->n;
  const float* a = (const float*)j->a + row * n;
  const float* b = j->b ? (const float*)j->b + row * n : NULL;
  float* y = (float*)j->out + row * n;
  float t[KC__NN_BLOCK];
  double acc = 0;
  switch (j->code) {
    case KC__NN_SOFTMAX:
    case KC__NN_LOG_SOFTMAX: {
      /* A NaN in the row makes every output NaN through the sum. */
      float m = kc__max_f32_relaxed(a, n, NULL);
      for (int64_t from = 0; from < n; from += KC__NN_BLOCK) {
        int64_t c = n - from < KC__NN_BLOCK ? n - from : KC__NN_BLOCK;
        float* e = j->code == KC__NN_SOFTMAX ? y + from : t;
        for (int64_t k = 0; k < c; ++k) e[k] = a[from + k] - m;
        kc__vmath_f32(KC__VM_EXP, e, e, c);
        acc += kc__sum_f32_wide(e, c);
      }
      if (j->code == KC__NN_SOFTMAX) {
        float inv = (float)(1 / acc);
        for (int64_t k = 0; k < n; ++k) y[k] *= inv;
      } else {
        /* (x - max) - lse: the first difference exact near the max. */
        float lse = (float)log(acc);
        for (int64_t k = 0; k < n; ++k) y[k] = (a[k] - m) - lse;
      }
      return;
    }
    case KC__NN_SOFTMAX_GRAD:
      acc = kc__dot_f32_wide(a, b, n);
      for (int64_t k = 0; k < n; ++k) y[k] = a[k] * (b[k] - (float)acc);
      return;
    case KC__NN_LOG_SOFTMAX_GRAD:
      acc = kc__sum_f32_wide(b, n);
      for (int64_t from = 0; from < n; from += KC__NN_BLOCK) {
        int64_t c = n - from < KC__NN_BLOCK ? n - from : KC__NN_BLOCK;
        kc__vmath_f32(KC__VM_EXP, a + from, t, c);
        for (int64_t k = 0; k < c; ++k) y[from + k] = b[from + k] - t[k] * (float)acc;
      }
      return;
    default: /* KC__NN_LOG_SOFTMAX_JVP */
      for (int64_t from = 0; from < n; from += KC__NN_BLOCK) {
        int64_t c = n - from < KC__NN_BLOCK ? n - from : KC__NN_BLOCK;
        kc__vmath_f32(KC__VM_EXP, a + from, t, c);
        acc += kc__dot_f32_wide(t, b + from, c);
      }
      for (int64_t k = 0; k < n; ++k) y[k] = b[k] - (float)acc;
      return;
  }
}

static void kc__nn_lines(void* ctx, int64_t begin, int64_t end) {
  const kc__nn_line_job* j = ctx;
  for (int64_t l = begin; l < end; ++l) {
    if (j->f32 && j->inner == 1) {
      kc__nn_row_f32(j, l);
    } else {
      kc__nn_line(j, l);
    }
  }
}

/* kc.Softmax and kc.LogSoftmax (x), their gradients (y, dy) and
 * LogSoftmax's tangent (y, tx): along dim `axis` of the first input. */
static kc_status* kc__nn_softmax_compute(void* kernel, kc_kernel_ctx* ctx) {
  const DLTensor* a = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* b =
      kc_kernel_ctx_get_input_count(ctx) > 1 ? kc_kernel_ctx_get_input(ctx, 1) : NULL;
  DLTensor* y = kc_kernel_ctx_get_output(ctx, 0);
  int64_t axis = 0;
  int32_t d = 0;
  KC_RETURN_IF_ERROR(kc_op_attrs_get_int(kc_kernel_ctx_get_attrs(ctx), "axis", &axis));
  KC_RETURN_IF_ERROR(kc__nn_axis("axis", axis, a->ndim, &d));
  kc__nn_line_job job = {.code = kc__bi_code(kernel),
                         .f32 = kc__bi_is_f32(a),
                         .a = kc__bi_data(a),
                         .b = b ? kc__bi_data(b) : NULL,
                         .out = kc__bi_data(y),
                         .n = a->shape[d],
                         .inner = 1};
  for (int32_t i = d + 1; i < a->ndim; ++i) job.inner *= a->shape[i];
  int64_t numel = kc__bi_numel(a);
  if (numel == 0) return NULL;
  kc_thread_pool_parallel_for(kc_kernel_ctx_get_thread_pool(ctx), numel / job.n, job.n * 4 + 1,
                              kc__nn_lines, &job);
  return NULL;
}

/* The shapes of Softmax's gradient and LogSoftmax's tangent: both inputs
 * of one shape with a dim `axis`; the output theirs. */
static kc_status* kc__nn_softmax_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle* x = kc_shape_ctx_get_input(ctx, 0);
  if (kc_shape_ctx_get_input_count(ctx) > 1) {
    KC_RETURN_IF_ERROR(kc_shape_ctx_merge(ctx, x, kc_shape_ctx_get_input(ctx, 1), &x),
                       "the second input against the first");
  }
  int32_t rank = kc_shape_handle_get_rank(x);
  if (rank >= 0) {
    int64_t axis = 0;
    int32_t d = 0;
    KC_RETURN_IF_ERROR(kc_op_attrs_get_int(kc_shape_ctx_get_attrs(ctx), "axis", &axis));
    KC_RETURN_IF_ERROR(kc__nn_axis("axis", axis, rank, &d));
  }
  return kc_shape_ctx_set_output(ctx, 0, x);
}

/* ---- LayerNorm and RMSNorm ---------------------------------------------------------------- */

/* Rows of n elements (x's dims from begin_axis on); the norm's statistics
 * of a row: its mean (0 for RMSNorm) and 1 / sqrt(variance + epsilon)
 * (the mean square for RMSNorm). */
typedef struct kc__nn_norm_job {
  bool f32, layer;
  double eps;
  int64_t n, rows;
  const void *x, *scale, *bias, *dy; /* dy: the cotangent, or x's tangent */
  const void *tscale, *tbias;
  void *y, *dscale, *dbias;
  double* stats; /* the gradient's: mean and rstd of each row */
} kc__nn_norm_job;

static void kc__nn_norm_stats(const kc__nn_norm_job* j, int64_t base, double* mean, double* rstd) {
  double m = 0, v = 0;
  if (j->layer) {
    for (int64_t k = 0; k < j->n; ++k) m += kc__bi_get(j->x, j->f32, base + k);
    m /= (double)j->n;
  }
  for (int64_t k = 0; k < j->n; ++k) {
    double c = kc__bi_get(j->x, j->f32, base + k) - m;
    v += c * c;
  }
  *mean = m;
  *rstd = 1 / sqrt(v / (double)j->n + j->eps);
}

/* An f32 row's statistics on the vector sums. */
static void kc__nn_norm_stats_f32(const kc__nn_norm_job* j, const float* x, float* mean,
                                  float* rstd) {
  double n = (double)j->n;
  *mean = j->layer ? (float)(kc__sum_f32_wide(x, j->n) / n) : 0.0f;
  *rstd = (float)(1 / sqrt(kc__sum_sq_dev_f32_wide(x, j->n, *mean) / n + j->eps));
}

static void kc__nn_norm_row_f32(const kc__nn_norm_job* j, int64_t r) {
  const float* x = (const float*)j->x + r * j->n;
  const float* g = j->scale;
  float* y = (float*)j->y + r * j->n;
  float m = 0, rs = 0;
  kc__nn_norm_stats_f32(j, x, &m, &rs);
  if (j->layer) {
    const float* b = j->bias;
    for (int64_t k = 0; k < j->n; ++k) y[k] = (x[k] - m) * rs * g[k] + b[k];
  } else {
    for (int64_t k = 0; k < j->n; ++k) y[k] = x[k] * rs * g[k];
  }
}

/* y = (x - mean) rstd scale (+ bias). */
static void kc__nn_norm_rows(void* ctx, int64_t begin, int64_t end) {
  const kc__nn_norm_job* j = ctx;
  for (int64_t r = begin; r < end; ++r) {
    if (j->f32) {
      kc__nn_norm_row_f32(j, r);
      continue;
    }
    int64_t base = r * j->n;
    double m = 0, rs = 0;
    kc__nn_norm_stats(j, base, &m, &rs);
    for (int64_t k = 0; k < j->n; ++k) {
      double v = (kc__bi_get(j->x, j->f32, base + k) - m) * rs * kc__bi_get(j->scale, j->f32, k);
      if (j->layer) v += kc__bi_get(j->bias, j->f32, k);
      kc__bi_set(j->y, j->f32, base + k, v);
    }
  }
}

/* The map both the gradient and the tangent apply to a row's u (the
 * cotangent times scale, or x's tangent): rstd (u - mean(u) - xhat
 * mean(xhat u)), xhat = (x - mean) rstd, without mean(u) for RMSNorm. It is
 * its own transpose. Into out[k] as u is read from `u` through get(k). */
typedef struct kc__nn_norm_row {
  double mean, rstd, mean_u, mean_xu;
} kc__nn_norm_row;

static double kc__nn_norm_u(const kc__nn_norm_job* j, int64_t base, int64_t k, bool grad) {
  double u = kc__bi_get(j->dy, j->f32, base + k);
  return grad ? u * kc__bi_get(j->scale, j->f32, k) : u;
}

static kc__nn_norm_row kc__nn_norm_row_of(const kc__nn_norm_job* j, int64_t base, bool grad) {
  kc__nn_norm_row w = {0};
  kc__nn_norm_stats(j, base, &w.mean, &w.rstd);
  for (int64_t k = 0; k < j->n; ++k) {
    double u = kc__nn_norm_u(j, base, k, grad);
    w.mean_u += u;
    w.mean_xu += (kc__bi_get(j->x, j->f32, base + k) - w.mean) * w.rstd * u;
  }
  w.mean_u = j->layer ? w.mean_u / (double)j->n : 0;
  w.mean_xu /= (double)j->n;
  return w;
}

/* An f32 row of the gradient: u = dy scale and xhat u summed a block at a
 * time on the vector sums. */
static void kc__nn_norm_grad_row_f32(const kc__nn_norm_job* j, int64_t r) {
  const int64_t n = j->n;
  const float* x = (const float*)j->x + r * n;
  const float* dy = (const float*)j->dy + r * n;
  const float* g = j->scale;
  float* dx = (float*)j->y + r * n;
  float m = 0, rs = 0, t[KC__NN_BLOCK];
  kc__nn_norm_stats_f32(j, x, &m, &rs);
  double su = 0, sxu = 0;
  for (int64_t from = 0; from < n; from += KC__NN_BLOCK) {
    int64_t c = n - from < KC__NN_BLOCK ? n - from : KC__NN_BLOCK;
    if (j->layer) su += kc__dot_f32_wide(dy + from, g + from, c);
    for (int64_t k = 0; k < c; ++k) t[k] = (x[from + k] - m) * dy[from + k] * g[from + k];
    sxu += kc__sum_f32_wide(t, c);
  }
  float mean_u = (float)(su / (double)n), mean_xu = (float)(sxu * rs / (double)n);
  for (int64_t k = 0; k < n; ++k) {
    float xhat = (x[k] - m) * rs;
    dx[k] = rs * (dy[k] * g[k] - mean_u - xhat * mean_xu);
  }
  j->stats[2 * r] = m;
  j->stats[2 * r + 1] = rs;
}

/* The gradient's dx, row by row (and each row's statistics kept). */
static void kc__nn_norm_grad_rows(void* ctx, int64_t begin, int64_t end) {
  const kc__nn_norm_job* j = ctx;
  for (int64_t r = begin; r < end; ++r) {
    if (j->f32) {
      kc__nn_norm_grad_row_f32(j, r);
      continue;
    }
    int64_t base = r * j->n;
    kc__nn_norm_row w = kc__nn_norm_row_of(j, base, true);
    j->stats[2 * r] = w.mean;
    j->stats[2 * r + 1] = w.rstd;
    for (int64_t k = 0; k < j->n; ++k) {
      double xhat = (kc__bi_get(j->x, j->f32, base + k) - w.mean) * w.rstd;
      double u = kc__nn_norm_u(j, base, k, true);
      kc__bi_set(j->y, j->f32, base + k, w.rstd * (u - w.mean_u - xhat * w.mean_xu));
    }
  }
}

/* dscale = sum over rows of dy xhat, dbias = sum of dy, a block of
 * columns at a time. */
static void kc__nn_norm_grad_cols(void* ctx, int64_t begin, int64_t end) {
  const kc__nn_norm_job* j = ctx;
  double ds[KC__NN_BLOCK], db[KC__NN_BLOCK];
  for (int64_t c = begin; c < end; ++c) {
    int64_t c0 = c * KC__NN_BLOCK, cols = j->n - c0 < KC__NN_BLOCK ? j->n - c0 : KC__NN_BLOCK;
    for (int64_t k = 0; k < cols; ++k) ds[k] = db[k] = 0;
    for (int64_t r = 0; r < j->rows; ++r) {
      int64_t base = r * j->n + c0;
      double m = j->stats[2 * r], rs = j->stats[2 * r + 1];
      if (j->f32) {
        const float* x = (const float*)j->x + base;
        const float* dy = (const float*)j->dy + base;
        float mf = (float)m, rf = (float)rs;
        for (int64_t k = 0; k < cols; ++k) {
          ds[k] += dy[k] * ((x[k] - mf) * rf);
          db[k] += dy[k];
        }
        continue;
      }
      for (int64_t k = 0; k < cols; ++k) {
        double g = kc__bi_get(j->dy, j->f32, base + k);
        ds[k] += g * (kc__bi_get(j->x, j->f32, base + k) - m) * rs;
        db[k] += g;
      }
    }
    for (int64_t k = 0; k < cols; ++k) {
      kc__bi_set(j->dscale, j->f32, c0 + k, ds[k]);
      if (j->layer) kc__bi_set(j->dbias, j->f32, c0 + k, db[k]);
    }
  }
}

/* The tangent: txhat scale + xhat tscale (+ tbias). */
static void kc__nn_norm_jvp_rows(void* ctx, int64_t begin, int64_t end) {
  const kc__nn_norm_job* j = ctx;
  for (int64_t r = begin; r < end; ++r) {
    int64_t base = r * j->n;
    kc__nn_norm_row w = kc__nn_norm_row_of(j, base, false);
    for (int64_t k = 0; k < j->n; ++k) {
      double xhat = (kc__bi_get(j->x, j->f32, base + k) - w.mean) * w.rstd;
      double u = kc__nn_norm_u(j, base, k, false);
      double t = w.rstd * (u - w.mean_u - xhat * w.mean_xu) * kc__bi_get(j->scale, j->f32, k) +
                 xhat * kc__bi_get(j->tscale, j->f32, k);
      if (j->layer) t += kc__bi_get(j->tbias, j->f32, k);
      kc__bi_set(j->y, j->f32, base + k, t);
    }
  }
}

/* What the norms' kernels share: rows from begin_axis, epsilon. */
static kc_status* kc__nn_norm_prepare(void* kernel, kc_kernel_ctx* ctx, kc__nn_norm_job* j) {
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  const kc_op_attrs* attrs = kc_kernel_ctx_get_attrs(ctx);
  int64_t begin = 0;
  int32_t d = 0;
  KC_RETURN_IF_ERROR(kc_op_attrs_get_int(attrs, "begin_axis", &begin));
  KC_RETURN_IF_ERROR(kc_op_attrs_get_float(attrs, "epsilon", &j->eps));
  KC_RETURN_IF_ERROR(kc__nn_axis("begin_axis", begin, x->ndim, &d));
  j->f32 = kc__bi_is_f32(x);
  j->layer = kc__bi_code(kernel) == KC__NN_LAYER;
  j->x = kc__bi_data(x);
  j->scale = kc__bi_data(kc_kernel_ctx_get_input(ctx, 1));
  j->n = 1;
  for (int32_t i = d; i < x->ndim; ++i) j->n *= x->shape[i];
  j->rows = j->n ? kc__bi_numel(x) / j->n : 0;
  return NULL;
}

/* kc.LayerNorm(x, scale, bias), kc.RMSNorm(x, scale). */
static kc_status* kc__nn_norm_compute(void* kernel, kc_kernel_ctx* ctx) {
  kc__nn_norm_job j = {0};
  KC_RETURN_IF_ERROR(kc__nn_norm_prepare(kernel, ctx, &j));
  if (j.layer) j.bias = kc__bi_data(kc_kernel_ctx_get_input(ctx, 2));
  j.y = kc__bi_data(kc_kernel_ctx_get_output(ctx, 0));
  kc_thread_pool_parallel_for(kc_kernel_ctx_get_thread_pool(ctx), j.rows, j.n * 4 + 1,
                              kc__nn_norm_rows, &j);
  return NULL;
}

/* kc.LayerNormGrad(x, scale, dy) -> (dx, dscale, dbias), kc.RMSNormGrad
 * without dbias. */
static kc_status* kc__nn_norm_grad_compute(void* kernel, kc_kernel_ctx* ctx) {
  kc__nn_norm_job j = {0};
  KC_RETURN_IF_ERROR(kc__nn_norm_prepare(kernel, ctx, &j));
  j.dy = kc__bi_data(kc_kernel_ctx_get_input(ctx, 2));
  j.y = kc__bi_data(kc_kernel_ctx_get_output(ctx, 0));
  j.dscale = kc__bi_data(kc_kernel_ctx_get_output(ctx, 1));
  if (j.layer) j.dbias = kc__bi_data(kc_kernel_ctx_get_output(ctx, 2));
  KC_RETURN_IF_ERROR(kc_kernel_ctx_allocate_temp(
      ctx, (size_t)(j.rows ? j.rows : 1) * 2 * sizeof(double), 0, (void**)&j.stats));
  kc_thread_pool* pool = kc_kernel_ctx_get_thread_pool(ctx);
  kc_thread_pool_parallel_for(pool, j.rows, j.n * 8 + 1, kc__nn_norm_grad_rows, &j);
  kc_thread_pool_parallel_for(pool, (j.n + KC__NN_BLOCK - 1) / KC__NN_BLOCK,
                              j.rows * KC__NN_BLOCK + 1, kc__nn_norm_grad_cols, &j);
  return NULL;
}

/* kc.LayerNormJvp(x, scale, tx, tscale, tbias) -> ty, kc.RMSNormJvp
 * without tbias. */
static kc_status* kc__nn_norm_jvp_compute(void* kernel, kc_kernel_ctx* ctx) {
  kc__nn_norm_job j = {0};
  KC_RETURN_IF_ERROR(kc__nn_norm_prepare(kernel, ctx, &j));
  j.dy = kc__bi_data(kc_kernel_ctx_get_input(ctx, 2));
  j.tscale = kc__bi_data(kc_kernel_ctx_get_input(ctx, 3));
  if (j.layer) j.tbias = kc__bi_data(kc_kernel_ctx_get_input(ctx, 4));
  j.y = kc__bi_data(kc_kernel_ctx_get_output(ctx, 0));
  kc_thread_pool_parallel_for(kc_kernel_ctx_get_thread_pool(ctx), j.rows, j.n * 8 + 1,
                              kc__nn_norm_jvp_rows, &j);
  return NULL;
}

/* The norms' shapes. Input 0 is x; each other input is x's shape or the
 * normalised dims' (x's from begin_axis on): `like` lists which, 'x' or
 * 's', one letter per input. Outputs: x's, then `outputs` - 1 of the
 * normalised dims'. */
static kc_status* kc__nn_norm_shape_of(kc_shape_ctx* ctx, const char* like, int32_t outputs) {
  static const char* const kNames[] = {"x", "scale", "the third input", "the fourth input",
                                       "the fifth input"};
  const kc_shape_handle* x = kc_shape_ctx_get_input(ctx, 0);
  for (int32_t i = 1; like[i]; ++i) {
    if (like[i] == 'x') {
      KC_RETURN_IF_ERROR(kc_shape_ctx_merge(ctx, x, kc_shape_ctx_get_input(ctx, i), &x),
                         "%s against x", kNames[i]);
    }
  }
  int32_t rank = kc_shape_handle_get_rank(x);
  const kc_shape_handle* s = kc_shape_ctx_get_input(ctx, 1);
  if (rank >= 0) {
    int64_t begin = 0;
    int32_t d = 0;
    KC_RETURN_IF_ERROR(kc_op_attrs_get_int(kc_shape_ctx_get_attrs(ctx), "begin_axis", &begin));
    KC_RETURN_IF_ERROR(kc__nn_axis("begin_axis", begin, rank, &d));
    KC_RETURN_IF_ERROR(kc_shape_ctx_subshape(ctx, x, d, rank, &s));
  }
  for (int32_t i = 1; like[i]; ++i) {
    if (like[i] == 's') {
      KC_RETURN_IF_ERROR(kc_shape_ctx_merge(ctx, s, kc_shape_ctx_get_input(ctx, i), &s),
                         "%s against x's dims from begin_axis on", kNames[i]);
    }
  }
  KC_RETURN_IF_ERROR(kc_shape_ctx_set_output(ctx, 0, x));
  for (int32_t o = 1; o < outputs; ++o) KC_RETURN_IF_ERROR(kc_shape_ctx_set_output(ctx, o, s));
  return NULL;
}

static kc_status* kc__nn_layer_shape(kc_shape_ctx* ctx) {
  return kc__nn_norm_shape_of(ctx, "xss", 1);
}
static kc_status* kc__nn_layer_grad_shape(kc_shape_ctx* ctx) {
  return kc__nn_norm_shape_of(ctx, "xsx", 3);
}
static kc_status* kc__nn_layer_jvp_shape(kc_shape_ctx* ctx) {
  return kc__nn_norm_shape_of(ctx, "xsxss", 1);
}
static kc_status* kc__nn_rms_shape(kc_shape_ctx* ctx) { return kc__nn_norm_shape_of(ctx, "xs", 1); }
static kc_status* kc__nn_rms_grad_shape(kc_shape_ctx* ctx) {
  return kc__nn_norm_shape_of(ctx, "xsx", 2);
}
static kc_status* kc__nn_rms_jvp_shape(kc_shape_ctx* ctx) {
  return kc__nn_norm_shape_of(ctx, "xsxs", 1);
}

/* ---- the table -------------------------------------------------------------------------- */

#define KC__NN_AXIS_ATTRS \
  { KC__BI_T, "axis: int = -1", NULL }
#define KC__NN_NORM_ATTRS(EPS) \
  { KC__BI_T, "begin_axis: int = -1", "epsilon: float = " EPS, NULL }

#define KC__NN_LINE_OP(NAME, IN, OUT, CODE, DOC, SHAPE, GRAD, JVP)                        \
  {                                                                                       \
    .name = "kc." NAME, .inputs = IN, .outputs = {OUT, NULL}, .attrs = KC__NN_AXIS_ATTRS, \
    .doc = DOC, .shape_fn = SHAPE, .gradient = GRAD, .jvp = JVP,                          \
    .batching = KC_OP_BATCH_SEQUENTIAL, .compute = kc__nn_softmax_compute, .code = CODE   \
  }

const kc__bi_op kc__bi_nn_ops[] = {
    KC__NN_LINE_OP("Softmax", KC__BI_LIST("x: T"), "y: T", KC__NN_SOFTMAX,
                   "y = e^x / sum(e^x) along dim `axis` (negative counts from the end).",
                   kc__nn_softmax_shape, "kc.SoftmaxGrad(y, grad(y)) -> grad(x)",
                   "kc.SoftmaxGrad(y, tangent(x)) -> tangent(y)"),
    KC__NN_LINE_OP("LogSoftmax", KC__BI_LIST("x: T"), "y: T", KC__NN_LOG_SOFTMAX,
                   "y = x - log(sum(e^x)) along dim `axis` (negative counts from the end).",
                   kc__nn_softmax_shape, "kc.LogSoftmaxGrad(y, grad(y)) -> grad(x)",
                   "kc.LogSoftmaxJvp(y, tangent(x)) -> tangent(y)"),
    KC__NN_LINE_OP("SoftmaxGrad", KC__BI_LIST("y: T", "dy: T"), "dx: T", KC__NN_SOFTMAX_GRAD,
                   "dx = y (dy - sum(y dy)) along `axis`: kc.Softmax's gradient (and, "
                   "being its own transpose, its tangent) from its output y.",
                   kc__nn_softmax_shape, NULL, NULL),
    KC__NN_LINE_OP("LogSoftmaxGrad", KC__BI_LIST("y: T", "dy: T"), "dx: T", KC__NN_LOG_SOFTMAX_GRAD,
                   "dx = dy - e^y sum(dy) along `axis`: kc.LogSoftmax's gradient from its "
                   "output y.",
                   kc__nn_softmax_shape, NULL, NULL),
    KC__NN_LINE_OP("LogSoftmaxJvp", KC__BI_LIST("y: T", "tx: T"), "ty: T", KC__NN_LOG_SOFTMAX_JVP,
                   "ty = tx - sum(e^y tx) along `axis`: kc.LogSoftmax's tangent from its "
                   "output y.",
                   kc__nn_softmax_shape, NULL, NULL),
    {.name = "kc.LayerNorm",
     .inputs = KC__BI_LIST("x: T", "scale: T", "bias: T"),
     .outputs = {"y: T", NULL},
     .attrs = KC__NN_NORM_ATTRS("1e-5"),
     .doc = "y = (x - mean) / sqrt(variance + epsilon) scale + bias, the mean and (biased) "
            "variance over x's dims from `begin_axis` on, which are scale's and bias's shape.",
     .shape_fn = kc__nn_layer_shape,
     .gradient = "kc.LayerNormGrad(x, scale, grad(y)) -> (grad(x), grad(scale), grad(bias))",
     .jvp = "kc.LayerNormJvp(x, scale, tangent(x), tangent(scale), tangent(bias)) -> tangent(y)",
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__nn_norm_compute,
     .code = KC__NN_LAYER},
    {.name = "kc.LayerNormGrad",
     .inputs = KC__BI_LIST("x: T", "scale: T", "dy: T"),
     .outputs = {"dx: T", "dscale: T", "dbias: T", NULL},
     .attrs = KC__NN_NORM_ATTRS("1e-5"),
     .doc = "The gradient of kc.LayerNorm.",
     .shape_fn = kc__nn_layer_grad_shape,
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__nn_norm_grad_compute,
     .code = KC__NN_LAYER},
    {.name = "kc.LayerNormJvp",
     .inputs = KC__BI_LIST("x: T", "scale: T", "tx: T", "tscale: T", "tbias: T"),
     .outputs = {"ty: T", NULL},
     .attrs = KC__NN_NORM_ATTRS("1e-5"),
     .doc = "The tangent of kc.LayerNorm, from x, scale and the three tangents.",
     .shape_fn = kc__nn_layer_jvp_shape,
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__nn_norm_jvp_compute,
     .code = KC__NN_LAYER},
    {.name = "kc.RMSNorm",
     .inputs = KC__BI_LIST("x: T", "scale: T"),
     .outputs = {"y: T", NULL},
     .attrs = KC__NN_NORM_ATTRS("1e-6"),
     .doc = "y = x / sqrt(mean(x^2) + epsilon) scale, the mean over x's dims from "
            "`begin_axis` on, which are scale's shape.",
     .shape_fn = kc__nn_rms_shape,
     .gradient = "kc.RMSNormGrad(x, scale, grad(y)) -> (grad(x), grad(scale))",
     .jvp = "kc.RMSNormJvp(x, scale, tangent(x), tangent(scale)) -> tangent(y)",
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__nn_norm_compute,
     .code = KC__NN_RMS},
    {.name = "kc.RMSNormGrad",
     .inputs = KC__BI_LIST("x: T", "scale: T", "dy: T"),
     .outputs = {"dx: T", "dscale: T", NULL},
     .attrs = KC__NN_NORM_ATTRS("1e-6"),
     .doc = "The gradient of kc.RMSNorm.",
     .shape_fn = kc__nn_rms_grad_shape,
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__nn_norm_grad_compute,
     .code = KC__NN_RMS},
    {.name = "kc.RMSNormJvp",
     .inputs = KC__BI_LIST("x: T", "scale: T", "tx: T", "tscale: T"),
     .outputs = {"ty: T", NULL},
     .attrs = KC__NN_NORM_ATTRS("1e-6"),
     .doc = "The tangent of kc.RMSNorm, from x, scale and their tangents.",
     .shape_fn = kc__nn_rms_jvp_shape,
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__nn_norm_jvp_compute,
     .code = KC__NN_RMS},
};
const size_t kc__bi_nn_op_count = sizeof kc__bi_nn_ops / sizeof kc__bi_nn_ops[0];
