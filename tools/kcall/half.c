/*
 * half.c — 16-bit floats (IEEE half and bfloat16) to and from float, for
 * reading literals into f16/bf16 inputs and printing such outputs.
 */
#include <string.h>

#include "run.h"

static uint32_t float_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  return x;
}

static float bits_float(uint32_t x) {
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

float run_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | mant << 13);
  if (exp != 0) return bits_float(sign | (exp + 112) << 23 | mant << 13);
  if (mant == 0) return bits_float(sign);
  /* A subnormal half is a normal float: shift its leading 1 out. */
  uint32_t e = 113;
  while (!(mant & 0x400u)) {
    mant <<= 1;
    --e;
  }
  return bits_float(sign | e << 23 | (mant & 0x3ffu) << 13);
}

/* Drops the low `shift` bits of `value`, rounding to nearest even. */
static uint32_t round_shift(uint32_t value, uint32_t shift) {
  uint32_t kept = value >> shift;
  uint32_t rest = value & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (kept & 1))) ++kept;
  return kept;
}

uint16_t run_float_to_half(float f) {
  uint32_t x = float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) {
    /* Infinity stays infinity; a NaN stays a (quiet) NaN. */
    return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u | mant >> 13 : 0));
  }
  int32_t e = (int32_t)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return (uint16_t)sign;
    return (uint16_t)(sign | round_shift(mant | 0x800000u, (uint32_t)(14 - e)));
  }
  /* A carry out of the mantissa lands in the exponent, which is right,
   * up to and including rounding to infinity. */
  uint32_t rounded = round_shift((uint32_t)e << 23 | mant, 13);
  return (uint16_t)(sign | rounded);
}

float run_bf16_to_float(uint16_t h) { return bits_float((uint32_t)h << 16); }

uint16_t run_float_to_bf16(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(x >> 16 | 0x40u);
  return (uint16_t)round_shift(x, 16);
}
