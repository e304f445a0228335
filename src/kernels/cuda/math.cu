/* The element-wise math operations (kernels/elementwise_ops.h) on f32 and
 * f64, the integers and pred: each row's FLOAT and INT forms, the same
 * host-and-device functions src/program/instr/instr_math.c runs, as
 * functors of the grid-stride loops. */
#include "kcall/hlo_opcode.h"
#include "kernels/elementwise_ops.h"
#include "kernels/cuda/kernels.cuh"

namespace kc_cuda {
namespace {

/* ---- the rows of kernels/elementwise_ops.h as functors ----------------------- */

/* Row OP's FLOAT form on F (float or double). */
#define KC__CU_FLOAT(OP, ...)                                                               \
  template <class F>                                                                        \
  struct Flt_##OP {                                                                         \
    __device__ static F ev(F x, F y) {                                                      \
      if constexpr (sizeof(F) == 4) return kc__ew_f32_##OP(x, y);                           \
      else return kc__ew_f64_##OP(x, y);                                                    \
    }                                                                                       \
    __device__ F operator()(F x) const { return ev(x, x); }                                 \
    __device__ F operator()(F x, F y) const { return ev(x, y); }                            \
  };
KC__EW_MATH_OPS(KC__CU_FLOAT)
#undef KC__CU_FLOAT

/* Row OP's INT form on T, in 64 bits as the host computes it. */
#define KC__CU_INT(OP, ...)                                                                 \
  template <class T>                                                                        \
  struct Int_##OP {                                                                         \
    __device__ static T ev(T x, T y) {                                                      \
      constexpr bool S = std::is_signed<T>::value;                                          \
      constexpr unsigned BITS = sizeof(T) * 8;                                              \
      constexpr uint64_t M = BITS == 64 ? ~0ull : (1ull << (BITS % 64)) - 1;                \
      int64_t sa = S ? (int64_t)x : 0, sb = S ? (int64_t)y : 0;                             \
      uint64_t a = S ? (uint64_t)sa : (uint64_t)x, b = S ? (uint64_t)sb : (uint64_t)y;      \
      return (T)kc__ew_int_##OP(a, b, sa, sb, S, BITS, M);                                  \
    }                                                                                       \
    __device__ T operator()(T x) const { return ev(x, x); }                                 \
    __device__ T operator()(T x, T y) const { return ev(x, y); }                            \
  };                                                                                        \
  template <class P = pred>                                                                 \
  struct Pred_##OP {                                                                        \
    __device__ static P ev(P x, P y) {                                                      \
      return P{(uint8_t)(kc__ew_int_##OP(x.v, y.v, 0, 0, false, 8, 0xFF) & 1)};             \
    }                                                                                       \
    __device__ P operator()(P x) const { return ev(x, x); }                                 \
    __device__ P operator()(P x, P y) const { return ev(x, y); }                            \
  };
KC__EW_MATH_OPS(KC__CU_INT)
#undef KC__CU_INT

/* A PRED row's value as pred. */
template <class Fn, class F>
struct ToPred {
  __device__ pred operator()(F x) const { return pred{(uint8_t)(Fn{}(x) != 0 ? 1 : 0)}; }
};

/* The launch of a row of N operands with result RES, functor Fn on A. */
#define KC__CU_RUN_1_SAME(Fn, A) return run1<Fn, A, A>(l, {}, a, r)
#define KC__CU_RUN_2_SAME(Fn, A) return run2<Fn, A, A>(l, {}, a, b, r)
#define KC__CU_RUN_1_PRED(Fn, A) return run1<ToPred<Fn, A>, A, pred>(l, {}, a, r)

template <class F>
kc_status* float_op(const Launch& l, int32_t op, const void* a, const void* b, void* r) {
  switch (op) {
#define KC__CU_FLOAT_CASE(OP, NAME, N, RES, DOM, ...)                   \
  case KC_OP_##OP:                                                      \
    if constexpr (((DOM) & KC__EW_FLOAT) != 0) {                        \
      KC__CU_RUN_##N##_##RES(Flt_##OP<F>, F);                           \
    } else {                                                            \
      return nullptr;                                                   \
    }
    KC__EW_MATH_OPS(KC__CU_FLOAT_CASE)
#undef KC__CU_FLOAT_CASE
    default: return nullptr;
  }
}

template <class T>
kc_status* int_op(const Launch& l, int32_t op, const void* a, const void* b, void* r) {
  switch (op) {
#define KC__CU_INT_CASE(OP, NAME, N, RES, DOM, ...)                     \
  case KC_OP_##OP:                                                      \
    if constexpr (((DOM) & KC__EW_INT) != 0) {                          \
      KC__CU_RUN_##N##_##RES(Int_##OP<T>, T);                           \
    } else {                                                            \
      return nullptr;                                                   \
    }
    KC__EW_MATH_OPS(KC__CU_INT_CASE)
#undef KC__CU_INT_CASE
    default: return nullptr;
  }
}

kc_status* pred_op(const Launch& l, int32_t op, const void* a, const void* b, void* r) {
  switch (op) {
#define KC__CU_PRED_CASE(OP, NAME, N, RES, DOM, ...)                    \
  case KC_OP_##OP:                                                      \
    if constexpr (((DOM) & KC__EW_PRED) != 0) {                         \
      KC__CU_RUN_##N##_##RES(Pred_##OP<>, pred);                          \
    } else {                                                            \
      return nullptr;                                                   \
    }
    KC__EW_MATH_OPS(KC__CU_PRED_CASE)
#undef KC__CU_PRED_CASE
    default: return nullptr;
  }
}

}  // namespace

kc_status* math(const Launch& l, int32_t op, Type t, const void* a, const void* b, void* r) {
  switch (t) {
    case KC__E_f32: return float_op<float>(l, op, a, b, r);
    case KC__E_f64: return float_op<double>(l, op, a, b, r);
    case KC__E_pred: return pred_op(l, op, a, b, r);
    case KC__E_s8: return int_op<int8_t>(l, op, a, b, r);
    case KC__E_s16: return int_op<int16_t>(l, op, a, b, r);
    case KC__E_s32: return int_op<int32_t>(l, op, a, b, r);
    case KC__E_s64: return int_op<int64_t>(l, op, a, b, r);
    case KC__E_u8: return int_op<uint8_t>(l, op, a, b, r);
    case KC__E_u16: return int_op<uint16_t>(l, op, a, b, r);
    case KC__E_u32: return int_op<uint32_t>(l, op, a, b, r);
    case KC__E_u64: return int_op<uint64_t>(l, op, a, b, r);
    default: return nullptr;
  }
}

}  // namespace kc_cuda
