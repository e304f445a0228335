/* kc.Sum, kc.Mean and kc.Max over axes, and their gradients (the cotangent
 * broadcast back, divided by the count for the mean, shared among the
 * maxima for the max). Sums accumulate in double. */
#include <math.h>
#include <string.h>

#include "builtin/builtin_internal.h"
#include "internal/common.h"
#include "kernels/reduce.h"

enum { KC__RD_SUM, KC__RD_MEAN, KC__RD_MAX };

/* The reduced dims of `x` (rank `rank`) from the attr `axes`, negative
 * ones counting from the end; the shape function has checked them. */
static kc_status* kc__rd_axes(kc_kernel_ctx* ctx, int32_t rank, bool* reduced) {
  int64_t axes[KC__BI_MAX_RANK];
  int32_t count = 0;
  KC_RETURN_IF_ERROR(kc_op_attrs_get_int_list(kc_kernel_ctx_get_attrs(ctx), "axes", axes,
                                              KC__BI_MAX_RANK, &count));
  for (int32_t d = 0; d < rank; ++d) reduced[d] = false;
  for (int32_t i = 0; i < count && i < KC__BI_MAX_RANK; ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a >= 0 && a < rank) reduced[a] = true;
  }
  return NULL;
}

/* Strides of the reduced tensor against x's dims: 0 along reduced dims;
 * and the number of x's elements that go into each output element. */
static int64_t kc__rd_layout(const DLTensor* x, const bool* reduced, int64_t* strides) {
  int64_t s = 1, count = 1;
  for (int32_t d = x->ndim - 1; d >= 0; --d) {
    if (reduced[d]) {
      strides[d] = 0;
      count *= x->shape[d];
    } else {
      strides[d] = s;
      s *= x->shape[d];
    }
  }
  return count;
}

/* What both kernels start from: x's reduced dims, the strides of the
 * reduced tensor against x's dims and the count per output element. */
static kc_status* kc__rd_prepare(kc_kernel_ctx* ctx, const DLTensor* x, bool* reduced,
                                 int64_t* strides, int64_t* count) {
  if (x->ndim > KC__BI_MAX_RANK) {
    return kc_status_create(KC_INVALID_ARGUMENT, "rank %d: at most %d", x->ndim, KC__BI_MAX_RANK);
  }
  KC_RETURN_IF_ERROR(kc__rd_axes(ctx, x->ndim, reduced));
  *count = kc__rd_layout(x, reduced, strides);
  return NULL;
}

/* Whether the reduced dims are consecutive (dims of size 1 count as
 * either), so that x is [outer, count, inner] with the middle one reduced;
 * then outer and inner. */
static bool kc__rd_block(const DLTensor* x, const bool* reduced, int64_t* outer, int64_t* inner) {
  int32_t first = -1, last = -1;
  for (int32_t d = 0; d < x->ndim; ++d) {
    if (reduced[d] && x->shape[d] != 1) {
      if (first < 0) first = d;
      last = d;
    }
  }
  *outer = *inner = 1;
  if (first < 0) {
    for (int32_t d = 0; d < x->ndim; ++d) *outer *= x->shape[d];
    return true;
  }
  for (int32_t d = first; d <= last; ++d) {
    if (!reduced[d] && x->shape[d] != 1) return false;
  }
  for (int32_t d = 0; d < first; ++d) *outer *= x->shape[d];
  for (int32_t d = last + 1; d < x->ndim; ++d) *inner *= x->shape[d];
  return true;
}

/* Columns of the inner dim a task sums at once, accumulated in double
 * (at most; fewer when that leaves a participant of the pool idle, down
 * to KC__RD_MIN_COLS: one unit a participant, as wide as that allows,
 * since each row of a unit is a run read on its own, and 512-column runs
 * summed [1024, 1024] over its rows 15-20% faster than 256-column ones
 * two a participant); rows of f32 columns added in f32 before they are.
 * Each column's sum is the same however the columns are shared out. */
#define KC__RD_COLS 2048
#define KC__RD_MIN_COLS 256
#define KC__RD_ROWS 16

typedef struct kc__rd_job {
  bool f32, max;
  const void* x;
  void* y;
  int64_t count, inner, width, chunks; /* width: columns a unit, chunks: units a row */
  double scale;
} kc__rd_job;

static inline double kc__rd_at(const kc__rd_job* j, int64_t i) {
  return j->f32 ? (double)((const float*)j->x)[i] : ((const double*)j->x)[i];
}

static inline void kc__rd_put(const kc__rd_job* j, int64_t i, double v) {
  if (j->f32) {
    ((float*)j->y)[i] = (float)v;
  } else {
    ((double*)j->y)[i] = v;
  }
}

/* The sum of j->count elements from `base`, in double (f32 blocks summed
 * on vectors, kernels/reduce.h), and their max: NaN if any is NaN, -inf
 * over none. */
static double kc__rd_row(const kc__rd_job* j, int64_t base) {
  if (j->f32) return kc__sum_f32_wide((const float*)j->x + base, j->count);
  return kc__sum_f64(0, (const double*)j->x + base, j->count);
}

static double kc__rd_row_max(const kc__rd_job* j, int64_t base) {
  if (j->f32) {
    bool nan = false;
    float m = kc__max_f32_relaxed((const float*)j->x + base, j->count, &nan);
    return nan ? NAN : m;
  }
  return kc__minmax_f64(-INFINITY, (const double*)j->x + base, j->count, true);
}

/* acc = max(acc, v), NaN kept once it is in. */
static inline double kc__rd_max(double acc, double v) { return v > acc || v != v ? v : acc; }

/* Units: (outer index, chunk of the inner dim). A row (inner 1) sums with
 * four partial sums; columns add KC__RD_ROWS reduced rows at a time into
 * their sums, a block of columns in registers down those rows
 * (kc__acc_rows_f32_wide). */
static void kc__rd_units(void* ctx, int64_t begin, int64_t end) {
  const kc__rd_job* j = ctx;
  double acc[KC__RD_COLS];
  if (j->inner == 1) { /* a unit a row: no division a row */
    for (int64_t o = begin; o < end; ++o) {
      int64_t base = o * j->count;
      kc__rd_put(j, o, j->max ? kc__rd_row_max(j, base) : kc__rd_row(j, base) * j->scale);
    }
    return;
  }
  for (int64_t u = begin; u < end; ++u) {
    int64_t o = u / j->chunks, c0 = (u % j->chunks) * j->width;
    int64_t cols = j->inner - c0 < j->width ? j->inner - c0 : j->width;
    int64_t base = o * j->count * j->inner + c0;
    for (int64_t i = 0; i < cols; ++i) acc[i] = j->max ? -INFINITY : 0;
    for (int64_t r = 0; r < j->count; ++r) {
      int64_t row = base + r * j->inner;
      if (j->max) {
        for (int64_t i = 0; i < cols; ++i) acc[i] = kc__rd_max(acc[i], kc__rd_at(j, row + i));
      } else if (j->f32) {
        /* KC__RD_ROWS rows at a time added in f32 on vectors, each such
         * partial sum then into the double sums. */
        int64_t rows = j->count - r < KC__RD_ROWS ? j->count - r : KC__RD_ROWS;
        kc__acc_rows_f32_wide(acc, (const float*)j->x + row, j->inner, rows, cols);
        r += rows - 1;
      } else {
        const double* x = (const double*)j->x + row;
        for (int64_t i = 0; i < cols; ++i) acc[i] += x[i];
      }
    }
    for (int64_t i = 0; i < cols; ++i) kc__rd_put(j, o * j->inner + c0 + i, acc[i] * j->scale);
  }
}

static kc_status* kc__rd_compute(void* kernel, kc_kernel_ctx* ctx) {
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  DLTensor* y = kc_kernel_ctx_get_output(ctx, 0);
  bool reduced[KC__BI_MAX_RANK];
  int64_t strides[KC__BI_MAX_RANK], count = 0;
  KC_RETURN_IF_ERROR(kc__rd_prepare(ctx, x, reduced, strides, &count));
  int64_t ny = kc__bi_numel(y), nx = kc__bi_numel(x);
  kc__rd_job job = {.f32 = kc__bi_is_f32(x),
                    .max = kc__bi_code(kernel) == KC__RD_MAX,
                    .x = kc__bi_data(x),
                    .y = kc__bi_data(y),
                    .count = count,
                    .scale = kc__bi_code(kernel) == KC__RD_MEAN ? 1.0 / (double)count : 1.0};
  int64_t outer = 0;
  if (nx > 0 && kc__rd_block(x, reduced, &outer, &job.inner)) {
    kc_thread_pool* pool = kc_kernel_ctx_get_thread_pool(ctx);
    int64_t want = kc_thread_pool_get_size(pool);
    job.width = KC__RD_COLS;
    while (job.width > KC__RD_MIN_COLS &&
           outer * ((job.inner + job.width - 1) / job.width) < want) {
      job.width /= 2;
    }
    job.chunks = (job.inner + job.width - 1) / job.width;
    int64_t per_unit = count * (job.inner < job.width ? job.inner : job.width);
    kc_thread_pool_parallel_for(pool, outer * job.chunks, per_unit / 2 + 1, kc__rd_units, &job);
    return NULL;
  }
  /* Reduced dims apart from each other (or nothing to read): element by
   * element into sums in double. */
  double* acc = NULL;
  KC_RETURN_IF_ERROR(
      kc_kernel_ctx_allocate_temp(ctx, (size_t)(ny ? ny : 1) * sizeof(double), 0, (void**)&acc));
  for (int64_t r = 0; r < ny; ++r) acc[r] = job.max ? -INFINITY : 0;
  for (int64_t i = 0; i < nx; ++i) {
    double* a = &acc[kc__bi_offset(i, x->ndim, x->shape, strides)];
    *a = job.max ? kc__rd_max(*a, kc__rd_at(&job, i)) : *a + kc__rd_at(&job, i);
  }
  for (int64_t r = 0; r < ny; ++r) kc__rd_put(&job, r, job.max ? acc[r] : acc[r] * job.scale);
  return NULL;
}

/* kc.SumGrad(x, dy) -> dx = dy broadcast back over the reduced dims
 * (kc.MeanGrad: divided by their size). */
static kc_status* kc__rd_grad_compute(void* kernel, kc_kernel_ctx* ctx) {
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* dy = kc_kernel_ctx_get_input(ctx, 1);
  DLTensor* dx = kc_kernel_ctx_get_output(ctx, 0);
  bool reduced[KC__BI_MAX_RANK];
  int64_t strides[KC__BI_MAX_RANK], count = 0;
  KC_RETURN_IF_ERROR(kc__rd_prepare(ctx, x, reduced, strides, &count));
  double scale = kc__bi_code(kernel) == KC__RD_MEAN ? 1.0 / (double)count : 1.0;
  int64_t nx = kc__bi_numel(x);
  if (kc__bi_is_f32(x)) {
    const float* g = kc__bi_data(dy);
    float* out = kc__bi_data(dx);
    for (int64_t i = 0; i < nx; ++i) {
      out[i] = (float)(g[kc__bi_offset(i, x->ndim, x->shape, strides)] * scale);
    }
  } else {
    const double* g = kc__bi_data(dy);
    double* out = kc__bi_data(dx);
    for (int64_t i = 0; i < nx; ++i)
      out[i] = g[kc__bi_offset(i, x->ndim, x->shape, strides)] * scale;
  }
  return NULL;
}

/* kc.MaxGrad(x, y, dy) -> dx: each dy shared equally among the elements of
 * x equal to its max (as torch's amax and JAX's max do), 0 elsewhere; and
 * kc.MaxJvp(x, y, tx) -> ty: the mean of tx over those elements. */
static kc_status* kc__rd_max_grad_compute(void* kernel, kc_kernel_ctx* ctx) {
  bool jvp = kc__bi_code(kernel) != KC__RD_MAX;
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* y = kc_kernel_ctx_get_input(ctx, 1);
  const DLTensor* g = kc_kernel_ctx_get_input(ctx, 2);
  DLTensor* out = kc_kernel_ctx_get_output(ctx, 0);
  bool reduced[KC__BI_MAX_RANK];
  int64_t strides[KC__BI_MAX_RANK], count = 0;
  KC_RETURN_IF_ERROR(kc__rd_prepare(ctx, x, reduced, strides, &count));
  int64_t nx = kc__bi_numel(x), ny = kc__bi_numel(y);
  bool f32 = kc__bi_is_f32(x);
  kc__rd_job xs = {.f32 = f32, .x = kc__bi_data(x)}, ys = {.f32 = f32, .x = kc__bi_data(y)};
  kc__rd_job gs = {.f32 = f32, .x = kc__bi_data(g), .y = kc__bi_data(out)};
  double* ties = NULL;
  KC_RETURN_IF_ERROR(kc_kernel_ctx_allocate_temp(ctx, (size_t)(ny ? ny : 1) * 2 * sizeof(double),
                                                 0, (void**)&ties));
  double* sums = ties + ny;
  for (int64_t r = 0; r < ny; ++r) ties[r] = sums[r] = 0;
  for (int64_t i = 0; i < nx; ++i) {
    int64_t o = kc__bi_offset(i, x->ndim, x->shape, strides);
    if (kc__rd_at(&xs, i) == kc__rd_at(&ys, o)) {
      ties[o] += 1;
      if (jvp) sums[o] += kc__rd_at(&gs, i);
    }
  }
  if (jvp) {
    for (int64_t r = 0; r < ny; ++r) kc__rd_put(&gs, r, ties[r] > 0 ? sums[r] / ties[r] : 0);
    return NULL;
  }
  for (int64_t i = 0; i < nx; ++i) {
    int64_t o = kc__bi_offset(i, x->ndim, x->shape, strides);
    kc__rd_put(&gs, i, kc__rd_at(&xs, i) == kc__rd_at(&ys, o) ? kc__rd_at(&gs, o) / ties[o] : 0);
  }
  return NULL;
}

/* The shapes of the gradient and tangent ops: input 0 is x, each other
 * input x's shape or x reduced over `axes` (kept as 1 with keepdims):
 * `like` lists which, 'x' or 'r', one letter per input; the output is x's
 * shape or the reduced one, `out`. */
static kc_status* kc__rd_shape_of(kc_shape_ctx* ctx, const char* like, const char* const* names,
                                  char out) {
  const kc_shape_handle* x = kc_shape_ctx_get_input(ctx, 0);
  int32_t rank = kc_shape_handle_get_rank(x);
  if (rank > KC__BI_MAX_RANK) {
    return kc_status_create(KC_INVALID_ARGUMENT, "rank %d: at most %d", rank, KC__BI_MAX_RANK);
  }
  if (rank >= 0) {
    const kc_op_attrs* attrs = kc_shape_ctx_get_attrs(ctx);
    int64_t axes[KC__BI_MAX_RANK];
    int32_t count = 0;
    bool keep = false, reduced[KC__BI_MAX_RANK] = {false};
    KC_RETURN_IF_ERROR(kc_op_attrs_get_int_list(attrs, "axes", axes, KC__BI_MAX_RANK, &count));
    KC_RETURN_IF_ERROR(kc_op_attrs_get_bool(attrs, "keepdims", &keep));
    for (int32_t i = 0; i < count; ++i) {
      int64_t a = i < KC__BI_MAX_RANK ? axes[i] : rank;
      if (a < 0) a += rank;
      if (a < 0 || a >= rank) {
        return kc_status_create(KC_INVALID_ARGUMENT, "axes: item %d is out of range for rank %d", i,
                                rank);
      }
      reduced[a] = true;
    }
    int64_t dims[KC__BI_MAX_RANK];
    int32_t n = 0;
    for (int32_t d = 0; d < rank; ++d) {
      if (!reduced[d]) {
        dims[n++] = kc_shape_handle_get_dim(x, d);
      } else if (keep) {
        dims[n++] = 1;
      }
    }
    const kc_shape_handle *y = NULL, *same = NULL;
    KC_RETURN_IF_ERROR(kc_shape_ctx_make_shape(ctx, n, dims, &y));
    for (int32_t i = 1; like[i]; ++i) {
      KC_RETURN_IF_ERROR(
          kc_shape_ctx_merge(ctx, like[i] == 'x' ? x : y, kc_shape_ctx_get_input(ctx, i), &same),
          "%s against x%s", names[i], like[i] == 'x' ? "" : " reduced over axes");
    }
    if (out == 'r') return kc_shape_ctx_set_output(ctx, 0, y);
  } else if (out == 'r') {
    return kc_shape_fn_reduce(ctx);
  }
  return kc_shape_ctx_set_output(ctx, 0, x);
}

/* SumGrad(x, dy), MeanGrad: dy must be x reduced; dx is x's. */
static kc_status* kc__rd_grad_shape(kc_shape_ctx* ctx) {
  static const char* const kNames[] = {"x", "dy"};
  return kc__rd_shape_of(ctx, "xr", kNames, 'x');
}
/* MaxGrad(x, y, dy) -> dx. */
static kc_status* kc__rd_max_grad_shape(kc_shape_ctx* ctx) {
  static const char* const kNames[] = {"x", "y", "dy"};
  return kc__rd_shape_of(ctx, "xrr", kNames, 'x');
}
/* MaxJvp(x, y, tx) -> ty. */
static kc_status* kc__rd_max_jvp_shape(kc_shape_ctx* ctx) {
  static const char* const kNames[] = {"x", "y", "tx"};
  return kc__rd_shape_of(ctx, "xrx", kNames, 'r');
}

#define KC__RD_ATTRS \
  { KC__BI_T, "axes: list(int)", "keepdims: bool = false", NULL }

#define KC__RD_OPS(NAME, CODE, DOC, GRAD_DOC)                                                 \
  {.name = "kc." NAME,                                                                        \
   .inputs = {"x: T", NULL},                                                                  \
   .outputs = {"y: T", NULL},                                                                 \
   .attrs = KC__RD_ATTRS,                                                                     \
   .doc = DOC,                                                                                \
   .shape_fn = kc_shape_fn_reduce,                                                            \
   .gradient = "kc." NAME "Grad(x, grad(y)) -> grad(x)",                                      \
   .jvp = "kc." NAME "(tangent(x)) -> tangent(y)",                                            \
   .batching = KC_OP_BATCH_SEQUENTIAL,                                                        \
   .compute = kc__rd_compute,                                                                 \
   .code = CODE},                                                                             \
  {                                                                                           \
    .name = "kc." NAME "Grad", .inputs = {"x: T", "dy: T", NULL}, .outputs = {"dx: T", NULL}, \
    .attrs = KC__RD_ATTRS, .doc = GRAD_DOC, .shape_fn = kc__rd_grad_shape,                    \
    .batching = KC_OP_BATCH_SEQUENTIAL, .compute = kc__rd_grad_compute, .code = CODE          \
  }

const kc__bi_op kc__bi_reduce_ops[] = {
    KC__RD_OPS("Sum", KC__RD_SUM,
               "y = the sum of x over `axes` (negative ones count from the end), "
               "those dims dropped, or kept as 1 with keepdims.",
               "The gradient of kc.Sum: dy broadcast back over the summed dims."),
    KC__RD_OPS("Mean", KC__RD_MEAN,
               "y = the mean of x over `axes` (negative ones count from the end), "
               "those dims dropped, or kept as 1 with keepdims.",
               "The gradient of kc.Mean: dy broadcast back over the averaged dims, "
               "divided by their size."),
    {.name = "kc.Max",
     .inputs = KC__BI_LIST("x: T"),
     .outputs = {"y: T", NULL},
     .attrs = KC__RD_ATTRS,
     .doc = "y = the max of x over `axes` (negative ones count from the end), those dims "
            "dropped, or kept as 1 with keepdims; NaN if any is NaN, -inf over none.",
     .shape_fn = kc_shape_fn_reduce,
     .gradient = "kc.MaxGrad(x, y, grad(y)) -> grad(x)",
     .jvp = "kc.MaxJvp(x, y, tangent(x)) -> tangent(y)",
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__rd_compute,
     .code = KC__RD_MAX},
    {.name = "kc.MaxGrad",
     .inputs = KC__BI_LIST("x: T", "y: T", "dy: T"),
     .outputs = {"dx: T", NULL},
     .attrs = KC__RD_ATTRS,
     .doc = "The gradient of kc.Max from x and its max y: each dy shared equally among the "
            "elements equal to the max, 0 elsewhere.",
     .shape_fn = kc__rd_max_grad_shape,
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__rd_max_grad_compute,
     .code = KC__RD_MAX},
    {.name = "kc.MaxJvp",
     .inputs = KC__BI_LIST("x: T", "y: T", "tx: T"),
     .outputs = {"ty: T", NULL},
     .attrs = KC__RD_ATTRS,
     .doc = "The tangent of kc.Max: the mean of tx over the elements equal to the max.",
     .shape_fn = kc__rd_max_jvp_shape,
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__rd_max_grad_compute,
     .code = KC__RD_MAX + 1},
};
const size_t kc__bi_reduce_op_count = sizeof kc__bi_reduce_ops / sizeof kc__bi_reduce_ops[0];
