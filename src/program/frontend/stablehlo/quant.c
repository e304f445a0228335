/* Uniform quantized types (!quant.uniform<...>), as the StableHLO
 * specification defines them.
 *
 * A quantized tensor is held as its storage integers (an i8 array for
 * !quant.uniform<i8:f32, 0.1:-30>): a parameter takes them, a result is
 * them, bitcast_convert to and from the storage type moves them as they
 * are. uniform_dequantize computes (storage - zero_point) * scale in the
 * expressed type, the difference in i32 so that it cannot wrap;
 * uniform_quantize computes round_nearest_even(clamp(x / scale +
 * zero_point, storage_min, storage_max)) in the expressed type, then
 * converts it to the storage type; a quantized operand of uniform_quantize
 * is dequantized first. Per-axis types (!quant.uniform<i8:f32:0, {0.1:-30,
 * 0.5:-20}>) take the scale and zero point of each index of their
 * dimension. Any other op on quantized tensors is the specification's
 * dequantize_op_quantize: its operands dequantized, the op computed in the
 * expressed type, its results quantized to their types. Ops with regions
 * and custom calls on quantized types are refused, as are storage types
 * narrower than a byte. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/frontend/stablehlo/lower_internal.h"

/* ---- the type --------------------------------------------------------------- */

/* The storage and expressed types kcall reads, by their MLIR names. */
static bool kc__quant_storage(kc_string_view t, DLDataType* out, int64_t* lo, int64_t* hi) {
  static const struct {
    const char* name;
    uint8_t code, bits;
  } types[] = {{"i8", kDLInt, 8},   {"i16", kDLInt, 16},   {"i32", kDLInt, 32},
               {"ui8", kDLUInt, 8}, {"ui16", kDLUInt, 16}, {"ui32", kDLUInt, 32}};
  for (size_t i = 0; i < KC__ARRAY_SIZE(types); ++i) {
    if (!kc_sv_equal(t, kc_sv(types[i].name))) continue;
    *out = kc_dtype_make(types[i].code, types[i].bits, 1);
    bool is_signed = types[i].code == kDLInt;
    *lo = is_signed ? -(INT64_C(1) << (types[i].bits - 1)) : 0;
    *hi = is_signed ? (INT64_C(1) << (types[i].bits - 1)) - 1 : (INT64_C(1) << types[i].bits) - 1;
    return true;
  }
  return false;
}

static bool kc__quant_expressed(kc_string_view t, DLDataType* out) {
  if (kc_sv_equal(t, KC_SV_LIT("f32"))) *out = kc_dtype_make(kDLFloat, 32, 1);
  else if (kc_sv_equal(t, KC_SV_LIT("f64"))) *out = kc_dtype_make(kDLFloat, 64, 1);
  else if (kc_sv_equal(t, KC_SV_LIT("f16"))) *out = kc_dtype_make(kDLFloat, 16, 1);
  else if (kc_sv_equal(t, KC_SV_LIT("bf16"))) *out = kc_dtype_make(kDLBfloat, 16, 1);
  else return false;
  return true;
}

/* A cursor over the type's text (NUL-terminated copy). */
typedef struct kc__qtext {
  const char* p;
} kc__qtext;

static void kc__q_blank(kc__qtext* t) {
  while (*t->p == ' ') t->p++;
}

static bool kc__q_char(kc__qtext* t, char c) {
  kc__q_blank(t);
  if (*t->p != c) return false;
  t->p++;
  return true;
}

/* An identifier ([a-z0-9]+) into out. */
static kc_string_view kc__q_word(kc__qtext* t) {
  kc__q_blank(t);
  const char* start = t->p;
  while ((*t->p >= 'a' && *t->p <= 'z') || (*t->p >= '0' && *t->p <= '9')) t->p++;
  return (kc_string_view){start, (size_t)(t->p - start)};
}

static bool kc__q_int(kc__qtext* t, int64_t* out) {
  kc__q_blank(t);
  char* end = NULL;
  long long v = strtoll(t->p, &end, 10);
  if (end == t->p) return false;
  t->p = end;
  *out = v;
  return true;
}

/* "scale" or "scale:zero_point" */
static bool kc__q_scale(kc__qtext* t, double* scale, int64_t* zp) {
  kc__q_blank(t);
  char* end = NULL;
  *scale = strtod(t->p, &end);
  if (end == t->p) return false;
  t->p = end;
  *zp = 0;
  return !kc__q_char(t, ':') || kc__q_int(t, zp);
}

kc_status* kc__shlo_quant_parse(kc__shlo_module* m, const kc__lexer* lx, const kc__token* at,
                                kc_string_view word, kc__shlo_quant* out) {
  memset(out, 0, sizeof *out);
  out->axis = -1;
  char* text = kc__arena_dup(&m->arena, word.data, word.size + 1);
  if (!text) return kc__parse_oom();
  text[word.size] = '\0';
  kc__qtext t = {text + strlen("!quant.uniform")};
  double* scales = NULL;
  int64_t* zps = NULL;
  size_t cap = 0;
  bool ok = kc__q_char(&t, '<') &&
            kc__quant_storage(kc__q_word(&t), &out->storage, &out->storage_min, &out->storage_max);
  if (ok && kc__q_char(&t, '<')) { /* a storage range: i8<-127:127> */
    ok = kc__q_int(&t, &out->storage_min) && kc__q_char(&t, ':') &&
         kc__q_int(&t, &out->storage_max) && kc__q_char(&t, '>');
  }
  ok = ok && kc__q_char(&t, ':') && kc__quant_expressed(kc__q_word(&t), &out->expressed);
  if (ok && kc__q_char(&t, ':')) {
    int64_t axis = -1;
    ok = kc__q_int(&t, &axis) && axis >= 0 && axis < KC_TENSOR_MAX_NDIM;
    out->axis = (int32_t)axis;
  }
  ok = ok && kc__q_char(&t, ',');
  bool list = ok && kc__q_char(&t, '{');
  for (bool more = ok; more && ok;) {
    if (out->count == cap) {
      cap = cap ? 2 * cap : 8;
      double* s = kc__arena_alloc(&m->arena, cap * sizeof *s);
      int64_t* z = kc__arena_alloc(&m->arena, cap * sizeof *z);
      if (!s || !z) return kc__parse_oom();
      if (out->count) {
        memcpy(s, scales, out->count * sizeof *s);
        memcpy(z, zps, out->count * sizeof *z);
      }
      scales = s;
      zps = z;
    }
    ok = kc__q_scale(&t, &scales[out->count], &zps[out->count]);
    out->count++;
    more = list && kc__q_char(&t, ',');
  }
  ok = ok && (!list || kc__q_char(&t, '}')) && kc__q_char(&t, '>');
  kc__q_blank(&t);
  ok = ok && *t.p == '\0' && (out->axis >= 0) == list && out->count >= 1 &&
       out->storage_min <= out->storage_max;
  for (size_t i = 0; ok && i < out->count; ++i) {
    ok = isfinite(scales[i]) && scales[i] > 0 && zps[i] >= out->storage_min &&
         zps[i] <= out->storage_max;
  }
  if (!ok) {
    return kc__lex_fail(lx, at,
                        "%.*s: expected a uniform quantized type, "
                        "!quant.uniform<STORAGE[<MIN:MAX>]:EXPRESSED[:AXIS], SCALE[:ZERO_POINT] or "
                        "{SCALE:ZERO_POINT, ...}> with STORAGE i8, i16, i32, ui8, ui16 or ui32, "
                        "EXPRESSED f16, bf16, f32 or f64, positive scales and zero points in the "
                        "storage range",
                        (int)word.size, word.data);
  }
  out->scales = scales;
  out->zero_points = zps;
  return NULL;
}

kc_status* kc__shlo_mark_quant(kc__shlo_module* m, const kc_shape* shape,
                               const kc__shlo_quant* q) {
  if (q->axis >= 0 && (q->axis >= kc_shape_get_rank(shape) ||
                       kc_shape_get_dims(shape)[q->axis] != (int64_t)q->count)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "a per-axis quantized type: expected one scale per index of "
                            "dimension %d, got %zu",
                            q->axis, q->count);
  }
  int32_t index = (int32_t)(m->quants.size / sizeof *q);
  KC_RETURN_IF_ERROR(kc__shlo_append(&m->quants, q, sizeof *q));
  return kc__shlo_shape_map_put(m, &m->quant, shape, index);
}

const kc__shlo_quant* kc__shlo_quant_of(const kc__shlo_module* m, const kc_shape* shape) {
  int32_t i = shape ? kc__shlo_shape_map_get(&m->quant, shape) : -1;
  return i < 0 ? NULL : (const kc__shlo_quant*)(const void*)m->quants.data + i;
}

/* ---- dequantize and quantize -------------------------------------------------- */

/* q's scales (or zero points), of dtype dt, over `like`'s dims: one
 * broadcast, or one per index of q's axis. */
static int32_t kc__params(kc__expr* e, const kc__shlo_quant* q, const kc_shape* like,
                          DLDataType dt, bool zero_points) {
  if (e->st) return -1;
  int64_t n = (int64_t)q->count;
  void* data = kc__malloc((size_t)n * 8);
  kc_shape *vec = NULL, *full = NULL;
  if (!data) e->st = kc__parse_oom();
  for (int64_t i = 0; !e->st && i < n; ++i) {
    if (zero_points) {
      ((int32_t*)data)[i] = (int32_t)q->zero_points[i];
    } else {
      ((float*)data)[i] = (float)q->scales[i];
    }
  }
  DLDataType cdt = zero_points ? kc_dtype_make(kDLInt, 32, 1) : kc_dtype_make(kDLFloat, 32, 1);
  if (!e->st) e->st = kc_shape_create_array(cdt, &n, q->axis >= 0 ? 1 : 0, &vec);
  if (!e->st) {
    e->st = kc_shape_create_array(cdt, kc_shape_get_dims(like), kc_shape_get_rank(like), &full);
  }
  int32_t c = -1, y = -1;
  kc_string_view name;
  if (!e->st) e->st = kc__e_name(e, &name);
  if (!e->st) e->st = kc_program_builder_add_constant(e->b, vec, data, (size_t)n * 4, name, &c);
  int64_t axis = q->axis;
  if (!e->st) e->st = kc__e_name(e, &name);
  if (!e->st) {
    e->st = kc_program_builder_add_broadcast(e->b, full, c, &axis, q->axis >= 0 ? 1 : 0, name, &y);
  }
  if (!e->st && !kc_dtype_equal(cdt, dt)) {
    kc_shape* to = NULL;
    e->st = kc_shape_create_array(dt, kc_shape_get_dims(like), kc_shape_get_rank(like), &to);
    y = kc__e_add(e, KC_OP_CONVERT, to, &y, 1, NULL);
    kc_shape_destroy(to);
  }
  kc_shape_destroy(vec);
  kc_shape_destroy(full);
  kc__free(data);
  return e->st ? -1 : y;
}

/* A shape of like's dims and element type dt, the caller's to destroy. */
static kc_shape* kc__shape_like(kc__expr* e, const kc_shape* like, DLDataType dt) {
  kc_shape* s = NULL;
  if (!e->st) {
    e->st = kc_shape_create_array(dt, kc_shape_get_dims(like), kc_shape_get_rank(like), &s);
  }
  return s;
}

/* x (storage integers of `shape`, type q) as values of q's expressed
 * type: (x - zero_point) * scale, the difference in i32. */
static int32_t kc__dequantize(kc__expr* e, int32_t x, const kc_shape* shape,
                              const kc__shlo_quant* q) {
  kc_shape* s32 = kc__shape_like(e, shape, kc_dtype_make(kDLInt, 32, 1));
  kc_shape* f = kc__shape_like(e, shape, q->expressed);
  e->shape = s32;
  int32_t wide = kc__e_add(e, KC_OP_CONVERT, s32, &x, 1, NULL);
  int32_t d = kc__e_op(e, KC_OP_SUBTRACT, wide,
                       kc__params(e, q, shape, kc_dtype_make(kDLInt, 32, 1), true));
  e->shape = f;
  int32_t v = kc__e_add(e, KC_OP_CONVERT, f, &d, 1, NULL);
  int32_t y = kc__e_op(e, KC_OP_MULTIPLY, v, kc__params(e, q, shape, q->expressed, false));
  kc_shape_destroy(s32);
  kc_shape_destroy(f);
  return y;
}

/* x (q's expressed type, of `shape`'s dims) quantized to q's storage:
 * round_nearest_even(clamp(x / scale + zero_point, min, max)). */
static int32_t kc__quantize(kc__expr* e, int32_t x, const kc_shape* shape,
                            const kc__shlo_quant* q) {
  kc_shape* f = kc__shape_like(e, shape, q->expressed);
  kc_shape* f64 = kc__shape_like(e, shape, kc_dtype_make(kDLFloat, 64, 1));
  kc_shape* st = kc__shape_like(e, shape, q->storage);
  e->shape = f;
  int32_t y = kc__e_op(e, KC_OP_DIVIDE, x, kc__params(e, q, shape, q->expressed, false));
  y = kc__e_op(e, KC_OP_ADD, y, kc__params(e, q, shape, q->expressed, true));
  /* the storage range, exact in f64, then in the expressed type */
  int32_t bound[2] = {-1, -1};
  int64_t lim[2] = {q->storage_min, q->storage_max};
  for (int k = 0; k < 2; ++k) {
    e->shape = f64;
    int32_t b = -1;
    kc_shape* scalar = NULL;
    kc_string_view name;
    double v = (double)lim[k];
    if (!e->st) e->st = kc_shape_create_array(kc_dtype_make(kDLFloat, 64, 1), NULL, 0, &scalar);
    if (!e->st) e->st = kc__e_name(e, &name);
    if (!e->st) e->st = kc_program_builder_add_constant(e->b, scalar, &v, sizeof v, name, &b);
    if (!e->st) e->st = kc__e_name(e, &name);
    if (!e->st) e->st = kc_program_builder_add_broadcast(e->b, f64, b, NULL, 0, name, &bound[k]);
    kc_shape_destroy(scalar);
    bound[k] = kc__e_add(e, KC_OP_CONVERT, f, &bound[k], 1, NULL);
  }
  e->shape = f;
  int32_t c[3] = {bound[0], y, bound[1]};
  y = kc__e_add(e, KC_OP_CLAMP, f, c, 3, NULL);
  y = kc__e_op(e, KC_OP_ROUND_NEAREST_EVEN, y, KC__UNARY);
  y = kc__e_add(e, KC_OP_CONVERT, st, &y, 1, NULL);
  kc_shape_destroy(f);
  kc_shape_destroy(f64);
  kc_shape_destroy(st);
  return y;
}

/* ---- ops ---------------------------------------------------------------------- */

kc_status* kc__shlo_lower_uniform_quantize(kc__shlo_scope* s, kc__shlo_op* op,
                                           const kc__shlo_rule* r) {
  (void)r;
  if (kc__shlo_num_operands(op) != 1 || kc__shlo_num_result_types(op) != 1) {
    return kc__shlo_fail(&op->at, "%.*s: expected one operand and one result",
                         (int)op->name.size, op->name.data);
  }
  const kc__shlo_value* x = kc__shlo_operand(s, op, 0);
  const kc_shape* result = kc__shlo_result_type(op, 0);
  const kc__shlo_quant* qx = kc__shlo_quant_of(s->m, x->shape);
  const kc__shlo_quant* qy = kc__shlo_quant_of(s->m, result);
  bool quantize = kc__shlo_op_is(op, "uniform_quantize");
  DLDataType xt = kc_shape_get_dtype(x->shape);
  bool float_x = !qx && (xt.code == kDLFloat || xt.code == kDLBfloat);
  if (quantize ? !qy || !(qx || float_x) : !qx || qy) {
    return kc__shlo_fail(&op->at,
                         quantize ? "uniform_quantize: expected a float or quantized operand and "
                                    "a quantized result"
                                  : "uniform_dequantize: expected a quantized operand and a "
                                    "float result");
  }
  kc__expr e = KC__SHLO_EXPR(s, op, quantize ? "quantize" : "dequantize");
  int32_t y = x->id;
  if (qx) y = kc__dequantize(&e, y, x->shape, qx);
  if (!e.st && quantize && qx && !kc_dtype_equal(qx->expressed, qy->expressed)) {
    kc_shape* f = kc__shape_like(&e, x->shape, qy->expressed);
    y = kc__e_add(&e, KC_OP_CONVERT, f, &y, 1, NULL);
    kc_shape_destroy(f);
  } else if (!e.st && quantize && !qx && !kc_dtype_equal(xt, qy->expressed)) {
    kc_shape* f = kc__shape_like(&e, x->shape, qy->expressed);
    y = kc__e_add(&e, KC_OP_CONVERT, f, &y, 1, NULL);
    kc_shape_destroy(f);
  }
  if (quantize) y = kc__quantize(&e, y, result, qy);
  if (!e.st && !quantize && !kc_dtype_equal(qx->expressed, kc_shape_get_dtype(result))) {
    y = kc__e_add(&e, KC_OP_CONVERT, result, &y, 1, NULL);
  }
  KC_RETURN_IF_ERROR(e.st);
  kc__shlo_value v = {.id = y, .shape = result};
  return kc__shlo_bind_values(s, op, &v, 1);
}

/* The ops quant.c leaves alone: their rules read quantized types (the two
 * conversions), or they only move the storage integers. */
static bool kc__quant_passes(const kc__shlo_op* op) {
  static const char* const names[] = {"uniform_quantize", "uniform_dequantize",
                                      "bitcast_convert",  "tuple",
                                      "get_tuple_element", "optimization_barrier"};
  for (size_t i = 0; i < KC__ARRAY_SIZE(names); ++i) {
    if (kc__shlo_op_is(op, names[i])) return true;
  }
  /* calls and composites are inlined: their ops are lowered one by one */
  return kc_sv_equal(op->name, KC_SV_LIT("func.call")) ||
         kc_sv_equal(op->name, KC_SV_LIT("call")) || kc__shlo_op_is(op, "composite");
}

/* Quantized values, held as their storage integers and computed in their
 * expressed type. */
static const void* kc__quant_of_fn(const kc__shlo_module* m, const kc_shape* shape) {
  return kc__shlo_quant_of(m, shape);
}
static DLDataType kc__quant_computed(const void* how) {
  return ((const kc__shlo_quant*)how)->expressed;
}
static int32_t kc__dequantize_fn(kc__expr* e, int32_t x, const kc_shape* shape, const void* how) {
  return kc__dequantize(e, x, shape, how);
}
static int32_t kc__quantize_fn(kc__expr* e, int32_t x, const kc_shape* type, const void* how) {
  return kc__quantize(e, x, type, how);
}
static const kc__shlo_held_kind kc__quant_held = {"dequantize", "quantize", kc__quant_of_fn,
                                                  kc__quant_computed, kc__dequantize_fn,
                                                  kc__quantize_fn};

kc_status* kc__shlo_quant_prepare(kc__shlo_scope* s, kc__shlo_op* op) {
  kc__shlo_module* m = s->m;
  m->quant_pending.size = 0;
  if (!m->quant.slots) return NULL;
  size_t n = kc__shlo_num_operands(op), nr = kc__shlo_num_result_types(op);
  bool any = false;
  for (size_t i = 0; i < n && !any; ++i) any = kc__shlo_quant_of(m, kc__shlo_operand(s, op, i)->shape);
  for (size_t i = 0; i < nr && !any; ++i) any = kc__shlo_quant_of(m, kc__shlo_result_type(op, i));
  if (!any || kc__quant_passes(op)) return NULL;
  /* Ops that call a computation (a region, or reduce's short form) would
   * run it on the storage integers. */
  static const char* const refused[] = {"reduce",  "reduce_window", "select_and_scatter",
                                        "sort",    "scatter",       "while",
                                        "case",    "if",            "map",
                                        "custom_call", "constant",  "rng_bit_generator"};
  bool refuse = op->regions.size != 0;
  for (size_t i = 0; i < KC__ARRAY_SIZE(refused) && !refuse; ++i) {
    refuse = kc__shlo_op_is(op, refused[i]);
  }
  if (refuse) {
    return kc__shlo_fail(&op->at,
                         "%.*s of a quantized type is not supported (kcall runs the ops without "
                         "regions on quantized tensors, dequantized, computed in the expressed "
                         "type, then quantized)",
                         (int)op->name.size, op->name.data);
  }
  return kc__shlo_held_prepare(s, op, &kc__quant_held, &m->quant_pending);
}

kc_status* kc__shlo_quant_finish(kc__shlo_scope* s, const kc__shlo_op* op, size_t first) {
  return kc__shlo_held_finish(s, op, first, &kc__quant_held, &s->m->quant_pending);
}
