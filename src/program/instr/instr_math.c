/* Element-wise math beyond the arithmetic of elementwise.c: transcendental
 * functions, rounding, abs and sign, power, remainder, atan2 and the
 * bitwise and logical operations. */
#include <math.h>
#include <stdio.h>

#include "internal/common.h"
#include "program/instr/instr.h"
#include "program/instr/instr_types.h"
#include "kernels/split.h"
#include "kernels/vmath.h"

typedef struct kc__math_plan {
  int32_t op;
  bool binary; /* two operands (its entry's count) */
  int type; /* KC__M_* */
  int64_t count;
} kc__math_plan;

/* f16, bf16, c64 and c128 run in instr_half.c and instr_complex.c. */
enum { KC__M_F32, KC__M_F64, KC__M_SINT, KC__M_UINT, KC__M_PRED, KC__M_F16, KC__M_BF16,
       KC__M_C64, KC__M_C128, KC__M_NONE };

static int kc__math_type(DLDataType t) {
  if (t.lanes != 1) return KC__M_NONE;
  if (t.code == kDLFloat && t.bits == 32) return KC__M_F32;
  if (t.code == kDLFloat && t.bits == 64) return KC__M_F64;
  if (t.code == kDLInt && (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)) {
    return KC__M_SINT;
  }
  if (t.code == kDLUInt && (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)) {
    return KC__M_UINT;
  }
  if (t.code == kDLBool && t.bits == 8) return KC__M_PRED;
  if (t.code == kDLFloat && t.bits == 16) return KC__M_F16;
  if (t.code == kDLBfloat && t.bits == 16) return KC__M_BF16;
  if (t.code == kDLComplex && t.bits == 64) return KC__M_C64;
  if (t.code == kDLComplex && t.bits == 128) return KC__M_C128;
  return KC__M_NONE;
}

/* Which element types each op takes: floats, integers, pred, complex
 * (kc__complex_math_defined). */
enum { KC__ON_FLOAT = 1, KC__ON_INT = 2, KC__ON_PRED = 4, KC__ON_COMPLEX = 8 };

static int kc__math_domain(int32_t op) {
  switch (op) {
    case KC_OP_ABS:
    case KC_OP_SIGN:
    case KC_OP_POWER:
    case KC_OP_REMAINDER:
      return KC__ON_FLOAT | KC__ON_INT;
    case KC_OP_NOT:
    case KC_OP_AND:
    case KC_OP_OR:
    case KC_OP_XOR:
      return KC__ON_INT | KC__ON_PRED;
    case KC_OP_SHIFT_LEFT:
    case KC_OP_SHIFT_RIGHT_ARITHMETIC:
    case KC_OP_SHIFT_RIGHT_LOGICAL:
    case KC_OP_POPCNT:
    case KC_OP_COUNT_LEADING_ZEROS:
      return KC__ON_INT;
    default:
      return KC__ON_FLOAT;
  }
}

static kc_status* kc__math_read(const kc_program* p, const kc__instr* in, kc__math_plan* plan) {
  const kc_shape* r = in->shape;
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, r, "the result"));
  for (size_t i = 0; i < in->num_operands; ++i) {
    const kc_shape* o = kc__instr_operand(p, in, i);
    bool pred_result = in->op == KC_OP_IS_FINITE;
    /* abs of a complex value is its modulus, of the part type. */
    DLDataType ot = kc_shape_get_dtype(o);
    bool part_result = in->op == KC_OP_ABS && ot.code == kDLComplex && ot.lanes == 1;
    bool same = pred_result ? !kc_shape_is_tuple(o) && kc__shape_same_dims(o, r)
                : part_result
                    ? !kc_shape_is_tuple(o) && kc__shape_same_dims(o, r) &&
                          kc_dtype_equal(kc_shape_get_dtype(r),
                                         (DLDataType){kDLFloat, (uint8_t)(ot.bits / 2), 1})
                    : kc_shape_equal(o, r);
    if (!same) {
      char w[256], g[256];
      kc_shape_format(r, w, sizeof w);
      kc_shape_format(o, g, sizeof g);
      if (part_result) {
        return kc__instr_error(in, KC_INVALID_ARGUMENT,
                               "abs of %s: expected a result of its part type f%d and the "
                               "operand's dims, got %s",
                               g, ot.bits / 2, w);
      }
      return kc__instr_error(in, KC_INVALID_ARGUMENT, "operand %zu: expected %s%s, got %s", i,
                        pred_result ? "the dims of " : "", w, g);
    }
  }
  DLDataType t = kc_shape_get_dtype(kc__instr_operand(p, in, 0));
  if (in->op == KC_OP_IS_FINITE && kc_shape_get_dtype(r).code != kDLBool) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "is-finite: expected a pred result");
  }
  plan->op = in->op;
  plan->binary = in->def->min_operands == 2;
  plan->type = kc__math_type(t);
  plan->count = kc__shape_elements(r);
  int domain = kc__math_domain(in->op) |
               (kc__complex_math_defined(in->op) ? KC__ON_COMPLEX : 0);
  int have = plan->type == KC__M_F32 || plan->type == KC__M_F64 ||
                     plan->type == KC__M_F16 || plan->type == KC__M_BF16
                 ? KC__ON_FLOAT
             : plan->type == KC__M_C64 || plan->type == KC__M_C128 ? KC__ON_COMPLEX
             : plan->type == KC__M_PRED                            ? KC__ON_PRED
             : plan->type == KC__M_NONE                            ? 0
                                                                   : KC__ON_INT;
  if (!(domain & have)) {
    char buf[32];
    const kc__instr_def* def = in->def;
    return kc__instr_error(in, KC_UNIMPLEMENTED, "%s: element type %s is not supported (%s)",
                      def->name, kc__instr_dtype_text(t, buf, sizeof buf),
                      domain == KC__ON_FLOAT ? "f16, bf16, f32 and f64"
                      : domain == (KC__ON_FLOAT | KC__ON_COMPLEX)
                          ? "f16, bf16, f32, f64, c64 and c128"
                      : domain == (KC__ON_FLOAT | KC__ON_INT | KC__ON_COMPLEX)
                          ? "f16, bf16, f32, f64, c64, c128 and the integer types"
                      : domain == (KC__ON_FLOAT | KC__ON_INT)
                          ? "f16, bf16, f32, f64 and the integer types"
                      : domain == KC__ON_INT ? "the integer types"
                                             : "pred and the integer types");
  }
  return NULL;
}

static kc_status* kc__math_verify(const kc_program* p, const kc__instr* in) {
  kc__math_plan plan;
  return kc__math_read(p, in, &plan);
}

/* A loop over n elements of the operands a and b (b NULL for a unary op). */
typedef void (*kc__int_loop)(const void* a, const void* b, void* r, int64_t n);

typedef struct kc__math_data {
  kc__math_plan plan;
  size_t esize;
  kc__int_loop int_loop; /* the typed loop of a bitwise op or shift, or NULL */
} kc__math_data;

static kc__int_loop kc__int_loop_of(int32_t op, size_t esize, bool pred);

static kc_status* kc__math_prepare(const kc_program* p, const kc__instr* in,
                                   const kc__prepare_ctx* ctx, const void** out) {
  kc__math_data* d = kc__arena_alloc(ctx->arena, sizeof *d);
  if (!d) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  KC_RETURN_IF_ERROR(kc__math_read(p, in, &d->plan));
  d->esize = kc_dtype_get_size(kc_shape_get_dtype(kc__instr_operand(p, in, 0)));
  d->int_loop = d->plan.type == KC__M_SINT || d->plan.type == KC__M_UINT ||
                        d->plan.type == KC__M_PRED
                    ? kc__int_loop_of(d->plan.op, d->esize, d->plan.type == KC__M_PRED)
                    : NULL;
  *out = d;
  return NULL;
}

/* ---- floats --------------------------------------------------------------------- */

/* XLA's round-half-away-from-zero and sign (sign(NaN) = NaN, sign(-0) = -0). */
#define KC__FLOAT_KERNELS(sfx, T, F)                                                    \
  static T kc__sign_##sfx(T x) { return x > 0 ? (T)1 : x < 0 ? (T)-1 : x; }              \
  static T kc__logistic_##sfx(T x) { return (T)1 / ((T)1 + exp##F(-x)); }               \
  static void kc__unary_##sfx(int32_t op, const T* a, void* out, int64_t n) {           \
    T* r = out;                                                                         \
    switch (op) {                                                                       \
      case KC_OP_ABS: for (int64_t i = 0; i < n; ++i) r[i] = fabs##F(a[i]); break;      \
      case KC_OP_SIGN: for (int64_t i = 0; i < n; ++i) r[i] = kc__sign_##sfx(a[i]); break; \
      case KC_OP_SQRT: for (int64_t i = 0; i < n; ++i) r[i] = sqrt##F(a[i]); break;     \
      case KC_OP_RSQRT: for (int64_t i = 0; i < n; ++i) r[i] = (T)1 / sqrt##F(a[i]); break; \
      case KC_OP_CBRT: for (int64_t i = 0; i < n; ++i) r[i] = cbrt##F(a[i]); break;     \
      case KC_OP_TANH: for (int64_t i = 0; i < n; ++i) r[i] = tanh##F(a[i]); break;     \
      case KC_OP_LOGISTIC: for (int64_t i = 0; i < n; ++i) r[i] = kc__logistic_##sfx(a[i]); break; \
      case KC_OP_SINE: for (int64_t i = 0; i < n; ++i) r[i] = sin##F(a[i]); break;      \
      case KC_OP_COSINE: for (int64_t i = 0; i < n; ++i) r[i] = cos##F(a[i]); break;    \
      case KC_OP_TAN: for (int64_t i = 0; i < n; ++i) r[i] = tan##F(a[i]); break;       \
      case KC_OP_FLOOR: for (int64_t i = 0; i < n; ++i) r[i] = floor##F(a[i]); break;   \
      case KC_OP_CEIL: for (int64_t i = 0; i < n; ++i) r[i] = ceil##F(a[i]); break;     \
      case KC_OP_ROUND_NEAREST_AFZ: for (int64_t i = 0; i < n; ++i) r[i] = round##F(a[i]); break; \
      case KC_OP_ROUND_NEAREST_EVEN: for (int64_t i = 0; i < n; ++i) r[i] = nearbyint##F(a[i]); break; \
      case KC_OP_LOG_PLUS_ONE: for (int64_t i = 0; i < n; ++i) r[i] = log1p##F(a[i]); break; \
      case KC_OP_EXPONENTIAL_MINUS_ONE: for (int64_t i = 0; i < n; ++i) r[i] = expm1##F(a[i]); break; \
      case KC_OP_ERF: for (int64_t i = 0; i < n; ++i) r[i] = erf##F(a[i]); break;       \
      case KC_OP_IS_FINITE: {                                                           \
        uint8_t* p = out;                                                               \
        for (int64_t i = 0; i < n; ++i) p[i] = isfinite(a[i]) ? 1 : 0;                  \
        break;                                                                          \
      }                                                                                 \
      default: break;                                                                   \
    }                                                                                   \
  }                                                                                     \
  static void kc__binary_##sfx(int32_t op, const T* a, const T* b, T* r, int64_t n) {   \
    switch (op) {                                                                       \
      case KC_OP_POWER: for (int64_t i = 0; i < n; ++i) r[i] = pow##F(a[i], b[i]); break; \
      case KC_OP_REMAINDER: for (int64_t i = 0; i < n; ++i) r[i] = fmod##F(a[i], b[i]); break; \
      case KC_OP_ATAN2: for (int64_t i = 0; i < n; ++i) r[i] = atan2##F(a[i], b[i]); break; \
      default: break;                                                                   \
    }                                                                                   \
  }
KC__FLOAT_KERNELS(f32, float, f)
KC__FLOAT_KERNELS(f64, double, )
#undef KC__FLOAT_KERNELS

/* ---- integers and pred -------------------------------------------------------------- */

/* Signed and unsigned integers of every width, through int64/uint64 with
 * wrapping as XLA's: shifts by the width or more give 0 (or the sign for
 * arithmetic right shifts), x % 0 = x, x ** negative = 0 except for 1
 * and -1. */
static int64_t kc__load_s(const void* p, size_t i, size_t es) {
  switch (es) {
    case 1: return ((const int8_t*)p)[i];
    case 2: return ((const int16_t*)p)[i];
    case 4: return ((const int32_t*)p)[i];
    default: return ((const int64_t*)p)[i];
  }
}
static uint64_t kc__load_u(const void* p, size_t i, size_t es) {
  switch (es) {
    case 1: return ((const uint8_t*)p)[i];
    case 2: return ((const uint16_t*)p)[i];
    case 4: return ((const uint32_t*)p)[i];
    default: return ((const uint64_t*)p)[i];
  }
}
static void kc__store(void* p, size_t i, size_t es, uint64_t v) {
  switch (es) {
    case 1: ((uint8_t*)p)[i] = (uint8_t)v; break;
    case 2: ((uint16_t*)p)[i] = (uint16_t)v; break;
    case 4: ((uint32_t*)p)[i] = (uint32_t)v; break;
    default: ((uint64_t*)p)[i] = v; break;
  }
}

static uint64_t kc__ipow(uint64_t base, int64_t exp, bool is_signed) {
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

static uint64_t kc__int_op(int32_t op, uint64_t a, uint64_t b, int64_t sa, int64_t sb,
                           bool is_signed, unsigned bits) {
  uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
  switch (op) {
    case KC_OP_ABS: return is_signed && sa < 0 ? (uint64_t)0 - a : a;
    case KC_OP_SIGN: return is_signed ? (uint64_t)(sa > 0 ? 1 : sa < 0 ? -1 : 0) : (a != 0);
    case KC_OP_NOT: return ~a;
    case KC_OP_POPCNT: return (uint64_t)__builtin_popcountll(a & mask);
    case KC_OP_COUNT_LEADING_ZEROS:
      return (a & mask) == 0 ? bits : (uint64_t)(__builtin_clzll(a & mask) - (int)(64 - bits));
    case KC_OP_AND: return a & b;
    case KC_OP_OR: return a | b;
    case KC_OP_XOR: return a ^ b;
    case KC_OP_POWER: return kc__ipow(a, is_signed ? sb : (int64_t)(b & 0x7FFFFFFFFFFFFFFFull), is_signed);
    case KC_OP_REMAINDER:
      if (b == 0) return a;
      if (is_signed) return sb == -1 ? 0 : (uint64_t)(sa % sb);
      return a % b;
    case KC_OP_SHIFT_LEFT: return (b & mask) >= bits ? 0 : a << (b & mask);
    case KC_OP_SHIFT_RIGHT_LOGICAL: return (b & mask) >= bits ? 0 : (a & mask) >> (b & mask);
    case KC_OP_SHIFT_RIGHT_ARITHMETIC:
      if ((b & mask) >= bits) return sa < 0 ? ~0ull : 0;
      return (uint64_t)(sa >> (b & mask));
    default: return 0;
  }
}

static void kc__int_kernel(const kc__math_data* d, void* out, const void* const* ins, int64_t n) {
  const kc__math_plan* plan = &d->plan;
  size_t es = d->esize;
  bool is_signed = plan->type == KC__M_SINT;
  unsigned bits = (unsigned)(es * 8);
  bool binary = plan->binary;
  /* An arithmetic right shift reads the bits as the signed type of the
   * same width, whatever the element type (XLA's rule). */
  bool signed_a = is_signed || plan->op == KC_OP_SHIFT_RIGHT_ARITHMETIC;
  for (int64_t i = 0; i < n; ++i) {
    size_t k = (size_t)i;
    int64_t sa = signed_a ? kc__load_s(ins[0], k, es) : 0;
    uint64_t a = is_signed ? (uint64_t)sa : kc__load_u(ins[0], k, es);
    int64_t sb = binary && is_signed ? kc__load_s(ins[1], k, es) : 0;
    uint64_t b = binary ? (is_signed ? (uint64_t)sb : kc__load_u(ins[1], k, es)) : 0;
    uint64_t r = kc__int_op(plan->op, a, b, sa, sb, is_signed, bits);
    if (plan->type == KC__M_PRED) r &= 1; /* not, and, or, xor of 0/1 */
    kc__store(out, k, es, r);
  }
}

/* The bitwise operations and shifts, one loop per (op, width) that the
 * compiler can vectorise; the same bits whatever the signedness (an
 * arithmetic right shift reads the bits as the signed type of the width).
 * A shift amount is read as unsigned: one of the width or more (a negative
 * one included) gives 0, or the sign for an arithmetic right shift. The
 * shift is done by an amount below the width and the result chosen after,
 * so that no C shift is undefined. */
#define KC__INT_LOOPS(W, UT, ST, WT)                                                    \
  static void kc__and_u##W(const void* a, const void* b, void* r, int64_t n) { \
    const UT* x = a;                                                                    \
    const UT* y = b;                                                                    \
    UT* z = r;                                                                          \
    for (int64_t i = 0; i < n; ++i) z[i] = (UT)(x[i] & y[i]);                           \
  }                                                                                     \
  static void kc__or_u##W(const void* a, const void* b, void* r, int64_t n) {           \
    const UT* x = a;                                                                    \
    const UT* y = b;                                                                    \
    UT* z = r;                                                                          \
    for (int64_t i = 0; i < n; ++i) z[i] = (UT)(x[i] | y[i]);                           \
  }                                                                                     \
  static void kc__xor_u##W(const void* a, const void* b, void* r, int64_t n) { \
    const UT* x = a;                                                                    \
    const UT* y = b;                                                                    \
    UT* z = r;                                                                          \
    for (int64_t i = 0; i < n; ++i) z[i] = (UT)(x[i] ^ y[i]);                           \
  }                                                                                     \
  static void kc__not_u##W(const void* a, const void* b, void* r, int64_t n) { \
    (void)b;                                                                            \
    const UT* x = a;                                                                    \
    UT* z = r;                                                                          \
    for (int64_t i = 0; i < n; ++i) z[i] = (UT)~x[i];                                   \
  }
KC__INT_LOOPS(8, uint8_t, int8_t, uint32_t)
KC__INT_LOOPS(16, uint16_t, int16_t, uint32_t)
KC__INT_LOOPS(32, uint32_t, int32_t, uint32_t)
KC__INT_LOOPS(64, uint64_t, int64_t, uint64_t)
#undef KC__INT_LOOPS

/* The shifts, named by `tag`, with attributes `attr`. */
#define KC__SHIFT_LOOPS(W, UT, ST, WT, tag, attr)                                       \
  attr static void kc__shl_##tag(const void* a, const void* b, void* r, int64_t n) { \
    const UT* x = a;                                                                    \
    const UT* y = b;                                                                    \
    UT* z = r;                                                                          \
    for (int64_t i = 0; i < n; ++i) {                                                   \
      UT s = y[i];                                                                      \
      UT v = (UT)((WT)x[i] << (s & (W - 1)));                                           \
      z[i] = s < (W) ? v : (UT)0;                                                       \
    }                                                                                   \
  }                                                                                     \
  attr static void kc__srl_##tag(const void* a, const void* b, void* r, int64_t n) { \
    const UT* x = a;                                                                    \
    const UT* y = b;                                                                    \
    UT* z = r;                                                                          \
    for (int64_t i = 0; i < n; ++i) {                                                   \
      UT s = y[i];                                                                      \
      UT v = (UT)((WT)x[i] >> (s & (W - 1)));                                           \
      z[i] = s < (W) ? v : (UT)0;                                                       \
    }                                                                                   \
  }                                                                                     \
  attr static void kc__sra_##tag(const void* a, const void* b, void* r, int64_t n) { \
    const ST* x = a;                                                                    \
    const UT* y = b;                                                                    \
    UT* z = r;                                                                          \
    for (int64_t i = 0; i < n; ++i) {                                                   \
      UT s = y[i] < (W) ? y[i] : (UT)((W) - 1);                                         \
      z[i] = (UT)(ST)(x[i] >> s);                                                       \
    }                                                                                   \
  }
KC__SHIFT_LOOPS(8, uint8_t, int8_t, uint32_t, u8, )
KC__SHIFT_LOOPS(16, uint16_t, int16_t, uint32_t, u16, )
KC__SHIFT_LOOPS(32, uint32_t, int32_t, uint32_t, u32, )
KC__SHIFT_LOOPS(64, uint64_t, int64_t, uint64_t, u64, )
/* AVX2 shifts each lane by its own amount: a build of the 32- and 64-bit
 * loops for it, taken when the processor has it (kc__vmath_levels). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KC__HAVE_SHIFT_AVX2 1
#define KC__AVX2 __attribute__((target("avx2")))
KC__SHIFT_LOOPS(32, uint32_t, int32_t, uint32_t, u32_avx2, KC__AVX2)
KC__SHIFT_LOOPS(64, uint64_t, int64_t, uint64_t, u64_avx2, KC__AVX2)
#undef KC__AVX2
#endif
#undef KC__SHIFT_LOOPS

/* pred: the low bit of the result, as the integer path gives. */
#define KC__PRED_LOOP(name, expr)                                                       \
  static void kc__##name##_pred(const void* a, const void* b, void* r, int64_t n) {     \
    const uint8_t* x = a;                                                               \
    const uint8_t* y = b ? b : a;                                                       \
    uint8_t* z = r;                                                                     \
    (void)y;                                                                            \
    for (int64_t i = 0; i < n; ++i) z[i] = (uint8_t)((expr) & 1u);                      \
  }
KC__PRED_LOOP(and, x[i] & y[i])
KC__PRED_LOOP(or, x[i] | y[i])
KC__PRED_LOOP(xor, x[i] ^ y[i])
KC__PRED_LOOP(not, ~(unsigned)x[i])
#undef KC__PRED_LOOP

/* The loop of `op` on elements of `esize` bytes (pred when `pred`); NULL
 * for the operations the general integer path computes. */
static kc__int_loop kc__int_loop_of(int32_t op, size_t esize, bool pred) {
#define KC__PICK(name)                                                   \
  return pred ? kc__##name##_pred                                        \
         : esize == 1 ? kc__##name##_u8                                  \
         : esize == 2 ? kc__##name##_u16                                 \
         : esize == 4 ? kc__##name##_u32                                 \
                      : kc__##name##_u64
#define KC__PICK_INT(name)                                               \
  return pred ? NULL                                                     \
         : esize == 1 ? kc__##name##_u8                                  \
         : esize == 2 ? kc__##name##_u16                                 \
         : esize == 4 ? kc__##name##_u32                                 \
                      : kc__##name##_u64
#if defined(KC__HAVE_SHIFT_AVX2)
  if (!pred && (esize == 4 || esize == 8) && kc__vmath_levels() >= 2) {
    bool w = esize == 4;
    switch (op) {
      case KC_OP_SHIFT_LEFT: return w ? kc__shl_u32_avx2 : kc__shl_u64_avx2;
      case KC_OP_SHIFT_RIGHT_LOGICAL: return w ? kc__srl_u32_avx2 : kc__srl_u64_avx2;
      case KC_OP_SHIFT_RIGHT_ARITHMETIC: return w ? kc__sra_u32_avx2 : kc__sra_u64_avx2;
      default: break;
    }
  }
#endif
  switch (op) {
    case KC_OP_AND: KC__PICK(and);
    case KC_OP_OR: KC__PICK(or);
    case KC_OP_XOR: KC__PICK(xor);
    case KC_OP_NOT: KC__PICK(not);
    case KC_OP_SHIFT_LEFT: KC__PICK_INT(shl);
    case KC_OP_SHIFT_RIGHT_LOGICAL: KC__PICK_INT(srl);
    case KC_OP_SHIFT_RIGHT_ARITHMETIC: KC__PICK_INT(sra);
    default: return NULL;
  }
#undef KC__PICK
#undef KC__PICK_INT
}

/* f16, bf16, c64 and c128, n elements. */
static void kc__math_other_run(const kc__math_plan* plan, void* out, const void* const* ins,
                               int64_t n) {
  const void* b = plan->binary ? ins[1] : NULL;
  if (plan->type == KC__M_F16 || plan->type == KC__M_BF16) {
    kc__half_math_run(plan->op, plan->type == KC__M_BF16, ins[0], b, out, n);
  } else {
    kc__complex_math_run(plan->op, plan->type == KC__M_C128, ins[0], b, out, n);
  }
}

/* The f32 functions with a vector kernel (vmath.h); -1 for the others. */
static int kc__math_vector_fn(int32_t op) {
  switch (op) {
    case KC_OP_TANH: return KC__VM_TANH;
    case KC_OP_LOGISTIC: return KC__VM_LOGISTIC;
    case KC_OP_LOG_PLUS_ONE: return KC__VM_LOG1P;
    case KC_OP_EXPONENTIAL_MINUS_ONE: return KC__VM_EXPM1;
    case KC_OP_ERF: return KC__VM_ERF;
    case KC_OP_SQRT: return KC__VM_SQRT;
    case KC_OP_RSQRT: return KC__VM_RSQRT;
    default: return -1;
  }
}

/* Elements [0, n) of the operands and result given. */
static void kc__math_run(const kc__math_data* d, void* out, const void* const* ins, int64_t n) {
  const kc__math_plan* plan = &d->plan;
  bool binary = plan->binary;
  if (plan->type == KC__M_F32) {
    int vfn = binary ? -1 : kc__math_vector_fn(plan->op);
    if (vfn >= 0) {
      kc__vmath_f32((kc__vmath_fn)vfn, ins[0], out, n);
    } else if (binary) {
      kc__binary_f32(plan->op, ins[0], ins[1], out, n);
    } else {
      kc__unary_f32(plan->op, ins[0], out, n);
    }
  } else if (plan->type == KC__M_F64) {
    if (binary) {
      kc__binary_f64(plan->op, ins[0], ins[1], out, n);
    } else {
      kc__unary_f64(plan->op, ins[0], out, n);
    }
  } else if (d->int_loop) {
    d->int_loop(ins[0], binary ? ins[1] : NULL, out, n);
  } else {
    kc__int_kernel(d, out, ins, n);
  }
}

typedef struct kc__math_job {
  const kc__math_data* d;
  void* out;
  const void* const* ins;
} kc__math_job;

static void kc__math_range(void* p, int64_t begin, int64_t end) {
  const kc__math_job* job = p;
  const kc__math_data* d = job->d;
  size_t in_es = d->esize;
  size_t out_es = d->plan.op == KC_OP_IS_FINITE ? 1 : in_es;
  const void* ins[2];
  ins[0] = (const char*)job->ins[0] + (size_t)begin * in_es;
  ins[1] = d->plan.binary ? (const char*)job->ins[1] + (size_t)begin * in_es : NULL;
  kc__math_run(d, (char*)job->out + (size_t)begin * out_es, ins, end - begin);
}

/* Rough nanoseconds an element, for the split across the pool: the
 * vector kernels, the C library's functions, the rest. */
static double kc__math_cost(const kc__math_plan* plan) {
  bool is_float = plan->type == KC__M_F32 || plan->type == KC__M_F64;
  if (!is_float) return 1.0;
  switch (plan->op) {
    case KC_OP_ABS:
    case KC_OP_SIGN:
    case KC_OP_FLOOR:
    case KC_OP_CEIL:
    case KC_OP_ROUND_NEAREST_AFZ:
    case KC_OP_ROUND_NEAREST_EVEN:
    case KC_OP_IS_FINITE:
      return 0.5;
    default:
      return plan->type == KC__M_F32 && kc__math_vector_fn(plan->op) >= 0 ? 1.0 : 10.0;
  }
}

static void kc__math_tile(const void* data, void* out, const void* const* ins, int64_t n) {
  const kc__math_data* d = data;
  if (d->plan.type >= KC__M_F16) {
    kc__math_other_run(&d->plan, out, ins, n);
  } else {
    kc__math_run(d, out, ins, n);
  }
}

static kc_status* kc__math_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                  const void* const* ins) {
  const kc__math_data* d = ctx->data;
  if (d->plan.type >= KC__M_F16) {
    kc__math_other_run(&d->plan, out, ins, d->plan.count);
    return NULL;
  }
  kc__math_job job = {d, out, ins};
  double cost = d->int_loop ? 0.25 : kc__math_cost(&d->plan);
  kc__split_run(ctx->pool, d->plan.count, cost, kc__math_range, &job);
  return NULL;
}

static const char* const kc__no_attrs[] = {NULL};

/* `n` operands; the CUDA backend has each as an element-wise kernel. */
#define KC__MATH(OP, NAME, N)                                                                \
  {.op = (OP), .name = (NAME), .min_operands = (N), .max_operands = (N),                    \
   .attrs = kc__no_attrs, .verify = kc__math_verify, .prepare = kc__math_prepare,           \
   .kernel = kc__math_kernel, .tile = kc__math_tile, .device_elementwise = true}
#define KC__UNARY(op, name) KC__MATH(op, name, 1)
#define KC__BINARY(op, name) KC__MATH(op, name, 2)

const kc__instr_def kc__instr_math[] = {
    KC__UNARY(KC_OP_ABS, "abs"),
    KC__UNARY(KC_OP_SIGN, "sign"),
    KC__UNARY(KC_OP_SQRT, "sqrt"),
    KC__UNARY(KC_OP_RSQRT, "rsqrt"),
    KC__UNARY(KC_OP_CBRT, "cbrt"),
    KC__UNARY(KC_OP_TANH, "tanh"),
    KC__UNARY(KC_OP_LOGISTIC, "logistic"),
    KC__UNARY(KC_OP_SINE, "sine"),
    KC__UNARY(KC_OP_COSINE, "cosine"),
    KC__UNARY(KC_OP_TAN, "tan"),
    KC__UNARY(KC_OP_FLOOR, "floor"),
    KC__UNARY(KC_OP_CEIL, "ceil"),
    KC__UNARY(KC_OP_ROUND_NEAREST_AFZ, "round-nearest-afz"),
    KC__UNARY(KC_OP_ROUND_NEAREST_EVEN, "round-nearest-even"),
    KC__UNARY(KC_OP_LOG_PLUS_ONE, "log-plus-one"),
    KC__UNARY(KC_OP_EXPONENTIAL_MINUS_ONE, "exponential-minus-one"),
    KC__UNARY(KC_OP_ERF, "erf"),
    KC__UNARY(KC_OP_IS_FINITE, "is-finite"),
    KC__UNARY(KC_OP_NOT, "not"),
    KC__UNARY(KC_OP_POPCNT, "popcnt"),
    KC__UNARY(KC_OP_COUNT_LEADING_ZEROS, "count-leading-zeros"),
    KC__BINARY(KC_OP_POWER, "power"),
    KC__BINARY(KC_OP_REMAINDER, "remainder"),
    KC__BINARY(KC_OP_ATAN2, "atan2"),
    KC__BINARY(KC_OP_AND, "and"),
    KC__BINARY(KC_OP_OR, "or"),
    KC__BINARY(KC_OP_XOR, "xor"),
    KC__BINARY(KC_OP_SHIFT_LEFT, "shift-left"),
    KC__BINARY(KC_OP_SHIFT_RIGHT_ARITHMETIC, "shift-right-arithmetic"),
    KC__BINARY(KC_OP_SHIFT_RIGHT_LOGICAL, "shift-right-logical"),
};
const size_t kc__instr_math_count = KC__ARRAY_SIZE(kc__instr_math);
#undef KC__UNARY
#undef KC__BINARY
