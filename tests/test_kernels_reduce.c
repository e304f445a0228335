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

/* The column sums of rows: each column's f32 sum in row order (so the
 * same on every build and however the columns are split), then added into
 * its double; columns past the last whole vector block and rows of one. */
KC_TEST(kernels_reduce_acc_rows_sum_each_column_in_row_order) {
  enum { KT_STRIDE = 301, KT_ROWS = 17 };
  static float x[KT_STRIDE * KT_ROWS];
  uint32_t seed = 777;
  for (int i = 0; i < KT_STRIDE * KT_ROWS; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = ldexpf((float)(seed >> 8) / 16777216.0f - 0.5f, (int)(seed % 13) - 6);
  }
  static const int64_t widths[] = {0, 1, 7, 31, 32, 33, 64, 100, 290};
  static const int64_t rows[] = {1, 2, 16, 17};
  int levels = kc__vmath_levels();
  for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; ++wi) {
    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ++ri) {
      int64_t n = widths[wi], r = rows[ri], c0 = 3; /* an odd first column */
      for (int level = 0; level < levels; ++level) {
        double acc[KT_STRIDE];
        for (int64_t i = 0; i < n; ++i) acc[i] = 0.5 * (double)i;
        kc__acc_rows_f32_wide_at(level, acc, x + c0, KT_STRIDE, r, n);
        for (int64_t i = 0; i < n; ++i) {
          float s = x[c0 + i];
          for (int64_t q = 1; q < r; ++q) s += x[q * KT_STRIDE + c0 + i];
          if (acc[i] != 0.5 * (double)i + (double)s) {
            kt__fail(__FILE__, __LINE__,
                     "width %lld rows %lld build %d column %lld: %a, expected %a", (long long)n,
                     (long long)r, level, (long long)i, acc[i], 0.5 * (double)i + (double)s);
          }
        }
      }
    }
  }
}
