/* Row folds on vectors (reduce.h). GCC's and clang's vector extensions:
 * SIMD on any target, without -ffast-math. */
#include "kernels/reduce.h"

#include <math.h>
#include <string.h>

#include "kernels/xla_arith.h"

/* Everything here is on 16-byte vectors (SSE2, NEON), the width every
 * target of the baseline build has: a wider vector type the target lacks
 * is split by the compiler, which then keeps the accumulators in memory. */
#define KC__VEC_TYPES(sfx, ctype, itype)                                 \
  typedef ctype kc__v_##sfx __attribute__((vector_size(16)));            \
  typedef itype kc__vi_##sfx __attribute__((vector_size(16)));
KC__VEC_TYPES(f32, float, int32_t)
KC__VEC_TYPES(f64, double, int64_t)
#undef KC__VEC_TYPES

/* Sums through eight independent vector accumulators, 8 x (16 / size)
 * elements a step: partial sum j holds the elements whose index is j
 * modulo that step, as XLA:CPU's four vectors of eight f32 (or four f64)
 * do; the partial sums then add pairwise into two vectors and those lane
 * by lane in order, as its tree does. `kc__acc_*` adds a row into a row
 * of the result. */
#define KC__VEC_SUM(sfx, ctype)                                                  \
  ctype kc__sum_##sfx(ctype acc, const ctype* x, int64_t n) {                    \
    enum { L = 16 / sizeof(ctype), STEP = 8 * L };                               \
    int64_t i = 0;                                                               \
    if (n >= STEP) {                                                             \
      kc__v_##sfx a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0},    \
                  a6 = {0}, a7 = {0}, v;                                         \
      for (; i + STEP <= n; i += STEP) {                                         \
        memcpy(&v, x + i, sizeof v);                                             \
        a0 += v;                                                                 \
        memcpy(&v, x + i + L, sizeof v);                                         \
        a1 += v;                                                                 \
        memcpy(&v, x + i + 2 * L, sizeof v);                                     \
        a2 += v;                                                                 \
        memcpy(&v, x + i + 3 * L, sizeof v);                                     \
        a3 += v;                                                                 \
        memcpy(&v, x + i + 4 * L, sizeof v);                                     \
        a4 += v;                                                                 \
        memcpy(&v, x + i + 5 * L, sizeof v);                                     \
        a5 += v;                                                                 \
        memcpy(&v, x + i + 6 * L, sizeof v);                                     \
        a6 += v;                                                                 \
        memcpy(&v, x + i + 7 * L, sizeof v);                                     \
        a7 += v;                                                                 \
      }                                                                          \
      kc__v_##sfx lo = (a0 + a2) + (a4 + a6), hi = (a1 + a3) + (a5 + a7);        \
      ctype s = 0;                                                               \
      for (int k = 0; k < L; ++k) s += lo[k];                                    \
      for (int k = 0; k < L; ++k) s += hi[k];                                    \
      acc += s;                                                                  \
    }                                                                            \
    for (; i < n; ++i) acc += x[i];                                              \
    return acc;                                                                  \
  }                                                                              \
  void kc__acc_##sfx(ctype* r, const ctype* x, int64_t n) {                      \
    enum { L = 16 / sizeof(ctype) };                                             \
    int64_t i = 0;                                                               \
    for (; i + 2 * L <= n; i += 2 * L) {                                         \
      kc__v_##sfx a, b, c, d;                                                    \
      memcpy(&a, r + i, sizeof a);                                               \
      memcpy(&b, x + i, sizeof b);                                               \
      memcpy(&c, r + i + L, sizeof c);                                           \
      memcpy(&d, x + i + L, sizeof d);                                           \
      a += b;                                                                    \
      c += d;                                                                    \
      memcpy(r + i, &a, sizeof a);                                               \
      memcpy(r + i + L, &c, sizeof c);                                           \
    }                                                                            \
    for (; i < n; ++i) r[i] += x[i];                                             \
  }
KC__VEC_SUM(f32, float)
KC__VEC_SUM(f64, double)
#undef KC__VEC_SUM

/* f32 and f64 maximum and minimum folds in vectors, as XLA's: a NaN
 * anywhere gives NaN. A lane takes the element when it compares greater
 * (smaller), and on a tie the AND (OR) of the two's bits, which is +0
 * (-0) for a +0 and a -0 and either for equal others; NaNs are noted on
 * the side. Four vectors a step, independent until the end: that rule
 * makes the result the same in any order. */
#define KC__VEC_MINMAX(sfx, ctype, itype)                                         \
  static inline kc__v_##sfx kc__vmax_##sfx(kc__v_##sfx m, kc__v_##sfx v) {        \
    kc__vi_##sfx take = v > m, tie = v == m, vi = (kc__vi_##sfx)v;                \
    return (kc__v_##sfx)(((vi & take) | ((kc__vi_##sfx)m & ~take)) & (vi | ~tie)); \
  }                                                                               \
  static inline kc__v_##sfx kc__vmin_##sfx(kc__v_##sfx m, kc__v_##sfx v) {        \
    kc__vi_##sfx take = v < m, tie = v == m, vi = (kc__vi_##sfx)v;                \
    return (kc__v_##sfx)((vi & take) | ((kc__vi_##sfx)m & ~take) | (vi & tie));   \
  }                                                                               \
  ctype kc__minmax_##sfx(ctype acc, const ctype* x, int64_t n, bool is_max) {     \
    enum { L = 16 / sizeof(ctype), STEP = 4 * L };                                \
    int64_t i = 0;                                                                \
    bool nan = acc != acc;                                                        \
    if (n >= STEP) {                                                              \
      kc__v_##sfx m0, m1, m2, m3, v0, v1, v2, v3;                                 \
      memcpy(&m0, x, sizeof m0);                                                  \
      memcpy(&m1, x + L, sizeof m1);                                              \
      memcpy(&m2, x + 2 * L, sizeof m2);                                          \
      memcpy(&m3, x + 3 * L, sizeof m3);                                          \
      kc__vi_##sfx seen = (m0 != m0) | (m1 != m1) | (m2 != m2) | (m3 != m3);      \
      for (i = STEP; i + STEP <= n; i += STEP) {                                  \
        memcpy(&v0, x + i, sizeof v0);                                            \
        memcpy(&v1, x + i + L, sizeof v1);                                        \
        memcpy(&v2, x + i + 2 * L, sizeof v2);                                    \
        memcpy(&v3, x + i + 3 * L, sizeof v3);                                    \
        if (is_max) {                                                             \
          m0 = kc__vmax_##sfx(m0, v0);                                            \
          m1 = kc__vmax_##sfx(m1, v1);                                            \
          m2 = kc__vmax_##sfx(m2, v2);                                            \
          m3 = kc__vmax_##sfx(m3, v3);                                            \
        } else {                                                                  \
          m0 = kc__vmin_##sfx(m0, v0);                                            \
          m1 = kc__vmin_##sfx(m1, v1);                                            \
          m2 = kc__vmin_##sfx(m2, v2);                                            \
          m3 = kc__vmin_##sfx(m3, v3);                                            \
        }                                                                         \
        seen |= (v0 != v0) | (v1 != v1) | (v2 != v2) | (v3 != v3);                \
      }                                                                           \
      kc__v_##sfx ms[4] = {m0, m1, m2, m3};                                       \
      for (int q = 0; q < 4; ++q) {                                               \
        for (int k = 0; k < L; ++k) {                                             \
          nan = nan || seen[k] != 0;                                              \
          ctype e = ms[q][k];                                                     \
          acc = is_max ? kc__fmax_##sfx(acc, e) : kc__fmin_##sfx(acc, e);         \
        }                                                                         \
      }                                                                           \
    }                                                                             \
    for (; i < n; ++i) {                                                          \
      nan = nan || x[i] != x[i];                                                  \
      acc = is_max ? kc__fmax_##sfx(acc, x[i]) : kc__fmin_##sfx(acc, x[i]);       \
    }                                                                             \
    return nan ? (ctype)NAN : acc;                                                \
  }
KC__VEC_MINMAX(f32, float, int32_t)
KC__VEC_MINMAX(f64, double, int64_t)
#undef KC__VEC_MINMAX

#if defined(__SSE2__)
#include <emmintrin.h>
/* maxps(v, m) keeps m where v is NaN. */
#define KC__MAX_RELAXED(m, v) ((kc__v_f32)_mm_max_ps((__m128)(v), (__m128)(m)))
#else
#define KC__MAX_RELAXED(m, v) \
  ((kc__v_f32)(((kc__vi_f32)(v) & ((v) > (m))) | ((kc__vi_f32)(m) & ~((v) > (m)))))
#endif

float kc__max_f32_relaxed(const float* x, int64_t n, bool* saw_nan) {
  float m = -INFINITY;
  int64_t i = 0;
  kc__vi_f32 seen = {0, 0, 0, 0};
  if (n >= 16) {
    kc__v_f32 m0 = {m, m, m, m}, m1 = m0, m2 = m0, m3 = m0, v0, v1, v2, v3;
    for (; i + 16 <= n; i += 16) {
      memcpy(&v0, x + i, sizeof v0);
      memcpy(&v1, x + i + 4, sizeof v1);
      memcpy(&v2, x + i + 8, sizeof v2);
      memcpy(&v3, x + i + 12, sizeof v3);
      m0 = KC__MAX_RELAXED(m0, v0);
      m1 = KC__MAX_RELAXED(m1, v1);
      m2 = KC__MAX_RELAXED(m2, v2);
      m3 = KC__MAX_RELAXED(m3, v3);
      if (saw_nan) seen |= (v0 != v0) | (v1 != v1) | (v2 != v2) | (v3 != v3);
    }
    m0 = KC__MAX_RELAXED(KC__MAX_RELAXED(m0, m1), KC__MAX_RELAXED(m2, m3));
    for (int k = 0; k < 4; ++k) m = m0[k] > m ? m0[k] : m;
  }
  bool nan = (seen[0] | seen[1] | seen[2] | seen[3]) != 0;
  for (; i < n; ++i) {
    m = x[i] > m ? x[i] : m;
    nan = nan || x[i] != x[i];
  }
  if (saw_nan) *saw_nan = nan;
  return m;
}
#undef KC__MAX_RELAXED

/* Elements a block of the wide sums adds in f32: 16 per lane of the four
 * vectors, so each f32 partial sum rounds at most 16 times. */
#define KC__WIDE_BLOCK 256

double kc__sum_f32_wide(const float* x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i += KC__WIDE_BLOCK) {
    s += kc__sum_f32(0, x + i, n - i < KC__WIDE_BLOCK ? n - i : KC__WIDE_BLOCK);
  }
  return s;
}

/* Products and squared deviations a block at a time into a buffer, which
 * the vector sum then folds. */
double kc__dot_f32_wide(const float* a, const float* b, int64_t n) {
  float t[KC__WIDE_BLOCK];
  double s = 0;
  for (int64_t i = 0; i < n; i += KC__WIDE_BLOCK) {
    int64_t m = n - i < KC__WIDE_BLOCK ? n - i : KC__WIDE_BLOCK;
    for (int64_t k = 0; k < m; ++k) t[k] = a[i + k] * b[i + k];
    s += kc__sum_f32(0, t, m);
  }
  return s;
}

double kc__sum_sq_dev_f32_wide(const float* x, int64_t n, float c) {
  float t[KC__WIDE_BLOCK];
  double s = 0;
  for (int64_t i = 0; i < n; i += KC__WIDE_BLOCK) {
    int64_t m = n - i < KC__WIDE_BLOCK ? n - i : KC__WIDE_BLOCK;
    for (int64_t k = 0; k < m; ++k) t[k] = (x[i + k] - c) * (x[i + k] - c);
    s += kc__sum_f32(0, t, m);
  }
  return s;
}
