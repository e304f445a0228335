/* kc.MaxPool and kc.AvgPool with their gradients and MaxPool's tangent,
 * on NHWC or NCHW tensors (attrs, shapes and geometry: bi_spatial.h).
 * The pools visit each output's window directly; their gradients, item
 * by item, add each cotangent to the input the output came from
 * (MaxPool: the first largest, or the last NaN, as PyTorch picks) or
 * spread it over the window (AvgPool). */
#include <math.h>
#include <string.h>

#include "builtin/bi_spatial.h"
#include "builtin/builtin_internal.h"
#include "internal/common.h"

enum {
  KC__CV_MAX,      /* MaxPool */
  KC__CV_AVG,      /* AvgPool */
  KC__CV_MAX_GRAD, /* (x, y, dy) -> dx */
  KC__CV_AVG_GRAD, /* (x, dy) -> dx */
  KC__CV_MAX_JVP,  /* (x, tx) -> ty */
};

typedef struct kc__cv_pool_job {
  const kc__cv_geom* g;
  int code;
  bool include_pad;
  const void *x, *b; /* b: dy or tx */
  const void* y;      /* MaxPoolGrad's y, the forward's maxima */
  void* out;
  int missed;         /* MaxPoolGrad: a window held no element equal to its y */
} kc__cv_pool_job;

/* The window of output (oy, ox): rows y0 .. y1 - 1, columns x0 .. x1 - 1
 * inside the input, and the count the average divides by. */
static void kc__cv_window(const kc__cv_geom* g, bool include_pad, int64_t oy, int64_t ox,
                          int64_t* y0, int64_t* y1, int64_t* x0, int64_t* x1, int64_t* count) {
  int64_t ty = oy * g->sh - g->pt, tx = ox * g->sw - g->pl;
  *y0 = ty < 0 ? 0 : ty;
  *y1 = ty + g->kh < g->h ? ty + g->kh : g->h;
  *x0 = tx < 0 ? 0 : tx;
  *x1 = tx + g->kw < g->w ? tx + g->kw : g->w;
  *count = include_pad ? g->kh * g->kw : (*y1 - *y0) * (*x1 - *x0);
}

/* The pools work on items of channels: NCHW's each one plane (n, c), as
 * its elements lie; NHWC's each all the channels of an image, the
 * innermost loop running along them. Item `item`: its image, and its
 * channels c0 .. c0 + cn - 1. */
static void kc__cv_item(const kc__cv_geom* g, int64_t item, int64_t* n, int64_t* c0, int64_t* cn) {
  *n = g->nchw ? item / g->c : item;
  *c0 = g->nchw ? item % g->c : 0;
  *cn = g->nchw ? 1 : g->c;
}

/* dx += d at the forward's choice in rows y0 .. y1 - 1, columns x0 ..
 * x1 - 1 of a plane w wide whose window's max is m: the first element
 * equal to m, or the last NaN when m is NaN, found with integer selects
 * (a branch on which element is the largest mispredicts on real data). */
static inline bool kc__cv_max_choice_f32(const float* x, int64_t w, int64_t y0, int64_t y1,
                                         int64_t x0, int64_t x1, float m, float d, float* dx) {
  int nan = m != m;
  int64_t arg = -1;
  for (int64_t iy = y0; iy < y1; ++iy) {
    for (int64_t ix = x0; ix < x1; ++ix) {
      float v = x[iy * w + ix];
      int hit = nan ? v != v : (v == m) & (arg < 0);
      arg = hit ? iy * w + ix : arg;
    }
  }
  if (arg >= 0) dx[arg] += d;
  return arg >= 0 || y0 >= y1 || x0 >= x1; /* an empty window chose nothing */
}

/* One NCHW plane of MaxPool in f32, the common case, with the window's
 * rows and columns clamped once per output row and column: the maxima
 * written to y; or, with dx (the gradient), dx += dy at each window's
 * choice, ym its maxima as the forward wrote them. */
/* The gradient of the common pool, 2x2 windows two apart without padding:
 * each window's four elements are tested at once, with no loop over the
 * window and no branch on the data; the choice is the one above. */
static void kc__cv_max_grad_2x2_f32(const kc__cv_geom* g, const float* x, const float* ym,
                                    const float* dy, float* dx, int* missed) {
  const int64_t w = g->w;
  int bad = 0;
  for (int64_t oy = 0; oy < g->oh; ++oy) {
    const float* r0 = x + 2 * oy * w;
    const float* r1 = r0 + w;
    float* d0 = dx + 2 * oy * w;
    float* d1 = d0 + w;
    const float* m = ym + oy * g->ow;
    const float* gy = dy + oy * g->ow;
    for (int64_t ox = 0; ox < g->ow; ++ox) {
      float a = r0[2 * ox], b = r0[2 * ox + 1], c = r1[2 * ox], d = r1[2 * ox + 1];
      float mv = m[ox], gv = gy[ox];
      int nan = mv != mv;
      /* The first equal to the max; with a NaN max, the last NaN. */
      int ea = a == mv, eb = (b == mv) & !ea, ec = (c == mv) & !ea & !eb;
      int ed = (d == mv) & !ea & !eb & !ec;
      int nd = d != d, nc = (c != c) & !nd, nb = (b != b) & !nd & !nc;
      int na = (a != a) & !nd & !nc & !nb;
      int sa = nan ? na : ea, sb = nan ? nb : eb, sc = nan ? nc : ec, sd = nan ? nd : ed;
      bad |= !(sa | sb | sc | sd);
      d0[2 * ox] += sa ? gv : 0.0f;
      d0[2 * ox + 1] += sb ? gv : 0.0f;
      d1[2 * ox] += sc ? gv : 0.0f;
      d1[2 * ox + 1] += sd ? gv : 0.0f;
    }
  }
  if (bad) __atomic_store_n(missed, 1, __ATOMIC_RELAXED);
}

static void kc__cv_max_plane_f32(const kc__cv_geom* g, const float* x, float* y,
                                 const float* ym, const float* dy, float* dx, int* missed) {
  const int64_t h = g->h, w = g->w, kh = g->kh, kw = g->kw;
  if (dx && kh == 2 && kw == 2 && g->sh == 2 && g->sw == 2 && g->pt == 0 && g->pl == 0 &&
      2 * g->oh <= h && 2 * g->ow <= w) {
    kc__cv_max_grad_2x2_f32(g, x, ym, dy, dx, missed);
    return;
  }
  for (int64_t oy = 0; oy < g->oh; ++oy) {
    int64_t ty = oy * g->sh - g->pt;
    int64_t y0 = ty < 0 ? 0 : ty, y1 = ty + kh < h ? ty + kh : h;
    for (int64_t ox = 0; ox < g->ow; ++ox) {
      int64_t tx = ox * g->sw - g->pl;
      int64_t x0 = tx < 0 ? 0 : tx, x1 = tx + kw < w ? tx + kw : w;
      if (dx) {
        if (!kc__cv_max_choice_f32(x, w, y0, y1, x0, x1, ym[oy * g->ow + ox],
                                   dy[oy * g->ow + ox], dx)) {
          __atomic_store_n(missed, 1, __ATOMIC_RELAXED);
        }
        continue;
      }
      float m = -INFINITY;
      int nan = 0;
      for (int64_t iy = y0; iy < y1; ++iy) {
        const float* r = x + iy * w;
        /* maxss, and a flag for NaN: no branch on the data. */
        for (int64_t ix = x0; ix < x1; ++ix) {
          float v = r[ix];
          m = v > m ? v : m;
          nan |= v != v;
        }
      }
      y[oy * g->ow + ox] = nan ? NAN : m;
    }
  }
}

/* MaxPool and AvgPool: items, each over its channels. */
#define KC__CV_POOL(T)                                                                       \
  static void kc__cv_pool_##T(void* ctx, int64_t begin, int64_t end) {                       \
    const kc__cv_pool_job* j = ctx;                                                          \
    const kc__cv_geom* g = j->g;                                                             \
    const bool max = j->code == KC__CV_MAX;                                                  \
    for (int64_t item = begin; item < end; ++item) {                                         \
      int64_t n, c0, cn;                                                                     \
      kc__cv_item(g, item, &n, &c0, &cn);                                                    \
      const T* xn = (const T*)j->x + n * g->xs[0] + c0 * g->xs[1];                           \
      T* yn = (T*)j->out + n * g->ys[0] + c0 * g->ys[1];                                     \
      if (cn == 1 && max && sizeof(T) == sizeof(float)) {                                    \
        kc__cv_max_plane_f32(g, (const float*)(const void*)xn, (float*)(void*)yn, NULL, NULL, \
                             NULL, NULL);                                                    \
        continue;                                                                            \
      }                                                                                      \
      for (int64_t oy = 0; oy < g->oh; ++oy) {                                               \
        for (int64_t ox = 0; ox < g->ow; ++ox) {                                             \
          int64_t y0, y1, x0, x1, cnt;                                                       \
          kc__cv_window(g, j->include_pad, oy, ox, &y0, &y1, &x0, &x1, &cnt);                \
          T* out = yn + oy * g->ys[2] + ox * g->ys[3];                                       \
          T inv = max ? (T)1 : (T)1 / (T)(cnt > 0 ? cnt : 1);                                \
          if (cn == 1) { /* NCHW: the window's elements into one register */                \
            T m = max ? (T)-INFINITY : 0;                                                    \
            int nan = 0;                                                                     \
            for (int64_t iy = y0; iy < y1; ++iy) {                                           \
              const T* src = xn + iy * g->xs[2];                                             \
              for (int64_t ix = x0; ix < x1; ++ix) {                                         \
                /* maxss, and a flag for NaN: no branch on the data. */                      \
                T v = src[ix];                                                               \
                m = max ? (v > m ? v : m) : m + v;                                           \
                nan |= v != v;                                                               \
              }                                                                              \
            }                                                                                \
            out[0] = max && nan ? (T)NAN : m * inv;                                          \
            continue;                                                                        \
          }                                                                                  \
          for (int64_t c = 0; c < cn; ++c) out[c] = max ? (T)-INFINITY : 0;                  \
          for (int64_t iy = y0; iy < y1; ++iy) {                                             \
            for (int64_t ix = x0; ix < x1; ++ix) {                                           \
              const T* src = xn + iy * g->xs[2] + ix * g->xs[3];                             \
              if (!max) {                                                                    \
                for (int64_t c = 0; c < cn; ++c) out[c] += src[c];                           \
                continue;                                                                    \
              }                                                                              \
              for (int64_t c = 0; c < cn; ++c) {                                             \
                T o = out[c], v = src[c];                                                    \
                out[c] = (o > v || o != o) ? o : v;                                          \
              }                                                                              \
            }                                                                                \
          }                                                                                  \
          if (!max) {                                                                        \
            for (int64_t c = 0; c < cn; ++c) out[c] *= inv;                                  \
          }                                                                                  \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }

/* The pools' gradients and MaxPool's tangent: items (disjoint in dx). A
 * channel's element is c apart (1 in NHWC; cn is 1 in NCHW). */
#define KC__CV_POOL_BACK(T)                                                                  \
  static void kc__cv_pool_back_##T(void* ctx, int64_t begin, int64_t end) {                  \
    kc__cv_pool_job* j = ctx;                                                                \
    const kc__cv_geom* g = j->g;                                                             \
    for (int64_t item = begin; item < end; ++item) {                                         \
      int64_t n, c0, cn;                                                                     \
      kc__cv_item(g, item, &n, &c0, &cn);                                                    \
      int64_t xo = n * g->xs[0] + c0 * g->xs[1], yo = n * g->ys[0] + c0 * g->ys[1];          \
      const T* x = (const T*)j->x + xo;                                                      \
      const T* b = (const T*)j->b + (j->code == KC__CV_MAX_JVP ? xo : yo);                   \
      T* out = (T*)j->out + (j->code == KC__CV_MAX_JVP ? yo : xo);                           \
      const T* ym = j->y ? (const T*)j->y + yo : NULL;                                       \
      if (cn == 1 && j->code == KC__CV_MAX_GRAD && sizeof(T) == sizeof(float)) {             \
        kc__cv_max_plane_f32(g, (const float*)(const void*)x, NULL,                          \
                             (const float*)(const void*)ym, (const float*)(const void*)b,    \
                             (float*)(void*)out, &j->missed);                                \
        continue;                                                                            \
      }                                                                                      \
      for (int64_t oy = 0; oy < g->oh; ++oy) {                                               \
        for (int64_t ox = 0; ox < g->ow; ++ox) {                                             \
          int64_t y0, y1, x0, x1, cnt;                                                       \
          kc__cv_window(g, j->include_pad, oy, ox, &y0, &y1, &x0, &x1, &cnt);                \
          int64_t at_y = oy * g->ys[2] + ox * g->ys[3];                                      \
          for (int64_t c = 0; c < cn; ++c) {                                                 \
            if (j->code == KC__CV_AVG_GRAD) {                                                \
              T share = b[at_y + c] / (T)(cnt > 0 ? cnt : 1);                                \
              for (int64_t iy = y0; iy < y1; ++iy) {                                         \
                for (int64_t ix = x0; ix < x1; ++ix) {                                       \
                  out[iy * g->xs[2] + ix * g->xs[3] + c] += share;                           \
                }                                                                            \
              }                                                                              \
              continue;                                                                      \
            }                                                                                \
            /* MaxPool's choice, as the forward makes it: the first element           \
             * equal to the max (the gradient is given it; the tangent finds            \
             * it), or the last NaN; integer selects, no branch on the data. */          \
            T m = ym ? ym[at_y + c] : (T)-INFINITY;                                          \
            int nan = m != m;                                                                \
            for (int64_t iy = y0; iy < y1 && !ym; ++iy) {                                    \
              for (int64_t ix = x0; ix < x1; ++ix) {                                         \
                T v = x[iy * g->xs[2] + ix * g->xs[3] + c];                                  \
                m = v > m ? v : m;                                                           \
                nan |= v != v;                                                               \
              }                                                                              \
            }                                                                                \
            int64_t arg = -1;                                                                \
            for (int64_t iy = y0; iy < y1; ++iy) {                                           \
              for (int64_t ix = x0; ix < x1; ++ix) {                                         \
                int64_t at = iy * g->xs[2] + ix * g->xs[3] + c;                              \
                int hit = nan ? x[at] != x[at] : (x[at] == m) & (arg < 0);                   \
                arg = hit ? at : arg;                                                        \
              }                                                                              \
            }                                                                                \
            if (arg < 0) { /* a window over padding alone chose nothing */                   \
              if (ym && y0 < y1 && x0 < x1) __atomic_store_n(&j->missed, 1, __ATOMIC_RELAXED); \
              continue;                                                                      \
            }                                                                                \
            if (j->code == KC__CV_MAX_JVP) {                                                 \
              out[at_y + c] = b[arg];                                                        \
            } else {                                                                         \
              out[arg] += b[at_y + c];                                                       \
            }                                                                                \
          }                                                                                  \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }

KC__CV_POOL(float)
KC__CV_POOL(double)
KC__CV_POOL_BACK(float)
KC__CV_POOL_BACK(double)

static kc_status* kc__cv_pool_compute(void* kernel, kc_kernel_ctx* ctx) {
  kc__cv_geom g;
  KC_RETURN_IF_ERROR(kc__cv_geom_of(ctx, true, &g));
  kc__cv_pool_job j = {.g = &g,
                       .code = kc__bi_code(kernel),
                       .x = kc__bi_data(kc_kernel_ctx_get_input(ctx, 0)),
                       .out = kc__bi_data(kc_kernel_ctx_get_output(ctx, 0))};
  if (j.code == KC__CV_AVG || j.code == KC__CV_AVG_GRAD) {
    KC_RETURN_IF_ERROR(
        kc_op_attrs_get_bool(kc_kernel_ctx_get_attrs(ctx), "count_include_pad", &j.include_pad));
  }
  kc_thread_pool* pool = kc_kernel_ctx_get_thread_pool(ctx);
  int64_t items = g.nchw ? g.n * g.c : g.n;
  int64_t cost = g.p * g.kh * g.kw * (g.nchw ? 1 : g.c) + 1;
  if (j.code == KC__CV_MAX || j.code == KC__CV_AVG) {
    kc_thread_pool_parallel_for(pool, items, cost, g.f32 ? kc__cv_pool_float : kc__cv_pool_double,
                                &j);
    return NULL;
  }
  int32_t last = kc_kernel_ctx_get_input_count(ctx) - 1;
  j.b = kc__bi_data(kc_kernel_ctx_get_input(ctx, last));
  if (j.code == KC__CV_MAX_GRAD) j.y = kc__bi_data(kc_kernel_ctx_get_input(ctx, 1));
  DLTensor* out = kc_kernel_ctx_get_output(ctx, 0);
  memset(j.out, 0, (size_t)kc__bi_numel(out) * (g.f32 ? sizeof(float) : sizeof(double)));
  kc_thread_pool_parallel_for(pool, items, cost * 2,
                              g.f32 ? kc__cv_pool_back_float : kc__cv_pool_back_double, &j);
  if (j.missed) {
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

#define KC__CV_POOL_ATTRS(...)                                                          \
  {                                                                                     \
    KC__BI_T, KC__CV_FORMAT, "ksize: list(int)", "strides: list(int) = []",              \
        "padding: list(int) = [0, 0]", __VA_ARGS__ NULL                                  \
  }
#define KC__CV_AVG_ATTRS KC__CV_POOL_ATTRS("count_include_pad: bool = true", )

#define KC__CV_POOL_OP(NAME, IN, OUT, ATTRS, CODE, DOC, GRAD, JVP)                              \
  {                                                                                             \
    .name = "kc." NAME, .inputs = IN, .outputs = {OUT, NULL}, .attrs = ATTRS, .doc = DOC,      \
    .shape_fn = CODE == KC__CV_MAX_GRAD || CODE == KC__CV_AVG_GRAD ? kc__cv_pool_grad_shape     \
                                                                   : kc__cv_pool_shape,         \
    .gradient = GRAD, .jvp = JVP,                                                               \
    .batching = KC_OP_BATCH_SEQUENTIAL, .compute = kc__cv_pool_compute, .code = CODE            \
  }

const kc__bi_op kc__bi_pool_ops[] = {
    KC__CV_POOL_OP("MaxPool", KC__BI_LIST("x: T"), "y: T", KC__CV_POOL_ATTRS(), KC__CV_MAX,
                   "The largest element of each ksize window of x (NHWC or NCHW), the windows "
                   "strides apart (none given: ksize), over x padded with -inf; a NaN in a "
                   "window gives NaN.",
                   "kc.MaxPoolGrad(x, y, grad(y)) -> grad(x)", "kc.MaxPoolJvp(x, tangent(x)) -> tangent(y)"),
    KC__CV_POOL_OP("MaxPoolGrad", KC__BI_LIST("x: T", "y: T", "dy: T"), "dx: T", KC__CV_POOL_ATTRS(),
                   KC__CV_MAX_GRAD,
                   "The gradient of kc.MaxPool from x, its output y and dy: each dy added to "
                   "the element of x its window chose (the first equal to y, or the last NaN, "
                   "as PyTorch); a y that is not kc.MaxPool(x) (a window with no element equal "
                   "to it) is refused.",
                   NULL, NULL),
    KC__CV_POOL_OP("MaxPoolJvp", KC__BI_LIST("x: T", "tx: T"), "ty: T", KC__CV_POOL_ATTRS(),
                   KC__CV_MAX_JVP, "The tangent of kc.MaxPool: tx at the element each window chose.",
                   NULL, NULL),
    KC__CV_POOL_OP("AvgPool", KC__BI_LIST("x: T"), "y: T", KC__CV_AVG_ATTRS, KC__CV_AVG,
                   "The mean of each ksize window of x (NHWC or NCHW), the windows strides "
                   "apart (none given: ksize), over x padded with zeros; with "
                   "count_include_pad false the padding is not counted.",
                   "kc.AvgPoolGrad(x, grad(y)) -> grad(x)", "kc.AvgPool(tangent(x)) -> tangent(y)"),
    KC__CV_POOL_OP("AvgPoolGrad", KC__BI_LIST("x: T", "dy: T"), "dx: T", KC__CV_AVG_ATTRS,
                   KC__CV_AVG_GRAD,
                   "The gradient of kc.AvgPool: each dy spread evenly over its window (x gives "
                   "the shape).",
                   NULL, NULL),
};
const size_t kc__bi_pool_op_count = sizeof kc__bi_pool_ops / sizeof kc__bi_pool_ops[0];
