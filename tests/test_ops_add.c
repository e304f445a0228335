/* The example plugin's Add (examples/ops): every broadcasting form its
 * loops take (same shapes, a single element, a repeated block, the
 * odometer), for each element type, against a reference sum; and an
 * output that is an input, or overlaps one, through kc_op_call_into. */
#include <stdio.h>

#include "kt_ops.h"

#ifdef KT_OPS_PLUGIN
static const kc_op* kt_add_op(void) {
  static kc_plugin* plugin;
  if (!plugin) KC_CHECK_OK(kc_plugin_load(KT_OPS_PLUGIN, &plugin));
  return kt_op("Add");
}

/* Element i of `t` (row-major) as the broadcast against `out` reads it. */
static double kt_bcast_get(const DLTensor* t, const DLTensor* out, int64_t i) {
  int64_t offset = 0, stride = 1;
  for (int32_t d = out->ndim - 1; d >= 0; --d) {
    int64_t pos = i % out->shape[d];
    i /= out->shape[d];
    int32_t td = d - (out->ndim - t->ndim);
    if (td < 0) continue;
    if (t->shape[td] != 1) offset += pos * stride;
    stride *= t->shape[td];
  }
  switch (t->dtype.bits == 64 ? 2 : t->dtype.code == kDLInt ? 1 : 0) {
    case 0: return ((const float*)t->data)[offset];
    case 1: return ((const int32_t*)t->data)[offset];
    default: return ((const double*)t->data)[offset];
  }
}

static void kt_fill(kc_tensor* t, int seed) {
  const DLTensor* d = kt_dl(t);
  int64_t n = kc_dltensor_get_numel(d);
  for (int64_t i = 0; i < n; ++i) {
    int v = (int)((i * 7 + seed * 13) % 41) - 20;
    if (d->dtype.bits == 64) {
      ((double*)d->data)[i] = v * 0.25;
    } else if (d->dtype.code == kDLInt) {
      ((int32_t*)d->data)[i] = v;
    } else {
      ((float*)d->data)[i] = (float)v * 0.25f;
    }
  }
}

typedef struct kt_shape {
  int32_t ndim;
  int64_t dims[3];
} kt_shape;
#endif

KC_TEST(ops_add_broadcasts_in_every_form) {
#ifndef KT_OPS_PLUGIN
  kt_skip("built without the examples, so no ops plugin");
#else
  const kc_op* op = kt_add_op();
  /* Lengths around the vector widths (4, 8, 16 lanes and the tails). */
  static const kt_shape shapes[] = {
      {0, {0}},        {1, {1}},        {1, {37}},      {2, {1, 37}},
      {2, {5, 37}},    {2, {5, 1}},     {3, {3, 5, 37}}, {3, {3, 1, 37}},
      {3, {1, 5, 1}},  {3, {3, 5, 1}},  {2, {0, 37}},    {1, {64}},
  };
  const DLDataType types[] = {kt_f32, kt_f64, kc_dtype_make(kDLInt, 32, 1)};
  int checked = 0;
  for (size_t ty = 0; ty < 3; ++ty) {
    for (size_t a = 0; a < sizeof shapes / sizeof *shapes; ++a) {
      for (size_t b = 0; b < sizeof shapes / sizeof *shapes; ++b) {
        kc_tensor* in[2] = {
            kt_tensor(types[ty], shapes[a].dims, shapes[a].ndim, NULL),
            kt_tensor(types[ty], shapes[b].dims, shapes[b].ndim, NULL)};
        kt_fill(in[0], 1);
        kt_fill(in[1], 2);
        kc_tensor* out = NULL;
        kc_status* st =
            kt_call1(op, (const kc_tensor* const*)in, 2, NULL, 0, &out);
        if (st) { /* shapes that do not broadcast */
          KC_CHECK_CODE(st, KC_INVALID_ARGUMENT, "");
        } else {
          const DLTensor* z = kt_dl(out);
          int64_t n = kc_dltensor_get_numel(z);
          for (int64_t i = 0; i < n; ++i) {
            double want = kt_bcast_get(kt_dl(in[0]), z, i) +
                          kt_bcast_get(kt_dl(in[1]), z, i);
            double got = kt_bcast_get(z, z, i);
            if (got != want) {
              kt__fail(__FILE__, __LINE__,
                       "type %zu, shapes %zu + %zu: element %lld is %g, "
                       "expected %g",
                       ty, a, b, (long long)i, got, want);
              break;
            }
          }
          ++checked;
          kt_release(out);
        }
        kt_release(in[0]);
        kt_release(in[1]);
      }
    }
  }
  KC_CHECK(checked > 200);
#endif
}

KC_TEST(ops_add_into_an_input_or_an_overlapping_output) {
#ifndef KT_OPS_PLUGIN
  kt_skip("built without the examples, so no ops plugin");
#else
  const kc_op* op = kt_add_op();
  enum { N = 100 };
  float buf[N + 8];
  for (int i = 0; i < N + 8; ++i) buf[i] = (float)i;
  int64_t shape[1] = {N};
  DLTensor x = {buf, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  float ones[N];
  for (int i = 0; i < N; ++i) ones[i] = 1.0f;
  DLTensor y = {ones, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  const DLTensor* in[2] = {&x, &y};
  /* In place: x += 1. */
  DLTensor* out[1] = {&x};
  KC_CHECK_OK(kc_op_call_into(op, in, 2, NULL, 0, NULL, out, 1));
  for (int i = 0; i < N; ++i) KC_CHECK(buf[i] == (float)i + 1.0f);
  /* An output starting 3 elements into x: element by element in order,
   * as the scalar loop does (each sum reads x before it is written). */
  for (int i = 0; i < N + 8; ++i) buf[i] = (float)i;
  DLTensor shifted = x;
  shifted.data = buf + 3;
  out[0] = &shifted;
  KC_CHECK_OK(kc_op_call_into(op, in, 2, NULL, 0, NULL, out, 1));
  float want[N + 8];
  for (int i = 0; i < N + 8; ++i) want[i] = (float)i;
  for (int i = 0; i < N; ++i) want[i + 3] = want[i] + 1.0f;
  for (int i = 0; i < N + 8; ++i) KC_CHECK(buf[i] == want[i]);
#endif
}

KC_TEST(ops_add_splits_long_rows_across_the_pool) {
#ifndef KT_OPS_PLUGIN
  kt_skip("built without the examples, so no ops plugin");
#else
  const kc_op* op = kt_add_op();
  /* Past the split threshold, not a whole number of chunks; on a pool of
   * 3, same shapes, a scalar on either side, and in place. */
  enum { N = 300007 };
  kc_thread_pool* pool = NULL;
  KC_CHECK_OK(kc_thread_pool_create(3, &pool));
  kc_op_call_options opts = {sizeof opts, kt_alloc(), pool, NULL};
  int64_t shape[1] = {N}, one[1] = {1};
  const DLDataType types[] = {kt_f32, kt_f64, kc_dtype_make(kDLInt, 32, 1)};
  for (size_t ty = 0; ty < 3; ++ty) {
    kc_tensor* x = kt_tensor(types[ty], shape, 1, NULL);
    kc_tensor* y = kt_tensor(types[ty], shape, 1, NULL);
    kc_tensor* s = kt_tensor(types[ty], one, 1, NULL);
    kt_fill(x, 1);
    kt_fill(y, 2);
    kt_fill(s, 5);
    const DLTensor* pairs[3][2] = {{kt_dl(x), kt_dl(y)},
                                   {kt_dl(x), kt_dl(s)},
                                   {kt_dl(s), kt_dl(y)}};
    for (int p = 0; p < 3; ++p) {
      kc_tensor* out[1] = {NULL};
      int32_t n = 0;
      KC_CHECK_OK(kc_op_call(op, pairs[p], 2, NULL, 0, &opts, out, 1, &n));
      const DLTensor* z = kt_dl(out[0]);
      int64_t bad = -1;
      for (int64_t i = 0; i < N && bad < 0; ++i) {
        double want = kt_bcast_get(pairs[p][0], z, i) +
                      kt_bcast_get(pairs[p][1], z, i);
        if (kt_bcast_get(z, z, i) != want) bad = i;
      }
      if (bad >= 0) {
        fprintf(stderr, "type %zu, pair %d: element %lld is wrong\n", ty, p,
                (long long)bad);
      }
      KC_CHECK(bad < 0);
      kt_release(out[0]);
    }
    /* In place: x += y, read back against y's values. */
    DLTensor* into[1] = {(DLTensor*)(uintptr_t)kt_dl(x)};
    KC_CHECK_OK(kc_op_call_into(op, pairs[0], 2, NULL, 0, &opts, into, 1));
    kc_tensor* x0 = kt_tensor(types[ty], shape, 1, NULL);
    kt_fill(x0, 1);
    int64_t bad = -1;
    for (int64_t i = 0; i < N && bad < 0; ++i) {
      double want = kt_bcast_get(kt_dl(x0), kt_dl(x0), i) +
                    kt_bcast_get(kt_dl(y), kt_dl(y), i);
      if (kt_bcast_get(kt_dl(x), kt_dl(x), i) != want) bad = i;
    }
    KC_CHECK(bad < 0);
    kt_release(x0);
    kt_release(x);
    kt_release(y);
    kt_release(s);
  }
  kc_thread_pool_destroy(pool);
#endif
}
