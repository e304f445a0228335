/*
 * tests/kt_builtin.h — helpers of the built-in ops' tests
 * (test_builtin_*.c): random tensors, calls by name, and checks against a
 * reference computed in double.
 */
#ifndef KCALL_TESTS_KT_BUILTIN_H_
#define KCALL_TESTS_KT_BUILTIN_H_

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kcall/builtin.h"
#include "kt_ops.h"

/* Deterministic values in [-1, 1). */
static inline double kt_rand(uint32_t* s) {
  *s = *s * 1664525u + 1013904223u;
  return (double)(*s >> 8) / (double)(1u << 23) - 1.0;
}

static inline kc_tensor* kt_random(DLDataType dt, const int64_t* shape, int32_t ndim,
                                   uint32_t* seed) {
  kc_tensor* t = kt_tensor(dt, shape, ndim, NULL);
  const DLTensor* d = kt_dl(t);
  for (int64_t i = 0; i < kc_dltensor_get_numel(d); ++i) {
    double v = kt_rand(seed);
    if (dt.bits == 32) {
      ((float*)d->data)[i] = (float)v;
    } else {
      ((double*)d->data)[i] = v;
    }
  }
  return t;
}

static inline double kt_at(const DLTensor* t, int64_t i) {
  return t->dtype.bits == 32 ? (double)((const float*)t->data)[i] : ((const double*)t->data)[i];
}

/* Calls the op `name` on `n` inputs with `na` attrs; its outputs in `out`
 * (at most 2). */
static inline void kt_bi_call(const char* name, kc_tensor* const* in, int32_t n,
                              const kc_op_attr* attrs, int32_t na, kc_tensor** out, int32_t want) {
  const DLTensor* dl[6];
  for (int32_t i = 0; i < n; ++i) dl[i] = kt_dl(in[i]);
  int32_t got = 0;
  KC_CHECK_OK(kc_op_call(kt_op(name), dl, n, attrs, na, NULL, out, 2, &got));
  KC_CHECK_INT(got, want);
}

static inline kc_tensor* kt_bi_call1(const char* name, kc_tensor* a, kc_tensor* b,
                                     const kc_op_attr* attrs, int32_t na) {
  kc_tensor* in[2] = {a, b};
  kc_tensor* out[2] = {NULL, NULL};
  kt_bi_call(name, in, b ? 2 : 1, attrs, na, out, 1);
  return out[0];
}

/* <a, b> over all elements. */
static inline double kt_dot(const kc_tensor* a, const kc_tensor* b) {
  const DLTensor *x = kt_dl(a), *y = kt_dl(b);
  KC_CHECK_INT(kc_dltensor_get_numel(x), kc_dltensor_get_numel(y));
  double s = 0;
  for (int64_t i = 0; i < kc_dltensor_get_numel(x); ++i) s += kt_at(x, i) * kt_at(y, i);
  return s;
}

static inline void kt_check_close(double got, double want, double tol, const char* what) {
  if (!(fabs(got - want) <= tol * (1 + fabs(want)))) {
    kt__fail(__FILE__, __LINE__, "%s: got %.17g, want %.17g", what, got, want);
  }
}

/* got == want element by element, within tol (relative). */
static inline void kt_check_tensor(const kc_tensor* got, const double* want, int64_t n, double tol,
                                   const char* what) {
  const DLTensor* g = kt_dl(got);
  KC_CHECK_INT(kc_dltensor_get_numel(g), n);
  for (int64_t i = 0; i < n; ++i) kt_check_close(kt_at(g, i), want[i], tol, what);
}

/* Calling `name` on `in` fails with INVALID_ARGUMENT holding `needle`,
 * before any kernel reads a tensor of the wrong shape. */
static inline void kt_refused(const char* name, kc_tensor* const* in, int32_t n,
                              const kc_op_attr* attrs, int32_t na, const char* needle) {
  const DLTensor* dl[6];
  for (int32_t i = 0; i < n; ++i) dl[i] = kt_dl(in[i]);
  kc_tensor* out[3] = {NULL, NULL, NULL};
  int32_t got = 0;
  KC_CHECK_CODE(kc_op_call(kt_op(name), dl, n, attrs, na, NULL, out, 3, &got), KC_INVALID_ARGUMENT,
                name, needle);
  KC_CHECK(out[0] == NULL && out[1] == NULL && out[2] == NULL);
}

#endif /* KCALL_TESTS_KT_BUILTIN_H_ */
