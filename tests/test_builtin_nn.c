/* The network layers' built-in ops (src/builtin/bi_nn.c, bi_index.c) and kc.Max
 * (bi_reduce.c): each against a reference computed here in double, each
 * tangent against a central difference of its op, each gradient against its
 * tangent (<gradient(dy), u> = <dy, tangent(u)>), and what they refuse. */
#include "kernels/half.h"
#include "kt_builtin.h"

/* kc_op_attr {name, int}. */
#define KT_INT_ATTR(NAME, V) \
  { kc_sv(NAME), kc_any_int(V) }

/* Sets element i of t to v. */
static void kt_put(const kc_tensor* t, int64_t i, double v) {
  const DLTensor* d = kt_dl(t);
  if (d->dtype.bits == 32) {
    ((float*)d->data)[i] = (float)v;
  } else {
    ((double*)d->data)[i] = v;
  }
}

/* x + h u, a new tensor. */
static kc_tensor* kt_axpy(const kc_tensor* x, double h, const kc_tensor* u) {
  const DLTensor* d = kt_dl(x);
  kc_tensor* out = kt_tensor(d->dtype, d->shape, d->ndim, NULL);
  for (int64_t i = 0; i < kc_dltensor_get_numel(d); ++i) {
    kt_put(out, i, kt_at(d, i) + h * kt_at(kt_dl(u), i));
  }
  return out;
}

/* The central difference of op `name` (one output) at `in` along `dir`
 * (directions for the first `n` inputs; NULL ones are held) against
 * `tangent`, element by element. f64 inputs only. */
static void kt_check_tangent(const char* name, kc_tensor* const* in, int32_t count,
                             kc_tensor* const* dir, const kc_op_attr* attrs, int32_t na,
                             const kc_tensor* tangent, double tol) {
  const double h = 1e-5;
  kc_tensor *plus[5], *minus[5];
  for (int32_t i = 0; i < count; ++i) {
    plus[i] = dir[i] ? kt_axpy(in[i], h, dir[i]) : in[i];
    minus[i] = dir[i] ? kt_axpy(in[i], -h, dir[i]) : in[i];
  }
  kc_tensor *yp[2] = {NULL, NULL}, *ym[2] = {NULL, NULL};
  kt_bi_call(name, plus, count, attrs, na, yp, 1);
  kt_bi_call(name, minus, count, attrs, na, ym, 1);
  int64_t n = kc_dltensor_get_numel(kt_dl(tangent));
  KC_CHECK_INT(kc_dltensor_get_numel(kt_dl(yp[0])), n);
  for (int64_t i = 0; i < n; ++i) {
    double fd = (kt_at(kt_dl(yp[0]), i) - kt_at(kt_dl(ym[0]), i)) / (2 * h);
    kt_check_close(kt_at(kt_dl(tangent), i), fd, tol, name);
  }
  for (int32_t i = 0; i < count; ++i) {
    if (dir[i]) {
      kt_release(plus[i]);
      kt_release(minus[i]);
    }
  }
  kt_release(yp[0]);
  kt_release(ym[0]);
}

/* ---- Softmax and LogSoftmax -------------------------------------------------------- */

/* The reference along dim `axis` of x [a, b, c]. */
static void kt_softmax_reference(const DLTensor* x, int32_t axis, bool log_form, double* want) {
  int64_t dims[3] = {x->shape[0], x->shape[1], x->shape[2]};
  int64_t n = dims[axis], inner = 1;
  for (int32_t d = axis + 1; d < 3; ++d) inner *= dims[d];
  int64_t lines = kc_dltensor_get_numel(x) / n;
  for (int64_t l = 0; l < lines; ++l) {
    int64_t base = (l / inner) * n * inner + l % inner;
    double m = -INFINITY, s = 0;
    for (int64_t k = 0; k < n; ++k) m = fmax(m, kt_at(x, base + k * inner));
    for (int64_t k = 0; k < n; ++k) s += exp(kt_at(x, base + k * inner) - m);
    for (int64_t k = 0; k < n; ++k) {
      double v = kt_at(x, base + k * inner) - m;
      want[base + k * inner] = log_form ? v - log(s) : exp(v) / s;
    }
  }
}

KC_TEST(builtin_softmax_and_log_softmax_along_each_axis) {
  KC_CHECK_OK(kc_builtin_ops_register());
  DLDataType types[2] = {kt_f32, kt_f64};
  /* The last dim long enough for the vector path's blocks. */
  int64_t shape[3] = {3, 5, 1500};
  uint32_t seed = 21;
  for (int t = 0; t < 2; ++t) {
    for (int32_t axis = -1; axis < 3; ++axis) {
      int32_t a = axis < 0 ? 2 : axis;
      kc_op_attr attr = KT_INT_ATTR("axis", axis);
      kc_tensor* x = kt_random(types[t], shape, 3, &seed);
      for (int64_t i = 0; i < 3 * 5 * 1500; ++i) kt_put(x, i, 20 * kt_at(kt_dl(x), i));
      int64_t n = kc_dltensor_get_numel(kt_dl(x));
      double* want = malloc((size_t)n * sizeof *want);
      KC_CHECK(want != NULL);
      double tol = types[t].bits == 32 ? 2e-5 : 1e-12;
      for (int lg = 0; lg < 2; ++lg) {
        const char* name = lg ? "kc.LogSoftmax" : "kc.Softmax";
        kc_tensor* y = kt_bi_call1(name, x, NULL, &attr, 1);
        kt_softmax_reference(kt_dl(x), a, lg, want);
        kt_check_tensor(y, want, n, tol, name);
        /* The gradient against the tangent: <dx, u> = <dy, ty>. */
        kc_tensor* dy = kt_random(types[t], shape, 3, &seed);
        kc_tensor* u = kt_random(types[t], shape, 3, &seed);
        kc_tensor* dx = kt_bi_call1(lg ? "kc.LogSoftmaxGrad" : "kc.SoftmaxGrad", y, dy, &attr, 1);
        kc_tensor* ty = kt_bi_call1(lg ? "kc.LogSoftmaxJvp" : "kc.SoftmaxGrad", y, u, &attr, 1);
        kt_check_close(kt_dot(dx, u), kt_dot(dy, ty), types[t].bits == 32 ? 1e-4 : 1e-10, name);
        if (types[t].bits == 64) {
          kt_check_tangent(name, (kc_tensor*[]){x}, 1, (kc_tensor*[]){u}, &attr, 1, ty, 1e-6);
        }
        kc_tensor* all[] = {y, dy, u, dx, ty};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) kt_release(all[i]);
      }
      free(want);
      kt_release(x);
    }
  }
}

KC_TEST(builtin_softmax_refuses_an_axis_out_of_range) {
  KC_CHECK_OK(kc_builtin_ops_register());
  kc_tensor* x = kt_tensor(kt_f32, (int64_t[]){2, 3}, 2, NULL);
  kc_op_attr attr = KT_INT_ATTR("axis", 2);
  kt_refused("kc.Softmax", (kc_tensor*[]){x}, 1, &attr, 1, "attr 'axis': 2 is out of range");
  kc_tensor* y = kt_tensor(kt_f32, (int64_t[]){3, 2}, 2, NULL);
  kt_refused("kc.SoftmaxGrad", (kc_tensor*[]){x, y}, 2, NULL, 0, "the second input");
  kt_release(x);
  kt_release(y);
}

/* ---- LayerNorm and RMSNorm --------------------------------------------------------- */

static void kt_norm_reference(const DLTensor* x, const DLTensor* scale, const DLTensor* bias,
                              int64_t n, double eps, double* want) {
  int64_t rows = kc_dltensor_get_numel(x) / n;
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    if (bias) {
      for (int64_t k = 0; k < n; ++k) m += kt_at(x, r * n + k) / (double)n;
    }
    for (int64_t k = 0; k < n; ++k) v += pow(kt_at(x, r * n + k) - m, 2) / (double)n;
    for (int64_t k = 0; k < n; ++k) {
      want[r * n + k] =
          (kt_at(x, r * n + k) - m) / sqrt(v + eps) * kt_at(scale, k) + (bias ? kt_at(bias, k) : 0);
    }
  }
}

KC_TEST(builtin_layer_norm_and_rms_norm_with_their_gradients) {
  KC_CHECK_OK(kc_builtin_ops_register());
  DLDataType types[2] = {kt_f32, kt_f64};
  int64_t shape[3] = {7, 4, 300};
  uint32_t seed = 5;
  for (int t = 0; t < 2; ++t) {
    for (int32_t begin = -2; begin <= -1; ++begin) {
      const int64_t* sdims = shape + 3 + begin;
      int32_t srank = -begin;
      int64_t n = begin == -1 ? 300 : 1200;
      kc_op_attr attrs[2] = {KT_INT_ATTR("begin_axis", begin),
                             {kc_sv("epsilon"), kc_any_float(1e-3)}};
      for (int layer = 0; layer < 2; ++layer) {
        const char* name = layer ? "kc.LayerNorm" : "kc.RMSNorm";
        kc_tensor* x = kt_random(types[t], shape, 3, &seed);
        kc_tensor* s = kt_random(types[t], sdims, srank, &seed);
        kc_tensor* b = kt_random(types[t], sdims, srank, &seed);
        kc_tensor* in[3] = {x, s, b};
        kc_tensor* y[3] = {NULL, NULL, NULL};
        kt_bi_call(name, in, layer ? 3 : 2, attrs, 2, y, 1);
        int64_t total = kc_dltensor_get_numel(kt_dl(x));
        double* want = malloc((size_t)total * sizeof *want);
        KC_CHECK(want != NULL);
        kt_norm_reference(kt_dl(x), kt_dl(s), layer ? kt_dl(b) : NULL, n, 1e-3, want);
        kt_check_tensor(y[0], want, total, types[t].bits == 32 ? 1e-5 : 1e-12, name);
        /* The tangent, and the gradient against it. */
        kc_tensor* u[3] = {kt_random(types[t], shape, 3, &seed),
                           kt_random(types[t], sdims, srank, &seed),
                           kt_random(types[t], sdims, srank, &seed)};
        kc_tensor* jin[5] = {x, s, u[0], u[1], u[2]};
        kc_tensor* ty[3] = {NULL, NULL, NULL};
        char jname[32], gname[32];
        snprintf(jname, sizeof jname, "%sJvp", name);
        snprintf(gname, sizeof gname, "%sGrad", name);
        kt_bi_call(jname, jin, layer ? 5 : 4, attrs, 2, ty, 1);
        if (types[t].bits == 64) {
          kt_check_tangent(name, in, layer ? 3 : 2, u, attrs, 2, ty[0], 1e-6);
        }
        kc_tensor* dy = kt_random(types[t], shape, 3, &seed);
        kc_tensor* g[3] = {NULL, NULL, NULL};
        const DLTensor* gin[3] = {kt_dl(x), kt_dl(s), kt_dl(dy)};
        int32_t got = 0;
        KC_CHECK_OK(kc_op_call(kt_op(gname), gin, 3, attrs, 2, NULL, g, 3, &got));
        KC_CHECK_INT(got, layer ? 3 : 2);
        double lhs = 0;
        for (int32_t i = 0; i < got; ++i) lhs += kt_dot(g[i], u[i]);
        kt_check_close(lhs, kt_dot(dy, ty[0]), types[t].bits == 32 ? 1e-4 : 1e-10, gname);
        kc_tensor* all[] = {x, s, b, y[0], u[0], u[1], u[2], ty[0], dy, g[0], g[1], g[2]};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
          if (all[i]) kt_release(all[i]);
        }
        free(want);
      }
    }
  }
}

KC_TEST(builtin_norms_refuse_a_scale_of_another_shape) {
  KC_CHECK_OK(kc_builtin_ops_register());
  kc_tensor* x = kt_tensor(kt_f32, (int64_t[]){2, 3}, 2, NULL);
  kc_tensor* v2 = kt_tensor(kt_f32, (int64_t[]){2}, 1, NULL);
  kc_tensor* v3 = kt_tensor(kt_f32, (int64_t[]){3}, 1, NULL);
  kt_refused("kc.LayerNorm", (kc_tensor*[]){x, v2, v3}, 3, NULL, 0,
             "scale against x's dims from begin_axis on");
  kt_refused("kc.RMSNorm", (kc_tensor*[]){x, v2}, 2, NULL, 0, "scale");
  kt_refused("kc.LayerNormGrad", (kc_tensor*[]){x, v3, v3}, 3, NULL, 0, "against x");
  kc_op_attr attr = KT_INT_ATTR("begin_axis", -3);
  kt_refused("kc.RMSNorm", (kc_tensor*[]){x, v3}, 2, &attr, 1, "attr 'begin_axis'");
  kc_tensor* all[] = {x, v2, v3};
  for (size_t i = 0; i < 3; ++i) kt_release(all[i]);
}

/* ---- Max ----------------------------------------------------------------------------- */

KC_TEST(builtin_max_over_axes_shares_ties_and_propagates_nan) {
  KC_CHECK_OK(kc_builtin_ops_register());
  DLDataType types[2] = {kt_f32, kt_f64};
  int64_t shape[3] = {6, 50, 70};
  /* rows (the last axis), columns (the first), a block and scattered axes */
  static const int64_t axes_of[4][2] = {{2, -1}, {0, -1}, {1, 2}, {0, 2}};
  static const int32_t counts[4] = {1, 1, 2, 2};
  uint32_t seed = 3;
  for (int t = 0; t < 2; ++t) {
    for (int c = 0; c < 4; ++c) {
      kc_tensor* x = kt_random(types[t], shape, 3, &seed);
      /* Ties: values on a coarse grid. */
      for (int64_t i = 0; i < 6 * 50 * 70; ++i) kt_put(x, i, round(8 * kt_at(kt_dl(x), i)));
      kc_any items[2] = {kc_any_int(axes_of[c][0]), kc_any_int(axes_of[c][1])};
      kc_array* axes = NULL;
      KC_CHECK_OK(kc_array_create(kt_alloc(), items, (size_t)counts[c], &axes));
      kc_op_attr attr = {kc_sv("axes"), kc_any_object(KC_OBJECT(axes))};
      kc_tensor* y = kt_bi_call1("kc.Max", x, NULL, &attr, 1);
      bool red[3] = {false, false, false};
      for (int32_t i = 0; i < counts[c]; ++i) red[axes_of[c][i] < 0 ? 2 : axes_of[c][i]] = true;
      int64_t ny = kc_dltensor_get_numel(kt_dl(y));
      double* want = malloc((size_t)ny * sizeof *want);
      double* ties = calloc((size_t)ny, sizeof *ties);
      KC_CHECK(want != NULL && ties != NULL);
      for (int64_t o = 0; o < ny; ++o) want[o] = -INFINITY;
      int64_t* where = malloc(6 * 50 * 70 * sizeof *where);
      KC_CHECK(where != NULL);
      for (int64_t i = 0; i < 6 * 50 * 70; ++i) {
        int64_t idx[3] = {i / 3500, (i / 70) % 50, i % 70}, o = 0;
        for (int d = 0; d < 3; ++d) o = red[d] ? o : o * shape[d] + idx[d];
        where[i] = o;
        want[o] = fmax(want[o], kt_at(kt_dl(x), i));
      }
      kt_check_tensor(y, want, ny, 0, "kc.Max");
      for (int64_t i = 0; i < 6 * 50 * 70; ++i)
        ties[where[i]] += kt_at(kt_dl(x), i) == want[where[i]];
      /* The gradient shares each dy among the ties; the tangent is their
       * mean; one is the other's transpose. */
      kc_tensor* dy = kt_random(types[t], kt_dl(y)->shape, kt_dl(y)->ndim, &seed);
      kc_tensor* u = kt_random(types[t], shape, 3, &seed);
      kc_tensor *dx[2] = {NULL, NULL}, *ty[2] = {NULL, NULL};
      kt_bi_call("kc.MaxGrad", (kc_tensor*[]){x, y, dy}, 3, &attr, 1, dx, 1);
      kt_bi_call("kc.MaxJvp", (kc_tensor*[]){x, y, u}, 3, &attr, 1, ty, 1);
      for (int64_t i = 0; i < 6 * 50 * 70; ++i) {
        int64_t o = where[i];
        double g = kt_at(kt_dl(x), i) == want[o] ? kt_at(kt_dl(dy), o) / ties[o] : 0;
        kt_check_close(kt_at(kt_dl(dx[0]), i), g, 1e-6, "kc.MaxGrad");
      }
      kt_check_close(kt_dot(dx[0], u), kt_dot(dy, ty[0]), 1e-6, "kc.MaxJvp");
      kc_object_release(KC_OBJECT(axes));
      kc_tensor* all[] = {x, y, dy, u, dx[0], ty[0]};
      for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) kt_release(all[i]);
      free(want);
      free(ties);
      free(where);
    }
  }
  /* NaN anywhere in a row makes its max NaN, on the vector path too. */
  kc_tensor* x = kt_tensor(kt_f32, (int64_t[]){2, 40}, 2, NULL);
  kt_put(x, 17, NAN);
  kc_any item = kc_any_int(1);
  kc_array* axes = NULL;
  KC_CHECK_OK(kc_array_create(kt_alloc(), &item, 1, &axes));
  kc_op_attr attr = {kc_sv("axes"), kc_any_object(KC_OBJECT(axes))};
  kc_tensor* y = kt_bi_call1("kc.Max", x, NULL, &attr, 1);
  KC_CHECK(isnan(kt_at(kt_dl(y), 0)));
  KC_CHECK(kt_at(kt_dl(y), 1) == 0);
  kc_object_release(KC_OBJECT(axes));
  kt_release(x);
  kt_release(y);
}

/* ---- Embedding ----------------------------------------------------------------------- */

KC_TEST(builtin_embedding_gathers_rows_and_scatters_its_gradient) {
  KC_CHECK_OK(kc_builtin_ops_register());
  DLDataType types[2] = {kt_f32, kt_f64};
  DLDataType itypes[2] = {kt_i32, kt_i64};
  uint32_t seed = 11;
  for (int t = 0; t < 2; ++t) {
    for (int it = 0; it < 2; ++it) {
      kc_tensor* table = kt_random(types[t], (int64_t[]){40, 3000}, 2, &seed);
      kc_tensor* idx = kt_tensor(itypes[it], (int64_t[]){5, 6}, 2, NULL);
      for (int64_t i = 0; i < 30; ++i) {
        int64_t v = (i * 7) % 40 / 2; /* repeats */
        if (it) {
          ((int64_t*)kt_dl(idx)->data)[i] = v;
        } else {
          ((int32_t*)kt_dl(idx)->data)[i] = (int32_t)v;
        }
      }
      kc_tensor* y = kt_bi_call1("kc.Embedding", table, idx, NULL, 0);
      KC_CHECK_INT(kt_dl(y)->ndim, 3);
      KC_CHECK_INT(kt_dl(y)->shape[2], 3000);
      for (int64_t i = 0; i < 30; ++i) {
        int64_t row = (i * 7) % 40 / 2;
        for (int64_t c = 0; c < 3000; c += 599) {
          kt_check_close(kt_at(kt_dl(y), i * 3000 + c), kt_at(kt_dl(table), row * 3000 + c), 0,
                         "kc.Embedding");
        }
      }
      /* The gradient is the gather's transpose. */
      kc_tensor* dy = kt_random(types[t], kt_dl(y)->shape, 3, &seed);
      kc_tensor* u = kt_random(types[t], (int64_t[]){40, 3000}, 2, &seed);
      kc_tensor* dt[2] = {NULL, NULL};
      kt_bi_call("kc.EmbeddingGrad", (kc_tensor*[]){table, idx, dy}, 3, NULL, 0, dt, 1);
      kc_tensor* tu = kt_bi_call1("kc.Embedding", u, idx, NULL, 0);
      kt_check_close(kt_dot(dt[0], u), kt_dot(dy, tu), 1e-5, "kc.EmbeddingGrad");
      kt_check_close(kt_at(kt_dl(dt[0]), 39 * 3000), 0, 0, "a row no index names");
      kc_tensor* all[] = {table, idx, y, dy, u, dt[0], tu};
      for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) kt_release(all[i]);
    }
  }
}

KC_TEST(builtin_embedding_refuses_an_index_out_of_range) {
  KC_CHECK_OK(kc_builtin_ops_register());
  kc_tensor* table = kt_tensor(kt_f32, (int64_t[]){4, 2}, 2, NULL);
  kc_tensor* idx = kt_tensor(kt_i64, (int64_t[]){3}, 1, (int64_t[]){0, 4, 1});
  const DLTensor* in[2] = {kt_dl(table), kt_dl(idx)};
  kc_tensor* out = NULL;
  int32_t got = 0;
  KC_CHECK_CODE(kc_op_call(kt_op("kc.Embedding"), in, 2, NULL, 0, NULL, &out, 1, &got),
                KC_OUT_OF_RANGE, "indices: item 1 is 4, expected 0 .. 3");
  KC_CHECK(out == NULL);
  kc_tensor* flat = kt_tensor(kt_f32, (int64_t[]){4}, 1, NULL);
  kt_refused("kc.Embedding", (kc_tensor*[]){flat, idx}, 2, NULL, 0, "table");
  kt_release(table);
  kt_release(idx);
  kt_release(flat);
}

/* ---- CrossEntropy -------------------------------------------------------------------- */

KC_TEST(builtin_cross_entropy_with_each_reduction) {
  KC_CHECK_OK(kc_builtin_ops_register());
  static const char* const reductions[3] = {"mean", "sum", "none"};
  DLDataType types[2] = {kt_f32, kt_f64};
  enum { N = 33, C = 10 };
  uint32_t seed = 17;
  for (int t = 0; t < 2; ++t) {
    for (int r = 0; r < 3; ++r) {
      kc_op_attr attr = {kc_sv("reduction"), kc_any_cstr(reductions[r])};
      kc_tensor* logits = kt_random(types[t], (int64_t[]){N, C}, 2, &seed);
      kc_tensor* labels = kt_tensor(kt_i64, (int64_t[]){N}, 1, NULL);
      for (int64_t i = 0; i < N; ++i) ((int64_t*)kt_dl(labels)->data)[i] = (i * 3) % C;
      kc_tensor* loss = kt_bi_call1("kc.CrossEntropy", logits, labels, &attr, 1);
      KC_CHECK_INT(kt_dl(loss)->ndim, r == 2 ? 1 : 0);
      double per[N], total = 0;
      for (int64_t i = 0; i < N; ++i) {
        double s = 0;
        for (int64_t c = 0; c < C; ++c) s += exp(kt_at(kt_dl(logits), i * C + c));
        per[i] = log(s) - kt_at(kt_dl(logits), i * C + (i * 3) % C);
        total += per[i];
      }
      double tol = types[t].bits == 32 ? 1e-5 : 1e-12;
      if (r == 2) {
        kt_check_tensor(loss, per, N, tol, "kc.CrossEntropy");
      } else {
        kt_check_close(kt_at(kt_dl(loss), 0), r ? total : total / N, tol, "kc.CrossEntropy");
      }
      kc_tensor* u = kt_random(types[t], (int64_t[]){N, C}, 2, &seed);
      kc_tensor* dl = kt_random(types[t], kt_dl(loss)->shape, kt_dl(loss)->ndim, &seed);
      kc_tensor *tl[2] = {NULL, NULL}, *g[2] = {NULL, NULL};
      kt_bi_call("kc.CrossEntropyJvp", (kc_tensor*[]){logits, labels, u}, 3, &attr, 1, tl, 1);
      kt_bi_call("kc.CrossEntropyGrad", (kc_tensor*[]){logits, labels, dl}, 3, &attr, 1, g, 1);
      kt_check_close(kt_dot(g[0], u), kt_dot(dl, tl[0]), types[t].bits == 32 ? 1e-4 : 1e-10,
                     "kc.CrossEntropyGrad");
      if (types[t].bits == 64) {
        kt_check_tangent("kc.CrossEntropy", (kc_tensor*[]){logits, labels}, 2,
                         (kc_tensor*[]){u, NULL}, &attr, 1, tl[0], 1e-6);
      }
      kc_tensor* all[] = {logits, labels, loss, u, dl, tl[0], g[0]};
      for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) kt_release(all[i]);
    }
  }
}

KC_TEST(builtin_cross_entropy_refuses_bad_labels) {
  KC_CHECK_OK(kc_builtin_ops_register());
  kc_tensor* logits = kt_tensor(kt_f32, (int64_t[]){2, 3}, 2, NULL);
  kc_tensor* labels = kt_tensor(kt_i32, (int64_t[]){2}, 1, (int32_t[]){2, -1});
  const DLTensor* in[2] = {kt_dl(logits), kt_dl(labels)};
  kc_tensor* out = NULL;
  int32_t got = 0;
  KC_CHECK_CODE(kc_op_call(kt_op("kc.CrossEntropy"), in, 2, NULL, 0, NULL, &out, 1, &got),
                KC_OUT_OF_RANGE, "labels: item 1 is -1, expected 0 .. 2");
  kc_tensor* three = kt_tensor(kt_i32, (int64_t[]){3}, 1, NULL);
  kt_refused("kc.CrossEntropy", (kc_tensor*[]){logits, three}, 2, NULL, 0,
             "labels against logits' dims but the last");
  kt_release(logits);
  kt_release(labels);
  kt_release(three);
}

/* ---- f16 and bf16 -------------------------------------------------------------------- */

/* Each op on f16 and bf16 gives the f32 op's result on the widened inputs,
 * rounded once; attrs reach the f32 call. */
KC_TEST(builtin_half_types_are_the_f32_result_rounded) {
  KC_CHECK_OK(kc_builtin_ops_register());
  static const DLDataType halves[2] = {{kDLFloat, 16, 1}, {kDLBfloat, 16, 1}};
  kc_any item = kc_any_int(-1);
  kc_array* axes = NULL;
  KC_CHECK_OK(kc_array_create(kt_alloc(), &item, 1, &axes));
  kc_op_attr sum_attrs[2] = {{kc_sv("axes"), kc_any_object(KC_OBJECT(axes))},
                             {kc_sv("keepdims"), kc_any_bool(true)}};
  static const char* const names[3] = {"kc.Tanh", "kc.Mean", "kc.LogSoftmax"};
  uint32_t seed = 23;
  for (int h = 0; h < 2; ++h) {
    bool bf16 = h == 1;
    for (int o = 0; o < 3; ++o) {
      kc_tensor* w = kt_random(kt_f32, (int64_t[]){6, 70}, 2, &seed);
      kc_tensor* x = kt_tensor(halves[h], (int64_t[]){6, 70}, 2, NULL);
      uint16_t* xb = kt_dl(x)->data;
      for (int64_t i = 0; i < 420; ++i) {
        xb[i] = kc__f32_to_half(bf16, ((float*)kt_dl(w)->data)[i]);
        ((float*)kt_dl(w)->data)[i] = kc__half_to_f32(bf16, xb[i]);
      }
      int32_t na = o == 1 ? 2 : 0;
      kc_tensor* got = kt_bi_call1(names[o], x, NULL, na ? sum_attrs : NULL, na);
      kc_tensor* want = kt_bi_call1(names[o], w, NULL, na ? sum_attrs : NULL, na);
      const DLTensor *g = kt_dl(got), *f = kt_dl(want);
      KC_CHECK(g->dtype.code == halves[h].code && g->dtype.bits == 16);
      KC_CHECK_INT(g->ndim, 2);
      KC_CHECK_INT(g->shape[1], o == 1 ? 1 : 70);
      for (int64_t i = 0; i < kc_dltensor_get_numel(g); ++i) {
        KC_CHECK_INT(((uint16_t*)g->data)[i], kc__f32_to_half(bf16, ((float*)f->data)[i]));
      }
      kt_release(w);
      kt_release(x);
      kt_release(got);
      kt_release(want);
    }
  }
  kc_object_release(KC_OBJECT(axes));
}
