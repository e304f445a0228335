/* The element-wise math operations (kernels/elementwise_ops.h) on f32 and
 * f64, the integers and pred: each row's FLOAT and INT forms, the same
 * host-and-device functions src/program/instr/instr_math.c runs, as
 * functors of the grid-stride loops. */
#include "kcall/hlo_opcode.h"
#include "kernels/elementwise_ops.h"
#include "kernels/cuda/kernels.cuh"

namespace kc_cuda {
namespace {

/* ---- the rows of KC__EW_MATH_OPS ------------------------------------------------- */

KC__EW_MATH_OPS(KC__CU_ROW_FUNCTORS)

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
