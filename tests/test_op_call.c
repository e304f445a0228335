/* Eager op calls (kc_op_call): checking inputs against the definition,
 * resolving attributes, kernel selection and its errors, and the kernel
 * cache. Every tensor comes from kt_alloc(), so each test is also a leak
 * check. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "kt_ops.h"

static const int64_t kt_shape3[1] = {3};

KC_TEST(op_call_add_f32) {
  kt_register_add();
  float a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
  kc_tensor* in[2] = {kt_tensor(kt_f32, kt_shape3, 1, a),
                      kt_tensor(kt_f32, kt_shape3, 1, b)};
  kc_tensor* out = NULL;
  KC_CHECK_OK(
      kt_call1(kt_op("kt.Add"), (const kc_tensor* const*)in, 2, NULL, 0, &out));
  const DLTensor* z = kt_dl(out);
  KC_CHECK_INT(z->ndim, 1);
  KC_CHECK_INT(z->shape[0], 3);
  KC_CHECK(kc_dtype_equal(z->dtype, kt_f32));
  KC_CHECK(((float*)z->data)[2] == 33.0f);
  kt_release(out);
  kt_release(in[0]);
  kt_release(in[1]);
}

KC_TEST(op_call_no_kernel_lists_kernels) {
  kt_register_add();
  double a[3] = {1, 2, 3};
  kc_tensor* in[2] = {kt_tensor(kt_f64, kt_shape3, 1, a),
                      kt_tensor(kt_f64, kt_shape3, 1, a)};
  kc_tensor* out = NULL;
  KC_CHECK_CODE(
      kt_call1(kt_op("kt.Add"), (const kc_tensor* const*)in, 2, NULL, 0, &out),
      KC_NOT_FOUND, "calling op 'kt.Add'", "no kernel for cpu, T=f64",
      "the kernels of op 'kt.Add' are: cpu: T in {i32, f32}");
  KC_CHECK(out == NULL);
  kt_release(in[0]);
  kt_release(in[1]);
}

KC_TEST(op_call_dtype_mismatch_between_inputs) {
  kt_register_add();
  kc_tensor* in[2] = {kt_tensor(kt_f32, kt_shape3, 1, NULL),
                      kt_tensor(kt_i32, kt_shape3, 1, NULL)};
  kc_tensor* out = NULL;
  KC_CHECK_CODE(
      kt_call1(kt_op("kt.Add"), (const kc_tensor* const*)in, 2, NULL, 0, &out),
      KC_INVALID_ARGUMENT,
      "input 1 ('y'): expected f32 (T, as input 0 set it), got i32");
  kt_release(in[0]);
  kt_release(in[1]);
}

KC_TEST(op_call_dtype_outside_the_op_set) {
  kt_register_add();
  kc_tensor* in[2] = {kt_tensor(kt_i64, kt_shape3, 1, NULL),
                      kt_tensor(kt_i64, kt_shape3, 1, NULL)};
  kc_tensor* out = NULL;
  KC_CHECK_CODE(
      kt_call1(kt_op("kt.Add"), (const kc_tensor* const*)in, 2, NULL, 0, &out),
      KC_INVALID_ARGUMENT, "input 0 ('x')",
      "attr 'T': expected one of {i32, f32, f64}, got i64");
  kt_release(in[0]);
  kt_release(in[1]);
}

KC_TEST(op_call_missing_and_extra_inputs) {
  kt_register_add();
  kc_tensor* in[3] = {kt_tensor(kt_f32, kt_shape3, 1, NULL),
                      kt_tensor(kt_f32, kt_shape3, 1, NULL),
                      kt_tensor(kt_f32, kt_shape3, 1, NULL)};
  kc_tensor* out = NULL;
  const kc_op* op = kt_op("kt.Add");
  KC_CHECK_CODE(kt_call1(op, (const kc_tensor* const*)in, 1, NULL, 0, &out),
                KC_INVALID_ARGUMENT,
                "expected 2 input tensor(s), got 1 (missing inputs)");
  KC_CHECK_CODE(kt_call1(op, (const kc_tensor* const*)in, 3, NULL, 0, &out),
                KC_INVALID_ARGUMENT,
                "expected 2 input tensor(s), got 3 (extra inputs)");
  for (int i = 0; i < 3; ++i) kt_release(in[i]);
}

KC_TEST(op_call_rejects_bad_tensors) {
  kt_register_add();
  int64_t shape[2] = {2, 2}, strides[2] = {1, 2};
  float data[4] = {0};
  DLTensor strided = {data,  {kDLCPU, 0}, 2, {kDLFloat, 32, 1},
                      shape, strides,     0};
  const DLTensor* in[2] = {&strided, &strided};
  kc_tensor* out[1];
  int32_t n = 0;
  KC_CHECK_CODE(kc_op_call(kt_op("kt.Add"), in, 2, NULL, 0, NULL, out, 1, &n),
                KC_INVALID_ARGUMENT, "input 0 is strided");
  in[1] = NULL;
  strided.strides = NULL;
  KC_CHECK_CODE(kc_op_call(kt_op("kt.Add"), in, 2, NULL, 0, NULL, out, 1, &n),
                KC_INVALID_ARGUMENT, "input 1 is NULL");
  KC_CHECK_CODE(kc_op_call(NULL, in, 2, NULL, 0, NULL, out, 1, &n),
                KC_INVALID_ARGUMENT, "op is NULL");
  in[1] = &strided;
  KC_CHECK_CODE(kc_op_call(kt_op("kt.Add"), in, 2, NULL, 0, NULL, out, 0, &n),
                KC_OUT_OF_RANGE, "produces 1 output tensor(s)", "room for 0");
}

/* ---- attributes -------------------------------------------------------------
 */

/* Fill(x: T) -> (y: T): y = x * scale + offset; records what it saw. */
typedef struct kt_fill_seen {
  int creates, deletes, computes;
  double scale;
  int64_t offset;
  char mode[16];
} kt_fill_seen;
static kt_fill_seen kt_seen;

typedef struct kt_fill {
  double scale;
  int64_t offset;
} kt_fill;

static kc_status* kt_fill_create(kc_kernel_construct_ctx* ctx, void** out) {
  const kc_op_attrs* attrs = kc_kernel_construct_ctx_get_attrs(ctx);
  kt_fill* k = kc_allocator_alloc(kt_alloc(), sizeof *k, 0);
  kc_string_view mode;
  kc_status* st = kc_op_attrs_get_float(attrs, "scale", &k->scale);
  if (!st) st = kc_op_attrs_get_int(attrs, "offset", &k->offset);
  if (!st) st = kc_op_attrs_get_string(attrs, "mode", &mode);
  if (st) {
    kc_allocator_free(kt_alloc(), k, sizeof *k, 0);
    return st;
  }
  snprintf(kt_seen.mode, sizeof kt_seen.mode, "%.*s", (int)mode.size,
           mode.data);
  kt_seen.creates++;
  kt_seen.scale = k->scale;
  kt_seen.offset = k->offset;
  *out = k;
  return NULL;
}

static void kt_fill_delete(void* kernel) {
  kt_seen.deletes++;
  kc_allocator_free(kt_alloc(), kernel, sizeof(kt_fill), 0);
}

static kc_status* kt_fill_compute(void* kernel, kc_kernel_ctx* ctx) {
  const kt_fill* k = kernel;
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  DLTensor* y = kc_kernel_ctx_get_output(ctx, 0);
  for (int64_t i = 0; i < kc_dltensor_get_numel(x); ++i) {
    ((float*)y->data)[i] =
        (float)(((const float*)x->data)[i] * k->scale + (double)k->offset);
  }
  kt_seen.computes++;
  return NULL;
}

static void kt_register_fill(void) {
  memset(&kt_seen, 0, sizeof kt_seen);
  kt_register_op("kt.Fill", KT_SPECS("x: T"), KT_SPECS("y: T"),
                 KT_SPECS("T: {f32}", "scale: float = 2", "offset: int >= 0",
                          "mode: {'fast', 'exact'} = 'fast'"),
                 kc_shape_fn_unchanged);
  kt_register_kernel("kt.Fill", kt_fill_create, kt_fill_compute, kt_fill_delete,
                     "T", &kt_f32, 1, 0);
}

KC_TEST(op_call_attrs_defaults_and_given) {
  kt_register_fill();
  float a[3] = {1, 2, 3};
  kc_tensor* in = kt_tensor(kt_f32, kt_shape3, 1, a);
  kc_tensor* out = NULL;
  kc_op_attr attrs[2] = {{KC_SV_LIT("offset"), kc_any_int(1)},
                         {KC_SV_LIT("mode"), kc_any_cstr("exact")}};
  KC_CHECK_OK(kt_call1(kt_op("kt.Fill"), (const kc_tensor* const*)&in, 1, attrs,
                       2, &out));
  KC_CHECK(((float*)kt_dl(out)->data)[2] == 7.0f);
  KC_CHECK(kt_seen.scale == 2.0);
  KC_CHECK_INT(kt_seen.offset, 1);
  KC_CHECK_STR(kt_seen.mode, "exact");
  kt_release(out);
  /* An int given for a float attr is converted. */
  kc_op_attr more[2] = {{KC_SV_LIT("offset"), kc_any_int(0)},
                        {KC_SV_LIT("scale"), kc_any_int(3)}};
  KC_CHECK_OK(kt_call1(kt_op("kt.Fill"), (const kc_tensor* const*)&in, 1, more,
                       2, &out));
  KC_CHECK(((float*)kt_dl(out)->data)[0] == 3.0f);
  kt_release(out);
  kt_release(in);
}

KC_TEST(op_call_attr_errors) {
  kt_register_fill();
  kc_tensor* in = kt_tensor(kt_f32, kt_shape3, 1, NULL);
  const kc_tensor* const* ins = (const kc_tensor* const*)&in;
  const kc_op* op = kt_op("kt.Fill");
  kc_tensor* out = NULL;
  KC_CHECK_CODE(kt_call1(op, ins, 1, NULL, 0, &out), KC_INVALID_ARGUMENT,
                "attr 'offset' (int) is required: it has no default and no "
                "input determines it");
  kc_op_attr bad_kind = {KC_SV_LIT("offset"), kc_any_float(1.5)};
  KC_CHECK_CODE(kt_call1(op, ins, 1, &bad_kind, 1, &out), KC_INVALID_ARGUMENT,
                "attr 'offset': expected int, got float");
  kc_op_attr bound = {KC_SV_LIT("offset"), kc_any_int(-1)};
  KC_CHECK_CODE(kt_call1(op, ins, 1, &bound, 1, &out), KC_INVALID_ARGUMENT,
                "attr 'offset': the value must be >= 0, got -1");
  kc_op_attr unknown[2] = {{KC_SV_LIT("offset"), kc_any_int(0)},
                           {KC_SV_LIT("ofset"), kc_any_int(0)}};
  KC_CHECK_CODE(kt_call1(op, ins, 1, unknown, 2, &out), KC_INVALID_ARGUMENT,
                "attr 'ofset': the op has no such attr (its attrs: T, scale, "
                "offset, mode)");
  kc_op_attr twice[2] = {{KC_SV_LIT("offset"), kc_any_int(0)},
                         {KC_SV_LIT("offset"), kc_any_int(1)}};
  KC_CHECK_CODE(kt_call1(op, ins, 1, twice, 2, &out), KC_INVALID_ARGUMENT,
                "attr 'offset' given twice");
  kc_op_attr mode[2] = {{KC_SV_LIT("offset"), kc_any_int(0)},
                        {KC_SV_LIT("mode"), kc_any_cstr("slow")}};
  KC_CHECK_CODE(kt_call1(op, ins, 1, mode, 2, &out), KC_INVALID_ARGUMENT,
                "attr 'mode': 'slow' is not one of the allowed values");
  kc_op_attr type[2] = {{KC_SV_LIT("offset"), kc_any_int(0)},
                        {KC_SV_LIT("T"), kc_any_dtype(kt_f64)}};
  KC_CHECK_CODE(kt_call1(op, ins, 1, type, 2, &out), KC_INVALID_ARGUMENT,
                "attr 'T': expected one of {f32}, got f64");
  KC_CHECK(out == NULL);
  KC_CHECK_INT(kt_seen.creates, 0);
  kt_release(in);
}

KC_TEST(op_call_getter_errors_reach_the_caller) {
  /* A kernel asking for an attr of the wrong kind, or one the op lacks. */
  kt_register_op(
      "kt.Wrong", KT_SPECS("x: f32"), KT_SPECS("y: f32"),
      KT_SPECS("scale: float = 1", "offset: int = 0", "mode: int = 0"),
      kc_shape_fn_unchanged);
  kt_register_kernel("kt.Wrong", kt_fill_create, kt_fill_compute,
                     kt_fill_delete, NULL, NULL, 0, 0);
  kc_tensor* in = kt_tensor(kt_f32, kt_shape3, 1, NULL);
  kc_tensor* out = NULL;
  KC_CHECK_CODE(kt_call1(kt_op("kt.Wrong"), (const kc_tensor* const*)&in, 1,
                         NULL, 0, &out),
                KC_INVALID_ARGUMENT, "constructing the cpu kernel",
                "attr 'mode' of op 'kt.Wrong' is an int, not a string");
  const kc_op_attrs* none = NULL;
  int64_t v;
  KC_CHECK_CODE(kc_op_attrs_get_int(none, "x", &v), KC_INVALID_ARGUMENT, "");
  kt_release(in);
}

/* ---- the kernel cache
 * ---------------------------------------------------------- */

static int64_t kt_constructions(const kc_op* op) {
  kc_op_cache_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  kc_op_query_cache(op, &s);
  return s.constructions;
}

static int64_t kt_cache_entries(const kc_op* op) {
  kc_op_cache_stats s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  kc_op_query_cache(op, &s);
  return s.entries;
}

KC_TEST(op_call_cache_reuse_and_new_attrs) {
  kt_register_fill();
  const kc_op* op = kt_op("kt.Fill");
  kc_tensor* in = kt_tensor(kt_f32, kt_shape3, 1, NULL);
  kc_tensor* out = NULL;
  kc_op_attr one = {KC_SV_LIT("offset"), kc_any_int(1)};
  for (int i = 0; i < 5; ++i) {
    KC_CHECK_OK(kt_call1(op, (const kc_tensor* const*)&in, 1, &one, 1, &out));
    kt_release(out);
  }
  KC_CHECK_INT(kt_seen.creates, 1);
  KC_CHECK_INT(kt_seen.computes, 5);
  KC_CHECK_INT(kt_constructions(op), 1);
  KC_CHECK_INT(kt_cache_entries(op), 1);
  /* Different attrs: a kernel of their own. */
  kc_op_attr two = {KC_SV_LIT("offset"), kc_any_int(2)};
  KC_CHECK_OK(kt_call1(op, (const kc_tensor* const*)&in, 1, &two, 1, &out));
  kt_release(out);
  KC_CHECK_INT(kt_seen.creates, 2);
  KC_CHECK_INT(kt_seen.offset, 2);
  KC_CHECK_INT(kt_cache_entries(op), 2);
  /* Back to the first: cached. */
  KC_CHECK_OK(kt_call1(op, (const kc_tensor* const*)&in, 1, &one, 1, &out));
  kt_release(out);
  KC_CHECK_INT(kt_seen.creates, 2);
  /* A string attr with the same text, given another way, hits too. */
  kc_op_attr same[2] = {{KC_SV_LIT("offset"), kc_any_int(1)},
                        {KC_SV_LIT("mode"), kc_any_cstr("fast")}};
  KC_CHECK_OK(kt_call1(op, (const kc_tensor* const*)&in, 1, same, 2, &out));
  kt_release(out);
  KC_CHECK_INT(kt_seen.creates, 2);
  kt_release(in);
  /* The registries free the kernels: deleters run. */
  kc_func_registry_reset();
  kc_op_registry_reset();
  KC_CHECK_INT(kt_seen.deletes, 2);
}

static int kt_which_kernel;
static kc_status* kt_mark_one(void* k, kc_kernel_ctx* ctx) {
  kt_which_kernel = 1;
  return kt_add_compute(k, ctx);
}
static kc_status* kt_mark_two(void* k, kc_kernel_ctx* ctx) {
  kt_which_kernel = 2;
  return kt_add_compute(k, ctx);
}

KC_TEST(op_call_priority_and_late_registration) {
  kt_register_op("kt.Pick", KT_SPECS("x: T", "y: T"), KT_SPECS("z: T"),
                 KT_SPECS("T: {f32, i32}"), kt_same_shape_fn);
  kt_register_kernel("kt.Pick", NULL, kt_mark_one, NULL, "T", &kt_f32, 1, 0);
  const kc_op* op = kt_op("kt.Pick");
  kc_tensor* in[2] = {kt_tensor(kt_f32, kt_shape3, 1, NULL),
                      kt_tensor(kt_f32, kt_shape3, 1, NULL)};
  kc_tensor* out = NULL;
  KC_CHECK_OK(kt_call1(op, (const kc_tensor* const*)in, 2, NULL, 0, &out));
  kt_release(out);
  KC_CHECK_INT(kt_which_kernel, 1);
  /* A kernel of higher priority registered later takes over: the cached
   * entry notices the registration. */
  kt_register_kernel("kt.Pick", NULL, kt_mark_two, NULL, "T", &kt_f32, 1, 5);
  KC_CHECK_OK(kt_call1(op, (const kc_tensor* const*)in, 2, NULL, 0, &out));
  kt_release(out);
  KC_CHECK_INT(kt_which_kernel, 2);
  /* One of lower priority changes nothing, but is re-checked once. */
  kt_register_kernel("kt.Pick", NULL, kt_mark_one, NULL, "T", &kt_f32, 1, 1);
  KC_CHECK_OK(kt_call1(op, (const kc_tensor* const*)in, 2, NULL, 0, &out));
  kt_release(out);
  KC_CHECK_INT(kt_which_kernel, 2);
  kc_op_cache_stats s = {sizeof s, 0, 0, 0};
  kc_op_query_cache(op, &s);
  KC_CHECK_INT(s.reselections, 2);
  KC_CHECK_INT(s.entries, 1);
  kt_release(in[0]);
  kt_release(in[1]);
}

/* ---- list inputs
 * ------------------------------------------------------------------ */

/* Sum(xs: N * T) -> (y: T): elementwise sum of N f32 tensors. */
static kc_status* kt_sum_compute(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  int32_t start = -1, stop = -1;
  kc_status* st = kc_kernel_ctx_get_input_range(ctx, "xs", &start, &stop);
  if (st) return st;
  DLTensor* y = kc_kernel_ctx_get_output(ctx, 0);
  int64_t n = kc_dltensor_get_numel(y);
  for (int64_t i = 0; i < n; ++i) {
    float acc = 0;
    for (int32_t j = start; j < stop; ++j) {
      acc += ((const float*)kc_kernel_ctx_get_input(ctx, j)->data)[i];
    }
    ((float*)y->data)[i] = acc;
  }
  return NULL;
}

KC_TEST(op_call_repeated_input_infers_n) {
  kt_register_op("kt.Sum", KT_SPECS("xs: N * T"), KT_SPECS("y: T"),
                 KT_SPECS("N: int >= 1", "T: {f32}"), kc_shape_fn_unchanged);
  kt_register_kernel("kt.Sum", NULL, kt_sum_compute, NULL, NULL, NULL, 0, 0);
  float a[3] = {1, 2, 3};
  kc_tensor* in[4];
  for (int i = 0; i < 4; ++i) in[i] = kt_tensor(kt_f32, kt_shape3, 1, a);
  const kc_op* op = kt_op("kt.Sum");
  kc_tensor* out = NULL;
  KC_CHECK_OK(kt_call1(op, (const kc_tensor* const*)in, 4, NULL, 0, &out));
  KC_CHECK(((float*)kt_dl(out)->data)[2] == 12.0f);
  kt_release(out);
  KC_CHECK_CODE(kt_call1(op, (const kc_tensor* const*)in, 0, NULL, 0, &out),
                KC_INVALID_ARGUMENT, "inferring attr 'N' from 0 input",
                "must be >= 1, got 0");
  kc_op_attr n2 = {KC_SV_LIT("N"), kc_any_int(2)};
  KC_CHECK_CODE(kt_call1(op, (const kc_tensor* const*)in, 3, &n2, 1, &out),
                KC_INVALID_ARGUMENT, "expected 2 input tensor(s), got 3");
  kt_release(in[3]);
  in[3] = kt_tensor(kt_i32, kt_shape3, 1, NULL);
  KC_CHECK_CODE(kt_call1(op, (const kc_tensor* const*)in, 4, NULL, 0, &out),
                KC_INVALID_ARGUMENT,
                "input 3 ('xs'): expected f32 (T, as input 0 set it), got i32");
  for (int i = 0; i < 4; ++i) kt_release(in[i]);
}

/* Pack(xs: L) -> (ys: L): copies each input to the matching output
 * (kt_copy_compute, kt_copy_shapes). */
KC_TEST(op_call_type_list_input_and_output) {
  kt_register_op("kt.Pack", KT_SPECS("xs: L"), KT_SPECS("ys: L"),
                 KT_SPECS("L: list({f32, i32}) >= 1"), kt_copy_shapes);
  kt_register_kernel("kt.Pack", NULL, kt_copy_compute, NULL, "L", &kt_f32, 1,
                     0);
  DLDataType both[2] = {kt_f32, kt_i32};
  kt_register_kernel("kt.Pack", NULL, kt_copy_compute, NULL, "L", both, 2, 0);
  float a[3] = {1, 2, 3};
  int32_t b[3] = {4, 5, 6};
  const kc_op* op = kt_op("kt.Pack");
  kc_tensor* in[2] = {kt_tensor(kt_f32, kt_shape3, 1, a),
                      kt_tensor(kt_i32, kt_shape3, 1, b)};
  const DLTensor* dls[2] = {kt_dl(in[0]), kt_dl(in[1])};
  kc_tensor* outs[2] = {NULL, NULL};
  int32_t n = 0;
  kc_op_call_options opts = {sizeof opts, kt_alloc(), NULL, NULL};
  KC_CHECK_OK(kc_op_call(op, dls, 2, NULL, 0, &opts, outs, 2, &n));
  KC_CHECK_INT(n, 2);
  KC_CHECK(kc_dtype_equal(kt_dl(outs[1])->dtype, kt_i32));
  KC_CHECK_INT(((int32_t*)kt_dl(outs[1])->data)[2], 6);
  kt_release(outs[0]);
  kt_release(outs[1]);
  /* A given list decides the dtypes; an input that differs is refused. */
  kc_any items[2] = {kc_any_dtype(kt_f32), kc_any_dtype(kt_f32)};
  kc_array* list = NULL;
  KC_CHECK_OK(kc_array_create(kt_alloc(), items, 2, &list));
  kc_op_attr l = {KC_SV_LIT("L"), kc_any_object(KC_OBJECT(list))};
  KC_CHECK_CODE(kc_op_call(op, dls, 2, &l, 1, &opts, outs, 2, &n),
                KC_INVALID_ARGUMENT,
                "input 1 ('xs'): expected f32 (item 1 of attr 'L'), got i32");
  kc_object_release(KC_OBJECT(list));
  kt_release(in[0]);
  kt_release(in[1]);
}

/* ---- shape inference and outputs
 * ------------------------------------------------------ */

static kc_status* kt_failing_shape_fn(kc_shape_ctx* ctx) {
  const kc_shape_handle* s = NULL;
  return kc_shape_ctx_with_rank(ctx, kc_shape_ctx_get_input(ctx, 0), 2, &s);
}

static int kt_computes;
static kc_status* kt_count_compute(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  (void)ctx;
  kt_computes++;
  return NULL;
}

KC_TEST(op_call_shape_fn_failure_stops_the_call) {
  kt_register_op("kt.Matrix", KT_SPECS("x: f32"), KT_SPECS("y: f32"), NULL,
                 kt_failing_shape_fn);
  kt_register_kernel("kt.Matrix", NULL, kt_count_compute, NULL, NULL, NULL, 0,
                     0);
  kc_tensor* in = kt_tensor(kt_f32, kt_shape3, 1, NULL);
  kc_tensor* out = NULL;
  KC_CHECK_CODE(kt_call1(kt_op("kt.Matrix"), (const kc_tensor* const*)&in, 1,
                         NULL, 0, &out),
                KC_INVALID_ARGUMENT,
                "calling op 'kt.Matrix': in the shape function: expected "
                "rank 2, got rank 1 (shape [3])");
  KC_CHECK_INT(kt_computes, 0);
  kt_release(in);
}

/* Unique(x: i32) -> (y: i32): the distinct values in order of first
 * appearance; the output's length depends on the data. */
static kc_status* kt_unique_compute(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  const int32_t* v = x->data;
  int64_t n = kc_dltensor_get_numel(x), m = 0;
  int32_t* seen = NULL;
  kc_status* st = kc_kernel_ctx_allocate_temp(ctx, (size_t)(n ? n : 1) * 4, 0,
                                              (void**)&seen);
  for (int64_t i = 0; !st && i < n; ++i) {
    bool dup = false;
    for (int64_t j = 0; j < m; ++j) dup |= seen[j] == v[i];
    if (!dup) seen[m++] = v[i];
  }
  DLTensor* y = NULL;
  if (!st) st = kc_kernel_ctx_allocate_output(ctx, 0, &m, 1, &y);
  if (!st) memcpy(y->data, seen, (size_t)m * 4);
  /* Asking again with the same shape returns the same tensor. */
  DLTensor* again = NULL;
  if (!st) st = kc_kernel_ctx_allocate_output(ctx, 0, &m, 1, &again);
  if (!st && again != y) st = kc_status_create(KC_INTERNAL, "not the same");
  int64_t other = m + 1;
  if (!st) {
    kc_status* refused = kc_kernel_ctx_allocate_output(ctx, 0, &other, 1, &y);
    if (!refused) return kc_status_create(KC_INTERNAL, "allowed a new shape");
    kc_status_destroy(refused);
  }
  return st;
}

static kc_status* kt_unknown_length(kc_shape_ctx* ctx) {
  const kc_shape_handle* s = NULL;
  kc_status* st = kc_shape_ctx_make_shape(ctx, 1, NULL, &s);
  if (!st) st = kc_shape_ctx_set_output(ctx, 0, s);
  return st;
}

KC_TEST(op_call_kernel_allocates_data_dependent_output) {
  kt_register_op("kt.Unique", KT_SPECS("x: i32"), KT_SPECS("y: i32"), NULL,
                 kt_unknown_length);
  kt_register_kernel("kt.Unique", NULL, kt_unique_compute, NULL, NULL, NULL, 0,
                     0);
  int64_t shape[1] = {6};
  int32_t v[6] = {3, 1, 3, 2, 1, 3};
  kc_tensor* in = kt_tensor(kt_i32, shape, 1, v);
  kc_tensor* out = NULL;
  KC_CHECK_OK(kt_call1(kt_op("kt.Unique"), (const kc_tensor* const*)&in, 1,
                       NULL, 0, &out));
  KC_CHECK_INT(kt_dl(out)->shape[0], 3);
  KC_CHECK_INT(((int32_t*)kt_dl(out)->data)[2], 2);
  kt_release(out);
  kt_release(in);
}

KC_TEST(op_call_kernel_must_produce_outputs) {
  kt_register_op("kt.Lazy", KT_SPECS("x: i32"), KT_SPECS("y: i32"), NULL, NULL);
  kt_register_kernel("kt.Lazy", NULL, kt_count_compute, NULL, NULL, NULL, 0, 0);
  kc_tensor* in = kt_tensor(kt_i32, kt_shape3, 1, NULL);
  kc_tensor* out = NULL;
  KC_CHECK_CODE(kt_call1(kt_op("kt.Lazy"), (const kc_tensor* const*)&in, 1,
                         NULL, 0, &out),
                KC_INTERNAL, "the kernel did not produce output 0");
  kt_release(in);
}

/* A kernel that fails from a parallel loop, through set_status. */
static void kt_fail_range(void* ctx, int64_t begin, int64_t end) {
  (void)end;
  if (begin == 0) {
    kc_kernel_ctx_set_status(
        ctx, kc_status_create(KC_DATA_LOSS, "kt: range %d failed", 0));
  }
  kc_kernel_ctx_set_status(ctx, kc_status_create(KC_ABORTED, "later"));
}

static kc_status* kt_parallel_fail_compute(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  kc_thread_pool_parallel_for(kc_kernel_ctx_get_thread_pool(ctx), 4, 1000000,
                              kt_fail_range, ctx);
  return NULL;
}

KC_TEST(op_call_set_status_fails_the_call) {
  kt_register_op("kt.Fails", KT_SPECS("x: i32"), KT_SPECS("y: i32"), NULL,
                 kc_shape_fn_unchanged);
  kt_register_kernel("kt.Fails", NULL, kt_parallel_fail_compute, NULL, NULL,
                     NULL, 0, 0);
  kc_tensor* in = kt_tensor(kt_i32, kt_shape3, 1, NULL);
  kc_tensor* out = NULL;
  kc_status* st = kt_call1(kt_op("kt.Fails"), (const kc_tensor* const*)&in, 1,
                           NULL, 0, &out);
  kc_status_code code = kc_status_get_code(st);
  KC_CHECK(code == KC_DATA_LOSS || code == KC_ABORTED);
  kc_status_destroy(st);
  KC_CHECK(out == NULL);
  kt_release(in);
}

KC_TEST(op_call_into_caller_outputs) {
  kt_register_add();
  float a[3] = {1, 2, 3};
  kc_tensor* in = kt_tensor(kt_f32, kt_shape3, 1, a);
  const DLTensor* dls[2] = {kt_dl(in), kt_dl(in)};
  float result[3] = {0};
  int64_t shape[1] = {3};
  DLTensor z = {result, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor* outs[1] = {&z};
  const kc_op* op = kt_op("kt.Add");
  KC_CHECK_OK(kc_op_call_into(op, dls, 2, NULL, 0, NULL, outs, 1));
  KC_CHECK(result[2] == 6.0f);
  int64_t wrong[1] = {4};
  z.shape = wrong;
  KC_CHECK_CODE(kc_op_call_into(op, dls, 2, NULL, 0, NULL, outs, 1),
                KC_INVALID_ARGUMENT,
                "output 0: expected a compact f32 tensor on cpu:0",
                "the op produces f32[3], the output given is a f32[4]");
  /* Another dtype, and a strided tensor, are named too. */
  z.shape = shape;
  z.dtype = (DLDataType){kDLFloat, 64, 1};
  KC_CHECK_CODE(kc_op_call_into(op, dls, 2, NULL, 0, NULL, outs, 1), KC_INVALID_ARGUMENT,
                "the op produces f32[3], the output given is a f64[3]");
  z.dtype = (DLDataType){kDLFloat, 32, 1};
  int64_t every_other[1] = {2};
  z.strides = every_other;
  KC_CHECK_CODE(kc_op_call_into(op, dls, 2, NULL, 0, NULL, outs, 1), KC_INVALID_ARGUMENT,
                "the output given is a strided f32[3]");
  z.strides = NULL;
  KC_CHECK_CODE(kc_op_call_into(op, dls, 2, NULL, 0, NULL, outs, 0),
                KC_INVALID_ARGUMENT, "expected 1 output tensor(s), got 0");
  kt_release(in);
}

/* ---- the op as a packed function
 * -------------------------------------------------------- */

KC_TEST(op_call_through_packed_function) {
  kt_register_fill();
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_registry_lookup(KC_SV_LIT("op.kt.Fill"), &f));
  float a[3] = {1, 2, 3};
  kc_tensor* in = kt_tensor(kt_f32, kt_shape3, 1, a);
  kc_any args[3] = {kc_any_object(KC_OBJECT(in)), kc_any_cstr("offset=1"),
                    kc_any_cstr("mode=exact")};
  kc_any ret = kc_any_none();
  KC_CHECK_OK(kc_func_call(f, args, 3, &ret));
  KC_CHECK_INT(ret.type_index, KC_TYPE_TENSOR);
  const DLTensor* y =
      kc_tensor_get_dltensor((const kc_tensor*)(const void*)ret.u.v_obj);
  KC_CHECK(((float*)y->data)[1] == 5.0f);
  KC_CHECK_STR(kt_seen.mode, "exact");
  kc_any_release(&ret);
  /* A [name, value] pair, and the errors. */
  kc_any pair_items[2] = {kc_any_cstr("offset"), kc_any_int(4)};
  kc_array* pair = NULL;
  KC_CHECK_OK(kc_array_create(kt_alloc(), pair_items, 0, &pair));
  kc_object_release(KC_OBJECT(pair));
  kc_any small[2] = {kc_any_none(), kc_any_int(4)};
  KC_CHECK_OK(kc_any_from_string(kt_alloc(), KC_SV_LIT("offset"), &small[0]));
  KC_CHECK_OK(kc_array_create(kt_alloc(), small, 2, &pair));
  kc_any_release(&small[0]);
  kc_any args2[2] = {kc_any_object(KC_OBJECT(in)),
                     kc_any_object(KC_OBJECT(pair))};
  KC_CHECK_OK(kc_func_call(f, args2, 2, &ret));
  kc_any_release(&ret);
  kc_object_release(KC_OBJECT(pair));
  kc_any bad[2] = {kc_any_object(KC_OBJECT(in)), kc_any_cstr("offset=x")};
  KC_CHECK_CODE(kc_func_call(f, bad, 2, &ret), KC_INVALID_ARGUMENT,
                "calling op 'kt.Fill': argument 1: attr 'offset' (int): value "
                "'x': column 1: expected an integer, got 'x'");
  kc_any order[2] = {kc_any_cstr("offset=1"), kc_any_object(KC_OBJECT(in))};
  KC_CHECK_CODE(kc_func_call(f, order, 2, &ret), KC_INVALID_ARGUMENT,
                "argument 1: a tensor after the attributes");
  kc_any junk[2] = {kc_any_object(KC_OBJECT(in)), kc_any_int(3)};
  KC_CHECK_CODE(kc_func_call(f, junk, 2, &ret), KC_INVALID_ARGUMENT,
                "argument 1: expected a tensor, an array of tensors, "
                "'name=value' or [name, value], got int");
  kt_release(in);
}

/* ---- many threads
 * ------------------------------------------------------------------------ */

/* Shift(x: i32, by: int) -> (y: i32): y = x + by, with kernel state made
 * per `by` and counted. */
static atomic_int kt_shift_creates, kt_shift_deletes;

static kc_status* kt_shift_create(kc_kernel_construct_ctx* ctx, void** out) {
  int64_t* by = kc_allocator_alloc(kt_alloc(), sizeof *by, 0);
  kc_status* st =
      kc_op_attrs_get_int(kc_kernel_construct_ctx_get_attrs(ctx), "by", by);
  if (st) {
    kc_allocator_free(kt_alloc(), by, sizeof *by, 0);
    return st;
  }
  atomic_fetch_add(&kt_shift_creates, 1);
  *out = by;
  return NULL;
}

static void kt_shift_delete(void* kernel) {
  atomic_fetch_add(&kt_shift_deletes, 1);
  kc_allocator_free(kt_alloc(), kernel, sizeof(int64_t), 0);
}

static kc_status* kt_shift_compute(void* kernel, kc_kernel_ctx* ctx) {
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  DLTensor* y = kc_kernel_ctx_get_output(ctx, 0);
  for (int64_t i = 0; i < kc_dltensor_get_numel(x); ++i) {
    ((int32_t*)y->data)[i] =
        ((const int32_t*)x->data)[i] + (int32_t) * (const int64_t*)kernel;
  }
  return NULL;
}

typedef struct kt_caller {
  const kc_op* op;
  int seed;
  int failures;
} kt_caller;

static void* kt_call_many(void* arg) {
  kt_caller* c = arg;
  int32_t v = 5, got = 0;
  int64_t one = 1;
  DLTensor x = {&v, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, &one, NULL, 0};
  DLTensor y = {&got, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, &one, NULL, 0};
  const DLTensor* in[1] = {&x};
  DLTensor* out[1] = {&y};
  for (int i = 0; i < 2000; ++i) {
    int by = (i * 7 + c->seed) % 8;
    kc_op_attr attr = {KC_SV_LIT("by"), kc_any_int(by)};
    kc_status* st = kc_op_call_into(c->op, in, 1, &attr, 1, NULL, out, 1);
    if (st || got != 5 + by) c->failures++;
    kc_status_destroy(st);
  }
  return NULL;
}

KC_TEST(op_call_from_many_threads) {
  atomic_store(&kt_shift_creates, 0);
  atomic_store(&kt_shift_deletes, 0);
  kt_register_op("kt.Shift", KT_SPECS("x: i32"), KT_SPECS("y: i32"),
                 KT_SPECS("by: int"), kc_shape_fn_unchanged);
  kt_register_kernel("kt.Shift", kt_shift_create, kt_shift_compute,
                     kt_shift_delete, NULL, NULL, 0, 0);
  const kc_op* op = kt_op("kt.Shift");
  kt_caller callers[4];
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i) {
    callers[i] = (kt_caller){op, i, 0};
    KC_CHECK(pthread_create(&threads[i], NULL, kt_call_many, &callers[i]) == 0);
  }
  for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
  for (int i = 0; i < 4; ++i) KC_CHECK_INT(callers[i].failures, 0);
  /* One entry per `by`; a thread that lost a race to construct the same
   * entry deleted its own at once. */
  KC_CHECK_INT(kt_cache_entries(op), 8);
  KC_CHECK_INT(atomic_load(&kt_shift_creates) - atomic_load(&kt_shift_deletes),
               8);
  kc_func_registry_reset();
  kc_op_registry_reset();
  KC_CHECK_INT(atomic_load(&kt_shift_deletes), atomic_load(&kt_shift_creates));
}

/* kc_op_infer: shape inference alone, on tensors without data, and no
 * kernel is asked for. */
KC_TEST(op_infer_reports_dtypes_and_shapes_without_a_kernel) {
  kt_register_add(); /* its kernel takes f32 and i32 only */
  int64_t shape[2] = {4, 5};
  DLTensor x = {NULL, kc_device_cpu(), 2, kt_f64, shape, NULL, 0};
  const DLTensor* in[2] = {&x, &x};
  kc_op_output_info out[2];
  int32_t n = -1;
  KC_CHECK_OK(kc_op_infer(kt_op("kt.Add"), in, 2, NULL, 0, out, 2, &n));
  KC_CHECK_INT(n, 1);
  KC_CHECK(kc_dtype_equal(out[0].dtype, kt_f64));
  KC_CHECK_INT(out[0].rank, 2);
  KC_CHECK_INT(out[0].dims[0], 4);
  KC_CHECK_INT(out[0].dims[1], 5); /* and f64 has no kernel */
  /* Input errors are those of a call. */
  DLTensor y = {NULL, kc_device_cpu(), 2, kt_i32, shape, NULL, 0};
  const DLTensor* mixed[2] = {&x, &y};
  KC_CHECK_CODE(kc_op_infer(kt_op("kt.Add"), mixed, 2, NULL, 0, out, 2, &n),
                KC_INVALID_ARGUMENT, "calling op 'kt.Add'", "input 1");
  KC_CHECK_CODE(kc_op_infer(kt_op("kt.Add"), in, 2, NULL, 0, out, 0, &n),
                KC_OUT_OF_RANGE, "has room for 0");
}

KC_TEST(op_infer_unknown_and_failing_shapes) {
  kt_register_op("kt.Unique", KT_SPECS("x: i32"), KT_SPECS("y: i32"), NULL,
                 kt_unknown_length);
  int64_t shape[1] = {7};
  DLTensor x = {NULL, kc_device_cpu(), 1, kt_i32, shape, NULL, 0};
  const DLTensor* in[1] = {&x};
  kc_op_output_info out[1];
  int32_t n = 0;
  KC_CHECK_OK(kc_op_infer(kt_op("kt.Unique"), in, 1, NULL, 0, out, 1, &n));
  KC_CHECK_INT(out[0].rank, 1);
  KC_CHECK_INT(out[0].dims[0], KC_DIM_UNKNOWN);
  kt_register_op("kt.Matrix", KT_SPECS("x: f32"), KT_SPECS("y: f32"), NULL,
                 kt_failing_shape_fn);
  DLTensor v = {NULL, kc_device_cpu(), 1, kt_f32, shape, NULL, 0};
  const DLTensor* vin[1] = {&v};
  KC_CHECK_CODE(kc_op_infer(kt_op("kt.Matrix"), vin, 1, NULL, 0, out, 1, &n),
                KC_INVALID_ARGUMENT, "in the shape function");
}

/* ---- kc_op_registry_reset
 * ------------------------------------------------------ */

static kc_status* kt_call_func(kc_func* f, const kc_tensor* in,
                               kc_any* out_ret) {
  kc_any args[2] = {kc_any_object(KC_OBJECT((kc_tensor*)(uintptr_t)in)),
                    kc_any_cstr("offset=1")};
  return kc_func_call(f, args, 2, out_ret);
}

static kc_status* kt_none_packed(void* self, const kc_any* args, int32_t n,
                                 kc_any* ret) {
  (void)self, (void)args, (void)n, (void)ret;
  return NULL;
}

KC_TEST(op_registry_reset_runs_deleters_and_removes_op_functions) {
  kt_register_fill();
  kc_tensor* in = kt_tensor(kt_f32, kt_shape3, 1, NULL);
  kc_func* f = NULL;
  KC_CHECK_OK(kc_func_registry_lookup(KC_SV_LIT("op.kt.Fill"), &f));
  kc_object_retain(KC_OBJECT(f));
  kc_any ret = kc_any_none();
  KC_CHECK_OK(kt_call_func(f, in, &ret));
  kc_any_release(&ret);
  KC_CHECK_INT(kt_seen.creates, 1);
  /* Overridden: the instance of the op it replaced must go too. */
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt.Fill", &b));
  KC_CHECK_OK(kc_op_builder_add_input(b, "x: T"));
  KC_CHECK_OK(kc_op_builder_add_output(b, "y: T"));
  const char* const attrs[] = {"T: {f32}", "scale: float = 2",
                               "offset: int >= 0", "mode: string = 'fast'"};
  for (size_t i = 0; i < 4; ++i) KC_CHECK_OK(kc_op_builder_add_attr(b, attrs[i]));
  KC_CHECK_OK(kc_op_builder_set_shape_fn(b, kc_shape_fn_unchanged));
  KC_CHECK_OK(kc_op_registry_register(b, KC_REGISTER_OVERRIDE));
  KC_CHECK_OK(kt_call_func(f, in, &ret)); /* the old op, still held */
  kc_any_release(&ret);
  kc_op_attr one = {KC_SV_LIT("offset"), kc_any_int(1)};
  kc_tensor* out = NULL;
  KC_CHECK_OK(kt_call1(kt_op("kt.Fill"), (const kc_tensor* const*)&in, 1,
                       &one, 1, &out));
  kt_release(out);
  KC_CHECK_INT(kt_seen.creates, 2);
  /* A function registered over "op.kt.Other" is not the op's to remove. */
  kt_register_op("kt.Other", KT_SPECS("x: f32"), KT_SPECS("y: f32"), NULL,
                 kc_shape_fn_unchanged);
  kc_func* other = NULL;
  KC_CHECK_OK(kc_func_create(kt_alloc(), kt_none_packed, NULL, NULL, &other));
  KC_CHECK_OK(kc_func_registry_register(KC_SV_LIT("op.kt.Other"), other,
                                        KC_REGISTER_OVERRIDE));
  kc_object_release(KC_OBJECT(other));

  /* The op reset alone: every instance is deleted now. */
  KC_CHECK_INT(kt_seen.deletes, 0);
  kc_op_registry_reset();
  KC_CHECK_INT(kt_seen.deletes, 2);
  kc_func* found = NULL;
  KC_CHECK_CODE(kc_func_registry_lookup(KC_SV_LIT("op.kt.Fill"), &found),
                KC_NOT_FOUND, "op.kt.Fill");
  KC_CHECK_OK(kc_func_registry_lookup(KC_SV_LIT("op.kt.Other"), &found));
  KC_CHECK(found == other);
  const kc_op* op = NULL;
  KC_CHECK_CODE(kc_op_registry_lookup(KC_SV_LIT("kt.Fill"), &op), KC_NOT_FOUND,
                "kt.Fill");
  /* The function kept from before fails cleanly, naming the op, and
   * constructs nothing. */
  KC_CHECK_CODE(kt_call_func(f, in, &ret), KC_FAILED_PRECONDITION,
                "calling op 'kt.Fill': op 'kt.Fill' was removed by "
                "kc_op_registry_reset");
  KC_CHECK(ret.type_index == KC_TYPE_NONE);
  KC_CHECK_INT(kt_seen.creates, 2);
  kc_object_release(KC_OBJECT(f));
  kt_release(in);
}

KC_TEST(op_call_outputs_reuse_memory_through_the_cache) {
  /* Outputs of calls without an allocator come from the caching host
   * allocator: a released output's memory is the next call's. */
  setenv("KCALL_HOST_CACHE_MB", "64", 1); /* on in sanitizer builds too */
  kt_register_add();
  static const int64_t shape[1] = {1 << 16};
  kc_tensor* in[2] = {kt_tensor(kt_f32, shape, 1, NULL),
                      kt_tensor(kt_f32, shape, 1, NULL)};
  const DLTensor* dls[2] = {kt_dl(in[0]), kt_dl(in[1])};
  ((float*)dls[0]->data)[5] = 2.0f;
  ((float*)dls[1]->data)[5] = 3.0f;
  void* first = NULL;
  for (int i = 0; i < 3; ++i) {
    kc_tensor* out = NULL;
    int32_t count = 0;
    KC_CHECK_OK(kc_op_call(kt_op("kt.Add"), dls, 2, NULL, 0, NULL, &out, 1,
                           &count));
    KC_CHECK_INT(count, 1);
    void* data = kt_dl(out)->data;
    KC_CHECK(((float*)data)[5] == 5.0f);
    if (i == 0) first = data;
    KC_CHECK(data == first);
    kc_object_release(KC_OBJECT(out));
  }
  /* A tiny output shares one block with its tensor object, aligned. */
  static const int64_t one[1] = {1};
  kc_tensor* small[2] = {kt_tensor(kt_f32, one, 1, NULL),
                         kt_tensor(kt_f32, one, 1, NULL)};
  const DLTensor* sdls[2] = {kt_dl(small[0]), kt_dl(small[1])};
  kc_tensor* out = NULL;
  int32_t count = 0;
  KC_CHECK_OK(kc_op_call(kt_op("kt.Add"), sdls, 2, NULL, 0, NULL, &out, 1,
                         &count));
  KC_CHECK(((uintptr_t)kt_dl(out)->data & (KC_TENSOR_ALIGNMENT - 1)) == 0);
  KC_CHECK(((float*)kt_dl(out)->data)[0] == 0.0f);
  kc_object_release(KC_OBJECT(out));
  kc_allocator_caching_trim();
  kt_release(small[0]);
  kt_release(small[1]);
  kt_release(in[0]);
  kt_release(in[1]);
}
