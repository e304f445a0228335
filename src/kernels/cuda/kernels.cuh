/*
 * The element types of the built-in kernels, conversions with the host's
 * exact rounding (src/kernels/half.h, src/program/instr/elementwise.c), and the
 * grid-stride loops every kernel is made of. CUDA C++; never installed.
 */
#ifndef KCALL_KERNELS_CUDA_KERNELS_CUH_
#define KCALL_KERNELS_CUDA_KERNELS_CUH_

#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "kernels/elementwise_ops.h"
#include "kernels/etype.h"
#include "kernels/half.h"
#include "runtime/cuda/cuda_internal.h"

namespace kc_cuda {

/* The element types: kcall's one enumeration (kernels/etype.h). */
using Type = kc__etype;

/* The element type of `t` when the kernels have it: every kc__etype but
 * the complex ones, which they leave to the host; else KC__E_NONE. */
inline Type type_of(DLDataType t) {
  Type e = kc__etype_of(t);
  return kc__etype_is_complex(e) ? KC__E_NONE : e;
}

/* Storage of the 16-bit floats: their bits. */
struct f16 { uint16_t bits; };
struct bf16 { uint16_t bits; };
/* Storage of pred: one byte, 0 or 1. */
struct pred { uint8_t v; };

/* ---- 16-bit floats, rounded as src/kernels/half.h rounds ------------------- */

__device__ inline float to_f32(f16 h) { return kc__f16_to_f32(h.bits); }
__device__ inline float to_f32(bf16 h) { return kc__bf16_to_f32(h.bits); }

/* The host's maximum and minimum of floats (src/kernels/xla_arith.h, the
 * same functions), for any F. */
template <class F> __device__ inline F fmax_host(F a, F b) {
  if constexpr (sizeof(F) == 4) return kc__fmax_f32(a, b);
  else return kc__fmax_f64(a, b);
}
template <class F> __device__ inline F fmin_host(F a, F b) {
  if constexpr (sizeof(F) == 4) return kc__fmin_f32(a, b);
  else return kc__fmin_f64(a, b);
}

template <class T> struct from_f64;
template <> struct from_f64<f16> {
  __device__ static f16 make(double v) { return f16{kc__f64_to_f16(v)}; }
};
template <> struct from_f64<bf16> {
  __device__ static bf16 make(double v) { return bf16{kc__f64_to_bf16(v)}; }
};

/* ---- grid-stride loops --------------------------------------------------------- */

#define KC__CUDA_FOR(i, n)                                                      \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);     \
       i += (int64_t)blockDim.x * gridDim.x)

template <class Op, class A, class R>
__global__ void map1(Op op, const A* __restrict__ a, R* __restrict__ r, int64_t n) {
  KC__CUDA_FOR(i, n) r[i] = op(a[i]);
}

template <class Op, class A, class R>
__global__ void map2(Op op, const A* __restrict__ a, const A* __restrict__ b,
                     R* __restrict__ r, int64_t n) {
  KC__CUDA_FOR(i, n) r[i] = op(a[i], b[i]);
}

template <class Op, class A, class B, class R>
__global__ void map3(Op op, const A* __restrict__ a, const B* __restrict__ b,
                     const B* __restrict__ c, R* __restrict__ r, int64_t n) {
  KC__CUDA_FOR(i, n) r[i] = op(a[i], b[i], c[i]);
}

/* ---- the rows of kernels/elementwise_ops.h as functors ----------------------- */

/* Row OP's forms, as functors of the loops above: Flt_<OP><F> its FLOAT
 * form on F (float or double), Int_<OP><T> its INT form on T, in 64 bits
 * as the host computes it, Pred_<OP><> on pred (its INT form's low bit).
 * Each unit generates those of the rows it runs:
 * KC__EW_MATH_OPS(KC__CU_ROW_FUNCTORS). */
#define KC__CU_ROW_FUNCTORS(OP, ...)                                                        \
  template <class F>                                                                        \
  struct Flt_##OP {                                                                         \
    __device__ static F ev(F x, F y) {                                                      \
      if constexpr (sizeof(F) == 4) return kc__ew_f32_##OP(x, y);                           \
      else return kc__ew_f64_##OP(x, y);                                                    \
    }                                                                                       \
    __device__ F operator()(F x) const { return ev(x, x); }                                 \
    __device__ F operator()(F x, F y) const { return ev(x, y); }                            \
  };                                                                                        \
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

/* A PRED row's value as pred. */
template <class Fn, class F>
struct ToPred {
  __device__ pred operator()(F x) const { return pred{(uint8_t)(Fn{}(x) != 0 ? 1 : 0)}; }
};

/* What a launcher needs to say about a failed launch. */
struct Launch {
  cudaStream_t stream;
  int32_t ordinal;
  int64_t n;
  const char* what; /* "add", "convert", ... */
};

/* Reports a failed launch (a kernel image missing for the device, bad
 * geometry): the error is the thread's last, and is cleared. */
kc_status* launch_status(const Launch& l);

template <class Op, class A, class R>
kc_status* run1(const Launch& l, Op op, const void* a, void* r) {
  map1<<<kc__cuda_grid_for(l.n), KC__CUDA_BLOCK, 0, l.stream>>>(
      op, static_cast<const A*>(a), static_cast<R*>(r), l.n);
  return launch_status(l);
}

template <class Op, class A, class R>
kc_status* run2(const Launch& l, Op op, const void* a, const void* b, void* r) {
  map2<<<kc__cuda_grid_for(l.n), KC__CUDA_BLOCK, 0, l.stream>>>(
      op, static_cast<const A*>(a), static_cast<const A*>(b), static_cast<R*>(r), l.n);
  return launch_status(l);
}

template <class Op, class A, class B, class R>
kc_status* run3(const Launch& l, Op op, const void* a, const void* b, const void* c, void* r) {
  map3<<<kc__cuda_grid_for(l.n), KC__CUDA_BLOCK, 0, l.stream>>>(
      op, static_cast<const A*>(a), static_cast<const B*>(b), static_cast<const B*>(c),
      static_cast<R*>(r), l.n);
  return launch_status(l);
}

/* The launch of a row of N operands with result RES, functor Fn on A. */
#define KC__CU_RUN_1_SAME(Fn, A) return run1<Fn, A, A>(l, {}, a, r)
#define KC__CU_RUN_2_SAME(Fn, A) return run2<Fn, A, A>(l, {}, a, b, r)
#define KC__CU_RUN_1_PRED(Fn, A) return run1<ToPred<Fn, A>, A, pred>(l, {}, a, r)

/* The launchers of each family (each in its own file, compiled apart);
 * `t` and `rt` are the operand and result types, already checked. */
kc_status* convert(const Launch& l, Type from, Type to, const void* a, void* r);
kc_status* arith(const Launch& l, int32_t op, Type t, const void* a, const void* b, void* r);
kc_status* math(const Launch& l, int32_t op, Type t, const void* a, const void* b, void* r);
kc_status* compare(const Launch& l, int32_t direction, Type t, const void* a, const void* b,
                   void* r);
kc_status* select(const Launch& l, size_t esize, const void* p, const void* a, const void* b,
                  void* r);
kc_status* clamp(const Launch& l, Type t, const void* lo, const void* x, const void* hi, void* r);

/* A type as a value, for generic lambdas: f(Tag<C>{}). */
template <class C> struct Tag { using type = C; };

/* Calls f(Tag<C>{}) with C the storage type of `t`; NULL for KC__E_NONE. */
template <class F>
kc_status* with_type(Type t, F&& f) {
  switch (t) {
    case KC__E_pred: return f(Tag<pred>{});
    case KC__E_s8: return f(Tag<int8_t>{});
    case KC__E_s16: return f(Tag<int16_t>{});
    case KC__E_s32: return f(Tag<int32_t>{});
    case KC__E_s64: return f(Tag<int64_t>{});
    case KC__E_u8: return f(Tag<uint8_t>{});
    case KC__E_u16: return f(Tag<uint16_t>{});
    case KC__E_u32: return f(Tag<uint32_t>{});
    case KC__E_u64: return f(Tag<uint64_t>{});
    case KC__E_f16: return f(Tag<f16>{});
    case KC__E_bf16: return f(Tag<bf16>{});
    case KC__E_f32: return f(Tag<float>{});
    case KC__E_f64: return f(Tag<double>{});
    default: return nullptr;
  }
}

}  // namespace kc_cuda

#endif /* KCALL_KERNELS_CUDA_KERNELS_CUH_ */
