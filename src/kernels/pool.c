/* Pooling (pool.h): PyTorch's 2-D pools, then XLA's reduce-window folds.
 *
 * PyTorch's 2-D pools: the forward visits each output's window
 * directly; the gradients, item by item, add each cotangent to the input
 * the output came from (max: the first largest, or the last NaN, as
 * PyTorch picks) or spread it over the window (average). */
#include "kernels/pool.h"

#include <math.h>
#include <string.h>

#include "internal/common.h"
#include "kernels/xla_arith.h"

typedef struct kc__pool2d_job {
  const kc__pool2d* g;
  kc__pool2d_kind code;
  const void *x, *b; /* b: dy or tx */
  const void* y;     /* MaxPoolGrad's y, the forward's maxima */
  void* out;
  int missed; /* MaxPoolGrad: a window held no element equal to its y */
} kc__pool2d_job;

/* The window of output (oy, ox): rows y0 .. y1 - 1, columns x0 .. x1 - 1
 * inside the input, and the count the average divides by. */
static void kc__pl_window(const kc__pool2d* g, int64_t oy, int64_t ox, int64_t* y0, int64_t* y1,
                          int64_t* x0, int64_t* x1, int64_t* count) {
  int64_t ty = oy * g->sh - g->pt, tx = ox * g->sw - g->pl;
  *y0 = ty < 0 ? 0 : ty;
  *y1 = ty + g->kh < g->h ? ty + g->kh : g->h;
  *x0 = tx < 0 ? 0 : tx;
  *x1 = tx + g->kw < g->w ? tx + g->kw : g->w;
  *count = g->include_pad ? g->kh * g->kw : (*y1 - *y0) * (*x1 - *x0);
}

/* The pools work on items of channels: NCHW's each one plane (n, c), as
 * its elements lie; NHWC's each all the channels of an image, the
 * innermost loop running along them. Item `item`: its image, and its
 * channels c0 .. c0 + cn - 1. */
static void kc__pl_item(const kc__pool2d* g, int64_t item, int64_t* n, int64_t* c0, int64_t* cn) {
  *n = g->nchw ? item / g->c : item;
  *c0 = g->nchw ? item % g->c : 0;
  *cn = g->nchw ? 1 : g->c;
}

/* dx += d at the forward's choice in rows y0 .. y1 - 1, columns x0 ..
 * x1 - 1 of a plane w wide whose window's max is m: the first element
 * equal to m, or the last NaN when m is NaN, found with integer selects
 * (a branch on which element is the largest mispredicts on real data). */
static inline bool kc__pl_max_choice_f32(const float* x, int64_t w, int64_t y0, int64_t y1,
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

/* The gradient of the common pool, 2x2 windows two apart without padding:
 * each window's four elements are tested at once, with no loop over the
 * window and no branch on the data; the choice is the one above. */
static void kc__pl_max_grad_2x2_f32(const kc__pool2d* g, const float* x, const float* ym,
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

/* One NCHW plane of MaxPool in f32, the common case, with the window's
 * rows and columns clamped once per output row and column: the maxima
 * written to y; or, with dx (the gradient), dx += dy at each window's
 * choice, ym its maxima as the forward wrote them. */
static void kc__pl_max_plane_f32(const kc__pool2d* g, const float* x, float* y, const float* ym,
                                 const float* dy, float* dx, int* missed) {
  const int64_t h = g->h, w = g->w, kh = g->kh, kw = g->kw;
  if (dx && kh == 2 && kw == 2 && g->sh == 2 && g->sw == 2 && g->pt == 0 && g->pl == 0 &&
      2 * g->oh <= h && 2 * g->ow <= w) {
    kc__pl_max_grad_2x2_f32(g, x, ym, dy, dx, missed);
    return;
  }
  for (int64_t oy = 0; oy < g->oh; ++oy) {
    int64_t ty = oy * g->sh - g->pt;
    int64_t y0 = ty < 0 ? 0 : ty, y1 = ty + kh < h ? ty + kh : h;
    for (int64_t ox = 0; ox < g->ow; ++ox) {
      int64_t tx = ox * g->sw - g->pl;
      int64_t x0 = tx < 0 ? 0 : tx, x1 = tx + kw < w ? tx + kw : w;
      if (dx) {
        if (!kc__pl_max_choice_f32(x, w, y0, y1, x0, x1, ym[oy * g->ow + ox], dy[oy * g->ow + ox],
                                   dx)) {
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
#define KC__PL_POOL(T)                                                                        \
  static void kc__pl_pool_##T(void* ctx, int64_t begin, int64_t end) {                        \
    const kc__pool2d_job* j = ctx;                                                            \
    const kc__pool2d* g = j->g;                                                               \
    const bool max = j->code == KC__POOL2D_MAX;                                               \
    for (int64_t item = begin; item < end; ++item) {                                          \
      int64_t n, c0, cn;                                                                      \
      kc__pl_item(g, item, &n, &c0, &cn);                                                     \
      const T* xn = (const T*)j->x + n * g->xs[0] + c0 * g->xs[1];                            \
      T* yn = (T*)j->out + n * g->ys[0] + c0 * g->ys[1];                                      \
      if (cn == 1 && max && sizeof(T) == sizeof(float)) {                                     \
        kc__pl_max_plane_f32(g, (const float*)(const void*)xn, (float*)(void*)yn, NULL, NULL, \
                             NULL, NULL);                                                     \
        continue;                                                                             \
      }                                                                                       \
      for (int64_t oy = 0; oy < g->oh; ++oy) {                                                \
        for (int64_t ox = 0; ox < g->ow; ++ox) {                                              \
          int64_t y0, y1, x0, x1, cnt;                                                        \
          kc__pl_window(g, oy, ox, &y0, &y1, &x0, &x1, &cnt);                                 \
          T* out = yn + oy * g->ys[2] + ox * g->ys[3];                                        \
          T inv = max ? (T)1 : (T)1 / (T)(cnt > 0 ? cnt : 1);                                 \
          if (cn == 1) { /* NCHW: the window's elements into one register */                  \
            T m = max ? (T)-INFINITY : 0;                                                     \
            int nan = 0;                                                                      \
            for (int64_t iy = y0; iy < y1; ++iy) {                                            \
              const T* src = xn + iy * g->xs[2];                                              \
              for (int64_t ix = x0; ix < x1; ++ix) {                                          \
                /* maxss, and a flag for NaN: no branch on the data. */                       \
                T v = src[ix];                                                                \
                m = max ? (v > m ? v : m) : m + v;                                            \
                nan |= v != v;                                                                \
              }                                                                               \
            }                                                                                 \
            out[0] = max && nan ? (T)NAN : m * inv;                                           \
            continue;                                                                         \
          }                                                                                   \
          for (int64_t c = 0; c < cn; ++c) out[c] = max ? (T)-INFINITY : 0;                   \
          for (int64_t iy = y0; iy < y1; ++iy) {                                              \
            for (int64_t ix = x0; ix < x1; ++ix) {                                            \
              const T* src = xn + iy * g->xs[2] + ix * g->xs[3];                              \
              if (!max) {                                                                     \
                for (int64_t c = 0; c < cn; ++c) out[c] += src[c];                            \
                continue;                                                                     \
              }                                                                               \
              for (int64_t c = 0; c < cn; ++c) {                                              \
                T o = out[c], v = src[c];                                                     \
                out[c] = (o > v || o != o) ? o : v;                                           \
              }                                                                               \
            }                                                                                 \
          }                                                                                   \
          if (!max) {                                                                         \
            for (int64_t c = 0; c < cn; ++c) out[c] *= inv;                                   \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }

/* The pools' gradients and MaxPool's tangent: items (disjoint in dx). A
 * channel's element is c apart (1 in NHWC; cn is 1 in NCHW). */
#define KC__PL_POOL_BACK(T)                                                                        \
  static void kc__pl_pool_back_##T(void* ctx, int64_t begin, int64_t end) {                        \
    kc__pool2d_job* j = ctx;                                                                       \
    const kc__pool2d* g = j->g;                                                                    \
    for (int64_t item = begin; item < end; ++item) {                                               \
      int64_t n, c0, cn;                                                                           \
      kc__pl_item(g, item, &n, &c0, &cn);                                                          \
      int64_t xo = n * g->xs[0] + c0 * g->xs[1], yo = n * g->ys[0] + c0 * g->ys[1];                \
      const T* x = (const T*)j->x + xo;                                                            \
      const T* b = (const T*)j->b + (j->code == KC__POOL2D_MAX_JVP ? xo : yo);                     \
      T* out = (T*)j->out + (j->code == KC__POOL2D_MAX_JVP ? yo : xo);                             \
      const T* ym = j->y ? (const T*)j->y + yo : NULL;                                             \
      if (cn == 1 && j->code == KC__POOL2D_MAX_GRAD && sizeof(T) == sizeof(float)) {               \
        kc__pl_max_plane_f32(g, (const float*)(const void*)x, NULL, (const float*)(const void*)ym, \
                             (const float*)(const void*)b, (float*)(void*)out, &j->missed);        \
        continue;                                                                                  \
      }                                                                                            \
      for (int64_t oy = 0; oy < g->oh; ++oy) {                                                     \
        for (int64_t ox = 0; ox < g->ow; ++ox) {                                                   \
          int64_t y0, y1, x0, x1, cnt;                                                             \
          kc__pl_window(g, oy, ox, &y0, &y1, &x0, &x1, &cnt);                                      \
          int64_t at_y = oy * g->ys[2] + ox * g->ys[3];                                            \
          for (int64_t c = 0; c < cn; ++c) {                                                       \
            if (j->code == KC__POOL2D_AVG_GRAD) {                                                  \
              T share = b[at_y + c] / (T)(cnt > 0 ? cnt : 1);                                      \
              for (int64_t iy = y0; iy < y1; ++iy) {                                               \
                for (int64_t ix = x0; ix < x1; ++ix) {                                             \
                  out[iy * g->xs[2] + ix * g->xs[3] + c] += share;                                 \
                }                                                                                  \
              }                                                                                    \
              continue;                                                                            \
            }                                                                                      \
            /* MaxPool's choice, as the forward makes it: the first element                        \
             * equal to the max (the gradient is given it; the tangent finds                       \
             * it), or the last NaN; integer selects, no branch on the data. */                    \
            T m = ym ? ym[at_y + c] : (T)-INFINITY;                                                \
            int nan = m != m;                                                                      \
            for (int64_t iy = y0; iy < y1 && !ym; ++iy) {                                          \
              for (int64_t ix = x0; ix < x1; ++ix) {                                               \
                T v = x[iy * g->xs[2] + ix * g->xs[3] + c];                                        \
                m = v > m ? v : m;                                                                 \
                nan |= v != v;                                                                     \
              }                                                                                    \
            }                                                                                      \
            int64_t arg = -1;                                                                      \
            for (int64_t iy = y0; iy < y1; ++iy) {                                                 \
              for (int64_t ix = x0; ix < x1; ++ix) {                                               \
                int64_t at = iy * g->xs[2] + ix * g->xs[3] + c;                                    \
                int hit = nan ? x[at] != x[at] : (x[at] == m) & (arg < 0);                         \
                arg = hit ? at : arg;                                                              \
              }                                                                                    \
            }                                                                                      \
            if (arg < 0) { /* a window over padding alone chose nothing */                         \
              if (ym && y0 < y1 && x0 < x1) __atomic_store_n(&j->missed, 1, __ATOMIC_RELAXED);     \
              continue;                                                                            \
            }                                                                                      \
            if (j->code == KC__POOL2D_MAX_JVP) {                                                   \
              out[at_y + c] = b[arg];                                                              \
            } else {                                                                               \
              out[arg] += b[at_y + c];                                                             \
            }                                                                                      \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }

KC__PL_POOL(float)
KC__PL_POOL(double)
KC__PL_POOL_BACK(float)
KC__PL_POOL_BACK(double)

void kc__pool2d_forward(const kc__pool2d* g, kc__pool2d_kind kind, const void* x, void* y,
                        kc_thread_pool* pool) {
  kc__pool2d_job j = {.g = g, .code = kind, .x = x, .out = y};
  int64_t items = g->nchw ? g->n * g->c : g->n;
  int64_t cost = g->oh * g->ow * g->kh * g->kw * (g->nchw ? 1 : g->c) + 1;
  kc_range_fn body = g->f32 ? kc__pl_pool_float : kc__pl_pool_double;
  if (pool) {
    kc_thread_pool_parallel_for(pool, items, cost, body, &j);
  } else {
    body(&j, 0, items);
  }
}

bool kc__pool2d_backward(const kc__pool2d* g, kc__pool2d_kind kind, const void* x, const void* ym,
                         const void* b, void* out, kc_thread_pool* pool) {
  kc__pool2d_job j = {.g = g, .code = kind, .x = x, .b = b, .y = ym, .out = out};
  int64_t items = g->nchw ? g->n * g->c : g->n;
  int64_t cost = g->oh * g->ow * g->kh * g->kw * (g->nchw ? 1 : g->c) + 1;
  int64_t out_count =
      kind == KC__POOL2D_MAX_JVP ? g->n * g->c * g->oh * g->ow : g->n * g->c * g->h * g->w;
  memset(out, 0, (size_t)out_count * (g->f32 ? sizeof(float) : sizeof(double)));
  kc_range_fn body = g->f32 ? kc__pl_pool_back_float : kc__pl_pool_back_double;
  if (pool) {
    kc_thread_pool_parallel_for(pool, items, cost * 2, body, &j);
  } else {
    body(&j, 0, items);
  }
  return !j.missed;
}

/* ---- XLA's reduce-window folds ---------------------------------------------------------- */

bool kc__window_fold_init(kc__window_fold* f) {
  const kc__window* win = &f->win;
  int32_t rank = win->dims;
  for (int32_t d = 0; d < KC__WINDOW_MAX_DIMS; ++d) f->pos[d] = NULL;
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    f->in_stride[d] = stride;
    stride *= win->in[d];
  }
  for (int32_t d = 0; d < rank; ++d) {
    f->pos[d] = kc__malloc((size_t)(win->out[d] * win->size[d]) * sizeof(int64_t) + 1);
    if (!f->pos[d]) {
      kc__window_fold_free(f);
      return false;
    }
    kc__window_taps(win, d, 1, f->pos[d]);
  }
  int32_t last = rank - 1;
  bool rows = rank > 0 && win->size[last] == 1 && win->stride[last] == 1 && win->low[last] == 0 &&
              win->lhs_dil[last] == 1 && win->out[last] == win->in[last];
  f->outer_rank = rows ? last : rank;
  f->row = rows ? win->in[last] : 1;
  f->outer_count = f->outer_window_count = 1;
  for (int32_t d = 0; d < f->outer_rank; ++d) {
    f->outer_count *= win->out[d];
    f->outer_window_count *= win->size[d];
  }
  return true;
}

void kc__window_fold_free(kc__window_fold* f) {
  for (int32_t d = 0; d < KC__WINDOW_MAX_DIMS; ++d) {
    kc__free(f->pos[d]);
    f->pos[d] = NULL;
  }
}

/* Row-major multi-index of `flat` over dims[0..rank). */
static void kc__wf_unravel(int64_t flat, const int64_t* dims, int32_t rank, int64_t* idx) {
  for (int32_t d = rank - 1; d >= 0; --d) {
    idx[d] = dims[d] ? flat % dims[d] : 0;
    flat = dims[d] ? flat / dims[d] : 0;
  }
}

/* maximum and minimum as XLA's (kernels/xla_arith.h); integer add and
 * multiply wrap around. */
#define KC__WF_FOLD(sfx, ctype, code, bits)                                                   \
  static inline ctype kc__wf_max_##sfx(ctype a, ctype b) { return KC__XLA_MAX(a, b); }        \
  static inline ctype kc__wf_min_##sfx(ctype a, ctype b) { return KC__XLA_MIN(a, b); }        \
  /* acc[j] = op(acc[j], x[j]) for j < n, the op's switch outside the loop. */                \
  static void kc__wf_fold_##sfx(kc__fold_op op, ctype* restrict acc, const ctype* restrict x, \
                                int64_t n) {                                                  \
    switch (op) {                                                                             \
      case KC__FOLD_ADD:                                                                      \
        for (int64_t j = 0; j < n; ++j) acc[j] = KC__XLA_ADD(code, ctype, acc[j], x[j]);      \
        break;                                                                                \
      case KC__FOLD_MUL:                                                                      \
        for (int64_t j = 0; j < n; ++j) acc[j] = KC__XLA_MUL(code, ctype, acc[j], x[j]);      \
        break;                                                                                \
      case KC__FOLD_MAX:                                                                      \
        for (int64_t j = 0; j < n; ++j) acc[j] = kc__wf_max_##sfx(acc[j], x[j]);              \
        break;                                                                                \
      case KC__FOLD_MIN:                                                                      \
        for (int64_t j = 0; j < n; ++j) acc[j] = kc__wf_min_##sfx(acc[j], x[j]);              \
        break;                                                                                \
      case KC__FOLD_AND:                                                                      \
        for (int64_t j = 0; j < n; ++j) acc[j] = (ctype)(acc[j] != 0 && x[j] != 0);           \
        break;                                                                                \
      default:                                                                                \
        for (int64_t j = 0; j < n; ++j) acc[j] = (ctype)(acc[j] != 0 || x[j] != 0);           \
        break;                                                                                \
    }                                                                                         \
  }                                                                                           \
  /* Output rows [begin, end) of the outer dimensions. */                                     \
  static void kc__wf_rows_##sfx(const kc__window_fold* f, kc__fold_op op, const ctype* x,     \
                                ctype init, ctype* y, int64_t begin, int64_t end) {           \
    int32_t rank = f->outer_rank;                                                             \
    int64_t row = f->row;                                                                     \
    int64_t o_idx[KC__WINDOW_MAX_DIMS];                                                       \
    kc__wf_unravel(begin, f->win.out, rank, o_idx);                                           \
    for (int64_t o = begin; o < end; ++o) {                                                   \
      ctype* acc = y + o * row;                                                               \
      for (int64_t j = 0; j < row; ++j) acc[j] = init;                                        \
      int64_t w_idx[KC__WINDOW_MAX_DIMS];                                                     \
      for (int32_t d = 0; d < rank; ++d) w_idx[d] = 0;                                        \
      for (int64_t w = 0; w < f->outer_window_count; ++w) {                                   \
        int64_t off = kc__window_fold_offset(f, rank, o_idx, w_idx);                          \
        if (off >= 0) kc__wf_fold_##sfx(op, acc, x + off, row);                               \
        kc__index_next(w_idx, f->win.size, rank);                                             \
      }                                                                                       \
      kc__index_next(o_idx, f->win.out, rank);                                                \
    }                                                                                         \
  }
KC__ETYPES(KC__WF_FOLD)
#undef KC__WF_FOLD

typedef struct kc__wf_args {
  const kc__window_fold* f;
  kc__fold_op op;
  kc__etype type;
  const void* x;
  const void* init;
  void* y;
} kc__wf_args;

static void kc__wf_range(void* ctx, int64_t begin, int64_t end) {
  const kc__wf_args* a = ctx;
  switch (a->type) {
#define KC__WF_CASE(sfx, ctype, code, bits)                                             \
  case KC__E_##sfx: {                                                                   \
    ctype init;                                                                         \
    memcpy(&init, a->init, sizeof init);                                                \
    kc__wf_rows_##sfx(a->f, a->op, (const ctype*)a->x, init, (ctype*)a->y, begin, end); \
    break;                                                                              \
  }
    KC__ETYPES(KC__WF_CASE)
#undef KC__WF_CASE
    default:
      break;
  }
}

/* Below this many element folds, one thread does the whole window. */
#define KC__WF_PARALLEL_WORK 65536

void kc__window_fold_run(const kc__window_fold* f, kc__fold_op op, kc__etype type, const void* x,
                         const void* init, void* y, kc_thread_pool* pool) {
  kc__wf_args args = {.f = f, .op = op, .type = type, .x = x, .init = init, .y = y};
  if (f->out_count == 0) return;
  if (f->out_count * f->window_count < KC__WF_PARALLEL_WORK) {
    kc__wf_range(&args, 0, f->outer_count);
    return;
  }
  /* About a nanosecond an element fold. */
  kc_thread_pool_parallel_for(pool ? pool : kc_thread_pool_get_default(), f->outer_count,
                              f->outer_window_count * f->row, kc__wf_range, &args);
}
