/* The pools of src/kernels/pool.h against their definitions written out:
 * PyTorch's 2-D pools (max keeping the first of equal elements, the
 * average with and without the padding counted, the max's gradient and
 * tangent, a y that is not the pool refused), in NCHW and NHWC, f32 and
 * f64, on the caller and on a pool; and XLA's window folds over 3-D
 * windows with padding, strides and both dilations, whose maximum puts +0
 * above -0 and whose integer sums wrap. */
#include <math.h>
#include <string.h>

#include "kernels/pool.h"
#include "test.h"

/* A pool's geometry, its strides from its layout. */
static kc__pool2d kt_pool2d(bool nchw, bool f32, int64_t n, int64_t c, int64_t h, int64_t w,
                            int64_t k, int64_t s, int64_t pad) {
  kc__pool2d g = {.nchw = nchw,
                  .f32 = f32,
                  .n = n,
                  .c = c,
                  .h = h,
                  .w = w,
                  .kh = k,
                  .kw = k,
                  .sh = s,
                  .sw = s,
                  .pt = pad,
                  .pl = pad};
  g.oh = (h + 2 * pad - k) / s + 1;
  g.ow = (w + 2 * pad - k) / s + 1;
  int64_t dims[2][2] = {{h, w}, {g.oh, g.ow}};
  for (int t = 0; t < 2; ++t) {
    int64_t* st = t ? g.ys : g.xs;
    int64_t hh = dims[t][0], ww = dims[t][1];
    if (nchw) {
      st[3] = 1, st[2] = ww, st[1] = hh * ww, st[0] = c * hh * ww;
    } else {
      st[1] = 1, st[3] = c, st[2] = ww * c, st[0] = hh * ww * c;
    }
  }
  return g;
}

static double kt_get(const void* p, bool f32, int64_t i) {
  return f32 ? (double)((const float*)p)[i] : ((const double*)p)[i];
}

KC_TEST(kernels_pool2d_against_the_definition) {
  enum { KT_N = 2, KT_C = 3, KT_H = 7, KT_W = 6, KT_MAX = KT_N * KT_C * KT_H * KT_W };
  static double xd[KT_MAX], yd[KT_MAX], bd[KT_MAX], outd[KT_MAX], want_dx[KT_MAX];
  static float xf[KT_MAX], yf[KT_MAX], bf[KT_MAX], outf[KT_MAX];
  uint32_t seed = 99;
  for (int i = 0; i < KT_MAX; ++i) {
    seed = seed * 1664525u + 1013904223u;
    xd[i] = (double)(seed >> 28) - 8; /* -8 .. 7: many ties */
    xf[i] = (float)xd[i];
    bd[i] = (double)i + 0.5;
    bf[i] = (float)bd[i];
  }
  kc_thread_pool* tp = NULL;
  KC_CHECK_OK(kc_thread_pool_create(3, &tp));
  /* window, stride, padding */
  static const int64_t geo[][3] = {{2, 2, 0}, {3, 2, 1}, {3, 1, 1}, {2, 3, 1}};
  for (int layout = 0; layout < 2; ++layout) {
    for (int type = 0; type < 2; ++type) {
      for (size_t q = 0; q < sizeof geo / sizeof geo[0]; ++q) {
        for (int on_pool = 0; on_pool < 2; ++on_pool) {
          kc__pool2d g =
              kt_pool2d(layout, type, KT_N, KT_C, KT_H, KT_W, geo[q][0], geo[q][1], geo[q][2]);
          g.include_pad = q % 2 == 0;
          bool f32 = type == 1;
          const void* x = f32 ? (const void*)xf : (const void*)xd;
          const void* b = f32 ? (const void*)bf : (const void*)bd;
          void* y = f32 ? (void*)yf : (void*)yd;
          void* out = f32 ? (void*)outf : (void*)outd;
          kc_thread_pool* p = on_pool ? tp : NULL;
          memset(want_dx, 0, sizeof want_dx);
          for (int kind = 0; kind < 3; ++kind) { /* max, average, the max's tangent */
            if (kind < 2) {
              kc__pool2d_forward(&g, kind ? KC__POOL2D_AVG : KC__POOL2D_MAX, x, y, p);
            } else {
              KC_CHECK(kc__pool2d_backward(&g, KC__POOL2D_MAX_JVP, x, NULL, b, y, p));
            }
            for (int64_t i = 0; i < KT_N * KT_C * g.oh * g.ow; ++i) {
              int64_t n = i / (KT_C * g.oh * g.ow), c = i / (g.oh * g.ow) % KT_C;
              int64_t oy = i / g.ow % g.oh, ox = i % g.ow;
              double m = -INFINITY, sum = 0;
              int64_t count = 0, arg = -1;
              for (int64_t ky = 0; ky < g.kh; ++ky) {
                for (int64_t kx = 0; kx < g.kw; ++kx) {
                  int64_t iy = oy * g.sh - g.pt + ky, ix = ox * g.sw - g.pl + kx;
                  if (iy < 0 || iy >= KT_H || ix < 0 || ix >= KT_W) continue;
                  int64_t at = n * g.xs[0] + c * g.xs[1] + iy * g.xs[2] + ix * g.xs[3];
                  double v = kt_get(x, f32, at);
                  if (v > m) m = v, arg = at; /* the first of equal maxima */
                  sum += v;
                  ++count;
                }
              }
              int64_t yo = n * g.ys[0] + c * g.ys[1] + oy * g.ys[2] + ox * g.ys[3];
              double want = kind == 0   ? m
                            : kind == 1 ? sum / (double)(g.include_pad ? g.kh * g.kw : count)
                                        : kt_get(b, f32, arg);
              if (kind == 0) want_dx[arg] += kt_get(b, f32, yo);
              double got = kt_get(y, f32, yo);
              if (fabs(got - want) > 1e-6 * (1 + fabs(want))) {
                kt__fail(__FILE__, __LINE__,
                         "layout %d type %d geometry %zu pool %d kind %d: y[%lld] is %g, "
                         "expected %g",
                         layout, type, q, on_pool, kind, (long long)yo, got, want);
              }
            }
          }
          /* The max's gradient: each dy at its window's first maximum. */
          kc__pool2d_forward(&g, KC__POOL2D_MAX, x, y, p);
          KC_CHECK(kc__pool2d_backward(&g, KC__POOL2D_MAX_GRAD, x, y, b, out, p));
          for (int64_t i = 0; i < KT_MAX; ++i) {
            if (kt_get(out, f32, i) != want_dx[i]) {
              kt__fail(__FILE__, __LINE__,
                       "layout %d type %d geometry %zu pool %d: dx[%lld] is %g, expected %g",
                       layout, type, q, on_pool, (long long)i, kt_get(out, f32, i), want_dx[i]);
            }
          }
          /* A y that is not the pool of x (every maximum raised) is refused. */
          for (int64_t i = 0; i < KT_N * KT_C * g.oh * g.ow; ++i) {
            if (f32) {
              yf[i] += 100;
            } else {
              yd[i] += 100;
            }
          }
          KC_CHECK(!kc__pool2d_backward(&g, KC__POOL2D_MAX_GRAD, x, y, b, out, p));
        }
      }
    }
  }
  kc_thread_pool_destroy(tp);
}

/* XLA's window folds over a 3-D array: every output against the fold of
 * the elements kc__window_index puts under its window. (Small enough to
 * run on the caller; the HLO reduce-window tests cover the split.) */
KC_TEST(kernels_window_fold_against_the_definition) {
  enum { KT_D0 = 3, KT_D1 = 9, KT_D2 = 5, KT_IN = KT_D0 * KT_D1 * KT_D2 };
  static float xf[KT_IN], yf[4 * KT_IN];
  static int32_t xs[KT_IN], ys[4 * KT_IN];
  uint32_t seed = 5;
  for (int i = 0; i < KT_IN; ++i) {
    seed = seed * 1664525u + 1013904223u;
    /* Zeros of both signs among the floats; int32 sums that wrap. */
    xf[i] = (seed >> 29) == 0 ? ((seed >> 8) & 1 ? -0.0f : 0.0f) : (float)(seed >> 26) - 32;
    xs[i] = (int32_t)(seed | 0x40000000u);
  }
  /* Dimension 2 passes through (the row path) in the first; dilations
   * and padding in the others. */
  static const int64_t cfg[][3][6] = {
      /* size, stride, low, high, lhs_dil, rhs_dil per dimension */
      {{2, 1, 0, 0, 1, 1}, {3, 2, 1, 1, 1, 1}, {1, 1, 0, 0, 1, 1}},
      {{1, 1, 0, 0, 1, 1}, {2, 3, 2, 0, 2, 2}, {3, 1, 1, 2, 1, 1}},
      {{3, 1, -1, 1, 1, 1}, {4, 1, 0, 0, 1, 3}, {2, 2, 0, 1, 3, 1}},
  };
  static const int64_t in[3] = {KT_D0, KT_D1, KT_D2};
  for (size_t q = 0; q < sizeof cfg / sizeof cfg[0]; ++q) {
    kc__window_fold f = {.win.dims = 3};
    f.out_count = f.window_count = 1;
    for (int32_t d = 0; d < 3; ++d) {
      const int64_t* c = cfg[q][d];
      f.win.in[d] = in[d];
      f.win.size[d] = c[0], f.win.stride[d] = c[1], f.win.low[d] = c[2];
      f.win.lhs_dil[d] = c[4], f.win.rhs_dil[d] = c[5];
      KC_CHECK(kc__window_positions(in[d], c[2], c[3], c[4], c[0], c[5], c[1], &f.win.out[d]));
      f.out_count *= f.win.out[d];
      f.window_count *= f.win.size[d];
    }
    KC_CHECK(f.out_count <= 4 * KT_IN);
    KC_CHECK(kc__window_fold_init(&f));
    float init_f = -INFINITY;
    int32_t init_s = 7;
    kc__window_fold_run(&f, KC__FOLD_MAX, KC__E_f32, xf, &init_f, yf, NULL);
    kc__window_fold_run(&f, KC__FOLD_ADD, KC__E_s32, xs, &init_s, ys, NULL);
    int64_t o[3] = {0, 0, 0};
    for (int64_t i = 0; i < f.out_count; ++i) {
      float m = init_f;
      uint32_t s = (uint32_t)init_s;
      int64_t w[3] = {0, 0, 0};
      for (int64_t k = 0; k < f.window_count; ++k) {
        int64_t at = 0;
        for (int32_t d = 0; d < 3 && at >= 0; ++d) {
          int64_t j = kc__window_index(&f.win, d, o[d], w[d]);
          at = j < 0 ? -1 : at * in[d] + j;
        }
        if (at >= 0) {
          float v = xf[at];
          /* +0 above -0, as XLA's maximum */
          m = v > m || (v == m && !signbit(v)) ? v : m;
          s += (uint32_t)xs[at];
        }
        kc__index_next(w, f.win.size, 3);
      }
      if (memcmp(&yf[i], &m, sizeof m) != 0 || ys[i] != (int32_t)s) {
        kt__fail(__FILE__, __LINE__, "window %zu: output %lld is %g and %d, expected %g and %d", q,
                 (long long)i, (double)yf[i], ys[i], (double)m, (int32_t)s);
      }
      kc__index_next(o, f.win.out, 3);
    }
    kc__window_fold_free(&f);
  }
}
