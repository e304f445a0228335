/* The element-wise entry of the table: which (op, dtypes) the kernels
 * implement, the checks of a descriptor, and the dispatch to the family
 * of kernels (arith.cu, math.cu, convert.cu, select.cu). What
 * elementwise_supported answers is exactly what runs: the core uses it to
 * refuse the rest when it compiles a program. */
#include <stdio.h>

#include "kcall/hlo_opcode.h"
#include "kernels/cuda/kernels.cuh"

namespace kc_cuda {

kc_status* launch_status(const Launch& l) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return nullptr;
  return kc__cuda_error(err, "launching the %s kernel (%lld elements) on cuda:%d", l.what,
                        (long long)l.n, (int)l.ordinal);
}

namespace {

enum Family { F_NONE, F_ARITH, F_MATH, F_CONVERT, F_COMPARE, F_SELECT, F_CLAMP };

/* Which element types an op of src/program/instr/instr_math.c takes. */
enum { ON_FLOAT = 1, ON_INT = 2, ON_PRED = 4 };

int math_domain(int32_t op) {
  switch (op) {
    case KC_OP_ABS:
    case KC_OP_SIGN:
    case KC_OP_POWER:
    case KC_OP_REMAINDER:
      return ON_FLOAT | ON_INT;
    case KC_OP_NOT:
    case KC_OP_AND:
    case KC_OP_OR:
    case KC_OP_XOR:
      return ON_INT | ON_PRED;
    case KC_OP_SHIFT_LEFT:
    case KC_OP_SHIFT_RIGHT_ARITHMETIC:
    case KC_OP_SHIFT_RIGHT_LOGICAL:
    case KC_OP_POPCNT:
    case KC_OP_COUNT_LEADING_ZEROS:
      return ON_INT;
    default:
      return ON_FLOAT;
  }
}

bool is_math_op(int32_t op) {
  return (op >= KC_OP_ABS && op <= KC_OP_COUNT_LEADING_ZEROS) ||
         (op >= KC_OP_POWER && op <= KC_OP_SHIFT_RIGHT_LOGICAL);
}

/* The arity of each op the kernels run. */
int arity_of(int32_t op) {
  if (op == KC_OP_SELECT || op == KC_OP_CLAMP) return 3;
  if (op == KC_OP_NEGATE || op == KC_OP_EXPONENTIAL || op == KC_OP_LOG || op == KC_OP_CONVERT)
    return 1;
  if (op >= KC_OP_ABS && op <= KC_OP_COUNT_LEADING_ZEROS) return 1;
  return 2;
}

/* The family that runs (op, in -> out), or F_NONE. Mirrors
 * kc__elementwise_supported (elementwise.c) and the type checks of
 * instr_math.c and instr_select.c, less complex numbers. */
Family family_of(int32_t op, DLDataType in, DLDataType out) {
  Type a = type_of(in), r = type_of(out);
  if (op == KC_OP_CONVERT) return a != T_NONE && r != T_NONE ? F_CONVERT : F_NONE;
  if (op == KC_OP_SELECT) {
    /* Moves elements: any dtype of 1, 2, 4, 8 or 16 bytes. */
    uint64_t bits = (uint64_t)in.bits * in.lanes;
    bool same = in.code == out.code && in.bits == out.bits && in.lanes == out.lanes;
    return same && (bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 128)
               ? F_SELECT
               : F_NONE;
  }
  if (a == T_NONE) return F_NONE;
  bool sixteen = a == T_F16 || a == T_BF16;
  if (op == KC_OP_COMPARE) return r == T_PRED && !sixteen ? F_COMPARE : F_NONE;
  if (op == KC_OP_IS_FINITE) return (a == T_F32 || a == T_F64) && r == T_PRED ? F_MATH : F_NONE;
  if (a != r) return F_NONE;
  if (op == KC_OP_CLAMP) return sixteen ? F_NONE : F_CLAMP;
  if (op >= KC_OP_ADD && op <= KC_OP_NEGATE) return a == T_PRED ? F_NONE : F_ARITH;
  if (op == KC_OP_EXPONENTIAL || op == KC_OP_LOG) return is_float(a) ? F_ARITH : F_NONE;
  if (!is_math_op(op)) return F_NONE;
  int have = a == T_F32 || a == T_F64 ? ON_FLOAT : a == T_PRED ? ON_PRED : is_int(a) ? ON_INT : 0;
  return (math_domain(op) & have) ? F_MATH : F_NONE;
}

const char* op_name(int32_t op) {
  switch (op) {
    case KC_OP_ADD: return "add";
    case KC_OP_SUBTRACT: return "subtract";
    case KC_OP_MULTIPLY: return "multiply";
    case KC_OP_DIVIDE: return "divide";
    case KC_OP_MAXIMUM: return "maximum";
    case KC_OP_MINIMUM: return "minimum";
    case KC_OP_NEGATE: return "negate";
    case KC_OP_EXPONENTIAL: return "exponential";
    case KC_OP_LOG: return "log";
    case KC_OP_CONVERT: return "convert";
    case KC_OP_ABS: return "abs";
    case KC_OP_SIGN: return "sign";
    case KC_OP_SQRT: return "sqrt";
    case KC_OP_RSQRT: return "rsqrt";
    case KC_OP_CBRT: return "cbrt";
    case KC_OP_TANH: return "tanh";
    case KC_OP_LOGISTIC: return "logistic";
    case KC_OP_SINE: return "sine";
    case KC_OP_COSINE: return "cosine";
    case KC_OP_TAN: return "tan";
    case KC_OP_FLOOR: return "floor";
    case KC_OP_CEIL: return "ceil";
    case KC_OP_ROUND_NEAREST_AFZ: return "round-nearest-afz";
    case KC_OP_ROUND_NEAREST_EVEN: return "round-nearest-even";
    case KC_OP_LOG_PLUS_ONE: return "log-plus-one";
    case KC_OP_EXPONENTIAL_MINUS_ONE: return "exponential-minus-one";
    case KC_OP_ERF: return "erf";
    case KC_OP_IS_FINITE: return "is-finite";
    case KC_OP_NOT: return "not";
    case KC_OP_POPCNT: return "popcnt";
    case KC_OP_COUNT_LEADING_ZEROS: return "count-leading-zeros";
    case KC_OP_POWER: return "power";
    case KC_OP_REMAINDER: return "remainder";
    case KC_OP_ATAN2: return "atan2";
    case KC_OP_AND: return "and";
    case KC_OP_OR: return "or";
    case KC_OP_XOR: return "xor";
    case KC_OP_SHIFT_LEFT: return "shift-left";
    case KC_OP_SHIFT_RIGHT_ARITHMETIC: return "shift-right-arithmetic";
    case KC_OP_SHIFT_RIGHT_LOGICAL: return "shift-right-logical";
    case KC_OP_COMPARE: return "compare";
    case KC_OP_SELECT: return "select";
    case KC_OP_CLAMP: return "clamp";
    default: return "(not an element-wise op)";
  }
}

void dtype_text(DLDataType t, char* buf, size_t cap) {
  const char* code = t.code == kDLInt      ? "s"
                     : t.code == kDLUInt   ? "u"
                     : t.code == kDLFloat  ? "f"
                     : t.code == kDLBfloat ? "bf"
                     : t.code == kDLBool   ? "pred"
                     : t.code == kDLComplex ? "c"
                                            : "code";
  if (t.code == kDLBool && t.bits == 8 && t.lanes == 1) {
    snprintf(buf, cap, "pred");
  } else if (t.lanes == 1) {
    snprintf(buf, cap, "%s%u", code, (unsigned)t.bits);
  } else {
    snprintf(buf, cap, "%s%ux%u", code, (unsigned)t.bits, (unsigned)t.lanes);
  }
}

}  // namespace
}  // namespace kc_cuda

using namespace kc_cuda;

extern "C" bool kc__cuda_elementwise_supported(int32_t op, DLDataType in, DLDataType out) {
  return family_of(op, in, out) != F_NONE;
}

extern "C" kc_status* kc__cuda_elementwise_launch(int32_t ordinal, cudaStream_t stream,
                                                  const kc__elementwise_desc* d) {
  Family f = family_of(d->op, d->in_dtype, d->out_dtype);
  const char* name = op_name(d->op);
  if (f == F_NONE) {
    char a[32], b[32];
    dtype_text(d->in_dtype, a, sizeof a);
    dtype_text(d->out_dtype, b, sizeof b);
    return KC__CUDA_STATUS(KC_UNIMPLEMENTED,
                           "elementwise on cuda:%d: op %d (%s) is not implemented for %s -> %s",
                           (int)ordinal, (int)d->op, name, a, b);
  }
  int want = arity_of(d->op);
  if (d->arity != want) {
    return KC__CUDA_STATUS(KC_INVALID_ARGUMENT,
                           "elementwise %s on cuda:%d: arity: expected %d, got %d", name,
                           (int)ordinal, want, (int)d->arity);
  }
  if (d->count < 0) {
    return KC__CUDA_STATUS(KC_INVALID_ARGUMENT,
                           "elementwise %s on cuda:%d: count: expected 0 or more, got %lld", name,
                           (int)ordinal, (long long)d->count);
  }
  int dir = d->direction & ~KC__CMP_TOTAL_ORDER;
  if (f == F_COMPARE) {
    Type t = type_of(d->in_dtype);
    bool total_ok = !(d->direction & KC__CMP_TOTAL_ORDER) || t == T_F32 || t == T_F64;
    if (dir < KC__CMP_EQ || dir > KC__CMP_GE || !total_ok ||
        (d->direction & ~(KC__CMP_TOTAL_ORDER | 7))) {
      return KC__CUDA_STATUS(KC_INVALID_ARGUMENT,
                             "elementwise compare on cuda:%d: direction: expected 1 (EQ) to 6 "
                             "(GE), with the total-order flag (16) for f32 and f64 only, got %d",
                             (int)ordinal, (int)d->direction);
    }
  }
  if (d->count == 0) return nullptr;
  for (int i = 0; i < want; ++i) {
    if (!d->in[i]) {
      return KC__CUDA_STATUS(KC_INVALID_ARGUMENT, "elementwise %s on cuda:%d: in[%d] is NULL",
                             name, (int)ordinal, i);
    }
  }
  if (!d->out) {
    return KC__CUDA_STATUS(KC_INVALID_ARGUMENT, "elementwise %s on cuda:%d: out is NULL", name,
                           (int)ordinal);
  }
  if (kc_status* s = kc__cuda_use_device(ordinal)) return s;
  Launch l{stream, ordinal, d->count, name};
  Type t = type_of(d->in_dtype);
  switch (f) {
    case F_ARITH: return arith(l, d->op, t, d->in[0], d->in[1], d->out);
    case F_MATH: return math(l, d->op, t, d->in[0], d->in[1], d->out);
    case F_CONVERT: return convert(l, t, type_of(d->out_dtype), d->in[0], d->out);
    case F_COMPARE: return compare(l, d->direction, t, d->in[0], d->in[1], d->out);
    case F_SELECT:
      return select(l, (size_t)d->in_dtype.bits * d->in_dtype.lanes / 8, d->in[0], d->in[1],
                    d->in[2], d->out);
    case F_CLAMP: return clamp(l, t, d->in[0], d->in[1], d->in[2], d->out);
    default: return nullptr;
  }
}
