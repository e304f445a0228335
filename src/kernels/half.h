/* IEEE half (f16) and bfloat16 (bf16) from and to wider floats, rounding
 * to nearest even, as XLA converts them: kcall's one implementation, for
 * the program runtime's instructions, the CUDA backend's kernels (compiled
 * by nvcc, for host and device, so that both round the same way) and the
 * kcall tool's inputs and outputs. Never installed.
 *
 * Two forms that give the same values: kc__f32_to_half and
 * kc__half_to_f32 work on the bits (the fast path of kernels that convert
 * whole arrays); kc__f64_to_small and kc__small_to_f32 take the format's
 * widths (f64 rounds to f16 once, not through f32). */
#ifndef KCALL_KERNELS_HALF_H_
#define KCALL_KERNELS_HALF_H_

#include <math.h>
#include <stdbool.h>
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

KC__HALF_FN float kc__bits_as_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

KC__HALF_FN uint32_t kc__f32_as_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* f16 (bf16 false) or bf16 to f32, exactly, on the bits; a NaN keeps its
 * payload. */
KC__HALF_FN float kc__half_to_f32(bool bf16, uint16_t h) {
  if (bf16) return kc__bits_as_f32((uint32_t)h << 16);
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t em = h & 0x7FFFu;
  if (em >= 0x7C00u) return kc__bits_as_f32(sign | 0x7F800000u | ((em & 0x3FFu) << 13));
  if (em >= 0x0400u) return kc__bits_as_f32(sign | ((em + ((127u - 15u) << 10)) << 13));
  return kc__bits_as_f32(sign | kc__f32_as_bits((float)em * 0x1p-24f)); /* subnormal, 0 */
}

/* f16 and bf16 to f32: on the bits (kc__small_to_f32 computes the same
 * values through ldexpf, a call per element; a NaN there loses its
 * payload). */
KC__HALF_FN float kc__f16_to_f32(uint16_t h) { return kc__half_to_f32(false, h); }
KC__HALF_FN float kc__bf16_to_f32(uint16_t h) { return kc__half_to_f32(true, h); }

/* f32 to f16 (bf16 false) or bf16, rounded to nearest even, on the bits:
 * the value kc__f64_to_f16 and kc__f64_to_bf16 give for (double)v; a NaN
 * stays a quiet NaN of the same sign and payload top bits. */
KC__HALF_FN uint16_t kc__f32_to_half(bool bf16, float v) {
  uint32_t x = kc__f32_as_bits(v);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  x &= 0x7FFFFFFFu;
  if (bf16) {
    if (x > 0x7F800000u) return (uint16_t)(sign | (x >> 16) | 0x40u); /* NaN, quiet */
    x += 0x7FFFu + ((x >> 16) & 1u); /* to nearest, ties to even; may carry to inf */
    return (uint16_t)(sign | (x >> 16));
  }
  if (x >= 0x7F800000u) {
    return (uint16_t)(sign | 0x7C00u | (x > 0x7F800000u ? 0x200u | ((x >> 13) & 0x3FFu) : 0));
  }
  if (x >= 0x47800000u) return (uint16_t)(sign | 0x7C00u); /* 2^16 and up */
  if (x < 0x38800000u) {
    /* Below 2^-14, a subnormal: adding 0.5 puts the value's 2^-24 units
     * in the low bits, rounded to nearest even by the addition. */
    float s = kc__bits_as_f32(x) + 0.5f;
    return (uint16_t)(sign | (kc__f32_as_bits(s) - 0x3F000000u));
  }
  /* Rebias the exponent and round the 13 dropped bits to nearest even; a
   * carry moves into the exponent (65520 and up become infinity). */
  x += ((uint32_t)(15 - 127) << 23) + 0xFFFu + ((x >> 13) & 1u);
  return (uint16_t)(sign | (x >> 13));
}

#undef KC__HALF_FN

#endif /* KCALL_KERNELS_HALF_H_ */
