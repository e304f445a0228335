/* kc.Sum and kc.Mean over axes, and their gradients (the cotangent
 * broadcast back, divided by the count for the mean). Sums accumulate in
 * double. */
#include <string.h>

#include "builtin/builtin_internal.h"
#include "internal/common.h"

enum { KC__RD_SUM, KC__RD_MEAN };

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

static kc_status* kc__rd_compute(void* kernel, kc_kernel_ctx* ctx) {
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  DLTensor* y = kc_kernel_ctx_get_output(ctx, 0);
  bool reduced[KC__BI_MAX_RANK];
  int64_t strides[KC__BI_MAX_RANK], count = 0;
  KC_RETURN_IF_ERROR(kc__rd_prepare(ctx, x, reduced, strides, &count));
  int64_t ny = kc__bi_numel(y), nx = kc__bi_numel(x);
  double* acc = NULL;
  KC_RETURN_IF_ERROR(
      kc_kernel_ctx_allocate_temp(ctx, (size_t)(ny ? ny : 1) * sizeof(double), 0, (void**)&acc));
  memset(acc, 0, (size_t)ny * sizeof(double));
  bool f32 = kc__bi_is_f32(x);
  const void* xp = kc__bi_data(x);
  /* Whether the reduced dims are the trailing ones. */
  int32_t first = x->ndim;
  while (first > 0 && reduced[first - 1]) --first;
  bool trailing = true;
  for (int32_t d = 0; d < first; ++d) trailing = trailing && !reduced[d];
  if (trailing && nx > 0) {
    /* The reduced dims are the trailing ones: a sum per row. */
    for (int64_t r = 0; r < ny; ++r) {
      double s = 0;
      for (int64_t i = 0; i < count; ++i) {
        s += f32 ? ((const float*)xp)[r * count + i] : ((const double*)xp)[r * count + i];
      }
      acc[r] = s;
    }
  } else {
    for (int64_t i = 0; i < nx; ++i) {
      acc[kc__bi_offset(i, x->ndim, x->shape, strides)] +=
          f32 ? ((const float*)xp)[i] : ((const double*)xp)[i];
    }
  }
  double scale = kc__bi_code(kernel) == KC__RD_MEAN ? 1.0 / (double)count : 1.0;
  for (int64_t r = 0; r < ny; ++r) {
    if (f32) {
      ((float*)kc__bi_data(y))[r] = (float)(acc[r] * scale);
    } else {
      ((double*)kc__bi_data(y))[r] = acc[r] * scale;
    }
  }
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

/* The gradient's shape: x's. */
static kc_status* kc__rd_grad_shape(kc_shape_ctx* ctx) {
  return kc_shape_ctx_set_output(ctx, 0, kc_shape_ctx_get_input(ctx, 0));
}

#define KC__RD_ATTRS \
  { "T: {f32, f64}", "axes: list(int)", "keepdims: bool = false", NULL }

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
};
const size_t kc__bi_reduce_op_count = sizeof kc__bi_reduce_ops / sizeof kc__bi_reduce_ops[0];
