/* Element types narrower than a byte.
 *
 * Narrow integers: i4, ui4, i2 and ui2 (and si4, si2), which quantised
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
 * to or from a type of another width.
 *
 * i1 in bitcast_convert: StableHLO counts i1 as one bit there, so a
 * bitcast between a W-bit type and i1 spreads each element's bits over a
 * last dimension of W (little-endian) or gathers them back; kcall's pred
 * is a byte, so these are built from shifts, an iota and a dot. */
#include <string.h>

#include "program/frontend/stablehlo/lower_internal.h"

kc_status* kc__shlo_mark_narrow(kc__shlo_module* m, const kc_shape* shape, unsigned bits) {
  return kc__shlo_shape_map_put(m, &m->narrow, shape, (int32_t)bits);
}

unsigned kc__shlo_narrow(const kc__shlo_module* m, const kc_shape* shape) {
  int32_t bits = shape ? kc__shlo_shape_map_get(&m->narrow, shape) : -1;
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

kc_status* kc__shlo_replace_operand(kc__shlo_scope* s, kc__shlo_op* op, size_t i, int32_t id,
                                    const kc_shape* shape) {
  kc__shlo_value v = *kc__shlo_operand(s, op, i);
  v.name = (kc_string_view){0};
  v.id = id;
  if (shape) v.shape = shape;
  v.known = NULL;
  v.constant = NULL;
  int32_t index = (int32_t)(s->values.size / sizeof v);
  KC_RETURN_IF_ERROR(kc__shlo_append(&s->values, &v, sizeof v));
  ((int32_t*)(void*)op->operands.data)[i] = index;
  return NULL;
}

/* A result given its computing type, to be converted back after the op. */
typedef struct kc__held_pending {
  const kc_shape* computed; /* the result type the op was given */
  const kc_shape* type;     /* its own */
  const void* how;
} kc__held_pending;

kc_status* kc__shlo_held_prepare(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_held_kind* k,
                                 kc__buf* pending) {
  kc__shlo_module* m = s->m;
  for (size_t i = 0; i < kc__shlo_num_operands(op); ++i) {
    const kc__shlo_value* x = kc__shlo_operand(s, op, i);
    const void* how = k->of(m, x->shape);
    if (!how) continue;
    kc__expr e = KC__SHLO_EXPR(s, op, k->what_in);
    int32_t id = k->to_computed(&e, x->id, x->shape, how);
    KC_RETURN_IF_ERROR(e.st);
    const kc_shape* computed = NULL;
    KC_RETURN_IF_ERROR(kc__shlo_module_shape(m, k->computed(how), kc_shape_get_dims(x->shape),
                                             kc_shape_get_rank(x->shape), &computed));
    KC_RETURN_IF_ERROR(kc__shlo_replace_operand(s, op, i, id, computed));
  }
  for (size_t i = 0; i < kc__shlo_num_result_types(op); ++i) {
    const kc_shape* type = kc__shlo_result_type(op, i);
    const void* how = k->of(m, type);
    if (!how) continue;
    kc__held_pending p = {.type = type, .how = how};
    KC_RETURN_IF_ERROR(kc__shlo_module_shape(m, k->computed(how), kc_shape_get_dims(type),
                                             kc_shape_get_rank(type), &p.computed));
    KC_RETURN_IF_ERROR(kc__shlo_append(pending, &p, sizeof p));
    ((const kc_shape**)(void*)op->result_types.data)[i] = p.computed;
  }
  return NULL;
}

kc_status* kc__shlo_held_finish(kc__shlo_scope* s, const kc__shlo_op* op, size_t first,
                                const kc__shlo_held_kind* k, kc__buf* pending) {
  size_t np = pending->size / sizeof(kc__held_pending);
  const kc__held_pending* p = (const kc__held_pending*)(const void*)pending->data;
  size_t count = s->values.size / sizeof(kc__shlo_value);
  for (size_t i = first; i < count && np; ++i) {
    kc__shlo_value* v = (kc__shlo_value*)(void*)s->values.data + i;
    for (size_t j = 0; j < np; ++j) {
      if (v->shape != p[j].computed) continue;
      kc__expr e = KC__SHLO_EXPR(s, op, k->what_out);
      int32_t y = k->to_held(&e, v->id, p[j].type, p[j].how);
      KC_RETURN_IF_ERROR(e.st);
      v = (kc__shlo_value*)(void*)s->values.data + i;
      v->id = y;
      v->shape = p[j].type;
      v->known = NULL;
      break;
    }
  }
  pending->size = 0;
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
  kc__expr e = KC__SHLO_EXPR(s, op, "clamp");
  int32_t id = kc__e_narrow_clamp(&e, x->id, x->shape, kc__narrow_signed(to), bits);
  KC_RETURN_IF_ERROR(e.st);
  return kc__shlo_replace_operand(s, op, 0, id, NULL);
}

kc_status* kc__shlo_narrow_prepare(kc__shlo_scope* s, kc__shlo_op* op) {
  kc__shlo_module* m = s->m;
  if (!m->narrow.slots) return NULL;
  size_t n = kc__shlo_num_operands(op), nr = kc__shlo_num_result_types(op);
  unsigned in = n ? kc__shlo_narrow(m, kc__shlo_operand(s, op, 0)->shape) : 0;
  unsigned out = nr ? kc__shlo_narrow(m, kc__shlo_result_type(op, 0)) : 0;
  bool any = in || out;
  for (size_t i = 1; i < n && !any; ++i)
    any = kc__shlo_narrow(m, kc__shlo_operand(s, op, i)->shape);
  for (size_t i = 1; i < nr && !any; ++i) any = kc__shlo_narrow(m, kc__shlo_result_type(op, i));
  if (!any) return NULL;
  if (kc__shlo_op_is(op, "custom_call")) {
    return kc__shlo_fail(&op->at,
                         "custom_call: an operand or result of a narrow integer type (i2, "
                         "i4, ui2, ui4) is not supported (kcall holds their elements one to a "
                         "byte, which the target would read as another type)");
  }
  if (kc__shlo_op_is(op, "bitcast_convert") && in != out && n == 1 && nr == 1) {
    unsigned from = in ? in : kc_shape_get_dtype(kc__shlo_operand(s, op, 0)->shape).bits;
    unsigned to = out ? out : kc_shape_get_dtype(kc__shlo_result_type(op, 0)).bits;
    return kc__shlo_fail(&op->at,
                         "bitcast_convert: from %u-bit to %u-bit elements is not "
                         "supported where one is a narrow integer (kcall holds i2 and i4 one to "
                         "a byte, so their bits are not packed)",
                         from, to);
  }
  if (kc__shlo_op_is(op, "convert") && out && n == 1) {
    return kc__clamp_to_narrow(s, op, kc__shlo_result_type(op, 0), out);
  }
  bool masked = kc__shlo_op_is(op, "shift_right_logical") || kc__shlo_op_is(op, "popcnt") ||
                kc__shlo_op_is(op, "count_leading_zeros");
  if (!masked || !in || !kc__narrow_signed(kc__shlo_operand(s, op, 0)->shape)) return NULL;
  /* The operand's bits as an unsigned value (0..2^bits-1), still in s8. */
  const kc__shlo_value* x = kc__shlo_operand(s, op, 0);
  kc__expr e = KC__SHLO_EXPR(s, op, "mask");
  e.shape = x->shape;
  int32_t id = kc__e_op(&e, KC_OP_AND, x->id, kc__e_const_int(&e, (1u << in) - 1));
  KC_RETURN_IF_ERROR(e.st);
  return kc__shlo_replace_operand(s, op, 0, id, NULL);
}

kc_status* kc__shlo_narrow_finish(kc__shlo_scope* s, const kc__shlo_op* op, size_t first) {
  if (!s->m->narrow.slots) return NULL;
  bool clz = kc__shlo_op_is(op, "count_leading_zeros");
  size_t count = s->values.size / sizeof(kc__shlo_value);
  for (size_t i = first; i < count; ++i) {
    kc__shlo_value* v = (kc__shlo_value*)(void*)s->values.data + i;
    unsigned bits = kc__shlo_narrow(s->m, v->shape);
    /* (values a call or scan inlined were wrapped by their own ops) */
    if (!bits || v->constant || !kc__shlo_is_result(op, v->name)) continue;
    kc__expr e = KC__SHLO_EXPR(s, op, "narrow");
    e.shape = v->shape;
    int32_t x = v->id;
    /* The byte's leading zeros count 8 - bits more than the narrow
     * type's (the operand was masked to its bits). */
    if (clz) x = kc__e_op(&e, KC_OP_SUBTRACT, x, kc__e_const_int(&e, 8 - bits));
    int32_t y = kc__e_narrow_wrap(&e, x, bits);
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
      return kc__shlo_fail(&op->at,
                           "constant: element %zu, %d, is outside the range of %s "
                           "(%d..%d)",
                           i, v, kc__narrow_name(shape, bits), lo, hi);
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
  kc__expr e = KC__SHLO_EXPR(s, &at, "narrow");
  e.shape = v->shape;
  int32_t y = kc__e_narrow_wrap(&e, v->id, bits);
  KC_RETURN_IF_ERROR(e.st);
  v = kc__shlo_lookup(s, name->text);
  v->id = y;
  return NULL;
}

/* ---- bitcast_convert to and from i1 -------------------------------------- */

/* An unsigned integer shape of `bits` and the dims of `like`, with
 * `extra` appended when it is > 0. */
static kc_status* kc__uint_shape(const kc_shape* like, unsigned bits, int64_t extra,
                                 kc_shape** out) {
  int64_t dims[KC_TENSOR_MAX_NDIM];
  int32_t rank = kc_shape_get_rank(like);
  if (rank) memcpy(dims, kc_shape_get_dims(like), (size_t)rank * sizeof *dims);
  if (extra > 0) dims[rank++] = extra;
  return kc_shape_create_array(kc_dtype_make(kDLUInt, (uint8_t)bits, 1), dims, rank, out);
}

/* iota along the last dimension of e->shape. */
static int32_t kc__iota_last(kc__expr* e) {
  kc_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.name = KC_SV_LIT("iota_dimension");
  attr.type = KC_ATTR_I64;
  attr.v.i64 = kc_shape_get_rank(e->shape) - 1;
  kc_attr_dict attrs = {.count = 1, .entries = &attr};
  return kc__e_add(e, KC_OP_IOTA, e->shape, NULL, 0, &attrs);
}

/* X -> tensor<...xWxi1>: bit k of each element (little-endian) as
 * element k of a new last dimension. */
static int32_t kc__bits_of(kc__expr* e, const kc_shape* from, int32_t x, const kc_shape* wide,
                           const kc_shape* spread) {
  e->shape = wide;
  int32_t u = kc__e_add(e, KC_OP_BITCAST_CONVERT, wide, &x, 1, NULL);
  int64_t keep[KC_TENSOR_MAX_NDIM];
  for (int32_t d = 0; d < kc_shape_get_rank(from); ++d) keep[d] = d;
  int32_t b = -1;
  kc_string_view name;
  if (!e->st) e->st = kc__e_name(e, &name);
  if (!e->st) {
    e->st = kc_program_builder_add_broadcast(e->b, spread, u, keep,
                                             (size_t)kc_shape_get_rank(from), name, &b);
  }
  e->shape = spread;
  int32_t bit = kc__e_op(e, KC_OP_AND, kc__e_op(e, KC_OP_SHIFT_RIGHT_LOGICAL, b, kc__iota_last(e)),
                         kc__e_const_int(e, 1));
  return kc__e_compare(e, "NE", bit, kc__e_const_int(e, 0));
}

/* tensor<...xWxi1> -> X: element k of the last dimension as bit k. The
 * bits are placed and summed by a dot with the powers of two (distinct
 * bits: the sum is their or). */
static int32_t kc__bits_to(kc__expr* e, int32_t p, const kc_shape* spread, const kc_shape* wide,
                           const kc_shape* to) {
  e->shape = spread;
  int32_t u = kc__e_add(e, KC_OP_CONVERT, spread, &p, 1, NULL);
  kc_shape* row = NULL;
  int64_t w = kc_shape_get_dims(spread)[kc_shape_get_rank(spread) - 1];
  if (!e->st) e->st = kc_shape_create_array(kc_shape_get_dtype(spread), &w, 1, &row);
  if (e->st) return -1;
  e->shape = row;
  int32_t powers = kc__e_op(e, KC_OP_SHIFT_LEFT, kc__e_const_int(e, 1), kc__iota_last(e));
  kc__shlo_attrs at = {.n = 0};
  int64_t lhs = kc_shape_get_rank(spread) - 1, rhs = 0;
  if (!e->st) e->st = kc__shlo_attrs_ints((kc__shlo_scope*)e->ctx, &at, "lhs_contracting_dims", &lhs, 1);
  if (!e->st) e->st = kc__shlo_attrs_ints((kc__shlo_scope*)e->ctx, &at, "rhs_contracting_dims", &rhs, 1);
  kc_attr_dict dict = {.count = at.n, .entries = at.a};
  int32_t ids[2] = {u, powers};
  int32_t sum = kc__e_add(e, KC_OP_DOT, wide, ids, 2, &dict);
  kc_shape_destroy(row);
  return kc__e_add(e, KC_OP_BITCAST_CONVERT, to, &sum, 1, NULL);
}

kc_status* kc__shlo_lower_bitcast(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  if (kc__shlo_num_operands(op) != 1 || kc__shlo_num_result_types(op) != 1) {
    return kc__shlo_lower_plain(s, op, r);
  }
  const kc__shlo_value* x = kc__shlo_operand(s, op, 0);
  const kc_shape* to = kc__shlo_result_type(op, 0);
  if (kc_shape_is_tuple(x->shape) || kc_shape_is_tuple(to)) return kc__shlo_lower_plain(s, op, r);
  bool from_pred = kc_shape_get_dtype(x->shape).code == kDLBool;
  bool to_pred = kc_shape_get_dtype(to).code == kDLBool;
  if (from_pred == to_pred) return kc__shlo_lower_plain(s, op, r);
  /* i1 is one bit wide here: the other type's W bits are a last
   * dimension of W i1 elements. */
  const kc_shape* other = from_pred ? to : x->shape;
  const kc_shape* bits = from_pred ? x->shape : to;
  unsigned w = kc_shape_get_dtype(other).bits;
  int32_t rank = kc_shape_get_rank(other);
  bool fits = kc_shape_get_dtype(other).code != kDLComplex && w <= 64 &&
              kc_shape_get_rank(bits) == rank + 1 && kc_shape_get_dims(bits)[rank] == (int64_t)w &&
              (rank == 0 || memcmp(kc_shape_get_dims(bits), kc_shape_get_dims(other),
                                   (size_t)rank * sizeof(int64_t)) == 0);
  if (!fits) {
    return kc__shlo_fail(&op->at,
                         "bitcast_convert: between i1 and a %u-bit type, expected the "
                         "i1 side to have the other's dims and a last dimension of %u",
                         w, w);
  }
  kc_shape *wide = NULL, *spread = NULL;
  KC_RETURN_IF_ERROR(kc__uint_shape(other, w, 0, &wide));
  kc__expr e = KC__SHLO_EXPR(s, op, "bits");
  e.st = kc__uint_shape(other, w, w, &spread);
  if (!e.st) {
    e.st = kc_shape_create_array(kc_dtype_make(kDLBool, 8, 1), kc_shape_get_dims(spread),
                                 kc_shape_get_rank(spread), &e.pred);
  }
  int32_t y = from_pred ? kc__bits_to(&e, x->id, spread, wide, to)
                        : kc__bits_of(&e, other, x->id, wide, spread);
  kc_shape_destroy(wide);
  kc_shape_destroy(spread);
  kc_shape_destroy(e.pred);
  KC_RETURN_IF_ERROR(e.st);
  kc__shlo_value v = {.id = y, .shape = to};
  return kc__shlo_bind_values(s, op, &v, 1);
}
