/* StableHLO's complex forms of ops whose HLO instruction takes reals
 * only, built from instructions that take complex values (lower.c's
 * table names these rules):
 *   maximum, minimum  lexicographic in (real, imaginary)
 *   atan2             -i log((x + i y) / sqrt(x^2 + y^2)), the
 *                     specification's formula
 *   cbrt              the principal cube root: |z|^(1/3) at a third of
 *                     z's argument
 *   logistic          1 / (1 + exp(-z)), as XLA expands it
 * Real operands go to the HLO instruction. */
#include "program/frontend/stablehlo/lower_internal.h"

/* The parts' type of a complex shape (f32 for c64, f64 for c128), same
 * dims. */
static kc_status* kc__part_shape(const kc_shape* complex, kc_shape** out) {
  DLDataType dt = kc_shape_get_dtype(complex);
  return kc_shape_create_array(kc_dtype_make(kDLFloat, (uint8_t)(dt.bits / 2), 1),
                               kc_shape_get_dims(complex), kc_shape_get_rank(complex), out);
}

/* maximum and minimum: of complex operands, the one that is larger
 * (smaller) in the lexicographic order of (real, imaginary), as StableHLO
 * defines them (a NaN part compares false: the second operand is taken);
 * otherwise the HLO instruction, which refuses complex ones as XLA's does. */
kc_status* kc__shlo_lower_max_min(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  const kc__shlo_value* a = kc__shlo_operand(s, op, 0);
  const kc__shlo_value* b = kc__shlo_operand(s, op, 1);
  DLDataType dt = kc_shape_get_dtype(a->shape);
  if (kc_shape_is_tuple(a->shape) || dt.code != kDLComplex || kc__shlo_num_operands(op) != 2 ||
      kc__shlo_num_result_types(op) != 1 || !kc_shape_equal(a->shape, b->shape)) {
    return kc__shlo_lower_plain(s, op, r);
  }
  const char* gt = r->opcode == KC_OP_MAXIMUM ? "GT" : "LT";
  kc_shape* part = NULL;
  kc__expr e = {.s = s, .op = op, .what = r->opcode == KC_OP_MAXIMUM ? "maximum" : "minimum"};
  KC_RETURN_IF_ERROR(kc_shape_create_array(kc_dtype_make(kDLFloat, (uint8_t)(dt.bits / 2), 1),
                                           kc_shape_get_dims(a->shape), kc_shape_get_rank(a->shape),
                                           &part));
  e.shape = part;
  e.st = kc_shape_create_array(kc_dtype_make(kDLBool, 8, 1), kc_shape_get_dims(a->shape),
                               kc_shape_get_rank(a->shape), &e.pred);
  int32_t ra = kc__e_add(&e, KC_OP_REAL, part, &a->id, 1, NULL);
  int32_t rb = kc__e_add(&e, KC_OP_REAL, part, &b->id, 1, NULL);
  int32_t ia = kc__e_add(&e, KC_OP_IMAG, part, &a->id, 1, NULL);
  int32_t ib = kc__e_add(&e, KC_OP_IMAG, part, &b->id, 1, NULL);
  int32_t tie[2] = {kc__e_compare(&e, "EQ", ra, rb), kc__e_compare(&e, gt, ia, ib)};
  int32_t first[2] = {kc__e_compare(&e, gt, ra, rb),
                      kc__e_add(&e, KC_OP_AND, e.pred, tie, 2, NULL)};
  int32_t pick = kc__e_add(&e, KC_OP_OR, e.pred, first, 2, NULL);
  int32_t sel[3] = {pick, a->id, b->id};
  int32_t y = kc__e_add(&e, KC_OP_SELECT, a->shape, sel, 3, NULL);
  kc_shape_destroy(part);
  kc_shape_destroy(e.pred);
  KC_RETURN_IF_ERROR(e.st);
  kc__shlo_value v = {.id = y, .shape = kc__shlo_result_type(op, 0)};
  return kc__shlo_bind_values(s, op, &v, 1);
}

/* The real constant v of e->shape (f32 or f64), broadcast. */
static int32_t kc__part_const(kc__expr* e, kc_shape* f32, float v) {
  const kc_shape* part = e->shape;
  e->shape = f32;
  int32_t c = kc__e_const(e, v);
  e->shape = part;
  if (kc_shape_get_dtype(part).bits == 32) return c;
  return kc__e_add(e, KC_OP_CONVERT, part, &c, 1, NULL);
}

/* complex(re, im) of the complex shape c. */
static int32_t kc__make_complex(kc__expr* e, const kc_shape* c, int32_t re, int32_t im) {
  int32_t ids[2] = {re, im};
  return kc__e_add(e, KC_OP_COMPLEX, c, ids, 2, NULL);
}

kc_status* kc__shlo_lower_complex_math(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  size_t n = r->opcode == KC_OP_ATAN2 ? 2 : 1;
  const kc__shlo_value* a = kc__shlo_operand(s, op, 0);
  const kc_shape* c = a->shape;
  if (kc_shape_is_tuple(c) || kc_shape_get_dtype(c).code != kDLComplex ||
      kc__shlo_num_operands(op) != n || kc__shlo_num_result_types(op) != 1 ||
      (n == 2 && !kc_shape_equal(c, kc__shlo_operand(s, op, 1)->shape))) {
    return kc__shlo_lower_plain(s, op, r);
  }
  kc_shape *part = NULL, *f32 = NULL;
  KC_RETURN_IF_ERROR(kc__part_shape(c, &part));
  kc__expr e = {.s = s, .op = op, .shape = part};
  e.what = r->opcode == KC_OP_ATAN2 ? "atan2" : r->opcode == KC_OP_CBRT ? "cbrt" : "logistic";
  e.st = kc_shape_create_array(kc_dtype_make(kDLFloat, 32, 1), kc_shape_get_dims(c),
                               kc_shape_get_rank(c), &f32);
  int32_t z = a->id, y = -1;
  if (r->opcode == KC_OP_ATAN2) {
    /* atan2(y, x): z is y. */
    int32_t x = kc__shlo_operand(s, op, 1)->id;
    int32_t yr = kc__e_add(&e, KC_OP_REAL, part, &z, 1, NULL);
    int32_t yi = kc__e_add(&e, KC_OP_IMAG, part, &z, 1, NULL);
    int32_t iy = kc__make_complex(&e, c, kc__e_op(&e, KC_OP_NEGATE, yi, KC__UNARY), yr);
    e.shape = c;
    int32_t num = kc__e_op(&e, KC_OP_ADD, x, iy);
    int32_t den = kc__e_op(&e, KC_OP_SQRT,
                           kc__e_op(&e, KC_OP_ADD, kc__e_op(&e, KC_OP_MULTIPLY, x, x),
                                    kc__e_op(&e, KC_OP_MULTIPLY, z, z)),
                           KC__UNARY);
    int32_t l = kc__e_op(&e, KC_OP_LOG, kc__e_op(&e, KC_OP_DIVIDE, num, den), KC__UNARY);
    e.shape = part;
    int32_t lr = kc__e_add(&e, KC_OP_REAL, part, &l, 1, NULL);
    int32_t li = kc__e_add(&e, KC_OP_IMAG, part, &l, 1, NULL);
    y = kc__make_complex(&e, c, li, kc__e_op(&e, KC_OP_NEGATE, lr, KC__UNARY));
  } else if (r->opcode == KC_OP_CBRT) {
    int32_t re = kc__e_add(&e, KC_OP_REAL, part, &z, 1, NULL);
    int32_t im = kc__e_add(&e, KC_OP_IMAG, part, &z, 1, NULL);
    int32_t m = kc__e_op(&e, KC_OP_CBRT, kc__e_add(&e, KC_OP_ABS, part, &z, 1, NULL), KC__UNARY);
    int32_t t = kc__e_op(&e, KC_OP_DIVIDE, kc__e_op(&e, KC_OP_ATAN2, im, re),
                         kc__part_const(&e, f32, 3.0f));
    y = kc__make_complex(&e, c,
                         kc__e_op(&e, KC_OP_MULTIPLY, m, kc__e_op(&e, KC_OP_COSINE, t, KC__UNARY)),
                         kc__e_op(&e, KC_OP_MULTIPLY, m, kc__e_op(&e, KC_OP_SINE, t, KC__UNARY)));
  } else {
    int32_t one =
        kc__make_complex(&e, c, kc__part_const(&e, f32, 1.0f), kc__part_const(&e, f32, 0.0f));
    e.shape = c;
    int32_t ez =
        kc__e_op(&e, KC_OP_EXPONENTIAL, kc__e_op(&e, KC_OP_NEGATE, z, KC__UNARY), KC__UNARY);
    y = kc__e_op(&e, KC_OP_DIVIDE, one, kc__e_op(&e, KC_OP_ADD, one, ez));
  }
  kc_shape_destroy(part);
  kc_shape_destroy(f32);
  KC_RETURN_IF_ERROR(e.st);
  kc__shlo_value v = {.id = y, .shape = kc__shlo_result_type(op, 0)};
  return kc__shlo_bind_values(s, op, &v, 1);
}
