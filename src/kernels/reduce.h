/* Row folds on vectors: sums, maxima and minima of a contiguous row of f32
 * or f64, the building blocks of the program runtime's reduce instruction
 * and of the built-in ops' reductions, softmax, norms and losses. Never
 * installed.
 *
 * The `kc__sum_*`, `kc__acc_*` and `kc__minmax_*` folds keep XLA:CPU's
 * arithmetic: the sum in the element type through independent vector
 * accumulators (the order of the additions differs from a sequential
 * loop's in the last bits), maximum and minimum as kernels/xla_arith.h
 * defines them (NaN anywhere gives NaN; +0 above -0). The `_wide` forms
 * return double: short blocks summed in f32 vectors, the blocks added in
 * double, so that a long f32 row loses no more than a block's rounding. */
#ifndef KCALL_KERNELS_REDUCE_H_
#define KCALL_KERNELS_REDUCE_H_

#include <stdbool.h>
#include <stdint.h>

/* acc + x[0] + ... + x[n - 1]. */
float kc__sum_f32(float acc, const float* x, int64_t n);
double kc__sum_f64(double acc, const double* x, int64_t n);

/* r[i] += x[i] for i < n. */
void kc__acc_f32(float* r, const float* x, int64_t n);
void kc__acc_f64(double* r, const double* x, int64_t n);

/* acc[i] += x[i] + x[stride + i] + ... + x[(rows - 1) stride + i] for
 * i < n: the rows added in f32 in row order (as rows calls of kc__acc_f32
 * into a copy of the first would), each column's sum then into its double.
 * A block of columns stays in registers down the rows. rows >= 1. */
void kc__acc_rows_f32_wide(double* acc, const float* x, int64_t stride, int64_t rows, int64_t n);

/* The maximum (is_max) or minimum of acc and x[0 .. n). */
float kc__minmax_f32(float acc, const float* x, int64_t n, bool is_max);
double kc__minmax_f64(double acc, const double* x, int64_t n, bool is_max);

/* The largest of x[0 .. n) that is not NaN (-inf when none is): one max
 * instruction a vector, zeros of either sign taken as equal. `saw_nan`
 * (NULL: not asked) tells whether x holds a NaN; a softmax's shift needs
 * not ask, its result being NaN anyway. */
float kc__max_f32_relaxed(const float* x, int64_t n, bool* saw_nan);

/* sum x[i], sum a[i] b[i] and sum (x[i] - c)^2 over i < n, in double. */
double kc__sum_f32_wide(const float* x, int64_t n);
double kc__dot_f32_wide(const float* a, const float* b, int64_t n);
double kc__sum_sq_dev_f32_wide(const float* x, int64_t n, float c);

/* kc__sum_f32, kc__sum_f32_wide and kc__acc_rows_f32_wide on one build,
 * for the tests that compare them: `level` 0 the 16-byte one, 1 the AVX2
 * one; it must be below kc__vmath_levels() (vmath.h), and is 0 off
 * x86-64. The functions above choose the level themselves. The two builds
 * of kc__sum_f32, and those of kc__acc_rows_f32_wide, give the same
 * result to the bit. */
float kc__sum_f32_at(int level, float acc, const float* x, int64_t n);
double kc__sum_f32_wide_at(int level, const float* x, int64_t n);
void kc__acc_rows_f32_wide_at(int level, double* acc, const float* x, int64_t stride, int64_t rows,
                              int64_t n);

#endif /* KCALL_KERNELS_REDUCE_H_ */
