/* add, subtract, multiply, divide, maximum, minimum, negate, exponential
 * and log: the rows of KC__EW_ARITH_OPS (kernels/elementwise_ops.h), the
 * FLOAT and INT forms src/program/instr/elementwise.c runs, as functors;
 * f16 and bf16 are computed in f32 and rounded once. */
#include "kcall/hlo_opcode.h"
#include "kernels/cuda/kernels.cuh"

namespace kc_cuda {
namespace {

KC__EW_ARITH_OPS(KC__CU_ROW_FUNCTORS)

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

#define KC__CU_HALF_1(Fn) return run1<Half1<Fn, T>, T, T>(l, {}, a, r)
#define KC__CU_HALF_2(Fn) return run2<Half2<Fn, T>, T, T>(l, {}, a, b, r)

/* Row OP on T: floats by the FLOAT form (f16 and bf16 through f32), the
 * integers by the INT form; pred and the types outside the row's domain
 * are refused by the caller (nullptr). */
template <class T>
kc_status* arith_of(const Launch& l, int32_t op, const void* a, const void* b, void* r) {
  constexpr bool half = std::is_same<T, f16>::value || std::is_same<T, bf16>::value;
  constexpr bool flt = std::is_floating_point<T>::value;
  constexpr bool integer = std::is_integral<T>::value;
  switch (op) {
#define KC__CU_ARITH_CASE(OP, NAME, N, RES, DOM, ...)                               \
  case KC_OP_##OP:                                                                  \
    if constexpr (half && ((DOM) & KC__EW_FLOAT) != 0) {                            \
      KC__CU_HALF_##N(Flt_##OP<float>);                                             \
    } else if constexpr (flt && ((DOM) & KC__EW_FLOAT) != 0) {                      \
      KC__CU_RUN_##N##_SAME(Flt_##OP<T>, T);                                        \
    } else if constexpr (integer && ((DOM) & KC__EW_INT) != 0) {                    \
      KC__CU_RUN_##N##_SAME(Int_##OP<T>, T);                                        \
    } else {                                                                        \
      return nullptr;                                                               \
    }
    KC__EW_ARITH_OPS(KC__CU_ARITH_CASE)
#undef KC__CU_ARITH_CASE
    default: return nullptr;
  }
}

}  // namespace

kc_status* arith(const Launch& l, int32_t op, Type t, const void* a, const void* b, void* r) {
  return with_type(t, [&](auto tag) -> kc_status* {
    using T = typename decltype(tag)::type;
    return arith_of<T>(l, op, a, b, r);
  });
}

}  // namespace kc_cuda
