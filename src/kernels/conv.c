/* Windows, im2col and col2im (conv.h). */
#include "kernels/conv.h"

#include <string.h>

void kc__window_taps(const kc__window* win, int32_t d, int64_t scale, int64_t* table) {
  for (int64_t o = 0; o < win->out[d]; ++o) {
    for (int64_t w = 0; w < win->size[d]; ++w) {
      int64_t i = kc__window_index(win, d, o, w);
      table[o * win->size[d] + w] = i < 0 ? -1 : i * scale;
    }
  }
}

void kc__window_span(int64_t n, int64_t stride, int64_t off, int64_t in, int64_t* lo, int64_t* hi) {
  int64_t a = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int64_t b = in - off <= 0 ? 0 : (in - off + stride - 1) / stride;
  *lo = a < n ? a : n;
  *hi = b < *lo ? *lo : (b < n ? b : n);
}

void kc__conv_geom_finish(kc__conv_geom* g) {
  g->positions = g->taps = 1;
  for (int32_t d = 0; d < g->win.dims; ++d) {
    g->positions *= g->win.out[d];
    g->taps *= g->win.size[d];
  }
  g->k = g->taps * g->features;
}

/* ---- walking a window ------------------------------------------------------------------ */

/* Row-major multi-index of `flat` over dims[0 .. n - 1]. */
static void kc__conv_unravel(int64_t flat, const int64_t* dims, int32_t n, int64_t* idx) {
  for (int32_t d = n - 1; d >= 0; --d) {
    idx[d] = flat % dims[d];
    flat /= dims[d];
  }
}

static void kc__conv_next(int64_t* idx, const int64_t* dims, int32_t n) {
  for (int32_t d = n - 1; d >= 0; --d) {
    if (++idx[d] < dims[d]) return;
    idx[d] = 0;
  }
}

/* The element offset of tap w of output position o over the first n
 * dimensions, or -1 when any of them is in the padding or a hole. */
static inline int64_t kc__conv_offset(const kc__conv_geom* g, int32_t n, const int64_t* o,
                                      const int64_t* w) {
  int64_t off = 0;
  for (int32_t d = 0; d < n; ++d) {
    int64_t i = kc__window_index(&g->win, d, o[d], w[d]);
    if (i < 0) return -1;
    off += i * g->x_s[d];
  }
  return off;
}

/* One line of a columns matrix: along the last spatial dimension, the
 * output positions [lo, hi) read the input at (o stride + off) step
 * elements from the line's start; the rest is padding. With a dilated
 * input, `direct` is false and each position asks kc__window_index. */
typedef struct kc__conv_line {
  int64_t n, lo, hi, stride, off, step;
  bool direct;
} kc__conv_line;

static inline void kc__conv_line_of(const kc__conv_geom* g, int64_t w, kc__conv_line* l) {
  int32_t d = g->win.dims - 1;
  l->lo = l->hi = 0;
  if (d < 0) {
    /* No spatial dimension: one position, reading the element itself. */
    *l =
        (kc__conv_line){.n = 1, .lo = 0, .hi = 1, .stride = 0, .off = 0, .step = 0, .direct = true};
    return;
  }
  l->n = g->win.out[d];
  l->stride = g->win.stride[d];
  l->step = g->x_s[d];
  l->off = w * g->win.rhs_dil[d] - g->win.low[d];
  l->direct = g->win.lhs_dil[d] == 1;
  if (l->direct) kc__window_span(l->n, l->stride, l->off, g->win.in[d], &l->lo, &l->hi);
}

/* ---- the typed loops ------------------------------------------------------------------- */

typedef struct kc__conv_job {
  const kc__conv_geom* g;
  int64_t first;  /* the first row (rows) or image (the others) */
  const void* in; /* x, or the unfolded form for a fold */
  void* out;      /* the unfolded form, or dx for a fold */
} kc__conv_job;

#define KC__CONV_LOOPS(T)                                                                          \
  /* dst[0 .. n - 1] = src[0 .. n - 1], apart in memory. Not restrict:                             \
   * GCC would make the loop a call of memcpy, slower on the short lines                           \
   * here than the vector loop it is with the overlap checked. */                                  \
  static inline void kc__conv_copy_##T(T* dst, const T* src, int64_t n) {                          \
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];                                               \
  }                                                                                                \
                                                                                                   \
  /* dst[0 .. n - 1] += src[0 .. n - 1], apart in memory. */                                       \
  static inline void kc__conv_add_##T(T* restrict dst, const T* restrict src, int64_t n) {         \
    for (int64_t i = 0; i < n; ++i) dst[i] += src[i];                                              \
  }                                                                                                \
                                                                                                   \
  /* Rows first + begin .. first + end - 1 into out: per row, the taps of                          \
   * the dimensions but the last (their offset found once), then the                               \
   * last dimension's taps along them. */                                                          \
  static void kc__conv_unfold_rows_##T(void* vjob, int64_t begin, int64_t end) {                   \
    const kc__conv_job* j = vjob;                                                                  \
    const kc__conv_geom* g = j->g;                                                                 \
    const kc__window* win = &g->win;                                                               \
    int32_t nd = win->dims, last = nd - 1, outer = nd > 0 ? nd - 1 : 0;                            \
    int64_t f = g->features, xf = g->x_f;                                                          \
    int64_t width = nd > 0 ? win->size[last] : 1, step = nd > 0 ? g->x_s[last] : 0;                \
    /* Channels last, the last dimension undilated: a window's row of                              \
     * taps reads width f elements in a row when it is inside the input. */                        \
    bool dense =                                                                                   \
        nd > 0 && xf == 1 && step == f && win->rhs_dil[last] == 1 && win->lhs_dil[last] == 1;      \
    int64_t o[KC__WINDOW_MAX_DIMS], w[KC__WINDOW_MAX_DIMS];                                        \
    /* The first row's image and position; the next rows' by counting. */                          \
    int64_t b = (j->first + begin) / g->positions, pos = (j->first + begin) % g->positions;        \
    kc__conv_unravel(pos, win->out, nd, o);                                                        \
    T* dst = (T*)j->out + begin * g->k;                                                            \
    for (int64_t r = begin; r < end; ++r, kc__conv_next(o, win->out, nd)) {                        \
      if (pos == g->positions) {                                                                   \
        pos = 0;                                                                                   \
        ++b;                                                                                       \
      }                                                                                            \
      ++pos;                                                                                       \
      const T* xb = (const T*)j->in + b * g->x_b;                                                  \
      for (int32_t d = 0; d < outer; ++d) w[d] = 0;                                                \
      for (int64_t t = 0; t < g->taps; t += width) {                                               \
        int64_t base = kc__conv_offset(g, outer, o, w);                                            \
        int64_t i0 = nd > 0 ? o[last] * win->stride[last] - win->low[last] : 0;                    \
        if (base >= 0 && dense && i0 >= 0 && i0 + width <= win->in[last]) {                        \
          /* The taps along the last dimension are one run of the input. */                        \
          kc__conv_copy_##T(dst, xb + base + i0 * step, width * f);                                \
          dst += width * f;                                                                        \
          kc__conv_next(w, win->size, outer);                                                      \
          continue;                                                                                \
        }                                                                                          \
        for (int64_t wl = 0; wl < width; ++wl, dst += f) {                                         \
          int64_t i = base < 0 ? -1 : nd > 0 ? kc__window_index(win, last, o[last], wl) : 0;       \
          if (i < 0) {                                                                             \
            memset(dst, 0, (size_t)f * sizeof(T));                                                 \
          } else if (xf == 1) {                                                                    \
            kc__conv_copy_##T(dst, xb + base + i * step, f);                                       \
          } else {                                                                                 \
            const T* src = xb + base + i * step;                                                   \
            for (int64_t c = 0; c < f; ++c) dst[c] = src[c * xf];                                  \
          }                                                                                        \
        }                                                                                          \
        kc__conv_next(w, win->size, outer);                                                        \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  /* Images first + begin .. first + end - 1: rows added into dx. */                               \
  static void kc__conv_fold_rows_##T(void* vjob, int64_t begin, int64_t end) {                     \
    const kc__conv_job* j = vjob;                                                                  \
    const kc__conv_geom* g = j->g;                                                                 \
    int32_t nd = g->win.dims;                                                                      \
    int64_t f = g->features;                                                                       \
    int64_t o[KC__WINDOW_MAX_DIMS], w[KC__WINDOW_MAX_DIMS];                                        \
    for (int64_t i = begin; i < end; ++i) {                                                        \
      T* db = (T*)j->out + (j->first + i) * g->x_b;                                                \
      const T* src = (const T*)j->in + i * g->positions * g->k;                                    \
      memset(o, 0, (size_t)nd * sizeof o[0]);                                                      \
      for (int64_t pos = 0; pos < g->positions; ++pos) {                                           \
        memset(w, 0, (size_t)nd * sizeof w[0]);                                                    \
        for (int64_t t = 0; t < g->taps; ++t, src += f) {                                          \
          int64_t off = kc__conv_offset(g, nd, o, w);                                              \
          kc__conv_next(w, g->win.size, nd);                                                       \
          if (off < 0) continue;                                                                   \
          T* dst = db + off;                                                                       \
          if (g->x_f == 1) {                                                                       \
            kc__conv_add_##T(dst, src, f);                                                         \
          } else {                                                                                 \
            for (int64_t c = 0; c < f; ++c) dst[c * g->x_f] += src[c];                             \
          }                                                                                        \
        }                                                                                          \
        kc__conv_next(o, g->win.out, nd);                                                          \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  /* One line of a columns row: `col` from (or, with add, into) the                                \
   * input line at `line`, NULL when the line lies in the padding or a                             \
   * hole; wl is the last dimension's tap. */                                                      \
  static inline void kc__conv_line_##T(const kc__conv_geom* g, const kc__conv_line* l, int64_t wl, \
                                       T* line, T* col, bool add) {                                \
    if (!line) {                                                                                   \
      if (!add) {                                                                                  \
        for (int64_t p = 0; p < l->n; ++p) col[p] = 0;                                             \
      }                                                                                            \
      return;                                                                                      \
    }                                                                                              \
    if (!l->direct) {                                                                              \
      for (int64_t p = 0; p < l->n; ++p) {                                                         \
        int64_t at = kc__window_index(&g->win, g->win.dims - 1, p, wl);                            \
        if (add) {                                                                                 \
          if (at >= 0) line[at * l->step] += col[p];                                               \
        } else {                                                                                   \
          col[p] = at < 0 ? (T)0 : line[at * l->step];                                             \
        }                                                                                          \
      }                                                                                            \
      return;                                                                                      \
    }                                                                                              \
    int64_t jump = l->stride * l->step, lo = l->lo, hi = l->hi;                                    \
    T* s = lo < hi ? line + (lo * l->stride + l->off) * l->step : line;                            \
    if (add) {                                                                                     \
      if (jump == 1) {                                                                             \
        kc__conv_add_##T(s, col + lo, hi - lo);                                                    \
      } else {                                                                                     \
        for (int64_t p = lo; p < hi; ++p) s[(p - lo) * jump] += col[p];                            \
      }                                                                                            \
      return;                                                                                      \
    }                                                                                              \
    /* Inline loops, not memcpy and memset: lines are short, and a call                            \
     * for each of the three parts costs more than the copy. */                                    \
    for (int64_t p = 0; p < lo; ++p) col[p] = 0;                                                   \
    if (jump == 1) {                                                                               \
      kc__conv_copy_##T(col + lo, s, hi - lo);                                                     \
    } else {                                                                                       \
      for (int64_t p = lo; p < hi; ++p) col[p] = s[(p - lo) * jump];                               \
    }                                                                                              \
    for (int64_t p = hi; p < l->n; ++p) col[p] = 0;                                                \
  }                                                                                                \
                                                                                                   \
  /* Row q of image i's columns: feature q / taps, tap q % taps, between x                         \
   * (at xf, the feature's start in the image) and the row `col`; `add`                            \
   * folds the row back into x instead. The output positions are walked                            \
   * as planes (the dimensions before the last two, their offset found                             \
   * once), lines along the last but one, and positions along the last.  */                        \
  static void kc__conv_col_##T(const kc__conv_geom* g, T* xf, T* col, int64_t q, bool add) {       \
    const kc__window* win = &g->win;                                                               \
    int32_t nd = win->dims, rd = nd - 2, pd = nd > 2 ? nd - 2 : 0;                                 \
    int64_t w[KC__WINDOW_MAX_DIMS], o[KC__WINDOW_MAX_DIMS];                                        \
    kc__conv_unravel(q % g->taps, win->size, nd, w);                                               \
    for (int32_t d = 0; d < pd; ++d) o[d] = 0;                                                     \
    kc__conv_line l;                                                                               \
    int64_t wl = nd > 0 ? w[nd - 1] : 0;                                                           \
    kc__conv_line_of(g, wl, &l);                                                                   \
    int64_t rows = rd >= 0 ? win->out[rd] : 1, per_plane = rows * l.n;                             \
    int64_t planes = per_plane > 0 ? g->positions / per_plane : 0;                                 \
    for (int64_t pl = 0; pl < planes; ++pl, kc__conv_next(o, win->out, pd)) {                      \
      int64_t base = kc__conv_offset(g, pd, o, w);                                                 \
      for (int64_t r = 0; r < rows; ++r, col += l.n) {                                             \
        int64_t i = base < 0 ? -1 : rd >= 0 ? kc__window_index(win, rd, r, w[rd]) : 0;             \
        T* line = i < 0 ? NULL : xf + base + (rd >= 0 ? i * g->x_s[rd] : 0);                       \
        kc__conv_line_##T(g, &l, wl, line, col, add);                                              \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  /* Items begin .. end - 1, item i k + q row q of image first + i. */                             \
  static void kc__conv_unfold_cols_##T(void* vjob, int64_t begin, int64_t end) {                   \
    const kc__conv_job* j = vjob;                                                                  \
    const kc__conv_geom* g = j->g;                                                                 \
    for (int64_t item = begin; item < end; ++item) {                                               \
      int64_t i = item / g->k, q = item % g->k;                                                    \
      T* xf = (T*)j->in + (j->first + i) * g->x_b + q / g->taps * g->x_f;                          \
      kc__conv_col_##T(g, xf, (T*)j->out + item * g->positions, q, false);                         \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  /* Images first + begin .. first + end - 1: columns added into dx. */                            \
  static void kc__conv_fold_cols_##T(void* vjob, int64_t begin, int64_t end) {                     \
    const kc__conv_job* j = vjob;                                                                  \
    const kc__conv_geom* g = j->g;                                                                 \
    for (int64_t i = begin; i < end; ++i) {                                                        \
      for (int64_t q = 0; q < g->k; ++q) {                                                         \
        T* xf = (T*)j->out + (j->first + i) * g->x_b + q / g->taps * g->x_f;                       \
        kc__conv_col_##T(g, xf, (T*)j->in + (i * g->k + q) * g->positions, q, true);               \
      }                                                                                            \
    }                                                                                              \
  }

KC__CONV_LOOPS(float)
KC__CONV_LOOPS(double)
#undef KC__CONV_LOOPS

/* ---- the entry points ------------------------------------------------------------------ */

static void kc__conv_run(kc_thread_pool* pool, int64_t total, int64_t cost, kc_range_fn fn,
                         kc__conv_job* job) {
  if (total <= 0) return;
  if (pool) {
    kc_thread_pool_parallel_for(pool, total, cost, fn, job);
  } else {
    fn(job, 0, total);
  }
}

void kc__conv_unfold_rows(const kc__conv_geom* g, size_t es, const void* x, int64_t r0,
                          int64_t count, void* rows, kc_thread_pool* pool) {
  kc__conv_job job = {.g = g, .first = r0, .in = x, .out = rows};
  kc__conv_run(pool, count, g->k + 1,
               es == sizeof(float) ? kc__conv_unfold_rows_float : kc__conv_unfold_rows_double,
               &job);
}

void kc__conv_unfold_cols(const kc__conv_geom* g, size_t es, const void* x, int64_t n0,
                          int64_t count, void* cols, kc_thread_pool* pool) {
  kc__conv_job job = {.g = g, .first = n0, .in = x, .out = cols};
  kc__conv_run(pool, count * g->k, g->positions + 1,
               es == sizeof(float) ? kc__conv_unfold_cols_float : kc__conv_unfold_cols_double,
               &job);
}

void kc__conv_fold_rows(const kc__conv_geom* g, size_t es, const void* rows, int64_t n0,
                        int64_t count, void* dx, kc_thread_pool* pool) {
  kc__conv_job job = {.g = g, .first = n0, .in = rows, .out = dx};
  kc__conv_run(pool, count, 2 * g->positions * g->k + 1,
               es == sizeof(float) ? kc__conv_fold_rows_float : kc__conv_fold_rows_double, &job);
}

void kc__conv_fold_cols(const kc__conv_geom* g, size_t es, const void* cols, int64_t n0,
                        int64_t count, void* dx, kc_thread_pool* pool) {
  kc__conv_job job = {.g = g, .first = n0, .in = cols, .out = dx};
  kc__conv_run(pool, count, 2 * g->positions * g->k + 1,
               es == sizeof(float) ? kc__conv_fold_cols_float : kc__conv_fold_cols_double, &job);
}
