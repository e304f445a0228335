/* KC_OP_CONVERT between every pair of pred, s8..s64, u8..u64, f16, bf16,
 * f32 and f64, as src/program/instr/elementwise.c converts: through a double
 * when either side is a float (saturating, NaN to 0, for a float to an
 * integer), f64 to f32 directly, and integer to integer by wrapping. */
#include "kernels/cuda/kernels.cuh"

namespace kc_cuda {
namespace {

template <class T>
constexpr bool is_fp = std::is_floating_point<T>::value || std::is_same<T, f16>::value ||
                       std::is_same<T, bf16>::value;

/* As a double: exact for every integer up to 2^53 and every float. */
template <class T> __device__ double ld_f(T x) { return (double)x; }
__device__ double ld_f(pred x) { return x.v ? 1.0 : 0.0; }
__device__ double ld_f(f16 x) { return (double)to_f32(x); }
__device__ double ld_f(bf16 x) { return (double)to_f32(x); }

/* As 64 bits, sign-extended from a signed type. */
template <class T> __device__ uint64_t ld_i(T x) {
  return std::is_signed<T>::value ? (uint64_t)(int64_t)x : (uint64_t)x;
}
__device__ uint64_t ld_i(pred x) { return x.v != 0; }

__device__ int64_t sat_s(double v, int64_t lo, int64_t hi) {
  if (v != v) return 0;
  if (v <= (double)lo) return lo;
  if (v >= (double)hi) return hi;
  return (int64_t)v;
}
__device__ uint64_t sat_u(double v, uint64_t hi) {
  if (v != v || v <= 0) return 0;
  if (v >= (double)hi) return hi;
  return (uint64_t)v;
}

template <class R> struct st;
#define KC__ST_SIGNED(T, LO, HI)                                                 \
  template <> struct st<T> {                                                     \
    __device__ static T f(double v) { return (T)sat_s(v, LO, HI); }              \
    __device__ static T i(uint64_t b) { return (T)b; }                           \
  };
#define KC__ST_UNSIGNED(T, HI)                                                   \
  template <> struct st<T> {                                                     \
    __device__ static T f(double v) { return (T)sat_u(v, HI); }                  \
    __device__ static T i(uint64_t b) { return (T)b; }                           \
  };
KC__ST_SIGNED(int8_t, INT8_MIN, INT8_MAX)
KC__ST_SIGNED(int16_t, INT16_MIN, INT16_MAX)
KC__ST_SIGNED(int32_t, INT32_MIN, INT32_MAX)
KC__ST_SIGNED(int64_t, INT64_MIN, INT64_MAX)
KC__ST_UNSIGNED(uint8_t, UINT8_MAX)
KC__ST_UNSIGNED(uint16_t, UINT16_MAX)
KC__ST_UNSIGNED(uint32_t, UINT32_MAX)
KC__ST_UNSIGNED(uint64_t, UINT64_MAX)
#undef KC__ST_SIGNED
#undef KC__ST_UNSIGNED
template <> struct st<pred> {
  __device__ static pred f(double v) { return pred{(uint8_t)(v != 0)}; }
  __device__ static pred i(uint64_t b) { return pred{(uint8_t)(b != 0)}; }
};
template <> struct st<float> {
  __device__ static float f(double v) { return (float)v; }
};
template <> struct st<double> {
  __device__ static double f(double v) { return v; }
};
template <> struct st<f16> {
  __device__ static f16 f(double v) { return from_f64<f16>::make(v); }
};
template <> struct st<bf16> {
  __device__ static bf16 f(double v) { return from_f64<bf16>::make(v); }
};

template <class A, class R>
struct Convert {
  __device__ R operator()(A a) const {
    if constexpr (std::is_same<A, double>::value && std::is_same<R, float>::value) {
      return (float)a;
    } else if constexpr (is_fp<A> || is_fp<R>) {
      return st<R>::f(ld_f(a));
    } else {
      return st<R>::i(ld_i(a));
    }
  }
};

}  // namespace

kc_status* convert(const Launch& l, Type from, Type to, const void* a, void* r) {
  return with_type(from, [&](auto ta) {
    using A = typename decltype(ta)::type;
    return with_type(to, [&](auto tr) {
      using R = typename decltype(tr)::type;
      return run1<Convert<A, R>, A, R>(l, Convert<A, R>{}, a, r);
    });
  });
}

}  // namespace kc_cuda
