/* compare, select, clamp and iota. */
#include <math.h>
#include <stdio.h>

#include "internal/common.h"
#include "kernels/xla_arith.h"
#include "program/instr/instr.h"
#include "program/instr/instr_types.h"

/* ---- element types (KC__ETYPES, instr.h) ----------------------------------- */

/* The element types of each instruction here, for its refusals. */
#define KC__COMPARE_TYPES "pred, s8..s64, u8..u64, f16, bf16, f32, f64, c64, c128"
#define KC__CLAMP_TYPES "pred, s8..s64, u8..u64, f16, bf16, f32, f64"
#define KC__IOTA_TYPES "s8..s64, u8..u64, f16, bf16, f32, f64, c64, c128"

static kc_status* kc__unsupported_type(const kc__instr* in, DLDataType t, const char* what,
                                       const char* supported) {
  char buf[32];
  return kc__instr_error(in, KC_UNIMPLEMENTED,
                    "%s: element type %s is not supported (supported: %s)",
                    what, kc__instr_dtype_text(t, buf, sizeof buf), supported);
}

static kc_status* kc__expect_shape(const kc__instr* in, const kc_shape* got,
                                   const kc_shape* want, const char* what) {
  if (kc_shape_equal(got, want)) return NULL;
  char w[256], g[256];
  kc_shape_format(want, w, sizeof w);
  kc_shape_format(got, g, sizeof g);
  return kc__instr_error(in, KC_INVALID_ARGUMENT, "%s: expected %s, got %s", what, w, g);
}

/* ---- compare -------------------------------------------------------------------- */

enum { KC__CMP_EQ, KC__CMP_NE, KC__CMP_LT, KC__CMP_LE, KC__CMP_GT, KC__CMP_GE };

/* The outcomes (instr_types.h) each direction accepts. */
static const unsigned kc__accepts[] = {
    KC__ORDER_EQ, KC__ORDER_LT | KC__ORDER_GT | KC__ORDER_UNORDERED, KC__ORDER_LT,
    KC__ORDER_LT | KC__ORDER_EQ, KC__ORDER_GT, KC__ORDER_GT | KC__ORDER_EQ};

typedef struct kc__compare_plan {
  int type;        /* KC__E_* of the operands; NONE: f16, bf16, c64, c128 */
  DLDataType dtype; /* of the operands */
  int direction;   /* KC__CMP_* */
  bool total;      /* floats in XLA's total order */
  int64_t count;
} kc__compare_plan;

static const char* const kc__directions[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};

static kc_status* kc__compare_read(const kc_program* p, const kc__instr* in,
                                   kc__compare_plan* out) {
  const kc_shape* a = kc__instr_operand(p, in, 0);
  const kc_shape* b = kc__instr_operand(p, in, 1);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, a, "operand 0"));
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, in->shape, "the result"));
  KC_RETURN_IF_ERROR(kc__expect_shape(in, b, a, "operand 1"));
  if (in->shape->dtype.code != kDLBool || !kc__shape_same_dims(in->shape, a)) {
    char w[256], g[256];
    kc_shape_format(a, w, sizeof w);
    kc_shape_format(in->shape, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "expected a pred result with the dims of %s, got %s", w, g);
  }
  out->type = kc__instr_num_type(a->dtype);
  out->dtype = a->dtype;
  bool is_complex = kc__type_is_complex(a->dtype);
  if (out->type == KC__E_NONE && !is_complex && !kc__type_is_half(a->dtype)) {
    return kc__unsupported_type(in, a->dtype, "operand 0", KC__COMPARE_TYPES);
  }
  out->count = kc__shape_elements(a);
  kc_string_view dir, type;
  KC_RETURN_IF_ERROR(kc__instr_attr_string(in, "direction", false, &dir));
  out->direction = -1;
  for (int i = 0; i < 6; ++i) {
    if (kc_sv_equal(dir, kc_sv(kc__directions[i]))) out->direction = i;
  }
  if (out->direction < 0) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "attribute direction: expected EQ, NE, LT, LE, GT or GE, got %s",
                      KC__Q(dir));
  }
  if (is_complex && out->direction != KC__CMP_EQ && out->direction != KC__CMP_NE) {
    char buf[32];
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute direction: expected EQ or NE for %s operands (complex "
                           "numbers are not ordered), got %s",
                           kc__instr_dtype_text(a->dtype, buf, sizeof buf), KC__Q(dir));
  }
  KC_RETURN_IF_ERROR(kc__instr_attr_string(in, "type", true, &type));
  bool is_float = a->dtype.code == kDLFloat || a->dtype.code == kDLBfloat || is_complex;
  bool is_signed = a->dtype.code == kDLInt;
  const char* want = is_complex ? "FLOAT"
                     : is_float ? "FLOAT or TOTALORDER"
                     : is_signed ? "SIGNED" : "UNSIGNED";
  out->total = false;
  if (type.size) {
    bool ok = is_float ? kc_sv_equal(type, KC_SV_LIT("FLOAT")) ||
                             (!is_complex &&
                              (out->total = kc_sv_equal(type, KC_SV_LIT("TOTALORDER"))))
                       : kc_sv_equal(type, kc_sv(want));
    if (!ok) {
      char buf[32];
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "attribute type: expected %s for %s operands, got %s", want,
                        kc__instr_dtype_text(a->dtype, buf, sizeof buf),
                        KC__Q(type));
    }
  }
  return NULL;
}

static kc_status* kc__compare_verify(const kc_program* p, const kc__instr* in) {
  kc__compare_plan plan;
  return kc__compare_read(p, in, &plan);
}

static kc_status* kc__compare_prepare(const kc_program* p, const kc__instr* in,
                                      const kc__prepare_ctx* ctx, const void** out) {
  kc__compare_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  KC_RETURN_IF_ERROR(kc__compare_read(p, in, plan));
  *out = plan;
  return NULL;
}

/* A float's key in XLA's total order: -NaN < -inf < ... < -0 < +0 < ...
 * < +inf < +NaN, as signed integers. */
static int64_t kc__total_key_f64(double v) {
  int64_t bits;
  memcpy(&bits, &v, sizeof bits);
  return bits < 0 ? (int64_t)((uint64_t)bits ^ 0x7FFFFFFFFFFFFFFFull) : bits;
}
static int32_t kc__total_key_f32(float v) {
  int32_t bits;
  memcpy(&bits, &v, sizeof bits);
  return bits < 0 ? (int32_t)((uint32_t)bits ^ 0x7FFFFFFFu) : bits;
}

#define KC__CMP_LOOP(x, y)                                                  \
  switch (dir) {                                                            \
    case KC__CMP_EQ: for (int64_t i = 0; i < n; ++i) r[i] = (x) == (y); break; \
    case KC__CMP_NE: for (int64_t i = 0; i < n; ++i) r[i] = (x) != (y); break; \
    case KC__CMP_LT: for (int64_t i = 0; i < n; ++i) r[i] = (x) < (y); break;  \
    case KC__CMP_LE: for (int64_t i = 0; i < n; ++i) r[i] = (x) <= (y); break; \
    case KC__CMP_GT: for (int64_t i = 0; i < n; ++i) r[i] = (x) > (y); break;  \
    default: for (int64_t i = 0; i < n; ++i) r[i] = (x) >= (y); break;       \
  }

#define KC__CMP_FN(sfx, ctype, code, bits)                                      \
  static void kc__compare_##sfx(int dir, const ctype* a, const ctype* b,        \
                                uint8_t* r, int64_t n) {                        \
    KC__CMP_LOOP(a[i], b[i])                                                    \
  }
KC__ETYPES(KC__CMP_FN)
#undef KC__CMP_FN

static void kc__compare_tile(const void* data, void* out, const void* const* ins, int64_t n) {
  const kc__compare_plan* plan = data;
  int dir = plan->direction;
  uint8_t* r = out;
  if (kc__type_is_half(plan->dtype)) {
    kc__half_compare_run(kc__accepts[dir], plan->total, plan->dtype.code == kDLBfloat, ins[0],
                         ins[1], r, n);
    return;
  }
  if (kc__type_is_complex(plan->dtype)) {
    kc__complex_compare_run(kc__accepts[dir], plan->dtype.bits == 128, ins[0], ins[1], r, n);
    return;
  }
  if (plan->total && plan->type == KC__E_f32) {
    const float* a = ins[0];
    const float* b = ins[1];
    KC__CMP_LOOP(kc__total_key_f32(a[i]), kc__total_key_f32(b[i]))
    return;
  }
  if (plan->total && plan->type == KC__E_f64) {
    const double* a = ins[0];
    const double* b = ins[1];
    KC__CMP_LOOP(kc__total_key_f64(a[i]), kc__total_key_f64(b[i]))
    return;
  }
  switch (plan->type) {
#define KC__CMP_CASE(sfx, ctype, code, bits) \
  case KC__E_##sfx:                        \
    kc__compare_##sfx(dir, ins[0], ins[1], r, n); \
    break;
    KC__ETYPES(KC__CMP_CASE)
#undef KC__CMP_CASE
    default:
      break;
  }
}

static kc_status* kc__compare_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                     const void* const* ins) {
  const kc__compare_plan* plan = ctx->data;
  kc__compare_tile(plan, out, ins, plan->count);
  return NULL;
}

/* ---- select and clamp ---------------------------------------------------------- */

typedef struct kc__select_plan {
  int type;
  DLDataType dtype;
  size_t esize;
  int64_t count;
  bool scalar[3]; /* operand i is a scalar, broadcast */
} kc__select_plan;

/* Operand i of a select or clamp: the result's shape, or a scalar of its
 * element type where XLA allows one. */
static kc_status* kc__scalar_or_same(const kc_program* p, const kc__instr* in, size_t i,
                                     DLDataType dtype, bool* out_scalar) {
  const kc_shape* o = kc__instr_operand(p, in, i);
  char what[32];
  snprintf(what, sizeof what, "operand %zu", i);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, o, what));
  *out_scalar = o->rank == 0 && in->shape->rank > 0;
  if (kc_dtype_equal(o->dtype, dtype) && (*out_scalar || kc__shape_same_dims(o, in->shape))) {
    return NULL;
  }
  char w[256], g[256], t[32];
  kc_shape_format(in->shape, w, sizeof w);
  kc_shape_format(o, g, sizeof g);
  return kc__instr_error(in, KC_INVALID_ARGUMENT,
                    "%s: expected the dims of %s (or a scalar) of type %s, got %s", what, w,
                    kc__instr_dtype_text(dtype, t, sizeof t), g);
}

static kc_status* kc__select_read(const kc_program* p, const kc__instr* in,
                                  kc__select_plan* out) {
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, in->shape, "the result"));
  DLDataType t = in->shape->dtype;
  DLDataType pred = {kDLBool, 8, 1};
  bool is_select = in->op == KC_OP_SELECT;
  for (size_t i = 0; i < 3; ++i) {
    DLDataType want = is_select && i == 0 ? pred : t;
    KC_RETURN_IF_ERROR(kc__scalar_or_same(p, in, i, want, &out->scalar[i]));
  }
  if (is_select && (out->scalar[1] || out->scalar[2])) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "operands 1 and 2: expected the result's shape, got a scalar");
  }
  if (!is_select && out->scalar[1]) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "operand 1: expected the result's shape, got a scalar");
  }
  out->type = kc__instr_num_type(t);
  out->dtype = t;
  if (out->type == KC__E_NONE && !is_select && !kc__type_is_half(t)) {
    return kc__unsupported_type(in, t, "the result", KC__CLAMP_TYPES);
  }
  out->esize = kc_dtype_get_size(t);
  out->count = kc__shape_elements(in->shape);
  if (is_select && out->esize == 0) {
    return kc__unsupported_type(in, t, "the result", "any type of whole bytes");
  }
  return NULL;
}

static kc_status* kc__select_verify(const kc_program* p, const kc__instr* in) {
  kc__select_plan plan;
  return kc__select_read(p, in, &plan);
}

static kc_status* kc__select_prepare(const kc_program* p, const kc__instr* in,
                                     const kc__prepare_ctx* ctx, const void** out) {
  kc__select_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  KC_RETURN_IF_ERROR(kc__select_read(p, in, plan));
  *out = plan;
  return NULL;
}

/* Any element type, by size: select moves elements. */
static void kc__select_tile(const void* data, void* out, const void* const* ins, int64_t n) {
  const kc__select_plan* plan = data;
  const uint8_t* pred = ins[0];
  size_t es = plan->esize;
  const char* t = ins[1];
  const char* f = ins[2];
  char* r = out;
  if (plan->scalar[0]) {
    memcpy(r, pred[0] ? t : f, (size_t)n * es);
    return;
  }
  switch (es) {
#define KC__SELECT_WIDTH(ctype)                                            \
  {                                                                        \
    const ctype* tv = (const ctype*)(const void*)t;                        \
    const ctype* fv = (const ctype*)(const void*)f;                        \
    ctype* rv = (ctype*)(void*)r;                                          \
    for (int64_t i = 0; i < n; ++i) rv[i] = pred[i] ? tv[i] : fv[i];       \
    return;                                                                \
  }
    case 1: KC__SELECT_WIDTH(uint8_t)
    case 2: KC__SELECT_WIDTH(uint16_t)
    case 4: KC__SELECT_WIDTH(uint32_t)
    case 8: KC__SELECT_WIDTH(uint64_t)
#undef KC__SELECT_WIDTH
    default:
      for (int64_t i = 0; i < n; ++i) {
        memcpy(r + (size_t)i * es, (pred[i] ? t : f) + (size_t)i * es, es);
      }
      return;
  }
}

static kc_status* kc__select_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                    const void* const* ins) {
  const kc__select_plan* plan = ctx->data;
  kc__select_tile(plan, out, ins, plan->count);
  return NULL;
}

/* clamp(lo, x, hi) = minimum(maximum(x, lo), hi), as XLA defines it, with
 * their rules for floats (kernels/xla_arith.h): a NaN in x, lo or hi gives
 * NaN, and -0 orders below +0. */
#define KC__CLAMP_FN(sfx, ctype, code, bits)                                     \
  static void kc__clamp_##sfx(const kc__select_plan* plan, const ctype* lo,      \
                              const ctype* x, const ctype* hi, ctype* r,         \
                              int64_t n) {                                       \
    for (int64_t i = 0; i < n; ++i) {                                           \
      ctype l = lo[plan->scalar[0] ? 0 : i], h = hi[plan->scalar[2] ? 0 : i];    \
      ctype v = x[i];                                                           \
      v = KC__XLA_MAX(v, l);                                                     \
      r[i] = KC__XLA_MIN(v, h);                                                  \
    }                                                                           \
  }
KC__ETYPES(KC__CLAMP_FN)
#undef KC__CLAMP_FN

static void kc__clamp_tile(const void* data, void* out, const void* const* ins, int64_t n) {
  const kc__select_plan* plan = data;
  if (kc__type_is_half(plan->dtype)) {
    kc__half_clamp_run(plan->dtype.code == kDLBfloat, ins[0], plan->scalar[0], ins[1], ins[2],
                       plan->scalar[2], out, n);
    return;
  }
  switch (plan->type) {
#define KC__CLAMP_CASE(sfx, ctype, code, bits)            \
  case KC__E_##sfx:                                     \
    kc__clamp_##sfx(plan, ins[0], ins[1], ins[2], out, n); \
    break;
    KC__ETYPES(KC__CLAMP_CASE)
#undef KC__CLAMP_CASE
    default:
      break;
  }
}

static kc_status* kc__clamp_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                   const void* const* ins) {
  const kc__select_plan* plan = ctx->data;
  kc__clamp_tile(plan, out, ins, plan->count);
  return NULL;
}

/* ---- iota ----------------------------------------------------------------------- */

typedef struct kc__iota_plan {
  int type;
  DLDataType dtype;
  int64_t outer, len, inner; /* around the iota dimension */
} kc__iota_plan;

static kc_status* kc__iota_read(const kc__instr* in, kc__iota_plan* out) {
  const kc_shape* r = in->shape;
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, r, "the result"));
  int64_t dim;
  KC_RETURN_IF_ERROR(kc__instr_attr_int(in, "iota_dimension", &dim));
  if (dim < 0 || dim >= r->rank) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "attribute iota_dimension: expected 0 to %d (the result's rank is "
                      "%d), got %lld",
                      r->rank - 1, r->rank, (long long)dim);
  }
  out->type = kc__instr_num_type(r->dtype);
  out->dtype = r->dtype;
  bool other = kc__type_is_half(r->dtype) || kc__type_is_complex(r->dtype);
  if ((out->type == KC__E_NONE && !other) || out->type == KC__E_pred) {
    return kc__unsupported_type(in, r->dtype, "the result", KC__IOTA_TYPES);
  }
  out->outer = out->inner = 1;
  for (int32_t d = 0; d < r->rank; ++d) {
    if (d < dim) out->outer *= r->dims[d];
    if (d > dim) out->inner *= r->dims[d];
  }
  out->len = r->dims[dim];
  return NULL;
}

static kc_status* kc__iota_verify(const kc_program* p, const kc__instr* in) {
  KC__UNUSED(p);
  kc__iota_plan plan;
  return kc__iota_read(in, &plan);
}

static kc_status* kc__iota_prepare(const kc_program* p, const kc__instr* in,
                                   const kc__prepare_ctx* ctx, const void** out) {
  KC__UNUSED(p);
  kc__iota_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  KC_RETURN_IF_ERROR(kc__iota_read(in, plan));
  *out = plan;
  return NULL;
}

static kc_status* kc__iota_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                  const void* const* ins) {
  KC__UNUSED(ins);
  const kc__iota_plan* plan = ctx->data;
  if (kc__type_is_half(plan->dtype)) {
    kc__half_iota_run(plan->dtype.code == kDLBfloat, out, plan->outer, plan->len, plan->inner);
    return NULL;
  }
  if (kc__type_is_complex(plan->dtype)) {
    kc__complex_iota_run(plan->dtype.bits == 128, out, plan->outer, plan->len, plan->inner);
    return NULL;
  }
  switch (plan->type) {
#define KC__IOTA_CASE(sfx, ctype, code, bits)                               \
  case KC__E_##sfx: {                                                     \
    ctype* r = out;                                                         \
    for (int64_t o = 0; o < plan->outer; ++o) {                             \
      for (int64_t k = 0; k < plan->len; ++k) {                             \
        for (int64_t i = 0; i < plan->inner; ++i) *r++ = (ctype)k;          \
      }                                                                     \
    }                                                                       \
    break;                                                                  \
  }
    KC__ETYPES(KC__IOTA_CASE)
#undef KC__IOTA_CASE
    default:
      break;
  }
  return NULL;
}

/* ---- the table ------------------------------------------------------------------ */

static const char* const kc__compare_attrs[] = {"direction", "type", NULL};
static const char* const kc__iota_attrs[] = {"iota_dimension", NULL};
static const char* const kc__no_attrs[] = {NULL};

const kc__instr_def kc__instr_select[] = {
    {.op = KC_OP_COMPARE, .name = "compare", .min_operands = 2, .max_operands = 2,
     .num_computations = 0, .attrs = kc__compare_attrs, .computation_attrs = NULL,
     .verify = kc__compare_verify, .prepare = kc__compare_prepare, .kernel = kc__compare_kernel,
     .tile = kc__compare_tile, .device_elementwise = true},
    {.op = KC_OP_SELECT, .name = "select", .min_operands = 3, .max_operands = 3,
     .num_computations = 0, .attrs = kc__no_attrs, .computation_attrs = NULL,
     .verify = kc__select_verify, .prepare = kc__select_prepare, .kernel = kc__select_kernel,
     .tile = kc__select_tile, .device_elementwise = true},
    {.op = KC_OP_CLAMP, .name = "clamp", .min_operands = 3, .max_operands = 3,
     .num_computations = 0, .attrs = kc__no_attrs, .computation_attrs = NULL,
     .verify = kc__select_verify, .prepare = kc__select_prepare, .kernel = kc__clamp_kernel,
     .tile = kc__clamp_tile, .device_elementwise = true},
    {.op = KC_OP_IOTA, .name = "iota", .min_operands = 0, .max_operands = 0, .num_computations = 0,
     .attrs = kc__iota_attrs, .computation_attrs = NULL, .verify = kc__iota_verify,
     .prepare = kc__iota_prepare, .kernel = kc__iota_kernel},
};
const size_t kc__instr_select_count = KC__ARRAY_SIZE(kc__instr_select);
