/* The AVX-512 build of the vector kernels (vmath_impl.h): 16 lanes, on
 * x86-64 only; vmath.c calls it when the processor has AVX-512 F and DQ
 * (and AVX2 and FMA). The same body and coefficients as the other builds,
 * so the same bounds (tests/test_hlo_math_ulp.c checks every build). The
 * target is set for this file's functions alone. */
#include "kernels/vmath.h"

#if defined(__x86_64__)

#include <string.h>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512dq,avx2,fma"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx2,fma")
#endif

#include <immintrin.h>

#define KC__VW 16
#define KC__VM_ENTRY kc__vmath_f32_avx512
#define KC__VM_FMA(a, b, c) ((kc__vf)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define KC__VM_SQRT(v) ((kc__vf)_mm512_sqrt_ps((__m512)(v)))
/* The lane mask (all ones or zero) as a mask register: its sign bits. */
#define KC__VM_BLEND(m, a, b) \
  ((kc__vf)_mm512_mask_blend_ps(_mm512_movepi32_mask((__m512i)(m)), (__m512)(b), (__m512)(a)))
#define KC__VM_MIN(a, b) ((kc__vf)_mm512_min_ps((__m512)(a), (__m512)(b)))
#define KC__VM_MAX(a, b) ((kc__vf)_mm512_max_ps((__m512)(a), (__m512)(b)))
/* The table's first 4 entries in each 128-bit lane, permuted in lane. */
#define KC__VM_PERM4(tab, i) \
  ((kc__vf)_mm512_permutevar_ps(_mm512_broadcast_f32x4(_mm_loadu_ps(tab)), (__m512i)(i)))
#define KC__VM_ALL(m) (_mm512_movepi32_mask((__m512i)(m)) == 0xffff)
#include "kernels/vmath_impl.h"

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif /* x86-64; elsewhere vmath.c never calls this build */
