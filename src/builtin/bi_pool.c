/* kc.MaxPool and kc.AvgPool with their gradients and MaxPool's tangent,
 * on NHWC or NCHW tensors (attrs, shapes and geometry: bi_spatial.h),
 * run by PyTorch's 2-D pools of kernels/pool.h. */
#include "builtin/bi_spatial.h"
#include "builtin/builtin_internal.h"
#include "internal/common.h"
#include "kernels/pool.h"

/* Each op's code is the kind of pool it runs. */
static kc_status* kc__cv_pool_compute(void* kernel, kc_kernel_ctx* ctx) {
  kc__cv_geom g;
  KC_RETURN_IF_ERROR(kc__cv_geom_of(ctx, true, &g));
  kc__pool2d_kind kind = (kc__pool2d_kind)kc__bi_code(kernel);
  kc__pool2d pg = {.nchw = g.nchw,
                   .f32 = g.f32,
                   .n = g.n,
                   .c = g.c,
                   .h = g.h,
                   .w = g.w,
                   .oh = g.oh,
                   .ow = g.ow,
                   .kh = g.kh,
                   .kw = g.kw,
                   .sh = g.sh,
                   .sw = g.sw,
                   .pt = g.pt,
                   .pl = g.pl};
  memcpy(pg.xs, g.xs, sizeof pg.xs);
  memcpy(pg.ys, g.ys, sizeof pg.ys);
  if (kind == KC__POOL2D_AVG || kind == KC__POOL2D_AVG_GRAD) {
    KC_RETURN_IF_ERROR(
        kc_op_attrs_get_bool(kc_kernel_ctx_get_attrs(ctx), "count_include_pad", &pg.include_pad));
  }
  kc_thread_pool* pool = kc_kernel_ctx_get_thread_pool(ctx);
  const void* x = kc__bi_data(kc_kernel_ctx_get_input(ctx, 0));
  void* out = kc__bi_data(kc_kernel_ctx_get_output(ctx, 0));
  if (kind == KC__POOL2D_MAX || kind == KC__POOL2D_AVG) {
    kc__pool2d_forward(&pg, kind, x, out, pool);
    return NULL;
  }
  int32_t last = kc_kernel_ctx_get_input_count(ctx) - 1;
  const void* b = kc__bi_data(kc_kernel_ctx_get_input(ctx, last));
  const void* ym =
      kind == KC__POOL2D_MAX_GRAD ? kc__bi_data(kc_kernel_ctx_get_input(ctx, 1)) : NULL;
  if (!kc__pool2d_backward(&pg, kind, x, ym, b, out, pool)) {
    /* y was not kc.MaxPool(x) with these attributes: its gradient would be
     * lost where no element matched, so none is given. */
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc.MaxPoolGrad: y is not kc.MaxPool(x) with these attributes: a "
                            "window of x holds no element equal to its y");
  }
  return NULL;
}
static kc_status* kc__cv_pool_shape(kc_shape_ctx* ctx) { return kc__cv_shape(ctx, true, false); }
static kc_status* kc__cv_pool_grad_shape(kc_shape_ctx* ctx) {
  return kc__cv_shape(ctx, true, true);
}

/* ---- the table -------------------------------------------------------------------------- */

#define KC__CV_POOL_ATTRS(...)                                              \
  {                                                                         \
    KC__BI_T, KC__CV_FORMAT, "ksize: list(int)", "strides: list(int) = []", \
        "padding: list(int) = [0, 0]", __VA_ARGS__ NULL                     \
  }
#define KC__CV_AVG_ATTRS KC__CV_POOL_ATTRS("count_include_pad: bool = true", )

#define KC__CV_POOL_OP(NAME, IN, OUT, ATTRS, CODE, DOC, GRAD, JVP)                        \
  {                                                                                       \
    .name = "kc." NAME, .inputs = IN, .outputs = {OUT, NULL}, .attrs = ATTRS, .doc = DOC, \
    .shape_fn = CODE == KC__POOL2D_MAX_GRAD || CODE == KC__POOL2D_AVG_GRAD                \
                    ? kc__cv_pool_grad_shape                                              \
                    : kc__cv_pool_shape,                                                  \
    .gradient = GRAD, .jvp = JVP, .batching = KC_OP_BATCH_SEQUENTIAL,                     \
    .compute = kc__cv_pool_compute, .code = CODE                                          \
  }

const kc__bi_op kc__bi_pool_ops[] = {
    KC__CV_POOL_OP("MaxPool", KC__BI_LIST("x: T"), "y: T", KC__CV_POOL_ATTRS(), KC__POOL2D_MAX,
                   "The largest element of each ksize window of x (NHWC or NCHW), the windows "
                   "strides apart (none given: ksize), over x padded with -inf; a NaN in a "
                   "window gives NaN.",
                   "kc.MaxPoolGrad(x, y, grad(y)) -> grad(x)",
                   "kc.MaxPoolJvp(x, tangent(x)) -> tangent(y)"),
    KC__CV_POOL_OP("MaxPoolGrad", KC__BI_LIST("x: T", "y: T", "dy: T"), "dx: T",
                   KC__CV_POOL_ATTRS(), KC__POOL2D_MAX_GRAD,
                   "The gradient of kc.MaxPool from x, its output y and dy: each dy added to "
                   "the element of x its window chose (the first equal to y, or the last NaN, "
                   "as PyTorch); a y that is not kc.MaxPool(x) (a window with no element equal "
                   "to it) is refused.",
                   NULL, NULL),
    KC__CV_POOL_OP("MaxPoolJvp", KC__BI_LIST("x: T", "tx: T"), "ty: T", KC__CV_POOL_ATTRS(),
                   KC__POOL2D_MAX_JVP,
                   "The tangent of kc.MaxPool: tx at the element each window chose.", NULL, NULL),
    KC__CV_POOL_OP("AvgPool", KC__BI_LIST("x: T"), "y: T", KC__CV_AVG_ATTRS, KC__POOL2D_AVG,
                   "The mean of each ksize window of x (NHWC or NCHW), the windows strides "
                   "apart (none given: ksize), over x padded with zeros; with "
                   "count_include_pad false the padding is not counted.",
                   "kc.AvgPoolGrad(x, grad(y)) -> grad(x)", "kc.AvgPool(tangent(x)) -> tangent(y)"),
    KC__CV_POOL_OP("AvgPoolGrad", KC__BI_LIST("x: T", "dy: T"), "dx: T", KC__CV_AVG_ATTRS,
                   KC__POOL2D_AVG_GRAD,
                   "The gradient of kc.AvgPool: each dy spread evenly over its window (x gives "
                   "the shape).",
                   NULL, NULL),
};
const size_t kc__bi_pool_op_count = sizeof kc__bi_pool_ops / sizeof kc__bi_pool_ops[0];
