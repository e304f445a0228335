/* The element-wise entry of the table: which (op, dtypes) the kernels
 * implement, the checks of a descriptor, and the dispatch to the family
 * of kernels (arith.cu, math.cu, convert.cu, select.cu). What
 * elementwise_supported answers is exactly what runs: the core uses it to
 * refuse the rest when it compiles a program. */
#include <stdio.h>

#include "kcall/hlo_opcode.h"
#include "kernels/elementwise_ops.h"
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

/* The arity of each op the kernels run. */
int arity_of(int32_t op) {
  if (int n = kc__ew_arity(op)) return n;
  return op == KC_OP_SELECT || op == KC_OP_CLAMP ? 3 : op == KC_OP_CONVERT ? 1 : 2;
}

/* The family that runs (op, in -> out), or F_NONE. Mirrors
 * kc__elementwise_supported (elementwise.c) and the type checks of
 * instr_math.c (the rows' domains) and instr_select.c, less complex
 * numbers and the 16-bit floats' math. */
Family family_of(int32_t op, DLDataType in, DLDataType out) {
  Type a = type_of(in), r = type_of(out);
  if (op == KC_OP_CONVERT) return a != KC__E_NONE && r != KC__E_NONE ? F_CONVERT : F_NONE;
  if (op == KC_OP_SELECT) {
    /* Moves elements: any dtype of 1, 2, 4, 8 or 16 bytes. */
    uint64_t bits = (uint64_t)in.bits * in.lanes;
    bool same = in.code == out.code && in.bits == out.bits && in.lanes == out.lanes;
    return same && (bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 128)
               ? F_SELECT
               : F_NONE;
  }
  if (a == KC__E_NONE) return F_NONE;
  bool sixteen = a == KC__E_f16 || a == KC__E_bf16;
  if (op == KC_OP_COMPARE) return r == KC__E_pred && !sixteen ? F_COMPARE : F_NONE;
  int domain = kc__ew_math_domain(op);
  if (domain && kc__ew_pred_result(op)) {
    bool f = a == KC__E_f32 || a == KC__E_f64;
    return (domain & KC__EW_FLOAT) && f && r == KC__E_pred ? F_MATH : F_NONE;
  }
  if (a != r) return F_NONE;
  if (op == KC_OP_CLAMP) return sixteen ? F_NONE : F_CLAMP;
  if (int arith = kc__ew_arith_domain(op)) {
    int have = kc__etype_is_float(a) ? KC__EW_FLOAT : kc__etype_is_int(a) ? KC__EW_INT : 0;
    return (arith & have) ? F_ARITH : F_NONE;
  }
  int have = a == KC__E_f32 || a == KC__E_f64 ? KC__EW_FLOAT
             : a == KC__E_pred                ? KC__EW_PRED
             : kc__etype_is_int(a)            ? KC__EW_INT
                                              : 0;
  return (domain & have) ? F_MATH : F_NONE;
}

const char* op_name(int32_t op) {
  if (const char* name = kc__ew_name(op)) return name;
  switch (op) {
    case KC_OP_CONVERT: return "convert";
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
    bool total_ok = !(d->direction & KC__CMP_TOTAL_ORDER) || t == KC__E_f32 || t == KC__E_f64;
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
