/* The kernels of add .. log and convert: a loop per element type (the
 * arithmetic generated from the rows of kernels/elementwise_ops.h, the
 * conversions below) so that the compiler can vectorise each, and the
 * instructions' prepare, kernel and tile over them. */
#include "program/instr/elementwise.h"

#include <complex.h>
#include <math.h>
#include <string.h>

#include "internal/common.h"
#include "kernels/elementwise_ops.h"
#include "kernels/etype.h"
#include "kernels/half.h"
#include "kernels/split.h"
#include "kernels/xla_arith.h"
#include "kernels/vmath.h"
#include "program/instr/instr_types.h"

/* The integer types, each with arithmetic loops of its own. */
#define KC__INT_TYPES(X) X(s8) X(s16) X(s32) X(s64) X(u8) X(u16) X(u32) X(u64)

bool kc__elementwise_supported(const kc__instr_def* def, DLDataType in, DLDataType out) {
  kc__etype a = kc__etype_of(in), r = kc__etype_of(out);
  if (a == KC__E_NONE || r == KC__E_NONE) return false;
  /* A complex value converts only to complex (XLA takes real() or
   * imag() for the parts). */
  if (def->elementwise_types & KC__ELEMENTWISE_CONVERT) {
    return !kc__etype_is_complex(a) || kc__etype_is_complex(r);
  }
  if (a != r || a == KC__E_pred) return false;
  uint32_t family = kc__etype_is_complex(a) ? KC__ELEMENTWISE_COMPLEX
                    : kc__etype_is_float(a) ? KC__ELEMENTWISE_FLOAT
                                      : KC__ELEMENTWISE_INT;
  return (def->elementwise_types & family) != 0;
}

/* ---- the arithmetic, exponential and log ------------------------------------- */

/* Each row of KC__EW_ARITH_OPS (kernels/elementwise_ops.h) as a typed
 * loop: the FLOAT form for f32 and f64, the INT form for the integers
 * (computed in 64 bits and cut to the width, which the compiler narrows
 * back to the type's own vector lanes). b is not read by unary rows. */
#define KC__AF_LOOP_1(fn) for (int64_t i = 0; i < n; ++i) r[i] = fn(a[i], a[i])
#define KC__AF_LOOP_2(fn) for (int64_t i = 0; i < n; ++i) r[i] = fn(a[i], b[i])
#define KC__AF_CASE(sfx, OP, N, DOM)                                          \
  case KC_OP_##OP:                                                            \
    if ((DOM) & KC__EW_FLOAT) KC__AF_LOOP_##N(kc__ew_##sfx##_##OP);           \
    break;
#define KC__AF_CASE_f32(OP, NAME, N, RES, DOM, ...) KC__AF_CASE(f32, OP, N, DOM)
#define KC__AF_CASE_f64(OP, NAME, N, RES, DOM, ...) KC__AF_CASE(f64, OP, N, DOM)
#define KC__ARITH_FLOAT(sfx, T)                                                          \
  static void kc__arith_##sfx(int32_t op, const T* a, const T* b, T* r, int64_t n) {    \
    (void)b;                                                                             \
    switch (op) {                                                                        \
      KC__EW_ARITH_OPS(KC__AF_CASE_##sfx)                                                \
      default: break;                                                                    \
    }                                                                                    \
  }
KC__ARITH_FLOAT(f32, float)
KC__ARITH_FLOAT(f64, double)
#undef KC__ARITH_FLOAT

/* The operand's bits, sign-extended for a signed type, and its value
 * (0 for an unsigned type), as the INT forms read them. */
#define KC__AI_LOAD(u, sv, v)                                                            \
  uint64_t u = S_ ? (uint64_t)(int64_t)(v) : (uint64_t)(v);                              \
  int64_t sv = S_ ? (int64_t)u : 0
#define KC__AI_LOOP_1(OP)                                                                \
  for (int64_t i = 0; i < n; ++i) {                                                      \
    KC__AI_LOAD(x, sx, a[i]);                                                            \
    r[i] = (T_)kc__ew_int_##OP(x, x, sx, sx, S_, BITS_, M_);                             \
  }
#define KC__AI_LOOP_2(OP)                                                                \
  for (int64_t i = 0; i < n; ++i) {                                                      \
    KC__AI_LOAD(x, sx, a[i]);                                                            \
    KC__AI_LOAD(y, sy, b[i]);                                                            \
    r[i] = (T_)kc__ew_int_##OP(x, y, sx, sy, S_, BITS_, M_);                             \
  }
#define KC__AI_CASE(OP, NAME, N, RES, DOM, ...)                                          \
  case KC_OP_##OP:                                                                       \
    if ((DOM) & KC__EW_INT) KC__AI_LOOP_##N(OP);                                         \
    break;
#define KC__ARITH_INT(sfx, T, SIGNED, W)                                                 \
  static void kc__arith_##sfx(int32_t op, const T* a, const T* b, T* r, int64_t n) {    \
    typedef T T_;                                                                        \
    enum { S_ = SIGNED, BITS_ = W };                                                     \
    const uint64_t M_ = (W) == 64 ? ~0ull : (1ull << ((W) % 64)) - 1;                    \
    (void)b, (void)M_;                                                                   \
    switch (op) {                                                                        \
      KC__EW_ARITH_OPS(KC__AI_CASE)                                                      \
      default: break;                                                                    \
    }                                                                                    \
  }
KC__ARITH_INT(s8, int8_t, 1, 8)
KC__ARITH_INT(s16, int16_t, 1, 16)
KC__ARITH_INT(s32, int32_t, 1, 32)
KC__ARITH_INT(s64, int64_t, 1, 64)
KC__ARITH_INT(u8, uint8_t, 0, 8)
KC__ARITH_INT(u16, uint16_t, 0, 16)
KC__ARITH_INT(u32, uint32_t, 0, 32)
KC__ARITH_INT(u64, uint64_t, 0, 64)
#undef KC__ARITH_INT
#undef KC__AI_CASE
#undef KC__AI_LOOP_1
#undef KC__AI_LOOP_2
#undef KC__AI_LOAD
#undef KC__AF_CASE_f32
#undef KC__AF_CASE_f64
#undef KC__AF_CASE
#undef KC__AF_LOOP_1
#undef KC__AF_LOOP_2

/* Each row's typed loop with its operation fixed, for every type the
 * typed loops above cover: the loop prepare picks for an instruction
 * (kc__ew_loop_of), which its kernel runs and fusion calls directly
 * (kc__elementwise_tile_loop), so that both give the same bits even where
 * the compiler may order a commutative operation's operands as it likes
 * (which NaN's sign a sum of two NaNs has). Rows a type does not have are
 * empty. */
#define KC__EW_FOR_TYPES(M, OP)                                 \
  M(OP, f32) M(OP, f64) M(OP, s8) M(OP, s16) M(OP, s32) M(OP, s64) \
  M(OP, u8) M(OP, u16) M(OP, u32) M(OP, u64)
#define KC__EW_DIRECT_FN(OP, sfx)                                                         \
  static void kc__direct_##OP##_##sfx(const void* a, const void* b, void* r, int64_t n) { \
    kc__arith_##sfx(KC_OP_##OP, a, b, r, n);                                              \
  }
#define KC__EW_DIRECT_ROW(OP, ...) KC__EW_FOR_TYPES(KC__EW_DIRECT_FN, OP)
KC__EW_ARITH_OPS(KC__EW_DIRECT_ROW)
#undef KC__EW_DIRECT_ROW
#undef KC__EW_DIRECT_FN

static kc__instr_loop_fn kc__ew_direct_of(int32_t op, kc__etype t) {
#define KC__EW_DIRECT_PICK(OP, sfx) \
  if (t == KC__E_##sfx) return kc__direct_##OP##_##sfx;
#define KC__EW_DIRECT_CASE(OP, ...) \
  case KC_OP_##OP:                  \
    KC__EW_FOR_TYPES(KC__EW_DIRECT_PICK, OP) break;
  switch (op) {
    KC__EW_ARITH_OPS(KC__EW_DIRECT_CASE)
    default:
      break;
  }
  return NULL;
#undef KC__EW_DIRECT_CASE
#undef KC__EW_DIRECT_PICK
}
#undef KC__EW_FOR_TYPES

/* f32 and f64, the vector kernel where the row has one. */
static void kc__arith_float(int32_t op, kc__etype t, const void* a, const void* b, void* r,
                            int64_t n) {
  int vfn = t == KC__E_f32 ? kc__ew_vector_fn(op) : -1;
  if (vfn >= 0) {
    kc__vmath_f32((kc__vmath_fn)vfn, a, r, n);
  } else if (t == KC__E_f32) {
    kc__arith_f32(op, a, b, r, n);
  } else {
    kc__arith_f64(op, a, b, r, n);
  }
}

/* Reads element i of any supported type as a double (exact for every
 * integer up to 2^53) or, for the integer path, as int64/uint64. */
static double kc__load_f(kc__etype t, const void* p, int64_t i) {
  switch (t) {
#define KC__LOAD(sfx, ctype, c, b)                                           \
  case KC__E_##sfx:                                                          \
    return (c) == kDLBool ? (((const uint8_t*)p)[i] ? 1.0 : 0.0)             \
                          : (double)((const ctype*)p)[i];
    KC__ETYPES(KC__LOAD)
#undef KC__LOAD
    case KC__E_f16:
      return (double)kc__f16_to_f32(((const uint16_t*)p)[i]);
    case KC__E_bf16:
      return (double)kc__bf16_to_f32(((const uint16_t*)p)[i]);
    default:
      return 0;
  }
}

static bool kc__load_i(kc__etype t, const void* p, int64_t i, int64_t* s,
                       uint64_t* u) {
  switch (t) {
    case KC__E_s8: *s = ((const int8_t*)p)[i]; return true;
    case KC__E_s16: *s = ((const int16_t*)p)[i]; return true;
    case KC__E_s32: *s = ((const int32_t*)p)[i]; return true;
    case KC__E_s64: *s = ((const int64_t*)p)[i]; return true;
    case KC__E_u8: *u = ((const uint8_t*)p)[i]; return false;
    case KC__E_u16: *u = ((const uint16_t*)p)[i]; return false;
    case KC__E_u32: *u = ((const uint32_t*)p)[i]; return false;
    case KC__E_u64: *u = ((const uint64_t*)p)[i]; return false;
    default: *u = ((const uint8_t*)p)[i] != 0; return false;
  }
}

/* Saturating conversion of a double to an integer range; NaN gives 0. */
static int64_t kc__sat_s(double v, int64_t lo, int64_t hi) {
  if (v != v) return 0;
  if (v <= (double)lo) return lo;
  if (v >= (double)hi) return hi;
  return (int64_t)v;
}
static uint64_t kc__sat_u(double v, uint64_t hi) {
  if (v != v || v <= 0) return 0;
  if (v >= (double)hi) return hi;
  return (uint64_t)v;
}

/* Integer to integer: wrap, as a C cast to the narrower unsigned type does
 * (XLA's convert between integers wraps too). */
static void kc__store_int(kc__etype t, void* p, int64_t i, uint64_t bits) {
  switch (t) {
    case KC__E_s8: ((int8_t*)p)[i] = (int8_t)(uint8_t)bits; break;
    case KC__E_s16: ((int16_t*)p)[i] = (int16_t)(uint16_t)bits; break;
    case KC__E_s32: ((int32_t*)p)[i] = (int32_t)(uint32_t)bits; break;
    case KC__E_s64: ((int64_t*)p)[i] = (int64_t)bits; break;
    case KC__E_u8: ((uint8_t*)p)[i] = (uint8_t)bits; break;
    case KC__E_u16: ((uint16_t*)p)[i] = (uint16_t)bits; break;
    case KC__E_u32: ((uint32_t*)p)[i] = (uint32_t)bits; break;
    case KC__E_u64: ((uint64_t*)p)[i] = bits; break;
    case KC__E_pred: ((uint8_t*)p)[i] = bits != 0; break;
    default: break;
  }
}

static void kc__store_from_double(kc__etype t, void* p, int64_t i, double v) {
  switch (t) {
    case KC__E_f32: ((float*)p)[i] = (float)v; break;
    case KC__E_f64: ((double*)p)[i] = v; break;
    case KC__E_s8: ((int8_t*)p)[i] = (int8_t)kc__sat_s(v, INT8_MIN, INT8_MAX); break;
    case KC__E_s16: ((int16_t*)p)[i] = (int16_t)kc__sat_s(v, INT16_MIN, INT16_MAX); break;
    case KC__E_s32: ((int32_t*)p)[i] = (int32_t)kc__sat_s(v, INT32_MIN, INT32_MAX); break;
    case KC__E_s64: ((int64_t*)p)[i] = kc__sat_s(v, INT64_MIN, INT64_MAX); break;
    case KC__E_u8: ((uint8_t*)p)[i] = (uint8_t)kc__sat_u(v, UINT8_MAX); break;
    case KC__E_u16: ((uint16_t*)p)[i] = (uint16_t)kc__sat_u(v, UINT16_MAX); break;
    case KC__E_u32: ((uint32_t*)p)[i] = (uint32_t)kc__sat_u(v, UINT32_MAX); break;
    case KC__E_u64: ((uint64_t*)p)[i] = kc__sat_u(v, UINT64_MAX); break;
    case KC__E_pred: ((uint8_t*)p)[i] = v != 0; break;
    case KC__E_f16: ((uint16_t*)p)[i] = kc__f64_to_f16(v); break;
    case KC__E_bf16: ((uint16_t*)p)[i] = kc__f64_to_bf16(v); break;
    default: break;
  }
}

/* ---- typed conversions -------------------------------------------------------- */

/* The types with a direct loop for every pair: X(suffix, C type, kind,
 * bits), kind 0 float, 1 signed, 2 unsigned, 3 pred. */
#define KC__CVT_TYPES(X)         \
  X(f32, float, 0, 32)           \
  X(f64, double, 0, 64)          \
  X(s8, int8_t, 1, 8)            \
  X(s16, int16_t, 1, 16)         \
  X(s32, int32_t, 1, 32)         \
  X(s64, int64_t, 1, 64)         \
  X(u8, uint8_t, 2, 8)           \
  X(u16, uint16_t, 2, 16)        \
  X(u32, uint32_t, 2, 32)        \
  X(u64, uint64_t, 2, 64)        \
  X(pred, uint8_t, 3, 8)

/* A double to each type as kc__store_from_double stores it: the integers
 * of 32 bits or fewer clamp (their bounds are exact doubles, so this is the
 * same saturation, and it vectorises), the 64-bit ones saturate as above. */
#define KC__SAT_NARROW(sfx, T, lo, hi)                  \
  static inline T kc__sat_##sfx(double v) {             \
    v = v != v ? 0.0 : v;                               \
    v = v < (double)(lo) ? (double)(lo) : v;            \
    v = v > (double)(hi) ? (double)(hi) : v;            \
    return (T)v;                                        \
  }
KC__SAT_NARROW(s8, int8_t, INT8_MIN, INT8_MAX)
KC__SAT_NARROW(s16, int16_t, INT16_MIN, INT16_MAX)
KC__SAT_NARROW(s32, int32_t, INT32_MIN, INT32_MAX)
KC__SAT_NARROW(u8, uint8_t, 0, UINT8_MAX)
KC__SAT_NARROW(u16, uint16_t, 0, UINT16_MAX)
KC__SAT_NARROW(u32, uint32_t, 0, UINT32_MAX)
#undef KC__SAT_NARROW
static inline int64_t kc__sat_s64(double v) { return kc__sat_s(v, INT64_MIN, INT64_MAX); }
static inline uint64_t kc__sat_u64(double v) { return kc__sat_u(v, UINT64_MAX); }
static inline float kc__sat_f32(double v) { return (float)v; }
static inline double kc__sat_f64(double v) { return v; }
static inline uint8_t kc__sat_pred(double v) { return v != 0; }

/* The same from an f32 without going through double: the bounds of the
 * 8- and 16-bit types are exact floats; s32's top, 2^31 - 1, is not, so
 * the values from 2^31 up give it and the rest clamp below 2^31. */
#define KC__SATF_NARROW(sfx, T, lo, hi)                 \
  static inline T kc__satf_##sfx(float v) {             \
    v = v != v ? 0.0f : v;                              \
    v = v < (float)(lo) ? (float)(lo) : v;              \
    v = v > (float)(hi) ? (float)(hi) : v;              \
    return (T)(int32_t)v;                               \
  }
KC__SATF_NARROW(s8, int8_t, INT8_MIN, INT8_MAX)
KC__SATF_NARROW(s16, int16_t, INT16_MIN, INT16_MAX)
KC__SATF_NARROW(u8, uint8_t, 0, UINT8_MAX)
KC__SATF_NARROW(u16, uint16_t, 0, UINT16_MAX)
#undef KC__SATF_NARROW
static inline int32_t kc__satf_s32(float v) {
  float c = v != v ? 0.0f : v;
  c = c < -2147483648.0f ? -2147483648.0f : c;
  int32_t r = (int32_t)(c < 2147483520.0f ? c : 2147483520.0f);
  return c >= 2147483648.0f ? INT32_MAX : r;
}
static inline uint32_t kc__satf_u32(float v) { return kc__sat_u32((double)v); }
static inline int64_t kc__satf_s64(float v) { return kc__sat_s64((double)v); }
static inline uint64_t kc__satf_u64(float v) { return kc__sat_u64((double)v); }
static inline float kc__satf_f32(float v) { return v; }
static inline double kc__satf_f64(float v) { return (double)v; }
static inline uint8_t kc__satf_pred(float v) { return v != 0; }

/* One element of type FT (kind fk, fb bits) to type TT (kind tk): to and
 * from pred through x != 0; integer to float directly when the integer
 * fits a double exactly in fewer than 33 bits (one rounding either way),
 * else through double; float to integer saturating; integer to integer
 * wrapping through the unsigned type of the result's width. The kinds are
 * constants, so each loop keeps one branch. */
#define KC__CVT_ELEM(x, FT, fk, fb, ts, TT, tk, tb)                                     \
  ((tk) == 3 || (fk) == 3 ? (TT)((x) != 0)                                             \
   : (tk) == 0 ? ((fk) != 0 && (fb) <= 32 ? (TT)(x) : (TT)(double)(x))                 \
   : (fk) == 0 && (fb) == 32 ? kc__satf_##ts((float)(x))                               \
   : (fk) == 0 ? kc__sat_##ts((double)(x))                                             \
   : (tb) == 8  ? (TT)(uint8_t)(x)                                                     \
   : (tb) == 16 ? (TT)(uint16_t)(x)                                                    \
   : (tb) == 32 ? (TT)(uint32_t)(x)                                                    \
                : (TT)(uint64_t)(x))

typedef void (*kc__convert_loop)(const void* a, void* r, int64_t n);

#define KC__CVT_TO(ts, TT, tk, tb, fs, FT, fk, fb)                                      \
  static void kc__cvt_##fs##_##ts(const void* a, void* r, int64_t n) {                 \
    const FT* x = a;                                                                   \
    TT* y = r;                                                                         \
    for (int64_t i = 0; i < n; ++i) y[i] = KC__CVT_ELEM(x[i], FT, fk, fb, ts, TT, tk, tb); \
  }
#define KC__CVT_FROM(fs, FT, fk, fb)                                                    \
  KC__CVT_TO(f32, float, 0, 32, fs, FT, fk, fb)                                        \
  KC__CVT_TO(f64, double, 0, 64, fs, FT, fk, fb)                                       \
  KC__CVT_TO(s8, int8_t, 1, 8, fs, FT, fk, fb)                                         \
  KC__CVT_TO(s16, int16_t, 1, 16, fs, FT, fk, fb)                                      \
  KC__CVT_TO(s32, int32_t, 1, 32, fs, FT, fk, fb)                                      \
  KC__CVT_TO(s64, int64_t, 1, 64, fs, FT, fk, fb)                                      \
  KC__CVT_TO(u8, uint8_t, 2, 8, fs, FT, fk, fb)                                        \
  KC__CVT_TO(u16, uint16_t, 2, 16, fs, FT, fk, fb)                                     \
  KC__CVT_TO(u32, uint32_t, 2, 32, fs, FT, fk, fb)                                     \
  KC__CVT_TO(u64, uint64_t, 2, 64, fs, FT, fk, fb)                                     \
  KC__CVT_TO(pred, uint8_t, 3, 8, fs, FT, fk, fb)
KC__CVT_TYPES(KC__CVT_FROM)
#undef KC__CVT_FROM
#undef KC__CVT_TO
#undef KC__CVT_ELEM

/* [from][to], in the order of KC__CVT_TYPES, which is the order of the
 * kc__etype values up to KC__E_pred (kernels/etype.h). */
_Static_assert(KC__E_f32 == 0 && KC__E_u64 == 9 && KC__E_pred == 10,
               "kc__convert_loops follows the kc__etype order");
static const kc__convert_loop kc__convert_loops[KC__E_pred + 1][KC__E_pred + 1] = {
#define KC__CVT_ROW(fs, FT, fk, fb)                                                     \
  {kc__cvt_##fs##_f32, kc__cvt_##fs##_f64, kc__cvt_##fs##_s8,  kc__cvt_##fs##_s16,      \
   kc__cvt_##fs##_s32, kc__cvt_##fs##_s64, kc__cvt_##fs##_u8,  kc__cvt_##fs##_u16,      \
   kc__cvt_##fs##_u32, kc__cvt_##fs##_u64, kc__cvt_##fs##_pred},
    KC__CVT_TYPES(KC__CVT_ROW)
#undef KC__CVT_ROW
};
#undef KC__CVT_TYPES

static void kc__convert_complex(kc__etype from, kc__etype to, const void* a, void* r, int64_t n);

static void kc__convert(kc__etype from, kc__etype to, const void* a, void* r, int64_t n) {
  if (from <= KC__E_pred && to <= KC__E_pred) {
    kc__convert_loops[from][to](a, r, n);
    return;
  }
  if (kc__etype_is_complex(to)) {
    kc__convert_complex(from, to, a, r, n);
    return;
  }
  if (kc__etype_is_float(from) || kc__etype_is_float(to)) {
    if (from == KC__E_f64 && to == KC__E_f32) {
      for (int64_t i = 0; i < n; ++i) ((float*)r)[i] = (float)((const double*)a)[i];
      return;
    }
    /* The half floats and f32, the converts around every f16 and bf16
     * computation of XLA's optimized HLO: on the bits, rounded once. */
    bool half_from = from == KC__E_f16 || from == KC__E_bf16;
    bool half_to = to == KC__E_f16 || to == KC__E_bf16;
    if (half_from && to == KC__E_f32) {
      const uint16_t* h = a;
      for (int64_t i = 0; i < n; ++i) ((float*)r)[i] = kc__half_to_f32(from == KC__E_bf16, h[i]);
      return;
    }
    if (from == KC__E_f32 && half_to) {
      const float* f = a;
      for (int64_t i = 0; i < n; ++i) ((uint16_t*)r)[i] = kc__f32_to_half(to == KC__E_bf16, f[i]);
      return;
    }
    /* Exact: an int64 beyond 2^53 rounds to the nearest double first,
     * which is the value XLA's convert also produces for f64; for f32 it
     * can differ by one rounding step. */
    for (int64_t i = 0; i < n; ++i) kc__store_from_double(to, r, i, kc__load_f(from, a, i));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t s = 0;
    uint64_t u = 0;
    uint64_t bits = kc__load_i(from, a, i, &s, &u) ? (uint64_t)s : u;
    kc__store_int(to, r, i, bits);
  }
}

/* f16 and bf16: in chunks through f32, each result rounded once. */
static void kc__run_small(int32_t op, kc__etype t, const void* a, const void* b, void* result,
                          int64_t n) {
  enum { CHUNK = 256 };
  float x[CHUNK], y[CHUNK], z[CHUNK];
  const uint16_t* ha = a;
  const uint16_t* hb = b;
  uint16_t* hr = result;
  bool half = t == KC__E_f16;
  for (int64_t at = 0; at < n; at += CHUNK) {
    int64_t m = n - at < CHUNK ? n - at : CHUNK;
    for (int64_t i = 0; i < m; ++i) {
      x[i] = half ? kc__f16_to_f32(ha[at + i]) : kc__bf16_to_f32(ha[at + i]);
      if (hb) y[i] = half ? kc__f16_to_f32(hb[at + i]) : kc__bf16_to_f32(hb[at + i]);
    }
    kc__arith_float(op, KC__E_f32, x, hb ? y : NULL, z, m);
    for (int64_t i = 0; i < m; ++i) hr[at + i] = kc__f32_to_half(!half, z[i]);
  }
}

/* To complex: a real value is the real part; complex to complex rounds
 * each part. */
static void kc__convert_complex(kc__etype from, kc__etype to, const void* a, void* r, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    double re, im = 0;
    if (from == KC__E_c64) {
      re = (double)((const float*)a)[2 * i];
      im = (double)((const float*)a)[2 * i + 1];
    } else if (from == KC__E_c128) {
      re = ((const double*)a)[2 * i];
      im = ((const double*)a)[2 * i + 1];
    } else {
      re = kc__load_f(from, a, i);
      if (!kc__etype_is_float(from)) {
        int64_t s = 0;
        uint64_t u = 0;
        re = kc__load_i(from, a, i, &s, &u) ? (double)s : (double)u;
      }
    }
    if (to == KC__E_c64) {
      ((float*)r)[2 * i] = (float)re;
      ((float*)r)[2 * i + 1] = (float)im;
    } else {
      ((double*)r)[2 * i] = re;
      ((double*)r)[2 * i + 1] = im;
    }
  }
}

void kc__elementwise_run(int32_t op, DLDataType in, DLDataType out,
                         const void* a, const void* b, void* result,
                         int64_t n) {
  kc__etype t = kc__etype_of(in);
  if (op == KC_OP_CONVERT) {
    kc__convert(t, kc__etype_of(out), a, result, n);
    return;
  }
  bool unary = kc__ew_arity(op) == 1;
  if (t == KC__E_f16 || t == KC__E_bf16) {
    kc__run_small(op, t, a, unary ? NULL : b, result, n);
    return;
  }
  if (kc__etype_is_complex(t)) {
    kc__complex_math_run(op, t == KC__E_c128, a, unary ? NULL : b, result, n);
    return;
  }
  switch (t) {
    case KC__E_f32:
    case KC__E_f64:
      kc__arith_float(op, t, a, b, result, n);
      break;
#define KC__DISPATCH(sfx)                                          \
  case KC__E_##sfx:                                                \
    kc__arith_##sfx(op, a, b, result, n);                          \
    break;
    KC__INT_TYPES(KC__DISPATCH)
#undef KC__DISPATCH
    default:
      break;
  }
}

/* ---- the instructions' prepare, kernel and tile -------------------------------- */

typedef struct kc__ew_data {
  int32_t op;
  bool binary;
  kc__instr_loop_fn loop; /* the typed loop of op, where one runs it all; else NULL */
  DLDataType in, out;
  size_t in_size, out_size;
  int64_t count;
  double cost; /* nanoseconds an element, for the split (kc__ew_cost_of) */
} kc__ew_data;

/* A vector kernel about a nanosecond an element (exp and log, vmath.h;
 * f32, and f16 and bf16 through f32), the rest their row's COST (the
 * arithmetic a fraction of one), a conversion a fraction of one. */
static double kc__ew_cost_of(const kc__ew_data* d) {
  if (d->op == KC_OP_CONVERT) return 0.25;
  kc__etype t = kc__etype_of(d->in);
  bool through_f32 = t == KC__E_f32 || t == KC__E_f16 || t == KC__E_bf16;
  if (through_f32 && kc__ew_vector_fn(d->op) >= 0) return 1.0;
  return kc__ew_cost(d->op);
}

/* The typed loop that computes op on `t` by itself (the integers, and f32
 * and f64 where no vector kernel does), or NULL: what kc__elementwise_run
 * would pick on every run, picked once. */
static kc__instr_loop_fn kc__ew_loop_of(int32_t op, DLDataType in, DLDataType out) {
  kc__etype t = kc__etype_of(in);
  if (op == KC_OP_CONVERT || !kc_dtype_equal(in, out)) return NULL;
  if (t == KC__E_f32 && kc__ew_vector_fn(op) >= 0) return NULL;
  return kc__ew_direct_of(op, t);
}

kc_status* kc__elementwise_prepare(const kc_program* p, const kc__instr* in,
                                   const kc__prepare_ctx* ctx, const void** out_data) {
  kc__ew_data* d = kc__arena_alloc(ctx->arena, sizeof *d);
  if (!d) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  d->op = in->op;
  d->binary = in->num_operands > 1;
  d->in = kc_shape_get_dtype(kc__instr_operand(p, in, 0));
  d->out = kc_shape_get_dtype(in->shape);
  d->in_size = kc_dtype_get_size(d->in);
  d->out_size = kc_dtype_get_size(d->out);
  d->count = kc__shape_elements(in->shape);
  d->cost = kc__ew_cost_of(d);
  d->loop = kc__ew_loop_of(d->op, d->in, d->out);
  *out_data = d;
  return NULL;
}

/* n elements of d's instruction: its typed loop when prepare chose one. */
static void kc__ew_apply(const kc__ew_data* d, const void* a, const void* b, void* r, int64_t n) {
  if (d->loop) {
    d->loop(a, b, r, n);
  } else {
    kc__elementwise_run(d->op, d->in, d->out, a, b, r, n);
  }
}

void kc__elementwise_tile(const void* data, void* out, const void* const* ins, int64_t n) {
  const kc__ew_data* d = data;
  kc__ew_apply(d, ins[0], d->binary ? ins[1] : NULL, out, n);
}

/* The typed loop prepare chose (kc__ew_loop_of), if any. */
kc__instr_loop_fn kc__elementwise_tile_loop(const void* data) {
  const kc__ew_data* d = data;
  return d->loop;
}

double kc__elementwise_tile_cost(const void* data) {
  return ((const kc__ew_data*)data)->cost;
}

typedef struct kc__ew_job {
  const kc__ew_data* d;
  const char* a;
  const char* b;
  char* r;
} kc__ew_job;

static void kc__ew_range(void* p, int64_t begin, int64_t end) {
  const kc__ew_job* job = p;
  const kc__ew_data* d = job->d;
  size_t in_at = (size_t)begin * d->in_size;
  kc__ew_apply(d, job->a + in_at, job->b ? job->b + in_at : NULL,
               job->r + (size_t)begin * d->out_size, end - begin);
}

kc_status* kc__elementwise_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                  const void* const* ins) {
  const kc__ew_data* d = ctx->data;
  kc__ew_job job = {d, ins[0], d->binary ? ins[1] : NULL, out};
  kc__split_run(ctx->pool, d->count, d->cost, kc__ew_range, &job);
  return NULL;
}
