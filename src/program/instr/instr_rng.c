/* rng-bit-generator: XLA's RngBitGenerator, bit for bit as XLA:CPU runs it.
 *
 * The state is u64[2], {s0, s1} (what JAX's rbg and unsafe_rbg keys
 * become: their u32[4] bitcast to u64[2]). The result is the tuple (new
 * state, bits). Both algorithms make a stream of 32-bit words; an element
 * of u8, u16 or u32 is one word (the low bits kept), one of u64 two
 * (the first the low half).
 *
 *   rng_philox (and rng_default, which XLA:CPU runs as Philox):
 *     Philox4x32 with 10 rounds, key {lo(s0), hi(s0)}; block b (4 words)
 *     is the 128-bit counter {lo, hi} = {s1 + b, s0 + carry}, where the
 *     carry is 1 when s1 + b wrapped past 2^64. New state {s0, s1 +
 *     blocks}.
 *   rng_three_fry: Threefry2x32 with 20 rounds, key {lo(s0), hi(s0)};
 *     pair i (2 words) is the counter s1 + i (modulo 2^64) as {lo, hi}.
 *     New state {s0, s1 + pairs}.
 *
 * These were checked against XLA:CPU's output through JAX 0.10.2 (jaxlib's
 * XLA), counters that wrap included: tests/test_hlo_rng.c holds those
 * values. */
#include <stdio.h>

#include "internal/common.h"
#include "program/instr/instr.h"

enum { KC__RNG_PHILOX, KC__RNG_THREE_FRY };

typedef struct kc__rng_plan {
  int algorithm;
  size_t count; /* elements of the bits */
  unsigned bits;
} kc__rng_plan;

static kc_status* kc__rng_read(const kc_program* p, const kc__instr* in, kc__rng_plan* plan) {
  const kc_shape* s = kc__instr_operand(p, in, 0);
  char g[256], w[256], b[32];
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, s, "operand 0 (the state)"));
  DLDataType st = kc_shape_get_dtype(s);
  if (st.code != kDLUInt || st.bits != 64 || st.lanes != 1 || kc_shape_get_rank(s) != 1) {
    kc_shape_format(s, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "rng-bit-generator: expected a state of u64[2], got %s", g);
  }
  if (kc_shape_get_dims(s)[0] != 2) {
    kc_shape_format(s, g, sizeof g);
    return kc__instr_error(in, KC_UNIMPLEMENTED,
                           "rng-bit-generator: expected a state of u64[2] (the state JAX "
                           "gives), got %s",
                           g);
  }
  kc_string_view alg = KC_SV_LIT("rng_default");
  if (kc__instr_attr(in, "algorithm")) {
    KC_RETURN_IF_ERROR(kc__instr_attr_string(in, "algorithm", false, &alg));
  }
  if (kc_sv_equal(alg, KC_SV_LIT("rng_default")) || kc_sv_equal(alg, KC_SV_LIT("rng_philox"))) {
    plan->algorithm = KC__RNG_PHILOX;
  } else if (kc_sv_equal(alg, KC_SV_LIT("rng_three_fry"))) {
    plan->algorithm = KC__RNG_THREE_FRY;
  } else {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute algorithm: expected rng_default, rng_three_fry or "
                           "rng_philox, got %s",
                           KC__Q(alg));
  }
  const kc_shape* r = in->shape;
  const kc_shape* bits = kc_shape_get_tuple_size(r) == 2 ? kc_shape_get_element(r, 1) : NULL;
  if (!kc_shape_is_tuple(r) || kc_shape_get_tuple_size(r) != 2 ||
      !kc_shape_equal(kc_shape_get_element(r, 0), s) || kc_shape_is_tuple(bits)) {
    kc_shape_format(s, w, sizeof w);
    kc_shape_format(r, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "rng-bit-generator: expected a result tuple (%s, an array), got %s",
                           w, g);
  }
  DLDataType bt = kc_shape_get_dtype(bits);
  if (bt.code != kDLUInt || bt.lanes != 1 ||
      !(bt.bits == 8 || bt.bits == 16 || bt.bits == 32 || bt.bits == 64)) {
    return kc__instr_error(in, KC_UNIMPLEMENTED,
                           "rng-bit-generator: expected bits of u8, u16, u32 or u64 (what JAX "
                           "emits), got %s",
                           kc__instr_dtype_text(bt, b, sizeof b));
  }
  plan->bits = bt.bits;
  plan->count = kc_shape_get_byte_size(bits) / (bt.bits / 8u);
  return NULL;
}

static kc_status* kc__rng_verify(const kc_program* p, const kc__instr* in) {
  kc__rng_plan plan;
  return kc__rng_read(p, in, &plan);
}

static kc_status* kc__rng_prepare(const kc_program* p, const kc__instr* in,
                                  const kc__prepare_ctx* ctx, const void** out) {
  kc__rng_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  KC_RETURN_IF_ERROR(kc__rng_read(p, in, plan));
  *out = plan;
  return NULL;
}

static uint32_t kc__lo(uint64_t v) { return (uint32_t)v; }
static uint32_t kc__hi(uint64_t v) { return (uint32_t)(v >> 32); }

static void kc__philox(uint32_t c[4], uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = (uint64_t)c[0] * 0xD2511F53u, p1 = (uint64_t)c[2] * 0xCD9E8D57u;
    uint32_t n0 = kc__hi(p1) ^ c[1] ^ k0, n2 = kc__hi(p0) ^ c[3] ^ k1;
    c[0] = n0;
    c[1] = kc__lo(p1);
    c[2] = n2;
    c[3] = kc__lo(p0);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

static uint32_t kc__rotl(uint32_t x, unsigned r) { return (x << r) | (x >> (32u - r)); }

static void kc__threefry(uint32_t x[2], uint32_t k0, uint32_t k1) {
  static const unsigned rot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  x[0] += ks[0];
  x[1] += ks[1];
  for (unsigned i = 0; i < 5; ++i) {
    for (unsigned j = 0; j < 4; ++j) {
      x[0] += x[1];
      x[1] = kc__rotl(x[1], rot[i % 2][j]) ^ x[0];
    }
    x[0] += ks[(i + 1) % 3];
    x[1] += ks[(i + 2) % 3] + i + 1;
  }
}

/* Stores word i of the stream into the bits. */
static void kc__rng_put(const kc__rng_plan* plan, void* dst, size_t i, uint32_t word) {
  switch (plan->bits) {
    case 8:
      ((uint8_t*)dst)[i] = (uint8_t)word;
      break;
    case 16:
      ((uint16_t*)dst)[i] = (uint16_t)word;
      break;
    case 32:
      ((uint32_t*)dst)[i] = word;
      break;
    default: { /* two words an element, the low half first */
      uint64_t* e = (uint64_t*)dst + i / 2;
      *e = i % 2 ? (*e & 0xFFFFFFFFu) | (uint64_t)word << 32 : word;
      break;
    }
  }
}

static kc_status* kc__rng_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                 const void* const* ins) {
  const kc__rng_plan* plan = ctx->data;
  uint64_t state[2];
  memcpy(state, ins[0], sizeof state);
  uint64_t s0 = state[0], s1 = state[1];
  uint32_t k0 = kc__lo(s0), k1 = kc__hi(s0);
  void* dst = ((void* const*)out)[1];
  size_t words = plan->count * (plan->bits == 64 ? 2u : 1u);
  uint64_t used;
  if (plan->algorithm == KC__RNG_PHILOX) {
    used = (uint64_t)(words + 3) / 4;
    for (uint64_t blk = 0; blk < used; ++blk) {
      uint64_t lo = s1 + blk, hi = s0 + (lo < s1 ? 1u : 0u);
      uint32_t c[4] = {kc__lo(lo), kc__hi(lo), kc__lo(hi), kc__hi(hi)};
      kc__philox(c, k0, k1);
      for (size_t j = 0; j < 4 && blk * 4 + j < words; ++j) {
        kc__rng_put(plan, dst, (size_t)blk * 4 + j, c[j]);
      }
    }
  } else {
    used = (uint64_t)(words + 1) / 2;
    for (uint64_t i = 0; i < used; ++i) {
      uint64_t ctr = s1 + i;
      uint32_t x[2] = {kc__lo(ctr), kc__hi(ctr)};
      kc__threefry(x, k0, k1);
      for (size_t j = 0; j < 2 && i * 2 + j < words; ++j) {
        kc__rng_put(plan, dst, (size_t)i * 2 + j, x[j]);
      }
    }
  }
  state[1] = s1 + used;
  memcpy(((void* const*)out)[0], state, sizeof state);
  return NULL;
}

static const char* const kc__rng_attrs[] = {"algorithm", NULL};

const kc__instr_def kc__instr_rng[] = {
    {.op = KC_OP_RNG_BIT_GENERATOR, .name = "rng-bit-generator", .min_operands = 1,
     .max_operands = 1, .attrs = kc__rng_attrs, .verify = kc__rng_verify,
     .prepare = kc__rng_prepare, .kernel = kc__rng_kernel},
};
const size_t kc__instr_rng_count = KC__ARRAY_SIZE(kc__instr_rng);
