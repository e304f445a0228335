/* add, subtract, multiply, divide, maximum, minimum, negate, exponential
 * and log, as src/program/instr/elementwise.c computes them: integers wrap
 * (through an unsigned type at least as wide as int), x / 0 = -1 and
 * INT_MIN / -1 = INT_MIN; float maximum and minimum propagate NaN; f16
 * and bf16 are computed in f32 and rounded once. */
#include "kcall/hlo_opcode.h"
#include "kernels/cuda/kernels.cuh"

namespace kc_cuda {
namespace {

/* Integer arithmetic on T through W. */
template <class T>
struct IntOps {
  using U = typename std::make_unsigned<T>::type;
  using W = typename std::conditional<(sizeof(T) < 4), uint32_t, U>::type;
  __device__ static T add(T a, T b) { return (T)((W)(U)a + (W)(U)b); }
  __device__ static T sub(T a, T b) { return (T)((W)(U)a - (W)(U)b); }
  __device__ static T mul(T a, T b) { return (T)((W)(U)a * (W)(U)b); }
  __device__ static T neg(T a) { return (T)((W)0 - (W)(U)a); }
  __device__ static T div(T a, T b) {
    if (b == 0) return (T)~(U)0;
    if (std::is_signed<T>::value && a == (T)((U)1 << (sizeof(T) * 8 - 1)) && b == (T)~(U)0) return a;
    return (T)(a / b);
  }
};

__device__ float exp_of(float x) { return expf(x); }
__device__ double exp_of(double x) { return exp(x); }
__device__ float log_of(float x) { return logf(x); }
__device__ double log_of(double x) { return log(x); }

template <int OP, class T, bool FLOAT = std::is_floating_point<T>::value>
struct Bin;
template <int OP, class T>
struct Bin<OP, T, false> {
  __device__ T operator()(T a, T b) const {
    if constexpr (OP == KC_OP_ADD) return IntOps<T>::add(a, b);
    else if constexpr (OP == KC_OP_SUBTRACT) return IntOps<T>::sub(a, b);
    else if constexpr (OP == KC_OP_MULTIPLY) return IntOps<T>::mul(a, b);
    else if constexpr (OP == KC_OP_DIVIDE) return IntOps<T>::div(a, b);
    else if constexpr (OP == KC_OP_MAXIMUM) return a > b ? a : b;
    else return a < b ? a : b;
  }
};
template <int OP, class T>
struct Bin<OP, T, true> {
  __device__ T operator()(T a, T b) const {
    if constexpr (OP == KC_OP_ADD) return a + b;
    else if constexpr (OP == KC_OP_SUBTRACT) return a - b;
    else if constexpr (OP == KC_OP_MULTIPLY) return a * b;
    else if constexpr (OP == KC_OP_DIVIDE) return a / b;
    else if constexpr (OP == KC_OP_MAXIMUM) return fmax_host(a, b);
    else return fmin_host(a, b);
  }
};

template <int OP, class T>
struct Un {
  __device__ T operator()(T a) const {
    if constexpr (OP == KC_OP_NEGATE) {
      if constexpr (std::is_floating_point<T>::value) return -a;
      else return IntOps<T>::neg(a);
    } else if constexpr (OP == KC_OP_EXPONENTIAL) {
      return exp_of(a);
    } else {
      return log_of(a);
    }
  }
};

/* f16 and bf16: the f32 operation, rounded once. */
template <class Op, class H>
struct Half1 {
  Op op;
  __device__ H operator()(H a) const { return from_f64<H>::make((double)op(to_f32(a))); }
};
template <class Op, class H>
struct Half2 {
  Op op;
  __device__ H operator()(H a, H b) const {
    return from_f64<H>::make((double)op(to_f32(a), to_f32(b)));
  }
};

template <int OP, class T>
kc_status* run_op(const Launch& l, const void* a, const void* b, void* r) {
  constexpr bool unary = OP == KC_OP_NEGATE || OP == KC_OP_EXPONENTIAL || OP == KC_OP_LOG;
  constexpr bool half = std::is_same<T, f16>::value || std::is_same<T, bf16>::value;
  if constexpr (half) {
    if constexpr (unary) return run1<Half1<Un<OP, float>, T>, T, T>(l, {}, a, r);
    else return run2<Half2<Bin<OP, float>, T>, T, T>(l, {}, a, b, r);
  } else if constexpr (std::is_same<T, pred>::value) {
    return nullptr; /* refused by the caller */
  } else if constexpr (unary) {
    if constexpr (OP != KC_OP_NEGATE && !std::is_floating_point<T>::value) {
      return nullptr; /* refused by the caller */
    } else {
      return run1<Un<OP, T>, T, T>(l, {}, a, r);
    }
  } else {
    return run2<Bin<OP, T>, T, T>(l, {}, a, b, r);
  }
}

}  // namespace

kc_status* arith(const Launch& l, int32_t op, Type t, const void* a, const void* b, void* r) {
  return with_type(t, [&](auto tag) -> kc_status* {
    using T = typename decltype(tag)::type;
    switch (op) {
      case KC_OP_ADD: return run_op<KC_OP_ADD, T>(l, a, b, r);
      case KC_OP_SUBTRACT: return run_op<KC_OP_SUBTRACT, T>(l, a, b, r);
      case KC_OP_MULTIPLY: return run_op<KC_OP_MULTIPLY, T>(l, a, b, r);
      case KC_OP_DIVIDE: return run_op<KC_OP_DIVIDE, T>(l, a, b, r);
      case KC_OP_MAXIMUM: return run_op<KC_OP_MAXIMUM, T>(l, a, b, r);
      case KC_OP_MINIMUM: return run_op<KC_OP_MINIMUM, T>(l, a, b, r);
      case KC_OP_NEGATE: return run_op<KC_OP_NEGATE, T>(l, a, b, r);
      case KC_OP_EXPONENTIAL: return run_op<KC_OP_EXPONENTIAL, T>(l, a, b, r);
      case KC_OP_LOG: return run_op<KC_OP_LOG, T>(l, a, b, r);
      default: return nullptr;
    }
  });
}

}  // namespace kc_cuda
