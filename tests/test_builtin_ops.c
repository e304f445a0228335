/* kcall's built-in ops (kcall/builtin.h, src/builtin/): registration, and
 * each op against a reference computed here in double precision. Each
 * gradient is checked against its op's tangent and each tangent against
 * the op itself: <grad(x), u> + <grad(y), v> = <dz, tangent(u, v)>, and
 * for the bilinear and linear ops the tangent is a difference of calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kt_builtin.h"

/* ---- registration ------------------------------------------------------------------- */

KC_TEST(builtin_ops_register_once_and_again_after_a_reset) {
  KC_CHECK_OK(kc_builtin_ops_register());
  KC_CHECK_OK(kc_builtin_ops_register()); /* a second time: nothing */
  const kc_op* op = kt_op("kc.MatMul");
  KC_CHECK_STR(kc_op_get_doc(op) ? "doc" : "", "doc");
  kc_op_gradient g;
  KC_CHECK(kc_op_get_gradient(op, &g));
  KC_CHECK(kc_op_get_jvp(op, &g));
  KC_CHECK_INT(kc_op_get_batching(op), KC_OP_BATCH_ELEMENTWISE);
  kc_op_registry_reset();
  kc_kernel_registry_reset();
  const kc_op* gone = NULL;
  KC_CHECK_CODE(kc_op_registry_lookup(kc_sv("kc.MatMul"), &gone), KC_NOT_FOUND, "kc.MatMul");
  KC_CHECK_OK(kc_builtin_ops_register());
  kt_op("kc.Relu");
}

KC_TEST(builtin_ops_refuse_another_kc_matmul) {
  /* The op it looks for to know they are registered is someone else's. */
  kt_register_op("kc.MatMul", KT_SPECS("x: f32"), KT_SPECS("y: f32"), NULL, kc_shape_fn_unchanged);
  KC_CHECK_CODE(kc_builtin_ops_register(), KC_ALREADY_EXISTS, "kc.MatMul", "not kcall's");
  const kc_op* op = NULL;
  KC_CHECK_CODE(kc_op_registry_lookup(kc_sv("kc.Add"), &op), KC_NOT_FOUND, "");
}

KC_TEST(builtin_ops_refuse_a_taken_name_and_register_nothing) {
  /* A plugin's op took "kc.Sum": the built-ins stay out, all of them. */
  kt_register_op("kc.Sum", KT_SPECS("x: f32"), KT_SPECS("y: f32"), NULL, kc_shape_fn_unchanged);
  KC_CHECK_CODE(kc_builtin_ops_register(), KC_ALREADY_EXISTS, "kc.Sum");
  const kc_op* op = NULL;
  KC_CHECK_CODE(kc_op_registry_lookup(kc_sv("kc.MatMul"), &op), KC_NOT_FOUND, "");
}

/* ---- MatMul ------------------------------------------------------------------------- */

typedef struct kt_mm_case {
  int32_t ra, rb;
  int64_t a[4], b[4];
  bool ta, tb;
} kt_mm_case;

/* The reference product of one case, in double: batch dims broadcast. */
static void kt_mm_reference(const DLTensor* a, bool ta, const DLTensor* b, bool tb,
                            const DLTensor* out, double* want) {
  int32_t r = out->ndim;
  int64_t m = out->shape[r - 2], n = out->shape[r - 1];
  int64_t k = ta ? a->shape[a->ndim - 2] : a->shape[a->ndim - 1];
  int64_t batch = kc_dltensor_get_numel(out) / (m * n != 0 ? m * n : 1);
  for (int64_t bi = 0; bi < batch; ++bi) {
    /* The batch index of a and b: each batch dim of theirs is 1 or the
     * output's. */
    int64_t rem = bi, ia = 0, ib = 0, sa = 1, sb = 1;
    for (int32_t d = r - 3; d >= 0; --d) {
      int64_t idx = rem % out->shape[d];
      rem /= out->shape[d];
      int32_t da = d - (r - a->ndim), db = d - (r - b->ndim);
      if (da >= 0) {
        ia += (a->shape[da] == 1 ? 0 : idx) * sa;
        sa *= a->shape[da];
      }
      if (db >= 0) {
        ib += (b->shape[db] == 1 ? 0 : idx) * sb;
        sb *= b->shape[db];
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) {
          double x = kt_at(a, ia * m * k + (ta ? p * m + i : i * k + p));
          double y = kt_at(b, ib * k * n + (tb ? j * k + p : p * n + j));
          s += x * y;
        }
        want[bi * m * n + i * n + j] = s;
      }
    }
  }
}

static void kt_mm_check(DLDataType dt, const kt_mm_case* c, uint32_t seed) {
  kc_op_attr attrs[2] = {{kc_sv("transpose_a"), kc_any_bool(c->ta)},
                         {kc_sv("transpose_b"), kc_any_bool(c->tb)}};
  double tol = dt.bits == 32 ? 1e-5 : 1e-12;
  kc_tensor* a = kt_random(dt, c->a, c->ra, &seed);
  kc_tensor* b = kt_random(dt, c->b, c->rb, &seed);
  kc_tensor* u = kt_random(dt, c->a, c->ra, &seed);
  kc_tensor* v = kt_random(dt, c->b, c->rb, &seed);
  kc_tensor* p = kt_bi_call1("kc.MatMul", a, b, attrs, 2);
  int64_t np = kc_dltensor_get_numel(kt_dl(p));
  double* want = malloc((size_t)(np ? np : 1) * sizeof *want);
  KC_CHECK(want != NULL);
  kt_mm_reference(kt_dl(a), c->ta, kt_dl(b), c->tb, kt_dl(p), want);
  kt_check_tensor(p, want, np, tol, "kc.MatMul");
  /* The tangent: bilinear, so t = (a + u)(b + v) - ab - uv. */
  kc_tensor* in4[4] = {a, b, u, v};
  kc_tensor* t[2] = {NULL, NULL};
  kt_bi_call("kc.MatMulJvp", in4, 4, attrs, 2, t, 1);
  kc_tensor* au = kt_bi_call1("kc.Add", a, u, NULL, 0);
  kc_tensor* bv = kt_bi_call1("kc.Add", b, v, NULL, 0);
  kc_tensor* whole = kt_bi_call1("kc.MatMul", au, bv, attrs, 2);
  kc_tensor* uv = kt_bi_call1("kc.MatMul", u, v, attrs, 2);
  for (int64_t i = 0; i < np; ++i) {
    double expect = kt_at(kt_dl(whole), i) - want[i] - kt_at(kt_dl(uv), i);
    kt_check_close(kt_at(kt_dl(t[0]), i), expect, dt.bits == 32 ? 1e-4 : 1e-10, "kc.MatMulJvp");
  }
  /* The gradient against the tangent. */
  kc_tensor* dp = kt_random(dt, kt_dl(p)->shape, kt_dl(p)->ndim, &seed);
  kc_tensor* in3[3] = {a, b, dp};
  kc_tensor* g[2] = {NULL, NULL};
  kt_bi_call("kc.MatMulGrad", in3, 3, attrs, 2, g, 2);
  KC_CHECK_INT(kc_dltensor_get_numel(kt_dl(g[0])), kc_dltensor_get_numel(kt_dl(a)));
  KC_CHECK_INT(kc_dltensor_get_numel(kt_dl(g[1])), kc_dltensor_get_numel(kt_dl(b)));
  kt_check_close(kt_dot(g[0], u) + kt_dot(g[1], v), kt_dot(dp, t[0]), dt.bits == 32 ? 1e-4 : 1e-10,
                 "kc.MatMulGrad");
  kc_tensor* all[] = {a, b, u, v, p, t[0], au, bv, whole, uv, dp, g[0], g[1]};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) kt_release(all[i]);
  free(want);
}

KC_TEST(builtin_matmul_batches_transposes_and_gradients) {
  KC_CHECK_OK(kc_builtin_ops_register());
  static const kt_mm_case cases[] = {
      {2, 2, {3, 4}, {4, 5}, false, false},         {2, 2, {4, 3}, {4, 5}, true, false},
      {2, 2, {3, 4}, {5, 4}, false, true},          {2, 2, {4, 3}, {5, 4}, true, true},
      {3, 3, {2, 3, 4}, {2, 4, 5}, false, false},   /* batched */
      {3, 2, {2, 3, 4}, {4, 5}, false, false},      /* weights shared */
      {3, 2, {2, 4, 3}, {5, 4}, true, true},        /* shared, transposed */
      {2, 3, {3, 4}, {2, 4, 5}, false, false},      /* a shared */
      {4, 3, {2, 1, 3, 4}, {3, 5, 4}, false, true}, /* batch dims broadcast */
      {2, 2, {1, 7}, {7, 1}, false, false},         /* a dot product */
      {2, 2, {33, 65}, {65, 17}, false, false},     /* odd sizes, past a tile */
      {2, 2, {3, 0}, {0, 2}, false, false},         /* nothing contracted */
  };
  DLDataType types[2] = {kt_f32, kt_f64};
  for (int t = 0; t < 2; ++t) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
      kt_mm_check(types[t], &cases[i], (uint32_t)(17 + i));
    }
  }
}

KC_TEST(builtin_matmul_refuses_shapes_that_do_not_multiply) {
  KC_CHECK_OK(kc_builtin_ops_register());
  kc_tensor* a = kt_tensor(kt_f32, (int64_t[]){2, 3}, 2, NULL);
  kc_tensor* b = kt_tensor(kt_f32, (int64_t[]){4, 2}, 2, NULL);
  kc_tensor* v = kt_tensor(kt_f32, (int64_t[]){3}, 1, NULL);
  const DLTensor* in[2] = {kt_dl(a), kt_dl(b)};
  kc_tensor* out = NULL;
  int32_t n = 0;
  KC_CHECK_CODE(kc_op_call(kt_op("kc.MatMul"), in, 2, NULL, 0, NULL, &out, 1, &n),
                KC_INVALID_ARGUMENT, "kc.MatMul", "contracted dims");
  in[1] = kt_dl(v);
  KC_CHECK_CODE(kc_op_call(kt_op("kc.MatMul"), in, 2, NULL, 0, NULL, &out, 1, &n),
                KC_INVALID_ARGUMENT, "kc.MatMul: b");
  kt_release(a);
  kt_release(b);
  kt_release(v);
}

/* ---- element-wise ------------------------------------------------------------------ */

static double kt_binary(const char* op, double x, double y) {
  if (!strcmp(op, "Add")) return x + y;
  if (!strcmp(op, "Sub")) return x - y;
  if (!strcmp(op, "Mul")) return x * y;
  if (!strcmp(op, "Div")) return x / y;
  if (!strcmp(op, "Maximum")) return x > y || x != x ? x : y;
  return x < y || x != x ? x : y;
}

KC_TEST(builtin_binary_ops_broadcast_and_differentiate) {
  KC_CHECK_OK(kc_builtin_ops_register());
  static const char* const ops[] = {"Add", "Sub", "Mul", "Div", "Maximum", "Minimum"};
  /* Shapes of x and y: equal, a bias, a scalar, a column against a row. */
  static const struct {
    int32_t rx, ry;
    int64_t x[3], y[3];
  } shapes[] = {{2, 2, {3, 4}, {3, 4}},
                {2, 1, {3, 4}, {4}},
                {2, 0, {3, 4}, {0}},
                {2, 2, {3, 1}, {1, 4}},
                {3, 2, {2, 3, 4}, {3, 1}}};
  DLDataType types[2] = {kt_f32, kt_f64};
  uint32_t seed = 5;
  for (int t = 0; t < 2; ++t) {
    double tol = types[t].bits == 32 ? 1e-5 : 1e-12;
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o) {
      for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        char name[32];
        snprintf(name, sizeof name, "kc.%s", ops[o]);
        kc_tensor* x = kt_random(types[t], shapes[s].x, shapes[s].rx, &seed);
        kc_tensor* y = kt_random(types[t], shapes[s].y, shapes[s].ry, &seed);
        kc_tensor* z = kt_bi_call1(name, x, y, NULL, 0);
        const DLTensor* zd = kt_dl(z);
        int64_t n = kc_dltensor_get_numel(zd);
        /* The reference through the broadcast index of each operand. */
        double want[64];
        KC_CHECK(n <= 64);
        for (int64_t i = 0; i < n; ++i) {
          int64_t rem = i, ix = 0, iy = 0, sx = 1, sy = 1;
          for (int32_t d = zd->ndim - 1; d >= 0; --d) {
            int64_t idx = rem % zd->shape[d];
            rem /= zd->shape[d];
            int32_t dx = d - (zd->ndim - shapes[s].rx), dy = d - (zd->ndim - shapes[s].ry);
            if (dx >= 0) {
              ix += (shapes[s].x[dx] == 1 ? 0 : idx) * sx;
              sx *= shapes[s].x[dx];
            }
            if (dy >= 0) {
              iy += (shapes[s].y[dy] == 1 ? 0 : idx) * sy;
              sy *= shapes[s].y[dy];
            }
          }
          want[i] = kt_binary(ops[o], kt_at(kt_dl(x), ix), kt_at(kt_dl(y), iy));
        }
        kt_check_tensor(z, want, n, tol, name);
        /* The gradient against the tangent. */
        kc_tensor* u = kt_random(types[t], shapes[s].x, shapes[s].rx, &seed);
        kc_tensor* v = kt_random(types[t], shapes[s].y, shapes[s].ry, &seed);
        kc_tensor* dz = kt_random(types[t], zd->shape, zd->ndim, &seed);
        char grad[40], jvp[40];
        snprintf(grad, sizeof grad, "kc.%sGrad", ops[o]);
        snprintf(jvp, sizeof jvp, "kc.%sJvp", ops[o]);
        kc_tensor* g[2] = {NULL, NULL};
        kt_bi_call(grad, (kc_tensor*[]){x, y, dz}, 3, NULL, 0, g, 2);
        kc_tensor* tz = NULL;
        if (o < 2) {
          tz = kt_bi_call1(o == 0 ? "kc.Add" : "kc.Sub", u, v, NULL, 0);
        } else {
          kc_tensor* out[2] = {NULL, NULL};
          kt_bi_call(jvp, (kc_tensor*[]){x, y, u, v}, 4, NULL, 0, out, 1);
          tz = out[0];
        }
        kt_check_close(kt_dot(g[0], u) + kt_dot(g[1], v), kt_dot(dz, tz), tol * 10, grad);
        kc_tensor* all[] = {x, y, z, u, v, dz, g[0], g[1], tz};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) kt_release(all[i]);
      }
    }
  }
}

KC_TEST(builtin_maximum_shares_a_tie_and_propagates_nan) {
  KC_CHECK_OK(kc_builtin_ops_register());
  kc_tensor* x = kt_tensor(kt_f32, (int64_t[]){3}, 1, (float[]){1, NAN, 2});
  kc_tensor* y = kt_tensor(kt_f32, (int64_t[]){3}, 1, (float[]){1, 0, 3});
  kc_tensor* dz = kt_tensor(kt_f32, (int64_t[]){3}, 1, (float[]){1, 1, 1});
  kc_tensor* z = kt_bi_call1("kc.Maximum", x, y, NULL, 0);
  const float* zv = kt_dl(z)->data;
  KC_CHECK(zv[0] == 1 && isnan(zv[1]) && zv[2] == 3);
  kc_tensor* g[2] = {NULL, NULL};
  kt_bi_call("kc.MaximumGrad", (kc_tensor*[]){x, y, dz}, 3, NULL, 0, g, 2);
  const float* gx = kt_dl(g[0])->data;
  const float* gy = kt_dl(g[1])->data;
  KC_CHECK(gx[0] == 0.5f && gy[0] == 0.5f); /* a tie, halved */
  KC_CHECK(gx[1] == 1 && gy[1] == 0);       /* NaN: x's */
  KC_CHECK(gx[2] == 0 && gy[2] == 1);
  kc_tensor* all[] = {x, y, dz, z, g[0], g[1]};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) kt_release(all[i]);
}

static double kt_unary(const char* op, double x) {
  if (!strcmp(op, "Neg")) return -x;
  if (!strcmp(op, "Exp")) return exp(x);
  if (!strcmp(op, "Log")) return log(x);
  if (!strcmp(op, "Tanh")) return tanh(x);
  if (!strcmp(op, "Sigmoid")) return 1 / (1 + exp(-x));
  if (!strcmp(op, "Softplus")) return log1p(exp(x));
  if (!strcmp(op, "Gelu")) return 0.5 * x * (1 + erf(x / sqrt(2.0)));
  return x > 0 ? x : 0;
}

KC_TEST(builtin_unary_ops_and_their_gradients) {
  KC_CHECK_OK(kc_builtin_ops_register());
  static const char* const ops[] = {"Neg",  "Exp",      "Log", "Tanh",
                                    "Sigmoid", "Relu", "Softplus", "Gelu"};
  /* Long enough for the pool and the vector kernels; Log on |x| + 0.5. */
  enum { N = 40000 };
  DLDataType types[2] = {kt_f32, kt_f64};
  uint32_t seed = 9;
  for (int t = 0; t < 2; ++t) {
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o) {
      kc_tensor* x = kt_random(types[t], (int64_t[]){N}, 1, &seed);
      if (!strcmp(ops[o], "Log")) {
        const DLTensor* d = kt_dl(x);
        for (int64_t i = 0; i < N; ++i) {
          double v = fabs(kt_at(d, i)) + 0.5;
          if (types[t].bits == 32) {
            ((float*)d->data)[i] = (float)v;
          } else {
            ((double*)d->data)[i] = v;
          }
        }
      }
      char name[32];
      snprintf(name, sizeof name, "kc.%s", ops[o]);
      kc_tensor* y = kt_bi_call1(name, x, NULL, NULL, 0);
      double* want = malloc(N * sizeof *want);
      KC_CHECK(want != NULL);
      for (int64_t i = 0; i < N; ++i) want[i] = kt_unary(ops[o], kt_at(kt_dl(x), i));
      kt_check_tensor(y, want, N, types[t].bits == 32 ? 4e-6 : 1e-14, name);
      /* The gradient the op declares, by name, against a central
       * difference of the reference. */
      kc_op_gradient g;
      KC_CHECK(kc_op_get_gradient(kt_op(name), &g));
      kc_tensor* dy = kt_random(types[t], (int64_t[]){N}, 1, &seed);
      kc_tensor* dx = NULL;
      if (!strcmp(ops[o], "Neg")) {
        dx = kt_bi_call1("kc.Neg", dy, NULL, NULL, 0);
      } else if (!strcmp(ops[o], "Exp")) {
        dx = kt_bi_call1("kc.Mul", y, dy, NULL, 0);
      } else if (!strcmp(ops[o], "Log")) {
        dx = kt_bi_call1("kc.Div", dy, x, NULL, 0);
      } else {
        char gname[32];
        snprintf(gname, sizeof gname, "kc.%sGrad", ops[o]);
        bool from_x = !strcmp(ops[o], "Relu") || !strcmp(ops[o], "Softplus") ||
                      !strcmp(ops[o], "Gelu");
        dx = kt_bi_call1(gname, from_x ? x : y, dy, NULL, 0);
      }
      for (int64_t i = 0; i < N; ++i) {
        double xv = kt_at(kt_dl(x), i), h = 1e-6;
        if (!strcmp(ops[o], "Relu") && fabs(xv) < 1e-5) {
          want[i] = kt_at(kt_dl(dx), i); /* no derivative at 0 */
          continue;
        }
        double d = (kt_unary(ops[o], xv + h) - kt_unary(ops[o], xv - h)) / (2 * h);
        want[i] = d * kt_at(kt_dl(dy), i);
      }
      kt_check_tensor(dx, want, N, types[t].bits == 32 ? 1e-4 : 1e-7, name);
      free(want);
      kt_release(x);
      kt_release(y);
      kt_release(dy);
      kt_release(dx);
    }
  }
}

/* ---- reductions ------------------------------------------------------------------- */

KC_TEST(builtin_sum_and_mean_over_axes) {
  KC_CHECK_OK(kc_builtin_ops_register());
  /* x [2, 3, 4] = 0 .. 23 */
  double xs[24];
  for (int i = 0; i < 24; ++i) xs[i] = i;
  kc_tensor* x = kt_tensor(kt_f64, (int64_t[]){2, 3, 4}, 3, xs);
  kc_array* axes = NULL;
  KC_CHECK_OK(kc_array_create(kt_alloc(), (kc_any[]){kc_any_int(-1), kc_any_int(0)}, 2, &axes));
  kc_op_attr attrs[2] = {{kc_sv("axes"), kc_any_object(KC_OBJECT(axes))},
                         {kc_sv("keepdims"), kc_any_bool(true)}};
  kc_tensor* s = kt_bi_call1("kc.Sum", x, NULL, attrs, 1);
  const DLTensor* sd = kt_dl(s);
  KC_CHECK_INT(sd->ndim, 1);
  KC_CHECK_INT(sd->shape[0], 3);
  /* over i and k of 12 i + 4 j + k: 2 * 4 * 4 j + 4 * 12 + 2 * 6 */
  for (int j = 0; j < 3; ++j) kt_check_close(kt_at(sd, j), 32.0 * j + 60, 1e-15, "kc.Sum");
  kc_tensor* m = kt_bi_call1("kc.Mean", x, NULL, attrs, 2);
  const DLTensor* md = kt_dl(m);
  KC_CHECK_INT(md->ndim, 3);
  KC_CHECK_INT(md->shape[0] * md->shape[1] * md->shape[2], 3);
  for (int j = 0; j < 3; ++j) kt_check_close(kt_at(md, j), (32.0 * j + 60) / 8, 1e-15, "kc.Mean");
  /* The gradients: dy broadcast back (over 8, for the mean). */
  kc_tensor* dy = kt_tensor(kt_f64, (int64_t[]){1, 3, 1}, 3, (double[]){1, 2, 3});
  kc_tensor* dx = kt_bi_call1("kc.MeanGrad", x, dy, attrs, 2);
  const DLTensor* dd = kt_dl(dx);
  KC_CHECK_INT(kc_dltensor_get_numel(dd), 24);
  for (int i = 0; i < 24; ++i)
    kt_check_close(kt_at(dd, i), (1 + (i / 4) % 3) / 8.0, 1e-15, "MeanGrad");
  /* Trailing axes take the row path; f32 accumulates in double. */
  kc_array* last = NULL;
  KC_CHECK_OK(kc_array_create(kt_alloc(), (kc_any[]){kc_any_int(2)}, 1, &last));
  kc_op_attr a1 = {kc_sv("axes"), kc_any_object(KC_OBJECT(last))};
  kc_tensor* r = kt_bi_call1("kc.Sum", x, NULL, &a1, 1);
  for (int i = 0; i < 6; ++i) kt_check_close(kt_at(kt_dl(r), i), 16.0 * i + 6, 1e-15, "rows");
  kc_object_release(KC_OBJECT(axes));
  kc_object_release(KC_OBJECT(last));
  kc_tensor* all[] = {x, s, m, dy, dx, r};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) kt_release(all[i]);
}

/* ---- what the gradient and tangent ops refuse ------------------------------------- */

KC_TEST(builtin_gradient_ops_refuse_cotangents_of_another_shape) {
  KC_CHECK_OK(kc_builtin_ops_register());
  kc_tensor* a = kt_tensor(kt_f32, (int64_t[]){2, 3}, 2, NULL);
  kc_tensor* b = kt_tensor(kt_f32, (int64_t[]){3, 4}, 2, NULL);
  kc_tensor* v3 = kt_tensor(kt_f32, (int64_t[]){3}, 1, NULL);
  kc_tensor* s = kt_tensor(kt_f32, (int64_t[]){0}, 0, NULL);
  /* dproduct must be [2, 4]; a rank-0 one would index its last two dims */
  kt_refused("kc.MatMulGrad", (kc_tensor*[]){a, b, s}, 3, NULL, 0, "dproduct");
  kt_refused("kc.MatMulGrad", (kc_tensor*[]){a, b, b}, 3, NULL, 0, "dproduct");
  kt_refused("kc.MatMulJvp", (kc_tensor*[]){a, b, b, b}, 4, NULL, 0, "a's tangent");
  /* dz must be x and y broadcast together */
  kt_refused("kc.AddGrad", (kc_tensor*[]){a, v3, b}, 3, NULL, 0, "dz");
  kt_refused("kc.MulGrad", (kc_tensor*[]){a, v3, v3}, 3, NULL, 0, "dz");
  kt_refused("kc.MulJvp", (kc_tensor*[]){a, v3, v3, v3}, 4, NULL, 0, "x's tangent");
  kt_refused("kc.TanhGrad", (kc_tensor*[]){a, v3}, 2, NULL, 0, "");
  /* dy must be x reduced over axes */
  kc_array* axes = NULL;
  KC_CHECK_OK(kc_array_create(kt_alloc(), (kc_any[]){kc_any_int(1)}, 1, &axes));
  kc_op_attr attr = {kc_sv("axes"), kc_any_object(KC_OBJECT(axes))};
  kt_refused("kc.SumGrad", (kc_tensor*[]){a, v3}, 2, &attr, 1, "dy against x reduced");
  kt_refused("kc.MeanGrad", (kc_tensor*[]){a, s}, 2, &attr, 1, "dy against x reduced");
  kc_object_release(KC_OBJECT(axes));
  kc_tensor* all[] = {a, b, v3, s};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) kt_release(all[i]);
}

/* ---- the outputs a caller needs ------------------------------------------------------ */

KC_TEST(builtin_matmul_grad_computes_only_the_cotangents_asked_for) {
  KC_CHECK_OK(kc_builtin_ops_register());
  uint32_t seed = 31;
  kc_tensor* a = kt_random(kt_f32, (int64_t[]){4, 6}, 2, &seed);
  kc_tensor* b = kt_random(kt_f32, (int64_t[]){6, 5}, 2, &seed);
  kc_tensor* dp = kt_random(kt_f32, (int64_t[]){4, 5}, 2, &seed);
  kc_tensor* all[2] = {NULL, NULL};
  kt_bi_call("kc.MatMulGrad", (kc_tensor*[]){a, b, dp}, 3, NULL, 0, all, 2);
  for (int64_t want = 0; want < 2; ++want) {
    kc_op_attr attr = {kc_sv("kc_needed"), kc_any_int(1 << want)};
    kc_tensor* some[2] = {NULL, NULL};
    kt_bi_call("kc.MatMulGrad", (kc_tensor*[]){a, b, dp}, 3, &attr, 1, some, 2);
    for (int o = 0; o < 2; ++o) {
      const DLTensor *g = kt_dl(some[o]), *full = kt_dl(all[o]);
      for (int64_t i = 0; i < kc_dltensor_get_numel(g); ++i) {
        kt_check_close(kt_at(g, i), o == want ? kt_at(full, i) : 0.0, 0, "kc_needed");
      }
      kt_release(some[o]);
    }
  }
  kc_op_attr attr = {kc_sv("kc_needed"), kc_any_int(4)};
  const DLTensor* in[3] = {kt_dl(a), kt_dl(b), kt_dl(dp)};
  kc_tensor* out[2] = {NULL, NULL};
  int32_t got = 0;
  KC_CHECK_CODE(kc_op_call(kt_op("kc.MatMulGrad"), in, 3, &attr, 1, NULL, out, 2, &got),
                KC_INVALID_ARGUMENT, "attr 'kc_needed': 4 is not a mask of the op's 2 outputs");
  kc_tensor* rest[] = {a, b, dp, all[0], all[1]};
  for (size_t i = 0; i < sizeof rest / sizeof rest[0]; ++i) kt_release(rest[i]);
}
