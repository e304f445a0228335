/* rng-bit-generator from HLO text: Philox (rng_philox, rng_default) and
 * Threefry (rng_three_fry) against XLA:CPU's own output (taken through
 * JAX 0.10.2's lax.rng_bit_generator), counters that wrap included; and
 * the refusals. */
#include <stdio.h>
#include <string.h>

#include "kcall/kcall.h"
#include "test.h"

/* Runs rng-bit-generator of `alg` on the state {s0, s1} giving `type`[n];
 * checks the bits (as u64) and the new state. */
static void kt_rng_check(const char* alg, uint64_t s0, uint64_t s1, const char* type, int n,
                         const uint64_t* want, uint64_t want_s1) {
  char text[1024];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n s = u64[2] constant({%llu, %llu})\n"
           " ROOT r = (u64[2], %s[%d]) rng-bit-generator(s), algorithm=%s\n}\n",
           (unsigned long long)s0, (unsigned long long)s1, type, n, alg);
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  kc_tensor* outs[2] = {NULL, NULL};
  KC_CHECK_OK(kc_executable_execute(exe, NULL, 0, NULL, outs));
  const uint64_t* st = kc_tensor_get_dltensor(outs[0])->data;
  KC_CHECK(st[0] == s0);
  KC_CHECK(st[1] == want_s1);
  const DLTensor* b = kc_tensor_get_dltensor(outs[1]);
  for (int i = 0; i < n; ++i) {
    uint64_t got = b->dtype.bits == 8    ? ((const uint8_t*)b->data)[i]
                   : b->dtype.bits == 16 ? ((const uint16_t*)b->data)[i]
                   : b->dtype.bits == 32 ? ((const uint32_t*)b->data)[i]
                                         : ((const uint64_t*)b->data)[i];
    if (got != want[i]) fprintf(stderr, "%s: element %d is %llx, want %llx\n", text, i,
                                (unsigned long long)got, (unsigned long long)want[i]);
    KC_CHECK(got == want[i]);
  }
  kc_object_release(KC_OBJECT(outs[0]));
  kc_object_release(KC_OBJECT(outs[1]));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

/* JAX's u32[4] key {1, 2, 3, 4}, bitcast to u64[2]. */
static const uint64_t kt_s0 = 1 | (uint64_t)2 << 32, kt_s1 = 3 | (uint64_t)4 << 32;

KC_TEST(hlo_rng_philox_matches_xla) {
  static const uint64_t w32[] = {0x1e8fe864, 0x4d5e0bd7, 0x4b87c9be, 0x2d689201,
                                 0x5273487b, 0x61c05696, 0xa4486574};
  kt_rng_check("rng_philox", kt_s0, kt_s1, "u32", 7, w32, kt_s1 + 2);
  kt_rng_check("rng_default", kt_s0, kt_s1, "u32", 7, w32, kt_s1 + 2);
  static const uint64_t w64[] = {0x4d5e0bd71e8fe864, 0x2d6892014b87c9be, 0x61c056965273487b};
  kt_rng_check("rng_philox", kt_s0, kt_s1, "u64", 3, w64, kt_s1 + 2);
  static const uint64_t w8[] = {100, 215, 190, 1, 123};
  kt_rng_check("rng_default", kt_s0, kt_s1, "u8", 5, w8, kt_s1 + 2);
  static const uint64_t w16[] = {59492, 3031, 51646};
  kt_rng_check("rng_default", kt_s0, kt_s1, "u16", 3, w16, kt_s1 + 1);
}

KC_TEST(hlo_rng_three_fry_matches_xla) {
  static const uint64_t w32[] = {0x5df433ec, 0x8617198e, 0x2c24a8a8, 0x9094fa5e,
                                 0x91386643, 0x59491919, 0x4f97fb5b};
  kt_rng_check("rng_three_fry", kt_s0, kt_s1, "u32", 7, w32, kt_s1 + 4);
  static const uint64_t w64[] = {0x8617198e5df433ec, 0x9094fa5e2c24a8a8, 0x5949191991386643};
  kt_rng_check("rng_three_fry", kt_s0, kt_s1, "u64", 3, w64, kt_s1 + 3);
  static const uint64_t w8[] = {236, 142, 168, 94, 67};
  kt_rng_check("rng_three_fry", kt_s0, kt_s1, "u8", 5, w8, kt_s1 + 3);
  static const uint64_t w16[] = {13292, 6542, 43176};
  kt_rng_check("rng_three_fry", kt_s0, kt_s1, "u16", 3, w16, kt_s1 + 2);
}

KC_TEST(hlo_rng_counter_wraps_as_xla) {
  /* s1 = 2^64 - 2: Philox carries into the counter's high half (s0 + 1)
   * for its third block; Threefry's 64-bit counter wraps to 0. The new
   * state's s1 wraps, s0 stays. */
  uint64_t s0 = 0x2222222211111111, s1 = 0xfffffffffffffffe;
  static const uint64_t ph[] = {0x85d13639, 0xd9593ec1, 0x7e8cecda, 0xe39fc4ad, 0x71581d48,
                                0x1f20a012, 0xaca8c5b2, 0x5d80a5cf, 0xf961edf5};
  kt_rng_check("rng_philox", s0, s1, "u32", 9, ph, 1);
  static const uint64_t tf[] = {0x3d6a1f9e, 0x25908914, 0xacaf633e, 0xb2e44b2d, 0xf242819b,
                                0x0e6e85fa, 0x9e8bc6e4, 0x81da2cd3, 0x18844dae};
  kt_rng_check("rng_three_fry", s0, s1, "u32", 9, tf, 3);
}

#define KT_RNG_FAILS(code, text, ...)                                               \
  do {                                                                              \
    kc_program* kt_p_ = NULL;                                                       \
    KC_CHECK_OK(kc_program_parse(kc_sv(text), &kt_p_));                             \
    kc_executable* kt_e_ = NULL;                                                    \
    KC_CHECK_CODE(kc_program_compile(kt_p_, NULL, &kt_e_), code, __VA_ARGS__);      \
    KC_CHECK(kt_e_ == NULL);                                                        \
    kc_program_destroy(kt_p_);                                                      \
  } while (0)

#define KT_RNG_HLO(state, result, alg)                                              \
  "HloModule m\nENTRY e {\n s = " state " parameter(0)\n ROOT r = " result          \
  " rng-bit-generator(s), algorithm=" alg "\n}\n"

KC_TEST(hlo_rng_refusals) {
  KT_RNG_FAILS(KC_INVALID_ARGUMENT, KT_RNG_HLO("u32[4]", "(u32[4], u32[3])", "rng_default"),
               "expected a state of u64[2]", "got u32[4]");
  KT_RNG_FAILS(KC_UNIMPLEMENTED, KT_RNG_HLO("u64[3]", "(u64[3], u32[3])", "rng_philox"),
               "expected a state of u64[2]", "got u64[3]");
  KT_RNG_FAILS(KC_INVALID_ARGUMENT, KT_RNG_HLO("u64[2]", "(u64[2], u32[3])", "rng_mt"),
               "attribute algorithm", "expected rng_default, rng_three_fry or rng_philox",
               "got 'rng_mt'");
  KT_RNG_FAILS(KC_UNIMPLEMENTED, KT_RNG_HLO("u64[2]", "(u64[2], f32[3])", "rng_philox"),
               "expected bits of u8, u16, u32 or u64", "got f32");
  KT_RNG_FAILS(KC_INVALID_ARGUMENT, KT_RNG_HLO("u64[2]", "(u64[3], u32[3])", "rng_philox"),
               "expected a result tuple (u64[2], an array)", "got (u64[3], u32[3])");
  KT_RNG_FAILS(KC_INVALID_ARGUMENT, KT_RNG_HLO("u64[2]", "u32[3]", "rng_philox"),
               "expected a result tuple", "got u32[3]");
}
