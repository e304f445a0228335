/* The f8, f6 and f4 float formats (float8.h): their values, and their
 * decoding and encoding built from instructions, for both front ends. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal/common.h"
#include "program/frontend/float8.h"
#include "program/instr/instr.h"

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

const kc__f8_format* kc__f8_find_hlo(kc_string_view name) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__f8_formats); ++i) {
    const char* m = kc__f8_formats[i].mlir;
    bool same = strlen(m) == name.size;
    for (size_t k = 0; same && k < name.size; ++k) {
      char c = m[k] >= 'A' && m[k] <= 'Z' ? (char)(m[k] - 'A' + 'a') : m[k];
      same = c == name.data[k];
    }
    if (same) return &kc__f8_formats[i];
  }
  return NULL;
}

int32_t kc__f8_index(const kc__f8_format* f) { return (int32_t)(f - kc__f8_formats); }

const kc__f8_format* kc__f8_at(int32_t i) { return &kc__f8_formats[i]; }

const char* kc__f8_name(const kc__f8_format* f) { return f->mlir; }

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

/* ---- decoding and encoding in the program ------------------------------------ */

int32_t kc__e_f8_decode(kc__expr* e, int32_t x, const kc_shape* shape, const kc__f8_format* f) {
  if (e->st) return -1;
  float table[256];
  int64_t n = 256;
  for (int64_t i = 0; i < n; ++i) {
    table[i] = (float)kc__f8_decode(f, (unsigned)i & kc__all_ones(f->bits));
  }
  kc_shape *table_shape = NULL, *decoded = NULL;
  e->st = kc_shape_create_array(kc_dtype_make(kDLFloat, 32, 1), &n, 1, &table_shape);
  if (!e->st) {
    e->st = kc_shape_create_array(kc_dtype_make(kDLFloat, 32, 1), kc_shape_get_dims(shape),
                                  kc_shape_get_rank(shape), &decoded);
  }
  kc_string_view name;
  int32_t t = -1;
  if (!e->st) e->st = kc__e_name(e, &name);
  if (!e->st) e->st = kc_program_builder_add_constant(e->b, table_shape, table, (size_t)n * 4, name, &t);
  /* a gather of one element of the table per element of x */
  int64_t zero = 0, one = 1, rank = kc_shape_get_rank(shape);
  kc_attr a[5];
  memset(a, 0, sizeof a);
  const char* names[4] = {"offset_dims", "collapsed_slice_dims", "start_index_map", "slice_sizes"};
  const int64_t* values[4] = {NULL, &zero, &zero, &one};
  for (int k = 0; k < 4; ++k) {
    a[k].name = kc_sv(names[k]);
    a[k].type = KC_ATTR_ARRAY;
    a[k].elem_type = KC_ATTR_I64;
    a[k].v.array.data = values[k];
    a[k].v.array.count = k == 0 ? 0 : 1;
  }
  a[4].name = KC_SV_LIT("index_vector_dim");
  a[4].type = KC_ATTR_I64;
  a[4].v.i64 = rank;
  kc_attr_dict dict = {.count = 5, .entries = a};
  int32_t ids[2] = {t, x};
  int32_t y = kc__e_add(e, KC_OP_GATHER, decoded, ids, 2, &dict);
  kc_shape_destroy(table_shape);
  kc_shape_destroy(decoded);
  return y;
}

/* x (f32, shape like) rounded to format f, as its bits in u8: the ulp of
 * |x| at f's precision (its exponent no lower than f's least), |x| a
 * whole number of ulps (ties to even), the fields put together, then
 * overflow, NaN and the format's own rules; f8E8M0FNU rounds to the
 * nearest power of two. The same rounding as kc__f8_encode, in
 * instructions. */
/* A shape of like's dims and element type dt, the caller's to destroy. */
static kc_shape* kc__like(kc__expr* e, const kc_shape* like, DLDataType dt) {
  kc_shape* s = NULL;
  if (!e->st) {
    e->st = kc_shape_create_array(dt, kc_shape_get_dims(like), kc_shape_get_rank(like), &s);
  }
  return s;
}

int32_t kc__e_f8_encode(kc__expr* e, int32_t x, const kc_shape* like, const kc__f8_format* f) {
  kc_shape* u32 = kc__like(e, like, kc_dtype_make(kDLUInt, 32, 1));
  kc_shape* s32 = kc__like(e, like, kc_dtype_make(kDLInt, 32, 1));
  kc_shape* f32 = kc__like(e, like, kc_dtype_make(kDLFloat, 32, 1));
  kc_shape* u8 = kc__like(e, like, kc_dtype_make(kDLUInt, 8, 1));
  kc_shape* pred = NULL;
  if (!e->st) {
    e->st = kc_shape_create_array(kc_dtype_make(kDLBool, 8, 1), kc_shape_get_dims(like),
                                  kc_shape_get_rank(like), &pred);
  }
  if (e->st) {
    kc_shape_destroy(u32);
    kc_shape_destroy(s32);
    kc_shape_destroy(f32);
    kc_shape_destroy(u8);
    return -1;
  }
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
  e->shape = like;
  kc_shape_destroy(pred);
  kc_shape_destroy(u32);
  kc_shape_destroy(s32);
  kc_shape_destroy(f32);
  kc_shape_destroy(u8);
  return y;
}

