/* The element-wise math of src/program/instr/instr_math.c on f32 and f64 (the
 * transcendental functions, rounding, abs, sign, power, remainder,
 * atan2, is-finite) and on the integers and pred (abs, sign, not,
 * popcnt, count-leading-zeros, power, remainder, and, or, xor and the
 * shifts), with its semantics: sign(NaN) = NaN and sign(-0) = -0, rsqrt
 * as 1 / sqrt, integers wrap, x % 0 = x, x % -1 = 0, x ** negative = 0
 * except for 1 and -1, shifts by the width or more give 0 (or the sign
 * for arithmetic right shifts). */
#include "kcall/hlo_opcode.h"
#include "kernels/cuda/kernels.cuh"

namespace kc_cuda {
namespace {

/* ---- floats ----------------------------------------------------------------- */

/* The C library's names for float and double. */
#define KC__FN1(name, fname)                                      \
  __device__ inline float m_##name(float x) { return fname##f(x); } \
  __device__ inline double m_##name(double x) { return fname(x); }
KC__FN1(abs, fabs)
KC__FN1(sqrt, sqrt)
KC__FN1(cbrt, cbrt)
KC__FN1(tanh, tanh)
KC__FN1(exp, exp)
KC__FN1(sin, sin)
KC__FN1(cos, cos)
KC__FN1(tan, tan)
KC__FN1(floor, floor)
KC__FN1(ceil, ceil)
KC__FN1(round, round)
KC__FN1(rint, rint)
KC__FN1(log1p, log1p)
KC__FN1(expm1, expm1)
KC__FN1(erf, erf)
#undef KC__FN1
__device__ inline float m_pow(float x, float y) { return powf(x, y); }
__device__ inline double m_pow(double x, double y) { return pow(x, y); }
__device__ inline float m_fmod(float x, float y) { return fmodf(x, y); }
__device__ inline double m_fmod(double x, double y) { return fmod(x, y); }
__device__ inline float m_atan2(float x, float y) { return atan2f(x, y); }
__device__ inline double m_atan2(double x, double y) { return atan2(x, y); }

template <int OP, class F>
struct FUn {
  __device__ F operator()(F x) const {
    if constexpr (OP == KC_OP_ABS) return m_abs(x);
    else if constexpr (OP == KC_OP_SIGN) return x > 0 ? (F)1 : x < 0 ? (F)-1 : x;
    else if constexpr (OP == KC_OP_SQRT) return m_sqrt(x);
    else if constexpr (OP == KC_OP_RSQRT) return (F)1 / m_sqrt(x);
    else if constexpr (OP == KC_OP_CBRT) return m_cbrt(x);
    else if constexpr (OP == KC_OP_TANH) return m_tanh(x);
    else if constexpr (OP == KC_OP_LOGISTIC) return (F)1 / ((F)1 + m_exp(-x));
    else if constexpr (OP == KC_OP_SINE) return m_sin(x);
    else if constexpr (OP == KC_OP_COSINE) return m_cos(x);
    else if constexpr (OP == KC_OP_TAN) return m_tan(x);
    else if constexpr (OP == KC_OP_FLOOR) return m_floor(x);
    else if constexpr (OP == KC_OP_CEIL) return m_ceil(x);
    else if constexpr (OP == KC_OP_ROUND_NEAREST_AFZ) return m_round(x);
    else if constexpr (OP == KC_OP_ROUND_NEAREST_EVEN) return m_rint(x);
    else if constexpr (OP == KC_OP_LOG_PLUS_ONE) return m_log1p(x);
    else if constexpr (OP == KC_OP_EXPONENTIAL_MINUS_ONE) return m_expm1(x);
    else return m_erf(x);
  }
};

template <class F>
struct IsFinite {
  __device__ pred operator()(F x) const { return pred{(uint8_t)(isfinite(x) ? 1 : 0)}; }
};

template <int OP, class F>
struct FBin {
  __device__ F operator()(F x, F y) const {
    if constexpr (OP == KC_OP_POWER) return m_pow(x, y);
    else if constexpr (OP == KC_OP_REMAINDER) return m_fmod(x, y);
    else return m_atan2(x, y);
  }
};

template <class F>
kc_status* float_op(const Launch& l, int32_t op, const void* a, const void* b, void* r) {
  switch (op) {
#define KC__F1(OP) \
  case OP: return run1<FUn<OP, F>, F, F>(l, {}, a, r);
    KC__F1(KC_OP_ABS)
    KC__F1(KC_OP_SIGN)
    KC__F1(KC_OP_SQRT)
    KC__F1(KC_OP_RSQRT)
    KC__F1(KC_OP_CBRT)
    KC__F1(KC_OP_TANH)
    KC__F1(KC_OP_LOGISTIC)
    KC__F1(KC_OP_SINE)
    KC__F1(KC_OP_COSINE)
    KC__F1(KC_OP_TAN)
    KC__F1(KC_OP_FLOOR)
    KC__F1(KC_OP_CEIL)
    KC__F1(KC_OP_ROUND_NEAREST_AFZ)
    KC__F1(KC_OP_ROUND_NEAREST_EVEN)
    KC__F1(KC_OP_LOG_PLUS_ONE)
    KC__F1(KC_OP_EXPONENTIAL_MINUS_ONE)
    KC__F1(KC_OP_ERF)
#undef KC__F1
    case KC_OP_IS_FINITE: return run1<IsFinite<F>, F, pred>(l, {}, a, r);
    case KC_OP_POWER: return run2<FBin<KC_OP_POWER, F>, F, F>(l, {}, a, b, r);
    case KC_OP_REMAINDER: return run2<FBin<KC_OP_REMAINDER, F>, F, F>(l, {}, a, b, r);
    case KC_OP_ATAN2: return run2<FBin<KC_OP_ATAN2, F>, F, F>(l, {}, a, b, r);
    default: return nullptr;
  }
}

/* ---- integers ----------------------------------------------------------------- */

template <class T>
struct Int {
  using U = typename std::make_unsigned<T>::type;
  static constexpr bool S = std::is_signed<T>::value;
  static constexpr unsigned BITS = sizeof(T) * 8;
  /* The shift count: the second operand's bits as unsigned. */
  __device__ static uint64_t count(T b) { return (uint64_t)(U)b; }
};

__device__ inline uint64_t ipow(uint64_t base, int64_t exp, bool is_signed) {
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

template <int OP, class T>
struct IUn {
  __device__ T operator()(T a) const {
    using I = Int<T>;
    using U = typename I::U;
    if constexpr (OP == KC_OP_ABS) {
      if constexpr (I::S) return a < 0 ? (T)((U)0 - (U)a) : a;
      else return a;
    } else if constexpr (OP == KC_OP_SIGN) {
      if constexpr (I::S) return (T)(a > 0 ? 1 : a < 0 ? -1 : 0);
      else return (T)(a != 0);
    } else if constexpr (OP == KC_OP_NOT) {
      return (T)~(U)a;
    } else if constexpr (OP == KC_OP_POPCNT) {
      return (T)__popcll((unsigned long long)(U)a);
    } else {
      return (T)(__clzll((unsigned long long)(U)a) - (int)(64 - I::BITS));
    }
  }
};

template <int OP, class T>
struct IBin {
  __device__ T operator()(T a, T b) const {
    using I = Int<T>;
    using U = typename I::U;
    if constexpr (OP == KC_OP_AND) {
      return (T)((U)a & (U)b);
    } else if constexpr (OP == KC_OP_OR) {
      return (T)((U)a | (U)b);
    } else if constexpr (OP == KC_OP_XOR) {
      return (T)((U)a ^ (U)b);
    } else if constexpr (OP == KC_OP_POWER) {
      uint64_t base = I::S ? (uint64_t)(int64_t)a : (uint64_t)a;
      int64_t e = I::S ? (int64_t)b : (int64_t)((uint64_t)b & 0x7FFFFFFFFFFFFFFFull);
      return (T)ipow(base, e, I::S);
    } else if constexpr (OP == KC_OP_REMAINDER) {
      if (b == 0) return a;
      if constexpr (I::S) {
        if (b == (T)-1) return 0;
      }
      return (T)(a % b);
    } else if constexpr (OP == KC_OP_SHIFT_LEFT) {
      uint64_t n = I::count(b);
      return n >= I::BITS ? (T)0 : (T)((uint64_t)(U)a << n);
    } else if constexpr (OP == KC_OP_SHIFT_RIGHT_LOGICAL) {
      uint64_t n = I::count(b);
      return n >= I::BITS ? (T)0 : (T)((U)a >> n);
    } else {
      /* Arithmetic: the bits as the signed type of the width, as XLA
       * shifts an unsigned operand too. */
      using S = typename std::make_signed<T>::type;
      uint64_t n = I::count(b);
      S s = (S)a;
      if (n >= I::BITS) return (T)(s < 0 ? (S)-1 : (S)0);
      return (T)(S)(s >> n);
    }
  }
};

/* pred: not, and, or, xor of 0 and 1, kept to 0 and 1. */
template <int OP>
struct PredOp {
  __device__ pred operator()(pred a) const { return pred{(uint8_t)(~a.v & 1)}; }
  __device__ pred operator()(pred a, pred b) const {
    uint8_t r = OP == KC_OP_AND ? a.v & b.v : OP == KC_OP_OR ? a.v | b.v : a.v ^ b.v;
    return pred{(uint8_t)(r & 1)};
  }
};

template <class T>
kc_status* int_op(const Launch& l, int32_t op, const void* a, const void* b, void* r) {
  switch (op) {
#define KC__I1(OP) \
  case OP: return run1<IUn<OP, T>, T, T>(l, {}, a, r);
#define KC__I2(OP) \
  case OP: return run2<IBin<OP, T>, T, T>(l, {}, a, b, r);
    KC__I1(KC_OP_ABS)
    KC__I1(KC_OP_SIGN)
    KC__I1(KC_OP_NOT)
    KC__I1(KC_OP_POPCNT)
    KC__I1(KC_OP_COUNT_LEADING_ZEROS)
    KC__I2(KC_OP_POWER)
    KC__I2(KC_OP_REMAINDER)
    KC__I2(KC_OP_AND)
    KC__I2(KC_OP_OR)
    KC__I2(KC_OP_XOR)
    KC__I2(KC_OP_SHIFT_LEFT)
    KC__I2(KC_OP_SHIFT_RIGHT_ARITHMETIC)
    KC__I2(KC_OP_SHIFT_RIGHT_LOGICAL)
#undef KC__I1
#undef KC__I2
    default: return nullptr;
  }
}

}  // namespace

kc_status* math(const Launch& l, int32_t op, Type t, const void* a, const void* b, void* r) {
  switch (t) {
    case T_F32: return float_op<float>(l, op, a, b, r);
    case T_F64: return float_op<double>(l, op, a, b, r);
    case T_PRED:
      switch (op) {
        case KC_OP_NOT: return run1<PredOp<KC_OP_NOT>, pred, pred>(l, {}, a, r);
        case KC_OP_AND: return run2<PredOp<KC_OP_AND>, pred, pred>(l, {}, a, b, r);
        case KC_OP_OR: return run2<PredOp<KC_OP_OR>, pred, pred>(l, {}, a, b, r);
        case KC_OP_XOR: return run2<PredOp<KC_OP_XOR>, pred, pred>(l, {}, a, b, r);
        default: return nullptr;
      }
    case T_S8: return int_op<int8_t>(l, op, a, b, r);
    case T_S16: return int_op<int16_t>(l, op, a, b, r);
    case T_S32: return int_op<int32_t>(l, op, a, b, r);
    case T_S64: return int_op<int64_t>(l, op, a, b, r);
    case T_U8: return int_op<uint8_t>(l, op, a, b, r);
    case T_U16: return int_op<uint16_t>(l, op, a, b, r);
    case T_U32: return int_op<uint32_t>(l, op, a, b, r);
    case T_U64: return int_op<uint64_t>(l, op, a, b, r);
    default: return nullptr;
  }
}

}  // namespace kc_cuda
