/* Element-wise decompositions, shared by the front ends: instructions
 * built through the program builder for an operation that has no
 * instruction of its own (chlo.mulhi and HLO's mulhi, complex maximum,
 * minimum, atan2, cbrt and logistic), and the small helpers they are
 * written with. Never installed. */
#ifndef KCALL_PROGRAM_FRONTEND_EXPR_H_
#define KCALL_PROGRAM_FRONTEND_EXPR_H_

#include "kcall/program.h"

/* Builds element-wise instructions of one shape; the first failure is kept
 * in `st` and later calls do nothing. */
typedef struct kc__expr kc__expr;
struct kc__expr {
  kc_program_builder* b;
  /* Names the next instruction into *out (valid until the next call).
   * NULL: "PREFIX/WHAT.K", K counting from 0. The StableHLO reader names
   * them its way (ctx and ctx2: its scope and op). */
  kc_status* (*name)(kc__expr* e, kc_string_view* out);
  void* ctx;
  const void* ctx2;
  kc_string_view prefix;
  unsigned serial;
  char buf[320];
  const char* what;      /* the suffix of the instructions' names */
  const kc_shape* shape; /* the values' */
  kc_shape* pred;        /* pred of the same dims, owned */
  kc_status* st;
};

/* Adds instruction `opcode` of `shape` on ids[0..n) (attributes copied);
 * -1 once anything failed (an id of -1 among the operands, too). */
int32_t kc__e_add(kc__expr* e, int32_t opcode, const kc_shape* shape, const int32_t* ids,
                  size_t n, const kc_attr_dict* attrs);

/* opcode of e->shape on a and b, or on a alone when b is KC__UNARY. */
int32_t kc__e_op(kc__expr* e, int32_t opcode, int32_t a, int32_t b);
#define KC__UNARY (-2)

/* The f32 constant v, broadcast to e->shape. */
int32_t kc__e_const(kc__expr* e, float v);

/* The integer constant v (its low bits, of e->shape's type), broadcast to
 * e->shape. */
int32_t kc__e_const_int(kc__expr* e, uint64_t v);

/* compare(a, b) in `direction`, of shape e->pred. */
int32_t kc__e_compare(kc__expr* e, const char* direction, int32_t a, int32_t b);

/* select(p, a, b) of e->shape. */
int32_t kc__e_select(kc__expr* e, int32_t p, int32_t a, int32_t b);

/* ---- decompositions: each returns the result's id, -1 once e->st is set --- */

/* The high half of the double-width product of integers x and y of
 * `shape` (signed or not). Up to 32 bits, the product in 64 bits shifted
 * down; for 64 bits, from 32-bit halves (Hacker's Delight's mulhs and
 * mulhu), in the 64-bit type's wrapping arithmetic. */
int32_t kc__e_mulhi(kc__expr* e, int32_t x, int32_t y, const kc_shape* shape);

/* Whether kc__e_complex builds `opcode` of operands of type `dt`: maximum,
 * minimum, atan2, cbrt and logistic of complex values. */
bool kc__e_is_complex_form(int32_t opcode, DLDataType dt);

/* `opcode` (kc__e_is_complex_form) of complex operands ids (two for
 * maximum, minimum and atan2, one otherwise) of shape c:
 *   maximum, minimum  the larger (smaller) in the lexicographic order of
 *                     (real, imaginary), as StableHLO defines them (a NaN
 *                     part compares false: the second operand is taken)
 *   atan2(y, x)       -i log((x + i y) / sqrt(x^2 + y^2)), the
 *                     specification's formula
 *   cbrt              the principal cube root: |z|^(1/3) at a third of
 *                     z's argument
 *   logistic          1 / (1 + exp(-z)), as XLA expands it */
int32_t kc__e_complex(kc__expr* e, int32_t opcode, const int32_t* ids, const kc_shape* c);

/* A ragged dot in its first mode (chlo.ragged_dot, HLO's ragged-dot): lhs
 * dimension `ragged`, which is neither batch nor contracting, is cut into
 * groups of group_sizes[g] rows (the sizes: one integer per group, along
 * rhs dimension `group`), each multiplied by its group's slice of rhs.
 * Built as every group's dot, each row then keeping its own group's result
 * (rows past the groups give zeros). */
typedef struct kc__ragged_dot {
  int32_t lhs, rhs, sizes; /* instruction ids */
  const kc_shape *lhs_shape, *rhs_shape, *sizes_shape, *result;
  const int64_t *lhs_batch, *rhs_batch, *lhs_contract, *rhs_contract;
  size_t num_batch, num_contract;
  int64_t ragged, group;
} kc__ragged_dot;

/* The result's id; -1 with e->st INVALID_ARGUMENT (the caller names the
 * op and where it is) when the dimensions do not make the first mode (a ragged batch or
 * contracting dimension, the other modes, is refused naming it). */
int32_t kc__e_ragged_dot(kc__expr* e, const kc__ragged_dot* r);

/* ---- narrow integers -------------------------------------------------------- */

/* The integer types narrower than a byte (i2, i4, ui2, ui4; HLO's s2, s4,
 * u2, u4) are held one to a byte of s8 (signed) or u8 (unsigned), each
 * value in its type's range. */

/* x, of e->shape (s8 or u8), wrapped into the range of a `bits`-wide
 * integer of its signedness: its low bits, sign-extended when signed. */
int32_t kc__e_narrow_wrap(kc__expr* e, int32_t x, unsigned bits);

/* x, a float of `shape`, clamped to the range of a `bits`-wide integer
 * (`is_signed`), so that its conversion saturates as the narrow type's
 * does. */
int32_t kc__e_narrow_clamp(kc__expr* e, int32_t x, const kc_shape* shape, bool is_signed,
                           unsigned bits);

/* ---- a dot's algorithm ------------------------------------------------------ */

/* A precision type of a dot algorithm ("tf32", "bf16", "f16", "f32",
 * "f64") as reduce-precision's exponent and mantissa bits; false for a
 * name kcall does not round to. */
bool kc__precision_bits(kc_string_view type, int* exponent, int* mantissa);

/* The type a dot with a result of `dt` accumulates in ("f32" for f16,
 * bf16 and f32, "f64" for f64), as docs/programs.md says; NULL for
 * integers and complex. */
const char* kc__dot_accumulation(DLDataType dt);

/* x (of `shape`) rounded to a float of `exponent` and `mantissa` bits by
 * a reduce-precision, when it is a float with more mantissa bits; else x
 * itself (an integer operand's products are exact whatever a float
 * precision says). */
int32_t kc__e_round_to(kc__expr* e, int32_t x, const kc_shape* shape, int exponent, int mantissa);

/* An unrolled loop (a scan's steps) stops at this many instructions in
 * its program: a nest of long scans would otherwise grow without bound. */
enum { KC__UNROLL_MAX_INSTRUCTIONS = 1 << 20 };

/* RESOURCE_EXHAUSTED, naming `what`, once `b` holds more than
 * KC__UNROLL_MAX_INSTRUCTIONS instructions. */
kc_status* kc__unroll_check(const kc_program_builder* b, const char* what);

/* The name kc__e_add gives its next instruction (for a builder function
 * it does not call). */
kc_status* kc__e_name(kc__expr* e, kc_string_view* out);

#endif /* KCALL_PROGRAM_FRONTEND_EXPR_H_ */
