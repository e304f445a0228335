/* Vector kernels of the f32 element-wise functions (exp, log, tanh, ...)
 * that the HLO instructions run on the host. Never installed.
 *
 * Each function is a polynomial approximation evaluated a vector at a
 * time, within a few units in the last place of the exact result over the
 * whole f32 range (tests/test_hlo_math_ulp.c states and checks the bound of
 * each), with the special values of the C library's functions: NaN in, NaN
 * out; exp(-inf) = 0 and exp overflow = inf; log(0) = -inf and log of a
 * negative number NaN; tanh(+-large) = +-1; -0 kept where the C functions
 * keep it; denormal arguments and results handled. Three builds of the
 * same code: a baseline one (SSE2 on x86-64, the vector unit the compiler
 * targets elsewhere) and, on x86-64, an AVX2 + FMA one and an AVX-512 (F
 * and DQ) one, the widest the processor runs chosen at run time. */
#ifndef KCALL_KERNELS_VMATH_H_
#define KCALL_KERNELS_VMATH_H_

#include <stdint.h>

/* The functions; kc__vmath_f32 takes one. */
typedef enum kc__vmath_fn {
  KC__VM_EXP,
  KC__VM_EXPM1,
  KC__VM_LOG,
  KC__VM_LOG1P,
  KC__VM_TANH,
  KC__VM_LOGISTIC, /* 1 / (1 + exp(-x)) */
  KC__VM_ERF,
  KC__VM_SQRT,  /* correctly rounded */
  KC__VM_RSQRT, /* 1 / sqrt(x), two roundings */
  KC__VM_COUNT
} kc__vmath_fn;

/* y[i] = fn(x[i]) for i < n, with the best build this processor runs.
 * x and y may be the same array; partly overlapping ones are not allowed.
 * Thread-safe. */
void kc__vmath_f32(kc__vmath_fn fn, const float* x, float* y, int64_t n);

/* How many builds this processor runs: 1 (baseline), 2 (AVX2 + FMA too)
 * or 3 (AVX-512 F and DQ too). Level l < kc__vmath_levels() of
 * kc__vmath_f32_at is the build to use; the tests check each. Other
 * kernels read "at least 2" as "AVX2 and FMA are there". */
int kc__vmath_levels(void);
void kc__vmath_f32_at(int level, kc__vmath_fn fn, const float* x, float* y, int64_t n);

/* The builds themselves (vmath_impl.h, instantiated by vmath.c,
 * vmath_avx2.c and vmath_avx512.c); the AVX2 and AVX-512 ones exist on
 * x86-64 only, where kc__vmath_f32_at calls them. */
void kc__vmath_f32_base(kc__vmath_fn fn, const float* x, float* y, int64_t n);
void kc__vmath_f32_avx2(kc__vmath_fn fn, const float* x, float* y, int64_t n);
void kc__vmath_f32_avx512(kc__vmath_fn fn, const float* x, float* y, int64_t n);

#endif /* KCALL_KERNELS_VMATH_H_ */
