/*
 * tests/kt_ops.h — helpers shared by the op and kernel tests: tensors from
 * the test's counting allocator, op registration from spec lists, and a
 * few small kernels.
 */
#ifndef KCALL_TESTS_KT_OPS_H_
#define KCALL_TESTS_KT_OPS_H_

#include <stdio.h>
#include <string.h>

#include "test.h"

static const DLDataType kt_f32 = {kDLFloat, 32, 1};
static const DLDataType kt_f64 = {kDLFloat, 64, 1};
static const DLDataType kt_i32 = {kDLInt, 32, 1};
static const DLDataType kt_i64 = {kDLInt, 64, 1};

/* A tensor from kt_alloc() holding `data` (may be NULL: zeros). */
static inline kc_tensor* kt_tensor(DLDataType dtype, const int64_t* shape,
                                   int32_t ndim, const void* data) {
  kc_tensor* t = NULL;
  KC_CHECK_OK(
      kc_tensor_create(kt_alloc(), shape, ndim, dtype, kc_device_cpu(), &t));
  const DLTensor* dl = kc_tensor_get_dltensor(t);
  size_t bytes = (size_t)kc_dltensor_get_numel(dl) * kc_dtype_get_size(dtype);
  if (bytes) {
    if (data) {
      memcpy(dl->data, data, bytes);
    } else {
      memset(dl->data, 0, bytes);
    }
  }
  return t;
}

static inline const DLTensor* kt_dl(const kc_tensor* t) {
  return kc_tensor_get_dltensor(t);
}

static inline void kt_release(kc_tensor* t) { kc_object_release(KC_OBJECT(t)); }

/* Registers an op from NULL-terminated spec lists (any may be NULL). */
static inline void kt_register_op(const char* name, const char* const* inputs,
                                  const char* const* outputs,
                                  const char* const* attrs, kc_shape_fn fn) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create(name, &b));
  for (size_t i = 0; inputs && inputs[i]; ++i) {
    KC_CHECK_OK(kc_op_builder_add_input(b, inputs[i]));
  }
  for (size_t i = 0; outputs && outputs[i]; ++i) {
    KC_CHECK_OK(kc_op_builder_add_output(b, outputs[i]));
  }
  for (size_t i = 0; attrs && attrs[i]; ++i) {
    KC_CHECK_OK(kc_op_builder_add_attr(b, attrs[i]));
  }
  KC_CHECK_OK(kc_op_builder_set_shape_fn(b, fn));
  KC_CHECK_OK(kc_op_registry_register(b, 0));
}

#define KT_SPECS(...) ((const char* const[]){__VA_ARGS__, NULL})

static inline const kc_op* kt_op(const char* name) {
  const kc_op* op = NULL;
  KC_CHECK_OK(kc_op_registry_lookup(kc_sv(name), &op));
  return op;
}

/* Registers a CPU kernel with one type constraint (attr NULL: none). */
static inline void kt_register_kernel(const char* op,
                                      kc_kernel_create_fn create,
                                      kc_kernel_compute_fn compute,
                                      kc_deleter_fn del, const char* attr,
                                      const DLDataType* dtypes, int32_t count,
                                      int32_t priority) {
  kc_kernel_builder* b = NULL;
  KC_CHECK_OK(kc_kernel_builder_create(op, kDLCPU, create, compute, del, &b));
  if (attr) {
    KC_CHECK_OK(kc_kernel_builder_add_type_constraint(b, attr, dtypes, count));
  }
  KC_CHECK_OK(kc_kernel_builder_set_priority(b, priority));
  KC_CHECK_OK(kc_kernel_registry_register(b));
}

/* Calls `op` with options using kt_alloc(); one output expected. */
static inline kc_status* kt_call1(const kc_op* op, const kc_tensor* const* in,
                                  int32_t n, const kc_op_attr* attrs,
                                  int32_t na, kc_tensor** out) {
  const DLTensor* dls[16];
  for (int32_t i = 0; i < n; ++i) dls[i] = kt_dl(in[i]);
  kc_op_call_options opts = {sizeof opts, kt_alloc(), NULL, NULL};
  int32_t count = 0;
  *out = NULL;
  kc_status* st = kc_op_call(op, dls, n, attrs, na, &opts, out, 1, &count);
  if (!st && count != 1) {
    kt_release(*out);
    *out = NULL;
    return kc_status_create(KC_INTERNAL, "expected 1 output, got %d", count);
  }
  return st;
}

/* Runs "y = f32[4] custom-call(x)" on the host target `target` with `api`
 * (API_VERSION_...) and returns the status; on success out_y holds y for
 * x = [1, 2, 3, 4]. */
static inline kc_status* kt_run_target(const char* target, const char* api,
                                       float out_y[4]) {
  char text[512];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY main {\n  x = f32[4] parameter(0)\n"
           "  ROOT y = f32[4] custom-call(x), custom_call_target=\"%s\", "
           "api_version=%s\n}\n",
           target, api);
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  kc_status* st = kc_program_compile(p, NULL, &exe);
  kc_program_destroy(p);
  if (st) return st;
  float x[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  DLTensor in = {x, {kDLCPU, 0}, 1, kt_f32, shape, NULL, 0};
  const DLTensor* inputs[1] = {&in};
  kc_execute_options opts = {.struct_size = sizeof opts, .allocator = kt_alloc()};
  kc_tensor* out = NULL;
  st = kc_executable_execute(exe, inputs, 1, &opts, &out);
  if (!st) {
    memcpy(out_y, kt_dl(out)->data, 4 * sizeof(float));
    kt_release(out);
  }
  kc_executable_destroy(exe);
  return st;
}

/* ---- kernels
 * ----------------------------------------------------------------- */

/* z = x + y for equal shapes of f32, f64 or i32. */
static inline kc_status* kt_add_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* y = kc_kernel_ctx_get_input(ctx, 1);
  DLTensor* z = kc_kernel_ctx_get_output(ctx, 0);
  int64_t n = kc_dltensor_get_numel(z);
  if (kc_dltensor_get_numel(x) != n || kc_dltensor_get_numel(y) != n) {
    return kc_status_create(KC_UNIMPLEMENTED, "kt add: shapes differ");
  }
  if (x->dtype.code == kDLFloat && x->dtype.bits == 32) {
    for (int64_t i = 0; i < n; ++i) {
      ((float*)z->data)[i] =
          ((const float*)x->data)[i] + ((const float*)y->data)[i];
    }
  } else if (x->dtype.code == kDLFloat) {
    for (int64_t i = 0; i < n; ++i) {
      ((double*)z->data)[i] =
          ((const double*)x->data)[i] + ((const double*)y->data)[i];
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      ((int32_t*)z->data)[i] =
          ((const int32_t*)x->data)[i] + ((const int32_t*)y->data)[i];
    }
  }
  return NULL;
}

/* A shape function for two inputs of one shape. */
static inline kc_status* kt_same_shape_fn(kc_shape_ctx* ctx) {
  const kc_shape_handle* s = NULL;
  kc_status* st = kc_shape_ctx_merge(ctx, kc_shape_ctx_get_input(ctx, 0),
                                     kc_shape_ctx_get_input(ctx, 1), &s);
  if (!st) st = kc_shape_ctx_set_output(ctx, 0, s);
  return st;
}

/* Registers kt.Add(x: T, y: T) -> (z: T), T: {f32, f64, i32}, with a CPU
 * kernel for f32 and i32 only. */
static inline void kt_register_add(void) {
  kt_register_op("kt.Add", KT_SPECS("x: T", "y: T"), KT_SPECS("z: T"),
                 KT_SPECS("T: {f32, f64, i32}"), kt_same_shape_fn);
  DLDataType types[2] = {kt_f32, kt_i32};
  kt_register_kernel("kt.Add", NULL, kt_add_compute, NULL, "T", types, 2, 0);
}

/* A kernel and shape function for ops whose outputs copy their inputs,
 * one for one (a type-list op, xs: L -> ys: L). */
static inline kc_status* kt_copy_compute(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  for (int32_t i = 0; i < kc_kernel_ctx_get_input_count(ctx); ++i) {
    const DLTensor* x = kc_kernel_ctx_get_input(ctx, i);
    DLTensor* y = kc_kernel_ctx_get_output(ctx, i);
    memcpy(y->data, x->data,
           (size_t)kc_dltensor_get_numel(x) * kc_dtype_get_size(x->dtype));
  }
  return NULL;
}

static inline kc_status* kt_copy_shapes(kc_shape_ctx* ctx) {
  kc_status* st = NULL;
  for (int32_t i = 0; !st && i < kc_shape_ctx_get_output_count(ctx); ++i) {
    st = kc_shape_ctx_set_output(ctx, i, kc_shape_ctx_get_input(ctx, i));
  }
  return st;
}

#endif /* KCALL_TESTS_KT_OPS_H_ */
