/* compare, select and clamp, as src/program/instr/instr_select.c computes them:
 * compare in IEEE order (or XLA's total order of floats, -NaN < -inf <
 * ... < -0 < +0 < ... < +inf < +NaN, when asked), select by element size,
 * clamp(lo, x, hi) = min(max(x, lo), hi), the host's maximum and minimum
 * for f32 and f64. */
#include "kcall/hlo_opcode.h"
#include "kernels/cuda/kernels.cuh"

namespace kc_cuda {
namespace {

template <class K>
__device__ bool cmp(int dir, K x, K y) {
  switch (dir) {
    case KC__CMP_EQ: return x == y;
    case KC__CMP_NE: return x != y;
    case KC__CMP_LT: return x < y;
    case KC__CMP_LE: return x <= y;
    case KC__CMP_GT: return x > y;
    default: return x >= y;
  }
}

__device__ inline int32_t total_key(float v) {
  int32_t bits = __float_as_int(v);
  return bits < 0 ? (int32_t)((uint32_t)bits ^ 0x7FFFFFFFu) : bits;
}
__device__ inline int64_t total_key(double v) {
  int64_t bits = __double_as_longlong(v);
  return bits < 0 ? (int64_t)((uint64_t)bits ^ 0x7FFFFFFFFFFFFFFFull) : bits;
}

/* The direction is the same for every element: the branch on it costs
 * next to nothing beside the loads, and keeps one kernel per type. */
template <class T>
struct Compare {
  int dir;
  __device__ pred operator()(T a, T b) const { return pred{(uint8_t)cmp(dir, a, b)}; }
};
template <>
struct Compare<pred> {
  int dir;
  __device__ pred operator()(pred a, pred b) const { return pred{(uint8_t)cmp(dir, a.v, b.v)}; }
};
template <class F>
struct CompareTotal {
  int dir;
  __device__ pred operator()(F a, F b) const {
    return pred{(uint8_t)cmp(dir, total_key(a), total_key(b))};
  }
};

template <class T>
struct Select {
  __device__ T operator()(pred p, T a, T b) const { return p.v ? a : b; }
};
struct Bytes16 {
  uint64_t lo, hi;
};

template <class T>
struct Clamp {
  __device__ T operator()(T lo, T x, T hi) const {
    if constexpr (std::is_floating_point<T>::value) return fmin_host(fmax_host(x, lo), hi);
    T v = x < lo ? lo : x;
    return v > hi ? hi : v;
  }
};
template <>
struct Clamp<pred> {
  __device__ pred operator()(pred lo, pred x, pred hi) const {
    uint8_t v = x.v < lo.v ? lo.v : x.v;
    return pred{v > hi.v ? hi.v : v};
  }
};

}  // namespace

kc_status* compare(const Launch& l, int32_t direction, Type t, const void* a, const void* b,
                   void* r) {
  int dir = direction & ~KC__CMP_TOTAL_ORDER;
  if (direction & KC__CMP_TOTAL_ORDER) {
    if (t == KC__E_f32) return run2<CompareTotal<float>, float, pred>(l, {dir}, a, b, r);
    if (t == KC__E_f64) return run2<CompareTotal<double>, double, pred>(l, {dir}, a, b, r);
  }
  return with_type(t, [&](auto tag) -> kc_status* {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, f16>::value || std::is_same<T, bf16>::value) {
      return nullptr; /* refused by the caller */
    } else {
      return run2<Compare<T>, T, pred>(l, {dir}, a, b, r);
    }
  });
}

kc_status* select(const Launch& l, size_t esize, const void* p, const void* a, const void* b,
                  void* r) {
  switch (esize) {
    case 1: return run3<Select<uint8_t>, pred, uint8_t, uint8_t>(l, {}, p, a, b, r);
    case 2: return run3<Select<uint16_t>, pred, uint16_t, uint16_t>(l, {}, p, a, b, r);
    case 4: return run3<Select<uint32_t>, pred, uint32_t, uint32_t>(l, {}, p, a, b, r);
    case 8: return run3<Select<uint64_t>, pred, uint64_t, uint64_t>(l, {}, p, a, b, r);
    case 16: return run3<Select<Bytes16>, pred, Bytes16, Bytes16>(l, {}, p, a, b, r);
    default: return nullptr;
  }
}

kc_status* clamp(const Launch& l, Type t, const void* lo, const void* x, const void* hi,
                 void* r) {
  return with_type(t, [&](auto tag) -> kc_status* {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, f16>::value || std::is_same<T, bf16>::value) {
      return nullptr; /* refused by the caller */
    } else {
      return run3<Clamp<T>, T, T, T>(l, {}, lo, x, hi, r);
    }
  });
}

}  // namespace kc_cuda
