/* Row folds on vectors (reduce.h). GCC's and clang's vector extensions:
 * SIMD on any target, without -ffast-math. */
#include "kernels/reduce.h"

#include <math.h>
#include <string.h>

#include "kernels/vmath.h"
#include "kernels/xla_arith.h"

/* The portable folds are on 16-byte vectors (SSE2, NEON), the width every
 * target of the baseline build has: a wider vector type the target lacks
 * is split by the compiler, which then keeps the accumulators in memory.
 * The f32 folds the built-in ops lean on also have AVX2 builds, below,
 * each chosen at run time. */
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
  static ctype kc__sum16_##sfx(ctype acc, const ctype* x, int64_t n) {           \
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
  static void kc__acc16_##sfx(ctype* r, const ctype* x, int64_t n) {            \
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

/* AVX2 builds of the f32 sum, the row sum and the relaxed maximum, for
 * the processors that have it (twice the lanes an instruction): a target
 * attribute on each function (not target_clones, whose resolver runs
 * before ThreadSanitizer's runtime has started), called when
 * kc__vmath_levels() says so. The sum is the same arithmetic as the
 * 16-byte one: its four 32-byte accumulators are the eight 16-byte ones
 * two by two, and (A0 + A1) + (A2 + A3) holds the two vectors the
 * 16-byte sum adds lane by lane, so the result is the same to the bit. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KC__REDUCE_AVX2 1
__attribute__((target("avx2"))) static float kc__sum32_f32(float acc, const float* x,
                                                           int64_t n) {
  int64_t i = 0;
  if (n >= 32) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (; i + 32 <= n; i += 32) {
      a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
      a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
      a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
      a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    float s = 0;
    for (int k = 0; k < 8; ++k) s += lanes[k];
    acc += s;
  }
  for (; i < n; ++i) acc += x[i];
  return acc;
}

__attribute__((target("avx2"))) static void kc__acc32_f32(float* r, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 a = _mm256_add_ps(_mm256_loadu_ps(r + i), _mm256_loadu_ps(x + i));
    __m256 c = _mm256_add_ps(_mm256_loadu_ps(r + i + 8), _mm256_loadu_ps(x + i + 8));
    _mm256_storeu_ps(r + i, a);
    _mm256_storeu_ps(r + i + 8, c);
  }
  for (; i < n; ++i) r[i] += x[i];
}
/* kc__acc_rows_f32_wide on AVX2: 32 columns at a time in four vectors
 * down the rows, then widened into the double sums. */
__attribute__((target("avx2"))) static int64_t kc__acc_rows32_f32(double* acc, const float* x,
                                                                  int64_t stride, int64_t rows,
                                                                  int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const float* c = x + i;
    __m256 a0 = _mm256_loadu_ps(c), a1 = _mm256_loadu_ps(c + 8);
    __m256 a2 = _mm256_loadu_ps(c + 16), a3 = _mm256_loadu_ps(c + 24);
    for (int64_t q = 1; q < rows; ++q) {
      c += stride;
      a0 = _mm256_add_ps(a0, _mm256_loadu_ps(c));
      a1 = _mm256_add_ps(a1, _mm256_loadu_ps(c + 8));
      a2 = _mm256_add_ps(a2, _mm256_loadu_ps(c + 16));
      a3 = _mm256_add_ps(a3, _mm256_loadu_ps(c + 24));
    }
    __m256 v[4] = {a0, a1, a2, a3};
    for (int k = 0; k < 4; ++k) {
      double* d = acc + i + 8 * k;
      __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v[k]));
      __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v[k], 1));
      _mm256_storeu_pd(d, _mm256_add_pd(_mm256_loadu_pd(d), lo));
      _mm256_storeu_pd(d + 4, _mm256_add_pd(_mm256_loadu_pd(d + 4), hi));
    }
  }
  return i;
}
#endif

static bool kc__reduce_avx2(void) {
#if defined(KC__REDUCE_AVX2)
  return kc__vmath_levels() > 1;
#else
  return false;
#endif
}

float kc__sum_f32_at(int level, float acc, const float* x, int64_t n) {
#if defined(KC__REDUCE_AVX2)
  if (level >= 1 && n >= 32) return kc__sum32_f32(acc, x, n);
#else
  (void)level;
#endif
  return kc__sum16_f32(acc, x, n);
}

float kc__sum_f32(float acc, const float* x, int64_t n) {
  return kc__sum_f32_at(kc__reduce_avx2() ? 1 : 0, acc, x, n);
}

double kc__sum_f64(double acc, const double* x, int64_t n) { return kc__sum16_f64(acc, x, n); }

void kc__acc_f32(float* r, const float* x, int64_t n) {
#if defined(KC__REDUCE_AVX2)
  if (n >= 16 && kc__reduce_avx2()) {
    kc__acc32_f32(r, x, n);
    return;
  }
#endif
  kc__acc16_f32(r, x, n);
}

void kc__acc_f64(double* r, const double* x, int64_t n) { kc__acc16_f64(r, x, n); }

void kc__acc_rows_f32_wide_at(int level, double* acc, const float* x, int64_t stride, int64_t rows,
                              int64_t n) {
  int64_t i = 0;
#if defined(KC__REDUCE_AVX2)
  if (level >= 1) i = kc__acc_rows32_f32(acc, x, stride, rows, n);
#else
  (void)level;
#endif
  /* The rest a block of columns at a time through a row of f32 sums. */
  enum { B = 256 };
  float part[B];
  for (; i < n; i += B) {
    int64_t m = n - i < B ? n - i : B;
    memcpy(part, x + i, (size_t)m * sizeof(float));
    for (int64_t q = 1; q < rows; ++q) kc__acc16_f32(part, x + q * stride + i, m);
    for (int64_t k = 0; k < m; ++k) acc[i + k] += (double)part[k];
  }
}

void kc__acc_rows_f32_wide(double* acc, const float* x, int64_t stride, int64_t rows, int64_t n) {
  kc__acc_rows_f32_wide_at(kc__reduce_avx2() ? 1 : 0, acc, x, stride, rows, n);
}

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

#if defined(KC__REDUCE_AVX2)
__attribute__((target("avx2"))) static float kc__max32_f32_relaxed(const float* x, int64_t n,
                                                                   bool* saw_nan) {
  float m = -INFINITY;
  int64_t i = 0;
  bool nan = false;
  if (n >= 32) {
    __m256 m0 = _mm256_set1_ps(m), m1 = m0, m2 = m0, m3 = m0, seen = _mm256_setzero_ps();
    for (; i + 32 <= n; i += 32) {
      __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
      __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
      /* maxps(v, m) keeps m where v is NaN. */
      m0 = _mm256_max_ps(v0, m0);
      m1 = _mm256_max_ps(v1, m1);
      m2 = _mm256_max_ps(v2, m2);
      m3 = _mm256_max_ps(v3, m3);
      if (saw_nan) {
        __m256 u0 = _mm256_cmp_ps(v0, v1, _CMP_UNORD_Q), u1 = _mm256_cmp_ps(v2, v3, _CMP_UNORD_Q);
        seen = _mm256_or_ps(seen, _mm256_or_ps(u0, u1));
      }
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, _mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3)));
    for (int k = 0; k < 8; ++k) m = lanes[k] > m ? lanes[k] : m;
    nan = _mm256_movemask_ps(seen) != 0;
  }
  for (; i < n; ++i) {
    m = x[i] > m ? x[i] : m;
    nan = nan || x[i] != x[i];
  }
  if (saw_nan) *saw_nan = nan;
  return m;
}
#endif

float kc__max_f32_relaxed(const float* x, int64_t n, bool* saw_nan) {
#if defined(KC__REDUCE_AVX2)
  if (n >= 32 && kc__reduce_avx2()) return kc__max32_f32_relaxed(x, n, saw_nan);
#endif
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

#if defined(KC__REDUCE_AVX2)
/* The AVX2 wide folds: each block's eight f32 lane sums widened into two
 * double vectors, which add up across blocks; the lanes meet once, at
 * the end, rather than one by one after every block. The term of element
 * k: x[k] (KC__WIDE_SUM), x[k] y[k] (KC__WIDE_DOT) or (x[k] - c)^2
 * (KC__WIDE_SQ_DEV), each rounded to f32 as the 16-byte forms' buffer
 * holds it. */
enum { KC__WIDE_SUM, KC__WIDE_DOT, KC__WIDE_SQ_DEV };

__attribute__((target("avx2"))) static inline __m256 kc__wide_term(int form, const float* x,
                                                                  const float* y, __m256 c) {
  __m256 v = _mm256_loadu_ps(x);
  if (form == KC__WIDE_DOT) return _mm256_mul_ps(v, _mm256_loadu_ps(y));
  if (form == KC__WIDE_SQ_DEV) {
    v = _mm256_sub_ps(v, c);
    return _mm256_mul_ps(v, v);
  }
  return v;
}

__attribute__((target("avx2"))) static inline double kc__wide32(int form, const float* x,
                                                               const float* y, float c,
                                                               int64_t n) {
  __m256d d0 = _mm256_setzero_pd(), d1 = d0;
  __m256 cv = _mm256_set1_ps(c);
  double tail = 0;
  for (int64_t i = 0; i < n; i += KC__WIDE_BLOCK) {
    int64_t m = n - i < KC__WIDE_BLOCK ? n - i : KC__WIDE_BLOCK, k = 0;
    const float* xb = x + i;
    const float* yb = y ? y + i : NULL;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (; k + 32 <= m; k += 32) {
      a0 = _mm256_add_ps(a0, kc__wide_term(form, xb + k, yb ? yb + k : NULL, cv));
      a1 = _mm256_add_ps(a1, kc__wide_term(form, xb + k + 8, yb ? yb + k + 8 : NULL, cv));
      a2 = _mm256_add_ps(a2, kc__wide_term(form, xb + k + 16, yb ? yb + k + 16 : NULL, cv));
      a3 = _mm256_add_ps(a3, kc__wide_term(form, xb + k + 24, yb ? yb + k + 24 : NULL, cv));
    }
    __m256 v = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    d0 = _mm256_add_pd(d0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    d1 = _mm256_add_pd(d1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    float t = 0;
    for (; k < m; ++k) {
      float e = form == KC__WIDE_DOT ? xb[k] * yb[k]
                : form == KC__WIDE_SQ_DEV ? (xb[k] - c) * (xb[k] - c)
                                          : xb[k];
      t += e;
    }
    tail += t;
  }
  double lanes[4];
  _mm256_storeu_pd(lanes, _mm256_add_pd(d0, d1));
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + tail;
}

__attribute__((target("avx2"))) static double kc__sum32_f32_wide(const float* x, int64_t n) {
  return kc__wide32(KC__WIDE_SUM, x, NULL, 0, n);
}
__attribute__((target("avx2"))) static double kc__dot32_f32_wide(const float* a, const float* b,
                                                                 int64_t n) {
  return kc__wide32(KC__WIDE_DOT, a, b, 0, n);
}
__attribute__((target("avx2"))) static double kc__sq_dev32_f32_wide(const float* x, int64_t n,
                                                                    float c) {
  return kc__wide32(KC__WIDE_SQ_DEV, x, NULL, c, n);
}
#endif

double kc__sum_f32_wide_at(int level, const float* x, int64_t n) {
#if defined(KC__REDUCE_AVX2)
  if (level >= 1 && n >= 32) return kc__sum32_f32_wide(x, n);
#else
  (void)level;
#endif
  double s = 0;
  for (int64_t i = 0; i < n; i += KC__WIDE_BLOCK) {
    s += kc__sum16_f32(0, x + i, n - i < KC__WIDE_BLOCK ? n - i : KC__WIDE_BLOCK);
  }
  return s;
}

double kc__sum_f32_wide(const float* x, int64_t n) {
  return kc__sum_f32_wide_at(kc__reduce_avx2() ? 1 : 0, x, n);
}

/* Products and squared deviations a block at a time into a buffer, which
 * the vector sum then folds. */
double kc__dot_f32_wide(const float* a, const float* b, int64_t n) {
#if defined(KC__REDUCE_AVX2)
  if (n >= 32 && kc__reduce_avx2()) return kc__dot32_f32_wide(a, b, n);
#endif
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
#if defined(KC__REDUCE_AVX2)
  if (n >= 32 && kc__reduce_avx2()) return kc__sq_dev32_f32_wide(x, n, c);
#endif
  float t[KC__WIDE_BLOCK];
  double s = 0;
  for (int64_t i = 0; i < n; i += KC__WIDE_BLOCK) {
    int64_t m = n - i < KC__WIDE_BLOCK ? n - i : KC__WIDE_BLOCK;
    for (int64_t k = 0; k < m; ++k) t[k] = (x[i + k] - c) * (x[i + k] - c);
    s += kc__sum_f32(0, t, m);
  }
  return s;
}
