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

/* f8 values, held as their bits and computed in f32 (../float8.c). */
static const void* kc__f8_of(const kc__shlo_module* m, const kc_shape* shape) {
  return kc__shlo_float8(m, shape);
}
static DLDataType kc__f8_computed(const void* how) {
  (void)how;
  return kc_dtype_make(kDLFloat, 32, 1);
}
static int32_t kc__f8_decode_fn(kc__expr* e, int32_t x, const kc_shape* shape, const void* how) {
  return kc__e_f8_decode(e, x, shape, how);
}
static int32_t kc__f8_encode_fn(kc__expr* e, int32_t x, const kc_shape* type, const void* how) {
  return kc__e_f8_encode(e, x, type, how);
}
static const kc__shlo_held_kind kc__f8_held = {"f8_decode", "f8_encode", kc__f8_of,
                                               kc__f8_computed, kc__f8_decode_fn,
                                               kc__f8_encode_fn};

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
  return kc__shlo_held_prepare(s, op, &kc__f8_held, &m->float8_pending);
}

kc_status* kc__shlo_float8_finish(kc__shlo_scope* s, const kc__shlo_op* op, size_t first) {
  return kc__shlo_held_finish(s, op, first, &kc__f8_held, &s->m->float8_pending);
}
