/* kcall's element types as its kernels name them: one enumeration for the
 * program runtime's instructions (src/program/instr/) and the CUDA
 * backend's kernels (src/kernels/cuda/), with the classification of a
 * DLDataType into it. C and CUDA C++; never installed.
 *
 * The order matters to the tables indexed by it (elementwise.c's
 * conversions): the types with a C type of their own first, f32 to u64
 * and pred, in the order of KC__ETYPES, then those held as bits (f16,
 * bf16) and the complex types. */
#ifndef KCALL_KERNELS_ETYPE_H_
#define KCALL_KERNELS_ETYPE_H_

#include <stdbool.h>
#include <stdint.h>

#include "kcall/abi.h"

#ifdef __CUDACC__
#define KC__ETYPE_FN __host__ __device__ static inline
#else
#define KC__ETYPE_FN static inline
#endif

/* The types with a C type, in enumeration order: X(suffix, C type, DLPack
 * code, bits). Kernels written per C type are generated from it. */
#define KC__ETYPES(X)               \
  X(f32, float, kDLFloat, 32)      \
  X(f64, double, kDLFloat, 64)     \
  X(s8, int8_t, kDLInt, 8)         \
  X(s16, int16_t, kDLInt, 16)      \
  X(s32, int32_t, kDLInt, 32)      \
  X(s64, int64_t, kDLInt, 64)      \
  X(u8, uint8_t, kDLUInt, 8)       \
  X(u16, uint16_t, kDLUInt, 16)    \
  X(u32, uint32_t, kDLUInt, 32)    \
  X(u64, uint64_t, kDLUInt, 64)    \
  X(pred, uint8_t, kDLBool, 8)

typedef enum kc__etype {
#define KC__ETYPE_ENUM(sfx, ctype, code, bits) KC__E_##sfx,
  KC__ETYPES(KC__ETYPE_ENUM)
#undef KC__ETYPE_ENUM
  KC__E_f16,  /* IEEE half, held as its bits (uint16_t) */
  KC__E_bf16, /* bfloat16, likewise */
  KC__E_c64,  /* two f32 */
  KC__E_c128, /* two f64 */
  KC__E_NONE  /* anything else: vectors, sub-byte and f8 types, opaque */
} kc__etype;

/* The element type of `t`; KC__E_NONE for one the kernels do not name. */
KC__ETYPE_FN kc__etype kc__etype_of(DLDataType t) {
  if (t.lanes != 1) return KC__E_NONE;
#define KC__ETYPE_MATCH(sfx, ctype, c, b) \
  if (t.code == (c) && t.bits == (b)) return KC__E_##sfx;
  KC__ETYPES(KC__ETYPE_MATCH)
#undef KC__ETYPE_MATCH
  if (t.code == kDLFloat && t.bits == 16) return KC__E_f16;
  if (t.code == kDLBfloat && t.bits == 16) return KC__E_bf16;
  if (t.code == kDLComplex && t.bits == 64) return KC__E_c64;
  if (t.code == kDLComplex && t.bits == 128) return KC__E_c128;
  return KC__E_NONE;
}

KC__ETYPE_FN bool kc__etype_is_sint(kc__etype e) { return e >= KC__E_s8 && e <= KC__E_s64; }
KC__ETYPE_FN bool kc__etype_is_uint(kc__etype e) { return e >= KC__E_u8 && e <= KC__E_u64; }
/* The integers, signed and unsigned (not pred). */
KC__ETYPE_FN bool kc__etype_is_int(kc__etype e) { return e >= KC__E_s8 && e <= KC__E_u64; }
/* f16, bf16, f32 and f64. */
KC__ETYPE_FN bool kc__etype_is_float(kc__etype e) {
  return e == KC__E_f32 || e == KC__E_f64 || e == KC__E_f16 || e == KC__E_bf16;
}
KC__ETYPE_FN bool kc__etype_is_complex(kc__etype e) {
  return e == KC__E_c64 || e == KC__E_c128;
}

#endif /* KCALL_KERNELS_ETYPE_H_ */
