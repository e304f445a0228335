/* The row folds of src/kernels/reduce.h on each build the processor runs
 * (16-byte vectors, and AVX2 where it has it): the f32 sum the same to
 * the bit on both (XLA:CPU's order of additions, which HLO reductions
 * keep), and the wide sum within a few roundings of the sum in long
 * double, for lengths around every vector and block boundary. */
#include <math.h>
#include <stdlib.h>

#include "kernels/reduce.h"
#include "kernels/vmath.h"
#include "test.h"

KC_TEST(kernels_reduce_sum_builds_agree_to_the_bit) {
  enum { KT_MAX = 1100 };
  static float x[KT_MAX];
  uint32_t seed = 12345;
  for (int i = 0; i < KT_MAX; ++i) {
    seed = seed * 1664525u + 1013904223u;
    /* Values of mixed magnitudes and signs, so that the order of the
     * additions shows in the last bits. */
    x[i] = ldexpf((float)(seed >> 8) / 16777216.0f - 0.5f, (int)(seed % 17) - 8);
  }
  int levels = kc__vmath_levels();
  for (int64_t n = 0; n <= KT_MAX; n += n < 80 ? 1 : 37) {
    long double exact = 0;
    double magnitude = 0;
    for (int64_t i = 0; i < n; ++i) {
      exact += x[i];
      magnitude += fabs((double)x[i]);
    }
    float base = kc__sum_f32_at(0, 0.25f, x, n);
    double wide0 = kc__sum_f32_wide_at(0, x, n);
    for (int level = 0; level < levels; ++level) {
      float s = kc__sum_f32_at(level, 0.25f, x, n);
      if (s != base) {
        kt__fail(__FILE__, __LINE__, "n %lld: build %d sums to %a, build 0 to %a", (long long)n,
                 level, (double)s, (double)base);
      }
      double w = kc__sum_f32_wide_at(level, x, n);
      /* A block of at most 256 elements rounds in f32 once an element. */
      double bound = 256 * 6e-8 * magnitude + 1e-12;
      if (fabs(w - (double)exact) > bound) {
        kt__fail(__FILE__, __LINE__, "n %lld: wide sum on build %d is %.17g, exactly %.17Lg",
                 (long long)n, level, w, exact);
      }
      KC_CHECK(fabs(w - wide0) <= bound);
    }
    KC_CHECK(kc__sum_f32(0.25f, x, n) == base);
  }
}
