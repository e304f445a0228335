/* The literals of HLO constants: scalars, nested braces, every element
 * type a constant can have. */
#include <math.h>
#include <stdio.h>

#include "kernels/half.h"
#include "program/frontend/parse_internal.h"
#include "program/shape_internal.h"

typedef struct kc__literal {
  DLDataType dtype;
  /* Grows with the values read rather than being sized from the shape,
   * so a huge shape with a short literal costs nothing. */
  kc__buf* data;
  size_t count; /* elements the shape holds */
  size_t n;     /* elements read so far */
  const char* shape_text;
} kc__literal;

static bool kc__constant_dtype_ok(DLDataType t) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case kDLBool: return t.bits == 8;
    case kDLInt: case kDLUInt:
      return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLFloat: return t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLBfloat: return t.bits == 16;
    case kDLComplex: return t.bits == 64 || t.bits == 128;
    default: return false;
  }
}

/* A float literal value: a number, inf, nan, -inf, -nan, or a NaN with a
 * payload, "nan(0x7fffff)", as XLA prints one whose significand is not
 * the default quiet NaN's (consumed). `payload` is then the significand
 * field's bits, nonzero; 0 for any other value. */
typedef struct kc__float_value {
  double value;
  uint64_t payload;
  bool negative;
} kc__float_value;

static bool kc__parse_float_value(kc__lexer* lx, kc__float_value* out) {
  kc__token t = lx->tok;
  bool minus = kc__tok_is_punct(&t, '-');
  kc__token w = minus ? kc__lex_peek(lx) : t;
  *out = (kc__float_value){.negative = minus};
  if (kc__tok_is_word(&w, "inf") || kc__tok_is_word(&w, "nan")) {
    bool nan = kc__tok_is_word(&w, "nan");
    double d = nan ? (double)NAN : (double)INFINITY;
    out->value = minus ? -d : d;
    if (minus) kc__lex_next(lx);
    kc__lex_next(lx);
    if (nan && kc__tok_is_punct(&lx->tok, '(')) {
      kc__lex_next(lx);
      bool negative;
      if (lx->tok.kind != KC__TOK_NUMBER || !kc__number_is_int(lx->tok.text) ||
          !kc__number_to_int(lx->tok.text, &negative, &out->payload) || negative ||
          out->payload == 0) {
        return false;
      }
      kc__lex_next(lx);
      if (!kc__tok_is_punct(&lx->tok, ')')) return false;
      kc__lex_next(lx);
    }
    return true;
  }
  if (t.kind != KC__TOK_NUMBER || !kc__number_to_double(t.text, &out->value)) return false;
  kc__lex_next(lx);
  return true;
}

/* The significand field's width of an IEEE binary float type (bf16 too). */
static unsigned kc__significand_bits(DLDataType t) {
  return t.code == kDLBfloat ? 7u : t.bits == 16 ? 10u : t.bits == 32 ? 23u : 52u;
}

/* `v` as a float of type `dtype` into dst; false when a NaN payload does
 * not fit the significand. */
static bool kc__store_float(const kc__float_value* v, DLDataType dtype, unsigned char* dst) {
  unsigned mant = kc__significand_bits(dtype);
  if (v->payload) {
    if (v->payload >> mant) return false;
    uint64_t exp_ones = ((UINT64_C(1) << (dtype.bits - 1 - mant)) - 1) << mant;
    uint64_t sign = v->negative ? UINT64_C(1) << (dtype.bits - 1) : 0;
    uint64_t bits = sign | exp_ones | v->payload;
    memcpy(dst, &bits, dtype.bits / 8); /* little-endian hosts only */
    return true;
  }
  double d = v->value;
  if (dtype.bits == 16) {
    uint16_t h = dtype.code == kDLBfloat ? kc__f64_to_bf16(d) : kc__f64_to_f16(d);
    memcpy(dst, &h, sizeof h);
  } else if (dtype.bits == 32) {
    float f = (float)d;
    memcpy(dst, &f, sizeof f);
  } else {
    memcpy(dst, &d, sizeof d);
  }
  return true;
}

static kc_status* kc__scalar_error(const kc__lexer* lx, const kc__token* t,
                                   const kc__literal* lit) {
  char what[64];
  snprintf(what, sizeof what, "a value of type %s", kc__hlo_dtype_name(lit->dtype));
  return kc__lex_expected(lx, t, what);
}

static kc_status* kc__nan_payload_error(const kc__lexer* lx, const kc__token* t,
                                        const kc__float_value* v, DLDataType dtype) {
  return kc__lex_fail(lx, t, "NaN payload 0x%llx does not fit the %u significand bits of %s",
                      (unsigned long long)v->payload, kc__significand_bits(dtype),
                      kc__hlo_dtype_name(dtype));
}

/* A complex value "(re, im)" at dst, each part a float of half the
 * width; leaves the ')' current. */
static kc_status* kc__parse_complex_scalar(kc__lexer* lx, const kc__literal* lit,
                                           unsigned char* dst) {
  kc__token t = lx->tok;
  DLDataType part_type = kc_dtype_make(kDLFloat, (uint8_t)(lit->dtype.bits / 2), 1);
  kc__float_value part[2];
  if (!kc__tok_is_punct(&t, '(')) return kc__scalar_error(lx, &t, lit);
  kc__lex_next(lx);
  for (int k = 0; k < 2; ++k) {
    kc__token at = lx->tok;
    if (!kc__parse_float_value(lx, &part[k])) return kc__scalar_error(lx, &at, lit);
    if (!kc__store_float(&part[k], part_type, dst + k * part_type.bits / 8)) {
      return kc__nan_payload_error(lx, &at, &part[k], part_type);
    }
    if (k == 0) KC_RETURN_IF_ERROR(kc__lex_expect(lx, ','));
  }
  if (!kc__tok_is_punct(&lx->tok, ')')) return kc__lex_expected(lx, &lx->tok, "')'");
  return NULL;
}

/* A float (f16, bf16, f32, f64) at dst, consumed. */
static kc_status* kc__parse_float_scalar(kc__lexer* lx, const kc__literal* lit,
                                         unsigned char* dst) {
  kc__token t = lx->tok;
  kc__float_value v;
  if (!kc__parse_float_value(lx, &v)) return kc__scalar_error(lx, &t, lit);
  if (!kc__store_float(&v, lit->dtype, dst)) return kc__nan_payload_error(lx, &t, &v, lit->dtype);
  return NULL;
}

/* A pred (true, false, 1 or 0) at dst; leaves the token `t` current. */
static kc_status* kc__parse_pred_scalar(const kc__lexer* lx, const kc__token* t,
                                        unsigned char* dst) {
  bool negative;
  uint64_t v = 2;
  if (kc__tok_is_word(t, "true") || kc__tok_is_word(t, "false")) {
    v = kc__tok_is_word(t, "true");
  } else if (t->kind != KC__TOK_NUMBER || !kc__number_is_int(t->text) ||
             !kc__number_to_int(t->text, &negative, &v) || negative) {
    v = 2;
  }
  if (v > 1) return kc__lex_expected(lx, t, "a value of type pred (true or false)");
  *dst = (unsigned char)v;
  return NULL;
}

/* An integer of the literal's type at dst, in range for it; leaves the
 * token `t` current. */
static kc_status* kc__parse_int_scalar(const kc__lexer* lx, const kc__token* t,
                                       const kc__literal* lit, unsigned char* dst) {
  bool negative;
  uint64_t v;
  bool is_signed = lit->dtype.code == kDLInt;
  unsigned bits = lit->dtype.bits;
  uint64_t max = bits == 64 ? (is_signed ? (uint64_t)INT64_MAX : UINT64_MAX)
                            : (UINT64_C(1) << (is_signed ? bits - 1 : bits)) - 1;
  if (t->kind != KC__TOK_NUMBER || !kc__number_is_int(t->text) ||
      !kc__number_to_int(t->text, &negative, &v) ||
      (negative && !is_signed && v) || v > max + (negative ? 1u : 0u)) {
    return kc__scalar_error(lx, t, lit);
  }
  uint64_t bits_value = negative ? 0 - v : v;
  /* Two's complement: the low bytes of the 64-bit value, little-endian
   * hosts being the only ones kcall runs on. */
  memcpy(dst, &bits_value, bits / 8);
  return NULL;
}

/* One scalar of the literal at the current token, stored at lit->n. */
static kc_status* kc__parse_scalar(kc__lexer* lx, kc__literal* lit) {
  kc__token t = lx->tok;
  if (lit->n == lit->count) {
    char many[128];
    snprintf(many, sizeof many, "'}' or ')' after the %zu value%s of %s", lit->count,
             lit->count == 1 ? "" : "s", lit->shape_text);
    return kc__lex_expected(lx, &t, many);
  }
  if (kc__tok_is_punct(&t, '.')) {
    return kc__lex_fail(lx, &t, "expected the constant's values, got '...': the "
                        "dump left out a large constant; dump it with large "
                        "constants printed");
  }
  size_t width = lit->dtype.bits / 8;
  if (!kc__buf_append(lit->data, NULL, width)) return kc__parse_oom();
  unsigned char* dst = lit->data->data + lit->n * width;
  if (lit->dtype.code == kDLComplex) {
    KC_RETURN_IF_ERROR(kc__parse_complex_scalar(lx, lit, dst));
  } else if (lit->dtype.code == kDLFloat || lit->dtype.code == kDLBfloat) {
    KC_RETURN_IF_ERROR(kc__parse_float_scalar(lx, lit, dst));
    lit->n++;
    return NULL; /* kc__parse_float_value moved past it */
  } else if (lit->dtype.code == kDLBool) {
    KC_RETURN_IF_ERROR(kc__parse_pred_scalar(lx, &t, dst));
  } else {
    KC_RETURN_IF_ERROR(kc__parse_int_scalar(lx, &t, lit, dst));
  }
  lit->n++;
  kc__lex_next(lx);
  return NULL;
}

/* A literal: a scalar or braces nested to any depth (as XLA writes
 * {{1,2},{3,4}}); only the count of values is checked against the shape. */
static kc_status* kc__parse_literal(kc__lexer* lx, kc__literal* lit, int depth) {
  if (!kc__tok_is_punct(&lx->tok, '{')) return kc__parse_scalar(lx, lit);
  if (depth >= KC__PARSE_MAX_DEPTH) {
    return kc__lex_fail(lx, &lx->tok, "literal braces nested deeper than %d",
                        KC__PARSE_MAX_DEPTH);
  }
  kc__lex_next(lx);
  for (bool more = kc__lex_list_begin(lx, '}'); more;) {
    kc_status* st = kc__parse_literal(lx, lit, depth + 1);
    if (st) return st;
    KC_RETURN_IF_ERROR(kc__lex_list_next(lx, '}', &more));
  }
  return NULL;
}

/* "(LITERAL)" of a constant of shape ins->shape, into p->literal. */
kc_status* kc__parse_constant(kc__hlo_parser* p, kc__hlo_instr* ins,
                              void** out_data, size_t* out_size) {
  kc__lexer* lx = &p->lx;
  char shape_text[256];
  kc_shape_format(ins->shape, shape_text, sizeof shape_text);
  if (kc_shape_is_tuple(ins->shape)) {
    return kc__lex_fail(lx, &ins->shape_tok, "constant %s: tuple constants "
                        "are not supported, got %s", KC__Q(ins->name_tok.text), shape_text);
  }
  DLDataType dtype = kc_shape_get_dtype(ins->shape);
  if (!kc__constant_dtype_ok(dtype)) {
    return kc__lex_fail(lx, &ins->shape_tok, "constant %s: the element type of %s is not "
                        "supported (pred, s8..s64, u8..u64, f16, bf16, f32, f64, c64 or c128)",
                        KC__Q(ins->name_tok.text), shape_text);
  }
  *out_size = kc_shape_get_byte_size(ins->shape);
  kc__literal lit = {
      .dtype = dtype,
      .data = &p->literal,
      .count = *out_size / (dtype.bits / 8),
      .n = 0,
      .shape_text = shape_text,
  };
  p->literal.size = 0;
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '('));
  kc__token first = lx->tok;
  kc_status* st = kc__parse_literal(lx, &lit, 0);
  if (st) return st;
  if (lit.n != lit.count) {
    return kc__lex_fail(lx, &first, "expected %zu value%s for %s, got %zu",
                        lit.count, lit.count == 1 ? "" : "s", shape_text, lit.n);
  }
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, ')'));
  *out_data = p->literal.data;
  return NULL;
}
