/* IEEE half (f16) and bfloat16 (bf16) from and to wider floats, rounding
 * to nearest even, as XLA converts them. Never installed. The CUDA
 * backend's kernels include it too (compiled by nvcc, for host and device),
 * so that both round the same way. */
#ifndef KCALL_INTERNAL_HALF_H_
#define KCALL_INTERNAL_HALF_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define KC__HALF_FN __host__ __device__ static inline
#else
#define KC__HALF_FN static inline
#endif

/* The bits of `v` in a binary format with `ebits` exponent and `mbits`
 * stored significand bits (f16: 5, 10; bf16: 8, 7), rounded to nearest
 * even from the double directly (so f64 -> f16 rounds once). NaN gives a
 * quiet NaN of the same sign; overflow gives infinity. */
KC__HALF_FN uint16_t kc__f64_to_small(double v, int ebits, int mbits) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  uint16_t sign = (uint16_t)((bits >> 63) << 15);
  int exp = (int)((bits >> 52) & 0x7FF);
  uint64_t mant = bits & 0xFFFFFFFFFFFFFull;
  uint32_t max_exp = (1u << ebits) - 1;
  uint16_t inf = (uint16_t)(max_exp << mbits);
  if (exp == 0x7FF) return (uint16_t)(sign | inf | (mant ? 1u << (mbits - 1) : 0));
  if (exp == 0) return sign; /* a double subnormal is far below either format */
  int bias = (1 << (ebits - 1)) - 1;
  int e = exp - 1023 + bias;
  if (e >= (int)max_exp) return (uint16_t)(sign | inf);
  mant |= 1ull << 52;
  int shift = e <= 0 ? 52 - mbits + 1 - e : 52 - mbits;
  if (shift > 62) return sign;
  uint64_t q = mant >> shift;
  uint64_t rem = mant & ((1ull << shift) - 1);
  uint64_t half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) q++;
  /* Subnormals and normals are one continuous encoding: a carry out of the
   * significand moves into the exponent. */
  uint32_t h = e <= 0 ? (uint32_t)q : ((uint32_t)e << mbits) + (uint32_t)(q - (1ull << mbits));
  if (h >= inf) return (uint16_t)(sign | inf);
  return (uint16_t)(sign | h);
}

KC__HALF_FN float kc__small_to_f32(uint16_t h, int ebits, int mbits) {
  int bias = (1 << (ebits - 1)) - 1;
  uint32_t max_exp = (1u << ebits) - 1;
  uint32_t e = ((uint32_t)h >> mbits) & max_exp;
  uint32_t m = h & ((1u << mbits) - 1);
  float v;
  if (e == 0) {
    v = ldexpf((float)m, 1 - bias - mbits);
  } else if (e == max_exp) {
    v = m ? NAN : INFINITY;
  } else {
    v = ldexpf((float)(m | (1u << mbits)), (int)e - bias - mbits);
  }
  return (h >> 15) ? -v : v;
}

KC__HALF_FN uint16_t kc__f64_to_f16(double v) { return kc__f64_to_small(v, 5, 10); }
KC__HALF_FN uint16_t kc__f64_to_bf16(double v) { return kc__f64_to_small(v, 8, 7); }
KC__HALF_FN float kc__f16_to_f32(uint16_t h) { return kc__small_to_f32(h, 5, 10); }
KC__HALF_FN float kc__bf16_to_f32(uint16_t h) { return kc__small_to_f32(h, 8, 7); }

#undef KC__HALF_FN

#endif /* KCALL_INTERNAL_HALF_H_ */
