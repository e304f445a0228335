/* The element-wise math operations, one row each: what every kernel of
 * them is generated from. The host's typed loops (f32 and f64, the
 * integers and pred), its f16/bf16 path (through the f32 form, rounded
 * once), its c64/c128 path, the f32 vector kernels, the instruction table
 * (so the HLO parser knows the name), fusion's tile, the split cost, the
 * element-type check and its message, and the CUDA backend's functors,
 * names, arities and type check all come from KC__EW_MATH_OPS; the
 * arithmetic, exponential and log of KC__EW_ARITH_OPS give elementwise.c's
 * loops, the complex ones and cuda/arith.cu's functors the same way.
 * Adding an operation is a row of KC__EW_MATH_OPS, its opcode in
 * include/kcall/hlo_opcode.h and its line in docs/programs.md
 * (src/kernels/README.md has the recipe).
 * C and CUDA C++; never installed.
 *
 * X(OP, NAME, N, RES, DOMAIN, VECTOR, COST, FLOAT, COMPLEX, INT)
 *   OP      the opcode, KC_OP_<OP>
 *   NAME    its HLO name
 *   N       1 or 2 operands (a literal: generators paste it)
 *   RES     SAME: the result has the operands' type; PRED: pred
 *   DOMAIN  the element types it takes, KC__EW_FLOAT (f16, bf16, f32,
 *           f64) | KC__EW_INT (the integers) | KC__EW_PRED |
 *           KC__EW_COMPLEX (c64, c128)
 *   VECTOR  its f32 vector kernel (KC__VM_*, kernels/vmath.h) or -1
 *   COST    rough nanoseconds an f32/f64 element of the scalar form, for
 *           the split across the thread pool (a vector kernel costs 1)
 *   FLOAT   the value for floats: an expression of x (and y) of type
 *           KC__T, with KC__F(fn) the C library's fn of that type
 *           (tanhf for float, tanh for double)
 *   COMPLEX the value for c64/c128: an expression of z (and w), with
 *           KC__C(fn) C's complex fn (ctanhf, ctanh) and KC__CX(fn)
 *           kcall's (kc__cx_fn_c64, in src/program/instr/instr_complex.c)
 *   INT     the value for the integers and pred, computed in 64 bits: an
 *           expression of the operands' bits a and b (uint64_t,
 *           sign-extended for signed types), their values sa and sb
 *           (int64_t; 0 for unsigned types), S (signed), BITS (the
 *           width) and M (BITS ones); the result is cut to the width
 *           (pred: to its low bit)
 * A form the domain leaves out is KC__NO. */
#ifndef KCALL_KERNELS_ELEMENTWISE_OPS_H_
#define KCALL_KERNELS_ELEMENTWISE_OPS_H_

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "kcall/hlo_opcode.h"
#ifndef __CUDACC__
#include "kernels/vmath.h"
#endif
#include "kernels/xla_arith.h"

#ifdef __CUDACC__
#define KC__EW_FN __host__ __device__ static inline
#else
#define KC__EW_FN static inline
#endif

/* RES as a value. */
#define KC__EW_RES_SAME false
#define KC__EW_RES_PRED true

enum { KC__EW_FLOAT = 1, KC__EW_INT = 2, KC__EW_PRED = 4, KC__EW_COMPLEX = 8 };

#define KC__EW_F KC__EW_FLOAT
#define KC__EW_FC (KC__EW_FLOAT | KC__EW_COMPLEX)
#define KC__EW_FI (KC__EW_FLOAT | KC__EW_INT)
#define KC__EW_FIC (KC__EW_FLOAT | KC__EW_INT | KC__EW_COMPLEX)
#define KC__EW_I KC__EW_INT
#define KC__EW_IP (KC__EW_INT | KC__EW_PRED)

/* A form outside the operation's domain (never run: the domain is
 * checked first). */
#define KC__NO 0

/* clang-format off */
/* The arithmetic, exponential and log (KC__INSTR_ELEMENTWISE entries,
 * src/program/instr/instr_builtin.c; their loops are elementwise.c's and
 * cuda/arith.cu's). KC__FX(fn) is kernels/xla_arith.h's fn of the type
 * (kc__fmax_f32). The INT forms wrap; x / 0 = -1 (all ones) and
 * INT_MIN / -1 = INT_MIN, as XLA defines them. */
#define KC__EW_ARITH_OPS(X)                                                                 \
  X(ADD, "add", 2, SAME, KC__EW_FIC, -1, 0.25, x + y, z + w, a + b)                         \
  X(SUBTRACT, "subtract", 2, SAME, KC__EW_FIC, -1, 0.25, x - y, z - w, a - b)               \
  X(MULTIPLY, "multiply", 2, SAME, KC__EW_FIC, -1, 0.25, x * y, KC__CX(mul)(z, w), a * b)   \
  X(DIVIDE, "divide", 2, SAME, KC__EW_FIC, -1, 0.25, x / y, KC__CX(div)(z, w),              \
    kc__ew_idiv(a, b, sa, sb, S, M))                                                        \
  X(MAXIMUM, "maximum", 2, SAME, KC__EW_FI, -1, 0.25, KC__FX(fmax)(x, y), KC__NO,           \
    (S ? sa > sb : a > b) ? a : b)                                                          \
  X(MINIMUM, "minimum", 2, SAME, KC__EW_FI, -1, 0.25, KC__FX(fmin)(x, y), KC__NO,           \
    (S ? sa < sb : a < b) ? a : b)                                                          \
  X(NEGATE, "negate", 1, SAME, KC__EW_FIC, -1, 0.25, -x, -z, (uint64_t)0 - a)               \
  X(EXPONENTIAL, "exponential", 1, SAME, KC__EW_FC, KC__VM_EXP, 10, KC__F(exp)(x),          \
    KC__C(exp)(z), KC__NO)                                                                  \
  X(LOG, "log", 1, SAME, KC__EW_FC, KC__VM_LOG, 10, KC__F(log)(x), KC__C(log)(z), KC__NO)

/* The element-wise math instructions (src/program/instr/instr_math.c). */
#define KC__EW_MATH_OPS(X)                                                                  \
  X(ABS, "abs", 1, SAME, KC__EW_FIC, -1, 0.5, KC__F(fabs)(x),                              \
    KC__NO /* the modulus: instr_complex.c */, S && sa < 0 ? (uint64_t)0 - a : a)          \
  X(SIGN, "sign", 1, SAME, KC__EW_FIC, -1, 0.5, x > 0 ? (KC__T)1 : x < 0 ? (KC__T)-1 : x,  \
    KC__CX(sign)(z), S ? (uint64_t)(sa > 0 ? 1 : sa < 0 ? -1 : 0) : (uint64_t)(a != 0))    \
  X(SQRT, "sqrt", 1, SAME, KC__EW_FC, KC__VM_SQRT, 10, KC__F(sqrt)(x), KC__C(sqrt)(z),     \
    KC__NO)                                                                                 \
  X(RSQRT, "rsqrt", 1, SAME, KC__EW_FC, KC__VM_RSQRT, 10, (KC__T)1 / KC__F(sqrt)(x),      \
    1 / KC__C(sqrt)(z), KC__NO)                                                             \
  X(CBRT, "cbrt", 1, SAME, KC__EW_F, -1, 10, KC__F(cbrt)(x), KC__NO, KC__NO)                \
  X(TANH, "tanh", 1, SAME, KC__EW_FC, KC__VM_TANH, 10, KC__F(tanh)(x), KC__C(tanh)(z),     \
    KC__NO)                                                                                 \
  X(LOGISTIC, "logistic", 1, SAME, KC__EW_F, KC__VM_LOGISTIC, 10,                           \
    (KC__T)1 / ((KC__T)1 + KC__F(exp)(-x)), KC__NO, KC__NO)                                 \
  X(SINE, "sine", 1, SAME, KC__EW_FC, -1, 10, KC__F(sin)(x), KC__C(sin)(z), KC__NO)         \
  X(COSINE, "cosine", 1, SAME, KC__EW_FC, -1, 10, KC__F(cos)(x), KC__C(cos)(z), KC__NO)     \
  X(TAN, "tan", 1, SAME, KC__EW_FC, -1, 10, KC__F(tan)(x), KC__C(tan)(z), KC__NO)           \
  X(FLOOR, "floor", 1, SAME, KC__EW_F, -1, 0.5, KC__F(floor)(x), KC__NO, KC__NO)            \
  X(CEIL, "ceil", 1, SAME, KC__EW_F, -1, 0.5, KC__F(ceil)(x), KC__NO, KC__NO)               \
  X(ROUND_NEAREST_AFZ, "round-nearest-afz", 1, SAME, KC__EW_F, -1, 0.5, KC__F(round)(x),    \
    KC__NO, KC__NO)                                                                         \
  X(ROUND_NEAREST_EVEN, "round-nearest-even", 1, SAME, KC__EW_F, -1, 0.5,                   \
    KC__F(nearbyint)(x), KC__NO, KC__NO)                                                    \
  X(LOG_PLUS_ONE, "log-plus-one", 1, SAME, KC__EW_FC, KC__VM_LOG1P, 10, KC__F(log1p)(x),    \
    KC__CX(log1p)(z), KC__NO)                                                               \
  X(EXPONENTIAL_MINUS_ONE, "exponential-minus-one", 1, SAME, KC__EW_FC, KC__VM_EXPM1, 10,   \
    KC__F(expm1)(x), KC__CX(expm1)(z), KC__NO)                                              \
  X(ERF, "erf", 1, SAME, KC__EW_F, KC__VM_ERF, 10, KC__F(erf)(x), KC__NO, KC__NO)           \
  X(IS_FINITE, "is-finite", 1, PRED, KC__EW_F, -1, 0.5, isfinite(x) ? 1 : 0, KC__NO,        \
    KC__NO)                                                                                 \
  X(NOT, "not", 1, SAME, KC__EW_IP, -1, 1, KC__NO, KC__NO, ~a)                              \
  X(POPCNT, "popcnt", 1, SAME, KC__EW_I, -1, 1, KC__NO, KC__NO, kc__ew_popcount(a & M))     \
  X(COUNT_LEADING_ZEROS, "count-leading-zeros", 1, SAME, KC__EW_I, -1, 1, KC__NO, KC__NO,   \
    kc__ew_clz(a & M, BITS))                                                                \
  X(POWER, "power", 2, SAME, KC__EW_FIC, -1, 10, KC__F(pow)(x, y), KC__CX(pow)(z, w),      \
    kc__ew_ipow(a, S ? sb : (int64_t)(b & 0x7FFFFFFFFFFFFFFFull), S))                      \
  X(REMAINDER, "remainder", 2, SAME, KC__EW_FI, -1, 10, KC__F(fmod)(x, y), KC__NO,          \
    b == 0 ? a : S ? (sb == -1 ? 0 : (uint64_t)(sa % sb)) : a % b)                          \
  X(ATAN2, "atan2", 2, SAME, KC__EW_F, -1, 10, KC__F(atan2)(x, y), KC__NO, KC__NO)          \
  X(AND, "and", 2, SAME, KC__EW_IP, -1, 1, KC__NO, KC__NO, a & b)                           \
  X(OR, "or", 2, SAME, KC__EW_IP, -1, 1, KC__NO, KC__NO, a | b)                             \
  X(XOR, "xor", 2, SAME, KC__EW_IP, -1, 1, KC__NO, KC__NO, a ^ b)                           \
  X(SHIFT_LEFT, "shift-left", 2, SAME, KC__EW_I, -1, 1, KC__NO, KC__NO,                     \
    (b & M) >= BITS ? 0 : a << (b & M))                                                     \
  X(SHIFT_RIGHT_ARITHMETIC, "shift-right-arithmetic", 2, SAME, KC__EW_I, -1, 1, KC__NO,     \
    KC__NO, kc__ew_sra(a, b & M, BITS))                                                     \
  X(SHIFT_RIGHT_LOGICAL, "shift-right-logical", 2, SAME, KC__EW_I, -1, 1, KC__NO, KC__NO,   \
    (b & M) >= BITS ? 0 : (a & M) >> (b & M))
/* clang-format on */

/* ---- the columns as lookups, host and device alike ---------------------------- */

#define KC__EW_CASE_DOMAIN(OP, NAME, N, RES, DOM, ...) \
  case KC_OP_##OP:                                     \
    return DOM;
#define KC__EW_CASE_ARITY(OP, NAME, N, ...) \
  case KC_OP_##OP:                          \
    return N;
#define KC__EW_CASE_PRED(OP, NAME, N, RES, ...) \
  case KC_OP_##OP:                              \
    return KC__EW_RES_##RES;
#define KC__EW_CASE_NAME(OP, NAME, ...) \
  case KC_OP_##OP:                      \
    return NAME;
#define KC__EW_CASE_COST(OP, NAME, N, RES, DOM, VEC, COST, ...) \
  case KC_OP_##OP:                                              \
    return COST;

/* A math row's domain (KC__EW_*); 0 for an opcode that is not one. */
KC__EW_FN int kc__ew_math_domain(int32_t op) {
  switch (op) {
    KC__EW_MATH_OPS(KC__EW_CASE_DOMAIN)
    default: return 0;
  }
}

/* An arithmetic row's domain; 0 for an opcode that is not one. */
KC__EW_FN int kc__ew_arith_domain(int32_t op) {
  switch (op) {
    KC__EW_ARITH_OPS(KC__EW_CASE_DOMAIN)
    default: return 0;
  }
}

/* A row's operand count (1 or 2); 0 for an opcode that is not a row. */
KC__EW_FN int kc__ew_arity(int32_t op) {
  switch (op) {
    KC__EW_ARITH_OPS(KC__EW_CASE_ARITY)
    KC__EW_MATH_OPS(KC__EW_CASE_ARITY)
    default: return 0;
  }
}

/* True for a row whose result is pred (is-finite). */
KC__EW_FN bool kc__ew_pred_result(int32_t op) {
  switch (op) {
    KC__EW_ARITH_OPS(KC__EW_CASE_PRED)
    KC__EW_MATH_OPS(KC__EW_CASE_PRED)
    default: return false;
  }
}

/* A row's HLO name; NULL for an opcode that is not a row. */
KC__EW_FN const char* kc__ew_name(int32_t op) {
  switch (op) {
    KC__EW_ARITH_OPS(KC__EW_CASE_NAME)
    KC__EW_MATH_OPS(KC__EW_CASE_NAME)
    default: return 0;
  }
}
/* A row's COST (nanoseconds an f32/f64 element of its scalar form); 1
 * for an opcode that is not a row. */
KC__EW_FN double kc__ew_cost(int32_t op) {
  switch (op) {
    KC__EW_ARITH_OPS(KC__EW_CASE_COST)
    KC__EW_MATH_OPS(KC__EW_CASE_COST)
    default: return 1.0;
  }
}
#ifndef __CUDACC__
#define KC__EW_CASE_VECTOR(OP, NAME, N, RES, DOM, VEC, ...) \
  case KC_OP_##OP:                                          \
    return VEC;
/* A row's f32 vector kernel (kcall's own, kernels/vmath.h: host only), or
 * -1. */
static inline int kc__ew_vector_fn(int32_t op) {
  switch (op) {
    KC__EW_ARITH_OPS(KC__EW_CASE_VECTOR)
    KC__EW_MATH_OPS(KC__EW_CASE_VECTOR)
    default: return -1;
  }
}
#undef KC__EW_CASE_VECTOR
#endif

#undef KC__EW_CASE_COST
#undef KC__EW_CASE_DOMAIN
#undef KC__EW_CASE_ARITY
#undef KC__EW_CASE_PRED
#undef KC__EW_CASE_NAME

/* ---- what the integer forms call: XLA's rules, host and device alike -------- */

/* x / y of the low bits (M) of a and b: by 0 all ones, INT_MIN / -1
 * INT_MIN (the result is cut to the width after). */
KC__EW_FN uint64_t kc__ew_idiv(uint64_t a, uint64_t b, int64_t sa, int64_t sb, bool is_signed,
                               uint64_t mask) {
  if ((b & mask) == 0) return mask;
  if (is_signed) {
    if (sb == -1) return (uint64_t)0 - a; /* INT_MIN / -1 wraps to INT_MIN */
    return (uint64_t)(sa / sb);
  }
  return (a & mask) / (b & mask);
}

KC__EW_FN uint64_t kc__ew_popcount(uint64_t v) {
#ifdef __CUDA_ARCH__
  return (uint64_t)__popcll((unsigned long long)v);
#else
  return (uint64_t)__builtin_popcountll(v);
#endif
}

/* Leading zeros of the low `bits` bits of v (v has no others). */
KC__EW_FN uint64_t kc__ew_clz(uint64_t v, unsigned bits) {
  if (v == 0) return bits;
#ifdef __CUDA_ARCH__
  return (uint64_t)(__clzll((long long)v) - (int)(64 - bits));
#else
  return (uint64_t)(__builtin_clzll(v) - (int)(64 - bits));
#endif
}

/* base ** exp wrapping; a negative exponent gives 0 except for 1 and -1
 * (signed types). */
KC__EW_FN uint64_t kc__ew_ipow(uint64_t base, int64_t exp, bool is_signed) {
  if (exp < 0) {
    int64_t b = (int64_t)base;
    if (!is_signed) return 0;
    return b == 1 ? 1 : b == -1 ? ((exp & 1) ? (uint64_t)-1 : 1) : 0;
  }
  uint64_t r = 1;
  while (exp) {
    if (exp & 1) r *= base;
    base *= base;
    exp >>= 1;
  }
  return r;
}

/* An arithmetic right shift of the low `bits` bits of a, read as the
 * signed type of that width whatever the element type (XLA's rule), by
 * `count` read as unsigned: the width or more gives the sign. */
KC__EW_FN uint64_t kc__ew_sra(uint64_t a, uint64_t count, unsigned bits) {
  unsigned up = 64 - bits;
  int64_t s = (int64_t)(a << up) >> up; /* arithmetic on every compiler kcall builds with */
  if (count >= bits) return s < 0 ? ~(uint64_t)0 : 0;
  return (uint64_t)(s >> count);
}

/* ---- the scalar forms, one function per row and type ------------------------- */

/* kc__ew_int_<OP>(a, b, sa, sb, S, BITS, M): the INT column. */
#define KC__EW_GEN_INT(OP, NAME, N, RES, DOM, VEC, COST, FLT, CPX, INT)                   \
  KC__EW_FN uint64_t kc__ew_int_##OP(uint64_t a, uint64_t b, int64_t sa, int64_t sb,        \
                                     bool S, unsigned BITS, uint64_t M) {                  \
    (void)a, (void)b, (void)sa, (void)sb, (void)S, (void)BITS, (void)M;                     \
    return (uint64_t)(INT);                                                                 \
  }
KC__EW_ARITH_OPS(KC__EW_GEN_INT)
KC__EW_MATH_OPS(KC__EW_GEN_INT)
#undef KC__EW_GEN_INT

/* kc__ew_f32_<OP>(x, y) and kc__ew_f64_<OP>(x, y): the FLOAT column (y
 * unused by unary rows; a PRED row gives 1 or 0). */
#define KC__EW_GEN_FLOAT(OP, NAME, N, RES, DOM, VEC, COST, FLT, CPX, INT)                 \
  KC__EW_FN KC__T KC__EW_FLOAT_NAME(OP)(KC__T x, KC__T y) {                                 \
    (void)x, (void)y;                                                                       \
    return (KC__T)(FLT);                                                                    \
  }
#define KC__T float
#define KC__F(fn) fn##f
#define KC__FX(fn) kc__##fn##_f32
#define KC__EW_FLOAT_NAME(OP) kc__ew_f32_##OP
KC__EW_ARITH_OPS(KC__EW_GEN_FLOAT)
KC__EW_MATH_OPS(KC__EW_GEN_FLOAT)
#undef KC__T
#undef KC__F
#undef KC__FX
#undef KC__EW_FLOAT_NAME
#define KC__T double
#define KC__F(fn) fn
#define KC__FX(fn) kc__##fn##_f64
#define KC__EW_FLOAT_NAME(OP) kc__ew_f64_##OP
KC__EW_ARITH_OPS(KC__EW_GEN_FLOAT)
KC__EW_MATH_OPS(KC__EW_GEN_FLOAT)
#undef KC__T
#undef KC__F
#undef KC__FX
#undef KC__EW_FLOAT_NAME
#undef KC__EW_GEN_FLOAT

#endif /* KCALL_KERNELS_ELEMENTWISE_OPS_H_ */
