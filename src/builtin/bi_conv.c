/* kc.Conv2D with its gradient and tangent (NHWC or NCHW), and what the
 * spatial ops share (bi_spatial.h): their attrs, shapes and geometry.
 *
 * Conv2D is an im2col product. For each group, a chunk of images is
 * unfolded (KC__CV_CHUNK_BYTES at most) and multiplied with the group's
 * kernel on the batched GEMM (f32) or the f64 loop (kc__bi_products),
 * the unfolded order chosen so that the kernel is read in place and the
 * product is the output itself: NHWC (kernel [kh, kw, C / groups, O],
 * HWIO, TensorFlow's and JAX's) unfolds into one row per output position,
 * [n p, k] times [k, o]; NCHW (kernel [O, C / groups, kh, kw], OIHW,
 * PyTorch's) unfolds each image into [k, p], and [o, k] times it is the
 * image's [o, p]. The gradient multiplies the same unfolded chunk with dy
 * (dw), and dy with the kernel into the unfolded shape, folded back into
 * dx (col2im), image by image. The unfolding and folding are
 * kernels/conv.h's, which the HLO convolution shares.
 *
 * NCHW f32 with a width stride of 1 (PyTorch's usual convolution) skips
 * all that where the processor has AVX2 and FMA: y is kernels/conv.h's
 * direct convolution, and so is dx when both strides are 1 (dy against
 * w with its features swapped and its window turned around). Other NCHW
 * products go transposed when y has fewer features than positions
 * (kc__cv_transposed). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "builtin/bi_spatial.h"
#include "builtin/builtin_internal.h"
#include "internal/common.h"
#include "kernels/conv.h"

/* Bytes of unfolded rows a chunk of images holds at most (one image at
 * least): about a core's L2, so that the GEMM packs what im2col has just
 * written while it is in cache (8 MiB chunks made the gradient of a
 * 16 -> 32 feature 3x3 convolution on 32 16x16 images 25% slower). */
#define KC__CV_CHUNK_BYTES ((int64_t)2 << 20)

/* ---- attrs and geometry ----------------------------------------------------------------- */

typedef struct kc__cv_attrs {
  bool nchw, pool;
  int64_t window[2]; /* the pools' ksize */
  int64_t stride[2], dil[2];
  int64_t pad[4]; /* top, bottom, left, right */
  int64_t groups;
} kc__cv_attrs;

/* List attr `name` into `out`, each value at least `least`; an empty
 * list gives `dflt` (NULL: it is refused). With `most` 2: (height,
 * width), one value for both; with `most` 4 (padding): (top, bottom,
 * left, right), one value for all four, or (height, width) for both
 * sides of each. */
static kc_status* kc__cv_list(const kc_op_attrs* attrs, const char* name, const int64_t* dflt,
                              int64_t least, int32_t most, int64_t* out) {
  int64_t v[4] = {0};
  int32_t n = 0;
  KC_RETURN_IF_ERROR(kc_op_attrs_get_int_list(attrs, name, v, 4, &n));
  if (n == 0 && dflt) {
    memcpy(out, dflt, 2 * sizeof *out);
    return NULL;
  }
  if (n < 1 || n > most || n == 3) {
    return kc_status_create(KC_INVALID_ARGUMENT, "attr '%s': expected %s, got %d values", name,
                            most == 4 ? "1, 2 or 4 values" : "1 or 2 values (height, width)", n);
  }
  for (int32_t i = 0; i < n; ++i) {
    if (v[i] < least) {
      return kc_status_create(KC_INVALID_ARGUMENT, "attr '%s': item %d is %lld, expected >= %lld",
                              name, i, (long long)v[i], (long long)least);
    }
  }
  if (most == 4) { /* padding: all, (height, width), or (top, bottom, left, right) */
    int64_t h = v[0], w = v[n == 1 ? 0 : 1];
    int64_t four[4] = {h, h, w, w};
    memcpy(out, n == 4 ? v : four, 4 * sizeof *out);
  } else {
    out[0] = v[0];
    out[1] = v[n - 1];
  }
  return NULL;
}

static kc_status* kc__cv_attrs_of(const kc_op_attrs* attrs, bool pool, kc__cv_attrs* out) {
  memset(out, 0, sizeof *out);
  out->pool = pool;
  kc_string_view f = {0};
  KC_RETURN_IF_ERROR(kc_op_attrs_get_string(attrs, "data_format", &f));
  out->nchw = f.size == 4 && memcmp(f.data, "NCHW", 4) == 0;
  static const int64_t ones[2] = {1, 1};
  KC_RETURN_IF_ERROR(kc__cv_list(attrs, "padding", NULL, 0, 4, out->pad));
  if (pool) {
    KC_RETURN_IF_ERROR(kc__cv_list(attrs, "ksize", NULL, 1, 2, out->window));
    KC_RETURN_IF_ERROR(kc__cv_list(attrs, "strides", out->window, 1, 2, out->stride));
    memcpy(out->dil, ones, sizeof ones);
    out->groups = 1;
    return NULL;
  }
  KC_RETURN_IF_ERROR(kc__cv_list(attrs, "strides", ones, 1, 2, out->stride));
  KC_RETURN_IF_ERROR(kc__cv_list(attrs, "dilations", ones, 1, 2, out->dil));
  KC_RETURN_IF_ERROR(kc_op_attrs_get_int(attrs, "groups", &out->groups));
  if (out->groups < 1) {
    return kc_status_create(KC_INVALID_ARGUMENT, "attr 'groups': %lld, expected >= 1",
                            (long long)out->groups);
  }
  return NULL;
}

/* Where the dims of an input (x, its 4 dims) and a kernel (w) are. */
static int32_t kc__cv_x_dim(bool nchw, char which) {
  switch (which) {
    case 'N': return 0;
    case 'C': return nchw ? 1 : 3;
    case 'H': return nchw ? 2 : 1;
    default: return nchw ? 3 : 2; /* W */
  }
}

static int32_t kc__cv_w_dim(bool nchw, char which) {
  switch (which) {
    case 'O': return nchw ? 0 : 3;
    case 'I': return nchw ? 1 : 2;
    case 'H': return nchw ? 2 : 0;
    default: return nchw ? 3 : 1; /* W */
  }
}

/* An output's spatial size: floor((in + lo + hi - span) / stride) + 1 with
 * span = dilation (k - 1) + 1, on the shape helpers (symbolic dims too). */
static kc_status* kc__cv_out_size(kc_shape_ctx* ctx, int64_t in, int64_t k, int64_t stride,
                                  int64_t dil, int64_t lo, int64_t hi, const char* what,
                                  int64_t* out) {
  int64_t padded = 0, k1 = 0, span = 0, room = 0, q = 0;
  KC_RETURN_IF_ERROR(kc_shape_ctx_add_dims(ctx, in, lo + hi, &padded));
  KC_RETURN_IF_ERROR(kc_shape_ctx_subtract_dims(ctx, k, 1, &k1), "the window's %s", what);
  KC_RETURN_IF_ERROR(kc_shape_ctx_multiply_dims(ctx, k1, dil, &span));
  KC_RETURN_IF_ERROR(kc_shape_ctx_add_dims(ctx, span, 1, &span));
  if (padded >= 0 && span >= 0 && padded < span) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "the window's %s spans %lld, more than the padded input's %lld", what,
                            (long long)span, (long long)padded);
  }
  KC_RETURN_IF_ERROR(kc_shape_ctx_subtract_dims(ctx, padded, span, &room),
                     "the window's %s against the padded input's", what);
  KC_RETURN_IF_ERROR(kc_shape_ctx_divide_dims(ctx, room, stride, false, &q));
  return kc_shape_ctx_add_dims(ctx, q, 1, out);
}

/* The output shape of Conv2D (x, w) or of a pool (x): [N, C, OH, OW] or
 * [N, OH, OW, C] with C the kernel's output features. */
static kc_status* kc__cv_out_shape(kc_shape_ctx* ctx, const kc__cv_attrs* a,
                                   const kc_shape_handle** out) {
  const kc_shape_handle *x = NULL, *w = NULL;
  KC_RETURN_IF_ERROR(kc_shape_ctx_with_rank(ctx, kc_shape_ctx_get_input(ctx, 0), 4, &x),
                     "x (%s)", a->nchw ? "NCHW" : "NHWC");
  bool nchw = a->nchw;
  int64_t dims[4], kh = a->window[0], kw = a->window[1];
  int64_t c = kc_shape_handle_get_dim(x, kc__cv_x_dim(nchw, 'C'));
  if (!a->pool) {
    KC_RETURN_IF_ERROR(kc_shape_ctx_with_rank(ctx, kc_shape_ctx_get_input(ctx, 1), 4, &w),
                       "w (%s)", nchw ? "OIHW" : "HWIO");
    int64_t in = 0, o = kc_shape_handle_get_dim(w, kc__cv_w_dim(nchw, 'O'));
    KC_RETURN_IF_ERROR(kc_shape_ctx_multiply_dims(
        ctx, kc_shape_handle_get_dim(w, kc__cv_w_dim(nchw, 'I')), a->groups, &in));
    KC_RETURN_IF_ERROR(kc_shape_ctx_merge_dim(ctx, c, in, &c),
                       "x's features against w's input features times groups (%lld)",
                       (long long)a->groups);
    int64_t og = 0;
    KC_RETURN_IF_ERROR(kc_shape_ctx_divide_dims(ctx, o, a->groups, true, &og),
                       "w's output features by groups (%lld)", (long long)a->groups);
    c = o;
    kh = kc_shape_handle_get_dim(w, kc__cv_w_dim(nchw, 'H'));
    kw = kc_shape_handle_get_dim(w, kc__cv_w_dim(nchw, 'W'));
  }
  dims[0] = kc_shape_handle_get_dim(x, 0);
  dims[kc__cv_x_dim(nchw, 'C')] = c;
  KC_RETURN_IF_ERROR(kc__cv_out_size(ctx, kc_shape_handle_get_dim(x, kc__cv_x_dim(nchw, 'H')), kh,
                                     a->stride[0], a->dil[0], a->pad[0], a->pad[1], "height",
                                     &dims[kc__cv_x_dim(nchw, 'H')]));
  KC_RETURN_IF_ERROR(kc__cv_out_size(ctx, kc_shape_handle_get_dim(x, kc__cv_x_dim(nchw, 'W')), kw,
                                     a->stride[1], a->dil[1], a->pad[2], a->pad[3], "width",
                                     &dims[kc__cv_x_dim(nchw, 'W')]));
  return kc_shape_ctx_make_shape(ctx, 4, dims, out);
}

kc_status* kc__cv_shape(kc_shape_ctx* ctx, bool pool, bool grad) {
  kc__cv_attrs a;
  KC_RETURN_IF_ERROR(kc__cv_attrs_of(kc_shape_ctx_get_attrs(ctx), pool, &a));
  const kc_shape_handle *y = NULL, *same = NULL;
  KC_RETURN_IF_ERROR(kc__cv_out_shape(ctx, &a, &y));
  int32_t primals = pool ? 1 : 2, n = kc_shape_ctx_get_input_count(ctx);
  if (grad) {
    for (int32_t i = primals; i < n; ++i) { /* dy, and MaxPoolGrad's y before it */
      KC_RETURN_IF_ERROR(kc_shape_ctx_merge(ctx, y, kc_shape_ctx_get_input(ctx, i), &same),
                         "input %d against the output's shape", i);
    }
    for (int32_t i = 0; i < primals; ++i) {
      KC_RETURN_IF_ERROR(kc_shape_ctx_set_output(ctx, i, kc_shape_ctx_get_input(ctx, i)));
    }
    return NULL;
  }
  for (int32_t i = primals; i < n; ++i) {
    KC_RETURN_IF_ERROR(kc_shape_ctx_merge(ctx, kc_shape_ctx_get_input(ctx, i - primals),
                                          kc_shape_ctx_get_input(ctx, i), &same),
                       "tangent %d against its primal", i - primals);
  }
  return kc_shape_ctx_set_output(ctx, 0, y);
}

static kc_status* kc__cv_conv_shape(kc_shape_ctx* ctx) { return kc__cv_shape(ctx, false, false); }
static kc_status* kc__cv_conv_grad_shape(kc_shape_ctx* ctx) {
  return kc__cv_shape(ctx, false, true);
}


static void kc__cv_strides(bool nchw, int64_t c, int64_t h, int64_t w, int64_t* s) {
  s[0] = c * h * w;
  s[1] = nchw ? h * w : 1;
  s[2] = nchw ? w : w * c;
  s[3] = nchw ? 1 : c;
}

kc_status* kc__cv_geom_of(kc_kernel_ctx* ctx, bool pool, kc__cv_geom* g) {
  kc__cv_attrs a;
  KC_RETURN_IF_ERROR(kc__cv_attrs_of(kc_kernel_ctx_get_attrs(ctx), pool, &a));
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  bool nchw = a.nchw;
  memset(g, 0, sizeof *g);
  g->nchw = nchw;
  g->f32 = kc__bi_is_f32(x);
  g->n = x->shape[0];
  g->c = x->shape[kc__cv_x_dim(nchw, 'C')];
  g->h = x->shape[kc__cv_x_dim(nchw, 'H')];
  g->w = x->shape[kc__cv_x_dim(nchw, 'W')];
  g->groups = a.groups;
  g->kh = a.window[0];
  g->kw = a.window[1];
  g->o = g->c;
  if (!pool) {
    const DLTensor* k = kc_kernel_ctx_get_input(ctx, 1);
    g->o = k->shape[kc__cv_w_dim(nchw, 'O')];
    g->kh = k->shape[kc__cv_w_dim(nchw, 'H')];
    g->kw = k->shape[kc__cv_w_dim(nchw, 'W')];
  }
  g->cg = g->c / g->groups;
  g->og = g->o / g->groups;
  g->sh = a.stride[0];
  g->sw = a.stride[1];
  g->dh = a.dil[0];
  g->dw = a.dil[1];
  g->pt = a.pad[0];
  g->pl = a.pad[2];
  if (!kc__window_positions(g->h, a.pad[0], a.pad[1], 1, g->kh, g->dh, g->sh, &g->oh) ||
      !kc__window_positions(g->w, a.pad[2], a.pad[3], 1, g->kw, g->dw, g->sw, &g->ow)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "the window, padding and dilations overflow 64 bits");
  }
  g->p = g->oh * g->ow;
  g->k = g->kh * g->kw * g->cg;
  kc__cv_strides(nchw, g->c, g->h, g->w, g->xs);
  kc__cv_strides(nchw, g->o, g->oh, g->ow, g->ys);
  return NULL;
}

/* NHWC with groups: between the chunk's [rows, og] block of group grp and
 * y (or dy): to_tensor scatters the block into `t`, else gathers it. */
typedef struct kc__cv_move_job {
  const kc__cv_geom* g;
  int64_t n0, grp;
  void* block;
  void* t;
  bool to_tensor;
} kc__cv_move_job;

#define KC__CV_MOVE(T)                                                                   \
  static void kc__cv_move_##T(void* ctx, int64_t begin, int64_t end) {                   \
    const kc__cv_move_job* m = ctx;                                                      \
    const kc__cv_geom* g = m->g;                                                         \
    for (int64_t r = begin; r < end; ++r) {                                              \
      T* t = (T*)m->t + (m->n0 * g->p + r) * g->o + m->grp * g->og;                      \
      T* b = (T*)m->block + r * g->og;                                                   \
      for (int64_t q = 0; q < g->og; ++q) {                                              \
        if (m->to_tensor) {                                                              \
          t[q] = b[q];                                                                   \
        } else {                                                                         \
          b[q] = t[q];                                                                   \
        }                                                                                \
      }                                                                                  \
    }                                                                                    \
  }

KC__CV_MOVE(float)
KC__CV_MOVE(double)

/* NCHW's transposed products: the chunk's [p, og] blocks of group grp
 * (cv->block, one an image) into y's [og, p] rows, Q positions a unit:
 * a unit reads Q rows of its block (in L1) and writes Q elements of each
 * of the og rows. */
#define KC__CV_TR_Q 64
typedef struct kc__cv_tr_job {
  const kc__cv_geom* g;
  int64_t n0, grp, units; /* units an image */
  const void* block;
  void* y;
} kc__cv_tr_job;

#define KC__CV_TR(T)                                                          \
  static void kc__cv_tr_##T(void* ctx, int64_t begin, int64_t end) {          \
    const kc__cv_tr_job* j = ctx;                                             \
    const kc__cv_geom* g = j->g;                                              \
    for (int64_t u = begin; u < end; ++u) {                                   \
      int64_t i = u / j->units, q0 = u % j->units * KC__CV_TR_Q;              \
      int64_t q1 = g->p - q0 < KC__CV_TR_Q ? g->p : q0 + KC__CV_TR_Q;         \
      const T* b = (const T*)j->block + i * g->p * g->og;                     \
      T* y = (T*)j->y + ((j->n0 + i) * g->o + j->grp * g->og) * g->p;         \
      for (int64_t c = 0; c < g->og; ++c) {                                   \
        for (int64_t q = q0; q < q1; ++q) y[c * g->p + q] = b[q * g->og + c]; \
      }                                                                       \
    }                                                                         \
  }

KC__CV_TR(float)
KC__CV_TR(double)

/* ---- Conv2D --------------------------------------------------------------------------- */

/* The work of one call: its geometry, scratch and pool. */
typedef struct kc__cv_conv {
  kc__cv_geom g;
  kc__conv_geom unfold; /* g as kernels/conv.h's unfolding sees it */
  kc_thread_pool* pool;
  bool direct; /* the forward product is kernels/conv.h's direct one, its scratch in rows */
  size_t es;
  int64_t imgs; /* images a chunk holds */
  void* rows;   /* the chunk unfolded: imgs p k elements */
  void* block;  /* NHWC with groups: the group's slice of y or dy, imgs p og;
                 * NCHW transposed: the chunk's products, imgs [p, og] */
  void* wpack;  /* NHWC with groups: the group's [k, og] slice of w; NCHW: w's
                 * group slice once per image of the chunk (one batched product) */
  void* tmp;    /* the gradient: the chunk's dw products, imgs og k */
} kc__cv_conv;

static kc_status* kc__cv_alloc(kc_kernel_ctx* ctx, int64_t elems, size_t es, void** out) {
  return kc_kernel_ctx_allocate_temp(ctx, (size_t)(elems > 0 ? elems : 1) * es, 64, out);
}

/* Whether NCHW's forward product goes transposed, [p, og] = rows_i^T [p,
 * k] w_g^T [k, og] and then into y's rows, where y_i's [og, p] has fewer
 * rows than columns: the GEMM shares out and tiles the rows of C, and 16
 * features are three strips of its 6-row tile (two threads, three
 * strips) where 4096 positions are 683. */
static bool kc__cv_transposed(const kc__cv_geom* g) { return g->nchw && g->og < g->p; }

/* y = conv(x, w) as kernels/conv.h's direct convolution sees it, its
 * tensors (a group's slices) left to set. */
static kc__conv2d kc__cv_direct_of(const kc__cv_geom* g) {
  return (kc__conv2d){.x_n = g->xs[0],
                      .x_c = g->xs[1],
                      .y_n = g->o * g->p,
                      .y_c = g->p,
                      .n = g->n,
                      .c = g->cg,
                      .height = g->h,
                      .width = g->w,
                      .o = g->og,
                      .kh = g->kh,
                      .kw = g->kw,
                      .oh = g->oh,
                      .ow = g->ow,
                      .sh = g->sh,
                      .dh = g->dh,
                      .dw = g->dw,
                      .pt = g->pt,
                      .pl = g->pl};
}

static kc_status* kc__cv_conv_init(kc_kernel_ctx* ctx, bool grad, kc__cv_conv* cv) {
  kc__cv_geom* g = &cv->g;
  cv->pool = kc_kernel_ctx_get_thread_pool(ctx);
  cv->es = g->f32 ? sizeof(float) : sizeof(double);
  if (!grad && g->nchw && g->f32 && g->sw == 1) {
    kc__conv2d d = kc__cv_direct_of(g);
    cv->direct = kc__conv2d_direct_runs(&d);
    if (cv->direct) {
      int32_t threads = cv->pool ? kc_thread_pool_get_size(cv->pool) : 1;
      size_t bytes = kc__conv2d_direct_scratch(&d, threads);
      return kc_kernel_ctx_allocate_temp(ctx, bytes > 0 ? bytes : 1, 64, &cv->rows);
    }
  }
  int64_t per_image = g->p * g->k * (int64_t)cv->es;
  kc__conv_geom* u = &cv->unfold;
  u->win.dims = 2;
  int64_t in[2] = {g->h, g->w}, size[2] = {g->kh, g->kw}, out[2] = {g->oh, g->ow};
  int64_t stride[2] = {g->sh, g->sw}, low[2] = {g->pt, g->pl}, dil[2] = {g->dh, g->dw};
  for (int32_t d = 0; d < 2; ++d) {
    u->win.in[d] = in[d];
    u->win.size[d] = size[d];
    u->win.out[d] = out[d];
    u->win.stride[d] = stride[d];
    u->win.low[d] = low[d];
    u->win.lhs_dil[d] = 1;
    u->win.rhs_dil[d] = dil[d];
    u->x_s[d] = g->xs[2 + d];
  }
  u->x_b = g->xs[0];
  u->x_f = g->xs[1];
  u->features = g->cg;
  kc__conv_geom_finish(u);
  cv->imgs = per_image > 0 && per_image < KC__CV_CHUNK_BYTES ? KC__CV_CHUNK_BYTES / per_image : 1;
  if (cv->imgs > g->n) cv->imgs = g->n > 0 ? g->n : 1;
  KC_RETURN_IF_ERROR(kc__cv_alloc(ctx, cv->imgs * g->p * g->k, cv->es, &cv->rows));
  if (g->nchw) {
    KC_RETURN_IF_ERROR(kc__cv_alloc(ctx, cv->imgs * g->k * g->og, cv->es, &cv->wpack));
    if (kc__cv_transposed(g)) {
      KC_RETURN_IF_ERROR(kc__cv_alloc(ctx, cv->imgs * g->p * g->og, cv->es, &cv->block));
    }
  } else if (g->groups > 1) {
    KC_RETURN_IF_ERROR(kc__cv_alloc(ctx, cv->imgs * g->p * g->og, cv->es, &cv->block));
    KC_RETURN_IF_ERROR(kc__cv_alloc(ctx, g->k * g->og, cv->es, &cv->wpack));
  }
  if (grad) {
    KC_RETURN_IF_ERROR(kc__cv_alloc(ctx, (g->nchw ? cv->imgs : 1) * g->k * g->og, cv->es,
                                    &cv->tmp));
  }
  return NULL;
}

/* x (or dx) of `es` bytes an element, at group grp's first feature. */
static const void* kc__cv_group(const kc__cv_conv* cv, const void* x, int64_t grp) {
  return (const char*)x + (size_t)(grp * cv->g.cg * cv->g.xs[1]) * cv->es;
}

/* The chunk of `count` images from n0 unfolded into cv->rows: NHWC's
 * rows, NCHW's columns (kernels/conv.h). */
static void kc__cv_unfold(kc__cv_conv* cv, const void* x, int64_t n0, int64_t count,
                          int64_t grp) {
  const void* xg = kc__cv_group(cv, x, grp);
  if (cv->g.nchw) {
    kc__conv_unfold_cols(&cv->unfold, cv->es, xg, n0, count, cv->rows, cv->pool);
  } else {
    kc__conv_unfold_rows(&cv->unfold, cv->es, xg, n0 * cv->g.p, count * cv->g.p, cv->rows,
                         cv->pool);
  }
}

/* cv->rows (as unfolded) added into dx. */
static void kc__cv_fold(kc__cv_conv* cv, void* dx, int64_t n0, int64_t count, int64_t grp) {
  void* dg = (void*)kc__cv_group(cv, dx, grp);
  if (cv->g.nchw) {
    kc__conv_fold_cols(&cv->unfold, cv->es, cv->rows, n0, count, dg, cv->pool);
  } else {
    kc__conv_fold_rows(&cv->unfold, cv->es, cv->rows, n0, count, dg, cv->pool);
  }
}

static void kc__cv_move(kc__cv_conv* cv, void* t, int64_t n0, int64_t count, int64_t grp,
                        bool to_tensor) {
  kc__cv_move_job m = {
      .g = &cv->g, .n0 = n0, .grp = grp, .block = cv->block, .t = t, .to_tensor = to_tensor};
  kc_thread_pool_parallel_for(cv->pool, count * cv->g.p, cv->g.og + 1,
                              cv->g.f32 ? kc__cv_move_float : kc__cv_move_double, &m);
}

static const void* kc__cv_at(const void* p, int64_t elems, size_t es) {
  return (const char*)p + (size_t)elems * es;
}

/* NHWC: group grp's kernel as the product's right operand [k, og]: HWIO
 * itself (one group) or its columns packed into cv->wpack. */
static const void* kc__cv_hwio(kc__cv_conv* cv, const void* w, int64_t grp) {
  const kc__cv_geom* g = &cv->g;
  if (g->groups == 1) return w;
  for (int64_t r = 0; r < g->k; ++r) {
    memcpy((char*)cv->wpack + (size_t)(r * g->og) * cv->es, kc__cv_at(w, r * g->o + grp * g->og, cv->es),
           (size_t)g->og * cv->es);
  }
  return cv->wpack;
}

/* NCHW: C_i = op(A) op(B_i) for the `count` images of a chunk, A one
 * operand (w's group slice, m k elements) for all, B_i b_step apart, C_i
 * c_step apart. One batched product when the C_i follow one another (one
 * group), with A copied once per image into cv->wpack as the batched
 * GEMM takes it; else one product per image. */
static kc_status* kc__cv_per_image(kc__cv_conv* cv, kc__bi_operand a, kc__bi_operand b,
                                   int64_t b_step, void* c, int64_t c_step, int64_t count,
                                   int64_t m, int64_t n, int64_t k) {
  const kc__cv_geom* g = &cv->g;
  if (c_step == m * n) {
    for (int64_t i = 0; i < count; ++i) {
      memcpy((char*)cv->wpack + (size_t)(i * m * k) * cv->es, a.p, (size_t)(m * k) * cv->es);
    }
    return kc__bi_products(g->f32, (kc__bi_operand){cv->wpack, a.t}, m * k, b, b_step, c, count,
                           m, n, k, cv->pool);
  }
  for (int64_t i = 0; i < count; ++i) {
    kc__bi_operand bi = {kc__cv_at(b.p, i * b_step, cv->es), b.t};
    KC_RETURN_IF_ERROR(kc__bi_products(g->f32, a, 0, bi, 0, (char*)c + (size_t)(i * c_step) * cv->es,
                                       1, m, n, k, cv->pool));
  }
  return NULL;
}

/* y = conv(x, w). */
static kc_status* kc__cv_forward(kc__cv_conv* cv, const void* x, const void* w, void* y) {
  const kc__cv_geom* g = &cv->g;
  for (int64_t grp = 0; grp < g->groups; ++grp) {
    if (cv->direct) {
      kc__conv2d d = kc__cv_direct_of(g);
      d.x = (const float*)x + grp * g->cg * g->xs[1];
      d.w = (const float*)w + grp * g->og * g->k;
      d.y = (float*)y + grp * g->og * g->p;
      kc__conv2d_direct_f32(&d, cv->rows, cv->pool);
      continue;
    }
    const void* wg = g->nchw ? kc__cv_at(w, grp * g->og * g->k, cv->es) : kc__cv_hwio(cv, w, grp);
    for (int64_t n0 = 0; n0 < g->n; n0 += cv->imgs) {
      int64_t count = g->n - n0 < cv->imgs ? g->n - n0 : cv->imgs;
      kc__cv_unfold(cv, x, n0, count, grp);
      if (kc__cv_transposed(g)) {
        /* block_i [p, og] = rows_i^T [p, k] x w_g^T [k, og], w_g copied
         * once an image for one batched product; then into y_i's rows. */
        for (int64_t i = 0; i < count; ++i) {
          memcpy((char*)cv->wpack + (size_t)(i * g->og * g->k) * cv->es, wg,
                 (size_t)(g->og * g->k) * cv->es);
        }
        KC_RETURN_IF_ERROR(kc__bi_products(g->f32, (kc__bi_operand){cv->rows, true}, g->k * g->p,
                                           (kc__bi_operand){cv->wpack, true}, g->og * g->k,
                                           cv->block, count, g->p, g->og, g->k, cv->pool));
        int64_t units = (g->p + KC__CV_TR_Q - 1) / KC__CV_TR_Q;
        kc__cv_tr_job tr = {g, n0, grp, units, cv->block, y};
        kc_thread_pool_parallel_for(cv->pool, count * units, KC__CV_TR_Q * g->og + 1,
                                    g->f32 ? kc__cv_tr_float : kc__cv_tr_double, &tr);
        continue;
      }
      if (g->nchw) {
        /* y_i's group rows [og, p] = w_g [og, k] x rows_i [k, p]. */
        KC_RETURN_IF_ERROR(kc__cv_per_image(
            cv, (kc__bi_operand){wg, false}, (kc__bi_operand){cv->rows, false}, g->k * g->p,
            (char*)y + (size_t)(n0 * g->o * g->p + grp * g->og * g->p) * cv->es, g->o * g->p,
            count, g->og, g->p, g->k));
        continue;
      }
      /* [rows, og] = rows [rows, k] x w_g [k, og]: y itself with one group. */
      void* dst = g->groups == 1 ? (char*)y + (size_t)(n0 * g->p * g->o) * cv->es : cv->block;
      KC_RETURN_IF_ERROR(kc__bi_products(g->f32, (kc__bi_operand){cv->rows, false}, 0,
                                         (kc__bi_operand){wg, false}, 0, dst, 1, count * g->p,
                                         g->og, g->k, cv->pool));
      if (g->groups > 1) kc__cv_move(cv, y, n0, count, grp, true);
    }
  }
  return NULL;
}

/* kc.Conv2D(x, w) -> y and kc.Conv2DJvp(x, w, tx, tw) -> conv(tx, w) +
 * conv(x, tw). */
static kc_status* kc__cv_conv_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  kc__cv_conv cv = {0};
  KC_RETURN_IF_ERROR(kc__cv_geom_of(ctx, false, &cv.g));
  DLTensor* y = kc_kernel_ctx_get_output(ctx, 0);
  if (kc__bi_numel(y) == 0) return NULL;
  KC_RETURN_IF_ERROR(kc__cv_conv_init(ctx, false, &cv));
  const void* x = kc__bi_data(kc_kernel_ctx_get_input(ctx, 0));
  const void* w = kc__bi_data(kc_kernel_ctx_get_input(ctx, 1));
  if (kc_kernel_ctx_get_input_count(ctx) == 2) return kc__cv_forward(&cv, x, w, kc__bi_data(y));
  int64_t count = kc__bi_numel(y);
  void* second = NULL;
  KC_RETURN_IF_ERROR(kc__cv_alloc(ctx, count, cv.es, &second));
  KC_RETURN_IF_ERROR(
      kc__cv_forward(&cv, kc__bi_data(kc_kernel_ctx_get_input(ctx, 2)), w, kc__bi_data(y)));
  KC_RETURN_IF_ERROR(
      kc__cv_forward(&cv, x, kc__bi_data(kc_kernel_ctx_get_input(ctx, 3)), second));
  void* out = kc__bi_data(y);
  for (int64_t i = 0; i < count; ++i) {
    kc__bi_set(out, cv.g.f32, i, kc__bi_get(out, cv.g.f32, i) + kc__bi_get(second, cv.g.f32, i));
  }
  return NULL;
}

/* dw's group grp += the chunk's products in cv->tmp: NCHW's `count`
 * [og, k] products (one per image) into OIHW's contiguous slice; NHWC's
 * one [k, og] product into columns of HWIO's [k, o]. */
static void kc__cv_add_dw(kc__cv_conv* cv, void* dw, int64_t grp, int64_t count) {
  const kc__cv_geom* g = &cv->g;
  int64_t size = g->k * g->og;
  if (g->f32 && g->nchw) { /* image by image, on vectors */
    float* d = (float*)dw + grp * size;
    const float* t = cv->tmp;
    for (int64_t i = 0; i < count; ++i, t += size) {
      for (int64_t r = 0; r < size; ++r) d[r] += t[r];
    }
    return;
  }
  for (int64_t r = 0; r < size; ++r) {
    int64_t at = g->nchw ? grp * size + r : (r / g->og) * g->o + grp * g->og + r % g->og;
    double sum = kc__bi_get(dw, g->f32, at);
    for (int64_t i = 0; i < (g->nchw ? count : 1); ++i) sum += kc__bi_get(cv->tmp, g->f32, i * size + r);
    kc__bi_set(dw, g->f32, at, sum);
  }
}

/* One chunk of kc.Conv2DGrad, NCHW: per image, dw_g += dy_i [og, p]
 * rows_i^T and rows_i = w_g^T dy_i, folded into dx. */
static kc_status* kc__cv_grad_nchw(kc__cv_conv* cv, const bool* need, const void* x,
                                   const void* wg, const void* dy, void* dx, void* dw,
                                   int64_t n0, int64_t count, int64_t grp) {
  const kc__cv_geom* g = &cv->g;
  kc__bi_operand dyg = {kc__cv_at(dy, n0 * g->o * g->p + grp * g->og * g->p, cv->es), false};
  int64_t step = g->o * g->p;
  if (need[1]) {
    kc__cv_unfold(cv, x, n0, count, grp);
    KC_RETURN_IF_ERROR(kc__bi_products(g->f32, dyg, step, (kc__bi_operand){cv->rows, true},
                                       g->k * g->p, cv->tmp, count, g->og, g->k, g->p,
                                       cv->pool));
    kc__cv_add_dw(cv, dw, grp, count);
  }
  if (need[0]) {
    KC_RETURN_IF_ERROR(kc__cv_per_image(cv, (kc__bi_operand){wg, true}, dyg, step, cv->rows,
                                        g->k * g->p, count, g->k, g->p, g->og));
    kc__cv_fold(cv, dx, n0, count, grp);
  }
  return NULL;
}

/* One chunk of kc.Conv2DGrad, NHWC: dw_g += rows^T dy_g, and rows = dy_g
 * w_g^T folded into dx. */
static kc_status* kc__cv_grad_nhwc(kc__cv_conv* cv, const bool* need, const void* x,
                                   const void* wg, void* dy, void* dx, void* dw, int64_t n0,
                                   int64_t count, int64_t grp) {
  const kc__cv_geom* g = &cv->g;
  int64_t rows = count * g->p;
  const void* dyg = kc__cv_at(dy, n0 * g->p * g->o, cv->es);
  if (g->groups > 1) {
    kc__cv_move(cv, dy, n0, count, grp, false);
    dyg = cv->block;
  }
  if (need[1]) {
    kc__cv_unfold(cv, x, n0, count, grp);
    KC_RETURN_IF_ERROR(kc__bi_products(g->f32, (kc__bi_operand){cv->rows, true}, 0,
                                       (kc__bi_operand){dyg, false}, 0, cv->tmp, 1, g->k, g->og,
                                       rows, cv->pool));
    kc__cv_add_dw(cv, dw, grp, 1);
  }
  if (need[0]) {
    KC_RETURN_IF_ERROR(kc__bi_products(g->f32, (kc__bi_operand){dyg, false}, 0,
                                       (kc__bi_operand){wg, true}, 0, cv->rows, 1, rows, g->k,
                                       g->og, cv->pool));
    kc__cv_fold(cv, dx, n0, count, grp);
  }
  return NULL;
}

/* NCHW f32 with strides of 1: dx as kernels/conv.h's direct convolution
 * of dy with w's features swapped and its window turned around, padded
 * by the window's reach less the forward padding (when that is not
 * negative). *done says whether it applied and dx is written;
 * RESOURCE_EXHAUSTED when its scratch cannot be had. */
static kc_status* kc__cv_dx_direct(kc_kernel_ctx* ctx, const kc__cv_geom* g, const float* w,
                                   const float* dy, float* dx, bool* done) {
  *done = false;
  if (!g->nchw || !g->f32 || g->sh != 1 || g->sw != 1) return NULL;
  kc_thread_pool* pool = kc_kernel_ctx_get_thread_pool(ctx);
  kc__conv2d d = {.x_n = g->o * g->p,
                  .x_c = g->p,
                  .y_n = g->c * g->h * g->w,
                  .y_c = g->h * g->w,
                  .n = g->n,
                  .c = g->og,
                  .height = g->oh,
                  .width = g->ow,
                  .o = g->cg,
                  .kh = g->kh,
                  .kw = g->kw,
                  .oh = g->h,
                  .ow = g->w,
                  .sh = 1,
                  .dh = g->dh,
                  .dw = g->dw,
                  .pt = (g->kh - 1) * g->dh - g->pt,
                  .pl = (g->kw - 1) * g->dw - g->pl};
  if (!kc__conv2d_direct_runs(&d)) return NULL;
  int32_t threads = pool ? kc_thread_pool_get_size(pool) : 1;
  float* wt = NULL;
  void* scratch = NULL;
  KC_RETURN_IF_ERROR(kc__cv_alloc(ctx, g->o * g->k, sizeof(float), (void**)&wt));
  size_t bytes = kc__conv2d_direct_scratch(&d, threads);
  KC_RETURN_IF_ERROR(kc_kernel_ctx_allocate_temp(ctx, bytes > 0 ? bytes : 1, 64, &scratch));
  int64_t taps = g->kh * g->kw;
  for (int64_t grp = 0; grp < g->groups; ++grp) {
    /* wt [cg, og, kh, kw]: w_g's [og, cg] swapped, each window reversed. */
    const float* wg = w + grp * g->og * g->k;
    for (int64_t o = 0; o < g->og; ++o) {
      for (int64_t i = 0; i < g->cg; ++i) {
        for (int64_t t = 0; t < taps; ++t) {
          wt[(i * g->og + o) * taps + (taps - 1 - t)] = wg[(o * g->cg + i) * taps + t];
        }
      }
    }
    d.x = dy + grp * g->og * g->p;
    d.w = wt;
    d.y = dx + grp * g->cg * g->h * g->w;
    kc__conv2d_direct_f32(&d, scratch, pool);
  }
  *done = true;
  return NULL;
}

/* kc.Conv2DGrad(x, w, dy) -> (dx, dw), each only when kc_needed asks. */
static kc_status* kc__cv_conv_grad_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  kc__cv_conv cv = {0};
  KC_RETURN_IF_ERROR(kc__cv_geom_of(ctx, false, &cv.g));
  const kc__cv_geom* g = &cv.g;
  bool need[2];
  KC_RETURN_IF_ERROR(kc__bi_needed(ctx, need, 2));
  DLTensor* dx = kc_kernel_ctx_get_output(ctx, 0);
  DLTensor* dw = kc_kernel_ctx_get_output(ctx, 1);
  size_t es = g->f32 ? sizeof(float) : sizeof(double);
  memset(kc__bi_data(dx), 0, (size_t)kc__bi_numel(dx) * es);
  memset(kc__bi_data(dw), 0, (size_t)kc__bi_numel(dw) * es);
  if (g->n * g->p == 0 || g->k * g->og == 0 || (!need[0] && !need[1])) return NULL;
  const void* x = kc__bi_data(kc_kernel_ctx_get_input(ctx, 0));
  const void* w = kc__bi_data(kc_kernel_ctx_get_input(ctx, 1));
  void* dy = kc__bi_data(kc_kernel_ctx_get_input(ctx, 2));
  if (need[0]) {
    bool done;
    KC_RETURN_IF_ERROR(kc__cv_dx_direct(ctx, g, w, dy, kc__bi_data(dx), &done));
    if (done) need[0] = false;
    if (!need[1]) return NULL;
  }
  KC_RETURN_IF_ERROR(kc__cv_conv_init(ctx, true, &cv));
  for (int64_t grp = 0; grp < g->groups; ++grp) {
    const void* wg = g->nchw ? kc__cv_at(w, grp * g->og * g->k, es) : kc__cv_hwio(&cv, w, grp);
    for (int64_t n0 = 0; n0 < g->n; n0 += cv.imgs) {
      int64_t count = g->n - n0 < cv.imgs ? g->n - n0 : cv.imgs;
      KC_RETURN_IF_ERROR(g->nchw ? kc__cv_grad_nchw(&cv, need, x, wg, dy, kc__bi_data(dx),
                                                    kc__bi_data(dw), n0, count, grp)
                                 : kc__cv_grad_nhwc(&cv, need, x, wg, dy, kc__bi_data(dx),
                                                    kc__bi_data(dw), n0, count, grp));
    }
  }
  return NULL;
}

/* ---- the table -------------------------------------------------------------------------- */

#define KC__CV_CONV_ATTRS(...)                                                            \
  {                                                                                       \
    KC__BI_T, KC__CV_FORMAT, "strides: list(int) = [1, 1]", "padding: list(int) = [0, 0]", \
        "dilations: list(int) = [1, 1]", "groups: int = 1", __VA_ARGS__ NULL              \
  }
const kc__bi_op kc__bi_conv_ops[] = {
    {.name = "kc.Conv2D",
     .inputs = KC__BI_LIST("x: T", "w: T"),
     .outputs = {"y: T", NULL},
     .attrs = KC__CV_CONV_ATTRS(),
     .doc = "2-D convolution (cross-correlation, as every framework's): x [N, H, W, C] with w "
            "[kh, kw, C / groups, O] (NHWC, HWIO) or x [N, C, H, W] with w [O, C / groups, kh, "
            "kw] (NCHW, OIHW) gives y [N, OH, OW, O] or [N, O, OH, OW], OH = (H + top + bottom - "
            "dh (kh - 1) - 1) / sh + 1 (OW alike). strides and dilations: (h, w) or one for "
            "both; padding: one for all sides, (h, w) or (top, bottom, left, right); groups "
            "divides C and O.",
     .shape_fn = kc__cv_conv_shape,
     .gradient = "kc.Conv2DGrad(x, w, grad(y)) -> (grad(x), grad(w))",
     .jvp = "kc.Conv2DJvp(x, w, tangent(x), tangent(w)) -> tangent(y)",
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__cv_conv_compute},
    {.name = "kc.Conv2DGrad",
     .inputs = KC__BI_LIST("x: T", "w: T", "dy: T"),
     .outputs = {"dx: T", "dw: T", NULL},
     .attrs = KC__CV_CONV_ATTRS(KC__BI_NEEDED, ),
     .doc = "The gradient of kc.Conv2D: dx (the transposed convolution of dy) and dw (x's "
            "windows against dy, summed over the batch); kc_needed skips either.",
     .shape_fn = kc__cv_conv_grad_shape,
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__cv_conv_grad_compute},
    {.name = "kc.Conv2DJvp",
     .inputs = KC__BI_LIST("x: T", "w: T", "tx: T", "tw: T"),
     .outputs = {"ty: T", NULL},
     .attrs = KC__CV_CONV_ATTRS(),
     .doc = "The tangent of kc.Conv2D: conv(tx, w) + conv(x, tw).",
     .shape_fn = kc__cv_conv_shape,
     .batching = KC_OP_BATCH_SEQUENTIAL,
     .compute = kc__cv_conv_compute},
};
const size_t kc__bi_conv_op_count = sizeof kc__bi_conv_ops / sizeof kc__bi_conv_ops[0];
