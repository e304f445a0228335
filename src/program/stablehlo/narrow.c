/* Narrow integers: i4, ui4, i2 and ui2 (and si4, si2), which quantised
 * models and StableHLO's own tests use. kcall has no element type
 * narrower than a byte, so the reader holds each element in one byte, of
 * s8 for a signed or signless type and u8 for an unsigned one (as NumPy's
 * ml_dtypes holds int4 and uint4), and keeps every value in its type's
 * range: the result of each op of a narrow type is wrapped to its low bits
 * (sign-extended for a signed type). That is the narrow type's own
 * arithmetic, since the byte's wraps modulo 2^8 and the narrow type's
 * modulo 2^bits, which divides it. The few instructions that read the bits
 * above the narrow ones get their operand masked first
 * (shift_right_logical, popcnt, count_leading_zeros), and a float
 * converted to a narrow integer is clamped to its range first, as the
 * conversion saturates. What cannot be told apart in a byte is refused: a
 * custom call (its target would read another type) and a bitcast_convert
 * to or from a type of another width. */
#include <string.h>

#include "program/stablehlo/lower_internal.h"

kc_status* kc__shlo_mark_narrow(kc__shlo_module* m, const kc_shape* shape, unsigned bits) {
  void* key = kc__arena_dup(&m->arena, &shape, sizeof shape);
  if (!key) return kc__parse_oom();
  return kc__strmap_put(&m->narrow, (kc_string_view){key, sizeof shape}, (int32_t)bits)
             ? NULL
             : kc__parse_oom();
}

unsigned kc__shlo_narrow(const kc__shlo_module* m, const kc_shape* shape) {
  if (!m->narrow.slots || !shape) return 0;
  int32_t bits = kc__strmap_get(&m->narrow, (kc_string_view){(const char*)&shape, sizeof shape});
  return bits < 0 ? 0 : (unsigned)bits;
}

static bool kc__narrow_signed(const kc_shape* shape) {
  return kc_shape_get_dtype(shape).code == kDLInt;
}

/* "i4", "ui2": the type's MLIR name, for messages. */
static const char* kc__narrow_name(const kc_shape* shape, unsigned bits) {
  static const char* const names[2][2] = {{"ui2", "ui4"}, {"i2", "i4"}};
  return names[kc__narrow_signed(shape)][bits == 4];
}

/* x, of e->shape's narrow type, wrapped into its range. */
static int32_t kc__wrap(kc__expr* e, int32_t x, unsigned bits) {
  if (!kc__narrow_signed(e->shape)) return kc__e_op(e, KC_OP_AND, x, kc__e_const_int(e, (1u << bits) - 1));
  int32_t up = kc__e_const_int(e, 8 - bits);
  return kc__e_op(e, KC_OP_SHIFT_RIGHT_ARITHMETIC, kc__e_op(e, KC_OP_SHIFT_LEFT, x, up), up);
}

/* Operand i of op replaced by a new value of the scope, `id`, of the same
 * type. */
static kc_status* kc__replace_operand(kc__shlo_scope* s, kc__shlo_op* op, size_t i, int32_t id) {
  kc__shlo_value v = *kc__shlo_operand(s, op, i);
  v.name = (kc_string_view){0};
  v.id = id;
  v.known = NULL;
  v.constant = NULL;
  int32_t index = (int32_t)(s->values.size / sizeof v);
  KC_RETURN_IF_ERROR(kc__shlo_append(&s->values, &v, sizeof v));
  ((int32_t*)(void*)op->operands.data)[i] = index;
  return NULL;
}

/* convert of a float to a narrow integer: the float clamped to the
 * integer's range first, so that the conversion saturates at the narrow
 * type's bounds as it does at a byte's. */
static kc_status* kc__clamp_to_narrow(kc__shlo_scope* s, kc__shlo_op* op, const kc_shape* to,
                                      unsigned bits) {
  const kc__shlo_value* x = kc__shlo_operand(s, op, 0);
  DLDataType dt = kc_shape_get_dtype(x->shape);
  if (dt.code == kDLComplex) {
    return kc__shlo_fail(&op->at, "convert: from a complex type to %s is not supported",
                         kc__narrow_name(to, bits));
  }
  if (dt.code != kDLFloat && dt.code != kDLBfloat) return NULL;
  bool sign = kc__narrow_signed(to);
  float lo = sign ? -(float)(1u << (bits - 1)) : 0.0f;
  float hi = sign ? (float)((1u << (bits - 1)) - 1) : (float)((1u << bits) - 1);
  kc_shape* f32 = NULL;
  KC_RETURN_IF_ERROR(kc_shape_create_array(kc_dtype_make(kDLFloat, 32, 1), kc_shape_get_dims(x->shape),
                                           kc_shape_get_rank(x->shape), &f32));
  kc__expr e = {.s = s, .op = op, .what = "clamp", .shape = f32};
  int32_t bounds[2] = {kc__e_const(&e, lo), kc__e_const(&e, hi)};
  e.shape = x->shape;
  for (int k = 0; k < 2 && dt.bits != 32; ++k) {
    bounds[k] = kc__e_add(&e, KC_OP_CONVERT, x->shape, &bounds[k], 1, NULL);
  }
  int32_t id = kc__e_op(&e, KC_OP_MINIMUM, kc__e_op(&e, KC_OP_MAXIMUM, x->id, bounds[0]), bounds[1]);
  kc_shape_destroy(f32);
  KC_RETURN_IF_ERROR(e.st);
  return kc__replace_operand(s, op, 0, id);
}

kc_status* kc__shlo_narrow_prepare(kc__shlo_scope* s, kc__shlo_op* op) {
  kc__shlo_module* m = s->m;
  if (!m->narrow.slots) return NULL;
  size_t n = kc__shlo_num_operands(op), nr = kc__shlo_num_result_types(op);
  unsigned in = n ? kc__shlo_narrow(m, kc__shlo_operand(s, op, 0)->shape) : 0;
  unsigned out = nr ? kc__shlo_narrow(m, kc__shlo_result_type(op, 0)) : 0;
  bool any = in || out;
  for (size_t i = 1; i < n && !any; ++i) any = kc__shlo_narrow(m, kc__shlo_operand(s, op, i)->shape);
  for (size_t i = 1; i < nr && !any; ++i) any = kc__shlo_narrow(m, kc__shlo_result_type(op, i));
  if (!any) return NULL;
  if (kc__shlo_op_is(op, "custom_call")) {
    return kc__shlo_fail(&op->at, "custom_call: an operand or result of a narrow integer type (i2, "
                         "i4, ui2, ui4) is not supported (kcall holds their elements one to a "
                         "byte, which the target would read as another type)");
  }
  if (kc__shlo_op_is(op, "bitcast_convert") && in != out && n == 1 && nr == 1) {
    unsigned from = in ? in : kc_shape_get_dtype(kc__shlo_operand(s, op, 0)->shape).bits;
    unsigned to = out ? out : kc_shape_get_dtype(kc__shlo_result_type(op, 0)).bits;
    return kc__shlo_fail(&op->at, "bitcast_convert: from %u-bit to %u-bit elements is not "
                         "supported where one is a narrow integer (kcall holds i2 and i4 one to "
                         "a byte, so their bits are not packed)", from, to);
  }
  if (kc__shlo_op_is(op, "convert") && out && n == 1) {
    return kc__clamp_to_narrow(s, op, kc__shlo_result_type(op, 0), out);
  }
  bool masked = kc__shlo_op_is(op, "shift_right_logical") || kc__shlo_op_is(op, "popcnt") ||
                kc__shlo_op_is(op, "count_leading_zeros");
  if (!masked || !in || !kc__narrow_signed(kc__shlo_operand(s, op, 0)->shape)) return NULL;
  /* The operand's bits as an unsigned value (0..2^bits-1), still in s8. */
  const kc__shlo_value* x = kc__shlo_operand(s, op, 0);
  kc__expr e = {.s = s, .op = op, .what = "mask", .shape = x->shape};
  int32_t id = kc__e_op(&e, KC_OP_AND, x->id, kc__e_const_int(&e, (1u << in) - 1));
  KC_RETURN_IF_ERROR(e.st);
  return kc__replace_operand(s, op, 0, id);
}

kc_status* kc__shlo_narrow_finish(kc__shlo_scope* s, const kc__shlo_op* op, size_t first) {
  if (!s->m->narrow.slots) return NULL;
  bool clz = kc__shlo_op_is(op, "count_leading_zeros");
  size_t count = s->values.size / sizeof(kc__shlo_value);
  for (size_t i = first; i < count; ++i) {
    kc__shlo_value* v = (kc__shlo_value*)(void*)s->values.data + i;
    unsigned bits = kc__shlo_narrow(s->m, v->shape);
    if (!bits || v->constant) continue;
    kc__expr e = {.s = s, .op = op, .what = "narrow", .shape = v->shape};
    int32_t x = v->id;
    /* The byte's leading zeros count 8 - bits more than the narrow
     * type's (the operand was masked to its bits). */
    if (clz) x = kc__e_op(&e, KC_OP_SUBTRACT, x, kc__e_const_int(&e, 8 - bits));
    int32_t y = kc__wrap(&e, x, bits);
    KC_RETURN_IF_ERROR(e.st);
    v->id = y;
    v->known = NULL;
  }
  return NULL;
}

kc_status* kc__shlo_narrow_constant(const kc__shlo_module* m, const kc__shlo_op* op,
                                    const kc_shape* shape, void* data, size_t size) {
  unsigned bits = kc__shlo_narrow(m, shape);
  if (!bits) return NULL;
  bool sign = kc__narrow_signed(shape);
  /* A signless integer is written as either a signed or an unsigned
   * value, as MLIR reads it; its bits are what counts. */
  int lo = sign ? -(1 << (bits - 1)) : 0, hi = (1 << bits) - 1, mask = (1 << bits) - 1;
  unsigned char* p = data;
  for (size_t i = 0; i < size; ++i) {
    int v = sign ? (int)(signed char)p[i] : (int)p[i];
    if (v < lo || v > hi) {
      return kc__shlo_fail(&op->at, "constant: element %zu, %d, is outside the range of %s "
                           "(%d..%d)", i, v, kc__narrow_name(shape, bits), lo, hi);
    }
    v &= mask;
    if (sign && v >> (bits - 1)) v -= 1 << bits;
    p[i] = (unsigned char)v;
  }
  return NULL;
}

kc_status* kc__shlo_narrow_parameter(kc__shlo_scope* s, const kc__token* name,
                                     const kc_shape* type) {
  unsigned bits = kc__shlo_narrow(s->m, type);
  if (!bits) return NULL;
  kc__shlo_value* v = kc__shlo_lookup(s, name->text);
  if (!v) return NULL;
  kc__shlo_op at;
  memset(&at, 0, sizeof at);
  at.at = *name;
  at.result = *name;
  kc__expr e = {.s = s, .op = &at, .what = "narrow", .shape = v->shape};
  int32_t y = kc__wrap(&e, v->id, bits);
  KC_RETURN_IF_ERROR(e.st);
  v = kc__shlo_lookup(s, name->text);
  v->id = y;
  return NULL;
}
