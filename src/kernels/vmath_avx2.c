/* The AVX2 + FMA build of the vector kernels (vmath_impl.h), on x86-64
 * only; vmath.c calls it when the processor has both. The target is set
 * for this file's functions alone, so the rest of the library keeps the
 * baseline. */
#include "kernels/vmath.h"

#if defined(__x86_64__)

#include <string.h>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif

#include <immintrin.h>

#define KC__VW 8
#define KC__VM_ENTRY kc__vmath_f32_avx2
#define KC__VM_FMA(a, b, c) ((kc__vf)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define KC__VM_SQRT(v) ((kc__vf)_mm256_sqrt_ps((__m256)(v)))
#define KC__VM_BLEND(m, a, b) ((kc__vf)_mm256_blendv_ps((__m256)(b), (__m256)(a), (__m256)(m)))
#define KC__VM_MIN(a, b) ((kc__vf)_mm256_min_ps((__m256)(a), (__m256)(b)))
#define KC__VM_MAX(a, b) ((kc__vf)_mm256_max_ps((__m256)(a), (__m256)(b)))
#define KC__VM_PERM4(tab, i) ((kc__vf)_mm256_permutevar_ps(_mm256_loadu_ps(tab), (__m256i)(i)))
#define KC__VM_ALL(m) (_mm256_movemask_ps((__m256)(m)) == 0xff)
#include "kernels/vmath_impl.h"

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif /* x86-64; elsewhere vmath.c never calls this build */
