/* The f16 and bf16 conversions of src/kernels/half.h, kcall's one
 * implementation: its two forms (on the bits, and through the format's
 * widths and a double) give the same values, every f16 and bf16 value
 * exactly and f32 values rounded to nearest even, ties and overflow
 * included. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/half.h"
#include "test.h"

static uint32_t kt_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float kt_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

KC_TEST(kernels_half_widen_every_value) {
  for (int bf16 = 0; bf16 < 2; ++bf16) {
    int ebits = bf16 ? 8 : 5, mbits = bf16 ? 7 : 10;
    for (uint32_t h = 0; h < 0x10000u; ++h) {
      float fast = kc__half_to_f32(bf16, (uint16_t)h);
      float slow = kc__small_to_f32((uint16_t)h, ebits, mbits);
      bool same = isnan(slow) ? isnan(fast) && signbit(fast) == signbit(slow)
                              : kt_bits(fast) == kt_bits(slow);
      if (!same) {
        kt__fail(__FILE__, __LINE__, "%s 0x%04x widens to %a on the bits, %a through the widths",
                 bf16 ? "bf16" : "f16", (unsigned)h, (double)fast, (double)slow);
      }
      /* Back again: every value is exact, NaNs stay NaNs. */
      if (!isnan(fast)) KC_CHECK_INT(kc__f32_to_half(bf16, fast), h);
    }
  }
}

KC_TEST(kernels_half_narrow_rounds_once_as_from_double) {
  /* Every 97th f32 bit pattern: both signs, every exponent, and (97 being
   * odd) every residue of the dropped bits, ties among them. */
  for (int bf16 = 0; bf16 < 2; ++bf16) {
    for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += 97) {
      float v = kt_float((uint32_t)u);
      if (isnan(v)) continue;
      uint16_t fast = kc__f32_to_half(bf16, v);
      uint16_t slow = bf16 ? kc__f64_to_bf16((double)v) : kc__f64_to_f16((double)v);
      if (fast != slow) {
        kt__fail(__FILE__, __LINE__, "%s of %a: 0x%04x on the bits, 0x%04x from the double",
                 bf16 ? "bf16" : "f16", (double)v, fast, slow);
      }
    }
  }
  /* Ties to even, the largest finite values, overflow, the smallest
   * subnormal and half of it. */
  KC_CHECK_INT(kc__f32_to_half(false, 1.0f + 0x1p-11f), 0x3C00); /* tie, to even */
  KC_CHECK_INT(kc__f32_to_half(false, 1.0f + 0x3p-11f), 0x3C02); /* tie, up */
  KC_CHECK_INT(kc__f32_to_half(false, 65504.0f), 0x7BFF);
  KC_CHECK_INT(kc__f32_to_half(false, 65520.0f), 0x7C00); /* rounds to inf */
  KC_CHECK_INT(kc__f32_to_half(false, 0x1p-24f), 0x0001);
  KC_CHECK_INT(kc__f32_to_half(false, 0x1p-25f), 0x0000); /* tie, to even 0 */
  KC_CHECK_INT(kc__f32_to_half(false, -0x3p-26f), 0x8001);
  KC_CHECK_INT(kc__f32_to_half(true, 1.0f + 0x1p-8f), 0x3F80); /* tie, to even */
  KC_CHECK_INT(kc__f32_to_half(true, 0x1.FEp127f), 0x7F7F);
  KC_CHECK_INT(kc__f32_to_half(true, 0x1.FFp127f), 0x7F80); /* rounds to inf */
  /* f64 rounds once: just above a bf16 tie goes up, where going
   * through f32 first would land on the tie and round to even. */
  KC_CHECK_INT(kc__f64_to_bf16(1.0 + 0x1p-8 + 0x1p-30), 0x3F81);
  /* NaNs stay quiet NaNs of their sign. */
  KC_CHECK_INT(kc__f32_to_half(false, kt_float(0x7F800001u)) & 0x7E00u, 0x7E00);
  KC_CHECK_INT(kc__f32_to_half(true, kt_float(0xFF800001u)) & 0xFFC0u, 0xFFC0);
}
