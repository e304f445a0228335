/* What the tests of programs built with the C builder share
 * (test_program*.c): shapes, custom-call descriptions, tensors, compiling. */
#ifndef KCALL_TESTS_KT_PROGRAM_H_
#define KCALL_TESTS_KT_PROGRAM_H_

#include <stdarg.h>
#include <stdlib.h>

#include "test.h"

static inline kc_shape* kt_array(uint8_t code, uint8_t bits, int32_t rank, ...) {
  int64_t dims[8] = {0};
  va_list ap;
  va_start(ap, rank);
  for (int32_t i = 0; i < rank; ++i) dims[i] = va_arg(ap, int64_t);
  va_end(ap);
  kc_shape* s = NULL;
  kc_status* st = kc_shape_create_array(kc_dtype_make(code, bits, 1), dims, rank, &s);
  if (st) kc_status_destroy(st);
  return s;
}

#define KT_F32(...) kt_array(kDLFloat, 32, __VA_ARGS__)

static inline kc_shape* kt_tuple(size_t n, ...) {
  const kc_shape* elems[8];
  va_list ap;
  va_start(ap, n);
  for (size_t i = 0; i < n; ++i) elems[i] = va_arg(ap, const kc_shape*);
  va_end(ap);
  kc_shape* s = NULL;
  kc_status* st = kc_shape_create_tuple(elems, n, &s);
  if (st) kc_status_destroy(st);
  return s;
}

static inline kc_custom_call_desc kt_call(const char* target, const int32_t* operands,
                                   size_t n, const kc_shape* result,
                                   int32_t api) {
  kc_custom_call_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.target = kc_sv(target);
  d.operands = operands;
  d.num_operands = n;
  d.result_shape = result;
  d.api_version = api;
  return d;
}

/* An f32 tensor of `n` elements holding base + i. */
static inline kc_tensor* kt_iota(int64_t n, float base) {
  kc_tensor* t = NULL;
  kc_status* st = kc_tensor_create(kt_alloc(), &n, 1, kc_dtype_make(kDLFloat, 32, 1),
                                   kc_device_cpu(), &t);
  if (st) {
    kc_status_destroy(st);
    return NULL;
  }
  float* d = kc_tensor_get_dltensor(t)->data;
  for (int64_t i = 0; i < n; ++i) d[i] = base + (float)i;
  return t;
}

static inline const float* kt_f32(const kc_tensor* t) {
  return kc_tensor_get_dltensor(t)->data;
}

static inline kc_status* kt_compile(kc_program* p, kc_executable** out) {
  return kc_program_compile(p, NULL, out);
}

static inline kc_execute_options kt_opts(void) {
  kc_execute_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.allocator = kt_alloc();
  return o;
}

#endif /* KCALL_TESTS_KT_PROGRAM_H_ */
