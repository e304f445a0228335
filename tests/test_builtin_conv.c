/* The spatial built-in ops (src/builtin/bi_conv.c): kc.Conv2D, its
 * gradient and tangent, and the pools with theirs, each against a
 * reference computed here in double by visiting every (output, window)
 * pair, in both layouts, with strides, padding, dilation and groups; and
 * what they refuse. */
#include "kt_builtin.h"

/* A list(int) attr; the array is released by kt_attrs_release. */
static kc_op_attr kt_list_attr(const char* name, const int64_t* v, int32_t n) {
  kc_any items[4];
  for (int32_t i = 0; i < n; ++i) items[i] = kc_any_int(v[i]);
  kc_array* a = NULL;
  KC_CHECK_OK(kc_array_create(kt_alloc(), items, (size_t)n, &a));
  return (kc_op_attr){kc_sv(name), kc_any_object(KC_OBJECT(a))};
}

static void kt_attrs_release(kc_op_attr* attrs, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    if (kc_any_is_object(&attrs[i].value)) kc_object_release(attrs[i].value.u.v_obj);
  }
}

/* One convolution's configuration; the layout's dims follow from it. */
typedef struct kt_conv {
  bool nchw;
  int64_t n, c, h, w, o, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, groups;
} kt_conv;

static int64_t kt_out_h(const kt_conv* k) {
  return (k->h + k->pt + k->pb - k->dh * (k->kh - 1) - 1) / k->sh + 1;
}
static int64_t kt_out_w(const kt_conv* k) {
  return (k->w + k->pl + k->pr - k->dw * (k->kw - 1) - 1) / k->sw + 1;
}

/* Offsets of x[n, c, y, x] in the layout of a [n, c, h, w] tensor, and of
 * w[o, i, ky, kx] in OIHW or HWIO. */
static int64_t kt_at4(bool nchw, int64_t c, int64_t h, int64_t w, int64_t ni, int64_t ci,
                      int64_t yi, int64_t xi) {
  return nchw ? ((ni * c + ci) * h + yi) * w + xi : ((ni * h + yi) * w + xi) * c + ci;
}
static int64_t kt_atw(const kt_conv* k, int64_t o, int64_t i, int64_t ky, int64_t kx) {
  int64_t cg = k->c / k->groups;
  return k->nchw ? ((o * cg + i) * k->kh + ky) * k->kw + kx
                 : ((ky * k->kw + kx) * cg + i) * k->o + o;
}

/* y, dx and dw by visiting every product x * w once. */
static void kt_conv_reference(const kt_conv* k, const DLTensor* x, const DLTensor* w,
                              const DLTensor* dy, double* y, double* dx, double* dw) {
  int64_t oh = kt_out_h(k), ow = kt_out_w(k), cg = k->c / k->groups, og = k->o / k->groups;
  memset(y, 0, sizeof(double) * (size_t)(k->n * k->o * oh * ow));
  memset(dx, 0, sizeof(double) * (size_t)(k->n * k->c * k->h * k->w));
  memset(dw, 0, sizeof(double) * (size_t)(k->o * cg * k->kh * k->kw));
  for (int64_t n = 0; n < k->n; ++n)
    for (int64_t o = 0; o < k->o; ++o)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          int64_t yo = kt_at4(k->nchw, k->o, oh, ow, n, o, oy, ox);
          for (int64_t i = 0; i < cg; ++i)
            for (int64_t ky = 0; ky < k->kh; ++ky)
              for (int64_t kx = 0; kx < k->kw; ++kx) {
                int64_t iy = oy * k->sh - k->pt + ky * k->dh, ix = ox * k->sw - k->pl + kx * k->dw;
                if (iy < 0 || iy >= k->h || ix < 0 || ix >= k->w) continue;
                int64_t xo = kt_at4(k->nchw, k->c, k->h, k->w, n, (o / og) * cg + i, iy, ix);
                int64_t wo = kt_atw(k, o, i, ky, kx);
                y[yo] += kt_at(x, xo) * kt_at(w, wo);
                dx[xo] += kt_at(dy, yo) * kt_at(w, wo);
                dw[wo] += kt_at(dy, yo) * kt_at(x, xo);
              }
        }
}

static int32_t kt_conv_attrs(const kt_conv* k, kc_op_attr* attrs) {
  int64_t s[2] = {k->sh, k->sw}, d[2] = {k->dh, k->dw}, p[4] = {k->pt, k->pb, k->pl, k->pr};
  attrs[0] = (kc_op_attr){kc_sv("data_format"), kc_any_cstr(k->nchw ? "NCHW" : "NHWC")};
  attrs[1] = kt_list_attr("strides", s, 2);
  attrs[2] = kt_list_attr("dilations", d, 2);
  attrs[3] = kt_list_attr("padding", p, 4);
  attrs[4] = (kc_op_attr){kc_sv("groups"), kc_any_int(k->groups)};
  return 5;
}

static void kt_conv_case(const kt_conv* k, DLDataType dt, uint32_t* seed) {
  int64_t oh = kt_out_h(k), ow = kt_out_w(k), cg = k->c / k->groups;
  int64_t xs[4] = {k->n, k->nchw ? k->c : k->h, k->nchw ? k->h : k->w, k->nchw ? k->w : k->c};
  int64_t ws[4] = {k->nchw ? k->o : k->kh, k->nchw ? cg : k->kw, k->nchw ? k->kh : cg,
                   k->nchw ? k->kw : k->o};
  int64_t ys[4] = {k->n, k->nchw ? k->o : oh, k->nchw ? oh : ow, k->nchw ? ow : k->o};
  kc_tensor* x = kt_random(dt, xs, 4, seed);
  kc_tensor* w = kt_random(dt, ws, 4, seed);
  kc_tensor* dy = kt_random(dt, ys, 4, seed);
  kc_tensor* tx = kt_random(dt, xs, 4, seed);
  kc_tensor* tw = kt_random(dt, ws, 4, seed);
  int64_t ny = k->n * k->o * oh * ow, nx = k->n * k->c * k->h * k->w, nw = k->o * cg * k->kh * k->kw;
  double* ry = malloc(sizeof(double) * (size_t)(ny + nx + nw) * 2);
  double *rdx = ry + ny, *rdw = rdx + nx, *t1 = rdw + nw, *t2 = t1 + ny, *t3 = t2 + nx;
  kt_conv_reference(k, kt_dl(x), kt_dl(w), kt_dl(dy), ry, rdx, rdw);
  /* f32 sums of many terms of either sign: an error that grows with the
   * square root of their count (dw's: every output position of the batch). */
  double tol = dt.bits == 32 ? 1e-6 * (1 + sqrt((double)(k->n * oh * ow * k->kh * k->kw * cg)))
                             : 1e-12;
  kc_op_attr attrs[6];
  int32_t na = kt_conv_attrs(k, attrs);

  kc_tensor* y = kt_bi_call1("kc.Conv2D", x, w, attrs, na);
  KC_CHECK(memcmp(kt_dl(y)->shape, ys, sizeof ys) == 0);
  kt_check_tensor(y, ry, ny, tol, "kc.Conv2D");

  kc_tensor* in[4] = {x, w, dy, NULL};
  kc_tensor* out[2] = {NULL, NULL};
  kt_bi_call("kc.Conv2DGrad", in, 3, attrs, na, out, 2);
  kt_check_tensor(out[0], rdx, nx, tol, "kc.Conv2DGrad dx");
  kt_check_tensor(out[1], rdw, nw, tol, "kc.Conv2DGrad dw");
  kt_release(out[0]);
  kt_release(out[1]);

  /* kc_needed: only dw (bit 1), dx left zero. */
  attrs[na] = (kc_op_attr){kc_sv("kc_needed"), kc_any_int(2)};
  kt_bi_call("kc.Conv2DGrad", in, 3, attrs, na + 1, out, 2);
  for (int64_t i = 0; i < nx; ++i) KC_CHECK(kt_at(kt_dl(out[0]), i) == 0);
  kt_check_tensor(out[1], rdw, nw, tol, "kc.Conv2DGrad dw alone");
  kt_release(out[0]);
  kt_release(out[1]);

  /* The tangent: conv is linear in each argument. */
  kt_conv_reference(k, kt_dl(tx), kt_dl(w), kt_dl(dy), t1, t2, t3);
  for (int64_t i = 0; i < ny; ++i) ry[i] = t1[i];
  kt_conv_reference(k, kt_dl(x), kt_dl(tw), kt_dl(dy), t1, t2, t3);
  for (int64_t i = 0; i < ny; ++i) ry[i] += t1[i];
  kc_tensor* jin[4] = {x, w, tx, tw};
  kc_tensor* jout[2] = {NULL, NULL};
  kt_bi_call("kc.Conv2DJvp", jin, 4, attrs, na, jout, 1);
  kt_check_tensor(jout[0], ry, ny, tol, "kc.Conv2DJvp");

  kt_attrs_release(attrs, na);
  free(ry);
  kc_tensor* all[7] = {x, w, dy, tx, tw, y, jout[0]};
  for (int i = 0; i < 7; ++i) kt_release(all[i]);
}

KC_TEST(builtin_conv2d_forward_gradient_and_tangent_against_a_reference) {
  KC_CHECK_OK(kc_builtin_ops_register());
  static const kt_conv cases[] = {
      /* nchw n c h w o kh kw sh sw dh dw pt pb pl pr groups */
      {false, 2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1},  /* plain */
      {true, 2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1},
      {false, 3, 4, 9, 8, 6, 3, 2, 2, 1, 1, 2, 1, 2, 0, 1, 2},  /* strides, dilation, padding */
      {true, 3, 4, 9, 8, 6, 3, 2, 2, 1, 1, 2, 1, 2, 0, 1, 2},   /* groups */
      {false, 2, 6, 5, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6},  /* depthwise */
      {true, 2, 6, 5, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6},
      {false, 4, 5, 4, 4, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},  /* 1x1 */
      {true, 1, 2, 11, 3, 5, 4, 1, 3, 2, 2, 1, 3, 0, 2, 2, 1},  /* tall window */
      /* NCHW at strides of 1 (the direct convolution, dx too): dilated,
       * grouped, padded unevenly; then padded past the window's reach
       * (dx by col2im) */
      {true, 2, 4, 10, 19, 6, 3, 3, 1, 1, 2, 2, 1, 2, 2, 1, 2},
      {true, 1, 2, 5, 5, 2, 2, 2, 1, 1, 1, 1, 3, 0, 0, 3, 1},
  };
  uint32_t seed = 7;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    kt_conv_case(&cases[i], kt_f32, &seed);
    kt_conv_case(&cases[i], kt_f64, &seed);
  }
}

KC_TEST(builtin_conv2d_chunks_many_images) {
  KC_CHECK_OK(kc_builtin_ops_register());
  /* More rows than one chunk holds (2 MiB): 40 images of 64x64x8 with a
   * 3x3 window unfold to 40 x 4096 x 72 floats. */
  kt_conv k = {false, 40, 8, 64, 64, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  uint32_t seed = 3;
  kt_conv_case(&k, kt_f32, &seed);
  /* NCHW unfolds each image into [k, p] (1.2 MiB here: a chunk a
   * group of an image), with two groups. */
  k.nchw = true;
  k.groups = 2;
  kt_conv_case(&k, kt_f32, &seed);
}

KC_TEST(builtin_conv2d_refuses_mismatched_features_and_windows) {
  KC_CHECK_OK(kc_builtin_ops_register());
  uint32_t seed = 1;
  kc_tensor* x = kt_random(kt_f32, (int64_t[]){1, 5, 5, 4}, 4, &seed);
  kc_tensor* w = kt_random(kt_f32, (int64_t[]){3, 3, 3, 2}, 4, &seed);
  kc_tensor* big = kt_random(kt_f32, (int64_t[]){7, 7, 4, 2}, 4, &seed);
  kc_tensor* in[2] = {x, w};
  kt_refused("kc.Conv2D", in, 2, NULL, 0, "input features");
  in[1] = big;
  kt_refused("kc.Conv2D", in, 2, NULL, 0, "spans 7");
  int64_t bad[3] = {1, 1, 1};
  kc_op_attr a = kt_list_attr("strides", bad, 3);
  kt_refused("kc.Conv2D", in, 2, &a, 1, "attr 'strides': expected 1 or 2");
  kt_attrs_release(&a, 1);
  kc_op_attr g = {kc_sv("groups"), kc_any_int(3)};
  kt_refused("kc.Conv2D", in, 2, &g, 1, "groups");
  kt_release(x);
  kt_release(w);
  kt_release(big);
}

/* ---- pools ---------------------------------------------------------------------------- */

/* y, the gradient dx and MaxPool's tangent ty, in double. */
static void kt_pool_reference(const kt_conv* k, bool max, bool include_pad, const DLTensor* x,
                              const DLTensor* dy, const DLTensor* tx, double* y, double* dx,
                              double* ty) {
  int64_t oh = kt_out_h(k), ow = kt_out_w(k);
  memset(dx, 0, sizeof(double) * (size_t)(k->n * k->c * k->h * k->w));
  for (int64_t n = 0; n < k->n; ++n)
    for (int64_t c = 0; c < k->c; ++c)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          int64_t yo = kt_at4(k->nchw, k->c, oh, ow, n, c, oy, ox), arg = -1, cnt = 0;
          double acc = max ? -INFINITY : 0;
          for (int64_t ky = 0; ky < k->kh; ++ky)
            for (int64_t kx = 0; kx < k->kw; ++kx) {
              int64_t iy = oy * k->sh - k->pt + ky, ix = ox * k->sw - k->pl + kx;
              if (iy < 0 || iy >= k->h || ix < 0 || ix >= k->w) continue;
              int64_t xo = kt_at4(k->nchw, k->c, k->h, k->w, n, c, iy, ix);
              double v = kt_at(x, xo);
              ++cnt;
              if (!max) {
                acc += v;
              } else if (arg < 0 || v > acc) {
                acc = v;
                arg = xo;
              }
            }
          if (include_pad) cnt = k->kh * k->kw;
          y[yo] = max ? acc : acc / (double)cnt;
          if (max) {
            dx[arg] += kt_at(dy, yo);
            ty[yo] = kt_at(tx, arg);
            continue;
          }
          for (int64_t ky = 0; ky < k->kh; ++ky)
            for (int64_t kx = 0; kx < k->kw; ++kx) {
              int64_t iy = oy * k->sh - k->pt + ky, ix = ox * k->sw - k->pl + kx;
              if (iy < 0 || iy >= k->h || ix < 0 || ix >= k->w) continue;
              dx[kt_at4(k->nchw, k->c, k->h, k->w, n, c, iy, ix)] += kt_at(dy, yo) / (double)cnt;
            }
        }
}

static void kt_pool_case(const kt_conv* k, bool max, bool include_pad, DLDataType dt,
                         uint32_t* seed) {
  int64_t oh = kt_out_h(k), ow = kt_out_w(k);
  int64_t xs[4] = {k->n, k->nchw ? k->c : k->h, k->nchw ? k->h : k->w, k->nchw ? k->w : k->c};
  int64_t ys[4] = {k->n, k->nchw ? k->c : oh, k->nchw ? oh : ow, k->nchw ? ow : k->c};
  kc_tensor* x = kt_random(dt, xs, 4, seed);
  kc_tensor* dy = kt_random(dt, ys, 4, seed);
  kc_tensor* tx = kt_random(dt, xs, 4, seed);
  int64_t ny = k->n * k->c * oh * ow, nx = k->n * k->c * k->h * k->w;
  double* ry = malloc(sizeof(double) * (size_t)(2 * ny + nx));
  double *rdx = ry + ny, *rty = rdx + nx;
  kt_pool_reference(k, max, include_pad, kt_dl(x), kt_dl(dy), kt_dl(tx), ry, rdx, rty);
  int64_t win[2] = {k->kh, k->kw}, s[2] = {k->sh, k->sw}, p[4] = {k->pt, k->pb, k->pl, k->pr};
  kc_op_attr attrs[5] = {{kc_sv("data_format"), kc_any_cstr(k->nchw ? "NCHW" : "NHWC")},
                         kt_list_attr("ksize", win, 2), kt_list_attr("strides", s, 2),
                         kt_list_attr("padding", p, 4),
                         {kc_sv("count_include_pad"), kc_any_bool(include_pad)}};
  int32_t na = max ? 4 : 5;
  double tol = dt.bits == 32 ? 1e-6 : 1e-13;
  const char* name = max ? "kc.MaxPool" : "kc.AvgPool";
  kc_tensor* y = kt_bi_call1(name, x, NULL, attrs, na);
  KC_CHECK(memcmp(kt_dl(y)->shape, ys, sizeof ys) == 0);
  kt_check_tensor(y, ry, ny, tol, name);
  /* MaxPoolGrad (x, y, dy) is given the forward's output; AvgPoolGrad (x, dy). */
  kc_tensor* gin[3] = {x, max ? y : dy, dy};
  kc_tensor* gout[2] = {NULL, NULL};
  kt_bi_call(max ? "kc.MaxPoolGrad" : "kc.AvgPoolGrad", gin, max ? 3 : 2, attrs, na, gout, 1);
  kc_tensor* dx = gout[0];
  kt_check_tensor(dx, rdx, nx, tol, "the pool's gradient");
  if (max) {
    kc_tensor* ty = kt_bi_call1("kc.MaxPoolJvp", x, tx, attrs, na);
    kt_check_tensor(ty, rty, ny, tol, "kc.MaxPoolJvp");
    kt_release(ty);
  }
  kt_attrs_release(attrs, na);
  free(ry);
  kc_tensor* all[5] = {x, dy, tx, y, dx};
  for (int i = 0; i < 5; ++i) kt_release(all[i]);
}

KC_TEST(builtin_pools_with_their_gradients_against_a_reference) {
  KC_CHECK_OK(kc_builtin_ops_register());
  static const kt_conv cases[] = {
      /* nchw n c h w (o) kh kw sh sw (dh dw) pt pb pl pr */
      {false, 2, 3, 8, 8, 0, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1},
      {true, 2, 3, 8, 8, 0, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1},
      {false, 2, 5, 7, 9, 0, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1}, /* overlapping, padded */
      {true, 2, 5, 7, 9, 0, 3, 2, 1, 2, 1, 1, 1, 0, 1, 1, 1},
  };
  uint32_t seed = 11;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    for (int t = 0; t < 2; ++t) {
      DLDataType dt = t ? kt_f64 : kt_f32;
      kt_pool_case(&cases[i], true, false, dt, &seed);
      kt_pool_case(&cases[i], false, true, dt, &seed);
      kt_pool_case(&cases[i], false, false, dt, &seed);
    }
  }
}

KC_TEST(builtin_max_pool_propagates_nan_and_refuses_a_missing_window) {
  KC_CHECK_OK(kc_builtin_ops_register());
  float v[4] = {1, NAN, 3, 2};
  kc_tensor* x = kt_tensor(kt_f32, (int64_t[]){1, 2, 2, 1}, 4, v);
  int64_t win[1] = {2};
  kc_op_attr a = kt_list_attr("ksize", win, 1);
  kc_tensor* y = kt_bi_call1("kc.MaxPool", x, NULL, &a, 1);
  KC_CHECK(isnan(((float*)kt_dl(y)->data)[0]));
  kt_release(y);
  kc_tensor* in[1] = {x};
  kt_refused("kc.MaxPool", in, 1, NULL, 0, "ksize");
  int64_t too_big[2] = {3, 3};
  kc_op_attr b = kt_list_attr("ksize", too_big, 2);
  kt_refused("kc.MaxPool", in, 1, &b, 1, "spans 3");
  kt_attrs_release(&a, 1);
  kt_attrs_release(&b, 1);
  kt_release(x);
}

/* kc.MaxPoolGrad is given MaxPool's output y; a y that is not (no element
 * of a window equals it) is refused rather than its gradient dropped, in
 * the NCHW f32 plane loop, NHWC and f64 alike. */
KC_TEST(builtin_max_pool_grad_refuses_a_y_that_is_not_the_pool) {
  KC_CHECK_OK(kc_builtin_ops_register());
  static const char* const layouts[2] = {"NHWC", "NCHW"};
  for (int k = 0; k < 4; ++k) {
    DLDataType dt = k < 2 ? kt_f32 : kt_f64;
    float vf[4] = {1, 2, 3, 4};
    double vd[4] = {1, 2, 3, 4};
    float yf = 5;
    double yd = 5;
    kc_tensor* x = kt_tensor(dt, (int64_t[]){1, 2, 2, 1}, 4, k < 2 ? (void*)vf : (void*)vd);
    if (k % 2) {
      kt_release(x);
      x = kt_tensor(dt, (int64_t[]){1, 1, 2, 2}, 4, k < 2 ? (void*)vf : (void*)vd);
    }
    kc_tensor* y = kt_tensor(dt, (int64_t[]){1, 1, 1, 1}, 4, k < 2 ? (void*)&yf : (void*)&yd);
    kc_tensor* dy = kt_tensor(dt, (int64_t[]){1, 1, 1, 1}, 4, k < 2 ? (void*)&yf : (void*)&yd);
    int64_t win[1] = {2};
    kc_op_attr a[2] = {kt_list_attr("ksize", win, 1),
                       {kc_sv("data_format"), kc_any_cstr(layouts[k % 2])}};
    kc_tensor* in[3] = {x, y, dy};
    kt_refused("kc.MaxPoolGrad", in, 3, a, 2, "kc.MaxPoolGrad: y is not kc.MaxPool(x)");
    kt_attrs_release(a, 1);
    kt_release(x);
    kt_release(y);
    kt_release(dy);
  }
}

/* The gradient of the common pool (2x2, two apart, NCHW f32: its own
 * loop) gives each window's dy to the forward's choice: the first element
 * equal to the max on a tie, the last NaN of a window holding NaNs. */
KC_TEST(builtin_max_pool_grad_2x2_ties_and_nan) {
  KC_CHECK_OK(kc_builtin_ops_register());
  /* Two windows side by side: [1 1; 1 1] and [NaN 2; NaN 3]. */
  float v[8] = {1, 1, NAN, 2, 1, 1, NAN, 3};
  float g[2] = {10, 20};
  kc_tensor* x = kt_tensor(kt_f32, (int64_t[]){1, 1, 2, 4}, 4, v);
  kc_tensor* dy = kt_tensor(kt_f32, (int64_t[]){1, 1, 1, 2}, 4, g);
  int64_t win[1] = {2};
  kc_op_attr a[2] = {kt_list_attr("ksize", win, 1), {kc_sv("data_format"), kc_any_cstr("NCHW")}};
  kc_tensor* y = kt_bi_call1("kc.MaxPool", x, NULL, a, 2);
  const float* yv = kt_dl(y)->data;
  KC_CHECK(yv[0] == 1 && isnan(yv[1]));
  kc_tensor* in[3] = {x, y, dy};
  kc_tensor* out[1] = {NULL};
  kt_bi_call("kc.MaxPoolGrad", in, 3, a, 2, out, 1);
  const float* dx = kt_dl(out[0])->data;
  static const float want[8] = {10, 0, 0, 0, 0, 0, 20, 0};
  for (int i = 0; i < 8; ++i) KC_CHECK(dx[i] == want[i]);
  kt_attrs_release(a, 1);
  kc_tensor* all[4] = {x, dy, y, out[0]};
  for (int i = 0; i < 4; ++i) kt_release(all[i]);
}
