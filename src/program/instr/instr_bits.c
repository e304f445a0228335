/* Instructions on the bits of elements: bitcast-convert, reduce-precision,
 * and the parser's opt-barrier.
 *
 * bitcast-convert reinterprets bytes (little-endian, as XLA:CPU): to a
 * type of the same width, the operand's dims; to a narrower one, the
 * operand's dims and a new minor dimension of in_bits / out_bits; to a
 * wider one, the operand's minor dimension (of out_bits / in_bits) goes.
 *
 * reduce-precision rounds each float to exponent_bits and mantissa_bits as
 * XLA does: the mantissa to nearest, ties to even; then values above the
 * narrower exponent's range become infinities of their sign and those at
 * or below its smallest normal exponent zeros of their sign (the narrow
 * format has no subnormals). A NaN stays the same NaN, payload and sign,
 * even with mantissa_bits=0 (as XLA:CPU).
 *
 * opt-barrier is its operand (a tuple, usually): it only stops XLA from
 * moving computations across it. */
#include <stdio.h>

#include "internal/common.h"
#include "program/instr/instr.h"

/* ---- bitcast-convert ---------------------------------------------------------- */

static kc_status* kc__bitcast_convert_verify(const kc_program* p, const kc__instr* in) {
  const kc_shape* x = kc__instr_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, x, "operand 0"));
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, in->shape, "the result"));
  DLDataType from = kc_shape_get_dtype(x), to = kc_shape_get_dtype(in->shape);
  char b1[32], b2[32], g[256], w[256];
  if (from.code == kDLBool || to.code == kDLBool) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "bitcast-convert from %s to %s is not supported: pred has no bit pattern",
                           kc__instr_dtype_text(from, b1, sizeof b1),
                           kc__instr_dtype_text(to, b2, sizeof b2));
  }
  size_t in_bits = (size_t)from.bits * from.lanes, out_bits = (size_t)to.bits * to.lanes;
  int32_t rank = kc_shape_get_rank(x);
  const int64_t* dims = kc_shape_get_dims(x);
  int64_t want[KC_TENSOR_MAX_NDIM + 1];
  int32_t want_rank = rank;
  if (rank > 0) memcpy(want, dims, (size_t)rank * sizeof *want);
  if (in_bits % 8 != 0 || out_bits % 8 != 0 ||
      (in_bits != out_bits && (in_bits > out_bits ? in_bits % out_bits : out_bits % in_bits))) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "bitcast-convert from %s to %s: expected widths that divide one "
                           "another",
                           kc__instr_dtype_text(from, b1, sizeof b1),
                           kc__instr_dtype_text(to, b2, sizeof b2));
  }
  if (in_bits > out_bits) {
    if (rank == KC_TENSOR_MAX_NDIM) {
      return kc__instr_error(in, KC_UNIMPLEMENTED, "bitcast-convert: the result would have "
                                                   "more than %d dimensions",
                             KC_TENSOR_MAX_NDIM);
    }
    want[want_rank++] = (int64_t)(in_bits / out_bits);
  } else if (in_bits < out_bits) {
    int64_t ratio = (int64_t)(out_bits / in_bits);
    if (rank == 0 || dims[rank - 1] != ratio) {
      kc_shape_format(x, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "bitcast-convert from %s to %s: expected an operand whose last "
                             "dimension is %lld, got %s",
                             kc__instr_dtype_text(from, b1, sizeof b1),
                             kc__instr_dtype_text(to, b2, sizeof b2), (long long)ratio, g);
    }
    want_rank--;
  }
  bool ok = kc_shape_get_rank(in->shape) == want_rank &&
            (want_rank == 0 ||
             memcmp(kc_shape_get_dims(in->shape), want, (size_t)want_rank * sizeof *want) == 0);
  if (!ok) {
    kc_shape* s = NULL;
    KC_RETURN_IF_ERROR(kc_shape_create_array(to, want, want_rank, &s));
    kc_shape_format(s, w, sizeof w);
    kc_shape_destroy(s);
    kc_shape_format(in->shape, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "expected a result of %s, got %s", w, g);
  }
  return NULL;
}

static kc_status* kc__bitcast_convert_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                             const void* const* ins) {
  size_t bytes = kc_shape_get_byte_size(ctx->instr->shape);
  if (bytes) memmove(out, ins[0], bytes);
  return NULL;
}

/* The result's element size, for the tile function. */
static kc_status* kc__bitcast_convert_prepare(const kc_program* p, const kc__instr* in,
                                              const kc__prepare_ctx* ctx, const void** out) {
  (void)p;
  size_t* es = kc__arena_alloc(ctx->arena, sizeof *es);
  if (!es) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  *es = kc_dtype_get_size(kc_shape_get_dtype(in->shape));
  *out = es;
  return NULL;
}

/* n elements, where operand and result have one element size (fusion
 * takes no other). */
static void kc__bitcast_convert_tile(const void* data, void* out, const void* const* ins,
                                     int64_t n) {
  memmove(out, ins[0], (size_t)n * *(const size_t*)data);
}

/* ---- reduce-precision --------------------------------------------------------- */

typedef struct kc__rp_plan {
  unsigned width, src_exp, src_mant; /* the element type's layout */
  int64_t exp_bits, mant_bits;
  size_t count;
} kc__rp_plan;

static kc_status* kc__rp_read(const kc_program* p, const kc__instr* in, kc__rp_plan* plan) {
  const kc_shape* x = kc__instr_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, x, "operand 0"));
  DLDataType t = kc_shape_get_dtype(x);
  char buf[32], g[256], w[256];
  if (t.lanes != 1 || !(t.code == kDLBfloat ? t.bits == 16
                                            : t.code == kDLFloat && t.bits >= 16)) {
    return kc__instr_error(in, KC_UNIMPLEMENTED,
                           "reduce-precision of %s: expected f16, bf16, f32 or f64",
                           kc__instr_dtype_text(t, buf, sizeof buf));
  }
  if (!kc_shape_equal(x, in->shape)) {
    kc_shape_format(x, w, sizeof w);
    kc_shape_format(in->shape, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "expected a result of %s, got %s", w, g);
  }
  plan->width = t.bits;
  plan->src_exp = t.code == kDLBfloat ? 8u : t.bits == 16 ? 5u : t.bits == 32 ? 8u : 11u;
  plan->src_mant = plan->width - 1 - plan->src_exp;
  KC_RETURN_IF_ERROR(kc__instr_attr_int(in, "exponent_bits", &plan->exp_bits));
  KC_RETURN_IF_ERROR(kc__instr_attr_int(in, "mantissa_bits", &plan->mant_bits));
  if (plan->exp_bits < 1 || plan->exp_bits > 62) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute exponent_bits: expected 1 to 62, got %lld",
                           (long long)plan->exp_bits);
  }
  if (plan->mant_bits < 0 || plan->mant_bits > 62) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute mantissa_bits: expected 0 to 62, got %lld",
                           (long long)plan->mant_bits);
  }
  plan->count = kc_shape_get_byte_size(x) / (t.bits / 8u);
  return NULL;
}

static kc_status* kc__rp_verify(const kc_program* p, const kc__instr* in) {
  kc__rp_plan plan;
  return kc__rp_read(p, in, &plan);
}

static kc_status* kc__rp_prepare(const kc_program* p, const kc__instr* in,
                                 const kc__prepare_ctx* ctx, const void** out) {
  kc__rp_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  KC_RETURN_IF_ERROR(kc__rp_read(p, in, plan));
  *out = plan;
  return NULL;
}

/* One element's bits, rounded. */
static uint64_t kc__rp_bits(const kc__rp_plan* plan, uint64_t x) {
  unsigned w = plan->width, se = plan->src_exp, sm = plan->src_mant;
  uint64_t all = w == 64 ? ~(uint64_t)0 : ((uint64_t)1 << w) - 1;
  uint64_t sign = (uint64_t)1 << (w - 1);
  uint64_t exp_mask = (((uint64_t)1 << se) - 1) << sm;
  uint64_t mant_mask = ((uint64_t)1 << sm) - 1;
  bool nan = (x & exp_mask) == exp_mask && (x & mant_mask) != 0;
  uint64_t r = x;
  if ((uint64_t)plan->mant_bits < sm) {
    unsigned drop = sm - (unsigned)plan->mant_bits;
    uint64_t last = (uint64_t)1 << drop; /* the last kept mantissa bit */
    uint64_t bias = (last >> 1) - 1 + ((r & last) >> drop);
    r = ((r + bias) & ~(last - 1)) & all;
  }
  if ((uint64_t)plan->exp_bits < se) {
    uint64_t src_bias = ((uint64_t)1 << (se - 1)) - 1;
    uint64_t dst_bias = ((uint64_t)1 << (plan->exp_bits - 1)) - 1;
    uint64_t max_exp = src_bias + dst_bias, min_exp = src_bias - dst_bias;
    uint64_t e = r & exp_mask;
    if (e > (max_exp << sm)) {
      r = (r & sign) | exp_mask;
    } else if (e <= (min_exp << sm)) {
      r = r & sign;
    }
  }
  if (nan) r = x;
  return r;
}

static void kc__rp_tile(const void* data, void* out, const void* const* ins, int64_t n) {
  const kc__rp_plan* plan = data;
  size_t es = plan->width / 8u;
  const char* x = ins[0];
  char* r = out;
  for (size_t i = 0; i < (size_t)n; ++i) {
    uint64_t v = 0;
    memcpy(&v, x + i * es, es); /* little-endian hosts */
    v = kc__rp_bits(plan, v);
    memcpy(r + i * es, &v, es);
  }
}

static kc_status* kc__rp_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                const void* const* ins) {
  const kc__rp_plan* plan = ctx->data;
  kc__rp_tile(plan, out, ins, (int64_t)plan->count);
  return NULL;
}

static const char* const kc__rp_attrs[] = {"exponent_bits", "mantissa_bits", NULL};
static const char* const kc__no_attrs[] = {NULL};

const kc__instr_def kc__instr_bits[] = {
    {.op = KC_OP_BITCAST_CONVERT, .name = "bitcast-convert", .min_operands = 1,
     .max_operands = 1, .attrs = kc__no_attrs, .verify = kc__bitcast_convert_verify,
     .prepare = kc__bitcast_convert_prepare, .kernel = kc__bitcast_convert_kernel,
     .tile = kc__bitcast_convert_tile},
    {.op = KC_OP_REDUCE_PRECISION, .name = "reduce-precision", .min_operands = 1,
     .max_operands = 1, .attrs = kc__rp_attrs, .verify = kc__rp_verify,
     .prepare = kc__rp_prepare, .kernel = kc__rp_kernel, .tile = kc__rp_tile},
    {.op = KC__OP_NONE, .name = "opt-barrier", .kind = KC__INSTR_COPY, .min_operands = 1,
     .max_operands = 1, .attrs = kc__no_attrs},
};
const size_t kc__instr_bits_count = KC__ARRAY_SIZE(kc__instr_bits);
