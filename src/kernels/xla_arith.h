/* The arithmetic of XLA:CPU that the kernels of several instructions
 * compute alike, written once here.
 *
 * maximum and minimum, in every kernel that computes one (element-wise,
 * clamp, reduce, reduce-window, scatter, select-and-scatter, f16 and bf16
 * through f32): a NaN operand gives NaN
 * (the first operand's when both are); otherwise the larger (smaller)
 * operand, -0 ordered below +0, so that maximum(+0, -0) = +0 and
 * minimum(+0, -0) = -0 in either order, as IEEE 754-2019's maximum and
 * minimum, which XLA lowers to, define them. Integers compare as usual.
 * C, and CUDA C++ for the functions; never installed. */
#ifndef KCALL_KERNELS_XLA_ARITH_H_
#define KCALL_KERNELS_XLA_ARITH_H_

#include <math.h>

/* Host and device alike (nvcc compiles this header for the CUDA kernels). */
#ifdef __CUDACC__
#define KC__XLA_FN __host__ __device__ static inline
#else
#define KC__XLA_FN static inline
#endif

#define KC__DEFINE_FMINMAX(sfx, ctype)                                                \
  KC__XLA_FN ctype kc__fmax_##sfx(ctype a, ctype b) {                                 \
    if (a != a) return a;                                                             \
    if (b != b) return b;                                                             \
    if (a == b) return signbit(a) ? b : a; /* equal: only the zeros' signs differ */ \
    return a > b ? a : b;                                                             \
  }                                                                                   \
  KC__XLA_FN ctype kc__fmin_##sfx(ctype a, ctype b) {                                 \
    if (a != a) return a;                                                             \
    if (b != b) return b;                                                             \
    if (a == b) return signbit(a) ? a : b;                                            \
    return a < b ? a : b;                                                             \
  }
KC__DEFINE_FMINMAX(f32, float)
KC__DEFINE_FMINMAX(f64, double)
#undef KC__DEFINE_FMINMAX

/* maximum(a, b) and minimum(a, b) of any real element type. */
#define KC__XLA_MAX(a, b)                                          \
  _Generic((a), float: kc__fmax_f32((float)(a), (float)(b)),      \
           double: kc__fmax_f64((double)(a), (double)(b)),        \
           default: ((a) > (b) ? (a) : (b)))
#define KC__XLA_MIN(a, b)                                          \
  _Generic((a), float: kc__fmin_f32((float)(a), (float)(b)),      \
           double: kc__fmin_f64((double)(a), (double)(b)),        \
           default: ((a) < (b) ? (a) : (b)))

/* a + b and a * b of the element type `ctype` of DLPack type code
 * `code`: floats as C computes them, integers wrapping around as XLA's do
 * (through uint64_t: a signed overflow would be undefined). */
#define KC__XLA_ADD(code, ctype, a, b)                                \
  ((code) == kDLFloat ? (ctype)((a) + (b))                            \
                      : (ctype)((uint64_t)(a) + (uint64_t)(b)))
#define KC__XLA_MUL(code, ctype, a, b)                                \
  ((code) == kDLFloat ? (ctype)((a) * (b))                            \
                      : (ctype)((uint64_t)(a) * (uint64_t)(b)))

#endif /* KCALL_KERNELS_XLA_ARITH_H_ */
