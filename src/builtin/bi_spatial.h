/* What the spatial built-in ops (bi_conv.c, bi_pool.c) share: their
 * attrs, shape function and geometry. Never installed. */
#ifndef KCALL_BUILTIN_BI_SPATIAL_H_
#define KCALL_BUILTIN_BI_SPATIAL_H_

#include <stdbool.h>
#include <stdint.h>

#include "kcall/kernel.h"
#include "kcall/op.h"

#define KC__CV_FORMAT "data_format: {'NHWC', 'NCHW'} = 'NHWC'"

/* A call's geometry, from its tensors (shapes the shape function has
 * checked) and attrs. */
typedef struct kc__cv_geom {
  bool nchw, f32;
  int64_t n, c, h, w;  /* the input */
  int64_t o, kh, kw;   /* output features (the pools: C), the window */
  int64_t groups, cg, og;
  int64_t oh, ow, p, k; /* p: oh ow positions; k: kh kw cg, a row's length */
  int64_t sh, sw, dh, dw, pt, pl;
  int64_t xs[4], ys[4]; /* element strides of n, c, y, x in the input and output */
} kc__cv_geom;

/* The geometry of a call of Conv2D (`pool` false: x, w) or a pool (x):
 * from the tensors, whose shapes the shape function has checked, and the
 * attrs (INVALID_ARGUMENT naming an attr that does not fit). */
kc_status* kc__cv_geom_of(kc_kernel_ctx* ctx, bool pool, kc__cv_geom* g);

/* Every shape function of the family. Forward: Conv2D (x, w) -> y,
 * Conv2DJvp (x, w, tx, tw) -> ty, the pools (x) -> y, MaxPoolJvp (x, tx)
 * -> ty, each tangent of its primal's shape. Gradients (`grad`):
 * Conv2DGrad (x, w, dy) -> (dx, dw), MaxPoolGrad (x, y, dy) -> dx and
 * AvgPoolGrad (x, dy) -> dx, the inputs after x (and w) of the output's
 * shape. On the shape helpers, so symbolic dims too. */
kc_status* kc__cv_shape(kc_shape_ctx* ctx, bool pool, bool grad);

/* Input row iy (column ix) of output row oy (column ox) and window row ky
 * (column kx); outside 0 .. h - 1 (w - 1) in the padding. */
static inline int64_t kc__cv_iy(const kc__cv_geom* g, int64_t oy, int64_t ky) {
  return oy * g->sh - g->pt + ky * g->dh;
}

static inline int64_t kc__cv_ix(const kc__cv_geom* g, int64_t ox, int64_t kx) {
  return ox * g->sw - g->pl + kx * g->dw;
}

/* Output columns ox with input column ox sw + off inside 0 .. w - 1:
 * [*lo, *hi). */
static inline void kc__cv_span(int64_t n, int64_t stride, int64_t off, int64_t w, int64_t* lo,
                        int64_t* hi) {
  int64_t a = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int64_t b = w - off <= 0 ? 0 : (w - off + stride - 1) / stride;
  *lo = a < n ? a : n;
  *hi = b < *lo ? *lo : (b < n ? b : n);
}

/* dst[i] += src[i], i < n, in f32 or f64. */
static inline void kc__cv_accumulate(bool f32, void* dst, const void* src, int64_t n) {
  if (f32) {
    float* d = dst;
    const float* a = src;
    for (int64_t i = 0; i < n; ++i) d[i] += a[i];
  } else {
    double* d = dst;
    const double* a = src;
    for (int64_t i = 0; i < n; ++i) d[i] += a[i];
  }
}

/* Conv2D (y given) or its gradient (y NULL: dx and dw, each as `need`
 * asks, both zeroed before) on NCHW tensors with OIHW kernels
 * (bi_conv_nchw.c). INVALID_ARGUMENT, RESOURCE_EXHAUSTED. */
kc_status* kc__cv_nchw(kc_kernel_ctx* ctx, const kc__cv_geom* g, const void* x, const void* w,
                       void* dy, void* y, void* dx, void* dw, const bool* need);

#endif /* KCALL_BUILTIN_BI_SPATIAL_H_ */
