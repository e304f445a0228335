/* f16 and bf16 kernels of the math, compare, clamp, iota and reduce
 * instructions: each value is widened to f32 (exactly), the op runs in
 * f32 and its result is rounded to nearest even once, as XLA:CPU computes
 * these types. Results that are one of the operands (abs, negate's sign
 * flip, clamp, maximum) keep the operand's bits. */
#include <math.h>
#include <string.h>

#include "internal/common.h"
#include "kernels/elementwise_ops.h"
#include "kernels/half.h"
#include "kernels/xla_arith.h"
#include "program/instr/instr_types.h"

bool kc__type_is_half(DLDataType t) {
  return t.lanes == 1 && t.bits == 16 && (t.code == kDLFloat || t.code == kDLBfloat);
}

bool kc__type_is_complex(DLDataType t) {
  return t.lanes == 1 && t.code == kDLComplex && (t.bits == 64 || t.bits == 128);
}

void kc__half_widen(bool bf16, const uint16_t* a, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = kc__half_to_f32(bf16, a[i]);
}

void kc__half_narrow(bool bf16, const float* a, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = kc__f32_to_half(bf16, a[i]);
}

/* x = op(x) or op(x, y) on n f32 values, in place: the row's FLOAT form
 * (kernels/elementwise_ops.h). */
static void kc__math_f32(int32_t op, float* x, const float* y, int64_t n) {
#define KC__EACH_1(fn) for (int64_t i = 0; i < n; ++i) x[i] = fn(x[i], x[i])
#define KC__EACH_2(fn) for (int64_t i = 0; i < n; ++i) x[i] = fn(x[i], y[i])
  switch (op) {
#define KC__HALF_CASE(OP, NAME, N, RES, DOM, ...)          \
  case KC_OP_##OP:                                         \
    if ((DOM) & KC__EW_FLOAT) KC__EACH_##N(kc__ew_f32_##OP); \
    return;
    KC__EW_MATH_OPS(KC__HALF_CASE)
#undef KC__HALF_CASE
    default:
      for (int64_t i = 0; i < n; ++i) x[i] = NAN;
      return;
  }
#undef KC__EACH_1
#undef KC__EACH_2
}

void kc__half_math_run(int32_t op, bool bf16, const uint16_t* a, const uint16_t* b,
                       void* out, int64_t n) {
  uint16_t* r = out;
  /* The exponent field, all ones for infinities and NaN. */
  uint16_t exp_mask = bf16 ? 0x7F80u : 0x7C00u;
  switch (op) {
    case KC_OP_ABS:
      for (int64_t i = 0; i < n; ++i) r[i] = (uint16_t)(a[i] & 0x7FFFu);
      return;
    case KC_OP_IS_FINITE: {
      uint8_t* p = out;
      for (int64_t i = 0; i < n; ++i) p[i] = (a[i] & exp_mask) != exp_mask;
      return;
    }
    default:
      break;
  }
  enum { CHUNK = 256 };
  float x[CHUNK], y[CHUNK];
  for (int64_t at = 0; at < n; at += CHUNK) {
    int64_t m = n - at < CHUNK ? n - at : CHUNK;
    kc__half_widen(bf16, a + at, x, m);
    if (b) kc__half_widen(bf16, b + at, y, m);
    kc__math_f32(op, x, y, m);
    kc__half_narrow(bf16, x, r + at, m);
  }
}

/* The key of a 16-bit float in XLA's total order, as a signed integer. */
static int32_t kc__total_key_16(uint16_t h) {
  int32_t v = (int16_t)h;
  return v < 0 ? v ^ 0x7FFF : v;
}

void kc__half_compare_run(unsigned accept, bool total, bool bf16, const uint16_t* a,
                          const uint16_t* b, uint8_t* r, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    unsigned outcome;
    if (total) {
      int32_t x = kc__total_key_16(a[i]), y = kc__total_key_16(b[i]);
      outcome = x < y ? KC__ORDER_LT : x == y ? KC__ORDER_EQ : KC__ORDER_GT;
    } else {
      float x = kc__half_to_f32(bf16, a[i]), y = kc__half_to_f32(bf16, b[i]);
      outcome = x < y    ? KC__ORDER_LT
                : x == y ? KC__ORDER_EQ
                : x > y  ? KC__ORDER_GT
                         : KC__ORDER_UNORDERED;
    }
    r[i] = (outcome & accept) != 0;
  }
}

/* XLA's maximum and minimum (kernels/xla_arith.h) on the operands' values;
 * the chosen operand's bits. */
static uint16_t kc__max_bits(bool bf16, uint16_t a, uint16_t b, bool is_max) {
  float x = kc__half_to_f32(bf16, a), y = kc__half_to_f32(bf16, b);
  float r = is_max ? kc__fmax_f32(x, y) : kc__fmin_f32(x, y);
  if (r != r) return x != x ? a : b;
  return memcmp(&r, &x, sizeof r) == 0 ? a : b;
}

/* clamp(lo, x, hi) = minimum(maximum(x, lo), hi), with their NaN rule. */
void kc__half_clamp_run(bool bf16, const uint16_t* lo, bool lo_scalar, const uint16_t* x,
                        const uint16_t* hi, bool hi_scalar, uint16_t* r, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t v = kc__max_bits(bf16, x[i], lo[lo_scalar ? 0 : i], true);
    r[i] = kc__max_bits(bf16, v, hi[hi_scalar ? 0 : i], false);
  }
}

/* From the integer directly (through f32 a bf16 index above 2^24 would be
 * rounded twice). */
void kc__half_iota_run(bool bf16, uint16_t* r, int64_t outer, int64_t len, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < len; ++k) {
      uint16_t v = bf16 ? kc__f64_to_bf16((double)k) : kc__f64_to_f16((double)k);
      for (int64_t i = 0; i < inner; ++i) *r++ = v;
    }
  }
}

static uint16_t kc__reduce_step(int32_t op, bool bf16, uint16_t acc, uint16_t x) {
  switch (op) {
    case KC_OP_ADD: return kc__f32_to_half(bf16, kc__half_to_f32(bf16, acc) + kc__half_to_f32(bf16, x));
    case KC_OP_MULTIPLY: return kc__f32_to_half(bf16, kc__half_to_f32(bf16, acc) * kc__half_to_f32(bf16, x));
    case KC_OP_MAXIMUM: return kc__max_bits(bf16, acc, x, true);
    default: return kc__max_bits(bf16, acc, x, false);
  }
}

void kc__half_reduce_row(int32_t op, bool bf16, uint16_t* acc, bool fold, const uint16_t* x,
                         int64_t n) {
  if (fold) {
    uint16_t a = acc[0];
    for (int64_t i = 0; i < n; ++i) a = kc__reduce_step(op, bf16, a, x[i]);
    acc[0] = a;
    return;
  }
  for (int64_t i = 0; i < n; ++i) acc[i] = kc__reduce_step(op, bf16, acc[i], x[i]);
}
