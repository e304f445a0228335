/* The windows, im2col and col2im of src/kernels/conv.h, which the HLO
 * convolution and the built-in Conv2D share: each unfolded element
 * against the window's definition written out here (o stride + w
 * rhs_dil - low in an input dilated by lhs_dil), in 1, 2 and 3 spatial
 * dimensions, with strides, dilations of both sides, padding that
 * crops, strided features; each fold against the same definition; f32
 * and f64; on the caller and on a pool. Then the direct NCHW
 * convolution against its sum written out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/conv.h"
#include "test.h"

typedef struct kt_case {
  int32_t dims;
  int64_t n, c, feat0, features; /* images, input features; the window reads feat0 .. */
  int64_t in[3], size[3], stride[3], low[3], high[3], lhs_dil[3], rhs_dil[3];
  bool channels_last; /* [n, spatial, c], else [n, c, spatial] */
} kt_case;

/* The input index along d, or -1: the definition, by brute force. */
static int64_t kt_index(const kt_case* k, int32_t d, int64_t o, int64_t w) {
  int64_t at = o * k->stride[d] + w * k->rhs_dil[d] - k->low[d];
  for (int64_t i = 0; i < k->in[d]; ++i) {
    if (i * k->lhs_dil[d] == at) return i;
  }
  return -1;
}

static void kt_geom(const kt_case* k, kc__conv_geom* g) {
  memset(g, 0, sizeof *g);
  g->win.dims = k->dims;
  int64_t sp = 1;
  for (int32_t d = k->dims - 1; d >= 0; --d) {
    kc__window* win = &g->win;
    win->in[d] = k->in[d];
    win->size[d] = k->size[d];
    win->stride[d] = k->stride[d];
    win->low[d] = k->low[d];
    win->lhs_dil[d] = k->lhs_dil[d];
    win->rhs_dil[d] = k->rhs_dil[d];
    int64_t span = (k->in[d] - 1) * k->lhs_dil[d] + 1 + k->low[d] + k->high[d];
    int64_t reach = (k->size[d] - 1) * k->rhs_dil[d] + 1;
    win->out[d] = span < reach ? 0 : (span - reach) / k->stride[d] + 1;
    g->x_s[d] = sp * (k->channels_last ? k->c : 1);
    sp *= k->in[d];
  }
  g->x_f = k->channels_last ? 1 : sp;
  g->x_b = sp * k->c;
  g->features = k->features;
  kc__conv_geom_finish(g);
}

/* The offset of (image b, feature f) under tap t of position pos, or -1. */
static int64_t kt_source(const kt_case* k, const kc__conv_geom* g, int64_t b, int64_t f,
                         int64_t pos, int64_t t) {
  int64_t off = b * g->x_b + (k->feat0 + f) * g->x_f;
  for (int32_t d = k->dims - 1; d >= 0; --d) {
    int64_t i = kt_index(k, d, pos % g->win.out[d], t % k->size[d]);
    if (i < 0) return -1;
    off += i * g->x_s[d];
    pos /= g->win.out[d];
    t /= k->size[d];
  }
  return off;
}

static double kt_get(const void* p, size_t es, int64_t i) {
  return es == 4 ? (double)((const float*)p)[i] : ((const double*)p)[i];
}

static void kt_set(void* p, size_t es, int64_t i, double v) {
  if (es == 4) {
    ((float*)p)[i] = (float)v;
  } else {
    ((double*)p)[i] = v;
  }
}

static void kt_run(const kt_case* k, size_t es, kc_thread_pool* pool) {
  kc__conv_geom g;
  kt_geom(k, &g);
  int64_t xn = g.x_b * k->n, un = k->n * g.positions * g.k;
  const int64_t x0 = k->feat0 * g.x_f; /* the group's first feature */
  char* x = malloc((size_t)(xn + 1) * es);
  char* u = malloc((size_t)(un + 1) * es);
  char* dx = malloc((size_t)(xn + 1) * es);
  double* want = calloc((size_t)xn + 1, sizeof(double));
  KC_CHECK(x && u && dx && want);
  if (!x || !u || !dx || !want) goto done;
  for (int64_t i = 0; i < xn; ++i) kt_set(x, es, i, (double)(i % 97) - 40.0);
  for (int cols = 0; cols < 2; ++cols) {
    /* Unfold in two pieces, to check r0 / n0. */
    memset(u, 0x7f, (size_t)un * es);
    int64_t half = k->n / 2;
    if (cols) {
      kc__conv_unfold_cols(&g, es, x + x0 * (int64_t)es, 0, half, u, pool);
      kc__conv_unfold_cols(&g, es, x + x0 * (int64_t)es, half, k->n - half,
                           u + half * g.k * g.positions * (int64_t)es, pool);
    } else {
      int64_t rows = k->n * g.positions, r = rows / 3;
      kc__conv_unfold_rows(&g, es, x + x0 * (int64_t)es, 0, r, u, pool);
      kc__conv_unfold_rows(&g, es, x + x0 * (int64_t)es, r, rows - r, u + r * g.k * (int64_t)es,
                           pool);
    }
    /* Every unfolded element is the input's under its window, or 0. */
    memset(want, 0, (size_t)xn * sizeof(double));
    int64_t bad = 0;
    for (int64_t b = 0; b < k->n; ++b) {
      for (int64_t pos = 0; pos < g.positions; ++pos) {
        for (int64_t t = 0; t < g.taps; ++t) {
          for (int64_t f = 0; f < k->features; ++f) {
            int64_t at = cols ? ((b * g.k + f * g.taps + t) * g.positions + pos)
                              : ((b * g.positions + pos) * g.k + t * k->features + f);
            int64_t src = kt_source(k, &g, b, f, pos, t);
            double v = src < 0 ? 0.0 : kt_get(x, es, src);
            if (kt_get(u, es, at) != v && bad++ < 5) {
              kt__fail(__FILE__, __LINE__,
                       "%s, %d dims, es %zu: image %lld position %lld tap "
                       "%lld feature %lld: expected %g, got %g",
                       cols ? "columns" : "rows", k->dims, es, (long long)b, (long long)pos,
                       (long long)t, (long long)f, v, kt_get(u, es, at));
            }
            /* The fold adds back what was read (the unfolded value itself
             * is at most a small integer times a count: exact). */
            if (src >= 0) want[src] += v + 0.5;
          }
        }
      }
    }
    /* Fold u + 0.5 (so that every read place shows) into dx. */
    for (int64_t i = 0; i < un; ++i) kt_set(u, es, i, kt_get(u, es, i) + 0.5);
    memset(dx, 0, (size_t)xn * es);
    if (cols) {
      kc__conv_fold_cols(&g, es, u, 0, half, dx + x0 * (int64_t)es, pool);
      kc__conv_fold_cols(&g, es, u + half * g.k * g.positions * (int64_t)es, half, k->n - half,
                         dx + x0 * (int64_t)es, pool);
    } else {
      kc__conv_fold_rows(&g, es, u, 0, half, dx + x0 * (int64_t)es, pool);
      kc__conv_fold_rows(&g, es, u + half * g.positions * g.k * (int64_t)es, half, k->n - half,
                         dx + x0 * (int64_t)es, pool);
    }
    for (int64_t i = 0; i < xn; ++i) {
      if (kt_get(dx, es, i) != want[i] && bad++ < 5) {
        kt__fail(__FILE__, __LINE__, "%s fold, %d dims, es %zu: dx[%lld]: expected %g, got %g",
                 cols ? "columns" : "rows", k->dims, es, (long long)i, want[i], kt_get(dx, es, i));
      }
    }
  }
done:
  free(x);
  free(u);
  free(dx);
  free(want);
}

KC_TEST(kernels_conv_unfold_and_fold_against_the_window_definition) {
  static const kt_case cases[] = {
      /* dims n c feat0 features in size stride low high lhs_dil rhs_dil last */
      {1, 3, 2, 0, 2, {11}, {3}, {2}, {1}, {2}, {1}, {2}, true},
      {1, 2, 5, 2, 3, {7}, {2}, {1}, {-1}, {3}, {2}, {1}, false}, /* cropping, base dilation */
      {2, 3, 4, 0, 4, {6, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true},
      {2, 2, 6, 3, 3, {7, 8}, {3, 2}, {2, 3}, {2, 0}, {1, 2}, {1, 1}, {2, 1}, false},
      {2, 3, 3, 1, 2, {5, 6}, {2, 3}, {1, 2}, {0, 2}, {2, 1}, {2, 1}, {1, 2}, false},
      {2, 2, 4, 0, 4, {4, 4}, {4, 4}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, true}, /* one tap */
      {3,
       2,
       3,
       0,
       3,
       {4, 5, 3},
       {2, 3, 2},
       {1, 2, 1},
       {1, 1, 0},
       {0, 1, 1},
       {1, 2, 1},
       {2, 1, 1},
       true},
      {3,
       3,
       2,
       1,
       1,
       {3, 4, 5},
       {2, 2, 2},
       {2, 1, 3},
       {0, 1, 2},
       {1, 0, 2},
       {2, 1, 1},
       {1, 2, 1},
       false},
  };
  kc_thread_pool* pool = NULL;
  KC_CHECK_OK(kc_thread_pool_create(2, &pool));
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    for (size_t es = 4; es <= 8; es += 4) {
      kt_run(&cases[i], es, NULL);
      kt_run(&cases[i], es, pool);
    }
  }
  kc_thread_pool_destroy(pool);
}

KC_TEST(kernels_conv_window_taps_and_spans) {
  kc__window win;
  memset(&win, 0, sizeof win);
  win.dims = 1;
  win.in[0] = 4;
  win.size[0] = 3;
  win.out[0] = 4;
  win.stride[0] = 2;
  win.low[0] = 2;
  win.lhs_dil[0] = 2;
  win.rhs_dil[0] = 1;
  /* at = 2 o + w - 2 in [0, 2, 4, 6] (input 0..3 dilated by 2). */
  int64_t t[12];
  kc__window_taps(&win, 0, 10, t);
  static const int64_t want[12] = {-1, -1, 0, 0, -1, 10, 10, -1, 20, 20, -1, 30};
  for (int i = 0; i < 12; ++i) KC_CHECK_INT(t[i], want[i]);
  int64_t lo, hi;
  kc__window_span(5, 2, -3, 4, &lo, &hi); /* 2 o - 3 in 0..3: o = 2, 3 */
  KC_CHECK_INT(lo, 2);
  KC_CHECK_INT(hi, 4);
  kc__window_span(5, 1, 7, 4, &lo, &hi); /* past the end: empty */
  KC_CHECK(lo == hi);
  kc__window_span(3, 1, -9, 4, &lo, &hi); /* before the start: empty */
  KC_CHECK(lo == hi);
}

/* ---- the direct NCHW convolution -------------------------------------------------------- */

typedef struct kt_direct {
  int64_t n, c, h, w, o, kh, kw, sh, dh, dw, pt, pb, pl, pr;
  int64_t c_total, c0; /* x has c_total channels, the convolution reads c0 .. c0 + c - 1 */
} kt_direct;

/* kc__conv2d_direct_f32 against the sum written out, with y's features
 * o_total wide and the result at feature o0 (a group's slice); every
 * other element of y must keep its sentinel. */
static void kt_direct_run(const kt_direct* k, kc_thread_pool* pool) {
  int64_t oh = (k->h + k->pt + k->pb - k->dh * (k->kh - 1) - 1) / k->sh + 1;
  int64_t ow = k->w + k->pl + k->pr - k->dw * (k->kw - 1);
  int64_t o_total = k->o + 3, o0 = 2;
  int64_t nx = k->n * k->c_total * k->h * k->w, nw = k->o * k->c * k->kh * k->kw;
  int64_t ny = k->n * o_total * oh * ow;
  float* x = malloc((size_t)nx * sizeof *x);
  float* w = malloc((size_t)nw * sizeof *w);
  float* y = malloc((size_t)ny * sizeof *y);
  KC_CHECK(x && w && y);
  uint32_t seed = 7;
  for (int64_t i = 0; i < nx; ++i)
    x[i] = (float)((seed = seed * 1103515245u + 12345u) >> 16) / 65536.0f - 0.5f;
  for (int64_t i = 0; i < nw; ++i)
    w[i] = (float)((seed = seed * 1103515245u + 12345u) >> 16) / 65536.0f - 0.5f;
  for (int64_t i = 0; i < ny; ++i) y[i] = 1234.5f;
  kc__conv2d d = {.x = x + k->c0 * k->h * k->w,
                  .x_n = k->c_total * k->h * k->w,
                  .x_c = k->h * k->w,
                  .w = w,
                  .y = y + o0 * oh * ow,
                  .y_n = o_total * oh * ow,
                  .y_c = oh * ow,
                  .n = k->n,
                  .c = k->c,
                  .height = k->h,
                  .width = k->w,
                  .o = k->o,
                  .kh = k->kh,
                  .kw = k->kw,
                  .oh = oh,
                  .ow = ow,
                  .sh = k->sh,
                  .dh = k->dh,
                  .dw = k->dw,
                  .pt = k->pt,
                  .pl = k->pl};
  KC_CHECK(kc__conv2d_direct_runs(&d));
  int32_t threads = pool ? kc_thread_pool_get_size(pool) : 1;
  void* scratch = malloc(kc__conv2d_direct_scratch(&d, threads));
  KC_CHECK(scratch != NULL);
  kc__conv2d_direct_f32(&d, scratch, pool);
  int64_t bad = 0;
  for (int64_t b = 0; b < k->n; ++b) {
    for (int64_t f = 0; f < o_total; ++f) {
      for (int64_t r = 0; r < oh; ++r) {
        for (int64_t q = 0; q < ow; ++q) {
          float got = y[((b * o_total + f) * oh + r) * ow + q];
          if (f < o0 || f >= o0 + k->o) {
            bad += got != 1234.5f;
            continue;
          }
          double want = 0, mag = 0;
          for (int64_t i = 0; i < k->c; ++i) {
            for (int64_t a = 0; a < k->kh; ++a) {
              for (int64_t e = 0; e < k->kw; ++e) {
                int64_t ih = r * k->sh + a * k->dh - k->pt, iw = q + e * k->dw - k->pl;
                if (ih < 0 || ih >= k->h || iw < 0 || iw >= k->w) continue;
                double t = (double)w[(((f - o0) * k->c + i) * k->kh + a) * k->kw + e] *
                           x[((b * k->c_total + k->c0 + i) * k->h + ih) * k->w + iw];
                want += t;
                mag += fabs(t);
              }
            }
          }
          bad += fabs(got - want) > 1e-5 * (mag + 1);
        }
      }
    }
  }
  if (bad)
    fprintf(stderr, "direct convolution %lldx%lld: %lld wrong\n", (long long)k->kh,
            (long long)k->kw, (long long)bad);
  KC_CHECK(bad == 0);
  free(scratch);
  free(x);
  free(w);
  free(y);
}

KC_TEST(kernels_conv_direct_nchw_against_the_sum) {
  kc__conv2d probe = {.sh = 1, .dh = 1, .dw = 1};
  if (!kc__conv2d_direct_runs(&probe)) kt_skip("the direct convolution needs AVX2 and FMA");
  static const kt_direct cases[] = {
      /* n c h w o kh kw sh dh dw pt pb pl pr c_total c0 */
      {2, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 3, 0},   /* same padding, o not a tile */
      {1, 4, 20, 37, 13, 3, 3, 1, 1, 1, 0, 0, 0, 0, 6, 2}, /* ow past two tiles; a slice */
      {3, 2, 17, 16, 6, 3, 2, 2, 1, 1, 1, 0, 2, 1, 2, 0},  /* height stride, uneven pads */
      {1, 5, 12, 19, 7, 3, 3, 1, 2, 3, 2, 2, 3, 3, 5, 0},  /* dilations */
      {2, 1, 5, 4, 1, 5, 4, 1, 1, 1, 4, 4, 3, 3, 1, 0},    /* the window larger than x */
      {1, 7, 10, 10, 12, 1, 1, 3, 1, 1, 0, 0, 0, 0, 7, 0}, /* 1x1 */
      {9, 3, 33, 40, 19, 3, 3, 1, 1, 1, 1, 1, 1, 1, 3, 0}, /* rows past one unit */
      /* channels enough that a unit takes fewer rows: 3, then 1 */
      {2, 300, 9, 70, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 300, 0},
      {1, 700, 6, 70, 3, 3, 3, 2, 1, 1, 1, 1, 1, 1, 700, 0},
  };
  kc_thread_pool* pool = NULL;
  KC_CHECK_OK(kc_thread_pool_create(3, &pool));
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    kt_direct_run(&cases[i], NULL);
    kt_direct_run(&cases[i], pool);
  }
  kc_thread_pool_destroy(pool);
}
