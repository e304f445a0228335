/* complex, real and imag: building complex values and taking them apart. */
#include <stdio.h>

#include "internal/common.h"
#include "program/ops.h"

typedef struct kc__parts_plan {
  int64_t count;
  size_t part; /* bytes of one part: 4 (c64, f32) or 8 */
  bool from_complex; /* real, imag: the operand is complex */
} kc__parts_plan;

static kc_status* kc__parts_read(const kc_program* p, const kc__instr* in, kc__parts_plan* plan) {
  const kc_shape* r = in->shape;
  const kc_shape* x = kc__op_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__op_expect_array(in, r, "the result"));
  for (size_t i = 0; i < in->num_operands; ++i) {
    KC_RETURN_IF_ERROR(kc__op_expect_array(in, kc__op_operand(p, in, i), "an operand"));
  }
  DLDataType tx = kc_shape_get_dtype(x), tr = kc_shape_get_dtype(r);
  plan->count = 1;
  for (int32_t d = 0; d < kc_shape_get_rank(r); ++d) plan->count *= kc_shape_get_dims(r)[d];
  char bx[32], br[32], g[256];
  bool ok;
  if (in->op == KC_OP_COMPLEX) {
    const kc_shape* y = kc__op_operand(p, in, 1);
    ok = tx.code == kDLFloat && (tx.bits == 32 || tx.bits == 64) && tx.lanes == 1 &&
         kc_shape_equal(x, y) && tr.code == kDLComplex && tr.bits == 2 * tx.bits &&
         kc__shape_same_dims(x, r);
    plan->part = tx.bits / 8;
    if (!ok) {
      kc_shape_format(y, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "complex: expected two f32 (or f64) operands of one shape and a c64 "
                        "(or c128) result of their dims, got %s and %s giving %s",
                        kc__op_dtype_text(tx, bx, sizeof bx), g,
                        kc__op_dtype_text(tr, br, sizeof br));
    }
    return NULL;
  }
  plan->from_complex = tx.code == kDLComplex;
  bool real_in = tx.code == kDLFloat && (tx.bits == 32 || tx.bits == 64);
  ok = tx.lanes == 1 && (plan->from_complex ? (tx.bits == 64 || tx.bits == 128) : real_in) &&
       tr.code == kDLFloat && tr.bits == (plan->from_complex ? tx.bits / 2 : tx.bits) &&
       kc__shape_same_dims(x, r);
  plan->part = tr.bits / 8;
  if (!ok) {
    const kc__instr_def* def = in->def;
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "%s: expected a c64, c128, f32 or f64 operand and a result of its part "
                      "type (f32 for c64) and dims, got %s giving %s",
                      def->name, kc__op_dtype_text(tx, bx, sizeof bx),
                      kc__op_dtype_text(tr, br, sizeof br));
  }
  return NULL;
}

static kc_status* kc__parts_verify(const kc_program* p, const kc__instr* in) {
  kc__parts_plan plan;
  return kc__parts_read(p, in, &plan);
}

static kc_status* kc__parts_prepare(const kc_program* p, const kc__instr* in,
                                    const kc__prepare_ctx* ctx, const void** out) {
  kc__parts_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  KC_RETURN_IF_ERROR(kc__parts_read(p, in, plan));
  *out = plan;
  return NULL;
}

static kc_status* kc__parts_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                   const void* const* ins) {
  const kc__parts_plan* plan = ctx->data;
  size_t w = plan->part;
  char* r = out;
  const char* a = ins[0];
  switch (ctx->instr->op) {
    case KC_OP_COMPLEX: {
      const char* b = ins[1];
      for (int64_t i = 0; i < plan->count; ++i) {
        memcpy(r + (size_t)i * 2 * w, a + (size_t)i * w, w);
        memcpy(r + (size_t)i * 2 * w + w, b + (size_t)i * w, w);
      }
      return NULL;
    }
    default: {
      bool imag = ctx->instr->op == KC_OP_IMAG;
      if (!plan->from_complex) {
        /* real(x) = x and imag(x) = 0 for a real x */
        if (imag) {
          memset(r, 0, (size_t)plan->count * w);
        } else {
          memcpy(r, a, (size_t)plan->count * w);
        }
        return NULL;
      }
      for (int64_t i = 0; i < plan->count; ++i) {
        memcpy(r + (size_t)i * w, a + (size_t)i * 2 * w + (imag ? w : 0), w);
      }
      return NULL;
    }
  }
}

static const char* const kc__no_attrs[] = {NULL};

const kc__instr_def kc__ops_complex[] = {
    {.op = KC_OP_COMPLEX, .name = "complex", .min_operands = 2, .max_operands = 2,
     .num_computations = 0, .attrs = kc__no_attrs, .computation_attrs = NULL,
     .verify = kc__parts_verify, .prepare = kc__parts_prepare, .kernel = kc__parts_kernel,
     .device_elementwise = true},
    {.op = KC_OP_REAL, .name = "real", .min_operands = 1, .max_operands = 1, .num_computations = 0,
     .attrs = kc__no_attrs, .computation_attrs = NULL, .verify = kc__parts_verify,
     .prepare = kc__parts_prepare, .kernel = kc__parts_kernel, .device_elementwise = true},
    {.op = KC_OP_IMAG, .name = "imag", .min_operands = 1, .max_operands = 1, .num_computations = 0,
     .attrs = kc__no_attrs, .computation_attrs = NULL, .verify = kc__parts_verify,
     .prepare = kc__parts_prepare, .kernel = kc__parts_kernel, .device_elementwise = true},
};
const size_t kc__ops_complex_count = KC__ARRAY_SIZE(kc__ops_complex);
