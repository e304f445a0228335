/* The f16, bf16, c64 and c128 kernels that the instruction families
 * (instr_math.c, instr_select.c, instr_reduce.c) hand those element types to.
 * f16 and bf16 are computed in f32 and rounded to nearest even once per
 * instruction, as XLA:CPU does; c64 and c128 follow XLA's definitions of
 * the complex functions. Never installed. */
#ifndef KCALL_PROGRAM_INSTR_TYPES_H_
#define KCALL_PROGRAM_INSTR_TYPES_H_

#include <stdbool.h>
#include <stdint.h>

#include "kcall/program.h"

/* What a compare accepts, as a set of the outcomes of comparing two
 * values: LT is LT, LE is LT | EQ, NE is LT | GT | UNORDERED (a NaN). */
enum { KC__ORDER_LT = 1, KC__ORDER_EQ = 2, KC__ORDER_GT = 4, KC__ORDER_UNORDERED = 8 };

/* True for f16 (kDLFloat 16) and bf16 (kDLBfloat 16). */
bool kc__type_is_half(DLDataType t);
/* True for c64 and c128. */
bool kc__type_is_complex(DLDataType t);

/* ---- f16 and bf16 (instr_half.c) ----------------------------------------------------- */

/* n values widened to f32 (exactly), and f32 values rounded to nearest
 * even (overflow to infinity; a NaN stays a quiet NaN of its sign), as
 * XLA converts; with kc__f32_to_half and kc__half_to_f32 of src/kernels/half.h. */
void kc__half_widen(bool bf16, const uint16_t* a, float* out, int64_t n);
void kc__half_narrow(bool bf16, const float* a, uint16_t* out, int64_t n);

/* instr_math.c's float ops (abs .. erf, is-finite, power, remainder,
 * atan2) on n elements: b is NULL for unary ones; is-finite writes pred. */
void kc__half_math_run(int32_t op, bool bf16, const uint16_t* a, const uint16_t* b,
                       void* out, int64_t n);

/* r[i]: whether the outcome of comparing a[i] with b[i] is in `accept`
 * (KC__ORDER_*); `total`: in XLA's total order (-NaN < -inf < -0 < +0 <
 * inf < NaN), where nothing is unordered. */
void kc__half_compare_run(unsigned accept, bool total, bool bf16, const uint16_t* a,
                          const uint16_t* b, uint8_t* r, int64_t n);

/* clamp(lo, x, hi) on n elements; lo and hi of one element when their
 * scalar flag is set. */
void kc__half_clamp_run(bool bf16, const uint16_t* lo, bool lo_scalar, const uint16_t* x,
                        const uint16_t* hi, bool hi_scalar, uint16_t* r, int64_t n);

/* iota along a dimension: outer x len x inner elements of value k. */
void kc__half_iota_run(bool bf16, uint16_t* r, int64_t outer, int64_t len, int64_t inner);

/* A reducer's op (add, multiply, maximum, minimum) over n elements of x:
 * `fold`: into acc[0], else acc[j] = op(acc[j], x[j]); each step rounded,
 * as the reducer computation would. */
void kc__half_reduce_row(int32_t op, bool bf16, uint16_t* acc, bool fold, const uint16_t* x,
                         int64_t n);

/* ---- c64 and c128 (instr_complex.c) ------------------------------------------------- */

/* Any element-wise operation of src/kernels/elementwise_ops.h whose row
 * takes c64 and c128 (KC__EW_COMPLEX), on n elements: the row's COMPLEX
 * form; abs gives the modulus, of the part type; b NULL for unary ops. */
void kc__complex_math_run(int32_t op, bool c128, const void* a, const void* b, void* out,
                          int64_t n);

/* EQ (`accept` KC__ORDER_EQ) or NE (the other outcomes): equal when both
 * parts are. */
void kc__complex_compare_run(unsigned accept, bool c128, const void* a, const void* b, uint8_t* r,
                             int64_t n);

/* iota: the real part k, the imaginary part 0. */
void kc__complex_iota_run(bool c128, void* r, int64_t outer, int64_t len, int64_t inner);

/* add or multiply, as kc__half_reduce_row. */
void kc__complex_reduce_row(int32_t op, bool c128, void* acc, bool fold, const void* x,
                            int64_t n);

#endif /* KCALL_PROGRAM_INSTR_TYPES_H_ */
