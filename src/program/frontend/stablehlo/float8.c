/* The f8, f6 and f4 float types in StableHLO (f8E4M3FN, f8E5M2, ... f4E2M1FN), held as
 * their bits.
 *
 * kcall has no float type narrower than f16, so the reader holds each
 * element of these types in one byte of u8, its bits as ml_dtypes and
 * XLA store them (the low 6 or 4 bits for f6 and f4): a parameter of
 * tensor<4xf8E4M3FN> takes an array of those bytes, a result is one.
 * Constants are encoded from their literals here (round to nearest, ties
 * to even, each format's overflow rule). What moves values without
 * reading them runs on the bytes as they are (reshape, transpose, slice,
 * broadcast, concatenate, pad, gather, select, control flow, a
 * bitcast_convert to a type of the same width). Any other op without
 * regions (convert, arithmetic, compare, dot_general, ...) computes in
 * f32: its operands of these types are decoded (a lookup in the format's
 * table of values), and its results of these types are computed in f32
 * and rounded once to the type (encoded by instructions, as
 * kc__f8_encode rounds) -- the policy f16 and bf16 follow. An op with
 * regions (reduce, sort, scatter, ...) runs on the bits, its regions'
 * ops computing as above (so per element: no native reducer reads f8);
 * reduce's short form, custom calls and rng_bit_generator of these types
 * are refused, naming the op. */
#include <string.h>

#include "program/frontend/stablehlo/lower_internal.h"

kc_status* kc__shlo_mark_float8(kc__shlo_module* m, const kc_shape* shape, const kc__f8_format* f) {
  return kc__shlo_shape_map_put(m, &m->float8, shape, kc__f8_index(f));
}

const kc__f8_format* kc__shlo_float8(const kc__shlo_module* m, const kc_shape* shape) {
  int32_t i = shape ? kc__shlo_shape_map_get(&m->float8, shape) : -1;
  return i < 0 ? NULL : kc__f8_at(i);
}

/* ---- ops ---------------------------------------------------------------------- */

/* The ops that move values without reading them: they run on the bytes. */
static bool kc__moves_bits(const kc__shlo_op* op) {
  static const char* const names[] = {"reshape",
                                      "transpose",
                                      "broadcast_in_dim",
                                      "slice",
                                      "dynamic_slice",
                                      "dynamic_update_slice",
                                      "concatenate",
                                      "reverse",
                                      "pad",
                                      "gather",
                                      "select",
                                      "tuple",
                                      "get_tuple_element",
                                      "optimization_barrier",
                                      "while",
                                      "case",
                                      "if",
                                      "bitcast_convert",
                                      "dynamic_reshape",
                                      "dynamic_broadcast_in_dim",
                                      "real_dynamic_slice",
                                      "dynamic_gather",
                                      "dynamic_pad"};
  for (size_t i = 0; i < KC__ARRAY_SIZE(names); ++i) {
    if (kc__shlo_op_is(op, names[i])) return true;
  }
  /* calls and composites are inlined: their ops are checked one by one */
  return kc_sv_equal(op->name, KC_SV_LIT("func.call")) ||
         kc_sv_equal(op->name, KC_SV_LIT("call")) || kc__shlo_op_is(op, "composite") ||
         kc__shlo_op_is(op, "constant");
}

/* x decoded to f32 (../float8.c). */
static kc_status* kc__decode(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_value* x,
                             const kc__f8_format* f, int32_t* out) {
  kc__expr e = KC__SHLO_EXPR(s, op, "f8_decode");
  *out = kc__e_f8_decode(&e, x->id, x->shape, f);
  return e.st;
}

/* An array shape of `like`'s dims and element type dt (kept by the module). */
static kc_status* kc__like(kc__shlo_module* m, const kc_shape* like, DLDataType dt,
                           const kc_shape** out) {
  return kc__shlo_module_shape(m, dt, kc_shape_get_dims(like), kc_shape_get_rank(like), out);
}

/* The results an op computes in f32 for these formats, to be encoded
 * after it (m->float8_pending: kc__f8_pending). */
typedef struct kc__f8_pending {
  const kc_shape* f32;  /* the result type the op was given */
  const kc_shape* type; /* its own */
  const kc__f8_format* format;
} kc__f8_pending;

kc_status* kc__shlo_float8_prepare(kc__shlo_scope* s, kc__shlo_op* op) {
  kc__shlo_module* m = s->m;
  m->float8_pending.size = 0;
  if (!m->float8.slots) return NULL;
  size_t n = kc__shlo_num_operands(op), nr = kc__shlo_num_result_types(op);
  const kc__f8_format *in = NULL, *out = NULL;
  for (size_t i = 0; i < n && !in; ++i) in = kc__shlo_float8(m, kc__shlo_operand(s, op, i)->shape);
  for (size_t i = 0; i < nr && !out; ++i) out = kc__shlo_float8(m, kc__shlo_result_type(op, i));
  if ((!in && !out) || kc__moves_bits(op)) return NULL;
  const kc__f8_format* any = out ? out : in;
  /* An op with regions runs on the bits: its regions' own ops decode and
   * encode them (reduce, sort, scatter, reduce_window, select_and_scatter
   * per element, then). The short form of reduce ("applies stablehlo.add")
   * would build its reducer on the bits' type, and the ops below have no
   * f32 form to stand for them: refused. */
  if (op->regions.size) return NULL;
  static const char* const refused[] = {
      "reduce",          "reduce_window", "select_and_scatter", "sort",
      "scatter",         "custom_call",   "rng_bit_generator",  "fft",
      "triangular_solve"};
  bool refuse = false;
  for (size_t i = 0; i < KC__ARRAY_SIZE(refused) && !refuse; ++i) {
    refuse = kc__shlo_op_is(op, refused[i]);
  }
  if (refuse) {
    return kc__shlo_fail(&op->at,
                         "%.*s of %s is not supported (kcall holds %s values as their "
                         "bits, which this op would read as integers%s)",
                         (int)op->name.size, op->name.data, kc__f8_name(any), kc__f8_name(any),
                         kc__shlo_op_is(op, "custom_call") || kc__shlo_op_is(op, "fft") ||
                                 kc__shlo_op_is(op, "rng_bit_generator") ||
                                 kc__shlo_op_is(op, "triangular_solve")
                             ? ""
                             : "; a reducer written as a region computes in f32");
  }
  /* Operands of these types decoded to f32; results of them computed in
   * f32, then encoded (kc__shlo_float8_finish). */
  for (size_t i = 0; i < n; ++i) {
    const kc__shlo_value* x = kc__shlo_operand(s, op, i);
    const kc__f8_format* f = kc__shlo_float8(m, x->shape);
    if (!f) continue;
    int32_t id;
    KC_RETURN_IF_ERROR(kc__decode(s, op, x, f, &id));
    const kc_shape* f32 = NULL;
    KC_RETURN_IF_ERROR(kc__like(m, x->shape, kc_dtype_make(kDLFloat, 32, 1), &f32));
    KC_RETURN_IF_ERROR(kc__shlo_replace_operand(s, op, i, id, f32));
  }
  for (size_t i = 0; i < nr; ++i) {
    const kc_shape* type = kc__shlo_result_type(op, i);
    const kc__f8_format* f = kc__shlo_float8(m, type);
    if (!f) continue;
    kc__f8_pending p = {.type = type, .format = f};
    KC_RETURN_IF_ERROR(kc__like(m, type, kc_dtype_make(kDLFloat, 32, 1), &p.f32));
    KC_RETURN_IF_ERROR(kc__shlo_append(&m->float8_pending, &p, sizeof p));
    ((const kc_shape**)(void*)op->result_types.data)[i] = p.f32;
  }
  return NULL;
}

kc_status* kc__shlo_float8_finish(kc__shlo_scope* s, const kc__shlo_op* op, size_t first) {
  kc__shlo_module* m = s->m;
  size_t np = m->float8_pending.size / sizeof(kc__f8_pending);
  if (!np) return NULL;
  const kc__f8_pending* p = (const kc__f8_pending*)(const void*)m->float8_pending.data;
  size_t count = s->values.size / sizeof(kc__shlo_value);
  for (size_t i = first; i < count; ++i) {
    kc__shlo_value* v = (kc__shlo_value*)(void*)s->values.data + i;
    for (size_t k = 0; k < np; ++k) {
      if (v->shape != p[k].f32) continue;
      kc__expr e = KC__SHLO_EXPR(s, op, "f8_encode");
      int32_t y = kc__e_f8_encode(&e, v->id, p[k].type, p[k].format);
      KC_RETURN_IF_ERROR(e.st);
      v = (kc__shlo_value*)(void*)s->values.data + i;
      v->id = y;
      v->shape = p[k].type;
      v->known = NULL;
      break;
    }
  }
  m->float8_pending.size = 0;
  return NULL;
}
