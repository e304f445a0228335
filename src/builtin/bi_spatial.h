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

#endif /* KCALL_BUILTIN_BI_SPATIAL_H_ */
