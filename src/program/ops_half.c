/* f16 and bf16 kernels of the math, compare, clamp, iota and reduce
 * instructions: each value is widened to f32 (exactly), the op runs in
 * f32 and its result is rounded to nearest even once, as XLA:CPU computes
 * these types. Results that are one of the operands (abs, negate's sign
 * flip, clamp, maximum) keep the operand's bits. */
#include <math.h>

#include "internal/common.h"
#include "internal/half.h"
#include "program/ops_types.h"

bool kc__type_is_half(DLDataType t) {
  return t.lanes == 1 && t.bits == 16 && (t.code == kDLFloat || t.code == kDLBfloat);
}

bool kc__type_is_complex(DLDataType t) {
  return t.lanes == 1 && t.code == kDLComplex && (t.bits == 64 || t.bits == 128);
}

static inline float kc__h2f(bool bf16, uint16_t h) {
  return bf16 ? kc__bf16_to_f32(h) : kc__f16_to_f32(h);
}

static inline uint16_t kc__f2h(bool bf16, float v) {
  return bf16 ? kc__f64_to_bf16((double)v) : kc__f64_to_f16((double)v);
}

/* XLA's sign: +-1, and x itself for +-0 and NaN. */
static float kc__signf(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : x; }

static float kc__unary_f32(int32_t op, float x) {
  switch (op) {
    case KC_OP_SIGN: return kc__signf(x);
    case KC_OP_SQRT: return sqrtf(x);
    case KC_OP_RSQRT: return 1.0f / sqrtf(x);
    case KC_OP_CBRT: return cbrtf(x);
    case KC_OP_TANH: return tanhf(x);
    case KC_OP_LOGISTIC: return 1.0f / (1.0f + expf(-x));
    case KC_OP_SINE: return sinf(x);
    case KC_OP_COSINE: return cosf(x);
    case KC_OP_TAN: return tanf(x);
    case KC_OP_FLOOR: return floorf(x);
    case KC_OP_CEIL: return ceilf(x);
    case KC_OP_ROUND_NEAREST_AFZ: return roundf(x);
    case KC_OP_ROUND_NEAREST_EVEN: return nearbyintf(x);
    case KC_OP_LOG_PLUS_ONE: return log1pf(x);
    case KC_OP_EXPONENTIAL_MINUS_ONE: return expm1f(x);
    case KC_OP_ERF: return erff(x);
    default: return NAN;
  }
}

static float kc__binary_f32(int32_t op, float x, float y) {
  switch (op) {
    case KC_OP_POWER: return powf(x, y);
    case KC_OP_REMAINDER: return fmodf(x, y);
    case KC_OP_ATAN2: return atan2f(x, y);
    default: return NAN;
  }
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
  if (b) {
    for (int64_t i = 0; i < n; ++i) {
      r[i] = kc__f2h(bf16, kc__binary_f32(op, kc__h2f(bf16, a[i]), kc__h2f(bf16, b[i])));
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) r[i] = kc__f2h(bf16, kc__unary_f32(op, kc__h2f(bf16, a[i])));
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
      float x = kc__h2f(bf16, a[i]), y = kc__h2f(bf16, b[i]);
      outcome = x < y    ? KC__ORDER_LT
                : x == y ? KC__ORDER_EQ
                : x > y  ? KC__ORDER_GT
                         : KC__ORDER_UNORDERED;
    }
    r[i] = (outcome & accept) != 0;
  }
}

/* XLA's maximum and minimum: NaN if either is NaN, else the larger
 * (smaller); the chosen operand's bits. */
static uint16_t kc__max_bits(bool bf16, uint16_t a, uint16_t b, bool is_max) {
  float x = kc__h2f(bf16, a), y = kc__h2f(bf16, b);
  if (y != y) return b;
  if (x != x) return a;
  return (is_max ? x > y : x < y) ? a : b;
}

/* clamp(lo, x, hi) = minimum(maximum(x, lo), hi), with their NaN rule. */
void kc__half_clamp_run(bool bf16, const uint16_t* lo, bool lo_scalar, const uint16_t* x,
                        const uint16_t* hi, bool hi_scalar, uint16_t* r, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t v = kc__max_bits(bf16, x[i], lo[lo_scalar ? 0 : i], true);
    r[i] = kc__max_bits(bf16, v, hi[hi_scalar ? 0 : i], false);
  }
}

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
    case KC_OP_ADD: return kc__f2h(bf16, kc__h2f(bf16, acc) + kc__h2f(bf16, x));
    case KC_OP_MULTIPLY: return kc__f2h(bf16, kc__h2f(bf16, acc) * kc__h2f(bf16, x));
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
