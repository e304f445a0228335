/* The baseline build of the vector kernels (vmath_impl.h) and the choice
 * between the builds. */
#include "kernels/vmath.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#define KC__VM_SQRT(v) ((kc__vf)_mm_sqrt_ps((__m128)(v)))
#define KC__VM_ALL(m) (_mm_movemask_ps((__m128)(m)) == 0xf)
#else
static inline void kc__vm_sqrt_lanes(float* v, int lanes) {
  for (int i = 0; i < lanes; ++i) v[i] = sqrtf(v[i]);
}
#define KC__VM_SQRT(v) \
  __extension__({ kc__vf s_ = (v); float l_[KC__VW]; memcpy(l_, &s_, sizeof l_); \
     kc__vm_sqrt_lanes(l_, KC__VW); memcpy(&s_, l_, sizeof l_); s_; })
#endif

#define KC__VW 4
#define KC__VM_ENTRY kc__vmath_f32_base
#define KC__VM_FMA(a, b, c) ((a) * (b) + (c))
#include "kernels/vmath_impl.h"

int kc__vmath_levels(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
    return avx512 ? 3 : 2;
  }
#endif
  return 1;
}

void kc__vmath_f32_at(int level, kc__vmath_fn fn, const float* x, float* y, int64_t n) {
#if defined(__x86_64__)
  if (level >= 2) {
    kc__vmath_f32_avx512(fn, x, y, n);
    return;
  }
  if (level >= 1) {
    kc__vmath_f32_avx2(fn, x, y, n);
    return;
  }
#else
  (void)level;
#endif
  kc__vmath_f32_base(fn, x, y, n);
}

void kc__vmath_f32(kc__vmath_fn fn, const float* x, float* y, int64_t n) {
  kc__vmath_f32_at(kc__vmath_levels() - 1, fn, x, y, n);
}
