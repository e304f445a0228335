/* Eager calls that repeat one before them (no attrs, the same input count,
 * dtypes and device) skip resolution and the kernel lookup: these tests
 * check that such a call computes and refuses exactly what a first call
 * would, across dtypes, input counts, type lists and threads. (A kernel
 * registered after such a call takes it over: test_op_call.c's
 * op_call_priority_and_late_registration, whose calls give no attrs.)
 * Every tensor comes from kt_alloc(), so each test is also a leak check. */
#include <pthread.h>
#include <stdio.h>

#include "kt_ops.h"

static const int64_t kt_shape2[1] = {2};

/* Sum(xs: N * T) -> (y: T): y is the element-wise sum of the xs. */
static kc_status* kt_sum_compute(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  DLTensor* y = kc_kernel_ctx_get_output(ctx, 0);
  int64_t n = kc_dltensor_get_numel(y);
  int32_t count = kc_kernel_ctx_get_input_count(ctx);
  for (int64_t e = 0; e < n; ++e) {
    double s = 0;
    for (int32_t i = 0; i < count; ++i) {
      const DLTensor* x = kc_kernel_ctx_get_input(ctx, i);
      if (x->dtype.code == kDLInt) {
        s += ((const int32_t*)x->data)[e];
      } else if (x->dtype.bits == 32) {
        s += ((const float*)x->data)[e];
      } else {
        s += ((const double*)x->data)[e];
      }
    }
    if (y->dtype.code == kDLInt) {
      ((int32_t*)y->data)[e] = (int32_t)s;
    } else if (y->dtype.bits == 32) {
      ((float*)y->data)[e] = (float)s;
    } else {
      ((double*)y->data)[e] = s;
    }
  }
  return NULL;
}

static void kt_register_sum(void) {
  kt_register_op("kt.Sum", KT_SPECS("xs: N * T"), KT_SPECS("y: T"),
                 KT_SPECS("N: int >= 1", "T: {f32, f64, i32}"),
                 kc_shape_fn_unchanged);
  kt_register_kernel("kt.Sum", NULL, kt_sum_compute, NULL, NULL, NULL, 0, 0);
}

/* Calls kt.Sum on `count` inputs of `dtype`, input i holding {i+1, 2i+2},
 * and reads y[1] back as a double. */
static double kt_sum(const kc_op* op, DLDataType dtype, int32_t count) {
  kc_tensor* in[16];
  for (int32_t i = 0; i < count; ++i) {
    double v[2] = {i + 1, 2 * (i + 1)};
    float f[2] = {(float)v[0], (float)v[1]};
    int32_t n[2] = {i + 1, 2 * (i + 1)};
    const void* data = dtype.code == kDLInt ? (const void*)n
                       : dtype.bits == 32   ? (const void*)f
                                            : (const void*)v;
    in[i] = kt_tensor(dtype, kt_shape2, 1, data);
  }
  kc_tensor* out = NULL;
  kc_status* st = kt_call1(op, (const kc_tensor* const*)in, count, NULL, 0,
                           &out);
  KC_CHECK_OK(st);
  double got = -1;
  if (out) {
    const DLTensor* y = kt_dl(out);
    KC_CHECK(kc_dtype_equal(y->dtype, dtype));
    got = dtype.code == kDLInt  ? ((const int32_t*)y->data)[1]
          : dtype.bits == 32    ? ((const float*)y->data)[1]
                                : ((const double*)y->data)[1];
  }
  kt_release(out);
  for (int32_t i = 0; i < count; ++i) kt_release(in[i]);
  return got;
}

KC_TEST(op_memo_alternating_dtypes_and_counts_compute_each_their_own) {
  kt_register_sum();
  const kc_op* op = kt_op("kt.Sum");
  const DLDataType types[3] = {kt_f32, kt_f64, kt_i32};
  /* More signatures than the memo keeps at once, each called again and
   * again in turn: every result is that signature's. */
  for (int round = 0; round < 4; ++round) {
    for (int32_t count = 1; count <= 6; ++count) {
      for (int t = 0; t < 3; ++t) {
        double want = (double)count * (count + 1); /* 2 * (1 + ... + n) */
        double got = kt_sum(op, types[t], count);
        if (got != want) {
          char what[64];
          kc_dtype_format(types[t], what, sizeof what);
          fprintf(stderr, "round %d, %d x %s: got %g, want %g\n", round,
                  count, what, got, want);
        }
        KC_CHECK(got == want);
      }
    }
  }
  /* One kernel instance per dtype (N is an attr of the key too). */
  kc_op_cache_stats s = {sizeof s, 0, 0, 0};
  kc_op_query_cache(op, &s);
  KC_CHECK_INT(s.entries, 18);
  KC_CHECK_INT(s.constructions, 18);
}

KC_TEST(op_memo_more_signatures_than_it_remembers) {
  kt_register_sum();
  const kc_op* op = kt_op("kt.Sum");
  /* 3 x 16 x 2 calls: past the op's limit of memos, calls resolve in
   * full and still compute right. */
  const DLDataType types[3] = {kt_f32, kt_f64, kt_i32};
  for (int pass = 0; pass < 2; ++pass) {
    for (int t = 0; t < 3; ++t) {
      for (int32_t count = 1; count <= 16; ++count) {
        KC_CHECK(kt_sum(op, types[t], count) == (double)count * (count + 1));
      }
    }
  }
}

KC_TEST(op_memo_refuses_what_a_first_call_refuses) {
  kt_register_add();
  const kc_op* op = kt_op("kt.Add");
  float a[4] = {1, 2, 3, 4};
  int64_t shape[2] = {2, 2}, strides[2] = {1, 2};
  DLTensor x = {a, {kDLCPU, 0}, 2, kt_f32, shape, NULL, 0};
  const DLTensor* in[2] = {&x, &x};
  kc_tensor* out[1] = {NULL};
  int32_t n = 0;
  /* Twice: the second call is the remembered one. */
  for (int i = 0; i < 2; ++i) {
    KC_CHECK_OK(kc_op_call(op, in, 2, NULL, 0, NULL, out, 1, &n));
    KC_CHECK(((const float*)kt_dl(out[0])->data)[3] == 8.0f);
    kt_release(out[0]);
  }
  /* Each input of the same count, dtype and device, but bad. */
  DLTensor strided = x;
  strided.strides = strides;
  in[1] = &strided;
  KC_CHECK_CODE(kc_op_call(op, in, 2, NULL, 0, NULL, out, 1, &n),
                KC_INVALID_ARGUMENT, "calling op 'kt.Add'",
                "input 1 is strided");
  in[1] = NULL;
  KC_CHECK_CODE(kc_op_call(op, in, 2, NULL, 0, NULL, out, 1, &n),
                KC_INVALID_ARGUMENT, "input 1 is NULL");
  int64_t negative[2] = {2, -1};
  DLTensor bad = x;
  bad.shape = negative;
  in[1] = &bad;
  KC_CHECK_CODE(kc_op_call(op, in, 2, NULL, 0, NULL, out, 1, &n),
                KC_INVALID_ARGUMENT, "input 1: dimension 1 is -1");
  /* Another dtype, another device, a shape the shape function refuses. */
  int32_t ints[4] = {0};
  DLTensor xi = {ints, {kDLCPU, 0}, 2, kt_i32, shape, NULL, 0};
  in[1] = &xi;
  KC_CHECK_CODE(kc_op_call(op, in, 2, NULL, 0, NULL, out, 1, &n),
                KC_INVALID_ARGUMENT,
                "input 1 ('y'): expected f32 (T, as input 0 set it), got i32");
  DLTensor on_cuda = x;
  on_cuda.device = (DLDevice){kDLCUDA, 0};
  in[1] = &on_cuda;
  kc_status* st = kc_op_call(op, in, 2, NULL, 0, NULL, out, 1, &n);
  KC_CHECK(st != NULL);
  kc_status_destroy(st);
  int64_t other[1] = {4};
  DLTensor flat = x;
  flat.ndim = 1;
  flat.shape = other;
  in[1] = &flat;
  KC_CHECK_CODE(kc_op_call(op, in, 2, NULL, 0, NULL, out, 1, &n),
                KC_INVALID_ARGUMENT, "in the shape function");
  /* Room for no output, and call_into with the wrong output count. */
  in[1] = &x;
  KC_CHECK_CODE(kc_op_call(op, in, 2, NULL, 0, NULL, out, 0, &n),
                KC_OUT_OF_RANGE, "room for 0");
  DLTensor* none[2] = {&x, &x};
  KC_CHECK_CODE(kc_op_call_into(op, in, 2, NULL, 0, NULL, none, 2),
                KC_INVALID_ARGUMENT, "expected 1 output tensor(s), got 2");
  /* And the remembered call still works after all that. */
  KC_CHECK_OK(kc_op_call(op, in, 2, NULL, 0, NULL, out, 1, &n));
  KC_CHECK(((const float*)kt_dl(out[0])->data)[0] == 2.0f);
  kt_release(out[0]);
}

/* Copy(xs: L) -> (ys: L), L a type list the inputs set (kt_copy_compute,
 * kt_copy_shapes): the memo keeps the list it made and frees it with the
 * op. */
KC_TEST(op_memo_keeps_an_inferred_type_list) {
  kt_register_op("kt.CopyAll", KT_SPECS("xs: L"), KT_SPECS("ys: L"),
                 KT_SPECS("L: list(type)"), kt_copy_shapes);
  kt_register_kernel("kt.CopyAll", NULL, kt_copy_compute, NULL, NULL, NULL, 0,
                     0);
  const kc_op* op = kt_op("kt.CopyAll");
  float f[2] = {1.5f, 2.5f};
  int32_t i[2] = {7, 9};
  kc_tensor* in[2] = {kt_tensor(kt_f32, kt_shape2, 1, f),
                      kt_tensor(kt_i32, kt_shape2, 1, i)};
  const DLTensor* dls[2] = {kt_dl(in[0]), kt_dl(in[1])};
  kc_op_call_options opts = {sizeof opts, kt_alloc(), NULL, NULL};
  for (int round = 0; round < 3; ++round) {
    kc_tensor* out[2] = {NULL, NULL};
    int32_t n = 0;
    KC_CHECK_OK(kc_op_call(op, dls, 2, NULL, 0, &opts, out, 2, &n));
    KC_CHECK_INT(n, 2);
    KC_CHECK(kc_dtype_equal(kt_dl(out[1])->dtype, kt_i32));
    KC_CHECK(((const float*)kt_dl(out[0])->data)[1] == 2.5f);
    KC_CHECK(((const int32_t*)kt_dl(out[1])->data)[1] == 9);
    kt_release(out[0]);
    kt_release(out[1]);
  }
  /* The same count in other dtypes is another call. */
  const DLTensor* swapped[2] = {dls[1], dls[0]};
  kc_tensor* out[2] = {NULL, NULL};
  int32_t n = 0;
  KC_CHECK_OK(kc_op_call(op, swapped, 2, NULL, 0, &opts, out, 2, &n));
  KC_CHECK(kc_dtype_equal(kt_dl(out[0])->dtype, kt_i32));
  KC_CHECK(((const int32_t*)kt_dl(out[0])->data)[0] == 7);
  kt_release(out[0]);
  kt_release(out[1]);
  kt_release(in[0]);
  kt_release(in[1]);
}

typedef struct kt_memo_caller {
  const kc_op* op;
  int seed;
  int failures;
} kt_memo_caller;

static void* kt_memo_calls(void* arg) {
  kt_memo_caller* c = arg;
  float f = 1.5f;
  double d = 2.25;
  int32_t i32 = 7;
  int64_t one = 1;
  DLTensor xs[3] = {{&f, {kDLCPU, 0}, 1, kt_f32, &one, NULL, 0},
                    {&d, {kDLCPU, 0}, 1, kt_f64, &one, NULL, 0},
                    {&i32, {kDLCPU, 0}, 1, kt_i32, &one, NULL, 0}};
  for (int k = 0; k < 3000; ++k) {
    int t = (k + c->seed) % 3;
    int32_t count = 1 + (k * 7 + c->seed) % 4;
    const DLTensor* in[4] = {&xs[t], &xs[t], &xs[t], &xs[t]};
    kc_tensor* out = NULL;
    int32_t n = 0;
    kc_status* st = kc_op_call(c->op, in, count, NULL, 0, NULL, &out, 1, &n);
    double want = t == 0 ? 1.5 * count : t == 1 ? 2.25 * count : 7.0 * count;
    double got = -1;
    if (!st) {
      const DLTensor* y = kc_tensor_get_dltensor(out);
      got = t == 0   ? ((const float*)y->data)[0]
            : t == 1 ? ((const double*)y->data)[0]
                     : ((const int32_t*)y->data)[0];
    }
    if (st || got != want) c->failures++;
    kc_status_destroy(st);
    kc_object_release(KC_OBJECT(out));
  }
  return NULL;
}

KC_TEST(op_memo_from_many_threads) {
  kt_register_sum();
  const kc_op* op = kt_op("kt.Sum");
  kt_memo_caller callers[4];
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i) {
    callers[i] = (kt_memo_caller){op, i, 0};
    KC_CHECK(pthread_create(&threads[i], NULL, kt_memo_calls, &callers[i]) ==
             0);
  }
  for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
  for (int i = 0; i < 4; ++i) KC_CHECK_INT(callers[i].failures, 0);
}

KC_TEST(op_memo_serves_kc_op_infer_too) {
  kt_register_sum();
  const kc_op* op = kt_op("kt.Sum");
  KC_CHECK(kt_sum(op, kt_f64, 3) == 12.0); /* remembered */
  int64_t shape[2] = {4, 5}, strides[2] = {1, 4};
  DLTensor x = {NULL, kc_device_cpu(), 2, kt_f64, shape, NULL, 0};
  const DLTensor* in[3] = {&x, &x, &x};
  kc_op_output_info out[1];
  int32_t n = 0;
  KC_CHECK_OK(kc_op_infer(op, in, 3, NULL, 0, out, 1, &n));
  KC_CHECK_INT(n, 1);
  KC_CHECK(kc_dtype_equal(out[0].dtype, kt_f64));
  KC_CHECK_INT(out[0].rank, 2);
  KC_CHECK_INT(out[0].dims[1], 5);
  KC_CHECK_CODE(kc_op_infer(op, in, 3, NULL, 0, out, 0, &n),
                KC_OUT_OF_RANGE, "has room for 0");
  DLTensor strided = x;
  strided.strides = strides;
  in[2] = &strided;
  KC_CHECK_CODE(kc_op_infer(op, in, 3, NULL, 0, out, 1, &n),
                KC_INVALID_ARGUMENT, "input 2 is strided");
}
