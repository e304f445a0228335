/* The f8, f6 and f4 float types (f8E4M3FN, f8E5M2, ... f4E2M1FN), held as
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
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "program/frontend/stablehlo/lower_internal.h"

/* How a format spends its largest exponent and its sign. */
typedef enum kc__f8_kind {
  KC__F8_IEEE,   /* infinities and NaNs as IEEE 754 (f8E5M2, f8E4M3, f8E3M4) */
  KC__F8_FN,     /* no infinities; NaN only with every other bit set (f8E4M3FN) */
  KC__F8_FNUZ,   /* no infinities, no -0; NaN the bits of -0 (f8E4M3FNUZ, ...) */
  KC__F8_FINITE, /* neither infinities nor NaNs (f6E2M3FN, f6E3M2FN, f4E2M1FN) */
  KC__F8_E8M0,   /* unsigned powers of two; NaN all ones (f8E8M0FNU) */
} kc__f8_kind;

struct kc__f8_format {
  const char* mlir;
  uint8_t bits, exponent, mantissa;
  int16_t bias;
  kc__f8_kind kind;
};

static const kc__f8_format kc__f8_formats[] = {
    {"f8E5M2", 8, 5, 2, 15, KC__F8_IEEE},        {"f8E4M3", 8, 4, 3, 7, KC__F8_IEEE},
    {"f8E3M4", 8, 3, 4, 3, KC__F8_IEEE},         {"f8E4M3FN", 8, 4, 3, 7, KC__F8_FN},
    {"f8E4M3FNUZ", 8, 4, 3, 8, KC__F8_FNUZ},     {"f8E5M2FNUZ", 8, 5, 2, 16, KC__F8_FNUZ},
    {"f8E4M3B11FNUZ", 8, 4, 3, 11, KC__F8_FNUZ}, {"f8E8M0FNU", 8, 8, 0, 127, KC__F8_E8M0},
    {"f6E2M3FN", 6, 2, 3, 1, KC__F8_FINITE},     {"f6E3M2FN", 6, 3, 2, 3, KC__F8_FINITE},
    {"f4E2M1FN", 4, 2, 1, 1, KC__F8_FINITE},
};

const kc__f8_format* kc__f8_find(kc_string_view mlir) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__f8_formats); ++i) {
    if (kc_sv_equal(mlir, kc_sv(kc__f8_formats[i].mlir))) return &kc__f8_formats[i];
  }
  return NULL;
}

const char* kc__f8_name(const kc__f8_format* f) { return f->mlir; }

kc_status* kc__shlo_mark_float8(kc__shlo_module* m, const kc_shape* shape, const kc__f8_format* f) {
  return kc__shlo_shape_map_put(m, &m->float8, shape, (int32_t)(f - kc__f8_formats));
}

const kc__f8_format* kc__shlo_float8(const kc__shlo_module* m, const kc_shape* shape) {
  int32_t i = shape ? kc__shlo_shape_map_get(&m->float8, shape) : -1;
  return i < 0 ? NULL : &kc__f8_formats[i];
}

/* ---- values ----------------------------------------------------------------- */

static unsigned kc__all_ones(unsigned n) { return (1u << n) - 1; }

double kc__f8_decode(const kc__f8_format* f, unsigned bits) {
  unsigned e_bits = f->exponent, m_bits = f->mantissa;
  bool has_sign = f->kind != KC__F8_E8M0;
  unsigned sign = has_sign ? bits >> (e_bits + m_bits) & 1 : 0;
  unsigned exp = bits >> m_bits & kc__all_ones(e_bits), man = bits & kc__all_ones(m_bits);
  double s = sign ? -1.0 : 1.0;
  switch (f->kind) {
    case KC__F8_IEEE:
      if (exp == kc__all_ones(e_bits)) return man ? NAN : s * INFINITY;
      break;
    case KC__F8_FN:
      if (exp == kc__all_ones(e_bits) && man == kc__all_ones(m_bits)) return NAN;
      break;
    case KC__F8_FNUZ:
      if (sign && exp == 0 && man == 0) return NAN;
      break;
    case KC__F8_E8M0:
      return bits == 0xFF ? NAN : ldexp(1.0, (int)exp - f->bias);
    case KC__F8_FINITE:
      break;
  }
  if (exp == 0) return s * ldexp((double)man, 1 - f->bias - (int)m_bits);
  return s * ldexp(1.0 + ldexp((double)man, -(int)m_bits), (int)exp - f->bias);
}

/* The bits of the NaN a format writes (0 for one without NaNs). */
static unsigned kc__f8_nan(const kc__f8_format* f) {
  switch (f->kind) {
    case KC__F8_IEEE: /* a quiet NaN: the top mantissa bit */
      return kc__all_ones(f->exponent) << f->mantissa | 1u << (f->mantissa - 1);
    case KC__F8_FN:
      return kc__all_ones(f->exponent + f->mantissa);
    case KC__F8_FNUZ:
      return 0x80;
    case KC__F8_E8M0:
      return 0xFF;
    case KC__F8_FINITE:
      return 0;
  }
  return 0;
}

bool kc__f8_encode(const kc__f8_format* f, double x, unsigned* out) {
  unsigned e_bits = f->exponent, m_bits = f->mantissa;
  unsigned sign_bit = f->kind == KC__F8_E8M0 ? 0 : 1u << (e_bits + m_bits);
  unsigned sign = signbit(x) ? sign_bit : 0;
  if (isnan(x)) {
    /* IEEE and FN NaNs keep the sign, as XLA converts them */
    *out = kc__f8_nan(f) | (f->kind == KC__F8_IEEE || f->kind == KC__F8_FN ? sign : 0);
    return f->kind != KC__F8_FINITE;
  }
  double a = fabs(x);
  if (f->kind == KC__F8_E8M0) {
    /* The nearest power of two (ties up); below the least, the least;
     * zero and negative values have none: NaN, as XLA converts them. */
    if (x <= 0) {
      *out = 0xFF;
      return true;
    }
    int e;
    double m = frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    int k = a == 0 ? -f->bias : (m >= 0.75 ? e : e - 1);
    if (k < -f->bias) k = -f->bias;
    *out = k > 127 ? 0xFF : (unsigned)(k + f->bias);
    return true;
  }
  /* The largest finite value's fields. */
  unsigned max_exp = kc__all_ones(e_bits), max_man = kc__all_ones(m_bits);
  if (f->kind == KC__F8_IEEE) max_exp -= 1;
  if (f->kind == KC__F8_FN) max_man -= 1;
  bool overflow = isinf(a);
  unsigned exp = 0, man = 0;
  if (!overflow && a != 0) {
    int e;
    frexp(a, &e);
    int emin = 1 - f->bias;
    int ee = e - 1 < emin ? emin : e - 1;             /* the exponent of a's ulp, unbiased */
    double q = nearbyint(ldexp(a, (int)m_bits - ee)); /* ties to even */
    if (q >= ldexp(1.0, (int)m_bits + 1)) {
      ee++;
      q = ldexp(1.0, (int)m_bits);
    }
    if (q >= ldexp(1.0, (int)m_bits)) {
      exp = (unsigned)(ee + f->bias);
      man = (unsigned)q - (1u << m_bits);
    } else {
      man = (unsigned)q; /* a denormal, or zero */
    }
    overflow = exp > max_exp || (exp == max_exp && man > max_man);
  }
  if (overflow) {
    switch (f->kind) {
      case KC__F8_IEEE:
        *out = sign | kc__all_ones(e_bits) << m_bits;
        return true;
      case KC__F8_FINITE: /* saturates */
        *out = sign | max_exp << m_bits | max_man;
        return true;
      case KC__F8_FN:
        *out = sign | kc__f8_nan(f);
        return true;
      default:
        *out = kc__f8_nan(f);
        return true;
    }
  }
  if (f->kind == KC__F8_FNUZ && exp == 0 && man == 0) sign = 0; /* no -0 */
  *out = sign | exp << m_bits | man;
  return true;
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

/* x (the bits of format f) decoded to f32: a gather from the format's
 * table of values, one per byte (an f6 or f4 byte's upper bits do not
 * count). */
static kc_status* kc__decode(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_value* x,
                             const kc__f8_format* f, int32_t* out) {
  float table[256];
  int64_t n = 256;
  for (int64_t i = 0; i < n; ++i) {
    table[i] = (float)kc__f8_decode(f, (unsigned)i & kc__all_ones(f->bits));
  }
  kc_shape *table_shape = NULL, *decoded = NULL;
  kc_status* st = kc_shape_create_array(kc_dtype_make(kDLFloat, 32, 1), &n, 1, &table_shape);
  if (!st) {
    st = kc_shape_create_array(kc_dtype_make(kDLFloat, 32, 1), kc_shape_get_dims(x->shape),
                               kc_shape_get_rank(x->shape), &decoded);
  }
  kc_string_view name;
  int32_t t = -1;
  if (!st) st = kc__shlo_instr_name(s, op, "f8_table", &name);
  if (!st) st = kc_program_builder_add_constant(s->b, table_shape, table, (size_t)n * 4, name, &t);
  kc__shlo_attrs at = {.n = 0};
  int64_t zero = 0, one = 1, rank = kc_shape_get_rank(x->shape);
  if (!st) st = kc__shlo_attrs_ints(s, &at, "offset_dims", NULL, 0);
  if (!st) st = kc__shlo_attrs_ints(s, &at, "collapsed_slice_dims", &zero, 1);
  if (!st) st = kc__shlo_attrs_ints(s, &at, "start_index_map", &zero, 1);
  if (!st) st = kc__shlo_attrs_ints(s, &at, "slice_sizes", &one, 1);
  if (!st) kc__shlo_attrs_int(&at, "index_vector_dim", rank);
  kc_attr_dict dict = {.count = at.n, .entries = at.a};
  kc__expr e = KC__SHLO_EXPR(s, op, "f8_decode");
  e.st = st;
  int32_t ids[2] = {t, x->id};
  *out = kc__e_add(&e, KC_OP_GATHER, decoded, ids, 2, &dict);
  kc_shape_destroy(table_shape);
  kc_shape_destroy(decoded);
  return e.st;
}

/* ---- encoding in the program ---------------------------------------------- */

/* An array shape of `like`'s dims and element type dt (kept by the module). */
static kc_status* kc__like(kc__shlo_module* m, const kc_shape* like, DLDataType dt,
                           const kc_shape** out) {
  return kc__shlo_module_shape(m, dt, kc_shape_get_dims(like), kc_shape_get_rank(like), out);
}

/* x (f32, shape like) rounded to format f, as its bits in u8: the ulp of
 * |x| at f's precision (its exponent no lower than f's least), |x| a
 * whole number of ulps (ties to even), the fields put together, then
 * overflow, NaN and the format's own rules; f8E8M0FNU rounds to the
 * nearest power of two. The same rounding as kc__f8_encode, in
 * instructions. */
static int32_t kc__encode(kc__expr* e, int32_t x, const kc_shape* like, const kc__f8_format* f) {
  kc__shlo_module* m = ((kc__shlo_scope*)e->ctx)->m;
  const kc_shape *u32 = NULL, *s32 = NULL, *f32 = NULL, *u8 = NULL;
  if (!e->st) e->st = kc__like(m, like, kc_dtype_make(kDLUInt, 32, 1), &u32);
  if (!e->st) e->st = kc__like(m, like, kc_dtype_make(kDLInt, 32, 1), &s32);
  if (!e->st) e->st = kc__like(m, like, kc_dtype_make(kDLFloat, 32, 1), &f32);
  if (!e->st) e->st = kc__like(m, like, kc_dtype_make(kDLUInt, 8, 1), &u8);
  kc_shape* pred = NULL;
  if (!e->st) {
    e->st = kc_shape_create_array(kc_dtype_make(kDLBool, 8, 1), kc_shape_get_dims(like),
                                  kc_shape_get_rank(like), &pred);
  }
  if (e->st) return -1;
  e->pred = pred;
  int M = f->mantissa, E = f->exponent;
  e->shape = f32;
  int32_t nan = kc__e_compare(e, "NE", x, x);
  int32_t a = kc__e_op(e, KC_OP_ABS, x, KC__UNARY);
  e->shape = u32;
  int32_t xb = kc__e_add(e, KC_OP_BITCAST_CONVERT, u32, &x, 1, NULL);
  int32_t ab = kc__e_add(e, KC_OP_BITCAST_CONVERT, u32, &a, 1, NULL);
  int32_t sign = kc__e_op(e, KC_OP_SHIFT_RIGHT_LOGICAL, xb, kc__e_const_int(e, 31));
  int32_t biased = kc__e_op(e, KC_OP_SHIFT_RIGHT_LOGICAL, ab, kc__e_const_int(e, 23));
  e->shape = s32;
  int32_t exp = kc__e_op(e, KC_OP_SUBTRACT, kc__e_add(e, KC_OP_CONVERT, s32, &biased, 1, NULL),
                         kc__e_const_int(e, 127)); /* floor(log2 |x|); -127 for 0 */
  int32_t bits, special;
  if (f->kind == KC__F8_E8M0) {
    /* 2^exp or 2^(exp+1), whichever is nearer (ties up): up when the
     * mantissa's top bit is set. */
    e->shape = u32;
    int32_t top =
        kc__e_op(e, KC_OP_AND, kc__e_op(e, KC_OP_SHIFT_RIGHT_LOGICAL, ab, kc__e_const_int(e, 22)),
                 kc__e_const_int(e, 1));
    /* An f32 denormal has no leading 1: it is nearer 2^-126 than 2^-127
     * from 1.5 * 2^-127 (bits 0x600000) up. */
    int32_t denormal = kc__e_compare(e, "EQ", biased, kc__e_const_int(e, 0));
    int32_t upper = kc__e_compare(e, "GE", ab, kc__e_const_int(e, 0x600000));
    int32_t up = kc__e_add(e, KC_OP_CONVERT, u32, &upper, 1, NULL);
    top = kc__e_select(e, denormal, up, top);
    e->shape = s32;
    int32_t k = kc__e_op(e, KC_OP_ADD, exp, kc__e_add(e, KC_OP_CONVERT, s32, &top, 1, NULL));
    k = kc__e_op(e, KC_OP_MAXIMUM, k, kc__e_const_int(e, (uint64_t)(int64_t)-f->bias));
    bits = kc__e_op(e, KC_OP_ADD, k, kc__e_const_int(e, (uint64_t)f->bias));
    e->shape = f32;
    int32_t negative = kc__e_compare(e, "LE", x, kc__e_const(e, 0.0f)); /* or zero */
    e->shape = s32;
    int32_t over = kc__e_compare(e, "GT", bits, kc__e_const_int(e, 254));
    int32_t bad[2] = {nan, negative};
    special = kc__e_add(e, KC_OP_OR, pred, bad, 2, NULL);
    int32_t any[2] = {special, over};
    special = kc__e_add(e, KC_OP_OR, pred, any, 2, NULL);
    bits = kc__e_select(e, special, kc__e_const_int(e, 0xFF), bits);
  } else {
    int emin = 1 - f->bias;
    int32_t ee = kc__e_op(e, KC_OP_MAXIMUM, exp, kc__e_const_int(e, (uint64_t)(int64_t)emin));
    /* 2^(ee - M) as f32: its exponent field */
    int32_t field = kc__e_op(e, KC_OP_SHIFT_LEFT,
                             kc__e_op(e, KC_OP_ADD, ee, kc__e_const_int(e, (uint64_t)(127 - M))),
                             kc__e_const_int(e, 23));
    int32_t ulp = kc__e_add(e, KC_OP_BITCAST_CONVERT, f32, &field, 1, NULL);
    e->shape = f32;
    int32_t q = kc__e_op(e, KC_OP_ROUND_NEAREST_EVEN, kc__e_op(e, KC_OP_DIVIDE, a, ulp), KC__UNARY);
    int32_t finite = kc__e_add(e, KC_OP_IS_FINITE, pred, &a, 1, NULL);
    q = kc__e_select(e, finite, q, kc__e_const(e, 0.0f));
    e->shape = s32;
    int32_t qi = kc__e_add(e, KC_OP_CONVERT, s32, &q, 1, NULL);
    /* a mantissa that rounded up to the next power of two */
    int32_t carry = kc__e_compare(e, "GE", qi, kc__e_const_int(e, 2u << M));
    ee = kc__e_select(e, carry, kc__e_op(e, KC_OP_ADD, ee, kc__e_const_int(e, 1)), ee);
    qi = kc__e_select(e, carry, kc__e_const_int(e, 1u << M), qi);
    int32_t normal = kc__e_compare(e, "GE", qi, kc__e_const_int(e, 1u << M));
    int32_t exp_field =
        kc__e_select(e, normal, kc__e_op(e, KC_OP_ADD, ee, kc__e_const_int(e, (uint64_t)f->bias)),
                     kc__e_const_int(e, 0));
    int32_t man =
        kc__e_select(e, normal, kc__e_op(e, KC_OP_SUBTRACT, qi, kc__e_const_int(e, 1u << M)), qi);
    unsigned max_exp = kc__all_ones((unsigned)E), max_man = kc__all_ones((unsigned)M);
    if (f->kind == KC__F8_IEEE) max_exp -= 1;
    if (f->kind == KC__F8_FN) max_man -= 1;
    int32_t big = kc__e_compare(e, "GT", exp_field, kc__e_const_int(e, max_exp));
    int32_t at_max[2] = {kc__e_compare(e, "EQ", exp_field, kc__e_const_int(e, max_exp)),
                         kc__e_compare(e, "GT", man, kc__e_const_int(e, max_man))};
    int32_t past[2] = {big, kc__e_add(e, KC_OP_AND, pred, at_max, 2, NULL)};
    int32_t overflow = kc__e_add(e, KC_OP_OR, pred, past, 2, NULL);
    int32_t infinite = kc__e_add(e, KC_OP_NOT, pred, &finite, 1, NULL);
    int32_t inf[2] = {overflow, infinite};
    overflow = kc__e_add(e, KC_OP_OR, pred, inf, 2, NULL);
    int32_t sgn = kc__e_op(e, KC_OP_SHIFT_LEFT, kc__e_add(e, KC_OP_CONVERT, s32, &sign, 1, NULL),
                           kc__e_const_int(e, (uint64_t)(E + M)));
    bits = kc__e_op(e, KC_OP_OR,
                    kc__e_op(e, KC_OP_SHIFT_LEFT, exp_field, kc__e_const_int(e, (uint64_t)M)), man);
    if (f->kind == KC__F8_FNUZ) {
      /* no -0: a zero keeps no sign */
      int32_t zero = kc__e_compare(e, "EQ", bits, kc__e_const_int(e, 0));
      sgn = kc__e_select(e, zero, kc__e_const_int(e, 0), sgn);
    }
    bits = kc__e_op(e, KC_OP_OR, bits, sgn);
    unsigned over_bits = f->kind == KC__F8_FINITE ? max_exp << M | max_man
                         : f->kind == KC__F8_IEEE ? kc__all_ones((unsigned)E) << M
                                                  : kc__f8_nan(f);
    int32_t over_value = kc__e_const_int(e, over_bits);
    bool keeps_sign = f->kind != KC__F8_FNUZ;
    if (keeps_sign) over_value = kc__e_op(e, KC_OP_OR, over_value, sgn);
    bits = kc__e_select(e, overflow, over_value, bits);
    /* A NaN: the format's, signed as x for IEEE and FN formats; f6 and f4
     * have none: the bits of -0, as XLA converts it. */
    unsigned nan_bits = f->kind == KC__F8_FINITE ? 1u << (E + M) : kc__f8_nan(f);
    int32_t nan_value = kc__e_const_int(e, nan_bits);
    if (f->kind == KC__F8_IEEE || f->kind == KC__F8_FN)
      nan_value = kc__e_op(e, KC_OP_OR, nan_value, sgn);
    bits = kc__e_select(e, nan, nan_value, bits);
  }
  int32_t y = kc__e_add(e, KC_OP_CONVERT, u8, &bits, 1, NULL);
  e->pred = NULL;
  kc_shape_destroy(pred);
  return y;
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
      int32_t y = kc__encode(&e, v->id, p[k].type, p[k].format);
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
